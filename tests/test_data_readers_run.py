"""The data built-ins compiled and run: readers (load_npy, load_npz, load_csv,
load_safetensors, load_chars), decode, encode and randperm, from a `.qv`
program whose data lie in a folder next to it, with `quiver run`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from quiver.cli import main as quiver_main

SRC = """
dim C = 10
dim V = 8

fn main():
    x = load_npz("data/d.npz", "x", [n 3])
    y = load_npz("data/d.npz", "y", [n] Index[C])
    print(x)
    print(y, sum(x) / 2.0)
    a = load_npy("data/a.npy", [k] f64)
    print(a)
    w = load_safetensors("data/w.safetensors", "w", [r 2])
    print(w)
    t = load_csv("data/t.csv", [m 2], header=True)
    print(t)
    ids, vocab = load_chars("data/t.txt", [s] Index[V])
    print(ids, decode(vocab, ids))
    print(encode(vocab, "ba"))
    print(randperm(6, seed=2))
"""

OUTPUT = """\
[[0.0000, 1.0000, 2.0000],
 [3.0000, 4.0000, 5.0000]]
[7, 2] 7.5000
[0.5000, 0.2500, -1.0000]
[[1.0000, 2.0000],
 [3.0000, 4.0000],
 [5.0000, 6.0000]]
[[1.0000, 2.5000],
 [3.0000, 4.0000]]
[2, 1, 2, 0] bab\n
[2, 1]
{perm}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "d.npz", x=np.arange(6, dtype=np.uint8).reshape(2, 3), y=np.array([7, 2]))
    np.save(data / "a.npy", np.array([0.5, 0.25, -1.0]))
    save_file({"w": torch.arange(1.0, 7.0).reshape(3, 2)}, str(data / "w.safetensors"))
    (data / "t.csv").write_text("p,q\n1,2.5\n3,4\n")
    (data / "t.txt").write_text("bab\n")
    return tmp_path


def run(folder: Path, capsys, src: str) -> tuple[int, str, str]:
    path = folder / "prog.qv"
    path.write_text(textwrap.dedent(src))
    code = quiver_main(["run", str(path), "--no-warnings"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_program_reads_each_kind_of_file(folder: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder / "data")  # paths are the .qv file's, not the current folder's
    code, out, err = run(folder, capsys, SRC)
    assert (code, err) == (0, "")
    perm = torch.randperm(6, generator=torch.Generator().manual_seed(2)).tolist()
    assert out == OUTPUT.format(perm=perm)


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (
            '    x = load_npz("data/d.npz", "x", [n 4])',
            "prog.qv:4:9: error: data/d.npz['x']: expected [n 4], found [2 3]",
        ),
        (
            '    x = load_npz("data/d.npz", "z", [n 3])',
            "prog.qv:4:9: error: data/d.npz has no array 'z' (its arrays: 'x', 'y')",
        ),
        (
            '    x = load_npy("data/b.npy", [n])',
            "prog.qv:4:9: error: data/b.npy: no such file (looked for {folder}/data/b.npy)",
        ),
        (
            '    x = load_npz("data/d.npz", "y", [n] Index[K])',
            "prog.qv:4:9: error: data/d.npz['y']: expected [n] Index[5], found values outside 0..4 (min 2, max 7)",
        ),
        (
            '    x = load_npy("data/a.npy", [n] i64)',
            "prog.qv:4:9: error: data/a.npy: expected [n] i64, found float64 data (float data is not read as integer values)",
        ),
        (
            '    x = load_csv("data/t.csv", [n 3], header=True)',
            "prog.qv:4:9: error: data/t.csv: expected [n 3], found [2 2]",
        ),
        (
            '    ids, vocab = load_chars("data/t.txt", [n] Index[L])',
            "prog.qv:4:18: error: data/t.txt: expected [n] Index[2], found 3 distinct characters, more than Index[2] holds",
        ),
    ],
)
def test_a_reader_that_fails_names_the_file_at_the_qv_line(
    folder: Path, capsys, monkeypatch, line: str, error: str
) -> None:
    monkeypatch.chdir(folder)  # (the location is shown relative to the current folder)
    code, out, err = run(folder, capsys, f"dim K = 5\ndim L = 2\nfn main():\n{line}\n    print(1)\n")
    assert code == 1 and out == ""
    assert err.splitlines()[0] == error.format(folder=folder)


