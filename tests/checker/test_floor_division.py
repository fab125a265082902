"""Floor division `//` (issue 40, sizes as programs compute them): on Ints
and Floats as Python's, on tensors as torch.floor_divide, in dim
declarations, dims of types and dim arguments (`padding=K // 2`), and in
constants; both parsers and the formatter read it alike, and `**` stays one
operator beside it."""

from __future__ import annotations

from annotations import spanned

from quiver.checker import ast as A
from quiver.checker import check_text, ide
from quiver.checker.formatter import format_text
from quiver.checker.parser import parse_item


def types_of(src: str, *names: str) -> list[str]:
    a = check_text(src)
    assert a.errors == [], a.errors
    out = []
    for name in names:
        h = ide.hover(a, src.index(f"{name} = ") + 0)
        assert h is not None, name
        out.append(h.markdown.split("\n")[1])
    return out


def test_numbers_floor_as_python_does() -> None:
    src = (
        "fn main():\n    a = 7 // 2\n    b = 7.5 // 2.0\n    c = 7 // 2.0\n"
        "    x = zeros([3] i64) // 2\n    y = ones([3]) // 0.5\n    print(a, b, c, x, y)\n"
    )
    assert types_of(src, "a", "b", "c", "x", "y") == [
        "(local) a: Int",
        "(local) b: Float",
        "(local) c: Float",
        "(local) x: [3] i64",
        "(local) y: [3]",
    ]


def test_sizes_computed_with_floor_division() -> None:
    src = """\
dim K = 5
dim P = K // 2
const N = 7 // 2

fn same(x: [b 2 h v], k: [3 2 K K]) -> [b 3 h v]:
    return conv2d(x, k, padding=K // 2)

fn main():
    z = zeros([(K // 2) N])
    print(P, z, same(ones([1 2 8 8]), ones([3 2 K K])))
"""
    a = check_text(src)
    assert a.errors == []
    assert a.globals.names.dim_values["P"] == 2
    assert a.globals.names.const_values["N"] == ("Int", 3)


def test_a_floored_padding_that_changes_the_size_is_caught() -> None:
    # K // 2 keeps the size only for an odd K: with K = 4 the output grows by one
    src = """\
dim K = 4

fn same(x: [b 2 h v], k: [3 2 K K]) -> [b 3 h v]:
    return conv2d(x, k, padding=K // 2)
"""
    assert [c for c, _, _ in spanned(src)] == ["E0201"]


def test_division_by_zero_in_a_dim_is_reported_where_it_is() -> None:
    src = "dim K = 5\ndim P = K // 0\n"
    assert [(c, text) for c, _, text in spanned(src)] == [("E0212", "K // 0")]


def test_both_parsers_and_the_formatter_read_it_alike() -> None:
    text = "fn f(n: Int, x: [(n//2)]) -> Int:\n    return n // 2 ** 2 // 3\n"
    fast = parse_item(text).item
    assert isinstance(fast, A.FnDecl)
    from quiver.checker import parser as P

    saved = P.fast_parse
    try:
        P.fast_parse = lambda _text: None  # type: ignore[assignment]
        slow = parse_item(text).item
    finally:
        P.fast_parse = saved
    from quiver.checker.formatter import shape

    assert shape(fast) == shape(slow)
    ret = fast.body[0]
    assert isinstance(ret, A.Return)
    e = ret.values[0]
    # `//` groups like `*` (left), `**` binds tighter: (n // (2 ** 2)) // 3
    assert isinstance(e, A.Binary) and e.op == "//" and isinstance(e.left, A.Binary) and e.left.op == "//"
    assert isinstance(e.left.right, A.Binary) and e.left.right.op == "**"
    assert format_text(text).text == text
    assert format_text("fn f(n: Int) -> Int:\n    return n//2\n").text == "fn f(n: Int) -> Int:\n    return n // 2\n"
