"""Symbols and their occurrences in each item (cached per document), and locating the cursor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .. import ast as A
from ..analysis import Analysis
from ..declarations import (
    Declared,
    FnInfo,
)
from ..items import ItemSlot
from ..member_conditions import names_in
from ..results import BodyResult, Ref

# A dim constant, a generic dim, a model, a function, a model member (param
# or buffer, and the gradient field of the same name), a local or parameter,
# a built-in function, a model method, a module, a model's option (`bias`
# of `model Linear[I, O, bias: Bool = True]`).
SymKind = Literal[
    "dim", "const", "generic", "model", "fn", "member", "var", "builtin", "method", "module", "option", "alias"
]


@dataclass(frozen=True, slots=True)
class Sym:
    """What an occurrence of a name means. `scope` is the function for locals,
    parameters and generic dims, the model for members and methods."""

    kind: SymKind
    name: str
    scope: str | None = None


@dataclass(frozen=True, slots=True)
class _Occ:
    span: A.Span  # relative to the item
    sym: Sym
    is_def: bool
    node: A.Node


@dataclass
class _ItemIndex:
    occs: list[_Occ]
    body: BodyResult | None
    declared: Declared
    # semantic tokens, relative to the item: (start, end, type, modifiers)
    tokens: list[tuple[int, int, str, tuple[str, ...]]] | None = None


def _index(analysis: Analysis, item: A.Node) -> _ItemIndex:
    """Every name occurrence in one item, in order. Cached per item for as
    long as what the collector reads stays the same: the item's declaration
    and body results (the same objects), the kinds of the global names (the
    names token), and whether the item is the first of its name."""
    body = analysis.bodies.get(item)
    declared = analysis.declared.get(item)
    name = getattr(item, "name", None)
    first = name is not None and analysis.globals.names.first.get(name.text) is item
    methods = tuple(analysis.bodies.get(m) for m in item.methods) if isinstance(item, A.ModelDecl) else ()
    key = (body, declared, analysis.names_token, first, methods)
    hit = analysis.ide_cache.get(item)
    if hit is not None and all(a is b for a, b in zip(hit[0], key)):
        return hit[1]
    occs = _Collector(analysis, item, body).run()
    for decl, info in analysis.functions(item) if isinstance(item, A.ModelDecl) else ():
        occs += _Collector(analysis, decl, analysis.bodies.get(decl), info.name).run()
    occs.sort(key=lambda o: (o.span.start, o.span.end))
    index = _ItemIndex(occs, body, declared)  # type: ignore[arg-type]
    analysis.ide_cache[item] = (key, index)
    return index


class _Collector:
    """The occurrences in an item, or in one method of a model (`fn_name`:
    its qualified name, `Linear.forward`)."""

    def __init__(self, analysis: Analysis, item: A.Node, body: BodyResult | None, fn_name: str | None = None) -> None:
        self.g = analysis.globals
        self.item = item
        self.body = body
        self.fn_name = fn_name
        self.out: list[_Occ] = []
        self.seen: set[tuple[int, int]] = set()

    def add(self, node: A.Node, span: A.Span, sym: Sym, is_def: bool = False) -> None:
        key = (span.start, span.end)
        if key in self.seen:
            return
        self.seen.add(key)
        self.out.append(_Occ(span, sym, is_def, node))

    def run(self) -> list[_Occ]:
        item = self.item
        if isinstance(item, A.DimDecl):
            self.add(item.name, item.name.span, Sym("dim", item.name.text), True)
        elif isinstance(item, A.ConstDecl):
            self.add(item.name, item.name.span, Sym("const", item.name.text), True)
            self.constant_refs(item.value)
        elif isinstance(item, A.TypeAlias):  # `type Gcn = GCN[FIN, H, C, use_bias=False]`
            self.add(item.name, item.name.span, Sym("alias", item.name.text), True)
            self.type_expr(item.target, None)
        elif isinstance(item, A.ModelDecl):
            model = item.name.text
            self.add(item.name, item.name.span, Sym("model", model), True)
            for mp in item.params:
                if mp.type is None:  # one of the model's dims
                    self.add(mp.name, mp.name.span, Sym("generic", mp.name.text, model), True)
                else:  # an option
                    self.add(mp.name, mp.name.span, Sym("option", mp.name.text, model), True)
                    self.type_expr(mp.type, None)
            for m in item.members:
                self.add(m.name, m.name.span, Sym("member", m.name.text, model), True)
                self.type_expr(m.type, None, model_dims=model)
                if m.cond is not None:  # `if bias`, `if stride != 1 or not bias`
                    dims = {mp.name.text for mp in item.params if mp.type is None}
                    options = {mp.name.text for mp in item.params if mp.type is not None}
                    for n in names_in(m.cond):
                        if n.name in dims:
                            self.add(n, n.span, Sym("generic", n.name, model))
                        elif n.name in options:
                            self.add(n, n.span, Sym("option", n.name, model))
        elif isinstance(item, A.TraitDecl):
            self.add(item.name, item.name.span, Sym("model", item.name.text), True)
        elif isinstance(item, (A.FnDecl, A.ExternDecl)):
            fn = self.fn_name or item.name.text
            self.add(item.name, item.name.span, Sym("fn", fn), True)
            for tp in item.type_params if isinstance(item, A.FnDecl) else ():
                for b in tp.bounds:  # `M: CharModel`: the trait
                    if b.text in self.g.models:
                        self.add(b, b.span, Sym("model", b.text))
            generics_seen: set[str] = set()
            for p in item.params:
                self.add(p.name, p.name.span, Sym("var", p.name.text, fn), True)
                if p.type is not None:
                    self.type_expr(p.type, fn, generics_seen)
                if p.default is not None:
                    self.constant_refs(p.default)
            if item.ret is not None:
                self.type_expr(item.ret, fn, generics_seen)
            if isinstance(item, A.FnDecl) and self.body is not None:
                self.body_refs(fn)
        return self.out

    def type_expr(
        self, t: A.Node, fn: str | None, generics_seen: set[str] | None = None, model_dims: str | None = None
    ) -> None:
        info = self.g.fns.get(fn) if fn is not None else None
        generics = info.generics if info is not None and info.decl is self.item else ()
        if model_dims is not None:  # in a model's member: its own dims
            model = self.g.models.get(model_dims)
            generics, fn = (model.dims if model is not None else ()), model_dims
        for node in A.walk(t):
            if isinstance(node, A.DimName):
                self.dim_name(node, node.name, node.span, fn, generics, generics_seen)
            elif isinstance(node, A.ElemType) and node.name.text in self.g.models:  # [L] Block[E]: a stack
                self.add(node.name, node.name.span, Sym("model", node.name.text))
            elif isinstance(node, (A.NamedType, A.ElemType)) and self.g.names.kind(node.name.text) == "alias":
                self.add(node.name, node.name.span, Sym("alias", self.g.names.canonical(node.name.text)))
            elif isinstance(node, A.ElemType) and node.arg is not None:
                self.dim_name(node.arg, node.arg.text, node.arg.span, fn, generics, generics_seen)
            elif isinstance(node, A.NamedType):
                name = node.name.text
                if name in self.g.models:
                    self.add(node.name, node.name.span, Sym("model", name))
                elif not node.args and not node.options:  # a dim given to a model: Linear[D, H]
                    self.dim_name(node.name, name, node.name.span, fn, generics, generics_seen)

    def constant_refs(self, e: A.Expr) -> None:
        """The constants and dims a constant expression names (a `const`'s
        value, a parameter's default): `LR`, `hparams.LR`."""
        names = self.g.names
        for node in A.walk(e):
            written: str | None = None
            at: A.Node = node
            if isinstance(node, A.Name):
                written, at = node.name, node
            elif isinstance(node, A.Field) and isinstance(node.value, A.Name):
                written, at = f"{node.value.name}.{node.name.text}", node.name
                if names.kind(node.value.name) == "module":
                    self.add(node.value, node.value.span, Sym("module", node.value.name))
            if written is None:
                continue
            kind = names.kind(written)
            if kind in ("const", "dim"):
                self.add(at, at.span, Sym(kind, names.canonical(written)))

    def dim_name(self, node: A.Node, name: str, span: A.Span, fn: str | None, generics, seen) -> None:
        if name in self.g.dims:
            self.add(node, span, Sym("dim", name))
        elif fn is not None and name in generics:
            first = seen is not None and name not in seen
            if seen is not None:
                seen.add(name)
            self.add(node, span, Sym("generic", name, fn), first)

    def body_refs(self, fn: str) -> None:
        body = self.body
        assert body is not None
        for node, ref in body.refs.items():
            sym = _sym_of_ref(ref, fn)
            if sym is None:
                continue
            is_def = ref.kind == "local" and node in ref.defs
            self.add(node, node.span, sym, is_def)
        # Shapes written in casts and shape literals are not references the
        # checker records; they are found here.
        assert isinstance(self.item, A.FnDecl)
        for stmt in self.item.body:
            for node in A.walk(stmt):
                if isinstance(node, A.Cast):
                    self.type_expr(node.type, fn)
                elif isinstance(node, A.TensorType):  # a shape literal: randint([16] Index[C], ...)
                    self.type_expr(node, fn)


def _sym_of_ref(ref: Ref, fn: str) -> Sym | None:
    k = ref.kind
    if k in ("local", "param"):
        return Sym("var", ref.name, fn)
    if k == "generic":
        return Sym("generic", ref.name, fn)
    if k in ("dim", "const", "model"):
        return Sym(k, ref.name)
    if k in ("fn", "extern"):
        return Sym("fn", ref.name)
    if k in ("field", "gradfield"):
        return Sym("member", ref.name, ref.owner)
    if k == "module":
        return Sym("module", ref.name)
    if k == "option":  # `bias` in a method: the model's option
        return Sym("option", ref.name, ref.owner)
    if k == "builtin":
        if ref.owner is not None:  # Mlp.init
            return Sym("method", ref.name.rsplit(".", 1)[-1], ref.owner)
        return Sym("builtin", ref.name)
    return None


def _slot_at(analysis: Analysis, offset: int) -> ItemSlot | None:
    slot = analysis.parsed.slot_at(offset)
    if slot is None or slot.item is None:
        return None
    return slot


def _occ_at(analysis: Analysis, offset: int) -> tuple[ItemSlot, _Occ] | None:
    """The name occurrence under the cursor: on a character of the name, or
    right after its last character."""
    for probe in (offset, offset - 1):
        if probe < 0:
            continue
        slot = _slot_at(analysis, probe)
        if slot is None:
            continue
        rel = probe - slot.start
        for occ in _index(analysis, slot.item).occs:  # type: ignore[arg-type]
            if occ.span.start <= rel < occ.span.end:
                return slot, occ
            if occ.span.start > rel:
                break
    return None


def _fn_of(analysis: Analysis, item: A.Node | None, rel: int | None = None) -> FnInfo | None:
    """The function of an item (at offset `rel` of it, for a model's methods)."""
    d = analysis.declared.get(item) if item is not None else None
    if d is not None and isinstance(d.info, FnInfo):
        return d.info
    if rel is not None:
        found = analysis.function_at(item, rel)
        if found is None and isinstance(item, A.ModelDecl):
            # past the end of a method's last statement (a line being typed,
            # blanked as a syntax error): that method, unless a member follows
            before = [(d, i) for d, i in analysis.functions(item) if d.span.start <= rel]
            if before:
                decl, info = max(before, key=lambda f: f[0].span.start)
                if not any(decl.span.end <= m.span.start <= rel for m in item.members):
                    return info
        return found[1] if found is not None else None
    return None


def _body_of(analysis: Analysis, item: A.Node | None, rel: int) -> BodyResult | None:
    """The body result of the function of `item` that offset `rel` is in."""
    found = analysis.function_at(item, rel)
    return analysis.bodies.get(found[0]) if found is not None else None


def _abs(slot: ItemSlot, span: A.Span) -> A.Span:
    return A.Span(span.start + slot.start, span.end + slot.start)
