"""W1102, W1103: a target or a log-probability's weight that reads the model
`value_and_grad` differentiates (it trains through itself): the flow of the
model through the body, outside `stop_grad`."""

from __future__ import annotations

from collections.abc import Iterator

from ... import ast as A
from ... import catalog as C
from ...diagnostics import Fix, LocalRelated, TextEdit
from . import names as N
from .base import Flow, LintPass, on_call, on_node


@on_call("builtin")
def _targets(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    if name in N._TARGET_LOSSES:
        target(p, call, name, bound.get(params[0]), bound.get(N._TARGET_LOSSES[name]))


def target(p: LintPass, call: A.Call, fn: str, pred: A.Expr | None, target: A.Expr | None) -> None:
    """mse(v, r + gamma * value(m, s2)): the target reads the model."""
    if p.model is None or target is None:
        return
    f = flow(p, target)
    if f.model is None:
        return
    at, related = _made_at(p, target, f"the target of {fn}")
    p.loss_diags.append(
        C.W1102.at(
            at.span,
            fn=fn,
            model=p.model,
            related=(*related, LocalRelated(f"{p.model} is read here", f.model.span)),
            fix=_wrap_stop_grad(at),
        )
    )


def _made_at(p: LintPass, e: A.Expr, what: str) -> tuple[A.Expr, tuple[LocalRelated, ...]]:
    """Where a value that reads the model is made: the value of a local's
    one assignment (where `stop_grad` belongs), else the expression."""
    if isinstance(e, A.Name):
        ref = p.c.refs.get(e)
        if ref is not None and ref.kind == "local" and len(ref.defs) == 1 and ref.defs[0] in p.values:
            value = p.values[ref.defs[0]]
            if flow(p, value).model is not None and not isinstance(value, A.TupleExpr):
                return value, (LocalRelated(f"used as {what} here", e.span),)
    return e, ()


@on_node(A.Binary)
def _products(p: LintPass, node: A.Node) -> None:
    if isinstance(node, A.Binary) and node.op == "*":
        product(p, node)


def product(p: LintPass, e: A.Binary) -> None:
    """(R - value(m, s)) * log_prob: an advantage that reads the model."""
    if p.model is None:
        return
    left, right = flow(p, e.left), flow(p, e.right)
    for lp, other, node in ((left, right, e.right), (right, left, e.left)):
        if lp.logprob and other.model is not None and not other.prob and not other.logprob:
            at, related = _made_at(p, node, "a log-probability's weight")
            if at in p.reported:
                return
            p.reported.add(at)
            p.loss_diags.append(
                C.W1103.at(
                    at.span,
                    model=p.model,
                    related=(*related, LocalRelated(f"{p.model} is read here", other.model.span)),
                    fix=_wrap_stop_grad(at),
                )
            )
            return


def flow(p: LintPass, e: A.Node) -> Flow:
    if e in p.flows:
        return p.flows[e]
    if e in p.busy:
        return Flow()
    p.busy.add(e)
    try:
        f = _flow(p, e)
    finally:
        p.busy.discard(e)
    p.flows[e] = f
    return f


def _flow(p: LintPass, e: A.Node) -> Flow:
    c = p.c
    if isinstance(e, A.Name):
        ref = c.refs.get(e)
        if ref is None:
            return Flow()
        if ref.kind == "param":
            return Flow(model=e) if ref.name == p.model else Flow()
        if ref.kind == "local":
            out = Flow(logprob=N._LOGPROB_NAME.search(e.name) is not None)
            for d in ref.defs:
                if d in p.values:
                    out = _join(out, flow(p, p.values[d]))
            return out
        return Flow()
    if isinstance(e, A.Call):
        found = p.callee(e)
        name = found[1] if found is not None and found[0] == "builtin" else None
        if name == "stop_grad":
            return Flow()
        args = [flow(p, a.value) for a in e.args]
        model = next((f.model for f in args if f.model is not None), None)
        if model is None:  # m(x), m.value(s): a call of the model or its method
            model = flow(p, e.func.value if isinstance(e.func, A.Field) else e.func).model
        if name in N._MAKES_LOGPROB:  # (minus) log-probabilities
            return Flow(model=model, logprob=True)
        if name in N._MAKES_PROB:
            return Flow(model=model, prob=True)
        if name == "log" and args and args[0].prob:
            return Flow(model=model, logprob=True)
        keeps = name in N._KEEPS_FLOW
        return Flow(
            model=model,
            logprob=keeps and bool(args) and args[0].logprob,
            prob=keeps and bool(args) and args[0].prob,
        )
    if isinstance(e, A.Field):
        return Flow(model=flow(p, e.value).model)
    if isinstance(e, A.Index):
        inner = flow(p, e.value)
        return Flow(inner.model or flow(p, e.index).model, inner.logprob, inner.prob)
    if isinstance(e, A.Unary):
        return flow(p, e.operand)
    if isinstance(e, A.Cast):
        return flow(p, e.value)
    if isinstance(e, A.Binary):
        left, right = flow(p, e.left), flow(p, e.right)
        model = left.model or right.model
        if e.op in ("*", "/"):
            lp = (left.logprob and right.model is None) or (right.logprob and left.model is None and e.op == "*")
            return Flow(model, lp)
        return Flow(model)
    model = None
    for child in _children(e):
        model = model or flow(p, child).model
    return Flow(model)


def _children(e: A.Node) -> Iterator[A.Node]:
    for node in A.walk(e):
        if node is not e and isinstance(node, (A.Name, A.Call, A.Field)):
            yield node


def _join(a: Flow, b: Flow) -> Flow:
    return Flow(a.model or b.model, a.logprob or b.logprob, a.prob or b.prob)


def _wrap_stop_grad(e: A.Expr) -> Fix:
    return Fix(
        "Wrap in stop_grad(...)",
        (TextEdit(A.Span(e.span.start, e.span.start), "stop_grad("), TextEdit(A.Span(e.span.end, e.span.end), ")")),
    )
