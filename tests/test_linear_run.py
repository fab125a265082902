"""The linear built-in, x @ weight + bias in one kernel, against torch's
F.linear (whose weight is the transpose of Quiver's [I O]): values and the
gradients of the input, the weight and the bias, in f32 and f64, with and
without a bias, on inputs of rank 1 to 3; and its diagnostics."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from annotations import spanned

import quiver

SRC = """
dim I = 5
dim O = 3

fn with_bias(x: [.. I] {t}, w: [I O] {t}, b: [O] {t}) -> [.. O] {t}:
    return linear(x, w, b)

fn without_bias(x: [.. I] {t}, w: [I O] {t}) -> [.. O] {t}:
    return linear(x, w)

fn loss(x: [n I] {t}, w: [I O] {t}, b: [O] {t}) -> [] {t}:
    return sum(linear(x, w, b) * linear(x, w, b))
"""


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 4, 5)])
def test_values_and_gradients_are_torchs(tmp_path, dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    t = "f32" if dtype == torch.float32 else "f64"
    path = tmp_path / "lin.qv"
    path.write_text(SRC.replace("{t}", t), encoding="utf-8")
    mod = quiver.load(str(path))
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(s, generator=g, dtype=dtype, requires_grad=True) for s in (shape, (5, 3), (3,)))
    for ours, theirs in ((mod.with_bias(x, w, b), F.linear(x, w.t(), b)), (mod.without_bias(x, w), x @ w)):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
        got = torch.autograd.grad(ours.square().sum(), (x, w))
        want = torch.autograd.grad(theirs.square().sum(), (x, w))
        for a, e in zip(got, want):
            torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-6)
    x2 = torch.randn(4, 5, generator=g, dtype=dtype, requires_grad=True)
    got = torch.autograd.grad(mod.loss(x2, w, b), (x2, w, b))
    want = torch.autograd.grad((x2 @ w + b).square().sum(), (x2, w, b))
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-6)


def test_diagnostics_name_both_dims() -> None:
    src = """dim I = 5
dim O = 3

fn inner(x: [b O], w: [I O]) -> [b O]:
    return linear(x, w)

fn wrong_bias(x: [b I], w: [I O], c: [I]) -> [b O]:
    return linear(x, w, c)

fn flat_weight(x: [b I], w: [I]) -> [b O]:
    return linear(x, w)
"""
    assert spanned(src) == [
        ("E0203", "matmul [b O] @ [I O]: inner dims O and I differ", "linear(x, w)"),
        ("E0201", "bias of linear: expected [O], found [I]", "c"),
        ("E0210", "linear needs a weight of 2 dims, [I O], found [I]", "w"),
    ]
