"""Data-parallel runs: `quiver run --nproc 2`, torchrun, and their failures.

Real worker processes on the CPU, gloo over localhost only. Two ranks with
half of the batch each must end with the params of one process on the whole
batch (the gradient is averaged over the ranks), and with torch's own
numbers; a failing worker ends the run quickly, reported at its .qv line.
tests/runtime/test_rt_dist.py tests the averaging in one process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt
from quiver.cli import main as quiver_main
from quiver.run_protocol import RUNTIME, RunError

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "tests" / "distributed"
TOL = 1e-6


def env() -> dict[str, str]:
    e = dict(os.environ)
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "QUIVER_RUN_REPORTS"):
        e.pop(k, None)
    e["OMP_NUM_THREADS"] = "1"
    return e


def quiver_run(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "quiver", "run", *args],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def torchrun(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", *args],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=90,
    )


def fields(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["fields"]


def max_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max((a[k].double() - b[k].double()).abs().max().item() for k in a)


# ------------------------------------------------------------------ in one process


def test_rank_and_world_size_outside_a_group(tmp_path: Path, capsys) -> None:
    p = tmp_path / "p.qv"
    p.write_text(
        textwrap.dedent(
            """
            fn main():
                r = rank()
                n = world_size()
                print("rank", r, "of", n, all_ranks=True)
                print(r + n)
            """
        )
    )
    assert quiver_main(["run", str(p)]) == 0
    assert capsys.readouterr().out == "rank 0 of 1\n1\n"


def test_nproc_and_device_usage_errors(tmp_path: Path, capsys) -> None:
    p = tmp_path / "p.qv"
    p.write_text("fn main():\n    print(1)\n")
    assert quiver_main(["run", str(p), "--nproc", "0"]) == 2
    assert "--nproc must be at least 1, found 0" in capsys.readouterr().err
    assert quiver_main(["run", str(p), "--device", "nonsense"]) == 2
    assert "quiver: --device nonsense: not a torch device" in capsys.readouterr().err


def test_nproc_inside_a_launched_group_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    p = tmp_path / "p.qv"
    p.write_text("fn main():\n    print(1)\n")
    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}.items():
        monkeypatch.setenv(k, v)
    assert quiver_main(["run", str(p), "--nproc", "2"]) == 2
    assert "--nproc cannot be used inside a process group" in capsys.readouterr().err


# ------------------------------------------------------------------ examples/mlp.qv as a program


def torch_mlp_reference(steps: int = 20, lr: float = 0.1) -> dict[str, torch.Tensor]:
    """tests/distributed/mlp_dp.qv in plain torch, one process, the whole batch."""
    mod = quiver.load(str(DIST / "mlp_dp.qv"))
    m = mod.Mlp.init(seed=0)
    p = {k: v.clone() for k, v in m.state_dict().items()}
    x = rt.randn((64, 784), seed=1)
    y = rt.randint((64,), rt.index(10), seed=2)
    for _ in range(steps):
        leaves = {k: p[k].clone().requires_grad_(True) for k in ("w1", "b1", "w2", "b2")}
        logits = torch.relu(x @ leaves["w1"] + leaves["b1"]) @ leaves["w2"] + leaves["b2"]
        F.cross_entropy(logits, y).backward()
        for k, t in leaves.items():
            assert t.grad is not None
            p[k] = p[k] - lr * t.grad
        p["steps"] = p["steps"] + 1
    return p


@pytest.fixture(scope="module")
def mlp_runs(tmp_path_factory) -> dict[str, Path]:
    """The test program run once in one process and once in two workers."""
    one = tmp_path_factory.mktemp("one")
    two = tmp_path_factory.mktemp("two")
    r1 = quiver_run(str(DIST / "mlp_dp.qv"), cwd=one)
    assert r1.returncode == 0, r1.stderr
    started = time.perf_counter()
    r2 = quiver_run("--nproc", "2", str(DIST / "mlp_dp.qv"), cwd=two)
    took = time.perf_counter() - started
    assert r2.returncode == 0, r2.stderr
    print(f"quiver run --nproc 2 mlp_dp.qv: {took:.1f} s")
    (one / "stdout").write_text(r1.stdout)
    (two / "stdout").write_text(r2.stdout)
    return {"one": one, "two": two}


def test_two_workers_end_with_the_params_of_one_process_and_of_torch(mlp_runs) -> None:
    one = fields(mlp_runs["one"] / "mlp_dp.rank0.pt")
    r0 = fields(mlp_runs["two"] / "mlp_dp.rank0.pt")
    r1 = fields(mlp_runs["two"] / "mlp_dp.rank1.pt")
    assert int(r0["steps"]) == int(r1["steps"]) == 20
    assert max_diff(r0, r1) == 0.0  # the same averaged gradient on every rank
    assert max_diff(r0, one) <= TOL
    assert max_diff(one, torch_mlp_reference()) <= TOL
    assert max_diff(r0, one) > 0 or True  # (equal is fine; the bound is what matters)


def test_the_loss_printed_is_the_average_and_print_is_rank_0s(mlp_runs) -> None:
    out1 = (mlp_runs["one"] / "stdout").read_text().splitlines()
    out2 = (mlp_runs["two"] / "stdout").read_text().splitlines()
    steps1 = [line for line in out1 if line.startswith("step")]
    steps2 = [line for line in out2 if line.startswith("step")]
    assert len(steps1) == 4 and steps2 == steps1  # printed once (rank 0), the averaged loss
    assert out1[-1] == "rank 0 of 1"
    assert sorted(line for line in out2 if not line.startswith("step")) == [
        "[rank 0] rank 0 of 2",
        "[rank 1] rank 1 of 2",
    ]


def test_the_same_program_under_torchrun(mlp_runs, tmp_path: Path) -> None:
    r = torchrun("-m", "quiver", "run", str(DIST / "mlp_dp.qv"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    one = fields(mlp_runs["one"] / "mlp_dp.rank0.pt")
    for rank in (0, 1):
        assert max_diff(fields(tmp_path / f"mlp_dp.rank{rank}.pt"), one) <= TOL


def test_compiled_train_steps_average_over_the_ranks(mlp_runs, tmp_path: Path) -> None:
    """`--compile` with `--nproc 2`: the all-reduce is traced into the
    compiled step (fullgraph), so the ranks stay equal and end where one
    eager process does (once, the ranks each took their own half's gradient
    and drifted apart silently)."""
    r = quiver_run("--nproc", "2", "--compile", "--compile-backend", "aot_eager", str(DIST / "mlp_dp.qv"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r0, r1 = (fields(tmp_path / f"mlp_dp.rank{rank}.pt") for rank in (0, 1))
    assert max_diff(r0, r1) == 0.0
    assert max_diff(r0, fields(mlp_runs["one"] / "mlp_dp.rank0.pt")) <= TOL
    steps = [line for line in r.stdout.splitlines() if line.startswith("step")]
    assert steps == [line for line in (mlp_runs["one"] / "stdout").read_text().splitlines() if line.startswith("step")]


# ------------------------------------------------------------------ the examples driven from Python


@pytest.mark.parametrize("example, steps", [("mlp", 10), ("gpt", 6)])
def test_an_examples_code_trains_data_parallel_unchanged(example: str, steps: int, tmp_path: Path) -> None:
    """examples/<example>.qv loaded with quiver.load in workers that torchrun
    started and that joined the group themselves: the same params as one
    process on the whole batch, and one all-reduce per gradient."""
    script = str(DIST / "drive_example.py")
    spec = importlib.util.spec_from_file_location("drive_example", script)
    assert spec is not None and spec.loader is not None
    drive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drive)
    drive.train(example, steps, str(tmp_path / "one"))  # one process: this one
    r = torchrun(script, example, str(steps), "two", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    one = fields(tmp_path / "one.rank0.pt")
    for rank in (0, 1):
        assert max_diff(fields(tmp_path / f"two.rank{rank}.pt"), one) <= TOL
        counts = json.loads((tmp_path / f"two.rank{rank}.json").read_text())
        assert counts == {"all_reduce": steps, "steps": steps, "size": 2}
    assert json.loads((tmp_path / "one.rank0.json").read_text())["all_reduce"] == 0


# ------------------------------------------------------------------ failures


@pytest.mark.parametrize("program, line", [("fail.qv", 19), ("fail_busy.qv", 8)])
def test_a_failing_worker_ends_the_run_at_its_line(program: str, line: int, tmp_path: Path) -> None:
    # A hang guard: the worker that did not fail is stopped, not waited for (it would run for minutes).
    r = quiver_run("--nproc", "2", str(DIST / program), "--error-format", "json", cwd=tmp_path, timeout=120)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert f"{program}:{line}:" in r.stderr and "IndexError: index 100 is out of bounds" in r.stderr
    assert "  in worker rank 1 of 2" in lines
    assert "Connection" not in r.stderr  # the other worker is not reported as the cause
    record = RunError.parse(lines[-1])
    assert record is not None and (record.path, record.line, record.kind) == (str(DIST / program), line, RUNTIME)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_ctrl_c_or_a_killed_runner_stops_every_worker(sig: signal.Signals, tmp_path: Path) -> None:
    prog = tmp_path / f"spin_{os.getpid()}_{sig.name}.qv"
    prog.write_text(
        textwrap.dedent(
            """
            fn main():
                x = randn([8 4], seed=1)
                print("started", rank(), all_ranks=True)
                for i in range(100000000):
                    x = x * 1.0
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "quiver", "run", "--nproc", "2", str(prog)],
        cwd=tmp_path,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = [proc.stdout.readline(), proc.stdout.readline()]
    assert sorted(seen) == ["[rank 0] started 0\n", "[rank 1] started 1\n"]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and "quiver: interrupted" in err
    else:  # SIGKILL cannot be passed on: the workers end with their parent (PR_SET_PDEATHSIG)
        assert proc.returncode == -signal.SIGKILL

    def left() -> list[str]:
        pids = []
        for pid in os.listdir("/proc"):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if pid.isdigit() and prog.name.encode() in cmd:
                pids.append(pid)
        return pids

    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left() == []
