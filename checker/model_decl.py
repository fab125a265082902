"""A model's declaration: its device, its members (params, buffers,
sub-models) and their types, and the initializers of its fields."""

from __future__ import annotations

import dataclasses
import math

from . import ast as A
from . import catalog as C
from . import dimexpr as DX
from . import member_conditions as MC
from . import shapes as S
from . import types as T
from .buffer_exprs import computed_fn, is_initializer, member_persistence
from .diagnostics import LocalRelated
from .fn_decl import Owner, declare_fn
from .infos import Declared, FieldInfo, FnInfo, ModelInfo
from .initializers import INITIALIZERS
from .model_lists import is_model_list, model_list_type
from .model_params import read_model_params
from .names import (
    DimDefault,
    ModelSig,
    Names,
    bool_options,
    dim_default,
    dotted_text,
    float_literal,
    is_model_param,
    model_divisions,
    option_default,
    suggest,
)
from .show import expr_text
from .ties import check_tie, is_tie
from .typectx import TypeContext, type_text

DEVICES = ("cpu", "cuda", "mps")
# Names every compiled model has as methods (see runtime/_model.py); a field
# with one of them would hide it from Python users.
RESERVED_FIELDS = frozenset({"init", "save", "load", "state_dict", "load_state_dict", "keys", "values", "items"})


def declare_model(item: A.ModelDecl, names: Names, partial: bool = False) -> Declared:
    ctx = TypeContext(names, "model")
    dims, options, defaults, divisions, model_params = read_header(item, names, ctx)
    ctx.generics.extend(dims)  # the model's own dims, in its fields' types
    elems = tuple(o for o, default in options if isinstance(default, str))
    ctx.elem_vars = elems  # `[I O] dtype`: the element type of its DType option
    # `Linear[E, F, bias=bias]`: a sub-model given one of its Bool or Float options
    ctx.option_vars = {o: d for o, d in options if not isinstance(d, str)}
    fields: list[FieldInfo] = []
    seen: dict[str, A.Member] = {}
    self_type = T.ModelT(
        item.name.text,
        tuple(T.DimVar(d) for d in dims),
        tuple((n, T.ModelArg(n, b)) for n, b in model_params),
        True,
        elems,
    )
    owner = Owner(item.name.text, self_type, dims, elems, tuple(options))
    computed: list[FnInfo] = []  # the functions of buffers computed by an expression
    computed_lookups: set[str] = set()
    device = "cpu"
    if item.device is not None:
        device = item.device.name
        base = device.split(":", 1)[0]
        ok = base in DEVICES and (":" not in device or device.split(":", 1)[1].isdigit())
        if not ok:
            ctx.diagnostics.append(C.E0906.at(item.device.span, device=device))
            device = "cpu"
    unsure: set[str] = set()  # members whose condition is reported
    for m in item.members:
        if m.name.text in RESERVED_FIELDS or m.name.text.startswith("_"):
            ctx.diagnostics.append(C.E0908.at(m.name.span, name=m.name.text))
            continue
        before = len(ctx.diagnostics)
        when = _condition(m, item, dims, options, ctx)
        if m.cond is not None and when is None and len(ctx.diagnostics) > before:
            if m.name.text in seen:
                continue  # its condition is reported: not a second declaration too
            unsure.add(m.name.text)
        elif m.name.text in unsure:
            continue  # declared again after a condition that is reported
        if m.name.text in seen and not _declared_again(m, when, seen[m.name.text], fields, item, ctx):
            continue
        seen.setdefault(m.name.text, m)
        before = len(ctx.diagnostics)
        ty = ctx.resolve(m.type, member=True)
        if isinstance(m.type, A.TupleType) and isinstance(ty, T.TupleT):  # a list of sub-models
            ty = model_list_type(m, ty, ctx.diagnostics, before)
        sub_model = (
            isinstance(ty, T.ModelT)
            or (isinstance(ty, T.StackT) and isinstance(ty.item, T.ModelT))
            or is_model_list(ty)
        )
        if sub_model and m.kind == "buffer":
            ctx.diagnostics.append(C.E0907.at(m.type.span, kind=m.kind, found=str(ty)))
            ty = T.UNKNOWN
        elif is_tie(m.init):  # `param head: [V E] = tied(wte)` (checker/ties.py)
            check_tie(m, ty, fields, ctx)
        elif sub_model and m.init is not None:
            assert m.init is not None
            ctx.diagnostics.append(
                C.E0903.at(m.init.span, what=f"sub-model {m.name.text} is initialised by its own model's fields")
            )
        elif (
            len(ctx.diagnostics) == before
            and not isinstance(ty, T.TensorT)
            and not sub_model
            and not _of_reported_param(m.type, ctx)
        ):
            ctx.diagnostics.append(C.E0907.at(m.type.span, kind=m.kind, found=str(ty)))
            ty = T.UNKNOWN
        if isinstance(ty, T.TensorT) and m.kind == "param" and not ty.elem.is_float:
            ctx.diagnostics.append(C.E0902.at(m.type.span, name=m.name.text, found=str(ty)))
        persistent = member_persistence(m, ctx)
        if m.init is None or not isinstance(ty, T.TensorT) or is_tie(m.init):
            pass  # no initializer, a sub-model's, or a tie (checked above)
        elif m.kind == "buffer" and not is_initializer(m.init):
            fn_info, fn_lookups = (
                computed_fn(m, names, owner, ctx) if len(ctx.diagnostics) == before else (None, frozenset())
            )
            if fn_info is not None:
                computed.append(fn_info)
                computed_lookups |= fn_lookups
        else:
            _check_init(m, ty, ctx)
        fields.append(FieldInfo(m.name.text, m.kind, ty, m, when, persistent))
    methods = []
    lookups = set(ctx.lookups) | computed_lookups
    taken = {f.name for f in fields}
    for fn in item.methods:
        if fn.name.text in taken:
            ctx.diagnostics.append(
                C.E0915.at(fn.name.span, problem=C.E0915.say("name_taken", model=item.name.text, name=fn.name.text))
            )
            continue
        taken.add(fn.name.text)
        d = declare_fn(fn, names, owner)
        if isinstance(d.info, FnInfo):
            methods.append(d.info)
            if fn.name.text == "reset_parameters" and not d.diagnostics:
                _check_reset(item.name.text, d.info, ctx)
        ctx.diagnostics.extend(d.diagnostics)
        ctx.obligations.extend(d.obligations)
        lookups |= d.lookups
    info = ModelInfo(
        item.name.text,
        device,
        tuple(fields),
        item,
        partial,
        dims,
        options,
        tuple(methods),
        defaults=defaults,
        divisions=divisions,
        computed=tuple(computed),
        model_params=model_params,
    )
    return Declared(info, tuple(ctx.diagnostics), frozenset(lookups), tuple(ctx.obligations))


