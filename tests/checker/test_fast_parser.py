"""The hand-written fast parser (checker/fast_parser.py) against lark, the
reference (parse_item(text, fast=False)): on every item it accepts, the same
tree (nodes, fields, spans); on anything lark reports a diagnostic in, a
decline (None). The corpus (examples, docs, fixtures, catalog, a generated
bench program), a seeded slice of tests/stress/parser_fuzz.py, and the forms
where a hand-written parser most easily parts from an LALR one, with the
exact trees lark builds."""

from __future__ import annotations

import pytest
from stress import parser_fuzz as fuzz  # tests/ is on pytest's pythonpath

from quiver.checker import ast as A
from quiver.checker import fast_parser
from quiver.checker.parser import parse_item

S = A.Span


def lark(text: str):
    return parse_item(text, fast=False)


def same_as_lark(text: str) -> A.Item:
    """The fast parser's tree, asserted equal to lark's clean parse."""
    ref = lark(text)
    assert ref.diagnostics == (), [(d.code, d.message) for d in ref.diagnostics]
    assert ref.item is not None
    fast = fast_parser.parse(text)
    assert fast is not None, f"declined {text!r}, which lark parses cleanly"
    assert A.dump(fast) == A.dump(ref.item), fuzz._tree_diff(A.dump(fast), A.dump(ref.item))
    return fast


def declines(text: str) -> None:
    """lark reports a syntax error in `text`, and the fast parser declines it."""
    assert lark(text).diagnostics, f"lark parses {text!r} cleanly"
    assert fast_parser.parse(text) is None


class Loc:
    """Spans and leaves found by their text in `src`, from offset `base` on."""

    def __init__(self, src: str, base: int = 0) -> None:
        self.src = src
        self.base = base

    def __call__(self, sub: str, nth: int = 0) -> A.Span:
        """The span of the nth occurrence of `sub`."""
        start = self.base - 1
        for _ in range(nth + 1):
            start = self.src.index(sub, start + 1)
        return S(start, start + len(sub))

    def name(self, n: str, nth: int = 0) -> A.Name:
        return A.Name(self(n, nth), n)

    def ident(self, n: str, nth: int = 0) -> A.Ident:
        return A.Ident(self(n, nth), n)


def ret_expr(expr: str) -> tuple[Loc, A.Expr]:
    """`expr` returned from a function: a locator from the expression on, and
    the tree (checked equal to lark's)."""
    src = f"fn f():\n    return {expr}\n"
    item = same_as_lark(src)
    assert isinstance(item, A.FnDecl)
    stmt = item.body[0]
    assert isinstance(stmt, A.Return) and len(stmt.values) == 1
    return Loc(src, src.index("return ") + 7), stmt.values[0]


def dump_eq(got: A.Node, want: A.Node) -> None:
    assert A.dump(got) == A.dump(want), fuzz._tree_diff(A.dump(got), A.dump(want))


# ------------------------------------------------------------------ corpus

PROGRAMS = fuzz.corpus(bench_lines=2000)
ITEMS = fuzz.corpus_items(PROGRAMS)
# Programs whose every clean item the fast path must take (the docs and the
# fixtures hold error cases and corner cases on purpose; they are compared,
# and their declines listed, below).
MUST_ACCEPT = ("examples/", "bench/generate.py")
# Constructs the fast path declines although lark parses them cleanly, on
# purpose (there are none in the examples or the bench program today).
DECLINED_ON_PURPOSE: set[str] = set()


def test_the_corpus_is_all_there() -> None:
    names = {n for n, _ in PROGRAMS}
    assert sum(n.startswith("examples/") for n in names) >= 10
    assert sum(".md:" in n for n in names) >= 100
    assert sum(n.startswith("tests/checker/diagnostics/") for n in names) >= 10
    assert sum(n.startswith("catalog ") for n in names) >= 100
    assert len(ITEMS) > 1000


def test_every_corpus_item_parses_as_lark_parses_it() -> None:
    result = fuzz.Result()
    for program, text in ITEMS:
        fuzz.check_case(fuzz.Case(-1, program, [], text), 0, result, shrink=False)
    assert not result.failures, "\n\n".join(fuzz.report(f) for f in result.failures[:5])
    assert result.counts[fuzz.ACCEPTED] > 900


