"""``rt.field_add(m, name, value, alpha)``: what the compiler emits for
``m.f = m.f + e`` (and ``- e``, ``- s * e``), the sum written into the
field's tensor in place, with the checks and errors of the plain assignment
(``Model.__setattr__``), out of ``_model`` for its size."""

from __future__ import annotations

import torch

from ._checks import checks
from ._elems import dims_text, dtype_name, tensor_text
from ._errors import ModelError
from ._model import _where

__all__ = ["field_add"]


def field_add(m, name, value, alpha=1) -> None:
    """``m.<name> = m.<name> + alpha * value``, computed in place.

    The compiler may emit this for ``m.f = m.f + e``, ``m.f = m.f - e`` and
    ``m.f = m.f - s * e`` (alpha = 1, -1, -s, with ``s`` a plain number).  The
    result (bit for bit), the checks and the errors are those of the plain
    assignment; the difference is speed: the sum is written in place
    (``Tensor.add_``), which saves a temporary and a copy.  Where the in-place form could
    differ it falls back to the plain assignment: a refined element type, an
    ``alpha`` that is not a plain number, a ``value`` that is neither a tensor
    nor a plain number, a ``value`` that overlaps the field's memory (torch
    refuses the in-place op, then the plain form runs).
    """
    cls = type(m)
    try:
        field = cls._qv_fields.get(name)
    except AttributeError:
        raise ModelError(f"a field update needs a model, found {cls.__name__}") from None
    if field is None:
        return m.__setattr__(name, value)  # raises the unknown-field error
    cur = m.__dict__[name]
    ta = type(alpha)
    tv = type(value)
    if (ta is not int and ta is not float) or field.elem.refinement is not None:
        return _plain_add(m, name, cur, value, alpha)
    if tv is int or tv is float:
        if checks.enabled and (tv is float or ta is float) and not cur.dtype.is_floating_point:
            _dtype_error(cls, field, name, cur, torch.get_default_dtype())
        cur.add_(value * alpha if alpha != 1 else value)
        return
    if not isinstance(value, torch.Tensor) or torch.compiler.is_compiling():
        # traced: inductor (torch 2.13) miscompiles add_(g, alpha=) of a param after
        # torch.func.grad_and_value over it; the copy of the plain form is right
        return _plain_add(m, name, cur, value, alpha)
    if checks.enabled:
        if value.shape != cur.shape:
            try:
                shape = torch.broadcast_shapes(cur.shape, value.shape)
            except RuntimeError:
                shape = None
            if shape != cur.shape:
                raise ModelError(
                    f"cannot update {cls._qv_name}.{name}, which is {field.type_text}, "
                    f"with {tensor_text(value)}{_where(field.loc)}"
                )
        if value.dtype != cur.dtype:
            result = torch.result_type(cur, value)
            if ta is float and not result.is_floating_point:
                result = torch.get_default_dtype()
            if result != cur.dtype:
                _dtype_error(cls, field, name, cur, result)
        elif ta is float and not cur.dtype.is_floating_point:
            _dtype_error(cls, field, name, cur, torch.get_default_dtype())
    try:
        if value.requires_grad or cur.requires_grad:
            with torch.no_grad():
                _add_in_place(cur, value, alpha)
        else:
            _add_in_place(cur, value, alpha)
    except RuntimeError as exc:
        if "single memory location" not in str(exc):
            raise
        _plain_add(m, name, cur, value.clone(), alpha)


def _add_in_place(cur, value, alpha) -> None:
    """`cur + alpha * value` into `cur`, rounded as written: the product, then
    the sum. Never `add_(value, alpha=...)`, whose kernel may fuse the two
    into one rounding (an FMA on AVX-512 CPUs and GPUs); negating is exact,
    so `alpha = -s` is `cur - s * value` bit for bit."""
    if alpha == 1:
        cur.add_(value)
    elif alpha == -1:
        cur.sub_(value)
    else:
        cur.add_(value * alpha)


def _plain_add(m, name, cur, value, alpha):
    m.__setattr__(name, cur + value if alpha == 1 else cur + alpha * value)


def _dtype_error(cls, field, name, cur, result):
    raise ModelError(
        f"cannot assign {dims_text(tuple(cur.shape))} {dtype_name(result)} to "
        f"{cls._qv_name}.{name}, which is {field.type_text}{_where(field.loc)}"
    )
