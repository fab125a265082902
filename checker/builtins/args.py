"""Argument readers shared by the built-ins' typing rules, written against
`RuleContext` (checker/body/context.py): several dims for `over=`, `keep=`,
numbers with a range, literal options (`reduction="sum"`), a mode, a dim given
as a value (`k` of topk, `r` of pixel_shuffle) or as an argument (`arange(n)`),
a buffer of a model, `Grad[M]` as a shape."""

from __future__ import annotations

from collections.abc import Sequence

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.text import cast_binding_note, expr_text, plural, takes_dims
from ..declarations import dotted_text
from ..results import Ref
from .registry import BUILTINS

# A call's arguments bound to the spec's parameters, by parameter name.
Bound = dict[str, CallArg]


def expect_number(c: RuleContext, a: CallArg, env: Env, kind: str, what: str) -> bool:
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return False
    if isinstance(t, T.NumberT) and (t.kind == kind or (kind == "Float" and t.kind == "Int")):
        return True
    found = T.describe(t) + cast_binding_note(a.node, kind)
    c.diags.append(C.E0301.at(a.node.span, context=f"{what}: ", expected=kind, found=found))
    return False


def tensor_arg(
    c: RuleContext,
    a: CallArg,
    env: Env,
    fn: str,
    pname: str,
    float_only: bool = True,
    typed: T.Type | None = None,
) -> T.TensorT | None:
    """The argument's tensor type, or None after a diagnostic; `typed`
    is its type when the caller has already checked the argument."""
    t = c.value(a.node, env) if typed is None else typed
    if isinstance(t, T.UnknownT):
        return None
    if isinstance(t, T.GradT):
        c.diags.append(C.E1108.at(a.node.span, operation=f"{fn}({T.describe(t)})"))
        return None
    if not isinstance(t, T.TensorT):
        c.diags.append(
            C.E0301.at(a.node.span, context=f"argument '{pname}' of {fn}: ", expected="a tensor", found=T.describe(t))
        )
        return None
    if float_only and not t.elem.is_float:
        c.diags.append(C.E0310.at(a.node.span, what=f"{fn} of {T.describe(t)}", hint="; cast it with `as`"))
        return None
    # the built-in whose rule reads it may take a `[.. d]` operand (its spec's rest_ok)
    now = BUILTINS.get(c.builtin_now) if c.builtin_now is not None else None
    if T.has_rest(t) and not (now is not None and now.rest_ok):
        c.diags.append(
            C.E0214.at(
                a.node.span,
                operation=f"{fn}({expr_text(a.node)})",
                reason=C.E0214.say("rest_dims_unknown", type=t, fn=fn),
            )
        )
        return None
    return t


