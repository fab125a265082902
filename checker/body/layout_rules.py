"""Typing rules of the built-ins that move values without computing on them:
pad (constant padding of the last dims), flip, pixel_shuffle and
pixel_unshuffle. The result's sizes are dim arithmetic (checker/dimexpr.py):
`pad(x, (1, 2))` of `[b C H W]` is `[b C H (W+3)]`, `pixel_shuffle(x, 2)`
of `[b (C*4) H W]` is `[b C (H*2) (W*2)]`."""

from __future__ import annotations

import math

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import CallArg, Env
from .rule_args import dim_from, dim_text, dim_value_arg, literal_number, over_axes, poly_dim, quiet_over
from .text import expr_text, plural


@rule("pad")
def _pad(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """pad(x, (left, right, ...), value=0.0): the pairs pad the last dim,
    then the one before it, ... as torch's F.pad (mode "constant")."""
    x = ctx.tensor_arg(bound["x"], env, "pad", "x", float_only=False)
    e = bound["pad"].node
    if not isinstance(e, A.TupleExpr):
        ctx.value(e, env)
        ctx.diags.append(
            C.E0301.at(
                e.span,
                context="pad of pad: ",
                expected="a tuple of sizes (left, right, ...) for the last dims",
                found=expr_text(e),
            )
        )
        return T.UNKNOWN
    sizes: list[T.Dim] = []
    ok = True
    for item in e.items:
        d = dim_value_arg(ctx, CallArg(item, None, item.span), env, "pad", "each size", least=0)
        if d is None:
            ok = False
        else:
            sizes.append(d)
    ctx.types[e] = T.TupleT(tuple(T.NumberT("Int", True) for _ in e.items))
    fill = _pad_value(ctx, bound.get("value"), env, x)
    if x is None or not ok or fill is None:
        return T.UNKNOWN
    if len(sizes) % 2:
        reason = f"the sizes come in pairs (left, right), from the last dim back; found {len(sizes)}"
        ctx.diags.append(C.E0214.at(e.span, operation="pad", reason=reason))
        return T.UNKNOWN
    pairs = len(sizes) // 2
    if pairs > x.rank:
        needed = plural(pairs, "dim") + (" or more" if pairs > 1 else "")
        ctx.diags.append(C.E0210.at(e.span, operation=f"pad of {pairs} pairs", needed=needed, found=str(x)))
        return T.UNKNOWN
    dims = list(x.dims)
    for i in range(pairs):
        at = x.rank - 1 - i
        dims[at] = _grown(dims[at], sizes[2 * i], sizes[2 * i + 1])
    return T.TensorT(tuple(dims), _padded_elem(x.elem, fill))


def _grown(d: T.Dim, left: T.Dim, right: T.Dim) -> T.Dim:
    """`d` with `left` and `right` added: `(W+3)`, `(W+P+P)`, or `d` itself for (0, 0)."""
    parts = (d, left, right)
    polys = [T.dim_poly(p) for p in parts]
    if any(p is None for p in polys):
        return T.DimUnknown()
    added = [p for p in (left, right) if T.dim_value(p) != 0 or not isinstance(p, T.DimLit)]
    if not added:
        return d
    total = DX.const(0)
    for p in polys:
        assert p is not None
        total = DX.add(total, p)
    numbers = sum(T.dim_value(p) or 0 for p in added if isinstance(p, T.DimLit))
    names = [dim_text(p) for p in added if not isinstance(p, T.DimLit)]
    text = "(" + "+".join([dim_text(d), *names] + ([str(numbers)] if numbers else [])) + ")"
    return dim_from(total, text, parts)


def _pad_value(ctx: RuleContext, a: CallArg | None, env: Env, x: T.TensorT | None) -> float | bool | None:
    """value=: a number that suits x's element type (0 when left out); its
    literal value, or nan when it is not a literal; None after an error."""
    if a is None:
        return 0
    t = ctx.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return None
    if not (isinstance(t, T.NumberT) and t.kind in ("Int", "Float", "Bool")):
        ctx.diags.append(C.E0301.at(a.node.span, context="value of pad: ", expected="a number", found=T.describe(t)))
        return None
    if x is not None:
        want = "Bool" if x.elem.is_bool else "Int" if not x.elem.is_float else None
        fits = t.kind in ("Int", "Float") if want is None else t.kind == want
        if not fits:
            ctx.diags.append(
                C.E0302.at(
                    a.node.span,
                    context=f"value of pad on {x.show_elem()}: ",
                    expected=want or "a Float",
                    found=t.kind,
                )
            )
            return None
    if isinstance(a.node, A.BoolLit):
        return a.node.value
    v = literal_number(a.node)
    return v if v is not None else float("nan")


def _padded_elem(elem: T.Elem, fill: float | bool) -> T.Elem:
    """The element type of a padded tensor: a refinement (NonNeg, Prob,
    Index[C]) stays when the fill value is a literal inside it."""
    if isinstance(fill, bool):
        return elem
    if math.isnan(fill):  # not a literal: nothing is known of it
        return T.with_refine(elem, None) if elem.index is None else T.Elem(elem.dtype)
    if elem.index is not None:
        size = T.dim_value(elem.index)
        whole = math.isfinite(fill) and fill >= 0 and fill == int(fill)
        inside = whole and (fill < size if size is not None else fill == 0)
        return elem if inside else T.Elem(elem.dtype)
    if elem.refine == "prob":
        return elem if 0 <= fill <= 1 else T.with_refine(elem, "nonneg" if fill >= 0 else None)
    if elem.refine == "nonneg":
        return elem if fill >= 0 else elem.plain()
    return elem


@rule("flip")
def _flip(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """flip(x, over=d) or over=(d1, d2): the order of the values along those dims reversed."""
    x = ctx.tensor_arg(bound["x"], env, "flip", "x", float_only=False)
    if x is None:
        quiet_over(ctx, bound["over"])
        return T.UNKNOWN
    got = over_axes(ctx, bound["over"], env, x, "flip", bound["x"])
    if got is None:
        return T.UNKNOWN
    axes, named = got
    ctx.axes[node] = axes
    return named


@rule("pixel_shuffle")
def _pixel_shuffle(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """pixel_shuffle(x, r): [.. (C*r*r) H W] to [.. C (H*r) (W*r)];
    pixel_unshuffle(x, r) the other way."""
    x = ctx.tensor_arg(bound["x"], env, b.name, "x", float_only=False)
    r = dim_value_arg(ctx, bound["r"], env, b.name, "r")
    if x is None or r is None:
        return T.UNKNOWN
    if x.rank < 3:
        ctx.diags.append(
            C.E0210.at(bound["x"].node.span, operation=b.name, needed="3 dims or more ([.. C H W])", found=str(x))
        )
        return T.UNKNOWN
    pr = T.dim_poly(r)
    polys = [T.dim_poly(d) for d in x.dims[-3:]]
    if pr is None or any(p is None for p in polys):
        return T.TensorT(x.dims[:-3] + (T.DimUnknown(),) * 3, x.elem)
    pc, ph, pw = (p for p in polys if p is not None)
    c, h, w = x.dims[-3:]
    rt = dim_text(r)
    rr = DX.mul(pr, pr)
    if b.name == "pixel_shuffle":
        channels = _divided(ctx, bound, b.name, c, pc, rr, f"r*r={_shown(rr)}", x, -3)
        if channels is None:
            return T.UNKNOWN
        out = (
            channels,
            dim_from(DX.mul(ph, pr), f"({dim_text(h)}*{rt})", (h, r)),
            dim_from(DX.mul(pw, pr), f"({dim_text(w)}*{rt})", (w, r)),
        )
    else:
        rows = _divided(ctx, bound, b.name, h, ph, pr, f"r={_shown(pr)}", x, -2)
        cols = _divided(ctx, bound, b.name, w, pw, pr, f"r={_shown(pr)}", x, -1) if rows is not None else None
        if rows is None or cols is None:
            return T.UNKNOWN
        r2 = str(r.value**2) if isinstance(r, T.DimLit) else f"{rt}*{rt}"
        out = (dim_from(DX.mul(pc, rr), f"({dim_text(c)}*{r2})", (c, r)), rows, cols)
    return T.TensorT(x.dims[:-3] + out, x.elem)


def _shown(p: DX.Poly) -> str:
    v = DX.value(p)
    return str(v) if v is not None else DX.render(p)


def _divided(
    ctx: RuleContext,
    bound: Bound,
    fn: str,
    d: T.Dim,
    p: DX.Poly,
    q: DX.Poly,
    by: str,
    x: T.TensorT,
    position: int,
) -> T.Dim | None:
    """`d / q` for a dim that must divide exactly: E0214 when its value is
    known and it does not. A generic size that is not provably a multiple
    stays a floored division, `(h/2)`, which torch checks at run time."""
    size, div = DX.value(p), DX.value(q)
    if size is not None and div is not None and size % div:
        reason = f"{by} does not divide {_dim_shown(d)} (dim {position} of {x})"
        ctx.diags.append(C.E0214.at(bound["r"].node.span, operation=fn, reason=reason))
        return None
    quotient = DX.div(p, q)
    assert quotient is not None  # q is a positive size
    if size is not None and div is not None:
        return T.DimLit(size // div)
    return poly_dim(quotient)


def _dim_shown(d: T.Dim) -> str:
    return f"{d}={d.value}" if isinstance(d, T.DimConst) else str(d)
