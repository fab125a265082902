"""Checking one function body: names, types, shapes, gradients, mutability.

The checker walks the body once (loops until their variables' types settle),
with a flow-sensitive environment: each assignment gives a variable its type
from then on, branches join, a variable assigned on some paths only is
"maybe unassigned". Every expression's type is recorded for hovers and inlay
hints, every name's meaning for navigation, and the facts the param-read
analysis needs (field reads, calls that pass a model on, escapes,
`value_and_grad` sites) are collected for checker/reads.py.

The result depends only on the body's own text and on the interfaces of the
global names it looked up (`deps`), which is what lets the analysis reuse it
while other items change.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ast as A
from . import catalog as C
from . import shapes as S
from . import types as T
from .builtins import BUILTINS, CONSTANTS, MODEL_METHODS, Builtin
from .declarations import ALL_NAMES, FnInfo, Globals, ParamInfo, TypeContext, suggest
from .diagnostics import Fix, LocalDiagnostic, LocalRelated, SymbolRef, TextEdit

MAX_LOOP_PASSES = 4


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class Ref:
    """What a name (or field name) at one place refers to."""

    kind: str  # local | param | dim | generic | fn | extern | model | builtin | field | gradfield
    name: str
    owner: str | None = None  # model of a field; function of a param
    defs: tuple[A.Node, ...] = ()  # reaching definitions of a local


@dataclass(frozen=True)
class ReadFact:
    """One way a function's model parameter `param` is used.

    kind "field": reads field `target` at `span`;
    kind "call": passes it on as argument `index` of function `target`;
    kind "escape": hands it somewhere that may read anything (`target` says where).
    """

    kind: str
    param: str
    target: str
    span: A.Span
    index: int = 0


@dataclass(frozen=True)
class GradSite:
    """A `value_and_grad(f, m, ...)` call whose f is valid: where to report
    E1107/W1101 once f's reads are known."""

    call: A.Call
    f_span: A.Span
    f_name: str
    model: str


@dataclass
class BodyResult:
    diagnostics: tuple[LocalDiagnostic, ...]
    types: dict[A.Node, T.Type]
    refs: dict[A.Node, Ref]
    facts: frozenset[ReadFact]
    sites: tuple[GradSite, ...]
    deps: dict[str, object]
    # Static facts the compiler needs: the axis of each over= dim, resolved
    # shape literals, the callee kind of each call.
    axes: dict[A.Node, int | None]
    locals: dict[str, T.Type]


# ------------------------------------------------------------------ environment


@dataclass(frozen=True)
class Var:
    type: T.Type
    defs: frozenset[A.Node]
    maybe_unbound: bool = False
    origin: str | None = None  # the model parameter this value is (or aliases)
    param: ParamInfo | None = None  # still the parameter itself
    # Made up after an unknown name was reported, so later uses stay silent.
    phantom: bool = False


@dataclass
class Env:
    vars: dict[str, Var]
    dead: bool = False

    def copy(self) -> "Env":
        return Env(dict(self.vars), self.dead)


@dataclass
class _CallArg:
    node: A.Expr
    keyword: str | None
    span: A.Span
    arg: A.Arg | None = None


class _Loop:
    def __init__(self) -> None:
        self.breaks: list[Env] = []
        self.continues: list[Env] = []


