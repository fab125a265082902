"""Editor queries over one analysed document: the IDE layer of the checker.

Every function here takes an `Analysis` (one version of one document) and an
offset or a span in absolute code points of its text, and returns plain frozen
dataclasses in the same offsets. Nothing here knows the Language Server
Protocol: quiver.server turns these answers into protocol types and converts
offsets into the client's position encoding.

The queries:

- `hover`: markdown for the name or expression under the cursor: its type with
  inferred shapes; a `Grad[M]` value's fields; a function's signature and the
  params it reads (with the chain for indirect reads).
- `definition`, `references`, `document_symbols`.
- `completions`: fields after `m.` / `g.`, dims after `over=`, types in
  signatures, and in bodies locals, dims, functions, built-ins and keywords.
- `signature_help`: works on broken text (the text is scanned, not the tree).
- `inlay_hints`: the inferred type of each binding.
- `semantic_tokens`: dims, models, model params, parameters, functions.
- `code_lenses`: the param reads of functions that take a model and of each
  `value_and_grad` call; "Run" above `fn main`.
- `code_actions`: quick fixes from the diagnostics' fixes, plus "did you mean"
  renames and a few other mechanical fixes.

Names in Quiver have function scope (like Python), so a local is identified by
its function and its name; a model param and the gradient field of the same
name are one symbol (renaming one means renaming both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from . import ast as A
from . import types as T
from .analysis import Analysis
from .body import BodyResult, Ref
from .builtins import BUILTINS, CONSTANTS, MODEL_METHODS
from .declarations import ELEM_TYPES, NUMBER_TYPES, Declared, DimInfo, FnInfo, ModelInfo
from .diagnostics import Diagnostic, TextEdit
from .items import ItemSlot
from .reads import ParamReads, Step, param_reads

# ====================================================================== results


@dataclass(frozen=True, slots=True)
class Hover:
    span: A.Span  # what the hover is about
    markdown: str


@dataclass(frozen=True, slots=True)
class NavTarget:
    """A place to jump to: `span` covers the whole declaration, `focus` its name."""

    span: A.Span
    focus: A.Span


@dataclass(frozen=True, slots=True)
class DocumentSymbol:
    name: str
    kind: str  # dim | model | param | buffer | fn | extern
    detail: str
    span: A.Span
    focus: A.Span
    children: tuple["DocumentSymbol", ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    kind: str  # field | variable | param | dim | generic | model | fn | extern | builtin | method | keyword | type | constant
    detail: str = ""
    documentation: str = ""  # markdown
    sort_text: str = ""


@dataclass(frozen=True, slots=True)
class Signature:
    label: str
    parameters: tuple[tuple[int, int], ...]  # each parameter's [start, end) in `label`
    documentation: str = ""


@dataclass(frozen=True, slots=True)
class SignatureHelp:
    signatures: tuple[Signature, ...]
    active_signature: int
    active_parameter: int | None


@dataclass(frozen=True, slots=True)
class InlayHint:
    offset: int
    label: str
    kind: str = "type"


@dataclass(frozen=True, slots=True)
class SemanticToken:
    span: A.Span
    type: str
    modifiers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CodeLens:
    span: A.Span
    title: str
    command: str  # "" when the lens is only a label
    arguments: tuple = ()


@dataclass(frozen=True, slots=True)
class CodeAction:
    title: str
    kind: str  # "quickfix"
    edits: tuple[TextEdit, ...]
    diagnostic: Diagnostic | None = None
    preferred: bool = False


# The semantic token legend: standard LSP token types and modifiers, plus
# `mutable` (a `mut` parameter) and `buffer` (a model buffer, as opposed to a param).
TOKEN_TYPES = ("typeParameter", "class", "property", "parameter", "variable", "function")
TOKEN_MODIFIERS = ("declaration", "readonly", "defaultLibrary", "mutable", "buffer")

STATEMENT_KEYWORDS = ("return", "if", "elif", "else", "for", "in", "while", "and", "or", "not", "as", "pass",
                      "break", "continue", "True", "False", "mut")
TOP_KEYWORDS = ("dim", "model", "fn", "extern fn")

# ====================================================================== symbols and their occurrences


@dataclass(frozen=True, slots=True)
class Sym:
    """What an occurrence of a name means. `scope` is the function for locals,
    parameters and generic dims, the model for members and methods."""

    kind: str  # dim | generic | model | fn | member | var | builtin | method
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
    key = (body, declared, analysis.names_token, first)
    hit = analysis.ide_cache.get(item)
    if hit is not None and all(a is b for a, b in zip(hit[0], key)):
        return hit[1]
    occs = _Collector(analysis, item, body).run()
    occs.sort(key=lambda o: (o.span.start, o.span.end))
    index = _ItemIndex(occs, body, declared)  # type: ignore[arg-type]
    analysis.ide_cache[item] = (key, index)
    return index


class _Collector:
    def __init__(self, analysis: Analysis, item: A.Node, body: BodyResult | None) -> None:
        self.g = analysis.globals
        self.item = item
        self.body = body
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
        elif isinstance(item, A.ModelDecl):
            self.add(item.name, item.name.span, Sym("model", item.name.text), True)
            for m in item.members:
                self.add(m.name, m.name.span, Sym("member", m.name.text, item.name.text), True)
                self.type_expr(m.type, None)
        elif isinstance(item, (A.FnDecl, A.ExternDecl)):
            fn = item.name.text
            self.add(item.name, item.name.span, Sym("fn", fn), True)
            generics_seen: set[str] = set()
            for p in item.params:
                self.add(p.name, p.name.span, Sym("var", p.name.text, fn), True)
                self.type_expr(p.type, fn, generics_seen)
            if item.ret is not None:
                self.type_expr(item.ret, fn, generics_seen)
            if isinstance(item, A.FnDecl) and self.body is not None:
                self.body_refs(fn)
        return self.out

    def type_expr(self, t: A.Node, fn: str | None, generics_seen: set[str] | None = None) -> None:
        info = self.g.fns.get(fn) if fn is not None else None
        generics = info.generics if info is not None and info.decl is self.item else ()
        for node in A.walk(t):
            if isinstance(node, A.DimName):
                self.dim_name(node, node.name, node.span, fn, generics, generics_seen)
            elif isinstance(node, A.ElemType) and node.arg is not None:
                self.dim_name(node.arg, node.arg.text, node.arg.span, fn, generics, generics_seen)
            elif isinstance(node, A.NamedType):
                name = node.name.text
                if name in self.g.models:
                    self.add(node.name, node.name.span, Sym("model", name))

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
        # Field targets of assignments (`m.w1 = ...`) and shapes in casts are
        # not recorded by the checker as references; they are found here.
        assert isinstance(self.item, A.FnDecl)
        for stmt in _statements(self.item.body):
            targets: tuple = ()
            if isinstance(stmt, A.Assign):
                targets = stmt.targets
            elif isinstance(stmt, A.AugAssign):
                targets = (stmt.target,)
            for t in targets:
                if isinstance(t, A.Field):
                    owner = body.types.get(t.value)
                    if isinstance(owner, T.ModelT):
                        model = self.g.models.get(owner.name)
                        if model is not None and model.field(t.name.text) is not None:
                            self.add(t.name, t.name.span, Sym("member", t.name.text, owner.name))
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
    if k in ("dim", "model"):
        return Sym(k, ref.name)
    if k in ("fn", "extern"):
        return Sym("fn", ref.name)
    if k in ("field", "gradfield"):
        return Sym("member", ref.name, ref.owner)
    if k == "builtin":
        if ref.owner is not None:  # Mlp.init
            return Sym("method", ref.name.rsplit(".", 1)[-1], ref.owner)
        return Sym("builtin", ref.name)
    return None


def _statements(stmts: Iterable[A.Stmt]) -> Iterator[A.Stmt]:
    for s in stmts:
        yield s
        if isinstance(s, A.If):
            for b in s.branches:
                yield from _statements(b.body)
            if s.orelse is not None:
                yield from _statements(s.orelse)
        elif isinstance(s, (A.For, A.While)):
            yield from _statements(s.body)


# ====================================================================== locating the cursor


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


def _fn_of(analysis: Analysis, item: A.Node) -> FnInfo | None:
    d = analysis.declared.get(item)
    return d.info if d is not None and isinstance(d.info, FnInfo) else None


def _abs(slot: ItemSlot, span: A.Span) -> A.Span:
    return A.Span(span.start + slot.start, span.end + slot.start)


# ====================================================================== hover


def hover(analysis: Analysis, offset: int) -> Hover | None:
    if not 0 <= offset <= len(analysis.text):
        return None
    found = _occ_at(analysis, offset)
    if found is not None:
        slot, occ = found
        text = _describe(analysis, slot, occ)
        if text is not None:
            return Hover(_abs(slot, occ.span), text)
    return _expression_hover(analysis, offset)


def _code(text: str) -> str:
    return f"```quiver\n{text}\n```"


def _describe(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    g = analysis.globals
    sym = occ.sym
    if sym.kind == "var":
        return _describe_var(analysis, slot, occ)
    if sym.kind == "dim":
        info = g.dims.get(sym.name)
        value = info.value if info is not None else None
        return _code(f"dim {sym.name} = {value if value is not None else '?'}")
    if sym.kind == "generic":
        return _code(f"(generic dim) {sym.name}") + f"\n\nBound to a size at each call of `{sym.scope}`."
    if sym.kind == "model":
        model = g.models.get(sym.name)
        return _describe_model(model) if model is not None else None
    if sym.kind == "member":
        return _describe_member(analysis, slot, occ)
    if sym.kind == "fn":
        info = g.fns.get(sym.name)
        return describe_fn(analysis, info) if info is not None else None
    if sym.kind == "builtin":
        return _describe_builtin(analysis, slot, occ)
    if sym.kind == "method":
        m = MODEL_METHODS.get(sym.name)
        if m is None:
            return None
        return _code(m.signature.replace("M.", f"{sym.scope}.").replace("-> M", f"-> {sym.scope}")) + f"\n\n{m.doc}"
    return None


def _describe_var(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    fn = _fn_of(analysis, slot.item)  # type: ignore[arg-type]
    body = analysis.bodies.get(slot.item)  # type: ignore[arg-type]
    ty = body.types.get(occ.node) if body is not None else None
    param = None
    if fn is not None:
        param = next((p for p in fn.params if p.name == occ.sym.name), None)
    ref = body.refs.get(occ.node) if body is not None else None
    is_param = param is not None and (ref is None or ref.kind == "param")
    if ty is None and is_param:
        ty = param.type  # type: ignore[union-attr]
    if ty is None:
        return None
    what = "param" if is_param else "local"
    mut = "mut " if is_param and param is not None and param.mut else ""
    text = _code(f"({what}) {mut}{occ.sym.name}: {ty}")
    if isinstance(ty, T.GradT):
        text += "\n\n" + _grad_fields(analysis, ty.model)
    return text


def _grad_fields(analysis: Analysis, model_name: str) -> str:
    model = analysis.globals.models.get(model_name)
    if model is None:
        return ""
    params = model.params
    if not params:
        return f"`{model_name}` has no params."
    lines = "\n".join(f"{p.name}: {p.type}" for p in params)
    return f"Fields (one per param of `{model_name}`; buffers have no gradient):\n\n" + _code(lines)


def _describe_model(model: ModelInfo) -> str:
    head = f"model {model.name}" + (f" on {model.device}" if model.device != "cpu" else "")
    lines = [head] + [f"    {f.kind} {f.name}: {f.type}" for f in model.fields]
    return _code("\n".join(lines))


def _describe_member(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    model = analysis.globals.models.get(occ.sym.scope or "")
    if model is None:
        return None
    f = model.field(occ.sym.name)
    if f is None:
        return None
    body = analysis.bodies.get(slot.item)  # type: ignore[arg-type]
    ref = body.refs.get(occ.node) if body is not None else None
    if ref is not None and ref.kind == "gradfield":
        return _code(f"(gradient) Grad[{model.name}].{f.name}: {f.type}") + \
            f"\n\nThe gradient with respect to param `{f.name}` of `{model.name}`."
    return _code(f"{f.kind} {model.name}.{f.name}: {f.type}")


def _describe_builtin(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    name = occ.sym.name
    if name in CONSTANTS:
        sig, _, doc = CONSTANTS[name].partition(" — ")
        return _code(sig) + (f"\n\n{doc[:1].upper()}{doc[1:]}" if doc else "")
    b = BUILTINS.get(name)
    if b is None:
        return None
    text = _code(b.signature) + f"\n\n{b.doc}"
    if name == "value_and_grad":
        site = _site_of_name(analysis, slot, occ.node)
        if site is not None:
            text += "\n\n" + _site_summary(analysis, site.f_name)
    return text


def _site_of_name(analysis: Analysis, slot: ItemSlot, node: A.Node):
    body = analysis.bodies.get(slot.item)  # type: ignore[arg-type]
    if body is None:
        return None
    for site in body.sites:
        if isinstance(site.call, A.Call) and site.call.func is node:
            return site
    return None


def _site_summary(analysis: Analysis, f_name: str) -> str:
    info = analysis.globals.fns.get(f_name)
    if info is None or not info.params:
        return ""
    reads = _reads_of(analysis, info)
    if not reads:
        return ""
    pr = reads[0]
    return f"Differentiates `{f_name}` with respect to `{pr.param}: {pr.model}`: {pr.describe()}."


def _reads_of(analysis: Analysis, info: FnInfo) -> list[ParamReads]:
    if info.extern or analysis.globals.fns.get(info.name) is not info:
        return []
    return param_reads(analysis.reads, info, analysis.globals)


def describe_fn(analysis: Analysis, info: FnInfo) -> str:
    """A function's signature and, for each model parameter, the params it reads."""
    text = _code(info.signature())
    for pr in _reads_of(analysis, info):
        text += "\n\n" + _reads_markdown(analysis, pr)
    return text


