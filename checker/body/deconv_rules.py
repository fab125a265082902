"""Typing rules of conv1d and conv_transpose2d, next to conv2d
(checker/body/conv_rules.py). The sizes are dim arithmetic: conv1d's
`((L+2*p-d*(K-1)-1)/s+1)` floored as conv2d's, conv_transpose2d's
`(H-1)*s-2*p+d*(KH-1)+op+1` (no division: every input size gives one output
size). Weights are laid out as torch stores them: conv1d `[Co Ci/g K]`,
conv_transpose2d `[Ci Co/g KH KW]` with `groups=g`."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .conv_rules import (
    _ONE,
    _four_dims,
    _out_size,
    _shown,
    _too_small,
    bias_fits,
    channels_reason,
    divides,
    grouped_fit,
    grouping_args,
    size_arg,
    times_groups,
)
from .env import Env
from .rule_args import dim_text, poly_dim


def _operands(
    ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env
) -> tuple[T.TensorT, T.TensorT, T.TensorT | None, T.Dim, T.Dim, T.Dim, T.Dim] | None:
    """x, w, the bias (or None), stride, padding, dilation and groups, each
    checked; None after a diagnostic."""
    x = ctx.tensor_arg(bound["x"], env, b.name, "x")
    w = ctx.tensor_arg(bound["w"], env, b.name, "w")
    bias = ctx.tensor_arg(bound["bias"], env, b.name, "bias") if "bias" in bound else None
    stride = size_arg(ctx, bound.get("stride"), env, "stride", b.name, 1, 1)
    padding = size_arg(ctx, bound.get("padding"), env, "padding", b.name, 0, 0)
    grouping = grouping_args(ctx, bound, env, b.name)
    if x is None or w is None or stride is None or padding is None or ("bias" in bound and bias is None):
        return None
    if grouping is None:
        return None
    return x, w, bias, stride, padding, *grouping


def _same_elem(ctx: RuleContext, node: A.Node, fn: str, x: T.TensorT, w: T.TensorT) -> bool:
    if x.elem.dtype == w.elem.dtype:
        return True
    ctx.diags.append(
        C.E0302.at(node.span, context=f"{fn} needs one element type: ", expected=x.show_elem(), found=w.show_elem())
    )
    return False


@rule("conv1d")
def _conv1d(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """conv1d(x: [b Ci L], w: [Co Ci K], bias, stride=, padding=) -> [b Co ((L+2*p-K)/s+1)]."""
    got = _operands(ctx, node, b, bound, env)
    if got is None:
        return T.UNKNOWN
    x, w, bias, stride, padding, dilation, groups = got
    if not _four_dims(ctx, x, bound["x"], "conv1d", "x", "[b Ci L]", 3):
        return T.UNKNOWN
    if not _four_dims(ctx, w, bound["w"], "conv1d", "w", "[Co Ci K]", 3):
        return T.UNKNOWN
    if not grouped_fit(ctx, bound, "conv1d", x, w, groups):
        return T.UNKNOWN
    if not _same_elem(ctx, node, "conv1d", x, w):
        return T.UNKNOWN
    out = _out_size(x.dims[2], w.dims[2], stride, padding, dilation)
    if out is None:
        reason = _too_small(x.dims[2], w.dims[2], padding, dilation)
        ctx.diags.append(C.E0214.at(bound["w"].node.span, operation="conv1d", reason=reason))
        return T.UNKNOWN
    if not bias_fits(ctx, node, bound, "conv1d", bias, w.dims[0], x):
        return T.UNKNOWN
    return T.TensorT((x.dims[0], w.dims[0], out), T.Elem(x.elem.dtype))


def _transposed_size(
    size: T.Dim, kernel: T.Dim, stride: T.Dim, padding: T.Dim, extra: T.Dim, dilation: T.Dim = _ONE
) -> T.Dim | None:
    """`(size-1)*stride - 2*padding + dilation*(kernel-1) + extra + 1` as a
    dim (with no dilation, `... + kernel + extra`); None when its value is
    known and below 1."""
    parts = [T.dim_poly(d) for d in (size, kernel, stride, padding, extra, dilation)]
    if any(p is None for p in parts):
        return T.DimUnknown()
    ps, pk, pst, ppad, pextra, pdil = parts
    assert ps is not None and pk is not None and pst is not None and ppad is not None and pextra is not None
    assert pdil is not None
    grown = DX.mul(DX.sub(ps, DX.const(1)), pst)
    window = DX.add(DX.mul(pdil, DX.sub(pk, DX.const(1))), DX.const(1))
    out = DX.add(DX.add(grown, DX.sub(window, DX.mul(DX.const(2), ppad))), pextra)
    v = DX.value(out)
    if v is not None:
        return T.DimLit(v) if v >= 1 else None
    return poly_dim(out)


def _known(d: T.Dim) -> int | None:
    p = T.dim_poly(d)
    return DX.value(p) if p is not None else None


@rule("conv_transpose2d")
def _conv_transpose2d(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """conv_transpose2d(x: [b Ci H W], w: [Ci Co KH KW], bias, stride=,
    padding=, output_padding=) -> [b Co ((H-1)*s-2*p+KH+op) ...]: the
    gradient of conv2d with respect to its input, as torch's."""
    got = _operands(ctx, node, b, bound, env)
    extra_a = bound.get("output_padding")
    extra = size_arg(ctx, extra_a, env, "output_padding", "conv_transpose2d", 0, 0)
    if got is None or extra is None:
        return T.UNKNOWN
    x, w, bias, stride, padding, dilation, groups = got
    known_extra, known_stride, known_dilation = _known(extra), _known(stride), _known(dilation)
    # torch: output_padding below the stride or below the dilation
    below = None if known_stride is None or known_dilation is None else max(known_stride, known_dilation)
    if extra_a is not None and known_extra is not None and below is not None and known_extra >= below:
        what = "the stride" if known_dilation == 1 else "the stride or the dilation"
        ctx.diags.append(
            C.E0301.at(
                extra_a.node.span,
                context="output_padding of conv_transpose2d: ",
                expected=f"an integer literal below {what} ({below})",
                found=str(known_extra),
            )
        )
        return T.UNKNOWN
    if not _four_dims(ctx, x, bound["x"], "conv_transpose2d", "x", "[b Ci H W]"):
        return T.UNKNOWN
    if not _four_dims(ctx, w, bound["w"], "conv_transpose2d", "w", "[Ci Co KH KW]"):
        return T.UNKNOWN
    if not T.dims_equal(x.dims[1], w.dims[0]):
        reason = channels_reason(x, w, 0, T.DimLit(1))
        ctx.diags.append(C.E0214.at(bound["w"].node.span, operation="conv_transpose2d", reason=reason))
        return T.UNKNOWN
    if not divides(groups, x.dims[1]):
        reason = f"{_shown(groups)} groups do not divide the {_shown(x.dims[1])} input channels (dim 1 of {x})"
        ctx.diags.append(C.E0214.at(bound["groups"].node.span, operation="conv_transpose2d", reason=reason))
        return T.UNKNOWN
    if not _same_elem(ctx, node, "conv_transpose2d", x, w):
        return T.UNKNOWN
    sizes: list[T.Dim] = []
    for size, kernel in ((x.dims[2], w.dims[2]), (x.dims[3], w.dims[3])):
        out = _transposed_size(size, kernel, stride, padding, extra, dilation)
        if out is None:
            window = dim_text(kernel) if T.is_one(dilation) else f"{dim_text(dilation)}*({dim_text(kernel)}-1)+1"
            reason = (
                f"padding {dim_text(padding)} leaves no output: ({dim_text(size)}-1)*{dim_text(stride)}"
                f"-2*{dim_text(padding)}+{window}"
                + (f"+{dim_text(extra)}" if _known(extra) != 0 else "")
                + " is below 1"
            )
            ctx.diags.append(C.E0214.at(bound["w"].node.span, operation="conv_transpose2d", reason=reason))
            return T.UNKNOWN
        sizes.append(out)
    out_channels = times_groups(w.dims[1], groups)
    if not bias_fits(ctx, node, bound, "conv_transpose2d", bias, out_channels, x):
        return T.UNKNOWN
    return T.TensorT((x.dims[0], out_channels, *sizes), T.Elem(x.elem.dtype))
