"""Tied params (docs/language.md, "Tied params"): `param head: [V E] =
tied(wte)` makes a field the same tensor as a param declared before it in
the model, `param dec: Block = tied(enc)` two sub-models one. The checker
(checker/model_decl.py) reads a member's tie here; the compiler emits the
pairs as the class's `_qv_ties` (runtime/_model.py does the rest)."""

from __future__ import annotations

from collections.abc import Sequence

from . import ast as A
from . import catalog as C
from . import types as T
from .infos import FieldInfo
from .names import suggest
from .typectx import TypeContext

TIED = "tied"


def is_tie(init: A.Expr | None) -> bool:
    """Whether a member's initializer is `tied(...)`."""
    return isinstance(init, A.Call) and isinstance(init.func, A.Name) and init.func.name == TIED


def tie_source(init: A.Expr | None) -> str | None:
    """The field `tied(wte)` names, or None (not a tie, or a malformed one)."""
    if not is_tie(init):
        return None
    assert isinstance(init, A.Call)
    if len(init.args) != 1 or init.args[0].keyword is not None or not isinstance(init.args[0].value, A.Name):
        return None
    return init.args[0].value.name


def check_tie(m: A.Member, ty: T.Type, before: Sequence[FieldInfo], ctx: TypeContext) -> None:
    """`param head: [V E] = tied(wte)`: `wte` a param declared before, of
    the same type, and neither under an option (E0937, one per member)."""
    init = m.init
    assert isinstance(init, A.Call)
    name = m.name.text

    def bad(span: A.Span, reason: str) -> None:
        ctx.diagnostics.append(C.E0937.at(span, name=name, reason=reason))

    source = tie_source(init)
    if source is None:
        bad(init.span, C.E0937.say("not_a_name"))
        return
    arg = init.args[0].value
    if m.kind == "buffer":
        bad(m.span, C.E0937.say("a_buffer", what=name))
        return
    found = next((f for f in before if f.name == source), None)
    if found is None:
        hint = suggest(source, [f.name for f in before if f.kind == "param"])
        bad(arg.span, C.E0937.say("unknown_source", source=source, hint=hint))
        return
    if found.kind == "buffer":
        bad(arg.span, C.E0937.say("a_buffer", what=source))
        return
    if m.cond is not None or found.when is not None:
        bad(init.span, C.E0937.say("conditional", what=name if m.cond is not None else source))
        return
    if isinstance(ty, T.UnknownT) or isinstance(found.type, T.UnknownT):
        return  # reported where the type is written
    if ty != found.type:
        bad(
            init.span,
            C.E0937.say("different_types", name=name, type=ty, source=source, source_type=found.type),
        )


def tie_pairs(fields: Sequence[FieldInfo]) -> tuple[tuple[str, str], ...]:
    """`(tied, source)` names of a checked model's ties, each source followed
    to the field that is not tied itself (`c = tied(b)`, `b = tied(a)`: both a)."""
    sources = {f.name: s for f in fields if (s := tie_source(f.decl.init)) is not None}
    out = []
    for tied, source in sources.items():
        seen = {tied}
        while source in sources and source not in seen:
            seen.add(source)
            source = sources[source]
        out.append((tied, source))
    return tuple(out)
