"""Optional parameters (issue 40: nanoGPT's and llama2.c's `top_k=None`, a
transformer's `memory_mask=None`): `X | None` as a parameter's type in both
parsers, `None` as its default and as an argument, `is None` / `is not None`
narrowing an `if`'s branches (and what follows an `if` whose block returns
or assigns a value), E0968 for a value used before None is ruled out or a
value that is never None tested against it."""

from __future__ import annotations

from annotations import check_annotated, spanned

from quiver.checker import check_text, fast_parser, ide
from quiver.checker.ast import dump
from quiver.checker.formatter import format_text
from quiver.checker.parser import parse_item

GENERATE = """\
dim V = 5

fn top(logits: [V], top_k: Int | None = None) -> [V]:
    if top_k is not None:
        k = min(top_k, V)
        print(k)
    return logits

fn scaled(x: [4], scale: Float | None = None) -> [4]:
    if scale is None:
        scale = 2.0
    return x * scale

fn early(x: [4], scale: Float | None = None) -> [4]:
    if scale is None:
        return x
    return x * scale

fn attend(q: [L E], k: [S E], mask: [L S] Bool | None = None) -> [L S]:
    s = q @ transpose(k)
    if mask is not None:
        s = where(mask, s, zeros([L S]))
    return s

fn passes(q: [3 2], k: [5 2], mask: [3 5] Bool | None = None) -> [3 5]:
    return attend(q, k, mask) + attend(q, k) + attend(q, k, None)
"""


def test_narrowed_optionals_check_clean() -> None:
    a = check_text(GENERATE)
    assert [(d.code, d.message) for d in a.diagnostics] == []
    h = ide.hover(a, GENERATE.index("k = min"))
    assert h is not None and h.markdown.split("\n")[1] == "(local) k: Int"


def test_both_parsers_give_one_tree_and_the_formatter_keeps_it() -> None:
    for text in GENERATE.split("\n\n"):
        text = text.strip("\n") + "\n"
        fast = fast_parser.parse(text)
        lark = parse_item(text, fast=False)
        assert fast is not None and lark.item is not None and not lark.diagnostics
        assert dump(fast) == dump(lark.item)
    assert format_text(GENERATE).text == GENERATE
    messy = "fn f(top_k:Int|None=None) -> Bool:\n    return top_k is  not None\n"
    assert format_text(messy).text == "fn f(top_k: Int | None = None) -> Bool:\n    return top_k is not None\n"


def test_a_value_used_before_none_is_ruled_out() -> None:
    check_annotated(
        """
        fn f(x: [4], scale: Float | None = None) -> [4]:
            return x * scale
        #              ^^^^^ E0968: scale is Float | None: it may be None here; test it first (if scale is not None:)
        """,
        dedent=True,
    )


def test_the_branch_where_it_is_none_does_not_narrow() -> None:
    check_annotated(
        """
        fn f(x: [4], scale: Float | None = None) -> [4]:
            if scale is not None:
                print(scale)
            return x * scale
        #              ^^^^^ E0968: scale is Float | None: it may be None here; test it first (if scale is not None:)
        """,
        dedent=True,
    )


def test_a_value_that_is_never_none() -> None:
    check_annotated(
        """
        fn f(k: Int) -> Bool:
            return k is None
        #          ^^^^^^^^^ E0968: k is Int: it is never None, so `is None` is always False
        """,
        dedent=True,
    )


def test_a_default_other_than_none_or_the_inner_type_s() -> None:
    found = spanned('fn f(k: Int | None = "a") -> Int:\n    return 1\n')
    assert [c for c, _, _ in found] == ["E0416"]
    assert (
        check_text("fn f(k: Int | None = 3) -> Int:\n    if k is None:\n        return 0\n    return k\n").errors == []
    )


def test_an_argument_of_the_wrong_shape_for_an_optional_tensor() -> None:
    found = spanned(GENERATE + "\nfn bad(q: [3 2], k: [5 2], m: [5 3] Bool) -> [3 5]:\n    return attend(q, k, m)\n")
    assert [(c, t) for c, _, t in found] == [("E0205", "m")]


def test_a_dim_only_an_optional_parameter_binds() -> None:
    check_annotated(
        """
        fn f(x: [4], m: [n] | None = None) -> [n]:
        #                ^ E0968: m is [n] | None: the dim n is bound by this optional parameter only, and has no size when it is None; bind n by another parameter too
            return zeros([n])
        """,
        dedent=True,
    )
