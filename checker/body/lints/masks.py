"""W0205: a causal mask that lets a position see the future, or blocks it from
itself: where a `tril`/`triu` mask is used, and which way round."""

from __future__ import annotations

from dataclasses import dataclass

from ... import ast as A
from ... import catalog as C
from ...diagnostics import LocalRelated
from . import names as N
from .base import LintPass, bind, on_call


@dataclass(frozen=True)
class Mask:
    """A triangle of a square: `tril(.., diagonal=k)` keeps j - i <= k,
    `triu` keeps j - i >= k; `flipped` when the value is its complement."""

    tri: str
    k: int
    flipped: bool
    origin: A.Call

    def flip(self) -> Mask:
        return Mask(self.tri, self.k, not self.flipped, self.origin)

    def allowed(self, blocked: bool) -> tuple[str, int]:
        """The allowed positions as one triangle: ("lower", k) is j - i <= k,
        ("upper", k) is j - i >= k."""
        keep = self.flipped == blocked  # the triangle itself is the allowed set
        if self.tri == "tril":
            return ("lower", self.k) if keep else ("upper", self.k + 1)
        return ("upper", self.k) if keep else ("lower", self.k - 1)


@on_call("builtin")
def _where(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    if name == "where":
        where_mask(p, call, bound)


@on_call("fn")
def _blocking(p: LintPass, call: A.Call, name: str, params: list[str], bound: dict[str, A.Expr]) -> None:
    for pname, arg in bound.items():
        if pname in N._BLOCKING_PARAMS:
            mask_use(p, arg, blocked=True, use=call)


def where_mask(p: LintPass, call: A.Call, bound: dict[str, A.Expr]) -> None:
    cond = bound.get("cond")
    a = bound.get("a")
    b = bound.get("b")
    if cond is None or a is None or b is None:
        return
    if _very_negative(a):
        mask_use(p, cond, blocked=True, use=call)
    elif _very_negative(b):
        mask_use(p, cond, blocked=False, use=call)


def mask_use(p: LintPass, e: A.Expr, blocked: bool, use: A.Call) -> None:
    m = mask(p, e)
    if m is None:
        return
    side, k = m.allowed(blocked)
    if side == "upper" or k >= 1:
        problem = C.W0205.say("attends_future")
    elif k <= -1:
        problem = C.W0205.say("blocks_itself")
    else:
        return
    how = "blocks" if blocked else "keeps"
    made = f"{m.tri}(..., diagonal={m.k})" if m.k else f"{m.tri}(...)"
    if m.flipped:
        made = f"the complement of {made}"
    p.diags.append(
        C.W0205.at(
            e.span,
            how=how,
            made=made,
            problem=problem,
            related=(LocalRelated("the mask is made here", m.origin.span),),
        )
    )


def mask(p: LintPass, e: A.Node, depth: int = 0) -> Mask | None:
    if depth > 20:
        return None
    if isinstance(e, A.Name):
        ref = p.c.refs.get(e)
        if ref is None or ref.kind != "local" or len(ref.defs) != 1 or ref.defs[0] not in p.values:
            return None
        return mask(p, p.values[ref.defs[0]], depth + 1)
    if isinstance(e, A.Cast):
        return mask(p, e.value, depth + 1)
    if isinstance(e, A.Not):
        m = mask(p, e.operand, depth + 1)
        return m.flip() if m is not None else None
    if isinstance(e, A.Index):
        return mask(p, e.value, depth + 1)
    if isinstance(e, A.Compare):
        lit = _number(e.right)
        if lit is None:
            return None
        m = mask(p, e.left, depth + 1)
        if m is None:
            return None
        if (e.op == "==" and lit == 0) or (e.op in ("!=", "<") and lit == 1) or (e.op == "<=" and lit == 0):
            return m.flip()
        if (e.op == "==" and lit == 1) or (e.op in ("!=", ">") and lit == 0) or (e.op == ">=" and lit == 1):
            return m
        return None
    if isinstance(e, A.Binary) and e.op == "-" and _number(e.left) == 1:
        m = mask(p, e.right, depth + 1)
        return m.flip() if m is not None else None
    if isinstance(e, A.Call):
        found = p.callee(e)
        if found is None or found[0] != "builtin":
            return None
        if found[1] in N._TRIANGLES:
            bound = bind(e, found[2])
            k = bound.get("diagonal")
            kv = _number(k) if k is not None else 0
            if kv is None or kv != int(kv):
                return None
            return Mask(found[1], int(kv), False, e)
        if found[1] in N._MASK_KEEPING and e.args:
            return mask(p, e.args[0].value, depth + 1)
    return None


def _number(e: A.Node | None) -> float | None:
    if isinstance(e, A.BoolLit):
        return float(e.value)
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return float(e.value)
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -float(e.operand.value) if e.op == "-" else float(e.operand.value)
    return None


def _very_negative(e: A.Node) -> bool:
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.Name) and e.operand.name == "inf":
        return True
    v = _number(e)
    return v is not None and v <= -1e4
