"""Dim arithmetic: the normal form of a dim expression such as `(T*E)`,
`(N+M)` or `((H-K)/S+1)`.

A dim expression is a polynomial with integer coefficients over atoms: a
generic dim (`t`), a dim constant whose value is not known, or a floored
division that does not come out exact (`(h/2)` with `h` generic). Constants
with known values are evaluated first, so `(T*E)` with T = 8 and E = 16 is
the number 128. Two dim expressions are equal when their normal forms are
equal: `(t+1)` and `(1+t)`, `(2*t)` and `(t+t)`, `((t*4)/2)` and `(2*t)`.

`/` is integer division floored, as torch floors the sizes of convolutions
and pools, and `%` the remainder of it, `p - q*(p/q)`. A division is exact when every coefficient is divisible by a
constant divisor; otherwise it stays an atom, and a constant added to it goes
inside: `((h-2)/2+1)` is `(h/2)`.

A `Poly` is a tuple of (monomial, coefficient) pairs sorted by monomial; a
monomial is a sorted tuple of atoms; an atom is ("v", name) for a generic
dim, ("c", name) for a constant without a value, or ("d", numerator,
denominator) for a division. Everything is hashable and compares by value.
This module imports nothing of the checker.
"""

from __future__ import annotations

from collections.abc import Callable

Atom = tuple
Mono = tuple[Atom, ...]
Poly = tuple[tuple[Mono, int], ...]

ZERO: Poly = ()


def const(n: int) -> Poly:
    return (((), n),) if n else ZERO


def atom(a: Atom) -> Poly:
    return (((a,), 1),)


def var(name: str) -> Poly:
    return atom(("v", name))


