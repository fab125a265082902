"""What a module gives the files that import it.

Inside its own file a definition has its plain name (`Mlp`). Every importer
sees it under its qualified name (`layers.Mlp`, the module's name and the
definition's), whatever it was imported as: `from layers import Mlp as Net`
makes `Net` a local alias of `layers.Mlp`, and types always carry the
qualified name. So one model is one type in every file of a program, and two
models called `Mlp` in two modules are two types.

`build_exports` turns a module's analysis into `ModuleExports`: its
definitions with their types rewritten to qualified names, the same for the
modules it imports in turn (their types can appear in its signatures), and
the param-read summaries of its functions (for E1107/W1101 in importers).
A module's private names (`_helper`) are exported too, since a public
signature may mention them, but an importer cannot name them.

`collect_names` builds a file's `Names` (names.py): its own definitions,
then what its imports bind (`bind_imports`), then its dims' and constants'
values. It is here, not in names.py, because binding reads the exports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import TYPE_CHECKING, cast

from . import ast as A
from . import catalog as C
from . import types as T
from .aliases import resolve_aliases
from .declarations import DimInfo, FnInfo, ModelInfo, Names, ParamInfo, suggest
from .diagnostics import LocalDiagnostic, LocalRelated, SymbolRef
from .names import ModelSig, const_decl_value, dim_decl_value, item_kind, item_name, kind_word, model_sig

if TYPE_CHECKING:
    from .analysis import Analysis
    from .reads import Summary


@dataclass(frozen=True)
class ImportProblem:
    """Why an import has no module: `missing` (detail: the folders searched),
    `cycle` (detail: the modules along the cycle, first repeated last),
    `unreadable` (detail: the path, and why it cannot be read when known)."""

    kind: str
    detail: tuple[str, ...]
    # for `missing`: the modules that could be meant (found in the folders searched)
    nearby: tuple[str, ...] = ()


@dataclass(eq=False)
class ModuleExports:
    qual: str  # the module's qualified name: `nn.layers`
    path: str
    analysis: Analysis  # the latest analysis these exports stand for
    own: dict[str, str]  # the module's own definitions: plain name -> kind
    kinds: dict[str, str]  # qualified name -> kind, for its own and its imports' definitions
    dim_values: dict[str, int | None]
    dims: dict[str, DimInfo]
    models: dict[str, ModelInfo]
    fns: dict[str, FnInfo]
    summaries: dict[tuple[str, str], Summary]  # (qualified fn, param) -> what it reads
    origin: dict[str, str]  # qualified name -> the path of the file defining it
    interface: tuple = field(repr=False, default=())
    # What each requalified entry was made from (a declaration's info, a read
    # summary), so the next build reuses an entry whose source is the same
    # object: an edit inside a body rewrites one function, not the module.
    sources: dict = field(repr=False, default_factory=dict)
    # its constants' kinds and values (Names.const_values), by qualified name
    const_values: dict = field(default_factory=dict)
    # what its type aliases stand for (Names.alias_sigs), by qualified name
    alias_sigs: dict = field(default_factory=dict)

    def qualified(self, name: str) -> str:
        return f"{self.qual}.{name}"


Resolved = ModuleExports | ImportProblem


def build_exports(qual: str, path: str, analysis: Analysis, old: ModuleExports | None = None) -> ModuleExports:
    """The exports of a module from its analysis; `old` itself (updated to
    point at the new analysis) when nothing an importer can see changed."""
    glob = analysis.globals
    names = glob.names
    own = {n: k for n, k in names.kinds.items() if n in names.first}
    rename = {n: f"{qual}.{n}" for n in own}
    for n in own:  # a model's methods: `Linear.forward` -> `nn.Linear.forward`
        model = glob.models.get(n) if n in glob.models else None
        for m in model.methods if model is not None else ():
            rename[m.name] = f"{qual}.{m.name}"
    requalify = Requalifier(rename)
    # An entry depends on its source object and on the renaming (the module's
    # name and its own names): with those the same, the old entry stands.
    same_names = old is not None and old.qual == qual and old.own.keys() == own.keys()
    before = old.sources if old is not None and same_names else {}
    sources: dict = {}
    kinds: dict[str, str] = {}
    dim_values: dict[str, int | None] = {}
    const_values: dict = {}
    alias_sigs: dict = {}
    dims: dict[str, DimInfo] = {}
    models: dict[str, ModelInfo] = {}
    fns: dict[str, FnInfo] = {}
    origin: dict[str, str] = {}
    for n, kind in own.items():
        q = rename[n]
        kinds[q] = kind
        origin[q] = path
        if n in names.dim_values:
            dim_values[q] = names.dim_values[n]
        if n in names.const_values:
            const_values[q] = names.const_values[n]
        if n in names.alias_sigs:
            sig = names.alias_sigs[n]
            alias_sigs[q] = replace(sig, type=requalify.type(sig.type), cycle=())
        if n in glob.dims:
            dims[q] = replace(glob.dims[n], name=q)
        elif n in glob.models:
            info = sources[q] = glob.models[n]
            models[q] = old.models[q] if before.get(q) is info else requalify.model(info)  # type: ignore[union-attr]
        elif n in glob.fns:
            info = sources[q] = glob.fns[n]
            fns[q] = old.fns[q] if before.get(q) is info else requalify.fn(info)  # type: ignore[union-attr]
    # What the module imported, under the names it already had there.
    for q, kind in names.imported.items():
        kinds[q] = kind
        origin[q] = names.origin.get(q, path)
        if q in names.dim_values:
            dim_values[q] = names.dim_values[q]
        if q in names.const_values:
            const_values[q] = names.const_values[q]
        if q in names.alias_sigs:
            alias_sigs[q] = names.alias_sigs[q]
        if q in glob.dims:
            dims[q] = glob.dims[q]
        elif q in glob.models:
            models[q] = glob.models[q]
        elif q in glob.fns:
            fns[q] = glob.fns[q]
    summaries: dict[tuple[str, str], Summary] = dict(analysis.reads.external)
    for (fn, param), s in analysis.reads.summaries.items():
        if fn in rename:
            key = (rename[fn], param)
            sources[key] = s
            summaries[key] = (
                old.summaries[key]  # type: ignore[union-attr]
                if before.get(key) is s
                else s.requalified(rename[fn], rename.get(s.model, s.model))
            )
    interface = (
        tuple(sorted(kinds.items())),
        tuple(sorted(dim_values.items())),
        tuple(sorted(const_values.items())),
        tuple((q, i.interface) for q, i in sorted(models.items())),
        tuple((q, i.interface) for q, i in sorted(fns.items())),
        tuple((k, s.key()) for k, s in sorted(summaries.items())),
        tuple(sorted(origin.items())),
        tuple(sorted(alias_sigs.items(), key=lambda kv: kv[0])),
    )
    if old is not None and old.interface == interface and old.qual == qual:
        old.analysis = analysis
        old.sources = sources
        return old
    return ModuleExports(
        qual,
        path,
        analysis,
        own,
        kinds,
        dim_values,
        dims,
        models,
        fns,
        summaries,
        origin,
        interface,
        sources,
        const_values,
        alias_sigs,
    )


# The fields of checker/types values that hold a global name.
_NAME_FIELDS = {
    (T.ModelT, "name"),
    (T.GradT, "model"),
    (T.OptimT, "model"),
    (T.FnRefT, "name"),
    (T.ModelClassT, "name"),
    (T.DimConst, "name"),
    (T.ModelArg, "name"),  # `ResNet[BasicBlock]`'s block (not a passed-on parameter, which has a bound)
}


class Requalifier:
    """Rewrites the global names inside types (`Mlp` -> `layers.Mlp`)."""

    def __init__(self, rename: dict[str, str]) -> None:
        self.rename = rename
        self._memo: dict[int, tuple[object, object]] = {}

    def value(self, x):
        if isinstance(x, tuple):
            items = tuple(self.value(i) for i in x)
            return x if all(a is b for a, b in zip(items, x, strict=True)) else items
        if not is_dataclass(x) or isinstance(x, type) or type(x).__module__ != T.__name__:
            return x
        hit = self._memo.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        changes = {}
        cls = type(x)
        for f in fields(x):
            if not f.init:
                continue
            v = getattr(x, f.name)
            if f.name == "bound" and v:  # a type parameter: its traits are global names, its own name is not
                nv = tuple(self.rename.get(b, b) for b in v)
                nv = v if nv == v else nv
            elif isinstance(v, str):
                renamed = (cls, f.name) in _NAME_FIELDS and not getattr(x, "bound", ())
                nv = self.rename.get(v, v) if renamed else v
            else:
                nv = self.value(v)
            if nv is not v:
                changes[f.name] = nv
        out = replace(x, **changes) if changes else x
        self._memo[id(x)] = (x, out)
        return out

    def type(self, t: T.Type) -> T.Type:
        return cast(T.Type, self.value(t))

    def model(self, info: ModelInfo) -> ModelInfo:
        fields_ = tuple(replace(f, type=self.type(f.type)) for f in info.fields)
        return replace(
            info,
            name=self.rename.get(info.name, info.name),
            fields=fields_,
            methods=tuple(self.fn(m) for m in info.methods),
            instances={},
            model_params=tuple((n, tuple(self.rename.get(b, b) for b in bs)) for n, bs in info.model_params),
        )

    def fn(self, info: FnInfo) -> FnInfo:
        params = tuple(ParamInfo(p.name, p.mut, self.type(p.type), p.decl, p.default) for p in info.params)
        return FnInfo(
            self.rename.get(info.name, info.name),
            params,
            self.type(info.ret),
            info.declared_ret,
            info.generics,
            info.extern,
            info.target,
            info.decl,
            info.unbound,
            self.rename.get(info.owner, info.owner) if info.owner is not None else None,
            info.owner_options,
            tuple((n, tuple(self.rename.get(b, b) for b in bs)) for n, bs in info.type_params),
        )


# ------------------------------------------------------------------ binding imports in a file


def collect_names(items: list[A.Item], imports=None) -> Names:
    """The file's names: its own definitions, then what its imports bind
    (`imports`: module name -> `Resolved`), then the dims' values
    (a dim may be defined from an imported one)."""
    names = Names()
    dims: list[A.DimDecl] = []
    for item in items:
        ident = item_name(item)
        if ident is None or ident.text in names.kinds:
            continue
        names.kinds[ident.text] = item_kind(item)
        names.first[ident.text] = item
        if isinstance(item, A.DimDecl):
            dims.append(item)
        elif isinstance(item, (A.ModelDecl, A.TraitDecl)) and item.params:
            names.model_sigs[ident.text] = model_sig(item)
    names.exports = bind_imports(names, items, imports or {})
    # Values after all names are known: `dim HD = E / NH` may come before E.
    for item in dims:
        dim_decl_value(item, names)
    for item in items:
        if isinstance(item, A.ConstDecl) and names.first.get(item.name.text) is item:
            const_decl_value(item, names)
    resolve_aliases(items, names)  # after the values: an alias's type may be sized by dims
    return names


def bind_imports(names: Names, items: list, env: Mapping[str, Resolved]) -> list[ModuleExports]:
    """Add what the file's import items bind to `names` (after its own
    definitions, so a clash is reported at the import), with each import
    item's diagnostics in `names.import_diagnostics`. Returns the modules
    imported (each once)."""
    modules: list[ModuleExports] = []
    for item in items:
        if not isinstance(item, (A.ImportDecl, A.FromImport)):
            continue
        diags = names.import_diagnostics.setdefault(item, [])
        spelling = item.module.text
        resolved = env.get(spelling)
        ex = resolved if isinstance(resolved, ModuleExports) else None
        if ex is None:
            diags.append(_problem_diagnostic(item.module, resolved, env))
        elif all(m is not ex for m in modules):
            modules.append(ex)
            for q, kind in ex.kinds.items():
                names.imported[q] = kind
                names.origin[q] = ex.origin.get(q, ex.path)
                if q in ex.dim_values:
                    names.dim_values[q] = ex.dim_values[q]
                if q in ex.const_values:
                    names.const_values[q] = ex.const_values[q]
                if q in ex.alias_sigs:
                    names.alias_sigs[q] = ex.alias_sigs[q]
            for q, model in ex.models.items():
                if model.takes:
                    names.model_sigs[q] = ModelSig(
                        model.dims, model.options, model.defaults, model.divisions, model.model_params
                    )
        if isinstance(item, A.ImportDecl):
            if not _bind(names, spelling, "module" if ex is not None else "broken-module", item.module, diags):
                continue
            if ex is None:
                continue
            names.modules[spelling] = ex.qual
            names.aliases[spelling] = ex.qual
            # `nn` of `import nn.layers`, so that `nn.layers.f` can be written
            head = spelling.split(".")[0]
            if head != spelling and head not in names.kinds:
                names.kinds[head] = "package"
            for n, kind in ex.own.items():
                if n.startswith("_"):
                    continue
                written = f"{spelling}.{n}"
                names.kinds[written] = kind
                names.aliases[written] = ex.qualified(n)
                if ex.qualified(n) in ex.dim_values:
                    names.dim_values[written] = ex.dim_values[ex.qualified(n)]
                if ex.qualified(n) in ex.const_values:
                    names.const_values[written] = ex.const_values[ex.qualified(n)]
            continue
        for imp in item.names:
            n = imp.name.text
            bound = imp.bound
            kind = None
            if ex is not None:
                if n not in ex.own:
                    public = [x for x in ex.own if not x.startswith("_")]
                    diags.append(C.E0115.at(imp.name.span, module=spelling, name=n, hint=suggest(n, public)))
                elif n.startswith("_"):
                    diags.append(C.E0116.at(imp.name.span, name=n, module=spelling))
                else:
                    kind = ex.own[n]
            if not _bind(names, bound.text, kind if kind is not None else "broken-import", bound, diags):
                continue
            if kind is not None and ex is not None:
                q = ex.qualified(n)
                names.aliases[bound.text] = q
                if q in ex.dim_values:
                    names.dim_values[bound.text] = ex.dim_values[q]
                if q in ex.const_values:
                    names.const_values[bound.text] = ex.const_values[q]
    return modules


def _bind(names: Names, name: str, kind: str, at: A.Ident, diags: list[LocalDiagnostic]) -> bool:
    old = names.kinds.get(name)
    if old is None:
        names.kinds[name] = kind
        return True
    if old.startswith("broken-") and kind.startswith("broken-"):
        return False  # both already reported
    if name in names.first:
        what = f"defined in this file as {kind_word(old.removeprefix('broken-'))}"
        ref = SymbolRef((old.removeprefix("broken-"), name))
        related = (LocalRelated(f"'{name}' is defined here", symbol=ref),)
    else:
        what = "imported above"
        related = ()
    diags.append(C.E0117.at(at.span, name=name, what=what, related=related))
    return False


def _problem_diagnostic(module: A.Ident, resolved: Resolved | None, env: Mapping[str, Resolved]) -> LocalDiagnostic:
    if isinstance(resolved, ImportProblem) and resolved.kind == "cycle":
        return C.E0114.at(module.span, cycle=" -> ".join(resolved.detail))
    where = ""
    if isinstance(resolved, ImportProblem) and resolved.kind == "missing" and resolved.detail:
        tail = module.text.replace(".", "/") + ".qv"
        where = C.E0113.say("not_in_folders", path=tail, folders=", ".join(resolved.detail))
    elif isinstance(resolved, ImportProblem) and resolved.kind == "unreadable":
        target, *why = resolved.detail
        where = (
            C.E0113.say("unreadable_because", target=target, why=why[0])
            if why
            else C.E0113.say("unreadable", target=target)
        )
        # The module is there, only not usable: a suggestion would name it again.
        return C.E0113.at(module.span, module=module.text, where=where, hint="")
    found = [s for s, r in env.items() if isinstance(r, ModuleExports)]
    if isinstance(resolved, ImportProblem):
        found += [m for m in resolved.nearby if m not in found and m != module.text]
    return C.E0113.at(module.span, module=module.text, where=where, hint=suggest(module.text, found))