def _reads_markdown(analysis: Analysis, pr: ParamReads) -> str:
    out = f"**Param reads** of `{pr.param}: {pr.model}`: {pr.describe()}"
    chains = []
    if pr.everything is not None:
        chains.append(("every param", pr.everything))
    for name, chain in pr.read:
        if len(chain) > 1:
            chains.append((name, chain))
    for name, chain in chains:
        out += f"\n- `{name}`: " + " → ".join(_step_text(analysis, s) for s in chain)
    return out


def _step_text(analysis: Analysis, step: Step) -> str:
    line = _step_line(analysis, step)
    where = f" (line {line})" if line is not None else ""
    return f"`{step.text}` in `{step.fn}`{where}"


def _step_line(analysis: Analysis, step: Step) -> int | None:
    info = analysis.globals.fns.get(step.fn)
    if info is None:
        return None
    slot = analysis.slot_of_item.get(info.decl)
    if slot is None:
        return None
    return analysis.lines.position(slot.start + step.span.start).line + 1


def param_reads_report(analysis: Analysis, fn_name: str) -> str:
    """Plain text of what a function reads, with every witness chain (for a
    message window)."""
    info = analysis.globals.fns.get(fn_name)
    if info is None:
        return f"No function named {fn_name}."
    reads = _reads_of(analysis, info)
    if not reads:
        return f"{fn_name} takes no model."
    lines = []
    for pr in reads:
        lines.append(f"{fn_name}({pr.param}: {pr.model}) {pr.describe()}")
        for name, chain in pr.read:
            lines.append(f"  {name}: " + " -> ".join(_step_text(analysis, s).replace("`", "") for s in chain))
        if pr.everything is not None:
            lines.append("  every param: " + " -> ".join(_step_text(analysis, s).replace("`", "") for s in pr.everything))
    return "\n".join(lines)


