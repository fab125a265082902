"""Optimizers: `SGD(m, lr=...)`, `Adam(m, ...)`, `AdamW(m, ...)`, their
`opt.step(m, g)`, their fields (hyper-parameters and state) and `opt.lr = e`.

An optimizer is state, like a model: stepping it or setting its learning rate
changes it, so that needs an optimizer the function created or received as a
`mut` parameter (E0501, as for a model's fields). `opt.step(m, g)` also changes
`m`, which needs a `mut` model as `m -= ...` does.
"""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
# (the methods of these parts annotate self with BodyChecker, the class they
# are composed into, so each part sees the whole checker; pyright calls that
# a general type issue.)
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from ..builtins.args import Bound, choice_arg
from ..builtins.registry import rule
from ..declarations import suggest
from ..diagnostics import Fix, TextEdit
from ..results import Ref
from .env import CallArg, Env
from .optim_groups import GroupRules
from .text import expr_text

if TYPE_CHECKING:
    from .core import BodyChecker

SETTABLE = ("lr",)


class OptimRules(GroupRules):
    @rule("optimizer")
    def _builtin_optimizer(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        m = self.value(bound["m"].node, env)
        ok = True
        words = {n: w for n, w, _ in T.OPTIMIZERS[b.name][0]}
        for p in b.params[1:]:
            a = bound.get(p.name)
            if a is None or p.name == "groups":
                continue
            ok = self._hyper(a, env, words[p.name], f"{p.name} of {b.name}") and ok
        groups_arg = bound.get("groups")
        groups = self._groups_value(groups_arg, env, b.name) if groups_arg is not None else []
        if isinstance(m, T.UnknownT):
            return T.UNKNOWN
        if not isinstance(m, T.ModelT):
            self.diags.append(
                C.E0301.at(
                    bound["m"].node.span, context=f"argument 'm' of {b.name}: ", expected="a model", found=T.describe(m)
                )
            )
            return T.UNKNOWN
        if groups is None:
            return T.UNKNOWN
        if groups and not self.check_groups(groups, m, b.name):
            return T.UNKNOWN
        return T.OptimT(b.name, m.name, m.dims, m.options, tuple(g.text() for g in groups)) if ok else T.UNKNOWN

    def _hyper(self: BodyChecker, a: CallArg, env: Env, word: str, what: str) -> bool:
        if word == "Str":  # LBFGS's line_search_fn: "strong_wolfe" or left out
            return choice_arg(self, a, env, what, ("strong_wolfe",)) is not None
        if word == "(Float, Float)":
            t = self.value(a.node, env)
            if isinstance(t, T.UnknownT):
                return False
            if (
                isinstance(t, T.TupleT)
                and len(t.items) == 2
                and all(isinstance(x, T.NumberT) and x.kind in ("Int", "Float") for x in t.items)
            ):
                return True
            self.diags.append(
                C.E0301.at(a.node.span, context=f"{what}: ", expected="(Float, Float)", found=T.describe(t))
            )
            return False
        return self.expect_number(a, env, word, what)

    def optimizer_field(self: BodyChecker, e: A.Field, obj: T.OptimT) -> T.Type:
        return self.builtin_field(e, obj.kind, T.optimizer_fields(obj), f"optimizer {obj}")

    def builtin_field(self: BodyChecker, e: A.Field, kind: str, fields, owner: str) -> T.Type:
        """A field of an optimizer or a schedule (`opt.lr`, `sched.last_epoch`):
        its type from the table, or E0107 with the nearest name."""
        name = e.name.text
        for n, t, _ in fields:
            if n == name:
                self.refs[e.name] = Ref("builtin", f"{kind}.{name}", kind)
                self.types[e.name] = t
                return t
        self.diags.append(
            C.E0107.at(e.name.span, name=name, owner=owner, hint=suggest(name, [n for n, _, _ in fields]))
        )
        return T.UNKNOWN

    def optimizer_method(
        self: BodyChecker,
        node: A.Node,
        recv: T.OptimT,
        func: A.Field,
        args: list[CallArg],
        env: Env,
        paren: A.Span,
    ) -> T.Type:
        if func.name.text != "step":
            self.diags.append(
                C.E0107.at(
                    func.name.span,
                    name=func.name.text,
                    owner=f"optimizer {recv}",
                    hint=suggest(func.name.text, ["step"]),
                )
            )
            self._eval_args(args, env)
            return T.UNKNOWN
        self.refs[func.name] = Ref("builtin", f"{recv.kind}.step", recv.kind)
        if recv.kind == "LBFGS":
            return self.lbfgs_step(node, recv, func, args, env, paren)
        matched = self.bind_args(f"{recv.kind}.step", [("m", True, False), ("g", True, False)], args, paren)
        if matched is None:
            self._eval_args(args, env)
            return T.UNIT
        bound, _ = matched
        m_arg, g_arg = bound["m"], bound["g"]
        mt = self.value(m_arg.node, env)
        gt = self.value(g_arg.node, env)
        context = f"opt.step of {recv}: "
        if not isinstance(mt, T.UnknownT) and not (isinstance(mt, T.ModelT) and mt.name == recv.model):
            self.diags.append(C.E0904.at(m_arg.node.span, context=context, expected=recv.model, found=T.describe(mt)))
        elif isinstance(mt, T.ModelT):
            self.require_mut_model(m_arg.node, env)
        if not isinstance(gt, T.UnknownT) and not (isinstance(gt, T.GradT) and gt.model == recv.model):
            self.diags.append(
                C.E0904.at(g_arg.node.span, context=context, expected=f"Grad[{recv.model}]", found=T.describe(gt))
            )
        self.require_mut_optimizer(func, func.value, env)
        return T.UNIT

    def require_mut_model(self: BodyChecker, e: A.Expr, env: Env) -> None:
        """A model changed by a statement (`opt.step(m, g)`): as `m -= ...`."""
        root = e
        while isinstance(root, (A.Field, A.Index)):
            root = root.value
        if isinstance(root, A.Name):
            self.require_mut(e, root, env.vars.get(root.name))

    def require_mut_optimizer(
        self: BodyChecker, target: A.Expr, opt: A.Expr, env: Env, what: str = "an optimizer"
    ) -> bool:
        """An optimizer (or a schedule) changes only when this function created
        it or got it as a `mut` parameter (E0501, once per value)."""
        var = env.vars.get(opt.name) if isinstance(opt, A.Name) else None
        if var is None or var.param is None or var.param.mut:
            return True
        key = ("E0501", expr_text(opt))
        if key in self.reported_once:
            return False
        self.reported_once.add(key)
        fix = Fix(
            f"Make '{var.param.name}' mut",
            (TextEdit(A.Span(var.param.decl.span.start, var.param.decl.span.start), "mut "),),
        )
        self.diags.append(
            C.E0501.at(
                target.span,
                field=expr_text(target),
                why=f"'{var.param.name}' is not a mut parameter ({what} changes only through one)",
                fix=fix,
            )
        )
        return False

    def assign_optimizer_field(
        self: BodyChecker, target: A.Field, obj: T.OptimT, t: T.Type, value: A.Expr, env: Env
    ) -> None:
        """`opt.lr = e`: a learning-rate schedule. The other fields are read-only."""
        name = target.name.text
        ft = self.optimizer_field(target, obj)
        if isinstance(ft, T.UnknownT):
            return
        if name not in SETTABLE:
            self.diags.append(C.E0506.at(target.span, field=name, type=str(obj)))
            return
        if not self.require_mut_optimizer(target, target.value, env):
            return
        if isinstance(t, T.UnknownT):
            return
        if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
            return
        if isinstance(t, T.TensorT) and t.rank == 0 and t.elem.is_float:
            return
        self.diags.append(
            C.E0301.at(
                value.span, context=f"{obj.kind}.{name}: ", expected="Float (or a [] Float)", found=T.describe(t)
            )
        )
