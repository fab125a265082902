"""Typing rule of `item(x)`: a `[]` tensor as a plain number, the number type
of its element type (a float tensor gives a Float, an integer or `Index`
tensor an Int, a Bool tensor a Bool), as `x as Float` and its kin do."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, rule
from .context import RuleContext
from .env import Env


@rule("item")
def _item(ctx: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """item(x): Float, Int or Bool, by x's element type."""
    a = bound["x"]
    t = ctx.tensor_arg(a, env, b.name, "x", float_only=False)
    if t is None:
        return T.UNKNOWN
    if t.rank != 0:
        ctx.diags.append(
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
