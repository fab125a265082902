"""Parsing one top-level item into the typed AST, with recovery.

The grammar (grammar.lark) is LALR(1); lark calls the builder callbacks below
while it parses, so no intermediate parse tree is built and deep nesting costs
no recursion. Recovery works on statements: when a statement of a function
body (or a member of a model) does not parse, it is reported once, blanked out
(replaced by `pass` and spaces, so every offset stays where it was) and the item
is parsed again. A broken header gives a `BrokenItem` that still carries the
item's kind and name, so nothing that refers to it reports a cascade.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput
from lark.indenter import DedentError, Indenter
from lark.lexer import LexerState, LexerThread, LineCounter
from lark.utils import TextSlice

from . import ast as A
from . import catalog as C
from .deep import MAX_CHAIN
from .diagnostics import LocalDiagnostic, LocalRelated
from .fast_parser import parse as fast_parse
from .lexical import HARD_KEYWORDS, MAX_INT_DIGITS
from .syntax_messages import describe_unexpected
from .tree_builder import Builder, _end, _start, _tok_span

# Nesting as the user sees it (E0009): each enclosing block, each enclosing
# bracket (parentheses, calls, indexing, lists) and each prefix operator or
# `**` whose operand holds the token counts one level. Deeper statements are
# refused and never reach the tree: nobody writes them, and it keeps every
# recursive pass over the tree far from Python's recursion limit. (Chains that
# read flat, `a + b + c`, `x.a.b`, `f(x)(y)`, count nothing.)
MAX_NESTING = 100
# Chains that read flat are not nesting, but each link (a binary operator,
# `.`, `as`, `|>`, a call's or an index's bracket after an operand) is one
# level of the tree all the same: a statement may hold MAX_CHAIN links
# (checker/deep.py; E0015 past it), counted by the post-lexer and again,
# for all statements at once, by the token scan (_token_problems).

# A broken item is re-parsed at most this many times before it is given up on.
MAX_RECOVERIES = 25
# Bracket and lexical problems reported one by one in an item; the next one
# also says how many more there are, and the rest are only blanked out.
MAX_TOKEN_PROBLEMS = 20


_LAST_LINE = re.compile(r"\r\n?|\n")


class _QuiverIndenter(Indenter):
    # Class attributes, as lark reads them for every token (lark declares
    # them as abstract properties, which pyright holds against a plain value).
    NL_type = "_NL"  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    OPEN_PAREN_types = ["LPAR", "LSQB"]  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    INDENT_type = "_INDENT"  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    DEDENT_type = "_DEDENT"  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    tab_len = 8  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]

    def handle_NL(self, token: Token):
        if self.paren_level > 0:
            return
        yield token
        # The last line's indentation (the token may span many blank lines).
        indent_str = token[max(token.rfind("\n"), token.rfind("\r")) + 1 :]
        indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len + indent_str.count("\f")
        if indent > self.indent_level[-1]:
            self.indent_level.append(indent)
            if len(self.indent_level) - 1 > MAX_NESTING:
                raise _TooDeep(_end(token))
            yield Token.new_borrow_pos(self.INDENT_type, indent_str, token)
        else:
            while indent < self.indent_level[-1]:
                self.indent_level.pop()
                yield Token.new_borrow_pos(self.DEDENT_type, indent_str, token)
            if indent != self.indent_level[-1]:
                raise _BadDedent(token)

    def _process(self, stream):
        # As lark's, but an unmatched closing bracket is the parser's business,
        # not an assertion failure; and nesting deeper than MAX_NESTING stops
        # the parse (_TooDeep) before the parser builds anything of it.
        token = None
        # Prefix operators (and `**`) nest their operand: `run` counts those
        # whose operand is still going on, `outer` the levels of the enclosing
        # brackets (each bracket, plus the run it interrupted, kept in `runs`).
        run = outer = 0
        runs: list[int] = []
        operand_end = False  # the last token ends an operand: a `-` now is binary
        links = 0  # chain links in the statement so far (MAX_CHAIN)
        # The first keyword read as a name (the contextual lexer makes one a
        # NAME where no keyword fits): reported by _validate, found here on
        # the way rather than by walking the whole tree afterwards.
        self.keyword_name: Token | None = None
        # The first word the contextual lexer split in two: where no name
        # fits, it takes a keyword (or a number) off the front of a longer
        # word, `x orb` as `x or b`, `[2N]` as `[2 N]`. Reported by _validate.
        self.glued: tuple[Token, Token] | None = None
        # The first integer literal too long to read (E0011).
        self.long_number: Token | None = None
        prev: Token | None = None
        # `param` and `buffer` are keywords only where a model's member
        # starts: first on a line of a model's body. Elsewhere they are
        # names, as the fast parser reads them; lark's contextual lexer would
        # otherwise take one for the keyword after a block (the states after
        # a suite are shared with a method's, which a member may follow).
        in_model = line_start = False
        for token in stream:
            kind = token.type
            if kind in _MEMBER_WORDS and not (in_model and line_start and len(self.indent_level) == 2):
                token = Token.new_borrow_pos("NAME", str(token), token)
                kind = "NAME"
            if prev is None:
                in_model = kind == "MODEL"
            line_start = kind == self.NL_type
            if (
                prev is not None
                and token.start_pos == prev.end_pos
                and self.glued is None
                and prev.type != "NAME"
                and _WORD_END.search(prev)
                and _WORD_START.match(token)
            ):
                self.glued = (prev, token)
            prev = token
            if kind == self.NL_type:
                if self.paren_level == 0:
                    links = 0
                yield from self.handle_NL(token)
                run, operand_end = 0, False
                continue
            if kind in _LINKS or (operand_end and kind in _AFTER_OPERAND_LINKS):
                links += 1
                if links > MAX_CHAIN:
                    raise _TooLong(_start(token), _end(token))
            yield token
            if kind in _OPENERS:
                self.paren_level += 1
                runs.append(run)
                outer += run + 1
                run, operand_end = 0, False
            elif kind in _CLOSERS:
                self.paren_level = max(0, self.paren_level - 1)
                if runs:
                    run = runs.pop()
                    outer -= run + 1
                operand_end = True
            elif kind in _PREFIX or (kind == "ADD_OP" and not operand_end):
                run += 1
                operand_end = False
            elif kind in _OPERAND:
                operand_end = kind != "DOT"
                if (
                    kind == "INT"
                    and self.long_number is None
                    and len(token) > MAX_INT_DIGITS
                    and len(token.replace("_", "")) > MAX_INT_DIGITS
                ):
                    self.long_number = token
                if kind == "NAME" and self.keyword_name is None and token in HARD_KEYWORDS:
                    self.keyword_name = token
                continue
            else:
                run, operand_end = 0, False
                continue
            if len(self.indent_level) - 1 + outer + run > MAX_NESTING:
                raise _TooDeep(_start(token), _end(token))
        while len(self.indent_level) > 1:
            self.indent_level.pop()
            if token is not None:
                yield Token.new_borrow_pos(self.DEDENT_type, "", token)
            else:
                yield Token(self.DEDENT_type, "", 0, 1, 1, 1, 1, 0)


_MEMBER_WORDS = frozenset({"PARAM", "BUFFER"})
_WORD_END = re.compile(r"\w\Z")
_WORD_START = re.compile(r"\w")
_OPENERS = frozenset({"LPAR", "LSQB"})
_CLOSERS = frozenset({"RPAR", "RSQB"})
_PREFIX = frozenset({"NOT", "POW_OP"})
_OPERAND = frozenset({"NAME", "INT", "FLOAT", "STRING", "FSTRING", "TRUE", "FALSE", "DOT"})
# The links of a chain (MAX_CHAIN): these tokens always; a `+`/`-`, `(` or
# `[` only right after an operand (binary, a call, indexing).
_LINKS = frozenset(
    {"MUL_OP", "FLOOR_OP", "COMP_OP", "BIT_OR", "BIT_AND", "AND", "OR", "AS", "PIPE_OP", "POW_OP", "DOT"}
)
_AFTER_OPERAND_LINKS = frozenset({"ADD_OP", "LPAR", "LSQB"})


class _GiveUp(Exception):
    """The item's header is broken: stop recovering."""


