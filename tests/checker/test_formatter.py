"""The formatter (checker/formatter.py): exact layouts of messy inputs, and,
over every example, every docs program and generated corpora, that one pass
reaches a fixed point without changing what the checker and the compiler make
of the program or losing a comment."""

from __future__ import annotations

import random
import re
import textwrap
from collections import Counter

import pytest
from stress import incremental_fuzz as fuzz  # tests/ is on pytest's pythonpath
from test_docs import EXAMPLES as DOC_EXAMPLES

from quiver.checker import check_text, formatter
from quiver.checker.ast import Span
from quiver.checker.compiler import compile_program
from quiver.checker.formatter import comments, format_edits, format_text
from quiver.checker.parser import ItemParse


def fmt(text: str) -> str:
    result = format_text(text)
    assert not result.refused
    return result.text


def src(text: str) -> str:
    """A test's text: dedented; `~` is a trailing space."""
    return textwrap.dedent(text).lstrip("\n").replace("~", " ")


def check(messy: str, want: str) -> None:
    messy, want = src(messy), src(want)
    assert fmt(messy) == want
    assert fmt(want) == want


# ====================================================================== exact layouts


def test_spacing_around_operators_commas_and_colons() -> None:
    check(
        """
        dim  B=2
        fn f( x:[b  B],y : [ b B ] ,mut m:M )->[ b B ] :
            z=x+y*2-x/3 % 4@m.w
            z+=- y
            q = x**-2 ==y and not  z!=x or z<=1
            return relu( z )|>softmax( over = B )
        """,
        """
        dim B = 2

        fn f(x: [b B], y: [b B], mut m: M) -> [b B]:
            z = x + y * 2 - x / 3 % 4 @ m.w
            z += -y
            q = x ** -2 == y and not z != x or z <= 1
            return relu(z) |> softmax(over=B)
        """,
    )


def test_shapes_dim_arithmetic_literals_slices_and_casts() -> None:
    check(
        """
        fn f(x: [ b ( T * E ) ], y: [(N + M)  D ] f32, z: [b C ( ( H - K ) / S + 1 )])->[ ] :
            a = zeros( [ b  ( T*E ) ] ) [ 0 : ]
            c = [ - 1.0 , 2.0 ] + [ [1.0,0.0] , [0.0, 1.0] ] + [ 2, ]
            d = x[ : -1 ] + x [ 1 : ] + x [y] [ 0 ]
            e = (x , y )
            return sum( a as [ b ] f64 ) * - ( c )
        """,
        """
        fn f(x: [b (T*E)], y: [(N+M) D] f32, z: [b C ((H-K)/S+1)]) -> []:
            a = zeros([b (T*E)])[0:]
            c = [-1.0, 2.0] + [[1.0, 0.0], [0.0, 1.0]] + [2,]
            d = x[:-1] + x[1:] + x[y][0]
            e = (x, y)
            return sum(a as [b] f64) * -(c)
        """,
    )


def test_subscripts_steps_ellipsis_index_assignment_and_for_with_names() -> None:
    check(
        """
        fn f(x: [b T E], mut m: M, n: Int):
            a = x[ : , 1 : 3 ] + x[ ... , - 1 ]+x[ :: 2 ,0 :: 2 ]
            c = x[n-1 : n+1 : 2 , ... ]
            x[ : , : 10 ]= 0.0
            x[..., 0]+=1.0
            m.buf[ n ] = a
            for xb ,yb in pairs :
                print( xb , yb )
        """,
        """
        fn f(x: [b T E], mut m: M, n: Int):
            a = x[:, 1:3] + x[..., -1] + x[::2, 0::2]
            c = x[n - 1:n + 1:2, ...]
            x[:, :10] = 0.0
            x[..., 0] += 1.0
            m.buf[n] = a
            for xb, yb in pairs:
                print(xb, yb)
        """,
    )


