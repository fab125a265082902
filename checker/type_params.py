"""Type parameters of functions generic over models (`fn f[M: A + B]`):
reading them from a signature (`read_type_params`, which puts them in a
`TypeContext`) and what one stands for inside the function (`param_model`:
an opaque model with its traits' methods). checker/traits.py declares the
traits and checks a model given for one at a call."""

from __future__ import annotations

from . import ast as A
from . import catalog as C
from . import types as T
from .infos import FnInfo, ModelInfo
from .names import kind_word, suggest
from .typectx import TypeContext


def read_type_params(item: A.FnDecl, ctx: TypeContext, method: bool) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The type parameters of `fn f[M: A + B]`, each with its traits'
    qualified names (none when a bound is wrong, reported here: its
    parameters' types are then unknown, silent downstream). They are put in
    `ctx`, so the signature's `M`, `Grad[M]` and `AdamW[M]` read them."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for tp in item.type_params:
        name = tp.name.text
        if method:
            ctx.diagnostics.append(C.E0923.at(tp.span, problem=C.E0923.say("in_method")))
            ctx.type_params[name] = T.UNKNOWN
            continue
        if name in ctx.type_params:
            ctx.diagnostics.append(C.E0923.at(tp.name.span, problem=C.E0923.say("param_twice", param=name)))
            continue
        ctx.lookups.add(name)  # whether it shadows a global: a fact of the names (incremental keys)
        shadowed = ctx.names.kinds.get(name)
        if shadowed is not None:
            problem = C.E0923.say("param_shadows", param=name, kind=kind_word(shadowed).split(" ", 1)[-1])
            ctx.diagnostics.append(C.E0923.at(tp.name.span, problem=problem))
            ctx.type_params[name] = T.UNKNOWN
            continue
        bounds: list[str] = []
        ok = True
        if tp.minus is not None:
            ctx.diagnostics.append(C.E0923.at(tp.minus, problem=C.E0923.say("minus")))
            ok = False
        for b in tp.bounds:
            kind = ctx.kind(b.text, b.span)
            if kind == "trait":
                bounds.append(ctx.canon(b.text))
                continue
            ok = False
            if kind is not None and kind.startswith("broken"):
                continue  # reported where it is
            if kind is None:
                hint = suggest(b.text, ctx.all_of("trait"))
                problem = C.E0923.say("unknown_trait", param=name, name=b.text, hint=hint)
            else:
                problem = C.E0923.say("not_a_trait", param=name, name=b.text, kind=kind_word(kind))
            ctx.diagnostics.append(C.E0923.at(b.span, problem=problem))
        if ok and bounds:
            ctx.type_params[name] = T.ModelT(name, bound=tuple(dict.fromkeys(bounds)))
            out.append((name, tuple(dict.fromkeys(bounds))))
        else:
            ctx.type_params[name] = T.UNKNOWN
            out.append((name, ()))
    return tuple(out)


def param_types(type_params: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, T.Type]:
    """What each type parameter's name means in the body's written types."""
    return {n: (T.ModelT(n, bound=b) if b else T.UNKNOWN) for n, b in type_params}


def bound_of(t: T.Type) -> tuple[str, ...]:
    """The traits of a type parameter's model (`M`, `Grad[M]`, `AdamW[M]`); () for any other type."""
    return t.bound if isinstance(t, (T.ModelT, T.GradT, T.OptimT)) else ()


def param_model(models: dict[str, ModelInfo], t: T.ModelT) -> ModelInfo | None:
    """The opaque model a type parameter stands for: no fields, and the
    methods of its traits (the first of a name where two declare it)."""
    traits = [models.get(b) for b in t.bound]
    if any(x is None or not x.trait for x in traits):
        return None
    methods: dict[str, FnInfo] = {}
    for tr in traits:
        assert tr is not None
        for m in tr.methods:
            methods.setdefault(m.name.rpartition(".")[2], m)
    first = traits[0]
    assert first is not None
    return ModelInfo(t.name, "cpu", (), first.decl, False, methods=tuple(methods.values()), trait=True)


def method_names(info: ModelInfo) -> str:
    names = [m.name.rpartition(".")[2] for m in info.methods]
    return ", ".join(names) if names else "no method"


def unbound_type_params(item: A.FnDecl, type_params, param_types: list[T.Type], ctx: TypeContext) -> None:
    """E0923 for a type parameter that no parameter's type holds (`m: M`,
    `g: Grad[M]`, `opt: AdamW[M]`): a call could not bind it. (Not after a
    parameter's type failed: it may have been the one, `m: M[3]`.)"""
    if any(isinstance(t, T.UnknownT) for t in param_types):
        return
    for tp in item.type_params:
        bounds = dict(type_params).get(tp.name.text)
        if not bounds:
            continue
        if not any(bound_of(t) and _model_name(t) == tp.name.text for t in param_types):
            problem = C.E0923.say("not_in_params", param=tp.name.text, fn=item.name.text)
            ctx.diagnostics.append(C.E0923.at(tp.name.span, problem=problem))


def _model_name(t: T.Type) -> str:
    return t.name if isinstance(t, T.ModelT) else t.model if isinstance(t, (T.GradT, T.OptimT)) else ""