def read_header(item: A.ModelDecl | A.TraitDecl, names: Names, ctx: TypeContext) -> ModelSig:
    """The dims, dim defaults, options and model parameters of `model
    NAME[...]` (or of a trait), each checked (E0912, E0948); the same that
    `names.model_sig` reads from the header for the model's users."""
    trait = isinstance(item, A.TraitDecl)
    model_params = read_model_params(item.params, item.name.text, ctx, trait)
    dims: list[str] = []
    options: list[tuple[str, bool | float | str]] = []
    defaults: list[tuple[str, DimDefault]] = []
    seen: set[str] = set()
    for p in item.params:
        name = p.name.text
        if name in seen:
            ctx.diagnostics.append(
                C.E0912.at(p.name.span, problem=C.E0912.say("declared_twice", name=name, model=item.name.text))
            )
            continue
        seen.add(name)
        if is_model_param(p):
            continue  # read above
        if p.type is None:
            _header_dim(item, p, names, ctx, bool(options), defaults, dims)
            dims.append(name)
            continue
        kind = p.type.name.text if isinstance(p.type, A.NamedType) and not p.type.args else None
        where = p.default.span if p.default is not None else p.span
        if kind not in ("Bool", "Float", "DType"):
            ctx.diagnostics.append(
                C.E0912.at(
                    p.type.span,
                    problem=C.E0912.say("option_kind", name=name, model=item.name.text, found=type_text(p.type)),
                )
            )
        elif kind == "DType" and not (isinstance(p.default, A.Name) and p.default.name == T.DTYPE_DEFAULT):
            ctx.diagnostics.append(
                C.E0912.at(
                    where,
                    problem=C.E0912.say("dtype_default", name=name, model=item.name.text),
                )
            )
        elif kind == "Bool" and not isinstance(p.default, A.BoolLit):
            ctx.diagnostics.append(
                C.E0912.at(
                    where,
                    problem=C.E0912.say("bool_default", name=name, model=item.name.text),
                )
            )
        elif kind == "Float" and (p.default is None or float_literal(p.default) is None):
            ctx.diagnostics.append(
                C.E0912.at(
                    where,
                    problem=C.E0912.say("float_default", name=name, model=item.name.text),
                )
            )
        options.append((name, option_default(p)))
    return ModelSig(tuple(dims), tuple(options), tuple(defaults), model_divisions(item, tuple(dims)), model_params)


