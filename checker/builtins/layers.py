"""Layer operations: linear (x @ weight + bias in one kernel),
scaled_dot_product_attention, dropout and dropout2d (whole channels; both
keep NonNeg).

Attention (torch's F.scaled_dot_product_attention): queries `[.. L E]`, keys
`[.. S E]` and values `[.. S Ev]` give `[.. L Ev]`. A mask broadcasts to the
scores `[.. L S]`: a Bool mask says where to attend (True, as torch), a float
mask is added to the scores. Dropout of the attention weights draws from the
mode's stream, so `dropout_p=` needs `mode=`.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from .args import Bound, bool_arg, expect_number, literal_number, mode_arg, number_arg, tensor_arg
from .norms import per_channel
from .registry import builtin
from .spec import BParam, Builtin, X


@builtin(
    Builtin(
        name="linear",
        params=(X, BParam(name="weight"), BParam(name="bias", required=False)),
        signature="linear(x: [.. I] Float, weight: [I O], bias: [O]) -> [.. O]",
        doc="x @ weight + bias in one kernel (torch's F.linear with the weight kept as x @ weight reads it, as "
        "nn.Linear keeps it); bias is optional.",
        example="h = linear(x, ones([D 3]), zeros([3]))",
        group="layers",
        runtime="linear",
        note="The inner dims differ: [E0203](diagnostics.md#e0203).",
        rest_ok=True,
    ),
)
def _linear(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """linear(x: [.. I], weight: [I O], bias: [O]): x @ weight + bias."""
    x = tensor_arg(c, bound["x"], env, b.name, "x")
    w = tensor_arg(c, bound["weight"], env, b.name, "weight")
    bias = tensor_arg(c, bound["bias"], env, b.name, "bias") if "bias" in bound else None
    if x is None or w is None or ("bias" in bound and bias is None):
        return T.UNKNOWN
    if w.rank != 2:
        c.diags.append(
            C.E0210.at(bound["weight"].node.span, operation=b.name, needed="a weight of 2 dims, [I O]", found=str(w))
        )
        return T.UNKNOWN
    if w.elem.dtype != x.elem.dtype:
        expected = T.TensorT(w.dims, T.Elem(x.elem.dtype)).show_elem()
        c.diags.append(
            C.E0302.at(bound["weight"].node.span, context="weight of linear: ", expected=expected, found=w.show_elem())
        )
        return T.UNKNOWN
    dims = S.matmul(x.dims, w.dims)
    if dims == "scalar" or x.rank < 1:
        c.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed="1 dim or more", found=str(x)))
        return T.UNKNOWN
    if isinstance(dims, S.DimClash):
        c.diags.append(C.E0203.at(node.span, left=str(x), right=str(w), a=str(dims.left), b=str(dims.right)))
        return T.UNKNOWN
    a = bound["bias"] if bias is not None else None
    named = CallArg(a.node, "bias", a.span, a.arg) if a is not None else None  # `bias of linear`, by position too
    if named is not None and not per_channel(c, node, named, bias, b.name, w.dims[1], x):
        return T.UNKNOWN
    return T.TensorT(dims, T.Elem(x.elem.dtype))  # type: ignore[arg-type]


FN = "scaled_dot_product_attention"


@builtin(
    Builtin(
        name="scaled_dot_product_attention",
        params=(
            BParam(name="q"),
            BParam(name="k"),
            BParam(name="v"),
            BParam(name="mask", required=False, keyword_only=True),
            BParam(name="is_causal", required=False, keyword_only=True),
            BParam(name="dropout_p", required=False, keyword_only=True),
            BParam(name="scale", required=False, keyword_only=True),
            BParam(name="mode", required=False, keyword_only=True),
        ),
        signature="scaled_dot_product_attention(q: [.. L E] Float, k: [.. S E] Float, v: [.. S Ev] Float, mask=m, "
        "is_causal=False, dropout_p=0.0, scale=s, mode=Mode) -> [.. L Ev]",
        doc="softmax(q @ transpose(k) * scale + mask, over=-1) @ v, as torch's F.scaled_dot_product_attention: scale "
        "1/sqrt(E) by default; a Bool mask is True where to attend, a float one is added; is_causal=True attends "
        "to the lower triangle; dropout_p drops weights in Train mode (mode=).",
        example="a = scaled_dot_product_attention(x, x, x)",
        group="layers",
        runtime="scaled_dot_product_attention",
        note="The mask broadcasts to [.. L S] ([E0214](diagnostics.md#e0214)). See [Attention](#attention).",
    ),
)
def _attention(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    q = tensor_arg(c, bound["q"], env, FN, "q")
    k = tensor_arg(c, bound["k"], env, FN, "k")
    v = tensor_arg(c, bound["v"], env, FN, "v")
    mask_a = bound.get("mask")
    mask = tensor_arg(c, mask_a, env, FN, "mask", float_only=False) if mask_a is not None else None
    causal = bool_arg(c, bound.get("is_causal"), env, f"is_causal of {FN}")
    drop_a = bound.get("dropout_p")
    ok = number_arg(c, drop_a, env, f"dropout_p of {FN}", 0.0, 1.0, hi_open=True)
    ok = number_arg(c, bound.get("scale"), env, f"scale of {FN}") and ok
    if "mode" in bound:
        ok = mode_arg(c, bound["mode"], env, FN) and ok
    elif drop_a is not None and literal_number(drop_a.node) != 0:
        paren = node.paren_span if isinstance(node, A.Call) else node.span
        c.diags.append(C.E0403.at(paren, name=FN, param="mode= (dropout_p= draws from the mode's stream)"))
        ok = False
    if q is None or k is None or v is None or (mask_a is not None and mask is None) or not ok:
        return T.UNKNOWN
    for t, a, name in ((q, bound["q"], "q"), (k, bound["k"], "k"), (v, bound["v"], "v")):
        if t.rank < 2:
            c.diags.append(C.E0210.at(a.node.span, operation=f"{FN} ({name})", needed="2 dims or more", found=str(t)))
            return T.UNKNOWN
    for t, a in ((k, bound["k"]), (v, bound["v"])):
        if t.elem.dtype != q.elem.dtype:
            c.diags.append(
                C.E0302.at(
                    a.node.span, context=f"{FN} needs one element type: ", expected=q.show_elem(), found=t.show_elem()
                )
            )
            return T.UNKNOWN
    lead = q.dims[:-2]
    for t, a, name in ((k, bound["k"], "k"), (v, bound["v"], "v")):
        if t.rank != q.rank or not all(T.dims_equal(x, y) for x, y in zip(t.dims[:-2], lead)):
            reason = C.E0214.say("qkv_leading_dims", q=str(q), name=name, type=str(t))
            c.diags.append(C.E0214.at(a.node.span, operation=FN, reason=reason))
            return T.UNKNOWN
    if not T.dims_equal(q.dims[-1], k.dims[-1]):
        reason = C.E0214.say("queries_keys_dim", q_dim=str(q.dims[-1]), q=str(q), k_dim=str(k.dims[-1]), k=str(k))
        c.diags.append(C.E0214.at(bound["k"].node.span, operation=FN, reason=reason))
        return T.UNKNOWN
    if not T.dims_equal(k.dims[-2], v.dims[-2]):
        reason = C.E0214.say("keys_values_dim", k_dim=str(k.dims[-2]), k=str(k), v_dim=str(v.dims[-2]), v=str(v))
        c.diags.append(C.E0214.at(bound["v"].node.span, operation=FN, reason=reason))
        return T.UNKNOWN
    if mask is not None and mask_a is not None:
        if causal is True:
            c.diags.append(
                C.E0301.at(
                    bound["is_causal"].node.span,
                    context=f"is_causal of {FN} with a mask: ",
                    expected="False (give the causal mask in mask=, or is_causal=True alone)",
                    found="True",
                )
            )
            return T.UNKNOWN
        if not _mask_fits(c, mask_a.node, mask, q, k):
            return T.UNKNOWN
    return T.TensorT(q.dims[:-1] + (v.dims[-1],), T.Elem(q.elem.dtype))


def _mask_fits(c: RuleContext, e: A.Expr, mask: T.TensorT, q: T.TensorT, k: T.TensorT) -> bool:
    """A Bool mask, or a float one of q's element type, that broadcasts to the scores [.. L S]."""
    scores = q.dims[:-1] + (k.dims[-2],)
    if not mask.elem.is_bool and mask.elem.dtype != q.elem.dtype:
        want = f"Bool or {q.elem}"
        c.diags.append(C.E0302.at(e.span, context=f"mask of {FN}: ", expected=want, found=mask.show_elem()))
        return False
    joined = S.broadcast(scores, mask.dims)
    target = T.TensorT(scores, mask.elem)
    if (
        isinstance(joined, S.DimClash)
        or len(joined) != len(scores)
        or not all(T.dims_equal(x, y) for x, y in zip(joined, scores))
    ):
        reason = C.E0214.say("mask_broadcast", mask=str(mask), scores=str(target))
        c.diags.append(C.E0214.at(e.span, operation=FN, reason=reason))
        return False
    return True


