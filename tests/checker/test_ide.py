"""The IDE queries (quiver.checker.ide), as data: each test is a program with a
`$0` cursor and the exact answer expected there."""

from __future__ import annotations

import re

import pytest

from quiver.checker import check_text, ide
from quiver.checker.ast import Span

PROGRAM = """\
dim D = 4
dim H = 8
dim C = 3

model Mlp:
    param w1: [D H] = normal(0.0, 0.02)
    param b1: [H] = zeros
    param w2: [H C] = normal(0.0, 0.02)
    param b2: [C] = zeros
    buffer steps: [] i64 = 0

fn hidden(m: Mlp, x: [b D]) -> [b H]:
    return relu(x @ m.w1 + m.b1)

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return hidden(m, x) @ m.w2

fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(forward(m, x), y, over=C)

fn step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    m.w1 = m.w1 - lr * g.w1
    m.b1 = m.b1 - lr * g.b1
    m.w2 = m.w2 - lr * g.w2
    m.steps = m.steps + 1
    return l

fn main():
    m = Mlp.init(seed=0)
    x = randn([16 D], seed=1)
    y = randint([16] Index[C], seed=2)
    for i in range(10):
        l = step(m, x, y, 0.1)
        print("loss", l)
"""


def cursor(src: str) -> tuple[str, int]:
    assert src.count("$0") == 1, "one $0 cursor"
    i = src.index("$0")
    return src[:i] + src[i + 2 :], i


def mark(needle: str, nth: int = 0, into: int = 0, src: str = PROGRAM) -> str:
    """PROGRAM with the cursor `into` characters into the nth `needle`."""
    i = -1
    for _ in range(nth + 1):
        i = src.index(needle, i + 1)
    return src[: i + into] + "$0" + src[i + into :]


def hover_at(src: str) -> tuple[str, str] | None:
    text, offset = cursor(src)
    h = ide.hover(check_text(text), offset)
    return None if h is None else (text[h.span.start : h.span.end], h.markdown)


def code(text: str) -> str:
    return f"```quiver\n{text}\n```"


# ====================================================================== hover

GRAD_FIELDS = "Fields (one per param of `Mlp`; buffers have no gradient):\n\n" + code(
    "w1: [D H]\nb1: [H]\nw2: [H C]\nb2: [C]"
)

LOSS_HOVER = (
    code("fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg")
    + "\n\n**Param reads** of `m: Mlp`: reads w1, b1, w2 — never b2"
    + "\n- `w1`: `forward(...)` in `loss` (line 19) → `hidden(...)` in `forward` (line 16) → `m.w1` in `hidden` (line 13)"
    + "\n- `b1`: `forward(...)` in `loss` (line 19) → `hidden(...)` in `forward` (line 16) → `m.b1` in `hidden` (line 13)"
    + "\n- `w2`: `forward(...)` in `loss` (line 19) → `m.w2` in `forward` (line 16)"
)

