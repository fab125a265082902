"""Where a wrong size came from: a convolution's padding.

A convolution computes its output's sizes (`((H+2*p-K)/s+1)`), so a wrong
padding is legal where it is written and only fails where the result meets
a declared type (a `return`, an argument). That place gets the one
diagnostic (E0201; a second one at the convolution would be a cascade), and
this module adds what the user needs to fix it at the convolution: the
message says which call made the sizes and the padding that gives the ones
expected (`(from conv2d with padding 0; padding=1 keeps H and W)`), a related
location points at the call, and for `conv2d(...)` a quick fix writes the
padding. Layers are convolutions too: a call of a method of a model named
`...Conv...` that takes a `padding` dim (nn.Conv2d) is one.

Each convolution the body checks is recorded with a way to compute its
sizes again with another padding (`SizeSource.retry`); a mismatch whose
found type is exactly the result of the last such call before it, and
differs from the expected one at the sizes the call computed, is explained.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .. import ast as A
from .. import shapes as S
from .. import types as T
from ..diagnostics import Fix, LocalRelated, TextEdit
from .text import expr_text

if TYPE_CHECKING:
    from ..declarations import Globals
    from ..infos import FnInfo, ParamInfo
    from .env import CallArg

# paddings tried for a layer, whose kernel is not read here
LAYER_PADDINGS = 8


@dataclass(frozen=True)
class SizeSource:
    span: A.Span  # the call
    name: str  # the call's name: "conv2d", "m.conv1"
    kind: str  # what it is, for a layer: "nn.Conv2d" ("" for conv2d)
    input: T.TensorT
    result: T.TensorT
    axes: tuple[int, ...]  # the axes of the result whose sizes it computed (the input's are the same)
    padding: str  # the padding it was given, as the message writes it
    retry: Callable[[int], tuple[T.Dim, ...] | None]  # the sizes with another padding
    paddings: int  # the paddings to try: 0 to this
    fix_at: tuple[A.Span, str] | None  # where `conv2d(...)`'s padding is written, and the text before it


class _Checker(Protocol):
    """What these hints read of the checker, and where they keep the sizes'
    sources (`BodyChecker` is one)."""

    @property
    def g(self) -> Globals: ...
    @property
    def size_sources(self) -> dict[tuple[int, int], SizeSource]: ...


def record(c: _Checker, source: SizeSource) -> None:
    """Remember a convolution of the body (once per call: loops check theirs again)."""
    c.size_sources[(source.span.start, source.span.end)] = source


def record_layer(
    c: _Checker, node: A.Node, info: FnInfo, typed: list[tuple[ParamInfo, CallArg, T.Type]], result: T.Type
) -> None:
    """A call of a method of a convolution layer, a model named `...Conv...`
    that takes a `padding` dim (nn.Conv2d's forward): its padding is the
    instance's."""
    if info.owner is None or not typed or not isinstance(result, T.TensorT) or result.rank < 3:
        return
    _, recv, model_t = typed[0]
    if not isinstance(model_t, T.ModelT) or model_t.generic or "Conv" not in model_t.name.rpartition(".")[2]:
        return  # (a pool's padding is at most half its window: not a fix to offer)
    model = c.g.model(model_t)
    decl = model.generic if model is not None and model.generic is not None else model
    if decl is None or "padding" not in decl.dims or len(model_t.dims) != len(decl.dims):
        return
    at = decl.dims.index("padding")
    axes = tuple(range(2, result.rank))
    x = typed[1][2] if len(typed) > 1 else None
    if not isinstance(x, T.TensorT) or x.rank != result.rank:
        return

    def retry(p: int) -> tuple[T.Dim, ...] | None:
        dims = model_t.dims[:at] + (T.DimLit(p),) + model_t.dims[at + 1 :]
        b = S.Bindings(info.generics)
        for i, (param, _, t) in enumerate(typed):
            given = dataclasses.replace(model_t, dims=dims) if i == 0 else t
            if S.match(param.type, given, b, param.name, None) is not None:
                return None
        out = b.result(info.ret)
        return tuple(out.dims[i] for i in axes) if isinstance(out, T.TensorT) and out.rank == result.rank else None

    padding = shown_dim(model_t.dims[at])
    source = SizeSource(
        node.span, expr_text(recv.node), model_t.name, x, result, axes, padding, retry, LAYER_PADDINGS, None
    )
    record(c, source)


def explain(c: _Checker, expected: T.Type, found: T.Type, span: A.Span) -> tuple[str, tuple, Fix | None]:
    """For a shape mismatch at `span`: the words to add to the message, the
    related location and the quick fix, when a convolution made the sizes
    that differ (only the location when no padding gives the sizes
    expected); ("", (), None) otherwise."""
    if not (isinstance(expected, T.TensorT) and isinstance(found, T.TensorT)) or expected.rank != found.rank:
        return "", (), None
    sources = [
        s
        for s in c.size_sources.values()
        if s.span.start < span.end
        and s.result.dims == found.dims
        and any(not T.dims_equal(expected.dims[i], found.dims[i]) for i in s.axes)
    ]
    if not sources:
        return "", (), None
    s = max(sources, key=lambda s: s.span.start)
    differ = [i for i in s.axes if not T.dims_equal(expected.dims[i], found.dims[i])]
    while _keeps(s, s.result):  # a conv that keeps its sizes was given the wrong ones: by the conv before it?
        before = [t for t in c.size_sources.values() if t.span.start < s.span.start and t.result.dims == s.input.dims]
        if not before:
            break
        s = max(before, key=lambda t: t.span.start)
    want = tuple(expected.dims[i] for i in s.axes)
    related = (LocalRelated(f"{s.name} gives {s.result} here", span=s.span),)
    for p in range(s.paddings + 1):
        sizes = s.retry(p)
        if sizes is not None and all(T.dims_equal(a, b) for a, b in zip(sizes, want)):
            names = " and ".join(dict.fromkeys(str(expected.dims[i]) for i in differ))
            words = f" (from {s.name}{f' ({s.kind})' if s.kind else ''} with padding {s.padding}; "
            words += f"padding={p} {'keeps' if _keeps(s, expected) else 'gives'} {names})"
            fix = None
            if s.fix_at is not None:
                at, text = s.fix_at
                fix = Fix(f"Use padding={p}", (TextEdit(at, f"{text}{p}"),))
            return words, related, fix
    return "", related, None  # not the padding (the stride?): where the sizes come from, no more


def _keeps(s: SizeSource, t: T.TensorT) -> bool:
    """Whether `t` has the sizes of the conv's input where the conv computes them."""
    return all(T.dims_equal(s.input.dims[i], t.dims[i]) for i in s.axes)


def conv_fix_at(node: A.Node, padding: CallArg | None) -> tuple[A.Span, str] | None:
    """Where a quick fix writes `conv2d(...)`'s padding, and the text before
    the number: its value when it is given, else a new keyword argument
    after the last argument."""
    if padding is not None:
        return padding.node.span, ""
    if not isinstance(node, A.Call) or not node.args:
        return None
    end = node.args[-1].span.end  # (before a trailing comma, if any)
    return A.Span(end, end), ", padding="


def shown_dim(d: T.Dim) -> str:
    """A dim for a message, a constant with its value (`P=1`)."""
    return f"{d}={d.value}" if isinstance(d, T.DimConst) else str(d)
