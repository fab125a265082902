"""Typing rules of the activations with an option (leaky_relu's
negative_slope, elu's alpha) and of dropout2d, which drops whole channels.
All keep x's shape; none of the activations is NonNeg (both are negative for
negative x), and dropout2d keeps NonNeg as dropout does."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import Env
from .rule_args import mode_arg, number_arg


@rule("activation")
def _activation(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """leaky_relu(x, negative_slope=0.01), elu(x, alpha=1.0): a float tensor
    of x's shape and dtype, unrefined."""
    t = ctx.tensor_arg(bound["x"], env, b.name, "x")
    option = b.params[1].name
    ok = number_arg(ctx, bound.get(option), env, f"{option} of {b.name}")
    if t is None or not ok:
        return T.UNKNOWN
    return T.TensorT(t.dims, T.Elem(t.elem.dtype))


@rule("dropout2d")
def _dropout2d(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """dropout2d(x, p, mode): x is [b C H W]; whole channels are zeroed."""
    t = ctx.tensor_arg(bound["x"], env, b.name, "x")
    p_ok = number_arg(ctx, bound["p"], env, f"p of {b.name}", 0.0, 1.0, hi_open=True)
    mode_ok = mode_arg(ctx, bound["mode"], env, b.name)
    if t is None or not (p_ok and mode_ok):
        return T.UNKNOWN
    if t.rank != 4:
        ctx.diags.append(
            C.E0214.at(bound["x"].node.span, operation=b.name, reason=f"x is [b C H W], 4 dims; found {t}")
        )
        return T.UNKNOWN
    return T.TensorT(t.dims, T.with_refine(t.elem, "nonneg" if t.elem.nonneg else None))
