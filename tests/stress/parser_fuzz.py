"""Differential fuzz: the hand-written fast parser against lark, item by item.

checker/fast_parser.py parses the items that lark parses with no diagnostic
and declines (returns None) everything else; whatever it accepts must be
exactly lark's tree. For every item text this checks

    ref = parse_item(text, fast=False)      # lark, the reference
    tree = fast_parser.parse(text)
    if tree is not None:
        ref.diagnostics == () and dump(tree) == dump(ref.item)

and sorts each text into one of:

- accepted: the fast parser built lark's tree;
- declined (clean): it declined an item lark parses with no diagnostic (safe:
  parse_item falls back to lark; the rate says what the fast path misses);
- declined (error): it declined an item lark reports something in;
- MISMATCH: it accepted, parse_item would use its tree, and lark reports a
  diagnostic or builds another tree;
- EXCEPTION: fast_parser.parse raised (it must never raise);
- loose: it accepted a text parse_item never takes its tree for, where lark
  reports something: text before the first item that is indented (parse_item
  answers E0005 before asking it) or a tree that parser._validate rejects
  (E0007 assignment targets, E0010 `break` outside a loop: parse_item checks
  the fast tree and falls back). For the latter the text with those
  statements made valid (same offsets) must then be accepted with lark's
  tree, else it is a mismatch. Harmless through parse_item, outside the
  letter of the contract; `--strict` counts them as mismatches.

The texts: every item of the corpus (examples/*.qv, every quiver block in
docs/*.md, `# file:` sections split, fragments completed as tests/test_docs.py
does, the diagnostic and training-form fixtures, the catalog's examples and
fixes, bench/generate.py's program), items from a grammar-based generator
(random expressions, types, statements, every kind of item), deep nesting
(50-120 levels of brackets, prefix operators, `**`, blocks), and mutations
of all of these aimed at where a hand-written parser can part from an LALR
one: tokens deleted, duplicated, swapped, inserted or replaced (all the
punctuation, hard and soft keywords, numbers, strings, unicode names and
digits); spaces deleted, gluing a keyword to a name; indentation changed; lines joined, split, deleted, duplicated;
trailing commas; spans wrapped in parentheses or brackets; odd characters
(NUL, BOM, NEL, U+2028, a lone surrogate) inside strings and comments; \\r\\n and lone \\r
line endings; comments in odd places; backslash continuations; tabs and form
feeds. A mutated text is cut with items.split_items and every piece checked.

    python tests/stress/parser_fuzz.py --cases 200000 --seed 1 --jobs 2

prints each mismatch and exception, shrunk to a minimal reproducer (tokens
and lines deleted while the failure persists), with the seed and case number
(`--case N` replays one case), then a summary with the decline rate on clean
items and the shortest such texts (shrunk); exit 1 on any mismatch or
exception. tests/checker/test_fast_parser.py runs a short seeded slice in CI.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import random
import re
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (ROOT / "tests", ROOT):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from quiver.checker import ast as A  # noqa: E402
from quiver.checker import fast_parser, parser  # noqa: E402
from quiver.checker.items import split_items  # noqa: E402
from quiver.checker.parser import parse_item  # noqa: E402

# ------------------------------------------------------------------ verdicts

ACCEPTED = "accepted"
DECLINED_CLEAN = "declined (clean)"
DECLINED_ERROR = "declined (error)"
MISMATCH = "MISMATCH"
EXCEPTION = "EXCEPTION"
LOOSE = "loose"
FAILURES = (MISMATCH, EXCEPTION)


@dataclasses.dataclass
class Verdict:
    kind: str
    detail: str = ""


def _preempted(text: str) -> bool:
    """parse_item answers these without asking the fast parser."""
    return text == "\ufeff" or not parser._strip_trivia(text) or text[0].isspace()


def judge(text: str, ref: parser.ItemParse | None = None) -> Verdict:
    """Compare the fast parser with lark on one item text."""
    if ref is None:
        ref = parse_item(text, fast=False)
    try:
        tree = fast_parser.parse(text)
    except BaseException as e:  # anything escaping parse() is a bug
        if isinstance(e, KeyboardInterrupt):
            raise
        return Verdict(EXCEPTION, "".join(traceback.format_exception(e)[-6:]))
    clean = ref.diagnostics == () and ref.item is not None
    if tree is None:
        glued = clean and ref.item is not None and _glued(text, ref.item)
        return Verdict(DECLINED_CLEAN if clean else DECLINED_ERROR, GLUED if glued else "")
    got = A.dump(tree)
    if clean and ref.item is not None and got == A.dump(ref.item):
        return Verdict(ACCEPTED)
    codes = [d.code for d in ref.diagnostics]
    if ref.diagnostics:
        detail = "lark reports " + "; ".join(f"{d.code} {d.message} at {d.span}" for d in ref.diagnostics)
    elif ref.item is None:
        detail = "lark: no item (comment-only text)"
    else:
        detail = "trees differ:\n" + _tree_diff(got, A.dump(ref.item))
    detail += f"\n  fast tree: {_short(got)}"
    if _preempted(text):
        return Verdict(LOOSE, detail)
    if parser._validate(tree, None):
        # parse_item checks the tree and falls back to lark. Still, the rest
        # must be right: with each statement _validate rejects made valid
        # (`break` -> `pass `, a target -> `____`, offsets kept), the fast
        # parser must build lark's clean tree. (lark's recovery may add
        # diagnostics of its own on the original: it blanks whole lines.)
        fixed = _validated(text, tree)
        again = judge(fixed) if fixed is not None else None
        if again is not None and again.kind == ACCEPTED:
            return Verdict(LOOSE, detail)
        if fixed is None and set(codes) <= {"E0007", "E0010"}:
            return Verdict(LOOSE, detail)
        if again is not None:
            detail += f"\n  made valid: {fixed!r}: {again.kind} {again.detail}"
    return Verdict(MISMATCH, detail)


GLUED = "glued"


def _glued(text: str, item: A.Node) -> bool:
    """Did lark split a word? Its contextual lexer takes a keyword off the
    front of a word where no name may stand: `x orb` is `x or b`, `fnf()` is
    `fn f()`, `externfn` is `extern fn`, and `[1e3]` in a shape is `[1 e3]`.
    The fast parser declines those. Told by a word that starts with a keyword
    and is no name in lark's tree, or a name or number in the tree that
    starts right after a letter or digit."""
    names: set[str] = set()
    stack: list[object] = [item]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
        elif isinstance(node, A.Node):
            if isinstance(node, (A.Ident, A.Name, A.DimName, A.DimInt, A.IntLit, A.FloatLit)):
                start = node.span.start
                if start > 0 and re.match(r"\w", text[start - 1]):
                    return True
            for value in (getattr(node, "text", None), getattr(node, "name", None)):
                if isinstance(value, str):
                    names.update(value.split("."))
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
    code = re.sub(r"\"(?:[^\"\\\r\n]|\\.)*\"|'(?:[^'\\\r\n]|\\.)*'|#[^\r\n]*", " ", text)
    for word in re.findall(r"[^\W\d]\w*", code):
        if word not in names and word not in KEYWORDS and word.startswith(KEYWORDS):
            return True
    return False


def _validated(text: str, tree: A.Item) -> str | None:
    """`text` with what parser._validate rejects in `tree` replaced, offsets
    kept (a target across lines, `f(\n)`, by a name in parentheses: `(_\n)`);
    None when that cannot be done simply."""
    for d in parser._validate(tree, None):
        span = _with_parens(text, d.span.start, d.span.end)
        if span is None:
            return None
        start, end = span
        old = text[start:end]
        first = re.split(r"[\r\n]", old)[0]
        if d.code == "E0010":
            new = "pass".ljust(end - start)
        elif first == old:
            new = "_" * len(old)
        elif len(first) >= 2:
            new = "(" + "_" * (len(first) - 1) + re.sub(r"[^\r\n]", " ", old[len(first) : -1]) + ")"
        else:
            return None
        text = text[:start] + new + text[end:]
    return text


def _with_parens(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span widened over the parentheses it leaves unbalanced (lark's
    spans leave out the parentheses around an operand: `(a)[0]` is `a)[0]`)."""
    opened = unmatched = 0
    for ch in text[start:end]:
        if ch == "(":
            opened += 1
        elif ch == ")":
            if opened:
                opened -= 1
            else:
                unmatched += 1
    while unmatched:
        start -= 1
        if start < 0 or text[start] not in "( ":
            return None
        unmatched -= text[start] == "("
    while opened:
        if end >= len(text) or text[end] not in ") ":
            return None
        opened -= text[end] == ")"
        end += 1
    return start, end


