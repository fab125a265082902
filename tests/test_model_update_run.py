"""`m -= lr * g` and `grad(f, m, ...)` at run time, against torch (issue 12)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

SRC = """
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = xavier
    param b: [C] = zeros
    buffer steps: [] i64 = 0

fn loss(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w + m.b, y, over=C)

fn step(mut m: Lin, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    m -= lr * g
    m.steps = m.steps + 1
    return l

fn ascend(mut m: Lin, x: [b D], y: [b] Index[C]):
    m += grad(loss, m, x, y)
"""


@pytest.fixture
def mod(tmp_path):
    path = tmp_path / "upd.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


def test_a_whole_model_sgd_step_equals_torch(mod) -> None:
    m = mod.Lin.init(seed=0)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    w, b = m.w.clone().requires_grad_(), m.b.clone().requires_grad_()
    for _ in range(20):
        ours = mod.step(m, x, y, 0.5)
        ref = F.cross_entropy(x @ w + b, y)
        gw, gb = torch.autograd.grad(ref, [w, b])
        with torch.no_grad():
            w -= 0.5 * gw
            b -= 0.5 * gb
        torch.testing.assert_close(ours, ref.detach())
    torch.testing.assert_close(m.w, w.detach(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(m.b, b.detach(), rtol=1e-6, atol=1e-7)
    assert int(m.steps) == 20 and not m.w.requires_grad  # buffers as the program says; no graph kept


def test_grad_is_value_and_grads_gradient(mod) -> None:
    m = mod.Lin.init(seed=1)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    g = rt.grad(mod.loss, m, x, y)
    _, g2 = rt.value_and_grad(mod.loss, m, x, y)
    assert torch.equal(g.w, g2.w) and torch.equal(g.b, g2.b)
    before = m.w.clone()
    mod.ascend(m, x, y)
    torch.testing.assert_close(m.w, before + g.w)


def test_the_update_needs_a_gradient_of_the_same_model(mod) -> None:
    m = mod.Lin.init(seed=0)
    with pytest.raises(rt.GradError, match=r"Lin can only be updated by a Grad\[Lin\], found a tensor"):
        rt.model_update(m, torch.ones(3), 1)


def test_a_refined_param_is_checked_like_an_assignment() -> None:
    class P(rt.Model):
        _qv_params = (rt.Field("s", (2,), rt.nonneg, rt.init.fill(1.0)),)

    m = P.init(seed=0)
    g = rt.grad(lambda mm: mm.s.sum(), m)
    rt.model_update(m, g, -0.5)
    assert torch.equal(m.s, torch.full((2,), 0.5))
    with pytest.raises(rt.ModelError, match="values below 0"):
        rt.model_update(m, g, -1.0)
