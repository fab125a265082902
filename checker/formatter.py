"""The canonical layout of Quiver source (`quiver fmt`, the editor's Format).

The formatter works on tokens, one top-level item at a time
(`items.split_items`), and changes only items that parse cleanly; an item
with a syntax error is left exactly as it was written. It rewrites only
whitespace: the tokens and comments of an item stay the same and in the same
order, and every line break the user wrote stays (lines are never joined or
wrapped). The rules are listed in docs/editor.md ("Formatting"); in short:
four spaces a block level; one space around binary operators and after commas
and colons, none inside brackets or before a call's; `[b D]` and `(T*E)` in
shapes; continuation lines aligned after their open bracket or one level in;
comments kept on their lines, at their block's indentation (column 0 stays);
one blank line between items; one final newline.

Laying out is cheap and parsing is not, so an item is parsed only when its
layout differs from its text. A changed item is parsed again and compared
with the original (the syntax tree without positions, and the comments); should
they differ, the item is kept as written and reported in `Formatted.refused`
(a formatter bug, which tests assert never happens). Pure: text in, text or
edits out.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields

from . import ast as A
from .deep import deep
from .diagnostics import TextEdit
from .items import BOM, split_items
from .lexical import HARD_KEYWORDS
from .parser import ItemParse, parse_item

INDENT = "    "
# The indentation width the parser counts a tab as (parser._QuiverIndenter).
_TAB = 8

_TOKEN = re.compile(
    r"""
    (?P<nl>\r\n?|\n)
  | (?P<ws>[ \t\f]+)
  | (?P<cont>\\[ \t\f]*(?:\r\n?|\n))
  | (?P<comment>\#[^\r\n]*)
  | (?P<word>
        f"(?:[^"\\\r\n]|\\.)*" | f'(?:[^'\\\r\n]|\\.)*'
      | "(?:[^"\\\r\n]|\\.)*" | '(?:[^'\\\r\n]|\\.)*'
      | \d[\d_]*\.(?:\d[\d_]*)?(?:[eE][+-]?\d+)? | \.\d[\d_]*(?:[eE][+-]?\d+)? | \d[\d_]*[eE][+-]?\d+
      | \d[\d_]* | [^\W\d]\w*)
  | (?P<op>->|\|>|\*\*|//|[+\-*/]=|==|!=|<=|>=|\.\.\.|\.\.|[-<>+*/%@=()\[\],:.|&~])
    """,
    re.X,
)
_LINE_END = re.compile(r"\r\n?|\n")

_OPEN = {"(", "["}
_CLOSE = {")", "]"}
# Words after which a bracket opens a group or a list, not a call or an index,
# and after which `-` is a sign: the reserved words (True and False are values).
_KEYWORDS = HARD_KEYWORDS - {"True", "False"}
_ARITH = {"+", "-", "*", "/", "//", "%", "@", "**"}


class _Unformattable(Exception):
    """Text the formatter leaves as written: a character its lexer does not
    know (the parser refuses those too), or a line that is only a `\\`."""


@dataclass(slots=True)
class _Line:
    """One physical line of an item: its indentation as written, its tokens,
    its end-of-line comment and whether it ends with a `\\` continuation."""

    indent: str
    tokens: list[str]
    comment: str | None
    continued: bool
    comment_col: int = 0  # where the comment started, in characters from the line's start


def _lex_lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    line = _Line("", [], None, False)
    at_start = True
    pos = line_start = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Unformattable(pos)
        kind, value = m.lastgroup, m.group()
        pos = m.end()
        if kind == "ws":
            if at_start:
                line.indent = value
            continue
        if kind in ("nl", "cont"):
            line.continued = kind == "cont"
            lines.append(line)
            line = _Line("", [], None, False)
            at_start = True
            line_start = pos
            continue
        at_start = False
        if kind == "comment":
            line.comment = value.rstrip()
            line.comment_col = m.start() - line_start
        else:
            line.tokens.append(value)
    if line.tokens or line.comment is not None or line.indent:
        lines.append(line)
    return lines


def _width(indent: str) -> int:
    """An indentation as the parser measures it (parser._QuiverIndenter)."""
    return indent.count(" ") + indent.count("\t") * _TAB + indent.count("\f")


# ------------------------------------------------------------------ spacing


class _Spacer:
    """The space between consecutive tokens of one logical line. Tracks the
    open brackets and whether the last token ended an operand."""

    def __init__(self) -> None:
        # kinds of the open brackets: call, index, group, list, dim
        self.brackets: list[str] = []
        self.prev: str | None = None
        self.before_prev: str | None = None
        self.prev_unary = False
        self.first: str | None = None  # the line's first token: `buffer` of a member
        self.option_eq = False  # the `=` of a member's `, persistent=False` was the last token
        # the `]` just written closed a fn's type parameters (`fn f[M: A](`)
        self.closed_type_params = False

    def _operand_end(self) -> bool:
        p = self.prev
        if p is None:
            return False
        if p in _CLOSE:
            return True
        return _is_word(p) and p not in _KEYWORDS

    def space(self, tok: str) -> str:
        """The space to write before `tok` (the caller drops it at a line start)."""
        prev = self.prev
        inner = self.brackets[-1] if self.brackets else None
        if prev is None or prev in _OPEN or self.prev_unary:
            return ""
        if tok in (",", ")", "]", ".") or prev == ".":
            return ""
        if prev == ",":
            return " "
        if tok == ":":
            return ""
        if prev == ":":
            return "" if inner == "index" else " "
        if inner is not None and inner != "params" and (tok == "=" or prev == "="):  # a keyword argument, `wrt=`
            return ""
        if inner is None and self.first in ("param", "buffer") and (tok == "=" and self.before_prev == ","):
            return ""  # a member's keyword: `, persistent=False`
        if self.option_eq:
            return ""
        if inner == "dim" and (tok in _ARITH or prev in _ARITH):
            return ""
        if tok in _OPEN:
            if inner in ("list", "dim") and tok == "(":
                return " "  # the next dim of a shape: [b (T*E)]
            return "" if self._operand_end() else " "
        return " "

    def push(self, tok: str) -> None:
        """Account for `tok`, written after the space `space(tok)` gave."""
        unary = tok == "~" or (tok in ("-", "+") and not self._operand_end())
        if self.prev is None:
            self.first = tok
        self.option_eq = (
            tok == "=" and not self.brackets and self.first in ("param", "buffer") and self.before_prev == ","
        )
        if tok in _OPEN:
            inner = self.brackets[-1] if self.brackets else None
            if inner in ("list", "dim") and tok == "(":
                kind = "dim"
            elif tok == "[" and self.before_prev == "model":
                kind = "params"  # model Linear[I, O, bias: Bool = True]
            elif tok == "(" and (self.before_prev == "fn" or self.closed_type_params):
                kind = "params"  # fn main(lr: Float = 3e-4), fn f[M: A](m: M)
            elif tok == "[" and self.before_prev == "fn":
                kind = "type_params"  # fn f[M: CharModel]
            elif self._operand_end():
                kind = "call" if tok == "(" else "index"
            else:
                kind = "group" if tok == "(" else "list"
            self.brackets.append(kind)
        closed = None
        if tok in _CLOSE and self.brackets:
            closed = self.brackets.pop()
        self.closed_type_params = closed == "type_params"
        self.before_prev = self.prev
        self.prev = tok
        self.prev_unary = unary and not (self.brackets and self.brackets[-1] == "dim")


def _is_word(tok: str) -> bool:
    c = tok[0]
    return c.isalnum() or c in "_\"'" or (c == "." and len(tok) > 1) or not c.isascii()


# ------------------------------------------------------------------ one item


@dataclass(slots=True)
class _Out:
    """A formatted line: its indentation in columns, its text without it
    (empty for a blank line), and what it is; a code line's end-of-line
    comment, with the column it was written at."""

    kind: str  # "code", "comment" or "blank"
    indent: int
    text: str
    comment: str | None = None
    comment_col: int = 0


@dataclass(slots=True)
class _Open:
    """An open bracket of a logical line: the indentation of the line it was
    opened on, and the column after it when tokens follow it on that line
    (its continuation lines align there) or None (they hang one level in)."""

    line_indent: int
    aligned: int | None


def _layout(lines: list[_Line]) -> list[_Out]:
    """The formatted lines of one item (or of the comments before the first)."""
    out: list[_Out] = []
    stack = [0]  # indentation widths of the open blocks, as written
    pending: list[tuple[int, int]] = []  # own-line comments before the next statement: (index in out, width)
    spacer = _Spacer()
    opened: list[_Open] = []
    statement = 0  # the indentation of the current statement, in columns
    continued = False  # the previous line ended with `\`

    def place_comments(levels: list[int], floor: int) -> None:
        # At column 0 a comment stays there (a commented-out line, a note
        # pointing at the code); elsewhere it takes its block's indentation.
        for index, width in pending:
            if width > 0:
                deepest = max(i for i, w in enumerate(levels) if w <= width)
                out[index].indent = len(INDENT) * max(floor, deepest)
        pending.clear()

    for line in lines:
        inside = bool(opened) or continued
        if not line.tokens:
            if line.continued:
                raise _Unformattable  # a line of nothing but `\`
            if line.comment is None:
                out.append(_Out("blank", 0, ""))
            elif inside:
                out.append(_Out("comment", _continuation(opened, 0, statement, continued), line.comment))
            else:
                pending.append((len(out), _width(line.indent)))
                out.append(_Out("comment", 0, line.comment))
            continued = False
            continue
        if inside:
            leading = 0  # closing brackets that start the line
            while leading < len(line.tokens) and line.tokens[leading] in _CLOSE:
                leading += 1
            indent = _continuation(opened, leading, statement, continued)
        else:
            width = _width(line.indent)
            levels = list(stack)
            if width > stack[-1]:
                stack.append(width)
                levels.append(width)
            else:
                while width < stack[-1]:
                    stack.pop()
            depth = len(stack) - 1
            place_comments(levels, depth)
            statement = indent = len(INDENT) * depth
            spacer = _Spacer()
            opened = []
        text = ""
        for k, tok in enumerate(line.tokens):
            if text:
                text += spacer.space(tok)
            text += tok
            spacer.push(tok)
            if tok in _OPEN:
                last = k == len(line.tokens) - 1
                opened.append(_Open(indent, None if last else indent + len(text)))
            elif tok in _CLOSE and opened:
                opened.pop()
        if line.continued:
            text += " \\"
        out.append(_Out("code", indent, text, line.comment, line.comment_col))
        continued = line.continued
    place_comments(stack, 0)
    return out


def _continuation(opened: list[_Open], closers: int, statement: int, continued: bool) -> int:
    """The indentation of a continuation line that starts with `closers`
    closing brackets: aligned after the innermost bracket still open, or one
    level in from the line that opened it; a line closing every bracket at its
    statement's indentation; one level in after a `\\`. Never column 0 (that
    starts an item)."""
    still_open = opened[: len(opened) - closers]
    if still_open:
        inner = still_open[-1]
        indent = inner.aligned if inner.aligned is not None else inner.line_indent + len(INDENT)
    else:
        indent = statement + (len(INDENT) if continued and not closers else 0)
    return max(indent, len(INDENT))


# ------------------------------------------------------------------ the document


@dataclass(frozen=True, slots=True)
class Formatted:
    """A formatted document: its text, and the items that would change but
    were left as written (spans in the original text): `skipped` because they
    have syntax errors, `refused` because formatting would have changed what
    they mean (a formatter bug)."""

    text: str
    skipped: tuple[A.Span, ...]
    refused: tuple[A.Span, ...]


@dataclass(frozen=True, slots=True)
class _Chunk:
    start: int
    end: int
    new: str | None  # None: kept as written


def format_text(text: str, known: Iterable[ItemParse] = ()) -> Formatted:
    """The whole document in its canonical layout. `known`: parses of items
    of the text at hand (the analysis's), used instead of parsing again."""
    chunks, skipped, refused = _format_chunks(text, known)
    out = "".join(text[c.start : c.end] if c.new is None else c.new for c in chunks)
    return Formatted(out, tuple(skipped), tuple(refused))


def format_edits(text: str, span: A.Span | None = None, known: Iterable[ItemParse] = ()) -> list[TextEdit]:
    """Minimal edits (whole lines, one per changed run) that format `text`,
    or only the items that `span` touches (`known` as for format_text)."""
    chunks, _, _ = _format_chunks(text, known)
    edits: list[TextEdit] = []
    for c in chunks:
        if c.new is None:
            continue
        if span is not None and not (c.start < span.end and span.start < c.end or c.start <= span.start < c.end):
            continue
        old = text[c.start : c.end]
        if old != c.new:
            for e in _line_edits(old, c.new, c.start):
                # Edits that touch become one: no two ranges share an end,
                # which clients would have to order.
                if edits and edits[-1].span.end == e.span.start:
                    last = edits.pop()
                    e = TextEdit(A.Span(last.span.start, e.span.end), last.new_text + e.new_text)
                edits.append(e)
    return edits


def _line_edits(old: str, new: str, offset: int) -> list[TextEdit]:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    starts = [offset]
    for line in a:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        TextEdit(A.Span(starts[i1], starts[i2]), "".join(b[j1:j2]))
        for op, i1, i2, j1, j2 in matcher.get_opcodes()
        if op != "equal"
    ]


