"""Functions generic over models (`fn f[M: CharModel](m: M)`, docs/language.md
"Traits: functions generic over models"), compiled and run: makemore's
pattern of one loss, one training step and one `generate` shared by six
models (a bigram table, an MLP of nn.Embedding and nn.Linear, a small RNN,
makemore's causal bag of words, a GRU of nn.GRUCell over the sequence, a
Transformer of nn.TransformerEncoderLayer with a causal mask),
each trained 3 AdamW steps against the same models written in torch with
torch.optim.AdamW; the methods dispatch on the model given, and a call from
Python with arguments of two models for one type parameter is refused at
the .qv line."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

SRC = """\
import nn

dim V = 7
dim E = 5
dim H = 6
dim T = 8

trait CharModel:
    fn forward(self, idx: [b t] Index[V]) -> [b t V]

model Bigram:
    param table: [V V] = normal(0.0, 1.0)

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        return self.table[idx]

model Mlp:
    param wte: nn.Embedding[V, E]
    param fc: nn.Linear[E, H]
    param head: nn.Linear[H, V]

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        return self.head(tanh(self.fc(self.wte(idx))))

model Rnn:
    param wte: nn.Embedding[V, E]
    param wx: [E H] = normal(0.0, 0.3)
    param wh: [H H] = normal(0.0, 0.3)
    param head: nn.Linear[H, V]

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        x = self.wte(idx) @ self.wx
        h = tanh(x)
        h = tanh(x + h @ self.wh)
        return self.head(h)

# makemore's BoW: each position averages the embeddings of the positions up
# to it (CausalBoW), then an MLP block with a residual, then the head
model Bow:
    param wte: nn.Embedding[V, E]
    param fc: nn.Linear[E, H]
    param proj: nn.Linear[H, E]
    param head: nn.Linear[E, V]

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        x = self.wte(idx)
        keep = tril(ones([t t] Bool))
        att = softmax(where(keep, zeros([t t]), -1e9), over=-1)
        y = att @ x
        y = y + self.proj(tanh(self.fc(y)))
        return self.head(y)

# makemore's RNN with cell_type='gru': a GRU cell over the sequence
model Gru:
    param wte: nn.Embedding[V, E]
    param cell: nn.GRUCell[E, H]
    param head: nn.Linear[H, V]

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        xs = permute(self.wte(idx), [t b E])
        hs = self.cell.sequence(xs, zeros([b H]))
        return self.head(permute(hs, [b t H]))

# makemore's Transformer: token and position embeddings, a pre-norm block of
# causal self-attention and an MLP, the head
model Tfm:
    param wte: nn.Embedding[V, E]
    param wpe: nn.Embedding[T, E]
    param blk: nn.TransformerEncoderLayer[E, 1, H, dropout=0.0, norm_first=True, gelu=True]
    param head: nn.Linear[E, V]

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        x = self.wte(idx) + self.wpe(arange(t) as Index[T])
        causal = nn.generate_square_subsequent_mask(t)
        h = self.blk.batch_first_masked(x, causal, zeros([b t] Bool), Eval)
        return self.head(h)

fn loss[M: CharModel](m: M, x: [b t] Index[V], y: [b t] Index[V]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=V)

