"""Typing rules of the normalisations with state or groups: batch_norm
(torch's F.batch_norm: batch statistics under Train, which also update the
running statistics in place; the running statistics under Eval) and
group_norm.

batch_norm's running statistics must be buffers of a model
(`bn.running_mean`): the run-time op updates them in place, outside
autograd, and only a model's buffer makes that update visible to the
program (a local tensor would change unseen). This is the one place a
function that is not `mut` changes a model, as torch's BatchNorm does in
training; the param-read analysis is unaffected, since buffers are not
params."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import CallArg, Env
from .rule_args import buffer_arg, dim_value_arg, mode_arg, number_arg, quiet_over


def _per_channel(
    ctx: RuleContext, node: A.Node, a: CallArg, t: T.TensorT | None, fn: str, channels: T.Dim, x: T.TensorT
) -> bool:
    """A per-channel tensor (running statistics, weight, bias): `[C]` of x's element type."""
    if t is None:
        return False
    if t.rank != 1 or not T.dims_equal(t.dims[0], channels):
        want = T.TensorT((channels,), t.elem)
        ctx.diags.append(C.E0201.at(a.node.span, context=f"{a_name(a)} of {fn}: ", expected=str(want), found=str(t)))
        return False
    if t.elem.dtype != x.elem.dtype:
        ctx.diags.append(
            C.E0302.at(
                a.node.span,
                context=f"{a_name(a)} of {fn}: ",
                expected=T.TensorT((channels,), T.Elem(x.elem.dtype)).show_elem(),
                found=t.show_elem(),
            )
        )
        return False
    return True


def a_name(a: CallArg) -> str:
    return a.keyword or "argument"


@rule("batch_norm")
def _batch_norm(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """batch_norm(x, running_mean, running_var, weight, bias, mode, over=C,
    momentum=0.1, eps=1e-5, num_batches_tracked=n)."""
    x = ctx.tensor_arg(bound["x"], env, b.name, "x")
    stats = [buffer_arg(ctx, bound[k], env, b.name, k) for k in ("running_mean", "running_var")]
    affine = [ctx.tensor_arg(bound[k], env, b.name, k) for k in ("weight", "bias")]
    ok = mode_arg(ctx, bound["mode"], env, b.name)
    ok = number_arg(ctx, bound.get("momentum"), env, "momentum of batch_norm", 0.0, 1.0) and ok
    ok = number_arg(ctx, bound.get("eps"), env, "eps of batch_norm", 0.0, lo_open=True) and ok
    tracked_a = bound.get("num_batches_tracked")
    tracked = buffer_arg(ctx, tracked_a, env, b.name, "num_batches_tracked") if tracked_a is not None else None
    if tracked_a is not None and tracked is not None and (tracked.rank != 0 or tracked.elem.dtype != "i64"):
        ctx.diags.append(
            C.E0301.at(
                tracked_a.node.span,
                context="num_batches_tracked of batch_norm: ",
                expected="a [] i64 buffer (the count of training batches)",
                found=T.describe(tracked),
            )
        )
        ok = False
    if x is None:
        quiet_over(ctx, bound["over"])
        return T.UNKNOWN
    if x.rank < 2:
        ctx.diags.append(
            C.E0210.at(bound["x"].node.span, operation=b.name, needed="2 dims or more (a batch and C)", found=str(x))
        )
        return T.UNKNOWN
    axis = ctx.dim_arg(bound["over"], env, x, b.name, bound["x"])
    ctx.axes[node] = axis
    if axis is None or not ok or (tracked_a is not None and tracked is None):
        return T.UNKNOWN
    x = ctx.named_over(x, axis, bound["over"])
    channels = x.dims[axis]
    names = ("running_mean", "running_var", "weight", "bias")
    for k, t in zip(names, stats + affine):
        a = bound[k]
        if not _per_channel(ctx, node, CallArg(a.node, k, a.span, a.arg), t, b.name, channels, x):
            return T.UNKNOWN
    return T.TensorT(x.dims, T.Elem(x.elem.dtype))


@rule("linear")
def _linear(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """linear(x: [.. I], weight: [I O], bias: [O]): x @ weight + bias."""
    x = ctx.tensor_arg(bound["x"], env, b.name, "x")
    w = ctx.tensor_arg(bound["weight"], env, b.name, "weight")
    bias = ctx.tensor_arg(bound["bias"], env, b.name, "bias") if "bias" in bound else None
    if x is None or w is None or ("bias" in bound and bias is None):
        return T.UNKNOWN
    if w.rank != 2:
        ctx.diags.append(
            C.E0210.at(bound["weight"].node.span, operation=b.name, needed="a weight of 2 dims, [I O]", found=str(w))
        )
        return T.UNKNOWN
    if w.elem.dtype != x.elem.dtype:
        expected = T.TensorT(w.dims, T.Elem(x.elem.dtype)).show_elem()
        ctx.diags.append(
            C.E0302.at(bound["weight"].node.span, context="weight of linear: ", expected=expected, found=w.show_elem())
        )
        return T.UNKNOWN
    dims = S.matmul(x.dims, w.dims)
    if dims == "scalar" or x.rank < 1:
        ctx.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed="1 dim or more", found=str(x)))
        return T.UNKNOWN
    if isinstance(dims, S.DimClash):
        ctx.diags.append(C.E0203.at(node.span, left=str(x), right=str(w), a=str(dims.left), b=str(dims.right)))
        return T.UNKNOWN
    a = bound["bias"] if bias is not None else None
    named = CallArg(a.node, "bias", a.span, a.arg) if a is not None else None  # `bias of linear`, by position too
    if named is not None and not _per_channel(ctx, node, named, bias, b.name, w.dims[1], x):
        return T.UNKNOWN
    return T.TensorT(dims, T.Elem(x.elem.dtype))  # type: ignore[arg-type]


@rule("group_norm")
def _group_norm(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """group_norm(x: [b C ..], groups, weight=w, bias=b, eps=1e-5): each
    group of C/groups channels normalised over it and the dims after C."""
    x = ctx.tensor_arg(bound["x"], env, b.name, "x")
    groups = dim_value_arg(ctx, bound["groups"], env, b.name, "groups")
    affine = {k: ctx.tensor_arg(bound[k], env, b.name, k) for k in ("weight", "bias") if k in bound}
    ok = number_arg(ctx, bound.get("eps"), env, "eps of group_norm", 0.0, lo_open=True)
    if x is None or groups is None or not ok or any(t is None for t in affine.values()):
        return T.UNKNOWN
    if x.rank < 2:
        ctx.diags.append(
            C.E0210.at(bound["x"].node.span, operation=b.name, needed="2 dims or more ([b C ..])", found=str(x))
        )
        return T.UNKNOWN
    channels = x.dims[1]
    cv, gv = T.dim_value(channels), T.dim_value(groups)
    if cv is not None and gv is not None and cv % gv:
        shown = f"{channels}={cv}" if not isinstance(channels, T.DimLit) else str(channels)
        reason = f"{gv} groups do not divide the {shown} channels (dim 1 of {x})"
        ctx.diags.append(C.E0214.at(bound["groups"].node.span, operation="group_norm", reason=reason))
        return T.UNKNOWN
    for k, t in affine.items():
        a = bound[k]
        if not _per_channel(ctx, node, a, t, b.name, channels, x):
            return T.UNKNOWN
    return T.TensorT(x.dims, T.Elem(x.elem.dtype))
