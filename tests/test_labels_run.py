"""Labels at run time: embeddings (`m.emb[tokens]`), `arange`, `one_hot`
and slices, compiled and compared with torch (values and gradients)."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

SRC = """
dim V = 10
dim E = 4
dim T = 6
dim C = 3

model Emb:
    param tok: [V E] = normal(0.0, 1.0)
    param pos: [T E] = normal(0.0, 1.0)

fn embed(m: Emb, ids: [b T] Index[V]) -> [b T E]:
    return m.tok[ids] + m.pos[arange(T)]

fn loss(m: Emb, ids: [b T] Index[V]) -> []:
    return sum(embed(m, ids) * embed(m, ids))

fn encode(y: [b] Index[C]) -> [b C]:
    return one_hot(y, over=C)

fn window(x: [T E]) -> [3 E]:
    return x[2:5]

fn tail(x: [T E]) -> [2 E]:
    return x[-2:]

fn head(x: [t E]) -> [(t-1) E]:
    return x[:-1]
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("labels") / "labels.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def test_an_embedding_is_a_gather_on_the_first_dim(mod) -> None:
    m = mod.Emb.init(seed=0)
    ids = torch.tensor([[1, 2, 3, 4, 5, 9], [0, 0, 1, 1, 2, 2]])
    expected = F.embedding(ids, m.tok) + m.pos[torch.arange(6)]
    assert torch.equal(mod.embed(m, ids), expected)
    value, g = rt.value_and_grad(mod.loss, m, ids)
    tok, pos = m.tok.detach().clone().requires_grad_(), m.pos.detach().clone().requires_grad_()
    ref = ((F.embedding(ids, tok) + pos[torch.arange(6)]) ** 2).sum()
    gt, gp = torch.autograd.grad(ref, [tok, pos])
    assert torch.allclose(value, ref.detach()) and torch.allclose(g.tok, gt) and torch.allclose(g.pos, gp)


def test_one_hot_and_arange(mod) -> None:
    y = torch.tensor([2, 0, 1])
    got = mod.encode(y)
    assert got.dtype == torch.float32 and torch.equal(got, F.one_hot(y, 3).float())
    assert torch.equal(rt.arange(4), torch.arange(4))


def test_slices_keep_part_of_the_first_dim(mod) -> None:
    x = torch.arange(24.0).reshape(6, 4)
    assert torch.equal(mod.window(x), x[2:5])
    assert torch.equal(mod.tail(x), x[-2:])
    assert torch.equal(mod.head(x[:5]), x[:4])
