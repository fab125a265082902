"""Shape operations: reshape, permute, transpose, concat, stack, chunk, and
the ones that move values without computing on them: pad (constant padding
of the last dims), flip, pixel_shuffle and pixel_unshuffle.

Sizes are dim normal forms (checker/dimexpr.py), so `reshape(x, [b T NH
HD])` of `[b T E]` checks when `NH*HD` is `E`, and `concat` over a dim gives
`(A+B)` there, symbolically for generic dims. A reshape whose counts are
equal when its floored divisions come out exact (`[b T NH (E/NH)]` of
`[b T E]`, a layer's dims split into heads) is checked when it runs.
`pad(x, (1, 2))` of `[b C H W]` is `[b C H (W+3)]`, `pixel_shuffle(x, 2)` of
`[b (C*4) H W]` is `[b C (H*2) (W*2)]`.
"""

from __future__ import annotations

import math

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import shapes as S
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.text import expr_text, plural
from ..results import DimCheck
from .args import (
    Bound,
    axis_position,
    choice_arg,
    dim_arg,
    dim_from,
    dim_text,
    dim_value_arg,
    literal_number,
    not_literal,
    over_axes,
    poly_dim,
    quiet_over,
    shape_arg,
    tensor_arg,
)
from .registry import builtin
from .spec import OVER, BParam, Builtin, ParamKind, X


def _text(d: T.Dim) -> str:
    """A dim as written, without its value (for building a new expression's text)."""
    return d.text if isinstance(d, T.DimExpr) else str(d)