def _norm(terms: dict[Mono, int]) -> Poly:
    for m, c in list(terms.items()):
        # an exact division times a multiple of its divisor: 4*(e/4) is e
        a = next((a for a in m if len(a) == 4), None) if c else None
        d = value(a[2]) if a is not None else None
        if a is not None and d and c % d == 0:
            del terms[m]
            rest = list(m)
            rest.remove(a)
            for x, y in mul(((tuple(rest), c // d),), a[1]):
                terms[x] = terms.get(x, 0) + y
    out = sorted(((m, c) for m, c in terms.items() if c), key=lambda mc: repr(mc[0]))
    # A constant goes into the first division by a constant d that has
    # coefficient 1: (n/d)+k is ((n+k*d)/d), floored or not. So the size of
    # a pool, ((h-2)/2+1), is (h/2), and ((h-1)/2+1) is ((h+1)/2).
    k = dict(out).get((), 0)
    for m, c in out if k else ():
        d = value(m[0][2]) if c == 1 and len(m) == 1 and m[0][0] == "d" else None
        if d is not None and d > 0:
            divide = div_exact if len(m[0]) == 4 else div
            folded = divide(add(m[0][1], const(k * d)), m[0][2])
            assert folded is not None
            rest = {x: y for x, y in out if x not in ((), m)}
            for x, y in folded:
                rest[x] = rest.get(x, 0) + y
            return tuple(sorted(((x, y) for x, y in rest.items() if y), key=lambda mc: repr(mc[0])))
    return tuple(out)


def add(p: Poly, q: Poly) -> Poly:
    terms = dict(p)
    for m, c in q:
        terms[m] = terms.get(m, 0) + c
    return _norm(terms)


def neg(p: Poly) -> Poly:
    return tuple((m, -c) for m, c in p)


def sub(p: Poly, q: Poly) -> Poly:
    return add(p, neg(q))


def mul(p: Poly, q: Poly) -> Poly:
    terms: dict[Mono, int] = {}
    for m1, c1 in p:
        for m2, c2 in q:
            m = tuple(sorted(m1 + m2, key=repr))
            terms[m] = terms.get(m, 0) + c1 * c2
    return _norm(terms)


def value(p: Poly) -> int | None:
    """The number a normal form stands for, when it has no atoms."""
    if not p:
        return 0
    if len(p) == 1 and p[0][0] == ():
        return p[0][1]
    return None


def div(p: Poly, q: Poly) -> Poly | None:
    """`p / q` floored; None for a division by zero."""
    d = value(q)
    if d == 0:
        return None
    if d is not None:
        n = value(p)
        if n is not None:
            return const(n // d)
        if all(c % d == 0 for m, c in p if m):
            # every term but the constant k divides: (d*q + k)/d is q + k//d
            # floored, so a strided conv's ((4*h+1)/2) is (2*h)
            k = dict(p).get((), 0)
            return add(tuple((m, c // d) for m, c in p if m), const(k // d))
    if p == q:
        return const(1)
    return atom(("d", p, q))


def div_exact(p: Poly, q: Poly) -> Poly | None:
    """`p / q` where q is known to divide p (the run time checks it, as
    `chunk` does): an exact division atom ("d", p, q, "x") when it does not
    come out as a polynomial, which times q is p again, so the four parts of
    chunk(x, 4) of [b e] concatenated are [b e]."""
    out = div(p, q)
    if out is None or not (len(out) == 1 and out[0][1] == 1 and len(out[0][0]) == 1 and out[0][0][0][0] == "d"):
        return out
    return atom(("d", p, q, "x"))


def loose(p: Poly) -> Poly:
    """`p` with its exact divisions read as floored ones (they are equal where
    the division is exact, which the run time checks for exact ones)."""
    if not any(len(a) == 4 for m, _ in p for a in m):
        return p
    out = ZERO
    for m, c in p:
        term = const(c)
        for a in m:
            part = div(loose(a[1]), loose(a[2])) if a[0] == "d" else atom(a)
            term = mul(term, part if part is not None else atom(a))
        out = add(out, term)
    return out


def mod(p: Poly, q: Poly) -> Poly | None:
    """`p % q` as Python's (the sign of q): `p - q*(p/q)` with the division
    floored, so `(n%4)` is a polynomial too; None for a division by zero."""
    d = div(p, q)
    return None if d is None else sub(p, mul(q, d))


def substitute(p: Poly, env: dict[str, Poly]) -> Poly | None:
    """`p` with generic dims replaced by the normal forms in `env`."""
    out = ZERO
    for m, c in p:
        term = const(c)
        for a in m:
            if a[0] == "v" and a[1] in env:
                part: Poly | None = env[a[1]]
            elif a[0] == "d":
                num, den = substitute(a[1], env), substitute(a[2], env)
                divide = div_exact if len(a) == 4 else div
                part = divide(num, den) if num is not None and den is not None else None
            else:
                part = atom(a)
            if part is None:
                return None
            term = mul(term, part)
        out = add(out, term)
    return out


def equal_if_exact(p: Poly, q: Poly) -> bool:
    """Whether `p` and `q` are equal when every floored division in them
    comes out exact: `(E/NH)*NH` is `E` when NH divides E, as splitting E
    into NH heads needs. Each division atom n/d is cleared from both sides
    (multiplied through by d as often as it appears, n put in its place), so
    the answer is an equality of polynomials."""
    for _ in range(16):
        if p == q:
            return True
        d = _a_division(p) or _a_division(q)
        if d is None:
            return False
        times = max(_degree(p, d), _degree(q, d))
        p, q = _cleared(p, d, times), _cleared(q, d, times)
    return p == q


def _a_division(p: Poly) -> Atom | None:
    for m, _ in p:
        for a in m:
            if a[0] == "d":
                return a
    return None


def _degree(p: Poly, a: Atom) -> int:
    return max((m.count(a) for m, _ in p), default=0)


def _power(p: Poly, k: int) -> Poly:
    out = const(1)
    for _ in range(k):
        out = mul(out, p)
    return out


def _cleared(p: Poly, a: Atom, times: int) -> Poly:
    """`p` times a's denominator `times` times, each a*denominator replaced by a's numerator."""
    out = ZERO
    for m, c in p:
        k = m.count(a)
        rest: Poly = (((tuple(x for x in m if x != a)), c),)
        out = add(out, mul(rest, mul(_power(a[1], k), _power(a[2], times - k))))
    return out


def linear(p: Poly, name: str) -> tuple[int, int] | None:
    """(c, k) when `p` is c*name + k with constant c and k, else None."""
    c, k = 0, 0
    for m, coeff in p:
        if m == ():
            k = coeff
        elif m == (("v", name),):
            c = coeff
        else:
            return None
    return (c, k) if c else None


def generics(p: Poly) -> set[str]:
    """The generic dims `p` mentions."""
    out: set[str] = set()
    for m, _ in p:
        for a in m:
            if a[0] == "v":
                out.add(a[1])
            elif a[0] == "d":
                out |= generics(a[1]) | generics(a[2])
    return out


def render(p: Poly, name: Callable[[str], str] = str) -> str:
    """The normal form as Quiver text (without outer parentheses)."""
    if not p:
        return "0"
    parts = []
    for m, c in sorted(p, key=lambda mc: (len(mc[0]) == 0, repr(mc[0]))):
        factors = [_render_atom(a, name) for a in m]
        if not factors:
            text = str(abs(c))
        elif abs(c) == 1:
            text = "*".join(factors)
        else:
            text = "*".join([str(abs(c))] + factors)
        parts.append(("-" if c < 0 else "+", text))
    head = ("-" if parts[0][0] == "-" else "") + parts[0][1]
    return head + "".join(sign + text for sign, text in parts[1:])


def _simple(p: Poly) -> bool:
    return len(p) == 1 and (p[0][0] == () or (len(p[0][0]) == 1 and p[0][1] == 1))


def _render_atom(a: Atom, name) -> str:
    if a[0] == "d":
        num, den = render(a[1], name), render(a[2], name)
        num = num if _simple(a[1]) else f"({num})"
        den = den if _simple(a[2]) else f"({den})"
        return f"({num}/{den})"
    return name(a[1])


def python(p: Poly, name) -> str:
    """The normal form as a Python expression (`//` for division); `name`
    maps a dim's name to the Python expression holding its size."""
    if not p:
        return "0"
    terms = []
    for m, c in p:
        factors = [_python_atom(a, name) for a in m]
        terms.append(" * ".join([str(c)] + factors) if factors and c != 1 else " * ".join(factors) or str(c))
    return "(" + " + ".join(terms) + ")"


def _python_atom(a: Atom, name) -> str:
    if a[0] == "d":
        return f"({python(a[1], name)} // {python(a[2], name)})"
    return name(a[1])


def tree(p: Poly) -> object:
    """The normal form as nested tuples the runtime evaluates: ints, names
    (str), and ("+" | "*" | "/", a, b)."""
    out: object = 0
    first = True
    for m, c in p:
        term: object = c
        for a in m:
            node = ("/", tree(a[1]), tree(a[2])) if a[0] == "d" else a[1]
            term = node if term == 1 else ("*", term, node)
        out = term if first else ("+", out, term)
        first = False
    return out
