"""Built-ins that run along one dim, keeping or growing it: the running
totals `cumsum` and `cumprod` (torch.cumsum, torch.cumprod), `roll` (the
values shifted round the dim), `repeat_interleave` (each value repeated,
the dim `(d*r)`), `linspace` (evenly spaced numbers, `[n] Float`), and
torch's Tensor.expand and Tensor.repeat: `expand(x, [b T D])` of `[1 T D]`
(a shape, as reshape takes it), `repeat(x, (2, 1))` of `[b D]` is
`[(b*2) D]`.

`cumsum(x, over=T)` of `[b T]` is `[b T]`; of an integer or Bool tensor it
is `i64` as in torch; a running product of probabilities stays a `Prob`,
a running total or product of `NonNeg` values a `NonNeg`.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.text import plural
from .args import (
    Bound,
    dim_arg,
    dim_from,
    dim_of_arg,
    dim_text,
    dim_value_arg,
    expect_number,
    named_over,
    not_literal,
    quiet_dim,
    shape_arg,
    tensor_arg,
)
from .registry import builtin
from .spec import OVER, BParam, Builtin, ParamKind, X


def _along(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> tuple[T.TensorT, int] | None:
    """x and the axis of over= (None after a diagnostic)."""
    t = tensor_arg(c, bound["x"], env, b.name, "x", float_only=False)
    if t is None:
        quiet_dim(c, bound.get("over"), env)
        return None
    axis = dim_arg(c, bound["over"], env, t, b.name, bound["x"])
    c.axes[node] = axis
    if axis is None:
        return None
    return named_over(c, t, axis, bound["over"]), axis


@builtin(
    Builtin(
        name="cumsum",
        params=(X, OVER),
        signature="cumsum(x: [..], over=d) -> [..]",
        doc="The running sums along dim d (torch.cumsum): each value is the sum of those before it and itself; of an "
        "integer or Bool tensor an i64 tensor.",
        example="s = cumsum(x, over=D)",
        group="along",
        runtime="cumsum",
        rest_ok=True,
    ),
    Builtin(
        name="cumprod",
        params=(X, OVER),
        signature="cumprod(x: [..], over=d) -> [..]",
        doc="The running products along dim d (torch.cumprod): a DDPM's alphas_cumprod is cumprod(1.0 - betas, "
        "over=N); of an integer or Bool tensor an i64 tensor.",
        example="p = cumprod(x, over=D)",
        group="along",
        runtime="cumprod",
        rest_ok=True,
    ),
)
def _scan(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    got = _along(c, node, b, bound, env)
    if got is None:
        return T.UNKNOWN
    t, _ = got
    elem = t.elem
    if not elem.is_float:
        elem = T.Elem("i64")  # torch's running sum or product of integers or Bools
    else:
        keep = ("nonneg",) if b.name == "cumsum" else ("nonneg", "prob")
        elem = T.with_refine(T.Elem(elem.dtype), elem.refine if elem.refine in keep else None)
    return T.TensorT(t.dims, elem)


@builtin(
    Builtin(
        name="roll",
        params=(X, BParam(name="shifts"), OVER),
        signature="roll(x: [..], shifts: Int, over=d) -> [..]",
        doc="The values of x shifted by `shifts` places along dim d, those past the end coming round to the start "
        "(torch.roll); shifts may be negative.",
        example="r = roll(x, 1, over=D)",
        group="shape",
        runtime="roll",
        rest_ok=True,
    ),
)
def _roll(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    shifts_ok = expect_number(c, bound["shifts"], env, "Int", "shifts of roll")
    got = _along(c, node, b, bound, env)
    if got is None or not shifts_ok:
        return T.UNKNOWN
    return got[0]


@builtin(
    Builtin(
        name="repeat_interleave",
        params=(X, BParam(name="repeats"), OVER),
        signature="repeat_interleave(x: [.. d ..], r, over=d) -> [.. (d*r) ..]",
        doc="Each value of x repeated r times in place along dim d (torch.repeat_interleave): [1, 2] twice is "
        "[1, 1, 2, 2]; r is a positive integer literal or a dim.",
        example="r = repeat_interleave(x, 2, over=D)",
        group="shape",
        runtime="repeat_interleave",
    ),
)
def _repeat_interleave(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    r = dim_value_arg(c, bound["repeats"], env, b.name, "repeats")
    got = _along(c, node, b, bound, env)
    if got is None or r is None:
        return T.UNKNOWN
    t, axis = got
    d = t.dims[axis]
    pd, pr = T.dim_poly(d), T.dim_poly(r)
    grown: T.Dim = T.DimUnknown()
    if pd is not None and pr is not None:
        grown = dim_from(DX.mul(pd, pr), f"({dim_text(d)}*{dim_text(r)})", (d, r))
    return T.TensorT(t.dims[:axis] + (grown,) + t.dims[axis + 1 :], t.elem)


@builtin(
    Builtin(
        name="linspace",
        params=(BParam(name="start"), BParam(name="end"), BParam(name="steps")),
        signature="linspace(start: Float, end: Float, steps: a dim) -> [steps] Float",
        doc="steps evenly spaced numbers from start to end, both included (torch.linspace): a DDPM's betas are "
        "linspace(1e-4, 0.02, N).",
        example="s = linspace(0.0, 1.0, D)",
        group="create",
        runtime="linspace",
        dim_args=("steps",),
    ),
)
def _linspace(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    ends = [expect_number(c, bound[p], env, "Float", f"{p} of linspace") for p in ("start", "end")]
    steps = dim_of_arg(c, bound["steps"].node, "linspace", "steps")
    if steps is None or not all(ends):
        return T.UNKNOWN
    return T.TensorT((steps,), T.F32)


@builtin(
    Builtin(
        name="expand",
        params=(X, BParam(name="shape", kind=ParamKind.SHAPE)),
        signature="expand(x: [..], shape) -> shape",
        doc="x seen in a larger shape without copying (torch's Tensor.expand): each dim of x, matched from the right, "
        "is 1 or the shape's dim, and the shape may add dims in front: expand(x, [b T D]) of [1 T D] or [T D].",
        example="e = expand(x, [4 b D])",
        group="shape",
        runtime="expand",
        note="A dim that is neither 1 nor the shape's is [E0956](diagnostics.md#e0956).",
    ),
)
def _expand(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = tensor_arg(c, bound["x"], env, "expand", "x", float_only=False)
    target = shape_arg(c, bound["shape"], "expand")
    written = bound["shape"].node
    if x is None or target is None or not isinstance(written, A.TensorType):
        return T.UNKNOWN
    if target.rank < x.rank:
        reason = C.E0956.say("fewer_dims", x=str(x), shape=str(T.TensorT(target.dims)))
        c.diags.append(C.E0956.at(written.span, operation="expand", reason=reason))
        return T.UNKNOWN
    lead = target.rank - x.rank
    for i, d in enumerate(x.dims):
        want = target.dims[lead + i]
        if T.dim_value(d) == 1 or T.dims_equal(d, want) or isinstance(d, T.DimUnknown):
            continue
        reason = C.E0956.say("not_one", position=i - x.rank, x=str(x), dim=str(d), want=str(want))
        c.diags.append(C.E0956.at(written.dims[lead + i].span, operation="expand", reason=reason))
        return T.UNKNOWN
    return T.TensorT(target.dims, x.elem)


@builtin(
    Builtin(
        name="repeat",
        params=(X, BParam(name="repeats")),
        signature="repeat(x: [..], (r1, r2, ...)) -> [..]",
        doc="x tiled: copies of x laid side by side, r1 times along its first dim, r2 along the next ... (torch's "
        "Tensor.repeat); more counts than dims add dims in front: repeat(x, (2, 1)) of [b D] is [(b*2) D]. Each "
        "count is a positive integer literal or a dim.",
        example="r = repeat(x, (1, 3))",
        group="shape",
        runtime="repeat",
        note="One count per dim or more ([E0956](diagnostics.md#e0956)).",
    ),
)
def _repeat(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = tensor_arg(c, bound["x"], env, "repeat", "x", float_only=False)
    e = bound["repeats"].node
    if not isinstance(e, A.TupleExpr):
        not_literal(c, e, env, "repeats of repeat: ", "a tuple of counts, one per dim, such as (1, 3)")
        return T.UNKNOWN
    counts = [dim_value_arg(c, CallArg(item, None, item.span), env, "repeat", "each count") for item in e.items]
    c.types[e] = T.TupleT(tuple(T.INT for _ in e.items))
    if x is None or any(r is None for r in counts):
        return T.UNKNOWN
    if len(counts) < x.rank:
        reason = C.E0956.say("counts", counts=plural(len(counts), "count"), x=str(x), dims=plural(x.rank, "dim"))
        c.diags.append(C.E0956.at(e.span, operation="repeat", reason=reason))
        return T.UNKNOWN
    lead = len(counts) - x.rank
    dims: list[T.Dim] = []
    for i, r in enumerate(counts):
        assert r is not None
        if i < lead:
            dims.append(r)
            continue
        d = x.dims[i - lead]
        pd, pr = T.dim_poly(d), T.dim_poly(r)
        if T.dim_value(r) == 1 and isinstance(r, T.DimLit):
            dims.append(d)
        elif pd is None or pr is None:
            dims.append(T.DimUnknown())
        else:
            dims.append(dim_from(DX.mul(pd, pr), f"({dim_text(d)}*{dim_text(r)})", (d, r)))
    return T.TensorT(tuple(dims), x.elem)


def _shown(d: T.Dim) -> str:
    """A dim with its value when it is a named constant: `T=8`."""
    return f"{d}={d.value}" if isinstance(d, T.DimConst) and d.value is not None else str(d)


# A tuple of more parts than this is refused: each is a value of its own.
MOST_PARTS = 256


@builtin(
    Builtin(
        name="unbind",
        params=(X, OVER),
        signature="unbind(x: [.. d ..], over=d) -> ([.. ..], ...)",
        doc="The slices of x along dim d, as a tuple of d tensors without that dim (torch.unbind): h0, h1, h2 = "
        "unbind(x, over=K) of [b K D] with K = 3; d's size is known when the program is checked.",
        example="a, b2 = unbind(stack(x, x), over=0)",
        group="shape",
        runtime="unbind",
        note="A dim whose size is not known, or over 256, is [E0957](diagnostics.md#e0957).",
    ),
)
def _unbind(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    got = _along(c, node, b, bound, env)
    if got is None:
        return T.UNKNOWN
    t, axis = got
    d = t.dims[axis]
    n = T.dim_value(d)
    if n is None or n > MOST_PARTS:
        reason = C.E0957.say("unbind_size", dim=_shown(d), x=str(t), most=MOST_PARTS)
        c.diags.append(C.E0957.at(bound["over"].node.span, operation="unbind", reason=reason))
        return T.UNKNOWN
    piece = T.TensorT(t.dims[:axis] + t.dims[axis + 1 :], t.elem)
    return T.TupleT((piece,) * n)


@builtin(
    Builtin(
        name="split",
        params=(X, BParam(name="sizes"), OVER),
        signature="split(x: [.. d ..], (s1, s2, ...), over=d) -> ([.. s1 ..], [.. s2 ..], ...) / split(x, s, over=d)",
        doc="x cut along dim d into parts of the given sizes, which add up to d (torch.split): split(x, (H, H, 2*H), "
        "over=G); with one size s, parts of s and a last of what is left, d's size known.",
        example="a, b2 = split(x, (1, 3), over=D)",
        group="shape",
        runtime="split",
        note="Sizes that do not add up to the dim are [E0957](diagnostics.md#e0957).",
    ),
)
def _split(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    e = bound["sizes"].node
    items = e.items if isinstance(e, A.TupleExpr) else (e,)
    sizes = [dim_value_arg(c, CallArg(item, None, item.span), env, "split", "each size") for item in items]
    if isinstance(e, A.TupleExpr):
        c.types[e] = T.TupleT(tuple(T.INT for _ in items))
    got = _along(c, node, b, bound, env)
    if got is None or any(s is None for s in sizes):
        return T.UNKNOWN
    t, axis = got
    d = t.dims[axis]
    parts: list[T.Dim] = [s for s in sizes if s is not None]
    if not isinstance(e, A.TupleExpr):  # one size: parts of it, the last what is left
        whole, size = T.dim_value(d), T.dim_value(parts[0])
        if whole is None or size is None or -(-whole // size) > MOST_PARTS:
            reason = C.E0957.say("split_size", dim=_shown(d), x=str(t), most=MOST_PARTS)
            c.diags.append(C.E0957.at(bound["over"].node.span, operation="split", reason=reason))
            return T.UNKNOWN
        parts = [T.DimLit(min(size, whole - i)) for i in range(0, whole, size)]
    else:
        polys = [T.dim_poly(p) for p in parts]
        pd = T.dim_poly(d)
        total = DX.const(0)
        for p in polys:
            total = DX.add(total, p) if p is not None and pd is not None else total
        if pd is not None and all(p is not None for p in polys) and total != pd:
            shown = " + ".join(str(p) for p in parts)
            reason = C.E0957.say("split_sum", sizes=shown, total=DX.render(total), dim=_shown(d), x=str(t))
            c.diags.append(C.E0957.at(e.span, operation="split", reason=reason))
            return T.UNKNOWN
    return T.TupleT(tuple(T.TensorT(t.dims[:axis] + (p,) + t.dims[axis + 1 :], t.elem) for p in parts))


@builtin(
    Builtin(
        name="len",
        params=(BParam(name="a"),),
        signature="len(a: list | tuple | [n ..]) -> Int",
        doc="The number of elements of a list built in the body (hs = [], hs.append(h)) or of a tuple, or the size "
        "of a tensor's first dim, as Python's len.",
        example="n = len(x)",
        group="other",
        runtime=None,
    ),
)
def _len(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    a = bound["a"]
    t = c.value(a.node, env)
    if isinstance(t, (T.ListT, T.TupleT, T.UnknownT)) or (isinstance(t, T.TensorT) and t.rank >= 1):
        return T.INT
    found = T.describe(t)
    c.diags.append(
        C.E0301.at(a.node.span, context="argument 'a' of len: ", expected="a list, a tuple or a tensor", found=found)
    )
    return T.UNKNOWN
