"""Typing rules of topk and sort: a pair (values, indices) whose indices are
labels of the dim sorted along, `Index[D]`, so `x[i]`-style gathers and
losses keep the link between a position and its dim. topk's `k` is a size
(an integer literal, a dim constant or a generic dim) and becomes the new
dim: `topk(x, K, over=D)` of `[b D]` is `([b K], [b K] Index[D])`."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import Env
from .rule_args import bool_arg, dim_value_arg, quiet_over


def _sortable(ctx: RuleContext, b: Builtin, bound: Bound, env: Env) -> T.TensorT | None:
    t = ctx.tensor_arg(bound["x"], env, b.name, "x", float_only=False)
    if t is not None and t.elem.is_bool:
        ctx.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
        return None
    return t


@rule("topk")
def _topk(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """topk(x, k, over=D, largest=True): the k largest (smallest) values
    along D, in order, and where they are."""
    t = _sortable(ctx, b, bound, env)
    k = dim_value_arg(ctx, bound["k"], env, "topk", "k", ints=True)
    bool_arg(ctx, bound.get("largest"), env, "largest of topk")
    if t is None:
        quiet_over(ctx, bound["over"])
        return T.UNKNOWN
    axis = ctx.dim_arg(bound["over"], env, t, "topk", bound["x"])
    ctx.axes[node] = axis
    if axis is None or k is None:
        return T.UNKNOWN
    t = ctx.named_over(t, axis, bound["over"])
    d = t.dims[axis]
    kv, dv = T.dim_value(k), T.dim_value(d)
    if kv is not None and dv is not None and kv > dv:
        shown = f"{d}={dv}" if not isinstance(d, T.DimLit) else str(d)
        reason = f"k={kv} is more than the size of {shown} (dim {axis} of {t})"
        ctx.diags.append(C.E0214.at(bound["k"].node.span, operation="topk", reason=reason))
        return T.UNKNOWN
    dims = t.dims[:axis] + (k,) + t.dims[axis + 1 :]
    return T.TupleT((T.TensorT(dims, t.elem), T.TensorT(dims, T.index_of(d))))


@rule("sort")
def _sort(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """sort(x, over=D, descending=False): the values along D in order, and
    the positions they came from."""
    t = _sortable(ctx, b, bound, env)
    bool_arg(ctx, bound.get("descending"), env, "descending of sort")
    if t is None:
        quiet_over(ctx, bound["over"])
        return T.UNKNOWN
    axis = ctx.dim_arg(bound["over"], env, t, "sort", bound["x"])
    ctx.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    t = ctx.named_over(t, axis, bound["over"])
    return T.TupleT((t, T.TensorT(t.dims, T.index_of(t.dims[axis]))))