def test_no_clean_item_of_the_examples_or_the_bench_program_is_declined() -> None:
    declined = []
    for program, text in ITEMS:
        chosen = program.startswith(MUST_ACCEPT) and text not in DECLINED_ON_PURPOSE
        if chosen and fuzz.judge(text).kind == fuzz.DECLINED_CLEAN:
            declined.append((program, text))
    assert not declined, "\n".join(f"{p}: {t!r}" for p, t in declined)


def test_a_clean_item_of_the_docs_or_fixtures_is_declined_only_for_tabs_or_deep_nesting() -> None:
    declined = []
    for program, text in ITEMS:
        on_purpose = "\t" in text or "\f" in text or fuzz.deep(text)
        if not on_purpose and fuzz.judge(text).kind == fuzz.DECLINED_CLEAN:
            declined.append((program, text))
    assert not declined, "\n".join(f"{p}: {t!r}" for p, t in declined)


def test_the_bench_program_is_all_taken_by_the_fast_path() -> None:
    (bench,) = [t for n, t in PROGRAMS if n.startswith("bench/")]
    assert bench.count("\n") >= 1900
    for text in fuzz.item_texts(bench):
        if fuzz.parser._strip_trivia(text):
            same_as_lark(text)


# ----------------------------------------------------------- a fuzz slice


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_seeded_slice_of_the_fuzz_finds_no_mismatch(seed: int) -> None:
    result = fuzz.run(1_200, seed=seed, with_corpus=False, shrink=False)
    assert result.cases == 1_200
    assert not result.failures, "\n\n".join(fuzz.report(f) for f in result.failures[:3])
    # The slice reaches both sides: trees the fast parser builds and errors it declines.
    assert result.counts.get(fuzz.ACCEPTED, 0) > 250
    assert result.counts.get(fuzz.DECLINED_ERROR, 0) > 250


def test_the_fuzz_catches_a_wrong_tree_and_an_exception(monkeypatch) -> None:
    real = fast_parser.parse

    def shifted(text: str):
        item = real(text)
        if isinstance(item, A.DimDecl):
            return A.DimDecl(S(item.span.start, item.span.end + 1), item.name, item.value)
        return item

    monkeypatch.setattr(fast_parser, "parse", shifted)
    v = fuzz.judge("dim N = 3\n")
    assert v.kind == fuzz.MISMATCH and "span" in v.detail
    small = fuzz.shrink_text("dim N = 3 + 4 * 5\n", lambda t: fuzz.judge(t).kind == fuzz.MISMATCH)
    assert small == "dim N=3"  # spaces go too, but no two words are glued together

    def raising(text: str):
        raise ValueError("boom")

    monkeypatch.setattr(fast_parser, "parse", raising)
    v = fuzz.judge("dim N = 3\n")
    assert v.kind == fuzz.EXCEPTION and "boom" in v.detail


def test_the_cases_are_seeded() -> None:
    items = ITEMS[:50]
    a = [fuzz.make_case(4, n, items) for n in range(30)]
    b = [fuzz.make_case(4, n, items) for n in range(30)]
    assert a == b
    assert len({c.text for c in a}) > 20


# ------------------------------------------------------ the tricky forms


def test_a_parenthesised_operand_is_not_in_the_spans() -> None:
    # lark's `paren` gives the inner node, with its own span: the Binary
    # around it starts at `a`, not at the parenthesis.
    x, e = ret_expr("(a + b) * c")
    inner = A.Binary(x("a + b"), "+", x.name("a"), x.name("b"), x("+"))
    dump_eq(e, A.Binary(S(inner.span.start, x("c").end), "*", inner, x.name("c"), x("*")))
    x, e = ret_expr("c * ((a))")
    dump_eq(e, A.Binary(S(x("c").start, x("a").end), "*", x.name("c"), x.name("a"), x("*")))


def test_return_with_a_trailing_comma() -> None:
    src = "fn f():\n    return a,\n"
    x = Loc(src)
    item = same_as_lark(src)
    assert isinstance(item, A.FnDecl)
    dump_eq(item.body[0], A.Return(x("return a,"), (x.name("a"),)))
    same_as_lark("fn f():\n    return a, b,\n")
    same_as_lark("fn f():\n    return\n")


