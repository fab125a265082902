"""Checkpoints: `save(path, m)`, `save(path, model=m, opt=opt, step=s)`,
`load(path, m)` and `step = load(path, model=m, opt=opt, step=0)`
(docs/language.md, "Checkpoints").

The path comes first. Then either one value positionally (a model or an
optimizer: its state alone) or several by keyword (models, optimizers and
numbers, each under its keyword). What has a state to save is decided by
`T.is_savable`; numbers are saved as themselves. `load` changes the models
and optimizers it is given, so each must be one the function may change, as
for an argument passed to a `mut` parameter (E0502); it returns the numbers
of its number keywords (their given values fix the types): nothing, one
number, or a tuple of them in keyword order. `names=`, `transpose=` and
`strict=` are `load`'s options (the first two only with one model given
positionally: a torch `state_dict` read into a model).
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.features.checkpoints import OPTIONS
from ..diagnostics import Fix, TextEdit
from ..model_lists import is_model_list, list_models
from ..names import suggest
from .registry import builtin
from .spec import PATH, BParam, Builtin, Lowering

NUMBERS = ("Int", "Float", "Bool")


@builtin(
    Builtin(
        name="save",
        params=(PATH, BParam(name="value", required=False)),
        signature="save(path: Str, m) / save(path: Str, model=m, opt=opt, step=Int, ...)",
        doc="Writes a model's or optimizer's state (a torch state dict), or several models, optimizers and "
        "numbers under their keywords, to one file (torch.save); the path is relative to the `.qv` file.",
        example='save("ckpt.pt", m)',
        group="data",
        runtime="save_checkpoint",
        lowering=Lowering.CHECKPOINT,
        note="See [Checkpoints](#checkpoints).",
    ),
    Builtin(
        name="load",
        params=(
            PATH,
            BParam(name="value", required=False),
            BParam(name="names", required=False, keyword_only=True),
            BParam(name="transpose", required=False, keyword_only=True),
            BParam(name="strict", required=False, keyword_only=True),
        ),
        signature="load(path: Str, m, names=.., transpose=.., strict=True) / load(path: Str, model=m, opt=opt, step=0, ...)"
        " -> the numbers",
        doc="Reads what `save` wrote into the models and optimizers given, in place, and returns the numbers of the "
        "number keywords (the given values fix their types).",
        example='step = load("ckpt.pt", step=0)',
        group="data",
        runtime="load_checkpoint",
        lowering=Lowering.CHECKPOINT,
        note="See [Checkpoints](#checkpoints).",
    ),
    raw=True,
)
def _checkpoint(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    fn = b.name
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    options = {str(a.keyword): a for a in keywords if a.keyword in OPTIONS}
    entries = [a for a in keywords if a.keyword not in OPTIONS]
    ok = True
    seen: set[str] = set()
    for a in keywords:
        if a.keyword in seen:
            c.diags.append(C.E0404.at(a.span, name=a.keyword, fn=fn))
            ok = False
        seen.add(str(a.keyword))
    first_kw = next((i for i, a in enumerate(args) if a.keyword is not None), len(args))
    late = next((a for a in args[first_kw:] if a.keyword is None), None)
    if late is not None:
        c.diags.append(C.E0405.at(late.span))
        c._eval_args(args, env)
        return T.UNKNOWN
    if not positional:
        c.diags.append(
            C.E0401.at(paren, name=fn, expected=f"a path first, as in {fn}(path, m)", found="no positional argument")
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    c.expect_number(positional[0], env, "Str", f"path of {fn}")
    values = positional[1:]
    problem = None
    if not values and not entries:
        problem = C.E0916.say("nothing_given", fn=fn)
    elif len(values) > 1:
        problem = C.E0916.say("several_positional", fn=fn)
    elif values and entries:
        problem = C.E0916.say("positional_and_keyword", fn=fn)
    if fn == "save" and options:
        a = next(iter(options.values()))
        c.diags.append(
            C.E0916.at(
                a.arg.keyword.span if a.arg and a.arg.keyword else a.span,
                fn=fn,
                problem=C.E0916.say("load_option_saved", keyword=a.keyword),
            )
        )
        c._eval_args(args, env)
        return T.UNKNOWN
    if problem is not None:
        span = values[1] if len(values) > 1 else values[0] if values and entries else None
        c.diags.append(C.E0916.at(span.node.span if span is not None else paren, fn=fn, problem=problem))
        c._eval_args(args, env)
        return T.UNKNOWN
    first = _checkpoint_value(c, fn, values[0], env, positional=True) if values else None
    if values and first is None:
        ok = False
    numbers: list[T.Type] = []
    for a in entries:
        t = _checkpoint_value(c, fn, a, env, positional=False)
        if t is None:
            ok = False
        elif isinstance(t, T.NumberT):
            numbers.append(T.NumberT(t.kind))
    if fn == "load":
        ok = _checkpoint_options(c, options, first, env) and ok
    if fn == "save" or not ok:
        return T.UNIT if ok else T.UNKNOWN
    if not numbers:
        return T.UNIT
    return numbers[0] if len(numbers) == 1 else T.TupleT(tuple(numbers))


def _checkpoint_value(c: RuleContext, fn: str, a: CallArg, env: Env, positional: bool) -> T.Type | None:
    """The type of one value saved or loaded; None (with its diagnostic) if it cannot be."""
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return None
    number = isinstance(t, T.NumberT) and t.kind in NUMBERS
    if T.is_savable(t) or (number and not positional):
        if fn == "save":
            c.escape_if_model(a.node, env, "saved")
        elif not number:
            _checkpoint_mut(c, a, env)
        return t
    what = f"'{a.keyword}' of {fn}" if a.keyword else f"the value of {fn}"
    expected = "a model or an optimizer" if positional else "a model, an optimizer or a number (Int, Float, Bool)"
    if positional and number:
        expected += f" (a number goes by keyword: {fn}(path, step=...))"
    c.diags.append(C.E0301.at(a.node.span, context=f"{what}: ", expected=expected, found=T.describe(t)))
    return None


def _state_paths(c: RuleContext, t: T.ModelT, prefix: str = "") -> dict[str, T.Type] | None:
    """Every field path of a model (`fc1.weight`, `blocks.0.wq`) and its
    type, as `save(path, m)` writes them; None where that is not known here."""
    c.global_kind(t.name)  # the model's fields decide: a dependency of this body
    model = c.g.model(t)
    if model is None or model.partial:
        return None
    out: dict[str, T.Type] = {}
    for f in model.fields:
        path = prefix + f.name
        ft = f.type
        if isinstance(ft, T.StackT) and isinstance(ft.item, T.ModelT):
            count = T.dim_value(ft.dim)
            if count is None:
                return None
            for i in range(count):
                inner = _state_paths(c, ft.item, f"{path}.{i}.")
                if inner is None:
                    return None
                out.update(inner)
        elif is_model_list(ft):  # a list of sub-models: layers.0.weight, layers.1.weight
            for i, item in enumerate(list_models(ft)):
                inner = _state_paths(c, item, f"{path}.{i}.")
                if inner is None:
                    return None
                out.update(inner)
        elif isinstance(ft, T.ModelT):
            inner = _state_paths(c, ft, path + ".")
            if inner is None:
                return None
            out.update(inner)
        elif isinstance(ft, T.TensorT):
            out[path] = ft
        else:
            return None
    return out


def _checkpoint_paths(c: RuleContext, model: T.ModelT, name: str, e: A.Expr) -> None:
    """The fields that `names=` / `transpose=` write as literals exist
    (E0107), and those transposed are 2-D (E0301)."""
    paths = _state_paths(c, model)
    if paths is None:
        return
    for lit in _fields_named(name, e):
        t = paths.get(lit.value)
        if t is None:
            hint = suggest(lit.value, list(paths))
            fix = Fix(f"Change to '{hint.name}'", (TextEdit(lit.span, f'"{hint.name}"'),)) if hint.name else None
            c.diags.append(C.E0107.at(lit.span, name=lit.value, owner=f"model {model}", hint=str(hint), fix=fix))
        elif name == "transpose" and not (isinstance(t, T.TensorT) and t.rank == 2):
            c.diags.append(
                C.E0301.at(
                    lit.span,
                    context="transpose of load: ",
                    expected="a 2-D field",
                    found=f"{lit.value}, which is {T.describe(t)}",
                )
            )


def _checkpoint_mut(c: RuleContext, a: CallArg, env: Env) -> None:
    """A model or optimizer that load changes: one this function made or
    received as `mut` (the rule of passing it to a `mut` parameter, E0502)."""
    src = c.immutable_source(a.node, env)
    if src is None:
        return
    fix = c.make_mut_fix(src)
    param = a.keyword or "m"
    c.diags.append(
        C.E0502.at(
            a.node.span,
            name=src.name,
            fn="load",
            param=param,
            fix=fix,
        )
    )


def _checkpoint_options(c: RuleContext, options: dict[str, CallArg], model: T.Type | None, env: Env) -> bool:
    ok = True
    if "strict" in options:
        ok = c.expect_number(options["strict"], env, "Bool", "strict of load") and ok
    for name in ("names", "transpose"):
        a = options.get(name)
        if a is None:
            continue
        if not isinstance(model, T.ModelT):
            c.diags.append(
                C.E0916.at(
                    a.arg.keyword.span if a.arg and a.arg.keyword else a.span,
                    fn="load",
                    problem=C.E0916.say("map_needs_model", name=name),
                )
            )
            c.value(a.node, env)
            ok = False
            continue
        t = c.value(a.node, env)
        if isinstance(t, T.UnknownT):
            ok = False
            continue
        fits = _strs(t) if name == "transpose" else _pairs(t)
        if fits and isinstance(model, T.ModelT):
            _checkpoint_paths(c, model, name, a.node)
        if not fits:
            expected = (
                'a field\'s path or a tuple of them, as in ("fc1.weight", "fc2.weight")'
                if name == "transpose"
                else 'a pair (key in the file, field) or a tuple of pairs, as in (("0.weight", "fc1.weight"),)'
            )
            c.diags.append(C.E0301.at(a.node.span, context=f"{name} of load: ", expected=expected, found=T.describe(t)))
            ok = False
    return ok


def _fields_named(name: str, e: A.Expr) -> list[A.StrLit]:
    """The field paths written as literals in `names=` (the second of each
    pair) or `transpose=` (each); those given otherwise are checked when it runs."""
    if name == "transpose":
        items = [e] if isinstance(e, A.StrLit) else list(e.items) if isinstance(e, A.TupleExpr) else []
        return [x for x in items if isinstance(x, A.StrLit)]
    if isinstance(e, A.TupleExpr) and len(e.items) == 2 and all(isinstance(x, A.StrLit) for x in e.items):
        pairs = [e]
    else:
        pairs = [x for x in e.items if isinstance(x, A.TupleExpr)] if isinstance(e, A.TupleExpr) else []
    return [p.items[1] for p in pairs if len(p.items) == 2 and isinstance(p.items[1], A.StrLit)]


def _is_str(t: T.Type) -> bool:
    return isinstance(t, T.NumberT) and t.kind == "Str"


def _strs(t: T.Type) -> bool:
    return _is_str(t) or (isinstance(t, T.TupleT) and all(_is_str(x) for x in t.items))


def _pair(t: T.Type) -> bool:
    return isinstance(t, T.TupleT) and len(t.items) == 2 and all(_is_str(y) for y in t.items)


def _pairs(t: T.Type) -> bool:
    return _pair(t) or (isinstance(t, T.TupleT) and all(_pair(x) for x in t.items))