HOVERS = [
    # a Grad[M] value: its fields, one per param in declaration order, no buffers
    (mark("g = value_and_grad", into=0), ("g", code("(local) g: Grad[Mlp]") + "\n\n" + GRAD_FIELDS)),
    (mark("g.w1", into=0), ("g", code("(local) g: Grad[Mlp]") + "\n\n" + GRAD_FIELDS)),
    (
        mark("g.w1", into=3),
        ("w1", code("(gradient) Grad[Mlp].w1: [D H]") + "\n\nThe gradient with respect to param `w1` of `Mlp`."),
    ),
    # locals and parameters, with inferred shapes
    (mark("l, g", into=0), ("l", code("(local) l: [] NonNeg"))),
    (mark("x = randn"), ("x", code("(local) x: [16 D]"))),
    (mark("y = randint"), ("y", code("(local) y: [16] Index[C]"))),
    (mark("for i in", into=4), ("i", code("(local) i: Int"))),
    (mark("mut m", into=4), ("m", code("(param) mut m: Mlp"))),
    (mark("x: [b D]"), ("x", code("(param) x: [b D]"))),
    (mark("lr * g.w1"), ("lr", code("(param) lr: Float"))),
    # model members, read and written
    (mark("m.w1 =", into=2), ("w1", code("param Mlp.w1: [D H]"))),
    (mark("m.steps + 1", into=3), ("steps", code("buffer Mlp.steps: [] i64"))),
    (mark("param b2", into=6), ("b2", code("param Mlp.b2: [C]"))),
    # dims and generic dims
    (mark("over=C", into=5), ("C", code("dim C = 3"))),
    (mark("dim H", into=4), ("H", code("dim H = 8"))),
    (mark("[b D]", into=1), ("b", code("(generic dim) b") + "\n\nBound to a size at each call of `hidden`.")),
    (mark("Index[C]", into=6), ("C", code("dim C = 3"))),
    # models
    (
        mark("model Mlp", into=6),
        (
            "Mlp",
            code(
                "model Mlp\n    param w1: [D H]\n    param b1: [H]\n    param w2: [H C]"
                "\n    param b2: [C]\n    buffer steps: [] i64"
            ),
        ),
    ),
    # functions that take a model: signature and param reads, with the chains of indirect reads
    (mark("fn loss", into=3), ("loss", LOSS_HOVER)),
    (mark("value_and_grad(loss", into=15), ("loss", LOSS_HOVER)),
    (
        mark("fn hidden", into=3),
        (
            "hidden",
            code("fn hidden(m: Mlp, x: [b D]) -> [b H]")
            + "\n\n**Param reads** of `m: Mlp`: reads w1, b1 — never w2, b2",
        ),
    ),
    (mark("fn main", into=3), ("main", code("fn main()"))),
    # built-ins
    (mark("relu"), ("relu", code("relu(x: [..] Float) -> [..] NonNeg") + "\n\nmax(x, 0), elementwise.")),
    (
        mark("value_and_grad", into=2),
        (
            "value_and_grad",
            code("value_and_grad(f, m: M, args...) -> ([] Float, Grad[M])")
            + "\n\nCalls f(m, args...) and returns its value and its gradient with respect"
            " to the params of m." + "\n\nDifferentiates `loss` with respect to `m: Mlp`: reads w1, b1, w2 — never b2.",
        ),
    ),
    (
        mark("Mlp.init", into=5),
        (
            "init",
            code("Mlp.init(seed=Int) -> Mlp")
            + "\n\nA new model with its params and buffers initialised, deterministically for the seed.",
        ),
    ),
    # expressions: the smallest typed expression around the cursor
    (mark("@ m.w1"), ("x @ m.w1", code("[b H]"))),
    (mark("+ m.b1"), ("x @ m.w1 + m.b1", code("[b H]"))),
    (mark("0.1)"), ("0.1", code("Float"))),
    (mark("0.1)", into=3), ("step(m, x, y, 0.1)", code("[] NonNeg"))),  # on the closing parenthesis
    # right after a name: the name
    (
        mark("(m, x, y, 0.1)", into=0),
        (
            "step",
            code("fn step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg")
            + "\n\n**Param reads** of `m: Mlp`: reads w1, b1, w2 — never b2",
        ),
    ),
    (mark('"loss"'), ('"loss"', code("Str"))),
]


@pytest.mark.parametrize("src, expected", HOVERS, ids=[f"{i}" for i in range(len(HOVERS))])
def test_hover(src: str, expected) -> None:
    assert hover_at(src) == expected


def test_hover_right_after_a_name_is_on_that_name() -> None:
    assert hover_at(mark("l, g", into=1)) == ("l", code("(local) l: [] NonNeg"))


@pytest.mark.parametrize(
    "src",
    [
        mark("fn main", into=0),  # a keyword
        mark("# ", src="# a comment\n" + PROGRAM, into=2),  # a comment
        mark("\n\nfn hidden", into=1),  # a blank line
        PROGRAM + "$0",  # the very end
    ],
)
def test_no_hover(src: str) -> None:
    assert hover_at(src) is None


def test_hover_out_of_range_is_none() -> None:
    analysis = check_text(PROGRAM)
    assert ide.hover(analysis, -1) is None
    assert ide.hover(analysis, len(PROGRAM) + 10) is None


def test_hover_of_a_function_that_may_read_everything() -> None:
    src = (
        'model M:\n    param w: [2]\n\nextern fn save(m: M) from "io:save"\n\n'
        "fn keep(m: M) -> [2]:\n    save(m)\n    return m.w\n"
    )
    text = src.replace("fn keep", "fn $0keep")
    assert hover_at(text)[1] == (
        code("fn keep(m: M) -> [2]")
        + "\n\n**Param reads** of `m: M`: may read every param of M (passed to extern fn save)"
        + "\n- `every param`: `passed to extern fn save` in `keep` (line 7)"
    )


def test_hover_in_broken_code_still_answers() -> None:
    src = PROGRAM.replace("    m.steps = m.steps + 1\n", "    m.steps = m.steps +\n")
    assert hover_at(mark("g.w1", into=0, src=src)) == ("g", code("(local) g: Grad[Mlp]") + "\n\n" + GRAD_FIELDS)


# ====================================================================== definition and references