def test_gradient_types_tuple_targets_and_nested_models() -> None:
    check(
        """
        model Encoder :
           param w : [D  H]=xavier
           buffer n:[] i64=0
        model Net on "cuda:1":
           param enc:Encoder
           param blocks : [ 2 ] Block
        fn step(mut m:Net, g:Grad[ Net , wrt = [ enc , blocks , ] ])->( [] , Grad[Net,wrt=[enc]] ):
           l,g2=value_and_grad( loss,m,x , wrt=[ enc ] , batch = b )
           ( a , b ) , c = f( x )
           opt=Adam( m , lr = 0.1 )
           opt.step( m,g2 )
           return l , g2
        extern fn e( x:[b D] )->[ b ] from "mod:f"
        """,
        """
        model Encoder:
            param w: [D H] = xavier
            buffer n: [] i64 = 0

        model Net on "cuda:1":
            param enc: Encoder
            param blocks: [2] Block

        fn step(mut m: Net, g: Grad[Net, wrt=[enc, blocks,]]) -> ([], Grad[Net, wrt=[enc]]):
            l, g2 = value_and_grad(loss, m, x, wrt=[enc], batch=b)
            (a, b), c = f(x)
            opt = Adam(m, lr=0.1)
            opt.step(m, g2)
            return l, g2

        extern fn e(x: [b D]) -> [b] from "mod:f"
        """,
    )


def test_blocks_are_indented_four_spaces_a_level() -> None:
    check(
        """
        fn main():
          for i in range( 3 ) :
                if i>1 : print( i )
                elif i == 0:
                       while  False:
                             break
                else :
                   continue
          return
        """,
        """
        fn main():
            for i in range(3):
                if i > 1: print(i)
                elif i == 0:
                    while False:
                        break
                else:
                    continue
            return
        """,
    )


def test_blank_lines() -> None:
    check(
        """


        dim A = 1
        dim B = 2


        dim C = 3
        fn f():
            x = 1



            return x
        model M:
            param w: [A] = zeros
        fn g():~~
            pass~~~



        """,
        """
        dim A = 1
        dim B = 2

        dim C = 3

        fn f():
            x = 1

            return x

        model M:
            param w: [A] = zeros

        fn g():
            pass
        """,
    )


def test_one_final_newline_and_nothing_for_nothing() -> None:
    assert fmt("dim A = 1") == "dim A = 1\n"
    assert fmt("") == ""
    assert fmt("\n \n\t\n") == ""
    assert fmt("# only a comment   \n\n") == "# only a comment\n"


def test_comments_stay_where_they_are() -> None:
    check(
        """
           # the header comment, indented
        dim D = 4      # inputs
        dim HH = 8     # hidden
        dim C = 2 # classes

        fn f(x: [b D]):   # the function
              # first, at its block
            y = x  #   keeps its own text~~~
         # between, at a stray column
            if True:
                z = y
                    # under the if's block
                  # still in it
        # at column 0: a note on the line above, it stays
          # after the body
            return y
        # attached to f
        fn g():
            return 1


        # about h, after blank lines
        fn h(): return 2
        """,
        """
        # the header comment, indented
        dim D = 4   # inputs
        dim HH = 8  # hidden
        dim C = 2   # classes

        fn f(x: [b D]):  # the function
            # first, at its block
            y = x  #   keeps its own text
            # between, at a stray column
            if True:
                z = y
                # under the if's block
                # still in it
        # at column 0: a note on the line above, it stays
            # after the body
            return y
        # attached to f

        fn g():
            return 1

        # about h, after blank lines
        fn h(): return 2
        """,
    )


def test_aligned_end_of_line_comments_are_realigned_when_the_code_grows() -> None:
    check(
        """
        dim D=20  # inputs
        dim HIDDEN=32  # hidden
        """,
        """
        dim D = 20       # inputs
        dim HIDDEN = 32  # hidden
        """,
    )


def test_continuation_lines() -> None:
    check(
        """
        fn blend(x: [D],
                y: [D],
                  t: Float) -> [D]:
            z = f(
                      a,
               g(b,
                   c),
                          )
            w = [
              1.0,  # one
              # two next
              2.0,
            ]
            return x * t + \\
                        y * (1.0 - t)
        dim N = (
          3)
        """,
        """
        fn blend(x: [D],
                 y: [D],
                 t: Float) -> [D]:
            z = f(
                a,
                g(b,
                  c),
            )
            w = [
                1.0,  # one
                # two next
                2.0,
            ]
            return x * t + \\
                y * (1.0 - t)

        dim N = (
            3)
        """,
    )


