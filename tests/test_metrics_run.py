"""log(step, name=value) at run time (issue 26): metrics.csv and TensorBoard
event files read back with the exact values torch computes, a metric that
first appears later, the log folder (--log-dir, runs/<stem> beside the file),
the MetricsRecord lines of JSON mode, rank 0 only, a folder that cannot be
written."""

from __future__ import annotations

import csv
import math
import os
import textwrap
from pathlib import Path

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.cli import main as quiver_main
from quiver.run_protocol import MetricsRecord, RunError
from quiver.runtime import _dist, _metrics

PROGRAM = """\
fn main():
    for step in range(4):
        x = randn([5], seed=step)
        log(step, loss=mean(x), n=step, half=0.5)
        if step == 2:
            log(step, top=max(x, over=0))
    print("done")
"""


def write(tmp_path: Path, src: str, name: str = "prog.qv") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(src), encoding="utf-8")
    return p


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = quiver_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def expected() -> list[tuple[int, dict[str, float]]]:
    """The rows PROGRAM logs, computed with torch from the same seeds."""
    rows = []
    for step in range(4):
        x = rt.randn((5,), dtype=rt.f32, seed=step)
        rows.append((step, {"loss": torch.mean(x).item(), "n": step, "half": 0.5}))
        if step == 2:
            rows.append((step, {"top": torch.max(x).item()}))
    return rows


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def test_the_csv_has_every_logged_value_exactly(tmp_path: Path, capsys) -> None:
    prog = write(tmp_path, PROGRAM)
    code, out, err = run(capsys, "run", str(prog), "--log-dir", str(tmp_path / "logs"))
    assert code == 0, err
    assert out == "done\n"
    header, rows = read_csv(tmp_path / "logs" / "metrics.csv")
    # `top` first appears at step 2: the header grew, the rows before have an empty cell
    assert header == ["step", "loss", "n", "half", "top"]
    want = expected()
    assert len(rows) == len(want)
    for row, (step, values) in zip(rows, want):
        assert int(row[0]) == step
        for name, cell in zip(header[1:], row[1:]):
            if name in values:
                assert float(cell) == values[name]  # repr: read back exactly
            else:
                assert cell == ""
    assert rows[0][2] == "0"  # an Int stays an Int
    # one line says where, before the program's output goes on
    assert err.count("quiver: metrics: ") == 1 and "metrics.csv" in err


def test_tensorboard_events_hold_the_same_values(tmp_path: Path, capsys) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    prog = write(tmp_path, PROGRAM)
    assert run(capsys, "run", str(prog), "--log-dir", str(tmp_path / "logs"))[0] == 0
    acc = EventAccumulator(str(tmp_path / "logs"))
    acc.Reload()
    assert sorted(acc.Tags()["scalars"]) == ["half", "loss", "n", "top"]
    for name in ("loss", "n", "half", "top"):
        got = [(e.step, e.value) for e in acc.Scalars(name)]
        want = [(s, v[name]) for s, v in expected() if name in v]
        # TensorBoard keeps a float32
        assert got == [(s, float(torch.tensor(v, dtype=torch.float32))) for s, v in want]


def test_a_second_run_replaces_the_first_runs_files(tmp_path: Path, capsys) -> None:
    prog = write(tmp_path, PROGRAM)
    logs = tmp_path / "logs"
    assert run(capsys, "run", str(prog), "--log-dir", str(logs))[0] == 0
    (logs / "notes.txt").write_text("mine")
    assert run(capsys, "run", str(prog), "--log-dir", str(logs))[0] == 0
    assert len([p for p in os.listdir(logs) if p.startswith("events.out.tfevents.")]) == 1
    assert len(read_csv(logs / "metrics.csv")[1]) == len(expected())
    assert (logs / "notes.txt").read_text() == "mine"  # nothing else is touched


def test_the_default_folder_is_runs_stem_beside_the_file(tmp_path: Path, capsys, monkeypatch) -> None:
    prog = write(tmp_path, PROGRAM, "train.qv")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run(capsys, "run", str(prog))
    assert code == 0
    assert (tmp_path / "runs" / "train" / "metrics.csv").is_file()
    assert sorted(os.listdir(tmp_path)) == ["cwd", "runs", "train.qv"]
    assert os.listdir(elsewhere) == []
    assert f"quiver: metrics: {tmp_path / 'runs' / 'train' / 'metrics.csv'}" in err


def test_json_mode_writes_one_metrics_record_per_call(tmp_path: Path, capsys) -> None:
    prog = write(tmp_path, PROGRAM)
    code, _, err = run(capsys, "run", str(prog), "--error-format", "json", "--log-dir", str(tmp_path / "l"))
    assert code == 0
    records = [r for r in map(MetricsRecord.parse, err.splitlines()) if r is not None]
    assert [(r.step, r.values) for r in records] == [(s, {k: float(v) for k, v in d.items()}) for s, d in expected()]


def test_json_mode_a_failure_still_ends_with_the_run_error(tmp_path: Path, capsys) -> None:
    prog = write(
        tmp_path,
        """\
        fn main():
            x = randn([3], seed=0)
            for i in range(3):
                log(i, v=x[i])
            print(load_npy("missing.npy", [n]))
        """,
    )
    code, _, err = run(capsys, "run", str(prog), "--error-format", "json", "--log-dir", str(tmp_path / "l"))
    assert code == 1
    lines = err.strip().splitlines()
    assert [r.step for r in map(MetricsRecord.parse, lines) if r is not None] == [0, 1, 2]
    last = RunError.parse(lines[-1])
    assert last is not None and last.line == 5


