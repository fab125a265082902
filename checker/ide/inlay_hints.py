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
        item = slot.item
        if not isinstance(item, A.FnDecl):
            continue
        if span is not None and (slot.end < span.start or slot.start > span.end):
            continue
        body = analysis.bodies.get(item)
        if body is None:
            continue
        for node, ref in body.refs.items():
            if ref.kind != "local" or node not in ref.defs:
                continue
            ty = body.types.get(node)
            if ty is None or T.is_unknown(ty) or isinstance(ty, T.UnitT):
                continue
            at = node.span.end + slot.start
            if span is not None and not span.start <= at <= span.end:
                continue
            out.append(InlayHint(at, f": {ty}"))
    out.sort(key=lambda h: h.offset)
    return out
