"""f-strings: `f"step {step}: loss {l:.4f}"` cut into text and fields.

Both parsers (lark's, through tree_builder.py, and fast_parser.py) read an
f-string token with `read`, so they build the same tree; the expression of a
field is read by the fast expression parser (fast_expressions.py), the one
that reads every clean expression: both pass its `field_expression` to
`read` (this module is below the parsers, so it cannot import one). A field it cannot read, a brace left open,
an unknown conversion or a format spec that is not one of Python's is a
syntax error (E0013), which only lark's path reports (the fast path declines
the item). Whether a spec fits the field's type is the checker's (E0312).

A field is `{expr}`, `{expr:spec}` (Python's format-spec mini-language),
`{expr!t}` (the value's type as Quiver writes it, `[4 8] Float`) or
`{expr!t:spec}`; `{{` and `}}` are braces. Inside the braces the other quote
may be used; the string's own quote ends it (as in Python before 3.12).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import ast as A
from .lexical import unescape

Span = A.Span

# Python's format-spec mini-language (format(value, spec)).
SPEC = re.compile(
    r"(?:(?P<fill>[^{}])?(?P<align>[<>=^]))?(?P<sign>[-+ ])?(?P<z>z)?(?P<alt>#)?(?P<zero>0)?"
    r"(?P<width>\d+)?(?P<grouping>[,_])?(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%])?"
)
CONVERSIONS = ("t",)


class FStringError(Exception):
    """What is wrong in an f-string, and where (in the item)."""

    def __init__(self, span: Span, problem: str) -> None:
        super().__init__(problem)
        self.span = span
        self.problem = problem


# reads a field's expression: (its text, where the text starts in the item,
# the span of its braces) -> the expression; raises FStringError
FieldReader = Callable[[str, int, Span], A.Expr]


def read(raw: str, start: int, expression: FieldReader) -> A.FString:
    """The node of f-string token `raw` (`f"..."`) that starts at `start` in
    its item, its fields' expressions read by `expression` (the fast
    parser's `fast_expressions.field_expression`). Raises FStringError."""
    body_start = start + 2
    body = raw[2:-1]
    parts: list[A.StrLit | A.FormatField] = []
    text: list[str] = []  # the raw text of the current piece
    text_at = 0
    i = 0
    n = len(body)

    def flush(end: int) -> None:
        if text:
            raw_piece = "".join(text)
            parts.append(A.StrLit(Span(body_start + text_at, body_start + end), unescape('"' + raw_piece + '"')))
            text.clear()

    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            if not text:
                text_at = i
            text.append(body[i : i + 2])
            i += 2
            continue
        if c == "{" and body[i + 1 : i + 2] == "{" or c == "}" and body[i + 1 : i + 2] == "}":
            if not text:
                text_at = i
            text.append("\\" + c)  # one brace, as the piece's value
            i += 2
            continue
        if c == "}":
            raise FStringError(
                Span(body_start + i, body_start + i + 1), "a single '}' in an f-string: write '}}' for a brace"
            )
        if c == "{":
            flush(i)
            field, i = _field(body, i, body_start, expression)
            parts.append(field)
            continue
        if not text:
            text_at = i
        text.append(c)
        i += 1
    flush(n)
    return A.FString(Span(start, start + len(raw)), tuple(parts))


def _field(body: str, open_at: int, base: int, expression: FieldReader) -> tuple[A.FormatField, int]:
    """The field whose `{` is at `open_at`; and the index after its `}`."""
    depth = 0
    quote = None
    i = open_at + 1
    bang = colon = None
    n = len(body)
    while i < n:
        c = body[i]
        if quote is not None:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif colon is not None:
            if c == "}":
                break
            if c == "{":
                raise FStringError(Span(base + i, base + i + 1), "a format spec cannot hold braces")
        elif c in "\"'":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth <= 0 and c == "!" and body[i + 1 : i + 2] != "=" and bang is None:
            bang = i
        elif depth <= 0 and c == ":":
            colon = i
        elif depth <= 0 and c == "}":
            break
        elif c == "{":
            raise FStringError(Span(base + i, base + i + 1), "'{' inside a field: write '{{' for a brace")
        i += 1
    if i >= n:
        raise FStringError(Span(base + open_at, base + open_at + 1), "'{' is not closed: write '{{' for a brace")
    close = i
    expr_end = min(x for x in (bang, colon, close) if x is not None)
    value = expression(body[open_at + 1 : expr_end], base + open_at + 1, Span(base + open_at, base + close + 1))
    conversion = None
    if bang is not None and bang == expr_end:
        conv_end = colon if colon is not None else close
        conversion = body[bang + 1 : conv_end]
        if conversion not in CONVERSIONS:
            raise FStringError(
                Span(base + bang, base + conv_end),
                f"unknown conversion '!{conversion}': an f-string has !t (the value's type)",
            )
    spec = ""
    spec_span = Span(base + close, base + close)
    if colon is not None:
        spec = body[colon + 1 : close]
        spec_span = Span(base + colon + 1, base + close)
        if SPEC.fullmatch(spec) is None:
            raise FStringError(
                spec_span if spec else Span(base + colon, base + colon + 1), f"'{spec}' is not a format spec"
            )
    field = A.FormatField(Span(base + open_at, base + close + 1), value, conversion, spec, spec_span)
    return field, close + 1
