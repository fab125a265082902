"""examples/lstm.qv, vae.qv and gpt.qv train exactly as the same models built from torch.nn modules.

Each example takes its layers from Quiver's nn library (nn.LSTM, nn.Linear,
nn.Embedding, nn.LayerNorm, nn.MultiheadAttention). Each test loads an
example with quiver.load, copies the params of a freshly initialised model
into a twin made of the torch.nn modules those layers stand for (with the
same state_dict names; 2-D weights transposed, as Quiver keeps them the way
`x @ weight` reads them), and then trains both side by side for 25 steps: the
compiled train_step on the Quiver model, and the twin's forward pass, loss
and update (SGD by hand for the LSTM, with its gradient clipping, and the
VAE; torch.optim.AdamW for the GPT). The losses and every param must agree
at every step.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[1]
STEPS = 25
RTOL = 1e-5
ATOL = 1e-6


def _assert_close(step: int, what: str, ours: torch.Tensor, hand: torch.Tensor) -> None:
    torch.testing.assert_close(
        ours.detach(), hand.detach(), rtol=RTOL, atol=ATOL, msg=lambda s: f"step {step}, {what}: {s}"
    )


def _torch_layout(name: str, value: torch.Tensor, kept: tuple[str, ...] = ()) -> torch.Tensor:
    """A Quiver param in torch's layout: every 2-D weight transposed, but those
    whose name ends as one of `kept` (an embedding's table is laid out alike)."""
    if value.dim() == 2 and not name.endswith(kept):
        return value.t()
    return value


def _copy_in(twin: nn.Module, state: dict[str, torch.Tensor], names: dict[str, str], kept: tuple[str, ...] = ()):
    """Copy every Quiver param (`names`: Quiver name -> the twin's) into the twin, which has no other params."""
    theirs = dict(twin.named_parameters())
    assert sorted(theirs) == sorted(names.values()), sorted(theirs)
    with torch.no_grad():
        for ours, name in names.items():
            value = _torch_layout(ours, state[ours], kept)
            assert value.shape == theirs[name].shape, (ours, tuple(value.shape), tuple(theirs[name].shape))
            theirs[name].copy_(value)
    return theirs


def _compare(step: int, m, theirs: dict[str, torch.Tensor], names: dict[str, str], kept: tuple[str, ...] = ()):
    now = m.state_dict()
    for ours, name in names.items():
        _assert_close(step, ours, _torch_layout(ours, now[ours], kept), theirs[name])


def _sgd(params: dict[str, torch.Tensor], lr: float, factor: torch.Tensor | float = 1.0) -> None:
    with torch.no_grad():
        for p in params.values():
            assert p.grad is not None
            p -= lr * (p.grad * factor)
            p.grad = None


# ------------------------------------------------------------------ LSTM

LSTM_NAMES = {
    "lstm.first.weight_ih": "lstm.weight_ih_l0",
    "lstm.first.weight_hh": "lstm.weight_hh_l0",
    "lstm.first.bias_ih": "lstm.bias_ih_l0",
    "lstm.first.bias_hh": "lstm.bias_hh_l0",
    "head.weight": "head.weight",
    "head.bias": "head.bias",
}


class _Lstm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 24)
        self.head = nn.Linear(24, 4)

    def forward(self, xs: torch.Tensor) -> torch.Tensor:
        _, (h_n, _) = self.lstm(xs)
        return self.head(h_n[0])


def test_lstm_trains_as_torch_nn_lstm() -> None:
    mod = quiver.load(str(ROOT / "examples" / "lstm.qv"))
    m = mod.Classifier.init(seed=0)
    assert tuple(m.lstm.first.weight_ih.shape) == (8, 4 * 24)
    twin = _Lstm()
    theirs = _copy_in(twin, m.state_dict(), LSTM_NAMES)
    xs, y = mod.data()
    assert tuple(xs.shape) == (10, 64, 8) and tuple(y.shape) == (64,)
    lr = 1.0
    clipped = 0
    losses = []
    for step in range(STEPS):
        ours = mod.train_step(m, xs, y, lr)
        hand = F.cross_entropy(twin(xs), y)
        hand.backward()
        size = torch.sqrt(sum((p.grad * p.grad).sum() for p in theirs.values()))  # type: ignore[operator]
        clipped += bool(size > 0.25)
        _sgd(theirs, lr, 0.25 / size if size > 0.25 else 1.0)
        _assert_close(step, "loss", ours, hand)
        _compare(step, m, theirs, LSTM_NAMES)
        losses.append(hand.item())
    assert 0 < clipped < STEPS  # both branches of the clipping ran, and agreed
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------ VAE

VAE_LAYERS = ("enc", "head", "dec", "out")
VAE_NAMES = {f"{layer}.{p}": f"{layer}.{p}" for layer in VAE_LAYERS for p in ("weight", "bias")}


