"""Built-ins that take a pattern of dim names, as einops writes them:
`einsum("b n d, b m d -> b n m", q, k)` (torch.einsum with names for
letters) and `rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=16,
p2=16)` (einops.rearrange: a reshape, permute and reshape in one).

A pattern's names are its own: they are bound to the tensors' dims position
by position, so the result's type is computed exactly: einsum's result has
the dims of its output names (the others are summed over); rearrange's
groups split a dim (`(h p1)` of `H` with `p1=16` is `(H/16)` and 16) or
merge dims (`(h w)` is `(h*w)`). A side may start with `...`: the leading
dims, however many (a `[.. d]` operand's `..` among them), kept in front of
the result. The pattern is read by checker/einpattern.py;
a diagnostic about one name underlines that name inside the string.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import einpattern as P
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.text import plural
from ..diagnostics import LocalRelated
from ..results import DimCheck
from .args import dim_from, dim_text, dim_value_arg, poly_dim, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin

# torch.einsum names each dim by one letter
MOST_NAMES = 52


def _at(lit: A.StrLit, start: int, end: int) -> A.Span:
    """The span of `lit.value[start:end]` in the source: inside the quotes
    when the literal is written without escapes, else the whole literal."""
    if lit.span.end - lit.span.start != len(lit.value) + 2 or start >= end:
        return lit.span
    return A.Span(lit.span.start + 1 + start, lit.span.start + 1 + end)


# what E0970 says of each malformed pattern (einpattern.PatternError's variant)
_SAID: dict[str, Callable[[dict[str, str]], str]] = {
    "no_arrow": lambda a: C.E0970.say("no_arrow"),
    "two_arrows": lambda a: C.E0970.say("two_arrows"),
    "comma_in_output": lambda a: C.E0970.say("comma_in_output"),
    "comma_in_rearrange": lambda a: C.E0970.say("comma_in_rearrange"),
    "ellipsis": lambda a: C.E0970.say("ellipsis"),
    "group_in_einsum": lambda a: C.E0970.say("group_in_einsum"),
    "nested": lambda a: C.E0970.say("nested"),
    "unopened": lambda a: C.E0970.say("unopened"),
    "unclosed": lambda a: C.E0970.say("unclosed"),
    "empty_group": lambda a: C.E0970.say("empty_group"),
    "bad_name": lambda a: C.E0970.say("bad_name", name=a["name"]),
    "bad_char": lambda a: C.E0970.say("bad_char", char=a["char"]),
}


def _tensor(c: RuleContext, a: CallArg, env: Env, fn: str, pname: str, float_only: bool) -> T.TensorT | None:
    """A tensor argument, which may be written with a rest of dims, `[.. d]`
    (the spec's rest_ok): a raw rule names itself to tensor_arg, after its
    argument is typed (a call inside it names its own built-in)."""
    t = c.value(a.node, env)
    outer, c.builtin_now = c.builtin_now, fn
    try:
        return tensor_arg(c, a, env, fn, pname, float_only=float_only, typed=t)
    finally:
        c.builtin_now = outer


def _pattern(c: RuleContext, a: CallArg, env: Env, fn: str, groups: bool) -> tuple[A.StrLit, P.Pattern] | None:
    """The pattern argument, parsed (None after a diagnostic)."""
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return None
    lit = a.node
    if not isinstance(lit, A.StrLit):
        example = '"b c (h p) w -> b (c p) h w"' if groups else '"b n d, b m d -> b n m"'
        c.diags.append(
            C.E0301.at(
                lit.span,
                context=f"pattern of {fn}: ",
                expected=f"a string literal, such as {example}",
                found=T.describe(t),
            )
        )
        return None
    got = P.parse(lit.value, groups=groups, many=not groups)
    if isinstance(got, P.PatternError):
        problem = _SAID[got.variant](dict(got.args))
        c.diags.append(C.E0970.at(_at(lit, got.start, got.end), fn=fn, problem=problem))
        return None
    return lit, got


def _dims_of(c: RuleContext, lit: A.StrLit, side: P.Side, x: T.TensorT, fn: str) -> tuple[T.Dim, ...] | None:
    """The leading dims of x that the side's `...` stands for (none without
    one), after checking that the side names each of x's other dims; None
    after a diagnostic."""
    named = len(side.items)
    rest = T.has_rest(x)
    fits = x.rank - named >= (1 if rest else 0) if side.lead is not None else x.rank == named and not rest
    if fits:
        return x.dims[: x.rank - named]
    start, end = P.trimmed(lit.value, side.start, side.end)
    kind = "rank_lead" if side.lead is not None else "rest" if rest and x.rank - 1 == named else "rank"
    shown = [d for d in x.dims if not isinstance(d, T.DimRest)]
    if kind == "rest":
        reason = C.E0971.say("rest", side=side.text, x=str(x))
    elif kind == "rank_lead":
        reason = C.E0971.say(
            "rank_lead", side=side.text, names=plural(named, "dim"), x=str(x), dims=plural(len(shown), "dim")
        )
    else:
        reason = C.E0971.say("rank", side=side.text, names=plural(named, "dim"), x=str(x), dims=plural(x.rank, "dim"))
    c.diags.append(C.E0971.at(_at(lit, start, end), fn=fn, reason=reason))
    return None


def _lead_kept(c: RuleContext, lit: A.StrLit, pattern: P.Pattern, fn: str) -> bool:
    """Whether the result has `...` exactly when an input has."""
    has = any(side.lead is not None for side in pattern.inputs)
    out = pattern.output.lead
    if has == (out is not None):
        return True
    if out is not None:
        inputs = "the inputs have" if len(pattern.inputs) > 1 else "the input has"
        problem = C.E0973.say("lead_made", inputs=inputs)
        span = _at(lit, out.start, out.end)
    else:
        problem = C.E0973.say("lead_dropped")
        start, end = P.trimmed(lit.value, pattern.output.start, pattern.output.end)
        span = _at(lit, start, end) if end > start else lit.span
    c.diags.append(C.E0973.at(span, fn=fn, problem=problem))
    return False


def _result_names(c: RuleContext, lit: A.StrLit, pattern: P.Pattern, known: set[str], fn: str) -> bool:
    """Whether each name of the result is an input's, once."""
    seen: set[str] = set()
    inputs = "inputs" if len(pattern.inputs) > 1 else "input"
    for n in pattern.output.names:
        problem = None
        if n.text not in known:
            problem = C.E0973.say("not_in_inputs", name=n.text, inputs=inputs)
        elif n.text in seen:
            problem = C.E0973.say("twice_in_result", name=n.text)
        if problem is not None:
            c.diags.append(C.E0973.at(_at(lit, n.start, n.end), fn=fn, problem=problem))
            return False
        seen.add(n.text)
    return True