class _TooDeep(Exception):
    """Nesting past MAX_NESTING: at a token (start, end), or at the first line
    of a block (start only; the range runs to the end of the line)."""

    def __init__(self, start: int, end: int | None = None) -> None:
        super().__init__("nested too deeply")
        self.start = start
        self.end = end


class _TooLong(_TooDeep):
    """A statement with more than MAX_CHAIN links, at the first past it."""

    end: int


# Stands in for a statement that did not parse; a character the pre-pass
# refuses in user text (before the first parse), so it can only come from
# recovery. An ASCII one: a text blanked stays one byte a character.
PLACEHOLDER = "\x00"


class _BadDedent(DedentError):
    def __init__(self, token: Token) -> None:
        super().__init__("inconsistent dedent")
        self.token = token


_GRAMMAR = (Path(__file__).with_name("grammar.lark")).read_text()


class _FairLock:
    """A lock handed to its waiters in the order they came (first come, first
    served). The parser is one object, so items are parsed one at a time; with
    a plain lock the thread parsing a large document would take it back item
    after item, and another document's one-item parse would wait until the
    whole large document was parsed."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: collections.deque[threading.Lock] = collections.deque()
        self._held = False

    def __enter__(self) -> None:
        with self._mutex:
            if not self._held:
                self._held = True
                return
            turn = threading.Lock()
            turn.acquire()
            self._waiters.append(turn)
        turn.acquire()  # released by the holder, who hands the lock over

    def __exit__(self, *exc) -> None:
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().release()
            else:
                self._held = False


_lock = _FairLock()
_parser: Lark | None = None
_builder = Builder()
_indenter: _QuiverIndenter | None = None
_lexer: _PlainLexer | None = None


class _PlainLexer:
    """The grammar's terminals without the parser, for the bracket pre-pass
    (built once: lark rebuilds it on every `Lark.lex` call otherwise)."""

    def __init__(self) -> None:
        self._lexer = Lark(_GRAMMAR, parser="lalr", lexer="basic", keep_all_tokens=True)._build_lexer()

    def lex(self, text: str, start: int = 0):
        """The tokens of text[start:], at their offsets in `text` (lines and
        columns are not kept: nothing here reads them)."""
        counter = LineCounter("\n")
        counter.char_pos = start
        return LexerThread(self._lexer, LexerState(TextSlice(text, start, len(text)), counter)).lex(None)


def _get_parsers() -> tuple[Lark, _PlainLexer]:
    global _parser, _lexer, _indenter
    if _parser is None:
        _indenter = _QuiverIndenter()
        _parser = Lark(
            _GRAMMAR,
            parser="lalr",
            lexer="contextual",
            postlex=_indenter,
            keep_all_tokens=True,
            maybe_placeholders=True,
            transformer=_builder,
        )
        # lark names rules' nonterminals with Token objects (str subclasses
        # with a Python-level __eq__), and every reduce looks one up in a
        # table keyed by plain strings: ~2 million slow comparisons per
        # 50,000 lines. Plain strings compare in C; the hash is the same.
        for rule in _parser.rules:
            rule.origin.name = str(rule.origin.name)
        _lexer = _PlainLexer()
    assert _lexer is not None
    return _parser, _lexer


# ------------------------------------------------------------------ items


_HEADER_RE = re.compile(r"(extern\s+fn|fn|model|trait|dim|const|type|import|from)\b\s*([^\W\d][\w.]*)?")


@dataclass(frozen=True, slots=True)
class ItemParse:
    """The parse of one item's text: its AST (None for comment-only text) and its
    syntax diagnostics, all in offsets relative to the item's start."""

    text: str
    item: A.Item | None
    diagnostics: tuple[LocalDiagnostic, ...]
    # Names bound by statements that did not parse; the checker treats them as
    # defined (with an unknown type) so that later uses report nothing.
    recovered_names: tuple[str, ...] = ()


