"""The ops along a dim and the ranges of issue 40: cumsum, cumprod, roll,
repeat_interleave, arange(start, stop, step), linspace; their types and
their errors (exact code, message and range)."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

P = "dim T = 8\ndim D = 5\ndim P = 3\n\n"

diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        ("(x: [b T]) -> [b T]", "cumsum(x, over=T)"),
        ("(x: [b T] NonNeg) -> [b T] NonNeg", "cumsum(x, over=-1)"),
        ("(x: [b T] Prob) -> [b T] Prob", "cumprod(x, over=T)"),
        ("(x: [b T] f64) -> [b T] f64", "cumprod(x, over=b)"),
        ("(x: [b T] Bool) -> [b T] i64", "cumsum(x, over=T)"),
        ("(x: [b T] Index[D]) -> [b T] i64", "cumsum(x, over=T)"),
        ("(x: [b T] Index[D]) -> [b T] Index[D]", "roll(x, -1, over=T)"),
        ("(x: [b T], k: Int) -> [b T]", "roll(x, k, over=0)"),
        ("(x: [b T]) -> [b (T*3)]", "repeat_interleave(x, 3, over=T)"),
        ("(x: [b T]) -> [b 24]", "repeat_interleave(x, 3, over=T)"),
        ("(x: [b T]) -> [(b*P) T]", "repeat_interleave(x, P, over=b)"),
        ("(x: [n]) -> [(n*n)]", "repeat_interleave(x, n, over=n)"),
        ("() -> [6] Index[T]", "arange(2, T)"),
        ("() -> [(T-2)] Index[T]", "arange(2, T)"),
        ("() -> [4] Index[T]", "arange(0, T, 2)"),
        ("() -> [3] Index[D]", "arange(0, D, 2)"),
        ("() -> [((D+1)/2)] Index[D]", "arange(0, D, 2)"),
        ("(x: [n]) -> [(n-1)] Index[n]", "arange(1, n)"),
        ("(x: [n]) -> [((n+1)/2)] Index[n]", "arange(0, n, 2)"),
        ("(x: [n]) -> [n] i64", "arange(P, P + n) as i64"),
        ("() -> [T]", "linspace(0.0001, 0.02, T)"),
        ("(x: [n]) -> [n]", "linspace(-1, 1, n)"),
        ("() -> [T]", "cumprod(1.0 - linspace(1e-4, 0.02, T), over=T)"),
    ],
)
def test_types_that_fit(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "fn f(x: [b T]) -> [b T]:\n    return cumsum(x, over=D)\n",
            ("E0204", "over=D: D is not a dim of [b T]", "D"),
        ),
        (
            "fn f(x: [b T] Prob) -> [b T] Prob:\n    return cumsum(x, over=T)\n",
            ("E0304", "return value: expected [b T] Prob, found [b T] Float", "cumsum(x, over=T)"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return cumprod(x)\n",
            ("E0403", "cumprod needs the argument over=", "(x)"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return roll(x, 1.5, over=T)\n",
            ("E0301", "shifts of roll: expected Int, found number Float", "1.5"),
        ),
        (
            "fn f(x: [b T]) -> [b (T*2)]:\n    return repeat_interleave(x, 0, over=T)\n",
            ("E0301", "repeats of repeat_interleave: expected a positive integer literal or a dim, found 0", "0"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return repeat_interleave(x, 2, over=T)\n",
            ("E0201", "return value: expected [b T=8], found [b (T*2)=16]", "repeat_interleave(x, 2, over=T)"),
        ),
        (
            "fn f() -> [T] Index[T]:\n    return arange(T, 2)\n",
            ("E0955", "arange: the range from T up to 2 holds no value", "T, 2"),
        ),
        (
            "fn f() -> [T] Index[T]:\n    return arange(3, 3, 1)\n",
            ("E0955", "arange: the range from 3 up to 3 holds no value", "3, 3"),
        ),
        (
            "fn f() -> [T] Index[T]:\n    return arange(0, T, 0)\n",
            ("E0208", "a dim is a positive integer, found 0", "0"),
        ),
        (
            "fn f() -> [T] Index[T]:\n    return arange(-1, T)\n",
            (
                "E0301",
                "start of arange: expected a dim (a dim constant, a generic dim, a number or dim arithmetic of them), "
                "found -1",
                "-1",
            ),
        ),
        (
            "fn f() -> [4] Index[T]:\n    return arange(0, T / 2)\n",
            (
                "E0301",
                "stop of arange: expected a dim, an integer literal or + - * of them, found a division; "
                "name the size as a dim",
                "T / 2",
            ),
        ),
        (
            "fn f() -> [T]:\n    return linspace(0.0, 1.0, 2.5)\n",
            (
                "E0301",
                "steps of linspace: expected a dim (a dim constant, a generic dim, a number or dim arithmetic of them), "
                "found 2.5",
                "2.5",
            ),
        ),
        (
            "fn f(x: [b T]) -> [T]:\n    return linspace(x, 1.0, T)\n",
            ("E0301", "start of linspace: expected Float, found tensor [b T]", "x"),
        ),
    ],
)
def test_misuse_is_one_precise_error(body: str, expected: tuple) -> None:
    got = diags(body)
    assert got == [expected]
