"""Elementwise built-ins: the activations (relu ... softplus; leaky_relu and
elu with their option, neither NonNeg since both are negative for negative x),
sqrt/exp/sin/cos of a tensor or a number, abs, clamp, maximum and minimum.
Each keeps its operand's shape; the refinement of the result (NonNeg, Prob)
is the spec's `refine`, or follows from clamp's literal bounds.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from .args import Bound, literal_number, number_arg, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin, X


def _unary(
    name: str,
    result: str,
    doc: str,
    refine: str | None = None,
    ints: bool = False,
    runtime: str | None = None,
    rest_ok: bool = False,
    role: str | None = None,
) -> Builtin:
    arg = "[..]" if ints else "[..] Float"
    return Builtin(
        name=name,
        params=(X,),
        signature=f"{name}(x: {arg}) -> [..] {result}",
        doc=doc,
        example=f"h = {name}(x)",
        group="elementwise",
        runtime=runtime or name,
        refine=refine,
        ints=ints,
        rest_ok=rest_ok,
        role=role,
    )


def _math(name: str, result: str, doc: str, refine: str | None = None, rest_ok: bool = False) -> Builtin:
    """An elementwise function that also takes a plain number (sqrt(32.0) is a Float)."""
    b = _unary(name, result, doc, refine)
    number = f"{name}(x: Float) -> Float"
    return Builtin(
        name=name,
        params=b.params,
        signature=f"{b.signature} / {number}",
        doc=doc,
        example=b.example,
        group=b.group,
        runtime=name,
        refine=refine,
        number_runtime=f"{name}_of_number",
        rest_ok=rest_ok,
    )


@builtin(
    _unary("relu", "NonNeg", "max(x, 0), elementwise.", "nonneg", rest_ok=True),
    _unary("tanh", "Float", "Hyperbolic tangent, elementwise.", rest_ok=True),
    _unary("sigmoid", "Prob", "1 / (1 + exp(-x)), elementwise.", "prob", rest_ok=True, role="prob"),
    _unary("log1p", "Float", "log(1 + x), elementwise; accurate for x near 0.", rest_ok=True),
    _unary("softplus", "NonNeg", "log(1 + exp(x)), elementwise: a smooth relu.", "nonneg", rest_ok=True),
    _unary("gelu", "Float", "x * Phi(x) (Phi the standard normal CDF), elementwise: the exact GELU.", rest_ok=True),
    _unary("silu", "Float", "x * sigmoid(x), elementwise (also called swish).", rest_ok=True),
    _unary(
        "abs",
        "NonNeg",
        "Absolute value, elementwise; on integer tensors, an integer tensor.",
        "nonneg",
        ints=True,
        rest_ok=True,
    ),
)
def _elementwise(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = tensor_arg(c, bound["x"], env, b.name, "x", float_only=not b.ints)
    if t is None:
        return T.UNKNOWN
    if b.ints and t.elem.is_bool:
        c.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
        return T.UNKNOWN
    if not t.elem.is_float:  # an integer tensor (b.ints) stays one, unrefined
        return T.TensorT(t.dims, T.Elem(t.elem.dtype))
    return T.TensorT(t.dims, T.with_refine(t.elem, b.refine))


@builtin(
    _math("exp", "NonNeg", "e to the power x, elementwise; of a number, a number.", "nonneg", rest_ok=True),
    _math(
        "sqrt",
        "NonNeg",
        "Square root, elementwise; of a number, a number: sqrt(32.0) is a Float.",
        "nonneg",
        rest_ok=True,
    ),
    _math("sin", "Float", "Sine (radians), elementwise; of a number, a number."),
    _math("cos", "Float", "Cosine (radians), elementwise; of a number, a number."),
)
def elementwise_or_number(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """sqrt, exp, log, sin, cos: as the elementwise rule on a float tensor; a number gives a Float."""
    x = bound["x"]
    t = c.value(x.node, env)
    if isinstance(t, T.UnknownT):
        return T.UNKNOWN
    if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
        return T.NumberT("Float", b.refine is not None)
    if isinstance(t, T.GradT):
        c.diags.append(C.E1108.at(x.node.span, operation=f"{b.name}({T.describe(t)})"))
        return T.UNKNOWN
    if not isinstance(t, T.TensorT):
        c.diags.append(
            C.E0301.at(
                x.node.span,
                context=f"argument 'x' of {b.name}: ",
                expected="a tensor or number",
                found=T.describe(t),
            )
        )
        return T.UNKNOWN
    if not t.elem.is_float:
        c.diags.append(C.E0310.at(x.node.span, what=f"{b.name} of {T.describe(t)}", hint="; cast it with `as`"))
        return T.UNKNOWN
    return T.TensorT(t.dims, T.with_refine(t.elem, b.refine))


@builtin(
    Builtin(
        name="leaky_relu",
        params=(X, BParam(name="negative_slope", required=False)),
        signature="leaky_relu(x: [..] Float, negative_slope=0.01) -> [..] Float",
        doc="x where x >= 0, negative_slope * x elsewhere, elementwise (torch's leaky_relu).",
        example="h = leaky_relu(x, 0.2)",
        group="elementwise",
        runtime="leaky_relu",
        note="Not NonNeg: negative for negative x ([E0304](diagnostics.md#e0304)).",
        rest_ok=True,
    ),
    Builtin(
        name="elu",
        params=(X, BParam(name="alpha", required=False)),
        signature="elu(x: [..] Float, alpha=1.0) -> [..] Float",
        doc="x where x > 0, alpha * (exp(x) - 1) elsewhere, elementwise (torch's elu).",
        example="h = elu(x)",
        group="elementwise",
        runtime="elu",
        rest_ok=True,
    ),
)
def _activation(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """leaky_relu(x, negative_slope=0.01), elu(x, alpha=1.0): a float tensor
    of x's shape and dtype, unrefined."""
    t = tensor_arg(c, bound["x"], env, b.name, "x")
    option = b.params[1].name
    ok = number_arg(c, bound.get(option), env, f"{option} of {b.name}")
    if t is None or not ok:
        return T.UNKNOWN
    return T.TensorT(t.dims, T.Elem(t.elem.dtype))


