"""Statements and control flow: assignments, returns, branches that join,
loops that run until their variables' types settle."""

from __future__ import annotations

import dataclasses

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import member_conditions as MC
from .. import shapes as S
from .. import types as T
from ..declarations import kind_word, suggest
from ..diagnostics import Fix, LocalRelated, Severity, SymbolRef, TextEdit
from ..model_lists import is_model_list
from ..results import Ref
from .engine_api import EngineBase
from .env import Env, Loop, Var, fresh_name, same_state
from .features.gradients import is_vag
from .features.optimizers import assign_optimizer_field
from .features.schedules import assign_schedule_field
from .lists import TUPLE_WALKS, append_call, appends_to
from .text import expr_text

# Built-ins called for an effect that give a value too (W0104 leaves them
# alone; those that give nothing are never reported).
_EFFECT_BUILTINS = frozenset({"load"})


# A loop body is checked until its variables' types settle, at most this often.
MAX_LOOP_PASSES = 4


class FlowRules(EngineBase):
    # -------------------------------------------------------------- statements

    def block(self, stmts: tuple[A.Stmt, ...], env: Env) -> Env:
        facts = self.known_facts  # what an `if` that returns proves holds to the block's end
        self.known_facts = list(facts)
        env = self._block(stmts, env)
        self.known_facts = facts
        return env

    def _block(self, stmts: tuple[A.Stmt, ...], env: Env) -> Env:
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
        self.env_now = env  # types written in it read its Int variables as sizes
        if isinstance(s, A.Assign):
            return self.assign(s, env)
        if isinstance(s, A.AugAssign):
            return self.aug_assign(s, env)
        if isinstance(s, A.ExprStmt):
            call = append_call(s.expr)
            if call is not None and isinstance(self.list_var(call, env), T.ListT):
                return self.list_method(call, env, statement=True)  # hs.append(h)
            if is_vag(s.expr):
                self.vag_bound.add(s.expr)
                self.diags.append(C.E0411.at(s.expr.span, found="discarded", fix=self._vag_fix_statement(s)))
            t = self.expr(s.expr, env)
            self._dropped_value(s.expr, t)
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

    def _dropped_value(self, e: A.Expr, t: T.Type) -> None:
        """W0104: a statement that is a built-in's pure value or an operator's,
        dropped (`log(x)` meant as a metric, `x + 1.0`). A user fn may change
        a `mut` argument, and `load` reads into its arguments: never reported."""
        if isinstance(t, (T.UnitT, T.UnknownT)):
            return
        if isinstance(e, A.Call):
            if not isinstance(e.func, A.Name) or self.refs.get(e.func) is None:
                return
            ref = self.refs[e.func]
            if ref.kind != "builtin" or e.func.name in _EFFECT_BUILTINS:
                return
        elif not isinstance(e, (A.Binary, A.Unary)):
            return
        hint = ""
        if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.name == "log":
            hint = "; to log a metric, name it: log(step, name=value)"
        self.diags.append(C.W0104.at(e.span, expr=expr_text(e), found=T.describe(t), hint=hint))

    def _vag_fix_statement(self, s: A.ExprStmt) -> Fix:
        return Fix(
            "Bind the value and the gradient: l, g = ...", (TextEdit(A.Span(s.span.start, s.span.start), "l, g = "),)
        )

    def assign(self, s: A.Assign, env: Env) -> Env:
        env = env.copy()
        if len(s.targets) == 1:
            target = s.targets[0]
            if is_vag(s.value):
                fix = None
                if isinstance(target, A.Name):
                    g = fresh_name("g", env)
                    fix = Fix(
                        f"Bind the gradient too: {target.name}, {g} = ...",
                        (TextEdit(A.Span(target.span.end, target.span.end), f", {g}"),),
                    )
                self.diags.append(C.E0411.at(target.span, found="bound to one name", fix=fix))
                self.vag_bound.add(s.value)
                self.expr(s.value, env)
                self.bind_target(target, T.UNKNOWN, None, env, s.value)
                return env
            mark = len(self.diags)
            t = self.value(s.value, env)
            origin = self.origin_of(s.value, env)
            if isinstance(target, A.Field):
                self.assign_field(target, t, s.value, env)
            elif isinstance(target, A.Index):
                self.assign_index(target, t, s.value, env)
            else:
                # A value with an error (a failed call, whose result is still
                # typed) has its diagnostic: it is not "unused" on top.
                failed = any(d.severity is Severity.ERROR for d in self.diags[mark:])
                self.bind_target(target, t, origin, env, s.value, simple=not failed)
            return env
        # several names
        span = A.Span(s.targets[0].span.start, s.targets[-1].span.end)
        n = len(s.targets)
        if is_vag(s.value):
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
        if isinstance(current, T.ListT) and isinstance(s.target, A.Name):
            return self.list_aug(s, env, current)  # hs += [h]
        value = self.value(s.value, env)
        if isinstance(current, T.ModelT) and isinstance(s.target, A.Name):
            # A model is updated as a whole by a gradient of its own model;
            # anything else on it is the operator's error alone (not E0504).
            if s.op in ("+", "-") and (
                isinstance(value, T.UnknownT) or (isinstance(value, T.GradT) and value.model == current.name)
            ):
                self.model_update(s.target, env)
            else:
                self.binary_types(s.op, current, value, s.target, s.value, s.op_span, s)
            return env
        result = self.binary_types(s.op, current, value, s.target, s.value, s.op_span, s)
        if isinstance(s.target, A.Field):
            self.assign_field(s.target, result, s.value, env)
        elif isinstance(s.target, A.Index):
            self.assign_index(s.target, result, s.value, env, part=current, op=s.op)
        else:
            self.bind_target(s.target, result, None, env, s.value)
        return env

    def bind_target(
        self, target: A.Expr, t: T.Type, origin: str | None, env: Env, value: A.Expr, simple: bool = False
    ) -> None:
        if isinstance(target, A.TupleExpr):
            # (l, acc), g = ...: a tuple of names takes a tuple of as many values
            n = len(target.items)
            if not isinstance(t, (T.TupleT, T.UnknownT)) or (isinstance(t, T.TupleT) and len(t.items) != n):
                self.diags.append(C.E0410.at(target.span, count=n, found=T.describe(t)))
                t = T.UNKNOWN
            for i, item in enumerate(target.items):
                self.bind_target(item, t.items[i] if isinstance(t, T.TupleT) else T.UNKNOWN, None, env, value)
            return
        if not isinstance(target, A.Name):
            return
        name = target.name
        kind = self.global_kind(name)
        if kind is not None and name not in env.vars:
            self.diags.append(C.E0111.at(target.span, name=name, what=kind_word(kind)))
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
        if isinstance(t, T.ListT) and isinstance(value, A.Name):  # ys = hs: one name per list
            self.diags.append(C.E0964.at(value.span, name=value.name, use=C.E0964.say("alias")))
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
        if isinstance(obj_type, T.OptimT):
            assign_optimizer_field(self, target, obj_type, t, value, env)
            return
        if isinstance(obj_type, T.ScheduleT):
            assign_schedule_field(self, target, obj_type)
            return
        if not isinstance(obj_type, T.ModelT):
            self.diags.append(C.E0107.at(target.name.span, name=target.name.text, owner=T.describe(obj_type), hint=""))
            return
        self.global_kind(obj_type.name)
        model = self.g.model(obj_type)
        if model is None:
            return
        finfo = model.field(target.name.text)
        root = target.value
        while isinstance(root, (A.Field, A.Index)):  # m.enc.w = ...: through the model m
            root = root.value
        var = env.vars.get(root.name) if isinstance(root, A.Name) else None
        if finfo is None:
            if not model.partial:
                self.diags.append(
                    C.E0107.at(
                        target.name.span,
                        name=target.name.text,
                        owner=f"model {model.name}",
                        hint=suggest(target.name.text, [x.name for x in model.fields]),
                    )
                )
            return
        self.refs[target.name] = Ref("field", finfo.name, model.name)
        self.types[target.name] = finfo.type
        if not self.require_mut(target, root, var):
            return
        if number_fits_field(t, finfo.type):
            return  # `m.steps = 0`: the number becomes the [] field's value, in its element type
        if self.check_assignable(
            finfo.type,
            t,
            value.span,
            f"field {obj_type.name}.{finfo.name}: ",
            related=(
                LocalRelated(f"{finfo.name} is declared here", symbol=SymbolRef(("member", obj_type.name, finfo.name))),
            ),
        ):
            self.note_dims(value, finfo.type, t, f"field {obj_type.name}.{finfo.name}: ", "value")

    def require_mut(self, target: A.Expr, model: A.Expr, var: Var | None) -> bool:
        """A model changes only through a `mut` parameter (E0501, once per model)."""
        if var is not None and var.param is not None and var.param.mut:
            return True
        key = ("E0501", expr_text(model))
        if key in self.reported_once:
            return False  # once per model: one mistake, one diagnostic
        self.reported_once.add(key)
        if var is not None and var.param is not None:
            what = f"'{var.param.name}' is not a mut parameter"
            fix = Fix(
                f"Make '{var.param.name}' mut",
                (TextEdit(A.Span(var.param.decl.span.start, var.param.decl.span.start), "mut "),),
            )
        elif var is not None and var.origin is None and isinstance(var.type, T.ModelT) and isinstance(model, A.Name):
            # a model this fn made (main's `m = Mlp.init(seed=0)`)
            what = (
                f"'{model.name}' is not a parameter but a model made here, and a model changes only through "
                f"a mut parameter: do this in a fn that takes `mut {model.name}: {var.type}`, and call it"
            )
            fix = None
        else:
            what = "a model changes only through a mut parameter"
            fix = None
        self.diags.append(C.E0501.at(target.span, field=f"{expr_text(target)}", why=what, fix=fix))
        return False

    def model_update(self, target: A.Name, env: Env) -> None:
        """`m -= lr * g`, `m += e`: every param of a mut model, by a gradient of
        its own model (buffers untouched)."""
        self.require_mut(target, target, env.vars.get(target.name))

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
                if isinstance(t, T.ListT):
                    listed = expr_text(s.values[0])
                    self.diags.append(
                        C.E0964.at(s.values[0].span, name=listed, use=C.E0964.say("returned", name=listed))
                    )
                    t = T.UNKNOWN
            else:
                t = T.TupleT(tuple(self.value(v, env) for v in s.values))
                for v in s.values:
                    self.escape_if_model(v, env, "returned")
            span = A.Span(s.values[0].span.start, s.values[-1].span.end)
            if not fn.declared_ret:
                self.diags.append(C.E0408.at(span, name=fn.name, found=str(t)))
            elif self.check_assignable(
                fn.ret,
                t,
                span,
                "return value: ",
                related=(LocalRelated("return type declared here", symbol=SymbolRef(("ret", fn.name))),),
            ):
                if len(s.values) == 1:
                    self.note_dims(s.values[0], fn.ret, t, f"{fn.name}(): ", "result")
                elif isinstance(fn.ret, T.TupleT) and isinstance(t, T.TupleT):
                    for i, (v, want, got) in enumerate(zip(s.values, fn.ret.items, t.items)):
                        self.note_dims(v, want, got, f"{fn.name}(): ", f"element {i} of result")
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
        before = list(self.known_facts)
        # `if concat: ... return` with no else: after it, `not concat` holds
        leaves = s.orelse is None
        for b in s.branches:
            self.condition(b.cond, current)
            test = self.option_test(b.cond, current)
            if test is not None:
                self.known_facts.append(test)
            holds, fails = self.none_narrowing(b.cond, current)  # `if top_k is not None:`
            outs.append(self.block(b.body, holds))
            current = fails
            leaves = leaves and test is not None and outs[-1].dead
            if test is not None:  # the next branches run where it does not hold
                self.known_facts[-1] = MC.Not(test)
        if s.orelse is not None:
            outs.append(self.block(s.orelse, current.copy()))
        else:
            outs.append(current.copy())
        if not leaves:
            self.known_facts = before
        return self.join(env, outs, s)

    def none_narrowing(self, cond: A.Expr, env: Env) -> tuple[Env, Env]:
        """The environments where an `if`'s test holds and where it fails: a
        test of an optional variable against None (`top_k is not None`,
        `mask is None`) narrows it to its value on the one side and to None
        on the other; any other test leaves both as they are."""
        if (
            isinstance(cond, A.Compare)
            and cond.op in ("is", "is not")
            and isinstance(cond.left, A.Name)
            and isinstance(cond.right, A.Name)
            and cond.right.name == "None"
        ):
            var = env.vars.get(cond.left.name)
            if var is not None and isinstance(var.type, T.OptionalT):
                some = env.copy()
                some.vars[cond.left.name] = dataclasses.replace(var, type=var.type.inner)
                none = env.copy()
                none.vars[cond.left.name] = dataclasses.replace(var, type=T.NONE)
                return (some, none) if cond.op == "is not" else (none, some)
        return env.copy(), env

    def option_test(self, cond: A.Expr, env: Env) -> MC.Cond | None:
        """An `if`'s test as a member's condition, when it is one: the Bool
        options of the method's model (`bias`), comparisons of dims (`stride
        != 1`), `and`, `or`, `not` of them; None for any other test."""
        if isinstance(cond, A.Not):
            inner = self.option_test(cond.operand, env)
            return MC.Not(inner) if inner is not None else None
        if isinstance(cond, A.BoolOp):
            left, right = self.option_test(cond.left, env), self.option_test(cond.right, env)
            return MC.Both(cond.op, left, right) if left is not None and right is not None else None
        if isinstance(cond, A.BoolLit):
            return MC.Lit(cond.value)
        if isinstance(cond, A.Compare) and cond.op in MC.COMPARISONS:
            left_dim, right_dim = self.test_dim(cond.left, env), self.test_dim(cond.right, env)
            return MC.Cmp(cond.op, left_dim, right_dim) if left_dim is not None and right_dim is not None else None
        if (
            isinstance(cond, A.Name)
            and isinstance(self.model_options.get(cond.name), bool)
            and cond.name not in env.vars
        ):
            return MC.Opt(cond.name)
        return None

    def test_dim(self, e: A.Expr, env: Env) -> DX.Poly | None:
        """A side of a comparison in an `if`'s test, as a dim: a number, a
        generic dim (the method's model's own), a dim constant, `+ - * /`."""
        if isinstance(e, A.IntLit):
            return DX.const(e.value)
        if isinstance(e, A.Name) and e.name not in env.vars and e.name not in self.model_options:
            value = self.g.names.dim_values.get(e.name) if self.written_kind(e.name) == "dim" else None
            return DX.const(value) if value is not None else DX.var(e.name)
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
            left, right = self.test_dim(e.left, env), self.test_dim(e.right, env)
            if left is None or right is None:
                return None
            if e.op == "/":
                return DX.div(left, right)
            return {"+": DX.add, "-": DX.sub, "*": DX.mul}[e.op](left, right)
        return None

    def join(self, before: Env, outs: list[Env], at: A.Node, rounds: bool = False) -> Env:
        """The variables where paths meet; with `rounds`, the paths are a
        loop's rounds, where a tensor may grow (S.join's `grow`)."""
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
            leftover = [v for v in present if v.loop_only]
            if len(leftover) == len(present):
                # a loop's variable after its loop, on every path that has it
                defs = frozenset().union(*(v.defs for v in present))
                result.vars[name] = Var(T.UNKNOWN, defs, maybe_unbound=True, loop_only=True)
                continue
            if leftover:
                # where it is only what a loop left, it is not bound: no type to agree with
                present = [v for v in present if not v.loop_only]
            first = present[0]
            if len(present) == len(live) and not first.phantom and all(v is first for v in present):
                # The same binding on every path (most variables of a branch
                # that assigns a few): the join would rebuild it as it is.
                result.vars[name] = first
                continue
            if any(v.phantom for v in present):
                result.vars[name] = Var(T.UNKNOWN, frozenset(), phantom=True)
                continue
            maybe = len(present) < len(live) or any(v.maybe_unbound for v in present) or bool(leftover)
            t = present[0].type
            clash = None
            for v in present[1:]:
                j = S.join(t, v.type, rounds)
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
                other = next(v for v in present if v is not here and S.join(v.type, here.type, rounds) is None)
                where = min(here.defs, key=lambda d: d.span.start, default=at)
                first_other = min(other.defs, key=lambda d: d.span.start, default=None)
                related = (
                    (LocalRelated(f"'{name}' is {other.type} here", span=first_other.span),) if first_other else ()
                )
                if ("var", name) not in self.reported_once:
                    self.diags.append(
                        C.E0311.at(where.span, name=name, first=here.type, second=other.type, related=related)
                    )
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
            dim_checks = dict(self.dim_checks)  # a pass that is redone records its run-time checks again
            self.reported_once, self.reported_unreachable = set(reported[0]), set(reported[1])
            loop = Loop()
            self.loops.append(loop)
            if head is not None:
                head(state)
            end = self.block(body, state.copy())
            self.loops.pop()
            back = self.join(entry, [end, *loop.continues], anchor, rounds=True)
            merged = self.join(entry, [entry, back], anchor, rounds=True)
            for name in [n for n, v in merged.vars.items() if v.phantom]:
                del merged.vars[name]  # the next pass reports the unknown name itself
            for name, v in merged.vars.items():
                known = entry.vars.get(name)
                if isinstance(v.type, T.UnknownT) and known is not None and not T.is_unknown(known.type):
                    # Unknown after an error of the body (`x = layer(x)` of the wrong
                    # size): the next pass starts from the type the loop is entered
                    # with, so the error is found again in the pass that is kept
                    merged.vars[name] = dataclasses.replace(v, type=known.type)
            if same_state(merged, state) or attempt == MAX_LOOP_PASSES - 1:
                # `while True:` leaves only through a break (or a return).
                exits = list(loop.breaks) if forever else [entry, back, *loop.breaks]
                if not exits:
                    dead = entry.copy()
                    dead.dead = True
                    return dead
                return self.join(entry, exits, anchor, rounds=True)
            del self.diags[mark:]
            self.dim_checks = dim_checks
            state = merged

        return entry  # pragma: no cover

    def for_(self, s: A.For, env: Env) -> Env:
        it = s.iter
        ok = (
            isinstance(it, A.Call)
            and isinstance(it.func, A.Name)
            and it.func.name == "range"
            and "range" not in env.vars
        )
        item: T.Type = T.INT
        origin: str | None = None
        if ok:
            self.expr(it, env)
        elif (
            isinstance(it, A.Call)
            and isinstance(it.func, A.Name)
            and it.func.name in TUPLE_WALKS
            and (it.func.name not in env.vars and self.global_kind(it.func.name) is None)
        ):
            walked_items = self.tuple_walk(it, env)  # zip(ps, qs), enumerate(ps)
            self.types[it] = T.UNKNOWN
            if isinstance(walked_items, tuple):
                return self.for_tuple(s, env, walked_items)
            item = walked_items.item if isinstance(walked_items, T.IterT) else T.UNKNOWN
        else:
            # `for block in m.blocks:` runs over a stack of sub-models (or of
            # their gradients), one model at a time
            t = self.value(it, env)
            if is_model_list(t) and len(s.targets) == 1:  # a list of sub-models: once per element
                assert isinstance(t, T.TupleT)
                return self.for_models(s, env, t, self.origin_of(it, env))
            if isinstance(t, T.TupleT):  # for y in (a, c): once per element, each of its own type
                return self.for_tuple(s, env, t.items)
            if isinstance(t, T.StackT) and not t.per_example:
                item = t.item
                origin = self.origin_of(it, env)  # each block reads m.blocks' params
            elif isinstance(t, T.IterT):
                item = t.item
            elif isinstance(t, T.ListT):  # for h in hs
                item = t.item if t.item is not None else T.UNKNOWN
                if t.item is None:
                    self.diags.append(C.E0962.at(it.span, name=expr_text(it), use="a for loop"))
                elif isinstance(it, A.Name) and any(appends_to(b, it.name) for b in s.body):
                    # appending to the list a loop walks: Python's loop never ends
                    problem = C.E0965.say("walked")
                    self.diags.append(C.E0965.at(it.span, name=it.name, method="append", problem=problem))
            else:
                item = T.UNKNOWN  # one diagnostic: the loop variable is not also wrong
                if not isinstance(t, T.UnknownT):
                    self.diags.append(C.E0414.at(it.span, found=T.describe(t)))
        items: tuple[T.Type, ...] = (item,)
        if len(s.targets) > 1:
            # for xb, yb in e: each round's item is a tuple of as many values
            n = len(s.targets)
            span = A.Span(s.targets[0].span.start, s.targets[-1].span.end)
            if isinstance(item, T.TupleT) and len(item.items) == n:
                items = item.items
            else:
                if not isinstance(item, T.UnknownT):
                    self.diags.append(C.E0410.at(span, count=n, found=T.describe(item)))
                items = (T.UNKNOWN,) * n

        # A loop's variable is bound inside the loop only (docs/language.md,
        # "Maybe unassigned"): what an earlier loop left under its name is
        # not a binding this loop's values must agree with.
        fresh = [v.text for v in s.targets if v.text not in env.vars or env.vars[v.text].loop_only]
        if any(n in env.vars for n in fresh):
            env = env.copy()
            for n in fresh:
                env.vars.pop(n, None)

        walked = walk_model(it, self.refs)  # `for name, p in named_params(m, seed=0)`: m

        def head(state: Env) -> None:
            for var, t in zip(s.targets, items):
                if walked is not None:
                    self.walk_vars[var] = walked
                state.vars[var.text] = Var(t, frozenset({var}), origin=origin)
                self.types[var] = t
                self.refs[var] = Ref("local", var.text, self.fn.name, (var,))
                self.locals[var.text] = t

        out = self.loop(s.body, env, head)
        self.settle_lists(s, env, out)
        # After the loop, a variable that only the loop bound is not bound (a
        # read is E0103); one bound before the loop keeps its binding, which
        # the loop's values had to agree with (E0311), as Python leaves it.
        for n in fresh:
            v = out.vars.get(n)
            if v is not None and not v.phantom:
                out.vars[n] = dataclasses.replace(v, maybe_unbound=True, loop_only=True)
        return out

    def while_(self, s: A.While, env: Env) -> Env:
        def head(state: Env) -> None:
            self.condition(s.cond, state)

        forever = isinstance(s.cond, A.BoolLit) and s.cond.value
        out = self.loop(s.body, env, head, forever=forever)
        self.settle_lists(s, env, out)
        return out


