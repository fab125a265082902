"""A model passes its own Bool and Float options on to its sub-models, as it
does its DType option (`dtype=dtype`): `param linear1: Linear[E, F,
bias=bias]`, `param self_attn: Attention[E, dropout=dropout]`, as a torch
module hands its constructor's arguments to the modules it builds. The
sub-model of an instance has the instance's value (so its members follow
it), checked and compiled. And an option named like a built-in (torch's
`dropout=` argument) does not hide the built-in from a call: `dropout(x,
dropout, mode)`."""

from __future__ import annotations

import textwrap

import pytest
import torch
from annotations import spanned

import quiver

LAYERS = """
model Inner[I, bias: Bool = True, eps: Float = 1e-5]:
    param w: [I I] = ones
    param b: [I] = zeros if bias

    fn forward(self, x: [n I]) -> [n I]:
        y = x @ self.w + eps
        if bias:
            y = y + self.b
        return y

model Outer[I, bias: Bool = True, eps: Float = 0.25, dropout: Float = 0.0]:
    param inner: Inner[I, bias=bias, eps=eps]
    param plain: Inner[I, bias=False, eps=eps]

    fn forward(self, x: [n I], mode: Mode) -> [n I]:
        y = self.inner(dropout(x, dropout, mode))
        if bias:
            y = y + self.inner.b
        return self.plain(y)
"""


def test_options_passed_on_check_clean() -> None:
    assert spanned(LAYERS) == []


def test_the_sub_model_of_an_instance_has_its_options() -> None:
    src = LAYERS + textwrap.dedent("""
    dim D = 3

    fn with_bias(m: Outer[D]) -> [D]:
        return m.inner.b

    fn without(m: Outer[D, bias=False]) -> [D]:
        return m.inner.b

    fn same_type(m: Outer[D, bias=False, eps=1e-5]) -> Inner[D, bias=False]:
        return m.inner
    """)
    assert spanned(src) == [
        ("E0914", "Inner[D, bias=False, eps=0.25] has no field 'b': it exists only when bias=True", "b")
    ]


def test_an_option_passed_on_is_of_the_sub_models_kind() -> None:
    src = "model Inner[I, bias: Bool = True]:\n    param w: [I] = ones\n\nmodel Outer[I, eps: Float = 0.5]:\n"
    src += "    param inner: Inner[I, bias=eps]\n"
    assert spanned(src) == [("E0911", "Inner takes True or False for its option bias", "bias=eps")]


def test_a_sub_models_member_is_read_under_the_option_it_follows() -> None:
    src = LAYERS.replace("        if bias:\n            y = y + self.inner.b\n", "        y = y + self.inner.b\n")
    assert [(code, text) for code, _, text in spanned(src)] == [("E0914", "b")]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("pass_on") / "layers.qv"
    main = """
    dim D = 3

    fn make() -> Outer[D]:
        return Outer[D].init(seed=0)

    fn make_plain() -> Outer[D, bias=False, eps=2.0]:
        return Outer[D, bias=False, eps=2.0].init(seed=0)

    fn make_dropped() -> Outer[D, dropout=0.5]:
        return Outer[D, dropout=0.5].init(seed=0)

    fn run(m: Outer[D], x: [n D], mode: Mode) -> [n D]:
        return m(x, mode)

    fn run_plain(m: Outer[D, bias=False, eps=2.0], x: [n D]) -> [n D]:
        return m(x, Eval)

    fn run_dropped(m: Outer[D, dropout=0.5], x: [n D], mode: Mode) -> [n D]:
        return m(x, mode)
    """
    path.write_text(textwrap.dedent(LAYERS) + textwrap.dedent(main), encoding="utf-8")
    return quiver.load(str(path))


def test_instances_are_built_and_run_with_the_options_passed_on(mod) -> None:
    m, p = mod.make(), mod.make_plain()
    assert set(m.state_dict()) == {"inner.w", "inner.b", "plain.w"}
    assert set(p.state_dict()) == {"inner.w", "plain.w"}
    x = torch.randn(2, 3)
    with torch.no_grad():
        m.inner.b.copy_(torch.tensor([1.0, 2.0, 3.0]))
    ones = torch.ones(3, 3)
    inner = x @ ones + 0.25 + m.inner.b
    torch.testing.assert_close(mod.run(m, x, quiver.runtime.Eval), (inner + m.inner.b) @ ones + 0.25)
    torch.testing.assert_close(mod.run_plain(p, x), (x @ ones + 2.0) @ ones + 2.0)


def test_the_built_in_is_called_beside_an_option_of_its_name(mod) -> None:
    m = mod.make_dropped()
    x = torch.ones(200, 3)
    dropped = mod.run_dropped(m, x, quiver.runtime.Train(seed=0))
    kept = mod.run_dropped(m, x, quiver.runtime.Eval)
    assert not torch.equal(dropped, kept)  # dropout(x, 0.5, Train) changed the input
    torch.testing.assert_close(kept, mod.run(mod.make(), x, quiver.runtime.Eval))
