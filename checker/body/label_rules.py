"""Typing rules of the built-ins that make or use labels: `arange(T)` gives
the positions of a dim as `[T] Index[T]`, and `one_hot(y, over=C)` turns
`Index[C]` labels into a `C` dim. (Indexing a tensor by labels, an
embedding, is `x[labels]`: checker/body/expressions.py.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from ..declarations import dotted_text
from ..results import Ref
from .builtin_rules import Bound, rule
from .env import Env
from .text import expr_text

if TYPE_CHECKING:
    from .core import BodyChecker


def _dim_of_arg(c: BodyChecker, e: A.Expr, fn: str, what: str) -> T.Dim | None:
    """A dim given as an argument: a dim constant, a generic dim or a literal."""
    if isinstance(e, A.IntLit):
        if e.value <= 0:
            c.diags.append(C.E0208.at(e.span, value=e.value))
            return None
        return T.DimLit(e.value)
    if isinstance(e, A.Name) and e.name in c.fn.generics:
        c.refs[e] = Ref("generic", e.name, c.fn.name)
        c.types[e] = T.INT
        return T.DimVar(e.name)
    const = c.dim_constant(e)
    if const is not None:
        c.refs[const[0]] = Ref("dim", const[1])
        c.types[e] = T.INT
        value = c.g.names.dim_values.get(const[1])
        return T.DimConst(const[1], value) if value is not None else T.DimUnknown()
    number = c.int_constant(e)
    if number is not None:  # an Int constant: its number, as a shape reads it
        c.refs[number[0]] = Ref("const", number[1])
        c.types[e] = T.INT
        if number[2] <= 0:
            c.diags.append(C.E0208.at(e.span, value=number[2]))
            return None
        return T.DimLit(number[2])
    if isinstance(e, A.Name) and e.name in c.run_dims and (c.env_now is None or e.name not in c.env_now.vars):
        # a size read from a file (`[n D]`): arange(n), randperm(n, seed=0)
        dim = c.run_dims[e.name]
        c.refs[e] = Ref("size", dim.key, c.fn.name)
        c.types[e] = T.INT
        return dim
    var = c.int_var(e.name) if isinstance(e, A.Name) else None
    if isinstance(e, A.Name) and var is not None:
        # an Int as a size: a dim known only at run time, `arange(n)` is [n] Index[n]
        c.used.update(var.defs)
        c.refs[e] = Ref("local", e.name, c.fn.name, tuple(var.defs))
        c.types[e] = T.INT
        return c.int_dim(e.name, var)
    written = _dim_expr(c, e) if isinstance(e, A.Binary) else None
    if written is not None:  # dim arithmetic, as in a shape: arange((P+G))
        ctx = c.type_context()
        dim = ctx.dim(written)
        c._take(ctx)
        return None if isinstance(dim, T.DimUnknown) else dim
    c.diags.append(
        C.E0301.at(
            e.span,
            context=f"{what} of {fn}: ",
            expected="a dim (a dim constant, a generic dim, a number or dim arithmetic of them)",
            found=expr_text(e),
        )
    )
    return None


def _dim_expr(c: BodyChecker, e: A.Expr) -> A.Dim | None:
    """A value expression of dims, generic dims and integer literals joined by
    + - * / as the dim expression a shape would write (`(P+G)`), with the refs
    of its names; None when something else is in it."""
    if isinstance(e, A.IntLit):
        c.types[e] = T.INT
        return A.DimInt(e.span, e.value)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
        left, right = _dim_expr(c, e.left), _dim_expr(c, e.right)
        if left is None or right is None:
            return None
        c.types[e] = T.INT
        return A.DimBinary(e.span, e.op, left, right)
    if isinstance(e, A.Name) and e.name in c.fn.generics:
        c.refs[e] = Ref("generic", e.name, c.fn.name)
        c.types[e] = T.INT
        return A.DimName(e.span, e.name)
    var = c.int_var(e.name) if isinstance(e, A.Name) else None
    if isinstance(e, A.Name) and var is not None:
        # an Int: the shape's reader takes it as a size known only at run time
        c.used.update(var.defs)
        c.refs[e] = Ref("local", e.name, c.fn.name, tuple(var.defs))
        c.types[e] = T.INT
        return A.DimName(e.span, e.name)
    if isinstance(e, A.Name) and e.name in c.run_dims and (c.env_now is None or e.name not in c.env_now.vars):
        c.refs[e] = Ref("size", c.run_dims[e.name].key, c.fn.name)
        c.types[e] = T.INT
        return A.DimName(e.span, e.name)
    const = c.dim_constant(e)
    written = dotted_text(e)
    if const is not None and written is not None:
        c.refs[const[0]] = Ref("dim", const[1])
        c.types[e] = T.INT
        return A.DimName(e.span, written)
    number = c.int_constant(e)
    if number is not None and written is not None:  # an Int constant: its number, as a shape reads it
        c.refs[number[0]] = Ref("const", number[1])
        c.types[e] = T.INT
        return A.DimName(e.span, written)
    return None


@rule("arange")
def _arange(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    dim = _dim_of_arg(c, bound["n"].node, "arange", "n")
    if dim is None:
        return T.UNKNOWN
    return T.TensorT((dim,), T.index_of(dim))


@rule("one_hot")
def _one_hot(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    labels = c.tensor_arg(bound["labels"], env, "one_hot", "labels", float_only=False)
    dim = _dim_of_arg(c, bound["over"].node, "one_hot", "over")
    if labels is None or dim is None:
        return T.UNKNOWN
    if labels.elem.index is None or not T.dims_equal(labels.elem.index, dim):
        want = T.TensorT(labels.dims, T.index_of(dim))
        c.diags.append(
            C.E0305.at(bound["labels"].node.span, context="labels of one_hot: ", expected=str(want), found=str(labels))
        )
        return T.UNKNOWN
    return T.TensorT(labels.dims + (dim,), T.F32)