def _short(x: object, limit: int = 1500) -> str:
    s = repr(x)
    return s if len(s) <= limit else s[:limit] + " ..."


def _tree_diff(a: object, b: object, path: str = "") -> str:
    """Where two dumps first differ (a path of fields and indices)."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and a[:1] == b[:1]:
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x == y:
                continue
            pair = isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y) == 2
            if pair and isinstance(x[0], str) and x[0] == y[0]:  # (field, value)
                return _tree_diff(x[1], y[1], f"{path}.{x[0]}")
            return _tree_diff(x, y, f"{path}[{i}]" if not isinstance(a[0], str) else f"{path}({a[0]})")
    return f"  at {path or '/'}:\n    fast: {_short(a, 600)}\n    lark: {_short(b, 600)}"


# ------------------------------------------------------------------- corpus


def _doc_programs() -> list[tuple[str, str]]:
    from test_docs import EXAMPLES, _completions

    from quiver.checker.workspace import example_files

    out = []
    for e in EXAMPLES:
        if e.is_fragment:
            out += [(f"{e.id} (completed {i})", t) for i, t in enumerate(_completions(e.source))]
            continue
        files = example_files(e.source)
        if files is None:
            out.append((e.id, e.source))
        else:
            out += [(f"{e.id} {path}", t) for path, t in files.items()]
    return out


def corpus(bench_lines: int = 400) -> list[tuple[str, str]]:
    """(name, text) of every program the fuzz starts from."""
    from bench.generate import generate
    from quiver.checker.catalog import CODES

    out = [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted((ROOT / "examples").glob("*.qv"))]
    out += _doc_programs()
    for folder in ("diagnostics", "training_forms"):
        fixtures = ROOT / "tests" / "checker" / folder
        out += [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted(fixtures.glob("*.qv"))]
    for code in CODES.values():
        out.append((f"catalog {code.code} example", code.example))
        if code.fixed:
            out.append((f"catalog {code.code} fixed", code.fixed))
    out.append((f"bench/generate.py {bench_lines}", generate(bench_lines)))
    return out


def item_texts(text: str) -> list[str]:
    return [text[s:e] for s, e in split_items(text)]


def corpus_items(programs: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """(program name, item text) of every distinct item of the corpus."""
    seen: set[str] = set()
    out = []
    for name, text in programs if programs is not None else corpus():
        for t in item_texts(text):
            if t not in seen:
                seen.add(t)
                out.append((name, t))
    return out


# ---------------------------------------------------------------- generator

HARD = ["return", "if", "elif", "else", "for", "in", "while", "and", "or", "not", "as", "pass", "break", "continue"]
HARD += ["True", "False", "mut", "fn", "extern", "from", "import", "is"]
SOFT = ["dim", "const", "model", "param", "buffer", "on", "None"]
PUNCT = ["->", "|>", "**", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "<", ">", "+", "-", "*", "/", "%", "@"]
PUNCT += ["=", "(", ")", "[", "]", ",", ":", ".", "|"]
NUMBERS = ["0", "1", "2", "3", "10", "2.0", ".5", "1e3", "1_000", "1.", "1.5e-3", "2E+2", "0_1", "1__0", "１２", "٣"]
STRINGS = [
    'f"x {a:.2f} {{b}}"',
    "f'{m.w!t:>8} {g(x)[0]}'",
    'f"{x"',
    'f"{a:.4q}"',
    '"a"',
    "'b'",
    '"x\\"y"',
    '""',
    "'it\\'s'",
    '"cuda:1"',
    '"m:f"',
    '"\\n\\t"',
    '"\\q\\\\"',
    "'#'",
    '"\\0"',
]
NAMES = ["x", "y", "a", "b", "c", "m", "g", "w1", "N", "T", "B", "E", "f", "relu", "_x", "layers", "Net", "wrt"]
UNICODE_NAMES = ["α", "βeta", "x²", "名前", "ñ", "Ω1", "x٣", "ℌ", "_é"]
ODD = [
    "\t",
    "\f",
    "\\\n",
    "\\\r\n",
    "#",
    "# c",
    "\x00",
    "$",
    "?",
    "!",
    "`",
    "{",
    "}",
    "\ufeff",
    "\u00a0",
    ";",
    "'",
    '"',
]
INSIDE = ["\x00", "\t", "\f", "\ufeff", "\u00a0", "\\", "\u2028", "\x85", "\r", "\x0b", "#", '"', "'", "\udcff"]
KEYWORDS = tuple(HARD + SOFT)
VOCAB = PUNCT * 3 + HARD + SOFT + NUMBERS + STRINGS + NAMES + UNICODE_NAMES + ODD


def _name(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.06:
        return rng.choice(SOFT)
    if r < 0.1:
        return rng.choice(UNICODE_NAMES)
    return rng.choice(NAMES)


def _qualname(rng: random.Random) -> str:
    return ".".join(_name(rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))


def gen_dim(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth < 3 and r < 0.2:
        ops = rng.choice(["+", "-", "*", "/", "%", "@"])
        return f"({gen_dim(rng, depth + 1)}{rng.choice(['', ' '])}{ops} {gen_dim(rng, depth + 1)})"
    if r < 0.3:
        return rng.choice(["1", "2", "16", "784", "1_0"])
    if r < 0.4:
        return f"{_name(rng)}.{_name(rng)}"
    return _name(rng)


def gen_tensor_type(rng: random.Random, depth: int = 0) -> str:
    dims = " ".join(gen_dim(rng, depth) for _ in range(rng.choice([0, 1, 1, 2, 2, 3])))
    if rng.random() < 0.1:
        dims = ".." + rng.choice([" ", ""]) + dims  # `[.. d]`
    out = f"[{dims}]"
    r = rng.random()
    if r < 0.3:
        out += " " + rng.choice(["f32", "f64", "i64", "Float", "NonNeg"])
    elif r < 0.4:
        out += f" Index[{rng.choice(['C', 'layers.C', 'N'])}]"
    elif r < 0.45:
        out += " " + _qualname(rng)
    elif r < 0.5:
        out += " " + _qualname(rng) + _type_args(rng, depth + 1)  # `[L] Block[E, NH]`
    return out


def _type_args(rng: random.Random, depth: int) -> str:
    """The brackets of a type: types, dims and options."""
    args = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        r = rng.random()
        if r < 0.3:
            args.append(_name(rng))
        elif r < 0.45:
            args.append(rng.choice(["1", "784", "1_0", "0"]))
        elif r < 0.6:
            args.append(f"({gen_dim(rng, 2)}{rng.choice(['*', '+', '-', '/'])}{gen_dim(rng, 2)})")
        elif r < 0.7:
            args.append(f"{_name(rng)}={rng.choice(['True', 'False', '1', 'x'])}")
        elif r < 0.8:
            names = ", ".join(_name(rng) for _ in range(rng.choice([1, 2, 3])))
            args.append(f"{rng.choice(['wrt', 'over', 'x'])}=[{names}{rng.choice(['', ','])}]")
        else:
            args.append(gen_type(rng, depth + 1))
    return "[" + ", ".join(args) + rng.choice(["", "", ","]) + "]"


def gen_type(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 3 or r < 0.55:
        return gen_tensor_type(rng, depth)
    if r < 0.8:
        name = rng.choice(["Net", "Mlp", "layers.Mlp", "Grad", "Mode", "Int", "Float", _qualname(rng)])
        if rng.random() < 0.5:
            return name
        if rng.random() < 0.4:
            return name + _type_args(rng, depth)
        inner = gen_type(rng, depth + 1)
        if rng.random() < 0.5:
            names = ", ".join(_name(rng) for _ in range(rng.choice([1, 2, 3])))
            inner += f", {rng.choice(['wrt', 'over', 'x'])}=[{names}{rng.choice(['', ','])}]"
        return f"{name}[{inner}]"
    items = [gen_type(rng, depth + 1) for _ in range(rng.choice([2, 2, 3, 1]))]
    if len(items) == 1:  # `(A,)`, a tuple of one (and a few `(A)`, an error)
        return f"({items[0]}{',' if rng.random() < 0.85 else ''})"
    return "(" + ", ".join(items) + rng.choice(["", ","]) + ")"


# Precedence levels, lowest first, as the grammar's expression rules.
PIPE, OR, AND, NOT, CMP, BITOR, BITAND, ARITH, TERM, CAST, UNARY, POWER, POSTFIX, ATOM = range(14)


def _lit_item(rng: random.Random, depth: int) -> str:
    r = rng.random()
    if depth < 3 and r < 0.15:
        return _tensor_lit(rng, depth + 1)
    if r < 0.5:
        return rng.choice(["1.0", "2.5", ".5", "1e3", "0."])
    if r < 0.7:
        return rng.choice(["1", "2", "0", "1_0"])
    return rng.choice(["-", "+"]) + rng.choice(["1", "2.0", "3", ".5"])


def _tensor_lit(rng: random.Random, depth: int = 0) -> str:
    n = rng.choice([1, 1, 2, 3])
    items = [_lit_item(rng, depth) for _ in range(n)]
    comma = "," if n == 1 and rng.random() < 0.7 else rng.choice(["", "", ","])
    return "[" + ", ".join(items) + comma + "]"


def gen_expr(rng: random.Random, depth: int = 0) -> tuple[str, int]:
    """A random expression and its precedence level."""
    if depth > 5:
        return _atom(rng), ATOM
    r = rng.random()
    if r < 0.25:
        return _atom(rng), ATOM
    if r < 0.32:
        op = rng.choice(["or", "and"])
        level = OR if op == "or" else AND
        return f"{_sub(rng, depth, level)} {op} {_sub(rng, depth, level + 1)}", level
    if r < 0.36:
        return f"not {_sub(rng, depth, NOT)}", NOT
    if r < 0.42:
        op = rng.choice(["==", "!=", "<=", ">=", "<", ">"])
        return f"{_sub(rng, depth, BITOR)} {op} {_sub(rng, depth, BITOR)}", CMP
    if r < 0.45:
        if rng.random() < 0.5:
            return f"{_sub(rng, depth, BITOR)}{rng.choice([' ', ''])}| {_sub(rng, depth, BITAND)}", BITOR
        return f"{_sub(rng, depth, BITAND)} &{rng.choice([' ', ''])}{_sub(rng, depth, ARITH)}", BITAND
    if r < 0.5:
        op = rng.choice(["+", "-"])
        return f"{_sub(rng, depth, ARITH)}{rng.choice([' ', ''])}{op} {_sub(rng, depth, TERM)}", ARITH
    if r < 0.58:
        op = rng.choice(["*", "/", "%", "@"])
        return f"{_sub(rng, depth, TERM)} {op} {_sub(rng, depth, CAST)}", TERM
    if r < 0.62:
        return f"{_sub(rng, depth, CAST)} as {gen_type(rng, 2)}", CAST
    if r < 0.67:
        return f"{rng.choice(['-', '+', '- ', '~', '~ '])}{_sub(rng, depth, UNARY)}", UNARY
    if r < 0.72:
        r2 = rng.random()
        if r2 < 0.4:
            return gen_tensor_type(rng, 2), UNARY
        if r2 < 0.8:
            return _tensor_lit(rng), UNARY
        names = ", ".join(_name(rng) for _ in range(rng.choice([1, 2, 3])))
        return f"[{names}{rng.choice(['', ','])}]", UNARY
    if r < 0.77:
        return f"{_sub(rng, depth, POSTFIX)} ** {_sub(rng, depth, UNARY)}", POWER
    if r < 0.81:
        return f"{_sub(rng, depth, PIPE)} |> {_sub(rng, depth, POSTFIX)}", PIPE
    base = _sub(rng, depth, POSTFIX)
    r2 = rng.random()
    if r2 < 0.4:
        args = []
        for _ in range(rng.choice([0, 1, 2, 3])):
            if rng.random() < 0.3:
                key = rng.choice(["over", "wrt", "seed", "keep", "lr", "dim", "batch"])
                value = f"[{_name(rng)}]" if key == "wrt" and rng.random() < 0.5 else gen_expr(rng, depth + 1)[0]
                args.append(f"{key}={value}")
            else:
                args.append(gen_expr(rng, depth + 1)[0])
        return f"{base}({', '.join(args)}{rng.choice(['', '', ','] if args else [''])})", POSTFIX
    if r2 < 0.6:
        return f"{base}.{_name(rng)}", POSTFIX
    if r2 < 0.75:
        return f"{base}[{gen_expr(rng, depth + 1)[0]}]", POSTFIX
    if r2 < 0.85:
        return f"{base}[{_subscript(rng, depth)}]", POSTFIX
    items = [_subscript(rng, depth) for _ in range(rng.choice([1, 2, 2, 3]))]
    return f"{base}[{', '.join(items)}{rng.choice(['', ',', ''] if len(items) > 1 else [','])}]", POSTFIX


def _subscript(rng: random.Random, depth: int) -> str:
    r = rng.random()
    if r < 0.15:
        return f"{rng.choice(['bias', 'wrt', 'x'])}={gen_expr(rng, depth + 1)[0]}"
    if r < 0.5:
        return gen_expr(rng, depth + 1)[0]
    if r < 0.58:
        return rng.choice(["...", "...", "....", ".."])  # `...` among subscripts (and two near misses)
    lo = gen_expr(rng, depth + 1)[0] if rng.random() < 0.5 else ""
    hi = gen_expr(rng, depth + 1)[0] if rng.random() < 0.5 else ""
    if rng.random() < 0.3:  # a step, or a second colon alone (`x[a::]`), or a third (an error)
        step = gen_expr(rng, depth + 1)[0] if rng.random() < 0.6 else ""
        return f"{lo}:{hi}:{step}" + (":" if rng.random() < 0.05 else "")
    return f"{lo}:{hi}"


def _sub(rng: random.Random, depth: int, need: int) -> str:
    text, level = gen_expr(rng, depth + 1)
    if rng.random() < 0.03:
        return text  # parentheses forgotten: another tree, or an error
    if level < need or rng.random() < 0.08:
        return f"({text})"
    return text


def _atom(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return _name(rng)
    if r < 0.65:
        return rng.choice(NUMBERS[:12])
    if r < 0.7:
        return rng.choice(STRINGS)
    if r < 0.75:
        return rng.choice(["True", "False"])
    if r < 0.85:
        items = [gen_expr(rng, 4)[0] for _ in range(rng.choice([1, 2, 3]))]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else rng.choice(["", ","])) + ")"
    return f"({gen_expr(rng, 3)[0]})"


def expr(rng: random.Random) -> str:
    return gen_expr(rng)[0]


def gen_simple_stmt(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.3:
        return f"{_name(rng)} = {expr(rng)}"
    if r < 0.4:
        targets = ", ".join(rng.choice([_name(rng), f"({_name(rng)}, {_name(rng)})"]) for _ in range(2))
        return f"{targets}{rng.choice(['', ','])} = {expr(rng)}"
    if r < 0.47:
        return f"{_name(rng)}.{_name(rng)} {rng.choice(['=', '+=', '-=', '*=', '/='])} {expr(rng)}"
    if r < 0.5:
        return f"{_name(rng)} {rng.choice(['+=', '-=', '*=', '/='])} {expr(rng)}"
    if r < 0.55:  # index assignment: of a name, a field, or (an error) of something else
        base = rng.choice([_name(rng), f"{_name(rng)}.{_name(rng)}", f"{_name(rng)}[0]", expr(rng)])
        items = ", ".join(_subscript(rng, 3) for _ in range(rng.choice([1, 2])))
        return f"{base}[{items}] {rng.choice(['=', '=', '+=', '*='])} {expr(rng)}"
    if r < 0.65:
        values = [expr(rng) for _ in range(rng.choice([0, 1, 1, 1, 2, 3]))]
        return "return" + (" " + ", ".join(values) if values else "") + (rng.choice(["", ","]) if values else "")
    if r < 0.7:
        return rng.choice(["pass", "break", "continue"])
    return expr(rng)


def gen_block(rng: random.Random, indent: str, depth: int = 0, loop: bool = False) -> str:
    lines = []
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        r = rng.random()
        if depth < 3 and r < 0.25:
            kind = rng.choice(["if", "for", "while"])
            head = {
                "if": f"if {expr(rng)}:",
                "for": f"for {', '.join(_name(rng) for _ in range(rng.choice([1, 1, 2, 3])))}"
                f"{rng.choice(['', '', '', ','])} in {expr(rng)}:",
                "while": f"while {expr(rng)}:",
            }
            lines.append(indent + head[kind] + _suite(rng, indent, depth, loop or kind != "if"))
            if kind == "if":
                for _ in range(rng.choice([0, 0, 1, 2])):
                    lines.append(f"{indent}elif {expr(rng)}:" + _suite(rng, indent, depth, loop))
                if rng.random() < 0.4:
                    lines.append(f"{indent}else:" + _suite(rng, indent, depth, loop))
        else:
            stmt = gen_simple_stmt(rng)
            if not loop and stmt in ("break", "continue"):
                stmt = "pass"
            lines.append(indent + stmt + "\n")
        if rng.random() < 0.1:
            lines.append(rng.choice(["\n", f"{indent}# note\n", "    # odd comment\n", "#\n"]))
    return "".join(lines)


def _suite(rng: random.Random, indent: str, depth: int, loop: bool) -> str:
    if rng.random() < 0.2:
        stmt = gen_simple_stmt(rng)
        return f" {stmt}\n"
    inner = indent + rng.choice(["    ", "  ", "        ", " "])
    return "\n" + gen_block(rng, inner, depth + 1, loop)


def _params(rng: random.Random, method: bool = False) -> str:
    ps = [f"{rng.choice(['', '', 'mut '])}{_name(rng)}: {gen_type(rng)}" for _ in range(rng.choice([0, 1, 2, 3]))]
    if method or rng.random() < 0.05:
        ps.insert(0, rng.choice(["self", "self", "mut self", _name(rng)]))  # a parameter without a type
    return ", ".join(ps) + (rng.choice(["", ","]) if ps else "")


def _model_params(rng: random.Random) -> str:
    ps = []
    for _ in range(rng.choice([1, 2, 3])):
        r = rng.random()
        if r < 0.6:
            ps.append(_name(rng))
        elif r < 0.8:
            ps.append(f"{_name(rng)}: {gen_type(rng, 2)} = {rng.choice(['True', 'False', expr(rng)])}")
        else:
            ps.append(f"{_name(rng)}: {gen_type(rng, 2)}")
    return "[" + ", ".join(ps) + rng.choice(["", "", ","]) + "]"


def gen_item(rng: random.Random) -> str:
    """A random item of any kind, mostly well formed."""
    r = rng.random()
    if r < 0.45:
        ret = f" -> {gen_type(rng)}" if rng.random() < 0.7 else ""
        # type parameters bounded by traits (`fn f[M: A + B, N: C]`), a few malformed
        tparams = ""
        if rng.random() < 0.1:
            bounds = [f"{_name(rng)}: {' + '.join(_qualname(rng) for _ in range(rng.choice([1, 1, 2])))}"]
            tparams = f"[{', '.join(bounds * rng.choice([1, 2]))}{rng.choice(['', '', ','])}]"
        head = f"fn {_name(rng)}{tparams}({_params(rng)}){ret}:"
        if rng.random() < 0.1:
            return f"{head} {gen_simple_stmt(rng)}\n"
        return head + "\n" + gen_block(rng, rng.choice(["    ", "    ", "  ", "\t" if rng.random() < 0.1 else " "]))
    if r < 0.55:
        return f"fn f(x: [N] f32) -> [N]:\n    y = {expr(rng)}\n    return y\n"
    if r < 0.7:
        device = ""
        if rng.random() < 0.3:
            device = " on " + rng.choice(['"cuda:1"', "cpu", "'gpu'", "gpu0", "param"])
        members = []
        for _ in range(rng.choice([1, 2, 3])):
            init = f" = {expr(rng)}" if rng.random() < 0.6 else ""
            cond = f" if {rng.choice(['', 'not '])}{_name(rng)}" if rng.random() < 0.15 else ""
            if cond and rng.random() < 0.3:  # a condition over dims (`if stride != 1 or Ci != Co`)
                cond = f" if {expr(rng)}"
            # `, persistent=False` after some initializers (no draw: the stream stays the same)
            keep = ", persistent=False" if init and len(init) % 4 == 0 else ""
            members.append(f"    {rng.choice(['param', 'buffer'])} {_name(rng)}: {gen_type(rng)}{init}{keep}{cond}\n")
        if rng.random() < 0.25:  # a method
            ret = f" -> {gen_type(rng)}" if rng.random() < 0.7 else ""
            head = f"    fn {_name(rng)}({_params(rng, method=True)}){ret}:"
            members.insert(rng.randint(0, len(members)), head + "\n" + gen_block(rng, "        "))
        params = _model_params(rng) if rng.random() < 0.3 else ""
        return f"model {_name(rng)}{params}{device}:\n" + "".join(members)
    if r < 0.77:
        return f"dim {_name(rng)} = {expr(rng)}\n"
    if r < 0.8:  # a type alias, taking dims or not (and a few malformed: no name, no `=`)
        params = f"[{', '.join(_name(rng) for _ in range(rng.choice([1, 2])))}{rng.choice(['', ','])}]"
        head = f"type {_name(rng) if rng.random() < 0.95 else ''}{params if rng.random() < 0.4 else ''}"
        return f"{head}{' =' if rng.random() < 0.95 else ''} {gen_type(rng)}\n"
    if r < 0.82:  # a trait: method signatures without bodies (and a few with a stray body)
        sigs = []
        for _ in range(rng.choice([1, 1, 2])):
            ret = f" -> {gen_type(rng)}" if rng.random() < 0.8 else ""
            sig = f"    fn {_name(rng)}({_params(rng, method=True)}){ret}"
            sigs.append(sig + (":\n" + gen_block(rng, "        ") if rng.random() < 0.05 else "\n"))
        if rng.random() < 0.25:  # `pass`: a trait without methods (and a few with a method beside it)
            sigs = ["    pass\n"] + (sigs[:1] if rng.random() < 0.2 else [])
            rng.shuffle(sigs)
        # dims its instances take (`trait ResBlock[Ci, Co, stride = 1]:`; no draw when absent)
        header = _model_params(rng) if len(sigs[0]) % 3 == 0 else ""
        return f"trait {_name(rng)}{header}:\n" + "".join(sigs)
    if r < 0.87:
        ret = f" -> {gen_type(rng)}" if rng.random() < 0.7 else ""
        target = rng.choice(STRINGS)
        return f"extern fn {_name(rng)}({_params(rng)}){ret} from {target}\n"
    if r < 0.92:
        return f"import {_qualname(rng)}\n"
    names = []
    for _ in range(rng.choice([1, 2, 3])):
        names.append(_name(rng) + (f" as {_name(rng)}" if rng.random() < 0.3 else ""))
    return f"from {_qualname(rng)} import {', '.join(names)}{rng.choice(['', '', ','])}\n"


def gen_deep(rng: random.Random) -> str:
    """Nesting near and past the limits: 50-120 levels (and a few shallow)."""
    n = rng.choice([rng.randint(50, 120), rng.randint(5, 40)])
    kind = rng.choice(["parens", "unary", "not", "power", "blocks", "brackets", "calls", "lit", "types", "dims"])
    if kind == "parens":
        e = "(" * n + "x" + ")" * n
    elif kind == "unary":
        e = "".join(rng.choice(["-", "+", "- "]) for _ in range(n)) + "x"
    elif kind == "not":
        e = "not " * n + "x"
    elif kind == "power":
        e = " ** ".join(rng.choice(["x", "-x", "2"]) for _ in range(n))
    elif kind == "brackets":
        e = "x" + "[0]" * n if rng.random() < 0.5 else "[" * n + "x" + "]" * n
    elif kind == "calls":
        e = "f(" * n + "x" + ")" * n
    elif kind == "lit":
        e = "[" * n + "1.0" + "]" * n
    elif kind == "types":
        t = "[N]"
        for _ in range(min(n, 60)):
            t = f"({t}, [M])"
        return f"fn f(x: {t}):\n    pass\n"
    elif kind == "dims":
        return f"fn f(x: [{'(' * n}N{')' * n}]):\n    pass\n"
    else:
        lines = ["fn f():\n"]
        for i in range(n):
            lines.append("    " * (i + 1) + "if x:\n")
        lines.append("    " * (n + 1) + "pass\n")
        return "".join(lines)
    return f"fn f():\n    y = {e}\n    return y\n"


# ------------------------------------------------------------------ mutation

_TOKEN = re.compile(
    r"[^\W\d]\w*|\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?|\.\d[\d_]*|\"(?:[^\"\\\r\n]|\\.)*\"|'(?:[^'\\\r\n]|\\.)*'"
    r"|->|\|>|\*\*|[=!<>+\-*/]=|#[^\r\n]*|\r\n|\r|\n|[ ]+|\\|."
)


def tokens(text: str) -> list[str]:
    """The text cut into tokens, spaces and newlines included (joined, they are the text)."""
    return _TOKEN.findall(text)


def _is_code(tok: str) -> bool:
    return bool(tok.strip()) and tok not in ("\n", "\r\n", "\r")


def _code_positions(toks: list[str]) -> list[int]:
    return [i for i, t in enumerate(toks) if _is_code(t)]


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One random mutation: (new text, a description)."""
    kind = rng.choice(
        [
            "delete",
            "delete",
            "duplicate",
            "swap",
            "insert",
            "insert",
            "insert",
            "replace",
            "replace",
            "indent",
            "join",
            "split",
            "comma",
            "wrap",
            "endings",
            "comment",
            "continuation",
            "tab",
            "unicode",
            "number",
            "keyword",
            "line",
            "nest",
            "glue",
            "inside",
        ]
    )
    toks = tokens(text)
    code = _code_positions(toks)
    if not code:
        return text + rng.choice(VOCAB), "append"
    i = rng.choice(code)
    if kind == "inside":  # an odd character inside a string or a comment
        literals = [j for j in code if toks[j][0] in "\"'#"]
        if literals:
            i = rng.choice(literals)
            at = rng.randint(1, max(1, len(toks[i]) - 1))
            toks[i] = toks[i][:at] + rng.choice(INSIDE) + toks[i][at:]
            return "".join(toks), f"inside token {i}"
    if kind == "glue":  # a space between two tokens deleted: `x or b` -> `x orb`
        spaces = [j for j in range(1, len(toks) - 1) if toks[j].strip() == "" and toks[j][0] == " "]
        if spaces:
            i = rng.choice(spaces)
        del toks[i]
    elif kind == "delete":
        del toks[i]
    elif kind == "duplicate":
        toks.insert(i, toks[i] + rng.choice(["", " "]))
    elif kind == "swap":
        j = rng.choice(code)
        toks[i], toks[j] = toks[j], toks[i]
    elif kind == "insert":
        new = rng.choice(VOCAB)
        toks.insert(i + rng.choice([0, 1]), rng.choice(["", " "]) + new + rng.choice(["", " "]))
        kind += f" {new!r}"
    elif kind == "replace":
        new = rng.choice(VOCAB)
        toks[i] = new
        kind += f" {new!r}"
    elif kind == "unicode":
        toks[i] = rng.choice(UNICODE_NAMES + ["１", "٣.٥", "x١"])
    elif kind == "number":
        toks[i] = rng.choice(NUMBERS)
    elif kind == "keyword":
        toks[i] = rng.choice(HARD + SOFT)
    elif kind == "comma":
        closers = [j for j in code if toks[j] in (")", "]")] or code
        j = rng.choice(closers)
        toks.insert(j, rng.choice([",", ", ", ",,"]))
    elif kind == "wrap":
        j = rng.choice([c for c in code if c >= i][:6])
        left, right = rng.choice([("(", ")"), ("(", ")"), ("[", "]"), ("(", ",)"), ("[", ",]"), ("((", "))")])
        toks.insert(j + 1, right)
        toks.insert(i, left)
    elif kind == "nest":
        n = rng.choice([rng.randint(50, 120), rng.randint(2, 30)])
        left, right = rng.choice([("(", ")"), ("[", "]"), ("-", ""), ("not ", ""), ("x ** ", ""), ("f(", ")")])
        toks.insert(i + 1, right * n)
        toks.insert(i, left * n)
    elif kind == "split":
        toks.insert(i, rng.choice(["\n", "\n    ", "\n        ", "\n  ", "\n\n    ", "\r\n    "]))
    elif kind == "continuation":
        toks.insert(i, rng.choice([" \\\n", "\\\n    ", "\\\r\n", " \\  \n", "\\\n\t", "\\"]))
    elif kind == "tab":
        toks.insert(i, rng.choice(["\t", "\f", " \t", "\t    "]))
    else:
        lines = _lines(text)
        k = rng.randrange(len(lines))
        line = lines[k]
        if kind == "indent":
            if line.startswith(" ") and rng.random() < 0.5:
                lines[k] = line[rng.choice([1, 2, 4]) :] if len(line) > 4 else line.lstrip(" ")
            else:
                lines[k] = rng.choice([" ", "  ", "    ", "\t", "        "]) + line
        elif kind == "join":
            lines[k] = line.rstrip("\r\n") + rng.choice(["", " "])
        elif kind == "endings":
            ending = rng.choice(["\r\n", "\r", "\n\r"])
            if rng.random() < 0.5:
                return re.sub(r"\r\n|\r|\n", ending, text), f"endings {ending!r}"
            lines[k] = line.rstrip("\r\n") + ending
        elif kind == "comment":
            stripped = line.rstrip("\r\n")
            cut = rng.randint(0, len(stripped))
            lines[k] = rng.choice(
                [
                    stripped + "  # note" + line[len(stripped) :],
                    rng.choice(["", "  ", "    ", "\t", "      "]) + "# c\n" + line,
                    stripped[:cut] + " #" + line[len(stripped) :],
                    line + "#\n",
                ]
            )
        elif kind == "line":
            if rng.random() < 0.5 and len(lines) > 1:
                del lines[k]
            else:
                lines.insert(k, line if line.endswith(("\n", "\r")) else line + "\n")
        return "".join(lines), f"{kind} line {k + 1}"
    return "".join(toks), f"{kind} at token {i}"


