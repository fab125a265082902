"""What `quiver run`'s progress line costs a loop (issue 26).

    .venv/bin/python bench/progress.py [--steps 10000] [--rounds 7]

A tiny program whose `main` runs STEPS steps of one small tensor operation
(`x = x + 1.0` on a `[4]` tensor, a few microseconds: the worst case for a
per-step overhead) is loaded with quiver.load, and its `main` is timed:

- off: progress off, as outside `quiver run` or with `--no-progress`
  (rt.progress returns the range itself);
- bar: the tqdm bar on a terminal, shown from the first step (delay 0, so
  it is drawn and refreshed throughout; a real run waits 2 s);
- plain: the plain lines of a pipe, one every 10 s (none in so short a run:
  the per-step cost is the counting and the clock);
- log: `log(step, loss=...)` each step as well (one `.item()`, a CSV row, a
  TensorBoard scalar when tensorboard is installed), with progress off: the
  cost of the metrics themselves, for comparison.

The bar and plain modes write to an in-memory stream. Prints the median
time of each over the rounds (the process's CPU time by default, steadier
than the wall clock on a shared machine), microseconds per step, and the
ratio to off.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = """\
fn main():
    x = zeros([4])
    for step in range({steps}):
        x = x + 1.0
{log}    print(x[0])
"""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: the process's CPU time (steadier on a shared machine; counts tqdm's threads too)",
    )
    args = ap.parse_args(argv)

    import torch

    import quiver
    from quiver.runtime import _metrics, _progress

    torch.set_num_threads(1)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain.qv"
        plain.write_text(PROGRAM.format(steps=args.steps, log=""), encoding="utf-8")
        logged = Path(tmp) / "logged.qv"
        logged.write_text(PROGRAM.format(steps=args.steps, log="        log(step, loss=x[0])\n"), encoding="utf-8")
        mod = quiver.load(str(plain))
        mod_log = quiver.load(str(logged))

        def timed(module, progress: str) -> float:
            stream = _Terminal() if progress == "bar" else io.StringIO()
            before = _progress.configure(progress != "off", stream=stream, delay_s=0.0 if progress == "bar" else None)
            _metrics.configure(log_dir=Path(tmp) / "runs", announce=False)
            out = sys.stdout
            sys.stdout = io.StringIO()
            try:
                start = clock()
                module.main()
                return clock() - start
            finally:
                sys.stdout = out
                _metrics.close()
                _progress.restore(before)

        modes = [("off", mod), ("bar", mod), ("plain", mod), ("log", mod_log)]
        times: dict[str, list[float]] = {m: [] for m, _ in modes}
        timed(mod, "off")  # warm up
        for _ in range(args.rounds):
            for name, module in modes:  # interleaved: drift in the machine's speed hits each alike
                times[name].append(timed(module, "off" if name == "log" else name))
    base = statistics.median(times["off"])
    print(f"{args.steps} steps, median of {args.rounds} rounds, {args.clock} time")
    for name, _ in modes:
        med = statistics.median(times[name])
        print(f"  {name:5s} {med * 1e3:8.1f} ms  {med / args.steps * 1e6:6.2f} us/step  x{med / base:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
