"""examples/translator.qv trains exactly as the same Transformer built from torch.nn modules.

The twin: nn.Embedding for the source and the target, the positional encoding
of torch's transformer tutorial, nn.Transformer (time first, torch's default
layout; the causal tgt_mask of generate_square_subsequent_mask and the key
padding masks as Bool masks), an output nn.Linear, and
F.cross_entropy with ignore_index=0 for the padding. The example's freshly
initialised params are copied in (the same state_dict names; every 2-D weight
but the embedding tables transposed, as Quiver keeps them the way
`x @ weight` reads them), and both train side by side on the example's
batches with Adam: the compiled train_step under Eval (dropout off) and the
twin in eval() with torch.optim.Adam. The losses and every param agree after
every step; then the greedy translation of a new batch is the same.

The layers have no biases (bias=False, on both sides). With torch's default
biases, the key projection's bias gets no gradient in exact arithmetic (it
adds the same score to every key of a query, which softmax ignores): what
either side computes for it is f32 rounding noise, ~1e-9, which Adam's first
step divides by its own size and turns into a step of about lr, a different
one on each side.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[1]
STEPS = 10
LR = 0.01
RTOL = 1e-5
ATOL = 1e-6
V, S, T, E, NH, FF, L = 12, 8, 9, 16, 2, 32, 1
KEPT = ("src_tok.weight", "tgt_tok.weight")  # embedding tables: torch's layout too


def positional_encoding(length: int, width: int) -> torch.Tensor:
    """torch's tutorial PositionalEncoding: [length 1 width]."""
    position = torch.arange(length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, width, 2) * (-math.log(10000.0) / width))
    pe = torch.zeros(length, 1, width)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    return pe


class Translator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.src_tok = nn.Embedding(V, E)
        self.tgt_tok = nn.Embedding(V, E)
        with warnings.catch_warnings():  # that its encoder cannot use nested tensors
            warnings.simplefilter("ignore", UserWarning)
            self.transformer = nn.Transformer(E, NH, L, L, FF, bias=False)
        self.out = nn.Linear(E, V)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        src_pad = (src == 0).T
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[0]) == -math.inf  # True: not allowed
        x = self.src_tok(src) + positional_encoding(src.shape[0], E)
        y = self.tgt_tok(tgt) + positional_encoding(tgt.shape[0], E)
        masks = {"tgt_mask": causal, "tgt_key_padding_mask": (tgt == 0).T}
        h = self.transformer(x, y, src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad, **masks)
        return self.out(h)


def _layout(name: str, value: torch.Tensor) -> torch.Tensor:
    return value.t() if value.dim() == 2 and name not in KEPT else value


def _close(step: int, what: str, ours: torch.Tensor, theirs: torch.Tensor) -> None:
    torch.testing.assert_close(
        ours.detach(), theirs.detach(), rtol=RTOL, atol=ATOL, msg=lambda s: f"step {step}, {what}: {s}"
    )


def test_the_batches_are_reversals_with_padding() -> None:
    mod = quiver.load(str(ROOT / "examples" / "translator.qv"))
    src, tgt_in, tgt_out = mod.batch(3)
    assert tuple(src.shape) == (S, 32) and tuple(tgt_in.shape) == (T, 32) and tuple(tgt_out.shape) == (T, 32)
    for j in range(32):
        symbols = [int(v) for v in src[:, j] if v != 0]
        assert 3 <= len(symbols) <= S and all(v >= 3 for v in symbols)
        assert [int(v) for v in src[: S - len(symbols), j]] == [0] * (S - len(symbols))  # padded at the front
        want = symbols[::-1] + [2] + [0] * (T - 1 - len(symbols))
        assert [int(v) for v in tgt_out[:, j]] == want
        assert [int(v) for v in tgt_in[:, j]] == [1] + want[:-1]


def test_the_translator_trains_as_torch_nn_transformer() -> None:
    mod = quiver.load(str(ROOT / "examples" / "translator.qv"))
    m = mod.Translator.init(seed=0)
    state = m.state_dict()
    twin = Translator()
    assert list(state) == list(twin.state_dict())
    with torch.no_grad():
        for name, p in twin.named_parameters():
            p.copy_(_layout(name, state[name]))
    twin.eval()  # dropout off, as the Quiver model under Eval
    opt = rt.Adam(m, lr=LR)
    ref = torch.optim.Adam(twin.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        src, tgt_in, tgt_out = mod.batch(step)
        ours = mod.train_step(m, opt, src, tgt_in, tgt_out, rt.Eval)
        ref.zero_grad()
        logits = twin(src, tgt_in)
        theirs = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=0)
        theirs.backward()
        ref.step()
        _close(step, "loss", ours, theirs)
        now = m.state_dict()
        for name, p in twin.named_parameters():
            _close(step, name, _layout(name, now[name]), p)
        losses.append(theirs.item())
    assert losses[-1] < losses[0]
    # the same logits on a new batch, and the same greedy translation
    src, tgt_in, _ = mod.batch(10000)
    with torch.no_grad():
        _close(STEPS, "logits", m(src, tgt_in, rt.Eval), twin(src, tgt_in))
        assert torch.equal(mod.translate(m, src), _greedy(twin, src))


def _greedy(twin: Translator, src: torch.Tensor) -> torch.Tensor:
    tgt = torch.zeros(T, src.shape[1], dtype=torch.long)
    tgt[0] = 1
    for t in range(T - 1):
        tgt[t + 1] = twin(src, tgt)[t].argmax(-1)
    return torch.cat([tgt[1:], torch.full((1, src.shape[1]), 2)])