def spans_text(text: str, spans) -> list[str]:
    return [f"{text[s.start : s.end]}@{text[: s.start].count(chr(10)) + 1}" for s in spans]


@pytest.mark.parametrize(
    "src, expected",
    [
        (mark("m.w1 - lr", into=2), ["w1@6"]),
        (mark("g.w1", into=2), ["w1@6"]),
        (mark("over=C", into=5), ["C@3"]),
        (mark("forward(m, x)"), ["forward@15"]),
        (mark("Mlp.init"), ["Mlp@5"]),
        (mark("return l", into=7), ["l@22"]),
        (mark("lr * g.w1"), ["lr@21"]),
        (mark("[b H]", into=1), ["b@12"]),  # a generic dim: its first appearance in the signature
        (mark("relu"), []),  # built-ins have no source
    ],
)
def test_definition(src: str, expected: list[str]) -> None:
    text, offset = cursor(src)
    targets = ide.definition(check_text(text), offset)
    assert spans_text(text, [t.focus for t in targets]) == expected


def test_definition_of_a_reassigned_local_goes_to_the_assignments_that_reach_it() -> None:
    src = "fn f(c: Bool) -> Int:\n    x = 1\n    if c:\n        x = 2\n    return x$0\n"
    text, offset = cursor(src)
    assert spans_text(text, [t.focus for t in ide.definition(check_text(text), offset)]) == ["x@2", "x@4"]


def test_definition_span_covers_the_declaration() -> None:
    text, offset = cursor(mark("g.w1", into=2))
    (target,) = ide.definition(check_text(text), offset)
    assert text[target.span.start : target.span.end] == "param w1: [D H] = normal(0.0, 0.02)"


@pytest.mark.parametrize(
    "src, expected",
    [
        # a model param: its declaration, reads, writes and the gradient's field
        (mark("param w1", into=6), ["w1@6", "w1@13", "w1@23", "w1@23", "w1@23"]),
        (mark("dim C", into=4), ["C@3", "C@8", "C@9", "C@15", "C@18", "C@19", "C@21", "C@32"]),
        (mark("fn loss", into=3), ["loss@18", "loss@22"]),
        (mark("Mlp.init"), ["Mlp@5", "Mlp@12", "Mlp@15", "Mlp@18", "Mlp@21", "Mlp@30"]),
        # a local: every assignment and use in its function, nowhere else
        (mark("l = step", into=0), ["l@34", "l@35"]),
        (mark("[b D]) -> [b H]", into=1), ["b@12", "b@12"]),
    ],
)
def test_references(src: str, expected: list[str]) -> None:
    text, offset = cursor(src)
    assert spans_text(text, ide.references(check_text(text), offset)) == expected


def test_references_without_the_declaration() -> None:
    text, offset = cursor(mark("fn loss", into=3))
    assert spans_text(text, ide.references(check_text(text), offset, include_declaration=False)) == ["loss@22"]


def test_highlights_mark_definitions() -> None:
    text, offset = cursor(mark("return l", into=7))
    found = ide.highlights(check_text(text), offset)
    assert [(text[s.start : s.end], d) for s, d in found] == [("l", True), ("l", False)]


# ====================================================================== document symbols


def test_document_symbols() -> None:
    analysis = check_text(PROGRAM)
    out = [
        (s.name, s.kind, s.detail, [(c.name, c.kind, c.detail) for c in s.children])
        for s in ide.document_symbols(analysis)
    ]
    assert out == [
        ("D", "dim", "= 4", []),
        ("H", "dim", "= 8", []),
        ("C", "dim", "= 3", []),
        (
            "Mlp",
            "model",
            "",
            [
                ("w1", "param", "[D H]"),
                ("b1", "param", "[H]"),
                ("w2", "param", "[H C]"),
                ("b2", "param", "[C]"),
                ("steps", "buffer", "[] i64"),
            ],
        ),
        ("hidden", "fn", "fn hidden(m: Mlp, x: [b D]) -> [b H]", []),
        ("forward", "fn", "fn forward(m: Mlp, x: [b D]) -> [b C]", []),
        ("loss", "fn", "fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg", []),
        ("step", "fn", "fn step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg", []),
        ("main", "fn", "fn main()", []),
    ]
    model = ide.document_symbols(analysis)[3]
    assert PROGRAM[model.span.start : model.span.end].startswith("model Mlp:")
    assert PROGRAM[model.span.start : model.span.end].endswith("buffer steps: [] i64 = 0")
    assert PROGRAM[model.focus.start : model.focus.end] == "Mlp"


# ====================================================================== completion


