"""Dim arithmetic (issue 11): `(T*E)`, `(t+1)`, `dim HD = E / NH`.

Normal forms, equality, messages that show the expression and its value,
generic dims bound through expressions at calls, E0212, and incremental
updates of constants computed from other constants.
"""

from __future__ import annotations

import pytest
from annotations import spanned

from quiver.checker import Analyzer, check_text, ide
from quiver.checker import dimexpr as DX

diags = spanned


# ---------------------------------------------------------------- normal forms


def test_equal_expressions_have_one_normal_form() -> None:
    t, one, two = DX.var("t"), DX.const(1), DX.const(2)
    assert DX.add(t, one) == DX.add(one, t)
    assert DX.mul(two, t) == DX.add(t, t)
    assert DX.div(DX.mul(t, DX.const(4)), two) == DX.mul(two, t)
    assert DX.sub(DX.add(t, one), one) == t
    assert DX.value(DX.div(DX.const(7), two)) == 3  # floored, as torch floors sizes
    assert DX.div(t, DX.const(0)) is None
    assert DX.value(DX.div(t, two)) is None and DX.div(t, two) != DX.mul(t, DX.const(1))  # not exact: stays


def test_substitution_and_linear_forms() -> None:
    h = DX.var("H")
    e = DX.add(DX.div(DX.sub(h, DX.const(3)), DX.const(2)), DX.const(1))  # (H-3)/2+1
    assert DX.value(DX.substitute(e, {"H": DX.const(28)})) == 13
    assert DX.linear(DX.add(DX.mul(DX.const(2), h), DX.const(1)), "H") == (2, 1)
    assert DX.linear(DX.mul(h, h), "H") is None
    assert DX.generics(e) == {"H"}


# ---------------------------------------------------------------- checking


def test_constants_are_evaluated_and_messages_show_the_value() -> None:
    base = "dim T = 4\ndim E = 8\n\n"
    assert diags(base + "fn f(x: [b (T*E)]) -> [b (E*T)]:\n    return x\n") == []
    assert diags(base + "fn f(x: [b (T*E)]) -> [b 32]:\n    return x\n") == []
    assert diags(base + "fn f(x: [b (T*E)]) -> [b 31]:\n    return x\n") == [
        ("E0201", "return value: expected [b 31], found [b (T*E)=32]", "x")
    ]


def test_generic_dims_combine_symbolically() -> None:
    assert diags("fn f(x: [b (2*t)], y: [b (t+t)]) -> [b (2*t)]:\n    return x + y\n") == []
    assert diags("fn f(x: [b t]) -> [b (t+1)]:\n    return x\n") == [
        ("E0201", "return value: expected [b (t+1)], found [b t]", "x")
    ]
    assert diags("fn f(x: [b (t*2)], y: [b t]) -> [b (t*2)]:\n    return x + y\n") == [
        ("E0202", "cannot broadcast [b (t*2)] + [b t]: (t*2) and t differ", "x + y")
    ]


def test_a_generic_dim_is_bound_through_an_expression_at_a_call() -> None:
    src = (
        "fn shrink(x: [b (2*t)]) -> [b t]:\n    return zeros([b t])\n\n"
        "fn main():\n    a = shrink(zeros([4 6]))\n    print(a + zeros([4 3]))\n    print(shrink(zeros([4 7])))\n"
    )
    assert diags(src) == [("E0201", "argument 'x' of shrink: expected [b (2*t)], found [4 7]", "zeros([4 7])")]
    grow = "fn grow(x: [b t]) -> [b (t+1)]:\n    return zeros([b (t+1)])\n\nfn main():\n    print(grow(zeros([2 5])) + zeros([2 6]))\n"
    assert diags(grow) == []


@pytest.mark.parametrize(
    "src, expected",
    [
        (
            "fn f(x: [b (t@2)]) -> Int:\n    return 1\n",
            ("E0212", "dim expression (t@2): '@' is not dim arithmetic (+ - * / // %)", "(t@2)"),
        ),
        ("fn f(x: [b (t/0)]) -> Int:\n    return 1\n", ("E0208", "a dim is a positive integer, found 0", "0")),
        (
            "dim T = 4\nfn f(x: [b (t/(T-T))]) -> Int:\n    return 1\n",
            ("E0212", "dim expression (T-T): it is 0; a dim is a positive integer", "(T-T)"),
        ),
        (
            "fn f(x: [b (2-3)]) -> Int:\n    return 1\n",
            ("E0212", "dim expression (2-3): it is -1; a dim is a positive integer", "(2-3)"),
        ),
        (
            "dim E = 64\ndim NH = 5\ndim HD = E / NH\n",
            ("E0212", "dim expression E / NH: 64 / 5 leaves a remainder of 4", "E / NH"),
        ),
        ("dim L = L + 1\n", ("E0212", "dim expression L + 1: 'L' is defined by itself", "L + 1")),
        ("fn g() -> Int:\n    return 1\ndim X = g * 2\n", ("E0212", "dim expression g * 2: 'g' is not a dim", "g * 2")),
    ],
)
def test_invalid_dim_expressions(src: str, expected: tuple[str, str, str]) -> None:
    assert diags(src) == [expected]


