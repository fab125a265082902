"""W0401: two same-typed arguments passed in each other's places."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ... import types as T
from ...diagnostics import Fix, TextEdit
from . import names as N
from .base import LintPass, on_call, text


@on_call(None)
def swapped(p: LintPass, call: A.Call, fn: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    """f(logvar, mu) into f(mu, logvar): two same-typed arguments whose
    names are each other's parameters."""
    if fn in N._SYMMETRIC:
        return
    positional = [a for a in call.args if a.keyword is None]
    names = [_arg_name(a.value) for a in positional]
    for i, a_i in enumerate(names):
        if a_i is None or i >= len(params) or _matches(a_i, params[i]):
            continue
        for j in range(i + 1, min(len(names), len(params))):
            a_j = names[j]
            if a_j is None or _matches(a_j, params[j]):
                continue
            if not (_matches(a_i, params[j]) and _matches(a_j, params[i])):
                continue
            ti = p.c.types.get(positional[i].value)
            tj = p.c.types.get(positional[j].value)
            if ti is None or ti != tj or T.is_unknown(ti):
                continue
            x, y = positional[i].value, positional[j].value
            fix = Fix(
                f"Swap {a_i} and {a_j}",
                (TextEdit(x.span, text(y)), TextEdit(y.span, text(x))),
            )
            p.diags.append(
                C.W0401.at(
                    A.Span(x.span.start, y.span.end),
                    fn=fn.split(".")[-1],
                    first=text(x),
                    second=text(y),
                    p=params[i],
                    q=params[j],
                    fix=fix,
                )
            )
            return


def _arg_name(e: A.Expr) -> str | None:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        return e.name.text
    return None


def _matches(arg: str, param: str) -> bool:
    if len(param) < 2:  # f(q, p) into f(p, q): one-letter names are often swapped on purpose
        return False
    return arg == param or arg.endswith("_" + param) or arg.startswith(param + "_")
