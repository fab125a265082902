"""Weights and tokenizers from elsewhere (docs/language.md, "Loading weights
from torch files"): `load_weights(m, path, prefix=, rename=, strict=, dtype=)`
reads a torch or safetensors state_dict into a model in place (a statement;
runtime/_weights.py), and `load_tokenizer(path, V)` a Hugging Face
tokenizer.json as a `Vocab[V]` that `encode` and `decode` take
(runtime/_tokenizer.py). What the file holds is checked when it runs; here,
the arguments: a model the function may change (E0502), a `Str` path, the
options (E1006), the fields `rename=` names (E0107), V a dim (E1007).
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from .args import dim_of_arg
from .checkpoint import _checkpoint_paths, _is_str, _pairs
from .registry import builtin
from .spec import BParam, Builtin, Lowering

OPTIONS = ("prefix", "rename", "strict", "dtype")
DTYPES = ("f32", "f64", "f16", "bf16")


@builtin(
    Builtin(
        name="load_weights",
        params=(
            BParam(name="m"),
            BParam(name="path"),
            BParam(name="prefix", required=False, keyword_only=True),
            BParam(name="rename", required=False, keyword_only=True),
            BParam(name="strict", required=False, keyword_only=True),
            BParam(name="dtype", required=False, keyword_only=True),
        ),
        signature='load_weights(m, path: Str, prefix="", rename=((key, field), ..), strict=True, dtype=f32)',
        doc="Reads a torch state_dict (a `.pt`/`.bin` file, or `.safetensors`) into the model m, in place: keys "
        "mapped by prefix= and rename=, every missing, unexpected or mis-shaped key named in one error; "
        "strict=False keeps the fields the file lacks, dtype= converts its floats.",
        example='m2 = M.init(seed=0)\nload_weights(m2, "model.safetensors", prefix="transformer.")',
        group="data",
        runtime="load_weights",
        lowering=Lowering.WEIGHTS,
        note="See [Loading weights from torch files](#loading-weights-from-torch-files).",
    ),
    raw=True,
)
def _load_weights(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    positional = [a for a in args if a.keyword is None]
    keywords = [a for a in args if a.keyword is not None]
    ok = True
    late = next((a for a in args[len(positional) :] if a.keyword is None), None)
    if len(positional) != 2 or late is not None:
        found = f"{len(positional)} positional argument{'s' if len(positional) != 1 else ''}"
        span = positional[2].node.span if len(positional) > 2 else paren
        c.diags.append(C.E1005.at(span, reason=C.E1005.say("arguments", found=found)))
        _eval(c, args, env)
        return T.UNKNOWN
    model_arg, path_arg = positional
    t = c.value(model_arg.node, env)
    model: T.ModelT | None = None
    if isinstance(t, T.ModelT):
        model = t
        src = c.immutable_source(model_arg.node, env)
        if src is not None:
            c.diags.append(
                C.E0502.at(model_arg.node.span, name=src.name, fn="load_weights", param="m", fix=c.make_mut_fix(src))
            )
            ok = False
    elif not isinstance(t, T.UnknownT):
        c.diags.append(C.E1005.at(model_arg.node.span, reason=C.E1005.say("not_a_model", found=T.describe(t))))
        ok = False
    else:
        ok = False
    ok = c.expect_number(path_arg, env, "Str", "path of load_weights") and ok
    seen: set[str] = set()
    for a in keywords:
        name = str(a.keyword)
        where = a.arg.keyword.span if a.arg and a.arg.keyword else a.span
        if name not in OPTIONS:
            c.diags.append(C.E1006.at(where, problem=C.E1006.say("unknown_option", name=name)))
            c.value(a.node, env)
            ok = False
            continue
        if name in seen:
            c.diags.append(C.E1006.at(where, problem=C.E1006.say("twice", name=name)))
            ok = False
            continue
        seen.add(name)
        ok = _option(c, name, a, env, model) and ok
    return T.UNIT if ok else T.UNKNOWN


def _option(c: RuleContext, name: str, a: CallArg, env: Env, model: T.ModelT | None) -> bool:
    if name == "strict":
        return c.expect_number(a, env, "Bool", "strict of load_weights")
    if name == "dtype":  # an element type's name, not a value: not evaluated
        e = a.node
        if isinstance(e, A.Name) and e.name in DTYPES:
            return True
        if isinstance(e, A.Name):
            found = e.name
        else:
            t = c.value(e, env)
            if isinstance(t, T.UnknownT):
                return False
            found = T.describe(t)
        c.diags.append(C.E1006.at(e.span, problem=C.E1006.say("dtype", found=found)))
        return False
    t = c.value(a.node, env)
    if isinstance(t, T.UnknownT):
        return False
    if name == "prefix":
        fits = _is_str(t) or (isinstance(t, T.TupleT) and len(t.items) == 2 and all(_is_str(x) for x in t.items))
    else:
        fits = _pairs(t)
        if fits and model is not None:
            _checkpoint_paths(c, model, "names", a.node)  # the fields named as literals exist (E0107)
    if not fits:
        found = T.describe(t)
        problem = C.E1006.say("prefix", found=found) if name == "prefix" else C.E1006.say("rename", found=found)
        c.diags.append(C.E1006.at(a.node.span, problem=problem))
    return fits


def _eval(c: RuleContext, args: list[CallArg], env: Env) -> None:
    for a in args:
        if not (a.keyword == "dtype" and isinstance(a.node, A.Name)):
            c.value(a.node, env)


@builtin(
    Builtin(
        name="load_tokenizer",
        params=(BParam(name="path"), BParam(name="size")),
        signature="load_tokenizer(path: Str, V) -> Vocab[V]",
        doc="A Hugging Face `tokenizer.json` (the tokenizers library's format) as a vocabulary of V tokens, for "
        "`encode` and `decode`; its size, added tokens included, is checked against V when it runs.",
        example='tok = load_tokenizer("tokenizer.json", D)',
        group="data",
        runtime="load_tokenizer",
        lowering=Lowering.WEIGHTS,
    ),
    raw=True,
)
def _load_tokenizer(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    positional = [a for a in args if a.keyword is None]
    if len(positional) != 2 or len(args) != 2:
        found = ", ".join(a.keyword + "=" if a.keyword else "a value" for a in args) or "no argument"
        c.diags.append(C.E1007.at(paren, reason=C.E1007.say("arguments", found=found)))
        for a in args:
            c.value(a.node, env)
        return T.UNKNOWN
    path_arg, size_arg = positional
    ok = c.expect_number(path_arg, env, "Str", "path of load_tokenizer")
    e = size_arg.node
    is_dim = isinstance(e, A.IntLit) or (
        isinstance(e, A.Name) and (e.name in c.fn.generics or c.dim_constant(e) is not None)
    )
    if not is_dim:
        t = c.value(e, env)
        if not isinstance(t, T.UnknownT):
            c.diags.append(C.E1007.at(e.span, reason=C.E1007.say("not_a_dim", found=T.describe(t))))
        return T.UNKNOWN
    dim = dim_of_arg(c, e, "load_tokenizer", "size")
    if dim is None or not ok:
        return T.UNKNOWN
    return T.VocabT(dim)
