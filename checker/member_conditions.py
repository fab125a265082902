"""Members' conditions: `param b: [O] = zeros if bias`, `param downsample:
Downsample[Ci, Co, stride] if stride != 1 or Ci != Co`. A condition is a
Boolean expression of the model's Bool options and comparisons of its dims
(dim arithmetic in normal form, `dimexpr`), read from the member's `if`
(`read`), decided for an instance (`substitute`: what stays depends on dims
or options the instance does not fix, as `self`'s), proven by the `if`s
around a read in a method (`implies`), and checked for overlap between two
declarations of one member (`exclusive`).

Implication and exclusion are decided on the conditions' form: each option
and each comparison of dims, up to its negation (`Ci != Co` is `not Ci ==
Co`, `a >= b` is `not a < b`, `a > b` is `b < a`), is a free Bool, and all
choices of them are tried. A comparison whose sides differ by a number is
decided (`Ci != Ci` is False). This is sound (what it proves holds) but not
complete: `stride == 1` and `stride == 2` are taken as two free Bools."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import ast as A
from . import catalog as C
from . import dimexpr as DX
from .diagnostics import LocalDiagnostic
from .names import suggest
from .show import expr_text


@dataclass(frozen=True, slots=True)
class Opt:
    """A Bool option (of the model, or of the model enclosing an instance
    given `bias=bias`)."""

    name: str


@dataclass(frozen=True, slots=True)
class Cmp:
    """`left op right`, dims in normal form."""

    op: str
    left: DX.Poly
    right: DX.Poly


@dataclass(frozen=True, slots=True)
class Not:
    operand: Cond


@dataclass(frozen=True, slots=True)
class Both:
    """`left and right` (op "and") or `left or right` (op "or")."""

    op: str
    left: Cond
    right: Cond


@dataclass(frozen=True, slots=True)
class Lit:
    value: bool


Cond = Opt | Cmp | Not | Both | Lit
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


# ------------------------------------------------------------------ reading


@dataclass(frozen=True, slots=True)
class Scope:
    """What a member's condition may name: the model's dims, its options
    (Bool and other), and the file's dim constants (`value` gives a
    constant's size, None when the name is not one)."""

    model: str
    dims: tuple[str, ...]
    bools: tuple[str, ...]
    others: tuple[str, ...]  # Float and DType options
    value: Callable[[str], int | None]


def read(e: A.Expr, scope: Scope, diags: list[LocalDiagnostic]) -> Cond | None:
    """The condition `e` (None, with one diagnostic, when it is not one)."""
    if isinstance(e, A.BoolLit):
        return Lit(e.value)
    if isinstance(e, A.Not):
        inner = read(e.operand, scope, diags)
        return Not(inner) if inner is not None else None
    if isinstance(e, A.BoolOp):
        left = read(e.left, scope, diags)
        right = read(e.right, scope, diags) if left is not None else None
        return Both(e.op, left, right) if left is not None and right is not None else None
    if isinstance(e, A.Compare) and e.op in COMPARISONS:
        left_dim = _dim(e.left, scope, diags)
        right_dim = _dim(e.right, scope, diags) if left_dim is not None else None
        return Cmp(e.op, left_dim, right_dim) if left_dim is not None and right_dim is not None else None
    if isinstance(e, A.Name) and e.name not in scope.dims:
        if e.name in scope.bools:
            return Opt(e.name)
        diags.append(C.E0913.at(e.span, problem=_not_an_option(e.name, scope)))
        return None
    if isinstance(e, A.Name):
        found = C.E0932.say("a_dim", name=e.name)
    else:
        found = C.E0932.say("written", text=_written(e))
    diags.append(C.E0932.at(e.span, model=scope.model, found=found))
    return None


def _written(e: A.Expr) -> str:
    """What a condition wrote, for a message (`Ci + 1`)."""
    if isinstance(e, (A.Binary, A.Compare, A.BoolOp)):
        return f"{_written(e.left)} {e.op} {_written(e.right)}"
    if isinstance(e, A.Not):
        return f"not {_written(e.operand)}"
    return expr_text(e)


def _not_an_option(text: str, scope: Scope) -> str:
    names, model = scope.bools, scope.model
    if text in scope.others:  # a Float or DType option
        if names:
            return C.E0913.say("float_option", flag=text, model=model, options=", ".join(names))
        return C.E0913.say("float_option_no_bool", flag=text, model=model)
    if names:
        hint = suggest(text, names)
        if hint:
            return C.E0913.say("not_an_option_hint", flag=text, model=model, hint=hint)
        return C.E0913.say("not_an_option", flag=text, model=model, options=", ".join(names))
    return C.E0913.say("no_options", flag=text, model=model)