def complete(src: str) -> list[str]:
    text, offset = cursor(src)
    return [c.label for c in ide.completions(check_text(text), offset)]


def complete_items(src: str) -> list[tuple[str, str, str]]:
    text, offset = cursor(src)
    return [(c.label, c.kind, c.detail) for c in ide.completions(check_text(text), offset)]


def in_body(line: str) -> str:
    """PROGRAM with `line` (holding $0) added at the end of `step`."""
    return PROGRAM.replace("    return l\n", f"    {line}\n    return l\n")


def test_fields_after_a_model() -> None:
    assert complete_items(in_body("z = m.$0")) == [
        ("w1", "field", "param w1: [D H]"),
        ("b1", "field", "param b1: [H]"),
        ("w2", "field", "param w2: [H C]"),
        ("b2", "field", "param b2: [C]"),
        ("steps", "field", "buffer steps: [] i64"),
    ]


def test_fields_after_a_gradient_are_its_params_only() -> None:
    assert complete_items(in_body("z = g.$0")) == [
        ("w1", "field", "w1: [D H]"),
        ("b1", "field", "b1: [H]"),
        ("w2", "field", "w2: [H C]"),
        ("b2", "field", "b2: [C]"),
    ]


def test_fields_while_typing_a_name() -> None:
    assert complete(in_body("z = g.w$0")) == ["w1", "b1", "w2", "b2"]


def test_methods_of_a_model_name() -> None:
    assert complete_items(in_body("z = Mlp.$0")) == [("init", "method", "Mlp.init(seed=Int) -> Mlp")]


def test_nothing_after_a_tensor() -> None:
    assert complete(in_body("z = lr.$0")) == []


def test_dims_after_over() -> None:
    assert complete_items(in_body("z = sum(x, over=$0")) == [
        ("b", "generic", "generic dim of step"),
        ("D", "dim", "dim D = 4"),
        ("H", "dim", "dim H = 8"),
        ("C", "dim", "dim C = 3"),
    ]


def test_names_in_a_body() -> None:
    labels = complete(in_body("z = $0"))
    # locals and parameters first, then generic dims and dims, items, built-ins, keywords
    assert labels[:6] == ["m", "x", "y", "lr", "l", "g"]
    assert labels[6:10] == ["b", "D", "H", "C"]
    assert labels[10:16] == ["Mlp", "hidden", "forward", "loss", "step", "main"]
    assert "relu" in labels and "value_and_grad" in labels and "Eval" in labels and "return" in labels
    assert "i" not in labels  # a local of main


def test_builtins_have_their_signatures() -> None:
    text, offset = cursor(in_body("z = $0"))
    items = {c.label: c for c in ide.completions(check_text(text), offset)}
    assert items["softmax"].detail == "softmax(x: [..] Float, over=d) -> [..] Prob"
    assert items["softmax"].documentation == "Normalised exponentials along dim d; each slice sums to 1."
    assert items["loss"].detail == "fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg"
    assert items["C"].detail == "dim C = 3"
    assert items["g"].detail == "g: Grad[Mlp]"
    assert items["m"].detail == "mut m: Mlp"


def test_top_level_keywords_at_column_0() -> None:
    assert complete(PROGRAM + "mo$0") == ["dim", "model", "fn", "extern fn"]


def test_types_in_a_signature() -> None:
    src = PROGRAM + "fn f(a: $0"
    assert complete(src) == ["Int", "Float", "Bool", "Str", "Mode", "Grad", "Mlp"]


def test_dims_in_a_shape_of_a_signature() -> None:
    assert complete(PROGRAM + "fn f(a: [$0") == ["D", "H", "C"]


def test_element_types_after_a_shape() -> None:
    labels = complete(PROGRAM + "fn f(a: [D] $0")
    assert labels[:3] == ["Float", "f32", "f16"] and "Index" in labels and "NonNeg" in labels


def test_member_keywords_in_a_model() -> None:
    assert complete(PROGRAM.replace("    buffer steps", "    $0\n    buffer steps")) == ["param", "buffer"]


def test_types_of_a_member() -> None:
    assert complete(PROGRAM.replace("    buffer steps: [] i64", "    buffer steps: [$0")) == ["D", "H", "C"]


def test_no_completion_in_comments_and_strings() -> None:
    assert complete(in_body("# m.$0")) == []
    assert complete(in_body('print("m.$0')) == []


# ====================================================================== signature help


def sig(src: str):
    text, offset = cursor(src)
    h = ide.signature_help(check_text(text), offset)
    if h is None:
        return None
    s = h.signatures[h.active_signature]
    return s.label, [s.label[a:b] for a, b in s.parameters], h.active_parameter