class BodyChecker:
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
        self.facts: set[ReadFact] = set()
        self.sites: dict[A.Call, GradSite] = {}
        self.axes: dict[A.Node, int | None] = {}
        self.used: set[A.Node] = set()
        self.simple_defs: dict[A.Node, str] = {}
        self.loops: list[_Loop] = []
        # (code, name) pairs already reported once per function: a variable's
        # E0103/E0311 (keyed "var"), a model's E0501.
        self.reported_once: set[tuple[str, str]] = set()
        self.locals: dict[str, T.Type] = {}
        self.stop_grad_depth = 0
        self.reported_unreachable: set[int] = set()
        # value_and_grad calls bound to two names, or already reported (E0411)
        self.vag_bound: set[A.Node] = set()

    # -------------------------------------------------------------- entry

    def run(self) -> BodyResult:
        decl = self.fn.decl
        assert isinstance(decl, A.FnDecl)
        env = Env({})
        for p in self.fn.params:
            origin = p.name if isinstance(p.type, T.ModelT) else None
            env.vars[p.name] = Var(p.type, frozenset({p.decl}), origin=origin, param=p)
            self.types[p.decl.name] = p.type
            self.refs[p.decl.name] = Ref("param", p.name, self.fn.name)
        for name in self.recovered:
            env.vars.setdefault(name, Var(T.UNKNOWN, frozenset()))
        end = self.block(decl.body, env)
        if not end.dead and self.fn.declared_ret and not isinstance(self.fn.ret, (T.UnitT, T.UnknownT)) \
                and not self.partial:
            assert decl.ret is not None
            self.diags.append(C.E0407.at(decl.ret.span, name=self.fn.name, type=str(self.fn.ret)))
        for node, name in self.simple_defs.items():
            # A value that could not be typed already has its diagnostic.
            if not self.partial and node not in self.used and not name.startswith("_") and not T.is_unknown(self.types.get(node, T.UNKNOWN)):
                self.diags.append(C.W0101.at(node.span, name=name))
        return BodyResult(
            tuple(self.diags), self.types, self.refs, frozenset(self.facts), tuple(self.sites.values()),
            self.deps, self.axes, self.locals,
        )

    # -------------------------------------------------------------- globals

    def global_kind(self, name: str) -> str | None:
        self.deps[name] = self.g.fingerprint(name)
        return self.g.names.kinds.get(name)

    def all_names(self, env: Env) -> list[str]:
        self.deps[ALL_NAMES] = self.g.fingerprint(ALL_NAMES)
        return list(env.vars) + list(self.fn.generics) + list(self.g.names.kinds) + list(BUILTINS) + list(CONSTANTS)

    # -------------------------------------------------------------- statements

    def block(self, stmts: tuple[A.Stmt, ...], env: Env) -> Env:
        reported_here = False
        for i, s in enumerate(stmts):
            if env.dead:
                # Everything after a return/break/continue: one warning for
                # the rest of the block.
                first = stmts[i]
                if not reported_here and first.span.start not in self.reported_unreachable and not self.partial:
                    self.reported_unreachable.add(first.span.start)
                    span = A.Span(first.span.start, stmts[-1].span.end)
                    self.diags.append(C.W0102.at(span))
                reported_here = True
                # Still typed (for hovers), from a live copy; its diagnostics are
                # left out, since the code never runs.
                env = env.copy()
                env.dead = False
                saved = len(self.diags)
                defs = dict(self.simple_defs)
                env = self.stmt(s, env)
                del self.diags[saved:]
                self.simple_defs = defs  # nothing in dead code is "unused" on top
                env.dead = True
                continue
            env = self.stmt(s, env)
        return env

    def stmt(self, s: A.Stmt, env: Env) -> Env:
        if isinstance(s, A.Assign):
            return self.assign(s, env)
        if isinstance(s, A.AugAssign):
            return self.aug_assign(s, env)
        if isinstance(s, A.ExprStmt):
            if _is_vag(s.expr):
                self.vag_bound.add(s.expr)
                self.diags.append(C.E0411.at(s.expr.span, found="discarded", fix=self._vag_fix_statement(s)))
            self.expr(s.expr, env)
            return env
        if isinstance(s, A.Return):
            return self.return_(s, env)
        if isinstance(s, A.If):
            return self.if_(s, env)
        if isinstance(s, A.For):
            return self.for_(s, env)
        if isinstance(s, A.While):
            return self.while_(s, env)
        if isinstance(s, A.Break):
            if self.loops:
                self.loops[-1].breaks.append(env.copy())
            env = env.copy()
            env.dead = True
            return env
        if isinstance(s, A.Continue):
            if self.loops:
                self.loops[-1].continues.append(env.copy())
            env = env.copy()
            env.dead = True
            return env
        return env  # Pass

    def _vag_fix_statement(self, s: A.ExprStmt) -> Fix:
        return Fix("Bind the value and the gradient: l, g = ...", (TextEdit(A.Span(s.span.start, s.span.start), "l, g = "),))

    def assign(self, s: A.Assign, env: Env) -> Env:
        env = env.copy()
        if len(s.targets) == 1:
            target = s.targets[0]
            if _is_vag(s.value):
                fix = None
                if isinstance(target, A.Name):
                    g = _fresh_name("g", env)
                    fix = Fix(f"Bind the gradient too: {target.name}, {g} = ...",
                              (TextEdit(A.Span(target.span.end, target.span.end), f", {g}"),))
                self.diags.append(C.E0411.at(target.span, found="bound to one name", fix=fix))
                self.vag_bound.add(s.value)
                self.expr(s.value, env)
                self.bind_target(target, T.UNKNOWN, None, env, s.value)
                return env
            t = self.value(s.value, env)
            origin = self.origin_of(s.value, env)
            if isinstance(target, A.Field):
                self.assign_field(target, t, s.value, env)
            else:
                self.bind_target(target, t, origin, env, s.value, simple=True)
            return env
        # several names
        span = A.Span(s.targets[0].span.start, s.targets[-1].span.end)
        n = len(s.targets)
        if _is_vag(s.value):
            self.vag_bound.add(s.value)
            t = self.expr(s.value, env)
            if n != 2:
                self.diags.append(C.E0411.at(span, found=f"bound to {n} names"))
                t = T.UNKNOWN
        else:
            t = self.value(s.value, env)
            if isinstance(t, T.TupleT) and len(t.items) != n:
                self.diags.append(C.E0410.at(span, count=n, found=str(t)))
                t = T.UNKNOWN
            elif not isinstance(t, (T.TupleT, T.UnknownT)):
                self.diags.append(C.E0410.at(span, count=n, found=T.describe(t)))
                t = T.UNKNOWN
        for i, target in enumerate(s.targets):
            item = t.items[i] if isinstance(t, T.TupleT) else T.UNKNOWN
            self.bind_target(target, item, None, env, s.value)
        return env

    def aug_assign(self, s: A.AugAssign, env: Env) -> Env:
        env = env.copy()
        current = self.expr(s.target, env)
        value = self.value(s.value, env)
        result = self.binary_types(s.op, current, value, s.target, s.value, s.op_span, s)
        if isinstance(s.target, A.Field):
            self.assign_field(s.target, result, s.value, env)
        else:
            self.bind_target(s.target, result, None, env, s.value)
        return env

    def bind_target(self, target: A.Expr, t: T.Type, origin: str | None, env: Env, value: A.Expr,
                    simple: bool = False) -> None:
        if not isinstance(target, A.Name):
            return
        name = target.name
        kind = self.global_kind(name)
        if kind is not None and name not in env.vars:
            self.diags.append(C.E0111.at(target.span, name=name, what=_kind_phrase(kind)))
            return
        if name in self.fn.generics:
            self.diags.append(C.E0111.at(target.span, name=name, what="a generic dim of this function"))
            return
        current = env.vars.get(name)
        if current is not None and current.param is not None and current.param.mut:
            self.diags.append(C.E0504.at(target.span, name=name))
            return
        if isinstance(t, (T.UnitT,)):
            t = T.UNKNOWN
        env.vars[name] = Var(t, frozenset({target}), origin=origin)
        self.types[target] = t
        self.refs[target] = Ref("local", name, self.fn.name, (target,))
        self.locals[name] = t
        if simple:
            self.simple_defs[target] = name

    def assign_field(self, target: A.Field, t: T.Type, value: A.Expr, env: Env) -> None:
        obj_type = self.expr(target.value, env)
        if isinstance(obj_type, T.UnknownT):
            return
        if isinstance(obj_type, T.GradT):
            self.diags.append(C.E0505.at(target.span, model=obj_type.model))
            return
        if not isinstance(obj_type, T.ModelT):
            self.diags.append(C.E0107.at(target.name.span, name=target.name.text, owner=T.describe(obj_type), hint=""))
            return
        self.global_kind(obj_type.name)
        model = self.g.models.get(obj_type.name)
        if model is None:
            return
        finfo = model.field(target.name.text)
        var = env.vars.get(target.value.name) if isinstance(target.value, A.Name) else None
        if finfo is None:
            if not model.partial:
                self.diags.append(C.E0107.at(target.name.span, name=target.name.text, owner=f"model {model.name}",
                                             hint=suggest(target.name.text, [x.name for x in model.fields])))
            return
        self.refs[target.name] = Ref("field", finfo.name, model.name)
        self.types[target.name] = finfo.type
        if var is None or var.param is None or not var.param.mut:
            key = ("E0501", _expr_text(target.value))
            if key in self.reported_once:
                return  # once per model: one mistake, one diagnostic
            self.reported_once.add(key)
            if var is not None and var.param is not None:
                what = f"'{var.param.name}' is not a mut parameter"
                fix = Fix(f"Make '{var.param.name}' mut",
                          (TextEdit(A.Span(var.param.decl.span.start, var.param.decl.span.start), "mut "),))
            else:
                what = "fields change only through a mut parameter"
                fix = None
            self.diags.append(C.E0501.at(target.span, field=f"{_expr_text(target)}", why=what, fix=fix))
            return
        self.check_assignable(finfo.type, t, value.span, f"field {obj_type.name}.{finfo.name}: ",
                              related=(LocalRelated(f"{finfo.name} is declared here",
                                                    symbol=SymbolRef(("member", obj_type.name, finfo.name))),))

    def return_(self, s: A.Return, env: Env) -> Env:
        fn = self.fn
        if not s.values:
            if fn.declared_ret and not isinstance(fn.ret, (T.UnitT, T.UnknownT)):
                assert isinstance(fn.decl, A.FnDecl) and fn.decl.ret is not None
                self.diags.append(C.E0407.at(s.span, name=fn.name, type=str(fn.ret)))
        else:
            if len(s.values) == 1:
                t = self.value(s.values[0], env)
                self.escape_if_model(s.values[0], env, "returned")
            else:
                t = T.TupleT(tuple(self.value(v, env) for v in s.values))
                for v in s.values:
                    self.escape_if_model(v, env, "returned")
            span = A.Span(s.values[0].span.start, s.values[-1].span.end)
            if not fn.declared_ret:
                self.diags.append(C.E0408.at(span, name=fn.name, found=str(t)))
            else:
                self.check_assignable(fn.ret, t, span, "return value: ",
                                      related=(LocalRelated("return type declared here",
                                                            symbol=SymbolRef(("ret", fn.name))),))
        env = env.copy()
        env.dead = True
        return env

    def condition(self, e: A.Expr, env: Env) -> None:
        t = self.value(e, env)
        if isinstance(t, T.UnknownT):
            return
        if isinstance(t, T.NumberT) and t.kind == "Bool":
            return
        if isinstance(t, T.TensorT) and t.rank == 0 and t.elem.is_bool:
            return
        self.diags.append(C.E0307.at(e.span, found=T.describe(t)))

    def if_(self, s: A.If, env: Env) -> Env:
        outs: list[Env] = []
        current = env
        for b in s.branches:
            self.condition(b.cond, current)
            outs.append(self.block(b.body, current.copy()))
        if s.orelse is not None:
            outs.append(self.block(s.orelse, current.copy()))
        else:
            outs.append(current.copy())
        return self.join(env, outs, s)

    def join(self, before: Env, outs: list[Env], at: A.Node) -> Env:
        live = [o for o in outs if not o.dead]
        if not live:
            result = before.copy()
            result.dead = True
            return result
        result = Env({})
        names = set()
        for o in live:
            names.update(o.vars)
        for name in names:
            present = [o.vars[name] for o in live if name in o.vars]
            if any(v.phantom for v in present):
                result.vars[name] = Var(T.UNKNOWN, frozenset(), phantom=True)
                continue
            maybe = len(present) < len(live) or any(v.maybe_unbound for v in present)
            t = present[0].type
            clash = None
            for v in present[1:]:
                j = S.join(t, v.type)
                if j is None:
                    clash = v
                    break
                t = j
            defs = frozenset().union(*(v.defs for v in present))
            origins = {v.origin for v in present}
            origin = origins.pop() if len(origins) == 1 else None
            params = {v.param for v in present}
            param = params.pop() if len(params) == 1 else None
            if clash is not None:
                # Report at an assignment made on one of the paths (not the
                # value the variable had before them).
                old = before.vars.get(name)
                fresh = [v for v in present if old is None or v.defs != old.defs] or present
                here = fresh[-1]
                other = next(v for v in present if v is not here and S.join(v.type, here.type) is None)
                where = min(here.defs, key=lambda d: d.span.start, default=at)
                first_other = min(other.defs, key=lambda d: d.span.start, default=None)
                related = (LocalRelated(f"'{name}' is {other.type} here", span=first_other.span),) if first_other else ()
                if ("var", name) not in self.reported_once:
                    self.diags.append(C.E0311.at(where.span, name=name, first=str(here.type), second=str(other.type),
                                                 related=related))
                    self.reported_once.add(("var", name))
                t = T.UNKNOWN
            result.vars[name] = Var(t, defs, maybe, origin, param)
        return result

    def loop(self, body: tuple[A.Stmt, ...], env: Env, head, forever: bool = False) -> Env:
        """Check a loop body until its variables settle (their types and the
        assignments that reach the top of the body); only the final pass's
        diagnostics are kept, and every pass starts from the same reporting
        state, so a pass cannot hide what an earlier one found."""
        entry = env.copy()
        state = env.copy()
        anchor = body[0] if body else A.Pass(A.Span(0, 0))
        reported = (set(self.reported_once), set(self.reported_unreachable))
        for attempt in range(MAX_LOOP_PASSES):
            mark = len(self.diags)
            self.reported_once, self.reported_unreachable = set(reported[0]), set(reported[1])
            loop = _Loop()
            self.loops.append(loop)
            if head is not None:
                head(state)
            end = self.block(body, state.copy())
            self.loops.pop()
            back = self.join(entry, [end, *loop.continues], anchor)
            merged = self.join(entry, [entry, back], anchor)
            for name in [n for n, v in merged.vars.items() if v.phantom]:
                del merged.vars[name]  # the next pass reports the unknown name itself
            if _same_state(merged, state) or attempt == MAX_LOOP_PASSES - 1:
                # `while True:` leaves only through a break (or a return).
                exits = list(loop.breaks) if forever else [entry, back, *loop.breaks]
                if not exits:
                    dead = entry.copy()
                    dead.dead = True
                    return dead
                return self.join(entry, exits, anchor)
            del self.diags[mark:]
            state = merged

        return entry  # pragma: no cover

    def for_(self, s: A.For, env: Env) -> Env:
        it = s.iter
        ok = isinstance(it, A.Call) and isinstance(it.func, A.Name) and it.func.name == "range" \
            and "range" not in env.vars
        if ok:
            self.expr(it, env)
        else:
            t = self.value(it, env)
            if not isinstance(t, T.UnknownT):
                self.diags.append(C.E0414.at(it.span, found=T.describe(t)))

        def head(state: Env) -> None:
            state.vars[s.var.text] = Var(T.INT, frozenset({s.var}))
            self.types[s.var] = T.INT
            self.refs[s.var] = Ref("local", s.var.text, self.fn.name, (s.var,))
            self.locals[s.var.text] = T.INT

        out = self.loop(s.body, env, head)
        # The loop variable itself stays defined after a loop that ran.
        return out

    def while_(self, s: A.While, env: Env) -> Env:
        def head(state: Env) -> None:
            self.condition(s.cond, state)

        forever = isinstance(s.cond, A.BoolLit) and s.cond.value
        return self.loop(s.body, env, head, forever=forever)

    # -------------------------------------------------------------- expressions

    def value(self, e: A.Expr, env: Env) -> T.Type:
        """An expression whose result is used as a value."""
        t = self.expr(e, env)
        if isinstance(t, (T.FnRefT, T.BuiltinRefT, T.ModelClassT)):
            kind = {"FnRefT": "a function", "BuiltinRefT": "a built-in function", "ModelClassT": "a model"}[type(t).__name__]
            hint = ""
            if isinstance(t, T.ModelClassT):
                hint = f"; create one with {t.name}.init(seed=0)"
            self.diags.append(C.E0110.at(e.span, name=_expr_text(e), kind=kind, use=f"a value{hint}"))
            return T.UNKNOWN
        if isinstance(t, T.UnitT):
            self.diags.append(C.E0406.at(e.span, what=_expr_text(e)))
            return T.UNKNOWN
        if isinstance(t, T.RangeT):
            self.diags.append(C.E0414.at(e.span, found="range(...) outside a for loop"))
            return T.UNKNOWN
        return t

    def expr(self, e: A.Expr, env: Env) -> T.Type:
        t = self._expr(e, env)
        self.types[e] = t
        return t

    def _expr(self, e: A.Expr, env: Env) -> T.Type:
        if isinstance(e, A.Name):
            return self.name(e, env)
        if isinstance(e, A.IntLit):
            return T.NumberT("Int", e.value >= 0)
        if isinstance(e, A.FloatLit):
            return T.NumberT("Float", e.value >= 0)
        if isinstance(e, A.StrLit):
            return T.STR
        if isinstance(e, A.BoolLit):
            return T.BOOL_N
        if isinstance(e, A.TupleExpr):
            items = []
            for x in e.items:
                items.append(self.value(x, env))
                self.escape_if_model(x, env, "put in a tuple")
            return T.TupleT(tuple(items))
        if isinstance(e, A.Unary):
            return self.unary(e, env)
        if isinstance(e, A.Binary):
            lt = self.value(e.left, env)
            rt = self.value(e.right, env)
            return self.binary_types(e.op, lt, rt, e.left, e.right, e.op_span, e)
        if isinstance(e, A.Compare):
            return self.compare(e, env)
        if isinstance(e, A.BoolOp):
            for side in (e.left, e.right):
                self.boolean(side, env, e.op)
            return T.BOOL_N
        if isinstance(e, A.Not):
            self.boolean(e.operand, env, "not")
            return T.BOOL_N
        if isinstance(e, A.Call):
            return self.call(e, e.func, e.args, env, None)
        if isinstance(e, A.Pipe):
            return self.pipe(e, env)
        if isinstance(e, A.Field):
            return self.field_access(e, env)
        if isinstance(e, A.Index):
            return self.index(e, env)
        if isinstance(e, A.Cast):
            return self.cast(e, env)
        if isinstance(e, A.TensorType):
            self.diags.append(C.E0301.at(e.span, context="", expected="a value",
                                         found=f"the shape {_expr_text(e)} (shapes are arguments of randn, zeros, ...)"))
            return T.UNKNOWN
        return T.UNKNOWN  # pragma: no cover

    def name(self, e: A.Name, env: Env) -> T.Type:
        var = env.vars.get(e.name)
        if var is not None and var.phantom:
            return T.UNKNOWN
        if var is not None:
            if var.param is not None and var.defs == frozenset({var.param.decl}):
                self.refs[e] = Ref("param", e.name, self.fn.name, (var.param.decl,))
            else:
                self.refs[e] = Ref("local", e.name, self.fn.name, tuple(sorted(var.defs, key=lambda d: d.span.start)))
            self.used.update(var.defs)
            if var.maybe_unbound and ("var", e.name) not in self.reported_once and not self.partial:
                self.reported_once.add(("var", e.name))
                first = min(var.defs, key=lambda d: d.span.start, default=None)
                related = (LocalRelated(f"'{e.name}' is assigned here", span=first.span),) if first is not None else ()
                self.diags.append(C.E0103.at(e.span, name=e.name, related=related))
            return var.type
        if e.name in self.fn.generics:
            self.refs[e] = Ref("generic", e.name, self.fn.name)
            return T.NumberT("Int", True)
        kind = self.global_kind(e.name)
        if kind is not None:
            if kind == "dim":
                self.refs[e] = Ref("dim", e.name)
                return T.NumberT("Int", True)
            if kind in ("fn", "extern"):
                self.refs[e] = Ref(kind, e.name)
                return T.FnRefT(e.name, kind == "extern")
            if kind == "model":
                self.refs[e] = Ref("model", e.name)
                return T.ModelClassT(e.name)
            return T.UNKNOWN  # a broken item: its errors are reported there
        if e.name in CONSTANTS:
            self.refs[e] = Ref("builtin", e.name)
            return T.MODE
        if e.name in BUILTINS:
            self.refs[e] = Ref("builtin", e.name)
            return T.BuiltinRefT(e.name)
        if e.name in self.recovered:
            return T.UNKNOWN
        candidates = self.all_names(env)
        hint = suggest(e.name, candidates)
        self.diags.append(C.E0101.at(e.span, name=e.name, hint=hint))
        # The variable the typo meant is not "unused" (one mistake, one diagnostic).
        for name in env.vars:
            if hint == suggest(e.name, [name]) and hint:
                self.used.update(env.vars[name].defs)
        # Define it from here on, so one typo gives one diagnostic.
        env.vars[e.name] = Var(T.UNKNOWN, frozenset(), phantom=True)
        return T.UNKNOWN

    def origin_of(self, e: A.Expr, env: Env) -> str | None:
        if isinstance(e, A.Name):
            var = env.vars.get(e.name)
            if var is not None:
                return var.origin
        return None

    def fact(self, f: ReadFact) -> None:
        """Record a use of a model parameter; nothing under stop_grad(...)
        is differentiated, so reads there (direct or through calls) do not count."""
        if self.stop_grad_depth == 0:
            self.facts.add(f)

    def escape_if_model(self, e: A.Expr, env: Env, why: str) -> None:
        origin = self.origin_of(e, env)
        if origin is not None:
            self.fact(ReadFact("escape", origin, why, e.span))

    # -- operators

    def unary(self, e: A.Unary, env: Env) -> T.Type:
        t = self.value(e.operand, env)
        if isinstance(t, T.UnknownT):
            return t
        if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
            return T.NumberT(t.kind, t.nonneg and e.op == "+")
        if isinstance(t, T.TensorT) and not t.elem.is_bool:
            if e.op == "+":
                return t
            elem = t.elem.plain() if t.elem.index is None else T.Elem(t.elem.dtype)
            return T.TensorT(t.dims, elem)
        if isinstance(t, T.GradT):
            return t
        self.diags.append(C.E0306.at(e.span, op=f"unary '{e.op}'", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN

    def binary_types(self, op: str, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span,
                     node: A.Node) -> T.Type:
        if isinstance(lt, T.UnknownT) or isinstance(rt, T.UnknownT):
            return T.UNKNOWN
        if isinstance(lt, T.GradT) or isinstance(rt, T.GradT):
            return self.grad_arith(op, lt, rt, node)
        if op == "@":
            return self.matmul(lt, rt, left, right, op_span, node)
        if isinstance(lt, T.NumberT) and isinstance(rt, T.NumberT):
            return self.number_arith(op, lt, rt, node, right)
        lt_ok = isinstance(lt, (T.TensorT, T.NumberT))
        rt_ok = isinstance(rt, (T.TensorT, T.NumberT))
        if not (lt_ok and rt_ok):
            self.diags.append(C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt),
                                         detail=""))
            return T.UNKNOWN
        # tensor with tensor or number
        elem_l = lt.elem if isinstance(lt, T.TensorT) else None
        elem_r = rt.elem if isinstance(rt, T.TensorT) else None
        for el, side in ((elem_l, lt), (elem_r, rt)):
            if el is not None and el.is_bool:
                self.diags.append(C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt),
                                             detail="; Bool tensors take no arithmetic"))
                return T.UNKNOWN
            if isinstance(side, T.NumberT) and side.kind not in ("Int", "Float"):
                self.diags.append(C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt),
                                             detail=""))
                return T.UNKNOWN
        if elem_l is not None and elem_r is not None and elem_l.dtype != elem_r.dtype:
            self.diags.append(C.E0302.at(node.span, context=f"'{op}' needs one element type on both sides: ",
                                         expected=lt.show_elem(), found=rt.show_elem()))
            return T.UNKNOWN
        tensor_elem = elem_l or elem_r
        assert tensor_elem is not None
        number = lt if isinstance(lt, T.NumberT) else rt if isinstance(rt, T.NumberT) else None
        if number is not None and number.kind == "Float" and not tensor_elem.is_float:
            tensor = lt if isinstance(lt, T.TensorT) else rt
            self.diags.append(C.E0302.at(node.span, context=f"'{op}' of an integer tensor and a Float: ",
                                         expected=tensor.show_elem(), found="Float"))
            return T.UNKNOWN
        ld = lt.dims if isinstance(lt, T.TensorT) else ()
        rd = rt.dims if isinstance(rt, T.TensorT) else ()
        dims = S.broadcast(ld, rd)
        if isinstance(dims, S.DimClash):
            self.diags.append(C.E0202.at(node.span, op=op, left=str(lt), right=str(rt),
                                         a=str(dims.left), b=str(dims.right)))
            return T.UNKNOWN
        if op == "/" and tensor_elem.is_int:
            self.diags.append(C.E0310.at(node.span, what=f"'/' on {T.describe(lt if elem_l else rt)}",
                                         hint="; cast to a float type first"))
            return T.UNKNOWN
        refine = _refine_arith(op, lt, rt, right)
        if op == "*" and refine is None and A.same_path(left, right):
            refine = "nonneg"  # x * x
        elem = T.Elem(tensor_elem.dtype, refine if tensor_elem.is_float else None)
        return T.TensorT(dims, elem)

    def number_arith(self, op: str, lt: T.NumberT, rt: T.NumberT, node: A.Node, right: A.Expr) -> T.Type:
        if lt.kind not in ("Int", "Float") or rt.kind not in ("Int", "Float"):
            if op == "+" and lt.kind == rt.kind == "Str":
                return T.STR
            self.diags.append(C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt),
                                         detail=""))
            return T.UNKNOWN
        kind = "Float" if "Float" in (lt.kind, rt.kind) or op == "/" else "Int"
        nonneg = _refine_arith(op, lt, rt, right) is not None
        return T.NumberT(kind, nonneg)

    def matmul(self, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span, node: A.Node) -> T.Type:
        if not isinstance(lt, T.TensorT) or not isinstance(rt, T.TensorT):
            self.diags.append(C.E0306.at(node.span, op="'@'", left=T.describe(lt), right=" and " + T.describe(rt),
                                         detail="; @ multiplies two tensors"))
            return T.UNKNOWN
        if not lt.elem.is_float or not rt.elem.is_float:
            bad = lt if not lt.elem.is_float else rt
            self.diags.append(C.E0310.at(node.span, what=f"'@' on {T.describe(bad)}", hint=""))
            return T.UNKNOWN
        if lt.elem.dtype != rt.elem.dtype:
            self.diags.append(C.E0302.at(node.span, context="'@' needs one element type on both sides: ",
                                         expected=lt.show_elem(), found=rt.show_elem()))
            return T.UNKNOWN
        dims = S.matmul(lt.dims, rt.dims)
        if dims == "scalar":
            self.diags.append(C.E0210.at(node.span, what=f"'@' needs tensors of rank 1 or more, found {lt} @ {rt}"))
            return T.UNKNOWN
        if isinstance(dims, S.DimClash):
            self.diags.append(C.E0203.at(node.span, left=str(lt), right=str(rt), a=str(dims.left), b=str(dims.right)))
            return T.UNKNOWN
        refine = "nonneg" if lt.elem.nonneg and rt.elem.nonneg else None
        return T.TensorT(dims, T.Elem(lt.elem.dtype, refine))  # type: ignore[arg-type]

    def grad_arith(self, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
        if op in ("+", "-") and isinstance(lt, T.GradT) and isinstance(rt, T.GradT):
            if lt.model != rt.model:
                self.diags.append(C.E0904.at(node.span, context=f"'{op}' of gradients: ", expected=str(lt),
                                             found=str(rt)))
                return T.UNKNOWN
            return lt
        scale = lambda t: (isinstance(t, T.NumberT) and t.kind in ("Int", "Float")) or (  # noqa: E731
            isinstance(t, T.TensorT) and t.rank == 0 and not t.elem.is_bool)
        if op == "*" and ((isinstance(lt, T.GradT) and scale(rt)) or (isinstance(rt, T.GradT) and scale(lt))):
            return lt if isinstance(lt, T.GradT) else rt
        if op == "/" and isinstance(lt, T.GradT) and scale(rt):
            return lt
        self.diags.append(C.E1108.at(node.span, operation=f"{T.describe(lt)} {op} {T.describe(rt)}"))
        return T.UNKNOWN

    def compare(self, e: A.Compare, env: Env) -> T.Type:
        lt = self.value(e.left, env)
        rt = self.value(e.right, env)
        if isinstance(lt, T.UnknownT) or isinstance(rt, T.UnknownT):
            return T.UNKNOWN
        if isinstance(lt, T.GradT) or isinstance(rt, T.GradT):
            self.diags.append(C.E1108.at(e.span, operation=f"{T.describe(lt)} {e.op} {T.describe(rt)}"))
            return T.UNKNOWN
        if isinstance(lt, T.NumberT) and isinstance(rt, T.NumberT):
            numeric = {"Int", "Float"}
            if (lt.kind in numeric and rt.kind in numeric) or (lt.kind == rt.kind and e.op in ("==", "!=")):
                return T.BOOL_N
        elif isinstance(lt, (T.TensorT, T.NumberT)) and isinstance(rt, (T.TensorT, T.NumberT)):
            ld = lt.dims if isinstance(lt, T.TensorT) else ()
            rd = rt.dims if isinstance(rt, T.TensorT) else ()
            if any(isinstance(x, T.NumberT) and x.kind not in ("Int", "Float") for x in (lt, rt)):
                pass
            else:
                dims = S.broadcast(ld, rd)
                if isinstance(dims, S.DimClash):
                    self.diags.append(C.E0202.at(e.span, op=e.op, left=str(lt), right=str(rt),
                                                 a=str(dims.left), b=str(dims.right)))
                    return T.UNKNOWN
                el = lt.elem if isinstance(lt, T.TensorT) else None
                er = rt.elem if isinstance(rt, T.TensorT) else None
                if el is not None and er is not None and el.dtype != er.dtype:
                    self.diags.append(C.E0302.at(e.span, context=f"'{e.op}' needs one element type on both sides: ",
                                                 expected=lt.show_elem(), found=rt.show_elem()))
                    return T.UNKNOWN
                return T.TensorT(dims, T.BOOL)
        self.diags.append(C.E0306.at(e.span, op=f"'{e.op}'", left=T.describe(lt), right=" and " + T.describe(rt),
                                     detail=""))
        return T.UNKNOWN

    def boolean(self, e: A.Expr, env: Env, op: str) -> None:
        t = self.value(e, env)
        if isinstance(t, T.UnknownT):
            return
        if isinstance(t, T.NumberT) and t.kind == "Bool":
            return
        if isinstance(t, T.TensorT) and t.rank == 0 and t.elem.is_bool:
            return
        self.diags.append(C.E0306.at(e.span, op=f"'{op}'", left=T.describe(t), right="",
                                     detail="; it needs Bool values (use where() for elementwise choices)"))

    # -- fields, indexing, casts

    def field_access(self, e: A.Field, env: Env) -> T.Type:
        obj = self.expr(e.value, env)
        name = e.name.text
        if isinstance(obj, T.UnknownT):
            return T.UNKNOWN
        if isinstance(obj, T.ModelT):
            self.global_kind(obj.name)
            model = self.g.models.get(obj.name)
            if model is None:
                return T.UNKNOWN
            f = model.field(name)
            if f is None:
                if not model.partial:
                    self.diags.append(C.E0107.at(e.name.span, name=name, owner=f"model {obj.name}",
                                                 hint=suggest(name, [x.name for x in model.fields])))
                return T.UNKNOWN
            self.refs[e.name] = Ref("field", name, obj.name)
            self.types[e.name] = f.type
            origin = self.origin_of(e.value, env)
            if origin is not None and f.kind == "param":
                self.fact(ReadFact("field", origin, name, e.span))
            return f.type
        if isinstance(obj, T.GradT):
            self.global_kind(obj.model)
            model = self.g.models.get(obj.model)
            if model is None:
                return T.UNKNOWN
            f = model.field(name)
            if f is not None and f.kind == "buffer":
                self.diags.append(C.E0901.at(e.name.span, name=name, model=obj.model,
                                             related=(LocalRelated(f"{name} is a buffer of {obj.model}",
                                                                   symbol=SymbolRef(("member", obj.model, name))),)))
                return T.UNKNOWN
            if f is None:
                if not model.partial:
                    self.diags.append(C.E0107.at(e.name.span, name=name, owner=f"Grad[{obj.model}]",
                                                 hint=suggest(name, [x.name for x in model.params])))
                return T.UNKNOWN
            self.refs[e.name] = Ref("gradfield", name, obj.model)
            # A gradient has the param's shape and dtype, but no refinement:
            # the gradient of a NonNeg param can be negative.
            t = grad_field_type(f.type)
            self.types[e.name] = t
            return t
        if isinstance(obj, T.ModelClassT):
            self.diags.append(C.E0110.at(e.span, name=_expr_text(e), kind="a model method",
                                         use=f"a value; call it, as in {obj.name}.init(seed=0)"))
            return T.UNKNOWN
        self.diags.append(C.E0107.at(e.name.span, name=name, owner=T.describe(obj), hint=""))
        return T.UNKNOWN

    def index(self, e: A.Index, env: Env) -> T.Type:
        t = self.value(e.value, env)
        i = self.value(e.index, env)
        if isinstance(i, T.NumberT) and i.kind != "Int":
            self.diags.append(C.E0301.at(e.index.span, context="index: ", expected="Int", found=T.describe(i)))
            return T.UNKNOWN
        if not isinstance(i, (T.NumberT, T.UnknownT)):
            self.diags.append(C.E0301.at(e.index.span, context="index: ", expected="Int", found=T.describe(i)))
            return T.UNKNOWN
        if isinstance(t, T.UnknownT):
            return t
        if isinstance(t, T.TensorT):
            if t.rank == 0:
                self.diags.append(C.E0210.at(e.span, what=f"cannot index {t}: it has no dims"))
                return T.UNKNOWN
            return T.TensorT(t.dims[1:], t.elem)
        self.diags.append(C.E0306.at(e.span, op="indexing", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN

    def cast(self, e: A.Cast, env: Env) -> T.Type:
        src = self.value(e.value, env)
        target_expr = e.type
        if isinstance(target_expr, A.NamedType) and target_expr.name.text == "Grad":
            self.diags.append(C.E0303.at(e.type.span, what="a value cannot be cast to a gradient type"))
            return T.UNKNOWN
        # `x as f64`, `y as Index[C]`: an element type alone keeps the shape.
        elem_only = isinstance(target_expr, A.NamedType) and (
            target_expr.name.text in ("f16", "bf16", "f32", "f64", "i32", "i64", "NonNeg", "Prob")
            or target_expr.name.text == "Index"
        )
        ctx = self.type_context()
        if elem_only:
            assert isinstance(target_expr, A.NamedType)
            arg = target_expr.arg
            elem_node = A.ElemType(target_expr.span, target_expr.name,
                                   A.Ident(arg.span, arg.name.text) if isinstance(arg, A.NamedType) else None)
            elem = ctx.elem(elem_node)
            self._take(ctx)
            if elem is None or isinstance(src, T.UnknownT):
                return T.UNKNOWN
            if not isinstance(src, T.TensorT):
                self.diags.append(C.E0308.at(e.span, source=T.describe(src), target=str(elem),
                                             why="; an element type alone casts a tensor"))
                return T.UNKNOWN
            if target_expr.name.text in ("NonNeg", "Prob") and src.elem.is_float:
                # A refinement alone keeps the element type: `x as NonNeg` on f64 stays f64.
                elem = T.Elem(src.elem.dtype, elem.refine)
            target: T.Type = T.TensorT(src.dims, elem)
        else:
            target = ctx.resolve(target_expr)
            self._take(ctx)
        self.types[e.type] = target
        if isinstance(src, T.UnknownT) or isinstance(target, T.UnknownT):
            return target
        why = _cast_problem(src, target)
        if why is not None:
            self.diags.append(C.E0308.at(e.span, source=T.describe(src), target=str(target), why=why))
            return T.UNKNOWN
        return target

    def type_context(self) -> TypeContext:
        """For types written in the body (casts, shapes, over= dims)."""
        return TypeContext(self.g.names, "body", list(self.fn.generics), silent=self.fn.unbound)

    def _take(self, ctx: TypeContext) -> None:
        """Take a type context's diagnostics, and the global names it looked
        up as dependencies of this body."""
        self.diags.extend(ctx.diagnostics)
        ctx.diagnostics.clear()
        for name in ctx.lookups:
            self.deps[name] = self.g.fingerprint(name)
        ctx.lookups.clear()

    # -- calls

    def pipe(self, e: A.Pipe, env: Env) -> T.Type:
        target = e.target
        if isinstance(target, A.Call):
            return self.call(e, target.func, target.args, env, e.left, target)
        if isinstance(target, A.Name):
            return self.call(e, target, (), env, e.left, None)
        self.value(e.left, env)
        self.diags.append(C.E0409.at(target.span, what="the right side of |> must be a function or a call, as in x |> f(y)"))
        return T.UNKNOWN

    def call(self, node: A.Node, func: A.Expr, args: tuple[A.Arg, ...], env: Env, piped: A.Expr | None,
             inner_call: A.Call | None = None) -> T.Type:
        call_args: list[_CallArg] = []
        if piped is not None:
            call_args.append(_CallArg(piped, None, piped.span))
        for a in args:
            call_args.append(_CallArg(a.value, a.keyword.text if a.keyword else None, a.span, a))
        paren = node.paren_span if isinstance(node, A.Call) else (inner_call.paren_span if inner_call else node.span)
        # A model method: Mlp.init(seed=0)
        if isinstance(func, A.Field):
            recv = self.expr(func.value, env)
            if isinstance(recv, T.ModelClassT):
                self.types[func] = recv
                return self.model_method(node, recv, func, call_args, env, paren)
            if isinstance(recv, T.UnknownT):
                self._eval_args(call_args, env)
                return T.UNKNOWN
            if isinstance(recv, T.ModelT):
                self.diags.append(C.E0409.at(func.span, what=f"models have no methods; write {func.name.text}({_expr_text(func.value)}, ...)"))
            else:
                self.field_access(func, env)
            self._eval_args(call_args, env)
            return T.UNKNOWN
        if not isinstance(func, A.Name):
            self.value(func, env)
            self.diags.append(C.E0409.at(func.span, what="only a function can be called"))
            self._eval_args(call_args, env)
            return T.UNKNOWN
        var = env.vars.get(func.name)
        if var is not None:
            self.name(func, env)
            if not isinstance(var.type, T.UnknownT):
                self.diags.append(C.E0409.at(func.span, what=f"'{func.name}' is {T.describe(var.type)}, not a function"))
            self._eval_args(call_args, env)
            return T.UNKNOWN
        ftype = self.expr(func, env)
        if isinstance(ftype, T.FnRefT):
            info = self.g.fns.get(ftype.name)
            if info is None:
                self._eval_args(call_args, env)
                return T.UNKNOWN
            return self.user_call(node, info, call_args, env, paren)
        if isinstance(ftype, T.BuiltinRefT):
            return self.builtin_call(node, BUILTINS[ftype.name], call_args, env, paren)
        if isinstance(ftype, T.ModelClassT):
            self.diags.append(C.E0409.at(func.span, what=f"{func.name} is a model; create one with {func.name}.init(seed=0)"))
        elif isinstance(ftype, T.ModeT):
            self.diags.append(C.E0409.at(func.span, what="Eval is a mode, not a function; write Eval"))
        self._eval_args(call_args, env)
        return T.UNKNOWN

    def _eval_args(self, args: list[_CallArg], env: Env) -> None:
        for a in args:
            if isinstance(a.node, A.TensorType):
                continue
            self.expr(a.node, env)

    def bind_args(self, name: str, params: list[tuple[str, bool, bool]], args: list[_CallArg], paren: A.Span,
                  variadic: bool = False) -> tuple[dict[str, _CallArg], list[_CallArg]] | None:
        """Match arguments to parameters (name, required, keyword_only), as
        Python does. Reports E0401/E0402/E0403/E0404/E0405; None on failure."""
        bound: dict[str, _CallArg] = {}
        extra: list[_CallArg] = []
        positional = [p for p in params if not p[2]]
        pos_i = 0
        seen_keyword = False
        ok = True
        for a in args:
            if a.keyword is None:
                if seen_keyword:
                    self.diags.append(C.E0405.at(a.span))
                    return None
                if pos_i < len(positional):
                    bound[positional[pos_i][0]] = a
                    pos_i += 1
                elif variadic:
                    extra.append(a)
                else:
                    count = len(positional)
                    self.diags.append(C.E0401.at(a.span, name=name, expected=_count(count, "positional argument"),
                                                 found=str(len([x for x in args if x.keyword is None]))))
                    return None
            else:
                seen_keyword = True
                names = [p[0] for p in params]
                if a.keyword not in names:
                    self.diags.append(C.E0402.at(a.arg.keyword.span if a.arg and a.arg.keyword else a.span,
                                                 name=a.keyword, fn=name, hint=suggest(a.keyword, names)))
                    ok = False
                    continue
                if a.keyword in bound:
                    self.diags.append(C.E0404.at(a.span, name=a.keyword, fn=name))
                    ok = False
                    continue
                bound[a.keyword] = a
        if not ok:
            return None
        missing = [p for p in params if p[1] and p[0] not in bound]
        if missing:
            p = missing[0]
            if p[2]:
                self.diags.append(C.E0403.at(paren, name=name, param=f"{p[0]}="))
            else:
                count = len([x for x in params if x[1] and not x[2]])
                given = len([x for x in args if x.keyword is None])
                self.diags.append(C.E0401.at(paren, name=name, expected=_count(count, "positional argument"),
                                             found=str(given)))
            return None
        return bound, extra

    def user_call(self, node: A.Node, info: FnInfo, args: list[_CallArg], env: Env, paren: A.Span) -> T.Type:
        params = [(p.name, True, False) for p in info.params]
        matched = self.bind_args(info.name, params, args, paren)
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        return self.check_call_args(info, [(p, bound[p.name]) for p in info.params], env, node)

    def check_call_args(self, info: FnInfo, pairs: list[tuple[ParamInfo, _CallArg]], env: Env,
                        node: A.Node, first_index: int = 0) -> T.Type:
        bindings = S.Bindings(info.generics)
        ok = True
        for index, (p, a) in enumerate(pairs, start=first_index):
            t = self.value(a.node, env)
            origin = self.origin_of(a.node, env)
            if origin is not None:
                if info.extern:
                    self.fact(ReadFact("escape", origin, f"passed to extern fn {info.name}", a.node.span))
                else:
                    self.fact(ReadFact("call", origin, info.name, a.node.span, index))
            mismatch = S.match(p.type, t, bindings, p.name, a.node.span)
            if mismatch is not None:
                if mismatch.kind in ("refine", "index", "dtype"):
                    # The shape matched: show it bound (`[5] NonNeg`, not `[n] NonNeg`), so the
                    # message differs only where the types do.
                    mismatch = S.Mismatch(mismatch.kind, bindings.subst(mismatch.expected), mismatch.found)
                ok = False
                self.report_mismatch(mismatch, a.node.span, f"argument '{p.name}' of {info.name}: ",
                                     SymbolRef(("param", info.name, p.name)))
                continue
            if p.mut and isinstance(t, T.ModelT):
                var = env.vars.get(a.node.name) if isinstance(a.node, A.Name) else None
                src_param = var.param if var is not None else None
                if src_param is None and var is not None and var.origin is not None:
                    src_param = next((q for q in self.fn.params if q.name == var.origin), None)
                if src_param is not None and not src_param.mut:
                    fix = Fix(f"Make '{src_param.name}' mut",
                              (TextEdit(A.Span(src_param.decl.span.start, src_param.decl.span.start), "mut "),))
                    self.diags.append(C.E0502.at(a.node.span, name=src_param.name, fn=info.name, param=p.name,
                                                 fix=fix,
                                                 related=(LocalRelated(f"'{p.name}' is mut here",
                                                                       symbol=SymbolRef(("param", info.name, p.name))),)))
        if not ok:
            return T.UNKNOWN
        return bindings.subst(info.ret)

    def report_mismatch(self, m: S.Mismatch, span: A.Span, context: str, symbol: SymbolRef | None = None) -> None:
        related = (LocalRelated("declared here", symbol=symbol),) if symbol is not None else ()
        self._report_mismatch(m, span, context, related)

    def _report_mismatch(self, m: S.Mismatch, span: A.Span, context: str, related: tuple) -> None:
        expected, found = T.show_pair(m.expected, m.found)
        if m.kind == "binding":
            assert m.earlier is not None
            rel = (LocalRelated(f"{m.dim} is {m.earlier.dim} from argument '{m.earlier.where}'", span=m.earlier.span),)
            self.diags.append(C.E0205.at(span, context=context, dim=m.dim, first=str(m.earlier.dim),
                                         where=m.earlier.where, now=str(m.now), related=rel))
        elif m.kind == "shape":
            self.diags.append(C.E0201.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "dtype":
            self.diags.append(C.E0302.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "refine":
            self.diags.append(C.E0304.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "index":
            self.diags.append(C.E0305.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "model":
            self.diags.append(C.E0904.at(span, context=context, expected=str(m.expected), found=T.describe(m.found)))
        else:
            self.diags.append(C.E0301.at(span, context=context, expected=T.describe(m.expected),
                                         found=T.describe(m.found), related=related))

    def check_assignable(self, expected: T.Type, found: T.Type, span: A.Span, context: str,
                         related: tuple = ()) -> None:
        m = S.assignable(expected, found)
        if m is not None:
            self._report_mismatch(m, span, context, related)

    def model_method(self, node: A.Node, recv: T.ModelClassT, func: A.Field, args: list[_CallArg], env: Env,
                     paren: A.Span) -> T.Type:
        method = MODEL_METHODS.get(func.name.text)
        if method is None:
            self.diags.append(C.E0905.at(func.name.span, name=func.name.text, model=recv.name,
                                         hint=suggest(func.name.text, MODEL_METHODS)))
            self._eval_args(args, env)
            return T.UNKNOWN
        self.refs[func.name] = Ref("builtin", f"{recv.name}.{func.name.text}", recv.name)
        matched = self.bind_args(f"{recv.name}.init", [(p.name, p.required, p.keyword_only) for p in method.params],
                                 args, paren)
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        self.expect_number(bound["seed"], env, "Int", "seed")
        return T.ModelT(recv.name)

    def expect_number(self, a: _CallArg, env: Env, kind: str, what: str) -> bool:
        t = self.value(a.node, env)
        if isinstance(t, T.UnknownT):
            return False
        if isinstance(t, T.NumberT) and (t.kind == kind or (kind == "Float" and t.kind == "Int")):
            return True
        self.diags.append(C.E0301.at(a.node.span, context=f"{what}: ", expected=kind, found=T.describe(t)))
        return False

    # -- builtins

    def builtin_call(self, node: A.Node, b: Builtin, args: list[_CallArg], env: Env, paren: A.Span) -> T.Type:
        if b.name == "value_and_grad":
            return self.value_and_grad(node, args, env, paren)
        if b.name == "print":
            for a in args:
                if a.keyword is not None:
                    self.diags.append(C.E0402.at(a.arg.keyword.span if a.arg and a.arg.keyword else a.span,
                                                 name=a.keyword, fn="print", hint=""))
                    continue
                self.value(a.node, env)
                self.escape_if_model(a.node, env, "printed")
            return T.UNIT
        params = [(p.name, p.required, p.keyword_only) for p in b.params]
        matched = self.bind_args(b.name, params, args, paren, b.variadic)
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        rule = getattr(self, "_builtin_" + b.name, None)
        if rule is None:
            rule = self._builtin_elementwise
        return rule(node, b, bound, env)

    def tensor_arg(self, a: _CallArg, env: Env, fn: str, pname: str, float_only: bool = True) -> T.TensorT | None:
        t = self.value(a.node, env)
        if isinstance(t, T.UnknownT):
            return None
        if isinstance(t, T.GradT):
            self.diags.append(C.E1108.at(a.node.span, operation=f"{fn}({T.describe(t)})"))
            return None
        if not isinstance(t, T.TensorT):
            self.diags.append(C.E0301.at(a.node.span, context=f"argument '{pname}' of {fn}: ", expected="a tensor",
                                         found=T.describe(t)))
            return None
        if float_only and not t.elem.is_float:
            self.diags.append(C.E0310.at(a.node.span, what=f"{fn} of {T.describe(t)}", hint="; cast it with `as`"))
            return None
        return t

    def dim_arg(self, a: _CallArg, env: Env, operand: T.TensorT, fn: str) -> int | None:
        """Resolve `over=d` to an axis of `operand` (None after an error)."""
        e = a.node
        if not isinstance(e, A.Name):
            self.value(e, env)
            self.diags.append(C.E0301.at(e.span, context="over=: ", expected="a dim name", found=_expr_text(e)))
            return None
        name = e.name
        ctx = self.type_context()
        dim = ctx.dim(A.DimName(e.span, name))
        self._take(ctx)
        if isinstance(dim, T.DimUnknown):
            return None
        self.refs[e] = Ref("generic", name, self.fn.name) if isinstance(dim, T.DimVar) else Ref("dim", name)
        self.types[e] = T.NumberT("Int", True)
        hits = [i for i, d in enumerate(operand.dims) if T.dims_equal(d, dim) and not isinstance(d, T.DimUnknown)]
        if any(isinstance(d, T.DimUnknown) for d in operand.dims) and not hits:
            return None
        if not hits:
            self.diags.append(C.E0204.at(e.span, dim=name, operand=str(operand)))
            return None
        if len(hits) > 1:
            self.diags.append(C.E0209.at(e.span, dim=name, operand=str(operand)))
            return None
        return hits[0]

    def _builtin_elementwise(self, node, b: Builtin, bound, env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, b.name, "x", float_only=b.name != "abs")
        if t is None:
            return T.UNKNOWN
        if b.name == "abs" and t.elem.is_bool:
            self.diags.append(C.E0306.at(bound["x"].node.span, op="abs", left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        refine = {"relu": "nonneg", "exp": "nonneg", "sqrt": "nonneg", "abs": "nonneg", "sigmoid": "prob"}.get(b.name)
        if b.name == "abs" and not t.elem.is_float:
            return T.TensorT(t.dims, T.Elem(t.elem.dtype))
        return T.TensorT(t.dims, T.with_refine(t.elem, refine))

    def _builtin_stop_grad(self, node, b, bound, env) -> T.Type:
        self.stop_grad_depth += 1
        try:
            t = self.tensor_arg(bound["x"], env, "stop_grad", "x", float_only=False)
        finally:
            self.stop_grad_depth -= 1
        return t if t is not None else T.UNKNOWN

    def _builtin_transpose(self, node, b, bound, env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "transpose", "x", float_only=False)
        if t is None:
            return T.UNKNOWN
        if t.rank < 2:
            self.diags.append(C.E0210.at(bound["x"].node.span, what=f"transpose needs 2 dims or more, found {t}"))
            return T.UNKNOWN
        return T.TensorT(t.dims[:-2] + (t.dims[-1], t.dims[-2]), t.elem)

    def _softmaxish(self, node, b, bound, env, refine: str | None) -> T.Type:
        t = self.tensor_arg(bound["x"], env, b.name, "x")
        if t is None:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.UNKNOWN
        axis = self.dim_arg(bound["over"], env, t, b.name)
        self.axes[node] = axis
        if axis is None:
            return T.UNKNOWN
        return T.TensorT(t.dims, T.with_refine(t.elem, refine))

    def _eval_dim_quietly(self, a: _CallArg | None, env: Env) -> None:
        if a is not None and isinstance(a.node, A.Name):
            if a.node.name in self.fn.generics:
                self.refs[a.node] = Ref("generic", a.node.name, self.fn.name)
            elif self.global_kind(a.node.name) == "dim":
                self.refs[a.node] = Ref("dim", a.node.name)

    def _builtin_softmax(self, node, b, bound, env) -> T.Type:
        return self._softmaxish(node, b, bound, env, "prob")

    def _builtin_log_softmax(self, node, b, bound, env) -> T.Type:
        return self._softmaxish(node, b, bound, env, None)

    def _reduce(self, node, b: Builtin, bound, env) -> T.Type:
        float_only = b.name == "mean"
        t = self.tensor_arg(bound["x"], env, b.name, "x", float_only=float_only)
        if t is None:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.UNKNOWN
        if t.elem.is_bool and b.name != "sum":
            self.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        elem = t.elem
        if b.name == "sum":
            elem = T.Elem("i64") if elem.is_bool else T.with_refine(T.Elem(elem.dtype), "nonneg" if elem.nonneg else None)
        elif b.name == "mean":
            elem = T.with_refine(T.Elem(elem.dtype), elem.refine)
        # max / min keep the element type, refinement and Index included
        over = bound.get("over")
        if over is None:
            self.axes[node] = None
            return T.TensorT((), elem)
        axis = self.dim_arg(over, env, t, b.name)
        self.axes[node] = axis
        if axis is None:
            return T.UNKNOWN
        return T.TensorT(t.dims[:axis] + t.dims[axis + 1:], elem)

    _builtin_sum = _reduce
    _builtin_mean = _reduce
    _builtin_max = _reduce
    _builtin_min = _reduce

    def _builtin_argmax(self, node, b, bound, env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "argmax", "x", float_only=False)
        if t is None:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.UNKNOWN
        axis = self.dim_arg(bound["over"], env, t, "argmax")
        self.axes[node] = axis
        if axis is None:
            return T.UNKNOWN
        return T.TensorT(t.dims[:axis] + t.dims[axis + 1:], T.index_of(t.dims[axis]))

    def _builtin_cross_entropy(self, node, b, bound, env) -> T.Type:
        logits = self.tensor_arg(bound["logits"], env, "cross_entropy", "logits")
        labels_t = self.value(bound["labels"].node, env)
        if logits is None:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.scalar(T.NONNEG)
        axis = self.dim_arg(bound["over"], env, logits, "cross_entropy")
        self.axes[node] = axis
        if axis is None:
            return T.scalar(T.Elem(logits.elem.dtype, "nonneg"))
        class_dim = logits.dims[axis]
        want_dims = logits.dims[:axis] + logits.dims[axis + 1:]
        want = T.TensorT(want_dims, T.index_of(class_dim))
        if isinstance(labels_t, T.UnknownT):
            pass
        elif not isinstance(labels_t, T.TensorT):
            self.diags.append(C.E0301.at(bound["labels"].node.span, context="labels of cross_entropy: ",
                                         expected=str(want), found=T.describe(labels_t)))
        elif labels_t.rank != len(want_dims) or not all(T.dims_equal(x, y) for x, y in zip(labels_t.dims, want_dims)):
            self.diags.append(C.E0201.at(bound["labels"].node.span, context="labels of cross_entropy: ",
                                         expected=str(want), found=str(labels_t)))
        elif labels_t.elem.index is None or not T.dims_equal(labels_t.elem.index, class_dim):
            over_name = bound["over"].node.name if isinstance(bound["over"].node, A.Name) else str(class_dim)
            if labels_t.elem.index is not None:
                detail = f"the labels index {labels_t.elem.index}, but over={over_name}"
            else:
                detail = f"the labels must be Index[{class_dim}] to index over={over_name}"
            self.diags.append(C.E0305.at(bound["labels"].node.span, context=f"{detail}: ",
                                         expected=str(want), found=str(labels_t)))
        return T.scalar(T.Elem(logits.elem.dtype, "nonneg"))

    def _builtin_mse(self, node, b, bound, env) -> T.Type:
        p = self.tensor_arg(bound["pred"], env, "mse", "pred")
        t = self.tensor_arg(bound["target"], env, "mse", "target")
        if p is None or t is None:
            return T.scalar(T.NONNEG)
        if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
            self.diags.append(C.E0201.at(bound["target"].node.span, context="target of mse (same shape as pred): ",
                                         expected=str(T.TensorT(p.dims, t.elem)), found=str(t)))
        elif p.elem.dtype != t.elem.dtype:
            self.diags.append(C.E0302.at(node.span, context="mse needs one element type: ",
                                         expected=p.show_elem(), found=t.show_elem()))
        return T.scalar(T.Elem(p.elem.dtype, "nonneg"))

    def _builtin_dropout(self, node, b, bound, env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "dropout", "x")
        self.expect_number(bound["p"], env, "Float", "p")
        mode = self.value(bound["mode"].node, env)
        if not isinstance(mode, (T.ModeT, T.UnknownT)):
            self.diags.append(C.E0301.at(bound["mode"].node.span, context="mode of dropout: ", expected="Mode",
                                         found=T.describe(mode)))
        p_node = bound["p"].node
        if isinstance(p_node, (A.FloatLit, A.IntLit)) and not (0 <= p_node.value < 1):
            self.diags.append(C.E0301.at(p_node.span, context="p of dropout: ", expected="a probability in [0, 1)",
                                         found=str(p_node.value)))
        if t is None:
            return T.UNKNOWN
        return T.TensorT(t.dims, T.with_refine(t.elem, "nonneg" if t.elem.nonneg else None))

    def _builtin_where(self, node, b, bound, env) -> T.Type:
        c = self.value(bound["cond"].node, env)
        a = self.value(bound["a"].node, env)
        bb = self.value(bound["b"].node, env)
        if any(isinstance(x, T.UnknownT) for x in (c, a, bb)):
            return T.UNKNOWN
        if not (isinstance(c, T.TensorT) and c.elem.is_bool):
            self.diags.append(C.E0301.at(bound["cond"].node.span, context="cond of where: ", expected="a Bool tensor",
                                         found=T.describe(c)))
            return T.UNKNOWN
        for x, k in ((a, "a"), (bb, "b")):
            if not isinstance(x, (T.TensorT, T.NumberT)) or (isinstance(x, T.NumberT) and x.kind not in ("Int", "Float")):
                self.diags.append(C.E0301.at(bound[k].node.span, context=f"{k} of where: ", expected="a tensor or number",
                                             found=T.describe(x)))
                return T.UNKNOWN
        elems = [x.elem for x in (a, bb) if isinstance(x, T.TensorT)]
        if len(elems) == 2 and elems[0].dtype != elems[1].dtype:
            self.diags.append(C.E0302.at(node.span, context="where needs one element type for a and b: ",
                                         expected=a.show_elem(), found=bb.show_elem()))  # type: ignore[union-attr]
            return T.UNKNOWN
        elem = elems[0] if elems else T.F32
        if len(elems) == 2:
            j = S.join(T.TensorT((), elems[0]), T.TensorT((), elems[1]))
            elem = j.elem if isinstance(j, T.TensorT) else elems[0].plain()
        else:
            elem = elem.plain() if elem.index is None else T.Elem(elem.dtype)
        dims: object = c.dims
        for x in (a, bb):
            if isinstance(x, T.TensorT):
                dims = S.broadcast(dims, x.dims)  # type: ignore[arg-type]
                if isinstance(dims, S.DimClash):
                    self.diags.append(C.E0202.at(node.span, op="where", left=str(c), right=str(x),
                                                 a=str(dims.left), b=str(dims.right)))
                    return T.UNKNOWN
        return T.TensorT(dims, elem)  # type: ignore[arg-type]

    def _builtin_norm(self, node, b, bound, env) -> T.Type:
        t = self.value(bound["x"].node, env)
        if isinstance(t, T.GradT):
            self.global_kind(t.model)
            model = self.g.models.get(t.model)
            dtype = "f32"
            if model is not None and model.params and isinstance(model.params[0].type, T.TensorT):
                dtype = model.params[0].type.elem.dtype
            return T.scalar(T.Elem(dtype, "nonneg"))
        if isinstance(t, T.UnknownT):
            return T.scalar(T.NONNEG)
        if isinstance(t, T.TensorT) and t.elem.is_float:
            return T.scalar(T.Elem(t.elem.dtype, "nonneg"))
        self.diags.append(C.E0301.at(bound["x"].node.span, context="argument of norm: ",
                                     expected="a gradient or a float tensor", found=T.describe(t)))
        return T.UNKNOWN

    def shape_arg(self, a: _CallArg, fn: str) -> T.TensorT | None:
        if not isinstance(a.node, A.TensorType):
            self.diags.append(C.E0301.at(a.node.span, context=f"shape of {fn}: ", expected="a shape such as [64 D]",
                                         found=_expr_text(a.node)))
            return None
        ctx = self.type_context()
        t = ctx.resolve(a.node)
        self._take(ctx)
        for d in a.node.dims:
            if isinstance(d, A.DimName):
                if d.name in self.fn.generics:
                    self.refs[d] = Ref("generic", d.name, self.fn.name)
                elif self.g.names.kinds.get(d.name) == "dim":
                    self.refs[d] = Ref("dim", d.name)
        self.types[a.node] = t
        return t if isinstance(t, T.TensorT) else None

    def _builtin_randn(self, node, b, bound, env) -> T.Type:
        t = self.shape_arg(bound["shape"], "randn")
        self.expect_number(bound["seed"], env, "Int", "seed")
        if t is None:
            return T.UNKNOWN
        if not t.elem.is_float or t.elem.refine is not None:
            self.diags.append(C.E0309.at(bound["shape"].node.span,
                                         what=f"randn gives plain floats; found element type {t.elem}"))
            return T.UNKNOWN
        return t

    def _builtin_randint(self, node, b, bound, env) -> T.Type:
        t = self.shape_arg(bound["shape"], "randint")
        self.expect_number(bound["seed"], env, "Int", "seed")
        if t is None:
            return T.UNKNOWN
        if t.elem.index is None:
            self.diags.append(C.E0309.at(bound["shape"].node.span,
                                         what=f"randint needs an Index[C] element type, as in [64] Index[C]; found {t.elem}"))
            return T.UNKNOWN
        return t

    def _builtin_zeros(self, node, b, bound, env) -> T.Type:
        t = self.shape_arg(bound["shape"], b.name)
        if t is None:
            return T.UNKNOWN
        return t

    _builtin_ones = _builtin_zeros

    def _builtin_range(self, node, b, bound, env) -> T.Type:
        for k in ("start", "stop", "step"):
            if k in bound:
                self.expect_number(bound[k], env, "Int", f"{k} of range")
        return T.RangeT()

    def _builtin_Train(self, node, b, bound, env) -> T.Type:
        self.expect_number(bound["seed"], env, "Int", "seed")
        return T.MODE

    # -- value_and_grad

    def value_and_grad(self, node: A.Node, args: list[_CallArg], env: Env, paren: A.Span) -> T.Type:
        misused = node not in self.vag_bound
        if misused:
            # Returned, passed on, put in a tuple, piped...: its two results
            # are only ever bound to two names.
            self.vag_bound.add(node)
            self.diags.append(C.E0411.at(node.span, found="used as a value"))
        result = self._value_and_grad(node, args, env, paren)
        return T.UNKNOWN if misused else result

    def _value_and_grad(self, node: A.Node, args: list[_CallArg], env: Env, paren: A.Span) -> T.Type:
        positional = [a for a in args if a.keyword is None]
        if len(positional) < 2 or any(a.keyword is not None for a in args[:2]):
            self.diags.append(C.E0401.at(paren, name="value_and_grad", expected="at least 2 positional arguments (f, m)",
                                         found=str(len(positional))))
            self._eval_args(args, env)
            return T.UNKNOWN
        f_arg, m_arg = args[0], args[1]
        rest = args[2:]
        info = self.vag_function(f_arg, env)
        if info is None:
            for a in args[1:]:
                self.value(a.node, env)
            return T.UNKNOWN
        # as a call f(m, args...)
        params = [(p.name, True, False) for p in info.params[1:]]
        matched = self.bind_args(info.name, params, rest, paren)
        if matched is None:
            for a in args[1:]:
                self.value(a.node, env)
            return T.UNKNOWN
        bound, _ = matched
        m_type = self.value(m_arg.node, env)
        first = info.params[0]
        assert isinstance(first.type, T.ModelT)
        model_ok = True
        if isinstance(m_type, T.UnknownT):
            model_ok = False
        elif not (isinstance(m_type, T.ModelT) and m_type.name == first.type.name):
            self.diags.append(C.E0904.at(m_arg.node.span, context=f"the model of {info.name}'s first parameter: ",
                                         expected=first.type.name, found=T.describe(m_type),
                                         ))
            model_ok = False
        origin = self.origin_of(m_arg.node, env)
        if origin is not None:
            self.fact(ReadFact("call", origin, info.name, m_arg.node.span, 0))
        pairs = [(p, bound[p.name]) for p in info.params[1:]]
        ret = self.check_call_args(info, pairs, env, node, first_index=1)
        # f must return a [] of floats
        declared = info.ret
        bad_ret = not (isinstance(declared, T.TensorT) and declared.rank == 0 and declared.elem.is_float)
        if bad_ret and not isinstance(declared, T.UnknownT):
            self.diags.append(C.E1106.at(f_arg.node.span, name=info.name, found=str(declared) if info.declared_ret else "nothing",
                                         related=((LocalRelated("return type declared here",
                                                                symbol=SymbolRef(("ret", info.name))),)
                                                  if info.declared_ret else ())))
            return T.UNKNOWN
        if not model_ok or isinstance(ret, T.UnknownT):
            return T.TupleT((declared if not bad_ret else T.UNKNOWN, T.GradT(first.type.name)))
        assert isinstance(f_arg.node, A.Name)
        self.sites[node] = GradSite(node, f_arg.node.span, info.name, first.type.name)  # type: ignore[index]
        return T.TupleT((ret, T.GradT(first.type.name)))

    def vag_function(self, f_arg: _CallArg, env: Env) -> FnInfo | None:
        """The fn named by value_and_grad's first argument, or None after E1105."""
        e = f_arg.node
        what = None
        if not isinstance(e, A.Name) or e.name in env.vars:
            if not isinstance(e, A.Name):
                self.value(e, env)
            else:
                self.name(e, env)
            t = self.types.get(e)
            if isinstance(t, T.UnknownT):
                return None
            what = "a value" if not isinstance(e, A.Name) else f"'{e.name}' is a local value"
        else:
            t = self.expr(e, env)
            if isinstance(t, T.UnknownT):
                return None
            if isinstance(t, T.FnRefT) and t.extern:
                what = f"'{e.name}' is an extern fn"
            elif isinstance(t, T.BuiltinRefT):
                what = f"'{e.name}' is a built-in"
            elif not isinstance(t, T.FnRefT):
                what = f"'{e.name}' is {T.describe(t)}"
        if what is not None:
            self.diags.append(C.E1105.at(e.span, problem=f"f must be the name of a fn; {what}"))
            return None
        assert isinstance(e, A.Name)
        info = self.g.fns.get(e.name)
        if info is None:
            return None
        if not info.params or not isinstance(info.params[0].type, T.ModelT):
            first = info.params[0].type if info.params else None
            if isinstance(first, T.UnknownT):
                return None
            problem = f"the first parameter of {info.name} must be a model" + (
                f", found {T.describe(first)}" if first is not None else "; it has no parameters")
            self.diags.append(C.E1105.at(e.span, problem=problem,
                                         related=(LocalRelated(f"{info.name} is declared here",
                                                               symbol=SymbolRef(("fn", info.name))),)))
            return None
        muts = [p for p in info.params if p.mut]
        if muts:
            self.diags.append(C.E1105.at(e.span, problem=f"{info.name} has a mut parameter '{muts[0].name}'",
                                         related=(LocalRelated("mut parameter declared here",
                                                               symbol=SymbolRef(("param", info.name, muts[0].name))),)))
            return None
        return info


# ------------------------------------------------------------------ helpers


def grad_field_type(t: T.Type) -> T.Type:
    """The type of a gradient's field for a param of type `t`."""
    if isinstance(t, T.TensorT):
        return T.TensorT(t.dims, t.elem.plain())
    return t


def _is_vag(e: A.Expr) -> bool:
    return isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.name == "value_and_grad"


def _fresh_name(base: str, env: Env) -> str:
    if base not in env.vars:
        return base
    i = 2
    while f"{base}{i}" in env.vars:
        i += 1
    return f"{base}{i}"


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _kind_phrase(kind: str) -> str:
    kind = kind.removeprefix("broken-")
    return {"dim": "a dim", "model": "a model", "fn": "a function", "extern": "an extern fn"}.get(kind, kind)


def _same_state(a: Env, b: Env) -> bool:
    if set(a.vars) != set(b.vars):
        return False
    return all(
        a.vars[k].type == b.vars[k].type and a.vars[k].maybe_unbound == b.vars[k].maybe_unbound
        and a.vars[k].defs == b.vars[k].defs
        for k in a.vars
    )


def _refine_arith(op: str, lt: T.Type, rt: T.Type, right: A.Expr) -> str | None:
    def nonneg(t: T.Type) -> bool:
        if isinstance(t, T.NumberT):
            return t.nonneg
        return isinstance(t, T.TensorT) and t.elem.nonneg

    def prob(t: T.Type) -> bool:
        return isinstance(t, T.TensorT) and t.elem.refine == "prob"

    if op == "*" and prob(lt) and prob(rt):
        return "prob"
    if op in ("+", "*", "/") and nonneg(lt) and nonneg(rt):
        return "nonneg"
    # x ** 2 (any even integer literal) is never negative.
    if op == "**" and (nonneg(lt) or (isinstance(right, A.IntLit) and right.value % 2 == 0)):
        return "nonneg"
    return None


def _cast_problem(src: T.Type, target: T.Type) -> str | None:
    if isinstance(target, (T.ModelT, T.ModeT, T.TupleT)) or isinstance(src, (T.ModelT, T.GradT, T.ModeT, T.TupleT)):
        return "; only tensors and numbers can be cast"
    if isinstance(src, T.TensorT) and isinstance(target, T.TensorT):
        if src.rank != target.rank or not all(T.dims_equal(a, b) for a, b in zip(src.dims, target.dims)):
            return "; a cast cannot change the shape"
        if target.elem.index is not None and not (src.elem.is_int):
            return "; only integer tensors can be cast to an Index"
        if target.elem.refine is not None and not src.elem.is_float:
            return "; only float tensors can be refined"
        return None
    if isinstance(src, T.TensorT) and isinstance(target, T.NumberT):
        if src.rank != 0:
            return "; only a [] tensor converts to a number"
        return None if target.kind in ("Int", "Float", "Bool") else "; a tensor does not convert to a string"
    if isinstance(src, T.NumberT) and isinstance(target, T.TensorT):
        if target.rank != 0:
            return "; a number converts only to a [] tensor"
        return None if src.kind in ("Int", "Float", "Bool") else "; a string does not convert to a tensor"
    if isinstance(src, T.NumberT) and isinstance(target, T.NumberT):
        if "Str" in (src.kind, target.kind) and src.kind != target.kind:
            return "; strings do not convert"
        return None
    return "; these types do not convert"


def _expr_text(e: A.Node) -> str:
    """A short rendering of an expression for messages."""
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        return f"{_expr_text(e.value)}.{e.name.text}"
    if isinstance(e, A.Call):
        return f"{_expr_text(e.func)}(...)"
    if isinstance(e, A.IntLit) or isinstance(e, A.FloatLit):
        return str(e.value)
    if isinstance(e, A.TensorType):
        dims = " ".join(d.name if isinstance(d, A.DimName) else str(d.value) for d in e.dims)
        elem = "" if e.elem is None else " " + e.elem.name.text + (f"[{e.elem.arg.text}]" if e.elem.arg else "")
        return f"[{dims}]{elem}"
    return "this expression"


def check_body(fn: FnInfo, glob: Globals, recovered: tuple[str, ...] = (), partial: bool = False) -> BodyResult:
    return BodyChecker(fn, glob, recovered, partial).run()

