"""An option named like a built-in (torch's `dropout=` argument of its
attention and transformer layers) is a value in the model's methods, and a
call of that name still calls the built-in: `dropout(x, dropout, mode)`."""

from __future__ import annotations

import textwrap

import torch
from annotations import spanned

import quiver

SRC = """
model Drop[I, dropout: Float = 0.5]:
    param w: [I] = ones

    fn forward(self, x: [n I], mode: Mode) -> [n I]:
        return dropout(x, dropout, mode) * self.w

    fn rate(self) -> Float:
        return dropout
"""


def test_the_option_is_a_value_and_the_call_is_the_built_ins() -> None:
    assert spanned(SRC) == []


def test_a_bool_option_is_still_not_callable() -> None:
    src = "model M[I, relu: Bool = True]:\n    param w: [I] = ones\n\n    fn f(self) -> Bool:\n        return relu\n"
    assert spanned(src) == []


def test_it_runs(tmp_path) -> None:
    path = tmp_path / "drop.qv"
    main = "\ndim D = 4\n\nfn make() -> Drop[D]:\n    return Drop[D].init(seed=0)\n"
    main += "\nfn run(m: Drop[D], x: [n D], mode: Mode) -> [n D]:\n    return m(x, mode)\n"
    path.write_text(textwrap.dedent(SRC) + main, encoding="utf-8")
    mod = quiver.load(str(path))
    m = mod.make()
    x = torch.ones(500, 4)
    y = mod.run(m, x, quiver.runtime.Train(seed=0))
    assert set(y.unique().tolist()) == {0.0, 2.0}  # dropped with p = 0.5, the rest scaled by 2
    assert torch.equal(mod.run(m, x, quiver.runtime.Eval), x)
    assert m.rate() == 0.5
