"""Issue 39, run: a type alias and functions generic over a model's options
compile and train as PyTorch does.

- llama2.c chooses its attention path with a flag (`flash`): one model with a
  `flash: Bool` option (PyTorch's scaled_dot_product_attention, or the manual
  masked softmax), and ONE `loss`, ONE `init_weights` (llama2.c's scaled init
  of the output projection) and ONE AdamW train step, generic over the
  option, for both instances; each equal to torch step by step.
- pytorch/examples' GCN, whose instance type `GCN[FIN, H, C, use_bias=False,
  dropout_p=0.5]` is written once, as an alias, and used in five signatures.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

LLAMA = """\
dim V = 11
dim E = 8
dim T = 6

model Attention[D, flash: Bool = False]:
    param wq: [D D] = normal(0.0, 0.3)
    param wk: [D D] = normal(0.0, 0.3)
    param wv: [D D] = normal(0.0, 0.3)
    param wo: [D D] = normal(0.0, 0.3)

    fn forward(self, x: [b T D]) -> [b T D]:
        q = x @ self.wq
        k = x @ self.wk
        v = x @ self.wv
        if flash:
            y = scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            keep = tril(ones([T T])) > 0.5
            scores = q @ transpose(k) / sqrt(8.0)
            y = softmax(where(keep, scores, -inf), over=-1) @ v
        return y @ self.wo

model Transformer[D, flash: Bool = False]:
    param tok: [V D] = normal(0.0, 1.0)
    param attn: Attention[D, flash=flash]
    param out: [D V] = normal(0.0, 0.3)

    fn forward(self, tokens: [b T] Index[V]) -> [b T V]:
        h = self.tok[tokens]
        h = h + self.attn(h)
        return h @ self.out

fn loss(m: Transformer[E, flash=fl], x: [b T] Index[V], y: [b T] Index[V]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=V)

# llama2.c's init_weights: the output projection scaled by 1/sqrt(2 * n_layers)
fn init_weights(mut m: Transformer[E, flash=fl], seed: Int):
    m.attn.wo = randn([E E], seed=seed) * (0.02 / sqrt(2.0))