@builtin(
    Builtin(
        name="dropout",
        params=(X, BParam(name="p"), BParam(name="mode")),
        signature="dropout(x: [..] Float, p: Float, mode: Mode) -> [..]",
        doc="Zeroes each value with probability p in Train mode (scaling the rest by 1/(1-p)); identity in Eval.",
        example="h = dropout(x, 0.1, mode)",
        group="tensor",
        runtime="dropout",
        note="A literal p must be in [0, 1).",
        rest_ok=True,
    ),
)
def _dropout(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = tensor_arg(c, bound["x"], env, "dropout", "x")
    expect_number(c, bound["p"], env, "Float", "p")
    mode = c.value(bound["mode"].node, env)
    if not isinstance(mode, (T.ModeT, T.UnknownT)):
        c.diags.append(
            C.E0301.at(bound["mode"].node.span, context="mode of dropout: ", expected="Mode", found=T.describe(mode))
        )
    p_node = bound["p"].node
    if isinstance(p_node, (A.FloatLit, A.IntLit)) and not (0 <= p_node.value < 1):
        c.diags.append(
            C.E0301.at(
                p_node.span, context="p of dropout: ", expected="a probability in [0, 1)", found=str(p_node.value)
            )
        )
    if t is None:
        return T.UNKNOWN
    return T.TensorT(t.dims, T.with_refine(t.elem, "nonneg" if t.elem.nonneg else None))


@builtin(
    Builtin(
        name="dropout2d",
        params=(X, BParam(name="p"), BParam(name="mode")),
        signature="dropout2d(x: [b C H W] Float, p: Float, mode: Mode) -> [b C H W]",
        doc="Zeroes each whole channel (an H by W plane) with probability p in Train mode, scaling the rest by "
        "1/(1-p), as torch's dropout2d; identity in Eval.",
        example="h = dropout2d(zeros([2 3 4 4]), 0.1, mode)",
        group="tensor",
        runtime="dropout2d",
        note="A literal p must be in [0, 1).",
    ),
)
def _dropout2d(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """dropout2d(x, p, mode): x is [b C H W]; whole channels are zeroed."""
    t = tensor_arg(c, bound["x"], env, b.name, "x")
    p_ok = number_arg(c, bound["p"], env, f"p of {b.name}", 0.0, 1.0, hi_open=True)
    mode_ok = mode_arg(c, bound["mode"], env, b.name)
    if t is None or not (p_ok and mode_ok):
        return T.UNKNOWN
    if t.rank != 4:
        c.diags.append(
            C.E0214.at(
                bound["x"].node.span,
                operation=b.name,
                reason=C.E0214.say("layout_rank", name="x", layout="[b C H W]", rank=4, type=t),
            )
        )
        return T.UNKNOWN
    return T.TensorT(t.dims, T.with_refine(t.elem, "nonneg" if t.elem.nonneg else None))
