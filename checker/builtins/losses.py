"""The losses: cross_entropy and nll (labels along a dim; ignore_index=,
reduction=, label_smoothing=), mse, smooth_l1 and huber,
binary_cross_entropy on probabilities, binary_cross_entropy_with_logits and
kl_div. Every loss is >= 0, so its result is NonNeg: `[]` for
reduction="mean" (the default) and "sum", the per-example shape for "none".
"""

from __future__ import annotations

import dataclasses

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from .args import Bound, choice_arg, dim_arg, expect_number, named_over, number_arg, quiet_over, tensor_arg
from .registry import builtin
from .spec import OVER, BParam, Builtin

REDUCTIONS = ("mean", "sum", "none")


def _reduced(dims: tuple[T.Dim, ...], dtype: str, reduction: str | None) -> T.Type:
    """A loss's result: `[]` NonNeg, or with reduction="none" one per element (`dims`)."""
    if reduction is None:
        return T.UNKNOWN
    return T.TensorT(dims if reduction == "none" else (), T.Elem(dtype, "nonneg"))


def _torch_named(spec: Builtin, name: str) -> Builtin:
    """`spec` under torch's functional name (`nll_loss` of `nll`): the same rule
    and run-time function, its signature and example spelled with the new name."""
    return dataclasses.replace(
        spec,
        name=name,
        signature=spec.signature.replace(f"{spec.name}(", f"{name}(", 1),
        doc=f"torch's name for {spec.name}: F.{name}.",
        example=spec.example.replace(f"{spec.name}(", f"{name}(", 1),
        note="",
    )


_NLL = Builtin(
    name="nll",
    params=(
        BParam(name="logp"),
        BParam(name="labels"),
        OVER,
        BParam(name="ignore_index", required=False, keyword_only=True),
        BParam(name="reduction", required=False, keyword_only=True),
    ),
    signature='nll(logp: [.. C ..] Float, labels: [..] Index[C], over=C, ignore_index=k, reduction="mean") -> [] NonNeg',
    doc="Mean negative log-likelihood of the labels under log-probabilities logp (as log_softmax gives), along C; "
    "ignore_index= and reduction= as for cross_entropy.",
    example="l = nll(log_softmax(x @ m.w, over=C), y, over=C)",
    group="losses",
    runtime="nll",
    note="The labels have logp's shape without C ([E0201](diagnostics.md#e0201)) and index C "
    "([E0305](diagnostics.md#e0305)).",
    role="logprob",
)

_SMOOTH_L1 = Builtin(
    name="smooth_l1",
    params=(
        BParam(name="input"),
        BParam(name="target"),
        BParam(name="beta", required=False, keyword_only=True),
        BParam(name="reduction", required=False, keyword_only=True),
    ),
    signature='smooth_l1(input: [..] Float, target: [..] Float, beta=1.0, reduction="mean") -> [] NonNeg',
    doc="Mean of 0.5 * d * d / beta where abs(d) < beta and abs(d) - 0.5 * beta elsewhere, d = input - target "
    "(torch's smooth_l1_loss; beta >= 0).",
    example="l = smooth_l1(x, x * 2.0)",
    group="losses",
    runtime="smooth_l1",
    rest_ok=True,
    role="loss",
    target_param="target",
)

_HUBER = Builtin(
    name="huber",
    params=(
        BParam(name="input"),
        BParam(name="target"),
        BParam(name="delta", required=False, keyword_only=True),
        BParam(name="reduction", required=False, keyword_only=True),
    ),
    signature='huber(input: [..] Float, target: [..] Float, delta=1.0, reduction="mean") -> [] NonNeg',
    doc="Mean of 0.5 * d * d where abs(d) <= delta and delta * (abs(d) - 0.5 * delta) elsewhere (torch's "
    "huber_loss; delta > 0): smooth_l1 with beta=delta, times delta.",
    example="l = huber(x, x * 2.0, delta=0.5)",
    group="losses",
    runtime="huber",
    rest_ok=True,
    role="loss",
    target_param="target",
)


