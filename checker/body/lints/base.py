"""What every lint shares: the pass's state (`LintPass`: the body's recorded
types and references, the values assigned to locals, the two result lists),
the registry the lint modules fill, and small readers of the syntax.

A lint is a function registered with `@on_call(kind)` (run for each call whose
callee resolves: `kind` "builtin", "fn" or None for both, with the callee's
name, its parameter names and the arguments bound to them) or with
`@on_node(NodeType)` (run for each node of that type). They run in the order
the order of their modules in `lints/__init__.py`'s `THEMES` (then in the
order each module registers them); that order is the order of the
diagnostics."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from ... import ast as A
from ... import types as T
from ...builtins import BUILTINS
from ...declarations import FnInfo, Globals
from ...diagnostics import LocalDiagnostic
from ...results import Ref


class CheckedBody(Protocol):
    """What the lints read of a body the engine has checked (the engine's
    `BodyChecker` is one): nothing of the engine itself, so the lints sit
    below it and the engine runs them at its end."""

    @property
    def fn(self) -> FnInfo: ...
    @property
    def g(self) -> Globals: ...
    @property
    def types(self) -> dict[A.Node, T.Type]: ...
    @property
    def refs(self) -> dict[A.Node, Ref]: ...


@dataclass(frozen=True)
class Flow:
    """What the pass knows about a value: it reads the differentiated model
    (outside stop_grad), it is log-probabilities, it is probabilities, and
    where it came from (the expression that first made it so)."""

    model: A.Node | None = None
    logprob: bool = False
    prob: bool = False


CallLint = Callable[["LintPass", A.Call, str, list[str], dict[str, A.Expr]], None]
NodeLint = Callable[["LintPass", A.Node], None]

CALL_LINTS: list[tuple[str | None, CallLint]] = []
NODE_LINTS: list[tuple[type[A.Node], NodeLint]] = []


def on_call(kind: str | None) -> Callable[[CallLint], CallLint]:
    """Register a lint of calls: of built-ins ("builtin"), of the program's
    functions and methods ("fn"), or of both (None)."""

    def register(fn: CallLint) -> CallLint:
        CALL_LINTS.append((kind, fn))
        return fn

    return register


def on_node(node_type: type[A.Node]) -> Callable[[NodeLint], NodeLint]:
    """Register a lint of every node of a type (other than calls)."""

    def register(fn: NodeLint) -> NodeLint:
        NODE_LINTS.append((node_type, fn))
        return fn

    return register


def order_by(modules: list[str]) -> None:
    """Sort the registered lints by their module's place in `modules` (a
    stable sort: within a module, in the order registered)."""
    CALL_LINTS.sort(key=lambda entry: modules.index(entry[1].__module__))
    NODE_LINTS.sort(key=lambda entry: modules.index(entry[1].__module__))


class LintPass:
    """One body's lint pass. It reads what the body check recorded (`c`'s
    types, refs, fn and globals) and never changes it."""

    def __init__(self, c: CheckedBody) -> None:
        self.c = c
        self.diags: list[LocalDiagnostic] = []
        self.loss_diags: list[LocalDiagnostic] = []
        self.values: dict[A.Node, A.Expr] = {}  # assignment target -> the value assigned
        self.flows: dict[A.Node, Flow] = {}
        self.busy: set[A.Node] = set()
        self.reported: set[A.Node] = set()  # a weight made once and used twice is reported once
        params = c.fn.params[1:] if c.fn.owner is not None else c.fn.params
        first = params[0] if params else None
        # value_and_grad differentiates its function's first argument
        self.model = first.name if first is not None and isinstance(first.type, T.ModelT) else None

    # -------------------------------------------------------------- entry

    def run(self) -> tuple[list[LocalDiagnostic], list[LocalDiagnostic]]:
        decl = self.c.fn.decl
        assert isinstance(decl, A.FnDecl)
        for stmt in _statements(decl.body):
            if isinstance(stmt, A.Assign):
                for target in stmt.targets:
                    for name in _names(target):
                        self.values[name] = stmt.value
        for node in A.walk(decl):
            if isinstance(node, A.Call):
                self.call(node)
            else:
                self.node(node)
        return self.diags, self.loss_diags

    # -------------------------------------------------------------- calls

    def callee(self, call: A.Call) -> tuple[str, str, list[str]] | None:
        """("builtin" | "fn", name, parameter names) of a call."""
        func = call.func
        ref = self.c.refs.get(func.name if isinstance(func, A.Field) else func)
        if ref is None:
            return None
        if ref.kind == "builtin" and ref.name in BUILTINS:
            return "builtin", ref.name, [p.name for p in BUILTINS[ref.name].params]
        if ref.kind == "fn":
            info = self.c.g.fns.get(ref.name)
            if info is None:
                return None
            names = [p.name for p in info.params]
            if info.owner is not None and isinstance(func, A.Field):
                names = names[1:]  # m.method(a, b): self is the receiver
            return "fn", ref.name, names
        return None

    def call(self, call: A.Call) -> None:
        found = self.callee(call)
        if found is None:
            return
        kind, name, params = found
        bound = bind(call, params)
        for want, lint in CALL_LINTS:
            if want is None or want == kind:
                lint(self, call, name, params, bound)

    def node(self, node: A.Node) -> None:
        for node_type, lint in NODE_LINTS:
            if isinstance(node, node_type):
                lint(self, node)


# ------------------------------------------------------------------ helpers


def _statements(body: tuple[A.Stmt, ...]) -> Iterator[A.Stmt]:
    for s in body:
        yield s
        if isinstance(s, A.If):
            for br in s.branches:
                yield from _statements(br.body)
            if s.orelse:
                yield from _statements(s.orelse)
        elif isinstance(s, (A.For, A.While)):
            yield from _statements(s.body)


def _names(target: A.Node) -> Iterator[A.Node]:
    if isinstance(target, A.Name):
        yield target
    elif isinstance(target, (A.TupleExpr, A.NameList)):
        for x in target.items:
            yield from _names(x)


def bind(call: A.Call, params: list[str]) -> dict[str, A.Expr]:
    out: dict[str, A.Expr] = {}
    i = 0
    for a in call.args:
        if a.keyword is not None:
            out[a.keyword.text] = a.value
        else:
            if i < len(params):
                out.setdefault(params[i], a.value)
            i += 1
    return out


def text(e: A.Node) -> str:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        return f"{text(e.value)}.{e.name.text}"
    return "this"
