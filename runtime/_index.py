"""Index assignment: ``x[:, :10] = v`` on a local (a new tensor, the value
semantics of Quiver variables) and ``m.buf[t] = v`` on a model's field (in
place, without recording autograd, as a field assignment is)."""

from __future__ import annotations

import torch

from ._errors import ModelError
from ._model import Model


class _At:
    """``rt.at[:, 1:3, ...]`` is the key ``(slice(None), slice(1, 3), ...)``:
    how compiled code writes subscripts as a value."""

    __slots__ = ()

    def __getitem__(self, key):
        return key

    def __repr__(self) -> str:
        return "rt.at"


at = _At()


def index_set(x: torch.Tensor, key, value) -> torch.Tensor:
    """``x`` with the part ``x[key]`` replaced by ``value`` (broadcast to it),
    as a new tensor: ``y = x; x[0] = 1.0`` leaves ``y`` as it was, and
    gradients flow to ``x``'s other entries and to ``value`` as through
    torch's own ``x.clone()[key] = value``."""
    out = x.clone()
    out[key] = value
    return out


def field_index_set(m: Model, name: str, key, value) -> None:
    """``m.<name>[key] = value``, in place (no autograd is recorded: a model's
    fields change only outside differentiation, as with ``m.w = e``)."""
    cur = m.__dict__.get(name)
    if not isinstance(cur, torch.Tensor):
        raise ModelError(f"model {type(m)._qv_name} has no tensor field {name!r} to index")
    with torch.no_grad():
        cur[key] = value
