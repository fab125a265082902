"""Inlay hints: the inferred type of each binding."""

from __future__ import annotations

from .. import ast as A
from .. import types as T
from ..analysis import Analysis
from .results import InlayHint


def inlay_hints(analysis: Analysis, span: A.Span | None = None) -> list[InlayHint]:
    """`: TYPE` after each name a statement binds (assignments and loop
    variables), with the inferred type."""
    out = []
    for slot in analysis.parsed.slots:
        if span is not None and (slot.end < span.start or slot.start > span.end):
            continue
        for item, _ in analysis.functions(slot.item):
            body = analysis.bodies.get(item)
            if body is not None:
                out.extend(_hints(body, slot.start, span))
    out.sort(key=lambda h: h.offset)
    return out


def _hints(body, base: int, span: A.Span | None) -> list[InlayHint]:
    out = []
    for node, ref in body.refs.items():
        if ref.kind != "local" or node not in ref.defs:
            continue
        ty = body.types.get(node)
        if ty is None or T.is_unknown(ty) or isinstance(ty, T.UnitT):
            continue
        at = node.span.end + base
        if span is not None and not span.start <= at <= span.end:
            continue
        out.append(InlayHint(at, f": {ty}"))
    return out
