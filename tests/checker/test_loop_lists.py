"""Lists built in a body (issue 40: makemore's `hiddens.append(h)` then
`torch.stack(hiddens, 1)`, time_sequence_prediction's `outputs += [output]`):
the length the checker knows (one append per round of `for t in range(T)`
is `T`, two loops `T + F`), the one element type (E0961), a list nothing is
appended to (E0962), a length left to the run (E0963) with its reason, a
list shared or passed on (E0964), misused methods (E0965), a literal index
past the end (E0967); `len`, indexing and `for` over a list."""

from __future__ import annotations

from annotations import check_annotated, spanned

from quiver.checker import check_text, ide


def local_types(src: str, *names: str) -> list[str]:
    a = check_text(src)
    assert a.errors == [], a.errors
    out = []
    for name in names:
        h = ide.hover(a, src.index(f"\n    {name} = ") + 5)
        assert h is not None, name
        out.append(h.markdown.split("\n")[1])
    return out


def test_one_append_per_round_gives_the_loop_s_dim() -> None:
    src = """\
fn run(xs: [T b I], w: [I H]) -> [b T H]:
    hs = []
    for t in range(T):
        h = xs[t] @ w
        hs.append(h)
    s = stack(hs, over=1)
    return s
"""
    assert local_types(src, "hs", "s") == ["(local) hs: list[0] of nothing", "(local) s: [b T H]"]


def test_two_loops_and_appends_outside_them_add_up() -> None:
    src = """\
fn run(xs: [T b I], ys: [F b I], x0: [b I]) -> [(1+T+2*F) b I]:
    hs = [x0]
    for t in range(T):
        h = xs[t]
        hs += [h]
    for f in range(F):
        g = ys[f]
        hs.append(g)
        hs += [g]
    return stack(hs)
"""
    assert check_text(src).errors == []


def test_a_list_assigned_anew_in_its_loop_has_a_length_left_to_the_run() -> None:
    found = spanned("""\
fn run(ys: [F b I]) -> [F b I]:
    hs = []
    for f in range(F):
        g = ys[f]
        hs = hs + [g]
    return stack(hs)
""")
    assert [(c, t) for c, _, t in found] == [("E0963", "hs")]
    assert "assigned anew in a loop" in found[0][1]


def test_nested_loops_multiply_and_concat_joins_along_a_dim() -> None:
    src = """\
fn run(xs: [T K D]) -> [(T*K) D]:
    hs = []
    for t in range(T):
        for k in range(K):
            row = xs[t, k]
            hs.append(row)
    s = stack(hs)
    c = concat(hs, over=D)
    n = len(hs)
    first = hs[0]
    print(c, n, first)
    return s
"""
    assert local_types(src, "s", "c", "n", "first") == [
        "(local) s: [(K*T) D]",
        "(local) c: [((K*T)*D)]",
        "(local) n: Int",
        "(local) first: [D]",
    ]


def test_element_of_another_type_is_one_error_at_the_append() -> None:
    check_annotated(
        """
        fn f(x: [4], y: [5]) -> [2 4]:
            hs = []
            hs.append(x)
            hs.append(y)
        #             ^ E0961: hs: the element appended here, y, is [5], and the elements before it are [4]: a list holds elements of one type
            return stack(hs)
        """,
        dedent=True,
    )


def test_stacking_a_list_nothing_is_appended_to() -> None:
    check_annotated(
        """
        fn f(x: [4]) -> [1 4]:
            hs = []
            return stack(hs)
        #                ^^ E0962: hs is a list that nothing is appended to: stack needs an element
        """,
        dedent=True,
    )


def test_an_append_under_an_if_leaves_the_length_to_the_run() -> None:
    check_annotated(
        """
        fn f(xs: [T 4]) -> [T 4]:
            hs = []
            for t in range(T):
                if t > 0:
                    hs.append(xs[t])
            return stack(hs)
        #                ^^ E0963: stack of hs: its length is not known when the program is checked (it is appended to under an `if`), and it becomes a dim of the result
        """,
        dedent=True,
    )