# --------------------------------------------------------------------- cases


@dataclasses.dataclass
class Case:
    number: int
    source: str
    steps: list[str]
    text: str  # the text mutated; split_items cuts it into the item texts checked


def make_case(seed: int, number: int, items: list[tuple[str, str]]) -> Case:
    """Case `number` of the run with `seed`: the same arguments give the same case."""
    rng = random.Random(seed * 1_000_000_007 + number)
    r = rng.random()
    if r < 0.4:
        source, text = rng.choice(items)
    elif r < 0.75:
        source, text = "generated item", gen_item(rng)
    elif r < 0.82:
        source, text = "deep nesting", gen_deep(rng)
    elif r < 0.9:
        k = rng.randrange(len(items))
        window = items[k : k + rng.choice([2, 3])]
        source, text = f"{window[0][0]} (items {k}..)", "".join(t for _, t in window)
    else:
        source, text = "generated expression", f"fn f(x: [N] f32) -> [N]:\n    y = {expr(rng)}\n    return y\n"
    steps = []
    n = rng.choice([0, 0, 1, 1, 1, 2, 2, 3, 4])
    for _ in range(n):
        text, what = mutate(text, rng)
        steps.append(what)
    return Case(number, source, steps, text)


@dataclasses.dataclass
class Failure:
    seed: int
    case: Case
    text: str  # the item text that failed
    kind: str
    detail: str
    shrunk: str = ""
    shrunk_detail: str = ""


