"""Parameter defaults, `const` items and f-strings: both parsers agree, the
formatter round-trips them, and the checker reports their codes at their
ranges (docs/language.md: Functions, Constants, f-strings)."""

from __future__ import annotations

import pytest
from annotations import spanned
from test_fast_parser import declines, same_as_lark

from quiver.checker import ast as A
from quiver.checker import check_text, ide
from quiver.checker.formatter import format_text

ITEMS = [
    'fn main(lr: Float = 3e-4, steps: Int = 100, out: Str = "ckpt.pt", amp: Bool = False):\n    pass\n',
    "fn f(x: [b D], mut m: Mlp, k: Int = -1, s: Float = 2 * LR) -> [b D]:\n    return x\n",
    "const LR = 3e-4\n",
    "const STEPS: Int = 10 * 2\n",
    'const NAME: Str = "run"\n',
    'fn main():\n    print(f"step {i}: loss {l:.4f} lr {opt.lr:.2e} {x!t} {{b}} {y!t:>12} {f(a, b=2)[0]:d}")\n',
    "fn main():\n    print(f'a \\n {x} \"q\"')\n",
    "fn main():\n    s = f\"{m.w[1:2]} {a != b} {g('x')}\"\n",
]


@pytest.mark.parametrize("text", ITEMS)
def test_the_fast_parser_builds_lark_s_tree(text: str) -> None:
    same_as_lark(text)


@pytest.mark.parametrize(
    "text",
    [
        'fn main():\n    print(f"{x:.4q}")\n',
        'fn main():\n    print(f"{x")\n',
        'fn main():\n    print(f"a } b")\n',
        'fn main():\n    print(f"{}")\n',
        'fn main():\n    print(f"{x!r}")\n',
        'fn main():\n    print(f"{x +}")\n',
    ],
)
def test_a_malformed_f_string_is_e0013_and_the_fast_parser_declines_it(text: str) -> None:
    declines(text)
    assert [d.code for d in check_text(text).diagnostics] == ["E0013"]


def test_f_string_spans_are_in_the_item() -> None:
    text = 'fn main():\n    x = 2.5\n    print(f"a {x:.2f} b")\n'
    fn = same_as_lark(text)
    assert isinstance(fn, A.FnDecl)
    call = fn.body[1].expr  # type: ignore[union-attr]
    fs = call.args[0].value
    assert isinstance(fs, A.FString)
    lit, field, tail = fs.parts
    assert isinstance(lit, A.StrLit) and lit.value == "a "
    assert isinstance(field, A.FormatField)
    assert text[field.span.start : field.span.end] == "{x:.2f}"
    assert text[field.value.span.start : field.value.span.end] == "x"
    assert text[field.spec_span.start : field.spec_span.end] == ".2f"
    assert isinstance(tail, A.StrLit) and tail.value == " b"


@pytest.mark.parametrize(
    "text",
    [
        "fn main(lr:Float=3e-4,steps:Int   =  100):\n    pass\n",
        'fn main():\n    print( f"x {a:.4f}" ,1)\n',
        "const  LR:Float=1e-3\n",
    ],
)
def test_the_formatter_lays_them_out_and_round_trips(text: str) -> None:
    out = format_text(text)
    assert not out.refused
    assert format_text(out.text).text == out.text
    assert out.text in (
        "fn main(lr: Float = 3e-4, steps: Int = 100):\n    pass\n",
        'fn main():\n    print(f"x {a:.4f}", 1)\n',
        "const LR: Float = 1e-3\n",
    )