def test_a_while_loop_and_a_break_leave_the_length_unknown() -> None:
    found = spanned("""\
fn f(xs: [T 4]) -> [T 4]:
    hs = []
    i = 0
    while i < 3:
        hs.append(xs[i])
        i = i + 1
    return stack(hs)
""")
    assert [(c, t) for c, _, t in found] == [("E0963", "hs")]
    assert "`while` loop" in found[0][1]
    found = spanned("""\
fn f(xs: [T 4]) -> [T 4]:
    hs = []
    for t in range(T):
        hs.append(xs[t])
        if t > 2:
            break
    return stack(hs)
""")
    assert [(c, t) for c, _, t in found] == [("E0963", "hs")]
    assert "`break` or `continue`" in found[0][1]


def test_indexing_and_iterating_need_no_length() -> None:
    src = """\
fn f(xs: [T 4]) -> [4]:
    hs = []
    for t in range(T):
        if t > 0:
            hs.append(xs[t])
    s = zeros([4])
    for h in hs:
        s = s + h
    return s + hs[0] + hs[len(hs) - 1]
"""
    assert check_text(src).errors == []


def test_a_list_is_not_shared_returned_or_passed_on() -> None:
    check_annotated(
        """
        fn g(x: [4]) -> [4]:
            return x

        fn f(x: [4]) -> [4]:
            hs = [x]
            ys = hs
        #        ^^ E0964: hs is a list: it is not given a second name (the checker follows each list under one name)
            t = (hs, x)
        #        ^^ E0964: hs is a list: it is not put in a tuple; stack it into a tensor first
            g(hs)
        #     ^^ E0964: hs is a list: a list is not passed to g; pass stack(hs, over=...)
            return hs
        #          ^^ E0964: hs is a list: a list is not returned; return stack(hs, over=...) or concat(hs, over=...)
        """,
        dedent=True,
    )


def test_methods_other_than_append_and_append_as_a_value() -> None:
    check_annotated(
        """
        fn f(x: [4]) -> [4]:
            hs = [x]
            hs.pop(x)
        #      ^^^ E0965: hs.pop: a list has append (and +=, len, indexing, for), not pop
            gs = [x]
            y = gs.append(x)
        #       ^^^^^^^^^^^^ E0965: gs.append: append changes the list and gives nothing: write it as a statement of its own
            ks = [x]
            ks.append(x, x)
        #            ^^^^^^ E0965: ks.append: append takes one element, found 2 arguments
            return x
        """,
        dedent=True,
    )


def test_a_literal_index_past_the_end() -> None:
    check_annotated(
        """
        fn f(x: [4]) -> [4]:
            hs = []
            hs.append(x)
            hs.append(x)
            return hs[2] + hs[-2]
        #             ^ E0967: hs[2]: the list has 2 elements
        """,
        dedent=True,
    )


def test_list_of_models_is_refused() -> None:
    src = """\
model M:
    param w: [4]

fn f(m: M) -> [4]:
    hs = [m]
    return m.w
"""
    assert [c for c, _, _ in spanned(src)] == ["E0964"]


def test_appending_to_the_list_a_loop_walks() -> None:
    check_annotated(
        """
        fn f(x: [4]) -> [4]:
            hs = [x]
            for h in hs:
        #            ^^ E0965: hs.append: the list is appended to inside the for loop that walks it, which would then never end (walk a copy: stack it first, or build a second list)
                hs.append(h)
            return x
        """,
        dedent=True,
    )


def test_range_from_a_start_counts_stop_minus_start() -> None:
    src = """\
fn f(xs: [T 4]) -> [(T-1) 4]:
    hs = []
    for t in range(1, T):
        x = xs[t]
        hs.append(x)
    return stack(hs)
"""
    assert check_text(src).errors == []