# -- expressions


def _expression_hover(analysis: Analysis, offset: int) -> Hover | None:
    slot = _slot_at(analysis, offset)
    if slot is None or not isinstance(slot.item, A.FnDecl):
        return None
    body = analysis.bodies.get(slot.item)
    if body is None:
        return None
    rel = offset - slot.start
    best: A.Node | None = None
    for node in _path_to(slot.item, rel):
        if node in body.types and not isinstance(node, A.Ident):
            best = node
    if best is None:
        return None
    ty = body.types[best]
    if isinstance(ty, (T.UnknownT, T.FnRefT, T.BuiltinRefT, T.ModelClassT, T.RangeT, T.UnitT)):
        return None
    text = _code(str(ty))
    if isinstance(ty, T.GradT):
        text += "\n\n" + _grad_fields(analysis, ty.model)
    return Hover(_abs(slot, best.span), text)


def _path_to(root: A.Node, rel: int) -> list[A.Node]:
    """The nodes whose span holds `rel`, outermost first."""
    path = []
    node: A.Node | None = root
    while node is not None:
        path.append(node)
        nxt = None
        for child in node.children():
            if child.span.start <= rel < child.span.end:
                nxt = child
                break
        node = nxt
    return path


# ====================================================================== navigation


def _target(analysis: Analysis, sym: Sym) -> NavTarget | None:
    g = analysis.globals
    if sym.kind in ("dim", "model", "fn"):
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
        slot = analysis.slot_of_item[model.decl]  # type: ignore[union-attr]
        return NavTarget(_abs(slot, f.decl.span), _abs(slot, f.decl.name.span))
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
        body = analysis.bodies.get(slot.item)  # type: ignore[arg-type]
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
    if sym.kind in ("var", "generic"):
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
        if isinstance(item, A.DimDecl):
            value = info.value if isinstance(info, DimInfo) else None
            out.append(DocumentSymbol(item.name.text, "dim", f"= {value}" if value is not None else "",
                                      _abs(slot, item.span), _abs(slot, item.name.span)))
        elif isinstance(item, A.ModelDecl):
            children = []
            for m in item.members:
                ty = ""
                if isinstance(info, ModelInfo):
                    f = info.field(m.name.text)
                    ty = str(f.type) if f is not None and f.decl is m else ""
                children.append(DocumentSymbol(m.name.text, m.kind, ty, _abs(slot, m.span), _abs(slot, m.name.span)))
            out.append(DocumentSymbol(item.name.text, "model", "", _abs(slot, item.span), _abs(slot, item.name.span),
                                      tuple(children)))
        elif isinstance(item, (A.FnDecl, A.ExternDecl)):
            detail = info.signature() if isinstance(info, FnInfo) else ""
            kind = "fn" if isinstance(item, A.FnDecl) else "extern"
            out.append(DocumentSymbol(item.name.text, kind, detail, _abs(slot, item.span), _abs(slot, item.name.span)))
    return out


