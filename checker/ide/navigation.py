"""Go to definition, references, document highlights and document symbols."""

from __future__ import annotations

from .. import ast as A
from ..analysis import Analysis
from ..consts import show as show_const
from ..declarations import (
    DimInfo,
    FnInfo,
    ModelInfo,
)
from .results import DocumentSymbol, NavTarget
from .symbols import Sym, _abs, _body_of, _index, _occ_at


def _target(analysis: Analysis, sym: Sym) -> NavTarget | None:
    g = analysis.globals
    method = g.fns.get(sym.name) if sym.kind == "fn" else None
    if method is not None and method.owner is not None:  # `Linear.forward`: in its model
        model = g.models.get(method.owner)
        slot = analysis.slot_of_item.get(model.decl) if model is not None else None
        if slot is None or not isinstance(method.decl, A.FnDecl):
            return None  # a model of another file (checker/ide/workspace_nav.py)
        return NavTarget(_abs(slot, method.decl.span), _abs(slot, method.decl.name.span))
    if sym.kind in ("dim", "const", "model", "fn", "alias"):
        item = g.names.first.get(sym.name)
        slot = analysis.slot_of_item.get(item) if item is not None else None
        if slot is None or not hasattr(item, "name") or item.name is None:  # type: ignore[union-attr]
            return None
        return NavTarget(_abs(slot, item.span), _abs(slot, item.name.span))  # type: ignore[union-attr]
    if sym.kind == "member":
        model = g.models.get(sym.scope or "")
        f = model.field(sym.name) if model is not None else None
        if f is None:
            return None
        slot = analysis.slot_of_item.get(model.decl)  # type: ignore[union-attr]
        if slot is None:
            return None  # a model of another file (checker/ide/workspace_nav.py)
        return NavTarget(_abs(slot, f.decl.span), _abs(slot, f.decl.name.span))
    if sym.kind == "option" or (sym.kind == "generic" and sym.scope in g.models):
        # an option or a dim of a model: in its header
        model = g.models.get(sym.scope or "")
        slot = analysis.slot_of_item.get(model.decl) if model is not None else None
        mp = next((p for p in model.decl.params if p.name.text == sym.name), None) if model is not None else None
        if slot is None or mp is None:
            return None
        return NavTarget(_abs(slot, mp.span), _abs(slot, mp.name.span))
    if sym.kind in ("var", "generic"):
        info = g.fns.get(sym.scope or "")
        if info is None:
            return None
        slot = analysis.slot_of_item.get(info.decl)
        if slot is None:
            return None
        defs = [o for o in _index(analysis, info.decl).occs if o.sym == sym and o.is_def]
        if not defs:
            return None
        first = defs[0]
        if isinstance(first.node, A.Ident):
            param = next((p for p in info.decl.params if p.name is first.node), None)
            if param is not None:
                return NavTarget(_abs(slot, param.span), _abs(slot, first.span))
        return NavTarget(_abs(slot, first.span), _abs(slot, first.span))
    return None


def definition(analysis: Analysis, offset: int) -> list[NavTarget]:
    """Where the name under the cursor is declared. A local assigned in several
    places goes to the assignments that reach the cursor (or the first one)."""
    found = _occ_at(analysis, offset)
    if found is None:
        return []
    slot, occ = found
    if occ.sym.kind == "var":
        body = _body_of(analysis, slot.item, occ.span.start)
        ref = body.refs.get(occ.node) if body is not None else None
        if ref is not None and ref.kind == "local" and ref.defs and occ.node not in ref.defs:
            return [NavTarget(_abs(slot, d.span), _abs(slot, d.span)) for d in ref.defs]
    target = _target(analysis, occ.sym)
    return [target] if target is not None else []


def references(analysis: Analysis, offset: int, include_declaration: bool = True) -> list[A.Span]:
    found = _occ_at(analysis, offset)
    if found is None:
        return []
    _, occ = found
    return [s for s, is_def in _occurrences(analysis, occ.sym) if include_declaration or not is_def]


def _occurrences(analysis: Analysis, sym: Sym) -> list[tuple[A.Span, bool]]:
    model = analysis.globals.models.get(sym.scope or "") if sym.kind in ("generic", "option") else None
    if model is not None:  # a model's own dim or option: in its item only
        items = [model.decl]
    elif sym.kind in ("var", "generic"):
        info = analysis.globals.fns.get(sym.scope or "")
        items = [info.decl] if info is not None else []
    else:
        items = analysis.parsed.items
    out = []
    for item in items:
        slot = analysis.slot_of_item.get(item)
        if slot is None:
            continue
        for o in _index(analysis, item).occs:
            if o.sym == sym:
                out.append((_abs(slot, o.span), o.is_def))
    return out


def highlights(analysis: Analysis, offset: int) -> list[tuple[A.Span, bool]]:
    """Every occurrence of the symbol under the cursor, with whether it is a
    definition (document highlights)."""
    found = _occ_at(analysis, offset)
    if found is None:
        return []
    return _occurrences(analysis, found[1].sym)


def document_symbols(analysis: Analysis) -> list[DocumentSymbol]:
    out = []
    for slot in analysis.parsed.slots:
        item = slot.item
        info = analysis.declared.get(item).info if item in analysis.declared else None  # type: ignore[union-attr]
        if isinstance(item, A.ConstDecl):
            value = analysis.globals.names.const_values.get(item.name.text)
            detail = f"= {show_const(*value)}" if isinstance(value, tuple) else ""
            out.append(
                DocumentSymbol(item.name.text, "const", detail, _abs(slot, item.span), _abs(slot, item.name.span))
            )
        elif isinstance(item, A.DimDecl):
            value = info.value if isinstance(info, DimInfo) else None
            out.append(
                DocumentSymbol(
                    item.name.text,
                    "dim",
                    f"= {value}" if value is not None else "",
                    _abs(slot, item.span),
                    _abs(slot, item.name.span),
                )
            )
        elif isinstance(item, A.ModelDecl):
            children = []
            for m in item.members:
                ty = ""
                if isinstance(info, ModelInfo):
                    f = info.field(m.name.text)
                    ty = str(f.type) if f is not None and f.decl is m else ""
                children.append(DocumentSymbol(m.name.text, m.kind, ty, _abs(slot, m.span), _abs(slot, m.name.span)))
            out.append(
                DocumentSymbol(
                    item.name.text, "model", "", _abs(slot, item.span), _abs(slot, item.name.span), tuple(children)
                )
            )
        elif isinstance(item, (A.FnDecl, A.ExternDecl)):
            detail = info.signature() if isinstance(info, FnInfo) else ""
            kind = "fn" if isinstance(item, A.FnDecl) else "extern"
            out.append(DocumentSymbol(item.name.text, kind, detail, _abs(slot, item.span), _abs(slot, item.name.span)))
    return out