def parse_item(text: str, *, fast: bool = True) -> ItemParse:
    """Parse the text of one top-level item. Never raises.

    An item that parses cleanly is parsed by the hand-written fast path
    (fast_parser.py); anything it declines, every item with a syntax error
    among them, goes through lark, which reports and recovers. `fast=False`
    forces lark: the reference the fast path is tested against."""
    if text == "\ufeff":  # the byte order mark that starts a document (items.split_items)
        return ItemParse(text, None, ())
    stripped = _strip_trivia(text)
    if not stripped:
        return ItemParse(text, None, ())
    if text[0].isspace():
        # Indented text before the first item (items always start at column 0).
        first = len(text) - len(text.lstrip())
        end = _line_end(text, first)
        return ItemParse(text, None, (C.E0005.at(A.Span(first, end), problem=C.E0005.say("indented_more")),))
    if fast:
        item = fast_parse(text)
        if item is not None and not _validate(item, None):
            return ItemParse(text, item, ())
    with _lock:
        return _Recovery(text).run()


def _strip_trivia(text: str) -> str:
    return re.sub(r"#[^\r\n]*", "", text).strip()


def _line_end(text: str, offset: int) -> int:
    m = re.compile(r"\r|\n").search(text, offset)
    return m.start() if m else len(text)


