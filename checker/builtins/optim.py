"""Optimizers: `SGD(m, lr=...)`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`,
`Adadelta`, `LBFGS`, their param groups `Group(...)` and
`clip_grad_norm(g, max_norm)` (docs/language.md, "Optimizers").

`AdamW(m, weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))`:
`Group(...)` is typed here (its selectors are literals: `max_rank=`,
`min_rank=`, `names=` a glob on the params' paths); the optimizer's rule
checks its groups against the optimizer and the model
(checker/body/features/optimizers.py, with `opt.step` and the fields).
`clip_grad_norm(g, max_norm)` is `(Grad[M], [] Float)`.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from ..body.features.optimizers import check_groups, groups_value, hyper_arg
from ..body.text import expr_text
from .args import Bound, literal_number
from .registry import builtin
from .spec import BParam, Builtin


@builtin(
    *(
        Builtin(
            name=kind,
            params=(
                BParam(name="m"),
                *(BParam(name=n, required=False, keyword_only=True) for n, _, _ in hyper),
                *((BParam(name="groups", required=False, keyword_only=True),) if kind in T.GROUPED_OPTIMIZERS else ()),
            ),
            signature=f"{kind}(m: M, "
            + ", ".join(f"{n}={d}" for n, _, d in hyper)
            + (", groups=Group(...)" if kind in T.GROUPED_OPTIMIZERS else "")
            + f") -> {kind}[M]",
            doc=doc,
            example=f"opt = {kind}(m, lr=0.01)",
            group="other",
            runtime=kind,
            note="See [Optimizers](#optimizers).",
        )
        for kind, doc in (
            ("SGD", "An SGD optimizer for m (momentum, dampening, weight decay, Nesterov), as torch.optim.SGD."),
            ("Adam", "An Adam optimizer for m, as torch.optim.Adam (L2 weight decay)."),
            ("AdamW", "An AdamW optimizer for m (decoupled weight decay), as torch.optim.AdamW."),
            # issue 26: the other torch.optim algorithms, per-field options, clipping, schedules
            ("RMSprop", "An RMSprop optimizer for m (momentum, centered), as torch.optim.RMSprop."),
            ("Adagrad", "An Adagrad optimizer for m, as torch.optim.Adagrad."),
            ("Adadelta", "An Adadelta optimizer for m, as torch.optim.Adadelta."),
            (
                "LBFGS",
                "An L-BFGS optimizer for m, as torch.optim.LBFGS; `opt.step(m, f, args...)` evaluates f as "
                "torch's closure.",
            ),
        )
        for hyper in (T.OPTIMIZERS[kind][0],)
    ),
)
def _optimizer(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    m = c.value(bound["m"].node, env)
    ok = True
    words = {n: w for n, w, _ in T.OPTIMIZERS[b.name][0]}
    for p in b.params[1:]:
        a = bound.get(p.name)
        if a is None or p.name == "groups":
            continue
        ok = hyper_arg(c, a, env, words[p.name], f"{p.name} of {b.name}") and ok
    groups_arg = bound.get("groups")
    groups = groups_value(c, groups_arg, env, b.name) if groups_arg is not None else []
    if isinstance(m, T.UnknownT):
        return T.UNKNOWN
    if not isinstance(m, T.ModelT):
        c.diags.append(
            C.E0301.at(
                bound["m"].node.span, context=f"argument 'm' of {b.name}: ", expected="a model", found=T.describe(m)
            )
        )
        return T.UNKNOWN
    if groups is None:
        return T.UNKNOWN
    if groups and not check_groups(c, groups, m, b.name):
        return T.UNKNOWN
    return T.OptimT(b.name, m.name, m.dims, m.options, tuple(g.text() for g in groups), m.bound) if ok else T.UNKNOWN


@builtin(
    Builtin(
        name="Group",
        params=(
            BParam(name="max_rank", required=False, keyword_only=True),
            BParam(name="min_rank", required=False, keyword_only=True),
            BParam(name="names", required=False, keyword_only=True),
            *(BParam(name=n, required=False, keyword_only=True) for n in T.GROUP_OVERRIDABLE),
        ),
        signature="Group(max_rank=Int, min_rank=Int, names=Str, lr=.., weight_decay=.., ...) -> Group",
        doc="A param group for an optimizer's groups=: the params it selects (by rank, by a glob on their paths) "
        "and the hyper-parameters it sets for them.",
        example="opt = AdamW(m, weight_decay=0.0, groups=Group(min_rank=2, weight_decay=0.1))",
        group="other",
        runtime="Group",
        note="See [Per-field options](#per-field-options-param-groups).",
    ),
)
def _group(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    selectors: list[tuple[str, int | str]] = []
    spans: list[tuple[str, A.Span]] = [("call", node.span)]
    ok = True
    for name in ("max_rank", "min_rank", "names"):
        a = bound.get(name)
        if a is None:
            continue
        t = c.value(a.node, env)
        if isinstance(t, T.UnknownT):
            ok = False
            continue
        e = a.node
        if name == "names":
            good = isinstance(e, A.StrLit) and e.value != ""
            problem = C.E1202.say("names_form", found=expr_text(e))
        else:
            good = isinstance(e, A.IntLit)
            problem = C.E1202.say("rank_form", name=name, found=expr_text(e))
        if not good:
            c.diags.append(C.E1202.at(a.span, problem=problem))
            ok = False
            continue
        assert isinstance(e, (A.StrLit, A.IntLit))
        selectors.append((name, e.value))
        spans.append((name, a.span))
    overrides: list[tuple[str, str]] = []
    for name in T.GROUP_OVERRIDABLE:
        a = bound.get(name)
        if a is None:
            continue
        word = "(Float, Float)" if name == "betas" else "Float"
        ok = hyper_arg(c, a, env, word, f"{name} of Group") and ok
        overrides.append((name, expr_text(a.node)))
        spans.append((name, a.span))
    if not ok:
        return T.UNKNOWN
    if not selectors:
        c.diags.append(
            C.E1202.at(
                node.span,
                problem=C.E1202.say("no_selector"),
            )
        )
        return T.UNKNOWN
    sel = dict(selectors)
    lo, hi = sel.get("min_rank"), sel.get("max_rank")
    if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
        c.diags.append(C.E1202.at(node.span, problem=C.E1202.say("no_rank", lo=lo, hi=hi)))
        return T.UNKNOWN
    return T.GroupT(tuple(selectors), tuple(overrides), tuple(spans))


@builtin(
    Builtin(
        name="clip_grad_norm",
        params=(
            BParam(name="g"),
            BParam(name="max_norm"),
            BParam(name="norm_type", required=False, keyword_only=True),
            BParam(name="error_if_nonfinite", required=False, keyword_only=True),
        ),
        signature="clip_grad_norm(g: Grad[M], max_norm: Float, norm_type=2.0, error_if_nonfinite=False) -> (Grad[M], [] Float)",
        doc="g scaled so that its total norm is at most max_norm, and that norm, as torch.nn.utils.clip_grad_norm_.",
        example="g, n = clip_grad_norm(grad(loss, m, x, y), 1.0)",
        group="other",
        runtime="clip_grad_norm",
        note="See [Clipping gradients](#clipping-gradients).",
    ),
)
def _clip_grad_norm(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    g_arg = bound["g"]
    gt = c.value(g_arg.node, env)
    ok = c.expect_number(bound["max_norm"], env, "Float", "max_norm of clip_grad_norm")
    nt = bound.get("norm_type")
    if nt is not None:
        ok = c.expect_number(nt, env, "Float", "norm_type of clip_grad_norm") and ok
        v = literal_number(nt.node)
        if v is not None and v <= 0:
            c.diags.append(
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
        ok = c.expect_number(fin, env, "Bool", "error_if_nonfinite of clip_grad_norm") and ok
    if isinstance(gt, T.UnknownT):
        return T.UNKNOWN
    if not isinstance(gt, T.GradT):
        found = T.describe(gt)
        if T.is_example_grads(gt):
            found += " (per-example gradients: take their mean first)"
        c.diags.append(
            C.E0301.at(g_arg.node.span, context="argument 'g' of clip_grad_norm: ", expected="a Grad[M]", found=found)
        )
        return T.UNKNOWN
    if not ok:
        return T.UNKNOWN
    return T.TupleT((gt, T.TensorT((), T.F32)))