def test_brackets_shape_literal_or_name_list() -> None:
    x, e = ret_expr("[1]")
    dump_eq(e, A.TensorType(x("[1]"), (A.DimInt(x("1"), 1),), None))
    x, e = ret_expr("[1,]")
    dump_eq(e, A.TensorLit(x("[1,]"), (A.IntLit(x("1"), 1),)))
    x, e = ret_expr("[1.0]")
    dump_eq(e, A.TensorLit(x("[1.0]"), (A.FloatLit(x("1.0"), 1.0),)))
    x, e = ret_expr("[-1]")
    dump_eq(e, A.TensorLit(x("[-1]"), (A.Unary(x("-1"), "-", A.IntLit(x("1"), 1)),)))
    x, e = ret_expr("[a, b]")
    dump_eq(e, A.NameList(x("[a, b]"), (x.name("a"), x.name("b"))))
    x, e = ret_expr("[[1.0],[2.0]]")
    dump_eq(
        e,
        A.TensorLit(
            x("[[1.0],[2.0]]"),
            (
                A.TensorLit(x("[1.0]"), (A.FloatLit(x("1.0"), 1.0),)),
                A.TensorLit(x("[2.0]"), (A.FloatLit(x("2.0"), 2.0),)),
            ),
        ),
    )
    x, e = ret_expr("[(T*E)]")
    dump_eq(
        e,
        A.TensorType(
            x("[(T*E)]"),
            (A.DimBinary(x("(T*E)"), "*", A.DimName(x("T"), "T"), A.DimName(x("E"), "E"), parens=True),),
            None,
        ),
    )
    x, e = ret_expr("[a.b]")
    dump_eq(e, A.TensorType(x("[a.b]"), (A.DimName(x("a.b"), "a.b"),), None))
    for text in ("[2,]", "[a,]", "[1, -2.0, +3,]", "[]", "[B T] f32", "[N] Index[C]", "[[1,], [2,]]", "[x] f32 @ y"):
        ret_expr(text)


def test_wrt_with_one_name_is_a_name_list() -> None:
    x, e = ret_expr("f(wrt=[a])")
    arg = A.Arg(x("wrt=[a]"), x.ident("wrt"), A.NameList(x("[a]"), (x.name("a"),)))
    dump_eq(e, A.Call(x("f(wrt=[a])"), x.name("f"), (arg,), x("(wrt=[a])")))
    # Elsewhere one name in brackets is a shape, and `wrt=[a] f32` stays one.
    x, e = ret_expr("f(over=[a])")
    assert isinstance(e, A.Call) and isinstance(e.args[0].value, A.TensorType)
    x, e = ret_expr("f(wrt=[a] f32)")
    assert isinstance(e, A.Call) and isinstance(e.args[0].value, A.TensorType)
    ret_expr("g(m, wrt=[a, b,], batch=b)")


def test_casts_chain() -> None:
    x, e = ret_expr("x as [N] f32 as Foo")
    shape = A.TensorType(x("[N] f32"), (A.DimName(x("N"), "N"),), A.ElemType(x("f32"), x.ident("f32")))
    first = A.Cast(x("x as [N] f32"), x.name("x"), shape)
    dump_eq(e, A.Cast(x("x as [N] f32 as Foo"), first, A.NamedType(x("Foo"), x.ident("Foo"))))
    ret_expr("-x as [N] * y as (A, [N],)")
    ret_expr("x as Grad[Net, wrt=[a, b]]")


def test_power_binds_tighter_than_unary_minus_and_to_the_right() -> None:
    x, e = ret_expr("a ** -b ** c")
    inner = A.Binary(x("b ** c"), "**", x.name("b"), x.name("c"), x("**", 1))
    dump_eq(e, A.Binary(x("a ** -b ** c"), "**", x.name("a"), A.Unary(x("-b ** c"), "-", inner), x("**")))
    x, e = ret_expr("-x ** 2")
    power = A.Binary(x("x ** 2"), "**", x.name("x"), A.IntLit(x("2"), 2), x("**"))
    dump_eq(e, A.Unary(x("-x ** 2"), "-", power))
    ret_expr("a ** b ** c ** -d")
    ret_expr("f(x)[0].y ** 2")


def test_not_takes_a_comparison() -> None:
    x, e = ret_expr("not a == b")
    cmp = A.Compare(x("a == b"), "==", x.name("a"), x.name("b"), x("=="))
    dump_eq(e, A.Not(x("not a == b"), cmp))
    ret_expr("not not a and b or not c")
    ret_expr("x |> f(y) |> g")