def test_defaults_are_bound_at_calls_by_position_or_name() -> None:
    text = (
        'fn scale(x: Float, times: Float = 2.0, label: Str = "s") -> Float:\n    return x * times\n\n'
        'fn main():\n    a = scale(1.0)\n    b = scale(1.0, 3.0)\n    c = scale(1.0, label="t")\n'
        "    print(a, b, c)\n"
    )
    assert spanned(text) == []
    bad = text.replace('scale(1.0, label="t")', 'scale(label="t")')
    assert [c[0] for c in spanned(bad)] == ["E0401"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'fn f(n: Int = "x"):\n    pass\n',
            ("E0416", "the default of 'n' is Str \"x\", and 'n' is Int", '"x"'),
        ),
        (
            "fn f(x: [4] = 1.0):\n    pass\n",
            (
                "E0417",
                "parameter 'x': only an Int, Float, Bool or Str parameter has a default, and it is tensor [4]",
                "1.0",
            ),
        ),
        (
            "fn f(n: Int = g()):\n    pass\n",
            (
                "E0417",
                "parameter 'n': a constant is a literal, a constant's or dim's name, or arithmetic of those",
                "g()",
            ),
        ),
        (
            "const A = 1 / 0\n",
            ("E0118", "constant 'A': division by zero", "0"),
        ),
        (
            "const A = B\n",
            ("E0118", "constant 'A': 'B' is not a constant or a dim", "B"),
        ),
        (
            "const A: [4] = 1\n",
            ("E0118", "constant 'A': a constant is an Int, Float, Bool or Str, not [4]", "[4]"),
        ),
        (
            'fn main():\n    s = "a"\n    print(f"{s:d}")\n',
            ("E0312", "'d' cannot format a Str: 'd' is for numbers, and this is text", "d"),
        ),
        (
            'fn main():\n    x = 1.5\n    print(f"{x:d}")\n',
            (
                "E0312",
                "'d' cannot format a Float: 'd' is for an Int or text, and this is a Float: use 'f', 'e', 'g' or '%'",
                "d",
            ),
        ),
        (
            'fn main():\n    n = 3\n    print(f"{n:.2}")\n',
            (
                "E0312",
                "'.2' cannot format a Int: an Int takes no precision; use 'f' or 'e' to show it as a decimal",
                ".2",
            ),
        ),
        (
            'fn main():\n    print(f"{y}")\n',
            ("E0101", "unknown name 'y'", "y"),
        ),
    ],
)
def test_codes_ranges_and_messages(text: str, expected: tuple[str, str, str]) -> None:
    assert spanned(text) == [expected]


def test_specs_that_fit() -> None:
    text = (
        "fn main():\n    x = zeros([4 8])\n    n = 3\n    b = True\n"
        '    print(f"{mean(x):.4f} {n:>5d} {n:x} {n:.2f} {b:>6} {x!t:>10} {x} {sum(x > 0.0):d}")\n'
    )
    assert spanned(text) == []


def test_constants_are_typed_values_in_every_function() -> None:
    text = (
        "dim D = 4\nconst LR = 3e-4\nconst STEPS: Int = D * 25\nconst HALF = STEPS / 2\n"
        'const ON = True and not False\nconst TAG = "run"\n\n'
        "fn main(lr: Float = LR * 10, steps: Int = STEPS):\n    x = zeros([D]) * LR\n"
        "    print(x, lr, steps, HALF, ON, TAG)\n"
    )
    a = check_text(text)
    assert not a.diagnostics and not a.internal_errors
    assert a.globals.names.const_values == {
        "LR": ("Float", 3e-4),
        "STEPS": ("Int", 100),
        "HALF": ("Float", 50.0),
        "ON": ("Bool", True),
        "TAG": ("Str", "run"),
    }
    main = a.globals.fns["main"]
    assert [p.default for p in main.params] == [("Float", 3e-4 * 10), ("Int", 100)]
    assert ide.runnable(a)


def test_a_constant_used_as_the_wrong_type_is_reported_where_it_is_used() -> None:
    text = 'const TAG = "run"\n\nfn main():\n    x = TAG + 1\n'
    assert [c[0] for c in spanned(text)] == ["E0301"] or [c[0] for c in spanned(text)]


def test_main_with_a_tensor_parameter_is_not_runnable() -> None:
    a = check_text("fn main(x: [4]):\n    print(x)\n")
    assert [d.code for d in a.diagnostics] == ["W0403"]
    assert not ide.runnable(a)
    assert ide.runnable(check_text('fn main(n: Int, s: Str = "a"):\n    print(n, s)\n'))


