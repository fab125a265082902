"""Walks over a model, compiled and run (issue 39): nanoGPT's
`self.apply(_init_weights)` and its scaled init of every `c_proj.weight`
written once with `modules(m, nn.Linear, seed=...)` and `named_params(m,
seed=...)`, against torch.

"Equal" here is exact equality with a torch re-implementation that makes the
same draws: each walk is one `torch.Generator().manual_seed(seed)`, and torch's
`nn.init.normal_(p, mean, std, generator=g)` / `nn.init.zeros_(p)` are applied
to the same tensors in the walk's order (nanoGPT's own code draws from the
global generator, into torch's `[O I]` Linear weights: the same statistics,
other values). The names are the state_dict keys of the torch twin
(`quiver.to_module`) and of a torch nanoGPT of the same layout; `num_params`
is torch's `sum(p.numel() for p in m.parameters())` of that nanoGPT."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import quiver
from quiver import runtime as rt

SRC = """\
import nn

dim V = 11
dim E = 8
dim L = 2

model Block:
    param ln_1: nn.LayerNorm[E]
    param c_attn: nn.Linear[E, (3 * E)]
    param c_proj: nn.Linear[E, E]
    param ln_2: nn.LayerNorm[E]
    param c_fc: nn.Linear[E, (4 * E)]
    param mlp_c_proj: nn.Linear[(4 * E), E, bias=False]

model GPT:
    param wte: nn.Embedding[V, E]
    param wpe: nn.Embedding[16, E]
    param h: [L] Block
    param ln_f: nn.LayerNorm[E]
    param lm_head: nn.Linear[E, V, bias=False]

fn make(seed: Int) -> GPT:
    return GPT.init(seed=seed)

fn init_weights(mut m: GPT):
    for layer in modules(m, nn.Linear, seed=1):
        layer.weight.init(normal(0.0, 0.02))
    for emb in modules(m, nn.Embedding, seed=2):
        emb.weight.init(normal(0.0, 0.02))
    for name, p in named_params(m, seed=3):
        if name.endswith("c_proj.weight"):
            p.init(normal(0.0, 0.02 / sqrt(2.0 * L)))
        elif name.endswith(".bias") and ndim(p) == 1:
            p.init(zeros)

fn init_by_rank(mut m: GPT):
    for name, p in named_params(m, seed=5):
        if ndim(p) >= 2:
            p.init(xavier_uniform())
        else:
            p.init(0.5)

fn count(m: GPT) -> Int:
    return num_params(m)

fn sizes(m: GPT) -> Int:
    total = 0
    for name, p in named_params(m, seed=0):
        total = total + numel(p)
    return total
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("walks") / "walks.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


class _TorchBlock(nn.Module):
    def __init__(self, e):
        super().__init__()
        self.ln_1 = nn.LayerNorm(e)
        self.c_attn = nn.Linear(e, 3 * e)
        self.c_proj = nn.Linear(e, e)
        self.ln_2 = nn.LayerNorm(e)
        self.c_fc = nn.Linear(e, 4 * e)
        self.mlp_c_proj = nn.Linear(4 * e, e, bias=False)


class _TorchGPT(nn.Module):
    def __init__(self, v=11, e=8, n_layer=2):
        super().__init__()
        self.wte = nn.Embedding(v, e)
        self.wpe = nn.Embedding(16, e)
        self.h = nn.ModuleList([_TorchBlock(e) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(e)
        self.lm_head = nn.Linear(e, v, bias=False)


def _expected_init(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """nanoGPT's init on the Quiver model's tensors, with torch.nn.init and one
    generator per walk, in the walks' orders."""
    out = {k: v.clone() for k, v in state.items()}
    linears = [k for k in out if k.endswith("weight") and out[k].dim() == 2 and not k.startswith(("wte", "wpe"))]
    g = torch.Generator().manual_seed(1)
    for k in linears:  # modules(m, nn.Linear): pre-order, declaration order
        nn.init.normal_(out[k], 0.0, 0.02, generator=g)
    g = torch.Generator().manual_seed(2)
    for k in ("wte.weight", "wpe.weight"):
        nn.init.normal_(out[k], 0.0, 0.02, generator=g)
    g = torch.Generator().manual_seed(3)
    for k in out:
        if k.endswith("c_proj.weight"):
            nn.init.normal_(out[k], 0.0, 0.02 / math.sqrt(2 * 2), generator=g)
        elif k.endswith(".bias"):
            nn.init.zeros_(out[k])
    return out


def test_named_params_are_torch_state_dict_keys(mod):
    m = mod.make(0)
    twin = quiver.to_module(m)
    names = [name for name, _ in rt.named_params(m, 0)]
    assert names == list(twin.state_dict().keys())
    assert names == [n for n, _ in twin.named_parameters()]
    torch_names = {n for n, _ in _TorchGPT().named_parameters()}
    assert set(names) == torch_names
    assert "h.1.c_proj.weight" in names


def test_num_params_is_torch_count(mod):
    m = mod.make(0)
    expected = sum(p.numel() for p in _TorchGPT().parameters())
    assert mod.count(m) == expected == mod.sizes(m)


def test_nanogpt_init_equals_torch(mod):
    m = mod.make(0)
    before = m.state_dict()
    mod.init_weights(m)
    after = m.state_dict()
    expected = _expected_init(before)
    assert after.keys() == expected.keys()
    for k in after:
        assert torch.equal(after[k], expected[k]), k
    # the statistics nanoGPT's init gives
    assert abs(after["h.0.c_attn.weight"].std().item() - 0.02) < 0.004
    assert torch.all(after["h.0.c_attn.bias"] == 0)
    assert torch.all(after["ln_f.weight"] == 1)


def test_walk_is_reproducible_and_in_place(mod):
    a, b = mod.make(0), mod.make(4)
    w = a.h[0].c_fc.weight
    mod.init_weights(a)
    mod.init_weights(b)
    assert a.h[0].c_fc.weight is w  # the field's tensor, written in place
    for (k, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        if not k.startswith(("ln", "h.0.ln", "h.1.ln")):
            assert torch.equal(x, y), k  # the walk's values depend on its seed only


def test_init_by_rank_equals_torch(mod):
    m = mod.make(0)
    before = m.state_dict()
    mod.init_by_rank(m)
    g = torch.Generator().manual_seed(5)
    for k, t in before.items():
        t = t.clone()
        if t.dim() >= 2:
            # Quiver keeps a Linear's weight [I O]: its fans are (I, O), as torch's for [O I]
            bound = math.sqrt(6.0 / (t.shape[0] + t.shape[1]))
            t = torch.rand(t.shape, generator=g) * (2 * bound) - bound
        else:
            t.fill_(0.5)
        assert torch.allclose(m.state_dict()[k], t, rtol=0, atol=1e-7), k


def test_init_outside_a_walk_is_refused_at_run_time():
    with pytest.raises(rt.ModelError, match="running walk"):
        rt.init_param(torch.zeros(3), rt.init.zeros)
