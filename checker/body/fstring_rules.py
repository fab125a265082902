"""Which format specs fit which values in an f-string field (E0312): the
rules of Python's `format` for the value the field compiles to (a `[]`
tensor formats as its number, a Bool as its text, `!t` gives a Str)."""

from __future__ import annotations

from .. import types as T
from ..fstrings import SPEC

_INT_TYPES = frozenset("bcdoxXn")
_FLOAT_TYPES = frozenset("eEfFgG%")


def field_kind(t: T.Type, conversion: str | None) -> str | None:
    """What a field's value formats as: Int, Float, Str (a Bool too), None
    for a value that takes no spec (a tensor with dims, a model), "?" unknown."""
    if conversion == "t":
        return "Str"
    if isinstance(t, T.UnknownT):
        return "?"
    if isinstance(t, T.NumberT):
        return "Str" if t.kind == "Bool" else t.kind
    if isinstance(t, T.TensorT) and t.rank == 0 and not T.has_rest(t):
        if t.elem.is_bool:
            return "Str"
        return "Float" if t.elem.is_float else "Int"
    return None


def spec_problem(t: T.Type, spec: str, conversion: str | None) -> str | None:
    """Why `spec` cannot format a value of type `t` (None: it can)."""
    if not spec:
        return None
    kind = field_kind(t, conversion)
    if kind == "?":
        return None
    if kind is None:
        if isinstance(t, T.TensorT):
            return "a tensor with dims takes no format spec; format one number of it, or show its type with !t"
        return "only numbers and strings take a format spec"
    m = SPEC.fullmatch(spec)
    if m is None:
        return None  # reported by the parser (E0013)
    ty = m.group("type")
    if kind == "Str":
        if ty is not None and ty != "s":
            return f"'{ty}' is for numbers, and this is text"
        for group, what in (
            ("sign", "a sign"),
            ("z", "'z'"),
            ("alt", "'#'"),
            ("grouping", "grouping"),
            ("zero", "'0' padding"),
        ):
            if m.group(group):
                return f"{what} is for numbers, and this is text"
        if m.group("align") == "=":
            return "'=' alignment is for numbers, and this is text"
        return None
    if kind == "Float":
        if ty is not None and ty not in _FLOAT_TYPES and ty != "n":
            return f"'{ty}' is for an Int or text, and this is a Float: use 'f', 'e', 'g' or '%'"
        return None
    # an Int
    if ty == "s":
        return "'s' is for text, and this is an Int"
    if ty is None or ty in _INT_TYPES:
        if m.group("precision") is not None:
            return "an Int takes no precision; use 'f' or 'e' to show it as a decimal"
        if m.group("z"):
            return "'z' is for a Float"
        if ty == "c" and m.group("sign"):
            return "'c' takes no sign"
    return None


def type_text(t: T.Type) -> str:
    """The type as the message names it."""
    if isinstance(t, T.TensorT):
        return f"a tensor {t}"
    if isinstance(t, T.NumberT):
        return f"a {t.kind}"
    return T.describe(t)