fn train_step(mut m: Transformer[E, flash=fl], mut opt: AdamW[Transformer[E, flash=fl]], x: [b T] Index[V], y: [b T] Index[V]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

# the option as a value in the body
fn path(m: Transformer[E, flash=fl]) -> Str:
    if fl:
        return "flash"
    return "manual"

fn make_opt(m: Transformer[E, flash=fl]) -> AdamW[Transformer[E, flash=fl]]:
    return AdamW(m, lr=0.01)

fn fresh(m: Transformer[E, flash=fl]) -> Transformer[E, flash=fl]:
    return Transformer[E, flash=fl].init(seed=3)
"""

GCN = """\
dim N = 7
dim FIN = 5
dim H = 6
dim C = 3

model GraphConv[I, O, use_bias: Bool = True]:
    param weight: [I O] = normal(0.0, 0.4)
    param bias: [O] = zeros if use_bias

    fn forward(self, x: [N I], adj: [N N]) -> [N O]:
        h = adj @ (x @ self.weight)
        if use_bias:
            return h + self.bias
        return h

model GCN[I, HID, O, use_bias: Bool = True, dropout_p: Float = 0.5]:
    param gc1: GraphConv[I, HID, use_bias=use_bias]
    param gc2: GraphConv[HID, O, use_bias=use_bias]

    fn forward(self, x: [N I], adj: [N N], mode: Mode) -> [N O]:
        h = dropout(x, p=dropout_p, mode=mode)
        h = relu(self.gc1(h, adj))
        h = dropout(h, p=dropout_p, mode=mode)
        return log_softmax(self.gc2(h, adj), over=O)

type Gcn = GCN[FIN, H, C, use_bias=False, dropout_p=0.5]
type Layer[i, o] = GraphConv[i, o, use_bias=False]

fn layer(x: [N i], seed: Int) -> Layer[i, H]:
    return Layer[i, H].init(seed=seed)

fn make(seed: Int) -> Gcn:
    return Gcn.init(seed=seed)

fn loss(m: Gcn, x: [N FIN], adj: [N N], y: [N] Index[C], mode: Mode) -> [] NonNeg:
    return nll(m(x, adj, mode), y, over=C)

fn grads(m: Gcn, x: [N FIN], adj: [N N], y: [N] Index[C]) -> Grad[Gcn]:
    return grad(loss, m, x, adj, y, Eval)

fn train_step(mut m: Gcn, mut opt: Adam[Gcn], x: [N FIN], adj: [N N], y: [N] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, adj, y, Eval)
    opt.step(m, g)
    return l

fn accuracy(m: Gcn, x: [N FIN], adj: [N N], y: [N] Index[C]) -> [] Float:
    hit = argmax(m(x, adj, Eval), over=C) == y
    return mean(hit as f32)
"""


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    path = tmp_path_factory.mktemp("llama") / "llama.qv"
    path.write_text(LLAMA)
    return quiver.load(str(path))


@pytest.fixture(scope="module")
def gcn(tmp_path_factory):
    path = tmp_path_factory.mktemp("gcn") / "gcn.qv"
    path.write_text(GCN)
    return quiver.load(str(path))


def _ref_forward(p: dict, tokens: torch.Tensor, flash: bool) -> torch.Tensor:
    h = p["tok"][tokens]
    q, k, v = h @ p["attn.wq"], h @ p["attn.wk"], h @ p["attn.wv"]
    if flash:
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:  # llama2.c's manual path
        scores = q @ k.transpose(-2, -1) / math.sqrt(8.0)
        mask = torch.full((6, 6), float("-inf")).triu(1)
        y = F.softmax(scores + mask, dim=-1) @ v
    return (h + y @ p["attn.wo"]) @ p["out"]


def _batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(100 + step)
    x = torch.randint(0, 11, (4, 6), generator=gen)
    return x, torch.roll(x, -1, dims=1)


@pytest.mark.parametrize("flash", [False, True])
def test_one_generic_loss_init_and_step_train_both_attention_paths_as_torch(llama, flash: bool) -> None:
    m = llama.Transformer.of(8, flash=flash).init(seed=0)
    llama.init_weights(m, 7)
    assert llama.path(m) == ("flash" if flash else "manual")
    names = ["tok", "attn.wq", "attn.wk", "attn.wv", "attn.wo", "out"]
    state = m.state_dict()
    assert list(state) == names
    # randn(seed=7) draws as torch.randn from a generator seeded 7
    want_wo = torch.randn(8, 8, generator=torch.Generator().manual_seed(7)) * (0.02 / math.sqrt(2.0))
    torch.testing.assert_close(state["attn.wo"], want_wo, rtol=1e-6, atol=0.0)
    ref = {k: state[k].detach().clone().requires_grad_(True) for k in names}
    opt = llama.make_opt(m)
    ref_opt = torch.optim.AdamW([ref[k] for k in names], lr=0.01, foreach=True)
    for step in range(8):
        x, y = _batch(step)
        got = llama.train_step(m, opt, x, y)
        ref_opt.zero_grad()
        want = F.cross_entropy(_ref_forward(ref, x, flash).reshape(-1, 11), y.reshape(-1))
        want.backward()
        ref_opt.step()
        torch.testing.assert_close(got, want.detach(), rtol=1e-5, atol=1e-6)
    for k in names:
        torch.testing.assert_close(m.state_dict()[k], ref[k].detach(), rtol=1e-5, atol=1e-6)


def test_the_two_paths_agree_and_an_instance_is_made_from_the_bound_option(llama) -> None:
    manual = llama.Transformer.of(8).init(seed=0)
    flash = llama.Transformer.of(8, flash=True).init(seed=0)
    x, y = _batch(0)
    torch.testing.assert_close(llama.loss(manual, x, y), llama.loss(flash, x, y), rtol=1e-5, atol=1e-6)
    made = llama.fresh(flash)
    assert type(made) is llama.Transformer.of(8, flash=True)
    assert type(llama.fresh(manual)) is llama.Transformer.of(8)


def test_a_gcn_written_through_its_alias_trains_as_torch(gcn) -> None:
    m = gcn.make(0)
    assert type(m) is gcn.Gcn  # the alias is the instance's class, for Python
    assert type(m) is gcn.GCN.of(5, 6, 3, use_bias=False)
    assert list(m.state_dict()) == ["gc1.weight", "gc2.weight"]
    made = gcn.layer(torch.zeros(7, 5), 3)  # an alias that takes dims, given them in a body
    assert type(made) is gcn.GraphConv.of(5, 6, use_bias=False)
    assert torch.equal(made.weight, gcn.GraphConv.of(5, 6, use_bias=False).init(seed=3).weight)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(7, 5, generator=gen)
    a = (torch.rand(7, 7, generator=gen) > 0.6).float() + torch.eye(7)
    adj = a / a.sum(1, keepdim=True)  # row-normalised, as the example's
    y = torch.randint(0, 3, (7,), generator=gen)
    w1, w2 = (m.state_dict()[k].detach().clone().requires_grad_(True) for k in ("gc1.weight", "gc2.weight"))

    def ref_loss():
        h = F.relu(adj @ (x @ w1))
        return F.nll_loss(F.log_softmax(adj @ (h @ w2), dim=1), y)

    g = gcn.grads(m, x, adj, y)
    gw1, gw2 = torch.autograd.grad(ref_loss(), [w1, w2])
    torch.testing.assert_close(g.gc1.weight, gw1, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(g.gc2.weight, gw2, rtol=1e-5, atol=1e-6)
    opt = rt.Adam(m, lr=0.05)
    ref_opt = torch.optim.Adam([w1, w2], lr=0.05, foreach=True)
    for _ in range(10):
        got = gcn.train_step(m, opt, x, adj, y)
        ref_opt.zero_grad()
        want = ref_loss()
        want.backward()
        ref_opt.step()
        torch.testing.assert_close(got, want.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(m.state_dict()["gc2.weight"], w2.detach(), rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        hits = F.log_softmax(adj @ (F.relu(adj @ (x @ w1)) @ w2), dim=1).argmax(1) == y
    torch.testing.assert_close(gcn.accuracy(m, x, adj, y), hits.float().mean())