@dataclasses.dataclass
class Result:
    cases: int = 0
    counts: dict = dataclasses.field(default_factory=dict)
    failures: list = dataclasses.field(default_factory=list)
    loose: list = dataclasses.field(default_factory=list)  # up to a few examples
    declined_clean: list = dataclasses.field(default_factory=list)  # the shortest few texts
    declined_on_purpose: int = 0  # clean, declined, with tabs, form feeds or deep nesting
    declined_glued: int = 0  # clean, declined: lark split a word (see _glued)
    glued: list = dataclasses.field(default_factory=list)  # a few examples

    def add(self, other: Result) -> None:
        self.cases += other.cases
        for k, v in other.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v
        self.failures += other.failures
        self.loose += other.loose
        self.declined_on_purpose += other.declined_on_purpose
        self.declined_glued += other.declined_glued
        self.glued += other.glued[: max(0, 5 - len(self.glued))]
        self.declined_clean = _shortest(self.declined_clean + other.declined_clean)

    @property
    def checked(self) -> int:
        return sum(self.counts.values())

    def rate(self, kind: str) -> float:
        clean = self.counts.get(ACCEPTED, 0) + self.counts.get(DECLINED_CLEAN, 0)
        return self.counts.get(kind, 0) / clean if clean else 0.0


