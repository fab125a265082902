"""Axis positions (over=-1), keep=True and the norms, compiled and run against torch:
values and gradients."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

import quiver

SRC = """
dim E = 4

model Ln:
    param w: [E] = ones

fn attn(s: [b T T]) -> [b T T] Prob:
    return softmax(s, over=-1)

fn attn_first(s: [b T T]) -> [b T T]:
    return log_softmax(s, over=1)

fn centred(x: [b E]) -> [b E]:
    return x - mean(x, over=E, keep=True)

fn sum_keep(x: [b E]) -> [b 1]:
    return sum(x, over=-1, keep=True)

fn max_keep(x: [b E]) -> [1 E]:
    return max(x, over=0, keep=True)

fn min_keep(x: [b E]) -> [b 1]:
    return min(x, over=E, keep=True)

fn all_keep(x: [b E]) -> [1 1]:
    return sum(x, keep=True)

fn mean_all_keep(x: [b E]) -> [1 1]:
    return mean(x, keep=True)

fn max_all_keep(x: [b E]) -> [1 1]:
    return max(x, keep=True) - min(x, keep=True)

fn argmax_keep(x: [b E]) -> [b 1] Index[E]:
    return argmax(x, over=E, keep=True)

fn sum_square(x: [E E]) -> [E]:
    return sum(x, over=-2)

fn ln_last(x: [b T E]) -> [b T E]:
    return layer_norm(x, over=E)

fn ln_middle(x: [b T E]) -> [b T E]:
    return layer_norm(x, over=T)

fn ln_affine(x: [b T E], w: [E], c: [E]) -> [b T E]:
    return layer_norm(x, over=E, weight=w, bias=c)

fn ln_weight_middle(x: [b T E], w: [T]) -> [b T E]:
    return layer_norm(x, over=T, weight=w, eps=1e-3)

fn rms_last(x: [b T E]) -> [b T E]:
    return rms_norm(x, over=-1)

fn rms_first(x: [b T E]) -> [b T E]:
    return rms_norm(x, over=0)

fn ce_last(x: [E E], y: [E] Index[E]) -> [] NonNeg:
    return cross_entropy(x, y, over=-1)

fn ce_first(x: [E E], y: [E] Index[E]) -> [] NonNeg:
    return cross_entropy(x, y, over=0)

fn ln_by_hand(x: [b E]) -> [b E]:
    c = x - mean(x, over=E, keep=True)
    var = mean(c * c, over=E, keep=True)
    return c / sqrt(var + 1e-5)

fn ln_loss(m: Ln, x: [b T E]) -> []:
    h = layer_norm(x * m.w, over=E) * m.w
    return sum(h * h * x)

fn ln_middle_loss(m: Ln, x: [b E]) -> []:
    h = layer_norm(x * m.w, over=0)
    return sum(h * x)

fn rms_loss(m: Ln, x: [b T E]) -> []:
    h = rms_norm(x * m.w, over=-1) * m.w
    return sum(h * h * x)

fn rms_middle_loss(m: Ln, x: [b E]) -> []:
    h = rms_norm(x * m.w, over=0)
    return sum(h * x)

fn keep_loss(m: Ln, x: [b E]) -> []:
    c = x * m.w - max(x * m.w, over=E, keep=True)
    return sum(c * c)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("axes") / "axes.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _same(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    assert torch.allclose(got, want, atol=1e-6), (got, want)


def test_softmax_over_the_last_of_a_repeated_dim(mod) -> None:
    s = _x(2, 3, 3)
    _same(mod.attn(s), torch.softmax(s, -1))
    _same(mod.attn_first(s), torch.log_softmax(s, 1))


def test_cross_entropy_over_a_position_of_a_square_tensor(mod) -> None:
    x, y = _x(4, 4), torch.tensor([3, 0, 1, 1])
    _same(mod.ce_last(x, y), F.cross_entropy(x, y))
    _same(mod.ce_first(x, y), F.cross_entropy(x.T, y))


def test_keep_is_torch_keepdim(mod) -> None:
    x = _x(3, 4)
    _same(mod.centred(x), x - x.mean(1, keepdim=True))
    _same(mod.sum_keep(x), x.sum(-1, keepdim=True))
    _same(mod.max_keep(x), x.amax(0, keepdim=True))
    _same(mod.min_keep(x), x.amin(1, keepdim=True))
    _same(mod.argmax_keep(x), x.argmax(1, keepdim=True))
    _same(mod.sum_square(_x(4, 4)), _x(4, 4).sum(-2))


