"""The ops of issue 40, compiled and run against torch: cumsum, cumprod,
roll, repeat_interleave, expand, repeat, concat of more than two, stack
over any dim, unbind and split (values and gradients, f32 and f64),
arange(start, stop, step) and linspace."""

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

fn sums_any(x: [.. T]) -> [.. T]:
    return cumsum(x, over=T)

fn rolled_any(x: [.. T]) -> [.. T]:
    return roll(x, 2, over=-1)

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

fn expanded(x: [1 D]) -> [T D]:
    return expand(x, [T D])

fn expanded64(x: [b 1] f64) -> [P b G] f64:
    return expand(x, [P b G])

fn tiled(x: [b D]) -> [(b*2) (D*3)]:
    return repeat(x, (2, 3))

fn tiled64(x: [b D] f64) -> [P b D] f64:
    return repeat(x, (P, 1, 1))

fn joined(x: [b T], y: [b D], z: [b T]) -> [b (T+D+T)]:
    return concat(x, y, z, over=-1)

fn joined64(x: [b D] f64, y: [b D] f64, z: [b D] f64, w: [b D] f64) -> [(4*b) D] f64:
    return concat(x, y, z, w, over=b)

fn stacked(x: [b D], y: [b D], z: [b D]) -> [b 3 D]:
    return stack(x, y, z, over=1)

fn stacked_last(x: [b D] f64, y: [b D] f64) -> [b D 2] f64:
    return stack(x, y, over=-1)

fn unbound(x: [b P D]) -> [b D]:
    a, c, d = unbind(x, over=P)
    return a * 2.0 + c * d

fn unbound64(x: [P b] f64) -> [b] f64:
    a, c, d = unbind(x, over=0)
    return a - c * d

fn parts(x: [b T]) -> [b 4]:
    a, c = split(x, (2, 4), over=T)
    return c * 3.0

fn parts_of_size(x: [b T] f64) -> [b 2] f64:
    a, c, d = split(x, 2, over=T)
    return a * d

fn restacked(x: [b P D]) -> [b D P]:
    return stack(unbind(x, over=P), over=-1)

fn swapped(x: [b T] f64) -> [b T] f64:
    a, c = split(x, (2, 4), over=T)
    return concat((c, a), over=-1)

fn rejoined(x: [b T]) -> [b T]:
    return concat(split(x, (1, 2, 3), over=T), over=1)

fn halves(x: [b (2*n)]) -> [b n]:
    a, c = split(x, (n, n), over=-1)
    return a - c
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


def test_along_the_last_dim_of_any_rank(mod) -> None:
    x = _r(2, 3, 6)
    _same(mod.sums_any, lambda t: torch.cumsum(t, dim=-1), x)
    _same(mod.rolled_any, lambda t: torch.roll(t, 2, dims=-1), x)
    _same(mod.sums_any, lambda t: torch.cumsum(t, dim=-1), _r(6))


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


def _many(ours, theirs, *xs: torch.Tensor) -> None:
    """ours(*xs) equals theirs(*xs), and so do the gradients of a weighted sum of it."""
    a = [x.clone().requires_grad_() for x in xs]
    b = [x.clone().requires_grad_() for x in xs]
    y, y_ref = ours(*a), theirs(*b)
    assert y.dtype == y_ref.dtype and y.shape == y_ref.shape
    torch.testing.assert_close(y, y_ref, rtol=0, atol=0)
    w = torch.linspace(-1.0, 2.0, y.numel(), dtype=y.dtype).reshape(y.shape)
    g = torch.autograd.grad((y * w).sum(), a)
    g_ref = torch.autograd.grad((y_ref * w).sum(), b)
    for p, q in zip(g, g_ref):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


def _r(*shape: int, dtype=torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def test_expand_and_repeat_like_torch_with_gradients(mod) -> None:
    _many(mod.expanded, lambda x: x.expand(6, 5), _r(1, 5))
    _many(mod.expanded64, lambda x: x.expand(3, 2, 4), _r(2, 1, dtype=torch.float64))
    _many(mod.tiled, lambda x: x.repeat(2, 3), _r(2, 5))
    _many(mod.tiled64, lambda x: x.repeat(3, 1, 1), _r(2, 5, dtype=torch.float64))


def test_concat_of_more_than_two_like_torch_with_gradients(mod) -> None:
    _many(mod.joined, lambda x, y, z: torch.cat((x, y, z), -1), _r(2, 6), _r(2, 5, seed=1), _r(2, 6, seed=2))
    xs = [_r(2, 5, dtype=torch.float64, seed=i) for i in range(4)]
    _many(mod.joined64, lambda *t: torch.cat(t, 0), *xs)


def test_stack_over_any_dim_like_torch_with_gradients(mod) -> None:
    xs = [_r(2, 5, seed=i) for i in range(3)]
    _many(mod.stacked, lambda *t: torch.stack(t, 1), *xs)
    _many(mod.stacked_last, lambda *t: torch.stack(t, -1), *[x.double() for x in xs[:2]])


def test_unbind_like_torch_with_gradients(mod) -> None:
    def ref(x):
        a, c, d = torch.unbind(x, 1)
        return a * 2.0 + c * d

    def ref64(x):
        a, c, d = torch.unbind(x, 0)
        return a - c * d

    _many(mod.unbound, ref, _r(2, 3, 5))
    _many(mod.unbound64, ref64, _r(3, 4, dtype=torch.float64))


def test_split_like_torch_with_gradients(mod) -> None:
    _many(mod.parts, lambda x: torch.split(x, [2, 4], 1)[1] * 3.0, _r(2, 6))

    def ref(x):
        a, _, d = torch.split(x, 2, 1)
        return a * d

    _many(mod.parts_of_size, ref, _r(2, 6, dtype=torch.float64))

    def halves(x):
        a, c = torch.split(x, [4, 4], -1)
        return a - c

    _many(mod.halves, halves, _r(3, 8))


def test_stack_and_concat_of_a_tuple_like_torch_with_gradients(mod) -> None:
    _many(mod.restacked, lambda x: torch.stack(torch.unbind(x, 1), -1), _r(2, 3, 5))

    def swapped(x):
        a, c = torch.split(x, [2, 4], 1)
        return torch.cat((c, a), -1)

    _many(mod.swapped, swapped, _r(2, 6, dtype=torch.float64))
    _many(mod.rejoined, lambda x: torch.cat(torch.split(x, [1, 2, 3], 1), 1), _r(2, 6))
