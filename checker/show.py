"""Syntax as text for messages: a written type (`type_text`), an expression
in short (`expr_text`), a dotted name (`dotted_text`).

These read only the syntax tree, so every layer can use them: the
declarations (a constant's or an initialiser's argument in a message), the
body checker and the lints. (typectx, body.text and names import them
from here, and their importers may keep reading them there.)
"""

from __future__ import annotations

from . import ast as A
from .ast import written_dim


def type_text(t: A.TypeExpr | A.TypeArg | A.OptionalType) -> str:
    """A type (or what a type takes in brackets) as written, spaces normalised."""
    if isinstance(t, (A.DimName, A.DimInt, A.DimBinary)):
        return written_dim(t)
    if isinstance(t, A.TensorType):
        dims = " ".join(written_dim(d) for d in t.dims)
        if t.rest:
            dims = ".." + (" " + dims if dims else "")
        elem = "" if t.elem is None else " " + t.elem.name.text + _bracket_text(t.elem.args, t.elem.options)
        return f"[{dims}]{elem}"
    if isinstance(t, A.OptionalType):
        return f"{type_text(t.inner)} | None"
    if isinstance(t, A.TupleType):
        return "(" + ", ".join(type_text(x) for x in t.items) + ("," if len(t.items) == 1 else "") + ")"
    return t.name.text + _bracket_text(t.args, t.options)


def _bracket_text(args: tuple[A.TypeArg, ...], options: tuple[A.TypeOption, ...]) -> str:
    if not args and not options:
        return ""
    parts = [type_text(a) for a in args]
    for o in options:
        if o.dim is not None:
            value = type_text(o.dim)
        elif o.number is not None:
            value = repr(o.number)
        elif o.value is None:
            value = "[" + ", ".join(n.text for n in o.names) + "]"
        else:
            value = str(o.value)
        parts.append(f"{o.name.text}={value}")
    return "[" + ", ".join(parts) + "]"


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
        return type_text(e)
    if isinstance(e, A.Index):
        return f"{expr_text(e.value)}[{expr_text(e.index)}]"
    if isinstance(e, A.Slice):
        text = ("" if e.start is None else expr_text(e.start)) + ":" + ("" if e.end is None else expr_text(e.end))
        return text if e.step is None else f"{text}:{expr_text(e.step)}"
    if isinstance(e, A.EllipsisItem):
        return "..."
    if isinstance(e, A.Subscripts):
        return ", ".join(expr_text(x) for x in e.items)
    if isinstance(e, A.Arg):
        return (f"{e.keyword.text}=" if e.keyword is not None else "") + expr_text(e.value)
    if isinstance(e, A.BoolLit):
        return str(e.value)
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.Name, A.IntLit, A.FloatLit)):
        return e.op + expr_text(e.operand)
    return "this expression"


def dotted_text(e: A.Expr) -> str | None:
    """`layers.H` for a chain of fields on a name; None for anything else."""
    parts = []
    while isinstance(e, A.Field):
        parts.append(e.name.text)
        e = e.value
    if not isinstance(e, A.Name):
        return None
    parts.append(e.name)
    return ".".join(reversed(parts))
