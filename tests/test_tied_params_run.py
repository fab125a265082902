"""Tied params in the language (issue 39), compiled and run against torch:
`param head: [V E] = tied(wte)` (nanoGPT's `self.transformer.wte.weight =
self.lm_head.weight`, with the head used as `h @ transpose(head)`: Quiver's
`nn.Linear` keeps its weight `[I O]`, so an `Embedding[V, E]` and a
`Linear[E, V]` do not have the same type), and `param dec: Lin[E, E] =
tied(enc)`, two layers that are one. The loss, the gradients, 3 AdamW steps
and the state_dict keys equal torch's with the same ties; num_params is
torch's parameters() count (each tensor once)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import quiver
from quiver import runtime as rt

SRC = """\
dim V = 9
dim E = 6

model Lin[I, O]:
    param weight: [I O] = kaiming_uniform(a=sqrt(5.0))
    param bias: [O] = zeros

model Lm:
    param wte: [V E] = normal(0.0, 0.5)
    param enc: Lin[E, E]
    param dec: Lin[E, E] = tied(enc)
    param head: [V E] = tied(wte)

fn make(seed: Int) -> Lm:
    return Lm.init(seed=seed)

fn loss(m: Lm, x: [b] Index[V], y: [b] Index[V]) -> [] NonNeg:
    h = tanh(m.wte[x] @ m.enc.weight + m.enc.bias)
    h = tanh(h @ m.dec.weight + m.dec.bias)
    return cross_entropy(h @ transpose(m.head), y, over=V)

fn step(mut m: Lm, mut opt: AdamW[Lm], x: [b] Index[V], y: [b] Index[V]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn optimizer(m: Lm) -> AdamW[Lm]:
    return AdamW(m, lr=0.05, weight_decay=0.1)

fn count(m: Lm) -> Int:
    return num_params(m)

fn grad_norm(m: Lm, x: [b] Index[V], y: [b] Index[V]) -> [] NonNeg:
    return norm(grad(loss, m, x, y))

fn clipped(m: Lm, x: [b] Index[V], y: [b] Index[V]) -> [] Float:
    g, n = clip_grad_norm(grad(loss, m, x, y), 0.1)
    return n

fn wte_only(m: Lm, x: [b] Index[V], y: [b] Index[V]) -> Grad[Lm, wrt=[wte, head]]:
    l, g = value_and_grad(loss, m, x, y, wrt=[wte, head])
    return g
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("tied") / "tied.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


class TorchLm(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.wte = nn.Embedding(9, 6)
        self.enc = nn.Linear(6, 6)
        self.dec = self.enc  # two layers that are one
        self.head = nn.Linear(6, 9, bias=False)
        with torch.no_grad():
            self.wte.weight.copy_(m.wte)
            self.enc.weight.copy_(m.enc.weight.T)  # torch keeps [O I]
            self.enc.bias.copy_(m.enc.bias)
        self.head.weight = self.wte.weight  # nanoGPT's tie

    def forward(self, x, y):
        h = torch.tanh(self.enc(self.wte(x)))
        h = torch.tanh(self.dec(h))
        return F.cross_entropy(self.head(h), y)


def _data():
    g = torch.Generator().manual_seed(5)
    return torch.randint(0, 9, (8,), generator=g), torch.randint(0, 9, (8,), generator=g)


def test_ties_hold_one_tensor_and_torch_names(mod):
    m = mod.make(0)
    assert m.head is m.wte and m.dec.weight is m.enc.weight and m.dec.bias is m.enc.bias
    t = TorchLm(m)
    # both names of a tied tensor, as torch's state_dict (torch calls a bare tensor's `x.weight`)
    assert list(m.state_dict()) == ["wte", "enc.weight", "enc.bias", "dec.weight", "dec.bias", "head"]
    assert set(t.state_dict()) == {"wte.weight", "enc.weight", "enc.bias", "dec.weight", "dec.bias", "head.weight"}
    assert mod.count(m) == sum(p.numel() for p in t.parameters()) == 9 * 6 + 6 * 6 + 6
    assert [n for n, _ in rt.named_params(m, 0)] == ["wte", "enc.weight", "enc.bias"]
    twin = quiver.to_module(m)  # the torch twin: one nn.Parameter under both names
    assert set(twin.state_dict()) == set(m.state_dict())
    assert sum(p.numel() for p in twin.parameters()) == mod.count(m)
    assert twin.get_parameter("head") is twin.get_parameter("wte")


def test_loss_grads_and_three_adamw_steps_equal_torch(mod):
    m = mod.make(0)
    t = TorchLm(m)
    x, y = _data()
    value, g = rt.value_and_grad(mod.loss, m, x, y)
    tl = t(x, y)
    tl.backward()
    assert torch.allclose(value, tl.detach(), atol=1e-6)
    assert torch.allclose(g.wte, t.wte.weight.grad, atol=1e-6)  # both uses of the tensor, summed
    assert torch.allclose(g.enc.weight, t.enc.weight.grad.T, atol=1e-6)
    assert torch.allclose(g.enc.bias, t.enc.bias.grad, atol=1e-6)
    assert not g.head.any() and not g.dec.weight.any()  # a tie's gradient is its source's
    opt = mod.optimizer(m)
    topt = torch.optim.AdamW(t.parameters(), lr=0.05, weight_decay=0.1)
    assert len(list(t.parameters())) == 3
    for k in range(3):
        topt.zero_grad()
        tl = t(x, y)
        tl.backward()
        topt.step()
        value = mod.step(m, opt, x, y)
        assert torch.allclose(value, tl.detach(), atol=1e-5), k
        assert torch.allclose(m.wte, t.wte.weight.detach(), atol=1e-5), k
        assert torch.allclose(m.enc.weight, t.enc.weight.detach().T, atol=1e-5), k
        assert torch.allclose(m.enc.bias, t.enc.bias.detach(), atol=1e-5), k
        assert m.head is m.wte and m.dec.weight is m.enc.weight


def test_norm_clipping_wrt_and_a_checkpoint_count_the_tie_as_torch_does(mod, tmp_path):
    # docs/language.md, "Tied params": a gradient's norm and clipping count the
    # tied tensor once, wrt= selects it by its source's name (zeros at the
    # tied name), and a checkpoint lists both names and loads one tensor
    x, y = _data()
    m = mod.make(2)
    t = TorchLm(m)
    t.zero_grad()
    t(x, y).backward()
    want = torch.nn.utils.clip_grad_norm_(t.parameters(), float("inf"))  # each parameter once
    torch.testing.assert_close(mod.grad_norm(m, x, y), want, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(mod.clipped(m, x, y), want, rtol=1e-5, atol=1e-7)
    g = mod.wte_only(m, x, y)
    torch.testing.assert_close(g.wte, t.wte.weight.grad, rtol=1e-5, atol=1e-7)
    assert torch.equal(g.head, torch.zeros(9, 6))
    path = tmp_path / "lm.pt"
    m.save(str(path))
    back = type(m).load(str(path))
    assert back.head is back.wte and back.dec.weight is back.enc.weight
    assert torch.equal(back.wte, m.wte)