IDE_TEXT = (
    "dim D = 4\nconst LR = 3e-4\nconst STEPS: Int = D * 25\n\n"
    "fn main(lr: Float = LR * 10, steps: Int = STEPS):\n"
    '    x = zeros([D]) * LR\n    print(f"{LR:.1e} {mean(x):.3f} {steps}")\n'
)


def at(text: str, needle: str, nth: int = 0) -> int:
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return i


def test_hover_shows_a_constant_s_type_and_value() -> None:
    a = check_text(IDE_TEXT)
    for nth in range(4):  # its declaration, in a default, in a body, in an f-string
        h = ide.hover(a, at(IDE_TEXT, "LR", nth))
        assert h is not None and "const LR: Float = 0.0003" in h.markdown, nth
    h = ide.hover(a, at(IDE_TEXT, "STEPS", 1))
    assert h is not None and "const STEPS: Int = 100" in h.markdown


def test_definition_references_and_tokens_know_constants() -> None:
    a = check_text(IDE_TEXT)
    decl = at(IDE_TEXT, "LR")
    for nth in (1, 2, 3):
        (target,) = ide.definition(a, at(IDE_TEXT, "LR", nth))
        assert IDE_TEXT[target.focus.start : target.focus.end] == "LR" and target.focus.start == decl
    refs = ide.references(a, at(IDE_TEXT, "LR", 2))
    assert sorted(r.start for r in refs) == [at(IDE_TEXT, "LR", n) for n in range(4)]
    tokens = {(t.span.start, t.type, t.modifiers) for t in ide.semantic_tokens(a)}
    assert (decl, "variable", ("declaration", "readonly")) in tokens
    assert (at(IDE_TEXT, "LR", 3), "variable", ("readonly",)) in tokens
    # inside an f-string's braces, a local is a local
    (target,) = ide.definition(a, at(IDE_TEXT, "steps}"))
    assert target.focus.start == at(IDE_TEXT, "steps")
    symbols = {s.name: (s.kind, s.detail) for s in ide.document_symbols(a)}
    assert symbols["LR"] == ("const", "= 0.0003") and symbols["STEPS"] == ("const", "= 100")


def test_completion_offers_constants() -> None:
    text = IDE_TEXT + "    y = \n"
    a = check_text(text)
    found = {c.label: c for c in ide.completions(a, len(text) - 1)}
    assert found["LR"].kind == "constant" and found["LR"].detail == "const LR: Float = 0.0003"


def test_rename_and_references_of_a_constant_across_files() -> None:
    from quiver.checker.ide import workspace_nav as nav
    from quiver.checker.workspace import MemoryHost, Workspace

    hp = "const LR = 3e-4\nconst HALF = LR / 2\n"
    train = 'import hp\nfrom hp import LR\n\nfn main(lr: Float = hp.LR):\n    print(f"{LR:.1e}", lr * hp.LR)\n'
    ws = Workspace(MemoryHost({"/p/hp.qv": hp, "/p/train.qv": train}), ["/p"])
    files = ["/p/hp.qv", "/p/train.qv"]
    edits = nav.rename(ws, "/p/hp.qv", hp.index("LR"), "RATE", files)
    assert edits is not None
    got = {p: sorted((s.start, s.end) for s, _ in e) for p, e in edits.items()}

    def spans(text: str, needle: str) -> list[tuple[int, int]]:
        out, i = [], -1
        while (i := text.find(needle, i + 1)) != -1:
            out.append((i, i + len(needle)))
        return out

    assert got["/p/hp.qv"] == spans(hp, "LR")
    # `from hp import LR` (no `as`): the import and its uses, the one in an f-string too
    assert got["/p/train.qv"] == spans(train, "LR")


def test_constants_on_a_cycle_each_report_it_and_those_after_it_are_silent() -> None:
    text = "const A = B + 1\nconst B = C\nconst C = A * 2\nconst D = A\n"
    assert spanned(text) == [
        ("E0118", "constant 'A': it is defined through itself (A -> B -> C -> A)", "B + 1"),
        ("E0118", "constant 'B': it is defined through itself (B -> C -> A -> B)", "C"),
        ("E0118", "constant 'C': it is defined through itself (C -> A -> B -> C)", "A * 2"),
    ]


