"""The ops of issue 40: cumsum, cumprod, roll, repeat_interleave, expand,
repeat, concat of more than two, stack over any dim, unbind, split,
arange(start, stop, step), linspace; their types and their errors (exact
code, message and range)."""

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
        ("(x: [.. T]) -> [.. T]", "cumsum(x, over=T)"),
        ("(x: [.. T] Prob) -> [.. T] Prob", "roll(cumprod(x, over=-1), 1, over=T)"),
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
        ("(x: [1 D]) -> [T D]", "expand(x, [T D])"),
        ("(x: [b 1] Prob) -> [P b T] Prob", "expand(x, [P b T])"),
        ("(x: [b D]) -> [(b*2) (D*3)]", "repeat(x, (2, 3))"),
        ("(x: [b D]) -> [P b D]", "repeat(x, (P, 1, 1))"),
        ("(x: [b D]) -> [b 15]", "repeat(x, (1, 3))"),
        ("(x: [b T], y: [b D]) -> [b (T+D+T)]", "concat(x, y, x, over=-1)"),
        ("(x: [b T], y: [b D]) -> [b 26]", "concat(x, y, y, x, over=1)"),
        ("(x: [b n]) -> [b (3*n)]", "concat(x, x, x, over=n)"),
        ("(x: [b D]) -> [3 b D]", "stack(x, x, x)"),
        ("(x: [b D]) -> [b 2 D]", "stack(x, x, over=1)"),
        ("(x: [b D]) -> [b D 2]", "stack(x, x, over=-1)"),
        ("(x: [b D]) -> [2 b D]", "stack(x, x, over=-3)"),
        ("(x: [b P D]) -> ([b D], [b D], [b D])", "unbind(x, over=P)"),
        ("(x: [b T]) -> ([b 3], [b 5])", "split(x, (3, 5), over=T)"),
        ("(x: [b T]) -> ([b 3], [b 3], [b 2])", "split(x, 3, over=T)"),
        ("(x: [b (2*n)]) -> ([b n], [b n])", "split(x, (n, n), over=-1)"),
        ("(x: [b P D]) -> [b D P]", "stack(unbind(x, over=P), over=-1)"),
        ("(x: [b T]) -> [b T]", "concat(split(x, (3, 5), over=T), over=-1)"),
        ("(x: [b T], y: [b D]) -> [b (D+T)]", "concat((y, x), over=1)"),
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
        (
            "fn f(x: [T D]) -> [T T]:\n    return expand(x, [T T])\n",
            ("E0956", "expand: dim -1 of [T D] is D, neither 1 nor T", "T"),
        ),
        (
            "fn f(x: [b T D]) -> [T D]:\n    return expand(x, [T D])\n",
            ("E0956", "expand: [b T D] has more dims than [T D]", "[T D]"),
        ),
        (
            "fn f(x: [b T D]) -> [b T D]:\n    return repeat(x, (2, 1))\n",
            ("E0956", "repeat: 2 counts for the 3 dims of [b T D]: one per dim, or more", "(2, 1)"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return repeat(x, 2)\n",
            ("E0301", "repeats of repeat: expected a tuple of counts, one per dim, such as (1, 3), found 2", "2"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return repeat(x, (1, 0))\n",
            ("E0301", "each count of repeat: expected a positive integer literal or a dim, found 0", "0"),
        ),
        (
            "fn f(x: [b T], y: [b D], z: [T]) -> [b T]:\n    return concat(x, y, z, over=T)\n",
            ("E0214", "concat: [b T] and [T] must have the same dims but for the one joined (position -1)", "z"),
        ),
        (
            "fn f(x: [b T], y: [b D], z: [b 2] f64) -> [b T]:\n    return concat(x, y, z, over=-1)\n",
            (
                "E0302",
                "concat needs one element type: expected [b T] Float, found [b 2] f64",
                "concat(x, y, z, over=-1)",
            ),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return concat(x, x, x)\n",
            ("E0403", "concat needs the argument over=", "(x, x, x)"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return stack(x, x, over=3)\n",
            ("E0210", "stack(over=3) needs 3 dims or more, found [b T]", "3"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return stack(x, x, over=T)\n",
            (
                "E0301",
                "over= of stack: expected the new dim's position, an integer literal such as 1 or -1, found T",
                "T",
            ),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return stack(x, x, dim=1)\n",
            ("E0402", "stack has no parameter 'dim'", "dim"),
        ),
        (
            "fn f(x: [b T]) -> [T]:\n    a, c = unbind(x, over=b)\n    return a\n",
            ("E0957", "unbind: the size of b in [b T] is not known when checking, or over 256", "b"),
        ),
        (
            "fn f(x: [b T]) -> [b 3]:\n    a, c = split(x, (3, 4), over=T)\n    return a\n",
            ("E0957", "split: the sizes 3 + 4 add up to 7, not T=8 (the dim of [b T])", "(3, 4)"),
        ),
        (
            "fn f(x: [b n]) -> [b 3]:\n    a, c = split(x, 3, over=n)\n    return a\n",
            (
                "E0957",
                "split: parts of one size need the size of n in [b n] (known when checking, 256 parts at most)",
                "n",
            ),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return concat(x, over=T)\n",
            (
                "E0401",
                "concat takes 2 positional arguments or more, or a tuple of 2 tensors or more, found 1 tensor",
                "(x, over=T)",
            ),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return concat((x, 1.0), over=T)\n",
            ("E0301", "argument 'a' of concat: expected a tuple of tensors, found tuple ([b T], Float)", "(x, 1.0)"),
        ),
        (
            "fn f(x: [b T], y: [b D]) -> [2 b T]:\n    return stack((x, y))\n",
            ("E0214", "stack: every tensor has one shape: [b T], found [b D]", "(x, y)"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return stack((x, nope))\n",
            ("E0101", "unknown name 'nope'", "nope"),
        ),
        (
            "fn f(x: [b T]) -> [b T]:\n    return concat(over=T)\n",
            (
                "E0401",
                "concat takes 2 positional arguments or more, or a tuple of 2 tensors or more, found 0",
                "(over=T)",
            ),
        ),
        (
            "fn f() -> [T] Index[T]:\n    return arange(0, step=2)\n",
            ("E0401", "arange takes a stop before its step, found step= alone", "arange(0, step=2)"),
        ),
    ],
)
def test_misuse_is_one_precise_error(body: str, expected: tuple) -> None:
    got = diags(body)
    assert got == [expected]
