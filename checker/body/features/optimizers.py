"""Optimizers outside their constructors: `opt.step(m, g)` (LBFGS's
`opt.step(m, f, args...)`), their fields (hyper-parameters and state),
`opt.lr = e`, and the param groups an optimizer's `groups=` gives
(each override one of its hyper-parameters; each group selects at least one
param that no earlier group took: E1201). The constructors' and `Group`'s
rules are in checker/builtins/optim.py.

An optimizer is state, like a model: stepping it or setting its learning rate
changes it, so that needs an optimizer the function created or received as a
`mut` parameter (E0501, as for a model's fields). `opt.step(m, g)` also changes
`m`, which needs a `mut` model as `m -= ...` does. A param belongs to the
first group that selects it; the params no group selects keep the
optimizer's own values, as torch.optim's first param group.
"""

from __future__ import annotations

import fnmatch

from ... import ast as A
from ... import catalog as C
from ... import types as T
from ...builtins.args import choice_arg
from ...declarations import suggest
from ...diagnostics import Fix, TextEdit
from ...model_lists import is_model_list, list_models
from ...optim_fields import optimizer_fields
from ...results import Ref
from ..context import RuleContext
from ..env import CallArg, Env
from ..text import expr_text
from .gradients import value_and_grad_call

SETTABLE = ("lr",)
_MAX_LEAVES = 10_000


def hyper_arg(c: RuleContext, a: CallArg, env: Env, word: str, what: str) -> bool:
    if word == "Str":  # LBFGS's line_search_fn: "strong_wolfe" or left out
        return choice_arg(c, a, env, what, ("strong_wolfe",)) is not None
    if word == "(Float, Float)":
        t = c.value(a.node, env)
        if isinstance(t, T.UnknownT):
            return False
        if (
            isinstance(t, T.TupleT)
            and len(t.items) == 2
            and all(isinstance(x, T.NumberT) and x.kind in ("Int", "Float") for x in t.items)
        ):
            return True
        c.diags.append(C.E0301.at(a.node.span, context=f"{what}: ", expected="(Float, Float)", found=T.describe(t)))
        return False
    return c.expect_number(a, env, word, what)


def optimizer_field(c: RuleContext, e: A.Field, obj: T.OptimT) -> T.Type:
    return builtin_field(c, e, obj.kind, optimizer_fields(obj), f"optimizer {obj}")


def builtin_field(c: RuleContext, e: A.Field, kind: str, fields, owner: str) -> T.Type:
    """A field of an optimizer or a schedule (`opt.lr`, `sched.last_epoch`):
    its type from the table, or E0107 with the nearest name."""
    name = e.name.text
    for n, t, _ in fields:
        if n == name:
            c.refs[e.name] = Ref("builtin", f"{kind}.{name}", kind)
            c.types[e.name] = t
            return t
    c.diags.append(C.E0107.at(e.name.span, name=name, owner=owner, hint=suggest(name, [n for n, _, _ in fields])))
    return T.UNKNOWN


