"""Drive an example's compiled module from Python, data-parallel or not.

    python drive_example.py {mlp,gpt} STEPS OUT_STEM

Under a launcher (torchrun: RANK, WORLD_SIZE, ... set) it joins the process
group with the gloo backend first; the example's code is used unchanged
(examples/mlp.qv's model and loss, under Eval as dropout masks depend on the
batch's size; examples/gpt.qv's `batch` of its text, examples/data/tiny.txt,
and `train_step` with AdamW). Each
rank takes its share of every batch and saves its params to
OUT_STEM.rank<r>.pt, with the number of all-reduce calls and of gradient
steps in OUT_STEM.rank<r>.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    torch.set_num_threads(1)
    if "RANK" in os.environ:
        dist.init_process_group("gloo")
    train(sys.argv[1], int(sys.argv[2]), sys.argv[3])


def train(which: str, steps: int, stem: str) -> None:
    """Train, save; in one process when no group was made (tests call it so)."""
    calls = [0]
    all_reduce = dist.all_reduce

    def counted(*args, **kwargs):
        calls[0] += 1
        return all_reduce(*args, **kwargs)

    dist.all_reduce = counted
    rank, size = rt.rank(), rt.world_size()
    mod = quiver.load(str(ROOT / "examples" / f"{which}.qv"))
    if which == "mlp":
        m = mod.Mlp.init(seed=0)
        x = rt.randn((64, 784), seed=1)
        y = rt.randint((64,), rt.index(10), seed=2)
        n = 64 // size
        xs, ys = x[rank * n : (rank + 1) * n], y[rank * n : (rank + 1) * n]
        for _ in range(steps):
            _, g = rt.value_and_grad(mod.loss, m, xs, ys, rt.Eval)
            rt.model_update(m, g, -0.1)
    else:
        m = mod.Gpt.init(seed=0)
        opt = rt.AdamW(m, lr=0.003, weight_decay=0.01)
        spec = rt.TensorArg("text", ("n",), rt.index(mod.V))
        text, _ = rt.load_chars(str(ROOT / "examples" / "data" / "tiny.txt"), spec)
        for step in range(steps):
            tokens, nxt = mod.batch(text, step)
            n = tokens.shape[0] // size
            sl = slice(rank * n, (rank + 1) * n)
            mod.train_step(m, opt, tokens[sl], nxt[sl])
    m.save(f"{stem}.rank{rank}.pt")
    Path(f"{stem}.rank{rank}.json").write_text(json.dumps({"all_reduce": calls[0], "steps": steps, "size": size}))
    dist.all_reduce = all_reduce
    if dist.is_initialized():
        dist.barrier()  # no rank tears its connections down while the other still reads
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