@pytest.mark.parametrize(
    "src, expected",
    [
        (
            in_body("z = dropout(x, $0"),
            ("dropout(x: [..] Float, p: Float, mode: Mode) -> [..]", ["x: [..] Float", "p: Float", "mode: Mode"], 1),
        ),
        (
            in_body("z = softmax(x, over=$0"),
            ("softmax(x: [..] Float, over=d) -> [..] Prob", ["x: [..] Float", "over=d"], 1),
        ),
        (
            in_body("z = x |> softmax($0"),
            ("softmax(x: [..] Float, over=d) -> [..] Prob", ["x: [..] Float", "over=d"], 1),
        ),
        (
            in_body("z = loss(m, relu(x), $0"),
            ("loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg", ["m: Mlp", "x: [b D]", "y: [b] Index[C]"], 2),
        ),
        (in_body("z = loss(m, relu($0"), ("relu(x: [..] Float) -> [..] NonNeg", ["x: [..] Float"], 0)),
        (
            in_body("z = loss(m, x, y, $0"),
            ("loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg", ["m: Mlp", "x: [b D]", "y: [b] Index[C]"], None),
        ),
        (in_body("z = Mlp.init($0"), ("Mlp.init(seed=Int) -> Mlp", ["seed=Int"], 0)),
        (in_body("z = print(1, 2, $0"), ("print(values..., all_ranks=False)", ["values...", "all_ranks=False"], 0)),
        (
            in_body("z = print(1, all_ranks=$0"),
            ("print(values..., all_ranks=False)", ["values...", "all_ranks=False"], 1),
        ),
        (in_body("for j in range($0"), ("range(stop: Int)", ["stop: Int"], 0)),
        (
            in_body("for j in range(0, $0"),
            ("range(start: Int, stop: Int, step: Int)", ["start: Int", "stop: Int", "step: Int"], 1),
        ),
        # value_and_grad shows f's parameters once f is known
        (
            in_body("z = value_and_grad(loss, m, x, $0"),
            (
                "value_and_grad(loss, m: Mlp, x: [b D], y: [b] Index[C]) -> ([] NonNeg, Grad[Mlp])",
                ["loss", "m: Mlp", "x: [b D]", "y: [b] Index[C]"],
                3,
            ),
        ),
        (
            in_body("z = value_and_grad($0"),
            ("value_and_grad(f, m: M, args...) -> ([] Float, Grad[M])", ["f", "m: M", "args..."], 0),
        ),
        (
            in_body("z = step(m, x, y, lr=$0"),
            (
                "step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg",
                ["mut m: Mlp", "x: [b D]", "y: [b] Index[C]", "lr: Float"],
                3,
            ),
        ),
    ],
)
def test_signature_help(src: str, expected) -> None:
    assert sig(src) == expected


@pytest.mark.parametrize(
    "src",
    [
        in_body("z = relu(x) $0"),  # call closed
        in_body("z = nothing($0"),  # unknown callee
        in_body('z = print("($0'),  # inside a string
    ],
)
def test_no_signature_help(src: str) -> None:
    assert sig(src) is None


# ====================================================================== inlay hints


def test_inlay_hints_give_the_type_of_each_binding() -> None:
    analysis = check_text(PROGRAM)
    hints = [(PROGRAM[: h.offset].rsplit(None, 1)[-1], h.label) for h in ide.inlay_hints(analysis)]
    assert hints == [
        ("l", ": [] NonNeg"),
        ("g", ": Grad[Mlp]"),
        ("m", ": Mlp"),
        ("x", ": [16 D]"),
        ("y", ": [16] Index[C]"),
        ("i", ": Int"),
        ("l", ": [] NonNeg"),
    ]


def test_inlay_hints_in_a_range_only() -> None:
    analysis = check_text(PROGRAM)
    start = PROGRAM.index("fn main")
    hints = ide.inlay_hints(analysis, Span(start, start + PROGRAM[start:].index("for")))
    assert [h.label for h in hints] == [": Mlp", ": [16 D]", ": [16] Index[C]"]


def test_no_inlay_hint_for_an_unknown_type() -> None:
    analysis = check_text("fn main():\n    x = nothing\n    print(x)\n")
    assert ide.inlay_hints(analysis) == []


# ====================================================================== semantic tokens


def tokens(src: str) -> list[tuple[str, str, tuple[str, ...]]]:
    analysis = check_text(src)
    return [(src[t.span.start : t.span.end], t.type, t.modifiers) for t in ide.semantic_tokens(analysis)]


