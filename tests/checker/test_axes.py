"""over= as an axis position (over=-1), keep=True on reductions, and the
norms (layer_norm, rms_norm): their types and their diagnostics, with exact
codes, messages and ranges."""

from __future__ import annotations

import textwrap
from functools import partial

import pytest
from annotations import check_annotated

from quiver.checker import check_text

PRELUDE = """\
dim E = 4
dim C = 3

"""


check = partial(check_annotated, prelude=PRELUDE, dedent=True)


def type_of(body: str, name: str) -> str:
    a = check_text(PRELUDE + textwrap.dedent(body))
    assert not a.internal_errors
    # (W0203: over= the first of two T dims, which these types are about)
    assert [(d.code, d.message) for d in a.diagnostics if d.code not in ("W0101", "W0203")] == []
    for b in a.bodies.values():
        if name in b.locals:
            return str(b.locals[name])
    raise AssertionError(f"no local {name}")


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("softmax(s, over=-1)", "[b T T] Prob"),
        ("softmax(s, over=1)", "[b T T] Prob"),
        ("log_softmax(s, over=-2)", "[b T T]"),
        ("sum(s, over=-1)", "[b T]"),
        ("sum(s, over=0)", "[T T]"),
        ("sum(s, over=+2)", "[b T]"),
        ("mean(s, over=-1, keep=True)", "[b T 1]"),
        ("mean(s, over=-1, keep=False)", "[b T]"),
        ("max(x, over=E, keep=True)", "[b 1]"),
        ("min(x, over=0, keep=True)", "[1 E]"),
        ("sum(x, keep=True)", "[1 1]"),
        ("sum(x, keep=False)", "[]"),
        ("sum(x > 0.0, over=E, keep=True)", "[b 1] i64"),
        ("argmax(x, over=E, keep=True)", "[b 1] Index[E]"),
        ("argmax(s, over=-1)", "[b T] Index[T]"),
        ("layer_norm(x, over=E)", "[b E]"),
        ("layer_norm(s, over=-1)", "[b T T]"),
        ("rms_norm(relu(x), over=0)", "[b E]"),
        ("rms_norm(x64, over=E)", "[b E] f64"),
        ("x - mean(x, over=E, keep=True)", "[b E]"),
        ("s - max(s, over=-1, keep=True)", "[b T T]"),
        ("x |> sum(over=-1, keep=True)", "[b 1]"),
    ],
)
def test_types(expr: str, expected: str) -> None:
    body = f"""
    fn f(x: [b E], s: [b T T], x64: [b E] f64):
        r = {expr}
        print(r)
    """
    assert type_of(body, "r") == expected


def test_layer_norm_written_out_checks_clean() -> None:
    check("""
    fn ln(x: [b E]) -> [b E]:
        c = x - mean(x, over=E, keep=True)
        var = mean(c * c, over=E, keep=True)
        return c / sqrt(var + 1e-5)

    fn attention(q: [b T E], k: [b T E]) -> [b T T] Prob:
        return softmax(q @ transpose(k), over=-1)
    """)


