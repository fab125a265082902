"""The global scope: what each top-level item declares, with resolved types.

The stages live in their own modules: names.py (names and kinds), typectx.py
(written types), model_decl.py (a model's members and initializers),
infos.py (the declared data); this module declares dims and functions,
dispatches each item, and holds the global scope (`Globals`).

Building it is split in two so edits stay cheap: `collect_names` (modules.py) reads only the
names and kinds of the items (and the values of dims); `declare_item` resolves
one item's signature or fields against those names and is cached per item and
per "naming environment" (dim values and model names), the only things a
signature's meaning depends on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A
from . import catalog as C
from . import types as T
from .aliases import declare_alias
from .diagnostics import LocalDiagnostic, SymbolRef
from .fn_decl import declare_const, declare_fn
from .infos import Declared, DimInfo, FieldInfo, FnInfo, ModelInfo, ParamInfo
from .model_decl import DEVICES, RESERVED_FIELDS, declare_model, instance
from .model_lists import is_model_list, list_models
from .names import (
    ALL_NAMES,
    Hint,
    Names,
    _dim_decl_eval,
    dim_decl_value,
    dotted_text,
    item_kind,
    item_name,
    kind_word,
    suggest,
)
from .traits import declare_trait
from .type_params import param_model
from .typectx import ELEM_TYPES, NUMBER_TYPES, TypeContext, dim_text, type_text, written_dim

# Re-exported: most of the checker reads the global scope through this module.
__all__ = [
    "ALL_NAMES",
    "DEVICES",
    "ELEM_TYPES",
    "NUMBER_TYPES",
    "RESERVED_FIELDS",
    "Declared",
    "DimInfo",
    "FieldInfo",
    "FnInfo",
    "Globals",
    "Hint",
    "ModelInfo",
    "Names",
    "ParamInfo",
    "TypeContext",
    "declare_item",
    "dim_decl_value",
    "dim_text",
    "dotted_text",
    "item_kind",
    "item_name",
    "kind_word",
    "leaf_params",
    "is_model_list",
    "sub_models",
    "model_closure",
    "model_cycles",
    "sub_model",
    "suggest",
    "type_text",
    "written_dim",
]


# ------------------------------------------------------------------ per-item declarations


def declare_item(item: A.Item, names: Names, partial: bool = False) -> Declared:
    if isinstance(item, A.DimDecl):
        return _declare_dim(item, names)
    if isinstance(item, A.ConstDecl):
        return declare_const(item, names)
    if isinstance(item, A.TypeAlias):
        return declare_alias(item, names)
    if isinstance(item, A.ModelDecl):
        return declare_model(item, names, partial)
    if isinstance(item, (A.FnDecl, A.ExternDecl)):
        return declare_fn(item, names)
    if isinstance(item, A.TraitDecl):
        return declare_trait(item, names)
    return Declared(None, ())


def _declare_dim(item: A.DimDecl, names: Names) -> Declared:
    value, why, refs = _dim_decl_eval(item.value, names, frozenset({item.name.text}))
    diags = []
    if why == "":
        pass  # its cause is reported elsewhere
    elif why is not None:
        diags.append(C.E0212.at(item.value.span, expr=_literal_text(item.value), reason=why))
    elif value is None or value <= 0:
        shown = _literal_text(item.value) if value is None else str(value)
        diags.append(C.E0208.at(item.value.span, value=shown))
        value = None
    # Its value depends on the dims it names: they are its lookups.
    return Declared(DimInfo(item.name.text, value, item), tuple(diags), frozenset(refs))


def _literal_text(e: A.Expr, parent: int = 0, right: bool = False) -> str:
    """A `dim` declaration's value as written, with the parentheses its
    operators need: `(E - K) / NH`, not `E - K / NH`."""
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return e.op + str(e.operand.value)
    if isinstance(e, A.FloatLit):
        return str(e.value)
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Binary):
        prec = A.PRECEDENCE.get(e.op, 2)
        power = e.op == "**"  # `**` groups from the right
        text = f"{_literal_text(e.left, prec, power)} {e.op} {_literal_text(e.right, prec, not power)}"
        return f"({text})" if prec < parent or (prec == parent and right) else text
    return "this expression"


@dataclass
class Globals:
    names: Names
    dims: dict[str, DimInfo]
    models: dict[str, ModelInfo]
    fns: dict[str, FnInfo]
    # what each type parameter's traits make of it (param_model), by its traits
    _params: dict = field(default_factory=dict, repr=False, compare=False)

    def model(self, t: T.ModelT | T.GradT | T.OptimT | str | None) -> ModelInfo | None:
        """The model a type is of, with its dims and options applied (an
        instance, `Linear[D, H]`); for a name, its declaration."""
        if t is None:
            return None
        if isinstance(t, str):
            return self.models.get(t)
        if isinstance(t, (T.GradT, T.OptimT)):
            t = t.of
        if t.bound:  # a type parameter (`M` of `fn f[M: CharModel]`): its traits' methods
            hit = self._params.get(t.bound)
            if hit is None or hit[0] != t.name:
                hit = self._params[t.bound] = (t.name, param_model(self.models, t))
            return hit[1]
        info = self.models.get(t.name)
        if info is None or not info.takes:
            return info
        return instance(info, t)

    def fingerprint(self, name: str) -> object:
        """A value that changes exactly when what `name` means to a user of it
        changes (not when its body or position does)."""
        if name == ALL_NAMES:
            return self.names.meaning(name)
        kind = self.names.kind(name)
        if kind is None:
            return None
        alias = self.names.aliases.get(name)
        if kind == "dim":
            return ("dim", self.names.dim_values.get(name), alias)
        if kind == "const":
            return ("const", self.names.const_values.get(name), alias)
        # (a declaration that failed inside the checker has no info: its
        # error is recorded, and the name means nothing more)
        if kind in ("model", "trait"):
            model = self.models.get(name)
            return (model.interface if model is not None else None, alias)
        if kind in ("fn", "extern"):
            fn = self.fns.get(name)
            return (fn.interface if fn is not None else None, alias)
        if kind == "alias":  # what it stands for
            return ("alias", self.names.alias_sigs.get(self.names.canonical(name)), alias)
        return (kind, alias)

    def symbol_span(self, ref: SymbolRef) -> tuple[A.Item, A.Span] | None:
        """The declaration a symbolic reference names: (item, span in item)."""
        path = ref.path
        if path[0] == "fn" and len(path) == 2 and path[1] not in self.names.first:
            method = self.fns.get(path[1])  # a method (`CharModel.forward`): in its model's or trait's item
            owner = self.names.first.get(method.owner) if method is not None and method.owner is not None else None
            if owner is not None and method is not None and method.decl in getattr(owner, "methods", ()):
                return (owner, method.decl.name.span)
        if path[0] in ("dim", "const", "model", "fn", "extern") and len(path) == 2:
            item = self.names.first.get(path[1])
            if item is None:
                return None
            ident = item_name(item)
            return (item, ident.span) if ident is not None else None
        if path[0] == "member" and len(path) == 3:
            model = self.models.get(path[1])
            f = model.field(path[2]) if model is not None else None
            return (model.decl, f.decl.name.span) if model is not None and f is not None else None
        if path[0] == "param" and len(path) == 3:
            fn = self.fns.get(path[1])
            if fn is None:
                return None
            for p in fn.params:
                if p.name == path[2]:
                    return (fn.decl, p.decl.span)
        if path[0] == "ret" and len(path) == 2:
            fn = self.fns.get(path[1])
            if fn is not None and fn.decl.ret is not None:
                return (fn.decl, fn.decl.ret.span)
        return None


def sub_model(t: T.Type) -> T.ModelT | None:
    """The model of a sub-model field's type (`Encoder`, `[L] Block`, `Linear[D, H]`)."""
    if isinstance(t, T.ModelT):
        return t
    if isinstance(t, T.StackT) and isinstance(t.item, T.ModelT):
        return t.item
    return None


