"""Resampling images to another size: the adaptive pools
(adaptive_avg_pool2d, adaptive_max_pool2d: torch's bins for any output size)
and interpolate (torch's F.interpolate: nearest, linear and bilinear, by a
size or an integer scale factor). Each result's size is in its type."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from .args import Bound, bool_arg, choice_arg, dim_from, dim_text, dim_value_arg, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin, X


def _sizes(c: RuleContext, a: CallArg, env: Env, fn: str, what: str) -> list[T.Dim] | None:
    """A size (an integer literal or a dim) or a tuple of them: the dims
    (one for a single size); None after a diagnostic."""
    e = a.node
    if isinstance(e, A.TupleExpr):
        got = [dim_value_arg(c, CallArg(item, None, item.span), env, fn, what) for item in e.items]
        c.types[e] = T.TupleT(tuple(T.NumberT("Int", True) for _ in e.items))
        return None if any(d is None for d in got) else [d for d in got if d is not None]
    d = dim_value_arg(c, a, env, fn, what)
    return None if d is None else [d]


@builtin(
    Builtin(
        name="adaptive_avg_pool2d",
        params=(X, BParam(name="output_size")),
        signature="adaptive_avg_pool2d(x: [.. C H W] Float, output_size: (h, w) or s) -> [.. C h w]",
        doc="The mean of each of h by w bins of the image (torch's F.adaptive_avg_pool2d: bin i of H spans "
        "floor(i*H/h) to ceil((i+1)*H/h)); one size s is s by s, so output_size=1 is the global average.",
        example="p = adaptive_avg_pool2d(zeros([2 3 7 7]), 1)",
        group="layers",
        runtime="adaptive_avg_pool2d",
    ),
    Builtin(
        name="adaptive_max_pool2d",
        params=(X, BParam(name="output_size")),
        signature="adaptive_max_pool2d(x: [.. C H W] Float, output_size: (h, w) or s) -> [.. C h w]",
        doc="The largest value of each of h by w bins of the image (torch's F.adaptive_max_pool2d, the bins of "
        "adaptive_avg_pool2d); one size s is s by s.",
        example="p = adaptive_max_pool2d(zeros([2 3 7 7]), (2, 3))",
        group="layers",
        runtime="adaptive_max_pool2d",
    ),
)
def _adaptive_pool(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """adaptive_*_pool2d(x: [.. C H W], (h, w) or s): [.. C h w]."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    sizes = _sizes(c, bound["output_size"], env, b.name, "output_size")
    if x is None or sizes is None:
        return T.UNKNOWN
    if x.rank not in (3, 4):
        needed = "3 or 4 dims ([C H W] or [b C H W])"
        c.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed=needed, found=str(x)))
        return T.UNKNOWN
    if len(sizes) not in (1, 2):
        problem = C.E0952.say("sizes", what="output_size", count=len(sizes), want="1 or 2")
        c.diags.append(C.E0952.at(bound["output_size"].node.span, fn=b.name, problem=problem))
        return T.UNKNOWN
    h, w = (sizes[0], sizes[0]) if len(sizes) == 1 else sizes
    return T.TensorT(x.dims[:-2] + (h, w), T.Elem(x.elem.dtype))


INTERPOLATE_MODES = ("nearest", "linear", "bilinear")
# the number of dims each interpolating mode resizes (nearest: 1 to 3)
_MODE_DIMS = {"linear": 1, "bilinear": 2}


@builtin(
    Builtin(
        name="interpolate",
        params=(
            X,
            BParam(name="size", required=False, keyword_only=True),
            BParam(name="scale_factor", required=False, keyword_only=True),
            BParam(name="mode", required=False, keyword_only=True),
            BParam(name="align_corners", required=False, keyword_only=True),
        ),
        signature='interpolate(x: [b C ..] Float, size=(h, w) or s, scale_factor=r, mode="nearest", '
        "align_corners=False) -> [b C ..]",
        doc="The dims after C resized, as torch's F.interpolate: to size= (one size for every dim, or one each) or "
        'by an integer scale_factor= (H becomes (H*r)); mode "nearest" (1 to 3 dims), "linear" ([b C L]) or '
        '"bilinear" ([b C H W]), align_corners= for the last two.',
        example='u = interpolate(zeros([2 3 4 4]), scale_factor=2, mode="bilinear")',
        group="layers",
        runtime="interpolate",
        note="One of size= and scale_factor=, sizes for the dims there are, align_corners= only where it "
        "interpolates ([E0952](diagnostics.md#e0952)).",
    ),
)
def _interpolate(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """interpolate(x: [b C ..], size= or scale_factor=, mode=, align_corners=)."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    mode = choice_arg(c, bound.get("mode"), env, "mode of interpolate", INTERPOLATE_MODES)
    corners = bound.get("align_corners")
    if corners is not None:
        bool_arg(c, corners, env, "align_corners of interpolate")
    size_a, scale_a = bound.get("size"), bound.get("scale_factor")
    sizes = _sizes(c, size_a, env, b.name, "size") if size_a is not None else []
    scale = dim_value_arg(c, scale_a, env, b.name, "scale_factor") if scale_a is not None else None
    if (size_a is None) == (scale_a is None):
        problem = C.E0952.say("both") if size_a is not None else C.E0952.say("neither")
        at = scale_a.span if scale_a is not None else node.span
        c.diags.append(C.E0952.at(at, fn=b.name, problem=problem))
        return T.UNKNOWN
    if x is None or mode is None or sizes is None or (scale_a is not None and scale is None):
        return T.UNKNOWN
    spatial = x.rank - 2
    want = _MODE_DIMS.get(mode)
    if spatial < 1 or spatial > 3 or (want is not None and spatial != want):
        shapes = {1: "[b C L]", 2: "[b C H W]"}
        needed = f'{shapes[want]} for mode "{mode}"' if want else '3 to 5 dims ([b C ..]) for mode "nearest"'
        c.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed=needed, found=str(x)))
        return T.UNKNOWN
    if corners is not None and want is None:
        c.diags.append(C.E0952.at(corners.span, fn=b.name, problem=C.E0952.say("corners", mode=mode)))
        return T.UNKNOWN
    if size_a is not None:
        if len(sizes) not in (1, spatial):
            problem = C.E0952.say("sizes", what="size", count=len(sizes), want=f"1 or {spatial}")
            c.diags.append(C.E0952.at(size_a.node.span, fn=b.name, problem=problem))
            return T.UNKNOWN
        out = tuple(sizes * spatial if len(sizes) == 1 else sizes)
    else:
        assert scale is not None
        out = tuple(_scaled(d, scale) for d in x.dims[2:])
    return T.TensorT(x.dims[:2] + out, T.Elem(x.elem.dtype))


def _scaled(d: T.Dim, r: T.Dim) -> T.Dim:
    """`(H*r)`; `d` itself for r = 1."""
    if T.dim_value(r) == 1:
        return d
    pd, pr = T.dim_poly(d), T.dim_poly(r)
    if pd is None or pr is None:
        return T.DimUnknown()
    return dim_from(DX.mul(pd, pr), f"({dim_text(d)}*{dim_text(r)})", (d, r))
