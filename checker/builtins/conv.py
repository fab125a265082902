"""Convolutions and pools: conv2d, max_pool2d, avg_pool2d, conv1d and
conv_transpose2d. The sizes of the result are dim arithmetic
(checker/dimexpr.py): `((H+2*p-d*(K-1)-1)/s+1)`, floored as torch floors
them, so a 28 by 28 input and a 3 by 3 kernel give 26 by 26, and a generic
`h` gives `(h-2)`; conv_transpose2d's `(H-1)*s-2*p+d*(KH-1)+op+1` has no
division. With `groups=g` the kernels take `Ci/g` channels each (torch's
grouped and depthwise convolutions). Weights are laid out as torch stores
them: conv2d `[Co Ci/g KH KW]`, conv1d `[Co Ci/g K]`, conv_transpose2d
`[Ci Co/g KH KW]`.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..body import size_hints
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from .args import Bound, dim_text, dim_value_arg, poly_dim, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin

_ONE = T.DimLit(1)  # no dilation, one group


def size_arg(c: RuleContext, a: CallArg | None, env: Env, what: str, fn: str, default: int, least: int) -> T.Dim | None:
    """A stride, padding or window: an integer literal >= least, a dim
    constant, or a dim of the function or its model (`stride=S` in a layer
    that takes S); `default` when left out, None after an error."""
    if a is None:
        return T.DimLit(default)
    return dim_value_arg(c, a, env, fn, what, least)


def _four_dims(c: RuleContext, t: T.TensorT, a: CallArg, fn: str, name: str, layout: str, rank: int = 4) -> bool:
    if t.rank == rank:
        return True
    reason = C.E0214.say("layout_rank", name=name, layout=layout, rank=rank, type=t)
    c.diags.append(C.E0214.at(a.node.span, operation=fn, reason=reason))
    return False


def _out_size(size: T.Dim, kernel: T.Dim, stride: T.Dim, padding: T.Dim, dilation: T.Dim = _ONE) -> T.Dim | None:
    """`((size+2*padding-dilation*(kernel-1)-1)/stride+1)` as a dim (with no
    dilation, `((size+2*padding-kernel)/stride+1)`); None when its value is
    known and below 1 (the kernel does not fit)."""
    ps, pk, pst, ppad = T.dim_poly(size), T.dim_poly(kernel), T.dim_poly(stride), T.dim_poly(padding)
    pdil = T.dim_poly(dilation)
    if ps is None or pk is None or pst is None or ppad is None or pdil is None:
        return T.DimUnknown()
    span = DX.add(DX.mul(pdil, DX.sub(pk, DX.const(1))), DX.const(1))  # the dilated window
    q = DX.div(DX.sub(DX.add(ps, DX.mul(DX.const(2), ppad)), span), pst)
    if q is None:  # a stride known to be 0 only once a layer is made
        return T.DimUnknown()
    out = DX.add(q, DX.const(1))
    v = DX.value(out)
    if v is not None:
        return T.DimLit(v) if v >= 1 else None
    text = DX.render(out)
    one_division = len(out) == 1 and out[0][1] == 1 and len(out[0][0]) == 1 and out[0][0][0][0] == "d"
    return T.dim_of_poly(out, text if one_division else f"({text})")


_shown = size_hints.shown_dim


def _too_small(size: T.Dim, kernel: T.Dim, padding: T.Dim, dilation: T.Dim = _ONE) -> str:
    padded = f" with padding {_shown(padding)}" if not (isinstance(padding, T.DimLit) and padding.value == 0) else ""
    window = _shown(kernel) if T.is_one(dilation) else f"{_shown(kernel)} dilated by {_shown(dilation)}"
    return f"the window ({window}) is larger than the input ({_shown(size)}){padded}"


def grouping_args(c: RuleContext, bound: Bound, env: Env, fn: str) -> tuple[T.Dim, T.Dim] | None:
    """dilation= and groups= of a convolution (1 when left out; each a
    positive integer literal or a dim, as stride is); None after an error."""
    dilation = size_arg(c, bound.get("dilation"), env, "dilation", fn, 1, 1)
    groups = size_arg(c, bound.get("groups"), env, "groups", fn, 1, 1)
    if dilation is None or groups is None:
        return None
    return dilation, groups


def times_groups(per_group: T.Dim, groups: T.Dim) -> T.Dim:
    """`per_group` channels times `groups`: a layer's `(C/groups)` times
    groups is `C` (torch requires the division to be exact)."""
    if T.is_one(groups):
        return per_group
    pc, pg = T.dim_poly(per_group), T.dim_poly(groups)
    if pc is None or pg is None:
        return T.DimUnknown()
    if len(pc) == 1 and pc[0][1] == 1 and len(pc[0][0]) == 1 and pc[0][0][0][0] == "d" and pc[0][0][0][2] == pg:
        return T.dim_of_poly(pc[0][0][0][1])
    return T.dim_of_poly(DX.mul(pc, pg))


def channels_fit(channels: T.Dim, per_group: T.Dim, groups: T.Dim) -> bool:
    """x's `channels` are `groups` times the kernels' `per_group`; with one
    group, the same dim (constants by name)."""
    if T.is_one(groups):
        return T.dims_equal(channels, per_group)
    return T.dims_equal(channels, times_groups(per_group, groups)) or (
        T.dim_value(channels) is None
        and (pc := T.dim_poly(channels)) is not None
        and (pg := T.dim_poly(groups)) is not None
        and T.dim_poly(per_group) == DX.div(pc, pg)
    )


def divides(groups: T.Dim, channels: T.Dim) -> bool:
    """False only when both are known and `groups` does not divide `channels`."""
    g, n = T.dim_value(groups), T.dim_value(channels)
    return g is None or n is None or n % g == 0


def channels_reason(x: T.TensorT, w: T.TensorT, axis: int, groups: T.Dim) -> str:
    """Why x's channels do not fit w's dim `axis`, in both dims."""
    found = f"x has {x.dims[1]} channels (dim 1 of {x}) and w takes {w.dims[axis]} (dim {axis} of {w})"
    return found if T.is_one(groups) else f"{found} in each of {_shown(groups)} groups"


# The parameters every convolution starts with, and its keyword options.
_CONV_HEAD = (BParam(name="x"), BParam(name="w"), BParam(name="bias", required=False))


def _options(*names: str) -> tuple[BParam, ...]:
    return tuple(BParam(name=n, required=False, keyword_only=True) for n in names)


@builtin(
    Builtin(
        name="conv2d",
        params=(*_CONV_HEAD, *_options("stride", "padding", "dilation", "groups")),
        signature="conv2d(x: [b Ci H W] Float, w: [Co (Ci/g) KH KW] Float, bias: [Co], stride=s, padding=p, dilation=d, "
        "groups=g) -> [b Co ((H+2*p-d*(KH-1)-1)/s+1) ((W+2*p-d*(KW-1)-1)/s+1)]",
        doc="2-D convolution (cross-correlation, as torch's conv2d) of x by the kernels w, plus an optional bias per "
        "output channel; stride, zero padding, dilation and groups are integer literals or dims, 1, 0, 1 and 1 "
        "when left out.",
        example="h = conv2d(zeros([2 1 5 5]), ones([3 1 3 3]), stride=2, padding=1)",
        group="conv",
        runtime="conv2d",
        note="x's channels are groups times w's dim 1, groups divide Co, and the kernel fits in the padded input "
        "([E0214](diagnostics.md#e0214)).",
    ),
)
def _conv2d(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = tensor_arg(c, bound["x"], env, "conv2d", "x")
    w = tensor_arg(c, bound["w"], env, "conv2d", "w")
    bias = tensor_arg(c, bound["bias"], env, "conv2d", "bias") if "bias" in bound else None
    stride = size_arg(c, bound.get("stride"), env, "stride", "conv2d", 1, 1)
    padding = size_arg(c, bound.get("padding"), env, "padding", "conv2d", 0, 0)
    grouping = grouping_args(c, bound, env, "conv2d")
    if x is None or w is None or stride is None or padding is None or ("bias" in bound and bias is None):
        return T.UNKNOWN
    if grouping is None:
        return T.UNKNOWN
    dilation, groups = grouping
    if not _four_dims(c, x, bound["x"], "conv2d", "x", "[b Ci H W]"):
        return T.UNKNOWN
    if not _four_dims(c, w, bound["w"], "conv2d", "w", "[Co Ci KH KW]"):
        return T.UNKNOWN
    if not grouped_fit(c, bound, "conv2d", x, w, groups):
        return T.UNKNOWN
    if x.elem.dtype != w.elem.dtype:
        c.diags.append(
            C.E0302.at(
                node.span, context="conv2d needs one element type: ", expected=x.show_elem(), found=w.show_elem()
            )
        )
        return T.UNKNOWN
    sizes: list[T.Dim] = []
    for size, kernel in ((x.dims[2], w.dims[2]), (x.dims[3], w.dims[3])):
        out = _out_size(size, kernel, stride, padding, dilation)
        if out is None:
            reason = _too_small(size, kernel, padding, dilation)
            c.diags.append(C.E0214.at(bound["w"].node.span, operation="conv2d", reason=reason))
            return T.UNKNOWN
        sizes.append(out)
    if not bias_fits(c, node, bound, "conv2d", bias, w.dims[0], x):
        return T.UNKNOWN
    result = T.TensorT((x.dims[0], w.dims[0], *sizes), T.Elem(x.elem.dtype))
    _record(c, node, bound, result, x, w, stride, padding, dilation)
    return result


def _record(
    c: RuleContext,
    node: A.Node,
    bound: Bound,
    result: T.TensorT,
    x: T.TensorT,
    w: T.TensorT,
    stride: T.Dim,
    padding: T.Dim,
    dilation: T.Dim,
) -> None:
    """The conv for size_hints: its sizes with another padding, tried up to
    the one that keeps them (dilation*(kernel-1))."""
    kernels = [T.dim_value(k) for k in w.dims[2:]]
    d = T.dim_value(dilation)
    most = max((d * (k - 1) for k in kernels if k is not None), default=0) if d is not None else 0

    def retry(p: int) -> tuple[T.Dim, ...] | None:
        out = [_out_size(size, k, stride, T.DimLit(p), dilation) for size, k in zip(x.dims[2:], w.dims[2:])]
        return None if any(o is None for o in out) else tuple(o for o in out if o is not None)

    fix_at = size_hints.conv_fix_at(node, bound.get("padding"))
    source = size_hints.SizeSource(node.span, "conv2d", "", x, result, (2, 3), _shown(padding), retry, most, fix_at)
    c.size_sources[(source.span.start, source.span.end)] = source  # what size_hints explains


def grouped_fit(c: RuleContext, bound: Bound, fn: str, x: T.TensorT, w: T.TensorT, groups: T.Dim) -> bool:
    """A convolution's channels: x's are `groups` times w's dim 1, and the
    groups divide w's output channels (dim 0), as torch requires (E0214)."""
    if not channels_fit(x.dims[1], w.dims[1], groups):
        c.diags.append(C.E0214.at(bound["w"].node.span, operation=fn, reason=channels_reason(x, w, 1, groups)))
        return False
    if not divides(groups, w.dims[0]):
        reason = C.E0214.say("groups_output_channels", groups=_shown(groups), channels=_shown(w.dims[0]), w=w)
        c.diags.append(C.E0214.at(bound["groups"].node.span, operation=fn, reason=reason))
        return False
    return True