fn train_step[M: CharModel](mut m: M, mut opt: AdamW[M], x: [b t] Index[V], y: [b t] Index[V]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn generate[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t] Index[V]:
    return argmax(m.forward(idx), over=V)

fn per_example[M: CharModel](m: M, x: [b t] Index[V], y: [b t] Index[V]) -> Grad[M]:
    l, g = value_and_grad(row_loss, m, x, y, batch=b)
    return mean(g, over=b)

fn row_loss[M: CharModel](m: M, x: [t] Index[V], y: [t] Index[V]) -> [] NonNeg:
    return cross_entropy(m(reshape(x, [1 t])), reshape(y, [1 t]), over=V)

fn train[M: CharModel](mut m: M, x: [b t] Index[V], y: [b t] Index[V]) -> [3]:
    opt = AdamW(m, lr=0.05)
    l0 = train_step(m, opt, x, y)
    l1 = train_step(m, opt, x, y)
    l2 = train_step(m, opt, x, y)
    return stack(l0, l1, l2)
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("traits") / "makemore.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 7, (4, 6), generator=g)
    y = torch.randint(0, 7, (4, 6), generator=g)
    return x, y


def _torch_forward(kind: str, p: dict, x: torch.Tensor) -> torch.Tensor:
    """The models in torch (Quiver's nn.Linear keeps its weight as [I O])."""
    if kind == "Bigram":
        return p["table"][x]
    if kind == "Mlp":
        h = torch.tanh(F.embedding(x, p["wte.weight"]) @ p["fc.weight"] + p["fc.bias"])
        return h @ p["head.weight"] + p["head.bias"]
    if kind == "Bow":
        e = F.embedding(x, p["wte.weight"])
        t = x.shape[1]
        att = torch.zeros(t, t).masked_fill(torch.tril(torch.ones(t, t)) == 0, float("-inf")).softmax(-1)
        y = att @ e
        y = y + torch.tanh(y @ p["fc.weight"] + p["fc.bias"]) @ p["proj.weight"] + p["proj.bias"]
        return y @ p["head.weight"] + p["head.bias"]
    if kind == "Gru":
        # torch.nn.GRUCell with the model's weights (torch keeps them [3H I],
        # Quiver's transpose), called functionally so the gradients reach p
        cell = torch.nn.GRUCell(5, 6)
        weights = {
            "weight_ih": p["cell.weight_ih"].t(),
            "weight_hh": p["cell.weight_hh"].t(),
            "bias_ih": p["cell.bias_ih"],
            "bias_hh": p["cell.bias_hh"],
        }
        e = F.embedding(x, p["wte.weight"])
        h = torch.zeros(x.shape[0], 6)
        outs = []
        for i in range(x.shape[1]):
            h = torch.func.functional_call(cell, weights, (e[:, i], h))
            outs.append(h)
        return torch.stack(outs, 1) @ p["head.weight"] + p["head.bias"]
    if kind == "Tfm":
        # torch's layer with the block's weights (every 2-D weight transposed)
        layer = torch.nn.TransformerEncoderLayer(
            5, 1, 6, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"
        )
        weights = {k[4:]: (v.t() if v.dim() == 2 else v) for k, v in p.items() if k.startswith("blk.")}
        t = x.shape[1]
        e = F.embedding(x, p["wte.weight"]) + F.embedding(torch.arange(t), p["wpe.weight"])
        causal = torch.nn.Transformer.generate_square_subsequent_mask(t)
        h = torch.func.functional_call(layer, weights, (e,), {"src_mask": causal, "is_causal": True})
        return h @ p["head.weight"] + p["head.bias"]
    xe = F.embedding(x, p["wte.weight"]) @ p["wx"]
    h = torch.tanh(xe)
    h = torch.tanh(xe + h @ p["wh"])
    return h @ p["head.weight"] + p["head.bias"]


def _torch_losses(kind: str, start: dict, x, y) -> list[float]:
    p = {k: v.detach().clone().requires_grad_(True) for k, v in start.items()}
    opt = torch.optim.AdamW(list(p.values()), lr=0.05)
    out = []
    for _ in range(3):
        opt.zero_grad()
        logits = _torch_forward(kind, p, x)
        loss = F.cross_entropy(logits.reshape(-1, 7), y.reshape(-1))
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


@pytest.mark.parametrize("kind", ["Bigram", "Mlp", "Rnn", "Bow", "Gru", "Tfm"])
def test_one_train_step_for_six_models_equals_torch_adamw(prog, kind) -> None:
    x, y = _data()
    m = getattr(prog, kind).init(seed=0)
    start = {k: v.detach().clone() for k, v in m.state_dict().items()}
    # the loss before any step is the loss of the model's own forward
    want_first = F.cross_entropy(_torch_forward(kind, start, x).reshape(-1, 7), y.reshape(-1)).item()
    assert prog.loss(m, x, y).item() == pytest.approx(want_first, rel=1e-5)
    got = prog.train(m, x, y)
    want = _torch_losses(kind, start, x, y)
    assert got.tolist() == pytest.approx(want, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("kind", ["Bigram", "Mlp", "Rnn", "Bow", "Gru", "Tfm"])
def test_generate_dispatches_to_each_models_forward(prog, kind) -> None:
    x, _ = _data()
    m = getattr(prog, kind).init(seed=1)
    start = {k: v.detach().clone() for k, v in m.state_dict().items()}
    got = prog.generate(m, x)
    assert torch.equal(got, _torch_forward(kind, start, x).argmax(-1))


def test_one_train_step_from_python_with_the_models_own_optimizer(prog) -> None:
    x, y = _data()
    m = prog.Mlp.init(seed=0)
    start = {k: v.detach().clone() for k, v in m.state_dict().items()}
    opt = rt.AdamW(m, lr=0.05)
    got = [prog.train_step(m, opt, x, y).item() for _ in range(3)]
    assert got == pytest.approx(_torch_losses("Mlp", start, x, y), rel=1e-4, abs=1e-6)


def test_two_models_for_one_type_parameter_are_refused_at_the_qv_line(prog) -> None:
    x, y = _data()
    a = prog.Bigram.init(seed=0)
    b = prog.Mlp.init(seed=0)
    opt = rt.AdamW(a, lr=0.05)
    with pytest.raises(rt.CheckError) as err:
        prog.train_step(b, opt, x, y)
    msg = str(err.value)
    assert "train_step(): argument 'opt' expected AdamW[M] (M: CharModel)" in msg
    assert "found AdamW[Bigram], where argument 'm' is a model Mlp" in msg
    line = SRC.splitlines().index(next(x for x in SRC.splitlines() if x.startswith("fn train_step"))) + 1
    assert f"makemore.qv:{line}:" in msg


def test_per_example_gradients_of_a_generic_loss_average_to_the_batch_gradient(prog) -> None:
    x, y = _data()
    m = prog.Mlp.init(seed=2)
    g = prog.per_example(m, x, y)
    p = {k: v.detach().clone().requires_grad_(True) for k, v in m.state_dict().items()}
    rows = [F.cross_entropy(_torch_forward("Mlp", p, x[i : i + 1]).reshape(-1, 7), y[i]) for i in range(4)]
    torch.stack(rows).mean().backward()
    for k, v in p.items():
        got = g
        for part in k.split("."):
            got = getattr(got, part)
        assert torch.allclose(got, v.grad, atol=1e-6), k
