"""Element types: the ``T`` in a tensor type ``[d1 d2] T``.

An element type is a torch dtype plus, for the refined types, a constraint on
the values: ``Index[C]`` (int64 in ``0..C-1``), ``NonNeg`` (f32, ``>= 0``) and
``Prob`` (f32 in ``[0, 1]``).  The constraint is only verified where the
runtime checks values (argument checks, casts, field assignment) and only
while checks are enabled.
"""

from __future__ import annotations

import weakref

import torch

from ._checks import transforms as _transforms

_DTYPE_NAMES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "Bool",
}


def dtype_name(dtype: torch.dtype) -> str:
    """The Quiver spelling of a torch dtype (``f32``, ``i64``...)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = str(dtype).replace("torch.", "")
    return name


def dims_text(dims) -> str:
    """``(64, 'b')`` -> ``[64 b]``."""
    return "[" + " ".join(str(d) for d in dims) + "]"


def tensor_text(t: torch.Tensor) -> str:
    """A tensor's type as Quiver prints it: ``[64 10] f32``."""
    return f"{dims_text(tuple(t.shape))} {dtype_name(t.dtype)}"


_OK_SLOTS = 4  # tensors per element type whose passing values are remembered


class Elem:
    """An element type.  Compare with ``is``: every type is a single object."""

    __slots__ = ("name", "dtype", "kind", "refinement", "size", "_ok")

    def __init__(
        self, name: str, dtype: torch.dtype, kind: str, refinement: str | None = None, size: int | None = None
    ):
        self.name = name
        self.dtype = dtype
        self.kind = kind  # "float", "int" or "bool"
        self.refinement = refinement  # None, "index", "nonneg", "prob"
        self.size = size  # C for Index[C]
        # (weakref, version) of the last _OK_SLOTS tensors whose values passed,
        # the most recent first
        self._ok: tuple[tuple[weakref.ref[torch.Tensor], int], ...] = ()

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def value_problem(self, t: torch.Tensor):
        """Why the values of ``t`` do not fit this type, or None if they do.

        Only refined types constrain values; ``t`` must already have the right
        dtype.  Costs one reduction and a device sync, except when ``t`` is one
        of the last few tensors (``_OK_SLOTS``) that passed for this type and
        has not been modified in place since (same object, same version
        counter): the labels that a train step checks and then passes on to
        its loss are checked once, also when two of them (tokens and their
        targets, both ``Index[V]``) take turns.
        """
        if self.refinement is None or _transforms.depth:
            return None
        if _compiling():  # torch.compile / export: an assert in the graph, not a read of the values
            self.assert_in_graph(t)
            return None
        if not t.shape:  # one value (a loss): read it, cheaper than a reduction and the cache
            return self._scalar_problem(t.item())
        ok = self._ok
        for ref, version in ok:
            if ref() is t:
                if version == t._version:
                    return None
                break
        problem = self._problem(t)
        if problem is None:
            try:
                entry = (weakref.ref(t), t._version)
            except (TypeError, RuntimeError):  # e.g. inference tensors have no version
                return None
            self._ok = (entry, *(e for e in ok if e[0]() is not t and e[0]() is not None))[:_OK_SLOTS]
        return problem

    def assert_in_graph(self, t: torch.Tensor) -> None:
        """The value check as torch.compile and torch.export trace it: no
        ``.item()`` (a graph break, or an error with ``fullgraph=True``) but a
        ``torch._assert_async`` on a reduction, which stays in the graph and
        raises RuntimeError (``Quiver value check failed: ...``, without the
        values and the .qv line that the eager check gives) when the values
        do not fit."""
        if t.numel() == 0:
            return
        t = t.detach()
        if self.refinement == "nonneg":
            ok = t.min() >= 0
            what = "values below 0 or NaN"
        elif self.refinement == "prob":
            lo, hi = torch.aminmax(t)
            ok = (lo >= 0) & (hi <= 1)
            what = "values outside [0, 1] or NaN"
        else:
            size = self.size
            assert size is not None
            lo, hi = torch.aminmax(t)
            ok = (lo >= 0) & (hi < size)
            what = f"values outside 0..{size - 1}"
        message = f"{IN_GRAPH_CHECK}: {self.name} expected, found {what}"
        torch._assert_async(ok, message)  # pyright: ignore[reportPrivateImportUsage]

    def _scalar_problem(self, v):
        """``_problem`` of a [] tensor holding ``v``, with the same messages."""
        if self.refinement == "nonneg":
            return None if v >= 0 else f"values below 0 or NaN (min {_num(v)})"
        if self.refinement == "prob":
            return None if 0 <= v <= 1 else f"values outside [0, 1] or NaN (min {_num(v)}, max {_num(v)})"
        size = self.size
        assert size is not None
        return None if 0 <= v < size else f"values outside 0..{size - 1} (min {v}, max {v})"

    def _problem(self, t: torch.Tensor):
        if t.numel() == 0:
            return None
        t = t.detach()
        if self.refinement == "nonneg":
            lo = t.min().item()
            if lo >= 0:
                return None
            return f"values below 0 or NaN (min {_num(lo)})"
        lo, hi = (v.item() for v in torch.aminmax(t))
        if self.refinement == "prob":
            if lo >= 0 and hi <= 1:
                return None
            return f"values outside [0, 1] or NaN (min {_num(lo)}, max {_num(hi)})"
        # index: Index[C] always has its size C
        size = self.size
        assert size is not None
        if lo >= 0 and hi < size:
            return None
        return f"values outside 0..{size - 1} (min {lo}, max {hi})"


# how the message of a value check that failed in a traced graph starts
IN_GRAPH_CHECK = "Quiver value check failed"


def _compiling() -> bool:
    """Whether torch.compile (dynamo) or torch.export is tracing this code."""
    return torch.compiler.is_compiling()


def _num(v) -> str:
    if isinstance(v, float):
        return format(v, ".6g")
    return str(v)


f32 = Elem("f32", torch.float32, "float")
f16 = Elem("f16", torch.float16, "float")
bf16 = Elem("bf16", torch.bfloat16, "float")
f64 = Elem("f64", torch.float64, "float")
i32 = Elem("i32", torch.int32, "int")
i64 = Elem("i64", torch.int64, "int")
bool_ = Elem("Bool", torch.bool, "bool")
nonneg = Elem("NonNeg", torch.float32, "float", "nonneg")
prob = Elem("Prob", torch.float32, "float", "prob")

_INDEX_CACHE: dict[int, Elem] = {}


def index(size: int) -> Elem:
    """``Index[size]``: int64 values in ``0..size-1`` (one object per size)."""
    elem = _INDEX_CACHE.get(size)
    if elem is None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"Index[C] needs a positive int C, got {size!r}")
        elem = Elem(f"Index[{size}]", torch.int64, "int", "index", size)
        _INDEX_CACHE[size] = elem
    return elem


_BY_DTYPE = {e.dtype: e for e in (f32, f16, bf16, f64, i32, i64, bool_)}


class ElemVar:
    """The element type of a model's DType option in a method's signature
    (`x: [.. I] dtype`): the one of the instance the method is called on,
    bound from `self` (``env["~dtype"]``) before the other arguments are
    checked."""

    __slots__ = ("option",)

    def __init__(self, option: str):
        self.option = option

    def __repr__(self) -> str:
        return self.option


def elem_of(x) -> Elem:
    """Accept an Elem or a torch dtype; return the Elem."""
    if isinstance(x, Elem):
        return x
    if isinstance(x, torch.dtype) and x in _BY_DTYPE:
        return _BY_DTYPE[x]
    raise TypeError(f"not a Quiver element type: {x!r}")
