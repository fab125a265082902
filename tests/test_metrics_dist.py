"""log(...) and the progress line in a data-parallel run (issue 26): under
`quiver run --nproc 2` only rank 0 writes the files and the MetricsRecord
lines, and the workers get the runner's --log-dir, --no-progress and JSON
mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from quiver.cli import build_parser
from quiver.launch import worker_args
from quiver.run_protocol import MetricsRecord

PROGRAM = """\
fn main():
    for step in range(3):
        log(step, r=rank(), n=world_size())
    print("done")
"""


def test_workers_get_the_runners_metrics_options() -> None:
    args = build_parser().parse_args(
        ["run", "p.qv", "--nproc", "2", "--log-dir", "L", "--no-progress", "--error-format", "json"]
    )
    out = worker_args(args, None)
    assert out[out.index("--log-dir") + 1] == "L"
    assert "--no-progress" in out and "--metrics-json" in out
    plain = worker_args(build_parser().parse_args(["run", "p.qv", "--nproc", "2"]), None)
    assert not {"--log-dir", "--no-progress", "--metrics-json"} & set(plain)


def test_only_rank_0_logs_under_nproc(tmp_path: Path) -> None:
    prog = tmp_path / "dp.qv"
    prog.write_text(PROGRAM, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env["OMP_NUM_THREADS"] = "1"
    r = subprocess.run(
        [sys.executable, "-m", "quiver", "run", "--nproc", "2", str(prog), "--error-format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "done\n"
    records = [m for m in map(MetricsRecord.parse, r.stderr.splitlines()) if m is not None]
    assert [(m.step, m.values) for m in records] == [(s, {"r": 0.0, "n": 2.0}) for s in range(3)]
    rows = (tmp_path / "runs" / "dp" / "metrics.csv").read_text().splitlines()
    assert rows == ["step,r,n", "0,0,2", "1,0,2", "2,0,2"]
