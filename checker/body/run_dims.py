"""Dims known only at run time, named: the table of a body's run-time dims
(`n` of `load_npz(p, "x", [n 64])`, of `x[a:b] as [k D]`, of an `Int` used as
a size), where each is bound, and which values bind them when the program
runs (docs/language.md, "Dims known only at run time")."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

from .. import ast as A
from .. import shapes as S
from .. import types as T
from ..results import RunDimOrigin
from .engine_api import EngineBase
from .env import Env, Var

if TYPE_CHECKING:
    from collections.abc import Iterator


class RunDimRules(EngineBase):
    def init_run_dims(self) -> None:
        self.run_dims: dict[str, T.DimRun] = {}  # by name, the latest bound
        self.run_origins: dict[str, RunDimOrigin] = {}  # by key
        self.run_binds: dict[A.Node, tuple[tuple[str, int, int], ...]] = {}
        self.env_now: Env | None = None  # the environment of the statement being checked
        self._binding: tuple[str, list[str]] | None = None  # (what binds, keys bound so far)

    def lookup_run_dim(self, name: str, span: A.Span) -> T.Dim | None:
        """A name in a type written in the body that is neither a constant nor
        a generic dim: a run-time dim bound earlier, an Int variable (its value
        is the size), or, where a value binds names (a cast, a reader's
        shape), a new run-time dim bound here."""
        here = T.run_dim(name, span.start)
        known = self.run_dims.get(name)
        if known is not None and not (self._binding is not None and known == here):
            return known
        var = self.int_var(name)
        if var is not None:
            self.used.update(var.defs)  # a size read from it is a use
            return self.int_dim(name, var)
        if self._binding is None or not name[:1].islower():
            return None
        what, keys = self._binding
        self.run_dims[name] = here
        self.run_origins[here.key] = RunDimOrigin(what, span)
        keys.append(here.key)
        return here

    def int_var(self, name: str, env: Env | None = None) -> Var | None:
        """The variable `name` when it holds an Int (whose value can be a size),
        in `env` or the statement's environment; None otherwise."""
        env = env if env is not None else self.env_now
        var = env.vars.get(name) if env is not None else None
        if var is None or var.phantom or not isinstance(var.type, T.NumberT) or var.type.kind != "Int":
            return None
        return var

    def lookup_named_run_dim(self, name: str, span: A.Span) -> T.Dim | None:
        """Only a run-time dim bound before (over=n of a [n D] read from a file)."""
        return self.run_dims.get(name)

    def int_dim(self, name: str, var) -> T.DimRun:
        """The size an Int variable gives (`zeros([n D])`): one dim for each
        set of assignments that reach it, so two shapes made from one value
        of `n` line up."""
        starts = sorted(d.span.start for d in var.defs) or [0]
        key = f"{name}{T.RUN_MARK}{'.'.join(map(str, starts))}"
        if key not in self.run_origins:
            first = min(var.defs, key=lambda d: d.span.start, default=None)
            self.run_origins[key] = RunDimOrigin(
                f"the Int {name}", first.span if first is not None else A.Span(0, 0), name
            )
        return T.DimRun(key)

    @contextmanager
    def binding(self, node: A.Node, what: str) -> Iterator[None]:
        """Names written in a type read inside this block that are new bind
        run-time dims, from the value of `node` (made by `what`)."""
        outer = self._binding
        self._binding = (what, [])
        try:
            yield
        finally:
            self._binding = outer

    def record_binds(self, node: A.Node, t: T.Type, keys: set[str], item: int | None = None) -> None:
        """At run time, the value of `node` (of type `t`; with `item`, element
        `item` of a tuple value is of type `t`) gives the sizes of the run-time
        dims `keys` bound here."""
        binds: list[tuple[str, int, int]] = []
        items = t.items if isinstance(t, T.TupleT) else (t,)
        for i, part in enumerate(items):
            if isinstance(part, T.TensorT):
                where = i if isinstance(t, T.TupleT) else -1 if item is None else item
                for axis, d in enumerate(part.dims):
                    if isinstance(d, T.DimRun) and d.key in keys and all(b[0] != d.key for b in binds):
                        binds.append((d.key, where, axis))
        if binds:
            self.run_binds[node] = tuple(binds)

    def bound_keys(self) -> list[str]:
        return self._binding[1] if self._binding is not None else []

    def size_of_int(self, e: A.Expr, env: Env, call: A.Node, param: str) -> T.Dim:
        """The size an Int argument gives a callee that sizes its types with
        it: a literal, a dim constant or generic dim used as a number, an Int
        variable (its run-time dim); otherwise a run-time dim of this call."""
        if isinstance(e, A.IntLit) and e.value > 0:
            return T.DimLit(e.value)
        if isinstance(e, A.Name):
            if e.name in self.fn.generics:
                return T.DimVar(e.name)
            var = self.int_var(e.name, env)
            if var is not None:
                return self.int_dim(e.name, var)
        const = self.dim_constant(e)
        if const is not None:
            value = self.g.names.dim_values.get(const[1])
            if value is not None:
                return T.DimConst(const[1], value)
        here = T.run_dim(param, call.span.start)
        self.run_origins.setdefault(here.key, RunDimOrigin(f"argument '{param}' of this call", e.span))
        return here

    def extern_sizes(self, info, bindings, node: A.Node) -> set[str]:
        """The sizes an extern fn's result has of its own (`-> [n D]` with n in
        no parameter): a run-time dim of this call for each, named as the
        extern names it; their keys."""
        keys = set()
        for g in info.generics:
            if g not in bindings.bound:
                dim = T.run_dim(g, node.span.start)
                self.run_origins.setdefault(dim.key, RunDimOrigin(f"extern fn {info.name}", node.span))
                bindings.bound[g] = S.Binding(dim, g, None)
                keys.add(dim.key)
        return keys

    def checkable(self, d: T.Dim | None) -> T.Dim | None:
        """A dim a run-time check can read the size of where it is: a run-time
        dim of an Int only while that Int holds the value it was made from."""
        if not isinstance(d, T.DimRun):
            # arithmetic of run-time dims (`(8*r)` of `Net[r]` with an Int r): when each can be read
            keys = T.run_keys(d) if d is not None else set()
            return d if not keys or all(self.checkable(T.DimRun(k)) is not None for k in keys) else None
        origin = self.run_origins.get(d.key)
        if origin is None or origin.var is None:
            return d
        var = self.env_now.vars.get(origin.var) if self.env_now is not None else None
        return d if var is not None and self.int_dim(origin.var, var) == d else None
