"""Lists of sub-models: a param whose type is a tuple of model types
(`param layers: (Layer[784, 500], Layer[500, 500])`), torch's nn.ModuleList
(and, called, nn.Sequential). What their declaration accepts (E0938)."""

from __future__ import annotations

from . import ast as A
from . import catalog as C
from . import types as T
from .diagnostics import LocalDiagnostic


def is_model_list(t: T.Type) -> bool:
    """A list of sub-models: a tuple of model types (torch's nn.ModuleList)."""
    return isinstance(t, T.TupleT) and bool(t.items) and all(isinstance(x, T.ModelT) for x in t.items)


def list_models(t: T.Type) -> tuple[T.ModelT, ...]:
    """The element models of a list of sub-models (none for another type)."""
    if not is_model_list(t):
        return ()
    assert isinstance(t, T.TupleT)
    return tuple(x for x in t.items if isinstance(x, T.ModelT))


def one_type(t: T.TupleT) -> bool:
    """Every element of the list has the same type (a non-literal index reads it as a stack)."""
    return all(x == t.items[0] for x in t.items)


def model_list_type(m: A.Member, ty: T.TupleT, diags: list[LocalDiagnostic], before: int) -> T.Type:
    """The type of a member written as a tuple: a list of sub-models when
    every element is a model; else one E0938 at the first element that is
    not (none when resolving the type reported already) and unknown."""
    assert isinstance(m.type, A.TupleType)
    if len(diags) > before:
        return T.UNKNOWN
    if any(isinstance(item, T.UnknownT) for item in ty.items):
        return T.UNKNOWN  # (reported where it was written, or through an import that failed)
    for k, (node, item) in enumerate(zip(m.type.items, ty.items)):
        if not isinstance(item, T.ModelT):
            diags.append(C.E0938.at(node.span, index=k, member=m.name.text, found=T.describe(item)))
            return T.UNKNOWN
    if not ty.items:
        return T.UNKNOWN
    return ty


def chain_kind(params) -> str | None:
    """How a forward (its params after `self`) is chained: "plain" (one
    tensor argument), "mode" (then a `mode: Mode`), None when it cannot be."""
    if not params or not isinstance(params[0].type, T.TensorT):
        return None
    rest = [p for p in params[1:] if not p.optional]
    if not rest:
        return "mode" if len(params) > 1 and isinstance(params[1].type, T.ModeT) else "plain"
    if len(rest) == 1 and rest[0] is params[1] and isinstance(rest[0].type, T.ModeT):
        return "mode"
    return None