def _format_chunks(text: str, known: Iterable[ItemParse]) -> tuple[list[_Chunk], list[A.Span], list[A.Span]]:
    parses = {p.text: p for p in known}
    m = _LINE_END.search(text)
    newline = m.group() if m else "\n"
    bounds = split_items(text)
    one_liners = [_one_line(text[s:e]) for s, e in bounds]
    skipped: list[A.Span] = []
    laid_out: list[list[_Out] | None] = []  # None: kept as written
    first = True  # no text before this chunk but a byte order mark
    for i, (s, e) in enumerate(bounds):
        chunk = text[s:e]
        if chunk == BOM and s == 0:
            laid_out.append(None)
            continue
        at_start, first = first, False
        try:
            lines = _layout(_lex_lines(chunk))
        except _Unformattable:
            skipped.append(A.Span(s, e))
            laid_out.append(None)
            continue
        follows = one_liners[i + 1] if i + 1 < len(bounds) else None
        laid_out.append(_settle_blank_lines(lines, at_start, one_liners[i], follows))
    # Only an item whose layout differs from its text is parsed: one with a
    # syntax error is then kept as written, and the others are laid out again
    # without it (it ends a run of aligned comments), until none is left.
    parsed: dict[int, ItemParse] = {}
    while True:
        news = [None if r is None else "".join(line + newline for line in r) for r in _render(laid_out)]
        broken = False
        for i, ((s, e), new) in enumerate(zip(bounds, news, strict=True)):
            if new is None or new == text[s:e] or i in parsed:
                continue
            parse = parsed[i] = parses.get(text[s:e]) or parse_item(text[s:e])
            if parse.diagnostics:
                skipped.append(A.Span(s, e))
                laid_out[i] = None
                broken = True
        if not broken:
            break
    chunks: list[_Chunk] = []
    refused: list[A.Span] = []
    for i, ((s, e), new) in enumerate(zip(bounds, news, strict=True)):
        old = text[s:e]
        if new is not None and new != old and not _same(parsed[i].item, old, new):
            refused.append(A.Span(s, e))
            new = None
        chunks.append(_Chunk(s, e, new))
    skipped.sort(key=lambda span: span.start)
    return chunks, skipped, refused