def test_slices_tuples_pipes_and_calls() -> None:
    x, e = ret_expr("x[1:]")
    dump_eq(e, A.Index(x("x[1:]"), x.name("x"), A.Slice(x("1:"), A.IntLit(x("1"), 1), None)))
    x, e = ret_expr("x[:]")
    dump_eq(e, A.Index(x("x[:]"), x.name("x"), A.Slice(x(":"), None, None)))
    x, e = ret_expr("(a,)")
    dump_eq(e, A.TupleExpr(x("(a,)"), (x.name("a"),)))
    x, e = ret_expr("x |> f(y)")
    call = A.Call(x("f(y)"), x.name("f"), (A.Arg(x("y"), None, x.name("y")),), x("(y)"))
    dump_eq(e, A.Pipe(x("x |> f(y)"), x.name("x"), call, x("|>")))
    for text in (
        "x[:n]",
        "x[a:b]",
        "x[i][j:]",
        "(a, b,)",
        "((a, b), c)",
        "f(x, y=1,)",
        "f()",
        "\"a\" + 'b'",
        "1_000 + .5 + 1e3 + 1.",
    ):
        ret_expr(text)


def test_subscripts_steps_and_ellipsis() -> None:
    x, e = ret_expr("x[1:5:2]")
    one = A.IntLit(x("1"), 1)
    five = A.IntLit(x("5"), 5)
    dump_eq(e, A.Index(x("x[1:5:2]"), x.name("x"), A.Slice(x("1:5:2"), one, five, A.IntLit(x("2"), 2))))
    x, e = ret_expr("x[..., ::2]")
    items = (A.EllipsisItem(x("...")), A.Slice(x("::2"), None, None, A.IntLit(x("2"), 2)))
    dump_eq(e, A.Index(x("x[..., ::2]"), x.name("x"), A.Subscripts(x("..., ::2"), items)))
    x, e = ret_expr("x[...]")
    dump_eq(e, A.Index(x("x[...]"), x.name("x"), A.Subscripts(x("..."), (A.EllipsisItem(x("...")),))))
    x, e = ret_expr("x[a::]")
    dump_eq(e, A.Index(x("x[a::]"), x.name("x"), A.Slice(x("a::"), x.name("a"), None, None)))
    for text in (
        "x[:, 1:3]",
        "x[i, j]",
        "x[..., -1]",
        "x[:, -B:]",
        "x[::]",
        "x[:, 0::2, ...]",
        "x[n - 1:n + 2:k * 2]",
        "x[labels, :, 0]",
        "x[...,]",
        "x[0::]",
    ):
        ret_expr(text)


def test_index_assignment_and_a_for_with_names() -> None:
    src = (
        "fn f(m: M, x: [N]):\n    x[:, :10] = 0.0\n    m.buf[t] = v\n    m.blocks[i].w[t] += v\n    x[..., 0] -= 1.0\n"
    )
    same_as_lark(src)
    src = "fn f():\n    for xb, yb in e:\n        print(xb, yb)\n    for a,b,c in e: pass\n"
    item = same_as_lark(src)
    assert isinstance(item, A.FnDecl)
    loop = item.body[0]
    assert isinstance(loop, A.For)
    assert [t.text for t in loop.targets] == ["xb", "yb"]
    x = Loc(src)
    assert loop.targets[1].span == x("yb")


def test_comparisons_do_not_chain() -> None:
    declines("fn f():\n    return a < b < c\n")
    declines("fn f():\n    return a == b != c\n")
    same_as_lark("fn f():\n    return (a < b) < c\n")


def test_hard_keywords_are_never_names() -> None:
    declines("fn f():\n    return x.if\n")
    declines("fn if():\n    pass\n")
    declines("fn f(in: [N]):\n    pass\n")
    declines("dim for = 1\n")
    declines("fn f():\n    import = 1\n")


def test_soft_keywords_are_names_where_a_name_fits() -> None:
    src = "fn f(model: Net):\n    dim = 1\n    param = model.param + dim\n    on = buffer(model)\n    return on\n"
    x = Loc(src)
    item = same_as_lark(src)
    assert isinstance(item, A.FnDecl)
    dump_eq(item.body[0], A.Assign(x("dim = 1"), (x.name("dim"),), A.IntLit(x("1"), 1)))
    assign = item.body[1]
    assert isinstance(assign, A.Assign) and isinstance(assign.value, A.Binary)
    dump_eq(assign.value.left, A.Field(x("model.param"), x.name("model", 1), x.ident("param", 1)))
    same_as_lark("model on on on:\n    param param: [dim] = model\n")
    same_as_lark("dim dim = dim\n")