def test_semantic_tokens_of_a_model() -> None:
    assert tokens(PROGRAM)[:12] == [
        ("D", "typeParameter", ("declaration", "readonly")),
        ("H", "typeParameter", ("declaration", "readonly")),
        ("C", "typeParameter", ("declaration", "readonly")),
        ("Mlp", "class", ("declaration",)),
        ("w1", "property", ("declaration",)),
        ("D", "typeParameter", ("readonly",)),
        ("H", "typeParameter", ("readonly",)),
        ("normal", "function", ("defaultLibrary",)),  # an initializer, as a built-in
        ("b1", "property", ("declaration",)),
        ("H", "typeParameter", ("readonly",)),
        ("zeros", "function", ("defaultLibrary",)),
        ("w2", "property", ("declaration",)),
    ]
    assert ("steps", "property", ("declaration", "buffer")) in tokens(PROGRAM)


def test_semantic_tokens_of_a_function() -> None:
    src = "dim D = 4\n\nmodel M:\n    param w: [D]\n\nfn f(mut m: M, x: [b D]) -> [b D]:\n    y = x * m.w\n    m.w = m.w\n    return relu(y)\n"
    toks = tokens(src)
    start = list(toks).index(("f", "function", ("declaration",)))
    assert toks[start:] == [
        ("f", "function", ("declaration",)),
        ("m", "parameter", ("declaration", "mutable")),
        ("M", "class", ()),
        ("x", "parameter", ("declaration",)),
        ("b", "typeParameter", ("declaration",)),
        ("D", "typeParameter", ("readonly",)),
        ("b", "typeParameter", ()),
        ("D", "typeParameter", ("readonly",)),
        ("y", "variable", ("declaration",)),
        ("x", "parameter", ()),
        ("m", "parameter", ("mutable",)),
        ("w", "property", ()),
        ("m", "parameter", ("mutable",)),
        ("w", "property", ()),
        ("m", "parameter", ("mutable",)),
        ("w", "property", ()),
        ("relu", "function", ("defaultLibrary",)),
        ("y", "variable", ()),
    ]


def test_every_semantic_token_is_in_the_legend() -> None:
    for _, kind, mods in tokens(PROGRAM):
        assert kind in ide.TOKEN_TYPES and set(mods) <= set(ide.TOKEN_MODIFIERS)


# ====================================================================== code lenses


def test_code_lenses() -> None:
    analysis = check_text(PROGRAM)
    out = [
        (PROGRAM[lens.span.start : lens.span.end].split("\n")[0], lens.title, lens.command, lens.arguments)
        for lens in ide.code_lenses(analysis)
    ]
    assert out == [
        ("hidden", "reads 2 of 4 params of Mlp — never w2, b2", "quiver.showParamReads", ("hidden",)),
        ("forward", "reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", ("forward",)),
        ("loss", "reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", ("loss",)),
        ("step", "reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", ("step",)),
        (
            "value_and_grad(loss, m, x, y)",
            "loss reads 3 of 4 params of Mlp — never b2",
            "quiver.showParamReads",
            ("loss",),
        ),
        ("main", "▶ Run", "quiver.runFile", ()),
    ]


def test_lens_of_a_function_with_two_models() -> None:
    src = (
        "model A:\n    param p: [2]\n    param q: [2]\n\nmodel B:\n    param r: [2]\n\n"
        "fn f(a: A, b: B) -> [2]:\n    return a.p + b.r\n"
    )
    titles = [lens.title for lens in ide.code_lenses(check_text(src))]
    assert titles == ["a: reads 1 of 2 params of A — never q", "b: reads 1 of 1 param of B"]


def test_param_reads_report() -> None:
    assert ide.param_reads_report(check_text(PROGRAM), "forward") == (
        "forward(m: Mlp) reads w1, b1, w2 — never b2\n"
        "  w1: hidden(...) in forward (line 16) -> m.w1 in hidden (line 13)\n"
        "  b1: hidden(...) in forward (line 16) -> m.b1 in hidden (line 13)\n"
        "  w2: m.w2 in forward (line 16)"
    )
    assert ide.param_reads_report(check_text(PROGRAM), "main") == "main takes no model."
    assert ide.param_reads_report(check_text(PROGRAM), "nope") == "No function named nope."


def test_runnable() -> None:
    assert ide.runnable(check_text(PROGRAM))
    # a main of Int, Float, Bool and Str parameters takes them from the command line
    assert ide.runnable(check_text(PROGRAM.replace("fn main():", "fn main(n: Int):")))
    assert not ide.runnable(check_text(PROGRAM.replace("fn main():", "fn main(n: [2]):")))
    assert not ide.runnable(check_text("dim D = 3\n"))


# ====================================================================== code actions


