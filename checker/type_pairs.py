"""Two types (or dims) in one message, side by side.

`show_pair` writes an expected and a found type in one form; `distinct`
tells apart two that print the same but are not the same (a model's dim and
a dim constant both called `NH`), so no message reads "expected X, found X".
Every catalog message built from types goes through `distinct`
(catalog_code._shown).
"""

from __future__ import annotations

import re

from . import dimexpr as DX
from .types import (
    F32,
    RUN_MARK,
    Dim,
    DimConst,
    DimExpr,
    DimRest,
    DimRun,
    DimUnknown,
    DimVar,
    Elem,
    GradT,
    ModelClassT,
    ModelT,
    OptimT,
    StackT,
    TensorT,
    TupleT,
    Type,
    dims_equal,
    elem_assignable,
    is_run,
    shown_name,
)


def show_pair(expected: Type, found: Type) -> tuple[str, str]:
    """Render two types for a message, in one form. Element types are written
    out when they are what differs, so "expected [] NonNeg, found [] Float"
    reads clearly, but not when the shapes differ and the found element type
    fits (a NonNeg result where a Float is declared). A dim that both have
    reads the same on both sides, as `expected` writes it (`(W-K+1)=26`, not
    `26` on one side); a constant against a dim shown with its value shows
    its value too (`W=28` against `(W-2)=26`). Two that still print the
    same are told apart (`distinct`)."""
    if not (isinstance(expected, TensorT) and isinstance(found, TensorT)):
        return distinct(expected, found)
    e, f = _dims_alike(expected.dims, found.dims)
    same_shape = e == f
    if expected.elem != found.elem and (same_shape or not elem_assignable(found.elem, expected.elem)):
        return distinct(expected, found, f"[{e}] {expected.elem}", f"[{f}] {found.elem}")
    suffix = "" if expected.elem == F32 else f" {expected.elem}"  # (found's fits it, or is the same)
    return distinct(expected, found, f"[{e}]{suffix}", f"[{f}]{suffix}")


def _dims_alike(expected: tuple[Dim, ...], found: tuple[Dim, ...]) -> tuple[str, str]:
    """The dims of two shapes as `show_pair` writes them (without brackets)."""
    e, f = [str(d) for d in expected], [str(d) for d in found]
    if len(e) == len(f):
        for i, (a, b) in enumerate(zip(expected, found)):
            if isinstance(a, (DimUnknown, DimRest)) or isinstance(b, (DimUnknown, DimRest)) or is_run(a) != is_run(b):
                continue
            if dims_equal(a, b):
                f[i] = e[i]
            elif isinstance(a, DimConst) and _shows_value(b):
                e[i] = f"{a}={a.value}"
            elif isinstance(b, DimConst) and _shows_value(a):
                f[i] = f"{b}={b.value}"
    return " ".join(e), " ".join(f)


def _shows_value(d: Dim) -> bool:
    return isinstance(d, DimExpr) and d.value is not None


# ------------------------------------------------------------------ two types in one message
#
# Two types in one message: where two that are not the same print the same
# (a model's dim and a dim constant both called `NH`), each is followed by
# what its names are, so no message reads "expected X, found X" or "dims X
# and X differ" (one mistake, one diagnostic that says what it is).
# (`show_pair` goes through `distinct`, and so does every catalog message
# built from types.)


_PAIR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def distinct(a: object, b: object, sa: str | None = None, sb: str | None = None) -> tuple[str, str]:
    """Two types (or dims) as a message shows them side by side (`sa`, `sb`:
    their texts when the caller renders them its own way). Two that print
    the same and are not the same are each followed by what the names that
    read alike are (`[n NH] (NH: a generic dim)` against `[n NH] (NH: the dim
    constant NH = 2)`), so no message shows "expected X, found X"."""
    sa = str(a) if sa is None else sa
    sb = str(b) if sb is None else sb
    if sa != sb or a == b:
        return sa, sb
    wa, wb = _dim_words(a), _dim_words(b)
    notes_a = [f"{n}: {wa[n]}" for n in wa if wa[n] != wb.get(n)]
    notes_b = [f"{n}: {wb[n]}" for n in wb if wb[n] != wa.get(n)]
    if not notes_a and not notes_b:
        return sa, sb  # alike but for where run-time sizes were bound: run_apart_note says so
    return sa + _notes(sa, notes_a, wa), sb + _notes(sb, notes_b, wb)


def _notes(text: str, notes: list[str], words: dict[str, str]) -> str:
    if not notes:
        return ""
    if len(notes) == 1 and text in words:  # a dim alone: `NH (a generic dim)`
        return f" ({words[text]})"
    return f" ({'; '.join(notes)})"


def _dim_words(x: object) -> dict[str, str]:
    """The named dims inside a type or dim, by name as printed, each with
    words for what it is, in the order they appear."""
    out: dict[str, str] = {}

    def dim(d: object) -> None:
        if isinstance(d, DimConst):
            out.setdefault(d.name, f"the dim constant {d.name} = {d.value}")
        elif isinstance(d, DimVar):
            out.setdefault(d.name, "a generic dim")
        elif isinstance(d, DimRun):
            out.setdefault(d.name, "a size known only at run time")
        elif isinstance(d, DimExpr):
            atoms = {name: RUN_MARK in name for name in DX.generics(d.poly)}
            shown = {shown_name(n): run for n, run in atoms.items()}
            for n in _PAIR_NAME.findall(d.text):
                if n in shown:
                    out.setdefault(n, "a size known only at run time" if shown[n] else "a generic dim")
                else:  # evaluated away: a dim constant of known value
                    out.setdefault(n, "a dim constant")
        elif isinstance(d, Elem):
            if d.index is not None:
                dim(d.index)
        elif isinstance(d, TensorT):
            for x in d.dims:
                dim(x)
            dim(d.elem)
        elif isinstance(d, TupleT):
            for x in d.items:
                dim(x)
        elif isinstance(d, StackT):
            dim(d.dim)
            dim(d.item)
        elif isinstance(d, (ModelT, GradT, OptimT, ModelClassT)):
            for x in d.dims:
                dim(x)

    dim(x)
    return out