def test_line_endings_and_byte_order_mark_are_kept() -> None:
    assert fmt("dim  A=1\r\nfn f():\r\n  return 1\r\n") == "dim A = 1\r\n\r\nfn f():\r\n    return 1\r\n"
    assert fmt("\ufeffdim  A=1\n") == "\ufeffdim A = 1\n"
    # the first line ending is the document's
    assert fmt("dim A = 1\r\ndim B = 2\ndim C = 3\r") == "dim A = 1\r\ndim B = 2\r\ndim C = 3\r\n"


# ====================================================================== syntax errors


def test_items_with_syntax_errors_are_left_exactly_as_written() -> None:
    broken = "fn f(x:[b D]:\n  y=x   \n\n\n"
    stray = "model M:\n  param w: [D] = zeros\n  oops (\n"
    text = "dim  A=1\n" + broken + stray + "fn  g():\n  return  1"
    result = format_text(text)
    assert result.text == "dim A = 1\n\n" + broken + stray + "fn g():\n    return 1\n"
    assert [text[s.start : s.end] for s in result.skipped] == [broken, stray]
    assert not result.refused
    assert fmt(result.text) == result.text


def test_a_lone_backslash_line_is_left_alone() -> None:
    text = "fn f():\n    x = 1 + \\\n  \\\n      2\n    return  x\n"
    result = format_text(text)
    assert result.text == text and len(result.skipped) == 1


def test_the_self_check_refuses_a_layout_that_changes_the_item(monkeypatch) -> None:
    """Should a layout rule ever change meaning, the item is kept as written."""
    monkeypatch.setattr(formatter, "_layout", lambda lines: [formatter._Out("code", 0, "dim A = 2")])
    result = format_text("dim A = 1\n")
    assert result.text == "dim A = 1\n" and result.refused == (Span(0, 10),)


def test_import_lines_follow_the_generic_rules(monkeypatch) -> None:
    """`import` and `from` (grammar on the way): with a grammar that parses
    them they format as below; one that does not leaves them as written."""
    messy = "import  nn . layers\nfrom layers import Mlp ,forward  as fwd\nfn f(m:layers . Mlp) :\n  return layers.forward( m,x )\n"
    want = (
        "import nn.layers\n"
        "from layers import Mlp, forward as fwd\n\n"
        "fn f(m: layers.Mlp):\n"
        "    return layers.forward(m, x)\n"
    )
    assert fmt(messy) in (messy, want)
    # the layout itself, whatever the grammar on this branch says
    monkeypatch.setattr(formatter, "parse_item", lambda text: ItemParse(text, None, ()))
    monkeypatch.setattr(formatter, "_same", lambda *args: True)
    assert format_text(messy).text == want


# ====================================================================== edits


def test_edits_are_per_changed_line_run_and_range_formatting_touches_only_its_items() -> None:
    text = "dim A = 1\n\nfn f():\n  x  = 1\n  return x\n\nfn g():\n    return  2\n"
    edits = format_edits(text)
    assert [(text[e.span.start : e.span.end], e.new_text) for e in edits] == [
        ("  x  = 1\n  return x\n", "    x = 1\n    return x\n"),
        ("    return  2\n", "    return 2\n"),
    ]
    inside_g = text.index("return  2")
    edits = format_edits(text, Span(inside_g, inside_g))
    assert [(text[e.span.start : e.span.end], e.new_text) for e in edits] == [("    return  2\n", "    return 2\n")]
    assert format_edits(fmt(text)) == []


def _apply(text: str, edits) -> str:
    for e in sorted(edits, key=lambda e: e.span.start, reverse=True):
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    return text


# ====================================================================== never changes meaning

# Where the compiled code points back into the .qv file (checker/compiler.py).
_LOC = re.compile(
    r"_src\.loc\(\d+, \d+\)|_src\.set_line_map\(.*\)|(?<=\.check\(_ret_value), \d+, \d+"
    r"|(?<=, _src), \d+, \d+"  # rt.expect_dims(value, sizes, _src, line, col, ...)
    r"|(?<=src=_src), line=\d+, col=\d+"  # a reader: rt.load_npz(..., src=_src, line=5, col=9)
)


def _meaning(text: str) -> tuple:
    """What the checker and the compiler make of a text, positions aside."""
    analysis = check_text(text)
    assert not analysis.internal_errors
    diagnostics = Counter((d.code, d.message) for d in analysis.diagnostics)
    items = [formatter.shape(i) for i in analysis.parsed.items]
    compiled = None
    if not any(d.is_error for d in analysis.diagnostics):
        compiled = _LOC.sub("", compile_program(analysis, "x.qv").source)
    return diagnostics, items, compiled


