"""Learning-rate schedules: `sched = StepLR(opt, step_size=30, gamma=0.1)`
makes a schedule of type `StepLR` for the optimizer `opt` (docs/language.md,
"Learning-rate schedules"). Creating a schedule already sets the learning
rate of its step 0 (torch's initial step), so the optimizer must be one this
function created or received as `mut` (E0501). `sched.step(opt)` and the
fields are checker/body/features/schedules.py."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.features.optimizers import require_mut_optimizer
from .args import Bound, choice_arg, literal_number
from .registry import builtin
from .spec import BParam, Builtin


@builtin(
    *(
        Builtin(
            name=kind,
            params=(
                BParam(name="opt"),
                *(BParam(name=n, required=d == "required", keyword_only=True) for n, _, d in hyper),
            ),
            signature=f"{kind}(opt, "
            + ", ".join(f"{n}: {w}" if d == "required" else f"{n}={d}" for n, w, d in hyper)
            + f") -> {kind}",
            doc=doc,
            example=f"sched = {kind}(SGD(m, lr=0.1), {example})",
            group="other",
            runtime=kind,
            note="See [Learning-rate schedules](#learning-rate-schedules).",
        )
        for kind, doc, example in (
            ("StepLR", "A schedule: lr times gamma every step_size steps, as torch's StepLR.", "step_size=30"),
            (
                "MultiStepLR",
                "A schedule: lr times gamma at each milestone, as torch's MultiStepLR.",
                "milestones=(30, 80)",
            ),
            ("ExponentialLR", "A schedule: lr times gamma every step, as torch's ExponentialLR.", "gamma=0.9"),
            (
                "CosineAnnealingLR",
                "A schedule: cosine annealing to eta_min over T_max steps, as torch's CosineAnnealingLR.",
                "T_max=100",
            ),
            (
                "LinearLR",
                "A schedule: a factor of lr moving linearly over total_iters steps, as torch's LinearLR.",
                "start_factor=0.1",
            ),
            (
                "OneCycleLR",
                "A schedule: the 1cycle policy for lr and momentum, as torch's OneCycleLR.",
                "max_lr=1.0, total_steps=100",
            ),
            (
                "WarmupCosineLR",
                "A schedule: linear warmup then cosine annealing, as torch's SequentialLR of LinearLR and "
                "CosineAnnealingLR.",
                "warmup_steps=10, total_steps=100",
            ),
        )
        for hyper in (T.SCHEDULES[kind],)
    ),
)
def _schedule(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    opt_arg = bound["opt"]
    ot = c.value(opt_arg.node, env)
    ok = True
    for name, word, _ in T.SCHEDULES[b.name]:
        a = bound.get(name)
        if a is None:
            continue
        what = f"{name} of {b.name}"
        if word == "Ints":
            ok = _ints(c, a, env, what) and ok
        elif word == "Str":
            ok = choice_arg(c, a, env, what, ("cos", "linear")) is not None and ok
        else:
            ok = c.expect_number(a, env, word, what) and ok
    if isinstance(ot, T.UnknownT):
        return T.UNKNOWN
    if not isinstance(ot, T.OptimT):
        c.diags.append(
            C.E0301.at(
                opt_arg.node.span,
                context=f"argument 'opt' of {b.name}: ",
                expected="an optimizer",
                found=T.describe(ot),
            )
        )
        return T.UNKNOWN
    require_mut_optimizer(c, opt_arg.node, opt_arg.node, env)
    if not ok:
        return T.UNKNOWN
    if b.name == "OneCycleLR":
        cm = bound.get("cycle_momentum")
        cycles = cm is None or (isinstance(cm.node, A.BoolLit) and cm.node.value)
        hyper = {n for n, _, _ in T.OPTIMIZERS[ot.kind][0]}
        if cycles and "momentum" not in hyper and "betas" not in hyper:
            c.diags.append(
                C.E1203.at(
                    opt_arg.node.span,
                    problem=C.E1203.say("onecycle_momentum", opt=ot),
                )
            )
            return T.UNKNOWN
    if b.name == "WarmupCosineLR":
        w, total = bound["warmup_steps"], bound["total_steps"]
        wv, tv = literal_number(w.node), literal_number(total.node)
        if wv is not None and tv is not None and not 0 < wv < tv:
            c.diags.append(
                C.E1203.at(
                    w.span,
                    problem=C.E1203.say("warmup_range", warmup=format(wv, "g"), total=format(tv, "g")),
                )
            )
            return T.UNKNOWN
    return T.ScheduleT(b.name)


def _ints(c: RuleContext, a: CallArg, env: Env, what: str) -> bool:
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return False
    if isinstance(t, T.TupleT) and all(isinstance(x, T.NumberT) and x.kind == "Int" for x in t.items):
        return True
    if isinstance(t, T.NumberT) and t.kind == "Int":
        return True
    c.diags.append(
        C.E0301.at(a.node.span, context=f"{what}: ", expected="a tuple of Ints, such as (30, 80)", found=T.describe(t))
    )
    return False
