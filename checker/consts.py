"""Constant expressions: the value of a `const` item and of a parameter's
default (`fn main(lr: Float = 3e-4)`), worked out when the file is checked.

A constant expression is a literal (Int, Float, Bool, Str), the name of a
constant or of a dim (an Int), or arithmetic of those as numbers are
computed in a body (`+ - * / % **`, a sign; `and`, `or`, `not` of Bools).
Its value is the one Python computes, which is what the compiled program
uses."""

from __future__ import annotations

import math
from collections.abc import Callable

from . import ast as A
from .show import dotted_text

Value = int | float | bool | str
# A name's constant value: (kind, value); None: not a constant; "": it is one
# whose own value is wrong (reported at its declaration, silent here).
Lookup = Callable[[str], "tuple[str, Value] | None | str"]

KINDS = ("Int", "Float", "Bool", "Str")
_MAX_POWER = 256  # an Int power past this is refused (10 ** 10 ** 9 would not end)


class ConstProblem(Exception):
    """Why an expression has no constant value, and where ("" when the cause
    is reported elsewhere)."""

    def __init__(self, span: A.Span, problem: str) -> None:
        super().__init__(problem)
        self.span = span
        self.problem = problem


def _finite(e: A.Expr, v: float) -> float:
    """A constant is a finite number: inf and NaN are refused (NaN would never
    equal itself, and every edit would check every reader again)."""
    if not math.isfinite(v):
        raise ConstProblem(e.span, f"the value is not a finite number ({v})")
    return v


def evaluate(e: A.Expr, lookup: Lookup) -> tuple[str, Value]:
    """(kind, value) of a constant expression; raises ConstProblem."""
    if isinstance(e, A.BoolLit):
        return "Bool", e.value
    if isinstance(e, A.IntLit):
        return "Int", e.value
    if isinstance(e, A.FloatLit):
        return "Float", _finite(e, e.value)
    if isinstance(e, A.StrLit):
        return "Str", e.value
    written = dotted_text(e)  # `LR`, or `hparams.LR` through an imported module
    if written is not None:
        found = lookup(written)
        if found == "":
            raise ConstProblem(e.span, "")
        if found is None or isinstance(found, str):
            raise ConstProblem(e.span, f"'{written}' is not a constant or a dim")
        return found
    if isinstance(e, A.Unary) and e.op in ("-", "+"):
        kind, v = evaluate(e.operand, lookup)
        if kind not in ("Int", "Float"):
            raise ConstProblem(e.span, f"'{e.op}' needs a number, and this is a {kind}")
        return kind, -v if e.op == "-" else v  # type: ignore[operator]
    if isinstance(e, A.Not):
        kind, v = evaluate(e.operand, lookup)
        if kind != "Bool":
            raise ConstProblem(e.span, f"'not' needs a Bool, and this is a {kind}")
        return "Bool", not v
    if isinstance(e, A.BoolOp):
        lk, lv = evaluate(e.left, lookup)
        rk, rv = evaluate(e.right, lookup)
        if lk != "Bool" or rk != "Bool":
            raise ConstProblem(e.span, f"'{e.op}' needs Bools, and these are {lk} and {rk}")
        return "Bool", (lv and rv) if e.op == "and" else (lv or rv)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/", "//", "%", "**"):
        lk, lv = evaluate(e.left, lookup)
        rk, rv = evaluate(e.right, lookup)
        if lk not in ("Int", "Float") or rk not in ("Int", "Float"):
            raise ConstProblem(e.span, f"'{e.op}' needs numbers, and these are {lk} and {rk}")
        kind = "Float" if "Float" in (lk, rk) or e.op == "/" else "Int"
        a, b = lv, rv
        try:
            if e.op == "+":
                v = a + b  # type: ignore[operator]
            elif e.op == "-":
                v = a - b  # type: ignore[operator]
            elif e.op == "*":
                v = a * b  # type: ignore[operator]
            elif e.op == "/":
                v = a / b  # type: ignore[operator]
            elif e.op == "%":
                v = a % b  # type: ignore[operator]
            elif e.op == "//":  # floored, as Python's and torch's
                v = a // b  # type: ignore[operator]
            else:
                if kind == "Int" and (b < 0 or b > _MAX_POWER):  # type: ignore[operator]
                    raise ConstProblem(e.span, f"an Int power is between 0 and {_MAX_POWER}, found {b}")
                v = a**b  # type: ignore[operator]
        except ZeroDivisionError:
            raise ConstProblem(e.right.span, "division by zero") from None
        except OverflowError:
            raise ConstProblem(e.span, "the result is too large for a Float") from None
        if isinstance(v, complex):
            raise ConstProblem(e.span, "the result is not a real number")
        if kind == "Float":
            v = _finite(e, float(v))
        return kind, v
    raise ConstProblem(e.span, "a constant is a literal, a constant's or dim's name, or arithmetic of those")


def python_literal(kind: str, value: Value) -> str:
    """The value as Python source (a Float always as a float: `1.0`, `float('inf')`;
    an optional parameter's default None as Python's None)."""
    if kind == "None":
        return "None"
    if kind == "Float":
        f = float(value)
        if math.isnan(f) or math.isinf(f):
            return f"float({str(f)!r})"
        return repr(f)
    return repr(value)


def show(kind: str, value: Value) -> str:
    """The value as Quiver writes it (hover, --help)."""
    if kind == "Str":
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == "Float":
        return repr(float(value))
    return str(value)