class _Recovery:
    """Parse, and on each error blank the offending statement and parse again."""

    def __init__(self, text: str) -> None:
        self.original = text
        self.text = text if text.endswith(("\n", "\r")) else text + "\n"
        self.diagnostics: list[LocalDiagnostic] = []
        self.recovered: list[str] = []
        self.blanked: set[tuple[int, int]] = set()
        self._chunks: list[tuple[int, int]] | None = None  # blanking keeps them
        # a model's methods: the statements of each (by its chunk), and back
        self._subs: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self._parent: dict[tuple[int, int], tuple[int, int]] = {}
        m = _HEADER_RE.match(text)
        self.kind = None if not m else ("extern" if m.group(1).startswith("extern") else m.group(1))
        self.name_match = m

    def run(self) -> ItemParse:
        parser, lexer = _get_parsers()
        try:
            self._check_indentation_chars()
            # A text long enough to hold a statement past MAX_CHAIN has its
            # token scan first: every such statement is blanked before lark
            # reads any of it.
            prepassed = PLACEHOLDER in self.text or len(self.text) > MAX_CHAIN
            if prepassed:
                self._prepass(lexer)
            for _ in range(MAX_RECOVERIES):
                try:
                    _builder.fstring_errors.clear()
                    item = cast(A.Item, parser.parse(self.text))  # the callbacks build AST nodes
                except _BadDedent as e:
                    if not prepassed:  # lexical and bracket errors explain most failures
                        prepassed = True
                        self._prepass(lexer)
                        continue
                    start = _end(e.token) - len(_LAST_LINE.split(e.token)[-1])
                    diag = C.E0005.at(
                        A.Span(start, max(start + 1, _end(e.token))),
                        problem=C.E0005.say("dedent_to_no_block"),
                    )
                    self._recover(diag, _end(e.token))
                    continue
                except UnexpectedInput as e:
                    if not prepassed:
                        prepassed = True
                        self._prepass(lexer)
                        continue
                    self._recover(*describe_unexpected(e, self.text))
                    continue
                except _TooLong as e:
                    if not prepassed:  # every long statement at once (and brackets first)
                        prepassed = True
                        self._prepass(lexer)
                        continue
                    self._recover(C.E0015.at(A.Span(e.start, e.end), limit=f"{MAX_CHAIN:,}"), e.start)
                    continue
                except _TooDeep as e:
                    if not prepassed and e.end is not None:  # in brackets: one unclosed is likelier
                        prepassed = True
                        self._prepass(lexer)
                        continue
                    end = e.end
                    if end is None:  # a block: its first line
                        end = max(
                            e.start + 1, len(self.text[e.start : _line_end(self.text, e.start)].rstrip()) + e.start
                        )
                    self._recover(C.E0009.at(A.Span(e.start, end), limit=MAX_NESTING), e.start)
                    continue
                problems = _validate(item, _indenter)
                if _builder.fstring_errors:
                    problems += [C.E0013.at(e.span, problem=e.problem) for e in _builder.fstring_errors]
                    problems.sort(key=lambda d: d.span.start)
                if problems:
                    self._recover(problems[0], problems[0].span.start)
                    continue
                return ItemParse(self.original, item, tuple(self._sorted()), tuple(self.recovered))
        except _GiveUp:
            pass
        return self._broken()

    def _sorted(self) -> list[LocalDiagnostic]:
        return sorted(self.diagnostics, key=lambda d: (d.span.start, d.span.end))

    def _broken(self) -> ItemParse:
        name = None
        m = self.name_match
        if m and m.group(2):
            name = A.Ident(A.Span(m.start(2), m.end(2)), m.group(2))
        item = A.BrokenItem(A.Span(0, len(self.original.rstrip())), self.kind, name)
        return ItemParse(self.original, item, tuple(self._sorted()), tuple(self.recovered))

    # -- statement chunks

    def _body_chunks(self) -> list[tuple[int, int]]:
        """(start, end) of each top-level statement/member of the item's body:
        the lines indented exactly as its first indented line, except `elif`
        and `else`, which continue an `if`. Brackets are ignored on purpose: an
        unclosed one must not swallow the rest of the body. Computed once:
        blanking a chunk keeps its first line where it was, and empties the
        others, which belonged to no other chunk's start."""
        if self._chunks is None:
            self._chunks = self._cut_chunks()
        return self._chunks

    def _cut_chunks(self) -> list[tuple[int, int]]:
        lines = list(_lines(self.text))
        chunks = self._cut_lines(lines[1:], len(self.text))
        if self.kind == "model":
            starts = [a for a, _ in lines]
            for chunk in chunks:  # each method's lines once: linear in the item
                first = bisect.bisect_left(starts, chunk[0])
                last = bisect.bisect_left(starts, chunk[1])
                self._cut_method(chunk, lines[first:last])
        return chunks

    def _cut_lines(self, lines: list[tuple[int, int]], end_of_all: int) -> list[tuple[int, int]]:
        """The chunks of `lines`, up to `end_of_all`: each starts at a line
        indented as the first indented one."""
        base = None
        starts: list[int] = []
        for start, end in lines:
            line = self.text[start:end]
            content = line.lstrip(" \t\f")
            if not content.strip() or content.startswith("#"):
                continue
            indent = len(line) - len(content)
            if indent == 0:
                continue
            if base is None:
                base = indent
            if indent == base and not re.match(r"(elif|else)\b", content):
                starts.append(start)
        return [(s, starts[i + 1] if i + 1 < len(starts) else end_of_all) for i, s in enumerate(starts)]

    def _cut_method(self, chunk: tuple[int, int], lines: list[tuple[int, int]]) -> None:
        """A model's method is cut again into its statements, so that a broken
        statement of a method blanks that statement, as in a top-level fn,
        rather than the whole method. The header ends at the first line whose
        code ends with `:`; an error before that blanks the method."""
        start, end = chunk
        if not _FN_START.match(self.text, start, end):
            return
        for i, (a, b) in enumerate(lines):
            if _CODE_END.search(self.text, a, b) is not None:
                subs = self._cut_lines(lines[i + 1 :], end)
                break
        else:
            return
        if subs:
            self._subs[chunk] = subs
            for sub in subs:
                self._parent[sub] = chunk

    def _chunk_at(self, offset: int) -> tuple[int, int] | None:
        chunks = self._body_chunks()
        # The last chunk starting at or before `offset` (past the last
        # statement, at the end of input, is the last one's).
        i = bisect.bisect_right(chunks, (offset, len(self.text) + 1)) - 1
        if i < 0:
            return None
        chunk = chunks[i]
        subs = self._subs.get(chunk)
        if subs is None or chunk in self.blanked or offset < subs[0][0]:
            return chunk  # a member, a method's header, or a method blanked whole
        return subs[bisect.bisect_right(subs, (offset, len(self.text) + 1)) - 1]

    def _recover(self, diag: LocalDiagnostic, offset: int) -> None:
        """Record `diag` and blank the body chunk holding `offset`; raise
        _GiveUp when the error is in the header, where nothing can be salvaged."""
        chunk = self._chunk_at(offset)
        if chunk is not None and chunk in self.blanked:
            # The error is at a statement already replaced: it follows from an
            # earlier one (a block header with no indented block, say), which
            # was reported; blank the statement before it (in a method, the
            # method itself when the statement was its first).
            parent = self._parent.get(chunk)
            siblings = self._subs[parent] if parent is not None else self._body_chunks()
            i = siblings.index(chunk)
            earlier = [c for c in siblings[:i] if c not in self.blanked]
            if earlier:
                self._blank(*earlier[-1])
            elif parent is not None:
                self._blank(*parent)
            else:
                raise _GiveUp
            return
        # Mixed tabs and spaces (E0006) explain any indentation error that follows.
        explained = diag.code == "E0005" and any(d.code == "E0006" for d in self.diagnostics)
        if not explained:
            self.diagnostics.append(diag)
        if chunk is None:
            raise _GiveUp
        self._blank(*chunk)

    def _blank(self, start: int, end: int) -> None:
        """Replace a statement by the internal placeholder, keeping every offset."""
        self._blank_all([(start, end)])

    def _blank_all(self, chunks: list[tuple[int, int]]) -> None:
        """Blank several statements (sorted, apart) with one copy of the text."""
        text = self.text
        pieces: list[str] = []
        at = 0
        for start, end in chunks:  # no copy of a chunk: it may be most of the text
            self.blanked.add((start, end))
            self.recovered.extend(_bound_names(text, start, end))
            # As written: the line's first character may since have become a space.
            first = _INDENT.match(self.original, start, end).end()  # pyright: ignore[reportOptionalMemberAccess]
            pieces += (text[at:first], PLACEHOLDER)
            at = first + 1
            for m in _LINE_BREAK.finditer(text, at, end):
                pieces += (" " * (m.start() - at), m.group())
                at = m.end()
            pieces.append(" " * (end - at))
            at = end
        pieces.append(text[at:])
        self.text = "".join(pieces)

    # -- pre-passes

    def _check_indentation_chars(self) -> None:
        kinds = set()
        for start, end in _lines(self.text):
            line = self.text[start:end]
            ws = line[: len(line) - len(line.lstrip(" \t"))]
            if not ws or not line.strip() or line.lstrip().startswith("#"):
                continue
            if " " in ws and "\t" in ws:
                self.diagnostics.append(C.E0006.at(A.Span(start, start + len(ws))))
                return
            kinds.add("\t" if "\t" in ws else " ")
            if len(kinds) > 1:
                self.diagnostics.append(C.E0006.at(A.Span(start, start + len(ws))))
                return

    def _prepass(self, lexer: _PlainLexer) -> None:
        """Lexical errors and unbalanced brackets, reported at the character or
        bracket that causes them; one per statement."""
        # The placeholder, written by the user, is an unexpected character
        # like any other (and must not read as a statement skipped).
        problems: list[tuple[int, _Problem, int]] = []
        if PLACEHOLDER in self.original:
            for m in re.finditer(PLACEHOLDER, self.original):
                problems.append((0, ("char", m.start(), m.end(), PLACEHOLDER), m.start()))
            # Statements as written: a line that held only the character is
            # one, and is skipped as such.
            self._body_chunks()
            self.text = self.text.replace(PLACEHOLDER, " ")
        # Lexical errors first (an unterminated string explains the bracket it
        # hides), then stray closing brackets, then unclosed openers. Past
        # MAX_TOKEN_PROBLEMS reported, the statements holding the others are
        # blanked without a word (the last one reported counts them).
        problems += self._token_problems(lexer)
        problems.sort(key=lambda p: (p[0], p[2]))
        to_blank: set[tuple[int, int]] = set()
        reported: list[tuple[LocalDiagnostic, tuple[int, int] | None]] = []
        for _, problem, offset in problems:
            chunk = self._chunk_at(offset)
            if chunk in self.blanked or chunk in to_blank or self._parent.get(chunk) in to_blank:  # type: ignore[arg-type]
                continue
            reported.append((_problem_diagnostic(problem), chunk))
            if chunk is None:
                break
            to_blank.add(chunk)
        # a method blanked whole takes its statements with it
        to_blank = {c for c in to_blank if self._parent.get(c) not in to_blank}
        if len(reported) > MAX_TOKEN_PROBLEMS:
            more = len(reported) - MAX_TOKEN_PROBLEMS
            diag, chunk = reported[MAX_TOKEN_PROBLEMS - 1]
            reported[MAX_TOKEN_PROBLEMS - 1] = (_with_more(diag, more, reported[MAX_TOKEN_PROBLEMS][0].span), chunk)
            # A header problem among the unreported ones still ends the item.
            reported = reported[:MAX_TOKEN_PROBLEMS] + [r for r in reported[MAX_TOKEN_PROBLEMS:] if r[1] is None]
        self.diagnostics.extend(diag for diag, _ in reported[:MAX_TOKEN_PROBLEMS])
        if to_blank:
            self._blank_all(sorted(to_blank))
        if reported and reported[-1][1] is None:
            raise _GiveUp

    def _token_problems(self, lexer: _PlainLexer) -> list[tuple[int, _Problem, int]]:
        """(priority, problem, offset) of each lexical or bracket problem, in
        one pass over the text: after a bad character or string the lexer
        goes on from the character after it. A problem is only made into a
        diagnostic if it is reported (most share a statement with another)."""
        problems: list[tuple[int, _Problem, int]] = []
        text = self.text

        def lexed():  # the tokens one by one (never all in memory at once)
            at = 0
            while True:
                try:
                    yield from lexer.lex(text, at)
                    return
                except UnexpectedCharacters as e:
                    pos = e.pos_in_stream
                    ch = text[pos]
                    at = _line_end(text, pos) if ch in "\"'" else pos + 1
                    problems.append((0, ("char", pos, at, ch), pos))

        tokens = lexed()
        stack: list[Token] = []
        links = 0  # as the post-lexer counts them (MAX_CHAIN), per statement
        operand_end = False
        for tok in tokens:
            kind = tok.type
            if kind == "_NL":
                if not stack:
                    links = 0
                operand_end = False
                continue
            if kind in _LINKS or (operand_end and kind in _AFTER_OPERAND_LINKS):
                links += 1
                if links == MAX_CHAIN + 1:
                    problems.append((3, ("chain", tok, None), _start(tok)))
            operand_end = kind in _CLOSERS or (kind in _OPERAND and kind != "DOT")
            if kind in _OPENERS:
                stack.append(tok)
            elif kind in _CLOSERS:
                if not stack:
                    problems.append((1, ("stray", tok, None), _start(tok)))
                elif stack[-1].type != ("LPAR" if kind == "RPAR" else "LSQB"):
                    problems.append((1, ("mismatch", tok, stack[-1]), _start(tok)))
                else:
                    stack.pop()
        for opener in stack:
            problems.append((2, ("unclosed", opener, None), _start(opener)))
        return problems


