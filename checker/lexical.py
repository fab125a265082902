"""What both parsers share (parser.py, lark's, and fast_parser.py, the
hand-written fast path): the reserved keywords, the reading of literals, and
the one rewrite both make of a parsed argument. One definition, so the two
cannot drift."""

from __future__ import annotations

import re

from . import ast as A

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


# Python reads at most this many digits into an int (sys.int_info's default
# str-digits limit), and cannot print a longer one either: a longer literal is
# reported (E0011) instead of reaching anything that would.
MAX_INT_DIGITS = 4300


def int_value(text: str) -> int:
    """The value of an integer literal as written (`1_000`); 0 for one longer
    than MAX_INT_DIGITS, which the parser reports (E0011) and never lets
    through."""
    digits = text.replace("_", "")
    return int(digits) if len(digits) <= MAX_INT_DIGITS else 0


def keyword_value(keyword: str, value: A.Expr) -> A.Expr:
    """The value of a keyword argument as the checker reads it: `wrt=[head]`,
    one name in brackets, parses as a shape and is a list of names there."""
    if (
        keyword == "wrt"
        and isinstance(value, A.TensorType)
        and value.elem is None
        and len(value.dims) == 1
        and isinstance(value.dims[0], A.DimName)
    ):
        d = value.dims[0]
        return A.NameList(value.span, (A.Name(d.span, d.name),))
    return value
