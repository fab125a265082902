"""A function's declaration: its parameters, return type and generic dims
(also a method's, declared inside its model)."""

from __future__ import annotations

from dataclasses import dataclass

from . import ast as A
from . import catalog as C
from . import types as T
from .consts import ConstProblem, Value, evaluate, show
from .diagnostics import LocalRelated
from .infos import _NO_LOOKUPS, Declared, FnInfo, ParamInfo
from .names import Names
from .type_params import read_type_params, unbound_type_params
from .typectx import TypeContext, type_text


@dataclass(frozen=True)
class Owner:
    """The model a method is declared in: its name and what `self` is."""

    name: str
    self_type: T.ModelT
    dims: tuple[str, ...]
    elems: tuple[str, ...] = ()  # its DType options: element types in the method's types
    # its options with their defaults, as its own header declares them
    options: tuple[tuple[str, bool | float | str], ...] = ()


def declare_fn(item: A.FnDecl | A.ExternDecl, names: Names, owner: Owner | None = None) -> Declared:
    """A function's signature; with `owner`, a method of that model: its
    first parameter is `self`, the model with its dims (generic dims of the
    method, bound from `self`), its name `Model.name`."""
    ctx = TypeContext(names, "signature", bind_options=owner is None and isinstance(item, A.FnDecl))
    type_params = read_type_params(item, ctx, owner is not None) if isinstance(item, A.FnDecl) else ()
    if owner is not None:
        ctx.generics.extend(owner.dims)  # bound from `self`
        ctx.elem_vars = owner.elems
    params: list[ParamInfo] = []
    seen: dict[str, A.Param] = {}
    written = item.params
    if owner is not None:
        first = written[0] if written else None
        if first is not None and first.name.text == "self" and first.type is None:
            seen["self"] = first
            params.append(ParamInfo("self", first.mut, owner.self_type, first))
            written = written[1:]
        else:
            # Reported once; the method still has its `self` (not written), so
            # neither its body nor its calls report more. A `self` written
            # later is that one mistake, reported where it is (below).
            method, model = item.name.text, owner.name
            if first is None:
                problem = C.E0915.say("method_without_self", method=method, model=model)
            else:
                found = first.name.text if first.type is None else f"{first.name.text}: {type_text(first.type)}"
                problem = C.E0915.say("method_first_not_self", method=method, model=model, found=found)
            if not any(p.name.text == "self" and p.type is None for p in written[1:]):
                ctx.diagnostics.append(C.E0915.at(first.span if first is not None else item.name.span, problem=problem))
            implicit = A.Param(item.name.span, False, A.Ident(item.name.span, "self"), None)
            params.append(ParamInfo("self", False, owner.self_type, implicit))
    defaulted: str | None = None  # the last parameter with a default
    for p in written:
        if p.type is None:
            if p.name.text == "self":
                problem = (
                    C.E0915.say("self_outside_method", fn=item.name.text)
                    if owner is None
                    else C.E0915.say("self_not_first")
                )
                ctx.diagnostics.append(C.E0915.at(p.span, problem=problem))
                if owner is not None:
                    continue  # the method has its self already (above)
            else:
                ctx.diagnostics.append(C.E0415.at(p.name.span, name=p.name.text))
            ty: T.Type = T.UNKNOWN
        else:
            ty = ctx.resolve(p.type)
        if p.name.text in seen:
            ctx.diagnostics.append(
                C.E0105.at(
                    p.name.span,
                    name=p.name.text,
                    related=(LocalRelated("first declared here", span=seen[p.name.text].name.span),),
                )
            )
            continue
        seen[p.name.text] = p
        if p.mut and isinstance(item, A.ExternDecl):
            ctx.diagnostics.append(C.E0503.at(p.span, name=p.name.text, reason=C.E0503.say("extern_fn")))
        elif p.mut and not isinstance(ty, (T.ModelT, T.OptimT, T.ScheduleT, T.UnknownT)):
            ctx.diagnostics.append(
                C.E0503.at(
                    p.span,
                    name=p.name.text,
                    reason=C.E0503.say("not_mutable", type=T.describe(ty)),
                )
            )
        default = _default(p, ty, names, ctx, item) if p.default is not None else None
        if p.default is None and defaulted is not None and p.type is not None:
            ctx.diagnostics.append(
                C.E0417.at(
                    p.name.span,
                    name=p.name.text,
                    problem=C.E0417.say("after_a_default", before=defaulted),
                )
            )
        if p.default is not None:
            defaulted = p.name.text
        params.append(ParamInfo(p.name.text, p.mut, ty, p, default))
    if owner is None and not isinstance(item, A.ExternDecl) and item.name.text == "main":
        for p in params:
            inner = p.type.inner if isinstance(p.type, T.OptionalT) else p.type  # `top_k: Int | None`
            if not isinstance(inner, (T.NumberT, T.UnknownT)):
                ctx.diagnostics.append(
                    C.W0403.at(
                        p.decl.type.span if p.decl.type is not None else p.decl.span,
                        name=p.name,
                        type=str(p.type),
                    )
                )
    _dims_of_optionals_only(written, [p.name for p in params if p.type == T.INT], ctx)
    if isinstance(item, A.FnDecl) and type_params:
        unbound_type_params(item, type_params, [p.type for p in params], ctx)
    # An Int parameter may size the types (`fn mask(size: Int) -> [size size] Bool`):
    # a dim of its name is its value, bound at each call by the argument.
    sizes = {p.name for p in params if p.type == T.INT}
    bound = list(ctx.generics)
    for p in params:
        if p.name in bound and p.name not in sizes:
            ctx.diagnostics.append(C.E0112.at(p.decl.name.span, name=p.name))
    ret: T.Type = T.UNIT
    unbound: list[str] = []
    if item.ret is not None:
        ret = ctx.resolve(item.ret)
        bound += [g for g in ctx.generics if g in sizes and g not in bound]
        if isinstance(item, A.ExternDecl):
            # an extern fn's result may have sizes of its own (a loader's rows,
            # `-> [n D]`): each call's result has its own run-time dim n
            bound += [g for g in ctx.generics if g not in bound]
        unbound = [g for g in ctx.generics if g not in bound]
        for g in unbound:
            span = _first_dim_span(item.ret, g) or item.ret.span
            ctx.diagnostics.append(C.E0206.at(span, name=g))
        if unbound:
            ret = _forget_dims(ret, set(unbound))
    for name in ctx.bound_options if not ctx.diagnostics else ():  # (one mistake, one diagnostic)
        if not any(_binds_option(p.type, name) for p in params):
            span = _first_option_span(item, name)
            ctx.diagnostics.append(C.E0927.at(span, name=name))
    target = None
    if isinstance(item, A.ExternDecl) and item.target is not None:
        target = item.target.value
        if not _valid_target(target):
            ctx.diagnostics.append(C.E0412.at(item.target.span, target=target))
    info = FnInfo(
        item.name.text if owner is None else f"{owner.name}.{item.name.text}",
        tuple(params),
        ret,
        item.ret is not None,
        tuple(bound),
        isinstance(item, A.ExternDecl),
        target,
        item,
        tuple(unbound),
        owner.name if owner is not None else None,
        owner.options if owner is not None else tuple(ctx.bound_options.items()),
        type_params,
    )
    return Declared(
        info, tuple(ctx.diagnostics), frozenset(ctx.lookups) if ctx.lookups else _NO_LOOKUPS, tuple(ctx.obligations)
    )


