"""The flow-sensitive environment of a body: variables, their types and
definitions, and the bookkeeping of loops and call arguments."""

from __future__ import annotations

from dataclasses import dataclass

from .. import ast as A
from .. import types as T
from ..declarations import ParamInfo


@dataclass(frozen=True)
class Var:
    type: T.Type
    defs: frozenset[A.Node]
    maybe_unbound: bool = False
    origin: str | None = None  # the model parameter this value is (or aliases)
    param: ParamInfo | None = None  # still the parameter itself
    # Made up after an unknown name was reported, so later uses stay silent.
    phantom: bool = False
    # A `for` loop's variable after its loop, where it is not bound (docs:
    # bound inside the loop only): a read is E0103, and another loop or an
    # assignment binds the name afresh, of any type.
    loop_only: bool = False


@dataclass
class Env:
    vars: dict[str, Var]
    dead: bool = False

    def copy(self) -> Env:
        return Env(dict(self.vars), self.dead)


@dataclass
class CallArg:
    node: A.Expr
    keyword: str | None
    span: A.Span
    arg: A.Arg | None = None


class Loop:
    def __init__(self) -> None:
        self.breaks: list[Env] = []
        self.continues: list[Env] = []


def fresh_name(base: str, env: Env) -> str:
    if base not in env.vars:
        return base
    i = 2
    while f"{base}{i}" in env.vars:
        i += 1
    return f"{base}{i}"


def same_state(a: Env, b: Env) -> bool:
    if set(a.vars) != set(b.vars):
        return False
    return all(
        a.vars[k].type == b.vars[k].type
        and a.vars[k].maybe_unbound == b.vars[k].maybe_unbound
        and a.vars[k].loop_only == b.vars[k].loop_only
        and a.vars[k].defs == b.vars[k].defs
        for k in a.vars
    )
