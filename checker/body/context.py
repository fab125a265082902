"""What a typing rule written as a plain function may touch.

The rules of the newer built-in families (activation_rules, layout_rules,
loss_rules, stat_rules, sort_rules, attention_rules, deconv_rules,
norm_rules) are functions whose first parameter is the checker seen through
`RuleContext`: a reader knows from this one protocol everything such a rule
can read or change. `BodyChecker` is that context (the registry in
builtin_rules calls `rule.check(checker, ...)`); pyright checks it conforms
(`_conforms` below).

A rule reports through `diags`, records what tools read afterwards in
`types`, `refs` and `axes` (the resolved `over=` positions the compiler
passes on), and reads arguments through the shared readers (`value`,
`tensor_arg`, `dim_arg`, `expect_number`, ...). It never looks at a global
except through `global_kind` / `dim_constant` and the model table `g`,
which record the dependency, so incremental analysis stays exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .. import ast as A
from .. import types as T
from ..declarations import FnInfo, Globals
from ..diagnostics import LocalDiagnostic
from ..results import Ref
from .env import CallArg, Env


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


if TYPE_CHECKING:
    from .core import BodyChecker

    def _conforms(c: BodyChecker) -> RuleContext:
        return c