def _dim(e: A.Expr, scope: Scope, diags: list[LocalDiagnostic]) -> DX.Poly | None:
    """A side of a comparison: dims, numbers, `+ - * /` of them."""
    if isinstance(e, A.IntLit):
        return DX.const(e.value)
    if isinstance(e, A.Name):
        if e.name in scope.dims:
            return DX.var(e.name)
        v = scope.value(e.name)
        if v is not None:
            return DX.const(v)
        hint = suggest(e.name, scope.dims)
        diags.append(C.E0931.at(e.span, name=e.name, model=scope.model, hint=hint))
        return None
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
        left = _dim(e.left, scope, diags)
        right = _dim(e.right, scope, diags) if left is not None else None
        if left is None or right is None:
            return None
        if e.op == "/":
            q = DX.div(left, right)
            if q is not None:
                return q
        else:
            return {"+": DX.add, "-": DX.sub, "*": DX.mul}[e.op](left, right)
    diags.append(C.E0932.at(e.span, model=scope.model, found=C.E0932.say("written", text=_written(e))))
    return None


# ------------------------------------------------------------ instances


def substitute(c: Cond, dims: dict[str, DX.Poly], options: dict[str, bool | str]) -> Cond:
    """`c` for an instance: its dims replaced by `dims`, its options by
    `options` (a Bool decides; a str is the enclosing model's option that
    an instance given `bias=bias` reads), simplified."""
    if isinstance(c, Opt):
        v = options.get(c.name)
        if isinstance(v, bool):
            return Lit(v)
        return Opt(v) if isinstance(v, str) else c
    if isinstance(c, Cmp):
        left = DX.substitute(c.left, dims) if dims else c.left
        right = DX.substitute(c.right, dims) if dims else c.right
        if left is None or right is None:
            return c
        decided = _decided(Cmp(c.op, left, right))
        return Lit(decided) if decided is not None else Cmp(c.op, left, right)
    if isinstance(c, Not):
        inner = substitute(c.operand, dims, options)
        return Lit(not inner.value) if isinstance(inner, Lit) else Not(inner)
    if isinstance(c, Both):
        left = substitute(c.left, dims, options)
        right = substitute(c.right, dims, options)
        for one, other in ((left, right), (right, left)):
            if isinstance(one, Lit):
                if one.value == (c.op == "or"):  # True or _, False and _
                    return one
                return other
        return Both(c.op, left, right)
    return c


def _decided(c: Cmp) -> bool | None:
    diff = DX.value(DX.sub(c.left, c.right))
    if diff is None:
        return None
    return {"==": diff == 0, "!=": diff != 0, "<": diff < 0, "<=": diff <= 0, ">": diff > 0, ">=": diff >= 0}[c.op]


# ------------------------------------------------------------ deciding


@functools.lru_cache(maxsize=4096)  # pure; called once per comparison per choice
def _atom(c: Cmp) -> tuple[tuple[str, DX.Poly], bool]:
    """A comparison as (a free Bool, the value it is when `c` holds)."""
    op = c.op
    if op in ("==", "!="):
        d = DX.sub(c.left, c.right)
        return ("eq", min(d, DX.neg(d), key=repr)), op == "=="
    if op in ("<", ">="):  # left - right < 0
        return ("lt", DX.sub(c.left, c.right)), op == "<"
    return ("lt", DX.sub(c.right, c.left)), op == ">"  # >: right - left < 0; <=: not that


def _atoms(c: Cond, out: set) -> None:
    if isinstance(c, Opt):
        out.add(("opt", c.name))
    elif isinstance(c, Cmp):
        out.add(_atom(c)[0])
    elif isinstance(c, Not):
        _atoms(c.operand, out)
    elif isinstance(c, Both):
        _atoms(c.left, out)
        _atoms(c.right, out)


def _holds(c: Cond, choice: dict) -> bool:
    if isinstance(c, Opt):
        return choice[("opt", c.name)]
    if isinstance(c, Cmp):
        key, when = _atom(c)
        return choice[key] == when
    if isinstance(c, Not):
        return not _holds(c.operand, choice)
    if isinstance(c, Both):
        if c.op == "and":
            return _holds(c.left, choice) and _holds(c.right, choice)
        return _holds(c.left, choice) or _holds(c.right, choice)
    return c.value


_MOST_ATOMS = 12  # 4096 choices; beyond, only a fact equal to the condition proves it


def _choices(conds: Iterable[Cond]):
    found: set = set()
    for c in conds:
        _atoms(c, found)
    if len(found) > _MOST_ATOMS:
        return None
    keys = sorted(found, key=repr)
    return (dict(zip(keys, values)) for values in itertools.product((False, True), repeat=len(keys)))


def implies(facts: Iterable[Cond], c: Cond) -> bool:
    """Whether `c` holds wherever every one of `facts` does. A dim that
    the facts fix to a number (`stride == 1`, or `not (stride != 1 or ...)`)
    is put in first, so `(h-1)/stride+1 == h` follows from `stride == 1`."""
    return _implies(tuple(facts), c)


