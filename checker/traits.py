"""Traits and functions generic over models.

`trait CharModel:` lists method signatures; it is declared as a `ModelInfo`
with `trait=True`, no fields, and its methods (`CharModel.forward`, whose
`self` is the trait), so imports, requalification and fingerprints treat it
as they treat a model. `fn loss[M: CharModel](m: M)` gives the function a
type parameter: inside it `M` is a `ModelT` named `M` whose `bound` holds the
traits, an opaque model whose methods are its traits' (`param_model`). At a
call the model given for `M` is checked against the traits (`unmet`: E0920,
E0921) and then stands for `M` in the other parameters and the result
(shapes.Bindings.models)."""

from __future__ import annotations

from . import ast as A
from . import catalog as C
from . import shapes as S
from . import types as T
from .diagnostics import LocalDiagnostic, LocalRelated, SymbolRef
from .fn_decl import Owner, declare_fn
from .infos import Declared, FnInfo, ModelInfo
from .model_decl import instance_bindings
from .names import Names
from .type_params import param_model


def declare_trait(item: A.TraitDecl, names: Names) -> Declared:
    """A trait: its methods' signatures, `self` the trait itself."""
    name = item.name.text
    owner = Owner(name, T.ModelT(name, (), (), True), ())
    methods: list[FnInfo] = []
    diags: list[LocalDiagnostic] = []
    lookups: set[str] = set()
    seen: set[str] = set()
    for fn in item.methods:
        if fn.name.text in seen:
            problem = C.E0923.say("method_twice", trait=name, method=fn.name.text)
            diags.append(C.E0923.at(fn.name.span, problem=problem))
            continue
        seen.add(fn.name.text)
        d = declare_fn(fn, names, owner)
        if isinstance(d.info, FnInfo):
            methods.append(d.info)
        diags.extend(d.diagnostics)
        lookups |= d.lookups
    decl = A.ModelDecl(item.span, item.name, None, (), (), item.methods)
    info = ModelInfo(name, "cpu", (), decl, False, methods=tuple(methods), trait=True)
    return Declared(info, tuple(diags), frozenset(lookups))


def unmet(g, traits: tuple[str, ...], given: T.Type, param: str, span: A.Span) -> LocalDiagnostic | None:
    """Whether the model `given` has what `traits` require: None when it
    does (or is unknown), else the one diagnostic (E0920, E0921) at `span`.
    A type parameter satisfies the traits its own bound implies."""
    if isinstance(given, (T.GradT, T.OptimT)):
        given = given.of
    if not isinstance(given, T.ModelT):
        return None  # a value of another kind: the argument's mismatch says so
    if given.bound:
        missing = [t for t in traits if t not in given.bound]
        if not missing:
            return None
        have = param_model(g.models, given)
        model_info = have
    else:
        model_info = g.model(given)
    if model_info is None or model_info.trait and not given.bound:
        return None
    for trait_name in traits:
        trait = g.models.get(trait_name)
        if trait is None:
            continue
        for wanted in trait.methods:
            short = wanted.name.rpartition(".")[2]
            found = model_info.method(short)
            if found is None:
                return C.E0920.at(
                    span,
                    model=str(given),
                    method=short,
                    trait=trait_name,
                    param=param,
                    related=(LocalRelated(f"{trait_name}.{short} is declared here", symbol=_fn_ref(wanted)),),
                )
            if found is wanted:
                continue
            if not _fits(g, given, model_info, found, wanted):
                return C.E0921.at(
                    span,
                    model=str(given),
                    method=short,
                    trait=trait_name,
                    found=_shown(found, short),
                    wanted=_shown(wanted, short),
                    related=(LocalRelated(f"{trait_name}.{short} is declared here", symbol=_fn_ref(wanted)),),
                )
    return None


def _fn_ref(info: FnInfo) -> SymbolRef:
    return SymbolRef(("fn", info.name))


def _shown(info: FnInfo, short: str) -> str:
    sig = info.signature()
    return sig.replace(f"fn {info.name}(", f"fn {short}(", 1)


def _fits(g, given: T.ModelT, model_info: ModelInfo, found: FnInfo, wanted: FnInfo) -> bool:
    """Whether method `found` of the model fits the trait's `wanted`: called
    with arguments of the trait's parameter types (the trait's own generic
    dims standing for any dims), it binds its own generic dims and returns
    what the trait's result accepts (`[.. I] -> [.. O]` of `nn.Linear[E, E]`
    fits `[b E] -> [b E]`)."""
    if len(found.params) != len(wanted.params):
        return False
    if found.params[0].mut and not wanted.params[0].mut:
        return False  # it changes the model where the trait's callers may hold it immutable
    if any(a.mut != b.mut for a, b in zip(found.params[1:], wanted.params[1:])):
        return False
    if any(b.optional and not a.optional for a, b in zip(found.params[1:], wanted.params[1:])):
        return False  # a call may leave out what the trait gives a default: the model's method needs one too
    call = _instance_bindings(g, given, model_info)
    call.generics = set(found.generics)
    trait = _renamed(list(wanted.generics), S.Bindings(()))
    for a, b in zip(found.params[1:], wanted.params[1:]):
        if S.match(a.type, trait.subst(b.type), call, a.name, None) is not None:
            return False
    return S.assignable(trait.subst(wanted.ret), call.result(found.ret)) is None


def _instance_bindings(g, given: T.ModelT, model_info: ModelInfo) -> S.Bindings:
    decl = model_info.generic or model_info
    if given.bound or not decl.takes:
        return S.Bindings(())
    return instance_bindings(decl, given)


def _renamed(generics: list[str], base: S.Bindings) -> S.Bindings:
    """`base` with each of `generics` bound to a canonical name by its order
    (`b t` and `n s` both to `_0 _1`)."""
    out = base.copy()
    for i, d in enumerate(generics):
        out.bound[d] = S.Binding(T.DimVar(f"_{i}"), d, None)
    return out