def optimizer_method(
    c: RuleContext,
    node: A.Node,
    recv: T.OptimT,
    func: A.Field,
    args: list[CallArg],
    env: Env,
    paren: A.Span,
) -> T.Type:
    if func.name.text != "step":
        c.diags.append(
            C.E0107.at(
                func.name.span,
                name=func.name.text,
                owner=f"optimizer {recv}",
                hint=suggest(func.name.text, ["step"]),
            )
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    c.refs[func.name] = Ref("builtin", f"{recv.kind}.step", recv.kind)
    if recv.kind == "LBFGS":
        return lbfgs_step(c, node, recv, func, args, env, paren)
    matched = c.bind_args(f"{recv.kind}.step", [("m", True, False), ("g", True, False)], args, paren)
    if matched is None:
        c._eval_args(args, env)
        return T.UNIT
    bound, _ = matched
    m_arg, g_arg = bound["m"], bound["g"]
    mt = c.value(m_arg.node, env)
    gt = c.value(g_arg.node, env)
    context = f"opt.step of {recv}: "
    if not isinstance(mt, T.UnknownT) and not (isinstance(mt, T.ModelT) and mt.name == recv.model):
        c.diags.append(C.E0904.at(m_arg.node.span, context=context, expected=recv.model, found=T.describe(mt)))
    elif isinstance(mt, T.ModelT):
        require_mut_model(c, m_arg.node, env)
    if not isinstance(gt, T.UnknownT) and not (isinstance(gt, T.GradT) and gt.model == recv.model):
        c.diags.append(
            C.E0904.at(g_arg.node.span, context=context, expected=f"Grad[{recv.model}]", found=T.describe(gt))
        )
    require_mut_optimizer(c, func, func.value, env)
    return T.UNIT


def require_mut_model(c: RuleContext, e: A.Expr, env: Env) -> None:
    """A model changed by a statement (`opt.step(m, g)`): as `m -= ...`."""
    root = e
    while isinstance(root, (A.Field, A.Index)):
        root = root.value
    if isinstance(root, A.Name):
        c.require_mut(e, root, env.vars.get(root.name))


def require_mut_optimizer(c: RuleContext, target: A.Expr, opt: A.Expr, env: Env, what: str = "an optimizer") -> bool:
    """An optimizer (or a schedule) changes only when this function created
    it or got it as a `mut` parameter (E0501, once per value)."""
    var = env.vars.get(opt.name) if isinstance(opt, A.Name) else None
    if var is None or var.param is None or var.param.mut:
        return True
    key = ("E0501", expr_text(opt))
    if key in c.reported_once:
        return False
    c.reported_once.add(key)
    fix = Fix(
        f"Make '{var.param.name}' mut",
        (TextEdit(A.Span(var.param.decl.span.start, var.param.decl.span.start), "mut "),),
    )
    c.diags.append(
        C.E0501.at(
            target.span,
            field=expr_text(target),
            why=f"'{var.param.name}' is not a mut parameter ({what} changes only through one)",
            fix=fix,
        )
    )
    return False


def assign_optimizer_field(c: RuleContext, target: A.Field, obj: T.OptimT, t: T.Type, value: A.Expr, env: Env) -> None:
    """`opt.lr = e`: a learning-rate schedule. The other fields are read-only."""
    name = target.name.text
    ft = optimizer_field(c, target, obj)
    if isinstance(ft, T.UnknownT):
        return
    if name not in SETTABLE:
        c.diags.append(C.E0506.at(target.span, field=name, type=str(obj)))
        return
    if not require_mut_optimizer(c, target, target.value, env):
        return
    if isinstance(t, T.UnknownT):
        return
    if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
        return
    if isinstance(t, T.TensorT) and t.rank == 0 and t.elem.is_float:
        return
    c.diags.append(
        C.E0301.at(value.span, context=f"{obj.kind}.{name}: ", expected="Float (or a [] Float)", found=T.describe(t))
    )


def groups_value(c: RuleContext, a: CallArg, env: Env, kind: str) -> list[T.GroupT] | None:
    """The groups of `groups=`: a Group or a tuple of them; None after a diagnostic."""
    t = c.value(a.node, env)
    items = [t] if not isinstance(t, T.TupleT) else list(t.items)
    if any(isinstance(x, T.UnknownT) for x in items):
        return None
    if not items or not all(isinstance(x, T.GroupT) for x in items):
        c.diags.append(
            C.E1202.at(
                a.node.span,
                problem=C.E1202.say("groups_type", kind=kind, found=T.describe(t)),
            )
        )
        return None
    return [x for x in items if isinstance(x, T.GroupT)]


def check_groups(c: RuleContext, groups: list[T.GroupT], m: T.ModelT, kind: str) -> bool:
    """Each group's overrides are hyper-parameters of `kind`, and each
    group takes at least one param of the model (E1201)."""
    hyper = {n for n, _, _ in T.OPTIMIZERS[kind][0]}
    ok = True
    for g in groups:
        spans = dict(g.spans)
        for name, _ in g.overrides:
            if name not in hyper:
                c.diags.append(
                    C.E1202.at(
                        spans.get(name, spans["call"]),
                        problem=C.E1202.say(
                            "no_hyper",
                            kind=kind,
                            name=name,
                            settable=", ".join(n for n, _, _ in T.OPTIMIZERS[kind][0] if n in T.GROUP_OVERRIDABLE),
                        ),
                    )
                )
                ok = False
    if not ok:
        return False
    leaves = model_leaves(c, m)
    if leaves is None:
        return True
    taken: set[str] = set()
    for g in groups:
        mine = [p for p, r in leaves if p not in taken and group_selects(g, p, r)]
        if not mine:
            spans = dict(g.spans)
            sel = ", ".join(f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in g.selectors)
            earlier = [p for p, r in leaves if group_selects(g, p, r)]
            why = (
                f"an earlier group took {', '.join(earlier)}"
                if earlier
                else "its params: " + ", ".join(f"{p} (rank {r})" for p, r in leaves)
            )
            c.diags.append(C.E1201.at(spans["call"], group=f"Group({sel})", model=str(m), why=why))
            ok = False
        taken.update(mine)
    return ok


def model_leaves(c: RuleContext, m: T.ModelT, prefix: str = "", depth: int = 0) -> list[tuple[str, int]] | None:
    """(path, rank) of every floating param of the model, as the runtime
    names them (`blocks.0.ln.g`); None when they cannot be listed."""
    c.global_kind(m.name)  # the model's fields decide: a dependency of this body
    info = c.g.model(m)
    if info is None or info.partial or depth > 32:
        return None
    out: list[tuple[str, int]] = []
    for f in info.fields:
        if f.kind != "param":
            continue
        t = f.type
        if isinstance(t, T.TensorT):
            if t.elem.is_float:
                out.append((prefix + f.name, t.rank))
        elif isinstance(t, T.ModelT):
            sub = model_leaves(c, t, f"{prefix}{f.name}.", depth + 1)
            if sub is None:
                return None
            out.extend(sub)
        elif is_model_list(t):  # a list of sub-models: layers.0.weight, layers.1.weight
            for k, item in enumerate(list_models(t)):
                sub = model_leaves(c, item, f"{prefix}{f.name}.{k}.", depth + 1)
                if sub is None:
                    return None
                out.extend(sub)
        elif isinstance(t, T.StackT) and isinstance(t.item, T.ModelT):
            n = T.dim_value(t.dim)
            if n is None:
                return None
            for k in range(n):
                sub = model_leaves(c, t.item, f"{prefix}{f.name}.{k}.", depth + 1)
                if sub is None:
                    return None
                out.extend(sub)
        else:
            return None
        if len(out) > _MAX_LEAVES:
            return None
    return out


def lbfgs_step(
    c: RuleContext,
    node: A.Node,
    recv: T.OptimT,
    func: A.Field,
    args: list[CallArg],
    env: Env,
    paren: A.Span,
) -> T.Type:
    """`l = opt.step(m, f, args...)`: f(m, args...) as value_and_grad
    checks it; its value, the first loss of the step, is the result."""
    name = f"{recv.kind}.step"
    extra = [a for a in args if a.keyword in ("wrt", "batch")]
    for a in extra:
        c.diags.append(C.E0402.at(a.span, fn=name, name=a.keyword, hint=""))
    args = [a for a in args if a.keyword not in ("wrt", "batch")]
    positional = [a for a in args if a.keyword is None]
    if len(positional) < 2 or any(a.keyword is not None for a in args[:2]):
        c.diags.append(
            C.E0401.at(paren, name=name, expected="at least 2 positional arguments (m, f)", found=str(len(positional)))
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    m_arg, f_arg = args[0], args[1]
    result = value_and_grad_call(c, node, [f_arg, m_arg, *args[2:]], env, paren, name)
    require_mut_optimizer(c, func, func.value, env)
    mt = c.types.get(m_arg.node)
    if isinstance(mt, T.ModelT):
        if mt.name != recv.model:
            c.diags.append(
                C.E0904.at(m_arg.node.span, context=f"{name} of {recv}: ", expected=recv.model, found=T.describe(mt))
            )
            return T.UNKNOWN
        require_mut_model(c, m_arg.node, env)
    if not isinstance(result, T.TupleT):
        return T.UNKNOWN
    value = result.items[0]
    if isinstance(value, T.TupleT):  # aux outputs: LBFGS's f returns the loss alone
        c.sites.pop(node, None)  # type: ignore[call-overload]
        c.diags.append(C.E1106.at(f_arg.node.span, name=expr_text(f_arg.node), found=str(value), related=()))
        return T.UNKNOWN
    return value


def group_selects(g: T.GroupT, path: str, rank: int) -> bool:
    for k, v in g.selectors:
        if k == "max_rank" and isinstance(v, int) and rank > v:
            return False
        if k == "min_rank" and isinstance(v, int) and rank < v:
            return False
        if k == "names" and isinstance(v, str) and not fnmatch.fnmatchcase(path, v):
            return False
    return True
