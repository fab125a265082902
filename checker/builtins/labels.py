"""The built-ins that make labels: `arange(T)` gives the positions of a dim as
`[T] Index[T]`, and `one_hot(y, over=C)` turns `Index[C]` labels into a `C`
dim. (Indexing a tensor by labels, an embedding, is `x[labels]`:
checker/body/expressions.py.)
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from .args import Bound, dim_from, dim_of_arg, dim_text, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin


@builtin(
    Builtin(
        name="arange",
        params=(
            BParam(name="n"),
            BParam(name="stop", required=False),
            BParam(name="step", required=False),
        ),
        signature="arange(n: a dim) -> [n] Index[n] / arange(start, stop, step=1) -> [len] Index[stop]",
        doc="The positions 0, 1, ..., n-1 of a dim n, as labels of that dim: m.pos[arange(T)] is [T E]. With a start "
        "and a stop (and a step), torch's arange(start, stop, step): start, start+step, ... below stop, its length "
        "worked out from the dims: arange(2, T) is [(T-2)], arange(0, D, 2) is [((D+1)/2)].",
        example="p = arange(C)",
        group="create",
        runtime="arange",
        dim_args=("n",),
        note="An empty range is [E0955](diagnostics.md#e0955).",
    ),
)
def _arange(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    if "stop" not in bound and "step" not in bound:
        dim = dim_of_arg(c, bound["n"].node, "arange", "n")
        if dim is None:
            return T.UNKNOWN
        return T.TensorT((dim,), T.index_of(dim))
    return _arange_range(c, node, bound)


def _bound_of(c: RuleContext, e: A.Expr, what: str, least: int) -> T.Dim | None:
    """start, stop or step of arange: an integer literal (at least `least`),
    or a dim (a dim constant, a generic dim, an Int, dim arithmetic); a
    division in it is refused, since Python's value of it is not the dim's."""
    if isinstance(e, A.IntLit) and e.value >= least:
        c.types[e] = T.INT
        return T.DimLit(e.value)
    if _divides(e):
        c.diags.append(
            C.E0301.at(
                e.span,
                context=f"{what} of arange: ",
                expected="a dim, an integer literal or + - * of them",
                found="a division; name the size as a dim",
            )
        )
        return None
    return dim_of_arg(c, e, "arange", what)


def _divides(e: A.Expr) -> bool:
    return isinstance(e, A.Binary) and (e.op == "/" or _divides(e.left) or _divides(e.right))


def _arange_range(c: RuleContext, node: A.Node, bound: Bound) -> T.Type:
    """arange(start, stop) and arange(start, stop, step): [len] Index[stop],
    len = floor((stop - start + step - 1) / step) as a dim."""
    start = _bound_of(c, bound["n"].node, "start", 0)
    stop = _bound_of(c, bound["stop"].node, "stop", 1) if "stop" in bound else None
    step = _bound_of(c, bound["step"].node, "step", 1) if "step" in bound else T.DimLit(1)
    if "stop" not in bound:
        c.diags.append(C.E0401.at(node.span, name="arange", expected="a stop before its step", found="step= alone"))
        return T.UNKNOWN
    if start is None or stop is None or step is None:
        return T.UNKNOWN
    polys = [T.dim_poly(d) for d in (start, stop, step)]
    if any(p is None for p in polys):
        return T.TensorT((T.DimUnknown(),), T.index_of(stop))
    p0, p1, ps = (p for p in polys if p is not None)
    span = DX.sub(p1, p0)
    lo, hi, by = (DX.value(p) for p in polys if p is not None)
    empty = DX.value(span)
    if empty is not None and empty <= 0:
        e = bound["stop"].node
        reason = C.E0955.say("empty", start=str(start), stop=str(stop))
        c.diags.append(C.E0955.at(A.Span(bound["n"].node.span.start, e.span.end), reason=reason))
        return T.UNKNOWN
    step_is_one = DX.value(ps) == 1
    length = span if step_is_one else DX.div(DX.add(span, DX.sub(ps, DX.const(1))), ps)
    if length is None:
        return T.TensorT((T.DimUnknown(),), T.index_of(stop))
    if lo is not None and hi is not None and by is not None:
        return T.TensorT((T.DimLit(-(-(hi - lo) // by)),), T.index_of(stop))
    start_text = "" if DX.value(p0) == 0 else f"-{dim_text(start)}"
    text = f"({dim_text(stop)}{start_text})"
    if not step_is_one:
        text = f"(({dim_text(stop)}{start_text}+{dim_text(step)}-1)/{dim_text(step)})"
        if isinstance(step, T.DimLit):
            text = f"(({dim_text(stop)}{start_text}+{by - 1})/{by})" if by and by > 1 else text
    dim = dim_from(length, text, (start, stop, step)) if DX.value(length) is None else T.DimLit(DX.value(length) or 0)
    return T.TensorT((dim,), T.index_of(stop))


@builtin(
    Builtin(
        name="one_hot",
        params=(BParam(name="labels"), BParam(name="over", keyword_only=True)),
        signature="one_hot(labels: [..] Index[C], over=C) -> [.. C] Float",
        doc="A float tensor with a 1 at each label's position along a new last dim C, 0 elsewhere.",
        example="h = one_hot(y, over=C)",
        group="tensor",
        runtime="one_hot",
        note="`over=` names the dim the labels index ([E0305](diagnostics.md#e0305)).",
        dim_args=("over",),
    ),
)
def _one_hot(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    labels = tensor_arg(c, bound["labels"], env, "one_hot", "labels", float_only=False)
    dim = dim_of_arg(c, bound["over"].node, "one_hot", "over")
    if labels is None or dim is None:
        return T.UNKNOWN
    if labels.elem.index is None or not T.dims_equal(labels.elem.index, dim):
        want = T.TensorT(labels.dims, T.index_of(dim))
        c.diags.append(
            C.E0305.at(bound["labels"].node.span, context="labels of one_hot: ", expected=str(want), found=str(labels))
        )
        return T.UNKNOWN
    return T.TensorT(labels.dims + (dim,), T.F32)
