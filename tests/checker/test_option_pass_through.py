"""A sub-model given the enclosing model's own Bool or Float option, as
`dtype=dtype` passes a DType on: `param first: LSTMCell[I, H, bias=bias]` in
`model LSTM[I, H, bias: Bool = True]`. Each instance of the enclosing model
puts its value in (its sub-model has the bias members or not, is of the plain
type when the value is the sub-model's default), and the compiled factory
and methods pass the instance's value on."""

from __future__ import annotations

import torch
from annotations import spanned

import quiver

SRC = """\
dim E = 4

model Lin[I, O, bias: Bool = True, scale: Float = 1.0]:
    param w: [I O] = ones
    param b: [O] = ones if bias

    fn forward(self, x: [n I]) -> [n O]:
        y = x @ self.w * scale
        if bias:
            y = y + self.b
        return y

model Pair[D, bias: Bool = True, scale: Float = 2.0]:
    param inner: Lin[D, D, bias=bias, scale=scale]
    param blocks: [2] Lin[D, D, bias=bias]

    fn forward(self, x: [n D]) -> [n D]:
        y = self.inner(x)
        for blk in self.blocks:
            y = blk(y)
        return y

fn apply(p: Pair[E], x: [n E]) -> [n E]:
    return p(x)

fn apply_plain(p: Pair[E, bias=False, scale=1.0], x: [n E]) -> [n E]:
    return p(x)

fn inner(p: Pair[E]) -> Lin[E, E, scale=2.0]:
    return p.inner

fn inner_plain(p: Pair[E, bias=False, scale=1.0]) -> Lin[E, E, bias=False]:
    return p.blocks[0]

fn grads(p: Pair[E, bias=False], x: [n E]) -> Grad[Pair[E, bias=False]]:
    return grad(loss, p, x)

fn loss(p: Pair[E, bias=False], x: [n E]) -> []:
    return sum(p(x))
"""


def test_the_options_pass_on_to_the_sub_models() -> None:
    assert spanned(SRC) == []


def test_an_instance_has_the_sub_models_of_its_value() -> None:
    wrong = (
        SRC
        + "\nfn wrong(p: Pair[E, bias=False]) -> Lin[E, E, scale=2.0]:\n    return p.inner\n"
        + "\nfn missing(p: Pair[E, bias=False]) -> [E]:\n    return p.inner.b\n"
    )
    got = spanned(wrong)
    assert [c for c, *_ in got] == ["E0904", "E0914"]
    assert "found model Lin[E, E, bias=False, scale=2.0]" in got[0][1]


def test_only_an_option_of_the_same_kind_in_a_member_type() -> None:
    bad = (
        "model Lin[I, bias: Bool = True, scale: Float = 1.0]:\n    param w: [I] = ones\n\n"
        "model Outer[D, bias: Bool = True, eps: Float = 1e-5]:\n"
        "    param a: Lin[D, bias=eps]\n"
        "    param b: Lin[D, scale=bias]\n"
        "    param c: Lin[D, bias=nope]\n\n"
        "    fn f(self, l: Lin[D, bias=bias]) -> [D]:\n        return l.w\n"
    )
    got = spanned(bad)
    assert [(c, text) for c, _, text in got] == [
        ("E0911", "bias=eps"),
        ("E0911", "scale=bias"),
        ("E0911", "bias=nope"),
        ("E0911", "bias=bias"),  # a method's types do not take the instance's options
    ]


def test_the_compiled_model_passes_the_instances_value_on(tmp_path) -> None:
    path = tmp_path / "pair.qv"
    path.write_text(SRC, encoding="utf-8")
    mod = quiver.load(str(path))
    with_bias = mod.Pair.of(4).init(seed=0)
    assert sorted(with_bias.state_dict()) == [
        "blocks.0.b",
        "blocks.0.w",
        "blocks.1.b",
        "blocks.1.w",
        "inner.b",
        "inner.w",
    ]
    plain = mod.Pair.of(4, bias=False, scale=1.0).init(seed=0)
    assert sorted(plain.state_dict()) == ["blocks.0.w", "blocks.1.w", "inner.w"]
    x = torch.ones(2, 4)
    # inner: x @ 1 * 2 + 1 = 9; each block: y @ 1 + 1
    assert torch.equal(mod.apply(with_bias, x), torch.full((2, 4), 9.0 * 4 + 1) * 4 + 1)
    assert torch.equal(mod.apply_plain(plain, x), torch.full((2, 4), 64.0))
    g = mod.grads(mod.Pair.of(4, bias=False).init(seed=0), x)
    assert not hasattr(g, "b") and g.inner.w.shape == (4, 4)
