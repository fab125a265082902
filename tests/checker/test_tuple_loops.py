"""Loops over tuples (issue 40): `for y in (a, c):` runs its body once per
element, each checked with that element's own type (so a tuple of different
shapes is fine where the body fits each); `zip` of tuples of one length and
`enumerate` of a tuple, in a `for` head (E0966 for tuples of different
lengths, something else than a tuple); `for h in hs` and `zip` of lists."""

from __future__ import annotations

from annotations import check_annotated, spanned

from quiver.checker import check_text


def test_a_tuple_is_walked_element_by_element() -> None:
    src = """\
fn f(a: [4], c: [4], d: [5]) -> [4]:
    s = zeros([4])
    for y in (a, c):
        s = s + y
    for z in (a, d):
        print(sum(z))
    return s
"""
    assert check_text(src).errors == []


def test_an_element_the_body_does_not_fit_is_reported_once() -> None:
    check_annotated(
        """
        fn f(a: [4], d: [5]) -> [4]:
            s = zeros([4])
            for y in (a, d, d):
                s = s + y
        #           ^^^^^ E0202: cannot broadcast [4] + [5]: 4 and 5 differ
            return s
        """,
        dedent=True,
    )


def test_zip_pairs_tuples_and_enumerate_numbers_them() -> None:
    src = """\
fn f(a: [4], b: [4], c: [3], d: [3]) -> [4]:
    s = zeros([4])
    for p, q in zip((a, c), (b, d)):
        print(sum(p * q))
    for i, x in enumerate((a, b)):
        s = s + x * (i as Float)
    return s
"""
    assert check_text(src).errors == []


def test_zip_of_tuples_of_different_lengths() -> None:
    check_annotated(
        """
        fn f(a: [4], b: [4], c: [4]) -> [4]:
            s = zeros([4])
            for p, q in zip((a, b), (c,)):
        #               ^^^^^^^^^^^^^^^^^ E0966: zip(...): the tuples have 2 and 1 elements: zip pairs tuples of one length
                s = s + p * q
            return s
        """,
        dedent=True,
    )


def test_zip_of_something_else_than_a_tuple() -> None:
    found = spanned("""\
fn f(a: [4], b: [4]) -> [4]:
    s = zeros([4])
    for p, q in zip((a, b), a):
        s = s + p * q
    return s
""")
    assert [(c, t) for c, _, t in found] == [("E0966", "a")]
    assert "argument 1 is tensor [4]" in found[0][1]


def test_unpacking_an_element_into_too_many_names() -> None:
    found = spanned("""\
fn f(a: [4], b: [4]) -> [4]:
    for p, q in (a, b):
        print(p, q)
    return a
""")
    assert [c for c, _, _ in found] == ["E0410"]


def test_zip_and_enumerate_of_lists() -> None:
    src = """\
fn f(xs: [T 4], ys: [T 4]) -> [4]:
    hs = []
    gs = []
    for t in range(T):
        x = xs[t]
        y = ys[t]
        hs.append(x)
        gs.append(y)
    s = zeros([4])
    for h, g in zip(hs, gs):
        s = s + h * g
    for i, h in enumerate(hs):
        s = s + h
    for h in hs:
        s = s - h
    return s
"""
    assert check_text(src).errors == []
