"""Short texts for messages."""

from __future__ import annotations

from .. import ast as A
from ..declarations import written_dim


def plural(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def expr_text(e: A.Node) -> str:
    """A short rendering of an expression for messages."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        return f"{expr_text(e.value)}.{e.name.text}"
    if isinstance(e, A.Call):
        return f"{expr_text(e.func)}(...)"
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return str(e.value)
    if isinstance(e, A.TensorType):
        dims = " ".join(written_dim(d) for d in e.dims)
        elem = "" if e.elem is None else " " + e.elem.name.text + (f"[{e.elem.arg.text}]" if e.elem.arg else "")
        return f"[{dims}]{elem}"
    return "this expression"