def _header_dim(
    item: A.ModelDecl | A.TraitDecl,
    p: A.ModelParam,
    names: Names,
    ctx: TypeContext,
    after_option: bool,
    defaults: list[tuple[str, DimDefault]],
    before: list[str],
) -> None:
    """One dim of a model's header (`K`, `stride = 1`, `stride = K` with K
    one of the dims `before` it): checked, and its default added to
    `defaults`."""
    name = p.name.text
    ctx.lookups.add(name)  # whether a dim constant has its name: looked up whatever the answer
    if after_option:
        ctx.diagnostics.append(C.E0912.at(p.span, problem=C.E0912.say("dim_after_option", name=name)))
    elif names.kinds.get(name) == "dim":
        ctx.diagnostics.append(
            C.E0912.at(
                p.name.span,
                problem=C.E0912.say("dim_named_as_constant", name=name),
            )
        )
    if p.default is not None:
        default = dim_default(p.default, before, bool_options(item))
        later = _later_dim(p.default, item, before)
        if default is not None:
            defaults.append((name, default))
        elif later is not None:  # `P = K // 2` before K: a default reads the dims before it only
            ctx.diagnostics.append(
                C.E0912.at(later.span, problem=C.E0912.say("dim_default_later", name=name, dim=later.name))
            )
        else:
            ctx.diagnostics.append(
                C.E0912.at(
                    p.default.span,
                    problem=C.E0912.say("dim_default", name=name, found=_default_text(p.default)),
                )
            )
    elif defaults and not after_option:
        ctx.diagnostics.append(
            C.E0912.at(
                p.span,
                problem=C.E0912.say("dim_default_missing", name=name, before=defaults[-1][0]),
            )
        )


def _default_text(e: A.Expr) -> str:
    """A default as written, `K / 2`, where it is arithmetic of names and numbers."""
    if isinstance(e, A.Binary):
        return f"{_default_text(e.left)} {e.op} {_default_text(e.right)}"
    return expr_text(e)


def _later_dim(e: A.Expr, item: A.ModelDecl | A.TraitDecl, before: list[str]) -> A.Name | None:
    """A dim of the model, not among those `before` it, that default `e` reads."""
    if isinstance(e, A.Name):
        dims = {p.name.text for p in item.params if p.type is None}
        return e if e.name in dims and e.name not in before else None
    if isinstance(e, A.Binary):
        return _later_dim(e.left, item, before) or _later_dim(e.right, item, before)
    return None


def _condition(
    m: A.Member,
    item: A.ModelDecl,
    dims: tuple[str, ...],
    options: tuple[tuple[str, bool | float | str], ...],
    ctx: TypeContext,
) -> MC.Cond | None:
    """A member's `if ...` (`if bias`, `if stride != 1 or Ci != Co`): a
    Boolean expression of the model's dims and Bool options (None when the
    member has none, or, reported, when it is not one)."""
    if m.cond is None:
        return None

    def value(name: str) -> int | None:
        if ctx.kind(name, m.cond.span if m.cond is not None else m.span) == "dim":
            return ctx.names.dim_values.get(name)
        return None

    scope = MC.Scope(
        item.name.text,
        dims,
        tuple(o for o, default in options if isinstance(default, bool)),
        tuple(o for o, default in options if not isinstance(default, bool)),
        value,
    )
    return MC.read(m.cond, scope, ctx.diagnostics)


def _of_reported_param(t: A.TypeExpr, ctx: TypeContext) -> bool:
    """Whether a member's type is an instance of a model parameter whose
    bound is reported (E0948): its type is unknown, and nothing more is said."""
    return isinstance(t, A.NamedType) and ctx.ctor_params.get(t.name.text) == ()


