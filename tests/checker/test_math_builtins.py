"""The math built-ins and losses added for real models (issue 11): their
types, refinements and diagnostics, written as annotated programs (see
tests/annotations.py)."""

from __future__ import annotations

import textwrap
from functools import partial

import pytest
from annotations import check_annotated

from quiver.checker import check_text
from quiver.checker import types as T

PRELUDE = """\
dim D = 4
dim C = 3

"""


check = partial(check_annotated, prelude=PRELUDE, dedent=True)


def type_of(src: str, name: str) -> str:
    """The type the checker gives the local `name` in `src` (which checks clean)."""
    a = check_text(PRELUDE + textwrap.dedent(src))
    assert not a.internal_errors
    assert [(d.code, d.message) for d in a.diagnostics if d.code != "W0101"] == []
    for body in a.bodies.values():
        if name in body.locals:
            return str(body.locals[name])
    raise AssertionError(f"no local {name}")


# ------------------------------------------------------------------ elementwise


@pytest.mark.parametrize("fn", ["gelu", "silu", "sin", "cos"])
def test_new_elementwise_functions_keep_shape_and_float_type_unrefined(fn: str) -> None:
    src = f"""
    fn f(x: [b D] f64, p: [D] NonNeg):
        r = {fn}(x)
        s = {fn}(p)
    """
    assert type_of(src, "r") == "[b D] f64"
    assert type_of(src, "s") == "[D]"


def test_gelu_and_silu_are_not_nonneg() -> None:
    check("""
    fn f(x: [D]) -> [D] NonNeg:
        return gelu(x)
    #          ^^^^^^^ E0304: return value: expected [D] NonNeg, found [D] Float

    fn g(x: [D] NonNeg) -> [D] NonNeg:
        return silu(x)
    #          ^^^^^^^ E0304: return value: expected [D] NonNeg, found [D] Float
    """)


def test_new_elementwise_functions_need_a_float_tensor() -> None:
    check("""
    fn f(y: [D] i64) -> [D]:
        return sin(y)
    #              ^ E0310: sin of tensor [D] i64 needs a float tensor; cast it with `as`
    """)


# ------------------------------------------------------------------ clamp, maximum, minimum


def test_clamp_refines_from_literal_bounds() -> None:
    src = """
    fn f(x: [b D], lo: Float, p: [D] Prob, n: [D] i64):
        a = clamp(x, min=0.0)
        r = clamp(x, min=0.0, max=1.0)
        c = clamp(x, min=-1.0, max=1.0)
        d = clamp(x, max=1.0)
        e = clamp(x, min=0.0, max=lo)
        g = clamp(x, min=lo)
        h = clamp(n, min=0, max=2)
        k = clamp(p, max=0.5)
    """
    assert type_of(src, "a") == "[b D] NonNeg"
    assert type_of(src, "r") == "[b D] Prob"
    assert type_of(src, "c") == "[b D]"
    assert type_of(src, "d") == "[b D]"
    # a max that is not a literal may be below min, and torch then gives max
    assert type_of(src, "e") == "[b D]"
    assert type_of(src, "g") == "[b D]"
    assert type_of(src, "h") == "[D] i64"
    assert type_of(src, "k") == "[D]"


def test_clamp_needs_a_bound_and_a_min_not_above_max() -> None:
    check("""
    fn f(x: [D]) -> [D]:
        return clamp(x)
    #               ^^^ E0403: clamp needs the argument min= or max= (or both)

    fn g(x: [D]) -> [D]:
        return clamp(x, min=2.0, max=-1)
    #                       ^^^ E0301: min of clamp: expected a number <= max (-1), found 2.0

    fn h(x: [D]) -> [D]:
        return x |> clamp()
    #          ^^^^^^^^^^^^ E0403: clamp needs the argument min= or max= (or both)
    """)


def test_clamp_bounds_are_keyword_numbers() -> None:
    check("""
    fn f(x: [D], n: [D] i64, b: [D] Bool) -> [D]:
        a = clamp(x, 0.0)
    #                ^^^ E0401
        c = clamp(x, min=x)
    #                    ^ E0301: min of clamp: expected a number, found tensor [D]
        d = clamp(n, max=1.5)
    #                    ^^^ E0302: max of clamp on an integer tensor: expected [D] i64, found Float
        e = clamp(b, min=0)
    #             ^ E0306: clamp is not defined for tensor [D] Bool
        return x
    """)


