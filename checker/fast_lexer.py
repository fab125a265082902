"""The fast parser's tokens (fast_parser.py): lark's terminals as one regular
expression, the NL / INDENT / DEDENT of lark's post-lexer, the nesting
limits past which an item is declined, and `_Cursor`, a position in the
tokens with the reads of single tokens and dotted names."""

from __future__ import annotations

import re

from . import ast as A
from .lexical import HARD_KEYWORDS, MAX_INT_DIGITS

Span = A.Span


# The grammar's terminals (grammar.lark), tried in lark's order: FLOAT has
# priority over INT, longer punctuation before its prefixes. Each token takes
# the spaces and backslash-newlines before it (lark skips them), so one match
# is one token; possessively (`*+`), since lark's lexer never gives back what
# it skipped: backslash CR LF is one continuation, never a continuation and a
# newline. A newline with the blank and comment lines after it is one NL
# token, as lark's _NL. Tabs, form feeds and any other character match
# nothing: the item is declined.
_TOKEN = re.compile(
    r"(?:[ ]+|\\[ ]*(?:\r\n?|\n))*+"
    r"(?:(?P<nl>(?:(?:\r\n?|\n)[ ]*|#[^\r\n]*)+)"
    r"|(?P<FSTRING>f\"(?:[^\"\\\r\n]|\\.)*\"|f'(?:[^'\\\r\n]|\\.)*')"
    r"|(?P<NAME>[^\W\d]\w*)"
    r"|(?P<FLOAT>\d[\d_]*\.(?:\d[\d_]*)?(?:[eE][+-]?\d+)?|\.\d[\d_]*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+)"
    r"|(?P<INT>\d[\d_]*)"
    r"|(?P<STRING>\"(?:[^\"\\\r\n]|\\.)*\"|'(?:[^'\\\r\n]|\\.)*')"
    r"|(?P<op>->|\|>|\*\*|//|==|!=|<=|>=|[-+*/]=|\.\.\.|\.\.|[-+*/%@<>=()\[\],:.|&~]))"
)
# The kind of token each group gives, by group number (op: the text itself).
_NL, _FSTRING, _NAME, _FLOAT, _INT, _STRING, _OP = 1, 2, 3, 4, 5, 6, 7
_GROUP_KIND = (None, "NL", "FSTRING", "NAME", "FLOAT", "INT", "STRING", None)

# Nesting past these declines (lark reports E0009 past parser.MAX_NESTING,
# counted its own way; these keep every accepted item far below it).
_MAX_BRACKETS_AND_BLOCKS = 30
_MAX_PREFIX = 15

_COMPARE = frozenset({"==", "!=", "<=", ">=", "<", ">"})
_ADD = frozenset({"+", "-"})
_MUL = frozenset({"*", "/", "//", "%", "@"})
_AUG = frozenset({"+=", "-=", "*=", "/="})


class _Decline(Exception):
    """Not an item this parser takes: lark will."""


def _tokenize(text: str) -> tuple[list[str], list[str], list[int], list[int]] | None:
    """Parallel lists of token kinds, texts, starts and ends, with NL, INDENT
    and DEDENT as lark's indentation post-lexer makes them; then EOF."""
    kinds: list[str] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    depth = 0  # brackets open: newlines inside them are not tokens
    levels = [0]
    max_depth = 0
    max_levels = 1
    pos = 0
    hard = HARD_KEYWORDS
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            return None  # a character no terminal matches
        group: int = m.lastindex  # pyright: ignore[reportAssignmentType]  (every match has a group)
        start, end = m.span(group)
        glued = start == pos  # nothing skipped since the last token
        pos = end
        value = m.group(group)
        if group == _NAME:
            kind = value if value in hard else "NAME"
            if glued and kinds and (kinds[-1] == "INT" or kinds[-1] == "FLOAT") and values[-1][-1] != ".":
                return None  # `2N`: a word split in two, which lark's path reports (E0003)
        elif group == _OP:
            kind = value
            if value == "(" or value == "[":
                depth += 1
                if depth > max_depth:
                    max_depth = depth
            elif value == ")" or value == "]":
                if depth == 0:
                    return None
                depth -= 1
        elif group == _NL:
            if depth:
                continue
            if not kinds:
                return None  # an item starts with its keyword
            kinds.append("NL")
            values.append(value)
            starts.append(start)
            ends.append(end)
            indent = end - start - 1 - max(value.rfind("\n"), value.rfind("\r"))
            if indent > levels[-1]:
                levels.append(indent)
                if len(levels) > max_levels:
                    max_levels = len(levels)
                kind = "INDENT"
            else:
                while indent < levels[-1]:
                    levels.pop()
                    kinds.append("DEDENT")
                    values.append("")
                    starts.append(end)
                    ends.append(end)
                if indent != levels[-1]:
                    return None  # a dedent to a column no block uses
                continue
        else:
            kind = _GROUP_KIND[group]
            if group == _INT and len(value) > MAX_INT_DIGITS:
                return None  # maybe too long to read: lark's path reports it (E0011)
        kinds.append(kind)  # pyright: ignore[reportArgumentType]
        values.append(value)
        starts.append(start)
        ends.append(end)
    if pos != len(text) or depth:
        return None
    if max_depth + max_levels > _MAX_BRACKETS_AND_BLOCKS:
        return None
    if len(levels) > 1:
        return None  # the text ends with a newline at column 0: every block closed
    kinds.append("EOF")
    values.append("")
    starts.append(len(text))
    ends.append(len(text))
    return kinds, values, starts, ends


class _Cursor:
    """A position in an item's tokens, and reading the simplest ones."""

    __slots__ = ("k", "v", "s", "e", "i", "prefix")

    def __init__(self, kinds: list[str], values: list[str], starts: list[int], ends: list[int]) -> None:
        self.k = kinds
        self.v = values
        self.s = starts
        self.e = ends
        self.i = 0
        self.prefix = 0  # prefix operators (and `**`) whose operand is being parsed

    # -- tokens

    def expect(self, kind: str) -> int:
        """Consume a token of `kind`; its index."""
        i = self.i
        if self.k[i] != kind:
            raise _Decline
        self.i = i + 1
        return i

    def ident(self) -> A.Ident:
        i = self.i
        if self.k[i] != "NAME":
            raise _Decline
        self.i = i + 1
        return A.Ident(Span(self.s[i], self.e[i]), self.v[i])

    def qualname(self) -> A.Ident:
        """NAME ("." NAME)*, one identifier (lark's `dotted`)."""
        k = self.k
        i = self.i
        if k[i] != "NAME":
            raise _Decline
        if k[i + 1] != ".":
            self.i = i + 1
            return A.Ident(Span(self.s[i], self.e[i]), self.v[i])
        first = i
        parts = [self.v[i]]
        i += 1
        while k[i] == ".":
            if k[i + 1] != "NAME":
                raise _Decline
            parts.append(self.v[i + 1])
            i += 2
        self.i = i
        return A.Ident(Span(self.s[first], self.e[i - 1]), ".".join(parts))