def test_two_files_that_share_a_run_time_dim_must_agree(folder: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    np.savez(folder / "data" / "e.npz", x=np.zeros((4, 3)), y=np.zeros(5, dtype=np.int64))
    src = """
    dim L = 2

    fn main():
        x = load_npz("data/e.npz", "x", [n 3])
        y = load_npz("data/e.npz", "y", [n] Index[L])
        print(1)
    """
    code, out, err = run(folder, capsys, src)
    assert code == 1 and out == ""
    assert err.splitlines()[0] == "prog.qv:6:9: error: data/e.npz['y']: expected [n] = [4], found [5]"


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('y = load_npy("data/b.npy", [n] Index[L])', "prog.qv:7:9: error: data/b.npy: expected [n] = [4], found [3]"),
        (
            'y = load_npz("data/e.npz", "y", [n] Index[L])',
            "prog.qv:7:9: error: data/e.npz['y']: expected [n] = [4], found [3]",
        ),
        (
            'y = load_safetensors("data/w.safetensors", "w", [n 2])',
            "prog.qv:7:9: error: data/w.safetensors['w']: expected [n 2] = [4 2], found [3 2]",
        ),
        (
            'y = load_csv("data/t.csv", [n 2], header=True)',
            "prog.qv:7:9: error: data/t.csv: expected [n 2] = [4 2], found [2 2]",
        ),
        (
            'y = load_csv("data/t.csv", [n], header=True, columns="q")',
            "prog.qv:7:9: error: data/t.csv (columns 'q'): expected [n] = [4], found [2]",
        ),
        (
            'y, v = load_chars("data/u.txt", [n] Index[L])',
            "prog.qv:7:12: error: data/u.txt: expected [n] = [4], found [3]",
        ),
    ],
)
@pytest.mark.parametrize("checks", [True, False])
def test_a_reader_that_reuses_a_size_read_before_names_its_file(
    folder: Path, capsys, monkeypatch, line: str, error: str, checks: bool
) -> None:
    """Every reader checks a dim bound by an earlier read itself, always (not only under
    rt.checks), and its message starts with the path, as all the readers' messages do."""
    monkeypatch.chdir(folder)
    np.save(folder / "data" / "b.npy", np.zeros(3, dtype=np.int64))
    np.savez(folder / "data" / "e.npz", x=np.zeros((4, 3)), y=np.zeros(3, dtype=np.int64))
    save_file({"w": torch.zeros(3, 2)}, str(folder / "data" / "w.safetensors"))
    (folder / "data" / "u.txt").write_text("ab\n")
    src = f"""
    dim L = 3

    fn main():
        x = load_npz("data/e.npz", "x", [n 3])
        print(1)
        {line}
        print(2)
    """
    path = folder / "prog.qv"
    path.write_text(textwrap.dedent(src))
    code = quiver_main(["run", str(path), "--no-warnings", *([] if checks else ["--no-checks"])])
    out, err = capsys.readouterr()
    assert code == 1 and out == "1\n"
    assert err.splitlines()[0] == error


def test_a_reader_checks_a_generic_dim_against_the_file(folder: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    np.save(folder / "data" / "b.npy", np.zeros((3, 5)))
    src = """
    fn f(x: [m] f32) -> [m] f32:
        y = load_npy("data/b.npy", [m (2*m+1)])
        return x

    fn main():
        print(f(ones([2])))
    """
    code, out, err = run(folder, capsys, src)
    assert code == 1 and out == ""
    assert err.splitlines()[0] == "prog.qv:3:9: error: data/b.npy: expected [m (2*m+1)] = [2 5], found [3 5]"
