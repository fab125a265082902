"""W0302, W0303: probabilities where a loss wants logits or log-probabilities,
and `log(softmax(..))`."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ... import types as T
from ...diagnostics import Fix, LocalRelated, TextEdit
from . import names as N
from .base import LintPass, on_call


@on_call("builtin")
def probabilities(p: LintPass, call: A.Call, fn: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    if fn == "log":
        x = bound.get("x")
        inner = x if isinstance(x, A.Call) else None
        found = p.callee(inner) if inner is not None else None
        if inner is not None and found is not None and found[:2] == ("builtin", "softmax"):
            edits = (
                TextEdit(A.Span(call.span.start, inner.func.span.end), "log_softmax"),
                TextEdit(A.Span(inner.span.end, call.span.end), ""),
            )
            p.diags.append(C.W0303.at(call.span, fix=Fix("Change to log_softmax(...)", edits)))
        return
    if fn not in N._PROB_EXPECTS:
        return
    pname, want, unwrap = N._PROB_EXPECTS[fn]
    arg = bound.get(pname)
    t = p.c.types.get(arg) if arg is not None else None
    if arg is None or not isinstance(t, T.TensorT) or t.elem.refine != "prob":
        return
    source = _prob_source(p, arg)
    related = (LocalRelated("the probabilities are made here", source.span),) if source is not arg else ()
    fix = None
    inner = _direct_call(p, arg)
    if inner is not None and inner[1] == unwrap and inner[0].args:
        first = inner[0].args[0]
        fix = Fix(
            f"Pass the logits, not {unwrap}(...)",
            (
                TextEdit(A.Span(arg.span.start, first.span.start), ""),
                TextEdit(A.Span(first.span.end, arg.span.end), ""),
            ),
        )
    elif inner is not None and inner[1] == "softmax" and unwrap is None:
        fix = Fix("Change to log_softmax", (TextEdit(inner[0].func.span, "log_softmax"),))
    p.diags.append(C.W0302.at(arg.span, fn=fn, param=pname, want=want, found=t.show_elem(), related=related, fix=fix))


def _prob_source(p: LintPass, e: A.Expr) -> A.Expr:
    """The softmax or sigmoid call a Prob value came from, through locals."""
    seen: set[A.Node] = set()
    while isinstance(e, A.Name) and e not in seen:
        seen.add(e)
        ref = p.c.refs.get(e)
        if ref is None or ref.kind != "local" or len(ref.defs) != 1 or ref.defs[0] not in p.values:
            break
        e = p.values[ref.defs[0]]
    return e


def _direct_call(p: LintPass, e: A.Expr) -> tuple[A.Call, str] | None:
    if not isinstance(e, A.Call):
        return None
    found = p.callee(e)
    if found is None or found[0] != "builtin":
        return None
    return e, found[1]
