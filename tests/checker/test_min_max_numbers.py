"""`min` and `max` of numbers (issue 40, sizes as programs compute them):
of two Ints or more an Int, with a Float among them a Float, dims as values
included (`min(top_k, V)`, `max(1, K // 2)`); beside them the tensor
reductions `max(x)`, `max(x, over=D)` keep their types. A mix that fits
neither form is one E0960 on the argument that does not fit; as a size
(`arange(min(T, 8))`, `padding=max(K // 2, 1)`) a min or max of sizes with
values is the literal it comes to."""

from __future__ import annotations

from annotations import spanned

from quiver.checker import check_text, ide


def types_of(src: str, *names: str) -> list[str]:
    a = check_text(src)
    assert a.errors == [], a.errors
    out = []
    for name in names:
        h = ide.hover(a, src.index(f"{name} = "))
        assert h is not None, name
        out.append(h.markdown.split("\n")[1])
    return out


def test_numbers_give_a_number_an_int_when_every_one_is() -> None:
    src = """\
dim V = 5
dim K = 3

fn f(k: Int, t: Float, x: [n] f32):
    a = max(k, 2)
    b = min(k, V, 7)
    c = max(k, 0.5)
    d = max(1, K // 2)
    e = min(t, 1)
    r = max(x)
    s = min(x, over=n)
    print(a, b, c, d, e, r, s)
"""
    assert types_of(src, "a", "b", "c", "d", "e", "r", "s") == [
        "(local) a: Int",
        "(local) b: Int",
        "(local) c: Float",
        "(local) d: Int",
        "(local) e: Float",
        "(local) r: []",
        "(local) s: []",
    ]


def test_a_tensor_among_numbers_is_one_error_on_it() -> None:
    src = "fn f(x: [n] f32, k: Int) -> Int:\n    return max(k, x)\n"
    found = spanned(src)
    assert [(c, t) for c, _, t in found] == [("E0960", "x")]
    assert "argument 2 is tensor [n]" in found[0][1] and "maximum(a, b)" in found[0][1]


def test_two_tensors_point_to_maximum() -> None:
    src = "fn f(x: [n] f32, y: [n] f32) -> [n] f32:\n    return min(x, y)\n"
    found = spanned(src)
    assert [(c, t) for c, _, t in found] == [("E0960", "y")]
    assert "minimum(a, b)" in found[0][1]


def test_one_number_and_a_keyword_of_the_tensor_form_are_errors() -> None:
    assert [(c, t) for c, _, t in spanned("fn f(k: Int) -> Int:\n    return min(k)\n")] == [("E0960", "k")]
    found = spanned("fn f(k: Int) -> Int:\n    return max(k, 2, keep=True)\n")
    assert [(c, t) for c, _, t in found] == [("E0960", "keep=True")]


def test_a_bool_or_string_is_not_a_number_here() -> None:
    found = spanned('fn f(k: Int) -> Int:\n    return max(k, "a")\n')
    assert [(c, t) for c, _, t in found] == [("E0960", '"a"')]


def test_an_unknown_name_is_reported_once() -> None:
    found = spanned("fn f(k: Int) -> Int:\n    return max(k, zz)\n")
    assert [c for c, _, _ in found] == ["E0101"]


def test_a_float_result_where_an_int_is_declared() -> None:
    found = spanned("fn f(k: Int) -> Int:\n    return max(k, 2.0)\n")
    assert [c for c, _, _ in found] == ["E0301"]


def test_min_and_max_of_sizes_are_sizes() -> None:
    src = """\
dim T = 12
dim K = 5

fn r() -> [8] i64:
    return arange(min(T, 8))

fn s() -> [3] i64:
    return arange(max(1, K // 2, 3))

fn q(x: [b 2 h v], k: [3 2 K K]) -> [b 3 h v]:
    return conv2d(x, k, padding=max(K // 2, 1))

fn p() -> [2] i64:
    return arange(K // 2)
"""
    assert spanned(src) == []


def test_a_wrong_size_from_min_is_caught() -> None:
    src = "dim T = 12\n\nfn r() -> [12] i64:\n    return arange(min(T, 8))\n"
    assert [c for c, _, _ in spanned(src)] == ["E0201"]


def test_min_of_a_generic_dim_is_no_size() -> None:
    src = "fn g(x: [n] f32) -> [n] i64:\n    return arange(min(n, 8))\n"
    found = spanned(src)
    assert [(c, t) for c, _, t in found] == [("E0301", "min(n, 8)")]