KEEP_DECLINED = 40
MAX_SHRUNK = 25  # failures shrunk per process (each costs up to a few thousand parses)


def _shortest(texts: list[str]) -> list[str]:
    return sorted(set(texts), key=lambda t: (len(t), t))[:KEEP_DECLINED]


def check_case(case: Case, seed: int, result: Result, shrink: bool = True) -> None:
    result.cases += 1
    for text in item_texts(case.text):
        v = judge(text)
        result.counts[v.kind] = result.counts.get(v.kind, 0) + 1
        if v.kind in FAILURES:
            f = Failure(seed, case, text, v.kind, v.detail)
            if shrink and len(result.failures) < MAX_SHRUNK:
                f.shrunk = shrink_text(text, lambda t, kind=v.kind: judge(t).kind == kind)
                f.shrunk_detail = judge(f.shrunk).detail
            result.failures.append(f)
        elif v.kind == LOOSE and len(result.loose) < 5:
            result.loose.append((case.number, text, v.detail))
        elif v.kind == DECLINED_CLEAN:
            if "\t" in text or "\f" in text or deep(text):
                result.declined_on_purpose += 1
                continue
            if v.detail == GLUED:
                result.declined_glued += 1
                if len(result.glued) < 5:
                    result.glued.append(text)
                continue
            result.declined_clean.append(text)
            if len(result.declined_clean) > 4 * KEEP_DECLINED:
                result.declined_clean = _shortest(result.declined_clean)