@builtin(
    Builtin(
        name="reshape",
        params=(X, BParam(name="shape", kind=ParamKind.SHAPE)),
        signature="reshape(x: [..], shape) -> shape",
        doc="The values of x laid out in a new shape, written as a type; the element counts must be equal.",
        example="r = reshape(x, [b 2 2])",
        group="shape",
        runtime="reshape",
        note="Counts that are not provably equal are [E0214](diagnostics.md#e0214); those equal when a division "
        "comes out exact ([b T NH (E/NH)] of [b T E]) are checked when it runs.",
    ),
)
def _reshape(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = tensor_arg(c, bound["x"], env, "reshape", "x", float_only=False)
    target = shape_arg(c, bound["shape"], "reshape")
    if x is None or target is None:
        return T.UNKNOWN
    have, want = S.element_count(x.dims), S.element_count(target.dims)
    exact = have is not None and want is not None and have != want and DX.equal_if_exact(have, want)
    if have is not None and want is not None and have != want and not exact:
        # the shapes only: an element type or refinement is no part of a count
        reason = C.E0214.say(
            "element_counts",
            x=str(T.TensorT(x.dims)),
            have=DX.render(have),
            target=str(T.TensorT(target.dims)),
            want=DX.render(want),
        )
        c.diags.append(C.E0214.at(bound["shape"].node.span, operation="reshape", reason=reason))
        return T.UNKNOWN
    if exact or (have is None and want is not None and any(isinstance(d, T.DimUnknown) for d in x.dims)):
        # a dim known only at run time, or a division that must come out
        # exact ([b T E] as [b T NH (E/NH)]): the count is checked there
        result = T.TensorT(target.dims, x.elem)
        c.add_dim_check(bound["x"].node, DimCheck("reshape(): argument 'x'", str(result), count=target.dims))
    return T.TensorT(target.dims, x.elem)


@builtin(
    Builtin(
        name="permute",
        params=(X, BParam(name="order", kind=ParamKind.AXES)),
        signature="permute(x: [..], order) -> order",
        doc="The dims of x reordered by name: permute(x, [b H T D]) of [b T H D]; each dim of x once.",
        example="p = permute(x, [D b])",
        group="shape",
        runtime="permute",
        note="Each of x's dims once, named unambiguously ([E0214](diagnostics.md#e0214)).",
    ),
)
def _permute(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = tensor_arg(c, bound["x"], env, "permute", "x", float_only=False)
    order = bound["order"].node
    if not isinstance(order, A.TensorType):
        not_literal(
            c, order, env, "order of permute: ", "x's dims in a new order, such as [b H T D]", found="an expression"
        )
        return T.UNKNOWN
    target = shape_arg(c, bound["order"], "permute")
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
            problem = (
                C.E0214.say("not_a_dim_unknown", dim=str(d), type=str(x))
                if unknown
                else C.E0214.say("not_a_dim", dim=str(d), type=str(x))
            )
        elif len(hits) > 1:
            problem = C.E0214.say("dim_ambiguous", dim=str(d), type=str(x))
        elif hits[0] in positions:
            problem = C.E0214.say("named_twice", dim=str(d))
        if problem is not None:
            c.diags.append(C.E0214.at(written.span, operation="permute", reason=problem))
            return T.UNKNOWN
        positions.append(hits[0])
    if len(positions) != x.rank:
        missing = " ".join(str(x.dims[i]) for i in range(x.rank) if i not in positions)
        c.diags.append(
            C.E0214.at(order.span, operation="permute", reason=C.E0214.say("missing_dims", type=x, missing=missing))
        )
        return T.UNKNOWN
    c.axes[node] = tuple(positions)
    given = T.TensorT(tuple(named), x.elem)
    c.note_dims(bound["x"].node, given, x, "permute(): ", "argument 'x'")
    return T.TensorT(tuple(named[i] for i in positions), x.elem)


@builtin(
    Builtin(
        name="concat",
        params=(BParam(name="a"), BParam(name="b"), OVER),
        signature="concat(a: [.. A ..], b: [.. B ..], ..., over=A) -> [.. (A+B+...) ..]",
        doc="Two tensors or more joined along one dim (torch.cat); their other dims are the same. The tensors may "
        "come as one tuple: concat(split(x, (2, 3), over=D), over=-1).",
        example="c = concat(x, x, x, over=D)",
        group="shape",
        runtime="concat",
        variadic=True,
    ),
    raw=True,
)
def _concat(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    if any(a.keyword is None and isinstance(a.node, A.NameList) for a in args):
        # torch's list of tensors, `concat([a, b], over=D)`: the list's own E0301 says what to write
        c._eval_args(args, env)
        return T.UNKNOWN
    many = "2 positional arguments or more, or a tuple of 2 tensors or more"
    if not any(a.keyword is None for a in args):
        c._eval_args(args, env)
        c.diags.append(C.E0401.at(paren, name="concat", expected=many, found="0"))
        return T.UNKNOWN
    params = [("a", True, False), ("b", False, False), ("over", True, True)]
    matched = c.bind_args("concat", params, args, paren, True)
    if matched is None:
        c._eval_args(args, env)
        return T.UNKNOWN
    bound, extra = matched
    if "b" in bound:
        parts = [bound["a"], bound["b"], *extra]
        typed = [tensor_arg(c, a, env, "concat", "a" if i == 0 else "b", float_only=False) for i, a in enumerate(parts)]
    elif isinstance(whole := c.value(bound["a"].node, env), T.ListT):
        # concat(hs, over=D) of a list built in the body: D times its length
        listed = list_item(c, bound["a"], whole, "concat")
        if listed is None:
            quiet_over(c, bound["over"])
            return T.UNKNOWN
        item, length = listed
        axis = dim_arg(c, bound["over"], env, item, "concat", bound["a"], "a")
        c.axes[node] = axis
        if axis is None:
            return T.UNKNOWN
        p, n = T.dim_poly(item.dims[axis]), T.dim_poly(length)
        joined_dim: T.Dim = T.DimUnknown()
        if p is not None and n is not None:
            joined_dim = T.DimExpr(f"({_text(length)}*{_text(item.dims[axis])})", DX.mul(n, p))
        return T.TensorT(item.dims[:axis] + (joined_dim,) + item.dims[axis + 1 :], item.elem)
    else:  # one tuple of tensors: concat(split(x, (2, 3), over=D), over=-1)
        parts, typed = _tuple_of_tensors(c, bound["a"], env, "concat", whole)
        if len(parts) < 2 and typed[0] is not None:
            c.diags.append(C.E0401.at(paren, name="concat", expected=many, found="1 tensor"))
            typed = [None]
    x = typed[0] if typed else None
    if x is None or any(t is None for t in typed):
        quiet_over(c, bound["over"])
        return T.UNKNOWN
    tensors = typed
    axis = dim_arg(c, bound["over"], env, x, "concat", bound["a"], "a")
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    elem = x.elem
    for a, y in zip(parts[1:], tensors[1:]):
        assert y is not None
        if y.rank != x.rank or any(
            i != axis and not T.dims_equal(p, q) for i, (p, q) in enumerate(zip(x.dims, y.dims))
        ):
            reason = C.E0214.say("concat_dims", a=str(x), b=str(y), position=axis - x.rank)
            c.diags.append(C.E0214.at(a.node.span, operation="concat", reason=reason))
            return T.UNKNOWN
        if x.elem.dtype != y.elem.dtype:
            c.diags.append(
                C.E0302.at(
                    node.span, context="concat needs one element type: ", expected=x.show_elem(), found=y.show_elem()
                )
            )
            return T.UNKNOWN
        if y.elem != elem:
            elem = elem.plain()
    polys = [T.dim_poly(t.dims[axis]) for t in tensors if t is not None]
    joined: T.Dim = T.DimUnknown()
    if all(p is not None for p in polys):
        total = DX.const(0)
        for p in polys:
            assert p is not None
            total = DX.add(total, p)
        joined = T.DimExpr("(" + "+".join(_text(t.dims[axis]) for t in tensors if t is not None) + ")", total)
    return T.TensorT(x.dims[:axis] + (joined,) + x.dims[axis + 1 :], elem)


@builtin(
    Builtin(
        name="stack",
        params=(BParam(name="a"), BParam(name="over", required=False, keyword_only=True)),
        signature="stack(a: [..], b: [..], ..., over=0) -> [n ..]",
        doc="n tensors of one shape as one, with a new dim of size n: in front, or at position over=k of the result "
        "(torch.stack's dim; -1 is last). The tensors may come as one tuple: stack(unbind(x, over=0), over=-1).",
        example="s = stack(x, x, x, over=-1)",
        group="shape",
        runtime="stack",
        variadic=True,
    ),
    raw=True,
)
def _stack(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    tensors: list[tuple[CallArg, T.TensorT | None]] = []
    over: CallArg | None = None
    unknown_keyword = False
    positional = [a for a in args if a.keyword is None]
    first_type = c.value(positional[0].node, env) if len(positional) == 1 else None
    count: T.Dim | None = None  # the new dim's size: the number of tensors, or a list's length
    if isinstance(first_type, T.ListT):
        # stack(hs, over=1) of a list built in the body: its length is the new dim
        args = [a for a in args if a.keyword is not None]
        listed = list_item(c, positional[0], first_type, "stack")
        if listed is None:
            return T.UNKNOWN
        tensors = [(positional[0], listed[0])]
        count = listed[1]
    elif isinstance(first_type, T.TupleT):
        # one tuple of tensors: stack(unbind(x, over=K), over=-1)
        args = [a for a in args if a.keyword is not None]
        parts, typed = _tuple_of_tensors(c, positional[0], env, "stack", first_type)
        tensors = list(zip(parts, typed))
    for a in args:
        if a.keyword == "over" and over is None:
            over = a
            continue
        if a.keyword is not None:
            c.diags.append(
                C.E0402.at(
                    a.arg.keyword.span if a.arg and a.arg.keyword else a.span, name=a.keyword, fn="stack", hint=""
                )
            )
            unknown_keyword = True
            continue
        t = first_type if first_type is not None else c.value(a.node, env)
        tensors.append((a, tensor_arg(c, a, env, "stack", "a", float_only=False, typed=t)))
    if unknown_keyword:  # torch's dim=: the call's type is not guessed (one mistake, one diagnostic)
        return T.UNKNOWN
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
                C.E0214.at(
                    a.node.span,
                    operation="stack",
                    reason=C.E0214.say("stack_shapes", first=str(first), found=str(t)),
                )
            )
            return T.UNKNOWN
    at = 0
    if over is not None:
        position = axis_position(over.node)
        c.value(over.node, env)
        rank = first.rank + 1
        if position is None:
            not_literal(
                c, over.node, env, "over= of stack: ", "the new dim's position, an integer literal such as 1 or -1"
            )
            return T.UNKNOWN
        if not -rank <= position < rank:
            needed = position + 1 if position >= 0 else -position
            c.diags.append(
                C.E0210.at(
                    over.node.span,
                    operation=f"stack(over={position})",
                    needed=plural(needed - 1, "dim") + (" or more" if needed > 2 else ""),
                    found=str(first),
                )
            )
            return T.UNKNOWN
        at = position % rank
    new = (T.DimLit(len(tensors)) if count is None else count,)
    return T.TensorT(first.dims[:at] + new + first.dims[at:], first.elem)


def why_unknown(key: str) -> str:
    """The reason (E0963's variant) a list's length is not known, by its key (T.ListT.why)."""
    texts = {
        "conditional": C.E0963.say("conditional"),
        "while": C.E0963.say("while"),
        "jumps": C.E0963.say("jumps"),
        "rebound": C.E0963.say("rebound"),
        "range": C.E0963.say("range"),
    }
    return texts.get(key) or C.E0963.say("joined")


def list_item(c: RuleContext, a: CallArg, t: T.ListT, fn: str) -> tuple[T.TensorT, T.Dim] | None:
    """The element type and length of a list that `fn` joins into one tensor
    (E0962 when nothing is appended to it, E0963 when its length is not known)."""
    name = expr_text(a.node)
    if t.item is None:
        c.diags.append(C.E0962.at(a.node.span, name=name, use=fn))
        return None
    if t.length is None:
        why = why_unknown(t.why)
        c.diags.append(C.E0963.at(a.node.span, fn=fn, name=name, why=why))
        return None
    if isinstance(t.item, T.UnknownT):
        return None
    if not isinstance(t.item, T.TensorT):
        found = f"a list of {T.describe(t.item)}"
        c.diags.append(C.E0301.at(a.node.span, context=f"argument 'a' of {fn}: ", expected="tensors", found=found))
        return None
    return t.item, t.length


def _tuple_of_tensors(
    c: RuleContext, a: CallArg, env: Env, fn: str, typed: T.Type | None = None
) -> tuple[list[CallArg], list[T.TensorT | None]]:
    """The tensors of a tuple argument (each item's errors at the argument),
    or the argument alone when it is no tuple (its error from tensor_arg);
    `typed` is its type when the caller has already checked it."""
    t = c.value(a.node, env) if typed is None else typed
    if not isinstance(t, T.TupleT):
        return [a], [tensor_arg(c, a, env, fn, "a", float_only=False, typed=t)]
    if any(isinstance(item, T.UnknownT) for item in t.items):  # reported where it was made
        return [a], [None]
    if not all(isinstance(item, T.TensorT) for item in t.items):
        found = T.describe(t)
        c.diags.append(
            C.E0301.at(a.node.span, context=f"argument 'a' of {fn}: ", expected="a tuple of tensors", found=found)
        )
        return [a], [None]
    return [a] * len(t.items), [tensor_arg(c, a, env, fn, "a", float_only=False, typed=item) for item in t.items]


@builtin(
    Builtin(
        name="chunk",
        params=(X, BParam(name="n"), OVER),
        signature="chunk(x: [.. D ..], n: Int, over=D) -> ([.. (D/n) ..], ...)",
        doc="x cut into n equal parts along one dim: a tuple of n tensors; n is a number and must divide D.",
        example="h1, h2 = chunk(x, 2, over=D)",
        group="shape",
        runtime="chunk",
    ),
)
def _chunk(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    x = tensor_arg(c, bound["x"], env, "chunk", "x", float_only=False)
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
    axis = dim_arg(c, bound["over"], env, x, "chunk", bound["x"])
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    n = n_node.value
    whole = x.dims[axis]
    p = T.dim_poly(whole)
    part: T.Dim = T.DimUnknown()
    if p is not None:
        q = DX.div_exact(p, DX.const(n))  # the run time checks that n divides it
        size = T.dim_value(whole)
        if size is not None and size % n:
            reason = C.E0214.say("chunk_parts", n=n, whole=str(whole), size=size, left=size % n)
            c.diags.append(C.E0214.at(n_node.span, operation="chunk", reason=reason))
            return T.UNKNOWN
        if q is not None:
            part = T.DimExpr(f"({_text(whole)}/{n})", q)
    piece = T.TensorT(x.dims[:axis] + (part,) + x.dims[axis + 1 :], x.elem)
    return T.TupleT((piece,) * n)


@builtin(
    Builtin(
        name="transpose",
        params=(X,),
        signature="transpose(x: [.. a b]) -> [.. b a]",
        doc="Swaps the last two dims.",
        example="t = transpose(x)",
        group="tensor",
        runtime="transpose",
        note="([E0210](diagnostics.md#e0210))",
    ),
)
def _transpose(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = tensor_arg(c, bound["x"], env, "transpose", "x", float_only=False)
    if t is None:
        return T.UNKNOWN
    if t.rank < 2:
        c.diags.append(C.E0210.at(bound["x"].node.span, operation="transpose", needed="2 dims or more", found=str(t)))
        return T.UNKNOWN
    return T.TensorT(t.dims[:-2] + (t.dims[-1], t.dims[-2]), t.elem)


@builtin(
    Builtin(
        name="pad",
        params=(
            X,
            BParam(name="pad"),
            BParam(name="mode", required=False, keyword_only=True),
            BParam(name="value", required=False, keyword_only=True),
        ),
        signature='pad(x: [..], (left, right, ...), mode="constant", value=0.0) -> [..]',
        doc="x padded: the first pair of sizes pads the last dim, the next the one before it, ... (torch's F.pad); "
        "each size is an integer literal or a dim, so pad(x, (1, 2)) of [b W] is [b (W+3)]. mode= is torch's: "
        '"constant" (with value), "reflect" (mirrored, the edge not repeated), "replicate" (the edge repeated) or '
        '"circular" (wrapped around).',
        example='p = pad(x, (1, 2), mode="reflect")',
        group="shape",
        runtime="pad",
        note='A mode other than "constant" pads the last 1 to 3 dims of a tensor with one or two dims more, takes no '
        "value, and a size at most the dim's (below it for reflect) ([E0951](diagnostics.md#e0951)).",
    ),
)
def _pad(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """pad(x, (left, right, ...), value=0.0): the pairs pad the last dim,
    then the one before it, ... as torch's F.pad (mode "constant")."""
    x = tensor_arg(c, bound["x"], env, "pad", "x", float_only=False)
    e = bound["pad"].node
    if not isinstance(e, A.TupleExpr):
        not_literal(c, e, env, "pad of pad: ", "a tuple of sizes (left, right, ...) for the last dims")
        return T.UNKNOWN
    sizes: list[T.Dim] = []
    ok = True
    for item in e.items:
        d = dim_value_arg(c, CallArg(item, None, item.span), env, "pad", "each size", least=0)
        if d is None:
            ok = False
        else:
            sizes.append(d)
    c.types[e] = T.TupleT(tuple(T.NumberT("Int", True) for _ in e.items))
    mode = choice_arg(c, bound.get("mode"), env, "mode of pad", PAD_MODES)
    if mode is not None and mode != "constant" and "value" in bound:
        c.types[bound["value"].node] = c.value(bound["value"].node, env)
        c.diags.append(C.E0951.at(bound["value"].span, problem=C.E0951.say("value", mode=mode)))
        return T.UNKNOWN
    fill = _pad_value(c, bound.get("value"), env, x)
    if x is None or not ok or fill is None or mode is None:
        return T.UNKNOWN
    if len(sizes) % 2:
        reason = C.E0214.say("pad_pairs", count=len(sizes))
        c.diags.append(C.E0214.at(e.span, operation="pad", reason=reason))
        return T.UNKNOWN
    pairs = len(sizes) // 2
    if pairs > x.rank:
        needed = plural(pairs, "dim") + (" or more" if pairs > 1 else "")
        c.diags.append(C.E0210.at(e.span, operation=f"pad of {pairs} pairs", needed=needed, found=str(x)))
        return T.UNKNOWN
    if mode != "constant" and not _mode_fits(c, bound, e, mode, x, sizes):
        return T.UNKNOWN
    dims = list(x.dims)
    for i in range(pairs):
        at = x.rank - 1 - i
        dims[at] = _grown(dims[at], sizes[2 * i], sizes[2 * i + 1])
    return T.TensorT(tuple(dims), _padded_elem(x.elem, fill) if mode == "constant" else x.elem)


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _mode_fits(c: RuleContext, bound: Bound, e: A.TupleExpr, mode: str, x: T.TensorT, sizes: list[T.Dim]) -> bool:
    """torch's rules for a mode other than "constant" (E0951 where one is
    broken): the last 1, 2 or 3 dims of a tensor with one or two dims more
    (a batch and channels, or channels), not Bool for reflect and replicate,
    and each size at most its dim's (below it for reflect) where both are known."""
    pairs = len(sizes) // 2
    if not 1 <= pairs <= 3 or x.rank not in (pairs + 1, pairs + 2):
        count = plural(pairs, "pair")
        problem = C.E0951.say("rank", mode=mode, count=count, least=pairs + 1, most=pairs + 2, x=x)
        c.diags.append(C.E0951.at(e.span, problem=problem))
        return False
    if x.elem.is_bool and mode != "circular":
        c.diags.append(C.E0951.at(bound["x"].node.span, problem=C.E0951.say("bool", mode=mode, x=x)))
        return False
    for i, size in enumerate(sizes):
        dim = x.dims[x.rank - 1 - i // 2]
        n, d = T.dim_value(size), T.dim_value(dim)
        if n is None or d is None or n < d or (n == d and mode != "reflect") or mode == "replicate":
            continue
        bound_text = "below" if mode == "reflect" else "at most"
        problem = C.E0951.say("too_wide", mode=mode, size=n, n=d, bound=bound_text)
        c.diags.append(C.E0951.at(e.items[i].span, problem=problem))
        return False
    return True


def _grown(d: T.Dim, left: T.Dim, right: T.Dim) -> T.Dim:
    """`d` with `left` and `right` added: `(W+3)`, `(W+P+P)`, or `d` itself for (0, 0)."""
    parts = (d, left, right)
    polys = [T.dim_poly(p) for p in parts]
    if any(p is None for p in polys):
        return T.DimUnknown()
    added = [p for p in (left, right) if T.dim_value(p) != 0 or not isinstance(p, T.DimLit)]
    if not added:
        return d
    total = DX.const(0)
    for p in polys:
        assert p is not None
        total = DX.add(total, p)
    numbers = sum(T.dim_value(p) or 0 for p in added if isinstance(p, T.DimLit))
    names = [dim_text(p) for p in added if not isinstance(p, T.DimLit)]
    text = "(" + "+".join([dim_text(d), *names] + ([str(numbers)] if numbers else [])) + ")"
    return dim_from(total, text, parts)


def _pad_value(c: RuleContext, a: CallArg | None, env: Env, x: T.TensorT | None) -> float | bool | None:
    """value=: a number that suits x's element type (0 when left out); its
    literal value, or nan when it is not a literal; None after an error."""
    if a is None:
        return 0
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return None
    if not (isinstance(t, T.NumberT) and t.kind in ("Int", "Float", "Bool")):
        c.diags.append(C.E0301.at(a.node.span, context="value of pad: ", expected="a number", found=T.describe(t)))
        return None
    if x is not None:
        want = "Bool" if x.elem.is_bool else "Int" if not x.elem.is_float else None
        fits = t.kind in ("Int", "Float") if want is None else t.kind == want
        if not fits:
            c.diags.append(
                C.E0302.at(
                    a.node.span,
                    context=f"value of pad on {x.show_elem()}: ",
                    expected=want or "a Float",
                    found=t.kind,
                )
            )
            return None
    if isinstance(a.node, A.BoolLit):
        return a.node.value
    v = literal_number(a.node)
    return v if v is not None else float("nan")


def _padded_elem(elem: T.Elem, fill: float | bool) -> T.Elem:
    """The element type of a padded tensor: a refinement (NonNeg, Prob,
    Index[C]) stays when the fill value is a literal inside it."""
    if isinstance(fill, bool):
        return elem
    if math.isnan(fill):  # not a literal: nothing is known of it
        return T.with_refine(elem, None) if elem.index is None else T.Elem(elem.dtype)
    if elem.index is not None:
        size = T.dim_value(elem.index)
        whole = math.isfinite(fill) and fill >= 0 and fill == int(fill)
        inside = whole and (fill < size if size is not None else fill == 0)
        return elem if inside else T.Elem(elem.dtype)
    if elem.refine == "prob":
        return elem if 0 <= fill <= 1 else T.with_refine(elem, "nonneg" if fill >= 0 else None)
    if elem.refine == "nonneg":
        return elem if fill >= 0 else elem.plain()
    return elem


@builtin(
    Builtin(
        name="flip",
        params=(X, OVER),
        signature="flip(x: [..], over=d) -> [..]",
        doc="x with the order of its values reversed along dim d, or dims over=(d1, d2).",
        example="f = flip(x, over=D)",
        group="shape",
        runtime="flip",
    ),
)
def _flip(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """flip(x, over=d) or over=(d1, d2): the order of the values along those dims reversed."""
    x = tensor_arg(c, bound["x"], env, "flip", "x", float_only=False)
    if x is None:
        quiet_over(c, bound["over"])
        return T.UNKNOWN
    got = over_axes(c, bound["over"], env, x, "flip", bound["x"])
    if got is None:
        return T.UNKNOWN
    axes, named = got
    c.axes[node] = axes
    return named


@builtin(
    Builtin(
        name="pixel_shuffle",
        params=(X, BParam(name="r")),
        signature="pixel_shuffle(x: [.. (C*r*r) H W], r) -> [.. C (H*r) (W*r)]",
        doc="Each r*r channels become an r by r block of pixels (torch's pixel_shuffle); r is an integer literal or a "
        "dim, and r*r divides the channels.",
        example="p = pixel_shuffle(zeros([2 8 3 3]), 2)",
        group="shape",
        runtime="pixel_shuffle",
        note="([E0214](diagnostics.md#e0214))",
    ),
    Builtin(
        name="pixel_unshuffle",
        params=(X, BParam(name="r")),
        signature="pixel_unshuffle(x: [.. C H W], r) -> [.. (C*r*r) (H/r) (W/r)]",
        doc="The inverse of pixel_shuffle: each r by r block of pixels becomes r*r channels; r divides H and W.",
        example="p = pixel_unshuffle(zeros([2 2 4 4]), 2)",
        group="shape",
        runtime="pixel_unshuffle",
        note="([E0214](diagnostics.md#e0214))",
    ),
)
def _pixel_shuffle(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """pixel_shuffle(x, r): [.. (C*r*r) H W] to [.. C (H*r) (W*r)];
    pixel_unshuffle(x, r) the other way."""
    x = tensor_arg(c, bound["x"], env, b.name, "x", float_only=False)
    r = dim_value_arg(c, bound["r"], env, b.name, "r")
    if x is None or r is None:
        return T.UNKNOWN
    if x.rank < 3:
        c.diags.append(
            C.E0210.at(bound["x"].node.span, operation=b.name, needed="3 dims or more ([.. C H W])", found=str(x))
        )
        return T.UNKNOWN
    pr = T.dim_poly(r)
    polys = [T.dim_poly(d) for d in x.dims[-3:]]
    if pr is None or any(p is None for p in polys):
        return T.TensorT(x.dims[:-3] + (T.DimUnknown(),) * 3, x.elem)
    pc, ph, pw = (p for p in polys if p is not None)
    ch, h, w = x.dims[-3:]
    rt = dim_text(r)
    rr = DX.mul(pr, pr)
    if b.name == "pixel_shuffle":
        channels = _divided(c, bound, b.name, ch, pc, rr, f"r*r={_shown(rr)}", x, -3)
        if channels is None:
            return T.UNKNOWN
        out = (
            channels,
            dim_from(DX.mul(ph, pr), f"({dim_text(h)}*{rt})", (h, r)),
            dim_from(DX.mul(pw, pr), f"({dim_text(w)}*{rt})", (w, r)),
        )
    else:
        rows = _divided(c, bound, b.name, h, ph, pr, f"r={_shown(pr)}", x, -2)
        cols = _divided(c, bound, b.name, w, pw, pr, f"r={_shown(pr)}", x, -1) if rows is not None else None
        if rows is None or cols is None:
            return T.UNKNOWN
        r2 = str(r.value**2) if isinstance(r, T.DimLit) else f"{rt}*{rt}"
        out = (dim_from(DX.mul(pc, rr), f"({dim_text(ch)}*{r2})", (ch, r)), rows, cols)
    return T.TensorT(x.dims[:-3] + out, x.elem)


def _shown(p: DX.Poly) -> str:
    v = DX.value(p)
    return str(v) if v is not None else DX.render(p)


def _divided(
    c: RuleContext,
    bound: Bound,
    fn: str,
    d: T.Dim,
    p: DX.Poly,
    q: DX.Poly,
    by: str,
    x: T.TensorT,
    position: int,
) -> T.Dim | None:
    """`d / q` for a dim that must divide exactly: E0214 when its value is
    known and it does not. A generic size that is not provably a multiple
    stays a floored division, `(h/2)`, which torch checks at run time."""
    size, div = DX.value(p), DX.value(q)
    if size is not None and div is not None and size % div:
        reason = C.E0214.say("does_not_divide", by=str(by), dim=_dim_shown(d), position=position, type=str(x))
        c.diags.append(C.E0214.at(bound["r"].node.span, operation=fn, reason=reason))
        return None
    quotient = DX.div(p, q)
    assert quotient is not None  # q is a positive size
    if size is not None and div is not None:
        return T.DimLit(size // div)
    return poly_dim(quotient)


def _dim_shown(d: T.Dim) -> str:
    return f"{d}={d.value}" if isinstance(d, T.DimConst) else str(d)
