"""`%` in dim arithmetic (issue 40): the remainder as Python's, `(N%4)` with
N = 10 is 2, and of a generic dim the polynomial `n - 4*(n/4)`; in dim
declarations, shapes and dim arguments; a remainder of 0 is E0212 where it is written.
Both parsers read it alike and the formatter prints it back."""

from __future__ import annotations

from annotations import spanned

from quiver.checker import ast as A
from quiver.checker import dimexpr as DX
from quiver.checker.formatter import format_text, shape
from quiver.checker.parser import parse_item


def test_the_remainder_as_python() -> None:
    for n in (-7, -1, 0, 3, 10):
        for d in (-3, 2, 4):
            p = DX.mod(DX.const(n), DX.const(d))
            assert p is not None and DX.value(p) == n % d
    assert DX.mod(DX.const(3), DX.const(0)) is None


def test_of_a_generic_dim_a_polynomial() -> None:
    n, four = DX.var("n"), DX.const(4)
    div = DX.div(n, four)
    assert div is not None
    assert DX.mod(n, four) == DX.sub(n, DX.mul(four, div))
    assert DX.mod(DX.mul(four, n), four) == DX.ZERO  # (4*n)%4 is 0


def test_in_declarations_shapes_and_arguments() -> None:
    src = """\
dim N = 10
dim R = N % 4

fn rem() -> [(N % 4) 3]:
    return zeros([R 3])

fn pad(x: [(n%4) 2]) -> [(n - 4*(n//4)) 2]:
    return x

fn idx() -> [2] i64:
    return arange(N % 4)
"""
    assert spanned(src) == []


def test_a_wrong_remainder_and_a_remainder_of_zero() -> None:
    src = "dim N = 10\n\nfn rem() -> [(N % 3) 3]:\n    return zeros([2 3])\n"
    assert [c for c, _, _ in spanned(src)] == ["E0201"]
    src = "dim N = 10\n\nfn rem(x: [(N % 0)]) -> Int:\n    return 0\n"
    assert [(c, t) for c, _, t in spanned(src)] == [("E0208", "0")]  # a dim literal is never 0, as in (N/0)
    src = "dim N = 8\n\nfn rem(x: [(N % 4)]) -> Int:\n    return 0\n"
    assert [(c, t) for c, _, t in spanned(src)] == [("E0212", "(N % 4)")]


def test_both_parsers_and_the_formatter_read_it_alike() -> None:
    text = "model Conv[Ci, K = 3, P = K // 2 + K % 2]:\n    param w: [Ci (K%2)] = zeros\n"
    fast = parse_item(text).item
    assert isinstance(fast, A.ModelDecl)
    from quiver.checker import parser as P

    saved = P.fast_parse
    try:
        P.fast_parse = lambda _text: None  # type: ignore[assignment]
        slow = parse_item(text).item
    finally:
        P.fast_parse = saved
    assert shape(fast) == shape(slow)
    assert format_text(text).text == text