def test_diagnostics() -> None:
    check("""
    fn ambiguous(s: [b T T]) -> [b T T] Prob:
        return softmax(s, over=T)
    #                          ^ E0209: over=T is ambiguous: [b T T] has T more than once; give its position: over=-2 or over=-1

    fn ambiguous_sum(x: [E E]) -> [E]:
        return sum(x, over=E)
    #                      ^ E0209: over=E is ambiguous: [E E] has E more than once; give its position: over=-2 or over=-1

    fn out_of_range(s: [b T T]) -> [b T T] Prob:
        return softmax(s, over=3)
    #                          ^ E0210: softmax(over=3) needs 4 dims or more, found [b T T]

    fn out_of_range_negative(x: [b E]) -> [b]:
        return sum(x, over=-3)
    #                      ^^ E0210: sum(over=-3) needs 3 dims or more, found [b E]

    fn scalar(x: []) -> []:
        return mean(x, over=0)
    #                       ^ E0210: mean(over=0) needs 1 dim, found []

    fn not_literal(x: [b E], i: Int) -> [b]:
        return sum(x, over=i)
    #                      ^ E0109: unknown dim 'i'

    fn keep_not_literal(x: [b E], k: Bool) -> [b]:
        return sum(x, over=E, keep=k)
    #                              ^ E0301: keep= decides the result's shape: expected True or False, found k

    fn keep_number(x: [b E]) -> [b]:
        return max(x, over=E, keep=1)
    #                              ^ E0301: keep= decides the result's shape: expected True or False, found 1

    fn keep_on_softmax(x: [b E]) -> [b E]:
        return softmax(x, over=E, keep=True)
    #                             ^^^^ E0402: softmax has no parameter 'keep'

    fn norm_of_ints(x: [b E] i64) -> [b E]:
        return layer_norm(x, over=E)
    #                     ^ E0310: layer_norm of tensor [b E] i64 needs a float tensor; cast it with `as`

    fn norm_weight_of_another_size(x: [b E], w: [b]) -> [b E]:
        return layer_norm(x, over=E, weight=w)
    #                                       ^ E0201: weight of layer_norm: expected [E], found [b]

    fn norm_bias_of_another_type(x: [b E], c: [E] f64) -> [b E]:
        return layer_norm(x, over=E, bias=c)
    #                                     ^ E0302: bias of layer_norm: expected [E] Float, found [E] f64

    fn rms_norm_has_no_weight(x: [b E], w: [E]) -> [b E]:
        return rms_norm(x, over=E, weight=w)
    #                              ^^^^^^ E0402: rms_norm has no parameter 'weight'

    fn norm_not_nonneg(x: [b E]) -> [b E] NonNeg:
        return rms_norm(x, over=E)
    #          ^^^^^^^^^^^^^^^^^^^ E0304: return value: expected [b E] NonNeg, found [b E] Float

    fn ce_ambiguous(x: [C C], y: [C] Index[C]) -> [] NonNeg:
        return cross_entropy(x, y, over=-1)

    fn ce_range(x: [b C], y: [b] Index[C]) -> [] NonNeg:
        return cross_entropy(x, y, over=2)
    #                                   ^ E0210: cross_entropy(over=2) needs 3 dims or more, found [b C]

    fn kept_shape(x: [b E]) -> [b E]:
        return mean(x, over=E, keep=True)
    #          ^^^^^^^^^^^^^^^^^^^^^^^^^^ E0201: return value: expected [b E], found [b 1]
    """)


def test_the_compiled_call_passes_the_resolved_axis_and_keep() -> None:
    from quiver.checker.compiler import compile_program

    analysis = check_text(
        PRELUDE
        + textwrap.dedent("""
    fn f(s: [b T T]) -> [b T 1]:
        return sum(softmax(s, over=-1), over=-1, keep=True)

    fn g(x: [b E]) -> [1 1]:
        return mean(layer_norm(x, over=0), keep=True) + rms_norm(max(x, keep=True), over=-1)
    """)
    )
    assert [d.code for d in analysis.diagnostics] == []
    py = compile_program(analysis, "/virtual/axes.qv").source
    assert "rt.sum(rt.softmax(s, 2), 2, keep=True)" in py
    assert "rt.mean(rt.layer_norm(x, 0), None, keep=True)" in py
    assert "rt.rms_norm(rt.max(x, None, keep=True), 1)" in py


def test_over_is_a_dim_name_or_an_integer_literal() -> None:
    check("""
    fn bad_over(x: [b E]) -> [b]:
        return sum(x, over=1.5)
    #                      ^^^ E0301: over=: expected a dim name or a position such as -1, found 1.5
    """)


def test_keep_is_read_even_when_the_operand_has_no_type() -> None:
    # k is used (no W0101) and reported, though y is unknown
    check("""
    fn f(x: [b E]) -> [b 1]:
        k = True
        return sum(y, over=E, keep=k)
    #              ^ E0101: unknown name 'y'
    #                              ^ E0301: keep= decides the result's shape: expected True or False, found k
    """)
