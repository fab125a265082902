"""Typing rules of the shape operations: reshape, permute, concat, stack,
chunk. Sizes are dim normal forms (checker/dimexpr.py), so `reshape(x,
[b T NH HD])` of `[b T E]` checks when `NH*HD` is `E`, and `concat` over a
dim gives `(A+B)` there, symbolically for generic dims. A reshape whose counts
are equal when its floored divisions come out exact (`[b T NH (E/NH)]` of
`[b T E]`, a layer's dims split into heads) is checked when it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..builtins import Builtin
from ..results import DimCheck
from .builtin_rules import Bound, rule
from .env import CallArg, Env

if TYPE_CHECKING:
    from .core import BodyChecker


def _text(d: T.Dim) -> str:
    """A dim as written, without its value (for building a new expression's text)."""
    return d.text if isinstance(d, T.DimExpr) else str(d)


def _count(dims: tuple[T.Dim, ...]) -> DX.Poly | None:
    """The number of elements of a shape, as a normal form (None: unknown)."""
    out = DX.const(1)
    for d in dims:
        p = T.dim_poly(d)
        if p is None:
            return None
        out = DX.mul(out, p)
    return out


@rule("reshape")
def _reshape(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = c.tensor_arg(bound["x"], env, "reshape", "x", float_only=False)
    target = c.shape_arg(bound["shape"], "reshape")
    if x is None or target is None:
        return T.UNKNOWN
    have, want = _count(x.dims), _count(target.dims)
    exact = have is not None and want is not None and have != want and DX.equal_if_exact(have, want)
    if have is not None and want is not None and have != want and not exact:
        # the shapes only: an element type or refinement is no part of a count
        reason = (
            f"{T.TensorT(x.dims)} has {DX.render(have)} elements and {T.TensorT(target.dims)} has {DX.render(want)}"
        )
        c.diags.append(C.E0214.at(bound["shape"].node.span, operation="reshape", reason=reason))
        return T.UNKNOWN
    if exact or (have is None and want is not None and any(isinstance(d, T.DimUnknown) for d in x.dims)):
        # a dim known only at run time, or a division that must come out
        # exact ([b T E] as [b T NH (E/NH)]): the count is checked there
        result = T.TensorT(target.dims, x.elem)
        c.add_dim_check(bound["x"].node, DimCheck("reshape(): argument 'x'", str(result), count=target.dims))
    return T.TensorT(target.dims, x.elem)


@rule("permute")
def _permute(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = c.tensor_arg(bound["x"], env, "permute", "x", float_only=False)
    order = bound["order"].node
    if not isinstance(order, A.TensorType):
        c.value(order, env)
        c.diags.append(
            C.E0301.at(
                order.span,
                context="order of permute: ",
                expected="x's dims in a new order, such as [b H T D]",
                found="an expression",
            )
        )
        return T.UNKNOWN
    target = c.shape_arg(bound["order"], "permute")
    if x is None or target is None:
        return T.UNKNOWN
    # A dim of x known only at run time (`?`) takes the one name of the
    # order that is no other dim of x, and is checked to be it at run time.
    unknown = [i for i, xd in enumerate(x.dims) if isinstance(xd, T.DimUnknown)]
    named = list(x.dims)
    positions: list[int] = []
    for d, written in zip(target.dims, order.dims):
        hits = [i for i, xd in enumerate(x.dims) if T.same_dim(xd, d)]
        if isinstance(d, T.DimUnknown):
            return T.UNKNOWN
        if not hits and len(unknown) == 1 and unknown[0] not in positions:
            hits = unknown
            named[unknown[0]] = d
        problem = None
        if not hits:
            problem = f"{d} is not a dim of {x}"
            if unknown:
                problem += "; name its dims known only at run time (?) with a cast first, `... as [..]`"
        elif len(hits) > 1:
            problem = f"{d} is more than one dim of {x}; give the dims different names"
        elif hits[0] in positions:
            problem = f"{d} is named twice"
        if problem is not None:
            c.diags.append(C.E0214.at(written.span, operation="permute", reason=problem))
            return T.UNKNOWN
        positions.append(hits[0])
    if len(positions) != x.rank:
        missing = " ".join(str(x.dims[i]) for i in range(x.rank) if i not in positions)
        c.diags.append(
            C.E0214.at(order.span, operation="permute", reason=f"every dim of {x} is named once; missing: {missing}")
        )
        return T.UNKNOWN
    c.axes[node] = tuple(positions)
    given = T.TensorT(tuple(named), x.elem)
    c.note_dims(bound["x"].node, given, x, "permute(): ", "argument 'x'")
    return T.TensorT(tuple(named[i] for i in positions), x.elem)


@rule("concat")
def _concat(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = c.tensor_arg(bound["a"], env, "concat", "a", float_only=False)
    y = c.tensor_arg(bound["b"], env, "concat", "b", float_only=False)
    if x is None or y is None:
        return T.UNKNOWN
    axis = c.dim_arg(bound["over"], env, x, "concat", bound["a"], "a")
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    if x.rank != y.rank or any(i != axis and not T.dims_equal(p, q) for i, (p, q) in enumerate(zip(x.dims, y.dims))):
        reason = f"{x} and {y} must have the same dims but for the one joined (position {axis - x.rank})"
        c.diags.append(C.E0214.at(bound["b"].node.span, operation="concat", reason=reason))
        return T.UNKNOWN
    if x.elem.dtype != y.elem.dtype:
        c.diags.append(
            C.E0302.at(
                node.span, context="concat needs one element type: ", expected=x.show_elem(), found=y.show_elem()
            )
        )
        return T.UNKNOWN
    pa, pb = T.dim_poly(x.dims[axis]), T.dim_poly(y.dims[axis])
    joined: T.Dim = T.DimUnknown()
    if pa is not None and pb is not None:
        joined = T.DimExpr(f"({_text(x.dims[axis])}+{_text(y.dims[axis])})", DX.add(pa, pb))
    elem = x.elem if x.elem == y.elem else x.elem.plain()
    return T.TensorT(x.dims[:axis] + (joined,) + x.dims[axis + 1 :], elem)


@rule("stack", raw=True)
def _stack(c: BodyChecker, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    tensors: list[tuple[CallArg, T.TensorT | None]] = []
    for a in args:
        if a.keyword is not None:
            c.diags.append(
                C.E0402.at(
                    a.arg.keyword.span if a.arg and a.arg.keyword else a.span, name=a.keyword, fn="stack", hint=""
                )
            )
            continue
        tensors.append((a, c.tensor_arg(a, env, "stack", "a", float_only=False)))
    if not tensors:
        c.diags.append(C.E0401.at(paren, name="stack", expected="1 positional argument or more", found="0"))
        return T.UNKNOWN
    if any(t is None for _, t in tensors):
        return T.UNKNOWN
    first = tensors[0][1]
    assert first is not None
    for a, t in tensors[1:]:
        assert t is not None
        if (
            t.rank != first.rank
            or not all(T.dims_equal(p, q) for p, q in zip(first.dims, t.dims))
            or t.elem.dtype != first.elem.dtype
        ):
            c.diags.append(
                C.E0214.at(a.node.span, operation="stack", reason=f"every tensor has one shape: {first}, found {t}")
            )
            return T.UNKNOWN
    return T.TensorT((T.DimLit(len(tensors)),) + first.dims, first.elem)


@rule("chunk")
def _chunk(c: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = c.tensor_arg(bound["x"], env, "chunk", "x", float_only=False)
    n_node = bound["n"].node
    c.value(n_node, env)
    if not isinstance(n_node, A.IntLit) or n_node.value < 1:
        c.diags.append(
            C.E0301.at(
                n_node.span,
                context="n of chunk: ",
                expected="a positive integer literal (the number of parts)",
                found="this expression",
            )
        )
        return T.UNKNOWN
    if x is None:
        return T.UNKNOWN
    axis = c.dim_arg(bound["over"], env, x, "chunk", bound["x"])
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    n = n_node.value
    whole = x.dims[axis]
    p = T.dim_poly(whole)
    part: T.Dim = T.DimUnknown()
    if p is not None:
        q = DX.div(p, DX.const(n))
        size = T.dim_value(whole)
        if size is not None and size % n:
            reason = f"{n} parts do not divide {whole} ({size} leaves {size % n})"
            c.diags.append(C.E0214.at(n_node.span, operation="chunk", reason=reason))
            return T.UNKNOWN
        if q is not None:
            part = T.DimExpr(f"({_text(whole)}/{n})", q)
    piece = T.TensorT(x.dims[:axis] + (part,) + x.dims[axis + 1 :], x.elem)
    return T.TupleT((piece,) * n)
