"""The engine's own interface: the state of `BodyChecker` and the methods its
parts call on each other, as one protocol.

The engine is one class over a few files (core, flow, expressions,
operators, indexing, subscripts, calls, run_dims), as rust-analyzer's
`InferenceContext` is one struct over several `impl` files. Each part is a
mixin whose base, for the type checker only, is `Engine`: so `self` in a
part is that part plus this interface, pyright checks each call between the
parts against the signature here, and `BodyChecker` (which has every part as
a base) must implement all of it (pyright reports a member it lacks where
the class is instantiated). At run time the parts derive from `object`
(`EngineBase`), so this module adds nothing to the class and its method
order.

Code outside the engine does not use this: the built-in families and the
features see `body.context.RuleContext`, the lints `lints.base.CheckedBody`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from .. import ast as A
from .. import dimexpr as DX
from .. import member_conditions as MC
from .. import types as T
from ..declarations import FnInfo, Globals
from ..diagnostics import LocalDiagnostic
from ..results import DimCheck, GradSite, ReadFact, Ref, RunDimOrigin
from ..typectx import TypeContext
from .context import RuleContext
from .env import CallArg, Env, Loop, Var
from .size_hints import SizeSource


class Engine(RuleContext, Protocol):
    # -------------------------------------------------------------- state (core.py)

    fn: FnInfo
    g: Globals
    recovered: set[str]
    partial: bool
    diags: list[LocalDiagnostic]
    types: dict[A.Node, T.Type]
    refs: dict[A.Node, Ref]
    deps: dict[str, object]
    obligations_checked: set
    facts: set[ReadFact]
    sites: dict[A.Call, GradSite]
    axes: dict[A.Node, int | tuple[int, ...] | None]
    used: set[A.Node]
    simple_defs: dict[A.Node, str]
    loops: list[Loop]
    reported_once: set[tuple[str, str]]
    walk_vars: dict[A.Node, A.Expr]
    locals: dict[str, T.Type]
    dim_checks: dict[A.Node, tuple[DimCheck, ...]]
    over_named: dict[A.Node, T.Dim]
    stop_grad_depth: int
    reported_unreachable: set[int]
    vag_bound: set[A.Node]
    model_options: dict[str, bool | float | str]
    known_facts: list[MC.Cond]
    builtin_now: str | None
    size_sources: dict[tuple[int, int], SizeSource]
    # (run_dims.py: set by init_run_dims)
    run_dims: dict[str, T.DimRun]
    run_origins: dict[str, RunDimOrigin]
    run_binds: dict[A.Node, tuple[tuple[str, int, int], ...]]
    _binding: tuple[str, list[str]] | None

    # -------------------------------------------------------------- methods, by the part that has them

    # calls
    def call(
        self,
        node: A.Node,
        func: A.Expr,
        args: tuple[A.Arg, ...],
        env: Env,
        piped: A.Expr | None,
        inner_call: A.Call | None = None,
    ) -> T.Type: ...
    # calls
    def check_assignable(
        self, expected: T.Type, found: T.Type, span: A.Span, context: str, related: tuple = ()
    ) -> bool: ...
    # calls
    def note_dims(self, node: A.Expr, expected: T.Type, found: T.Type, prefix: str, subject: str) -> None: ...
    # calls
    def pipe(self, e: A.Pipe, env: Env) -> T.Type: ...
    # core
    def all_names(self, env: Env) -> list[str]: ...
    # core
    def dim_constant(self, e: A.Expr) -> tuple[A.Node, str] | None: ...
    # core
    def global_kind(self, name: str) -> str | None: ...
    # core
    def known_option(self, name: str, value: bool) -> bool: ...
    # core
    def proves(self, cond: MC.Cond | None) -> bool: ...
    # core
    def written_kind(self, name: str) -> str | None: ...
    # expressions
    def _take(self, ctx: TypeContext) -> None: ...
    # expressions
    def as_value(self, e: A.Expr, t: T.Type) -> T.Type: ...
    # expressions
    def escape_if_model(self, e: A.Expr, env: Env, why: str) -> None: ...
    # expressions
    def expr(self, e: A.Expr, env: Env) -> T.Type: ...
    # expressions
    def field_access(self, e: A.Field, env: Env) -> T.Type: ...
    # expressions
    def global_name(self, e: A.Name, env: Env) -> T.Type: ...
    # expressions
    def name(self, e: A.Name, env: Env) -> T.Type: ...
    # expressions
    def origin_of(self, e: A.Expr, env: Env) -> str | None: ...
    # expressions
    def path_fact(self, kind: str, origin: str, target: str, span: A.Span, index: int = 0) -> None: ...
    # expressions
    def type_context(self, ints: bool = True) -> TypeContext: ...
    # expressions
    def value(self, e: A.Expr, env: Env) -> T.Type: ...
    # flow
    def block(self, stmts: tuple[A.Stmt, ...], env: Env) -> Env: ...
    # flow
    def join(self, before: Env, outs: list[Env], at: A.Node, rounds: bool = False) -> Env: ...
    # calls
    def _eval_args(self, args: list[CallArg], env: Env) -> None: ...
    # model_lists
    def for_models(self, s: A.For, env: Env, t: T.TupleT, origin: str | None) -> Env: ...
    # model_lists
    def index_models(self, e: A.Index, t: T.TupleT, env: Env) -> T.Type: ...
    # model_lists
    def call_chain(self, node: A.Node, func: A.Expr, t: T.TupleT, args: list[CallArg], env: Env) -> T.Type: ...
    # flow
    def require_mut(self, target: A.Expr, model: A.Expr, var: Var | None) -> bool: ...
    # flow
    def test_dim(self, e: A.Expr, env: Env) -> DX.Poly | None: ...
    # lists
    def list_var(self, call: A.Call, env: Env) -> T.Type | None: ...
    # lists
    def list_literal(self, e: A.TensorType, names: tuple[str, ...], env: Env) -> T.Type: ...
    # lists
    def list_method(self, e: A.Call, env: Env, statement: bool) -> Env: ...
    # lists
    def list_plus(self, cur: T.ListT, more: T.Type, name: str, node: A.Node, what: str) -> T.Type: ...
    # lists
    def list_aug(self, s: A.AugAssign, env: Env, cur: T.ListT) -> Env: ...
    # lists
    def settle_lists(self, s: A.For | A.While, entry: Env, out: Env) -> None: ...
    # lists
    def for_tuple(self, s: A.For, env: Env, items: tuple[T.Type, ...]) -> Env: ...
    # lists
    def tuple_walk(self, it: A.Call, env: Env) -> tuple[T.Type, ...] | T.Type | None: ...
    # indexing
    def index(self, e: A.Index, env: Env) -> T.Type: ...
    # indexing
    def int_value(self, e: A.Expr) -> int | None: ...
    # indexing
    def slice_bound(self, b: A.Expr | None, n: DX.Poly | None, default: DX.Poly | None) -> DX.Poly | None: ...
    # operators
    def binary_types(
        self, op: str, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span, node: A.Node
    ) -> T.Type: ...
    # operators
    def boolean(self, e: A.Expr, env: Env, op: str) -> None: ...
    # operators
    def compare(self, e: A.Compare, env: Env) -> T.Type: ...
    # operators
    def unary(self, e: A.Unary, env: Env) -> T.Type: ...
    # run_dims
    def binding(self, node: A.Node, what: str) -> AbstractContextManager[None]: ...
    # run_dims
    def bound_keys(self) -> list[str]: ...
    # run_dims
    def checkable(self, d: T.Dim | None) -> T.Dim | None: ...
    # run_dims
    def extern_sizes(self, info, bindings, node: A.Node) -> set[str]: ...
    # run_dims
    def lookup_named_run_dim(self, name: str, span: A.Span) -> T.Dim | None: ...
    # run_dims
    def lookup_run_dim(self, name: str, span: A.Span) -> T.Dim | None: ...
    # run_dims
    def record_binds(self, node: A.Node, t: T.Type, keys: set[str], item: int | None = None) -> None: ...
    # run_dims
    def size_of_int(self, e: A.Expr, env: Env, call: A.Node, param: str) -> T.Dim: ...
    # subscripts
    def _index_in_range(self, node: A.Expr, d: T.Dim) -> bool: ...
    # subscripts
    def assign_index(
        self,
        target: A.Index,
        t: T.Type,
        value: A.Expr,
        env: Env,
        part: T.Type | None = None,
        op: str = "",
    ) -> None: ...
    # subscripts
    def subscripts(self, e: A.Index, t: T.Type, env: Env) -> T.Type: ...


if TYPE_CHECKING:
    EngineBase = Engine
else:
    EngineBase = object
