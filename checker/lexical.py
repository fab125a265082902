"""What both parsers share (parser.py, lark's, and fast_parser.py, the
hand-written fast path): the reserved keywords, the reading of literals, and
the one rewrite both make of a parsed argument. One definition, so the two
cannot drift."""

from __future__ import annotations

import re
import unicodedata

from . import ast as A
from . import catalog as C
from .diagnostics import Fix, LocalDiagnostic, TextEdit

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
    "is",
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


# --- bidirectional controls (CVE-2021-42574, "Trojan Source") ------------------------

# The embeddings, overrides and isolates: they reorder how the text after them
# is displayed, so a comment or string can hide code that reads otherwise.
# (U+200E/U+200F and U+061C only mark a direction; rustc does not warn on them either.)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Where such a character is allowed to stand at all: in a string (f-strings
# included: their text, as far as a string reaches) or a comment. Scanned left
# to right, so a `#` in a string and a quote in a comment are what they seem.
_STRING_OR_COMMENT = re.compile(r"""f?"(?:[^"\\\r\n]|\\.)*"|f?'(?:[^'\\\r\n]|\\.)*'|#[^\r\n]*""")


def bidi_warnings(text: str) -> tuple[LocalDiagnostic, ...]:
    """W0001 at each bidirectional control in a string or a comment of an
    item's text (offsets relative to it), with a fix that removes it.
    Elsewhere such a character is no token at all, and the parser reports
    it (E0002): one diagnostic each."""
    if text.isascii() or _BIDI.search(text) is None:  # (isascii is a flag of the string: free)
        return ()
    out = []
    for token in _STRING_OR_COMMENT.finditer(text):
        for m in _BIDI.finditer(text, token.start(), token.end()):
            ch = m.group()
            code = f"U+{ord(ch):04X}"
            span = A.Span(m.start(), m.end())
            where = "comment" if token.group().startswith("#") else "string"
            fix = Fix(f"Remove {code}", (TextEdit(span, ""),))
            out.append(C.W0001.at(span, fix=fix, code=code, name=unicodedata.name(ch).lower(), where=where))
    return tuple(out)
