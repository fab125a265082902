"""Creation functions compiled and run against torch: tril, triu (values and
gradients), eye, full, rand and multinomial (deterministic for the seed)."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver
from quiver import runtime as rt

SRC = """
dim T = 4
dim V = 5

fn causal(scores: [b T T]) -> [b T T] Prob:
    return softmax(where(tril(ones([T T] Bool)), scores, -1e9), over=-1)

fn upper(x: [b T T]) -> [b T T]:
    return triu(x, diagonal=1) + tril(x, diagonal=-2)

fn upper_sum(x: [b T T]) -> []:
    return sum(upper(x) * upper(x))

fn identity(x: [b n]) -> [n n]:
    return eye(n) + eye(n)

fn eye_t() -> [T T]:
    return eye(T)

fn filled() -> [T V] NonNeg:
    return full([T V] NonNeg, 0.5)

fn labels() -> [T] Index[V]:
    return full([T] Index[V], 4)

fn flags() -> [T] Bool:
    return full([T] Bool, True)

fn noise(s: Int) -> [T V] Prob:
    return rand([T V], seed=s)

fn noise64() -> [T] f64:
    return rand([T] f64, seed=3)

fn sample(logits: [b V], s: Int) -> [b] Index[V]:
    return multinomial(softmax(logits, over=V), over=V, seed=s)

fn sample_first(p: [V b] Prob) -> [b] Index[V]:
    return multinomial(p, over=0, seed=7)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("creation") / "creation.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def test_triangles_like_torch_with_gradients(mod) -> None:
    x = torch.randn(3, 4, 4)
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    assert torch.allclose(mod.causal(x), torch.softmax(torch.where(mask, x, -1e9), -1))
    assert torch.equal(mod.upper(x), x.triu(1) + x.tril(-2))
    xg = x.clone().requires_grad_()
    (g,) = torch.autograd.grad(mod.upper_sum(xg), [xg])
    x2 = x.clone().requires_grad_()
    ref = torch.triu(x2, diagonal=1) + torch.tril(x2, diagonal=-2)
    (g_ref,) = torch.autograd.grad((ref * ref).sum(), [x2])
    assert torch.equal(g, g_ref)


def test_eye_and_full(mod) -> None:
    assert torch.equal(mod.identity(torch.zeros(2, 3)), 2 * torch.eye(3))
    assert torch.equal(mod.eye_t(), torch.eye(4))
    assert torch.equal(mod.filled(), torch.full((4, 5), 0.5))
    assert torch.equal(mod.labels(), torch.full((4,), 4, dtype=torch.int64))
    assert torch.equal(mod.flags(), torch.ones(4, dtype=torch.bool))


def test_rand_is_uniform_and_deterministic_for_the_seed(mod) -> None:
    a = mod.noise(1)
    gen = torch.Generator().manual_seed(1)
    assert torch.equal(a, torch.rand((4, 5), generator=gen))
    assert torch.equal(mod.noise(1), a) and not torch.equal(mod.noise(2), a)
    assert ((a >= 0) & (a < 1)).all()
    b = mod.noise64()
    assert b.dtype == torch.float64 and torch.equal(
        b, torch.rand(4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    )


def test_multinomial_like_torch_and_deterministic_for_the_seed(mod) -> None:
    logits = torch.randn(6, 5)
    s = mod.sample(logits, 4)
    gen = torch.Generator().manual_seed(4)
    ref = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen).reshape(6)
    assert s.dtype == torch.int64 and torch.equal(s, ref)
    assert torch.equal(mod.sample(logits, 4), s)
    # one-hot probabilities give their labels, along any dim
    p = torch.eye(5)[:, [3, 0, 4]]
    assert torch.equal(mod.sample_first(p), torch.tensor([3, 0, 4]))
    assert rt.multinomial(torch.tensor([0.0, 1.0]), 0, seed=1).shape == ()


def test_categorical_is_multinomial_under_another_name(tmp_path) -> None:
    path = tmp_path / "cat.qv"
    path.write_text(
        "dim V = 5\n\n"
        "fn a(p: [b V] Prob) -> [b] Index[V]:\n    return categorical(p, over=V, seed=7)\n\n"
        "fn m(p: [b V] Prob) -> [b] Index[V]:\n    return multinomial(p, over=V, seed=7)\n"
    )
    mod = quiver.load(str(path))
    p = torch.softmax(torch.randn(6, 5), -1)
    assert torch.equal(mod.a(p), mod.m(p))
