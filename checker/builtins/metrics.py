"""`log`: the natural logarithm, and the metrics call; its spec and rule.

`log(x)` (one argument, no keywords) is the elementwise logarithm, checked by
the rule of sqrt and exp. `log(step, loss=l, acc=a)` records metrics: `step`
is an Int, each keyword names one metric and its value is one number, an Int,
a Float or a `[]` tensor. The call is a statement (its value is Unit); the
compiler lowers it to `rt.log_metrics(step, {"loss": l, "acc": a})`.

Diagnostics: E0420 (values without names: `log(step, l)`), E0421 (a metric
that is not one number: a tensor with dims names its shape), E0404 (one name
twice), E0405 (a value after the names), E0401 (no step, or two), E0301 (a
step that is not an Int).
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.text import expr_text
from .elementwise import elementwise_or_number
from .registry import builtin
from .spec import Builtin, Lowering, X


def is_metrics_call(args: list[CallArg] | list[tuple[str | None, A.Expr]]) -> bool:
    """Whether a call of `log` records metrics rather than taking a logarithm:
    it has a keyword argument, or more than one argument."""
    keywords = [a for a in args if (a.keyword if isinstance(a, CallArg) else a[0]) is not None]
    return bool(keywords) or len(args) > 1


@builtin(
    Builtin(
        name="log",
        params=(X,),
        signature="log(x: [..] Float) -> [..] Float / log(x: Float) -> Float / log(step: Int, name=value, ...)",
        doc="Natural logarithm, elementwise; of a number, a number. With names, `log(step, loss=l)` records "
        "metrics: see [Logging metrics](#logging-metrics).",
        example="h = log(x)",
        group="elementwise",
        runtime="log",
        lowering=Lowering.METRICS,
        number_runtime="log_of_number",
    ),
    raw=True,
)
def _log(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    if not is_metrics_call(args):  # log(x): the logarithm
        matched = c.bind_args(b.name, [(p.name, p.required, p.keyword_only) for p in b.params], args, paren)
        if matched is None:
            return T.UNKNOWN
        outer, c.builtin_now = c.builtin_now, b.name
        try:
            return elementwise_or_number(c, node, b, matched[0], env)
        finally:
            c.builtin_now = outer
    _metrics(c, args, env, paren)
    return T.UNIT


def _metrics(c: RuleContext, args: list[CallArg], env: Env, paren: A.Span) -> None:
    positional = [a for a in args if a.keyword is None]
    named = [a for a in args if a.keyword is not None]
    first_named = next((i for i, a in enumerate(args) if a.keyword is not None), len(args))
    late = [a for a in args[first_named:] if a.keyword is None]
    if late:  # log(step, loss=l, acc)
        c.diags.append(C.E0405.at(late[0].span))
        c._eval_args(args, env)
        return
    if not named:  # log(step, l): values without names
        rest = positional[1:]
        span = A.Span(rest[0].span.start, rest[-1].span.end)
        c.diags.append(C.E0420.at(span, found=", ".join(expr_text(a.node) for a in rest)))
        c._eval_args(args, env)
        return
    if len(positional) != 1:
        where = positional[1].span if len(positional) > 1 else paren
        c.diags.append(
            C.E0401.at(where, name="log", expected="1 positional argument (the step)", found=str(len(positional)))
        )
        c._eval_args(args, env)
        return
    c.expect_number(positional[0], env, "Int", "step of log")
    seen: set[str] = set()
    for a in named:
        name = a.keyword
        assert name is not None
        if name in seen:
            c.diags.append(C.E0404.at(a.span, name=name, fn="log"))
            c.value(a.node, env)
            continue
        seen.add(name)
        _metric(c, name, a, env)


def _metric(c: RuleContext, name: str, a: CallArg, env: Env) -> None:
    """One metric's value: an Int, a Float or a `[]` tensor."""
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return
    if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
        return
    if isinstance(t, T.TensorT) and t.rank == 0 and not T.has_rest(t):
        return
    c.diags.append(C.E0421.at(a.node.span, name=name, found=T.describe(t)))
