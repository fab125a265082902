"""Issue 37 item 3: every file Quiver writes goes through driver/outputs.py,
never through a symbolic link at its name (an error naming it, the file the
link points to untouched) and replaced whole (a temporary file beside it
takes its name; a failure leaves the old file as it was)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from quiver import outputs
from quiver.cli import main as quiver_main

CSV = "step,loss\n0,2.5\n1,1.25\n"


def outside_file(tmp_path: Path) -> Path:
    """A file outside the project, which no write may reach."""
    (tmp_path / "outside").mkdir()
    victim = tmp_path / "outside" / "bashrc"
    victim.write_text("keep me\n")
    return victim


# ---------------------------------------------------------------- the helper


def test_write_file_refuses_a_link_and_names_it(tmp_path: Path) -> None:
    victim = outside_file(tmp_path)
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    with pytest.raises(outputs.OutputError) as caught:
        outputs.write_file(link, b"new")
    assert caught.value.strerror == (
        f"it is a symbolic link (to {victim}), and Quiver never writes through a link: remove it first"
    )
    assert caught.value.filename == str(link)
    assert victim.read_text() == "keep me\n" and link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["out.txt", "outside"]  # no temporary file left


def test_write_file_replaces_whole_and_keeps_the_permissions(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old")
    path.chmod(0o640)
    before = path.stat().st_ino
    outputs.write_file(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.stat().st_ino != before  # a new file took the name
    with pytest.raises(RuntimeError), outputs.replacing(path) as fh:
        fh.write(b"half")
        raise RuntimeError("stopped while writing")
    assert path.read_bytes() == b"new"  # untouched
    assert os.listdir(tmp_path) == ["f.txt"]


def test_a_replaced_file_s_setuid_setgid_and_sticky_bits_are_not_kept(tmp_path: Path) -> None:
    # a file planted at the name (runs/prog/metrics.png, mode 6777) lends its
    # read/write/execute bits, never setuid or setgid to the file Quiver writes
    path = tmp_path / "metrics.png"
    path.write_text("planted")
    path.chmod(0o7755)
    outputs.write_file(path, b"new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_a_new_file_gets_the_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        outputs.write_file(tmp_path / "f.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == 0o640


def test_create_new_never_replaces_and_never_follows(tmp_path: Path) -> None:
    victim = outside_file(tmp_path)
    (tmp_path / "key").symlink_to(victim)
    with pytest.raises(FileExistsError):
        outputs.create_new(tmp_path / "key", b"secret")
    assert victim.read_text() == "keep me\n"
    outputs.create_new(tmp_path / "new", b"secret")
    assert (tmp_path / "new").read_bytes() == b"secret"
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["key", "new", "outside"]


def test_a_stream_is_the_file_that_took_the_name(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    fh = outputs.open_new_stream(path, b"step,a\n")
    fh.write(b"0,1\n")
    fh.flush()
    victim = outside_file(tmp_path)
    path.unlink()
    path.symlink_to(victim)  # swapped for a link while the run writes
    fh.write(b"1,2\n")
    fh.close()
    assert victim.read_text() == "keep me\n"
    with pytest.raises(outputs.OutputError):
        outputs.open_new_stream(path)
    with pytest.raises(outputs.OutputError):
        outputs.open_append(path)
    assert victim.read_text() == "keep me\n"


# ---------------------------------------------------------------- the writers


def test_plot_never_writes_through_a_link(tmp_path: Path, capsys) -> None:
    """The issue's case: runs/prog/metrics.png -> ../outside/bashrc."""
    victim = outside_file(tmp_path)
    run = tmp_path / "proj" / "runs" / "prog"
    run.mkdir(parents=True)
    (run / "metrics.csv").write_text(CSV)
    (run / "metrics.png").symlink_to(os.path.relpath(victim, run))
    assert quiver_main(["plot", str(run / "metrics.csv")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"quiver: cannot write {run / 'metrics.png'}: it is a symbolic link (to ../../../outside/bashrc), "
        "and Quiver never writes through a link: remove it first\n"
    )
    assert victim.read_text() == "keep me\n"
    assert sorted(os.listdir(run)) == ["metrics.csv", "metrics.png"]


def test_compile_output_never_writes_through_a_link(tmp_path: Path, capsys) -> None:
    victim = outside_file(tmp_path)
    prog = tmp_path / "prog.qv"
    prog.write_text("fn main():\n    print(1)\n")
    (tmp_path / "prog.py").symlink_to(victim)
    assert quiver_main(["compile", str(prog), "-o", str(tmp_path / "prog.py")]) == 2
    assert "it is a symbolic link (to " in capsys.readouterr().err
    assert victim.read_text() == "keep me\n"
    (tmp_path / "prog.py").unlink()
    assert quiver_main(["compile", str(prog), "-o", str(tmp_path / "prog.py")]) == 0
    assert "def main" in (tmp_path / "prog.py").read_text()


def test_save_refuses_a_link_at_the_checkpoint_name(tmp_path: Path, capsys) -> None:
    """A checkpoint by the program's own name (`save("m.pt", m)`) in a folder
    that holds a link by that name: an error naming the file, the link and
    what it points to untouched (before, the link was silently replaced)."""
    victim = outside_file(tmp_path)
    prog = tmp_path / "prog.qv"
    prog.write_text('model M:\n    param w: [3] = zeros\n\nfn main():\n    m = M.init(seed=0)\n    save("m.pt", m)\n')
    (tmp_path / "m.pt").symlink_to(victim)
    code = quiver_main(["run", str(prog), "--no-warnings"])
    err = capsys.readouterr().err
    assert code == 1
    assert "cannot save m.pt: it is a symbolic link (to " in err
    assert victim.read_text() == "keep me\n" and (tmp_path / "m.pt").is_symlink()
    (tmp_path / "m.pt").unlink()
    assert quiver_main(["run", str(prog), "--no-warnings"]) == 0
    assert (tmp_path / "m.pt").stat().st_size > 0


def test_model_save_from_python_never_writes_through_a_link(tmp_path: Path) -> None:
    import quiver

    victim = outside_file(tmp_path)
    prog = tmp_path / "prog.qv"
    prog.write_text("model M:\n    param w: [3] = zeros\n")
    m = quiver.load(str(prog)).M.init(seed=0)
    (tmp_path / "m.pt").symlink_to(victim)
    with pytest.raises(outputs.OutputError):
        m.save(str(tmp_path / "m.pt"))
    assert victim.read_text() == "keep me\n"
