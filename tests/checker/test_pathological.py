"""Inputs built to hurt the checker (issue 13), at sizes a test can afford.

bench/pathological.py runs the full-size cases against the targets (2 s per
100 KB, 300 MB); here every case is small, and time is only compared with
itself: doubling the input must not much more than double the time (an
operation count where there is one to count).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import pytest

from quiver.checker import Analyzer, check_text, ide
from quiver.checker import parser as P
from quiver.checker.ast import Span
from quiver.checker.compiler import CompileError, compile_program

# ------------------------------------------------------------------ helpers


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of `repeat` runs, with the garbage collector off: in the
    whole suite the heap holds torch and every test module, and a full
    collection then costs in proportion to all of it, not to the input
    (the test failed in CI on that alone: 3.7x, never in a run of its own)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            # CPU time, not wall time: other processes on a busy machine take
            # wall time from the check, not CPU time.
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
    finally:
        gc.enable()
    return best


def assert_linear(make: Callable[[int], str], n: int) -> None:
    """Checking make(2n) takes less than 3x checking make(n) (quadratic is 4x);
    retried once, as the machine may be busy."""
    for _attempt in range(2):
        small = best_time(lambda: check_text(make(n)))
        large = best_time(lambda: check_text(make(2 * n)))
        if large < 3 * small + 0.05:
            return
    pytest.fail(f"doubling the input took {large / small:.1f}x the time ({small:.3f}s -> {large:.3f}s)")


def every_query(src: str) -> None:
    """Each IDE query and the compiler, on a document: none may raise (a
    program with errors is refused by the compiler with CompileError, and so
    is one too deep for Python, which quiver run reports without a traceback)."""
    a = check_text(src)
    assert not a.internal_errors, a.internal_errors[0][-2000:]
    whole = Span(0, len(src))
    for offset in (0, len(src) // 2, len(src) - 2):
        ide.hover(a, offset)
        ide.completions(a, offset)
        ide.signature_help(a, offset)
        ide.definition(a, offset)
        ide.references(a, offset, True)
        ide.highlights(a, offset)
    ide.document_symbols(a)
    ide.inlay_hints(a, whole)
    ide.semantic_tokens(a)
    ide.code_lenses(a)
    ide.code_actions(a, whole)
    ide.runnable(a)
    try:
        compile_program(a, "x.qv")
    except CompileError as e:
        assert a.errors or "in the generated Python" in str(e)


def stray_parens(lines: int) -> str:
    return "fn main():\n" + "".join(f"    x{i} = f(1))\n" for i in range(lines))


def nested_blocks(n: int) -> str:
    """`fn main()` holding n nested `if`s, one space deeper each; then a
    statement back in the function's block."""
    return (
        "fn main():\n"
        + "".join(" " * (i + 1) + "if True:\n" for i in range(n))
        + " " * (n + 1)
        + "pass\n print(totl)\n"
    )


def nested_calls(n: int) -> str:
    return "fn main():\n    a = zeros([2])\n    x = " + "abs(" * n + "a" + ")" * n + "\n    print(x)\n"


def flat_sum(n: int) -> str:
    return "fn main():\n    a = 1.0\n    x = " + " + ".join(["a"] * n) + "\n    print(x)\n"


# ------------------------------------------------------------------ 1. error recovery in linear time


def test_one_stray_paren_per_line_is_linear() -> None:
    assert_linear(stray_parens, 400)


def test_stray_parens_find_the_statements_once(monkeypatch) -> None:
    # The statements of an item are cut once per parse, however many bracket
    # problems it has (each used to cut them again, and copy the whole text).
    calls = 0
    cut = P._Recovery._cut_chunks

    def counting(self):
        nonlocal calls
        calls += 1
        return cut(self)

    monkeypatch.setattr(P._Recovery, "_cut_chunks", counting)
    check_text(stray_parens(300))
    assert calls == 1