def _one_line(chunk: str) -> bool:
    """Whether an item is one line of code (comments and blank lines aside)."""
    code = 0
    for line in _LINE_END.split(chunk):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            code += 1
            if code > 1:
                return False
    return code == 1


def _settle_blank_lines(lines: list[_Out], at_start: bool, one_line: bool, follows: bool | None) -> list[_Out]:
    """The item's lines with blank lines settled: at most one in a row. What
    follows its last statement is its gap: blank lines, and comments at
    column 0. The gap holds the blank line between this item and the next
    (`follows` says whether that one is one line, None at the end of the
    document): before its comments when the user separated them from the code
    above, after them when they were written right under it (then they are
    read as a note on that code)."""
    last = -1
    for i, ln in enumerate(lines):
        if ln.kind == "code" or (ln.kind == "comment" and ln.indent > 0):
            last = i
    # runs[k]: the blank lines before the k-th comment of the gap, and runs[-1] after the last one.
    runs: list[int] = [0]
    comments: list[_Out] = []
    for ln in lines[last + 1 :]:
        if ln.kind == "blank":
            runs[-1] += 1
        else:
            comments.append(ln)
            runs.append(0)
    runs = [min(n, 1) for n in runs]
    if last < 0 and at_start:
        runs[0] = 0  # nothing before the document's first comment
    if follows is None:
        runs[-1] = 0  # the end of the document
    elif last >= 0 and not (one_line and follows):  # one-line items keep theirs
        runs[0 if comments and runs[0] else -1] = 1
    out = _collapse(lines[: last + 1])
    for k, ln in enumerate(comments):
        out += [_Out("blank", 0, "")] * runs[k]
        out.append(ln)
    out += [_Out("blank", 0, "")] * runs[-1]
    return out