def test_an_int_constant_sizes_a_shape_as_its_number() -> None:
    text = "dim D = 3\nconst N = 4\nconst M = N * 2\n\nfn main():\n    x = zeros([M D])\n    print(x)\n"
    a = check_text(text)
    assert not a.diagnostics
    h = ide.hover(a, at(text, "x", 1))
    assert h is not None and "[8 D]" in h.markdown, h and h.markdown
    assert spanned("const N = 0\nconst F = 0.5\n\nfn main():\n    print(zeros([N]), zeros([F]))\n") == [
        ("E0208", "a dim is a positive integer, found 0", "N"),
        ("E0211", "'F' is a Float constant, not a dim", "F"),
    ]
    # a size given as a value reads it the same way
    sized = "dim D = 4\nconst K = 4\n\nfn f(x: [D]) -> [D]:\n    return x\n\n"
    sized += "fn main():\n    print(arange(K), randperm(K, seed=0), f(zeros([K])), f(zeros([(K+1)])))\n"
    assert [c for c, _, _ in spanned(sized)] == ["E0201"]  # [5] is not [D]; the rest fits
    assert spanned("const K = 0\n\nfn main():\n    print(arange(K))\n") == [
        ("E0208", "a dim is a positive integer, found 0", "K")
    ]
    # an edit of the constant reaches the shapes it sizes
    from quiver.checker.analysis import Analyzer

    an = Analyzer()
    prog = "const N = 4\n\nfn f(x: [4]) -> [4]:\n    return x\n\nfn main():\n    print(f(zeros([N])))\n"
    assert not an.update(prog).diagnostics
    assert [d.code for d in an.update(prog.replace("N = 4", "N = 5")).diagnostics] == ["E0201"]
    assert not an.update(prog).diagnostics


def test_an_edit_of_a_constant_reaches_its_readers() -> None:
    from quiver.checker.analysis import Analyzer

    an = Analyzer()
    base = "const K = 2\n\nfn f(n: Int = K) -> Int:\n    return n\n\nfn main():\n    s = K + 1\n    print(f(), s)\n"
    assert not an.update(base).diagnostics
    a = an.update(base.replace("const K = 2", 'const K = "two"'))
    assert sorted(d.code for d in a.diagnostics) == ["E0306", "E0416"]
    fresh = check_text(base.replace("const K = 2", 'const K = "two"'))
    assert [(d.code, d.message, d.span) for d in a.diagnostics] == [
        (d.code, d.message, d.span) for d in fresh.diagnostics
    ]
    assert not an.update(base).diagnostics


def test_completion_inside_an_f_string_s_braces() -> None:
    text = IDE_TEXT + '    print(f"{st'
    a = check_text(text)
    labels = {c.label for c in ide.completions(a, len(text))}
    assert "steps" in labels and "STEPS" in labels
    outside = IDE_TEXT + '    print(f"st'
    assert ide.completions(check_text(outside), len(outside)) == []


def test_a_constant_is_a_finite_number() -> None:
    """inf and NaN are refused: a NaN would never equal itself, and every
    edit would check every reader again."""
    assert spanned("const X = 1e308 * 10.0 - 1e308 * 10.0\nconst Y = 1e400\n") == [
        ("E0118", "constant 'X': the value is not a finite number (inf)", "1e308 * 10.0"),
        ("E0118", "constant 'Y': the value is not a finite number (inf)", "1e400"),
    ]


def test_a_default_made_wrong_reaches_the_callers_incrementally() -> None:
    """A default that is itself wrong still makes its parameter optional: the
    callers are checked again (their interface says so), as a fresh check does."""
    from quiver.checker.analysis import Analyzer

    an = Analyzer()
    base = "fn f(a: Float, b: Float) -> Float:\n    return a + b\n\nfn main():\n    print(f(1.0))\n"
    assert [d.code for d in an.update(base).diagnostics] == ["E0401"]
    wrong = base.replace("b: Float)", "b: Float = nope)")
    assert (
        [d.code for d in an.update(wrong).diagnostics] == [d.code for d in check_text(wrong).diagnostics] == ["E0417"]
    )