def test_stray_parens_are_reported_twenty_times_then_counted() -> None:
    src = stray_parens(300)
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == ["E0004"] * P.MAX_TOKEN_PROBLEMS
    for i, d in enumerate(a.diagnostics):
        line = f"    x{i} = f(1))\n"
        at = src.index(line) + len(line) - 2
        assert (d.span.start, d.span.end, d.message) == (at, at + 1, "')' has no opening bracket")
    # The last one says how many more there are, and where the next one is;
    # their statements are skipped all the same (nothing else is reported).
    (note,) = a.diagnostics[-1].related
    assert note.message == "280 more bracket or character problems in this item are not reported; the next one is here"
    nxt = src.index("    x20 = f(1))\n") + len("    x20 = f(1)")
    assert (note.span.start, note.span.end) == (nxt, nxt + 1)


def test_twenty_problems_are_all_reported() -> None:
    a = check_text(stray_parens(P.MAX_TOKEN_PROBLEMS))
    assert len(a.diagnostics) == P.MAX_TOKEN_PROBLEMS and all(d.related == () for d in a.diagnostics)


def test_unclosed_parentheses_are_linear_and_reported_once() -> None:
    def make(n: int) -> str:
        return "fn main():\n    x = " + "(" * n + "1\n    print(1)\n"

    assert_linear(make, 4000)
    src = make(5000)
    (d,) = check_text(src).diagnostics
    at = src.index("x = ") + 4
    assert (d.code, d.span.start, d.span.end, d.message) == ("E0004", at, at + 1, "'(' is never closed; expected ')'")
    assert (d.code, d.span.start, d.span.end, d.message) == ("E0004", at, at + 1, "'(' is never closed; expected ')'")


def test_a_long_line_is_linear() -> None:
    assert_linear(lambda n: "fn main():\n    x = " + "1 + " * n + "1\n    print(x)\n", 5000)


def test_bad_characters_are_found_in_one_pass() -> None:
    # After a bad character the lexer goes on from the next one (it used to
    # start again from the top, at most 100 times, then give up finding them).
    def make(n: int) -> str:
        return "fn main():\n" + "".join("    x = $\n" if i % 10 == 0 else "    x = 1\n" for i in range(n))

    assert_linear(make, 1000)
    src = make(3000)
    a = check_text(src)
    assert [d.code for d in a.diagnostics if d.code != "W0101"] == ["E0002"] * P.MAX_TOKEN_PROBLEMS
    (note,) = a.diagnostics[P.MAX_TOKEN_PROBLEMS - 1].related
    assert note.message.startswith("280 more bracket or character problems")
    a = check_text("fn main():\n    x = " + "$" * 5000 + "\n")
    assert [(d.code, d.span.end - d.span.start) for d in a.diagnostics] == [("E0002", 1)]


# ------------------------------------------------------------------ 2. nesting: E0009's rule


def test_a_hundred_levels_are_fine_and_the_next_is_e0009() -> None:
    # The function's block is the first level; each call's brackets one more.
    assert check_text(nested_calls(99)).diagnostics == []
    src = nested_calls(100)
    (d,) = check_text(src).diagnostics
    at = src.index("abs(") + 99 * 4 + 3  # the 100th call's '('
    assert (d.code, d.message, d.span.start, d.span.end) == ("E0009", "nested more than 100 levels deep", at, at + 1)


def test_fifty_nested_calls_are_fine() -> None:
    assert check_text(nested_calls(50)).diagnostics == []


def test_blocks_count_as_levels() -> None:
    # 99 `if`s inside the function: the innermost statement is 100 levels deep.
    ok = nested_blocks(99)
    a = check_text(ok)
    assert [(d.code, ok[d.span.start : d.span.end]) for d in a.diagnostics] == [("E0101", "totl")]
    src = nested_blocks(100)
    d, unknown = check_text(src).diagnostics
    # At the first line of the 101st block; the whole statement is skipped
    # (nothing deeper is analysed) and the rest of the function is checked.
    at = src.index(" " * 101 + "pass") + 101
    assert (d.code, d.span.start, d.span.end) == ("E0009", at, at + len("pass"))
    assert (unknown.code, src[unknown.span.start : unknown.span.end]) == ("E0101", "totl")


