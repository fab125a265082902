"""Tied params in the runtime (issue 39): a model class whose `_qv_ties`
makes one tensor the param of two places, as nanoGPT's
`self.transformer.wte.weight = self.lm_head.weight`. Against torch with the
same tie: the loss, the gradient (the sum of both uses, under the source's
name; the tied name's is zero, so that norms and updates count it once), 3
AdamW steps (one optimizer state: the tensor is stepped once), the state_dict
(both names, as torch's), num_params and named_params (the tensor once, as
torch's parameters() and named_parameters())."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from quiver import runtime as rt

V, E = 7, 5


class Emb(rt.Model):
    _qv_name = "Emb"
    _qv_params = (rt.Field("weight", (V, E), rt.f32, rt.init.normal(0.0, 1.0)),)


class Head(rt.Model):
    _qv_name = "Head"
    _qv_params = (rt.Field("weight", (V, E), rt.f32, rt.init.normal(0.0, 1.0)),)


class Tied(rt.Model):
    _qv_name = "Tied"
    _qv_params = (
        rt.SubModel("wte", Emb),
        rt.Field("w", (E, E), rt.f32, rt.init.normal(0.0, 0.3)),
        rt.SubModel("lm_head", Head),
    )
    _qv_ties = (("lm_head.weight", "wte.weight"),)


def loss(m, x, y):
    h = torch.tanh(m.wte.weight[x] @ m.w)
    return F.cross_entropy(h @ m.lm_head.weight.T, y)


class TorchTied(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.wte = nn.Embedding(V, E)
        self.w = nn.Parameter(m.w.clone())
        self.lm_head = nn.Linear(E, V, bias=False)
        with torch.no_grad():
            self.wte.weight.copy_(m.wte.weight)
        self.lm_head.weight = self.wte.weight  # nanoGPT's tie

    def forward(self, x, y):
        h = torch.tanh(self.wte(x) @ self.w)
        return F.cross_entropy(self.lm_head(h), y)


def _data():
    g = torch.Generator().manual_seed(3)
    return torch.randint(0, V, (6,), generator=g), torch.randint(0, V, (6,), generator=g)


def test_one_tensor_in_two_places():
    m = Tied.init(seed=0)
    assert m.lm_head.weight is m.wte.weight
    sd = m.state_dict()
    t = TorchTied(m)
    assert list(sd) == ["wte.weight", "w", "lm_head.weight"]
    assert set(sd) == set(t.state_dict())
    assert torch.equal(sd["lm_head.weight"], sd["wte.weight"])
    assert rt.num_params(m) == sum(p.numel() for p in t.parameters()) == V * E + E * E
    # torch lists a module's own params before its children's; Quiver, in declaration order
    assert [n for n, _ in rt.named_params(m, 0)] == ["wte.weight", "w"]
    assert sorted(n for n, _ in t.named_parameters()) == ["w", "wte.weight"]


def test_grad_and_three_adamw_steps_equal_torch():
    m = Tied.init(seed=0)
    t = TorchTied(m)
    opt = rt.AdamW(m, lr=0.05, weight_decay=0.1)
    topt = torch.optim.AdamW(t.parameters(), lr=0.05, weight_decay=0.1)
    x, y = _data()
    for step in range(3):
        value, g = rt.value_and_grad(loss, m, x, y)
        topt.zero_grad()
        tl = t(x, y)
        tl.backward()
        assert torch.allclose(value, tl.detach(), atol=1e-6), step
        assert torch.allclose(g.wte.weight, t.wte.weight.grad, atol=1e-6), step  # both uses, summed
        assert torch.equal(g.lm_head.weight, torch.zeros(V, E))
        assert torch.allclose(g.w, t.w.grad, atol=1e-6), step
        opt.step(m, g)
        topt.step()
        assert m.lm_head.weight is m.wte.weight
        assert torch.allclose(m.wte.weight, t.wte.weight.detach(), atol=1e-6), step
        assert torch.allclose(m.w, t.w.detach(), atol=1e-6), step


def test_sgd_update_and_per_example_gradient_count_the_tie_once():
    m = Tied.init(seed=0)
    t = TorchTied(m)
    x, y = _data()
    _, g = rt.value_and_grad(loss, m, x, y)
    t(x, y).backward()
    before = m.wte.weight.clone()
    rt.model_update(m, g, -0.1)
    assert torch.allclose(m.wte.weight, before - 0.1 * t.wte.weight.grad, atol=1e-6)
    # the torch.func path (per-example gradients), averaged: the same gradient
    _, ge = rt.value_and_grad(lambda m, x, y: loss(m, x[None], y[None]), m, x, y, batch=(0, 0))
    _, g2 = rt.value_and_grad(loss, m, x, y)
    mean = rt.mean_grad(ge)
    assert torch.allclose(mean.wte.weight, g2.wte.weight, atol=1e-5)
    assert torch.equal(mean.lm_head.weight, torch.zeros(V, E))


def test_ties_of_different_types_or_unknown_paths_are_refused():
    with pytest.raises(rt.ModelError, match="cannot tie w"):

        class Bad(rt.Model):
            _qv_params = (
                rt.Field("w", (E, E), rt.f32),
                rt.Field("v", (V, E), rt.f32),
            )
            _qv_ties = (("w", "v"),)

    with pytest.raises(rt.ModelError, match="is not a param path"):

        class Unknown(rt.Model):
            _qv_params = (rt.Field("w", (E, E), rt.f32),)
            _qv_ties = (("w", "nope"),)


class Blk(rt.Model):
    _qv_name = "Blk"
    _qv_params = (rt.Field("w", (E, E), rt.f32, rt.init.zeros),)


class Shared(rt.Model):
    _qv_name = "Shared"
    _qv_params = (rt.SubModel("enc", Blk), rt.SubModel("dec", Blk))
    _qv_ties = (("dec", "enc"),)


def test_a_walk_by_kind_gives_a_tied_sub_model_once_as_torch_modules_does():
    # torch's modules() gives a shared module once; the walk gave it twice,
    # and `l.w.init(normal(...))` drew twice into the one tensor
    m = Shared.init(seed=0)
    assert m.dec.w is m.enc.w
    assert len(list(rt.modules(m, Blk, 0))) == 1
    enc = nn.Linear(E, E)
    shared = nn.Sequential(enc, enc)
    assert sum(isinstance(x, nn.Linear) for x in shared.modules()) == 1


def test_a_walk_closed_early_leaves_a_later_walks_params_to_it():
    m = Tied.init(seed=0)
    first = rt.named_params(m, 0)
    second = rt.named_params(m, 1)
    next(first)
    _, p = next(second)
    first.close()  # ends before the second: it gave the second's params back before
    rt.init_param(p, 0.25)
    assert torch.equal(p, torch.full_like(p, 0.25))
    second.close()
    with pytest.raises(rt.ModelError, match="running walk"):
        rt.init_param(p, 0.5)