def sub_models(t: T.Type) -> tuple[T.ModelT, ...]:
    """The models of a sub-model field's type: one (`Encoder`, `[L] Block`),
    or each element of a list (`(Layer[784, 500], Layer[500, 500])`)."""
    if is_model_list(t):
        return list_models(t)
    one = sub_model(t)
    return () if one is None else (one,)


def leaf_params(
    glob: Globals, model: T.ModelT | str, _seen: frozenset[str] = frozenset()
) -> list[tuple[str, str, FieldInfo]]:
    """Every tensor param of a model, sub-models' included, as (path, the
    model declaring it, field) in declaration order: `w`, `enc.w1`,
    `blocks.wq` (one path for all the blocks of a stack: the checker does not
    tell them apart). Of an instance, the params it has (`Linear[D, H,
    bias=False]` has no `b`)."""
    info = glob.model(model)
    name = model if isinstance(model, str) else model.name
    if info is None or name in _seen:
        return []
    out: list[tuple[str, str, FieldInfo]] = []
    for f in info.params:
        if is_model_list(f.type):  # layers.0.w, layers.1.w: each element its own
            for k, one in enumerate(sub_models(f.type)):
                out.extend((f"{f.name}.{k}.{p}", m, x) for p, m, x in leaf_params(glob, one, _seen | {name}))
            continue
        sub = sub_model(f.type)
        if sub is None:
            out.append((f.name, name, f))
        else:
            out.extend((f"{f.name}.{p}", m, x) for p, m, x in leaf_params(glob, sub, _seen | {name}))
    return out


def model_closure(glob: Globals, model: T.ModelT | str) -> list[T.ModelT | str]:
    """`model` and every model inside it (sub-models, theirs...), each once."""
    out: list[T.ModelT | str] = [model]
    i = 0
    while i < len(out):
        info = glob.model(out[i])
        i += 1
        for f in info.params if info is not None else ():
            for sub in sub_models(f.type):
                if sub not in out:
                    out.append(sub)
    return out


def model_cycles(glob: Globals) -> dict[str, list[LocalDiagnostic]]:
    """E0909 for each sub-model field through which a model contains itself,
    keyed by model name (reported in that model's item)."""
    out: dict[str, list[LocalDiagnostic]] = {}
    for name, info in glob.models.items():
        if name not in glob.names.first:
            continue  # an imported model: its own file reports its cycles
        for f in info.params:
            for t in sub_models(f.type):
                sub = t.name
                path = _path_to(glob, sub, name, {sub})
                if path is not None:
                    chain = " -> ".join([name, *path])
                    out.setdefault(name, []).append(C.E0909.at(f.decl.type.span, model=name, chain=chain))
                    break
    return out


def _path_to(glob: Globals, start: str, goal: str, seen: set[str]) -> list[str] | None:
    if start == goal:
        return [start]
    info = glob.models.get(start)
    if info is None:
        return None
    for f in info.params:
        for t in sub_models(f.type):
            sub = t.name
            if sub not in seen:
                seen.add(sub)
                rest = _path_to(glob, sub, goal, seen)
                if rest is not None:
                    return [start, *rest]
    return None
