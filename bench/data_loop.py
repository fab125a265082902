"""Benchmark: the cost of the run-time checks in a loop over batches read from a file.

    .venv/bin/python bench/data_loop.py [--rounds N] [--threads N] [--json PATH]
    .venv/bin/python bench/runtime.py --data [--rounds N] [--threads N]

Loads examples/mnist_like.qv with `quiver.load`, reads examples/data/digits.npz
with the runtime's reader `rt.load_npz`, and times one epoch of
`train_epoch` (Adam on shuffled batches of 64, the last one short) with the
run-time checks on (`rt.checks`: argument checks at each call and the checks
where a size known only at run time meets a known one) and off, interleaved
round by round so both see the same machine. Reports the median epoch time of
each and the median of the per-round ratios on/off. Target: <= 1.02.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(rounds: int = 15, threads: int | None = None, out=sys.stdout) -> dict:
    import torch

    import quiver
    from quiver import runtime as rt

    if threads:
        torch.set_num_threads(threads)
    mod = quiver.load(str(ROOT / "examples" / "mnist_like.qv"))
    data = ROOT / "examples" / "data" / "digits.npz"
    spec_x = rt.TensorArg("x", ("n", 64), rt.f32)
    spec_y = rt.TensorArg("y", ("n",), rt.index(10))
    x = rt.load_npz(str(data), "x", spec_x) / 16.0
    y = rt.load_npz(str(data), "y", spec_y)
    m = mod.Mlp.init(seed=0)
    opt = rt.Adam(m, lr=0.001)

    def epoch(seed: int, checks: bool) -> float:
        with rt.checks(checks):
            start = time.perf_counter()
            mod.train_epoch(m, opt, x, y, seed)
            return time.perf_counter() - start

    for s in range(2):  # warm-up
        epoch(s, True)
        epoch(s, False)
    on: list[float] = []
    off: list[float] = []
    for r in range(rounds):
        first, second = (True, False) if r % 2 == 0 else (False, True)
        a = epoch(r, first)
        b = epoch(r, second)
        (on if first else off).append(a)
        (off if first else on).append(b)
    ratios = [a / b for a, b in zip(on, off)]
    result = {
        "epoch_ms_checks_on": statistics.median(on) * 1000,
        "epoch_ms_checks_off": statistics.median(off) * 1000,
        "ratio_on_off": statistics.median(ratios),
        "rounds": rounds,
        "batches_per_epoch": -(-x.shape[0] // 64),
    }
    print(
        f"epoch over {result['batches_per_epoch']} batches: checks on {result['epoch_ms_checks_on']:.1f} ms, "
        f"off {result['epoch_ms_checks_off']:.1f} ms, median ratio on/off {result['ratio_on_off']:.3f}",
        file=out,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    result = run(args.rounds, args.threads)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
