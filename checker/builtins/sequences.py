"""Built-ins that run along one dim, keeping or growing it: the running
totals `cumsum` and `cumprod` (torch.cumsum, torch.cumprod), `roll` (the
values shifted round the dim), `repeat_interleave` (each value repeated,
the dim `(d*r)`), and `linspace` (evenly spaced numbers, `[n] Float`).

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
from ..body.env import Env
from .args import Bound, dim_arg, dim_from, dim_of_arg, dim_text, dim_value_arg, expect_number, named_over, quiet_dim, tensor_arg
from .registry import builtin
from .spec import OVER, BParam, Builtin, X


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