def walk_model(it: A.Expr, refs: dict[A.Node, Ref]) -> A.Expr | None:
    """The model a walk's `for` walks (`m` of `named_params(m, seed=0)`,
    `modules(m, nn.Linear, seed=0)`: checker/builtins/walks.py), else None."""
    if isinstance(it, A.Call) and isinstance(it.func, A.Name) and it.args:
        ref = refs.get(it.func)
        if ref is not None and ref.kind == "builtin" and ref.name in ("named_params", "modules"):
            return it.args[0].value
    return None


def number_fits_field(t: T.Type, field: T.Type) -> bool:
    """A plain number assigned to a `[]` field is stored in the field's
    element type (docs/runtime.md, "Models"): an Int in an integer or float
    field, a Float in a float field, a Bool in a Bool field; a refined field
    takes a number known to fit (a NonNeg one a number known to be >= 0)."""
    if not (isinstance(t, T.NumberT) and isinstance(field, T.TensorT) and field.rank == 0):
        return False
    elem = field.elem
    if elem.index is not None or elem.refine == "prob":
        return False
    if elem.refine == "nonneg" and not t.nonneg:
        return False
    if t.kind == "Int":
        return elem.is_int or elem.is_float
    if t.kind == "Float":
        return elem.is_float
    return t.kind == "Bool" and elem.is_bool
