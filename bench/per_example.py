"""Benchmark: per-example gradients, ``rt.value_and_grad(..., batch=...)``.

    .venv/bin/python bench/per_example.py [--reps N] [--batch B] [--threads N]

An MLP (784-128-10) cross-entropy loss of one example, written in compiled
Quiver style (an argument check with an ``Index[10]`` label on entry), whose
per-example gradients over a batch are computed by:

- ``quiver (checks on)`` / ``quiver (checks off)``: ``rt.value_and_grad(loss,
  m, x, y, batch=(0, 0))``;
- ``torch.func``: the same loss written against torch, ``vmap(grad_and_value)``
  by hand: the reference;
- ``torch loop``: one ``torch.autograd.grad`` per example (what the map
  replaces).

The variants run interleaved, in a rotating order; the figure is the ratio of
medians to ``torch.func``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from quiver import runtime as rt

D, H, C = 784, 128, 10


class Mlp(rt.Model):
    _qv_params = (
        rt.Field("w1", (D, H), rt.f32, rt.init.normal(0.0, 0.02)),
        rt.Field("b1", (H,), rt.f32, rt.init.zeros),
        rt.Field("w2", (H, C), rt.f32, rt.init.normal(0.0, 0.02)),
        rt.Field("b2", (C,), rt.f32, rt.init.zeros),
    )


_sig_loss = rt.Signature(
    None,
    "loss",
    None,
    (rt.ModelArg("m", Mlp), rt.TensorArg("x", (D,), rt.f32), rt.TensorArg("y", (), rt.index(C))),
)


def loss(m, x, y):
    if rt.checks.enabled:
        _sig_loss.check(m, x, y)
    return rt.cross_entropy(rt.relu(x @ m.w1 + m.b1) @ m.w2 + m.b2, y, 0)


def torch_loss(p, x, y):
    w1, b1, w2, b2 = p
    return F.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, y)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    m = Mlp.init(seed=0)
    gen = torch.Generator()
    gen.manual_seed(1)
    x = torch.randn(args.batch, D, generator=gen)
    y = torch.randint(0, C, (args.batch,), generator=gen)
    params = tuple(t.detach() for t in m._qv_tensors)
    by_func = torch.func.vmap(torch.func.grad_and_value(torch_loss), in_dims=(None, 0, 0))
    leaves = [t.detach().clone().requires_grad_(True) for t in params]

    def quiver_on():
        with rt.checks(True):
            rt.value_and_grad(loss, m, x, y, batch=(0, 0))

    def quiver_off():
        with rt.checks(False):
            rt.value_and_grad(loss, m, x, y, batch=(0, 0))

    def func():
        by_func(params, x, y)

    def loop():
        for i in range(x.shape[0]):
            torch.autograd.grad(torch_loss(leaves, x[i], y[i]), leaves)

    variants = {"quiver (checks on)": quiver_on, "quiver (checks off)": quiver_off, "torch.func": func}
    variants["torch loop"] = loop
    # same numbers first
    _, gs = rt.value_and_grad(loss, m, x, y, batch=(0, 0))
    want, _ = by_func(params, x, y)
    err = max(float((a - b).abs().max()) for a, b in zip(gs._qv_values, want))
    times: dict[str, list[float]] = {k: [] for k in variants}
    names = list(variants)
    for _ in range(10):
        for f in variants.values():
            f()
    for r in range(args.reps):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t0 = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - t0)
    ref = statistics.median(times["torch.func"])
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch}, "
        f"{args.reps} reps; max abs difference to torch.func {err:.2g}"
    )
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:22s} median {med * 1e3:8.3f} ms   ratio to torch.func {med / ref:.3f}")


if __name__ == "__main__":
    main()
