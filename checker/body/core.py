"""The body checker: its state and entry point, composed from one part per
concern (flow, expressions, calls, built-in rules, gradient sites)."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import member_conditions as MC
from .. import types as T
from ..builtins import BUILTINS, CONSTANTS
from ..declarations import ALL_NAMES, FnInfo, Globals, dotted_text, suggest
from ..diagnostics import LocalDiagnostic, Severity
from ..results import BodyResult, DimCheck, GradSite, ReadFact, Ref, shared_if_empty
from .calls import CallRules
from .context import RuleContext
from .env import Env, Loop, Var
from .expressions import ExpressionRules
from .flow import FlowRules
from .indexing import IndexingRules
from .lints import lint_body
from .lists import ListRules
from .model_lists import ModelListRules
from .operators import OperatorRules
from .run_dims import RunDimRules
from .size_hints import SizeSource
from .subscripts import SubscriptRules


class BodyChecker(
    FlowRules,
    ExpressionRules,
    OperatorRules,
    IndexingRules,
    SubscriptRules,
    CallRules,
    RunDimRules,
    ModelListRules,
    ListRules,
):
    def __init__(self, fn: FnInfo, glob: Globals, recovered: tuple[str, ...] = (), partial: bool = False) -> None:
        self.fn = fn
        self.g = glob
        self.recovered = set(recovered)
        # Some statements did not parse: flow-based diagnostics (unused,
        # unreachable, missing return, maybe unassigned) would be guesses.
        self.partial = partial
        self.diags: list[LocalDiagnostic] = []
        self.types: dict[A.Node, T.Type] = {}
        self.refs: dict[A.Node, Ref] = {}
        self.deps: dict[str, object] = {}
        # the models given for model parameters checked so far (a type read
        # twice, as `Net[Bag].init(...)(x)` is, is reported once)
        self.obligations_checked: set = set()
        self.facts: set[ReadFact] = set()
        self.sites: dict[A.Call, GradSite] = {}
        self.axes: dict[A.Node, int | tuple[int, ...] | None] = {}
        self.used: set[A.Node] = set()
        self.simple_defs: dict[A.Node, str] = {}
        self.loops: list[Loop] = []
        # (code, name) pairs already reported once per function: a variable's
        # E0103/E0311 (keyed "var"), a model's E0501.
        self.reported_once: set[tuple[str, str]] = set()
        # the variables of walks (`for name, p in named_params(m, seed=0)`): the walked model
        self.walk_vars: dict[A.Node, A.Expr] = {}
        self.locals: dict[str, T.Type] = {}
        self.dim_checks: dict[A.Node, tuple[DimCheck, ...]] = {}
        self.over_named: dict[A.Node, T.Dim] = {}  # over=T naming an operand's `?` dim
        self.stop_grad_depth = 0
        self.reported_unreachable: set[int] = set()
        # value_and_grad calls bound to two names, or already reported (E0411)
        self.vag_bound: set[A.Node] = set()
        # A method of a model with options: their names are Bool values, and
        # under `if bias:` the option is known (a member `if bias` exists).
        # (its own model's header: a second model of the same name, E0104,
        # is not the one the globals hold)
        self.model_options: dict[str, bool | float | str] = dict(fn.owner_options)
        # what the `if`s around the statement being checked prove (`if
        # bias:`, `if stride != 1 or Ci != Co:`): a member under a condition
        # they imply may be read
        self.known_facts: list[MC.Cond] = []
        self.builtin_now: str | None = None  # the built-in whose rule is running
        self.size_sources: dict[tuple[int, int], SizeSource] = {}  # the convolutions, by span (size_hints)
        self.init_run_dims()

    def known_option(self, name: str, value: bool) -> bool:
        """Whether the method being checked is where option `name` is `value`."""
        return self.proves(MC.Opt(name) if value else MC.Not(MC.Opt(name)))

    def proves(self, cond: MC.Cond | None) -> bool:
        """Whether the `if`s around the statement being checked imply `cond`."""
        return cond is None or MC.implies(self.known_facts, cond)

    # -------------------------------------------------------------- entry

    def run(self) -> BodyResult:
        decl = self.fn.decl
        assert isinstance(decl, A.FnDecl)
        env = Env({})
        for _, bounds in self.fn.type_params:  # what `m.forward(x)` is checked against
            for trait in bounds:
                self.global_kind(trait)
        owner = self.g.models.get(self.fn.owner) if self.fn.owner is not None else None
        for _, bounds in owner.model_params if owner is not None else ():  # `self.l1(x)` of `l1: B[4, H]`
            for trait in bounds:
                self.global_kind(trait)
        for p in self.fn.params:
            origin = p.name if isinstance(p.type, T.ModelT) else None
            env.vars[p.name] = Var(p.type, frozenset({p.decl}), origin=origin, param=p)
            self.types[p.decl.name] = p.type
            self.refs[p.decl.name] = Ref("param", p.name, self.fn.name)
        for name in self.recovered:
            env.vars.setdefault(name, Var(T.UNKNOWN, frozenset()))
        for written in [p.decl.type for p in self.fn.params] + ([decl.ret] if decl.ret is not None else []):
            if written is not None:
                self.check_written_selections(written)
        end = self.block(decl.body, env)
        if (
            not end.dead
            and self.fn.declared_ret
            and not isinstance(self.fn.ret, (T.UnitT, T.UnknownT))
            and not self.partial
        ):
            assert decl.ret is not None
            self.diags.append(C.E0407.at(decl.ret.span, name=self.fn.name, type=str(self.fn.ret)))
        for node, name in self.simple_defs.items():
            # A value that could not be typed already has its diagnostic.
            if (
                not self.partial
                and node not in self.used
                and not name.startswith("_")
                and not T.is_unknown(self.types.get(node, T.UNKNOWN))
            ):
                self.diags.append(C.W0101.at(node.span, name=name))
        self._count_axes_from_the_end()
        loss_warnings: list[LocalDiagnostic] = []
        if not self.partial and not any(d.severity is Severity.ERROR for d in self.diags):
            # bugs with legal shapes: only in a body that type-checks, or they guess
            warnings, loss_warnings = lint_body(self)
            self.diags.extend(warnings)
        return BodyResult(
            tuple(self.diags),
            self.types,
            shared_if_empty(self.refs),
            shared_if_empty(frozenset(self.facts)),
            tuple(self.sites.values()),
            shared_if_empty(self.deps),
            shared_if_empty(self.axes),
            shared_if_empty(self.locals),
            shared_if_empty(self.dim_checks),
            tuple(loss_warnings),
            shared_if_empty(self.run_origins),
            shared_if_empty(self.run_binds),
        )

    def _count_axes_from_the_end(self) -> None:
        """The axes of calls whose operand is `[.. d]`: its leading dims are
        any number, so an axis after them is counted from the end at run time
        (the checker counts the `..` as one dim)."""
        for node, axis in list(self.axes.items()):
            if not isinstance(node, A.Call) or not node.args:
                continue
            t = self.types.get(node.args[0].value)
            if not T.has_rest(t):  # type: ignore[arg-type]
                continue
            assert isinstance(t, T.TensorT)
            rank = t.rank
            if isinstance(axis, int):
                self.axes[node] = axis - rank if axis > 0 else axis
            elif isinstance(axis, tuple) and all(isinstance(a, int) and not isinstance(a, bool) for a in axis):
                self.axes[node] = tuple(a - rank if a > 0 else a for a in axis)

    def check_written_selections(self, t: A.TypeExpr | A.OptionalType) -> None:
        """E1109 for `Grad[M, wrt=[...]]` written in the signature: each name
        a param of M, once (the declaration could not know M's fields)."""
        for node in A.walk(t):
            if not (isinstance(node, A.NamedType) and node.name.text == "Grad" and node.option is not None):
                continue
            arg = node.arg
            if not isinstance(arg, A.NamedType) or self.global_kind(arg.name.text) != "model":
                continue
            model = self.g.models.get(arg.name.text)
            if model is None or model.partial:
                continue
            seen: set[str] = set()
            for n in node.names:
                f = model.field(n.text)
                if f is None:
                    hint = suggest(n.text, [x.name for x in model.params])
                    self.diags.append(
                        C.E1109.at(n.span, problem=C.E1109.say("no_param", model=model.name, name=n.text, hint=hint))
                    )
                elif f.kind == "buffer":
                    self.diags.append(C.E1109.at(n.span, problem=C.E1109.say("buffer", name=n.text, model=model.name)))
                elif n.text in seen:
                    self.diags.append(C.E1109.at(n.span, problem=C.E1109.say("named_twice", name=n.text)))
                seen.add(n.text)
            if seen >= {p.name for p in model.params} and len(seen) == len(node.names):
                # one spelling per type: a selection of everything is the whole gradient
                self.diags.append(C.E1109.at(node.span, problem=C.E1109.say("every_param", model=model.name)))

    # -------------------------------------------------------------- globals

    def global_kind(self, name: str) -> str | None:
        self.deps[name] = self.g.fingerprint(name)
        return self.g.names.kind(name)

    def written_kind(self, name: str) -> str | None:
        """The kind of a name as the user wrote it (`layers.H`), not one only
        types may hold (the qualified name of a private definition)."""
        self.deps[name] = self.g.fingerprint(name)
        return self.g.names.kinds.get(name)

    def dim_constant(self, e: A.Expr) -> tuple[A.Node, str] | None:
        """A dim constant written as a value (`H`, `layers.H`): the node its
        ref hangs on and the dim's qualified name (what types hold)."""
        written = dotted_text(e)
        if written is None or self.written_kind(written) != "dim":
            return None
        return (e.name if isinstance(e, A.Field) else e), self.g.names.canonical(written)

    def int_constant(self, e: A.Expr) -> tuple[A.Node, str, int] | None:
        """An Int constant written as a value (`K`, `hp.K`): the node its ref
        hangs on, its qualified name and its value; a size as the number it is
        (typectx reads `[K]` the same way)."""
        written = dotted_text(e)
        if written is None or self.written_kind(written) != "const":
            return None
        value = self.g.names.const_values.get(written)
        if not (isinstance(value, tuple) and value[0] == "Int"):
            return None
        return (e.name if isinstance(e, A.Field) else e), self.g.names.canonical(written), int(value[1])

    def all_names(self, env: Env) -> list[str]:
        self.deps[ALL_NAMES] = self.g.fingerprint(ALL_NAMES)
        return list(env.vars) + list(self.fn.generics) + list(self.g.names.kinds) + list(BUILTINS) + list(CONSTANTS)


def check_body(fn: FnInfo, glob: Globals, recovered: tuple[str, ...] = (), partial: bool = False) -> BodyResult:
    return BodyChecker(fn, glob, recovered, partial).run()


def _conforms(c: BodyChecker) -> RuleContext:
    """pyright checks here that the engine is the interface the rules see."""
    return c
