"""`quiver fmt`: writing files, --check, folders, standard input, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from quiver.cli import main

MESSY = "dim  D=4\nfn f(x:[b D])->[b D]:\n  return x\n"
CLEAN = "dim D = 4\n\nfn f(x: [b D]) -> [b D]:\n    return x\n"
BROKEN = "fn g(x:[b D]:\n  return  x\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "messy.qv").write_text(MESSY)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "clean.qv").write_text(CLEAN)
    (tmp_path / "sub" / "broken.qv").write_text(BROKEN + MESSY)
    for skipped in (".hidden", ".venv", "node_modules"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.qv").write_text(MESSY)
    (tmp_path / "notes.txt").write_text("dim  D=4\n")
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["fmt", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_check_names_the_files_that_would_change_and_writes_nothing(tree: Path, capsys) -> None:
    code, out, err = run(capsys, "--check", str(tree))
    assert code == 1
    assert out.splitlines() == [f"Would reformat: {tree / 'messy.qv'}", f"Would reformat: {tree / 'sub' / 'broken.qv'}"]
    assert err.splitlines() == [
        f"{tree / 'sub' / 'broken.qv'}:1:1: note: not formatted: this item has a syntax error",
        "quiver: 2 files would be reformatted, 1 file already formatted",
    ]
    assert (tree / "messy.qv").read_text() == MESSY


def test_formatting_a_folder_writes_only_what_changes(tree: Path, capsys) -> None:
    before = (tree / "sub" / "clean.qv").stat().st_mtime_ns
    code, out, err = run(capsys, str(tree))
    assert code == 0 and out == ""
    assert err.splitlines()[-1] == "quiver: 2 files reformatted, 1 file left unchanged"
    assert (tree / "messy.qv").read_text() == CLEAN
    # the broken item is kept exactly; the rest of its file is formatted
    assert (tree / "sub" / "broken.qv").read_text() == BROKEN + CLEAN
    assert (tree / "sub" / "clean.qv").stat().st_mtime_ns == before
    for skipped in (".hidden", ".venv", "node_modules"):
        assert (tree / skipped / "x.qv").read_text() == MESSY
    assert (tree / "notes.txt").read_text() == "dim  D=4\n"
    assert run(capsys, "--check", str(tree))[0] == 0


def test_one_file_keeps_its_byte_order_mark_and_line_endings(tmp_path: Path, capsys) -> None:
    f = tmp_path / "a.qv"
    f.write_bytes(b"\xef\xbb\xbf" + MESSY.replace("\n", "\r\n").encode())
    assert run(capsys, str(f))[0] == 0
    assert f.read_bytes() == b"\xef\xbb\xbf" + CLEAN.replace("\n", "\r\n").encode()


def test_unreadable_inputs_exit_2(tmp_path: Path, capsys) -> None:
    (tmp_path / "latin1.qv").write_bytes(b"dim D = 4  # caf\xe9\n")
    (tmp_path / "ok.qv").write_text(MESSY)
    code, _, err = run(capsys, str(tmp_path / "missing.qv"), str(tmp_path / "latin1.qv"), str(tmp_path / "ok.qv"))
    assert code == 2
    assert err.splitlines() == [
        f"quiver: cannot read {tmp_path / 'missing.qv'}: No such file or directory",
        f"quiver: cannot read {tmp_path / 'latin1.qv'}: it is not valid UTF-8 (byte 0xe9 at offset 16)",
        "quiver: 1 file reformatted, 0 files left unchanged, 2 files could not be read or written",
    ]
    assert (tmp_path / "latin1.qv").read_bytes() == b"dim D = 4  # caf\xe9\n"
    assert (tmp_path / "ok.qv").read_text() == CLEAN  # the others are still formatted
    code, _, err = run(capsys, "/dev/null")
    assert code == 2 and "cannot read /dev/null: it is a character device, not a regular file" in err
    code, _, err = run(capsys, str(tmp_path / "empty-folder-that-is-missing"))
    assert code == 2


def test_an_empty_folder_is_not_an_error(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and err.strip() == "quiver: no .qv files found"


def test_a_file_that_cannot_be_written_exits_2(tmp_path: Path, capsys, monkeypatch) -> None:
    f = tmp_path / "a.qv"
    f.write_text(MESSY)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("quiver.outputs._temp_beside", refuse)
    code, _, err = run(capsys, str(f))
    assert code == 2
    assert err.splitlines() == [
        f"quiver: cannot write {f}: Permission denied",
        "quiver: 0 files reformatted, 0 files left unchanged, 1 file could not be read or written",
    ]
    assert f.read_text() == MESSY


def _stdin(args: list[str], data: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "quiver", "fmt", *args], input=data, capture_output=True, timeout=60, check=False
    )


def test_stdin_to_stdout() -> None:
    done = _stdin(["-"], MESSY.encode())
    assert (done.returncode, done.stdout, done.stderr) == (0, CLEAN.encode(), b"")
    done = _stdin(["--check", "-"], MESSY.encode())
    assert (done.returncode, done.stdout) == (1, b"Would reformat: -\n")
    done = _stdin(["--check", "-"], CLEAN.encode())
    assert (done.returncode, done.stdout) == (0, b"")
    # a broken item comes back as it was, with a note
    done = _stdin(["-"], BROKEN.encode())
    assert (done.returncode, done.stdout) == (0, BROKEN.encode())
    assert done.stderr == b"-:1:1: note: not formatted: this item has a syntax error\n"


def test_an_item_the_self_check_refuses_is_kept_with_a_note(tmp_path: Path, capsys, monkeypatch) -> None:
    from quiver.checker import formatter

    monkeypatch.setattr(formatter, "_layout", lambda lines: [formatter._Out("code", 0, "dim D = 5")])
    f = tmp_path / "a.qv"
    f.write_text("dim  D=4\n")
    code, _, err = run(capsys, str(f))
    assert code == 0 and f.read_text() == "dim  D=4\n"
    assert err.splitlines()[0] == (
        f"{f}:1:1: note: not formatted: the formatter would change its meaning (please report it)"
    )
