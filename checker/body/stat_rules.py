"""Typing rules of the statistics along dims: std and var (torch's
`correction=`, 1 by default: the unbiased estimate) and logsumexp. Like the
reductions, `over=` names one dim or a tuple of them, which the result loses
(or keeps as 1 with keep=True); std and var without `over=` are of every
value."""

from __future__ import annotations

from .. import ast as A
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import Env
from .rule_args import axes_value, keep_arg, number_arg, over_axes, quiet_over, without


@rule("spread")
def _spread(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """std(x, over=d, correction=1, keep=False), var(...): NonNeg."""
    t = ctx.tensor_arg(bound["x"], env, b.name, "x")
    number_arg(ctx, bound.get("correction"), env, f"correction of {b.name}", 0, kind="Int")
    keep = keep_arg(ctx, bound.get("keep"), env)
    over = bound.get("over")
    if t is None:
        quiet_over(ctx, over)
        return T.UNKNOWN
    elem = T.Elem(t.elem.dtype, "nonneg")
    if over is None:
        ctx.axes[node] = None
        if keep is None:
            return T.UNKNOWN
        return T.TensorT(tuple(T.DimLit(1) for _ in t.dims) if keep else (), elem)
    got = over_axes(ctx, over, env, t, b.name, bound["x"])
    ctx.axes[node] = axes_value(over, got[0]) if got is not None else None
    if got is None or keep is None:
        return T.UNKNOWN
    return T.TensorT(without(t.dims, got[0], keep), elem)


@rule("logsumexp")
def _logsumexp(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """logsumexp(x, over=d, keep=False): log(sum(exp(x))) along d, computed
    stably; a plain float (it is negative when every value is small)."""
    t = ctx.tensor_arg(bound["x"], env, b.name, "x")
    keep = keep_arg(ctx, bound.get("keep"), env)
    if t is None:
        quiet_over(ctx, bound["over"])
        return T.UNKNOWN
    got = over_axes(ctx, bound["over"], env, t, b.name, bound["x"])
    ctx.axes[node] = axes_value(bound["over"], got[0]) if got is not None else None
    if got is None or keep is None:
        return T.UNKNOWN
    return T.TensorT(without(t.dims, got[0], keep), T.Elem(t.elem.dtype))