def test_maximum_and_minimum_broadcast_and_refine() -> None:
    src = """
    fn f(x: [b D], bias: [D], p: [D] Prob, q: [D] Prob, n: [D] i64, z: [D] NonNeg):
        a = maximum(x, bias)
        r = maximum(x, 0.0)
        c = maximum(p, q)
        d = minimum(p, z)
        e = minimum(x, 1.0)
        g = maximum(2, n)
        h = minimum(z, 3.0)
    """
    assert type_of(src, "a") == "[b D]"
    assert type_of(src, "r") == "[b D] NonNeg"
    assert type_of(src, "c") == "[D] Prob"
    assert type_of(src, "d") == "[D] Prob"
    assert type_of(src, "e") == "[b D]"
    assert type_of(src, "g") == "[D] i64"
    assert type_of(src, "h") == "[D] NonNeg"


def test_maximum_and_minimum_errors_are_those_of_plus() -> None:
    check("""
    fn f(x: [b D], y: [b C], w: [D] f64, n: [D] i64, k: [D] Bool) -> [D]:
        a = maximum(x, y)
    #       ^^^^^^^^^^^^^ E0202: cannot broadcast [b D] and [b C] in maximum: D and C differ
        c = minimum(x, w)
    #       ^^^^^^^^^^^^^ E0302: minimum needs one element type for a and b: expected [b D] Float, found [D] f64
        d = maximum(n, 0.5)
    #       ^^^^^^^^^^^^^^^ E0302: maximum of an integer tensor and a Float: expected [D] i64, found Float
        e = maximum(1.0, 2.0)
    #       ^^^^^^^^^^^^^^^^^ E0301: maximum of two numbers: expected a tensor on one side at least, found Float and Float
        g = minimum(k, 1)
    #               ^ E0306: minimum is not defined for tensor [D] Bool
        h = maximum(x)
    #              ^^^ E0401
        return w as [D]
    """)


# ------------------------------------------------------------------ numbers into sqrt, exp, log, sin, cos


@pytest.mark.parametrize("fn, nonneg", [("sqrt", True), ("exp", True), ("log", False), ("sin", False), ("cos", False)])
def test_math_of_a_number_is_a_float(fn: str, nonneg: bool) -> None:
    src = f"""
    fn f(x: [b D], n: Int):
        a = {fn}(32.0)
        c = {fn}(n)
        t = {fn}(x)
    """
    a = check_text(PRELUDE + textwrap.dedent(src))
    assert [d.code for d in a.diagnostics if d.code != "W0101"] == []
    (body,) = [b for b in a.bodies.values() if "a" in b.locals]
    assert str(body.locals["a"]) == "Float" and str(body.locals["c"]) == "Float"
    assert body.locals["a"].nonneg is nonneg  # sqrt(2.0) * lr stays >= 0 for refinement
    assert str(body.locals["t"]) == ("[b D] NonNeg" if nonneg else "[b D]")


def test_math_of_a_number_is_not_a_tensor_and_strings_are_neither() -> None:
    check("""
    fn scale() -> []:
        return sqrt(64.0)
    #          ^^^^^^^^^^ E0301: return value: expected tensor [], found number Float

    fn f(s: Str, y: [D] i64) -> Float:
        a = cos(s)
    #           ^ E0301: argument 'x' of cos: expected a tensor or number, found string
        c = log(y)
    #           ^ E0310: log of tensor [D] i64 needs a float tensor; cast it with `as`
        return exp(1.0) * sqrt(2)
    """)


# ------------------------------------------------------------------ losses


def test_the_new_losses_are_nonneg_scalars_of_their_element_type() -> None:
    src = """
    fn f(x: [b D] f64, t: [b D] f64, y: [b] Index[D], v: [b D C] f64, yc: [b C] Index[D]):
        a = nll(log_softmax(x, over=D), y, over=D)
        r = binary_cross_entropy_with_logits(x, t)
        c = kl_div(log_softmax(x, over=D), softmax(t, over=D))
        d = nll(v, yc, over=D)
        e = kl_div(x[0], t[0])
    """
    a = check_text(PRELUDE + textwrap.dedent(src))
    assert [d.code for d in a.diagnostics if d.code != "W0101"] == []
    (body,) = [b for b in a.bodies.values() if "a" in b.locals]
    for name in "arcde":
        t = body.locals[name]
        assert isinstance(t, T.TensorT) and t.dims == () and t.elem == T.Elem("f64", "nonneg"), (name, t)


