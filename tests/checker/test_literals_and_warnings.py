"""Tensor literals, and the two broadcasting warnings (issue 11)."""

from __future__ import annotations

import pytest
from annotations import spanned

diags = spanned


@pytest.mark.parametrize(
    "ret, expr",
    [
        ("[3]", "[1.0, -2.0, 3.0]"),
        ("[2 2]", "[[1.0, 0.0], [0.0, 1.0]]"),
        ("[3] i64", "[1, 2, -3]"),
        ("[1] i64", "[2,]"),
        ("[1]", "[-1.5]"),
        ("[2 1 2]", "[[[1.0, 2.0]], [[3.0, 4.0]]]"),
    ],
)
def test_literal_types(ret: str, expr: str) -> None:
    assert diags(f"fn f() -> {ret}:\n    return {expr}\n") == []


def test_a_single_integer_in_brackets_is_a_shape() -> None:
    assert diags("fn f() -> [2]:\n    return zeros([2])\n") == []


@pytest.mark.parametrize(
    "expr, message, span",
    [
        (
            "[[1.0, 2.0], [3.0]]",
            "tensor literal: every item is a row of shape [2]; this is a row of shape [1]",
            "[3.0]",
        ),
        ("[1.0, [2.0]]", "tensor literal: every item is a number; this is a row of shape [1]", "[2.0]"),
    ],
)
def test_ragged_literals(expr: str, message: str, span: str) -> None:
    assert diags(f"fn f() -> Int:\n    print({expr})\n    return 1\n") == [("E0214", message, span)]


def test_an_outer_product_by_broadcasting_is_a_warning() -> None:
    src = "fn loss(pred: [b 1], target: [b]) -> []:\n    return mean((pred - target) ** 2)\n"
    assert diags(src) == [
        ("W0201", "'-' broadcasts [b 1] against [b] into [b b]: b twice, an outer product", "pred - target")
    ]
    assert diags("fn p(a: [b 1], c: [1 b]) -> [b b]:\n    return a - c\n") == []  # same rank: meant
    assert diags("dim T = 4\nfn f(x: [b T T], y: [T]) -> [b T T]:\n    return x * y\n") == []  # T twice already
    assert diags("dim D = 4\nfn f(x: [b D], m: [D]) -> [b D]:\n    return x - m\n") == []
    assert diags("fn f(p: [b 1], t: [b]) -> [b b] Bool:\n    return p > t\n") == [
        ("W0201", "'>' broadcasts [b 1] against [b] into [b b]: b twice, an outer product", "p > t")
    ]


def test_labels_of_different_dims_are_a_warning() -> None:
    base = "dim C = 10\ndim K = 10\n\n"
    assert diags(base + "fn agree(p: [b] Index[C], y: [b] Index[K]) -> [b] Bool:\n    return p == y\n") == [
        ("W0301", "'==' mixes labels of different dims: [b] Index[C] and [b] Index[K]", "p == y")
    ]
    assert diags(base + "fn agree(p: [b] Index[C], y: [b] Index[C]) -> [b] Bool:\n    return p == y\n") == []