def _declared_again(
    m: A.Member, when: MC.Cond | None, first: A.Member, fields: list[FieldInfo], item: A.ModelDecl, ctx: TypeContext
) -> bool:
    """A member declared again under a condition that excludes each earlier
    one's (`if concat`, `if not concat`: an instance has one of them); any
    other second declaration is reported (E0106 when either has no
    condition, E0933 when both could hold) and left out."""
    earlier = [f for f in fields if f.name == m.name.text]
    if not earlier:  # the first has a reported problem: not a second declaration
        return False
    related = (LocalRelated("first declared here", span=first.name.span),)
    if when is None or any(f.when is None for f in earlier):
        ctx.diagnostics.append(C.E0106.at(m.name.span, name=m.name.text, model=item.name.text, related=related))
        return False
    for f in earlier:
        assert f.when is not None
        if not MC.exclusive(f.when, when):
            ctx.diagnostics.append(
                C.E0933.at(
                    m.name.span,
                    model=item.name.text,
                    name=m.name.text,
                    first=MC.text(f.when),
                    second=MC.text(when),
                    related=(LocalRelated("first declared here", span=f.decl.name.span),),
                )
            )
            return False
    return True


def _an(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" or word[:1] in "fi" and word[1:2].isdigit() else "a ") + word


def _literal_value(e: A.Expr) -> float | bool | None:
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -e.operand.value if e.op == "-" else e.operand.value
    if isinstance(e, (A.IntLit, A.FloatLit, A.BoolLit)):
        return e.value
    return None


_NUMBER_FNS = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log}
_UNKNOWN = object()  # a number whose value depends on the model's dims


def _check_init(m: A.Member, ty: T.TensorT, ctx: TypeContext) -> None:
    """An initializer must suit the field's element type, refinement included:
    a NonNeg param cannot start negative, an Index[C] buffer must index C.
    Its arguments are expressions of numbers and dims (the model's own
    included): `uniform(-1.0 / sqrt(I), 1.0 / sqrt(I))`."""
    init = m.init
    assert init is not None
    elem = ty.elem
    field = f"{_an(str(elem))} {m.kind}"
    bad = lambda what: ctx.diagnostics.append(C.E0903.at(init.span, what=what))
    value = _literal_value(init)
    if value is not None:
        if isinstance(init, A.BoolLit) != elem.is_bool:
            kind = "Bool" if isinstance(init, A.BoolLit) else "number"
            bad(f"{_an(kind)} fill value for {field}" + ("; use True or False" if elem.is_bool else ""))
        elif isinstance(init, A.FloatLit) or (isinstance(init, A.Unary) and isinstance(init.operand, A.FloatLit)):
            if not elem.is_float:
                bad(f"a Float fill value for {field}")
            else:
                _check_range(value, value, elem, field, bad)
        elif not elem.is_bool:
            _check_range(value, value, elem, field, bad)
        return
    name = None
    args: tuple[A.Arg, ...] = ()
    if isinstance(init, A.Name):
        name = init.name
    elif isinstance(init, A.Call) and isinstance(init.func, A.Name):
        name = init.func.name
        args = init.args
    spec = INITIALIZERS.get(name or "")
    if name is None or spec is None:
        shown = name if name is not None else "this expression"
        bad(f"{shown} is not an initializer{suggest(name or '', INITIALIZERS)}")
        return
    params = spec.params
    required = [p.name for p in params if p.default is None]
    example = spec.example
    if spec.floats and not elem.is_float:
        bad(f"{name} needs a float {m.kind}, found {elem}")
        return
    if spec.needs_2d and ty.rank < 2:
        bad(f"{name} needs at least 2 dims, found {ty}")
        return
    if isinstance(init, A.Name) and required:
        bad(f"{name} takes {len(required)} numbers, as in {example}")
        return
    # arguments by position, then by name
    values: dict[str, object] = {}
    names = [p.name for p in params]
    for i, a in enumerate(args):
        key = a.keyword.text if a.keyword is not None else (names[i] if i < len(names) else None)
        if key is None or key not in names:
            where = f"no argument {a.keyword.text}=" if a.keyword is not None else f"at most {len(names)} arguments"
            ctx.diagnostics.append(C.E0903.at(a.span, what=f"{name} takes {where}"))
            return
        if key in values:
            ctx.diagnostics.append(C.E0903.at(a.span, what=f"{name} takes {key} once"))
            return
        words = next(p.words for p in params if p.name == key)
        if not words:
            v = _init_number(a.value, ctx)
            if v is None:
                what = f"{name}'s {key} is a number, made of numbers, dims and sqrt/exp/log, found {expr_text(a.value)}"
                ctx.diagnostics.append(C.E0903.at(a.value.span, what=what))
                return
        else:
            v = a.value.value if isinstance(a.value, A.StrLit) else None
            if v not in words:
                choices = ", ".join(f'"{w}"' for w in words)
                ctx.diagnostics.append(C.E0903.at(a.value.span, what=f"{name}'s {key} is one of {choices}"))
                return
        values[key] = v
    missing = [p for p in required if p not in values]
    if missing:
        bad(f"{name} takes {len(required)} numbers, as in {example}")
        return
    known = lambda k: values.get(k, next(p.default for p in params if p.name == k))
    if name == "zeros":
        _check_range(0, 0, elem, field, bad)
    elif name == "ones":
        _check_range(1, 1, elem, field, bad)
    elif name == "normal":
        std = known("std")
        row = values.get("padding_idx", _UNKNOWN)
        if std is not _UNKNOWN and std < 0:  # type: ignore[operator]
            bad("normal's standard deviation must not be negative")
        elif row is not _UNKNOWN and (not float(row).is_integer() or row < 0):  # type: ignore[arg-type, operator]
            bad(f"normal's padding_idx is the row to zero, a whole number 0 or more, found {_number(row)}")
        elif elem.refine is not None:
            bad(f"normal can draw any real value, which does not suit {field}; use uniform")
    elif name == "uniform":
        lo, hi = known("low"), known("high")
        if lo is _UNKNOWN or hi is _UNKNOWN:
            if elem.refine is not None or elem.index is not None:
                bad(f"the bounds of uniform for {field} must be numbers known here, to be checked")
        elif lo > hi:  # type: ignore[operator]
            bad(f"uniform({_number(lo)}, {_number(hi)}) has its bounds the wrong way round")
        else:
            _check_range(lo, hi, elem, field, bad)  # type: ignore[arg-type]
    elif elem.refine is not None:
        bad(f"{name} draws negative values, which do not suit {field}")