def test_blocks_and_brackets_add_up() -> None:
    # 50 blocks (the function's and 49 `if`s) and 51 calls: 101.
    head = "fn main():\n a = zeros([2])\n" + "".join(" " * (i + 1) + "if True:\n" for i in range(49)) + " " * 50
    assert check_text(head + "print(" + "abs(" * 49 + "a" + ")" * 50 + "\n").diagnostics == []
    (d,) = check_text(head + "print(" + "abs(" * 50 + "a" + ")" * 51 + "\n").diagnostics
    assert d.code == "E0009"


def test_prefix_operators_count_as_levels() -> None:
    assert check_text("fn main():\n    x = " + "- " * 99 + "1\n    print(x)\n").diagnostics == []
    (d,) = check_text("fn main():\n    x = " + "- " * 100 + "1\n    print(x)\n").diagnostics
    assert d.code == "E0009"
    assert check_text("fn main():\n    x = " + "not " * 99 + "True\n    print(x)\n").diagnostics == []
    (d,) = check_text("fn main():\n    x = " + "not " * 100 + "True\n    print(x)\n").diagnostics
    assert d.code == "E0009"


def test_flat_chains_count_nothing() -> None:
    # A binary minus is no prefix operator; fields, indexing after each other
    # and operator chains read flat, whatever their length.
    for n in (100, 1000):
        assert check_text(flat_sum(n)).diagnostics == []
        assert check_text("fn main():\n    a = 1.0\n    x = a" + " - a" * n + "\n    print(x)\n").diagnostics == []
        src = "fn main():\n    a = True\n    x = a" + " and a" * n + "\n    print(x)\n"
        assert check_text(src).diagnostics == []


def test_a_flat_sum_of_any_length_checks_and_compiles() -> None:
    for n in (100, 20_000):
        src = flat_sum(n)
        a = check_text(src)
        assert a.diagnostics == [] and not a.internal_errors
        compiled = compile_program(a, "x.qv")
        assert compiled.source.count(" + ") >= n - 1
    every_query(flat_sum(20_000))


def test_a_flat_sum_is_linear() -> None:
    assert_linear(flat_sum, 2000)


@pytest.mark.parametrize(
    "src",
    [
        nested_blocks(2_000),
        "fn main():\n    x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n    print(x)\n",
        "fn main():\n    x = " + "[" * 20_000 + "1" + "]" * 20_000 + "\n    print(x)\n",
        "fn main():\n    x = " + "-" * 50_000 + "1\n    print(x)\n",
        "fn main():\n    x = 1.0" + " as Float" * 5_000 + "\n    print(x)\n",
        "fn main():\n    x = 1.0" + " |> abs" * 5_000 + "\n    print(x)\n",
        "dim D = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n",
        "fn f(x: [" + "(" * 5_000 + "D" + ")" * 5_000 + "]):\n    pass\n",
    ],
    ids=["blocks", "parens", "brackets", "minus", "casts", "pipes", "dim", "type"],
)
def test_deep_input_never_raises(src: str) -> None:
    a = check_text(src)
    assert not a.internal_errors, a.internal_errors[0][-2000:]
    assert [d.code for d in a.diagnostics if d.code == "E0009"] in ([], ["E0009"])
    every_query(src)


def test_two_thousand_nested_blocks() -> None:
    src = nested_blocks(2_000)  # 8 MB of indentation, under the 10 MiB limit
    assert len(src.encode()) < 10 * 1024 * 1024
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == ["E0009", "E0101"] and not a.internal_errors


def test_ten_thousand_nested_blocks_are_over_the_size_limit() -> None:
    src = nested_blocks(10_000)  # 50 MB of indentation: not parsed at all
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == ["E0012"] and not a.internal_errors


def test_a_deep_statement_is_edited_incrementally() -> None:
    analyzer = Analyzer()
    src = nested_calls(150)
    assert [d.code for d in analyzer.update(src).diagnostics] == ["E0009"]
    fixed = nested_calls(10)
    assert analyzer.update(fixed).diagnostics == []


# ------------------------------------------------------------------ 6. a byte order mark


def test_a_leading_byte_order_mark_is_nothing() -> None:
    src = "\ufefffn main():\n    print(totl)\n"
    (d,) = check_text(src).diagnostics
    assert (d.code, src[d.span.start : d.span.end]) == ("E0101", "totl")
    assert check_text("\ufeff# a comment\nfn main():\n    print(1)\n").diagnostics == []
    assert check_text("\ufeff").diagnostics == []
    src = "\ufeff  x = 1\nfn main():\n    print(1)\n"
    (d,) = check_text(src).diagnostics
    assert (d.code, src[d.span.start : d.span.end]) == ("E0005", "x = 1")