def _default(p: A.Param, ty: T.Type, names: Names, ctx: TypeContext, item) -> tuple[str, Value] | None:
    """The kind and value of a parameter's default (E0416, E0417 when it has none that fits)."""
    assert p.default is not None
    if isinstance(ty, T.OptionalT):  # `top_k: Int | None = None`; `k: Int | None = 5`
        if isinstance(p.default, A.Name) and p.default.name == "None":
            return "None", "None"  # (consts.python_literal writes Python's None)
        ty = ty.inner
    if not isinstance(ty, (T.NumberT, T.UnknownT)):
        ctx.diagnostics.append(
            C.E0417.at(
                p.default.span,
                name=p.name.text,
                problem=C.E0417.say("not_a_constant_type", type=T.describe(ty)),
            )
        )
        return None
    try:
        kind, value = evaluate(p.default, lambda n: const_lookup(n, names, ctx.lookups))
    except ConstProblem as e:
        if e.problem:
            ctx.diagnostics.append(C.E0417.at(e.span, name=p.name.text, problem=e.problem))
        return None
    if isinstance(ty, T.UnknownT):
        return kind, value
    if ty.kind == kind:
        return kind, value
    if ty.kind == "Float" and kind == "Int":
        return "Float", float(value)
    ctx.diagnostics.append(
        C.E0416.at(p.default.span, name=p.name.text, expected=ty.kind, found=f"{kind} {show(kind, value)}")
    )
    return None


def const_lookup(name: str, names: Names, lookups: set[str]):
    """A name's constant value for consts.evaluate: a constant's, or a dim's (an Int)."""
    lookups.add(name)
    kind = names.kind(name)
    if kind == "dim":
        v = names.dim_values.get(name)
        return ("Int", v) if v is not None else ""
    if kind == "const":
        return names.const_values.get(name, "")
    if kind is not None and kind.startswith("broken-"):
        return ""
    return None


def _binds_option(t: T.Type, name: str) -> bool:
    """Whether a parameter of type `t` is a model that gives the fn's option
    `name` its value (`m: Transformer[E, flash=fl]`), read from it at run time."""
    return isinstance(t, T.ModelT) and any(isinstance(v, T.OptionRef) and v.name == name for _, v in t.options)


def _first_option_span(item: A.FnDecl | A.ExternDecl, name: str) -> A.Span:
    for node in A.walk(item):
        if isinstance(node, A.TypeOption) and isinstance(node.dim, A.DimName) and node.dim.name == name:
            return node.span
    return item.name.span