def _merges(toks: list[str], start: int, end: int) -> bool:
    """Would deleting toks[start:end] glue two words or numbers into one?"""
    if start == 0 or end >= len(toks):
        return False
    return bool(re.match(r"[\w.]", toks[end]) and re.search(r"[\w.]$", toks[start - 1]))


def deep(text: str) -> bool:
    """Nesting the fast parser declines on purpose (more than 30 brackets and
    blocks, more than 15 prefix operators `-`, `+`, `not` and `**`), roughly."""
    depth = top = 0
    for ch in re.sub(r"\"(?:[^\"\\\r\n]|\\.)*\"|'(?:[^'\\\r\n]|\\.)*'|#[^\r\n]*", "", text):
        depth += ch in "(["
        depth -= ch in ")]"
        top = max(top, depth)
    indents = {len(line) - len(line.lstrip(" ")) for line in _lines(text) if line.strip()}
    prefix = 0
    for line in _lines(text):
        count, before = 0, None
        for tok in tokens(line):
            if not _is_code(tok):
                continue
            unary = tok in ("-", "+") and (before is None or not re.match(r"[\w.)\]\"']", before[-1]))
            count += unary or tok in ("not", "**")
            before = tok
        prefix = max(prefix, count)
    return top + len(indents) > 30 or prefix > 15


