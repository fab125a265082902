"""W0202, W0203: `softmax(z, over=0)` whose position names the batch dim, or
names a dim that comes again later in the shape."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ... import types as T
from ...diagnostics import Fix, TextEdit
from . import names as N
from .base import LintPass, on_call


@on_call("builtin")
def _softmaxes(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    if name in N._SOFTMAXES:
        softmax_position(p, call, name, bound.get(N._SOFTMAXES[name]), bound.get("over"))


def softmax_position(p: LintPass, call: A.Call, fn: str, x: A.Expr | None, over: A.Expr | None) -> None:
    """softmax(z, over=0) on `[b C]`: a position naming the batch dim."""
    if x is None or over is None:
        return
    position = _position(over)
    t = p.c.types.get(x)
    if position is None or not isinstance(t, T.TensorT) or T.has_rest(t) or not -t.rank <= position < t.rank:
        return
    axis = position % t.rank
    if axis == t.rank - 1:
        return
    d = t.dims[axis]
    last = t.dims[-1]
    if any(T.same_dim(d, e) for e in t.dims[axis + 1 :]):
        p.diags.append(
            C.W0203.at(
                over.span,
                fn=fn,
                over=str(position),
                operand=str(t),
                dim=str(d),
                fix=Fix("Normalise over the last dim: over=-1", (TextEdit(over.span, "-1"),)),
            )
        )
        return
    batch = isinstance(d, T.DimVar) and d.name in p.c.fn.generics
    if not (batch or (isinstance(d, T.DimConst) and d.name.split(".")[-1] in N._BATCH_NAMES)):
        return
    named = [e for e in t.dims if isinstance(e, T.DimConst) and e is not d]
    if not named:
        return
    want = last if isinstance(last, T.DimConst) else named[-1]
    p.diags.append(
        C.W0202.at(
            over.span,
            fn=fn,
            over=str(position),
            dim=str(d),
            operand=str(t),
            want=str(want),
            fix=Fix(f"Change to over={want}", (TextEdit(over.span, str(want)),)),
        )
    )


def _position(e: A.Expr) -> int | None:
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.IntLit):
        return -e.operand.value
    return None
