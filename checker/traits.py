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
from .model_decl import instance_bindings, read_header
from .model_params import Obligation
from .names import Names
from .type_params import param_model
from .typectx import TypeContext


def declare_trait(item: A.TraitDecl, names: Names) -> Declared:
    """A trait: its methods' signatures, `self` the trait itself; with
    dims (`trait ResBlock[Ci, Co, stride = 1]`), the instances a model
    parameter bounded by it writes (checker/model_params.py), its methods'
    types in those dims."""
    name = item.name.text
    ctx = TypeContext(names, "model")
    dims, options, defaults, divisions, _ = read_header(item, names, ctx)
    self_type = T.ModelT(name, tuple(T.DimVar(d) for d in dims), (), True)
    owner = Owner(name, self_type, dims, (), tuple(options))
    methods: list[FnInfo] = []
    diags: list[LocalDiagnostic] = list(ctx.diagnostics)
    lookups: set[str] = set(ctx.lookups)
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
    decl = A.ModelDecl(item.span, item.name, None, (), item.params, item.methods)
    info = ModelInfo(
        name,
        "cpu",
        (),
        decl,
        False,
        dims,
        options,
        methods=tuple(methods),
        defaults=defaults,
        divisions=divisions,
        trait=True,
    )
    return Declared(info, tuple(diags), frozenset(lookups))


def unmet(
    g, traits: tuple[str, ...], given: T.Type, param: str, span: A.Span, instance_of: ModelInfo | None = None
) -> LocalDiagnostic | None:
    """Whether the model `given` has what `traits` require: None when it
    does (or is unknown), else the one diagnostic (E0920, E0921) at `span`.
    A type parameter satisfies the traits its own bound implies. With
    `instance_of`, a trait that takes dims (checker/model_params.py): `given`
    is the model with the trait's dims as its own, which its methods keep."""
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
            if not _fits(g, given, model_info, found, wanted, instance_of.dims if instance_of else ()):
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


def _fits(
    g, given: T.ModelT, model_info: ModelInfo, found: FnInfo, wanted: FnInfo, fixed: tuple[str, ...] = ()
) -> bool:
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
    trait = _renamed([d for d in wanted.generics if d not in fixed], S.Bindings(()))
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


def unmet_obligations(g, obligations: tuple[Obligation, ...]) -> list[LocalDiagnostic]:
    """For each model given for a model parameter where it is written
    (`BasicBlock` of `ResNet[BasicBlock, 1]`): whether it has the trait's
    dims and options (E0947) and methods (E0920, E0921), checked with the
    model's dims put for the trait's."""
    out: list[LocalDiagnostic] = []
    for model, traits, span, param in obligations:
        info = g.models.get(model)
        if info is None:
            continue
        problem = None
        for trait_name in traits:
            trait = g.models.get(trait_name)
            if trait is None:
                continue
            problem = _dims_problem(info, trait, param, span)
            if problem is None:
                given = T.ModelT(model, tuple(T.DimVar(d) for d in trait.dims), _options(trait))
                problem = unmet(g, (trait_name,), given, param, span, instance_of=trait)
            if problem is not None:
                break
        if problem is not None:
            out.append(problem)
    return out


def _options(trait) -> T.Options:
    return tuple((k, T.OptionRef(k, v)) for k, v in trait.options if isinstance(v, (bool, float)))


def _dims_problem(info, trait, param: str, span: A.Span) -> LocalDiagnostic | None:
    """E0947 when the model cannot be instantiated as the trait writes its
    instances: another number of dims, or an option of the trait it lacks."""
    if not info.dims:
        problem = C.E0946.say("no_dims", given=info.name, param=param)
        return C.E0946.at(span, problem=problem)
    if len(info.dims) != len(trait.dims):
        problem = C.E0947.say(
            "dims_count",
            found=_count(info.dims),
            trait=trait.name,
            wanted=len(trait.dims),
            dims=", ".join(trait.dims),
        )
        return C.E0947.at(span, model=info.name, param=param, problem=problem)
    have = dict(info.options)
    for option, default in trait.options:
        if option not in have:
            problem = C.E0947.say("option_missing", trait=trait.name, option=option)
            return C.E0947.at(span, model=info.name, param=param, problem=problem)
        if type(have[option]) is not type(default):
            problem = C.E0947.say(
                "option_kind", option=option, found=_kind(have[option]), trait=trait.name, wanted=_kind(default)
            )
            return C.E0947.at(span, model=info.name, param=param, problem=problem)
    return None


def _count(dims: tuple[str, ...]) -> str:
    return f"{len(dims)} dim{'s' if len(dims) != 1 else ''} ({', '.join(dims)})"


def _kind(v: object) -> str:
    return "Bool" if isinstance(v, bool) else "Float" if isinstance(v, float) else "DType"
