"""Typing rules of the losses with options: cross_entropy and nll
(ignore_index=, reduction=, label_smoothing=), smooth_l1 and huber,
binary_cross_entropy on probabilities. Every loss is >= 0, so its result is
NonNeg: `[]` for reduction="mean" (the default) and "sum", the per-example
shape for "none"."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import Env
from .rule_args import choice_arg, number_arg, quiet_over

REDUCTIONS = ("mean", "sum", "none")


def _reduced(dims: tuple[T.Dim, ...], dtype: str, reduction: str | None) -> T.Type:
    """A loss's result: `[]` NonNeg, or with reduction="none" one per element (`dims`)."""
    if reduction is None:
        return T.UNKNOWN
    return T.TensorT(dims if reduction == "none" else (), T.Elem(dtype, "nonneg"))


@rule("cross_entropy")
def _cross_entropy(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """cross_entropy(logits, labels, over=C, ...) and nll(logp, labels, over=C, ...)."""
    first = b.params[0].name
    logits = ctx.tensor_arg(bound[first], env, b.name, first)
    labels_t = ctx.value(bound["labels"].node, env)
    ignore = bound.get("ignore_index")
    if ignore is not None:
        ctx.expect_number(ignore, env, "Int", f"ignore_index of {b.name}")
    reduction = choice_arg(ctx, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    number_arg(ctx, bound.get("label_smoothing"), env, f"label_smoothing of {b.name}", 0.0, 1.0)
    if logits is None:
        quiet_over(ctx, bound.get("over"))
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    axis = ctx.dim_arg(bound["over"], env, logits, b.name, bound[first], first)
    ctx.axes[node] = axis
    if axis is None:
        return T.scalar(T.Elem(logits.elem.dtype, "nonneg")) if reduction in ("mean", "sum") else T.UNKNOWN
    logits = ctx.named_over(logits, axis, bound["over"])
    class_dim = logits.dims[axis]
    want_dims = logits.dims[:axis] + logits.dims[axis + 1 :]
    want = T.TensorT(want_dims, T.index_of(class_dim))
    labels = bound["labels"].node
    if isinstance(labels_t, T.UnknownT):
        pass
    elif not isinstance(labels_t, T.TensorT):
        ctx.diags.append(
            C.E0301.at(labels.span, context=f"labels of {b.name}: ", expected=str(want), found=T.describe(labels_t))
        )
    elif labels_t.rank != len(want_dims) or not all(T.dims_equal(x, y) for x, y in zip(labels_t.dims, want_dims)):
        ctx.diags.append(
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
        ctx.diags.append(C.E0305.at(labels.span, context=f"{detail}: ", expected=str(want), found=str(labels_t)))
    return _reduced(want_dims, logits.elem.dtype, reduction)


def _same_shape(
    ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, first: str, p: T.TensorT, second: str, t: T.TensorT
) -> bool:
    """Two operands of one shape and element type (torch would broadcast a
    size-1 dim silently); a dim known only at run time on one side is
    checked against the other's at run time."""
    if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
        ctx.diags.append(
            C.E0201.at(
                bound[second].node.span,
                context=f"{second} of {b.name} (same shape as {first}): ",
                expected=str(T.TensorT(p.dims, t.elem)),
                found=str(t),
            )
        )
        return False
    if p.elem.dtype != t.elem.dtype:
        ctx.diags.append(
            C.E0302.at(
                node.span, context=f"{b.name} needs one element type: ", expected=p.show_elem(), found=t.show_elem()
            )
        )
        return False
    ctx.note_dims(bound[second].node, T.TensorT(p.dims, t.elem), t, f"{b.name}(): ", f"argument '{second}'")
    ctx.note_dims(bound[first].node, T.TensorT(t.dims, p.elem), p, f"{b.name}(): ", f"argument '{first}'")
    return True


@rule("robust_loss")
def _robust_loss(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """smooth_l1(input, target, beta=1.0) (beta >= 0) and huber(input,
    target, delta=1.0) (delta > 0): two float tensors of one shape."""
    p = ctx.tensor_arg(bound["input"], env, b.name, "input")
    t = ctx.tensor_arg(bound["target"], env, b.name, "target")
    option = b.params[2].name
    number_arg(ctx, bound.get(option), env, f"{option} of {b.name}", 0.0, lo_open=option == "delta")
    reduction = choice_arg(ctx, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    if p is None or t is None:
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    if not _same_shape(ctx, node, b, bound, "input", p, "target", t):
        return T.scalar(T.Elem(p.elem.dtype, "nonneg")) if reduction in ("mean", "sum") else T.UNKNOWN
    return _reduced(p.dims, p.elem.dtype, reduction)


@rule("binary_cross_entropy")
def _binary_cross_entropy(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """binary_cross_entropy(p, y): p is known to be in [0, 1] (Prob, as
    sigmoid gives); y has p's shape and element type."""
    p = ctx.tensor_arg(bound["p"], env, b.name, "p")
    y = ctx.tensor_arg(bound["y"], env, b.name, "y")
    reduction = choice_arg(ctx, bound.get("reduction"), env, f"reduction of {b.name}", REDUCTIONS)
    if p is None or y is None:
        return T.scalar(T.NONNEG) if reduction in ("mean", "sum") else T.UNKNOWN
    result = _reduced(p.dims, p.elem.dtype, reduction)
    if p.elem.refine != "prob":
        ctx.diags.append(
            C.E0304.at(
                bound["p"].node.span,
                context=f"p of {b.name}: ",
                expected="probabilities known to be in [0, 1] (Prob, as sigmoid gives)",
                found=str(p),
            )
        )
        return result
    _same_shape(ctx, node, b, bound, "p", p, "y", y)
    return result