# ====================================================================== completion

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_AFTER_DOT = re.compile(rf"({_IDENT})\s*\.\s*({_IDENT})?$")
_AFTER_OVER = re.compile(rf"\bover\s*=\s*({_IDENT})?$")
_WORD_BEFORE = re.compile(rf"({_IDENT})?$")


def completions(analysis: Analysis, offset: int) -> list[Completion]:
    offset = max(0, min(offset, len(analysis.text)))
    pos = analysis.lines.position(offset)
    line_start = offset - pos.column
    prefix = analysis.text[line_start:offset]
    if _in_comment_or_string(prefix):
        return []
    slot = _slot_at(analysis, offset)
    fn = _fn_of(analysis, slot.item) if slot is not None and prefix[:1].isspace() else None
    m = _AFTER_DOT.search(prefix)
    if m is not None:
        return _member_completions(analysis, slot, fn, m.group(1)) if slot is not None else []
    if prefix and not prefix[0].isspace():
        # A line at column 0 starts an item, or is an item's header.
        stripped = prefix.lstrip()
        if re.fullmatch(_WORD_BEFORE.pattern, stripped):
            return [Completion(k, "keyword", sort_text="0" + k) for k in TOP_KEYWORDS]
        header_fn = _fn_of(analysis, slot.item) if slot is not None else None
        return _type_completions(analysis, prefix, header_fn)
    if _AFTER_OVER.search(prefix):
        return _dim_completions(analysis, fn)
    if slot is not None and isinstance(slot.item, A.ModelDecl):
        if re.match(r"\s*(param|buffer)\s+\w+\s*:", prefix):
            return _type_completions(analysis, prefix, None)
        if re.fullmatch(r"\s*\w*", prefix):
            return [Completion(k, "keyword", sort_text="0" + k) for k in ("param", "buffer")]
        return []
    return _scope_completions(analysis, slot, fn)


