"""What a typing rule written as a plain function may touch.

The typing rules of the built-in families (checker/builtins/<family>.py) are
functions whose first parameter is the checker seen through `RuleContext`: a
reader knows from this one protocol everything such a rule can read or
change. `BodyChecker` is that context (calls.builtin_call runs
`rule.check(checker, ...)`); pyright checks it conforms (`_conforms` in
body/core.py: this module imports nothing of the engine). The features
(checker/body/features/: gradient sites, optimizers, schedules, checkpoints)
and the lints see the checker only through an interface as well.

A rule reports through `diags`, records what tools read afterwards in
`types`, `refs` and `axes` (the resolved `over=` positions the compiler
passes on), and reads arguments through the shared readers (`value`,
`tensor_arg`, `dim_arg`, `expect_number`, ... and checker/builtins/args.py). It never looks at a global
except through `global_kind` / `dim_constant` and the model table `g`,
which record the dependency, so incremental analysis stays exact.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from .. import ast as A
from .. import shapes as S
from .. import types as T
from ..declarations import FnInfo, Globals, ParamInfo
from ..diagnostics import Fix, LocalDiagnostic, SymbolRef
from ..results import DimCheck, GradSite, Ref, RunDimOrigin
from ..typectx import TypeContext
from .env import CallArg, Env, Var
from .size_hints import SizeSource


class RuleContext(Protocol):
    # The function being checked (its generic dims) and the program's globals.
    fn: FnInfo
    g: Globals
    # What the check produces.
    diags: list[LocalDiagnostic]
    types: dict[A.Node, T.Type]
    refs: dict[A.Node, Ref]
    axes: dict[A.Node, int | tuple[int, ...] | None]

    def value(self, e: A.Expr, env: Env) -> T.Type: ...

    # The argument readers, as methods: checker/builtins/args.py's functions
    # (which the family modules call), for the rules not in a family yet.
    def tensor_arg(
        self,
        a: CallArg,
        env: Env,
        fn: str,
        pname: str,
        float_only: bool = True,
        typed: T.Type | None = None,
    ) -> T.TensorT | None: ...

    def dim_arg(
        self,
        a: CallArg,
        env: Env,
        operand: T.TensorT,
        fn: str,
        operand_arg: CallArg | None = None,
        pname: str = "x",
    ) -> int | None: ...

    def named_over(self, t: T.TensorT, axis: int, a: CallArg) -> T.TensorT: ...

    def expect_number(self, a: CallArg, env: Env, kind: str, what: str) -> bool: ...

    # The body's named dims known only at run time, by name, and the dim an
    # Int variable's value gives (checker/body/run_dims.py).
    run_dims: dict[str, T.DimRun]

    def int_dim(self, name: str, var) -> T.DimRun: ...

    def note_dims(self, node: A.Expr, expected: T.Type, found: T.Type, prefix: str, subject: str) -> None: ...

    def global_kind(self, name: str) -> str | None: ...

    def dim_constant(self, e: A.Expr) -> tuple[A.Node, str] | None: ...

    def int_constant(self, e: A.Expr) -> tuple[A.Node, str, int] | None: ...

    # A shape written as an argument (`zeros([64 D] f64)`), checked.
    def shape_arg(self, a: CallArg, fn: str) -> T.TensorT | None: ...

    # An expression's type (`value` also rejects a model used as a value).
    def expr(self, e: A.Expr, env: Env) -> T.Type: ...

    # A model passed where it escapes the param-read analysis (print(m)).
    def escape_if_model(self, e: A.Expr, env: Env, why: str) -> None: ...

    # The value of an integer literal or of arithmetic of them; None otherwise.
    def int_value(self, e: A.Expr) -> int | None: ...

    # A dim equality known only at run time, checked by the compiled code.
    def add_dim_check(self, node: A.Expr, check: DimCheck) -> None: ...

    # Inside stop_grad(...): gradients do not flow (the depth of nesting).
    stop_grad_depth: int

    # The environment of the statement being checked (None between
    # statements), and the definitions used.
    env_now: Env | None  # read only

    used: set[A.Node]
    # The convolutions of the body, by span, for the size hints (size_hints.py).
    size_sources: dict[tuple[int, int], SizeSource]

    # An Int variable by name (a size known only at run time), or None.
    def int_var(self, name: str, env: Env | None = None) -> Var | None: ...

    # Reading a type written in the body (dim arithmetic as a dim), and taking
    # its diagnostics and dependencies afterwards.
    def type_context(self, ints: bool = True) -> TypeContext: ...

    def _take(self, ctx: TypeContext) -> None: ...

    # The built-in whose rule is running (its spec says whether an operand
    # may have a rest of dims), and the `?` dims that an over= named.
    builtin_now: str | None
    over_named: dict[A.Node, T.Dim]

    # What the features (checker/body/features/) and their built-ins' rules
    # read or change besides: calls and arguments, the facts of the read
    # analysis, `mut`, and the run-time dims a reader binds.
    sites: dict[A.Call, GradSite]  # the value_and_grad sites, for checker/reads.py
    vag_bound: set[A.Node]  # value_and_grad calls bound to two names, or already reported (E0411)
    reported_once: set[tuple[str, str]]  # (code, name) reported once per function
    walk_vars: dict[A.Node, A.Expr]  # a walk's loop variable -> the model it walks (builtins/walks.py)
    run_origins: dict[str, RunDimOrigin]  # where each run-time dim is bound, by key

    def name(self, e: A.Name, env: Env) -> T.Type: ...

    def _eval_args(self, args: list[CallArg], env: Env) -> None: ...

    def bind_args(
        self,
        name: str,
        params: list[tuple[str, bool, bool]],
        args: list[CallArg],
        paren: A.Span,
        variadic: bool = False,
    ) -> tuple[dict[str, CallArg], list[CallArg]] | None: ...

    def check_call_args(
        self, info: FnInfo, pairs: list[tuple[ParamInfo, CallArg]], env: Env, node: A.Node, first_index: int = 0
    ) -> T.Type: ...

    def checked_call(
        self, info: FnInfo, pairs: list[tuple[ParamInfo, CallArg]], env: Env, node: A.Node, first_index: int = 0
    ) -> tuple[T.Type, bool]: ...

    def report_mismatch(self, m: S.Mismatch, span: A.Span, context: str, symbol: SymbolRef | None = None) -> None: ...

    def origin_of(self, e: A.Expr, env: Env) -> str | None: ...

    def path_fact(self, kind: str, origin: str, target: str, span: A.Span, index: int = 0) -> None: ...

    def require_mut(self, target: A.Expr, model: A.Expr, var: Var | None) -> bool: ...

    def immutable_source(self, node: A.Expr, env: Env) -> ParamInfo | None: ...

    def make_mut_fix(self, param: ParamInfo) -> Fix: ...

    def binding(self, node: A.Node, what: str) -> AbstractContextManager[None]: ...

    def bound_keys(self) -> list[str]: ...

    def record_binds(self, node: A.Node, t: T.Type, keys: set[str], item: int | None = None) -> None: ...
