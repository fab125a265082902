"""Two types in one message: where two that are not the same print the same
(a model's dim and a dim constant both called `NH`), each is followed by
what its names are, so no message reads "expected X, found X" or "dims X
and X differ" (one mistake, one diagnostic that says what it is)."""

from __future__ import annotations

import re

from . import dimexpr as DX
from .types import (
    RUN_MARK,
    DimConst,
    DimExpr,
    DimRun,
    DimVar,
    Elem,
    GradT,
    ModelClassT,
    ModelT,
    OptimT,
    StackT,
    TensorT,
    TupleT,
    shown_name,
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


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
            for n in _NAME.findall(d.text):
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