def test_a_byte_order_mark_elsewhere_is_a_character() -> None:
    src = "fn main():\n    print(1)\n\ufeffdim D = 2\n"
    (d,) = check_text(src).diagnostics
    assert (d.code, d.message, d.span.start) == ("E0002", "unexpected character U+FEFF", src.index("\ufeff"))


def test_a_byte_order_mark_in_an_edited_document() -> None:
    # As the language server sees it: text with the mark, edited.
    analyzer = Analyzer()
    src = "\ufefffn main():\n    print(1)\n"
    assert analyzer.update(src).diagnostics == []
    src = "\ufefffn main():\n    print(totl)\n"
    (d,) = analyzer.update(src).diagnostics
    assert src[d.span.start : d.span.end] == "totl"
    src = "\ufeff\nfn main():\n    print(totl)\n"
    (d,) = analyzer.update(src).diagnostics
    assert src[d.span.start : d.span.end] == "totl"


# ------------------------------------------------------------------ 7. chains: E0015 past MAX_CHAIN links (issue 37)


def small_chain_limit(monkeypatch, limit: int) -> None:
    """MAX_CHAIN as both parsers read it, made small enough to test every
    kind of link near it cheaply."""
    from quiver.checker import fast_parser

    monkeypatch.setattr(P, "MAX_CHAIN", limit)
    monkeypatch.setattr(fast_parser, "MAX_CHAIN", limit)