def shrink_text(text: str, fails: Callable[[str], bool], budget: int = 3000) -> str:
    """A smaller text that still fails: lines, then tokens, then runs of
    spaces deleted while `fails` holds (and the text stays one item)."""

    def ok(t: str) -> bool:
        nonlocal budget
        if budget <= 0 or not t or t == text:
            return False
        budget -= 1
        if len(split_items(t)) != 1:
            return False
        try:
            return fails(t)
        except Exception:  # a harness error is no reproducer
            return False

    best = text
    progress = True
    while progress and budget > 0:
        progress = False
        lines = _lines(best)
        for k in range(len(lines) - 1, -1, -1):
            if k >= len(lines):
                continue
            t = "".join(lines[:k] + lines[k + 1 :])
            if ok(t):
                best, lines, progress = t, _lines(t), True
        for width in (4, 2, 1):
            toks = tokens(best)
            k = len(toks) - width
            while k >= 0:
                t = "".join(toks[:k] + toks[k + width :])
                if not _merges(toks, k, k + width) and ok(t):
                    best, toks, progress = t, tokens(t), True
                k -= 1
        toks = tokens(best)
        for k in range(len(toks)):
            if toks[k].startswith(" ") and len(toks[k]) > 1 and toks[k].strip() == "":
                t = "".join(toks[:k] + [" "] + toks[k + 1 :])
                if ok(t):
                    best, progress = t, True
                    break
    return best