def dim_arg(
    c: RuleContext,
    a: CallArg,
    env: Env,
    operand: T.TensorT,
    fn: str,
    operand_arg: CallArg | None = None,
    pname: str = "x",
) -> int | None:
    """Resolve `over=d` (a dim name) or `over=-1` (an axis position, an
    integer literal counted from the end when negative) to a
    non-negative axis of `operand` (None after an error). A dim name
    that is no dim of the operand names its one dim known only at run
    time (`?`), which is then checked at run time (`operand_arg` is the
    operand's argument, `pname` its parameter; `named_over` gives the
    operand with that name)."""
    e = a.node
    position = axis_position(e)
    if position is not None and T.has_rest(operand) and not -operand.rank < position < 0:
        c.value(e, env)
        c.diags.append(
            C.E0214.at(
                e.span,
                operation=f"{fn}(over={position})",
                reason=C.E0214.say("rest_dims_over", type=operand, last=operand.rank - 1),
            )
        )
        return None
    if position is not None:
        c.value(e, env)
        rank = operand.rank
        if not -rank <= position < rank:
            needed = position + 1 if position >= 0 else -position
            c.diags.append(
                C.E0210.at(
                    e.span,
                    operation=f"{fn}(over={position})",
                    needed=plural(needed, "dim") + (" or more" if needed > 1 else ""),
                    found=str(operand),
                )
            )
            return None
        return position % rank
    name = dotted_text(e)
    if name is None or (isinstance(e, A.Field) and name.split(".")[0] in env.vars):
        not_literal(c, e, env, "over=: ", "a dim name or a position such as -1")
        return None
    tc = c.type_context(ints=False)  # over=i with an Int i is no dim
    dim = tc.dim(A.DimName(e.span, name))
    c._take(tc)
    if isinstance(dim, T.DimUnknown):
        return None
    ref_node = e.name if isinstance(e, A.Field) else e  # layers.C: the ref is on C
    c.refs[ref_node] = (
        Ref("generic", name, c.fn.name) if isinstance(dim, T.DimVar) else Ref("dim", c.g.names.canonical(name))
    )
    c.types[e] = T.NumberT("Int", True)
    hits = [i for i, d in enumerate(operand.dims) if T.same_dim(d, dim)]
    unknown = [i for i, d in enumerate(operand.dims) if isinstance(d, T.DimUnknown)]
    if not hits and len(unknown) == 1 and operand_arg is not None:
        (axis,) = unknown
        c.over_named[a.node] = dim
        given = T.TensorT(operand.dims[:axis] + (dim,) + operand.dims[axis + 1 :], operand.elem)
        c.note_dims(operand_arg.node, given, operand, f"{fn}(over={name}): ", f"argument '{pname}'")
        return axis
    if not hits:
        shown = str(operand)
        if unknown:
            shown += "; name its dims known only at run time (?) with a cast first, `... as [..]`"
        c.diags.append(C.E0204.at(e.span, dim=name, operand=shown))
        return None
    if len(hits) > 1:
        positions = " or ".join(f"over={i - operand.rank}" for i in hits)
        c.diags.append(C.E0209.at(e.span, dim=name, operand=str(operand), positions=positions))
        return None
    return hits[0]


def named_over(c: RuleContext, t: T.TensorT, axis: int, a: CallArg) -> T.TensorT:
    """The operand `t` of `over=` (`a`) at `axis`, with the dim name taken
    there by a dim known only at run time (see dim_arg)."""
    dim = c.over_named.get(a.node)
    if dim is None or not isinstance(t.dims[axis], T.DimUnknown):
        return t
    return T.TensorT(t.dims[:axis] + (dim,) + t.dims[axis + 1 :], t.elem)


def not_literal(c: RuleContext, e: A.Expr, env: Env, context: str, expected: str, found: str | None = None) -> None:
    """An argument that must be written in a literal form (a tuple, a shape, a
    dim name) and is not: its value is still checked, then E0301 says which
    form was expected (found: what it is, the text of `e` when not given)."""
    c.value(e, env)
    c.diags.append(
        C.E0301.at(e.span, context=context, expected=expected, found=expr_text(e) if found is None else found)
    )


def shape_arg(c: RuleContext, a: CallArg, fn: str) -> T.TensorT | None:
    if not isinstance(a.node, A.TensorType):
        c.diags.append(
            C.E0301.at(
                a.node.span, context=f"shape of {fn}: ", expected="a shape such as [64 D]", found=expr_text(a.node)
            )
        )
        return None
    tc = c.type_context()
    t = tc.resolve(a.node)
    c._take(tc)
    for d in (n for dim in a.node.dims for n in A.walk(dim)):  # names inside (t+1) too
        if isinstance(d, A.DimName):
            if d.name in c.fn.generics:
                c.refs[d] = Ref("generic", d.name, c.fn.name)
            elif c.g.names.kinds.get(d.name) == "dim":
                c.refs[d] = Ref("dim", c.g.names.canonical(d.name))
    c.types[a.node] = t
    return t if isinstance(t, T.TensorT) else None


def axis_position(e: A.Node) -> int | None:
    """The axis position an `over=` argument gives: an integer literal, or a
    negated one (`over=-1`); None for anything else."""
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Unary) and isinstance(e.operand, A.IntLit) and e.op in ("-", "+"):
        return -e.operand.value if e.op == "-" else e.operand.value
    return None


def literal_number(e: A.Expr) -> float | None:
    """The value of a number literal such as 1.0, -2 or +0.5; None for anything else."""
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return e.value
    if isinstance(e, A.Unary) and e.op in ("-", "+") and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -e.operand.value if e.op == "-" else e.operand.value
    return None


