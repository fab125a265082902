"""The checks compiled code makes where a dim known only at run time meets a
known one (docs/language.md, "Dims known only at run time"): a value's dims
or element count against the sizes the checker could not prove, and the
sizes a value gives a function's named run-time dims."""

from __future__ import annotations

import torch

from ._checks import checks as _checks
from ._elems import dims_text
from ._errors import CheckError

_Tensor = torch.Tensor


def expect_dims(value, sizes, src, line, col, what, declared, item=None):
    """``value`` itself, once its dims are ``sizes`` (while checks are on).

    Compiled code calls this where a value whose type has a dim the checker
    does not know (``?``: a slice with run-time bounds) meets a known dim: a
    return, an argument, a cast, a field assignment, a permute or an
    ``over=``. ``sizes`` has one entry per dim: the size it must have, or None
    where the checker proved it. A mismatch raises CheckError at ``line``,
    ``col`` of ``src``: ``win(): result expected [T b] = [8 2], found [9 2]``
    (``what`` is ``win(): result``, ``declared`` is ``[T b]``). With ``item``,
    element ``item`` of a tuple value is checked (load_chars' ids)."""
    if not _checks.enabled:
        return value
    t = value if item is None else value[item]
    model_dims = getattr(type(t), "_qv_dims", None)
    if model_dims is not None:  # a model made with a size known only at run time (`Net[r]`)
        if len(model_dims) == len(sizes) and all(n is None or model_dims[i] == n for i, n in enumerate(sizes)):
            return value
        want = ", ".join(str(n if n is not None else model_dims[i]) for i, n in enumerate(sizes))
        raise CheckError(f"{what} expected {declared} = [{want}], found {type(t)._qv_name}", src.loc(line, col))
    if not isinstance(t, _Tensor):
        return value
    shape = t.shape
    if len(shape) == len(sizes) and all(n is None or shape[i] == n for i, n in enumerate(sizes)):
        return value
    want = (str(n if n is not None else shape[i]) for i, n in enumerate(sizes) if i < len(shape))
    raise CheckError(
        f"{what} expected {declared} = [{' '.join(want)}], found {dims_text(tuple(shape))}", src.loc(line, col)
    )


def bind_dims(store, value, binds):
    """``value`` itself, after recording in ``store`` (a function's table of
    its run-time dims) the sizes it gives them: ``binds`` holds, per dim,
    its key, the item of a tuple value (-1 for a tensor) and the axis.
    Compiled code calls this where a reader, a cast or a loop binds a named
    dim known only at run time, so later checks can read its size."""
    for key, item, axis in binds:
        t = value if item < 0 else value[item]
        store[key] = t.shape[axis]
    return value


def expect_count(value, sizes, src, line, col, what, declared):
    """``value`` itself, once it has as many elements as a shape of ``sizes``
    (while checks are on): the input of a reshape whose type has a dim known
    only at run time. ``reshape(): argument 'x' expected 16 elements
    ([T b] = [8 2]), found [9 2]``."""
    if not _checks.enabled or not isinstance(value, _Tensor):
        return value
    count = 1
    for n in sizes:
        count *= n
    if value.numel() == count:
        return value
    raise CheckError(
        f"{what} expected {count} elements ({declared} = {dims_text(tuple(sizes))}), "
        f"found {dims_text(tuple(value.shape))}",
        src.loc(line, col),
    )
