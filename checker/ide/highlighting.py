"""Semantic tokens: dims, models, model fields, parameters, functions, built-ins and initializers."""

from __future__ import annotations

from .. import ast as A
from ..analysis import Analysis
from ..builtins import CONSTANTS
from ..declarations import (
    FnInfo,
)
from ..initializers import INITIALIZERS, initializer_name
from .results import SemanticToken
from .symbols import _fn_of, _index, _Occ


def semantic_tokens(analysis: Analysis, span: A.Span | None = None) -> list[SemanticToken]:
    """Every name the legend has a type for, in document order; only those
    in the items that overlap `span` when it is given."""
    out = []
    g = analysis.globals
    for slot in analysis.parsed.slots:
        item = slot.item
        if item is None:
            continue
        if span is not None and (slot.end < span.start or slot.start > span.end):
            continue
        index = _index(analysis, item)
        if index.tokens is None:
            fn = _fn_of(analysis, item)
            tokens = []
            for o in index.occs:
                tok = _token(g, fn, o)
                if tok is not None:
                    kind, mods = tok
                    tokens.append((o.span.start, o.span.end, kind, ("declaration",) + mods if o.is_def else mods))
            if isinstance(item, A.ModelDecl):  # the fields' initializers, as built-ins
                for m in item.members:
                    name = initializer_name(m.init)
                    if name is not None and name.name in INITIALIZERS:
                        tokens.append((name.span.start, name.span.end, "function", ("defaultLibrary",)))
                tokens.sort(key=lambda t: t[0])
            index.tokens = tokens
        base = slot.start
        out.extend(SemanticToken(A.Span(a + base, b + base), kind, mods) for a, b, kind, mods in index.tokens)
    return out


def _token(g, fn: FnInfo | None, o: _Occ) -> tuple[str, tuple[str, ...]] | None:
    s = o.sym
    if s.kind == "dim":
        return "typeParameter", ("readonly",)
    if s.kind == "const":
        return "variable", ("readonly",)
    if s.kind == "generic":
        return "typeParameter", ()
    if s.kind in ("model", "alias"):
        return "class", ()
    if s.kind == "member":
        model = g.models.get(s.scope or "")
        f = model.field(s.name) if model is not None else None
        return "property", (("buffer",) if f is not None and f.kind == "buffer" else ())
    if s.kind == "var":
        if fn is not None:
            p = next((p for p in fn.params if p.name == s.name), None)
            if p is not None:
                return "parameter", (("mutable",) if p.mut else ())
        return "variable", ()
    if s.kind == "fn":
        return "function", ()
    if s.kind == "option":
        return "parameter", ("readonly",)
    if s.kind in ("builtin", "method"):
        if s.name in CONSTANTS:
            return "variable", ("readonly", "defaultLibrary")
        return "function", ("defaultLibrary",)
    return None