def quiet_over(ctx: RuleContext, a: CallArg | None) -> None:
    """The refs of an `over=` argument (one dim or a tuple of them) whose
    operand could not be typed: navigation still works, nothing is reported."""
    if a is None:
        return
    items = a.node.items if isinstance(a.node, A.TupleExpr) else (a.node,)
    for e in items:
        if isinstance(e, A.Name) and e.name in ctx.fn.generics:
            ctx.refs[e] = Ref("generic", e.name, ctx.fn.name)
        elif (const := ctx.dim_constant(e)) is not None:
            ctx.refs[const[0]] = Ref("dim", const[1])


def over_axes(
    ctx: RuleContext,
    a: CallArg,
    env: Env,
    operand: T.TensorT,
    fn: str,
    operand_arg: CallArg | None = None,
    pname: str = "x",
) -> tuple[tuple[int, ...], T.TensorT] | None:
    """`over=H` or `over=(H, W)` (names or positions, as `dim_arg` reads
    each): the axes in the order written and the operand with any dim known
    only at run time named (None after a diagnostic). A dim named twice is
    E0214."""
    items = a.node.items if isinstance(a.node, A.TupleExpr) else (a.node,)
    axes: list[int] = []
    t = operand
    for e in items:
        item = a if e is a.node else CallArg(e, None, e.span)
        axis = dim_arg(ctx, item, env, operand, fn, operand_arg, pname)
        if axis is None:
            return None
        if axis in axes:
            ctx.diags.append(
                C.E0214.at(
                    e.span, operation=fn, reason=C.E0214.say("over_twice", dim=str(operand.dims[axis]), axis=axis)
                )
            )
            return None
        axes.append(axis)
        t = named_over(ctx, t, axis, item)
    if isinstance(a.node, A.TupleExpr):
        ctx.types[a.node] = T.TupleT(tuple(T.NumberT("Int", True) for _ in items))
    return tuple(axes), t


def axes_value(a: CallArg, axes: tuple[int, ...]) -> int | tuple[int, ...]:
    """What the compiler passes for `over=`: one axis as an int, a tuple as a tuple."""
    return axes if isinstance(a.node, A.TupleExpr) else axes[0]


def without(dims: Sequence[T.Dim], axes: tuple[int, ...], keep: bool) -> tuple[T.Dim, ...]:
    """The dims of a reduction over `axes`: without them, or with each as 1 (keep=True)."""
    if keep:
        return tuple(T.DimLit(1) if i in axes else d for i, d in enumerate(dims))
    return tuple(d for i, d in enumerate(dims) if i not in axes)


def keep_arg(ctx: RuleContext, a: CallArg | None, env: Env) -> bool | None:
    """keep=: a literal True or False, since it decides the result's shape
    (False when left out; None after an error)."""
    if a is None:
        return False
    if isinstance(a.node, A.BoolLit):
        ctx.value(a.node, env)
        return a.node.value
    t = ctx.value(a.node, env)
    if not isinstance(t, T.UnknownT):
        ctx.diags.append(
            C.E0301.at(
                a.node.span,
                context="keep= decides the result's shape: ",
                expected="True or False",
                found=expr_text(a.node),
            )
        )
    return None


def number_arg(
    ctx: RuleContext,
    a: CallArg | None,
    env: Env,
    what: str,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
    kind: str = "Float",
) -> bool:
    """A number argument (Float accepts an Int); a literal must lie in the
    range from lo to hi (open at an end when said). True when it fits or is
    left out."""
    if a is None:
        return True
    if not expect_number(ctx, a, env, kind, what):
        return False
    v = literal_number(a.node)
    if v is None:
        return True
    low_ok = lo is None or (v > lo if lo_open else v >= lo)
    high_ok = hi is None or (v < hi if hi_open else v <= hi)
    if low_ok and high_ok:
        return True
    ctx.diags.append(
        C.E0301.at(a.node.span, context=f"{what}: ", expected=_range(lo, hi, lo_open, hi_open), found=str(v))
    )
    return False


