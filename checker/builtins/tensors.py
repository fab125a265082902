"""Other tensor built-ins: where, stop_grad, and item, a `[]` tensor as a
plain number (the number type of its element type: a float tensor gives a
Float, an integer or `Index` tensor an Int, a Bool tensor a Bool, as `x as
Float` and its kin do).
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from .args import Bound, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin, X


@builtin(
    Builtin(
        name="where",
        params=(BParam(name="cond"), BParam(name="a"), BParam(name="b")),
        signature="where(cond: [..] Bool, a: [..], b: [..]) -> [..]",
        doc="a where cond holds, b elsewhere; the three broadcast, and a and b may be numbers.",
        example="h = where(x > 0.0, x, 0.0)",
        group="tensor",
        runtime="where",
        rest_ok=True,
    ),
)
def _where(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    cond = c.value(bound["cond"].node, env)
    a = c.value(bound["a"].node, env)
    bb = c.value(bound["b"].node, env)
    if any(isinstance(x, T.UnknownT) for x in (cond, a, bb)):
        return T.UNKNOWN
    if not (isinstance(cond, T.TensorT) and cond.elem.is_bool):
        c.diags.append(
            C.E0301.at(
                bound["cond"].node.span, context="cond of where: ", expected="a Bool tensor", found=T.describe(cond)
            )
        )
        return T.UNKNOWN
    for x, k in ((a, "a"), (bb, "b")):
        if not isinstance(x, (T.TensorT, T.NumberT)) or (isinstance(x, T.NumberT) and x.kind not in ("Int", "Float")):
            c.diags.append(
                C.E0301.at(
                    bound[k].node.span,
                    context=f"{k} of where: ",
                    expected="a tensor or number",
                    found=T.describe(x),
                )
            )
            return T.UNKNOWN
    elems = [x.elem for x in (a, bb) if isinstance(x, T.TensorT)]
    if len(elems) == 2 and elems[0].dtype != elems[1].dtype:
        assert isinstance(a, T.TensorT) and isinstance(bb, T.TensorT)
        c.diags.append(
            C.E0302.at(
                node.span,
                context="where needs one element type for a and b: ",
                expected=a.show_elem(),
                found=bb.show_elem(),
            )
        )
        return T.UNKNOWN
    elem = elems[0] if elems else T.F32
    if len(elems) == 2:
        j = S.join(T.TensorT((), elems[0]), T.TensorT((), elems[1]))
        elem = j.elem if isinstance(j, T.TensorT) else elems[0].plain()
    else:
        elem = elem.plain() if elem.index is None else T.Elem(elem.dtype)
    dims: object = cond.dims
    for x in (a, bb):
        if isinstance(x, T.TensorT):
            dims = S.broadcast(dims, x.dims)
            if isinstance(dims, S.DimClash):
                c.diags.append(
                    C.E0202.at(node.span, op="where", left=str(cond), right=str(x), a=str(dims.left), b=str(dims.right))
                )
                return T.UNKNOWN
    return T.TensorT(dims, elem)


@builtin(
    Builtin(
        name="stop_grad",
        params=(X,),
        signature="stop_grad(x: [..]) -> [..]",
        doc="x, with no gradient flowing back through it; params read only here are not differentiated.",
        example="h = stop_grad(x @ m.w)",
        group="tensor",
        runtime="stop_grad",
        rest_ok=True,
    ),
)
def _stop_grad(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    c.stop_grad_depth += 1
    try:
        t = tensor_arg(c, bound["x"], env, "stop_grad", "x", float_only=False)
    finally:
        c.stop_grad_depth -= 1
    return t if t is not None else T.UNKNOWN


@builtin(
    Builtin(
        name="item",
        params=(X,),
        signature="item(x: [] Float) -> Float / item(x: [] i64) -> Int / item(x: [] Bool) -> Bool",
        doc="The one value of a [] tensor as a number: a Float of a float tensor, an Int of an integer or Index "
        "tensor, a Bool of a Bool tensor (as `x as Float`, `x as Int`, `x as Bool`).",
        example="v = item(sum(x))",
        group="tensor",
        runtime="item",
    ),
)
def _item(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """item(x): Float, Int or Bool, by x's element type."""
    a = bound["x"]
    t = tensor_arg(c, a, env, b.name, "x", float_only=False)
    if t is None:
        return T.UNKNOWN
    if t.rank != 0:
        c.diags.append(
            C.E0301.at(
                a.node.span,
                context=f"argument 'x' of {b.name}: ",
                expected="a [] tensor",
                found=T.describe(t),
            )
        )
        return T.UNKNOWN
    if t.elem.is_bool:
        return T.BOOL_N
    return T.INT if t.elem.is_int else T.FLOAT