def test_model_with_a_device() -> None:
    src = 'model M on "cuda:1":\n    param w: [N] = zeros\n    buffer n: [] i64\n'
    x = Loc(src)
    item = same_as_lark(src)
    assert isinstance(item, A.ModelDecl)
    assert item.device is not None
    dump_eq(item.device, A.Device(x('on "cuda:1"'), "cuda:1"))
    assert [m.kind for m in item.members] == ["param", "buffer"]
    assert item.span == x(src.rstrip("\n"))
    same_as_lark("model M on cpu:\n    param w: [N]\n")
    same_as_lark("model M on 'x\\'y':\n    param w: [N]\n")


def test_extern_fn() -> None:
    src = 'extern fn f(x: [N]) -> [N] from "m:f"\n'
    x = Loc(src)
    item = same_as_lark(src)
    shape = A.TensorType(x("[N]"), (A.DimName(x("N"), "N"),), None)
    want = A.ExternDecl(
        x(src.rstrip("\n")),
        x.ident("f", 1),
        (A.Param(x("x: [N]"), False, x.ident("x", 1), shape),),
        A.TensorType(x("[N]", 1), (A.DimName(x("N", 1), "N"),), None),
        A.StrLit(x('"m:f"'), "m:f"),
    )
    dump_eq(item, want)
    same_as_lark("extern fn g(mut a: (A, [N],), b: layers.Mlp,) from 'x'\n")


def test_a_trait_without_methods_is_pass() -> None:
    src = "trait Module:\n    pass\n"
    x = Loc(src)
    dump_eq(same_as_lark(src), A.TraitDecl(x(src.rstrip("\n")), x.ident("Module"), ()))
    declines("trait Module:\n    pass\n    fn forward(self) -> Int\n")
    declines("trait Module:\n    fn forward(self) -> Int\n    pass\n")
    declines("trait Module:\n    pass\n    pass\n")
    declines("trait Module: pass\n")


def test_a_tuple_type_of_one() -> None:
    src = "model N:\n    param layers: (nn.Linear[4, 8],)\n"
    x = Loc(src)
    item = same_as_lark(src)
    assert isinstance(item, A.ModelDecl)
    (member,) = item.members
    assert isinstance(member.type, A.TupleType)
    assert member.type.span == x("(nn.Linear[4, 8],)") and len(member.type.items) == 1
    same_as_lark("fn f(a: ([4],), b: ((A,), B,)) -> ([N] f64,):\n    pass\n")
    declines("fn f(a: ([4])):\n    pass\n")
    declines("fn f(a: (,)):\n    pass\n")
    declines("fn f(a: ([4],,)):\n    pass\n")


def test_imports() -> None:
    src = "from a.b import x as y, z,\n"
    x = Loc(src)
    item = same_as_lark(src)
    want = A.FromImport(
        x(src.rstrip("\n")),
        x.ident("a.b"),
        (
            A.ImportName(x("x as y"), x.ident("x"), x.ident("y")),
            A.ImportName(x("z"), x.ident("z"), None),
        ),
    )
    dump_eq(item, want)
    src = "import nn.layers.deep\n"
    x = Loc(src)
    dump_eq(same_as_lark(src), A.ImportDecl(x(src.rstrip("\n")), x.ident("nn.layers.deep")))
    declines("from a import\n")
    declines("from a import x,,\n")


def test_types_in_every_position() -> None:
    same_as_lark("fn f(g: Grad[Net, wrt=[a, b]], t: (A, [N],), m: layers.Mlp) -> ([N] f32, Grad[Net]):\n    pass\n")
    same_as_lark("model M:\n    param w: [(T*E) (N+1) a.b 3] Index[layers.C] = zeros\n    param s: Sub\n")
    same_as_lark("fn f(x: [((H-K)/S+1)]) -> Mode:\n    pass\n")
    same_as_lark("fn f(g: Grad[Net, wrt=[a,]]):\n    pass\n")


