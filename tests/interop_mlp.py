"""The small Quiver MLP that the torch interop tests train through
quiver.to_module: tests/test_torch_interop.py and tests/test_lightning.py."""

from __future__ import annotations

import torch

MLP = """\
dim D = 12
dim H = 16
dim C = 3

model Mlp:
    param w1: [D H] = normal(0.0, 0.3)
    param b1: [H] = zeros
    param w2: [H C] = normal(0.0, 0.3)
    param b2: [C] = zeros
    buffer steps: [] i64 = 0

fn forward(m: Mlp, x: [b D], mode: Mode) -> [b C]:
    h = relu(x @ m.w1 + m.b1)
    h = dropout(h, 0.25, mode)
    return h @ m.w2 + m.b2

fn loss(m: Mlp, x: [b D], y: [b] Index[C], mode: Mode) -> [] NonNeg:
    return cross_entropy(forward(m, x, mode), y, over=C)

fn sgd_step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float, step: Int) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y, Train(seed=step))
    m.w1 = m.w1 - lr * g.w1
    m.b1 = m.b1 - lr * g.b1
    m.w2 = m.w2 - lr * g.w2
    m.b2 = m.b2 - lr * g.b2
    m.steps = m.steps + 1
    return l

fn adamw_step(mut m: Mlp, mut opt: AdamW[Mlp], x: [b D], y: [b] Index[C], step: Int) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y, Train(seed=step))
    opt.step(m, g)
    return l
"""


def data() -> tuple[torch.Tensor, torch.Tensor]:
    """10 examples of [D] = [12] with labels of C = 3 classes, seeded."""
    gen = torch.Generator().manual_seed(7)
    return torch.randn(10, 12, generator=gen), torch.randint(0, 3, (10,), generator=gen)