_INDENT = re.compile(r"[ \t\f]*")
_FN_START = re.compile(r"[ \t\f]*fn\b")
# a line whose code ends with `:` (a comment may follow): the end of a header
_CODE_END = re.compile(r":[ \t\f]*(#[^\r\n]*)?(\r\n?|\n)?\Z")
_LINE_BREAK = re.compile(r"\r\n?|\n")


# A lexical or bracket problem: ("char", start, end, first character), or
# ("stray" | "mismatch" | "unclosed", bracket token, the opener it mismatches).
_Problem = tuple


def _problem_diagnostic(problem: _Problem) -> LocalDiagnostic:
    kind = problem[0]
    if kind == "char":
        _, start, end, ch = problem
        if ch in "\"'":
            return C.E0008.at(A.Span(start, end))
        return C.E0002.at(A.Span(start, end), char=_show_char(ch))
    _, tok, opener = problem
    if kind == "chain":
        return C.E0015.at(_tok_span(tok), limit=f"{MAX_CHAIN:,}")
    if kind == "stray":
        text = C.E0004.say("no_opening")
    elif kind == "mismatch":
        text = C.E0004.say("mismatch", opener=str(opener), closer=")" if opener.type == "LPAR" else "]")
    else:
        text = C.E0004.say("never_closed", closer=")" if tok.type == "LPAR" else "]")
    return C.E0004.at(_tok_span(tok), bracket=str(tok), problem=text)