def _render(chunks: list[list[_Out] | None]) -> list[list[str] | None]:
    """The lines of each laid-out chunk as text (None stays None: a chunk kept
    as written, which also ends a run of aligned comments)."""
    out: list[list[str] | None] = []
    run: list[tuple[_Out, list[str], int]] = []  # a run of consecutive lines of formatted chunks
    for chunk in chunks:
        if chunk is None:
            _place_end_comments(run)
            run = []
            out.append(None)
            continue
        texts = [" " * ln.indent + ln.text if ln.kind != "blank" else "" for ln in chunk]
        run.extend((ln, texts, k) for k, ln in enumerate(chunk))
        out.append(texts)
    _place_end_comments(run)
    return out


def _place_end_comments(lines: list[tuple[_Out, list[str], int]]) -> None:
    """End-of-line comments go two spaces after their code, except in a run of
    consecutive lines of one block that all have one (one-line items in a row
    too): those stay aligned at the column they shared as written, if it is
    still two past the longest code of the run, and are aligned two past it
    otherwise. Writes into the texts lists the entries point into."""
    i = 0
    while i < len(lines):
        if lines[i][0].comment is None:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j][0].comment is not None and lines[j][0].indent == lines[i][0].indent:
            j += 1
        run = lines[i:j]
        column = max(len(texts[k]) for _, texts, k in run) + 2
        written = {ln.comment_col for ln, _, _ in run}
        if len(run) > 1 and len(written) == 1 and (col := written.pop()) >= column:
            column = col
        for ln, texts, k in run:
            texts[k] = texts[k].ljust(column) + str(ln.comment)
        i = j