@pytest.mark.parametrize(
    "src, message",
    [
        (
            "dim E = 64\ndim K = 4\ndim NH = 5\ndim HD = (E - K) / (NH - 5)\n",
            "dim expression (E - K) / (NH - 5): division by zero",
        ),
        (
            "dim E = 4\nfn f(x: [b (E-(2*2))]) -> Int:\n    return 1\n",
            "dim expression (E-(2*2)): it is 0; a dim is a positive integer",
        ),
        (
            "dim E = 4\nfn f(x: [b ((E/2)*(E/4)-2)]) -> Int:\n    return 1\n",
            "dim expression ((E/2)*(E/4)-2): it is 0; a dim is a positive integer",
        ),
    ],
)
def test_an_invalid_dim_expression_is_shown_as_written(src: str, message: str) -> None:
    """Issue 36: the parentheses the user wrote are kept, and a meaning never changes."""
    assert [(d.code, d.message) for d in check_text(src).diagnostics] == [("E0212", message)]


def test_dim_arithmetic_in_parentheses_spans_them() -> None:
    """The range of a dim expression holds its parentheses, and those of the
    parts inside it: `(E-(2*2))`, not `E-(2*2`."""
    assert diags("dim E = 4\nfn f(x: [b (E-(2*2))]) -> Int:\n    return 1\n") == [
        ("E0212", "dim expression (E-(2*2)): it is 0; a dim is a positive integer", "(E-(2*2))")
    ]
    assert diags("dim E = 4\nfn f(x: [b ((E-4)*2)]) -> Int:\n    return 1\n") == [
        ("E0212", "dim expression (E-4): it is 0; a dim is a positive integer", "(E-4)")
    ]


def test_dim_constants_computed_from_others_in_any_order() -> None:
    src = "dim HD = E / NH\ndim E = 64\ndim NH = 4\n\nmodel M:\n    param w: [E (NH*HD)] = zeros\n\nfn f(x: [b HD]) -> [b 16]:\n    return x\n"
    assert diags(src) == []
    a = check_text(src)
    assert a.globals.dims["HD"].value == 16
    assert str(a.globals.models["M"].fields[0].type) == "[E (NH*HD)=64]"


def test_hover_and_inlay_hints_show_the_expression() -> None:
    src = "dim T = 4\ndim E = 8\n\nfn flat(x: [b (T*E)]) -> [b (T*E)]:\n    y = x * 2.0\n    return y\n"
    a = check_text(src)
    assert "(local) y: [b (T*E)=32]" in ide.hover(a, src.index("y =")).markdown
    assert [h.label for h in ide.inlay_hints(a)] == [": [b (T*E)=32]"]


def test_hover_and_inlay_hints_keep_the_written_order_of_a_product_of_model_dims() -> None:
    """Issue 36: `(Heads*Hd)` of a model's field is not printed `(Hd*Heads)`."""
    src = (
        "model Layer[I, Heads, Hd]:\n    param W: [I (Heads*Hd)] = xavier\n\n"
        "    fn forward(self, h: [n I]) -> [n (Heads*Hd)]:\n        g = h @ self.W\n        return g\n"
    )
    a = check_text(src)
    assert a.diagnostics == []
    assert "(local) g: [n (Heads*Hd)]" in ide.hover(a, src.index("g =")).markdown
    assert [h.label for h in ide.inlay_hints(a)] == [": [n (Heads*Hd)]"]


def test_changing_a_constant_updates_the_constants_and_shapes_computed_from_it() -> None:
    src = "dim E = 64\ndim NH = 4\ndim HD = E / NH\n\nfn f(x: [b HD]) -> [b 16]:\n    return x\n"
    analyzer = Analyzer()
    assert [d.code for d in analyzer.update(src).diagnostics] == []
    edited = src.replace("dim E = 64", "dim E = 66")
    got = analyzer.update(edited)
    assert [(d.code, d.message) for d in got.diagnostics] == [
        (d.code, d.message) for d in check_text(edited).diagnostics
    ]
    assert [d.code for d in got.diagnostics] == ["E0212"]
    back = analyzer.update(src.replace("dim E = 64", "dim E = 128"))
    assert [(d.code, d.message) for d in back.diagnostics] == [("E0201", "return value: expected [b 16], found [b HD]")]