def _changes(found: list) -> list:
    """The fixes that change the program (not "Ignore W... on this line",
    tests/checker/test_legal_shape_bugs.py)."""
    return [a for a in found if not a.title.startswith("Ignore ")]


def actions(src: str, code: str | None = None) -> list[tuple[str, str, list[tuple[str, str]], bool]]:
    """Every quick fix of the document: (code, title, [(replaced text, new text)], preferred)."""
    analysis = check_text(src)
    out = []
    for d in analysis.diagnostics:
        if code is not None and d.code != code:
            continue
        for a in _changes(ide.fixes(analysis, d)):
            assert a.diagnostic is d
            out.append((d.code, a.title, [(src[e.span.start : e.span.end], e.new_text) for e in a.edits], a.preferred))
    return out


def apply(src: str, action_index: int = 0) -> str:
    analysis = check_text(src)
    fixes = [a for d in analysis.diagnostics for a in _changes(ide.fixes(analysis, d))]
    edits = sorted(fixes[action_index].edits, key=lambda e: e.span.start, reverse=True)
    for e in edits:
        src = src[: e.span.start] + e.new_text + src[e.span.end :]
    return src


def test_fix_e0411_binds_the_gradient() -> None:
    src = in_body("v = value_and_grad(loss, m, x, y)").replace("    return l\n", "    print(v)\n    return l\n", 1)
    assert actions(src, "E0411") == [("E0411", "Bind the gradient too: v, g2 = ...", [("", ", g2")], True)]
    fixed = apply(src)
    assert "v, g2 = value_and_grad(loss, m, x, y)" in fixed
    assert not [d for d in check_text(fixed).diagnostics if d.code == "E0411"]


def test_fix_e0411_of_a_discarded_call() -> None:
    src = in_body("value_and_grad(loss, m, x, y)")
    assert actions(src, "E0411") == [("E0411", "Bind the value and the gradient: l, g = ...", [("", "l, g = ")], True)]


def test_fix_e0501_makes_the_parameter_mut() -> None:
    src = PROGRAM.replace("fn step(mut m: Mlp", "fn step(m: Mlp")
    fixes = actions(src, "E0501")
    assert fixes == [("E0501", "Make 'm' mut", [("", "mut ")], True)]
    assert not [d for d in check_text(apply(src)).diagnostics if d.code == "E0501"]


def test_fix_e0502_makes_the_callers_parameter_mut() -> None:
    src = PROGRAM.replace(
        "fn main():",
        "fn twice(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:\n    return step(m, x, y, 0.1)\n\nfn main():",
    )
    assert actions(src, "E0502") == [("E0502", "Make 'm' mut", [("", "mut ")], True)]
    fixed = apply(src, [a[0] for a in actions(src)].index("E0502"))
    assert "fn twice(mut m: Mlp" in fixed and not [d for d in check_text(fixed).diagnostics if d.code == "E0502"]


@pytest.mark.parametrize(
    "before, after, code",
    [
        # (not ll: that is nearer the built-in nll than the local l)
        ('print("loss", l)', 'print("loss", l1)', "E0101"),
        ("m.w1 - lr * g.w1", "m.w1 - lr * g.ww1", "E0107"),
        ("randn([16 D], seed=1)", "randn([16 D], sed=1)", "E0402"),
        ("over=C)", "over=CC)", "E0109"),
        ("Mlp.init(seed=0)", "Mlp.inti(seed=0)", "E0905"),
    ],
)
def test_did_you_mean_renames(before: str, after: str, code: str) -> None:
    src = PROGRAM.replace(before, after, 1)
    found = actions(src, code)
    assert len(found) == 1
    _, title, edits, preferred = found[0]
    ((written, new),) = edits
    assert title == f"Change to '{new}'" and preferred
    assert written != new and re.fullmatch(r"\w+", written)
    assert check_text(apply(src)).diagnostics == check_text(PROGRAM).diagnostics


def test_unused_variable_is_prefixed() -> None:
    src = PROGRAM.replace("    return l\n", "    extra = 1\n    return l\n")
    assert actions(src, "W0101") == [("W0101", "Rename to '_extra' (unused on purpose)", [("", "_")], False)]
    assert "_extra = 1" in apply(src, [a[0] for a in actions(src)].index("W0101"))


def test_unreachable_code_is_removed() -> None:
    src = PROGRAM.replace("    return l\n", "    return l\n    print(1)\n    print(2)\n")
    assert actions(src, "W0102")[0] == (
        "W0102",
        "Remove unreachable code",
        [("    print(1)\n    print(2)\n", "")],
        False,
    )
    assert apply(src, [a[0] for a in actions(src)].index("W0102")) == PROGRAM