def _in_comment_or_string(prefix: str) -> bool:
    quote = None
    for ch in prefix:
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return True
    return quote is not None


def _var_type(analysis: Analysis, slot: ItemSlot | None, fn: FnInfo | None, name: str) -> T.Type | None:
    if fn is not None:
        body = analysis.bodies.get(fn.decl)
        if body is not None and name in body.locals:
            return body.locals[name]
        for p in fn.params:
            if p.name == name:
                return p.type
    return None


def _member_completions(analysis: Analysis, slot: ItemSlot, fn: FnInfo | None, receiver: str) -> list[Completion]:
    g = analysis.globals
    ty = _var_type(analysis, slot, fn, receiver)
    if ty is None and receiver in g.models:
        m = MODEL_METHODS["init"]
        return [Completion("init", "method", m.signature.replace("M.", f"{receiver}.").replace("-> M", f"-> {receiver}"),
                           m.doc)]
    if isinstance(ty, T.ModelT):
        model = g.models.get(ty.name)
        if model is None:
            return []
        return [Completion(f.name, "field", f"{f.kind} {f.name}: {f.type}", sort_text=f"{i:04d}")
                for i, f in enumerate(model.fields)]
    if isinstance(ty, T.GradT):
        model = g.models.get(ty.model)
        if model is None:
            return []
        return [Completion(f.name, "field", f"{f.name}: {f.type}", f"Gradient of param `{f.name}` of `{model.name}`.",
                           sort_text=f"{i:04d}")
                for i, f in enumerate(model.params)]
    return []