# ---------------------------------------------------------------------- runs


def _run_chunk(args: tuple[int, list[int], bool]) -> Result:
    seed, numbers, shrink = args
    items = corpus_items()
    result = Result()
    for n in numbers:
        check_case(make_case(seed, n, items), seed, result, shrink)
    return result


def run(cases: int, seed: int = 0, jobs: int = 1, shrink: bool = True, with_corpus: bool = True) -> Result:
    """Cases 0..cases-1 of the run with `seed`, on `jobs` processes; first,
    with_corpus, every item of the corpus as it is."""
    numbers = list(range(cases))
    chunks = [(seed, numbers[i::jobs], shrink) for i in range(jobs)]
    total = Result()
    if with_corpus:
        for name, text in corpus_items():
            check_case(Case(-1, name, [], text), seed, total, shrink)
    if jobs == 1:
        total.add(_run_chunk(chunks[0]))
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for r in pool.map(_run_chunk, chunks):
                total.add(r)
    return total


def report(f: Failure) -> str:
    c = f.case
    where = "corpus item" if c.number < 0 else f"seed {f.seed}, case {c.number}"
    rows = [f"{f.kind}: {where} (from {c.source}; mutations: {', '.join(c.steps) or 'none'})"]
    if f.shrunk:
        rows.append(f"  minimal reproducer: {f.shrunk!r}")
        rows.append("  " + f.shrunk_detail.replace("\n", "\n  "))
    rows.append(f"  item text: {f.text!r}")
    rows.append("  " + f.detail.replace("\n", "\n  "))
    return "\n".join(rows)


def summary(result: Result, seconds: float) -> str:
    c = result.counts
    other = c.get(DECLINED_CLEAN, 0) - result.declined_on_purpose - result.declined_glued
    rows = [
        f"{result.cases} cases, {result.checked} item texts checked, {seconds:.0f} s",
        f"  mismatches: {c.get(MISMATCH, 0)}, exceptions: {c.get(EXCEPTION, 0)}",
        f"  accepted (equal to lark): {c.get(ACCEPTED, 0)}",
        f"  declined although lark found no diagnostic: {c.get(DECLINED_CLEAN, 0)} "
        f"({100 * result.rate(DECLINED_CLEAN):.2f}% of the {c.get(ACCEPTED, 0) + c.get(DECLINED_CLEAN, 0)} clean items)",
        f"    of which with a tab, a form feed or deep nesting: {result.declined_on_purpose}",
        f"    of which lark split a word (`x orb` read as `x or b`): {result.declined_glued}",
        f"    the others: {other} ({100 * other / max(1, c.get(ACCEPTED, 0) + other):.3f}% of the clean items"
        " without those)",
        f"  declined, lark reports a diagnostic: {c.get(DECLINED_ERROR, 0)}",
        f"  loose (accepted; parse_item never uses the tree, lark reports a diagnostic): {c.get(LOOSE, 0)}",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=20_000, help="number of cases (default 20000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the whole run (default 0)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--case", type=int, default=None, help="replay this one case of the seed, verbosely")
    ap.add_argument("--show", type=int, default=10, help="failures printed in full (default 10)")
    ap.add_argument("--declined", type=int, default=20, help="declined clean texts shown, shrunk (default 20)")
    ap.add_argument("--strict", action="store_true", help="count loose acceptances as mismatches")
    ap.add_argument("--no-shrink", action="store_true", help="print failures as found")
    args = ap.parse_args(argv)
    if args.case is not None:
        case = make_case(args.seed, args.case, corpus_items())
        print(f"case {case.number} from {case.source}; mutations: {', '.join(case.steps) or 'none'}")
        for text in item_texts(case.text):
            v = judge(text)
            print(f"  {v.kind}: {text!r}" + (f"\n    {v.detail}" if v.detail else ""))
        return 0
    t0 = time.perf_counter()
    result = run(args.cases, args.seed, args.jobs, not args.no_shrink)
    seconds = time.perf_counter() - t0
    distinct: dict[str, list[Failure]] = {}
    for f in result.failures:
        distinct.setdefault(f.shrunk or f.text, []).append(f)
    for group in list(distinct.values())[: args.show]:
        more = f"  ({len(group) - 1} more failures with this reproducer)\n" if len(group) > 1 else ""
        print(report(group[0]), end="\n" + more + "\n")
    if len(distinct) > args.show:
        print(f"... and {len(distinct) - args.show} more distinct failures (--show)\n")
    if distinct:
        print("every distinct minimal reproducer (kind, seed and case, how many failed so):")
        for text, group in distinct.items():
            print(f"  {group[0].kind} {group[0].seed}/{group[0].case.number} x{len(group)}: {text!r}")
        print()
    if result.loose:
        print("loose acceptances (examples):")
        for number, text, detail in result.loose:
            print(f"  case {number}: {text!r}\n    {detail.splitlines()[0]}")
        print()
    if result.glued:
        print("declined, and lark parses them cleanly by splitting a word (examples):")
        for text in result.glued:
            print(f"  {text!r}")
        print()
    if result.declined_clean and args.declined:
        print("declined although lark parses them cleanly (no tab, form feed, deep nesting or split word; shrunk):")
        shown: set[str] = set()
        for text in result.declined_clean:
            small = shrink_text(text, lambda t: judge(t).kind == DECLINED_CLEAN, budget=400)
            # One of a kind: `importx` and `importy`, `dimE=4` and `dimH=8`.
            like = re.sub(r"[^\W\d]\w*", lambda m: m.group()[:3], re.sub(r"\d[\d_.]*", "0", small))
            if like in shown:
                continue
            shown.add(like)
            print(f"  {small!r}" + ("" if small == text else f"   (from {text!r})"))
            if len(shown) >= args.declined:
                break
        print()
    print(summary(result, seconds), file=sys.stderr)
    failed = result.counts.get(MISMATCH, 0) + result.counts.get(EXCEPTION, 0)
    if args.strict:
        failed += result.counts.get(LOOSE, 0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
