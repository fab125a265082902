"""examples/lstm.qv, vae.qv and gpt.qv train exactly as the same models written by hand in PyTorch.

Each test loads an example with quiver.load, copies the params of a freshly
initialised model into plain torch tensors, and then trains both side by side
for 25 steps of SGD: the compiled train_step on the Quiver model, and the
hand-written forward pass, loss and update below on the copies (the GPT, whose
blocks are a stack of sub-models, trains with AdamW: torch.optim.AdamW on the
copies). The losses and every param must agree at every step.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[1]
STEPS = 25
RTOL = 1e-5
ATOL = 1e-6


def _copy_params(m, names: list[str]) -> dict[str, torch.Tensor]:
    return {n: getattr(m, n).detach().clone().requires_grad_(True) for n in names}


def _assert_close(step: int, what: str, ours: torch.Tensor, hand: torch.Tensor) -> None:
    torch.testing.assert_close(
        ours.detach(), hand.detach(), rtol=RTOL, atol=ATOL, msg=lambda s: f"step {step}, {what}: {s}"
    )


def _sgd(
    params: dict[str, torch.Tensor], grads: tuple[torch.Tensor, ...], lr: float, factor: torch.Tensor | float = 1.0
):
    with torch.no_grad():
        return {n: (p - lr * (g * factor)).requires_grad_(True) for (n, p), g in zip(params.items(), grads)}


# ------------------------------------------------------------------ LSTM


def _lstm_loss(p: dict[str, torch.Tensor], xs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    steps, batch, _ = xs.shape
    hidden = p["wo"].shape[0]
    h = torch.zeros(batch, hidden)
    c = torch.zeros(batch, hidden)
    for t in range(steps):
        z = torch.cat([xs[t], h], dim=-1) @ p["w"] + p["bias"]
        i, f, g, o = z.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return F.cross_entropy(h @ p["wo"] + p["bo"], y)


def test_lstm_trains_as_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "lstm.qv"))
    m = mod.Lstm.init(seed=0)
    names = ["w", "bias", "wo", "bo"]
    assert tuple(m.w.shape) == (8 + 24, 4 * 24)
    p = _copy_params(m, names)
    xs, y = mod.data()
    assert tuple(xs.shape) == (10, 64, 8) and tuple(y.shape) == (64,)
    lr = 1.0
    clipped = 0
    losses = []
    for step in range(STEPS):
        ours = mod.train_step(m, xs, y, lr)
        hand = _lstm_loss(p, xs, y)
        grads = torch.autograd.grad(hand, list(p.values()))
        size = torch.sqrt(torch.stack([(g * g).sum() for g in grads]).sum())
        clipped += bool(size > 0.25)
        p = _sgd(p, grads, lr, 0.25 / size if size > 0.25 else 1.0)
        _assert_close(step, "loss", ours, hand)
        for n in names:
            _assert_close(step, n, getattr(m, n), p[n])
        losses.append(hand.item())
    assert 0 < clipped < STEPS  # both branches of the clipping ran, and agreed
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------ VAE


def _vae_loss(p: dict[str, torch.Tensor], x: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(x @ p["enc"] + p["b_enc"])
    mu, logvar = (h @ p["head"] + p["b_head"]).chunk(2, dim=-1)
    z = mu + torch.exp(0.5 * logvar) * eps
    logits = torch.tanh(z @ p["dec"] + p["b_dec"]) @ p["out"] + p["b_out"]
    recon = F.binary_cross_entropy_with_logits(logits, x) * x.shape[1]
    kl = (-0.5 * (1.0 + logvar - mu * mu - logvar.exp()).sum(dim=-1)).mean()
    return recon + F.relu(kl)


def test_vae_trains_as_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "vae.qv"))
    m = mod.Vae.init(seed=0)
    names = ["enc", "b_enc", "head", "b_head", "dec", "b_dec", "out", "b_out"]
    assert tuple(m.head.shape) == (64, 2 * 4)
    p = _copy_params(m, names)
    x = mod.data()
    assert tuple(x.shape) == (256, 32) and bool(((x >= 0) & (x <= 1)).all())
    lr = 0.05
    losses = []
    for step in range(STEPS):
        ours = mod.train_step(m, x, lr, step)
        # the step's noise, fetched from the compiled program: the same seed gives the same draw
        eps = mod.noise(x, step)
        assert tuple(eps.shape) == (256, 4)
        hand = _vae_loss(p, x, eps)
        grads = torch.autograd.grad(hand, list(p.values()))
        p = _sgd(p, grads, lr)
        _assert_close(step, "loss", ours, hand)
        for n in names:
            _assert_close(step, n, getattr(m, n), p[n])
        losses.append(hand.item())
    # a different step draws different noise
    assert not torch.equal(mod.noise(x, 0), mod.noise(x, 1))
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------ GPT

GPT_CHARS = " ,.:abcdehiklmnorstuwxy"  # the id -> character table of examples/gpt.qv


def _gpt_names() -> list[str]:
    block = ["ln_a_gain", "ln_a_bias", "wq", "wk", "wv", "wo", "ln_m_gain", "ln_m_bias", "fc", "fc_bias", "proj"]
    block.append("proj_bias")
    return ["tok", "pos", *(f"blocks.{i}.{n}" for i in range(2) for n in block), "ln_f_gain", "ln_f_bias"] + [
        "head",
        "head_bias",
    ]


def _gpt_logits(p: dict[str, torch.Tensor], tokens: torch.Tensor, heads: int) -> torch.Tensor:
    batch, steps = tokens.shape
    width = p["tok"].shape[1]
    size = width // heads
    causal = torch.tril(torch.ones(steps, steps, dtype=torch.bool))
    x = F.embedding(tokens, p["tok"]) + p["pos"][:steps]
    for i in range(2):
        k = f"blocks.{i}."
        h = F.layer_norm(x, (width,), p[k + "ln_a_gain"], p[k + "ln_a_bias"])
        q, key, v = ((h @ p[k + w]).view(batch, steps, heads, size).transpose(1, 2) for w in ("wq", "wk", "wv"))
        scores = (q @ key.transpose(-2, -1)) * (1.0 / size**0.5)
        att = torch.softmax(scores.masked_fill(~causal, -1e9), dim=-1) @ v
        x = x + att.transpose(1, 2).reshape(batch, steps, width) @ p[k + "wo"]
        h = F.layer_norm(x, (width,), p[k + "ln_m_gain"], p[k + "ln_m_bias"])
        x = x + F.gelu(h @ p[k + "fc"] + p[k + "fc_bias"]) @ p[k + "proj"] + p[k + "proj_bias"]
    x = F.layer_norm(x, (width,), p["ln_f_gain"], p["ln_f_bias"])
    return x @ p["head"] + p["head_bias"]


def test_gpt_trains_as_hand_written_torch() -> None:
    """Blocks are a stack of sub-models (param blocks: [L] Block), trained with
    AdamW: the same as torch.optim.AdamW on the hand-written transformer."""
    mod = quiver.load(str(ROOT / "examples" / "gpt.qv"))
    # the shipped text reads as its comment says
    text = "".join(GPT_CHARS[i] for i in mod.text().tolist())
    assert len(text) == 290 and text.startswith("a small model reads a small text.")
    m = mod.Gpt.init(seed=0)
    names = _gpt_names()
    state = m.state_dict()
    assert list(state) == names
    assert tuple(m.tok.shape) == (23, 32) and tuple(m.blocks[1].fc.shape) == (32, 4 * 32)
    assert not torch.equal(m.blocks[0].wq, m.blocks[1].wq)  # each block initialised on its own
    p = {n: state[n].clone().requires_grad_(True) for n in names}
    opt = rt.AdamW(m, lr=0.003, weight_decay=0.01)
    ref = torch.optim.AdamW(list(p.values()), lr=0.003, weight_decay=0.01)
    losses = []
    for step in range(STEPS):
        tokens, nxt = mod.batch(step)
        # a small batch: the first 8 of the step's windows, and their next characters
        tokens, nxt = tokens[:8], nxt[:8]
        assert tuple(tokens.shape) == (8, 16) and torch.equal(tokens[:, 1:], nxt[:, :-1])
        ours = mod.train_step(m, opt, tokens, nxt)
        ref.zero_grad()
        hand = F.cross_entropy(_gpt_logits(p, tokens, heads=4).reshape(-1, 23), nxt.reshape(-1))
        hand.backward()
        ref.step()
        _assert_close(step, "loss", ours, hand)
        now = m.state_dict()
        for n in names:
            _assert_close(step, n, now[n], p[n])
        losses.append(hand.item())
    assert losses[-1] < losses[0] - 0.5
