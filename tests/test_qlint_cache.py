"""qlint's persistent cache of results and its worker processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from quiver import qlint
from quiver.cache import ResultCache, checker_version
from quiver.qlint import main

LAYERS = "dim H = 4\n\nfn f(x: [H]) -> [H]:\n    return x\n"
TRAIN = "import layers\n\nfn main():\n    print(layers.f(zeros([layers.H])))\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "layers.qv").write_text(LAYERS)
    (tmp_path / "train.qv").write_text(TRAIN)
    (tmp_path / "bad.qv").write_text("fn main():\n    print(totl)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QUIVER_CACHE_DIR", raising=False)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _no_analysis(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("analysed although the cache has the answer")

    monkeypatch.setattr("quiver.checker.workspace.Workspace.analyze", refuse)


def test_a_second_run_reads_every_result_from_the_cache(project: Path, capsys, monkeypatch) -> None:
    first = run(capsys, "--format", "json", ".")
    assert (project / ".quiver_cache" / checker_version()).is_dir()
    assert (project / ".quiver_cache" / ".gitignore").read_text().endswith("*\n")
    _no_analysis(monkeypatch)
    assert run(capsys, "--format", "json", ".") == first
    assert first[0] == 1 and "E0101" in first[1]


def test_an_edit_of_an_imported_file_is_a_new_key_for_its_importers(project: Path, capsys, monkeypatch) -> None:
    assert run(capsys, "--format", "text", "train.qv")[1] == ""
    (project / "layers.qv").write_text(LAYERS.replace("dim H = 4", "dim H = 5"))
    code, out, _ = run(capsys, "--format", "text", "train.qv")
    assert (code, out) == (0, "")  # still clean: the dim is used through the module
    (project / "layers.qv").write_text(LAYERS.replace("fn f(", "fn g("))
    code, out, _ = run(capsys, "--format", "text", "train.qv")
    assert code == 1 and out.startswith("train.qv:4:18: E0115 module 'layers' has no 'f'")


def test_no_cache_reads_and_writes_nothing(project: Path, capsys) -> None:
    run(capsys, "--no-cache", ".")
    assert not (project / ".quiver_cache").exists()


def test_a_cache_that_cannot_be_read_or_written_is_ignored(project: Path, capsys) -> None:
    (project / "blocked").write_text("a file where the cache folder would be")
    expected = run(capsys, "--no-cache", "--format", "text", ".")
    assert run(capsys, "--cache-dir", str(project / "blocked"), "--format", "text", ".") == expected
    key_dir = project / ".quiver_cache" / checker_version()
    run(capsys, ".")
    for entry in key_dir.rglob("*.json"):
        entry.write_text("{not json")
    assert run(capsys, "--format", "text", ".") == expected


def test_results_of_worker_processes_equal_one_process(project: Path, capsys, monkeypatch) -> None:
    for i in range(6):
        (project / f"m{i}.qv").write_text(TRAIN + f"\nfn g{i}(x: [layers.H]) -> [3]:\n    return x\n")
    alone = run(capsys, "--no-cache", "--jobs", "1", "--format", "json", ".")
    monkeypatch.setattr(qlint, "PARALLEL_LINES", 1)
    calls = []
    original = qlint._check_in_workers
    monkeypatch.setattr(qlint, "_check_in_workers", lambda *a: calls.append(a) or original(*a))
    assert run(capsys, "--no-cache", "--jobs", "2", "--format", "json", ".") == alone
    assert calls and calls[0][2] == 2


def test_the_version_is_a_hash_of_the_checker() -> None:
    assert len(checker_version()) == 16
    assert ResultCache(Path("/nonexistent")).get("0" * 64) is None


def test_a_new_module_file_changes_the_suggestion_of_a_missing_import(project: Path, capsys) -> None:
    (project / "eval.qv").write_text("import metric\n")
    assert "did you mean" not in run(capsys, "--format", "text", "eval.qv")[1]
    (project / "metrics.qv").write_text("dim K = 2\n")
    assert run(capsys, "--format", "text", "eval.qv")[1].strip().endswith("did you mean 'metrics'?")


def test_the_collector_is_tuned_for_the_run_and_restored(project: Path, capsys) -> None:
    import gc

    before = gc.get_threshold()
    seen = []
    original = qlint._run

    def spy(args):
        seen.append(gc.get_threshold())
        return original(args)

    qlint._run = spy
    try:
        run(capsys, "--no-cache", ".")
    finally:
        qlint._run = original
    assert seen == [(200_000, 30, 30)]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_an_edit_two_imports_away_is_a_new_key(project: Path, capsys) -> None:
    (project / "base.qv").write_text("dim K = 4\n")
    (project / "mid.qv").write_text("import base\n\nfn g(x: [base.K]) -> [base.K]:\n    return x\n")
    (project / "top.qv").write_text("import mid\n\nfn main():\n    print(mid.g(zeros([4])))\n")
    assert run(capsys, "--format", "text", "top.qv")[:2] == (0, "")
    (project / "base.qv").write_text("dim K = 5\n")  # top.qv's own text and its import are unchanged
    code, out, _ = run(capsys, "--format", "text", "top.qv")
    assert (code, out) == (1, "top.qv:4:17: E0201 argument 'x' of mid.g: expected [base.K], found [4]\n")