def test_keep_without_over_makes_every_dim_1(mod) -> None:
    x = _x(3, 4)
    _same(mod.all_keep(x), x.sum(dim=(0, 1), keepdim=True))
    _same(mod.mean_all_keep(x), x.mean(dim=(0, 1), keepdim=True))
    _same(mod.max_all_keep(x), x.amax(dim=(0, 1), keepdim=True) - x.amin(dim=(0, 1), keepdim=True))


def test_norms_equal_torch(mod) -> None:
    x = _x(2, 3, 4)
    _same(mod.ln_last(x), F.layer_norm(x, (4,)))
    _same(mod.ln_middle(x), F.layer_norm(x.movedim(1, -1), (3,)).movedim(-1, 1))
    _same(mod.rms_last(x), F.rms_norm(x, (4,)))
    _same(mod.rms_first(x), F.rms_norm(x.movedim(0, -1), (2,)).movedim(-1, 0))
    # torch's default eps for rms_norm is the dtype's machine epsilon: f64 too
    x64 = x.double()
    _same(quiver.runtime.rms_norm(x64, 1), F.rms_norm(x64.movedim(1, -1), (3,)).movedim(-1, 1))
    _same(quiver.runtime.layer_norm(x64, -1), F.layer_norm(x64, (4,)))


def test_layer_norm_weight_and_bias_are_torchs_in_values_and_gradients(mod) -> None:
    x, w, c = _x(2, 3, 4), _x(4, seed=1), _x(4, seed=2)
    ours = [t.clone().requires_grad_() for t in (x, w, c)]
    theirs = [t.clone().requires_grad_() for t in (x, w, c)]
    got = mod.ln_affine(*ours)
    want = F.layer_norm(theirs[0], (4,), theirs[1], theirs[2])
    _same(got, want)
    _same(got.detach(), (F.layer_norm(x, (4,)) * w + c))  # what weight= and bias= stand for
    g = _x(2, 3, 4, seed=3)
    for a, b in zip(torch.autograd.grad(got, ours, g), torch.autograd.grad(want, theirs, g)):
        _same(a, b)
    t = _x(3, seed=4)
    _same(mod.ln_weight_middle(x, t), F.layer_norm(x.movedim(1, -1), (3,), t, eps=1e-3).movedim(-1, 1))


def test_layer_norm_written_out_is_torch_layer_norm(mod) -> None:
    x = _x(3, 4)
    _same(mod.ln_by_hand(x), F.layer_norm(x, (4,)))


def _grad(loss, m, x):
    value, g = quiver.runtime.value_and_grad(loss, m, x)
    return value, g.w


@pytest.mark.parametrize(
    "name, shape, torch_loss",
    [
        ("ln_loss", (2, 3, 4), lambda w, x: ((F.layer_norm(x * w, (4,)) * w) ** 2 * x).sum()),
        ("ln_middle_loss", (3, 4), lambda w, x: (F.layer_norm((x * w).T, (3,)).T * x).sum()),
        ("rms_loss", (2, 3, 4), lambda w, x: ((F.rms_norm(x * w, (4,)) * w) ** 2 * x).sum()),
        ("rms_middle_loss", (3, 4), lambda w, x: (F.rms_norm((x * w).T, (3,)).T * x).sum()),
        ("keep_loss", (3, 4), lambda w, x: ((x * w - (x * w).amax(1, keepdim=True)) ** 2).sum()),
    ],
)
def test_gradients_equal_torch(mod, name, shape, torch_loss) -> None:
    x = _x(*shape, seed=1)
    m = mod.Ln.init(seed=0)
    with torch.no_grad():
        m.w.copy_(torch.linspace(0.5, 2.0, 4))
    value, grad = _grad(getattr(mod, name), m, x)
    w = torch.linspace(0.5, 2.0, 4).requires_grad_(True)
    expected = torch_loss(w, x)
    (expected_grad,) = torch.autograd.grad(expected, w)
    assert torch.allclose(value, expected.detach(), atol=1e-5)
    assert torch.allclose(grad, expected_grad, atol=1e-5), (grad, expected_grad)