# Statements built of n links of one kind each (`{}` is the statement's own text).
CHAINS = {
    "sum": lambda n: "a" + " + a" * n,
    "minus": lambda n: "a" + " - a" * n,
    "product": lambda n: "a" + " * a" * n,
    "matmul": lambda n: "a" + " @ a" * n,
    "bits": lambda n: "a" + " | a" * n,
    "and": lambda n: "a" + " and a" * n,
    "fields": lambda n: "a" + ".b" * n,
    "calls": lambda n: "f" + "(a)" * n,
    "indexes": lambda n: "a" + "[0]" * n,
    "casts": lambda n: "a" + " as Float" * n,
    "pipes": lambda n: "a" + " |> f" * n,
    "mixed": lambda n: "a" + "".join((" + a", ".b", "(a)", "[0]", " * -a")[i % 5] for i in range(n)),
    # the call's bracket is one link
    "in brackets": lambda n: "f(a" + " + a" * (n - 1) + ")",
    "two lines": lambda n: "f(a" + " + a" * (n // 2) + ",\n        a" + " + a" * (n - n // 2 - 1) + ")",
}


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_a_chain_of_the_limit_is_fine_and_one_more_link_is_e0015(monkeypatch, kind: str) -> None:
    """Both parsers count links alike: at the limit the fast path takes the
    item and its tree is lark's; one past it lark reports E0015 at the first
    link past the limit and the fast path declines."""
    from quiver.checker import fast_parser
    from quiver.checker.ast import dump

    limit = 40
    small_chain_limit(monkeypatch, limit)
    make = CHAINS[kind]
    ok = "fn main():\n    x = " + make(limit) + "\n    print(x)\n"
    ref = P.parse_item(ok, fast=False)
    assert ref.diagnostics == () and ref.item is not None
    fast = fast_parser.parse(ok)
    assert fast is not None and dump(fast) == dump(ref.item)
    bad = "fn main():\n    x = " + make(limit + 1) + "\n    print(x)\n"
    assert fast_parser.parse(bad) is None
    (d,) = P.parse_item(bad).diagnostics
    assert (d.code, d.message) == ("E0015", "this statement chains more than 40 operators, fields, calls or indexes")
    # at the 41st link: the last operator, dot or bracket written
    last = max(
        bad.rfind(t, 0, bad.index("\n    print"))
        for t in (" + ", " - ", " * ", " @ ", " | ", " and ", ".", "(", "[", " as ", " |> ")
    )
    start = last + 1 if bad[last] == " " else last
    assert bad[d.span.start : d.span.end] == bad[start : start + d.span.end - d.span.start]
    assert d.span.start == start


def test_chains_count_per_statement(monkeypatch) -> None:
    small_chain_limit(monkeypatch, 40)
    # 40 links in each statement, one of them inside an `if`: fine
    src = (
        "fn main():\n    a = 1\n"
        + "    x = a"
        + " + a" * 40
        + "\n"
        + "    if a > 0:\n        x = a"
        + " + a" * 40
        + "\n"
    )
    a = check_text(src + "    print(x)\n")
    assert a.diagnostics == [] and not a.internal_errors


def test_every_long_statement_is_reported_once_and_the_rest_is_checked(monkeypatch) -> None:
    small_chain_limit(monkeypatch, 40)
    long = "a" + " + a" * 41
    src = f"fn main():\n    a = 1\n    x = {long}\n    y = {long}\n    print(totl)\n"
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == ["E0015", "E0015", "E0101"] and not a.internal_errors
    assert src[a.diagnostics[2].span.start : a.diagnostics[2].span.end] == "totl"


def test_a_million_token_sum_checks_without_error() -> None:
    """The issue's file: `x + x + ...`, 1 million tokens (2 MB): one E0015 at
    the first link past the limit, nothing else, no internal error; and the
    IDE queries and the compiler over it raise nothing."""
    from quiver.checker.deep import MAX_CHAIN

    terms = 500_001
    src = "fn main():\n    x = 1\n    y = " + " + ".join(["x"] * terms) + "\n    print(y)\n"
    a = check_text(src)
    assert not a.internal_errors
    (d,) = a.diagnostics
    at = src.index("y = ") + 4 + 4 * MAX_CHAIN + 2  # the 100,001st `+`
    assert (d.code, d.span.start, d.span.end, src[at]) == ("E0015", at, at + 1, "+")
    every_query(src)


def test_a_sum_just_under_the_limit_checks_and_compiles() -> None:
    from quiver.checker.deep import MAX_CHAIN

    src = flat_sum(MAX_CHAIN + 1)  # MAX_CHAIN links
    a = check_text(src)
    assert a.diagnostics == [] and not a.internal_errors
    assert compile_program(a, "x.qv").source.count(" + ") >= MAX_CHAIN


def test_a_huge_name_or_field_is_shown_by_its_ends_in_the_message() -> None:
    # a 200,000-letter name was echoed whole in E0101's message (and an
    # f-string's unreadable field in E0013's): 200 KB in every reply
    name = "a" * 200_000
    (d,) = check_text(f"fn main():\n    print({name})\n").diagnostics
    assert d.code == "E0101"
    assert d.message == f"unknown name '{'a' * 500} … (199,400 characters) … {'a' * 100}'"
    field = "(" * 50_000 + "x" + ")" * 50_000
    (d,) = check_text(f'fn main():\n    x = 1\n    print(f"{{{field}}}")\n').diagnostics
    assert d.code == "E0013" and len(d.message) < 1200


def test_a_model_that_contains_itself_and_calls_itself_through_its_sub_models() -> None:
    # The param-read summaries followed forward through `self.main(x)` into
    # forward itself, under the path `main.0.`, and then through A -> B -> A
    # without end: one crashed (a dict grown while read), the other never
    # finished. Each is one E0909 per model, and the check ends.
    direct = """\
model Linear[I, O]:
    param weight: [I O]
    param main: (Linear[4, 8], Linear[6, 2])

    fn forward(self, x: [b I]) -> [b O]:
        return x @ self.weight

        return self.main(x)
"""
    through = """\
model A[I]:
    param w: [I I]
    param b: (B[4],)

    fn forward(self, x: [n I]) -> [n I]:
        return self.b(x) @ self.w

model B[I]:
    param v: [I I]
    param a: (A[4],)

    fn forward(self, x: [n I]) -> [n I]:
        return self.a(x) @ self.v
"""
    for src, cycles in ((direct, 1), (through, 2)):
        a = check_text(src)
        assert not a.internal_errors
        assert [d.code for d in a.diagnostics].count("E0909") == cycles