@builtin(
    Builtin(
        name="clamp",
        params=(
            X,
            BParam(name="min", required=False, keyword_only=True),
            BParam(name="max", required=False, keyword_only=True),
        ),
        signature="clamp(x: [..], min=a, max=b) -> [..]",
        doc="x limited to [a, b], elementwise; min= or max= may be left out, not both.",
        example="h = clamp(x, min=0.0, max=1.0)",
        group="elementwise",
        runtime="clamp",
        note="A literal min >= 0 gives NonNeg, and with a literal max <= 1 Prob; a literal min above a literal max "
        "is an error ([E0301](diagnostics.md#e0301)).",
        rest_ok=True,
    ),
)
def _clamp(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = tensor_arg(c, bound["x"], env, "clamp", "x", float_only=False)
    lo, hi = bound.get("min"), bound.get("max")
    kinds: dict[str, T.Type] = {}  # the bounds' types
    for k, a in (("min", lo), ("max", hi)):
        if a is not None:
            kt = kinds[k] = c.value(a.node, env)
            if not isinstance(kt, (T.UnknownT, T.NumberT)) or (
                isinstance(kt, T.NumberT) and kt.kind not in ("Int", "Float")
            ):
                c.diags.append(
                    C.E0301.at(a.node.span, context=f"{k} of clamp: ", expected="a number", found=T.describe(kt))
                )
                return T.UNKNOWN
    if lo is None and hi is None:
        paren = node.paren_span if isinstance(node, A.Call) else node.span
        c.diags.append(C.E0403.at(paren, name="clamp", param="min= or max= (or both)"))
        return T.UNKNOWN
    lo_v = literal_number(lo.node) if lo is not None else None
    hi_v = literal_number(hi.node) if hi is not None else None
    if lo_v is not None and hi_v is not None and lo_v > hi_v:
        assert lo is not None
        c.diags.append(
            C.E0301.at(lo.node.span, context="min of clamp: ", expected=f"a number <= max ({hi_v})", found=str(lo_v))
        )
        return T.UNKNOWN
    if t is None:
        return T.UNKNOWN
    if t.elem.is_bool:
        c.diags.append(C.E0306.at(bound["x"].node.span, op="clamp", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN
    if not t.elem.is_float:
        for k, a in (("min", lo), ("max", hi)):
            at = kinds.get(k)
            if a is not None and isinstance(at, T.NumberT) and at.kind == "Float":
                c.diags.append(
                    C.E0302.at(
                        a.node.span,
                        context=f"{k} of clamp on an integer tensor: ",
                        expected=t.show_elem(),
                        found="Float",
                    )
                )
                return T.UNKNOWN
        return T.TensorT(t.dims, T.Elem(t.elem.dtype))
    # Refinement from literal bounds: min >= 0 gives NonNeg, and max <= 1
    # as well gives Prob. (A max that is not a literal could be below min,
    # where torch gives max: then only a NonNeg max keeps the result NonNeg.)
    hi_t = kinds.get("max")
    hi_nonneg = hi is None or hi_v is not None or (isinstance(hi_t, T.NumberT) and hi_t.nonneg)
    refine = None
    if lo_v is not None and lo_v >= 0 and hi_nonneg:
        refine = "prob" if hi_v is not None and hi_v <= 1 else "nonneg"
    return T.TensorT(t.dims, T.with_refine(t.elem, refine))


@builtin(
    Builtin(
        name="maximum",
        params=(BParam(name="a"), BParam(name="b")),
        signature="maximum(a: [..], b: [..]) -> [..]",
        doc="The larger of a and b, elementwise; they broadcast as in a + b, and one may be a number.",
        example="h = maximum(x, 0.5 * x)",
        group="elementwise",
        runtime="maximum",
        rest_ok=True,
        symmetric=True,
    ),
    Builtin(
        name="minimum",
        params=(BParam(name="a"), BParam(name="b")),
        signature="minimum(a: [..], b: [..]) -> [..]",
        doc="The smaller of a and b, elementwise; they broadcast as in a + b, and one may be a number.",
        example="h = minimum(x, 1.0)",
        group="elementwise",
        runtime="minimum",
        rest_ok=True,
        symmetric=True,
    ),
)
def _maximum(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """maximum(a, b) / minimum(a, b): elementwise, broadcast and typed as `a + b` is."""
    ta = c.value(bound["a"].node, env)
    tb = c.value(bound["b"].node, env)
    if isinstance(ta, T.UnknownT) or isinstance(tb, T.UnknownT):
        return T.UNKNOWN
    for t, k in ((ta, "a"), (tb, "b")):
        if isinstance(t, T.GradT):
            c.diags.append(C.E1108.at(bound[k].node.span, operation=f"{b.name}({T.describe(t)})"))
            return T.UNKNOWN
        if not (isinstance(t, T.TensorT) or (isinstance(t, T.NumberT) and t.kind in ("Int", "Float"))):
            c.diags.append(
                C.E0301.at(
                    bound[k].node.span,
                    context=f"argument '{k}' of {b.name}: ",
                    expected="a tensor or number",
                    found=T.describe(t),
                )
            )
            return T.UNKNOWN
        if isinstance(t, T.TensorT) and t.elem.is_bool:
            c.diags.append(C.E0306.at(bound[k].node.span, op=b.name, left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
    if not isinstance(ta, T.TensorT) and not isinstance(tb, T.TensorT):
        c.diags.append(
            C.E0301.at(
                node.span,
                context=f"{b.name} of two numbers: ",
                expected="a tensor on one side at least",
                found=f"{ta} and {tb}",
            )
        )
        return T.UNKNOWN
    ea = ta.elem if isinstance(ta, T.TensorT) else None
    eb = tb.elem if isinstance(tb, T.TensorT) else None
    if isinstance(ta, T.TensorT) and isinstance(tb, T.TensorT) and ta.elem.dtype != tb.elem.dtype:
        c.diags.append(
            C.E0302.at(
                node.span,
                context=f"{b.name} needs one element type for a and b: ",
                expected=ta.show_elem(),
                found=tb.show_elem(),
            )
        )
        return T.UNKNOWN
    elem = ea or eb
    assert elem is not None
    number = ta if isinstance(ta, T.NumberT) else tb if isinstance(tb, T.NumberT) else None
    if number is not None and number.kind == "Float" and not elem.is_float:
        tensor = ta if isinstance(ta, T.TensorT) else tb
        assert isinstance(tensor, T.TensorT)
        c.diags.append(
            C.E0302.at(
                node.span,
                context=f"{b.name} of an integer tensor and a Float: ",
                expected=tensor.show_elem(),
                found="Float",
            )
        )
        return T.UNKNOWN
    dims = S.broadcast(ta.dims if isinstance(ta, T.TensorT) else (), tb.dims if isinstance(tb, T.TensorT) else ())
    if isinstance(dims, S.DimClash):
        c.diags.append(
            C.E0202.at(
                node.span,
                op="and",
                left=str(ta),
                right=f"{tb} in {b.name}",
                a=str(dims.left),
                b=str(dims.right),
            )
        )
        return T.UNKNOWN
    if not elem.is_float:
        return T.TensorT(dims, T.Elem(elem.dtype))

    def nonneg(t: T.Type) -> bool:
        return t.nonneg if isinstance(t, T.NumberT) else isinstance(t, T.TensorT) and t.elem.nonneg

    def prob(t: T.Type) -> bool:
        return isinstance(t, T.TensorT) and t.elem.refine == "prob"

    refine = None
    if b.name == "maximum":  # >= each side: NonNeg if either is; Prob if both are
        refine = "prob" if prob(ta) and prob(tb) else "nonneg" if nonneg(ta) or nonneg(tb) else None
    elif nonneg(ta) and nonneg(tb):  # minimum: <= each side, >= 0 when both are
        refine = "prob" if prob(ta) or prob(tb) else "nonneg"
    return T.TensorT(dims, T.with_refine(elem, refine))