def _range(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    if lo is not None and hi is not None:
        return f"a number in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
    if lo is not None:
        return f"a number {'>' if lo_open else '>='} {lo:g}"
    assert hi is not None
    return f"a number {'<' if hi_open else '<='} {hi:g}"


def bool_arg(ctx: RuleContext, a: CallArg | None, env: Env, what: str) -> bool | None:
    """A Bool argument: its literal value, None when it is not a literal (or
    after an error, which is reported)."""
    if a is None:
        return None
    expect_number(ctx, a, env, "Bool", what)
    return a.node.value if isinstance(a.node, A.BoolLit) else None


def choice_arg(ctx: RuleContext, a: CallArg | None, env: Env, what: str, choices: tuple[str, ...]) -> str | None:
    """A string option that decides the result's type (`reduction="none"`):
    one of `choices`, written as a literal. The first choice when left out;
    None after an error."""
    if a is None:
        return choices[0]
    t = ctx.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return None
    if isinstance(a.node, A.StrLit) and a.node.value in choices:
        return a.node.value
    quoted = [f'"{c}"' for c in choices]
    expected = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" or {quoted[-1]}"
    found = f'"{a.node.value}"' if isinstance(a.node, A.StrLit) else expr_text(a.node)
    ctx.diags.append(
        C.E0301.at(a.node.span, context=f"{what}: ", expected=f"{expected} (a string literal)", found=found)
    )
    return None


def mode_arg(ctx: RuleContext, a: CallArg, env: Env, fn: str) -> bool:
    """A Mode (Train(seed=...) or Eval); whether it is one (or unknown)."""
    t = ctx.value(a.node, env)
    if isinstance(t, (T.ModeT, T.UnknownT)):
        return True
    ctx.diags.append(C.E0301.at(a.node.span, context=f"mode of {fn}: ", expected="Mode", found=T.describe(t)))
    return False


# the arithmetic of sizes a dim argument may be written with (`padding=K // 2`)
_DIM_OPS = {"+": DX.add, "-": DX.sub, "*": DX.mul, "//": DX.div, "%": DX.mod}


def dim_value_arg(
    ctx: RuleContext, a: CallArg, env: Env, fn: str, what: str, least: int = 1, ints: bool = False
) -> T.Dim | None:
    """A size given as a value: an integer literal (at least `least`), a dim
    constant, a generic dim of the function, or with `ints` an Int (a size
    known only at run time); the dim it stands for (None after a diagnostic,
    or when it could not be typed)."""
    e = a.node
    t = ctx.value(e, env)
    if isinstance(t, T.UnknownT):
        return None
    if isinstance(e, A.IntLit) and e.value >= least:
        return T.DimLit(e.value)
    if isinstance(e, A.Name) and e.name not in env.vars and e.name in ctx.fn.generics:
        return T.DimVar(e.name)
    var = env.vars.get(e.name) if isinstance(e, A.Name) else None
    if ints and isinstance(e, A.Name) and isinstance(t, T.NumberT) and t.kind == "Int":
        if var is not None and not var.phantom:
            # an Int: a size known only at run time (an Int parameter that sizes the fn's types: that dim)
            return T.DimVar(e.name) if e.name in ctx.fn.generics else ctx.int_dim(e.name, var)
        if e.name in ctx.run_dims:  # a reader's size used as a number
            return ctx.run_dims[e.name]
    if not (isinstance(e, A.Name) and e.name in env.vars):
        const = ctx.dim_constant(e)
        if const is not None:
            value = ctx.g.names.dim_values.get(const[1])
            return T.DimConst(const[1], value) if value is not None else T.DimUnknown()
        number_const = ctx.int_constant(e)
        if number_const is not None and number_const[2] >= least:
            ctx.refs[number_const[0]] = Ref("const", number_const[1])
            return T.DimLit(number_const[2])
    if isinstance(e, A.Binary) and e.op in _DIM_OPS and isinstance(t, T.NumberT) and t.kind == "Int":
        # arithmetic of sizes (`Kk // 2`, `K - 1`, `2 * p`): the dim it computes
        left = dim_value_arg(ctx, CallArg(e.left, None, e.left.span), env, fn, what, 0, ints)
        right = dim_value_arg(ctx, CallArg(e.right, None, e.right.span), env, fn, what, 0, ints)
        if left is None or right is None:
            return None
        parts = (left, right)
        pl, pr = T.dim_poly(left), T.dim_poly(right)
        p = _DIM_OPS[e.op](pl, pr) if pl is not None and pr is not None else None
        value = DX.value(p) if p is not None else None
        if p is not None and (value is None or value >= least):
            return dim_from(p, expr_text(e), parts)
    if _min_max_of_sizes(e, env, t):
        # min / max of sizes (`arange(min(T, 8))`): a literal when every size has a value
        assert isinstance(e, A.Call)
        parts = [dim_value_arg(ctx, CallArg(x.value, None, x.value.span), env, fn, what, 0, ints) for x in e.args]
        values = [DX.value(p) if (p := T.dim_poly(d)) is not None else None for d in parts if d is not None]
        if len(values) < len(parts):
            return None
        if all(v is not None for v in values):
            pick = max if isinstance(e.func, A.Name) and e.func.name == "max" else min
            got = pick(v for v in values if v is not None)
            if got >= least:
                return T.DimLit(got)
        elif ints:
            # of an Int (`topk(x, min(top_k, V))`): a size known when it runs
            return T.DimUnknown()
    number = literal_number(e)
    found = str(number) if number is not None else expr_text(e)
    expected = "a positive integer literal" if least >= 1 else "an integer literal >= 0"
    expected += ", a dim or an Int" if ints else " or a dim"
    ctx.diags.append(C.E0301.at(e.span, context=f"{what} of {fn}: ", expected=expected, found=found))
    return None


def _min_max_of_sizes(e: A.Expr, env: Env, t: T.Type) -> bool:
    """`min(a, b, ...)` or `max(...)` of Ints, the built-ins' number form."""
    return (
        isinstance(e, A.Call)
        and isinstance(e.func, A.Name)
        and e.func.name in ("min", "max")
        and e.func.name not in env.vars
        and isinstance(t, T.NumberT)
        and t.kind == "Int"
        and len(e.args) >= 2
        and all(x.keyword is None for x in e.args)
    )


def dim_text(d: T.Dim) -> str:
    """A dim as written, without its value (to build a new expression's text)."""
    return d.text if isinstance(d, T.DimExpr) else str(d)


def dim_from(p: DX.Poly, text: str, parts: Sequence[T.Dim]) -> T.Dim:
    """The dim of normal form `p`, written `text`: a literal when every part
    is one (`(4+3)` is 7), else an expression that keeps the names
    (`(H+3)`, shown with its value when the names have one)."""
    v = DX.value(p)
    if v is not None and all(isinstance(d, T.DimLit) for d in parts):
        return T.DimLit(v)
    return T.dim_of_poly(p, text)


def poly_dim(p: DX.Poly) -> T.Dim:
    """The dim of a normal form with no text of its own: a number, a generic
    dim, `(h/2)`, or `(2*h+1)` rendered."""
    one_division = len(p) == 1 and p[0][1] == 1 and len(p[0][0]) == 1 and p[0][0][0][0] == "d"
    return T.DimExpr(DX.render(p), p) if one_division else T.dim_of_poly(p)


def buffer_arg(ctx: RuleContext, a: CallArg, env: Env, fn: str, pname: str) -> T.TensorT | None:
    """A tensor that a built-in updates in place (batch_norm's running
    statistics): it must be a buffer field of a model, `bn.running_mean`,
    so that the update is the model's. A plain tensor, or a param, is
    E0301."""
    t = tensor_arg(ctx, a, env, fn, pname, float_only=False)
    if t is None:
        return None
    e = a.node
    owner = ctx.types.get(e.value) if isinstance(e, A.Field) else None
    if isinstance(e, A.Field) and isinstance(owner, T.ModelT):
        model = ctx.g.models.get(owner.name)
        field = model.field(e.name.text) if model is not None else None
        if field is None or field.kind == "buffer":
            return t
        found = f"param {e.name.text} of {owner.name}"
    else:
        found = T.describe(t)
    ctx.diags.append(
        C.E0301.at(
            e.span,
            context=f"{pname} of {fn} is updated in place: ",
            expected="a buffer of a model (such as bn.running_mean)",
            found=found,
        )
    )
    return None


def quiet_dim(c: RuleContext, a: CallArg | None, env: Env) -> None:
    """The ref of an `over=` dim whose operand could not be typed (one dim;
    a tuple is left alone): navigation still works, nothing is reported."""
    if a is None:
        return
    if isinstance(a.node, A.Name) and a.node.name in c.fn.generics:
        c.refs[a.node] = Ref("generic", a.node.name, c.fn.name)
    elif (const := c.dim_constant(a.node)) is not None:
        c.refs[const[0]] = Ref("dim", const[1])


def dim_of_arg(c: RuleContext, e: A.Expr, fn: str, what: str) -> T.Dim | None:
    """A dim given as an argument: a dim constant, a generic dim or a literal."""
    if isinstance(e, A.IntLit):
        if e.value <= 0:
            c.diags.append(C.E0208.at(e.span, value=e.value))
            return None
        return T.DimLit(e.value)
    if isinstance(e, A.Name) and e.name in c.fn.generics:
        c.refs[e] = Ref("generic", e.name, c.fn.name)
        c.types[e] = T.INT
        return T.DimVar(e.name)
    const = c.dim_constant(e)
    if const is not None:
        c.refs[const[0]] = Ref("dim", const[1])
        c.types[e] = T.INT
        value = c.g.names.dim_values.get(const[1])
        return T.DimConst(const[1], value) if value is not None else T.DimUnknown()
    number = c.int_constant(e)
    if number is not None:  # an Int constant: its number, as a shape reads it
        c.refs[number[0]] = Ref("const", number[1])
        c.types[e] = T.INT
        if number[2] <= 0:
            c.diags.append(C.E0208.at(e.span, value=number[2]))
            return None
        return T.DimLit(number[2])
    if isinstance(e, A.Name) and e.name in c.run_dims and (c.env_now is None or e.name not in c.env_now.vars):
        # a size read from a file (`[n D]`): arange(n), randperm(n, seed=0)
        dim = c.run_dims[e.name]
        c.refs[e] = Ref("size", dim.key, c.fn.name)
        c.types[e] = T.INT
        return dim
    var = c.int_var(e.name) if isinstance(e, A.Name) else None
    if isinstance(e, A.Name) and var is not None:
        # an Int as a size: a dim known only at run time, `arange(n)` is [n] Index[n]
        c.used.update(var.defs)
        c.refs[e] = Ref("local", e.name, c.fn.name, tuple(var.defs))
        c.types[e] = T.INT
        return c.int_dim(e.name, var)
    if (
        isinstance(e, A.Call)
        and isinstance(e.func, A.Name)
        and e.func.name in ("min", "max")
        and (c.env_now is None or e.func.name not in c.env_now.vars)
        and len(e.args) >= 2
        and all(x.keyword is None for x in e.args)
    ):
        return _min_max_dim(c, e, fn, what)
    written = dim_expr(c, e) if isinstance(e, A.Binary) else None
    if written is not None:  # dim arithmetic, as in a shape: arange((P+G))
        ctx = c.type_context()
        dim = ctx.dim(written)
        c._take(ctx)
        return None if isinstance(dim, T.DimUnknown) else dim
    c.diags.append(
        C.E0301.at(
            e.span,
            context=f"{what} of {fn}: ",
            expected="a dim (a dim constant, a generic dim, a number or dim arithmetic of them)",
            found=expr_text(e),
        )
    )
    return None


def _min_max_dim(c: RuleContext, e: A.Call, fn: str, what: str) -> T.Dim | None:
    """`arange(min(T, 8))`: min or max of sizes whose values are known, the
    literal it comes to (of a generic dim, E0301: a dim is not a min of dims)."""
    assert isinstance(e.func, A.Name)
    name = e.func.name
    parts = [dim_of_arg(c, x.value, fn, what) for x in e.args]
    if any(d is None for d in parts):
        return None
    values = [DX.value(p) if (p := T.dim_poly(d)) is not None else None for d in parts if d is not None]
    for x in e.args:
        c.types[x.value] = T.INT
    c.types[e] = T.INT
    c.refs[e.func] = Ref("builtin", name)  # compiles as the number form, rt.max_of_numbers
    known = [v for v in values if v is not None]
    if len(known) == len(values):
        return T.DimLit(max(known) if name == "max" else min(known))
    c.diags.append(
        C.E0301.at(
            e.span,
            context=f"{what} of {fn}: ",
            expected="a dim (min and max of sizes whose values are known, such as dim constants)",
            found=expr_text(e),
        )
    )
    return None


def dim_expr(c: RuleContext, e: A.Expr) -> A.Dim | None:
    """A value expression of dims, generic dims and integer literals joined by
    + - * / // as the dim expression a shape would write (`(P+G)`), with the refs
    of its names; None when something else is in it."""
    if isinstance(e, A.IntLit):
        c.types[e] = T.INT
        return A.DimInt(e.span, e.value)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/", "//", "%"):
        left, right = dim_expr(c, e.left), dim_expr(c, e.right)
        if left is None or right is None:
            return None
        c.types[e] = T.INT
        return A.DimBinary(e.span, e.op, left, right)
    if isinstance(e, A.Name) and e.name in c.fn.generics:
        c.refs[e] = Ref("generic", e.name, c.fn.name)
        c.types[e] = T.INT
        return A.DimName(e.span, e.name)
    var = c.int_var(e.name) if isinstance(e, A.Name) else None
    if isinstance(e, A.Name) and var is not None:
        # an Int: the shape's reader takes it as a size known only at run time
        c.used.update(var.defs)
        c.refs[e] = Ref("local", e.name, c.fn.name, tuple(var.defs))
        c.types[e] = T.INT
        return A.DimName(e.span, e.name)
    if isinstance(e, A.Name) and e.name in c.run_dims and (c.env_now is None or e.name not in c.env_now.vars):
        c.refs[e] = Ref("size", c.run_dims[e.name].key, c.fn.name)
        c.types[e] = T.INT
        return A.DimName(e.span, e.name)
    const = c.dim_constant(e)
    written = dotted_text(e)
    if const is not None and written is not None:
        c.refs[const[0]] = Ref("dim", const[1])
        c.types[e] = T.INT
        return A.DimName(e.span, written)
    number = c.int_constant(e)
    if number is not None and written is not None:  # an Int constant: its number, as a shape reads it
        c.refs[number[0]] = Ref("const", number[1])
        c.types[e] = T.INT
        return A.DimName(e.span, written)
    return None


def grad_type_arg(c: RuleContext, a: CallArg, env: Env) -> T.Type | None:
    """`Grad[M]` written as zeros' or randn's argument: the gradient type
    (None when the argument is something else). The model is read as any
    model named in an expression (`M`, `layers.M`, `Linear[D, H]`), so the
    gradient holds its qualified name, the one every other type of that
    model holds (`from layers import M` and `layers.M` are one type)."""
    e = a.node
    if not (
        isinstance(e, A.Index)
        and isinstance(e.value, A.Name)
        and e.value.name == "Grad"
        and "Grad" not in env.vars
        and isinstance(e.index, (A.Name, A.Field, A.Index))
    ):
        return None
    if isinstance(e.index, A.Name) and e.index.name not in env.vars:
        bounds = dict(c.fn.type_params).get(e.index.name)
        if bounds is not None:  # `zeros(Grad[M])` of `fn f[M: CharModel]`
            if not bounds:
                return T.UNKNOWN  # its bound is wrong, reported at it
            t = T.GradT(e.index.name, None, (), (), bounds)
            c.types[e] = t
            return t
        kind = c.global_kind(e.index.name)
        if kind is not None and kind.startswith("broken"):
            return T.UNKNOWN
        if kind not in ("model", "alias"):
            name = e.index.name
            c.diags.append(C.E0303.at(e.span, type=f"Grad[{name}]", reason=C.E0303.say("not_a_model", type=name)))
            return T.UNKNOWN
    inner = c.expr(e.index, env)
    if isinstance(inner, T.ModelClassT) and inner.applied:
        t = T.GradT(inner.name, None, inner.dims, inner.options)
        c.types[e] = t
        return t
    if isinstance(inner, T.ModelClassT):
        sig = c.g.names.model_sigs.get(inner.name)
        dims = sig.dims if sig is not None else ()
        written = expr_text(e.index)
        c.diags.append(
            C.E0910.at(
                e.index.span,
                model=written,
                problem=C.E0910.say("grad_dims", takes=takes_dims(dims), written=written, dims=", ".join(dims)),
            )
        )
    elif not isinstance(inner, T.UnknownT):
        written = expr_text(e.index)
        c.diags.append(C.E0303.at(e.span, type=f"Grad[{written}]", reason=C.E0303.say("not_a_model", type=written)))
    return T.UNKNOWN
