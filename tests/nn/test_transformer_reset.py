"""nn.Transformer starts as torch's does: torch.nn.Transformer.__init__ ends
with _reset_parameters(), xavier_uniform_ on every param of more than one dim,
and nn.Transformer's `fn reset_parameters(mut self, seed: Int)` is that walk,
which `init` runs (docs/nn.md, Transformer; docs/language.md, "A model's
reset_parameters"). Also: a program's own model's reset_parameters, run by
init after the fields are drawn, inner sub-models first, each with its own
seed from the init's generator; nothing runs it on `load`."""

from __future__ import annotations

import math

import pytest
import torch
from parity import load

SOURCE = """
import nn

dim E = 64
dim NH = 4
dim F = 128

model Wrap:
    param before: [8] = normal(0.0, 1.0)
    param transformer: nn.Transformer[E, NH, 1, 2, F]
    param after: [8] = normal(0.0, 1.0)

fn make(seed: Int) -> nn.Transformer[E, NH, 1, 2, F]:
    return nn.Transformer[E, NH, 1, 2, F].init(seed=seed)

fn make_encoder(seed: Int) -> nn.TransformerEncoder[E, NH, 1, F, norm=True]:
    return nn.TransformerEncoder[E, NH, 1, F, norm=True].init(seed=seed)

fn make_wrap(seed: Int) -> Wrap:
    return Wrap.init(seed=seed)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return load(SOURCE, tmp_path_factory.mktemp("reset"))


def _xavier(p: torch.Tensor, what: str) -> None:
    """p is a draw of xavier_uniform_: within its bound, with its std (a
    uniform's, bound / sqrt(3)) to 10%."""
    bound = math.sqrt(6.0 / sum(p.shape))  # fan_in + fan_out, whichever way the matrix is kept
    assert float(p.abs().max()) <= bound, what
    assert abs(float(p.std()) / (bound / math.sqrt(3.0)) - 1.0) < 0.1, (what, float(p.std()), bound)


def test_every_matrix_is_redrawn_with_xavier_uniform(mod) -> None:
    m = mod.make(0)
    matrices = {k: v for k, v in m.state_dict().items() if v.dim() > 1}
    # the attention's in_proj and out_proj, linear1 and linear2 of every layer
    assert len(matrices) == 4 * 1 + 6 * 2
    for k, v in matrices.items():
        _xavier(v, k)
    # linear1 (64 -> 128) would be nn.Linear's U(-1/8, 1/8) (std 0.072) without
    # the redraw; xavier's bound is sqrt(6/192) = 0.177
    assert float(m.encoder.layers[0].linear1.weight.abs().max()) > 1 / 8


def test_what_has_one_dim_keeps_its_layers_start(mod) -> None:
    # the encoder is drawn first, from the same generator: an encoder alone
    # with the same seed starts as the transformer's did before the redraw
    m, enc = mod.make(3), mod.make_encoder(3)
    ours, alone = m.encoder.state_dict(), enc.state_dict()
    assert list(ours) == list(alone)
    for k, v in alone.items():
        if v.dim() > 1:
            assert not torch.equal(ours[k], v), k
        else:  # biases (linear's drawn, attention's zeros) and norm weights (ones)
            assert torch.equal(ours[k], v), k
    assert torch.equal(m.encoder.norm.weight, torch.ones(64)) and torch.equal(m.decoder.norm.bias, torch.zeros(64))


def test_the_redraw_is_deterministic_in_the_seed(mod) -> None:
    a, b, c = mod.make(5), mod.make(5), mod.make(6)
    for k, v in a.state_dict().items():
        assert torch.equal(v, b.state_dict()[k]), k
    assert not torch.equal(a.decoder.layers[1].linear2.weight, c.decoder.layers[1].linear2.weight)
    # the two decoder layers are redrawn differently
    assert not torch.equal(a.decoder.layers[0].linear1.weight, a.decoder.layers[1].linear1.weight)


def test_a_transformer_inside_a_model_is_redrawn_too(mod) -> None:
    w = mod.make_wrap(0)
    for k, v in w.transformer.state_dict().items():
        if v.dim() > 1:
            _xavier(v, k)
    # the fields around it are drawn by init's generator as before
    assert not torch.equal(w.before, w.after)


def test_a_loaded_model_is_not_redrawn(mod, tmp_path) -> None:
    m = mod.make(1)
    m.save(str(tmp_path / "t.pt"))
    back = type(m).load(str(tmp_path / "t.pt"))
    for k, v in m.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k


OWN = """
model Inner:
    param w: [3 4] = zeros
    param b: [4] = zeros

    fn reset_parameters(mut self, seed: Int):
        for name, p in named_params(self, seed=seed):
            if ndim(p) > 1:
                p.init(uniform(-1.0, 1.0))
            else:
                p.init(1.0)

model Outer:
    param first: Inner
    param blocks: [2] Inner
    param v: [5] = zeros

    fn reset_parameters(mut self, seed: Int):
        for name, p in named_params(self, seed=seed):
            if name == "first.b":
                p.init(2.0)

fn make(seed: Int) -> Outer:
    return Outer.init(seed=seed)
"""


def test_a_programs_own_reset_parameters_runs_inner_ones_first(tmp_path) -> None:
    m = load(OWN, tmp_path).make(0)
    # Inner's ran on each of the three, then Outer's, which set first.b last
    assert torch.equal(m.first.b, torch.full((4,), 2.0))
    assert torch.equal(m.blocks[0].b, torch.ones(4)) and torch.equal(m.blocks[1].b, torch.ones(4))
    ws = [m.first.w, m.blocks[0].w, m.blocks[1].w]
    assert all(bool((w.abs() <= 1).all()) and bool((w != 0).all()) for w in ws)
    # each its own seed: three different draws
    assert not torch.equal(ws[0], ws[1]) and not torch.equal(ws[1], ws[2])
    assert torch.equal(m.v, torch.zeros(5))
