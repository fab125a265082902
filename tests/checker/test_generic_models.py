"""The checker on models that take dims and options (issue 23): every error
of their headers, types, members and methods with its exact code, range and
message, one diagnostic per mistake; instances as types (two instances are
two types; generic dims bound from a model argument); dim defaults, dims by
name and Float options; `Grad[Linear[D, H]]`; gradients, optimizers and the
param-read analysis (E1107, W1101) on models holding instances and stacks of
them. `spanned(src)` is (code, message, the text it underlines) of each
diagnostic of src."""

from __future__ import annotations

import pytest
from annotations import spanned

from quiver.checker import Analyzer, check_text

LINEAR = """\
dim D = 4
dim H = 8
dim C = 3

model Linear[I, O, bias: Bool = True]:
    param weight: [I O] = zeros
    param bias: [O] = zeros if bias

    fn forward(self, x: [.. I]) -> [.. O]:
        y = x @ self.weight
        if bias:
            y = y + self.bias
        return y
"""


def clean(src: str) -> None:
    assert spanned(src) == []


# ====================================================================== the dims a model is given


def dims_error(model: str) -> str:
    return f"Linear takes a dim for I here (a name, a number or (dim arithmetic)), found the type {model}"


@pytest.mark.parametrize("word", ["Float", "Int", "Bool", "Mode", "f64", "NonNeg"])
def test_a_type_given_as_a_dim_is_e0910_in_every_place(word: str) -> None:
    # in a signature an unknown name is a generic dim, but a type's name is not one
    assert spanned(LINEAR + f"\nfn f(l: Linear[{word}, H]) -> [D]:\n    return zeros([D])\n") == [
        ("E0910", dims_error(word), word)
    ]
    assert spanned(LINEAR + f"\nmodel M:\n    param l: Linear[{word}, H]\n") == [("E0910", dims_error(word), word)]
    assert spanned(LINEAR + f"\nfn main():\n    l = Linear[{word}, H].init(seed=0)\n    print(l)\n") == [
        ("E0910", dims_error(word), word)
    ]


def test_a_type_with_brackets_given_as_a_dim_is_e0910() -> None:
    assert spanned(LINEAR + "\nfn f(l: Linear[[D], H]) -> [D]:\n    return zeros([D])\n") == [
        ("E0910", dims_error("[D]"), "[D]")
    ]
    assert spanned(LINEAR + "\nfn f(l: Linear[Grad[Linear[D, H]], H]) -> [D]:\n    return zeros([D])\n") == [
        ("E0910", dims_error("Grad[Linear[D, H]]"), "Grad[Linear[D, H]]")
    ]


CONV = """\
dim C = 3

model Conv[Ci, Co, K, stride = 1, padding = 0]:
    param weight: [Co Ci K K] = zeros

    fn forward(self, x: [b Ci h w]) -> [b Co ((h+2*padding-K)/stride+1) ((w+2*padding-K)/stride+1)]:
        return conv2d(x, self.weight, stride=stride, padding=padding)
"""


def test_a_dim_given_as_0_is_its_default_0() -> None:
    # the header may give a dim the default 0; writing it out is the same instance
    src = (
        CONV
        + """
fn same(c: Conv[C, 8, 3], d: Conv[C, 8, 3, stride=1, padding=0]) -> Conv[C, 8, 3, 1, 0]:
    return d

fn main():
    c = Conv[C, 8, 3, padding=0].init(seed=0)
    print(same(c, c), c(zeros([2 C 8 8])))
"""
    )
    clean(src)


def test_an_instance_shows_its_dims_as_its_type_writes_them() -> None:
    # (2*E) and (E*2) are one dim, so one type; each use still reads as written,
    # whichever was met first, and an edit elsewhere does not change that
    src = """\
dim E = 4

model Linear[I, O]:
    param weight: [I O] = zeros

fn f1(l: Linear[(2*E), E]) -> [E]:
    return l.weight

fn f2(l: Linear[(E*2), E]) -> [E]:
    return l.weight
"""
    assert spanned(src) == [
        ("E0201", "return value: expected [E], found [(2*E)=8 E]", "l.weight"),
        ("E0201", "return value: expected [E], found [(E*2)=8 E]", "l.weight"),
    ]
    analyzer = Analyzer()
    analyzer.update(src)
    edited = src.replace("fn f1(l: Linear[(2*E), E]) -> [E]:\n    return l.weight\n\n", "")
    incremental = [(d.code, d.message) for d in analyzer.update(edited).diagnostics]
    assert incremental == [(d.code, d.message) for d in check_text(edited).diagnostics]
    assert incremental == [("E0201", "return value: expected [E], found [(E*2)=8 E]")]


