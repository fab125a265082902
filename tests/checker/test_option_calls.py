"""A model's option never hides a function of its name: an option is a
number (or an element type) and is never called, so in a method of a model
with torch's option `dropout: Float = 0.0`, `dropout(y, dropout, mode)` calls
the built-in with the option's value (nn.LSTM needs exactly this)."""

from __future__ import annotations

import torch
from annotations import spanned

import quiver
from quiver import runtime as rt

SRC = """\
dim E = 4

fn scaled(x: [b E], eps: Float) -> [b E]:
    return x * eps

model Drop[D, dropout: Float = 0.5, eps: Float = 2.0]:
    param w: [D] = ones

    fn forward(self, x: [b D], mode: Mode) -> [b D]:
        return dropout(x * self.w, dropout, mode)

    fn scale(self, x: [b E]) -> [b E]:
        return scaled(x, eps) + eps

fn apply(m: Drop[E], x: [b E], mode: Mode) -> [b E]:
    return m(x, mode)

fn scale(m: Drop[E, eps=3.0], x: [b E]) -> [b E]:
    return m.scale(x)
"""


def test_an_option_does_not_hide_a_built_in_or_a_function_of_its_name() -> None:
    assert spanned(SRC) == []


def test_an_option_used_as_a_value_is_still_a_number() -> None:
    bad = (
        SRC
        + "\nmodel Other[eps: Float = 1.0]:\n    param w: [E] = ones\n\n    fn f(self) -> []:\n        return eps(self.w)\n"
    )
    assert [c for c, *_ in spanned(bad)] == ["E0409"]


def test_the_call_runs_the_built_in_with_the_options_value(tmp_path) -> None:
    path = tmp_path / "drop.qv"
    path.write_text(SRC, encoding="utf-8")
    mod = quiver.load(str(path))
    m = mod.Drop.of(4).init(seed=0)
    x = torch.ones(2000, 4)
    assert torch.equal(mod.apply(m, x, rt.Eval), x)
    y = mod.apply(m, x, rt.Train(seed=1))
    kept = y != 0
    assert torch.equal(y[kept], torch.full_like(y[kept], 2.0))  # scaled by 1 / (1 - 0.5)
    assert 0.45 < kept.double().mean().item() < 0.55
    m3 = mod.Drop.of(4, eps=3.0).init(seed=0)
    assert torch.equal(mod.scale(m3, x[:2]), torch.full((2, 4), 6.0))