def test_nll_labels_follow_the_rules_of_cross_entropy() -> None:
    check("""
    fn f(lp: [b C], y: [b] Index[D], z: [C] Index[C], n: Int) -> [] NonNeg:
        a = nll(lp, y, over=C)
    #               ^ E0305: the labels index D, but over=C: expected [b] Index[C], found [b] Index[D]
        c = nll(lp, z, over=C)
    #               ^ E0201: labels of nll: expected [b] Index[C], found [C] Index[C]
        d = nll(lp, n, over=C)
    #               ^ E0301: labels of nll: expected [b] Index[C], found number Int
        e = nll(lp, y, over=D)
    #                       ^ E0204
        g = nll(n, y, over=C)
    #           ^ E0301: argument 'logp' of nll: expected a tensor, found number Int
        print(a, c, d, e, g)
        return nll(lp, y)
    #             ^^^^^^^ E0403: nll needs the argument over=
    """)


def test_bce_and_kl_div_need_one_shape_and_element_type() -> None:
    check("""
    fn f(z: [b C], y: [b], w: [b C] f64, k: [b C] i64) -> [] NonNeg:
        a = binary_cross_entropy_with_logits(z, y)
    #                                           ^ E0201: y of binary_cross_entropy_with_logits (same shape as z): expected [b C], found [b]
        c = kl_div(z, w)
    #       ^^^^^^^^^^^^ E0302: kl_div needs one element type: expected [b C] Float, found [b C] f64
        d = kl_div(z, k)
    #                 ^ E0310: kl_div of tensor [b C] i64 needs a float tensor; cast it with `as`
        print(a, c, d)
        return kl_div(z)
    #                ^^^ E0401
    """)


# ------------------------------------------------------------------ ** on integer tensors


def test_a_float_power_of_an_integer_tensor_says_how_to_cast() -> None:
    check("""
    model M:
        buffer k: [D] i64 = 0

    fn f(n: [D] i64, m: M) -> [D]:
        a = n ** 0.5
    #       ^^^^^^^^ E0302: '**' of an integer tensor and a Float; cast the tensor to a float type first: `n as [D] f32`: expected [D] i64, found Float
        c = 2.0 ** m.k
    #       ^^^^^^^^^^ E0302: '**' of an integer tensor and a Float; cast the tensor to a float type first: `m.k as [D] f32`: expected [D] i64, found Float
        d = (n + 1) ** 1.5
    #        ^^^^^^^^^^^^^ E0302: '**' of an integer tensor and a Float; cast the tensor to a float type first: `(...) as [D] f32`: expected [D] i64, found Float
        e = n + 0.5
    #       ^^^^^^^ E0302: '+' of an integer tensor and a Float: expected [D] i64, found Float
        print(a, c, d, e)
        return (n as [D] f32) ** 0.5 + (n ** 2 as [D])
    """)


# ------------------------------------------------------------------ item


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("sum(x)", "Float"),
        ("mean(x) as [] f64", "Float"),
        ("y[0]", "Int"),
        ("argmax(x, over=D)", "Int"),
        ("sum(x) > 0.0", "Bool"),
    ],
)
def test_item_is_the_number_of_a_scalar_tensor_by_its_element_type(value: str, number: str) -> None:
    src = f"""
    fn f(x: [D], y: [D] Index[C]) -> Int:
        v = item({value})
        return 1
    """
    assert type_of(src, "v") == number


def test_item_needs_a_scalar_tensor() -> None:
    check("""
    fn f(x: [D], n: Int) -> Float:
        a = item(x)
    #            ^ E0301: argument 'x' of item: expected a [] tensor, found tensor [D]
        b = item(n)
    #            ^ E0301: argument 'x' of item: expected a tensor, found number Int
        return item(sum(x))
    """)
