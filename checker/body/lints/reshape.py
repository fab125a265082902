"""W0204: a reshape that reorders named dims, a transpose written as a reshape."""

from __future__ import annotations

import itertools
import re

from ... import ast as A
from ... import catalog as C
from ... import types as T
from ...diagnostics import Fix, TextEdit
from ...shapes import element_count
from .base import LintPass, on_call

_NAME = re.compile(r"[A-Za-z_][\w.]*")


@on_call("builtin")
def _reshapes(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    if name == "reshape":
        reshape(p, call, bound.get("x"))


def reshape(p: LintPass, call: A.Call, x: A.Expr | None) -> None:
    """reshape that reorders named dims: a transpose written as a reshape.
    Two tests: the names of the factors, in order (`[b T (NH*HD)]` holds b
    T NH HD), and, for a dim standing alone in both shapes (`T` of `[b T
    E]` and of `[b NH T HD]`), the number of elements before it."""
    if x is None:
        return
    src = p.c.types.get(x)
    dst = p.c.types.get(call)
    if not (isinstance(src, T.TensorT) and isinstance(dst, T.TensorT)) or T.has_rest(src):
        return
    shape_arg = call.args[1].value if len(call.args) > 1 else None
    fixable = shape_arg is not None and x.span.end <= shape_arg.span.start
    src_groups = [_factors(d) for d in src.dims]
    dst_groups = [_factors(d) for d in dst.dims]
    fix = None
    if all(g is not None for g in src_groups + dst_groups):
        dst_f = [f for g in dst_groups for f in g or ()]
        # A product written in a param's type (`W: [I (Hd*Heads)]`) is a size,
        # not a layout: what the weight's columns hold is whatever the program
        # reads them as, so `reshape(h @ W, [n Heads Hd])` (GAT's `.view`) is
        # no reorder. Its factors take the target's order.
        free = _weight_products(p, x)
        src_groups = [
            _in_order_of(g, dst_f) if g is not None and len(g) > 1 and str(d) in free else g
            for d, g in zip(src.dims, src_groups)
        ]
        src_f = [f for g in src_groups for f in g or ()]
        if src_f != dst_f and sorted(src_f) == sorted(dst_f):
            if fixable:
                fix = _reshape_fix(call, x, shape_arg, src_groups, dst_groups, src_f, dst_f)
            order = " ".join(src_f)
            p.diags.append(
                C.W0204.at(
                    call.span,
                    source=str(src),
                    target=str(dst),
                    dim=_first_moved(src_f, dst_f),
                    order=order,
                    fix=fix,
                )
            )
            return
    moved = _moved_alone(src.dims, dst.dims)
    if moved is None:
        return
    if fixable:
        assert shape_arg is not None
        fix = _permuted_fix(call, x, shape_arg, src.dims, dst.dims)
    order = " ".join(str(d) for d in src.dims)
    p.diags.append(C.W0204.at(call.span, source=str(src), target=str(dst), dim=moved, order=order, fix=fix))


def _weight_products(p: LintPass, x: A.Expr, depth: int = 0) -> set[str]:
    """The product dims (as printed) of the model params that `x` reads,
    through locals assigned once: the dims whose factor order is free."""
    out: set[str] = set()
    if depth > 8:
        return out
    for node in A.walk(x):
        if isinstance(node, A.Field):
            obj = p.c.types.get(node.value)
            model = p.c.g.model(obj) if isinstance(obj, T.ModelT) else None
            f = model.field(node.name.text) if model is not None else None
            if f is not None and f.kind == "param" and isinstance(f.type, T.TensorT):
                field_type = p.c.types.get(node)
                dims = field_type.dims if isinstance(field_type, T.TensorT) else f.type.dims
                out.update(str(d) for d in dims if isinstance(d, T.DimExpr))
        elif isinstance(node, A.Name):
            ref = p.c.refs.get(node)
            if ref is not None and ref.kind == "local" and len(ref.defs) == 1 and ref.defs[0] in p.values:
                out |= _weight_products(p, p.values[ref.defs[0]], depth + 1)
    return out


def _reshape_fix(call, x, shape_arg, src_groups, dst_groups, src_f, dst_f) -> Fix:
    split_src = all(len(g) <= 1 for g in src_groups)
    split_dst = all(len(g) <= 1 for g in dst_groups)
    target = "[" + " ".join(dst_f) + "]"
    edits: list[TextEdit] = []
    if split_src:
        # reshape(x, [..]) -> permute(x, [dst factors]) (then regroup if needed)
        if split_dst:
            edits.append(TextEdit(A.Span(call.span.start, call.func.span.end), "permute"))
            edits.append(TextEdit(shape_arg.span, target))
            title = f"Change to permute(..., {target})"
        else:
            edits.append(TextEdit(A.Span(x.span.start, x.span.start), "permute("))
            edits.append(TextEdit(A.Span(x.span.end, x.span.end), f", {target})"))
            title = f"Permute to {target} first"
    else:
        source_order = "[" + " ".join(src_f) + "]"
        if split_dst:
            edits.append(TextEdit(A.Span(call.span.start, call.span.start), "permute("))
            edits.append(TextEdit(shape_arg.span, source_order))
            edits.append(TextEdit(A.Span(call.span.end, call.span.end), f", {target})"))
            title = f"Reshape to {source_order}, then permute to {target}"
        else:
            edits.append(TextEdit(A.Span(x.span.start, x.span.start), "permute(reshape("))
            edits.append(TextEdit(A.Span(x.span.end, x.span.end), f", {source_order}), {target})"))
            title = f"Split to {source_order} and permute to {target} first"
    return Fix(title, tuple(edits))


def _in_order_of(group: tuple[str, ...], order: list[str]) -> tuple[str, ...]:
    """A product's factors in the order they appear in `order` (when each does)."""
    if not all(f in order for f in group):
        return group
    return tuple(sorted(group, key=order.index))


def _factors(d: T.Dim) -> tuple[str, ...] | None:
    """The named factors of a dim (`(NH*HD)` is NH, HD); () for 1; None when
    the dim is not a product of names."""
    if isinstance(d, (T.DimConst, T.DimVar)):
        return (d.name,)
    if isinstance(d, T.DimLit):
        return () if d.value == 1 else None
    if isinstance(d, T.DimExpr):
        return _text_factors(d.text.replace(" ", ""))
    return None


def _text_factors(text: str) -> tuple[str, ...] | None:
    """The factors of a product as written, in its order: `(PH*PW*C)` is PH,
    PW, C; a factor that is not a name, such as `(H/PH)`, is one factor, its
    text; None when a factor is a number other than 1."""
    pieces = A.top_level(A.unwrapped(text), "*")
    if len(pieces) == 1:
        piece = pieces[0]
        if _NAME.fullmatch(piece):
            return (piece,)
        if piece.isdigit():
            return () if piece == "1" else None
        return (f"({piece})",)  # a sum or a division: one factor
    out: list[str] = []
    for piece in pieces:
        inner = _text_factors(piece)
        if inner is None:
            return None
        out.extend(inner)
    return tuple(out)


def _alone(d: T.Dim) -> bool:
    return isinstance(d, (T.DimConst, T.DimVar)) and T.dim_value(d) != 1


def _moved_alone(src: tuple[T.Dim, ...], dst: tuple[T.Dim, ...]) -> str | None:
    """A named dim once in each shape with a different number of elements
    before it: reshape left its data elsewhere."""
    for i, d in enumerate(src):
        if not _alone(d) or sum(T.same_dim(d, e) and _alone(e) for e in src) != 1:
            continue
        hits = [j for j, e in enumerate(dst) if _alone(e) and T.same_dim(d, e)]
        if len(hits) != 1:
            continue
        before_src, before_dst = element_count(src[:i]), element_count(dst[: hits[0]])
        if before_src is not None and before_dst is not None and before_src != before_dst:
            return str(d)
    return None


def _closest_order(dims: tuple[T.Dim, ...], other: tuple[T.Dim, ...]) -> tuple[T.Dim, ...] | None:
    """The order of `dims` nearest their own (fewest pairs swapped) that
    `other` reshapes to without moving a dim; None if none (or too many dims)."""
    if len(dims) > 6:
        return None
    best: tuple[int, tuple[T.Dim, ...]] | None = None
    for perm in itertools.permutations(range(len(dims))):
        order = tuple(dims[k] for k in perm)
        if _moved_alone(other, order) is not None or _moved_alone(order, other) is not None:
            continue
        swaps = sum(perm[a] > perm[b] for a in range(len(perm)) for b in range(a + 1, len(perm)))
        if best is None or swaps < best[0]:
            best = (swaps, order)
    return best[1] if best is not None and best[0] > 0 else None


def _shape_text(dims: tuple[T.Dim, ...]) -> str:
    return "[" + " ".join(d.text if isinstance(d, T.DimExpr) else str(d) for d in dims) + "]"


def _permuted_fix(
    call: A.Call, x: A.Expr, shape_arg: A.Expr, src: tuple[T.Dim, ...], dst: tuple[T.Dim, ...]
) -> Fix | None:
    """Split in the source's order, then permute (`permute(reshape(x,
    [b T NH HD]), [b NH T HD])`); or permute the source first, then merge."""
    split = _closest_order(dst, src)
    if split is not None:
        edits = (
            TextEdit(A.Span(call.span.start, call.span.start), "permute("),
            TextEdit(shape_arg.span, _shape_text(split)),
            TextEdit(A.Span(call.span.end, call.span.end), f", {_shape_text(dst)})"),
        )
        return Fix(f"Reshape to {_shape_text(split)}, then permute to {_shape_text(dst)}", edits)
    merge = _closest_order(src, dst)
    if merge is not None:
        edits = (
            TextEdit(A.Span(x.span.start, x.span.start), "permute("),
            TextEdit(A.Span(x.span.end, x.span.end), f", {_shape_text(merge)})"),
        )
        return Fix(f"Permute to {_shape_text(merge)} first", edits)
    return None


def _first_moved(src: list[str], dst: list[str]) -> str:
    for a, b in zip(src, dst, strict=True):
        if a != b:
            return b
    return dst[0]
