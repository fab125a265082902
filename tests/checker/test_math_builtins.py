"""The math built-ins and losses added for real models (issue 11): their
types, refinements and diagnostics, written as annotated programs (see
tests/annotations.py)."""

from __future__ import annotations

import textwrap

import pytest
from annotations import check_annotated

from quiver.checker import check_text

PRELUDE = """\
dim D = 4
dim C = 3

"""


def check(body: str):
    return check_annotated(PRELUDE + textwrap.dedent(body))


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
