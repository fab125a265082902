"""Benchmark: torch.compile of the train steps of examples/gpt.qv and examples/cnn.qv.

    .venv/bin/python bench/compile.py [--backend inductor|aot_eager] [--steps N] [--warmup N] [--threads N]
                                      [--only gpt|cnn]

For each example, its ``train_step`` as ``quiver.load`` gives it (checks on):

- ``eager``: the fn itself, ``--steps`` steps after ``--warmup`` steps; the
  median step time.
- ``compiled``: ``torch.compile(train_step, fullgraph=True, backend=...)``
  on a second copy of the model (and optimiser) started from the same
  state. ``compile`` is the wall time of the first calls, until the step
  time settles (dynamo compiles twice: once when a first-call cache is filled,
  again with the step number symbolic), less the time of as many compiled
  steps, with inductor's on-disk caches off (``--warm-cache``: on); then the
  median of ``--steps`` steps.
- the losses of the two runs, step by step: the largest difference (both
  run the same numbers; dropout-free examples give equal losses to rounding).

The GPT step is examples/gpt.qv's (V=64, T=32, E=64, 4 heads, 2 blocks,
batch 32, AdamW); the CNN's is examples/cnn.qv's (two conv layers, batch 32 of
28x28 images, SGD by ``m -= lr * g``). Speed is this machine's: on a busy
machine, take the figures as rough; run with ``--threads`` to pin torch's
thread count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def _gpt(quiver):
    import torch

    from quiver import runtime as rt

    g = quiver.load(os.path.join(EXAMPLES, "gpt.qv"))
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 56, (32, 32), generator=gen)
    nxt = torch.randint(0, 56, (32, 32), generator=gen)

    def make():
        m = g.Gpt.init(seed=0)
        opt = rt.AdamW(m, lr=0.003, weight_decay=0.01)
        return lambda step_fn, i: step_fn(m, opt, tokens, nxt)

    return g.train_step, make


def _cnn(quiver):
    c = quiver.load(os.path.join(EXAMPLES, "cnn.qv"))
    y = c.labels()
    x = c.images(y)

    def make():
        m = c.Cnn.init(seed=0)
        return lambda step_fn, i: step_fn(m, x, y, 0.3)

    return c.train_step, make


def _timed(call, step_fn, first, n):
    out, losses = [], []
    for i in range(first, first + n):
        t = time.perf_counter()
        loss = call(step_fn, i)
        out.append(time.perf_counter() - t)
        losses.append(float(loss))
    return out, losses


def run_one(name, build, backend, steps, warmup):
    import torch

    import quiver

    step_fn, make = build(quiver)
    eager = make()
    _, eager_warm = _timed(eager, step_fn, 0, warmup)
    eager_times, eager_losses = _timed(eager, step_fn, warmup, steps)

    torch._dynamo.reset()
    compiled_fn = torch.compile(step_fn, fullgraph=True, backend=backend)
    comp = make()
    t = time.perf_counter()
    first_times, comp_warm = _timed(comp, compiled_fn, 0, warmup)
    compile_s = time.perf_counter() - t
    comp_times, comp_losses = _timed(comp, compiled_fn, warmup, steps)
    # the warm-up calls hold the compiles; what they took beyond a compiled step is the compile time
    compile_s -= statistics.median(comp_times) * warmup
    diff = max(abs(a - b) for a, b in zip(eager_warm + eager_losses, comp_warm + comp_losses))
    e, c = statistics.median(eager_times) * 1e3, statistics.median(comp_times) * 1e3
    print(
        f"{name:<4} {backend:<9} eager {e:8.2f} ms   compiled {c:8.2f} ms   speed-up {e / c:5.2f}x   "
        f"compile {compile_s:6.1f} s   max |loss diff| {diff:.2e}   (median of {steps} steps, {warmup} warm-up)"
    )
    return {"eager_ms": e, "compiled_ms": c, "compile_s": compile_s, "max_loss_diff": diff}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--only", choices=("gpt", "cnn"))
    ap.add_argument(
        "--warm-cache",
        action="store_true",
        help="let inductor reuse the kernels and graphs of earlier runs (default: compile from nothing)",
    )
    args = ap.parse_args(argv)
    if not args.warm_cache:  # before torch is imported: the compile time of a first run
        os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    if args.warmup < 2:
        ap.error("--warmup must be at least 2 (the compiles happen in the first two calls)")
    import warnings

    warnings.filterwarnings("ignore", message="dynamo_pgo force disabled")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    cache = "warm caches" if args.warm_cache else "no compile caches"
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, backend {args.backend}, {cache}")
    for name, build in (("gpt", _gpt), ("cnn", _cnn)):
        if args.only in (None, name):
            run_one(name, build, args.backend, args.steps, args.warmup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
