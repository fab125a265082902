"""Typing rule of scaled_dot_product_attention (torch's
F.scaled_dot_product_attention): queries `[.. L E]`, keys `[.. S E]` and
values `[.. S Ev]` give `[.. L Ev]`. A mask broadcasts to the scores
`[.. L S]`: a Bool mask says where to attend (True, as torch), a float mask
is added to the scores. Dropout of the attention weights draws from the
mode's stream, so `dropout_p=` needs `mode=`."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import Env
from .rule_args import bool_arg, literal_number, mode_arg, number_arg

FN = "scaled_dot_product_attention"


@rule("attention")
def _attention(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    q = ctx.tensor_arg(bound["q"], env, FN, "q")
    k = ctx.tensor_arg(bound["k"], env, FN, "k")
    v = ctx.tensor_arg(bound["v"], env, FN, "v")
    mask_a = bound.get("mask")
    mask = ctx.tensor_arg(mask_a, env, FN, "mask", float_only=False) if mask_a is not None else None
    causal = bool_arg(ctx, bound.get("is_causal"), env, f"is_causal of {FN}")
    drop_a = bound.get("dropout_p")
    ok = number_arg(ctx, drop_a, env, f"dropout_p of {FN}", 0.0, 1.0, hi_open=True)
    ok = number_arg(ctx, bound.get("scale"), env, f"scale of {FN}") and ok
    if "mode" in bound:
        ok = mode_arg(ctx, bound["mode"], env, FN) and ok
    elif drop_a is not None and literal_number(drop_a.node) != 0:
        paren = node.paren_span if isinstance(node, A.Call) else node.span
        ctx.diags.append(C.E0403.at(paren, name=FN, param="mode= (dropout_p= draws from the mode's stream)"))
        ok = False
    if q is None or k is None or v is None or (mask_a is not None and mask is None) or not ok:
        return T.UNKNOWN
    for t, a, name in ((q, bound["q"], "q"), (k, bound["k"], "k"), (v, bound["v"], "v")):
        if t.rank < 2:
            ctx.diags.append(C.E0210.at(a.node.span, operation=f"{FN} ({name})", needed="2 dims or more", found=str(t)))
            return T.UNKNOWN
    for t, a in ((k, bound["k"]), (v, bound["v"])):
        if t.elem.dtype != q.elem.dtype:
            ctx.diags.append(
                C.E0302.at(
                    a.node.span, context=f"{FN} needs one element type: ", expected=q.show_elem(), found=t.show_elem()
                )
            )
            return T.UNKNOWN
    lead = q.dims[:-2]
    for t, a, name in ((k, bound["k"], "k"), (v, bound["v"], "v")):
        if t.rank != q.rank or not all(T.dims_equal(x, y) for x, y in zip(t.dims[:-2], lead)):
            reason = f"q, k and v have the same leading dims; q is {q}, {name} is {t}"
            ctx.diags.append(C.E0214.at(a.node.span, operation=FN, reason=reason))
            return T.UNKNOWN
    if not T.dims_equal(q.dims[-1], k.dims[-1]):
        reason = f"the queries' last dim {q.dims[-1]} (of {q}) is not the keys' {k.dims[-1]} (of {k})"
        ctx.diags.append(C.E0214.at(bound["k"].node.span, operation=FN, reason=reason))
        return T.UNKNOWN
    if not T.dims_equal(k.dims[-2], v.dims[-2]):
        reason = f"the keys' {k.dims[-2]} (dim -2 of {k}) is not the values' {v.dims[-2]} (of {v})"
        ctx.diags.append(C.E0214.at(bound["v"].node.span, operation=FN, reason=reason))
        return T.UNKNOWN
    if mask is not None and mask_a is not None:
        if causal is True:
            ctx.diags.append(
                C.E0301.at(
                    bound["is_causal"].node.span,
                    context=f"is_causal of {FN} with a mask: ",
                    expected="False (give the causal mask in mask=, or is_causal=True alone)",
                    found="True",
                )
            )
            return T.UNKNOWN
        if not _mask_fits(ctx, mask_a.node, mask, q, k):
            return T.UNKNOWN
    return T.TensorT(q.dims[:-1] + (v.dims[-1],), T.Elem(q.elem.dtype))


def _mask_fits(ctx: RuleContext, e: A.Expr, mask: T.TensorT, q: T.TensorT, k: T.TensorT) -> bool:
    """A Bool mask, or a float one of q's element type, that broadcasts to the scores [.. L S]."""
    scores = q.dims[:-1] + (k.dims[-2],)
    if not mask.elem.is_bool and mask.elem.dtype != q.elem.dtype:
        want = f"Bool or {q.elem}"
        ctx.diags.append(C.E0302.at(e.span, context=f"mask of {FN}: ", expected=want, found=mask.show_elem()))
        return False
    joined = S.broadcast(scores, mask.dims)
    target = T.TensorT(scores, mask.elem)
    if (
        isinstance(joined, S.DimClash)
        or len(joined) != len(scores)
        or not all(T.dims_equal(x, y) for x, y in zip(joined, scores))
    ):
        reason = f"the mask {mask} does not broadcast to the scores {target}"
        ctx.diags.append(C.E0214.at(e.span, operation=FN, reason=reason))
        return False
    return True