def assert_safe(text: str) -> str:
    result = format_text(text)
    assert not result.refused
    out = result.text
    assert fmt(out) == out, "not a fixed point in one pass"
    assert _apply(text, format_edits(text)) == out
    assert comments(out) == comments(text)
    assert _meaning(out) == _meaning(text)
    for span in result.skipped:
        assert text[span.start : span.end] in out
    return out


@pytest.mark.parametrize("name", [n for n, _ in fuzz.corpus() if n.startswith("examples/")])
def test_examples_are_formatted(name: str) -> None:
    text = dict(fuzz.corpus())[name]
    assert assert_safe(text) == text


@pytest.mark.parametrize("example", DOC_EXAMPLES, ids=lambda e: e.id)
def test_docs_programs(example) -> None:
    assert_safe(example.source)


def _perturb(text: str, rng: random.Random) -> str:
    """The same program with random whitespace: spaces between tokens (where
    none would join two tokens into one or make two words touch), indentation widths, blank lines,
    trailing spaces."""
    scale = rng.choice([1, 2, 3, 5, 8])
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if stripped.startswith(("#", "\t", "\f")) or not stripped or stripped.endswith("\\"):
            out.append(line)
            continue
        tokens = formatter._lex_lines(stripped)[0]
        pieces = [tokens.tokens[0]]
        for a, b in zip(tokens.tokens, tokens.tokens[1:], strict=False):
            # Two words never touch: `1D` is one word, an error, not `1 D`.
            glued = (a[-1].isalnum() or a[-1] == "_") and (b[0].isalnum() or b[0] == "_")
            need = glued or formatter._lex_lines(a + b)[0].tokens != [a, b]
            pieces.append(" " * rng.choice([0, 0, 1, 1, 2, 3] if not need else [1, 2]) + b)
        body = "".join(pieces)
        if tokens.comment is not None:
            body += " " * rng.randint(0, 4) + tokens.comment
        out.append(" " * (indent * scale // 4 if indent else 0) + body + " " * rng.choice([0, 0, 0, 1, 3]))
        if rng.random() < 0.1:
            out.append(" " * rng.randint(0, 3))
    return "\n".join(out)


def _clean_programs() -> list[str]:
    return [t for n, t in fuzz.corpus() if n.startswith("examples/")] + [
        e.source
        for e in DOC_EXAMPLES
        if not e.is_fragment and not any(c.startswith("E00") for c in e.expected) and "\\" not in e.source
    ]


@pytest.mark.parametrize("seed", range(4))
def test_whitespace_perturbations_of_valid_programs(seed: int) -> None:
    rng = random.Random(seed)
    programs = _clean_programs()
    for _ in range(40):
        text = rng.choice(programs)
        messy = _perturb(text, rng)
        out = assert_safe(messy)
        assert _meaning(out) == _meaning(text)


@pytest.mark.parametrize("seed", range(4))
def test_semantic_edits_including_broken_items(seed: int) -> None:
    """The incremental fuzz's edits (names, keywords, numbers, lines, stray
    punctuation): many leave items that do not parse."""
    rng = random.Random(100 + seed)
    programs = fuzz.corpus()
    names = ["x", "m", "C", "D", "b", "w1"]
    for _ in range(40):
        _, text = rng.choice(programs)
        history = [text]
        for _ in range(rng.randrange(1, 6)):
            text, _ = fuzz.edit(text, rng, history, names)
            history.append(text)
        assert_safe(text)


@pytest.mark.parametrize("seed", range(3))
def test_random_text_never_raises_and_loses_nothing(seed: int) -> None:
    """Any text: items that do not parse come back as they were, the rest is
    a fixed point with the same comments."""
    rng = random.Random(seed)
    alphabet = list("abx D01.,:;=+-*/@()[]#\"' \t\f\\\r\n\n\n\n    ") + [
        "fn ",
        "dim ",
        "model ",
        "return ",
        "é",
        "\ufeff",
        "\x00",
    ]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        result = format_text(text)
        assert not result.refused, repr(text)
        for span in result.skipped:
            assert text[span.start : span.end] in result.text
        assert format_text(result.text).text == result.text, repr(text)
        assert comments(result.text) == comments(text), repr(text)
