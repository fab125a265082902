"""Creation functions (issue 11): tril, triu, eye, full, rand, multinomial."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

P = "dim T = 4\ndim V = 5\n\n"


diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        ("(x: [b T T]) -> [b T T]", "tril(x)"),
        ("(x: [T V] Prob) -> [T V] Prob", "triu(x, diagonal=1)"),
        ("(x: [T T] Index[V]) -> [T T] Index[V]", "tril(x, diagonal=-1)"),
        ("(x: [T T]) -> [T T] Bool", "tril(ones([T T] Bool))"),
        ("(x: [b n]) -> [n n]", "eye(n)"),
        ("() -> [T T]", "eye(T)"),
        ("() -> [3 3]", "eye(3)"),
        ("() -> [T V] NonNeg", "full([T V] NonNeg, 0.5)"),
        ("() -> [T] Prob", "full([T] Prob, 1)"),
        ("() -> [T] i64", "full([T] i64, -3)"),
        ("() -> [T] Index[V]", "full([T] Index[V], 4)"),
        ("(x: [b n]) -> [b] Index[n]", "full([b] Index[n], 0)"),
        ("() -> [T] Bool", "full([T] Bool, True)"),
        ("(s: Float) -> [T] f64", "full([T] f64, s)"),
        ("() -> [T V] Prob", "rand([T V], seed=1)"),
        ("() -> [T] NonNeg", "rand([T], seed=1)"),
        ("() -> [T] f64", "rand([T] f64, seed=1)"),
        ("(x: [b V]) -> [b] Index[V]", "multinomial(softmax(x, over=V), over=V, seed=0)"),
        ("(x: [V b]) -> [b] Index[V]", "multinomial(exp(x), over=0, seed=0)"),
        ("(x: [V]) -> [] Index[V]", "multinomial(sigmoid(x), seed=2, over=V)"),
    ],
)
def test_creations_that_check(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "fn f(x: [T]) -> [T]:\n    return tril(x)\n",
            ("E0210", "tril needs 2 dims or more, found [T]", "x"),
        ),
        (
            "fn f(x: [T T]) -> [T T]:\n    return triu(x, diagonal=0.5)\n",
            ("E0301", "diagonal of triu: expected Int, found number Float", "0.5"),
        ),
        (
            "fn f(x: [T]) -> [T T]:\n    return eye(x)\n",
            (
                "E0301",
                "n of eye: expected a dim (a dim constant, a generic dim, a number or dim arithmetic of them), found x",
                "x",
            ),
        ),
        (
            "fn f() -> [T] i64:\n    return full([T] i64, 1.5)\n",
            ("E0302", "value of full for [T] i64: expected Int, found Float", "1.5"),
        ),
        (
            "fn f() -> [T] Bool:\n    return full([T] Bool, 1)\n",
            ("E0302", "value of full for [T] Bool: expected Bool, found Int", "1"),
        ),
        (
            "fn f() -> [T]:\n    return full([T], True)\n",
            ("E0302", "value of full for [T] Float: expected Int or Float, found Bool", "True"),
        ),
        (
            "fn f(x: [T]) -> [T]:\n    return full([T], x)\n",
            ("E0301", "value of full for [T] Float: expected a number, found tensor [T]", "x"),
        ),
        (
            "fn f() -> [T] NonNeg:\n    return full([T] NonNeg, -1.0)\n",
            ("E0304", "value of full for [T] NonNeg: expected a number >= 0, found -1.0", "-1.0"),
        ),
        (
            "fn f() -> [T] Prob:\n    return full([T] Prob, 1.5)\n",
            ("E0304", "value of full for [T] Prob: expected a number in [0, 1], found 1.5", "1.5"),
        ),
        (
            "fn f(s: Float) -> [T] Prob:\n    return full([T] Prob, s)\n",
            ("E0304", "value of full for [T] Prob: expected a number in [0, 1], found s", "s"),
        ),
        (
            "fn f() -> [T] Index[V]:\n    return full([T] Index[V], 5)\n",
            (
                "E0305",
                "value of full for [T] Index[V]: expected an integer in 0..4 known when the program is checked "
                "(a literal, or a dim or Int constant), found 5",
                "5",
            ),
        ),
        (
            "fn f(x: [b n]) -> [b] Index[n]:\n    return full([b] Index[n], 1)\n",
            ("E0305", "value of full for [b] Index[n]: expected 0, found 1", "1"),
        ),
        (
            "fn f() -> [T] i64:\n    return rand([T] i64, seed=0)\n",
            ("E0309", "element type i64: rand gives floats in [0, 1) (Float, f16, bf16 or f64)", "[T] i64"),
        ),
        (
            "fn f() -> [T]:\n    return rand([T], seed=0.5)\n",
            ("E0301", "seed: expected Int, found number Float", "0.5"),
        ),
        (
            "fn f(x: [b V]) -> [b] Index[V]:\n    return multinomial(x, over=V, seed=0)\n",
            (
                "E0304",
                "p of multinomial: expected weights known to be >= 0 (NonNeg or Prob, as softmax gives), found [b V]",
                "x",
            ),
        ),
        (
            "fn f(x: [b V] Prob) -> [b] Index[V]:\n    return multinomial(x, over=T, seed=0)\n",
            ("E0204", "over=T: T is not a dim of [b V] Prob", "T"),
        ),
        (
            "fn f(x: [b V] Prob) -> [b] Index[V]:\n    return multinomial(x, over=V)\n",
            ("E0403", "multinomial needs the argument seed=", "(x, over=V)"),
        ),
        (
            "fn f(x: [b V] Prob) -> [b] Index[T]:\n    return multinomial(x, over=V, seed=1)\n",
            ("E0305", "return value: expected [b] Index[T], found [b] Index[V]", "multinomial(x, over=V, seed=1)"),
        ),
    ],
)
def test_creations_that_do_not_check(body: str, expected: tuple[str, str, str]) -> None:
    assert diags(body) == [expected]


def test_a_random_creation_names_the_element_types_it_makes():
    # randn, randint and rand share their reader: each says what it makes, on the shape
    src = (
        "fn main():\n"
        "    a = randn([4 V] Index[V], seed=1)\n"
        "    b = randint([4 V], seed=1)\n"
        "    c = rand([4 V] Index[V], seed=1)\n"
        "    d = randn([4 V] Prob, seed=1)\n"
        "    print(a, b, c, d)\n"
    )
    assert diags(src) == [
        (
            "E0309",
            "element type Index[V]: randn gives plain floats (Float, f16, bf16 or f64)",
            "[4 V] Index[V]",
        ),
        ("E0309", "element type Float: randint needs an Index[C] element type, as in [64] Index[C]", "[4 V]"),
        ("E0309", "element type Index[V]: rand gives floats in [0, 1) (Float, f16, bf16 or f64)", "[4 V] Index[V]"),
        ("E0309", "element type Prob: randn gives plain floats (Float, f16, bf16 or f64)", "[4 V] Prob"),
    ]