def _dim_completions(analysis: Analysis, fn: FnInfo | None) -> list[Completion]:
    out = []
    if fn is not None:
        out += [Completion(d, "generic", f"generic dim of {fn.name}", sort_text="0" + d) for d in fn.generics]
    for name, info in analysis.globals.dims.items():
        out.append(Completion(name, "dim", f"dim {name} = {info.value if info.value is not None else '?'}",
                              sort_text="1" + name))
    return out


def _type_completions(analysis: Analysis, prefix: str, fn: FnInfo | None) -> list[Completion]:
    depth = prefix.count("[") - prefix.count("]")
    if depth > 0:
        # Inside a shape: dims (generic ones are new names, so only those already used).
        out = _dim_completions(analysis, fn)
        if re.search(r"Index\s*\[\s*\w*$", prefix):
            return out
        return out
    if re.search(r"\]\s*\w*$", prefix):
        return [Completion(n, "type", "element type", sort_text="0" + n) for n in list(ELEM_TYPES) + ["Index"]]
    if not re.search(r"(:|->|\[|,)\s*\w*$", prefix):
        return []
    out = [Completion(n, "type", "number type", sort_text="1" + n) for n in NUMBER_TYPES]
    out.append(Completion("Mode", "type", "Train(seed=...) or Eval", sort_text="1Mode"))
    out.append(Completion("Grad", "type", "Grad[M]: the gradient of a model M", sort_text="1Grad"))
    out += [Completion(n, "model", "model", sort_text="0" + n) for n in analysis.globals.models]
    return out


def _scope_completions(analysis: Analysis, slot: ItemSlot | None, fn: FnInfo | None) -> list[Completion]:
    g = analysis.globals
    out: list[Completion] = []
    seen: set[str] = set()

    def add(c: Completion) -> None:
        if c.label not in seen:
            seen.add(c.label)
            out.append(c)

    if fn is not None:
        body = analysis.bodies.get(fn.decl)
        for p in fn.params:
            add(Completion(p.name, "param", f"{'mut ' if p.mut else ''}{p.name}: {p.type}", sort_text="0" + p.name))
        if body is not None:
            for name, ty in body.locals.items():
                add(Completion(name, "variable", f"{name}: {ty}", sort_text="0" + name))
        for d in fn.generics:
            add(Completion(d, "generic", f"generic dim of {fn.name}", sort_text="1" + d))
    for name, info in g.dims.items():
        add(Completion(name, "dim", f"dim {name} = {info.value if info.value is not None else '?'}", sort_text="1" + name))
    for name in g.models:
        add(Completion(name, "model", f"model {name}", sort_text="2" + name))
    for name, info in g.fns.items():
        add(Completion(name, "extern" if info.extern else "fn", info.signature(), sort_text="2" + name))
    for name, b in BUILTINS.items():
        add(Completion(name, "builtin", b.signature, b.doc, sort_text="3" + name))
    for name, doc in CONSTANTS.items():
        sig, _, rest = doc.partition(" — ")
        add(Completion(name, "constant", sig, rest, sort_text="3" + name))
    for k in STATEMENT_KEYWORDS:
        add(Completion(k, "keyword", sort_text="4" + k))
    return out


# ====================================================================== signature help


def signature_help(analysis: Analysis, offset: int) -> SignatureHelp | None:
    offset = max(0, min(offset, len(analysis.text)))
    slot = analysis.parsed.slot_at(offset)
    if slot is None:
        return None
    text = analysis.text[slot.start:offset]
    call = _open_call(text)
    if call is None:
        return None
    callee, piped, args = call
    sigs = _signatures_for(analysis, callee, args)
    if not sigs:
        return None
    index = len(args) - 1 + (1 if piped else 0)
    current = args[-1].lstrip()
    kw = re.match(rf"({_IDENT})\s*=(?!=)", current)
    chosen = 0
    if len(sigs) > 1:  # range(stop) / range(start, stop, step)
        chosen = 0 if index == 0 and len(args) == 1 else min(1, len(sigs) - 1)
    sig = sigs[chosen]
    names = [_param_name(sig.label[s:e]) for s, e in sig.parameters]
    active: int | None = index
    if kw is not None:
        active = names.index(kw.group(1)) if kw.group(1) in names else None
    elif callee not in ("print",) and index >= len(sig.parameters):
        variadic = sig.parameters and sig.label[sig.parameters[-1][0]:sig.parameters[-1][1]].endswith("...")
        active = len(sig.parameters) - 1 if variadic else None
    return SignatureHelp(tuple(sigs), chosen, active)


