"""Walks over a model (docs/language.md, "Walking a model"): `named_params(m,
seed=s)` gives each param with its torch name (`blocks.0.attn.c_proj.weight`),
`modules(m, nn.Linear, seed=s)` each sub-model of a kind, `num_params(m)` the
count torch's `sum(p.numel() for p in m.parameters())` gives; `ndim(x)` and
`numel(x)` read a tensor's rank and size (a walked param has a rank known
only at run time). `p.init(INITIALIZER)` (`init_method`) writes a param of a
walk in place, drawing from the walk's generator; `name.endswith(...)` and
`name.startswith(...)` (`str_method`) test a param's name.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.text import expr_text, plural
from ..declarations import leaf_params, model_closure
from ..initializers import INITIALIZERS, initializer_name
from ..names import suggest
from .args import Bound, tensor_arg
from .registry import builtin
from .spec import SEED, BParam, Builtin, X

WALKS = ("named_params", "modules")  # the built-ins a `for` walks (checker/body/flow.py)
STR_METHODS = ("endswith", "startswith")
_MODEL = BParam("m")


def _model_arg(c: RuleContext, b: Builtin, a: CallArg, env: Env) -> T.ModelT | None:
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return None
    if not isinstance(t, T.ModelT):
        c.diags.append(C.E0934.at(a.node.span, callee=b.name, reason=C.E0934.say("not_a_model", found=T.describe(t))))
        return None
    c.escape_if_model(a.node, env, f"walked by {b.name}")  # it reads every param
    return t


def _param_type(c: RuleContext, t: T.ModelT) -> T.TensorT:
    """A walked param: a tensor of any rank, of the model's float type."""
    for m in model_closure(c.g, t):
        c.global_kind(m if isinstance(m, str) else m.name)  # the leaves depend on every model inside t
    elems = {f.type.elem for _, _, f in leaf_params(c.g, t) if isinstance(f.type, T.TensorT)}
    elem = elems.pop() if len(elems) == 1 else T.F32
    return T.TensorT((T.REST,), elem)


