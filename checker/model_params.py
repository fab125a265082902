"""Models built from model types (docs/language.md, "Models built from model
types"): `model ResNet[B: ResBlock, E = 1]` takes a model for B, which its
fields instantiate as the trait writes (`param layer2: B[C1, (2*C1),
stride=2]`), and `ResNet[BasicBlock, 1]` is the network of BasicBlocks.

The generic model is checked once: B's instances are opaque models with the
trait's methods and dims (`T.ModelT("B", dims, bound=(trait,))`, read by
typectx from `TypeContext.ctor_params`). An instance holds the model given as
a `T.ModelArg` among its options; `model_decl.instance` puts it in for B in
the fields (`shapes.Bindings.ctors`), so the instance's fields are ordinary
sub-models and gradients, optimizers, checkpoints and the runtime treat them
as any. Whether a model given for B has the trait's dims and methods is
checked where it is written, once every model is declared (`obligations`,
checked by the analysis on every update: traits.unmet_obligations, E0946,
E0947, E0920, E0921)."""

from __future__ import annotations

from . import ast as A
from . import catalog as C
from .names import is_model_param, kind_word, suggest
from .typectx import TypeContext

Obligation = tuple[str, tuple[str, ...], A.Span, str]


def read_model_params(
    params: tuple[A.ModelParam, ...], owner: str, ctx: TypeContext, trait: bool = False
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The model parameters of a header (`B: ResBlock`), each checked (E0948)
    and put in `ctx.ctor_params`, so the fields' `B[...]` read them."""
    out: list[tuple[str, tuple[str, ...]]] = []
    others = False
    for p in params:
        if not is_model_param(p):
            others = True
            continue
        name = p.name.text
        assert isinstance(p.type, A.NamedType)
        bound = p.type.name
        if trait:
            ctx.diagnostics.append(C.E0948.at(p.span, problem=C.E0948.say("in_trait", param=name)))
            continue
        if others:
            problem = C.E0948.say("not_first", param=name, model=owner)
            ctx.diagnostics.append(C.E0948.at(p.span, problem=problem))
        kind = ctx.kind(bound.text, bound.span)
        if kind is not None and kind.startswith("broken"):
            ctx.ctor_params[name] = ()
            continue
        if kind != "trait":
            if kind is None:
                hint = suggest(bound.text, ctx.all_of("trait"))
                problem = C.E0948.say("unknown_trait", param=name, name=bound.text, hint=hint)
            else:
                problem = C.E0948.say("not_a_trait", param=name, name=bound.text, kind=kind_word(kind))
            ctx.diagnostics.append(C.E0948.at(bound.span, problem=problem))
            ctx.ctor_params[name] = ()
            continue
        qual = ctx.canon(bound.text)
        sig = ctx.names.model_sigs.get(qual)
        if sig is None or not sig.dims:
            problem = C.E0948.say("trait_takes_nothing", trait=bound.text)
            ctx.diagnostics.append(C.E0948.at(bound.span, problem=problem))
            ctx.ctor_params[name] = ()
            continue
        ctx.ctor_params[name] = (qual,)
        out.append((name, (qual,)))
    return tuple(out)
