"""W1104, W0402: a model run in the wrong mode: differentiated in `Eval`, or
in `Train` by an evaluation function."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ... import types as T
from . import names as N
from .base import LintPass, on_call, text


@on_call("builtin")
def _differentiated(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    if name in N._DIFFERENTIATORS:
        differentiated_with_eval(p, call)


def differentiated_with_eval(p: LintPass, call: A.Call) -> None:
    """value_and_grad(loss, m, x, Eval): a model trained without dropout."""
    if len(call.args) < 2 or not isinstance(p.c.types.get(call.args[1].value), T.ModelT):
        return
    for a in call.args[2:]:
        if a.keyword is None and _mode(a.value) == "Eval":
            p.diags.append(C.W1104.at(a.value.span, fn=text(call.args[0].value)))


@on_call("fn")
def _modes(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    modes(p, call, name)


def modes(p: LintPass, call: A.Call, callee: str) -> None:
    """An evaluation function that runs the model in Train mode."""
    own = p.c.fn.name.split(".")[-1]
    for a in call.args:
        mode = _mode(a.value)
        if mode == "Train" and (N._EVALUATION.match(own) or N._EVALUATION.match(callee.split(".")[-1])):
            where = own if N._EVALUATION.match(own) else callee.split(".")[-1]
            p.diags.append(C.W0402.at(a.value.span, fn=where))
        elif mode == "Eval" and p.model is not None and not N._EVALUATION.match(own):
            p.loss_diags.append(C.W1104.at(a.value.span, fn=own))


def _mode(e: A.Expr) -> str | None:
    if isinstance(e, A.Name) and e.name in ("Eval", "Train"):
        return e.name
    if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.name == "Train":
        return "Train"
    return None
