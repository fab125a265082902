"""Words and literals as both parsers read them (parser.py, lark's, and
fast_parser.py, the hand-written fast path): the reserved keywords and the
decoding of string literals. One definition, so the two cannot drift."""

from __future__ import annotations

import re

# Keywords of statements and expressions, in the order completion offers them.
STATEMENT_KEYWORDS = (
    "return",
    "if",
    "elif",
    "else",
    "for",
    "in",
    "while",
    "and",
    "or",
    "not",
    "as",
    "pass",
    "break",
    "continue",
    "True",
    "False",
    "mut",
)
# Reserved: never names, although lark's contextual lexer would read them as
# names where no keyword fits. `dim`, `model`, `param`, `buffer` and `on` stay
# usable as names.
HARD_KEYWORDS = frozenset(STATEMENT_KEYWORDS) | {"fn", "extern", "from", "import"}

_ESCAPE = re.compile(r"\\(.)")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def unescape(raw: str) -> str:
    """The value of a string literal as written (quotes included)."""
    body = raw[1:-1]
    if "\\" not in body:
        return body
    return _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), body)
