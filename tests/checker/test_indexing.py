"""Indexing by labels (embeddings), arange, one_hot and slices (issue 11)."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

from quiver.checker import check_text, ide

PRELUDE = "dim V = 10\ndim E = 4\ndim K = 10\ndim T = 6\ndim C = 3\n\nmodel M:\n    param emb: [V E] = zeros\n    param pos: [T E] = zeros\n\n"


diags = partial(spanned, prelude=PRELUDE)


def test_an_embedding_and_positions() -> None:
    body = "fn embed(m: M, tok: [b T] Index[V]) -> [b T E]:\n    return m.emb[tok] + m.pos[arange(T)]\n"
    assert diags(body) == []
    hint = [
        h.label
        for h in ide.inlay_hints(
            check_text(PRELUDE + "fn f(m: M, tok: [b T] Index[V]):\n    h = m.emb[tok]\n    print(h)\n")
        )
    ]
    assert hint == [": [b T E]"]


@pytest.mark.parametrize(
    "labels, found",
    [("[b T] Index[K]", "[b T] Index[K]"), ("[b T] i64", "[b T] i64")],
)
def test_labels_must_index_the_first_dim(labels: str, found: str) -> None:
    assert diags(f"fn embed(m: M, tok: {labels}) -> [b T E]:\n    return m.emb[tok]\n") == [
        (
            "E0305",
            f"index into m.emb ([V E]) by labels of its first dim V: expected [b T] Index[V], found {found}",
            "tok",
        )
    ]


def test_one_hot() -> None:
    assert diags("fn f(y: [b] Index[C]) -> [b C]:\n    return one_hot(y, over=C)\n") == []
    assert diags("fn f(y: [b] Index[C]) -> [b V]:\n    return one_hot(y, over=V)\n") == [
        ("E0305", "labels of one_hot: expected [b] Index[V], found [b] Index[C]", "y")
    ]
    assert diags("fn f(y: [b] Index[C]) -> [b C]:\n    return one_hot(y, over=y)\n") == [
        (
            "E0301",
            "over of one_hot: expected a dim (a dim constant, a generic dim, a number or dim arithmetic of them), found y",
            "y",
        )
    ]


def test_arange_of_a_generic_dim() -> None:
    assert diags("fn f(x: [t E]) -> [t E]:\n    return x + zeros([t E])[arange(t)]\n") == []


@pytest.mark.parametrize(
    "expr, ret",
    [("x[2:5]", "[3 E]"), ("x[:2]", "[2 E]"), ("x[4:]", "[2 E]"), ("x[-2:]", "[2 E]"), ("x[:-1]", "[5 E]")],
)
def test_slices_of_a_known_dim(expr: str, ret: str) -> None:
    assert diags(f"fn f(x: [T E]) -> {ret}:\n    return {expr}\n") == []


def test_slices_of_a_generic_dim_are_symbolic() -> None:
    assert diags("fn f(x: [t E]) -> [(t-1) E]:\n    return x[1:]\n") == []
    assert diags("fn f(x: [t E]) -> [t E]:\n    return x[1:]\n") == [
        ("E0201", "return value: expected [t E], found [(t-1) E]", "x[1:]")
    ]


@pytest.mark.parametrize(
    "expr, problem, span",
    [
        ("x[6:10]", "it reaches past the end of T", "6:10"),
        ("x[3:3]", "it keeps 0 of T", "3:3"),
        ("x[5:2]", "it keeps -3 of T", "5:2"),
    ],
)
def test_slices_out_of_range(expr: str, problem: str, span: str) -> None:
    assert diags(f"fn f(x: [T E]) -> Int:\n    print({expr})\n    return 1\n") == [
        ("E0213", f"slice of T: {problem}", span)
    ]


def test_slice_bounds_are_ints() -> None:
    assert diags("fn f(x: [T E]) -> Int:\n    print(x[:2.0])\n    return 1\n") == [
        ("E0301", "slice bound: expected Int, found number Float", "2.0")
    ]