def test_a_non_finite_value_is_nan_in_the_csv_and_null_in_the_record(tmp_path: Path, capsys) -> None:
    prog = write(tmp_path, "fn main():\n    log(0, bad=log(0.0) - log(0.0), big=exp(1000.0))\n")
    code, _, err = run(capsys, "run", str(prog), "--error-format", "json", "--log-dir", str(tmp_path / "l"))
    assert code == 0
    header, rows = read_csv(tmp_path / "l" / "metrics.csv")
    assert rows == [["0", "nan", "inf"]]
    line = next(x for x in err.splitlines() if "quiver_metrics" in x)
    assert '"bad": null' in line and '"big": null' in line


def test_a_folder_that_cannot_be_written_is_said_once_and_the_run_goes_on(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    prog = write(tmp_path, PROGRAM)
    code, out, err = run(capsys, "run", str(prog), "--log-dir", str(blocker / "logs"))
    assert code == 0 and out == "done\n"
    assert err.count("cannot write metrics to") == 1


def test_links_in_the_program_folder_never_lead_the_files_out_of_it(tmp_path: Path, capsys) -> None:
    """The folder is the user's and untrusted: runs/ linked out of it, or a
    metrics.csv that is a link, is refused; nothing outside is written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep")
    proj = tmp_path / "proj"
    proj.mkdir()
    prog = write(proj, PROGRAM)
    (proj / "runs").symlink_to(outside, target_is_directory=True)
    code, out, err = run(capsys, "run", str(prog))
    assert code == 0 and out == "done\n"
    assert "cannot write metrics to" in err and "symbolic link" in err
    assert sorted(os.listdir(outside)) == ["victim.txt"]
    (proj / "runs").unlink()
    (proj / "runs" / "prog").mkdir(parents=True)
    (proj / "runs" / "prog" / "metrics.csv").symlink_to(outside / "victim.txt")
    code, out, err = run(capsys, "run", str(prog))
    assert code == 0 and out == "done\n"
    assert err.count("cannot write metrics to") == 1
    assert (outside / "victim.txt").read_text() == "keep"


def test_only_rank_0_logs(tmp_path: Path, monkeypatch) -> None:
    seen: list[int] = []
    _metrics.configure(log_dir=tmp_path / "l")
    _metrics.add_sink(lambda step, values: seen.append(step))
    try:
        monkeypatch.setattr(_dist, "rank", lambda: 1)
        rt.log_metrics(0, {"loss": torch.tensor(1.0)})
        assert seen == [] and not (tmp_path / "l").exists()
        monkeypatch.setattr(_dist, "rank", lambda: 0)
        rt.log_metrics(0, {"loss": torch.tensor(1.0)})
        assert seen == [0] and (tmp_path / "l" / "metrics.csv").is_file()
    finally:
        _metrics._sinks.clear()
        _metrics.configure()


def test_one_item_per_tensor_value(tmp_path: Path) -> None:
    """Each tensor value is read with one .item() (its one synchronisation)."""
    calls = []

    class Counted(torch.Tensor):
        def item(self):  # type: ignore[override]
            calls.append(1)
            return super().item()

    _metrics.configure(log_dir=tmp_path / "l", announce=False)
    try:
        rt.log_metrics(3, {"a": torch.tensor(2.5).as_subclass(Counted), "b": 1, "c": 0.25})
    finally:
        _metrics.configure()
    assert len(calls) == 1
    assert read_csv(tmp_path / "l" / "metrics.csv") == (["step", "a", "b", "c"], [["3", "2.5", "1", "0.25"]])


def test_a_program_loaded_from_python_writes_beside_its_file(tmp_path: Path) -> None:
    prog = write(tmp_path, PROGRAM, "lib.qv")
    mod = quiver.load(str(prog))
    _metrics.configure(announce=False)
    try:
        mod.main()
    finally:
        _metrics.close()
    header, rows = read_csv(tmp_path / "runs" / "lib" / "metrics.csv")
    assert header[0] == "step" and len(rows) == len(expected())
    assert not math.isnan(float(rows[0][1]))


@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_a_run_without_log_writes_no_file(tmp_path: Path, capsys, flag: list[str]) -> None:
    prog = write(tmp_path, "fn main():\n    for i in range(3):\n        print(i)\n")
    code, out, err = run(capsys, "run", str(prog), *flag)
    assert (code, out, err) == (0, "0\n1\n2\n", "")
    assert sorted(os.listdir(tmp_path)) == ["prog.qv"]


def test_without_tensorboard_the_csv_alone_with_one_note(tmp_path: Path, capsys, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto.event_pb2", None)  # import fails
    prog = write(tmp_path, PROGRAM)
    code, _, err = run(capsys, "run", str(prog), "--log-dir", str(tmp_path / "l"))
    assert code == 0
    assert sorted(os.listdir(tmp_path / "l")) == ["metrics.csv"]
    assert len(read_csv(tmp_path / "l" / "metrics.csv")[1]) == len(expected())
    notes = [x for x in err.splitlines() if x.startswith("quiver:")]
    assert len(notes) == 1 and "CSV only: install tensorboard" in notes[0]


def test_two_programs_loaded_from_python_each_write_beside_their_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = quiver.load(str(write(tmp_path / "a", "fn main():\n    log(1, x=1)\n", "one.qv")))
    two = quiver.load(str(write(tmp_path / "b", "fn main():\n    log(2, y=2.5)\n", "two.qv")))
    _metrics.configure(announce=False)
    try:
        one.main()
        two.main()
    finally:
        _metrics.close()
    assert read_csv(tmp_path / "a" / "runs" / "one" / "metrics.csv") == (["step", "x"], [["1", "1"]])
    assert read_csv(tmp_path / "b" / "runs" / "two" / "metrics.csv") == (["step", "y"], [["2", "2.5"]])
