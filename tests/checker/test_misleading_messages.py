"""Issue 36: messages that named another rule than the one broken. Each
program is accepted, or its one diagnostic says what is really wrong, with
its exact code, message and range."""

from __future__ import annotations

import pytest
from annotations import spanned

from quiver.checker import Analyzer

# ------------------------------------------------------------------ E0309: Index's dim


def test_index_of_a_number_is_accepted() -> None:
    """A number is a dim in a shape (`[64 D]`), and so in Index: labels 0..8."""
    text = "fn pick(x: [b 9], y: [b] Index[9]) -> [b]:\n    return x[arange(b), y]\n"
    assert spanned(text) == []


def test_index_of_dim_arithmetic_says_so() -> None:
    # of dim constants it is the size it comes to (issue 40); of generic dims, an error
    assert spanned("dim N = 4\nfn f(x: [b] Index[(N+1)]) -> [b] Index[5]:\n    return x\n") == []
    text = "fn f(x: [b] Index[(n+1)]) -> [b]:\n    return x as f32\n"
    assert spanned(text) == [
        (
            "E0309",
            "element type Index[(n+1)]: Index takes a dim's name, a number or arithmetic of dim constants, not "
            "arithmetic of generic dims (n+1); give that dim a name of its own, as in Index[K]",
            "Index[(n+1)]",
        )
    ]


def test_index_without_its_dim() -> None:
    assert spanned("fn f(x: [b] Index) -> [b]:\n    return x as f32\n") == [
        ("E0309", "element type Index: Index needs the dim it indexes, as in Index[C]", "Index")
    ]
    assert spanned("dim N = 4\nfn f(x: [b] Index[N, 3]) -> [b]:\n    return x as f32\n") == [
        ("E0309", "element type Index[...]: Index takes one dim, its name or a number, as in Index[C]", "Index[N, 3]")
    ]


# ------------------------------------------------------------------ E0305: a label known when checked


@pytest.mark.parametrize("value", ["V", "PAD", "V - 1", "27"])
def test_full_takes_a_label_known_when_checked(value: str) -> None:
    text = f"dim C = 28\ndim V = 27\nconst PAD = 3\nfn f() -> [4] Index[C]:\n    return full([4] Index[C], {value})\n"
    assert spanned(text) == []


def test_full_with_a_label_out_of_range_names_its_value() -> None:
    text = "dim C = 28\nfn f() -> [4] Index[C]:\n    return full([4] Index[C], C)\n"
    assert spanned(text) == [
        (
            "E0305",
            "value of full for [4] Index[C]: expected an integer in 0..27 known when the program is checked "
            "(a literal, or a dim or Int constant), found C = 28",
            "C",
        )
    ]


# ------------------------------------------------------------------ E0911: options

NORM = "dim E = 8\n\nmodel RMSNorm[D, eps: Float = -1.0]:\n    param weight: [D] = ones\n\n"


def test_a_numeric_constant_gives_a_float_option() -> None:
    text = (
        NORM + "const NORM_EPS = 1e-5\n\nmodel Net:\n    param norm: RMSNorm[E, eps=NORM_EPS]\n\n"
        "fn same(m: Net) -> RMSNorm[E, eps=1e-5]:\n    return m.norm\n"
    )
    assert spanned(text) == []
    # a different value is a different type
    ((code, message, _),) = spanned(text.replace("eps=1e-5]", "eps=1e-6]"))
    assert (code, message) == (
        "E0904",
        "return value: expected RMSNorm[E, eps=1e-06], found model RMSNorm[E, eps=1e-05]",
    )