def _number(v: object) -> str:
    return repr(v) if isinstance(v, float) and v != int(v) else str(v)


def _init_number(e: A.Expr, ctx: TypeContext) -> object | None:
    """The value of an initializer's number (`0.02 / sqrt(2 * L)`), _UNKNOWN
    when it depends on the model's dims, None when it is not a number."""
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return e.value
    if isinstance(e, A.Unary) and e.op in ("+", "-"):
        v = _init_number(e.operand, ctx)
        if v is None or v is _UNKNOWN:
            return v
        return -v if e.op == "-" else v  # type: ignore[operator]
    if isinstance(e, A.Name):
        if e.name in ctx.generics:  # one of the model's own dims
            return _UNKNOWN
        if ctx.kind(e.name, e.span) == "dim":
            v = ctx.names.dim_values.get(e.name)
            return v if v is not None else _UNKNOWN
        return None
    if isinstance(e, A.Field):
        written = dotted_text(e)
        if written is not None and ctx.kind(written, e.span) == "dim":
            v = ctx.names.dim_values.get(written)
            return v if v is not None else _UNKNOWN
        return None
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/", "**"):
        a, b = _init_number(e.left, ctx), _init_number(e.right, ctx)
        if a is None or b is None:
            return None
        if a is _UNKNOWN or b is _UNKNOWN:
            return _UNKNOWN
        try:
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else math.inf, "**": a**b}[e.op]  # type: ignore[operator]
        except (OverflowError, ZeroDivisionError, TypeError):
            return _UNKNOWN
    if (
        isinstance(e, A.Call)
        and isinstance(e.func, A.Name)
        and e.func.name in _NUMBER_FNS
        and len(e.args) == 1
        and e.args[0].keyword is None
    ):
        v = _init_number(e.args[0].value, ctx)
        if v is None or v is _UNKNOWN:
            return v
        try:
            return _NUMBER_FNS[e.func.name](v)
        except (ValueError, OverflowError):
            return _UNKNOWN
    return None


def _check_range(lo: float, hi: float, elem: T.Elem, field: str, bad) -> None:
    if elem.index is not None:
        size = T.dim_value(elem.index)
        if lo != int(lo) or lo < 0 or (size is not None and hi >= size):
            bad(f"{_fmt(lo, hi)} is not a valid value for {field} (0 to {size - 1 if size else '?'})")
    elif elem.refine == "nonneg" and lo < 0:
        bad(f"{_fmt(lo, hi)} is negative, which does not suit {field}")
    elif elem.refine == "prob" and (lo < 0 or hi > 1):
        bad(f"{_fmt(lo, hi)} is outside [0, 1], which does not suit {field}")