@builtin(
    Builtin(
        name="cross_entropy",
        params=(
            BParam(name="logits"),
            BParam(name="labels"),
            OVER,
            BParam(name="ignore_index", required=False, keyword_only=True),
            BParam(name="reduction", required=False, keyword_only=True),
            BParam(name="label_smoothing", required=False, keyword_only=True),
        ),
        signature='cross_entropy(logits: [.. C ..] Float, labels: [..] Index[C], over=C, ignore_index=k, reduction="mean", '
        "label_smoothing=0.0) -> [] NonNeg",
        doc='Mean cross-entropy of the labels under softmax(logits, over=C) (reduction="sum": the sum; "none": '
        "one per label, of the labels' shape); ignore_index=k leaves out the labels equal to k, label_smoothing=e "
        "mixes e of the uniform distribution into the targets.",
        example="l = cross_entropy(x @ m.w, y, over=C)",
        group="losses",
        runtime="cross_entropy",
        note="The labels have the logits' shape without C ([E0201](diagnostics.md#e0201)) and index C "
        "([E0305](diagnostics.md#e0305)).",
        role="logprob",
    ),
    _NLL,
    _torch_named(_NLL, "nll_loss"),
)
def _cross_entropy(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """cross_entropy(logits, labels, over=C, ...) and nll(logp, labels, over=C, ...)."""
    first = b.params[0].name
    logits = tensor_arg(c, bound[first], env, b.name, first)
    labels_t = c.value(bound["labels"].node, env)
    ignore = bound.get("ignore_index")
    if ignore is not None:
        expect_number(c, ignore, env, "Int", f"ignore_index of {b.name}")
    reduction = choice_arg(c, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    number_arg(c, bound.get("label_smoothing"), env, f"label_smoothing of {b.name}", 0.0, 1.0)
    if logits is None:
        quiet_over(c, bound.get("over"))
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, logits, b.name, bound[first], first)
    c.axes[node] = axis
    if axis is None:
        return T.scalar(T.Elem(logits.elem.dtype, "nonneg")) if reduction in ("mean", "sum") else T.UNKNOWN
    logits = named_over(c, logits, axis, bound["over"])
    class_dim = logits.dims[axis]
    want_dims = logits.dims[:axis] + logits.dims[axis + 1 :]
    want = T.TensorT(want_dims, T.index_of(class_dim))
    labels = bound["labels"].node
    if isinstance(labels_t, T.UnknownT):
        pass
    elif not isinstance(labels_t, T.TensorT):
        c.diags.append(
            C.E0301.at(labels.span, context=f"labels of {b.name}: ", expected=str(want), found=T.describe(labels_t))
        )
    elif labels_t.rank != len(want_dims) or not all(T.dims_equal(x, y) for x, y in zip(labels_t.dims, want_dims)):
        c.diags.append(
            C.E0201.at(labels.span, context=f"labels of {b.name}: ", expected=str(want), found=str(labels_t))
        )
    elif ignore is not None and labels_t.elem == T.I64:
        pass  # plain labels that may hold the ignored value: checked at run time
    elif labels_t.elem.index is None or not T.dims_equal(labels_t.elem.index, class_dim):
        over_name = bound["over"].node.name if isinstance(bound["over"].node, A.Name) else str(class_dim)
        if labels_t.elem.index is not None:
            detail = f"the labels index {labels_t.elem.index}, but over={over_name}"
        else:
            detail = f"the labels must be Index[{class_dim}] to index over={over_name}"
            if ignore is not None:
                detail += " (or i64, with ignore_index=)"
        c.diags.append(C.E0305.at(labels.span, context=f"{detail}: ", expected=str(want), found=str(labels_t)))
    return _reduced(want_dims, logits.elem.dtype, reduction)


def _same_shape(
    c: RuleContext, node: A.Node, b: Builtin, bound: Bound, first: str, p: T.TensorT, second: str, t: T.TensorT
) -> bool:
    """Two operands of one shape and element type (torch would broadcast a
    size-1 dim silently); a dim known only at run time on one side is
    checked against the other's at run time."""
    if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
        c.diags.append(
            C.E0201.at(
                bound[second].node.span,
                context=f"{second} of {b.name} (same shape as {first}): ",
                expected=str(T.TensorT(p.dims, t.elem)),
                found=str(t),
            )
        )
        return False
    if p.elem.dtype != t.elem.dtype:
        c.diags.append(
            C.E0302.at(
                node.span, context=f"{b.name} needs one element type: ", expected=p.show_elem(), found=t.show_elem()
            )
        )
        return False
    c.note_dims(bound[second].node, T.TensorT(p.dims, t.elem), t, f"{b.name}(): ", f"argument '{second}'")
    c.note_dims(bound[first].node, T.TensorT(t.dims, p.elem), p, f"{b.name}(): ", f"argument '{first}'")
    return True


@builtin(
    _SMOOTH_L1,
    _HUBER,
    _torch_named(_SMOOTH_L1, "smooth_l1_loss"),
    _torch_named(_HUBER, "huber_loss"),
)
def _robust_loss(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """smooth_l1(input, target, beta=1.0) (beta >= 0) and huber(input,
    target, delta=1.0) (delta > 0): two float tensors of one shape."""
    p = tensor_arg(c, bound["input"], env, b.name, "input")
    t = tensor_arg(c, bound["target"], env, b.name, "target")
    option = b.params[2].name
    number_arg(c, bound.get(option), env, f"{option} of {b.name}", 0.0, lo_open=option == "delta")
    reduction = choice_arg(c, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    if p is None or t is None:
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    if not _same_shape(c, node, b, bound, "input", p, "target", t):
        return T.scalar(T.Elem(p.elem.dtype, "nonneg")) if reduction in ("mean", "sum") else T.UNKNOWN
    return _reduced(p.dims, p.elem.dtype, reduction)


@builtin(
    Builtin(
        name="binary_cross_entropy",
        params=(BParam(name="p"), BParam(name="y"), BParam(name="reduction", required=False, keyword_only=True)),
        signature='binary_cross_entropy(p: [..] Prob, y: [..] Float, reduction="mean") -> [] NonNeg',
        doc="Mean binary cross-entropy of targets y under probabilities p, each log clamped at -100 as torch's "
        "binary_cross_entropy does.",
        example="l = binary_cross_entropy(sigmoid(x), sigmoid(x * 2.0))",
        group="losses",
        runtime="binary_cross_entropy",
        note="p is known to be in [0, 1], a Prob as sigmoid gives ([E0304](diagnostics.md#e0304)); y has its shape "
        "([E0201](diagnostics.md#e0201)).",
        role="loss",
    ),
)
def _binary_cross_entropy(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """binary_cross_entropy(p, y): p is known to be in [0, 1] (Prob, as
    sigmoid gives); y has p's shape and element type."""
    p = tensor_arg(c, bound["p"], env, b.name, "p")
    y = tensor_arg(c, bound["y"], env, b.name, "y")
    reduction = choice_arg(c, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    if p is None or y is None:
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    result = _reduced(p.dims, p.elem.dtype, reduction)
    if p.elem.refine != "prob":
        c.diags.append(
            C.E0304.at(
                bound["p"].node.span,
                context=f"p of {b.name}: ",
                expected="probabilities known to be in [0, 1] (Prob, as sigmoid gives)",
                found=str(p),
            )
        )
        return result
    _same_shape(c, node, b, bound, "p", p, "y", y)
    return result


@builtin(
    Builtin(
        name="mse",
        params=(BParam(name="pred"), BParam(name="target")),
        signature="mse(pred: [..] Float, target: [..] Float) -> [] NonNeg",
        doc="Mean squared error; both operands have the same shape and element type.",
        example="l = mse(x, x * 2.0)",
        group="losses",
        runtime="mse",
        rest_ok=True,
        role="loss",
        target_param="target",
        symmetric=True,
    ),
)
def _mse(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    p = tensor_arg(c, bound["pred"], env, "mse", "pred")
    t = tensor_arg(c, bound["target"], env, "mse", "target")
    if p is None or t is None:
        return T.scalar(T.NONNEG)
    if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
        c.diags.append(
            C.E0201.at(
                bound["target"].node.span,
                context="target of mse (same shape as pred): ",
                expected=str(T.TensorT(p.dims, t.elem)),
                found=str(t),
            )
        )
    elif p.elem.dtype != t.elem.dtype:
        c.diags.append(
            C.E0302.at(node.span, context="mse needs one element type: ", expected=p.show_elem(), found=t.show_elem())
        )
    else:
        _same_shape_dims(c, b.name, bound, "pred", p, "target", t)
    return T.scalar(T.Elem(p.elem.dtype, "nonneg"))


def _same_shape_dims(
    c: RuleContext, fn: str, bound: Bound, first: str, p: T.TensorT, second: str, t: T.TensorT
) -> None:
    """Two operands of one shape (torch would broadcast a size-1 dim
    silently): a dim known only at run time on one side is checked
    against the other's known dim."""
    c.note_dims(bound[second].node, T.TensorT(p.dims, t.elem), t, f"{fn}(): ", f"argument '{second}'")
    c.note_dims(bound[first].node, T.TensorT(t.dims, p.elem), p, f"{fn}(): ", f"argument '{first}'")


@builtin(
    Builtin(
        name="binary_cross_entropy_with_logits",
        params=(BParam(name="z"), BParam(name="y")),
        signature="binary_cross_entropy_with_logits(z: [..] Float, y: [..] Float) -> [] NonNeg",
        doc="Mean binary cross-entropy of targets y (in [0, 1]) under sigmoid(z), computed stably from the logits z.",
        example="l = binary_cross_entropy_with_logits(x, sigmoid(x))",
        group="losses",
        runtime="binary_cross_entropy_with_logits",
        note="z and y have one shape ([E0201](diagnostics.md#e0201)) and element type.",
        role="loss",
    ),
    Builtin(
        name="kl_div",
        params=(BParam(name="logp"), BParam(name="q")),
        signature="kl_div(logp: [..] Float, q: [..] Float) -> [] NonNeg",
        doc="KL(q || p) of probabilities q from log-probabilities logp: the sum of q * (log(q) - logp) over every "
        "value, divided by the first dim's size when there are two dims or more (torch's batchmean).",
        example="l = kl_div(log_softmax(x, over=D), softmax(x, over=D))",
        group="losses",
        runtime="kl_div",
        note="logp and q have one shape ([E0201](diagnostics.md#e0201)) and element type.",
        role="loss",
    ),
)
def _same_shape_loss(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """binary_cross_entropy_with_logits(z, y), kl_div(logp, q): two float tensors of one shape and
    element type give a [] NonNeg."""
    first, second = (p.name for p in b.params)
    p = tensor_arg(c, bound[first], env, b.name, first)
    t = tensor_arg(c, bound[second], env, b.name, second)
    if p is None or t is None:
        return T.scalar(T.NONNEG)
    if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
        c.diags.append(
            C.E0201.at(
                bound[second].node.span,
                context=f"{second} of {b.name} (same shape as {first}): ",
                expected=str(T.TensorT(p.dims, t.elem)),
                found=str(t),
            )
        )
    elif p.elem.dtype != t.elem.dtype:
        c.diags.append(
            C.E0302.at(
                node.span, context=f"{b.name} needs one element type: ", expected=p.show_elem(), found=t.show_elem()
            )
        )
    else:
        _same_shape_dims(c, b.name, bound, first, p, second, t)
    return T.scalar(T.Elem(p.elem.dtype, "nonneg"))


@builtin(
    Builtin(
        name="mse_loss",
        params=(
            BParam(name="input"),
            BParam(name="target"),
            BParam(name="reduction", required=False, keyword_only=True),
        ),
        signature='mse_loss(input: [..] Float, target: [..] Float, reduction="mean") -> [] NonNeg',
        doc='Mean squared error, torch\'s F.mse_loss: the mean of (input - target)**2 (reduction="sum": the sum; '
        '"none": one per element, of their shape); mse without reduction=.',
        example="l = mse_loss(x, x * 2.0)",
        group="losses",
        runtime="mse_loss",
        rest_ok=True,
        role="loss",
        target_param="target",
        symmetric=True,
    ),
    Builtin(
        name="l1_loss",
        params=(
            BParam(name="input"),
            BParam(name="target"),
            BParam(name="reduction", required=False, keyword_only=True),
        ),
        signature='l1_loss(input: [..] Float, target: [..] Float, reduction="mean") -> [] NonNeg',
        doc="Mean absolute error, torch's F.l1_loss: the mean of abs(input - target); reduction= as mse_loss's.",
        example='l = l1_loss(x, x * 2.0, reduction="sum")',
        group="losses",
        runtime="l1_loss",
        rest_ok=True,
        role="loss",
        target_param="target",
        symmetric=True,
    ),
)
def _pointwise_loss(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """mse_loss(input, target) and l1_loss(input, target): two float tensors of
    one shape (torch would broadcast a size-1 dim, and warns), reduced."""
    p = tensor_arg(c, bound["input"], env, b.name, "input")
    t = tensor_arg(c, bound["target"], env, b.name, "target")
    reduction = choice_arg(c, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    if p is None or t is None:
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    if not _same_shape(c, node, b, bound, "input", p, "target", t):
        return T.scalar(T.Elem(p.elem.dtype, "nonneg")) if reduction in ("mean", "sum") else T.UNKNOWN
    return _reduced(p.dims, p.elem.dtype, reduction)
