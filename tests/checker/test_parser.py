"""The parser: the tree it builds, its spans, its syntax messages, recovery,
and bad input of every kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.checker import ast as A
from quiver.checker import check_bytes, check_text
from quiver.checker.items import parse_document, split_items
from quiver.checker.parser import parse_item

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.qv").read_text()


def item(src: str) -> A.Item:
    p = parse_item(src)
    assert p.diagnostics == (), p.diagnostics
    assert p.item is not None
    return p.item


def text_of(src: str, node: A.Node) -> str:
    return src[node.span.start : node.span.end]


def only_diag(src: str):
    a = check_text(src)
    assert len(a.diagnostics) == 1, [(d.code, d.message) for d in a.diagnostics]
    d = a.diagnostics[0]
    return d.code, d.message, src[d.span.start : d.span.end]


# ------------------------------------------------------------------ the tree


def test_every_item_kind() -> None:
    doc = parse_document(MLP + 'extern fn load(n: Int) -> [n D] from "data:load"\n')
    kinds = [type(s.item).__name__ for s in doc.slots if s.item is not None]
    assert kinds == ["DimDecl"] * 3 + ["ModelDecl"] + ["FnDecl"] * 4 + ["ExternDecl"]


def test_model_members_and_device() -> None:
    src = 'model Net on "cuda:1":\n    param w: [D H] = normal(0.0, 0.02)\n    buffer n: [] i64 = 0\n'
    m = item(src)
    assert isinstance(m, A.ModelDecl)
    assert m.device is not None and m.device.name == "cuda:1"
    assert [(x.kind, x.name.text) for x in m.members] == [("param", "w"), ("buffer", "n")]
    w = m.members[0]
    assert text_of(src, w) == "param w: [D H] = normal(0.0, 0.02)"
    assert text_of(src, w.type) == "[D H]"
    assert isinstance(w.init, A.Call) and text_of(src, w.init) == "normal(0.0, 0.02)"


def test_fn_signature_spans() -> None:
    src = "fn train_step(mut m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:\n    return loss(m, x, y)\n"
    f = item(src)
    assert isinstance(f, A.FnDecl)
    assert text_of(src, A.Node(f.header_span)) == src[: src.index(":\n") + 1]
    assert [p.mut for p in f.params] == [True, False, False]
    y = f.params[2].type
    assert isinstance(y, A.TensorType) and y.elem is not None
    assert (y.elem.name.text, y.elem.arg.text) == ("Index", "C")
    assert text_of(src, f.ret) == "[] NonNeg"


def test_expression_precedence() -> None:
    src = "fn f():\n    z = x + 1 |> g(1)\n    w = -a ** 2 as f64 * b @ c\n    v = not a < b and c or d\n"
    f = item(src)
    z, w, v = (s.value for s in f.body)
    assert isinstance(z, A.Pipe) and isinstance(z.left, A.Binary)  # |> binds loosest
    assert isinstance(z.target, A.Call)
    # `*` and `@` share a level and group to the left; `as` binds tighter,
    # unary minus tighter still, and `**` tightest.
    assert isinstance(w, A.Binary) and w.op == "@"
    mul = w.left
    assert isinstance(mul, A.Binary) and mul.op == "*"
    assert isinstance(mul.left, A.Cast) and isinstance(mul.left.value, A.Unary)
    assert isinstance(mul.left.value.operand, A.Binary) and mul.left.value.operand.op == "**"
    assert isinstance(v, A.BoolOp) and v.op == "or"
    assert isinstance(v.left, A.BoolOp) and isinstance(v.left.left, A.Not)


def test_calls_keywords_and_shape_literals() -> None:
    src = "fn f():\n    y = randint([64] Index[C], seed=2)\n"
    (s,) = item(src).body
    call = s.value
    assert isinstance(call, A.Call)
    assert text_of(src, A.Node(call.paren_span)) == "([64] Index[C], seed=2)"
    shape, seed = call.args
    assert isinstance(shape.value, A.TensorType) and text_of(src, shape.value) == "[64] Index[C]"
    assert seed.keyword is not None and seed.keyword.text == "seed"


def test_statements() -> None:
    src = (
        "fn f(n: Int) -> Int:\n"
        "    a, b = g()\n"
        "    m.w -= 1\n"
        "    if n > 0:\n        pass\n    elif n < 0: return 1\n    else:\n        n = 2\n"
        "    for i in range(n):\n        continue\n"
        "    while False:\n        break\n"
        "    return a\n"
    )
    body = item(src).body
    assert [type(s).__name__ for s in body] == ["Assign", "AugAssign", "If", "For", "While", "Return"]
    assert len(body[0].targets) == 2
    assert body[1].op == "-"
    assert len(body[2].branches) == 2 and body[2].orelse is not None


def test_comments_and_blank_lines_anywhere() -> None:
    src = "fn f() -> Int:\n    # leading\n\n    x = 1  # trailing\n# at column 0 inside the body\n    return x\n"
    assert check_text(src).diagnostics == []


def test_tuple_expressions_and_types() -> None:
    src = "fn pair() -> (Int, Float):\n    return (1, 2.0)\n"
    f = item(src)
    assert isinstance(f.ret, A.TupleType)
    (ret,) = f.body
    assert isinstance(ret.values[0], A.TupleExpr)


def test_keywords_are_contextual_where_safe() -> None:
    # `model`, `param` and `dim` are keywords only at the top level / in models.
    src = "fn f() -> Int:\n    model = 1\n    param = model\n    dim = param\n    return dim\n"
    assert check_text(src).diagnostics == []


@pytest.mark.parametrize(
    ("src", "word", "message"),
    [
        ("fn f(x: Bool, orb: Bool) -> Bool:\n    return x orb\n", "orb", "expected a space after 'or', found 'orb'"),
        ("fnf():\n    pass\n", "fnf", "expected a space after 'fn', found 'fnf'"),
        ("dim N = 2\nfn f(x: [2N]):\n    pass\n", "2N", "expected a space after '2', found '2N'"),
        ("fn f(x: [1e3 D]):\n    pass\n", "1e3", "expected a space after '1', found '1e3'"),
        ("model M ongpu:\n    param w: [2]\n", "ongpu", "expected a space after 'on', found 'ongpu'"),
        ("fn f(a: Bool, y: Bool) -> Bool:\n    return a andy\n", "andy", "expected a space after 'and', found 'andy'"),
    ],
)
def test_a_word_is_never_split_in_two(src: str, word: str, message: str) -> None:
    # lark's contextual lexer, where no name fits, takes a keyword or a number
    # off the front of a longer word; the program would mean something else
    # than it says, so it is an error (one, at the word).
    (d,) = [d for d in check_text(src).diagnostics if d.code.startswith("E00")]
    assert (d.code, src[d.span.start : d.span.end], d.message) == ("E0003", word, message)


@pytest.mark.parametrize(
    "template",
    [
        "fn f() -> Int:\n    return {n}\n",
        "dim N = {n}\n",
        "fn f(x: [{n}]):\n    print(x)\n",
        "fn f():\n    print([-{n}, 1])\n",
    ],
)
def test_an_integer_too_long_to_read_is_e0011_not_a_crash(template: str) -> None:
    # Python refuses to read an int of more than 4,300 digits (ValueError):
    # the checker reported nothing and raised instead.
    number = "12_" + "9" * 4400
    src = template.format(n=number)
    (d,) = check_text(src).diagnostics
    assert (d.code, src[d.span.start : d.span.end], d.message) == (
        "E0011",
        number,
        "this integer has 4,402 digits, more than the 4,300 a program may write",
    )
    assert check_text(template.format(n="9" * 4300)).internal_errors == []


def test_items_are_cut_at_column_zero() -> None:
    text = "# head\ndim D = 4\n\nfn f():\n    pass\n# tail comment\nmodel M:\n    param w: [D] = zeros\n"
    bounds = split_items(text)
    assert [text[s:e].split("\n")[0] for s, e in bounds] == ["# head", "dim D = 4", "fn f():", "model M:"]
    assert bounds[-1][1] == len(text) and all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))


# ------------------------------------------------------------------ syntax messages


@pytest.mark.parametrize(
    "src, expected",
    [
        (
            "fn main()\n    pass\n",
            ("E0003", "expected '->' or ':' after the function signature, found the end of the line", "\n"),
        ),
        ("fn main():\n    x = \n", ("E0003", "expected an expression, found the end of the line", "\n")),
        ("fn main():\n    foo(a b)\n", ("E0003", "expected ',' or ')' in the argument list, found name 'b'", "b")),
        (
            "fn f(x Int) -> Int:\n    return x\n",
            ("E0003", "expected ':' in the parameter list, found name 'Int'", "Int"),
        ),
        (
            "model M\n    param w: [3] = zeros\n",
            ("E0003", "expected ':' or 'on' after the model name, found the end of the line", "\n"),
        ),
        (
            "fn main():\n    if True\n        pass\n",
            ("E0003", "expected ':' after the condition, found the end of the line", "\n"),
        ),
        (
            "fn main():\n    if True:\n    pass\n",
            ("E0003", "expected an indented block after the condition, found keyword 'pass'", "pass"),
        ),
        ("fn main():\n    x = 1)\n", ("E0004", "')' has no opening bracket", ")")),
        ("fn f(x: [b D) -> Int:\n    return 1\n", ("E0004", "')' does not match '['; expected ']'", ")")),
        ("fn main():\n    print((1)\n", ("E0004", "'(' is never closed; expected ')'", "(")),
        ("fn main():\n    return return\n", ("E0003", "expected a name, found keyword 'return'", "return")),
        ("dim D 4\n", ("E0003", "expected '=', found number 4", "4")),
        (
            "x = 1\n",
            (
                "E0003",
                "expected an item ('dim', 'const', 'type', 'model', 'fn', 'extern fn', 'import' or 'from'), found name 'x'",
                "x",
            ),
        ),
        (
            "extern fn f(x: Int) -> Int\n",
            ("E0003", "expected 'from' after the extern signature, found the end of the line", "\n"),
        ),
        ("fn main():\n    x = 1 +* 2\n", ("E0003", "expected an expression, found '*'", "*")),
        (
            "fn c(x: [3] Index[2.5]) -> Int:\n    return 1\n",
            ("E0003", "expected ',' or ']' in the brackets, found number 2.5 (a dim is a whole number)", "2.5"),
        ),
        ("fn main():\n    print('a)\n", ("E0008", "unterminated string: the closing quote is missing", "'a)")),
        ("fn main():\n    x = 2 ? 3\n", ("E0002", "unexpected character '?'", "?")),
        (
            "fn main():\n    3 = x\n",
            ("E0007", "only a name, a field (m.w) or a subscript of one (x[i], m.w[i]) can be assigned", "3"),
        ),
        (
            "fn main():\n    x[0][1] = 2.0\n",
            ("E0007", "only a name, a field (m.w) or a subscript of one (x[i], m.w[i]) can be assigned", "x[0][1]"),
        ),
        (
            "fn main():\n    f(x)[0] = 2.0\n",
            ("E0007", "only a name, a field (m.w) or a subscript of one (x[i], m.w[i]) can be assigned", "f(x)[0]"),
        ),
        (
            "fn main():\n    a, x[0] = g()\n",
            ("E0007", "only a name, a field (m.w) or a subscript of one (x[i], m.w[i]) can be assigned", "x[0]"),
        ),
        (
            "fn main():\n    x[0][1] += 2.0\n",
            ("E0007", "only a name, a field (m.w) or a subscript of one (x[i], m.w[i]) can be assigned", "x[0][1]"),
        ),
        ("fn main():\n    continue\n", ("E0010", "'continue' outside a loop", "continue")),
    ],
)
def test_syntax_messages(src: str, expected: tuple[str, str, str]) -> None:
    assert only_diag(src) == expected


def test_one_broken_statement_leaves_the_rest_checked() -> None:
    src = (
        "dim D = 4\n"
        "fn f(x: [b D]) -> [b D]:\n"
        "    y = (x +\n"
        "    z = y * 2.0\n"  # y comes from the broken statement: no cascade
        "    w = undefined_name\n"  # a real, independent error is still found
        "    return z\n"
    )
    a = check_text(src)
    assert [(d.code, src[d.span.start : d.span.end]) for d in a.diagnostics] == [
        ("E0004", "("),
        ("E0101", "undefined_name"),
    ]


def test_one_broken_statement_of_a_method_leaves_the_method() -> None:
    # As in a top-level fn: the statement is blanked, not the whole method, so
    # the method's other statements are checked and its callers see it.
    src = (
        "dim D = 4\n"
        "model Lin:\n"
        "    param w: [D D] = zeros\n"
        "\n"
        "    fn forward(self, x: [b D]) -> [b D]:\n"
        "        y = (x +\n"
        "        z = y * 2.0\n"
        "        w = undefined_name\n"
        "        return z @ self.w\n"
        "\n"
        "    fn twice(self, x: [b D]) -> [b D]:\n"
        "        return self.forward(x) +* 2.0\n"
        "\n"
        "fn main():\n"
        "    m = Lin.init(seed=0)\n"
        "    print(m(ones([2 D])), m.twice(ones([2 D])))\n"
    )
    a = check_text(src)
    assert [(d.code, src[d.span.start : d.span.end]) for d in a.diagnostics] == [
        ("E0004", "("),
        ("E0101", "undefined_name"),
        ("E0003", "*"),
    ]
    assert [info.name for _, info in a.functions(a.parsed.items[1])] == ["Lin.forward", "Lin.twice"]


def test_a_broken_method_header_blanks_the_method() -> None:
    src = (
        "model Lin:\n"
        "    param w: [4 4] = zeros\n"
        "\n"
        "    fn forward(self, x: [b 4] -> [b 4]:\n"
        "        return x @ self.w\n"
        "\n"
        "    fn other(self) -> [4 4]:\n"
        "        return self.w\n"
    )
    a = check_text(src)
    assert [(d.code, src[d.span.start : d.span.end]) for d in a.diagnostics] == [("E0004", "(")]
    assert [info.name for _, info in a.functions(a.parsed.items[0])] == ["Lin.other"]


def test_broken_header_keeps_its_name_known() -> None:
    src = "fn helper(x: Int -> Int:\n    return x\n\nfn main():\n    print(helper(1))\n"
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == ["E0004"], "the call to helper is not reported"


def test_errors_in_several_items_are_all_reported() -> None:
    src = "fn a():\n    x = \n\nfn b():\n    y = )\n\nfn c():\n    print(1)\n"
    assert [d.code for d in check_text(src).diagnostics] == ["E0003", "E0004"]


# ------------------------------------------------------------------ bad input


def test_crlf_line_endings() -> None:
    src = MLP.replace("\n", "\r\n")
    assert check_text(src).diagnostics == []
    bad = "fn main():\r\n    print(totl)\r\n"
    a = check_text(bad)
    (d,) = a.diagnostics
    p = a.lines.position(d.span.start)
    assert (p.line, p.column) == (1, 10)


def test_lone_carriage_returns_end_lines() -> None:
    src = "fn main():\r    x = 1\r    print(x)\r"
    assert check_text(src).diagnostics == []


def test_missing_final_newline() -> None:
    assert check_text(MLP.rstrip("\n")).diagnostics == []
    a = check_text("fn main():\n    print(totl)")
    assert [d.code for d in a.diagnostics] == ["E0101"]


def test_empty_and_comment_only_files() -> None:
    for src in ("", "\n\n", "# nothing here\n", "   \n\t\n"):
        a = check_text(src)
        assert a.diagnostics == [] and not a.internal_errors


def test_indented_text_before_the_first_item() -> None:
    (d,) = check_text("   x = 1\ndim D = 4\n").diagnostics
    assert (d.code, d.message) == ("E0005", "this line is indented more than its block")


def test_invalid_utf8_still_checks_the_rest() -> None:
    a = check_bytes(b"fn main():\n    print(\xff\xfe)\n    print(totl)\n")
    assert [d.code for d in a.diagnostics] == ["E0001", "E0002", "E0101"]


def test_nul_and_control_characters() -> None:
    a = check_text("fn main():\n    x = 1\x00\n    print(x)\n")
    assert [(d.code, d.message) for d in a.diagnostics] == [("E0002", "unexpected character U+0000")]


def test_a_control_character_alone_on_a_line() -> None:
    # NUL stands in for skipped statements inside the parser: written by the
    # user, it is reported (before any parse), and so is the old placeholder.
    for ch, shown in (("\x00", "U+0000"), ("\ue000", "U+E000")):
        src = f"fn main():\n    {ch}\n    print(totl)\n"
        a, b = check_text(src).diagnostics
        assert (a.code, a.message, a.span.start) == ("E0002", f"unexpected character {shown}", src.index(ch))
        assert (b.code, src[b.span.start : b.span.end]) == ("E0101", "totl")


def test_five_hundred_nested_parentheses() -> None:
    # Parentheses nest as the user sees them: the 100th is past the limit (the
    # function's block is the first level); the statement is skipped, and the
    # names it binds are known (no cascade at `print(x)`).
    src = "fn main():\n    x = " + "(" * 500 + "1" + ")" * 500 + "\n    print(x)\n"
    (d,) = check_text(src).diagnostics
    assert (d.code, d.message) == ("E0009", "nested more than 100 levels deep")
    first = src.index("x = ") + 4
    assert (d.span.start, d.span.end) == (first + 99, first + 100)


def test_five_hundred_nested_calls() -> None:
    src = "fn main():\n    x = " + "abs(" * 500 + "ones([2])" + ")" * 500 + "\n    print(x)\n"
    (d,) = check_text(src).diagnostics
    assert (d.code, d.message) == ("E0009", "nested more than 100 levels deep")


def test_five_hundred_unclosed_parentheses() -> None:
    src = "fn main():\n    x = " + "(" * 500 + "1\n    print(1)\n"
    (d,) = check_text(src).diagnostics
    assert d.code == "E0004"


def test_deep_expression_without_brackets() -> None:
    src = "fn main():\n    x = " + "- " * 300 + "1\n    print(x)\n"
    (d,) = check_text(src).diagnostics
    assert d.code == "E0009"


def test_one_megabyte_file() -> None:
    body = "".join(f"fn f{i}(x: [b]) -> [b]:\n    y = x * 2.0 + 1.0\n    return relu(y)\n\n" for i in range(15000))
    assert len(body) > 1_000_000
    a = check_text(body)
    assert a.diagnostics == [] and not a.internal_errors


def test_one_megabyte_line() -> None:
    # A flat sum reads flat, but it is left-nested in the tree: 100,000 links
    # are fine (no pass over the tree runs out of recursion on them), past
    # that the statement is E0015 at the first link too many, once.
    src = "fn main():\n    x = " + "1 + " * 250_000 + "1\n    print(x)\n"
    a = check_text(src)
    (d,) = a.diagnostics
    at = src.index("x = ") + 4 + 4 * 100_000 + 2
    assert (d.code, d.span.start, d.span.end, src[at]) == ("E0015", at, at + 1, "+") and not a.internal_errors


def test_emoji_and_cjk() -> None:
    src = '# 模型 🚀\nfn main():\n    s = "损失 🔥"\n    print(s, totl)\n'
    a = check_text(src)
    (d,) = a.diagnostics
    assert src[d.span.start : d.span.end] == "totl"


# ------------------------------------------------------------------ never an exception

_PIECES = [
    "fn ",
    "model ",
    "dim ",
    "param ",
    "buffer ",
    "extern fn ",
    "mut ",
    "return ",
    "if ",
    "elif ",
    "else",
    "for ",
    " in ",
    "while ",
    "range(",
    "value_and_grad(",
    "Grad[",
    "Index[",
    "[",
    "]",
    "(",
    ")",
    ":",
    ",",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "@",
    "|>",
    " as ",
    "m.w1",
    "x",
    "y",
    "b",
    "D",
    "1",
    "0.5",
    '"s"',
    "#c",
    "\n",
    "\n    ",
    "\n        ",
    "\t",
    " ",
    "Mlp",
    "[b D]",
    "[] NonNeg",
    "->",
    "over=C",
    "seed=1",
    "\r\n",
    "\\",
    "'",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_random_text_never_raises(text: str) -> None:
    a = check_text(text)
    assert not a.internal_errors
    for d in a.diagnostics:
        assert 0 <= d.span.start <= d.span.end <= len(text) + 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=80))
def test_random_token_soup_never_raises(pieces: list[str]) -> None:
    a = check_text("".join(pieces))
    assert not a.internal_errors


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_programs_never_raise(data) -> None:
    src = MLP
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(src)))
        j = data.draw(st.integers(i, min(len(src), i + 12)))
        src = src[:i] + data.draw(st.sampled_from(_PIECES + [""])) + src[j:]
    a = check_text(src)
    assert not a.internal_errors


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_raise(data: bytes) -> None:
    assert not check_bytes(data).internal_errors


def test_an_annotated_assignment_is_one_syntax_error_and_binds_its_name() -> None:
    # `x: [3] = zeros([3])`, as Python writes a type: the statement is skipped,
    # and its name is known after it (no E0101 at `print(x)`)
    src = "fn main():\n    x: [3] = zeros([3])\n    print(x)\n"
    (d,) = check_text(src).diagnostics
    assert (d.code, src[d.span.start : d.span.end]) == ("E0003", ":")
    assert d.message == (
        "expected ',', '=' or the end of the line, found ':' "
        "(an assignment takes no type: the name has its value's type, as in x = zeros([3]))"
    )