def _fmt(lo: float, hi: float) -> str:
    return str(lo) if lo == hi else f"[{lo}, {hi}]"


def instance_bindings(info: ModelInfo, t: T.ModelT) -> S.Bindings:
    """What instance `t` puts in for the declaration's dims, its DType
    options' element types and its Bool and Float options."""
    chosen: dict[str, bool | float | str | T.OptionRef | T.ModelArg] = dict(info.options)
    chosen.update(t.options)
    bindings = S.Bindings(info.dims)
    for name, d in zip(info.dims, t.dims):
        bindings.bound[name] = S.Binding(d, name, None)
    if not t.generic:  # the element types of its DType options: `[I O] dtype` is [D H] f64
        bindings.elems = {
            "~" + k: v for k, v in chosen.items() if isinstance(v, str) and isinstance(dict(info.options)[k], str)
        }
        # its Bool and Float options, for sub-models given them (`Linear[E, F, bias=bias]`)
        bindings.options = {k: v for k, v in chosen.items() if isinstance(v, (bool, float, T.OptionRef))}
        # the models it is given for its model parameters (checker/model_params.py)
        bindings.ctors = {k: v for k, v in chosen.items() if isinstance(v, T.ModelArg)}
    return bindings


def _instance_condition(c: MC.Cond, info: ModelInfo, t: T.ModelT) -> MC.Cond:
    """A member's condition in instance `t`: its dims put in, and the
    options `t` gives (with the defaults, except for `self`, whose options
    are not known); what stays is what `t` leaves open (a dim of a
    function's `Block[i, o]`, an option given as the enclosing model's)."""
    dims: dict[str, DX.Poly] = {}
    for name, d in zip(info.dims, t.dims):
        p = T.dim_poly(d)
        if p is not None:
            dims[name] = p
    chosen: dict[str, object] = {} if t.generic else dict(info.options)
    chosen.update(t.options)
    options = {
        k: (v.name if isinstance(v, T.OptionRef) else v)
        for k, v in chosen.items()
        if isinstance(v, (bool, T.OptionRef))
    }
    return MC.substitute(c, dims, options)


def instance(info: ModelInfo, t: T.ModelT) -> ModelInfo:
    """The model `t` is of (`Linear[D, H, bias=False]`): its declaration's
    fields with the declaration's dims replaced by `t`'s, and only the members
    its options keep; for a model that takes nothing, the declaration itself.
    One object per declaration and type (kept on the declaration)."""
    if not info.takes or len(t.dims) != len(info.dims):
        return info
    # the dims as written too: `(2*E)` and `(E*2)` are one dim, but each
    # instance's field types show the dims as its type writes them
    key = (t.dims, tuple(map(str, t.dims)), t.options, t.generic)
    hit = info.instances.get(key)
    if hit is not None:
        return hit
    bindings = instance_bindings(info, t)
    fields = []
    for f in info.fields:
        when = f.when
        if when is not None:
            when = _instance_condition(when, info, t)
            if when == MC.Lit(False):
                continue
            if when == MC.Lit(True):
                when = None
        fields.append(dataclasses.replace(f, type=bindings.subst(f.type), when=when))
    out = dataclasses.replace(
        info,
        fields=tuple(fields),
        generic=info,
        applied=t,
        instances={},
    )
    info.instances[key] = out
    return out


def _check_reset(model: str, info: FnInfo, ctx: TypeContext) -> None:
    """`fn reset_parameters`, which `init` runs as `reset_parameters(mut self,
    seed: Int)` (runtime/_walks.py, run_resets): E0944 at its name otherwise."""
    rest = info.params[1:]
    problem = None
    if not info.params[0].mut:
        problem = C.E0944.say("not_mut")
    elif len(rest) != 1 or rest[0].type != T.INT or rest[0].mut:
        found = ", ".join(f"{p.name}: {p.type}" for p in rest) or "nothing"
        problem = C.E0944.say("params", found=found)
    elif info.declared_ret and info.ret != T.UNIT:
        problem = C.E0944.say("returns", found=str(info.ret))
    if problem is not None:
        ctx.diagnostics.append(C.E0944.at(info.decl.name.span, model=model, problem=problem))