def _with_more(diag: LocalDiagnostic, more: int, next_span: A.Span) -> LocalDiagnostic:
    """`diag`, with a note that the `more` problems after it, the first at
    `next_span`, go unreported (their statements are skipped all the same)."""
    what = (
        "1 more bracket or character problem in this item is"
        if more == 1
        else (f"{more} more bracket or character problems in this item are")
    )
    note = LocalRelated(f"{what} not reported; the next one is here", next_span)
    return dataclasses.replace(diag, related=(*diag.related, note))


def _show_char(ch: str) -> str:
    if ch.isprintable() and not ch.isspace():
        return f"'{ch}'"
    return f"U+{ord(ch):04X}"


def _lines(text: str):
    start = 0
    for m in re.finditer(r"\r\n?|\n", text):
        yield start, m.start()
        start = m.end()
    if start < len(text):
        yield start, len(text)


# `for x`, `x = `, `a, b = `, `x += `, and Python's annotated `x: T = `
_BOUND = re.compile(
    r"(?:^|(?<=\r))[ \t\f]*(?:for[ \t\f]+([^\W\d]\w*)|((?:[^\W\d]\w*[ \t\f]*,[ \t\f]*)*[^\W\d]\w*)[ \t\f]*"
    r"(?::[^=\r\n]*)?(?:[-+*/]?=)(?!=))",
    re.M,
)


