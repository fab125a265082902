"""The normalisations: layer_norm and rms_norm along a dim, batch_norm
(torch's F.batch_norm: batch statistics under Train, which also update the
running statistics in place; the running statistics under Eval) and
group_norm.

batch_norm's running statistics must be buffers of a model
(`bn.running_mean`): the run-time op updates them in place, outside
autograd, and only a model's buffer makes that update visible to the
program (a local tensor would change unseen). This is the one place a
function that is not `mut` changes a model, as torch's BatchNorm does in
training; the param-read analysis is unaffected, since buffers are not
params.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from .args import (
    Bound,
    buffer_arg,
    dim_arg,
    dim_value_arg,
    mode_arg,
    named_over,
    number_arg,
    quiet_dim,
    quiet_over,
    tensor_arg,
)
from .registry import builtin
from .spec import EPS, OVER, BParam, Builtin, X


@builtin(
    Builtin(
        name="layer_norm",
        params=(
            X,
            OVER,
            EPS,
            BParam(name="weight", required=False, keyword_only=True),
            BParam(name="bias", required=False, keyword_only=True),
        ),
        signature="layer_norm(x: [..] Float, over=d, eps=1e-5, weight=w, bias=b) -> [..] Float",
        doc="(x - mean) / sqrt(variance + eps) along dim d (biased variance, as torch's layer_norm, eps 1e-5 unless "
        "given), then * weight + bias, both [d] and optional (applied in the same kernel, as torch's).",
        example="h = layer_norm(x, over=D)",
        group="along",
        runtime="layer_norm",
        rest_ok=True,
    ),
    Builtin(
        name="rms_norm",
        params=(X, OVER, EPS),
        signature="rms_norm(x: [..] Float, over=d, eps=e) -> [..] Float",
        doc="x / sqrt(mean(x * x) + eps) along dim d, eps the element type's machine epsilon unless given (as torch's "
        "rms_norm with eps=None); no weights.",
        example="h = rms_norm(x, over=-1)",
        group="along",
        runtime="rms_norm",
        rest_ok=True,
    ),
)
def _normalize(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    # layer_norm, rms_norm: x's shape and plain float type (a normalised
    # value may be negative: not NonNeg, not Prob); eps= a number > 0
    t = tensor_arg(c, bound["x"], env, b.name, "x")
    ok = number_arg(c, bound.get("eps"), env, f"eps of {b.name}", 0.0, lo_open=True)
    # layer_norm's weight= and bias=: [d] of x's element type
    affine = [(bound[k], tensor_arg(c, bound[k], env, b.name, k)) for k in ("weight", "bias") if k in bound]
    if t is None or not ok:
        quiet_dim(c, bound.get("over"), env)
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, t, b.name, bound["x"])
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    fits = [per_channel(c, node, a, at, b.name, t.dims[axis], t) for a, at in affine]  # each reported
    if not all(fits):
        return T.UNKNOWN
    t = named_over(c, t, axis, bound["over"])
    return T.TensorT(t.dims, T.Elem(t.elem.dtype))


def per_channel(
    c: RuleContext, node: A.Node, a: CallArg, t: T.TensorT | None, fn: str, channels: T.Dim, x: T.TensorT
) -> bool:
    """A per-channel tensor (running statistics, weight, bias): `[C]` of x's element type."""
    if t is None:
        return False
    if t.rank != 1 or not T.dims_equal(t.dims[0], channels):
        want = T.TensorT((channels,), t.elem)
        c.diags.append(C.E0201.at(a.node.span, context=f"{a_name(a)} of {fn}: ", expected=str(want), found=str(t)))
        return False
    if t.elem.dtype != x.elem.dtype:
        c.diags.append(
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


@builtin(
    Builtin(
        name="batch_norm",
        params=(
            X,
            BParam(name="running_mean"),
            BParam(name="running_var"),
            BParam(name="weight"),
            BParam(name="bias"),
            BParam(name="mode"),
            OVER,
            BParam(name="momentum", required=False, keyword_only=True),
            BParam(name="eps", required=False, keyword_only=True),
            BParam(name="num_batches_tracked", required=False, keyword_only=True),
        ),
        signature="batch_norm(x: [.. C ..] Float, running_mean: [C], running_var: [C], weight: [C], bias: [C], mode: Mode, "
        "over=C, momentum=0.1, eps=1e-5, num_batches_tracked=n) -> [.. C ..]",
        doc="Batch normalisation over every dim but C (torch's F.batch_norm): in Train mode with the batch's mean "
        "and biased variance, updating the running statistics in place (momentum, unbiased variance); in Eval "
        "with the running statistics.",
        example="h = batch_norm(x, m.rm, m.rv, ones([D]), zeros([D]), mode, over=D)",
        group="layers",
        runtime="batch_norm",
        note="The running statistics (and num_batches_tracked, a [] i64 counted up in Train mode) are buffers of "
        "a model ([E0301](diagnostics.md#e0301)). See [Batch normalisation](#batch-normalisation).",
    ),
)
def _batch_norm(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """batch_norm(x, running_mean, running_var, weight, bias, mode, over=C,
    momentum=0.1, eps=1e-5, num_batches_tracked=n)."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    stats = [buffer_arg(c, bound[k], env, b.name, k) for k in ("running_mean", "running_var")]
    affine = [tensor_arg(c, bound[k], env, b.name, k) for k in ("weight", "bias")]
    ok = mode_arg(c, bound["mode"], env, b.name)
    ok = number_arg(c, bound.get("momentum"), env, "momentum of batch_norm", 0.0, 1.0) and ok
    ok = number_arg(c, bound.get("eps"), env, "eps of batch_norm", 0.0, lo_open=True) and ok
    tracked_a = bound.get("num_batches_tracked")
    tracked = buffer_arg(c, tracked_a, env, b.name, "num_batches_tracked") if tracked_a is not None else None
    if tracked_a is not None and tracked is not None and (tracked.rank != 0 or tracked.elem.dtype != "i64"):
        c.diags.append(
            C.E0301.at(
                tracked_a.node.span,
                context="num_batches_tracked of batch_norm: ",
                expected="a [] i64 buffer (the count of training batches)",
                found=T.describe(tracked),
            )
        )
        ok = False
    if x is None:
        quiet_over(c, bound["over"])
        return T.UNKNOWN
    if x.rank < 2:
        c.diags.append(
            C.E0210.at(bound["x"].node.span, operation=b.name, needed="2 dims or more (a batch and C)", found=str(x))
        )
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, x, b.name, bound["x"])
    c.axes[node] = axis
    if axis is None or not ok or (tracked_a is not None and tracked is None):
        return T.UNKNOWN
    x = named_over(c, x, axis, bound["over"])
    channels = x.dims[axis]
    names = ("running_mean", "running_var", "weight", "bias")
    for k, t in zip(names, stats + affine):
        a = bound[k]
        if not per_channel(c, node, CallArg(a.node, k, a.span, a.arg), t, b.name, channels, x):
            return T.UNKNOWN
    return T.TensorT(x.dims, T.Elem(x.elem.dtype))


@builtin(
    Builtin(
        name="group_norm",
        params=(
            X,
            BParam(name="groups"),
            BParam(name="weight", required=False, keyword_only=True),
            BParam(name="bias", required=False, keyword_only=True),
            BParam(name="eps", required=False, keyword_only=True),
        ),
        signature="group_norm(x: [b C ..] Float, groups, weight=w, bias=b, eps=1e-5) -> [b C ..]",
        doc="The channels C in groups of C/groups, each normalised over its channels and the dims after C (torch's "
        "group_norm, biased variance); weight and bias [C] are optional.",
        example="h = group_norm(x, 2)",
        group="layers",
        runtime="group_norm",
        note="groups divides C ([E0214](diagnostics.md#e0214)).",
    ),
)
def _group_norm(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """group_norm(x: [b C ..], groups, weight=w, bias=b, eps=1e-5): each
    group of C/groups channels normalised over it and the dims after C."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    groups = dim_value_arg(c, bound["groups"], env, b.name, "groups")
    affine = {k: tensor_arg(c, bound[k], env, b.name, k) for k in ("weight", "bias") if k in bound}
    ok = number_arg(c, bound.get("eps"), env, "eps of group_norm", 0.0, lo_open=True)
    if x is None or groups is None or not ok or any(t is None for t in affine.values()):
        return T.UNKNOWN
    if x.rank < 2:
        c.diags.append(
            C.E0210.at(bound["x"].node.span, operation=b.name, needed="2 dims or more ([b C ..])", found=str(x))
        )
        return T.UNKNOWN
    channels = x.dims[1]
    cv, gv = T.dim_value(channels), T.dim_value(groups)
    if cv is not None and gv is not None and cv % gv:
        shown = f"{channels}={cv}" if not isinstance(channels, T.DimLit) else str(channels)
        reason = C.E0214.say("groups_channels", groups=gv, channels=shown, x=x)
        c.diags.append(C.E0214.at(bound["groups"].node.span, operation="group_norm", reason=reason))
        return T.UNKNOWN
    for k, t in affine.items():
        a = bound[k]
        if not per_channel(c, node, a, t, b.name, channels, x):
            return T.UNKNOWN
    return T.TensorT(x.dims, T.Elem(x.elem.dtype))


@builtin(
    Builtin(
        name="instance_norm",
        params=(
            X,
            BParam(name="running_mean", required=False, keyword_only=True),
            BParam(name="running_var", required=False, keyword_only=True),
            BParam(name="weight", required=False, keyword_only=True),
            BParam(name="bias", required=False, keyword_only=True),
            BParam(name="mode", required=False, keyword_only=True),
            BParam(name="momentum", required=False, keyword_only=True),
            BParam(name="eps", required=False, keyword_only=True),
        ),
        signature="instance_norm(x: [b C ..] Float, running_mean=rm, running_var=rv, weight=w, bias=b, mode=m, "
        "momentum=0.1, eps=1e-5) -> [b C ..]",
        doc="Each channel of each example normalised over the dims after C (torch's F.instance_norm, biased "
        "variance), then * weight + bias, both [C] and optional. With running statistics (buffers, given with "
        "mode=): in Train mode the instance statistics, updating the running ones in place; in Eval the running ones.",
        example="h = instance_norm(reshape(x, [b 1 D]))",
        group="layers",
        runtime="instance_norm",
        note="The running statistics come with mode= ([E0950](diagnostics.md#e0950)).",
    ),
)
def _instance_norm(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """instance_norm(x: [b C ..], running_mean=, running_var=, weight=,
    bias=, mode=, momentum=0.1, eps=1e-5)."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    stats = {k: buffer_arg(c, bound[k], env, b.name, k) for k in ("running_mean", "running_var") if k in bound}
    affine = {k: tensor_arg(c, bound[k], env, b.name, k) for k in ("weight", "bias") if k in bound}
    ok = mode_arg(c, bound["mode"], env, b.name) if "mode" in bound else True
    ok = number_arg(c, bound.get("momentum"), env, "momentum of instance_norm", 0.0, 1.0) and ok
    ok = number_arg(c, bound.get("eps"), env, "eps of instance_norm", 0.0, lo_open=True) and ok
    if not _stats_with_mode(c, node, bound):
        return T.UNKNOWN
    if x is None or not ok or any(t is None for t in (*stats.values(), *affine.values())):
        return T.UNKNOWN
    if x.rank < 3:
        needed = "3 dims or more ([b C ..], a batch, C and the dims normalised over)"
        c.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed=needed, found=str(x)))
        return T.UNKNOWN
    channels = x.dims[1]
    for k, t in (*stats.items(), *affine.items()):
        if not per_channel(c, node, bound[k], t, b.name, channels, x):
            return T.UNKNOWN
    return T.TensorT(x.dims, T.Elem(x.elem.dtype))


def _stats_with_mode(c: RuleContext, node: A.Node, bound: Bound) -> bool:
    """instance_norm's running_mean=, running_var= and mode= come together
    (E0950 at the first one given, naming what is missing)."""
    keys = ("running_mean", "running_var", "mode")
    given = [k for k in keys if k in bound]
    if not given or len(given) == len(keys):
        return True
    missing = [k for k in keys if k not in bound]
    if given == ["mode"]:
        problem = C.E0950.say("mode_alone")
    else:
        problem = C.E0950.say(
            "missing", given=" and ".join(f"{k}=" for k in given), missing=" and ".join(f"{k}=" for k in missing)
        )
    c.diags.append(C.E0950.at(bound[given[0]].span, problem=problem))
    return False
