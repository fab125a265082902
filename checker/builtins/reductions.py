"""Built-ins along a dim: softmax and log_softmax, the reductions (sum mean
max min, argmax, std and var with torch's `correction=`, logsumexp, norm),
topk and sort. `over=` names one dim or a tuple of them, which the result
loses (or keeps as 1 with keep=True); without `over=` they are of every
value. topk and sort give a pair (values, indices) whose indices are labels
of the dim sorted along, `Index[D]`; topk's `k` is a size that becomes the
new dim: `topk(x, K, over=D)` of `[b D]` is `([b K], [b K] Index[D])`.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..declarations import leaf_params, model_closure
from ..results import Ref
from .args import (
    Bound,
    axes_value,
    bool_arg,
    dim_arg,
    dim_value_arg,
    keep_arg,
    named_over,
    number_arg,
    over_axes,
    quiet_dim,
    quiet_over,
    tensor_arg,
    without,
)
from .registry import builtin
from .spec import KEEP, OVER, OVER_OPT, BParam, Builtin, X


def _reduced(dims: tuple[T.Dim, ...], axis: int, keep: bool) -> tuple[T.Dim, ...]:
    """The dims of a reduction along `axis`: without it, or with it as 1 (keep=True)."""
    return dims[:axis] + ((T.DimLit(1),) if keep else ()) + dims[axis + 1 :]


@builtin(
    Builtin(
        name="softmax",
        params=(X, OVER),
        signature="softmax(x: [..] Float, over=d) -> [..] Prob",
        doc="Normalised exponentials along dim d; each slice sums to 1.",
        example="p = softmax(x, over=D)",
        group="along",
        runtime="softmax",
        refine="prob",
        rest_ok=True,
        role="prob",
    ),
    Builtin(
        name="log_softmax",
        params=(X, OVER),
        signature="log_softmax(x: [..] Float, over=d) -> [..] Float",
        doc="log(softmax(x, over=d)), computed stably.",
        example="lp = log_softmax(x, over=D)",
        group="along",
        runtime="log_softmax",
        rest_ok=True,
        role="logprob",
    ),
)
def _softmax(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = tensor_arg(c, bound["x"], env, b.name, "x")
    if t is None:
        quiet_dim(c, bound.get("over"), env)
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, t, b.name, bound["x"])
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    t = named_over(c, t, axis, bound["over"])
    return T.TensorT(t.dims, T.with_refine(t.elem, b.refine))


@builtin(
    Builtin(
        name="sum",
        params=(X, OVER_OPT, KEEP),
        signature="sum(x: [..], over=d, keep=False) -> [..]",
        doc="Sum along dim d, or dims over=(d1, d2) (the result loses them; with keep=True each becomes 1), or of every "
        "value when over= is left out.",
        example="s = sum(x, over=D)",
        group="along",
        runtime="sum",
        grad_runtime="sum_grad",
        rest_ok=True,
    ),
    Builtin(
        name="mean",
        params=(X, OVER_OPT, KEEP),
        signature="mean(x: [..] Float, over=d, keep=False) -> [..]",
        doc="Mean along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of every value.",
        example="s = mean(x)",
        group="along",
        runtime="mean",
        grad_runtime="mean_grad",
        rest_ok=True,
    ),
)
def _reduce(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    return _reduce_typed(c, node, b, bound, env, c.value(bound["x"].node, env))


def _reduce_typed(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env, t0: T.Type) -> T.Type:
    if T.is_example_grads(t0) and b.name in ("mean", "sum"):
        return _reduce_example_grads(c, node, b, bound, env, t0)
    float_only = b.name == "mean"
    t = tensor_arg(c, bound["x"], env, b.name, "x", float_only=float_only, typed=t0)
    keep = keep_arg(c, bound.get("keep"), env)
    if t is None:
        quiet_over(c, bound.get("over"))
        return T.UNKNOWN
    if t.elem.is_bool and b.name != "sum":
        c.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
        return T.UNKNOWN
    elem = t.elem
    if b.name == "sum":
        elem = T.Elem("i64") if elem.is_bool else T.with_refine(T.Elem(elem.dtype), "nonneg" if elem.nonneg else None)
    elif b.name == "mean":
        elem = T.with_refine(T.Elem(elem.dtype), elem.refine)
    # max / min keep the element type, refinement and Index included
    over = bound.get("over")
    if over is None:
        c.axes[node] = None
        if keep is None:
            return T.UNKNOWN
        return T.TensorT(tuple(T.DimLit(1) for _ in t.dims) if keep else (), elem)
    got = over_axes(c, over, env, t, b.name, bound["x"])  # over=H or over=(H, W)
    c.axes[node] = axes_value(over, got[0]) if got is not None else None
    if got is None or keep is None:
        return T.UNKNOWN
    return T.TensorT(without(t.dims, got[0], keep), elem)


@builtin(
    Builtin(
        name="max",
        params=(X, OVER_OPT, KEEP),
        signature="max(x: [..], over=d, keep=False) -> [..] / max(a: Int, b: Int, ...) -> Int",
        doc="Largest value along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of "
        "every value. Of two numbers or more, the largest, as Python's max(1, n // 2) ([E0960](diagnostics.md#e0960)).",
        example="s = max(x, over=D)",
        group="along",
        runtime="max",
        number_runtime="max_of_numbers",
        variadic=True,
        rest_ok=True,
    ),
    Builtin(
        name="min",
        params=(X, OVER_OPT, KEEP),
        signature="min(x: [..], over=d, keep=False) -> [..] / min(a: Int, b: Int, ...) -> Int",
        doc="Smallest value along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of "
        "every value. Of two numbers or more, the smallest, as Python's min(k, V).",
        example="s = min(x)",
        group="along",
        runtime="min",
        number_runtime="min_of_numbers",
        variadic=True,
        rest_ok=True,
    ),
    raw=True,
)
def _max_min(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    """max and min: of two numbers or more, a number (Python's max and min);
    of one tensor, the reduction. The first argument decides which."""
    positional = [a for a in args if a.keyword is None]
    first = positional[0] if positional else None
    t0 = c.value(first.node, env) if first is not None and not isinstance(first.node, A.TensorType) else None
    rest = [a for a in args if a is not first]
    if isinstance(t0, T.NumberT) and t0.kind in ("Int", "Float") and first is not None:
        return _of_numbers(c, b, first, t0, rest, env)
    if any(a.keyword is None and isinstance(a.node, A.NameList) for a in args):  # torch's list: its own E0301
        _eval(c, rest, env)
        return T.UNKNOWN
    if isinstance(t0, T.TensorT) and len(positional) > 1:  # max(x, y): maximum(x, y) is the elementwise one
        tensor_fn = "maximum" if b.name == "max" else "minimum"
        reason = C.E0960.say("tensors", fn=b.name, count=len(positional), tensor_fn=tensor_fn)
        c.diags.append(C.E0960.at(positional[1].node.span, fn=b.name, reason=reason))
        _eval(c, rest, env)
        return T.UNKNOWN
    matched = c.bind_args(b.name, [(p.name, p.required, p.keyword_only) for p in b.params], args, paren)
    if matched is None:
        _eval(c, rest, env)
        return T.UNKNOWN
    outer, c.builtin_now = c.builtin_now, b.name
    try:
        return _reduce_typed(c, node, b, matched[0], env, t0 if t0 is not None else c.value(matched[0]["x"].node, env))
    finally:
        c.builtin_now = outer


def _eval(c: RuleContext, args: list[CallArg], env: Env) -> None:
    for a in args:
        if not isinstance(a.node, A.TensorType):
            c.value(a.node, env)


def _of_numbers(c: RuleContext, b: Builtin, first: CallArg, t0: T.NumberT, rest: list[CallArg], env: Env) -> T.Type:
    """`max(a, b, ...)` of Ints and Floats: an Int when every one is."""
    kinds = [t0.kind]
    for i, a in enumerate(rest, 2):
        t = c.value(a.node, env) if not isinstance(a.node, A.TensorType) else None
        if a.keyword is not None:
            if not isinstance(t, T.UnknownT):
                reason = C.E0960.say("keyword", keyword=a.keyword, fn=b.name)
                c.diags.append(C.E0960.at(a.span, fn=b.name, reason=reason))
            return T.UNKNOWN
        if isinstance(t, T.UnknownT):
            return T.UNKNOWN
        if not (isinstance(t, T.NumberT) and t.kind in ("Int", "Float")):
            found = T.describe(t) if t is not None else "a shape"
            tensor_fn = "maximum" if b.name == "max" else "minimum"
            reason = C.E0960.say("not_number", index=i, found=found, tensor_fn=tensor_fn)
            c.diags.append(C.E0960.at(a.node.span, fn=b.name, reason=reason))
            _eval(c, rest[i - 1 :], env)
            return T.UNKNOWN
        kinds.append(t.kind)
    if len(kinds) < 2:
        c.diags.append(C.E0960.at(first.node.span, fn=b.name, reason=C.E0960.say("one", fn=b.name)))
        return T.UNKNOWN
    return T.NumberT("Int" if all(k == "Int" for k in kinds) else "Float")


def _reduce_example_grads(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env, t: T.Type) -> T.Type:
    """`mean(gs, over=b)`, `sum(gs, over=b)`: per-example gradients `[b]
    Grad[M]` averaged or summed over the examples, a `Grad[M]`."""
    assert isinstance(t, T.StackT)
    over = bound.get("over")
    ok = over is not None and "keep" not in bound
    if over is not None and isinstance(over.node, (A.Name, A.Field)):
        const = c.dim_constant(over.node)
        if isinstance(over.node, A.Name) and over.node.name in c.fn.generics:
            d = over.node.name
            c.refs[over.node] = Ref("generic", d, c.fn.name)
            ok = ok and T.dims_equal(T.DimVar(d), t.dim)
        elif const is not None:
            node, d = const
            c.refs[node] = Ref("dim", d)
            ok = ok and T.dims_equal(T.DimConst(d, c.g.names.dim_values.get(d) or 0), t.dim)
        else:
            ok = False
    elif over is not None:
        ok = False
    if not ok:
        c.diags.append(C.E1108.at(node.span, operation=f"{b.name}({t}) without over={t.dim}"))
        return T.UNKNOWN
    c.axes[node] = 0
    return t.item


@builtin(
    Builtin(
        name="argmax",
        params=(X, OVER, KEEP),
        signature="argmax(x: [..], over=d, keep=False) -> [..] Index[d]",
        doc="Position of the largest value along dim d: an Index into d (with keep=True, d becomes 1).",
        example="i = argmax(x, over=D)",
        group="along",
        runtime="argmax",
        rest_ok=True,
    ),
)
def _argmax(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = tensor_arg(c, bound["x"], env, "argmax", "x", float_only=False)
    keep = keep_arg(c, bound.get("keep"), env)
    if t is None:
        quiet_dim(c, bound.get("over"), env)
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, t, "argmax", bound["x"])
    c.axes[node] = axis
    if axis is None or keep is None:
        return T.UNKNOWN
    t = named_over(c, t, axis, bound["over"])
    return T.TensorT(_reduced(t.dims, axis, keep), T.index_of(t.dims[axis]))


@builtin(
    *(
        Builtin(
            name=name,
            params=(X, OVER_OPT, BParam(name="correction", required=False, keyword_only=True), KEEP),
            signature=f"{name}(x: [..] Float, over=d, correction=1, keep=False) -> [..] NonNeg",
            doc=f"{what} along dim d or dims (d1, d2), or of every value; correction=1 (torch's default) divides the "
            "squares by n-1, correction=0 by n.",
            example=f"s = {name}(x, over=D)",
            group="along",
            runtime=name,
            rest_ok=True,
        )
        for name, what in (("std", "Standard deviation"), ("var", "Variance"))
    ),
)
def _spread(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """std(x, over=d, correction=1, keep=False), var(...): NonNeg."""
    t = tensor_arg(c, bound["x"], env, b.name, "x")
    number_arg(c, bound.get("correction"), env, f"correction of {b.name}", 0, kind="Int")
    keep = keep_arg(c, bound.get("keep"), env)
    over = bound.get("over")
    if t is None:
        quiet_over(c, over)
        return T.UNKNOWN
    elem = T.Elem(t.elem.dtype, "nonneg")
    if over is None:
        c.axes[node] = None
        if keep is None:
            return T.UNKNOWN
        return T.TensorT(tuple(T.DimLit(1) for _ in t.dims) if keep else (), elem)
    got = over_axes(c, over, env, t, b.name, bound["x"])
    c.axes[node] = axes_value(over, got[0]) if got is not None else None
    if got is None or keep is None:
        return T.UNKNOWN
    return T.TensorT(without(t.dims, got[0], keep), elem)


@builtin(
    Builtin(
        name="logsumexp",
        params=(X, OVER, KEEP),
        signature="logsumexp(x: [..] Float, over=d, keep=False) -> [..] Float",
        doc="log(sum(exp(x))) along dim d or dims (d1, d2), computed stably (torch's logsumexp).",
        example="s = logsumexp(x, over=D)",
        group="along",
        runtime="logsumexp",
        rest_ok=True,
    ),
)
def _logsumexp(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """logsumexp(x, over=d, keep=False): log(sum(exp(x))) along d, computed
    stably; a plain float (it is negative when every value is small)."""
    t = tensor_arg(c, bound["x"], env, b.name, "x")
    keep = keep_arg(c, bound.get("keep"), env)
    if t is None:
        quiet_over(c, bound["over"])
        return T.UNKNOWN
    got = over_axes(c, bound["over"], env, t, b.name, bound["x"])
    c.axes[node] = axes_value(bound["over"], got[0]) if got is not None else None
    if got is None or keep is None:
        return T.UNKNOWN
    return T.TensorT(without(t.dims, got[0], keep), T.Elem(t.elem.dtype))


@builtin(
    Builtin(
        name="norm",
        params=(X, OVER_OPT, BParam(name="p", required=False, keyword_only=True), KEEP),
        signature="norm(x: Grad[M] or [..] Float, over=d, p=2.0, keep=False) -> [..] NonNeg",
        doc="The 2-norm of all values together (of every field of a gradient); of a tensor, also along dim d or dims "
        "(d1, d2), and the p-norm with p= (p=inf: the largest absolute value).",
        example="n = norm(x)",
        group="tensor",
        runtime="norm",
        rest_ok=True,
    ),
)
def _norm(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = c.value(bound["x"].node, env)
    over, p, keep_a = bound.get("over"), bound.get("p"), bound.get("keep")
    if T.is_example_grads(t) or isinstance(t, T.GradT):
        extra = next((a for a in (over, p, keep_a) if a is not None), None)
        if extra is not None:  # a gradient's norm is of all its values together
            c.diags.append(C.E1108.at(extra.span, operation=f"norm({T.describe(t)}, {extra.keyword}=...)"))
            return T.UNKNOWN
    if T.is_example_grads(t):
        assert isinstance(t, T.StackT) and isinstance(t.item, T.GradT)
        return T.TensorT((t.dim,), _grad_norm_elem(c, t.item))
    if isinstance(t, T.GradT):
        return T.scalar(_grad_norm_elem(c, t))
    number_arg(c, p, env, "p of norm", 0.0, lo_open=True)
    keep = keep_arg(c, keep_a, env)
    if isinstance(t, T.UnknownT):
        quiet_over(c, over)
        return T.scalar(T.NONNEG) if over is None and keep is False else T.UNKNOWN
    if not (isinstance(t, T.TensorT) and t.elem.is_float):
        c.diags.append(
            C.E0301.at(
                bound["x"].node.span,
                context="argument of norm: ",
                expected="a gradient or a float tensor",
                found=T.describe(t),
            )
        )
        return T.UNKNOWN
    elem = T.Elem(t.elem.dtype, "nonneg")
    if over is None:
        c.axes[node] = None
        if keep is None:
            return T.UNKNOWN
        return T.TensorT(tuple(T.DimLit(1) for _ in t.dims) if keep else (), elem)
    got = over_axes(c, over, env, t, "norm", bound["x"])
    c.axes[node] = axes_value(over, got[0]) if got is not None else None
    if got is None or keep is None:
        return T.UNKNOWN
    return T.TensorT(without(t.dims, got[0], keep), elem)


def _grad_norm_elem(c: RuleContext, g: T.GradT) -> T.Elem:
    """A gradient's norm: NonNeg, of its first leaf param's dtype (sub-models' included)."""
    for m in model_closure(c.g, g.of):
        c.global_kind(m if isinstance(m, str) else m.name)  # the leaves depend on every model inside g's
    leaves = leaf_params(c.g, g.of)
    first = leaves[0][2].type if leaves else None
    return T.Elem(first.elem.dtype if isinstance(first, T.TensorT) else "f32", "nonneg")


def _sortable(c: RuleContext, b: Builtin, bound: Bound, env: Env) -> T.TensorT | None:
    t = tensor_arg(c, bound["x"], env, b.name, "x", float_only=False)
    if t is not None and t.elem.is_bool:
        c.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
        return None
    return t


@builtin(
    Builtin(
        name="topk",
        params=(X, BParam(name="k"), OVER, BParam(name="largest", required=False, keyword_only=True)),
        signature="topk(x: [.. D ..], k, over=D, largest=True) -> ([.. k ..], [.. k ..] Index[D])",
        doc="The k largest values along D, largest first (the smallest, smallest first, with largest=False), and their "
        "positions as labels of D; k is an integer literal or a dim, and becomes the new dim.",
        example="v, i = topk(x, 2, over=D)",
        group="along",
        runtime="topk",
        note="k is at most D's size ([E0214](diagnostics.md#e0214)).",
    ),
)
def _topk(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """topk(x, k, over=D, largest=True): the k largest (smallest) values
    along D, in order, and where they are."""
    t = _sortable(c, b, bound, env)
    k = dim_value_arg(c, bound["k"], env, "topk", "k", ints=True)
    bool_arg(c, bound.get("largest"), env, "largest of topk")
    if t is None:
        quiet_over(c, bound["over"])
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, t, "topk", bound["x"])
    c.axes[node] = axis
    if axis is None or k is None:
        return T.UNKNOWN
    t = named_over(c, t, axis, bound["over"])
    d = t.dims[axis]
    kv, dv = T.dim_value(k), T.dim_value(d)
    if kv is not None and dv is not None and kv > dv:
        shown = f"{d}={dv}" if not isinstance(d, T.DimLit) else str(d)
        reason = C.E0214.say("k_above_size", k=kv, dim=shown, axis=axis, type=t)
        c.diags.append(C.E0214.at(bound["k"].node.span, operation="topk", reason=reason))
        return T.UNKNOWN
    dims = t.dims[:axis] + (k,) + t.dims[axis + 1 :]
    return T.TupleT((T.TensorT(dims, t.elem), T.TensorT(dims, T.index_of(d))))


@builtin(
    Builtin(
        name="sort",
        params=(X, OVER, BParam(name="descending", required=False, keyword_only=True)),
        signature="sort(x: [.. D ..], over=D, descending=False) -> ([.. D ..], [.. D ..] Index[D])",
        doc="The values along D in ascending order (descending with descending=True) and the positions they came "
        "from, as labels of D.",
        example="v, i = sort(x, over=D)",
        group="along",
        runtime="sort",
    ),
)
def _sort(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """sort(x, over=D, descending=False): the values along D in order, and
    the positions they came from."""
    t = _sortable(c, b, bound, env)
    bool_arg(c, bound.get("descending"), env, "descending of sort")
    if t is None:
        quiet_over(c, bound["over"])
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, t, "sort", bound["x"])
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    t = named_over(c, t, axis, bound["over"])
    return T.TupleT((t, T.TensorT(t.dims, T.index_of(t.dims[axis]))))
