"""Convolutions and pools compiled and run against torch: conv2d (stride,
padding, a bias param), max_pool2d, avg_pool2d, values and gradients."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

SRC = """
dim Co = 4
dim C = 3

model Conv:
    param w: [Co 2 3 3] = normal(0.0, 0.5)
    param bias: [Co 1 1] = normal(0.0, 0.5)
    param out: [(Co*6*6) C] = normal(0.0, 0.1)

fn features(m: Conv, x: [b 2 14 14]) -> [b Co 6 6]:
    return max_pool2d(relu(conv2d(x, m.w) + m.bias), 2)

fn strided(m: Conv, x: [b 2 h v]) -> [b Co ((h+2*1-3)/2+1) ((v-1)/2+1)]:
    return conv2d(x, m.w, stride=2, padding=1)

fn smooth(x: [b 2 h v]) -> [b 2 (h/3) (v/3)]:
    return avg_pool2d(x, 3)

fn loss(m: Conv, x: [b 2 14 14], y: [b] Index[C]) -> [] NonNeg:
    h = reshape(features(m, x), [b (Co*6*6)])
    return cross_entropy(h @ m.out, y, over=C)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("conv") / "conv.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def test_conv_and_pools_like_torch(mod) -> None:
    m = mod.Conv.init(seed=0)
    x = torch.randn(5, 2, 14, 14)
    ref = F.max_pool2d(torch.relu(F.conv2d(x, m.w) + m.bias), 2)
    assert torch.allclose(mod.features(m, x), ref)
    y = torch.randn(3, 2, 11, 8)
    assert torch.allclose(mod.strided(m, y), F.conv2d(y, m.w, stride=2, padding=1))
    assert mod.strided(m, y).shape == (3, 4, 6, 4)
    assert torch.allclose(mod.smooth(y), F.avg_pool2d(y, 3))
    assert mod.smooth(y).shape == (3, 2, 3, 2)


def test_conv_net_gradients_like_torch(mod) -> None:
    m = mod.Conv.init(seed=1)
    x, labels = torch.randn(5, 2, 14, 14), torch.randint(0, 3, (5,))
    value, g = rt.value_and_grad(mod.loss, m, x, labels)
    w, bias, out = (t.detach().clone().requires_grad_() for t in (m.w, m.bias, m.out))
    h = F.max_pool2d(torch.relu(F.conv2d(x, w) + bias), 2).reshape(5, -1)
    ref = F.cross_entropy(h @ out, labels)
    gw, gb, go = torch.autograd.grad(ref, [w, bias, out])
    assert torch.allclose(value, ref.detach(), atol=1e-6)
    assert torch.allclose(g.w, gw, atol=1e-5) and torch.allclose(g.bias, gb, atol=1e-5)
    assert torch.allclose(g.out, go, atol=1e-5)


def test_avg_pool_gradient_like_torch() -> None:
    x = torch.randn(2, 3, 6, 6, requires_grad=True)
    (gx,) = torch.autograd.grad((rt.avg_pool2d(x, 2) ** 2).sum(), [x])
    x2 = x.detach().clone().requires_grad_()
    (ref,) = torch.autograd.grad((F.avg_pool2d(x2, 2) ** 2).sum(), [x2])
    assert torch.allclose(gx, ref)


def test_a_computed_size_is_checked_at_run_time(mod) -> None:
    m = mod.Conv.init(seed=0)
    with pytest.raises(rt.QuiverError):
        mod.features(m, torch.randn(5, 2, 12, 12))


def test_the_checkers_sizes_are_torchs() -> None:
    # The size the checker gives, for a number, for a generic h and for a
    # stride and padding that are dims of a layer (`Conv2d[..., stride, padding]`),
    # each then substituted, is the size torch's conv2d and pools give.
    from quiver.checker import dimexpr as DX
    from quiver.checker import types as T
    from quiver.checker.builtins.conv import _out_size

    for size in range(1, 13):
        for k in range(1, 5):
            for s in range(1, 4):
                for p in range(0, 3):
                    fixed = _out_size(T.DimLit(size), T.DimLit(k), T.DimLit(s), T.DimLit(p))
                    generic = _out_size(T.DimVar("h"), T.DimLit(k), T.DimLit(s), T.DimLit(p))
                    layer = _out_size(T.DimVar("h"), T.DimVar("k"), T.DimVar("s"), T.DimVar("p"))
                    assert generic is not None and layer is not None
                    poly, layer_poly = T.dim_poly(generic), T.dim_poly(layer)
                    assert poly is not None and layer_poly is not None
                    at = DX.value(DX.substitute(poly, {"h": DX.const(size)}) or ())
                    env = {"h": DX.const(size), "k": DX.const(k), "s": DX.const(s), "p": DX.const(p)}
                    at_layer = DX.value(DX.substitute(layer_poly, env) or ())
                    x = torch.zeros(1, 1, size, size)
                    if size + 2 * p < k:
                        assert fixed is None
                        continue
                    want = F.conv2d(x, torch.zeros(1, 1, k, k), stride=s, padding=p).shape[-1]
                    assert fixed == T.DimLit(want) and at == want == at_layer, (size, k, s, p)
                    if s == k and p == 0:
                        assert F.max_pool2d(x, k).shape[-1] == want == F.avg_pool2d(x, k).shape[-1]