def _bound_names(text: str, start: int, end: int) -> list[str]:
    """The names bound by the statements in text[start:end]."""
    names = []
    for m in _BOUND.finditer(text, start, end):  # at each line's start
        if m.group(1):
            names.append(m.group(1))
        else:
            names.extend(n.strip() for n in m.group(2).split(","))
    return names


# ------------------------------------------------------------------ validation


def _validate(item: A.Item, lexed: _QuiverIndenter | None) -> list[LocalDiagnostic]:
    """Syntax rules the grammar does not express: what the post-lexer noted on
    the way (`lexed`; None for the fast path, which declines all of it): a
    keyword used as a name, a word split in two, an integer too long to read;
    then assignment targets and loop control outside loops (nesting depth is
    the post-lexer's, which stops the parse where it is exceeded)."""
    problems: list[LocalDiagnostic] = []
    keyword_name = lexed.keyword_name if lexed is not None else None
    glued = lexed.glued if lexed is not None else None
    long_number = lexed.long_number if lexed is not None else None
    if keyword_name is not None:
        problems.append(
            C.E0003.at(_tok_span(keyword_name), expected="a name", context="", found=f"keyword '{keyword_name}'")
        )
    if glued is not None:
        first, second = glued
        problems.append(
            C.E0003.at(
                A.Span(_start(first), _end(second)),
                expected=f"a space after '{first}'",
                context="",
                found=f"'{first}{second}'",
            )
        )
    if long_number is not None:
        digits = len(long_number.replace("_", ""))
        problems.append(C.E0011.at(_tok_span(long_number), digits=f"{digits:,}", limit=f"{MAX_INT_DIGITS:,}"))
    if isinstance(item, A.FnDecl):
        _validate_block(item.body, 0, problems)
    problems.sort(key=lambda d: d.span.start)
    return problems


