"""Learning-rate schedules and gradient clipping.

`sched = StepLR(opt, step_size=30, gamma=0.1)` makes a schedule of type
`StepLR` for the optimizer `opt`; `sched.step(opt)` advances it and sets the
optimizer's learning rate. Creating a schedule already sets the learning rate
of its step 0 (torch's initial step), and stepping changes both the schedule
and the optimizer, so both need a value this function created or received as
`mut` (E0501). Its fields (hyper-parameters, `lr`, `last_epoch`) are
read-only (E1204).

`clip_grad_norm(g, max_norm)` is `(Grad[M], [] Float)`.
"""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from ..builtins.args import Bound, choice_arg, literal_number
from ..builtins.registry import rule
from ..declarations import suggest
from ..results import Ref
from .env import CallArg, Env

if TYPE_CHECKING:
    from .core import BodyChecker


class ScheduleRules:
    @rule("schedule")
    def _builtin_schedule(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        opt_arg = bound["opt"]
        ot = self.value(opt_arg.node, env)
        ok = True
        for name, word, _ in T.SCHEDULES[b.name]:
            a = bound.get(name)
            if a is None:
                continue
            what = f"{name} of {b.name}"
            if word == "Ints":
                ok = self._ints(a, env, what) and ok
            elif word == "Str":
                ok = choice_arg(self, a, env, what, ("cos", "linear")) is not None and ok
            else:
                ok = self.expect_number(a, env, word, what) and ok
        if isinstance(ot, T.UnknownT):
            return T.UNKNOWN
        if not isinstance(ot, T.OptimT):
            self.diags.append(
                C.E0301.at(
                    opt_arg.node.span,
                    context=f"argument 'opt' of {b.name}: ",
                    expected="an optimizer",
                    found=T.describe(ot),
                )
            )
            return T.UNKNOWN
        self.require_mut_optimizer(opt_arg.node, opt_arg.node, env)
        if not ok:
            return T.UNKNOWN
        if b.name == "OneCycleLR":
            cm = bound.get("cycle_momentum")
            cycles = cm is None or (isinstance(cm.node, A.BoolLit) and cm.node.value)
            hyper = {n for n, _, _ in T.OPTIMIZERS[ot.kind][0]}
            if cycles and "momentum" not in hyper and "betas" not in hyper:
                self.diags.append(
                    C.E1203.at(
                        opt_arg.node.span,
                        problem=f"OneCycleLR cycles the momentum, and {ot} has neither momentum nor betas; "
                        "give cycle_momentum=False",
                    )
                )
                return T.UNKNOWN
        if b.name == "WarmupCosineLR":
            w, total = bound["warmup_steps"], bound["total_steps"]
            wv, tv = literal_number(w.node), literal_number(total.node)
            if wv is not None and tv is not None and not 0 < wv < tv:
                self.diags.append(
                    C.E1203.at(
                        w.span,
                        problem=f"WarmupCosineLR needs 0 < warmup_steps < total_steps, "
                        f"found warmup_steps={wv:g}, total_steps={tv:g}",
                    )
                )
                return T.UNKNOWN
        return T.ScheduleT(b.name)

    def _ints(self: BodyChecker, a: CallArg, env: Env, what: str) -> bool:
        t = self.value(a.node, env)
        if isinstance(t, T.UnknownT):
            return False
        if isinstance(t, T.TupleT) and all(isinstance(x, T.NumberT) and x.kind == "Int" for x in t.items):
            return True
        if isinstance(t, T.NumberT) and t.kind == "Int":
            return True
        self.diags.append(
            C.E0301.at(
                a.node.span, context=f"{what}: ", expected="a tuple of Ints, such as (30, 80)", found=T.describe(t)
            )
        )
        return False

    @rule("clip_grad_norm")
    def _builtin_clip_grad_norm(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        g_arg = bound["g"]
        gt = self.value(g_arg.node, env)
        ok = self.expect_number(bound["max_norm"], env, "Float", "max_norm of clip_grad_norm")
        nt = bound.get("norm_type")
        if nt is not None:
            ok = self.expect_number(nt, env, "Float", "norm_type of clip_grad_norm") and ok
            v = literal_number(nt.node)
            if v is not None and v <= 0:
                self.diags.append(
                    C.E0301.at(
                        nt.node.span,
                        context="norm_type of clip_grad_norm: ",
                        expected="a number > 0 or inf",
                        found=f"{v:g}",
                    )
                )
                ok = False
        fin = bound.get("error_if_nonfinite")
        if fin is not None:
            ok = self.expect_number(fin, env, "Bool", "error_if_nonfinite of clip_grad_norm") and ok
        if isinstance(gt, T.UnknownT):
            return T.UNKNOWN
        if not isinstance(gt, T.GradT):
            found = T.describe(gt)
            if T.is_example_grads(gt):
                found += " (per-example gradients: take their mean first)"
            self.diags.append(
                C.E0301.at(
                    g_arg.node.span, context="argument 'g' of clip_grad_norm: ", expected="a Grad[M]", found=found
                )
            )
            return T.UNKNOWN
        if not ok:
            return T.UNKNOWN
        return T.TupleT((gt, T.TensorT((), T.F32)))

    def schedule_field(self: BodyChecker, e: A.Field, obj: T.ScheduleT) -> T.Type:
        return self.builtin_field(e, obj.kind, T.schedule_fields(obj), f"schedule {obj}")

    def schedule_method(
        self: BodyChecker, node: A.Node, recv: T.ScheduleT, func: A.Field, args: list[CallArg], env: Env, paren: A.Span
    ) -> T.Type:
        if func.name.text != "step":
            self.diags.append(
                C.E0107.at(
                    func.name.span,
                    name=func.name.text,
                    owner=f"schedule {recv}",
                    hint=suggest(func.name.text, ["step"]),
                )
            )
            self._eval_args(args, env)
            return T.UNKNOWN
        self.refs[func.name] = Ref("builtin", f"{recv.kind}.step", recv.kind)
        matched = self.bind_args(f"{recv.kind}.step", [("opt", True, False)], args, paren)
        if matched is None:
            self._eval_args(args, env)
            return T.UNIT
        bound, _ = matched
        o = bound["opt"]
        ot = self.value(o.node, env)
        if not isinstance(ot, (T.UnknownT, T.OptimT)):
            self.diags.append(
                C.E0301.at(o.node.span, context=f"{recv.kind}.step: ", expected="an optimizer", found=T.describe(ot))
            )
        elif isinstance(ot, T.OptimT):
            self.require_mut_optimizer(o.node, o.node, env)
        self.require_mut_optimizer(func, func.value, env, "a schedule")
        return T.UNIT

    def assign_schedule_field(self: BodyChecker, target: A.Field, obj: T.ScheduleT) -> None:
        if isinstance(self.schedule_field(target, obj), T.UnknownT):
            return
        self.diags.append(C.E1204.at(target.span, field=target.name.text, kind=obj.kind))