# ====================================================================== methods


def test_self_written_after_another_parameter_is_one_e0915_and_calls_stay_silent() -> None:
    src = """\
dim D = 4

model Lin[I]:
    param weight: [I I] = zeros

    fn forward(x: [I], self) -> [I]:
        return x @ self.weight

fn main():
    l = Lin[D].init(seed=0)
    print(l(ones([D])), l.forward(ones([D])))
"""
    assert spanned(src) == [("E0915", "self is the first parameter of a method, and only the first", "self")]


# ====================================================================== the param-read analysis


def test_w1101_and_e1107_are_per_instance_and_name_it() -> None:
    src = (
        LINEAR
        + """
fn weight_only(l: Linear[D, H], x: [b D]) -> [] NonNeg:
    return mean(relu(x @ l.weight))

fn plain(l: Linear[D, H, bias=False], x: [b D]) -> [] NonNeg:
    return mean(relu(x @ l.weight))

fn nothing(l: Linear[D, H], x: [b D]) -> [] NonNeg:
    return mean(relu(x))

fn generic(l: Linear[i, o], x: [b i]) -> [] NonNeg:
    return mean(relu(x @ l.weight))

fn main():
    a = Linear[D, H].init(seed=0)
    n = Linear[D, H, bias=False].init(seed=0)
    x = ones([2 D])
    l1, g1 = value_and_grad(weight_only, a, x)
    l2, g2 = value_and_grad(plain, n, x)
    l3, g3 = value_and_grad(nothing, a, x)
    l4, g4 = value_and_grad(generic, a, x)
    print(l1, g1, l2, g2, l3, g3, l4, g4)
"""
    )
    assert spanned(src) == [
        ("W1101", "weight_only never reads param bias of Linear[D, H]: its gradient is always zero", "weight_only"),
        # the instance without a bias has nothing left unread
        ("E1107", "nothing reads no param of Linear[D, H]: its gradient would always be zero", "nothing"),
        # a generic fn, differentiated for the instance it is given
        ("W1101", "generic never reads param bias of Linear[D, H]: its gradient is always zero", "generic"),
    ]


# ====================================================================== training


def test_changing_an_instance_made_here_says_the_type_to_take() -> None:
    src = (
        LINEAR
        + """
fn main():
    fc = Linear[D, H].init(seed=0)
    fc.weight = zeros([D H])
"""
    )
    assert spanned(src) == [
        (
            "E0501",
            "cannot assign fc.weight: 'fc' is not a parameter but a model made here, and a model changes only"
            " through a mut parameter: do this in a fn that takes `mut fc: Linear[D, H]`, and call it",
            "fc.weight",
        )
    ]


# ====================================================================== members under options


def test_a_member_under_a_float_option_is_e0913_that_says_so() -> None:
    assert spanned("model LN[E, eps: Float = 1e-5]:\n    param weight: [E] = ones if eps\n") == [
        ("E0913", "'eps' is a Float option of LN; a member's condition is a Bool option, and LN has none", "eps")
    ]
    assert spanned("model LN[E, eps: Float = 1e-5, affine: Bool = True]:\n    param weight: [E] = ones if eps\n") == [
        (
            "E0913",
            "'eps' is a Float option of LN; a member's condition is a Bool option (its Bool options: affine)",
            "eps",
        )
    ]


# ====================================================================== binding generic dims from a model


def test_an_argument_that_does_not_fit_binds_nothing_for_those_after_it() -> None:
    src = LINEAR + """
fn halve(l: Linear[(2*i), i], x: [b (2*i)]) -> [b i]:
    return l(x)

fn square(x: [i i], y: [i]) -> [i]:
    return y

fn main():
    c = Linear[H, 3].init(seed=0)
    print(halve(c, ones([2 H])), square(ones([2 3]), ones([3])))
"""
    assert spanned(src) == [
        ("E0904", "argument 'l' of halve: expected Linear[(2*i), i], found model Linear[H, 3]", "c"),
        ("E0205", "argument 'x' of square: generic dim i is 2 from argument 'x' but 3 here", "ones([2 3])"),
    ]
