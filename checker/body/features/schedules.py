"""Schedules outside their constructors: `sched.step(opt)` advances a
schedule and sets the optimizer's learning rate, so it changes both, and both
need a value this function created or received as `mut` (E0501). A schedule's
fields (hyper-parameters, `lr`, `last_epoch`) are read-only (E1204). The
constructors' rule is in checker/builtins/schedules.py."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ... import types as T
from ...declarations import suggest
from ...optim_fields import schedule_fields
from ...results import Ref
from ..context import RuleContext
from ..env import CallArg, Env
from .optimizers import builtin_field, require_mut_optimizer


def schedule_field(c: RuleContext, e: A.Field, obj: T.ScheduleT) -> T.Type:
    return builtin_field(c, e, obj.kind, schedule_fields(obj), f"schedule {obj}")


def schedule_method(
    c: RuleContext, node: A.Node, recv: T.ScheduleT, func: A.Field, args: list[CallArg], env: Env, paren: A.Span
) -> T.Type:
    if func.name.text != "step":
        c.diags.append(
            C.E0107.at(
                func.name.span,
                name=func.name.text,
                owner=f"schedule {recv}",
                hint=suggest(func.name.text, ["step"]),
            )
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    c.refs[func.name] = Ref("builtin", f"{recv.kind}.step", recv.kind)
    matched = c.bind_args(f"{recv.kind}.step", [("opt", True, False)], args, paren)
    if matched is None:
        c._eval_args(args, env)
        return T.UNIT
    bound, _ = matched
    o = bound["opt"]
    ot = c.value(o.node, env)
    if not isinstance(ot, (T.UnknownT, T.OptimT)):
        c.diags.append(
            C.E0301.at(o.node.span, context=f"{recv.kind}.step: ", expected="an optimizer", found=T.describe(ot))
        )
    elif isinstance(ot, T.OptimT):
        require_mut_optimizer(c, o.node, o.node, env)
    require_mut_optimizer(c, func, func.value, env, "a schedule")
    return T.UNIT


def assign_schedule_field(c: RuleContext, target: A.Field, obj: T.ScheduleT) -> None:
    if isinstance(schedule_field(c, target, obj), T.UnknownT):
        return
    c.diags.append(C.E1204.at(target.span, field=target.name.text, kind=obj.kind))