def bias_fits(
    c: RuleContext, node: A.Node, bound: Bound, fn: str, bias: T.TensorT | None, out: T.Dim, x: T.TensorT
) -> bool:
    """A convolution's optional bias: one value per output channel, `[Co]`,
    of x's element type."""
    if bias is None:
        return True
    if bias.rank != 1 or not T.dims_equal(bias.dims[0], out):
        want = T.TensorT((out,), bias.elem)
        c.diags.append(
            C.E0201.at(bound["bias"].node.span, context=f"bias of {fn}: ", expected=str(want), found=str(bias))
        )
        return False
    if bias.elem.dtype != x.elem.dtype:
        c.diags.append(
            C.E0302.at(
                node.span, context=f"{fn} needs one element type: ", expected=x.show_elem(), found=bias.show_elem()
            )
        )
        return False
    return True


@builtin(
    Builtin(
        name="max_pool2d",
        params=(
            BParam(name="x"),
            BParam(name="k"),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
        ),
        signature="max_pool2d(x: [b C H W] Float, k: Int, stride=k, padding=p) -> [b C ((H+2*p-k)/s+1) ((W+2*p-k)/s+1)]",
        doc="The largest value of each k by k window of the last two dims, windows stride apart (k when left out), "
        "the input padded with -inf by padding (0 when left out), as torch's max_pool2d; each is an integer "
        "literal or a dim.",
        example="p = max_pool2d(zeros([2 3 4 4]), 2)",
        group="conv",
        runtime="max_pool2d",
        note="padding is at most k/2 ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        name="avg_pool2d",
        params=(
            BParam(name="x"),
            BParam(name="k"),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
        ),
        signature="avg_pool2d(x: [b C H W] Float, k: Int, stride=k, padding=p) -> [b C ((H+2*p-k)/s+1) ((W+2*p-k)/s+1)]",
        doc="The mean of each k by k window of the last two dims, windows stride apart (k when left out), the input "
        "padded with zeros by padding (0 when left out) that count in the mean, as torch's avg_pool2d; each is "
        "an integer literal or a dim.",
        example="p = avg_pool2d(zeros([2 3 5 5]), 2)",
        group="conv",
        runtime="avg_pool2d",
        note="padding is at most k/2 ([E0301](diagnostics.md#e0301)).",
    ),
)
def _pool2d(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """max_pool2d, avg_pool2d: windows of k by k, stride apart (k when left
    out, as torch's), padded by padding (at most k/2, as torch requires).
    Both keep the element type: the largest or the mean of NonNeg (Prob)
    values is one (max pads with -inf, avg with zeros)."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    k = size_arg(c, bound["k"], env, "k", b.name, 1, 1)
    stride_a = bound.get("stride")
    stride = size_arg(c, stride_a, env, "stride", b.name, 1, 1) if stride_a is not None else k
    padding_a = bound.get("padding")
    padding = size_arg(c, padding_a, env, "padding", b.name, 0, 0)
    if x is None or k is None or stride is None or padding is None:
        return T.UNKNOWN
    known_k, known_p = T.dim_value(k), T.dim_value(padding)
    if padding_a is not None and known_k is not None and known_p is not None and 2 * known_p > known_k:
        c.diags.append(
            C.E0301.at(
                padding_a.node.span,
                context=f"padding of {b.name}: ",
                expected=f"at most half the window ({known_k}/2)",
                found=str(known_p),
            )
        )
        return T.UNKNOWN
    if not _four_dims(c, x, bound["x"], b.name, "x", "[b C H W]"):
        return T.UNKNOWN
    sizes: list[T.Dim] = []
    for size in x.dims[2:]:
        out = _out_size(size, k, stride, padding)
        if out is None:
            reason = _too_small(size, k, padding)
            c.diags.append(C.E0214.at(bound["k"].node.span, operation=b.name, reason=reason))
            return T.UNKNOWN
        sizes.append(out)
    return T.TensorT(x.dims[:2] + tuple(sizes), x.elem)


def _operands(
    c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env
) -> tuple[T.TensorT, T.TensorT, T.TensorT | None, T.Dim, T.Dim, T.Dim, T.Dim] | None:
    """x, w, the bias (or None), stride, padding, dilation and groups, each
    checked; None after a diagnostic."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    w = tensor_arg(c, bound["w"], env, b.name, "w")
    bias = tensor_arg(c, bound["bias"], env, b.name, "bias") if "bias" in bound else None
    stride = size_arg(c, bound.get("stride"), env, "stride", b.name, 1, 1)
    padding = size_arg(c, bound.get("padding"), env, "padding", b.name, 0, 0)
    grouping = grouping_args(c, bound, env, b.name)
    if x is None or w is None or stride is None or padding is None or ("bias" in bound and bias is None):
        return None
    if grouping is None:
        return None
    return x, w, bias, stride, padding, *grouping


def _same_elem(c: RuleContext, node: A.Node, fn: str, x: T.TensorT, w: T.TensorT) -> bool:
    if x.elem.dtype == w.elem.dtype:
        return True
    c.diags.append(
        C.E0302.at(node.span, context=f"{fn} needs one element type: ", expected=x.show_elem(), found=w.show_elem())
    )
    return False


@builtin(
    Builtin(
        name="conv1d",
        params=(*_CONV_HEAD, *_options("stride", "padding", "dilation", "groups")),
        signature="conv1d(x: [b Ci L] Float, w: [Co (Ci/g) K] Float, bias: [Co], stride=s, padding=p, dilation=d, groups=g) "
        "-> [b Co ((L+2*p-d*(K-1)-1)/s+1)]",
        doc="1-D convolution (cross-correlation, as torch's conv1d) of x by the kernels w, plus an optional bias; "
        "stride, padding, dilation and groups as for conv2d.",
        example="h = conv1d(zeros([2 1 8]), ones([3 1 3]))",
        group="conv",
        runtime="conv1d",
        note="x's channels are groups times w's dim 1, and groups divide Co ([E0214](diagnostics.md#e0214)).",
    ),
)
def _conv1d(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """conv1d(x: [b Ci L], w: [Co Ci K], bias, stride=, padding=) -> [b Co ((L+2*p-K)/s+1)]."""
    got = _operands(c, node, b, bound, env)
    if got is None:
        return T.UNKNOWN
    x, w, bias, stride, padding, dilation, groups = got
    if not _four_dims(c, x, bound["x"], "conv1d", "x", "[b Ci L]", 3):
        return T.UNKNOWN
    if not _four_dims(c, w, bound["w"], "conv1d", "w", "[Co Ci K]", 3):
        return T.UNKNOWN
    if not grouped_fit(c, bound, "conv1d", x, w, groups):
        return T.UNKNOWN
    if not _same_elem(c, node, "conv1d", x, w):
        return T.UNKNOWN
    out = _out_size(x.dims[2], w.dims[2], stride, padding, dilation)
    if out is None:
        reason = _too_small(x.dims[2], w.dims[2], padding, dilation)
        c.diags.append(C.E0214.at(bound["w"].node.span, operation="conv1d", reason=reason))
        return T.UNKNOWN
    if not bias_fits(c, node, bound, "conv1d", bias, w.dims[0], x):
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


@builtin(
    Builtin(
        name="conv_transpose2d",
        params=(*_CONV_HEAD, *_options("stride", "padding", "output_padding", "groups", "dilation")),
        signature="conv_transpose2d(x: [b Ci H W] Float, w: [Ci (Co/g) KH KW] Float, bias: [Co], stride=s, padding=p, "
        "output_padding=op, groups=g, dilation=d) -> [b Co ((H-1)*s-2*p+d*(KH-1)+op+1) ((W-1)*s-2*p+d*(KW-1)+op+1)]",
        doc="Transposed 2-D convolution (torch's conv_transpose2d: the gradient of conv2d with respect to its input), "
        "w laid out as torch stores it, [Ci Co/g KH KW]; output_padding, below the stride (or the dilation), adds "
        "rows and columns at the end.",
        example="h = conv_transpose2d(zeros([2 3 4 4]), ones([3 5 3 3]), stride=2, padding=1, output_padding=1)",
        group="conv",
        runtime="conv_transpose2d",
        note="x's channels Ci are w's first dim, and groups divide them ([E0214](diagnostics.md#e0214)).",
    ),
)
def _conv_transpose2d(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """conv_transpose2d(x: [b Ci H W], w: [Ci Co KH KW], bias, stride=,
    padding=, output_padding=) -> [b Co ((H-1)*s-2*p+KH+op) ...]: the
    gradient of conv2d with respect to its input, as torch's."""
    got = _operands(c, node, b, bound, env)
    extra_a = bound.get("output_padding")
    extra = size_arg(c, extra_a, env, "output_padding", "conv_transpose2d", 0, 0)
    if got is None or extra is None:
        return T.UNKNOWN
    x, w, bias, stride, padding, dilation, groups = got
    known_extra, known_stride, known_dilation = _known(extra), _known(stride), _known(dilation)
    # torch: output_padding below the stride or below the dilation
    below = None if known_stride is None or known_dilation is None else max(known_stride, known_dilation)
    if extra_a is not None and known_extra is not None and below is not None and known_extra >= below:
        what = "the stride" if known_dilation == 1 else "the stride or the dilation"
        c.diags.append(
            C.E0301.at(
                extra_a.node.span,
                context="output_padding of conv_transpose2d: ",
                expected=f"an integer literal below {what} ({below})",
                found=str(known_extra),
            )
        )
        return T.UNKNOWN
    if not _four_dims(c, x, bound["x"], "conv_transpose2d", "x", "[b Ci H W]"):
        return T.UNKNOWN
    if not _four_dims(c, w, bound["w"], "conv_transpose2d", "w", "[Ci Co KH KW]"):
        return T.UNKNOWN
    if not T.dims_equal(x.dims[1], w.dims[0]):
        reason = channels_reason(x, w, 0, T.DimLit(1))
        c.diags.append(C.E0214.at(bound["w"].node.span, operation="conv_transpose2d", reason=reason))
        return T.UNKNOWN
    if not divides(groups, x.dims[1]):
        reason = C.E0214.say("groups_input_channels", groups=_shown(groups), channels=_shown(x.dims[1]), x=x)
        c.diags.append(C.E0214.at(bound["groups"].node.span, operation="conv_transpose2d", reason=reason))
        return T.UNKNOWN
    if not _same_elem(c, node, "conv_transpose2d", x, w):
        return T.UNKNOWN
    sizes: list[T.Dim] = []
    for size, kernel in ((x.dims[2], w.dims[2]), (x.dims[3], w.dims[3])):
        out = _transposed_size(size, kernel, stride, padding, extra, dilation)
        if out is None:
            window = dim_text(kernel) if T.is_one(dilation) else f"{dim_text(dilation)}*({dim_text(kernel)}-1)+1"
            reason = C.E0214.say(
                "transposed_no_output",
                padding=dim_text(padding),
                size=dim_text(size),
                stride=dim_text(stride),
                window=window,
                extra=f"+{dim_text(extra)}" if _known(extra) != 0 else "",
            )
            c.diags.append(C.E0214.at(bound["w"].node.span, operation="conv_transpose2d", reason=reason))
            return T.UNKNOWN
        sizes.append(out)
    out_channels = times_groups(w.dims[1], groups)
    if not bias_fits(c, node, bound, "conv_transpose2d", bias, out_channels, x):
        return T.UNKNOWN
    return T.TensorT((x.dims[0], out_channels, *sizes), T.Elem(x.elem.dtype))