def _param_name(label: str) -> str:
    m = re.match(rf"(?:mut\s+)?({_IDENT})", label)
    return m.group(1) if m else label


def _open_call(text: str) -> tuple[str, bool, list[str]] | None:
    """The innermost call left open at the end of `text`: (callee, piped,
    argument texts so far). Strings and comments are skipped."""
    stack: list[int] = []  # positions of open brackets
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] not in "\r\n":
                j += 1
            if j >= n:
                return None  # inside a string
            i = j + 1
            continue
        if ch in "([":
            stack.append(i)
        elif ch in ")]":
            if stack:
                stack.pop()
        i += 1
    for pos in reversed(stack):
        if text[pos] != "(":
            continue
        m = re.search(rf"({_IDENT}(?:\s*\.\s*{_IDENT})?)\s*$", text[:pos])
        if m is None:
            return None
        callee = re.sub(r"\s+", "", m.group(1))
        before = text[:m.start()].rstrip()
        piped = before.endswith("|>")
        return callee, piped, _split_args(text[pos + 1:])
    return None


def _split_args(text: str) -> list[str]:
    args = []
    depth = 0
    current = []
    quote = None
    for ch in text:
        if quote is not None:
            current.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(current))
            current = []
            continue
        current.append(ch)
    args.append("".join(current))
    return args


def _signatures_for(analysis: Analysis, callee: str, args: list[str]) -> list[Signature]:
    g = analysis.globals
    if "." in callee:
        model, _, method = callee.partition(".")
        m = MODEL_METHODS.get(method)
        if model in g.models and m is not None:
            label = m.signature.replace("M.", f"{model}.").replace("-> M", f"-> {model}")
            return [_builtin_signature(label, m.doc)]
        return []
    if callee == "value_and_grad":
        f = args[0].strip() if args else ""
        info = g.fns.get(f)
        if len(args) > 1 and info is not None and not info.extern and info.params \
                and isinstance(info.params[0].type, T.ModelT):
            return [_vag_signature(info)]
        return [_builtin_signature(BUILTINS[callee].signature, BUILTINS[callee].doc)]
    info = g.fns.get(callee)
    if info is not None:
        return [_fn_signature(info)]
    b = BUILTINS.get(callee)
    if b is not None:
        return [_builtin_signature(label, b.doc) for label in b.signature.split(" / ")]
    return []


def _fn_signature(info: FnInfo) -> Signature:
    parts = [("mut " if p.mut else "") + f"{p.name}: {p.type}" for p in info.params]
    head = f"{info.name}("
    return _assemble(head, parts, ")" + (f" -> {info.ret}" if info.declared_ret else ""), "")


def _vag_signature(info: FnInfo) -> Signature:
    first = info.params[0]
    assert isinstance(first.type, T.ModelT)
    parts = [info.name, f"{first.name}: {first.type}"] + [f"{p.name}: {p.type}" for p in info.params[1:]]
    doc = (f"Calls `{info.name}` and returns its value and its gradient with respect to the params of "
           f"`{first.name}: {first.type}`.")
    return _assemble("value_and_grad(", parts, f") -> ({info.ret}, Grad[{first.type.name}])", doc)


def _assemble(head: str, parts: list[str], tail: str, doc: str) -> Signature:
    label = head
    spans = []
    for i, p in enumerate(parts):
        if i:
            label += ", "
        spans.append((len(label), len(label) + len(p)))
        label += p
    return Signature(label + tail, tuple(spans), doc)