def test_statements_and_blocks() -> None:
    same_as_lark("fn f(x: [N]) -> [N]:\n    if x: return x\n    elif y:\n        pass\n    else: return y\n")
    same_as_lark("fn f():\n    for i in range(3):\n        while i < 2:\n            i += 1\n            break\n")
    same_as_lark("fn f(): return 1\n")
    same_as_lark("fn f():\n    a, (b, c), = g()\n    m.w -= 0.1 * g.w\n    x\n")


def test_line_endings_continuations_and_comments() -> None:
    for ending in ("\r\n", "\r"):
        same_as_lark(f"fn f():{ending}    x = 1{ending}    return x{ending}")
        same_as_lark(f"dim N = 3{ending}")
    same_as_lark("fn f():\n    x = 1 + \\\n        2\n    return (x +\n  1)  # done\n\n# trailing\n")
    same_as_lark("fn f():  # header\n    # a comment\n\n    return 1\n")
    same_as_lark("dim N = 3")  # no newline at the end


def test_unicode_names_and_digits() -> None:
    same_as_lark("fn α(βeta: [名前]) -> [x²]:\n    return βeta * ١٢\n")
    same_as_lark("dim ℌ = ١_٢ + 3.٥\n")


@pytest.mark.parametrize(
    "text",
    [
        "fn f(x: [N]):\n\treturn x\n",  # a tab: lark reads it, the fast path leaves it to lark
        "fn f():\n    return \f x\n",
        "fn f():\n    return " + "(" * 40 + "x" + ")" * 40 + "\n",
        "fn f():\n    return " + "-" * 40 + "x\n",
        "fn f():\n    return " + "not " * 40 + "x\n",
        "fn f():\n    return " + " ** ".join(["x"] * 40) + "\n",
        # lark's contextual lexer reads these oddly (a keyword glued to a name,
        # `1e3` in a shape as `1` and `e3`, a continuation at the very end).
        "fnf(): pass\n",
        "fn f(x: [1e3 D]):\n    pass\n",
        "fn f():\n    return x\n    \\",
    ],
)
def test_what_the_fast_path_leaves_to_lark_parses_the_same_through_parse_item(text: str) -> None:
    ref = lark(text)
    got = parse_item(text)
    assert got.diagnostics == ref.diagnostics
    assert A.dump(got.item) == A.dump(ref.item)
    tree = fast_parser.parse(text)
    assert tree is None or (not ref.diagnostics and A.dump(tree) == A.dump(ref.item))


@pytest.mark.parametrize(
    "text",
    [
        "fn f():\n    return (a\n",
        "fn f():\n    return a)\n",
        "fn f():\n    x = = 1\n",
        "fn f():\n  x = 1\n   y = 2\n",
        "fn f():\n    x = 1\n  y = 2\n",
        "fn f(:\n    pass\n",
        "fn f()\n    pass\n",
        "model M:\n    w: [N]\n",
        "model M:\n",
        "dim N = \n",
        "dim N = 1 2\n",
        "fn f():\n    return [1 2.0]\n",
        "fn f():\n    return [a, 1]\n",
        "fn f():\n    return [[1], [2]]\n",  # an integer alone in brackets is a shape
        "fn f():\n    return x[1:2:3:4]\n",
        "fn f():\n    return x[....]\n",
        "fn f():\n    return x[...1]\n",
        "fn f(x: [... d]):\n    pass\n",
        "fn f():\n    for a, in e:\n        pass\n",
        "fn f():\n    for (a, b) in e:\n        pass\n",
        "fn f():\n    return (a, b) ** \n",
        "fn f():\n    return 'open\n",
        "import x\\\n",
        # A backslash continuation before a \r\n joins the lines (lark skips "\\\r\n" whole).
        "import x\\\r\n",
        "fn f():\n    return x \\\r\n",
        "fn f():\r\n    x = 1\\\r\n    y = 2\r\n",
        "fn f():\n    return " + "(" * 120 + "x" + ")" * 120 + "\n",
        "fn f():\n    return x $ y\n",
        "fn f():\n    return \x00\n",
        # lark reports the character it uses internally anywhere, in comments and strings too.
        "dim N = 1  # \x00\n",
        'fn f():\n    return "a\x00b"\n',
        # A number written against a word: one word, an error (E0003), never `2 N`.
        "fn f(x: [2N]):\n    pass\n",
        "fn f(x: [1.5e3N]):\n    pass\n",
    ],
)
def test_errors_are_declined(text: str) -> None:
    declines(text)