def test_code_actions_for_a_span() -> None:
    src = PROGRAM.replace('print("loss", l)', 'print("loss", l1)')
    analysis = check_text(src)
    at = src.index("l1)")
    assert [a.title for a in ide.code_actions(analysis, Span(at, at))] == ["Change to 'l'"]
    assert ide.code_actions(analysis, Span(0, 5)) == []


# ====================================================================== never raises

from pathlib import Path  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = [
    p.read_text(encoding="utf-8") for p in sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.qv"))
]
SNIPPETS = [
    "",
    "x",
    "m.",
    "g.",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "\n",
    "\n    ",
    "over=",
    "relu(",
    "value_and_grad(",
    "Grad[",
    "fn ",
    "dim E = 2\n",
    " @ ",
    "|> ",
    '"',
    "#",
    "🎉",
    "return ",
    "Mlp.",
    "as [b] ",
    "mut ",
]


def every_query(analysis, offset: int) -> None:
    ide.hover(analysis, offset)
    ide.definition(analysis, offset)
    ide.references(analysis, offset)
    ide.highlights(analysis, offset)
    ide.completions(analysis, offset)
    ide.signature_help(analysis, offset)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_queries_never_raise_on_edited_programs(data) -> None:
    src = data.draw(st.sampled_from(EXAMPLES + [PROGRAM]))
    for _ in range(data.draw(st.integers(0, 6))):
        start = data.draw(st.integers(0, len(src)))
        end = data.draw(st.integers(start, min(len(src), start + 15)))
        src = src[:start] + data.draw(st.sampled_from(SNIPPETS)) + src[end:]
    analysis = check_text(src)
    for offset in data.draw(st.lists(st.integers(0, len(src)), min_size=1, max_size=25)):
        every_query(analysis, offset)
    ide.document_symbols(analysis)
    ide.inlay_hints(analysis)
    ide.semantic_tokens(analysis)
    ide.code_lenses(analysis)
    ide.code_actions(analysis, Span(0, len(src)))


def test_every_offset_of_the_examples() -> None:
    for src in EXAMPLES:
        analysis = check_text(src)
        for offset in range(0, len(src) + 1):
            every_query(analysis, offset)


# ---------------------------------------------------------------- issue 12's forms

TRAINING = (Path(__file__).with_name("training_forms") / "nested.qv").read_text(encoding="utf-8")


def _hover_at(needle: str, into: int = 0) -> str:
    analysis = check_text(TRAINING)
    h = ide.hover(analysis, TRAINING.index(needle) + into)
    assert h is not None, needle
    return h.markdown


def test_hover_on_an_optimizer_shows_its_hyper_parameters_and_state() -> None:
    text = _hover_at("opt.step(m, g)")
    assert text.startswith("```quiver\n(param) mut opt: Adam[Net]\n```")
    assert "lr: Float  # default 0.001" in text and "betas: (Float, Float)  # default (0.9, 0.999)" in text
    assert "exp_avg: Grad[Net]  # state" in text and "exp_avg_sq: Grad[Net]  # state" in text


def test_hover_on_a_selected_gradient_lists_only_its_fields() -> None:
    text = _hover_at("l, g = value_and_grad(head_only", into=3)
    assert "(local) g: Grad[Net, wrt=[b2, head]]" in text
    assert "not differentiated: enc, blocks" in text
    assert "head: [D C]\nb2: [C]\n```" in text and "enc: Grad" not in text


def test_hover_on_per_example_gradients_shows_the_example_dim() -> None:
    text = _hover_at("ls, gs = value_and_grad(one", into=4)
    assert "(local) gs: [n] Grad[Net]" in text
    assert "enc: [n] Grad[Encoder]\nblocks: [n] [L] Grad[Block]\nhead: [n D C]\nb2: [n C]" in text


def test_the_code_lens_counts_leaf_params_of_sub_models() -> None:
    titles = [lens.title for lens in ide.code_lenses(check_text(TRAINING))]
    assert "reads 6 of 6 params of Net" in titles
    assert "reads 2 of 6 params of Net — never enc.w1, enc.w2, blocks.w, blocks.b" in titles


def test_completion_after_an_optimizer() -> None:
    src = TRAINING.replace("    opt.step(m, g)\n", "    opt.step(m, g)\n    opt.\n", 1)
    labels = [c.label for c in ide.completions(check_text(src), src.index("    opt.\n") + 8)]
    assert labels == ["step", "lr", "betas", "eps", "weight_decay", "amsgrad", "exp_avg", "exp_avg_sq", "steps"]
