"""Checkpoints outside the built-ins' rule (checker/builtins/checkpoint.py):
the options of `load` (which the compiler passes on as they are), and what
E0905 and E0409 say of `Net.load(path)` and `m.save(path)`, which are
written `load(path, m)` and `save(path, m)`."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ...diagnostics import Fix, LocalDiagnostic, TextEdit
from ..env import CallArg
from ..text import expr_text

OPTIONS = ("names", "transpose", "strict")


def checkpoint_hint(method: str, model: str) -> str | None:
    """E0905's words for `Net.load(path)` / `Net.save(path)`: what is written instead."""
    if method == "load":
        return f"; create one, then load into it: m = {model}.init(seed=0), then load(path, m)"
    if method == "save":
        return f"; save a model, not its type: m = {model}.init(seed=0), then save(path, m)"
    return None


def checkpoint_method(node: A.Node, func: A.Field, method: str, args: list[CallArg]) -> LocalDiagnostic:
    """E0409 for `m.save(path)` / `m.load(path)`: the built-in takes the path
    first and the model after it; with the path alone, the rewrite is the fix."""
    recv = expr_text(func.value)
    reason = C.E0409.say("model_method", method=method, recv=recv)
    fix = None
    path = _exact_text(args[0].node) if len(args) == 1 and args[0].keyword is None else None
    if path is not None and isinstance(node, A.Call) and _exact_text(func.value) is not None:
        text = f"{method}({path}, {recv})"
        reason = C.E0409.say("model_method_rewrite", rewrite=text)
        fix = Fix(f"Change to {text}", (TextEdit(node.span, text),))
    return C.E0409.at(func.span, callee=expr_text(func), reason=reason, fix=fix)


def _exact_text(e: A.Node) -> str | None:
    """The source of a name, a field path or a string literal (for a fix-it); None for anything else."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        inner = _exact_text(e.value)
        return None if inner is None else f"{inner}.{e.name.text}"
    if isinstance(e, A.StrLit):
        escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}
        return '"' + "".join(escapes.get(c, c) for c in e.value) + '"'
    return None