@builtin(
    Builtin(
        name="named_params",
        params=(_MODEL, SEED),
        signature="named_params(m: M, seed=Int) -> iterable of (Str, [..] Float)",
        doc="Each param of a model with its torch name (`blocks.0.attn.c_proj.weight`, the state_dict key), in "
        "state_dict order; `p.init(...)` in the loop draws from one generator seeded with `seed`.",
        example="for name, p in named_params(m, seed=0):\n    print(name, numel(p))",
        group="other",
        runtime="named_params",
        note="See [Walking a model](#walking-a-model).",
    )
)
def _named_params(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    c.expect_number(bound["seed"], env, "Int", "seed")
    t = _model_arg(c, b, bound["m"], env)
    if t is None:
        return T.IterT(T.TupleT((T.STR, T.UNKNOWN)))
    return T.IterT(T.TupleT((T.STR, _param_type(c, t))))


@builtin(
    Builtin(
        name="modules",
        params=(_MODEL, BParam("kind"), SEED),
        signature="modules(m: M, kind: model, seed=Int) -> iterable of kind",
        doc="Each sub-model of `m` of one kind (`nn.Linear`, `Block`: a model's name without dims), in "
        "state_dict order, typed as that model with dims unknown; `.init(...)` of its params in the loop draws "
        "from one generator seeded with `seed`.",
        example="for layer in modules(m, M, seed=0):\n    print(layer.w)",
        group="other",
        runtime="modules",
        note="See [Walking a model](#walking-a-model).",
    )
)
def _modules(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    c.expect_number(bound["seed"], env, "Int", "seed")
    t = _model_arg(c, b, bound["m"], env)
    k = bound["kind"]
    kind = c.expr(k.node, env)
    if isinstance(kind, T.UnknownT):
        return T.IterT(T.UNKNOWN)
    if not isinstance(kind, T.ModelClassT) or isinstance(k.node, A.Index):
        reason = C.E0934.say("not_a_kind", found=T.describe(kind) if isinstance(kind, T.ModelClassT) else str(kind))
        c.diags.append(C.E0934.at(k.node.span, callee=b.name, reason=reason))
        return T.IterT(T.UNKNOWN)
    if t is None:
        return T.IterT(T.UNKNOWN)
    c.global_kind(kind.name)
    info = c.g.model(kind.name)
    dims = tuple(T.DimUnknown() for _ in info.dims) if info is not None and info.takes else ()
    return T.IterT(T.ModelT(kind.name, dims, generic=bool(dims)))


@builtin(
    Builtin(
        name="num_params",
        params=(_MODEL,),
        signature="num_params(m: M) -> Int",
        doc="How many numbers the params of a model hold, its sub-models' included: torch's "
        "`sum(p.numel() for p in m.parameters())`.",
        example="n = num_params(m)",
        group="other",
        runtime="num_params",
        note="See [Walking a model](#walking-a-model).",
    )
)
def _num_params(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    _model_arg(c, b, bound["m"], env)
    return T.INT


@builtin(
    Builtin(
        name="ndim",
        params=(X,),
        signature="ndim(x: [..]) -> Int",
        doc="How many dims a tensor has (torch's `x.dim()`); of a walked param, known at run time.",
        example="r = ndim(x)",
        group="other",
        runtime="ndim",
        rest_ok=True,
    ),
    Builtin(
        name="numel",
        params=(X,),
        signature="numel(x: [..]) -> Int",
        doc="How many numbers a tensor holds (torch's `x.numel()`).",
        example="n = numel(x)",
        group="other",
        runtime="numel",
        rest_ok=True,
    ),
)
def _tensor_size(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    tensor_arg(c, bound["x"], env, b.name, "x", float_only=False)
    return T.INT


# -- p.init(...) and name.endswith(...) (called from checker/body/calls.py)


def _root(e: A.Expr) -> A.Expr:
    while isinstance(e, (A.Field, A.Index)):
        e = e.value
    return e


def is_init_of(recv: T.Type, args: list[CallArg]) -> bool:
    """Whether `x.init(...)` is an initializer applied in place: `x` a tensor,
    or of a type with an error already and given one initializer (not
    `M.init(seed=...)` of a model written wrong)."""
    if isinstance(recv, T.TensorT):
        return True
    if not isinstance(recv, T.UnknownT) or len(args) != 1 or args[0].keyword is not None:
        return False
    name = initializer_name(args[0].node)
    return name is not None and name.name in INITIALIZERS


def init_method(c: RuleContext, func: A.Field, recv: T.Type, args: list[CallArg], env: Env) -> T.Type:
    """`p.init(INITIALIZER)`: a param of a walk (`p` of `named_params`, or
    `layer.weight` of `modules`) written in place; the walk's model is `mut`.
    Of a value whose type has an error already: its numbers only."""
    if not isinstance(recv, T.TensorT):
        _eval(c, args, env)
        return T.UNKNOWN
    target = func.value
    root = _root(target)
    var = env.vars.get(root.name) if isinstance(root, A.Name) else None
    walk = None
    if var is not None and var.defs:
        walks = {c.walk_vars.get(d) for d in var.defs}
        walk = walks.pop() if len(walks) == 1 else None
    through_model = isinstance(target, A.Field) and isinstance(c.types.get(root), T.ModelT)
    # `p` of named_params itself, or a field of a sub-model `modules` gives
    walked = var is not None and isinstance(target, A.Name) == isinstance(var.type, T.TensorT)
    if walk is None or not walked:
        what = C.E0935.say("a_field") if through_model and walk is None else C.E0935.say("a_value")
        c.diags.append(C.E0935.at(func.span, target=expr_text(target), what=what))
        _eval(c, args, env)
        return T.UNIT
    model_root = _root(walk)
    model_var = env.vars.get(model_root.name) if isinstance(model_root, A.Name) else None
    if not c.require_mut(func, model_root, model_var):
        _eval(c, args, env)
        return T.UNIT
    _check_initializer(c, func, recv, args, env)
    return T.UNIT


def _eval(c: RuleContext, args: list[CallArg], env: Env) -> None:
    """The values of arguments not checked (after a diagnostic): an
    initializer's numbers, not its name."""
    for a in args:
        name = initializer_name(a.node)
        if name is None or name.name in env.vars or name.name not in INITIALIZERS:
            c.value(a.node, env)
        elif isinstance(a.node, A.Call):
            for x in a.node.args:
                if not isinstance(x.value, A.StrLit):
                    c.value(x.value, env)


def _check_initializer(c: RuleContext, func: A.Field, recv: T.TensorT, args: list[CallArg], env: Env) -> None:
    target = expr_text(func.value)

    def bad(span: A.Span, problem: str) -> None:
        c.diags.append(C.E0936.at(span, target=target, problem=problem))

    if len(args) != 1 or args[0].keyword is not None:
        bad(func.span, C.E0936.say("one_initializer"))
        _eval(c, args, env)
        return
    init = args[0].node
    name_node = initializer_name(init)
    if name_node is None or name_node.name in env.vars:
        # a number (or a Float variable): every value set to it
        t = c.value(init, env)
        if not isinstance(t, (T.NumberT, T.UnknownT)) or (isinstance(t, T.NumberT) and t.kind == "Str"):
            bad(init.span, C.E0936.say("not_an_initializer", name=expr_text(init), hint=""))
        return
    name = name_node.name
    spec = INITIALIZERS.get(name)
    if spec is None:
        bad(name_node.span, C.E0936.say("not_an_initializer", name=name, hint=suggest(name, INITIALIZERS)))
        return
    if spec.floats and not recv.elem.is_float:
        bad(init.span, C.E0936.say("needs_float", name=name, type=recv))
        return
    if spec.needs_2d and not T.has_rest(recv) and recv.rank < 2:
        bad(init.span, C.E0936.say("needs_2d", name=name, type=recv))
        return
    params = spec.params
    names = [p.name for p in params]
    required = [p.name for p in params if p.default is None]
    given: set[str] = set()
    for i, a in enumerate(init.args if isinstance(init, A.Call) else ()):
        key = a.keyword.text if a.keyword is not None else (names[i] if i < len(names) else None)
        if key is None:
            bad(a.span, C.E0936.say("arguments", name=name, count=plural(len(names), "argument")))
            return
        if key not in names:
            bad(a.span, C.E0936.say("no_keyword", name=name, key=key))
            return
        if key in given:
            bad(a.span, C.E0936.say("twice", name=name, key=key))
            return
        given.add(key)
        words = next(p.words for p in params if p.name == key)
        if words:
            if not (isinstance(a.value, A.StrLit) and a.value.value in words):
                bad(a.value.span, C.E0936.say("a_word", name=name, key=key, choices=", ".join(f'"{w}"' for w in words)))
                return
        else:
            c.expect_number(CallArg(a.value, None, a.value.span), env, "Float", f"{name}'s {key}")
    if any(p not in given for p in required):
        bad(init.span, C.E0936.say("missing", name=name, count=len(required), example=spec.example))


def str_method(c: RuleContext, func: A.Field, args: list[CallArg], env: Env) -> T.Type | None:
    """`name.endswith("bias")`, `name.startswith("blocks.")`: a Bool; None
    for another method (not one of a Str)."""
    if func.name.text not in STR_METHODS:
        return None
    if len(args) != 1 or args[0].keyword is not None:
        c.diags.append(
            C.E0301.at(func.span, context=f"{func.name.text}: ", expected="one Str argument", found=f"{len(args)}")
        )
        return T.BOOL_N
    c.expect_number(args[0], env, "Str", f"argument of {func.name.text}")
    return T.BOOL_N


_POSITIONAL = ("normal", "uniform", "trunc_normal")  # rt.init's own parameter names differ (lo, hi)


def initializer_text(init: A.Expr, number: Callable[[A.Expr], str]) -> str:
    """`p.init(INITIALIZER)`'s initializer as Python (checker/compile_body.py):
    `rt.init.normal(0.0, std)`, its numbers the body's expressions as
    `number` renders them; a number, as itself."""
    name = initializer_name(init)
    if name is None or name.name not in INITIALIZERS:
        return number(init)
    args = init.args if isinstance(init, A.Call) else ()
    names = [p.name for p in INITIALIZERS[name.name].params]
    rendered = []
    for i, a in enumerate(args):
        key = a.keyword.text if a.keyword is not None else names[i]
        value = repr(a.value.value) if isinstance(a.value, A.StrLit) else number(a.value)
        rendered.append(value if a.keyword is None and name.name in _POSITIONAL else f"{key}={value}")
    if name.name in ("xavier_uniform", "xavier_normal"):
        kind = name.name.rpartition("_")[2]
        return f"rt.init.glorot({kind!r}, {', '.join(rendered)})" if rendered else f"rt.init.glorot_{kind}"
    if name.name in ("zeros", "ones", "xavier"):
        return f"rt.init.{name.name}"
    return f"rt.init.{name.name}({', '.join(rendered)})"
