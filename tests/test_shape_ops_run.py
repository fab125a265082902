"""Shape operations compiled and run against torch: reshape, permute,
concat, stack, chunk (values and gradients)."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver
from quiver import runtime as rt

SRC = """
dim T = 3
dim E = 8
dim NH = 2
dim HD = E / NH

model Gates:
    param w: [E (4*E)] = normal(0.0, 0.5)

fn split_heads(x: [b T E]) -> [b NH T HD]:
    return permute(reshape(x, [b T NH HD]), [b NH T HD])

fn merge_heads(x: [b NH T HD]) -> [b T E]:
    return reshape(permute(x, [b T NH HD]), [b T (NH*HD)])

fn join(x: [b E], y: [b T]) -> [b (E+T)]:
    return concat(x, y, over=-1)

fn pile(x: [b E], y: [b E]) -> [2 b E]:
    return stack(x, y)

fn lstm_cell(m: Gates, x: [b E], c: [b E]) -> [b E]:
    i, f, g, o = chunk(x @ m.w, 4, over=-1)
    return sigmoid(o) * tanh(sigmoid(f) * c + sigmoid(i) * tanh(g))

fn loss(m: Gates, x: [b E], c: [b E]) -> []:
    return sum(lstm_cell(m, x, c))
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("shapes") / "shapes.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def test_heads_split_and_merge_like_torch(mod) -> None:
    x = torch.randn(5, 3, 8)
    heads = mod.split_heads(x)
    assert torch.equal(heads, x.view(5, 3, 2, 4).transpose(1, 2))
    assert torch.equal(mod.merge_heads(heads), x)


def test_concat_and_stack(mod) -> None:
    x, y = torch.randn(5, 8), torch.randn(5, 3)
    assert torch.equal(mod.join(x, y), torch.cat((x, y), -1))
    assert torch.equal(mod.pile(x, x * 2), torch.stack((x, x * 2)))


def test_chunked_gates_like_torch_with_gradients(mod) -> None:
    m = mod.Gates.init(seed=0)
    x, c = torch.randn(5, 8), torch.randn(5, 8)
    value, g = rt.value_and_grad(mod.loss, m, x, c)
    w = m.w.detach().clone().requires_grad_()
    i, f, gg, o = (x @ w).chunk(4, -1)
    ref = (torch.sigmoid(o) * torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg))).sum()
    (gw,) = torch.autograd.grad(ref, [w])
    assert torch.allclose(value, ref.detach()) and torch.allclose(g.w, gw, atol=1e-6)


def test_chunk_rejects_an_uneven_dim_at_run_time() -> None:
    with pytest.raises(rt.QuiverError, match="3 parts do not divide a dim of size 8"):
        rt.chunk(torch.ones(2, 8), 3, 1)
