"""Short texts for messages."""

from __future__ import annotations

from .. import ast as A
from ..show import expr_text


def plural(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def takes_dims(dims: tuple[str, ...] | list[str]) -> str:
    """`takes 2 dims (I, O)`: what E0910 says of a model written without its dims."""
    return f"takes {plural(len(dims), 'dim')} ({', '.join(dims)})"


def cast_binding_note(e: A.Node, want: str) -> str:
    """For a value that should be a `want` number and is not: when it is
    `a / b as Int`, that `as` binds tighter than the operator, so the cast
    is only of `b` (a note for the message, "" otherwise)."""
    if not (isinstance(e, A.Binary) and isinstance(e.right, A.Cast)):
        return ""
    cast = e.right
    if not (isinstance(cast.type, A.NamedType) and cast.type.name.text == want):
        return ""
    left, right = _operand(e.left), _operand(cast.value)
    if "this expression" in (left, right):
        return f" (`as` binds tighter than `{e.op}`: put the {e.op} in parentheses before `as {want}`)"
    return (
        f" (`as` binds tighter than `{e.op}`: this is {left} {e.op} ({right} as {want}); "
        f"write ({left} {e.op} {right}) as {want})"
    )


def _operand(e: A.Node) -> str:
    if isinstance(e, A.Call) and not e.args:
        return f"{expr_text(e.func)}()"
    return expr_text(e)