def _dims_of_optionals_only(written, sizes: list[str], ctx: TypeContext) -> None:
    """E0968 for a generic dim that only an optional parameter's type binds
    (`m: [n] | None`): when None is given, the dim has no size."""

    def names(t) -> set[str]:
        return {n.name for n in A.walk(t) if isinstance(n, A.DimName)}

    elsewhere = set(sizes)
    for p in written:
        if p.type is not None and not isinstance(p.type, A.OptionalType):
            elsewhere |= names(p.type)
    reported: set[str] = set()
    for p in written:
        if not isinstance(p.type, A.OptionalType):
            continue
        for n in A.walk(p.type):
            if (
                isinstance(n, A.DimName)
                and n.name in ctx.generics
                and n.name not in elsewhere
                and n.name not in reported
            ):
                reported.add(n.name)
                problem = C.E0968.say("dim_only", dim=n.name)
                ctx.diagnostics.append(C.E0968.at(n.span, name=p.name.text, type=type_text(p.type), problem=problem))


def _forget_dims(t: T.Type, names: set[str]) -> T.Type:
    """`t` with the given generic dims unknown (they were reported already)."""
    if isinstance(t, T.TensorT):
        dims = tuple(T.DimUnknown() if isinstance(d, T.DimVar) and d.name in names else d for d in t.dims)
        return T.TensorT(dims, t.elem)
    if isinstance(t, T.TupleT):
        return T.TupleT(tuple(_forget_dims(x, names) for x in t.items))
    return t


def _valid_target(target: str) -> bool:
    module, sep, attr = target.partition(":")
    ident = lambda s: s.isidentifier()
    return bool(sep) and all(ident(p) for p in module.split(".")) and all(ident(p) for p in attr.split("."))


def _first_dim_span(t: A.TypeExpr, name: str) -> A.Span | None:
    for node in A.walk(t):
        if isinstance(node, A.DimName) and node.name == name:
            return node.span
        if isinstance(node, A.ElemType) and node.arg is not None and node.arg.text == name:
            return node.arg.span
    return None


# ------------------------------------------------------------------ the global scope


def declare_const(item: A.ConstDecl, names: Names) -> Declared:
    """`const LR = 3e-4`, `const STEPS: Int = 100`: its value is worked out
    with the names (names.const_decl_value); this reports why it has none
    (E0118). Its lookups are the names its value reads."""
    lookups: set[str] = set()
    diags = []
    name = item.name.text
    written = None
    if item.type is not None:
        if (
            isinstance(item.type, A.NamedType)
            and not item.type.args
            and item.type.name.text in ("Int", "Float", "Bool", "Str")
        ):
            written = item.type.name.text
        else:
            diags.append(
                C.E0118.at(
                    item.type.span,
                    name=name,
                    problem=C.E0118.say("not_a_constant_type", type=type_text(item.type)),
                )
            )

    def lookup(n: str):
        if n == name:
            return None if names.kind(n) != "const" else ""
        return const_lookup(n, names, lookups)

    try:
        kind, value = evaluate(item.value, lookup)  # (reading itself raises: lookup gives "")
        if written is not None and written != kind and not (written == "Float" and kind == "Int"):
            diags.append(
                C.E0118.at(
                    item.value.span,
                    name=name,
                    problem=C.E0118.say("written_another_kind", written=written, kind=kind, value=show(kind, value)),
                )
            )
    except ConstProblem as e:
        cycle = _cycle(name, names, lookups)
        if _reads_itself(item.value, name):
            diags.append(C.E0118.at(item.value.span, name=name, problem=C.E0118.say("defined_by_itself", name=name)))
        elif e.problem:
            diags.append(C.E0118.at(e.span, name=name, problem=e.problem))
        elif cycle is not None:
            chain = " -> ".join([name, *cycle])
            diags.append(
                C.E0118.at(item.value.span, name=name, problem=C.E0118.say("defined_through_itself", chain=chain))
            )
    return Declared(None, tuple(diags), frozenset(lookups))


def _cycle(name: str, names: Names, lookups: set[str]) -> list[str] | None:
    """The constants from `name`'s value back to `name` (`B`, `A` of `const A
    = B`, `const B = A`), or None; each one met is a lookup of the declaration."""

    def reads(n: str) -> list[str]:
        item = names.first.get(n)
        if not isinstance(item, A.ConstDecl):
            return []
        return [x.name for x in A.walk(item.value) if isinstance(x, A.Name) and names.kind(x.name) == "const"]

    stack = [(n, [n]) for n in reads(name)]
    seen: set[str] = set()
    while stack:
        n, path = stack.pop()
        lookups.add(n)
        if n == name:
            return path
        if n in seen:
            continue
        seen.add(n)
        stack.extend((m, [*path, m]) for m in reads(n))
    return None


def _reads_itself(e: A.Expr, name: str) -> bool:
    return any(isinstance(n, A.Name) and n.name == name for n in A.walk(e))
