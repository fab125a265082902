"""`quiver run` shows the checker's warnings before the program runs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from quiver.cli import main as quiver_main
from quiver.launch import worker_args
from quiver.qlint import main as qlint_main
from quiver.run_protocol import RUNTIME, RunError

LAYERS = """
fn loss(pred: [b 1], target: [b]) -> []:
    return mean((pred - target) ** 2)
"""

PROG = """
from layers import loss

dim D = 4
dim C = 3

model Lin:
    param w: [D C] = normal(0.0, 0.1)
    param b: [C] = zeros

fn l2(m: Lin, x: [b D]) -> [] NonNeg:
    return mean(relu(x @ m.w))

fn main():
    m = Lin.init(seed=0)
    l, g = value_and_grad(l2, m, ones([2 D]))
    print("loss", loss(ones([2 1]), ones([2])))
"""

WARNINGS = (
    "layers.qv:3:18: W0201 '-' broadcasts [b 1] against [b] into [b b]: b twice, an outer product\n"
    "prog.qv:16:27: W1101 l2 never reads param b of Lin: its gradient is always zero\n"
)


@pytest.fixture
def program(tmp_path: Path, monkeypatch) -> Path:
    """A program with a warning of its own and one in the module it imports,
    in the current folder (paths are shown relative to it, as qlint shows them)."""
    (tmp_path / "layers.qv").write_text(textwrap.dedent(LAYERS))
    (tmp_path / "prog.qv").write_text(textwrap.dedent(PROG))
    monkeypatch.chdir(tmp_path)
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        monkeypatch.delenv(k, raising=False)
    return Path("prog.qv")


def test_warnings_are_printed_before_the_run_and_do_not_change_the_status(program: Path, capsys) -> None:
    code = quiver_main(["run", str(program)])
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "loss 0.0000\n", WARNINGS)


def test_they_are_qlints_text_lines(program: Path, capsys) -> None:
    assert qlint_main([str(program), "--format", "text", "--no-cache", "--no-summary"]) == 0
    assert capsys.readouterr().out == WARNINGS


def test_no_warnings_leaves_them_out(program: Path, capsys) -> None:
    code = quiver_main(["run", str(program), "--no-warnings"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "loss 0.0000\n", "")


def test_a_failing_run_still_ends_with_its_json_record(program: Path, capsys) -> None:
    program.write_text(textwrap.dedent(PROG) + "    print(ones([3])[rank() + 5])\n")
    code = quiver_main(["run", str(program), "--error-format", "json"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(WARNINGS)
    last = RunError.parse(err.strip().splitlines()[-1])
    assert last is not None and last.kind == RUNTIME and last.line == 18


def test_only_rank_0_of_a_launched_group_prints_them(program: Path, capsys, monkeypatch) -> None:
    # a main that cannot be run fails before the process group is joined
    program.write_text(textwrap.dedent(PROG).replace("fn main():", "fn main(n: [2]):"))
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "1")
    printed = {}
    for rank in ("0", "1"):
        monkeypatch.setenv("RANK", rank)
        assert quiver_main(["run", str(program)]) == 1
        printed[rank] = capsys.readouterr().err
    assert all(line in printed["0"] for line in WARNINGS.splitlines()) and "W0403" in printed["0"]
    assert "W1101" not in printed["1"] and "main cannot take" in printed["1"]


def test_the_workers_of_nproc_are_told_not_to_print_them(program: Path) -> None:
    from quiver.cli import build_parser

    args = build_parser().parse_args(["run", str(program), "--nproc", "2"])
    assert "--no-warnings" in worker_args(args, None)


def test_nproc_prints_them_once(program: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "QUIVER_RUN_REPORTS")}
    env["OMP_NUM_THREADS"] = "1"
    r = subprocess.run(
        [sys.executable, "-P", "-m", "quiver", "run", "--nproc", "2", str(program)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "loss 0.0000\n"
    assert r.stderr == WARNINGS