class _Vae(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(32, 64)
        self.head = nn.Linear(64, 2 * 4)
        self.dec = nn.Linear(4, 64)
        self.out = nn.Linear(64, 32)

    def forward(self, x: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        mu, logvar = self.head(torch.tanh(self.enc(x))).chunk(2, dim=-1)
        z = mu + torch.exp(0.5 * logvar) * eps
        recon = F.binary_cross_entropy_with_logits(self.out(torch.tanh(self.dec(z))), x) * x.shape[1]
        kl = (-0.5 * (1.0 + logvar - mu * mu - logvar.exp()).sum(dim=-1)).mean()
        return recon + F.relu(kl)


def test_vae_trains_as_torch_nn_linear_layers() -> None:
    mod = quiver.load(str(ROOT / "examples" / "vae.qv"))
    m = mod.Vae.init(seed=0)
    assert tuple(m.head.weight.shape) == (64, 2 * 4)
    twin = _Vae()
    theirs = _copy_in(twin, m.state_dict(), VAE_NAMES)
    x = mod.data()
    assert tuple(x.shape) == (256, 32) and bool(((x >= 0) & (x <= 1)).all())
    lr = 0.05
    losses = []
    for step in range(STEPS):
        ours = mod.train_step(m, x, lr, step)
        # the step's noise, fetched from the compiled program: the same seed gives the same draw
        eps = mod.noise(x, step)
        assert tuple(eps.shape) == (256, 4)
        hand = twin(x, eps)
        hand.backward()
        _sgd(theirs, lr)
        _assert_close(step, "loss", ours, hand)
        _compare(step, m, theirs, VAE_NAMES)
        losses.append(hand.item())
    # a different step draws different noise
    assert not torch.equal(mod.noise(x, 0), mod.noise(x, 1))
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------ GPT

GPT_KEPT = ("tok.weight", "pos.weight")  # embedding tables: torch's layout too


class _Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, bias=False, batch_first=True)
        self.ln_2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor, causal: torch.Tensor) -> torch.Tensor:
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.proj(F.gelu(self.fc(self.ln_2(x))))


class _Gpt(nn.Module):
    def __init__(self, vocab: int = 64, steps: int = 32, width: int = 64, heads: int = 4, blocks: int = 2) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(steps, width)
        self.blocks = nn.ModuleList(_Block(width, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        steps = tokens.shape[1]
        causal = torch.triu(torch.ones(steps, steps, dtype=torch.bool), diagonal=1)
        x = self.tok(tokens) + self.pos(torch.arange(steps))
        for block in self.blocks:
            x = block(x, causal)
        return self.head(self.ln_f(x))


def gpt_text(mod) -> tuple[torch.Tensor, rt.Vocab]:
    """examples/data/tiny.txt as examples/gpt.qv reads it: its character ids and vocabulary."""
    return rt.load_chars(str(ROOT / "examples" / "data" / "tiny.txt"), rt.TensorArg("text", ("n",), rt.index(mod.V)))


def test_gpt_trains_as_torch_nn_modules() -> None:
    """Blocks are a stack of sub-models (param blocks: [L] Block), trained with
    AdamW: the same as torch.optim.AdamW on the torch.nn transformer."""
    mod = quiver.load(str(ROOT / "examples" / "gpt.qv"))
    # the text the example reads: data/tiny.txt as character ids
    text, vocab = gpt_text(mod)
    assert tuple(text.shape) == (9785,) and len(vocab) == 56
    assert vocab.decode(text[:15]) == "First Citizen:\n"
    m = mod.Gpt.init(seed=0)
    state = m.state_dict()
    twin = _Gpt()
    # the same state_dict names as the torch twin's
    names = {n: n for n in twin.state_dict()}
    assert list(state) == list(names)
    assert tuple(m.tok.weight.shape) == (64, 64) and tuple(m.blocks[1].fc.weight.shape) == (64, 4 * 64)
    assert not torch.equal(m.blocks[0].attn.in_proj_weight, m.blocks[1].attn.in_proj_weight)  # each block on its own
    theirs = _copy_in(twin, state, names, GPT_KEPT)
    # The example's AdamW, but with eps=1e-6 on both sides (the example: torch's 1e-8). Adam's first
    # step is lr * g / (|g| + eps): a gradient entry far below eps moves by about lr * g / eps, one near
    # eps by a fraction of lr that its f32 rounding decides. Some key-projection gradients here are
    # ~3e-9, and torch's attention rounds them differently from Quiver's (both are right to f32's
    # precision); eps=1e-6 keeps such entries in the proportional regime, where the two agree to rtol.
    opt = rt.AdamW(m, lr=0.003, weight_decay=0.01, eps=1e-6)
    ref = torch.optim.AdamW(twin.parameters(), lr=0.003, weight_decay=0.01, eps=1e-6)
    losses = []
    for step in range(STEPS):
        tokens, nxt = mod.batch(text, step)
        # a small batch: the first 8 of the step's windows, and their next characters
        tokens, nxt = tokens[:8], nxt[:8]
        assert tuple(tokens.shape) == (8, 32) and torch.equal(tokens[:, 1:], nxt[:, :-1])
        ours = mod.train_step(m, opt, tokens, nxt)
        ref.zero_grad()
        hand = F.cross_entropy(twin(tokens).reshape(-1, 64), nxt.reshape(-1))
        hand.backward()
        ref.step()
        _assert_close(step, "loss", ours, hand)
        _compare(step, m, theirs, names, GPT_KEPT)
        losses.append(hand.item())
    assert losses[-1] < losses[0] - 0.5