def _names_tuple(t) -> bool:
    """`(l, acc)` among several targets: a tuple of names, nested or not."""
    return isinstance(t, A.TupleExpr) and all(isinstance(x, A.Name) or _names_tuple(x) for x in t.items)


def _subscripted(t) -> bool:
    """`x[i]`, `m.buf[t]`, `m.enc.w[:, 0]`: one subscript of a name or of a field."""
    if not isinstance(t, A.Index):
        return False
    v = t.value
    while isinstance(v, A.Field):
        v = v.value
        while isinstance(v, A.Index) and isinstance(v.value, A.Field):  # m.blocks[i].w[t]
            v = v.value
    return isinstance(v, A.Name)


def _validate_block(body, loops: int, problems: list) -> None:
    for stmt in body:
        if isinstance(stmt, A.Assign):
            many = len(stmt.targets) > 1
            for t in stmt.targets:
                single = isinstance(t, A.Field) or _subscripted(t)
                if not (isinstance(t, A.Name) or (single and not many) or (many and _names_tuple(t))):
                    problems.append(C.E0007.at(t.span))
        elif isinstance(stmt, A.AugAssign):
            if not (isinstance(stmt.target, (A.Name, A.Field)) or _subscripted(stmt.target)):
                problems.append(C.E0007.at(stmt.target.span))
        elif isinstance(stmt, (A.Break, A.Continue)) and loops == 0:
            problems.append(C.E0010.at(stmt.span, keyword="break" if isinstance(stmt, A.Break) else "continue"))
        elif isinstance(stmt, A.If):
            for b in stmt.branches:
                _validate_block(b.body, loops, problems)
            if stmt.orelse:
                _validate_block(stmt.orelse, loops, problems)
        elif isinstance(stmt, (A.For, A.While)):
            _validate_block(stmt.body, loops + 1, problems)
