"""Typing rules of the creation functions added for real models: `tril` and
`triu` (the triangles of the last two dims, the operand's type kept),
`eye(N)`, `full([..] T, v)` (v checked against T), `rand` (uniform in
[0, 1): a Prob) and `multinomial` (one label drawn per slice, an Index)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from .builtin_rules import Bound, _literal_number, rule
from .env import Env
from .label_rules import _dim_of_arg
from .text import expr_text

if TYPE_CHECKING:
    from .core import BodyChecker


@rule("triangle")
def _triangle(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """tril, triu: zeros above (below) a diagonal; a zero is a NonNeg, a Prob
    and an Index, so the type stays the operand's."""
    t = c.tensor_arg(bound["x"], env, b.name, "x", float_only=False)
    if "diagonal" in bound:
        c.expect_number(bound["diagonal"], env, "Int", f"diagonal of {b.name}")
    if t is None:
        return T.UNKNOWN
    if t.rank < 2:
        c.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed="2 dims or more", found=str(t)))
        return T.UNKNOWN
    return t


@rule("eye")
def _eye(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    dim = _dim_of_arg(c, bound["n"].node, "eye", "n")
    if dim is None:
        return T.UNKNOWN
    return T.TensorT((dim, dim), T.F32)


@rule("full")
def _full(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = c.shape_arg(bound["shape"], "full")
    e = bound["value"].node
    v = c.value(e, env)
    if t is None:
        return T.UNKNOWN
    if isinstance(v, T.UnknownT):
        return t
    context = f"value of full for {t.show_elem()}: "
    if not isinstance(v, T.NumberT) or v.kind == "Str":
        c.diags.append(C.E0301.at(e.span, context=context, expected="a number", found=T.describe(v)))
        return t
    elem = t.elem
    want = "Bool" if elem.is_bool else "Int" if not elem.is_float else "Int or Float"
    if v.kind not in want.split(" or "):
        c.diags.append(C.E0302.at(e.span, context=context, expected=want, found=v.kind))
        return t
    literal = _literal_number(e)
    found = str(literal) if literal is not None else expr_text(e)
    if elem.index is not None:
        size = T.dim_value(elem.index)
        # a label known when the program is checked: a literal, or a dim or
        # Int constant (`V`), or arithmetic of them (`V - 1`)
        label = literal if literal is not None else _known_int(c, e)
        if literal is None and label is not None:
            found = f"{found} = {label}"
        if label is None or label < 0 or (label >= size if size is not None else label != 0):
            expected = (
                f"an integer in 0..{size - 1} known when the program is checked (a literal, or a dim or Int constant)"
                if size is not None
                else "0"
            )
            c.diags.append(C.E0305.at(e.span, context=context, expected=expected, found=found))
    elif elem.refine is not None:
        fits = literal is not None and literal >= 0 and (elem.refine == "nonneg" or literal <= 1)
        if literal is None and elem.refine == "nonneg" and v.nonneg:
            fits = True
        if not fits:
            expected = "a number >= 0" if elem.refine == "nonneg" else "a number in [0, 1]"
            c.diags.append(C.E0304.at(e.span, context=context, expected=expected, found=found))
    return t


def _known_int(c: BodyChecker, e: A.Expr) -> int | None:
    const = c.int_constant(e)
    return const[2] if const is not None else c.int_value(e)


@rule("rand")
def _rand(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = c.shape_arg(bound["shape"], "rand")
    c.expect_number(bound["seed"], env, "Int", "seed")
    if t is None:
        return T.UNKNOWN
    if not t.elem.is_float:
        c.diags.append(
            C.E0309.at(
                bound["shape"].node.span,
                elem=str(t.elem),
                reason="rand gives floats in [0, 1) (Float, f16, bf16 or f64)",
            )
        )
        return T.UNKNOWN
    return T.TensorT(t.dims, T.with_refine(t.elem, "prob"))


@rule("multinomial")
def _multinomial(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    p = c.tensor_arg(bound["p"], env, b.name, "p")
    c.expect_number(bound["seed"], env, "Int", "seed")
    if p is None:
        c._eval_dim_quietly(bound.get("over"), env)
        return T.UNKNOWN
    axis = c.dim_arg(bound["over"], env, p, b.name, bound["p"], "p")
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    if not p.elem.nonneg:
        c.diags.append(
            C.E0304.at(
                bound["p"].node.span,
                context=f"p of {b.name}: ",
                expected="weights known to be >= 0 (NonNeg or Prob, as softmax gives)",
                found=str(p),
            )
        )
    return T.TensorT(p.dims[:axis] + p.dims[axis + 1 :], T.index_of(p.dims[axis]))
