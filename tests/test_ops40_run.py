"""The ops along a dim and the ranges of issue 40, compiled and run against
torch: cumsum, cumprod, roll, repeat_interleave (values and gradients, f32
and f64), arange(start, stop, step) and linspace."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver

SRC = """
dim T = 6
dim D = 5
dim P = 3
dim G = 4

fn sums(x: [b T]) -> [b T]:
    return cumsum(x, over=T)

fn sums64(x: [T b] f64) -> [T b] f64:
    return cumsum(x, over=T)

fn prods(x: [b T]) -> [b T]:
    return cumprod(x, over=-1)

fn prods64(x: [b T] f64) -> [b T] f64:
    return cumprod(x, over=b)

fn probs(x: [b T] Prob) -> [b T] Prob:
    return cumprod(x, over=T)

fn counts(x: [b T] Bool) -> [b T] i64:
    return cumsum(x, over=T)

fn int_prods(x: [b T] i64) -> [b T] i64:
    return cumprod(x, over=T)

fn rolled(x: [b T], k: Int) -> [b T]:
    return roll(x, k, over=T)

fn rolled64(x: [b T] f64) -> [b T] f64:
    return roll(x, -2, over=0)

fn twice(x: [b T]) -> [b (T*2)]:
    return repeat_interleave(x, 2, over=T)

fn times_p(x: [b T] f64) -> [(b*P) T] f64:
    return repeat_interleave(x, P, over=b)

fn tail() -> [(T-2)] Index[T]:
    return arange(2, T)

fn evens() -> [3] Index[T]:
    return arange(0, T, 2)

fn odd_d() -> [((D+1)/2)] Index[D]:
    return arange(0, D, 2)

fn shifted() -> [G] i64:
    return arange(P, P + G) as i64

fn every_third(x: [n]) -> [((n+1)/3)] Index[n]:
    return arange(1, n, 3)

fn spaced() -> [T]:
    return linspace(0.0001, 0.02, T)

fn spaced_n(x: [n]) -> [n]:
    return linspace(-1, 1, n)

fn alphas_cumprod() -> [T]:
    return cumprod(1.0 - linspace(1e-4, 0.02, T), over=T)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("ops40") / "ops40.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def _grad(f, x: torch.Tensor, *args) -> tuple[torch.Tensor, torch.Tensor]:
    """The value of f(x) and the gradient of sum(f(x) * w) for a fixed w."""
    x = x.clone().requires_grad_()
    y = f(x, *args)
    w = torch.linspace(-1.0, 2.0, y.numel(), dtype=y.dtype).reshape(y.shape)
    (g,) = torch.autograd.grad((y * w).sum(), [x])
    return y.detach(), g


def _same(ours, theirs, x: torch.Tensor, *args) -> None:
    y, g = _grad(ours, x, *args)
    y_ref, g_ref = _grad(theirs, x)
    assert y.dtype == y_ref.dtype == x.dtype
    torch.testing.assert_close(y, y_ref, rtol=0, atol=0)
    torch.testing.assert_close(g, g_ref)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cumsum_and_cumprod_like_torch_with_gradients(mod, dtype) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 6, generator=gen, dtype=dtype)
    if dtype == torch.float32:
        _same(mod.sums, lambda t: torch.cumsum(t, dim=1), x)
        _same(mod.prods, lambda t: torch.cumprod(t, dim=-1), x)
        p = torch.rand(3, 6, generator=gen)
        _same(mod.probs, lambda t: torch.cumprod(t, dim=1), p)
    else:
        _same(mod.sums64, lambda t: torch.cumsum(t, dim=0), x.T.contiguous())
        _same(mod.prods64, lambda t: torch.cumprod(t, dim=0), x)


def test_cumprod_gradient_through_a_zero(mod) -> None:
    x = torch.tensor([[2.0, 0.0, 3.0, 0.5, 0.0, 1.5]])
    _same(mod.prods, lambda t: torch.cumprod(t, dim=-1), x)


def test_running_totals_of_integers_and_bools_are_i64(mod) -> None:
    flags = torch.tensor([[True, False, True, True, False, True]])
    assert torch.equal(mod.counts(flags), torch.cumsum(flags, dim=1))
    assert mod.counts(flags).dtype == torch.int64
    n = torch.arange(1, 13).reshape(2, 6)
    assert torch.equal(mod.int_prods(n), torch.cumprod(n, dim=1))


@pytest.mark.parametrize("k", [1, -1, 7, 0])
def test_roll_like_torch_with_gradients(mod, k) -> None:
    x = torch.randn(2, 6, generator=torch.Generator().manual_seed(1))
    _same(mod.rolled, lambda t: torch.roll(t, k, dims=1), x, k)


def test_roll_f64(mod) -> None:
    x = torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    _same(mod.rolled64, lambda t: torch.roll(t, -2, dims=0), x)


def test_repeat_interleave_like_torch_with_gradients(mod) -> None:
    x = torch.randn(2, 6, generator=torch.Generator().manual_seed(3))
    _same(mod.twice, lambda t: torch.repeat_interleave(t, 2, dim=1), x)
    x64 = x.double()
    _same(mod.times_p, lambda t: torch.repeat_interleave(t, 3, dim=0), x64)
    assert mod.times_p(x64).shape == (6, 6)


def test_arange_ranges_like_torch(mod) -> None:
    assert torch.equal(mod.tail(), torch.arange(2, 6))
    assert torch.equal(mod.evens(), torch.arange(0, 6, 2))
    assert torch.equal(mod.odd_d(), torch.arange(0, 5, 2))
    assert torch.equal(mod.shifted(), torch.arange(3, 7))
    for n in (1, 2, 3, 4, 10):
        got = mod.every_third(torch.zeros(n))
        assert torch.equal(got, torch.arange(1, n, 3)) and got.shape == ((n + 1) // 3,)


def test_linspace_like_torch(mod) -> None:
    assert torch.equal(mod.spaced(), torch.linspace(0.0001, 0.02, 6))
    assert torch.equal(mod.spaced_n(torch.zeros(9)), torch.linspace(-1, 1, 9))
    assert torch.equal(mod.spaced_n(torch.zeros(1)), torch.linspace(-1, 1, 1))
    assert torch.equal(mod.alphas_cumprod(), torch.cumprod(1.0 - torch.linspace(1e-4, 0.02, 6), dim=0))