def _collapse(lines: list[_Out]) -> list[_Out]:
    """At most one blank line in a row."""
    out: list[_Out] = []
    for ln in lines:
        if ln.kind == "blank" and (not out or out[-1].kind == "blank"):
            continue
        out.append(ln)
    return out


# ------------------------------------------------------------------ the self-check


def _same(item: A.Item | None, old: str, new: str) -> bool:
    """Whether `new` is still one item that parses cleanly to the same tree
    (positions aside) with the same comments as `old`."""
    if split_items(new, at_document_start=False) != [(0, len(new))] and new.strip():
        return False
    parse = parse_item(new)
    if parse.diagnostics or not deep(lambda: shape(parse.item) == shape(item)):
        return False
    return comments(old) == comments(new)


def shape(node: object) -> object:
    """A syntax tree as comparable data without positions."""
    if isinstance(node, A.Node):
        return (type(node).__name__, *(shape(getattr(node, f.name)) for f in fields(node) if f.name != "span"))
    if isinstance(node, A.Span):
        return None
    if isinstance(node, tuple):
        return tuple(shape(x) for x in node)
    return node


_COMMENT = re.compile(
    r"""("(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*')|(\#[^\r\n]*)""",
    re.X,
)


def comments(text: str) -> list[str]:
    """The comments of a text, in order, without trailing whitespace (strings
    are skipped, so a `#` inside one is no comment)."""
    return [m.group(2).rstrip() for m in _COMMENT.finditer(text) if m.group(2)]