def test_changing_the_constant_changes_the_type() -> None:
    text = (
        NORM + "const NORM_EPS = 1e-5\n\nmodel Net:\n    param norm: RMSNorm[E, eps=NORM_EPS]\n\n"
        "fn same(m: Net) -> RMSNorm[E, eps=1e-5]:\n    return m.norm\n"
    )
    analyzer = Analyzer()
    assert analyzer.update(text).diagnostics == []
    edited = text.replace("NORM_EPS = 1e-5", "NORM_EPS = 1e-6")
    assert [d.message for d in analyzer.update(edited).diagnostics] == [
        "return value: expected RMSNorm[E, eps=1e-05], found model RMSNorm[E, eps=1e-06]"
    ]
    assert analyzer.update(text).diagnostics == []


def test_a_constant_of_another_kind_is_no_option_value() -> None:
    text = NORM + 'const TAG = "x"\n\nmodel Net:\n    param norm: RMSNorm[E, eps=TAG]\n'
    assert spanned(text) == [
        ("E0911", "RMSNorm takes a number for its option eps, found 'TAG', a string constant", "eps=TAG")
    ]
    # the message names what was given (an Int constant for a Bool option)
    text = (
        NORM
        + "const ONE = 1\n\nmodel Lin[D, bias: Bool = True]:\n    param w: [D] = ones\n\nmodel Net:\n    param l: Lin[E, bias=ONE]\n"
    )
    assert spanned(text) == [
        ("E0911", "Lin takes True or False for its option bias, found 'ONE', an Int constant", "bias=ONE")
    ]


def test_a_method_is_not_generic_over_options() -> None:
    # a top-level fn is (`fn f(mut blk: Block[E, NH, bias=bias])` binds bias); a method is not
    text = (
        "dim E = 8\ndim NH = 2\n\nmodel Block[D, H, bias: Bool = True]:\n    param w: [D H] = zeros\n\n"
        "fn f(mut blk: Block[E, NH, bias=bias]):\n    print(1)\n\n"
        "model Net:\n    param w: [E] = zeros\n\n    fn g(self, blk: Block[E, NH, bias=b]):\n        print(1)\n"
    )
    assert spanned(text) == [
        (
            "E0911",
            "Block takes True or False for its option bias, found 'b': only a top-level fn is generic over a "
            "model's Bool and Float options (a new name there, `bias=v`, is bound at each call); here give it a "
            "value (bias=True), or in a model's members its own option (bias=bias)",
            "bias=b",
        )
    ]


# ------------------------------------------------------------------ E0211: a Float constant


def test_a_float_constant_made_by_division_is_not_a_dim() -> None:
    text = "const HIDC = 64 / 2\nfn f(x: [b HIDC]) -> [b]:\n    return sum(x, over=1)\n"
    assert spanned(text) == [
        (
            "E0211",
            "'HIDC' is a Float constant, not a dim: `/` makes a Float, as in a body; for a size, declare it as a "
            "dim (`dim HIDC = ...`), whose `/` divides integers exactly",
            "HIDC",
        )
    ]
    assert spanned("dim HIDC = 64 / 2\nfn f(x: [b HIDC]) -> [b]:\n    return sum(x, over=1)\n") == []


# ------------------------------------------------------------------ E0301: `as` binds tighter than `/`


def test_a_cast_of_the_divisor_only() -> None:
    text = "fn k(B: Int, x: [n 4]) -> [n 4]:\n    return x[0:B / world_size() as Int]\n"
    assert spanned(text) == [
        (
            "E0301",
            "slice bound: expected Int, found number Float (`as` binds tighter than `/`: this is "
            "B / (world_size() as Int); write (B / world_size()) as Int)",
            "B / world_size() as Int",
        )
    ]
    assert spanned(text.replace("B / world_size() as Int", "(B / world_size()) as Int")) == []


def test_a_cast_of_the_divisor_only_in_a_range() -> None:
    text = "fn j(B: Int):\n    for i in range(B / world_size() as Int):\n        print(i)\n"
    ((code, message, span),) = spanned(text)
    assert (code, span) == ("E0301", "B / world_size() as Int")
    assert message.endswith(
        "(`as` binds tighter than `/`: this is B / (world_size() as Int); write (B / world_size()) as Int)"
    )
