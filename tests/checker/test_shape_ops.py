"""Shape operations (issue 11): reshape, permute, concat, stack, chunk."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

P = "dim T = 8\ndim E = 64\ndim NH = 4\ndim HD = E / NH\n\n"


diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        ("(x: [b T E]) -> [b NH T HD]", "permute(reshape(x, [b T NH HD]), [b NH T HD])"),
        ("(x: [b NH T HD]) -> [b T E]", "reshape(permute(x, [b T NH HD]), [b T (NH*HD)])"),
        ("(x: [b E], y: [b T]) -> [b (E+T)]", "concat(x, y, over=-1)"),
        ("(x: [b E], y: [b T]) -> [b 72]", "concat(x, y, over=E)"),
        ("(x: [b t], y: [b t]) -> [b (2*t)]", "concat(x, y, over=-1)"),
        ("(x: [b E], y: [b E]) -> [2 b E]", "stack(x, y)"),
        ("(x: [b t]) -> [(b*t)]", "reshape(x, [(b*t)])"),
    ],
)
def test_shapes_that_fit(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


def test_a_reshapes_element_counts_show_the_shapes_without_refinements() -> None:
    # NonNeg and Prob are no part of a count: the shapes only
    body = "fn f(x: [b 1 T E]) -> [b 500] Prob:\n    return reshape(softmax(x, over=E), [b 500])\n"
    assert diags(body) == [("E0214", "reshape: [b 1 T E] has 512*b elements and [b 500] has 500*b", "[b 500]")]
    body = "fn f(x: [b T E] i64) -> [b 500] i64:\n    return reshape(x, [b 500])\n"
    assert diags(body) == [("E0214", "reshape: [b T E] has 512*b elements and [b 500] has 500*b", "[b 500]")]


def test_chunk_gives_a_tuple_of_equal_parts() -> None:
    assert (
        diags("fn k(x: [b (4*E)]) -> [b E]:\n    i, f, g, o = chunk(x, 4, over=-1)\n    return i * f + g * o\n") == []
    )
    assert diags("fn k(x: [b t]) -> [b (t/2)]:\n    i, f = chunk(x, 2, over=-1)\n    return i\n") == []


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "fn f(x: [b T E]) -> [b T NH 15]:\n    return reshape(x, [b T NH 15])\n",
            ("E0214", "reshape: [b T E] has 512*b elements and [b T NH 15] has 480*b", "[b T NH 15]"),
        ),
        (
            "fn f(x: [b T T]) -> [b T T]:\n    return permute(x, [b T T])\n",
            ("E0214", "permute: T is more than one dim of [b T T]; give the dims different names", "T"),
        ),
        (
            "fn f(x: [b T E]) -> [b E]:\n    return permute(x, [b E])\n",
            ("E0214", "permute: every dim of [b T E] is named once; missing: T", "[b E]"),
        ),
        (
            "fn f(x: [b T E]) -> [b HD T E]:\n    return permute(x, [b HD T E])\n",
            ("E0214", "permute: HD is not a dim of [b T E]", "HD"),
        ),
        (
            "fn f(x: [b E], y: [T E]) -> [b 72]:\n    return concat(x, y, over=E)\n",
            ("E0214", "concat: [b E] and [T E] must have the same dims but for the one joined (position -1)", "y"),
        ),
        (
            "fn f(x: [b E], y: [b T]) -> [2 b E]:\n    return stack(x, y)\n",
            ("E0214", "stack: every tensor has one shape: [b E], found [b T]", "y"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    i, j, k = chunk(x, 3, over=T)\n    return x\n",
            ("E0214", "chunk: 3 parts do not divide T (8 leaves 2)", "3"),
        ),
    ],
)
def test_shapes_that_do_not_fit(body: str, expected: tuple[str, str, str]) -> None:
    assert diags(body) == [expected]


def test_chunk_needs_a_literal_count() -> None:
    assert diags("fn f(x: [b E], n: Int) -> [b E]:\n    i, j = chunk(x, n, over=E)\n    return x\n") == [
        ("E0301", "n of chunk: expected a positive integer literal (the number of parts), found this expression", "n")
    ]
