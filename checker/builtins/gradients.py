"""Gradients: `value_and_grad`, `grad` and `jvp` (docs/language.md,
"Gradients"). Each spec stands above its typing rule; what they share (the
function `f`, `wrt=`, `batch=`, the site the read analysis needs) is
checker/body/features/gradients.py."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.features.gradients import tangent_type, vag_function, value_and_grad_call
from ..diagnostics import LocalRelated, SymbolRef
from .registry import builtin
from .spec import BParam, Builtin, Lowering, ParamKind


@builtin(
    Builtin(
        name="value_and_grad",
        params=(BParam(name="f", kind=ParamKind.FN), BParam(name="m")),
        signature="value_and_grad(f, m: M, args...) -> ([] Float, Grad[M])",
        doc="Calls f(m, args...) and returns its value and its gradient with respect to the params of m.",
        example="l, g = value_and_grad(loss, m, x, y)",
        group="other",
        runtime="value_and_grad",
        lowering=Lowering.GRADIENT,
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    raw=True,
)
def value_and_grad(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    misused = node not in c.vag_bound
    if misused:
        # Returned, passed on, put in a tuple, piped...: its two results
        # are only ever bound to two names.
        c.vag_bound.add(node)
        c.diags.append(C.E0411.at(node.span, found="used as a value"))
    result = value_and_grad_call(c, node, args, env, paren)
    return T.UNKNOWN if misused else result


@builtin(
    Builtin(
        name="grad",
        params=(BParam(name="f", kind=ParamKind.FN), BParam(name="m")),
        signature="grad(f, m: M, args...) -> Grad[M]",
        doc="The gradient of f(m, args...) with respect to the params of m, as value_and_grad gives it, without the value.",
        example="g = grad(loss, m, x, y)",
        group="other",
        runtime="grad",
        lowering=Lowering.GRADIENT,
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    raw=True,
)
def grad(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    """`grad(f, m, args...)`: value_and_grad's gradient alone (its result
    may be used as any value: no E0411)."""
    result = value_and_grad_call(c, node, args, env, paren, "grad")
    return result.items[1] if isinstance(result, T.TupleT) else T.UNKNOWN


@builtin(
    Builtin(
        name="jvp",
        params=(BParam(name="f", kind=ParamKind.FN), BParam(name="m"), BParam(name="t")),
        signature="jvp(f, m: M, t: Grad[M], args...) -> (Y, Y)",
        doc="Forward mode: f(m, args...) and its derivative along the tangent t (a direction in the params of m).",
        example="l, dl = jvp(loss, m, zeros(Grad[M]), x, y)",
        group="other",
        runtime="jvp",
        lowering=Lowering.GRADIENT,
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    raw=True,
)
def jvp(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    """`y, dy = jvp(f, m, t, args...)`: f's value and its derivative along t."""
    positional = [a for a in args if a.keyword is None]
    if len(positional) < 3 or any(a.keyword is not None for a in args[:3]):
        c.diags.append(
            C.E0401.at(
                paren, name="jvp", expected="at least 3 positional arguments (f, m, t)", found=str(len(positional))
            )
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    f_arg, m_arg, t_arg = args[0], args[1], args[2]
    info = vag_function(c, f_arg, env, "jvp")
    if info is None:
        c._eval_args(args[1:], env)
        return T.UNKNOWN
    matched = c.bind_args(info.name, [(p.name, True, False) for p in info.params[1:]], args[3:], paren)
    m_type = c.value(m_arg.node, env)
    t_type = c.value(t_arg.node, env)
    first = info.params[0]
    assert isinstance(first.type, T.ModelT)
    model = first.type.name
    if not isinstance(m_type, T.UnknownT) and not (isinstance(m_type, T.ModelT) and m_type.name == model):
        c.diags.append(
            C.E0904.at(
                m_arg.node.span,
                context=f"the model of {info.name}'s first parameter: ",
                expected=model,
                found=T.describe(m_type),
            )
        )
    if not isinstance(t_type, T.UnknownT) and not (isinstance(t_type, T.GradT) and t_type.model == model):
        c.diags.append(
            C.E0904.at(
                t_arg.node.span, context="the tangent of jvp: ", expected=f"Grad[{model}]", found=T.describe(t_type)
            )
        )
    origin = c.origin_of(m_arg.node, env)
    if origin is not None:
        c.path_fact("call", origin, info.name, m_arg.node.span, 0)
    if matched is None:
        c._eval_args(args[3:], env)
        return T.UNKNOWN
    bound, _ = matched
    ret = c.check_call_args(info, [(p, bound[p.name]) for p in info.params[1:]], env, node, first_index=1)
    declared = info.ret
    if isinstance(declared, T.UnknownT):
        return T.UNKNOWN
    tangent = tangent_type(declared)
    if tangent is None:
        c.diags.append(
            C.E1112.at(
                f_arg.node.span,
                fn=info.name,
                problem=C.E1112.say("returns_not_float", type=str(declared))
                if info.declared_ret
                else C.E1112.say("returns_nothing"),
                related=(
                    (LocalRelated("return type declared here", symbol=SymbolRef(("ret", info.name))),)
                    if info.declared_ret
                    else ()
                ),
            )
        )
        return T.UNKNOWN
    return T.TupleT((ret, tangent_type(ret) or T.UNKNOWN))