@functools.lru_cache(maxsize=1024)  # a pure function of its (frozen) arguments: each body asks again per read
def _implies(facts: tuple[Cond, ...], c: Cond) -> bool:
    if c in facts or c == Lit(True):
        return True
    known = _known_values(facts)  # (and comparisons of numbers decided)
    c = substitute(c, known, {})
    facts = tuple(substitute(f, known, {}) for f in facts)
    if c == Lit(True) or Lit(False) in facts:
        return True
    choices = _choices((*facts, c))
    if choices is None:
        return False
    return all(_holds(c, ch) for ch in choices if all(_holds(f, ch) for f in facts))


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _conjuncts(c: Cond, positive: bool = True) -> list[Cond]:
    """What `c` says of each of its parts when it holds (`not (a or b)`:
    `not a`, `not b`), a negated comparison turned over (`not a != b`: `a == b`)."""
    if isinstance(c, Not):
        return _conjuncts(c.operand, not positive)
    if isinstance(c, Both) and (c.op == "and") == positive:
        return _conjuncts(c.left, positive) + _conjuncts(c.right, positive)
    if isinstance(c, Cmp) and not positive:
        return [Cmp(_NEGATED[c.op], c.left, c.right)]
    return [c if positive else Not(c)]


def _known_values(facts: tuple[Cond, ...]) -> dict[str, DX.Poly]:
    """The dims `facts` fix to a number (`stride == 1`, `2 == K - 1`)."""
    known: dict[str, DX.Poly] = {}
    for f in facts:
        for part in _conjuncts(f):
            if not (isinstance(part, Cmp) and part.op == "=="):
                continue
            d = DX.sub(part.left, part.right)
            for name in sorted(DX.generics(d)):
                lin = DX.linear(d, name)  # c*name + k == 0 with c = 1 or -1: name == -k*c
                if lin is not None and abs(lin[0]) == 1:
                    known[name] = DX.const(-lin[1] * lin[0])
                    break
    return known


def exclusive(a: Cond, b: Cond) -> bool:
    """Whether `a` and `b` never hold together."""
    choices = _choices((a, b))
    if choices is None:
        return False
    return not any(_holds(a, ch) and _holds(b, ch) for ch in choices)


# ------------------------------------------------------------ writing


def text(c: Cond, flags: bool = False) -> str:
    """`c` as written (`stride != 1 or Ci != Co`); with `flags`, an option
    reads `bias=True` and its negation `bias=False`, as messages say it."""
    if isinstance(c, Opt):
        return f"{c.name}=True" if flags else c.name
    if isinstance(c, Cmp):
        return f"{_render(c.left)} {c.op} {_render(c.right)}"
    if isinstance(c, Not):
        if flags and isinstance(c.operand, Opt):
            return f"{c.operand.name}=False"
        inner = text(c.operand, flags)
        return f"not ({inner})" if isinstance(c.operand, (Both, Cmp)) else f"not {inner}"
    if isinstance(c, Both):
        parts = []
        for side in (c.left, c.right):
            s = text(side, flags)
            parts.append(f"({s})" if isinstance(side, Both) and side.op != c.op else s)
        return f" {c.op} ".join(parts)
    return str(c.value)


def _render(p: DX.Poly) -> str:
    s = DX.render(p)
    return s[1:-1] if s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]) else s


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def flags_only(c: Cond) -> list[tuple[str, bool]] | None:
    """`a and not b` as [(a, True), (b, False)]; None for any other form."""
    if isinstance(c, Opt):
        return [(c.name, True)]
    if isinstance(c, Not) and isinstance(c.operand, Opt):
        return [(c.operand.name, False)]
    if isinstance(c, Both) and c.op == "and":
        left, right = flags_only(c.left), flags_only(c.right)
        return left + right if left is not None and right is not None else None
    return None


def names_in(e: A.Expr) -> list[A.Name]:
    """The names a member's `if` writes, as written (for the editor)."""
    if isinstance(e, A.Name):
        return [e]
    if isinstance(e, A.Not):
        return names_in(e.operand)
    if isinstance(e, (A.BoolOp, A.Compare, A.Binary)):
        return names_in(e.left) + names_in(e.right)
    return []


def under_test(c: Cond) -> str:
    """The `if` that makes a member under `c` readable (`if bias:`; for `if
    a and b`, one test inside the other)."""
    flags = flags_only(c)
    if flags is not None:
        return ", inside it ".join(f"`if {'' if value else 'not '}{opt}:`" for opt, value in flags)
    return f"`if {text(c)}:`"


def options_named(c: Cond) -> set[str]:
    """The options `c` reads."""
    found: set = set()
    _atoms(c, found)
    return {k[1] for k in found if k[0] == "opt"}


def python(c: Cond, name: Callable[[str], str]) -> str:
    """`c` as a Python expression; `name` maps a dim's or option's name to
    the Python name that holds it."""
    if isinstance(c, Opt):
        return name(c.name)
    if isinstance(c, Cmp):
        return f"({DX.python(c.left, name)} {c.op} {DX.python(c.right, name)})"
    if isinstance(c, Not):
        return f"(not {python(c.operand, name)})"
    if isinstance(c, Both):
        return f"({python(c.left, name)} {c.op} {python(c.right, name)})"
    return str(c.value)
