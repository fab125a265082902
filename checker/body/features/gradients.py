"""Gradient sites: the checks `value_and_grad`, `grad`, `jvp` and LBFGS's
`opt.step(m, f, args...)` share. `f` is the name of a fn whose first
parameter is a model; the call `f(m, args...)` is checked as any call
(`wrt=[...]` selects params, `batch=b` splits the arguments into examples);
its site (`GradSite`) is recorded for the read analysis (checker/reads.py).
The built-ins' own rules are in checker/builtins/gradients.py."""

from __future__ import annotations

from ... import ast as A
from ... import catalog as C
from ... import shapes as S
from ... import types as T
from ...declarations import FnInfo, ParamInfo, dotted_text, suggest
from ...diagnostics import LocalRelated, SymbolRef
from ...results import GradSite, Ref
from ..context import RuleContext
from ..env import CallArg, Env
from ..text import expr_text


def value_and_grad_call(
    c: RuleContext, node: A.Node, args: list[CallArg], env: Env, paren: A.Span, fn_name: str = "value_and_grad"
) -> T.Type:
    """`value_and_grad(f, m, args...)` as `fn_name` writes it: the call
    `f(m, args...)` checked, `(value, Grad[M])` (UNKNOWN after a diagnostic),
    and the site recorded when the call is sound."""
    # wrt=[...] and batch=b are value_and_grad's own; the rest is f's call.
    wrt_arg = next((a for a in args if a.keyword == "wrt"), None)
    batch_arg = next((a for a in args if a.keyword == "batch"), None)
    args = [a for a in args if a.keyword not in ("wrt", "batch")]
    positional = [a for a in args if a.keyword is None]
    if len(positional) < 2 or any(a.keyword is not None for a in args[:2]):
        c.diags.append(
            C.E0401.at(
                paren,
                name=fn_name,
                expected="at least 2 positional arguments (f, m)",
                found=str(len(positional)),
            )
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    f_arg, m_arg = args[0], args[1]
    rest = args[2:]
    info = vag_function(c, f_arg, env, fn_name)
    if info is None:
        for a in args[1:]:
            c.value(a.node, env)
        return T.UNKNOWN
    # as a call f(m, args...)
    params = [(p.name, True, False) for p in info.params[1:]]
    matched = c.bind_args(info.name, params, rest, paren)
    if matched is None:
        for a in args[1:]:
            c.value(a.node, env)
        return T.UNKNOWN
    bound, _ = matched
    m_type = c.value(m_arg.node, env)
    first = info.params[0]
    assert isinstance(first.type, T.ModelT)
    model = first.type.name
    model_ok = True
    # the instance differentiated: the argument's (`Linear[D, H]`, when f takes any `Linear[i, o]`)
    # f generic over models (`fn loss[M: CharModel](m: M, ...)`): any model its traits take, checked by the call
    generic_f = bool(first.type.bound)
    instance = m_type if isinstance(m_type, T.ModelT) and (m_type.name == model or generic_f) else first.type
    if generic_f and isinstance(m_type, T.ModelT):
        model = m_type.name
    if isinstance(m_type, T.UnknownT):
        model_ok = False
    elif generic_f:
        pass  # the call below checks the model against f's type parameter
    elif not (isinstance(m_type, T.ModelT) and m_type.name == model):
        c.diags.append(
            C.E0904.at(
                m_arg.node.span,
                context=f"the model of {info.name}'s first parameter: ",
                expected=model,
                found=T.describe(m_type),
            )
        )
        model_ok = False
    origin = c.origin_of(m_arg.node, env)
    if origin is not None:
        c.path_fact("call", origin, info.name, m_arg.node.span, 0)
    selection = wrt_selection(c, wrt_arg, instance) if wrt_arg is not None else None
    pairs = [(p, bound[p.name]) for p in info.params[1:]]
    batch = None
    if batch_arg is not None:
        batch = batch_dim(c, batch_arg)
        ret = batched_call_args(c, info, pairs, env, node, batch, batch_arg) if batch is not None else T.UNKNOWN
        if batch is None:
            c._eval_args([a for _, a in pairs], env)
            return T.UNKNOWN
    else:
        if model_ok and (first.type.dims or generic_f):  # f's generic dims (`l: Linear[i, o]`) or M bound from m
            ret, call_ok = c.checked_call(info, [(first, m_arg), *pairs], env, node)
        else:
            ret, call_ok = c.checked_call(info, pairs, env, node, first_index=1)
        if not call_ok:
            model_ok = False  # no site: its reads would be a second diagnostic
    # f must return a [] of floats, or a tuple whose first item is one (aux outputs)
    declared = info.ret
    aux = isinstance(declared, T.TupleT) and len(declared.items) >= 1 and _is_loss(declared.items[0])
    bad_ret = not (_is_loss(declared) or aux)
    if bad_ret and not isinstance(declared, T.UnknownT):
        c.diags.append(
            C.E1106.at(
                f_arg.node.span,
                name=info.name,
                found=str(declared) if info.declared_ret else "nothing",
                related=(
                    (LocalRelated("return type declared here", symbol=SymbolRef(("ret", info.name))),)
                    if info.declared_ret
                    else ()
                ),
            )
        )
        return T.UNKNOWN
    if batch is not None and aux and batch_arg is not None:
        c.diags.append(C.E1111.at(batch_arg.span, dim=str(batch), problem=C.E1111.say("aux_not_batched")))
        return T.UNKNOWN
    grad: T.Type = T.grad_of(instance, selection if selection else None)
    if selection == ():
        grad = T.UNKNOWN
    value = declared
    if batch is not None:
        # (declared is unknown when f's return type is reported: `-> NonNeg`, E0309)
        value = T.TensorT((batch,), declared.elem) if isinstance(declared, T.TensorT) else T.UNKNOWN
        grad = T.StackT(batch, grad, per_example=True) if not isinstance(grad, T.UnknownT) else grad
        ret = value if not isinstance(ret, T.UnknownT) else ret
    elif not isinstance(ret, T.UnknownT):
        value = ret
    if not model_ok or isinstance(ret, T.UnknownT):
        return T.TupleT((value, grad))
    c.sites[node] = GradSite(node, f_arg.node.span, info.name, model, selection or None, instance)  # type: ignore[index]
    return T.TupleT((value, grad))


def wrt_selection(c: RuleContext, a: CallArg, model_type: T.ModelT) -> tuple[str, ...] | None:
    """The fields `wrt=[head, b2]` selects, sorted (the type's canonical
    form); () after E1109; None when the model is unknown or every param
    is selected (then the gradient is the whole `Grad[M]`)."""
    model_name = model_type.name
    c.global_kind(model_name)
    model = c.g.model(model_type)
    e = a.node
    if not isinstance(e, A.NameList):
        c.diags.append(C.E1109.at(e.span, problem=C.E1109.say("not_a_list", found=expr_text(e))))
        return ()
    if model is None:
        return None
    chosen: list[str] = []
    ok = True
    for n in e.items:
        f = model.field(n.name)
        if f is None:
            if not model.partial:
                hint = suggest(n.name, [x.name for x in model.params])
                c.diags.append(
                    C.E1109.at(n.span, problem=C.E1109.say("no_param", model=model_name, name=n.name, hint=hint))
                )
            ok = False
            continue
        c.refs[n] = Ref("field", f.name, model_name)
        c.types[n] = f.type
        if f.kind == "buffer":
            c.diags.append(C.E1109.at(n.span, problem=C.E1109.say("buffer", name=n.name, model=model_name)))
            ok = False
        elif n.name in chosen:
            c.diags.append(C.E1109.at(n.span, problem=C.E1109.say("named_twice", name=n.name)))
            ok = False
        else:
            chosen.append(n.name)
    if not ok:
        return ()
    if set(chosen) == {p.name for p in model.params}:
        return None  # every param: the whole gradient, Grad[M]
    return tuple(sorted(chosen))


def batch_dim(c: RuleContext, a: CallArg) -> T.Dim | None:
    """`batch=b`: a generic dim of this function or a dim constant."""
    e = a.node
    if isinstance(e, A.Name) and e.name in c.fn.generics:
        c.refs[e] = Ref("generic", e.name, c.fn.name)
        return T.DimVar(e.name)
    const = c.dim_constant(e)
    if const is not None:
        c.refs[const[0]] = Ref("dim", const[1])
        value = c.g.names.dim_values.get(const[1])
        return T.DimConst(const[1], value) if value is not None else None
    c.diags.append(C.E1111.at(e.span, dim=expr_text(e), problem=C.E1111.say("not_a_dim")))
    return None


def batched_call_args(
    c: RuleContext,
    info: FnInfo,
    pairs: list[tuple[ParamInfo, CallArg]],
    env: Env,
    node: A.Node,
    batch: T.Dim,
    batch_arg: CallArg,
) -> T.Type:
    """f's arguments under batch=b: each is f's parameter type with a
    leading dim b (split into examples) or f's parameter type itself
    (shared). Which is which is recorded for the compiler (`axes`)."""
    bindings = S.Bindings(info.generics)
    ok = True
    in_dims: list[int] = []
    for p, a in pairs:
        t = c.value(a.node, env)
        origin = c.origin_of(a.node, env)
        if origin is not None:
            c.path_fact("call", origin, info.name, a.node.span, len(in_dims) + 1)
        split = (
            isinstance(t, T.TensorT)
            and isinstance(p.type, T.TensorT)
            and t.rank == p.type.rank + 1
            and T.dims_equal(t.dims[0], batch)
            and not isinstance(t.dims[0], T.DimUnknown)
        )
        in_dims.append(1 if split else 0)
        if split:
            assert isinstance(t, T.TensorT)
            t = T.TensorT(t.dims[1:], t.elem)
        mismatch = S.match(p.type, t, bindings, p.name, a.node.span)
        if mismatch is not None:
            ok = False
            c.report_mismatch(
                mismatch,
                a.node.span,
                f"argument '{p.name}' of {info.name} (one example): ",
                SymbolRef(("param", info.name, p.name)),
            )
    c.axes[node] = tuple(in_dims)
    if not ok:
        return T.UNKNOWN
    if not any(in_dims):
        c.diags.append(
            C.E1111.at(
                batch_arg.span, dim=str(batch), problem=C.E1111.say("no_leading_dim", fn=info.name, dim=str(batch))
            )
        )
        return T.UNKNOWN
    return bindings.result(info.ret)


def vag_function(c: RuleContext, f_arg: CallArg, env: Env, caller: str = "value_and_grad") -> FnInfo | None:
    """The fn named by value_and_grad's first argument, or None after E1105."""
    e = f_arg.node
    problem = None
    written = dotted_text(e)
    qualified = isinstance(e, A.Field) and written is not None and written.split(".")[0] not in env.vars
    if qualified:  # layers.loss
        t = c.expr(e, env)
        if isinstance(t, T.UnknownT):
            return None
        if not isinstance(t, T.FnRefT) or t.extern:
            problem = (
                C.E1105.say("extern_fn", name=written)
                if isinstance(t, T.FnRefT)
                else C.E1105.say("not_a_fn", name=written, found=T.describe(t))
            )
    elif not isinstance(e, A.Name) or e.name in env.vars:
        if not isinstance(e, A.Name):
            c.value(e, env)
        else:
            c.name(e, env)
        t = c.types.get(e)
        if isinstance(t, T.UnknownT):
            return None
        problem = C.E1105.say("a_value") if not isinstance(e, A.Name) else C.E1105.say("local_value", name=e.name)
    else:
        t = c.expr(e, env)
        if isinstance(t, T.UnknownT):
            return None
        if isinstance(t, T.FnRefT) and t.extern:
            problem = C.E1105.say("extern_fn", name=e.name)
        elif isinstance(t, T.BuiltinRefT):
            problem = C.E1105.say("builtin", name=e.name)
        elif not isinstance(t, T.FnRefT):
            problem = C.E1105.say("not_a_fn", name=e.name, found=T.describe(t))
    if problem is not None:
        c.diags.append(C.E1105.at(e.span, caller=caller, problem=problem))
        return None
    fn_type = c.types.get(e)
    info = c.g.fns.get(fn_type.name) if isinstance(fn_type, T.FnRefT) else None
    if info is None:
        return None
    if not info.params or not isinstance(info.params[0].type, T.ModelT):
        first = info.params[0].type if info.params else None
        if isinstance(first, T.UnknownT):
            return None
        problem = (
            C.E1105.say("first_not_model", fn=info.name, found=T.describe(first))
            if first is not None
            else C.E1105.say("no_parameters", fn=info.name)
        )
        c.diags.append(
            C.E1105.at(
                e.span,
                caller=caller,
                problem=problem,
                related=(LocalRelated(f"{info.name} is declared here", symbol=SymbolRef(("fn", info.name))),),
            )
        )
        return None
    muts = [p for p in info.params if p.mut]
    if muts:
        c.diags.append(
            C.E1105.at(
                e.span,
                caller=caller,
                problem=C.E1105.say("mut_param", fn=info.name, param=muts[0].name),
                related=(
                    LocalRelated("mut parameter declared here", symbol=SymbolRef(("param", info.name, muts[0].name))),
                ),
            )
        )
        return None
    return info


def _is_loss(t: T.Type) -> bool:
    return isinstance(t, T.TensorT) and t.rank == 0 and t.elem.is_float


def tangent_type(t: T.Type) -> T.Type | None:
    """The type of a derivative of a value of type `t` (no refinement: the
    derivative of a NonNeg can be negative); None when `t` has none."""
    if isinstance(t, T.TensorT) and t.elem.is_float:
        return T.TensorT(t.dims, t.elem.plain())
    if isinstance(t, T.TupleT):
        items = [tangent_type(x) for x in t.items]
        if any(x is None for x in items):
            return None
        return T.TupleT(tuple(x for x in items if x is not None))
    return None


def is_vag(e: A.Expr) -> bool:
    return isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.name == "value_and_grad"