def _builtin_signature(label: str, doc: str) -> Signature:
    open_ = label.find("(")
    if open_ < 0:
        return Signature(label, (), doc)
    depth = 0
    spans = []
    start = open_ + 1
    end = len(label)
    for i in range(open_, len(label)):
        ch = label[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                end = i
                break
        elif ch == "," and depth == 1:
            spans.append((start, i))
            start = i + 1
    spans.append((start, end))
    spans = [(s + (len(label[s:e]) - len(label[s:e].lstrip())), e) for s, e in spans if label[s:e].strip()]
    return Signature(label, tuple(spans), doc)


# ====================================================================== inlay hints


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


# ====================================================================== semantic tokens


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
            index.tokens = tokens
        base = slot.start
        out.extend(SemanticToken(A.Span(a + base, b + base), kind, mods) for a, b, kind, mods in index.tokens)
    return out


def _token(g, fn: FnInfo | None, o: _Occ) -> tuple[str, tuple[str, ...]] | None:
    s = o.sym
    if s.kind == "dim":
        return "typeParameter", ("readonly",)
    if s.kind == "generic":
        return "typeParameter", ()
    if s.kind == "model":
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
    if s.kind in ("builtin", "method"):
        if s.name in CONSTANTS:
            return "variable", ("readonly", "defaultLibrary")
        return "function", ("defaultLibrary",)
    return None


# ====================================================================== code lenses


def code_lenses(analysis: Analysis) -> list[CodeLens]:
    """Above each function that takes a model, what it reads; on each
    `value_and_grad` call, what the differentiated function reads; "Run"
    above `fn main()`."""
    out = []
    g = analysis.globals
    for slot in analysis.parsed.slots:
        item = slot.item
        if not isinstance(item, A.FnDecl):
            continue
        info = _fn_of(analysis, item)
        if info is None:
            continue
        if is_runnable_main(info):
            out.append(CodeLens(_abs(slot, item.name.span), "▶ Run", "quiver.runFile"))
        reads = _reads_of(analysis, info)
        for pr in reads:
            title = lens_title(analysis, pr)
            if len(reads) > 1:
                title = f"{pr.param}: {title}"
            out.append(CodeLens(_abs(slot, item.name.span), title, "quiver.showParamReads", (info.name,)))
        body = analysis.bodies.get(item)
        if body is None:
            continue
        for site in body.sites:
            f = g.fns.get(site.f_name)
            if f is None:
                continue
            site_reads = _reads_of(analysis, f)
            if not site_reads:
                continue
            title = f"{site.f_name} " + lens_title(analysis, site_reads[0])
            out.append(CodeLens(_abs(slot, site.call.span), title, "quiver.showParamReads", (site.f_name,)))
    return out


def lens_title(analysis: Analysis, pr: ParamReads) -> str:
    model = analysis.globals.models.get(pr.model)
    total = len(model.params) if model is not None else len(pr.read) + len(pr.unread)
    if pr.everything is not None:
        return f"may read every param of {pr.model}"
    text = f"reads {len(pr.read)} of {total} param{'s' if total != 1 else ''} of {pr.model}"
    if pr.unread and pr.read:
        text += " — never " + ", ".join(pr.unread)
    return text


def is_runnable_main(info: FnInfo) -> bool:
    return info.name == "main" and not info.extern and not info.params


def runnable(analysis: Analysis) -> bool:
    """Whether the document has a `fn main()` to run."""
    info = analysis.globals.fns.get("main")
    return info is not None and is_runnable_main(info)


# ====================================================================== code actions

def fixes(analysis: Analysis, d: Diagnostic) -> list[CodeAction]:
    """The mechanical fixes of one diagnostic."""
    out = []
    if d.fix is not None:
        out.append(CodeAction(d.fix.title, "quickfix", d.fix.edits, d, True))
    if d.code == "W0101":
        written = analysis.text[d.span.start:d.span.end]
        if re.fullmatch(_IDENT, written):
            out.append(CodeAction(f"Rename to '_{written}' (unused on purpose)", "quickfix",
                                  (TextEdit(A.Span(d.span.start, d.span.start), "_"),), d))
    if d.code == "W0102":
        lines = analysis.lines
        first = lines.position(d.span.start).line
        last = lines.position(d.span.end).line
        start = lines.line_starts[first]
        end = lines.line_starts[last + 1] if last + 1 < lines.line_count else len(analysis.text)
        out.append(CodeAction("Remove unreachable code", "quickfix", (TextEdit(A.Span(start, end), ""),), d))
    return out


def code_actions(analysis: Analysis, span: A.Span) -> list[CodeAction]:
    """Quick fixes for the diagnostics that touch `span`."""
    out = []
    for d in analysis.diagnostics:
        if d.span.start <= span.end and span.start <= d.span.end:
            out.extend(fixes(analysis, d))
    return out


__all__ = [
    "CodeAction", "CodeLens", "Completion", "DocumentSymbol", "Hover", "InlayHint", "NavTarget", "SemanticToken",
    "Signature", "SignatureHelp", "TOKEN_MODIFIERS", "TOKEN_TYPES", "code_actions", "code_lenses", "completions",
    "definition", "describe_fn", "document_symbols", "fixes", "highlights", "hover", "inlay_hints", "lens_title",
    "param_reads_report", "references", "runnable", "semantic_tokens", "signature_help",
]