@builtin(
    Builtin(
        name="einsum",
        params=(BParam(name="pattern"), BParam(name="a")),
        signature="einsum(pattern: Str, a: [..], ...) -> [..]",
        doc='A sum of products written with dim names (torch.einsum, names for letters): einsum("b n d, b m d -> b n '
        'm", q, k); each input of the pattern names the dims of one tensor, the result has the dims named after '
        "->, and the names it leaves out are summed over.",
        example='e = einsum("b d, b d -> b", x, x)',
        group="shape",
        runtime="einsum",
        variadic=True,
        rest_ok=True,
        note="A name bound to two dims is [E0972](diagnostics.md#e0972); the pattern's errors are "
        "[E0970](diagnostics.md#e0970) to [E0973](diagnostics.md#e0973).",
    ),
    raw=True,
)
def _einsum(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    matched = c.bind_args("einsum", [("pattern", True, False), ("a", True, False)], args, paren, True)
    if matched is None:
        c._eval_args(args, env)
        return T.UNKNOWN
    bound, extra = matched
    parts = [bound["a"], *extra]
    typed = [_tensor(c, a, env, "einsum", "a" if i == 0 else "b", True) for i, a in enumerate(parts)]
    got = _pattern(c, bound["pattern"], env, "einsum", False)
    if got is None or any(t is None for t in typed):
        return T.UNKNOWN
    lit, pattern = got
    tensors = [t for t in typed if t is not None]
    if len(pattern.inputs) != len(tensors):
        reason = C.E0971.say(
            "operands", inputs=plural(len(pattern.inputs), "input"), tensors=plural(len(tensors), "tensor")
        )
        c.diags.append(C.E0971.at(lit.span, fn="einsum", reason=reason))
        return T.UNKNOWN
    names = {n.text for side in pattern.inputs for n in side.names}
    if len(names | {n.text for n in pattern.output.names}) > MOST_NAMES:
        count = len(names | {n.text for n in pattern.output.names})
        c.diags.append(C.E0970.at(lit.span, fn="einsum", problem=C.E0970.say("too_many", count=count)))
        return T.UNKNOWN
    dims: dict[str, tuple[T.Dim, P.Name, int]] = {}
    leads: list[tuple[T.Dim, ...]] = []
    lead: tuple[tuple[T.Dim, ...], P.Name, int] | None = None
    for i, (side, x) in enumerate(zip(pattern.inputs, tensors)):
        front = _dims_of(c, lit, side, x, "einsum")
        if front is None:
            return T.UNKNOWN
        leads.append(front)
        if side.lead is not None and lead is None:
            lead = (front, side.lead, i)
        elif side.lead is not None and lead is not None and not _same_dims(lead[0], front):
            # the leading dims of `...`, the same in each tensor
            c.diags.append(
                C.E0972.at(
                    _at(lit, side.lead.start, side.lead.end),
                    related=(LocalRelated("'...' is bound here", span=_at(lit, lead[1].start, lead[1].end)),),
                    fn="einsum",
                    name="...",
                    first=str(T.TensorT(lead[0])),
                    first_place=f"{tensors[lead[2]]} (tensor {lead[2] + 1})",
                    second=str(T.TensorT(front)),
                    second_place=f"{x} (tensor {i + 1})",
                )
            )
            return T.UNKNOWN
        for n, d in zip(side.names, x.dims[len(front) :]):
            first = dims.get(n.text)
            if first is None or (isinstance(first[0], T.DimUnknown) and not isinstance(d, T.DimUnknown)):
                dims[n.text] = (d, n, i)
                continue
            if not T.dims_equal(first[0], d):
                c.diags.append(
                    C.E0972.at(
                        _at(lit, n.start, n.end),
                        related=(
                            LocalRelated(f"'{n.text}' is {first[0]} here", span=_at(lit, first[1].start, first[1].end)),
                        ),
                        fn="einsum",
                        name=n.text,
                        first=first[0],
                        first_place=f"{tensors[first[2]]} (tensor {first[2] + 1})",
                        second=d,
                        second_place=f"{x} (tensor {i + 1})",
                    )
                )
                return T.UNKNOWN
    if not _result_names(c, lit, pattern, names, "einsum") or not _lead_kept(c, lit, pattern, "einsum"):
        return T.UNKNOWN
    dtypes = [t.elem.dtype for t in tensors]
    for t, a in zip(tensors, parts):
        if t.elem.dtype != dtypes[0]:
            c.diags.append(
                C.E0302.at(
                    a.node.span,
                    context="einsum needs one element type for its tensors: ",
                    expected=tensors[0].show_elem(),
                    found=t.show_elem(),
                )
            )
            return T.UNKNOWN
    for i, (side, x, a) in enumerate(zip(pattern.inputs, tensors, parts)):
        # a dim known only at run time (`?`) where the name is bound to a known dim: checked there
        given = T.TensorT(leads[i] + tuple(dims[n.text][0] for n in side.names), x.elem)
        c.note_dims(a.node, given, x, "einsum(): ", f"tensor {i + 1}")
    front = lead[0] if lead is not None else ()
    return T.TensorT(front + tuple(dims[n.text][0] for n in pattern.output.names), T.Elem(dtypes[0]))


def _same_dims(a: tuple[T.Dim, ...], b: tuple[T.Dim, ...]) -> bool:
    return len(a) == len(b) and all(
        isinstance(x, T.DimRest) and isinstance(y, T.DimRest) or T.dims_equal(x, y) for x, y in zip(a, b)
    )


def _product(ds: list[T.Dim]) -> T.Dim:
    """The dim that is the product of `ds` (`(h*w)`, a 1 left out); unknown when one is."""
    ds = [d for d in ds if not (isinstance(d, T.DimLit) and d.value == 1)] or [T.DimLit(1)]
    if len(ds) == 1:
        return ds[0]
    polys = [T.dim_poly(d) for d in ds]
    if any(p is None for p in polys):
        return T.DimUnknown()
    total = DX.const(1)
    for p in polys:
        assert p is not None
        total = DX.mul(total, p)
    return dim_from(total, "(" + "*".join(dim_text(d) for d in ds) + ")", ds)


def _quotient(p: DX.Poly, q: DX.Poly) -> DX.Poly:
    """`p / q` floored, exact when q is one term that divides each of p's:
    `(t*e)` by `e` is `t`, as DX.div alone does not see."""
    if len(q) == 1 and q[0][0]:
        terms = [_term_quotient(m, c, q[0]) for m, c in p]
        if all(t is not None for t in terms):
            out = DX.ZERO
            for t in terms:
                assert t is not None
                out = DX.add(out, t)
            return out
    quotient = DX.div(p, q)
    assert quotient is not None  # a size is at least 1
    return quotient


def _term_quotient(m: DX.Mono, c: int, divisor: tuple[DX.Mono, int]) -> DX.Poly | None:
    """The term c*m divided by one term, when it divides it."""
    rest = list(m)
    for a in divisor[0]:
        if a not in rest:
            return None
        rest.remove(a)
    if c % divisor[1]:
        return None
    out = DX.const(c // divisor[1])
    for a in rest:
        out = DX.mul(out, DX.atom(a))
    return out


def _readable(d: T.Dim) -> bool:
    """A dim whose size compiled code can compute from the function's own
    dims (a literal, a constant, a generic dim or arithmetic of them)."""
    return not isinstance(d, (T.DimUnknown, T.DimRun)) and not T.run_keys(d) and T.dim_poly(d) is not None


@builtin(
    Builtin(
        name="rearrange",
        params=(BParam(name="x"), BParam(name="pattern")),
        signature="rearrange(x: [..], pattern: Str, name=size, ...) -> [..]",
        doc="The values of x with its dims split, moved and merged as a pattern of names says (einops.rearrange): "
        'rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=16, p2=16); a group of the input splits a dim, '
        "the sizes of all but one of its names given as keywords, a group of the result merges dims.",
        example='r = rearrange(x, "b d -> d b")',
        group="shape",
        runtime="rearrange",
        extra_keywords=True,
        rest_ok=True,
        note="A group that does not split its dim is [E0974](diagnostics.md#e0974); the pattern's errors are "
        "[E0970](diagnostics.md#e0970) to [E0973](diagnostics.md#e0973).",
    ),
    raw=True,
)
def _rearrange(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    own = [a for a in args if a.keyword in (None, "x", "pattern")]
    size_args = [a for a in args if a.keyword not in (None, "x", "pattern")]
    late = [a for a in own if a.keyword is None and any(s.span.start < a.span.start for s in size_args)]
    if late:
        c._eval_args(args, env)
        c.diags.append(C.E0405.at(late[0].span))
        return T.UNKNOWN
    matched = c.bind_args("rearrange", [("x", True, False), ("pattern", True, False)], own, paren)
    if matched is None:
        c._eval_args(args, env)
        return T.UNKNOWN
    bound = matched[0]
    x = _tensor(c, bound["x"], env, "rearrange", "x", False)
    sizes: dict[str, tuple[T.Dim | None, CallArg]] = {}
    twice: CallArg | None = None
    for a in size_args:
        assert a.keyword is not None
        if a.keyword in sizes and twice is None:
            twice = a
        sizes[a.keyword] = (dim_value_arg(c, a, env, "rearrange", f"size {a.keyword}", ints=True), a)
    got = _pattern(c, bound["pattern"], env, "rearrange", True)
    if got is None or x is None or any(d is None for d, _ in sizes.values()):
        return T.UNKNOWN
    lit, pattern = got
    side = pattern.inputs[0]
    front = _dims_of(c, lit, side, x, "rearrange")
    if front is None:
        return T.UNKNOWN
    seen: set[str] = set()
    for n in side.names:
        if n.text in seen:
            problem = C.E0973.say("twice_in_input", name=n.text)
            c.diags.append(C.E0973.at(_at(lit, n.start, n.end), fn="rearrange", problem=problem))
            return T.UNKNOWN
        seen.add(n.text)
    if not _result_names(c, lit, pattern, seen, "rearrange") or not _lead_kept(c, lit, pattern, "rearrange"):
        return T.UNKNOWN
    left = seen - {n.text for n in pattern.output.names}
    if left:
        n = next(n for n in side.names if n.text in left)
        problem = C.E0973.say("dropped", name=n.text)
        c.diags.append(C.E0973.at(_at(lit, n.start, n.end), fn="rearrange", problem=problem))
        return T.UNKNOWN
    for a in size_args:
        assert a.keyword is not None
        problem = None
        if a.keyword not in seen:
            problem = C.E0975.say("not_in_pattern", name=a.keyword, pattern=lit.value)
        elif a is twice:
            problem = C.E0975.say("twice", name=a.keyword)
        if problem is not None:
            where = a.arg.keyword.span if a.arg is not None and a.arg.keyword is not None else a.span
            c.diags.append(C.E0975.at(where, problem=problem))
            return T.UNKNOWN
    dims: dict[str, T.Dim] = {}
    split: list[T.Dim] = list(front)  # the dims of the input, each group split: a count checked when it runs
    proved = True
    for item, d in zip(side.items, x.dims[len(front) :]):
        if not item.grouped:
            name = item.names[0].text
            size = sizes.get(name, (None, None))
            if size[0] is not None and not T.dims_equal(size[0], d):
                assert size[1] is not None
                reason = C.E0974.say("whole_dim", name=name, size=size[0], dim=d, x=str(x))
                c.diags.append(C.E0974.at(size[1].node.span, reason=reason))
                return T.UNKNOWN
            dims[name] = size[0] if size[0] is not None and isinstance(d, T.DimUnknown) else d
            split.append(dims[name])
            continue
        given = [(n.text, sizes[n.text][0]) for n in item.names if n.text in sizes]
        missing = [n.text for n in item.names if n.text not in sizes]
        span = _at(lit, item.start, item.end)
        if len(missing) > 1:
            shown = ", ".join(f"'{m}'" for m in missing)
            reason = C.E0974.say("two_left", group=item.text, dim=d, names=shown, example=missing[-1])
            c.diags.append(C.E0974.at(span, reason=reason))
            return T.UNKNOWN
        known = _product([s for _, s in given if s is not None]) if given else T.DimLit(1)
        pd, pk = T.dim_poly(d), T.dim_poly(known)
        if missing:
            whole: T.Dim = T.DimUnknown()
            if pd is not None and pk is not None:
                vd, vk = DX.value(pd), DX.value(pk)
                if vd is not None and vk is not None and vd % vk:
                    reason = C.E0974.say("not_divisible", group=item.text, dim=_shown(d), sizes=_shown(known))
                    c.diags.append(C.E0974.at(span, reason=reason))
                    return T.UNKNOWN
                quotient = _quotient(pd, pk)
                whole = poly_dim(quotient)
                proved = proved and DX.mul(quotient, pk) == pd
            dims[missing[0]] = whole
        elif pd is not None and pk is not None and pd != pk:
            vd, vk = DX.value(pd), DX.value(pk)
            if vd is not None and vk is not None:
                reason = C.E0974.say("product", group=item.text, product=_shown(known), dim=_shown(d))
                c.diags.append(C.E0974.at(span, reason=reason))
                return T.UNKNOWN
            proved = False
        elif pd is None:
            proved = False
        for n in item.names:
            if n.text in sizes:
                size = sizes[n.text][0]
                assert size is not None
                dims[n.text] = size
            split.append(dims[n.text])
    if not proved and all(_readable(d) for d in split):
        # a division not proved exact when checking ((H/16) of a generic H): its count, checked when it runs
        shape = T.TensorT(tuple(split), x.elem)
        c.add_dim_check(bound["x"].node, DimCheck("rearrange(): argument 'x'", str(shape), count=tuple(split)))
    # a group merged back as it was split is the dim it split: `(h p)` of `(n/3)` and 3 is n
    # (a division the checker could not prove exact is checked when it runs)
    wholes = [d for item, d in zip(side.items, x.dims[len(front) :]) if item.grouped and T.dim_poly(d) is not None]
    out = list(front)
    for item in pattern.output.items:
        d = _product([dims[n.text] for n in item.names])
        p = T.dim_poly(d)
        same = [w for w in wholes if p is not None and DX.equal_if_exact(p, T.dim_poly(w) or DX.ZERO)]
        out.append(same[0] if item.grouped and same else d)
    return T.TensorT(tuple(out), x.elem)


def _shown(d: T.Dim) -> str:
    """A dim with its value when it has one and is not a number: `T=8`."""
    v = T.dim_value(d)
    return f"{d}={v}" if v is not None and not isinstance(d, T.DimLit) and str(d) != str(v) else str(d)
