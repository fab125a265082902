"""Operations on gradients: ``rt.norm`` of a Grad, ``rt.mean_grad`` and
``rt.sum_grad`` of a batched one, ``rt.zeros_grad``, ``rt.randn_grad``, and the
in-place model update ``m += g`` / ``m -= lr * g``."""

from __future__ import annotations

import torch

from . import _checks, _dist
from ._errors import GradError
from ._grad_value import Grad, _layout, _operand_text, _selection
from ._model import Model, ModelStack, model_class_of

# Multi-tensor ops (one kernel launch for all params). Never `_foreach_add_`
# with `alpha=`: its kernel may fuse the multiply into the add (one rounding,
# an FMA on AVX-512 CPUs and GPUs), where `m - lr * g` rounds twice.
_foreach_add_ = torch._foreach_add_  # pyright: ignore[reportPrivateImportUsage]
_foreach_sub_ = torch._foreach_sub_  # pyright: ignore[reportPrivateImportUsage]
_foreach_mul = torch._foreach_mul  # pyright: ignore[reportPrivateImportUsage]


def norm_of_grad(g: Grad) -> torch.Tensor:
    """The 2-norm of all of ``g``'s values together (0-dim); for a batched
    gradient one norm per example (``[b]``)."""
    values = g._qv_values
    if not all(v.is_floating_point() for v in values):
        # integer params' fields (zeros): no part of the norm
        values = [v for v in values if v.is_floating_point() or v.is_complex()] or [values[0].double()]
    if g._qv_layout.batch:
        return _batched_norm(values)
    if not values:
        return torch.zeros(())
    norms = [torch.linalg.vector_norm(v) for v in values]
    first = norms[0]
    dtype = first.dtype
    for n in norms[1:]:
        dtype = torch.promote_types(dtype, n.dtype)
    if len(norms) == 1:
        return first.to(dtype)
    return torch.linalg.vector_norm(torch.stack([n.to(device=first.device, dtype=dtype) for n in norms]))


def _batched_norm(values) -> torch.Tensor:
    if not values:
        raise GradError("rt.norm of a batched gradient without fields: the number of examples is unknown")
    norms = [torch.linalg.vector_norm(v.reshape(v.shape[0], -1), dim=1) for v in values]
    dtype = norms[0].dtype
    for n in norms[1:]:
        dtype = torch.promote_types(dtype, n.dtype)
    first = norms[0]
    if len(norms) == 1:
        return first.to(dtype)
    return torch.linalg.vector_norm(torch.stack([n.to(device=first.device, dtype=dtype) for n in norms]), dim=0)


def _reduce_batch(g, how):
    what = "mean_grad" if how == "mean" else "sum_grad"
    if type(g) is not Grad or not g._qv_layout.batch:
        raise GradError(f"rt.{what} needs a batched gradient ([b] Grad[M]), found {_operand_text(g)}")
    lay = g._qv_layout
    # (an integer leaf's gradient is zeros, whose sum is its mean: torch has no mean of integers)
    values = [v.mean(dim=0) if how == "mean" and v.is_floating_point() else v.sum(dim=0) for v in g._qv_values]
    if _dist._current().size > 1:
        # data-parallel: the examples of every rank (the mean of the ranks' means, the sum of their sums), one all-reduce
        at = [i for i, d in enumerate(lay.diff) if d]
        reduced, _ = _dist.average([values[i] for i in at], divide=how == "mean")
        for i, t in zip(at, reduced):
            values[i] = t
    return Grad._new(_layout(lay.model, lay.wrt, False), values)


def mean_grad(g: Grad) -> Grad:
    """The mean over the examples of a batched gradient: a plain Grad.  In a
    process group, over the examples of every rank (the mean of the ranks'
    means: one all-reduce), so DP-SGD steps alike on every rank."""
    return _reduce_batch(g, "mean")


def sum_grad(g: Grad) -> Grad:
    """The sum over the examples of a batched gradient: a plain Grad.  In a
    process group, over the examples of every rank (one all-reduce)."""
    return _reduce_batch(g, "sum")


def _grad_class(model, what):
    cls = model_class_of(model)
    if cls is None:
        raise GradError(f"rt.{what} needs a model class, found {_operand_text(model)}")
    return cls


def zeros_grad(model, wrt=None) -> Grad:
    """A Grad of ``model`` (a class or an instance) with zeros in every leaf (the
    selected ones with ``wrt``), of the params' dtypes, on the model's device."""
    cls = _grad_class(model, "zeros_grad")
    lay = _layout(cls, _selection(cls, wrt, "rt.zeros_grad"))
    device = cls._qv_torch_device
    return Grad._new(lay, [torch.zeros(f.shape, dtype=f.elem.dtype, device=device) for f in lay.fields])


def randn_grad(model, seed, wrt=None) -> Grad:
    """A Grad of ``model`` with standard normal values: one CPU ``torch.Generator``
    seeded with ``seed`` draws the floating leaves in order (in f64 for f64
    leaves, f32 otherwise), moved to the model's device; integer leaves get zeros."""
    cls = _grad_class(model, "randn_grad")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise GradError(f"rt.randn_grad({cls._qv_name}, seed) needs an Int seed, found {seed!r}")
    problem = _checks.seed_problem(seed)
    if problem is not None:
        raise GradError(f"rt.randn_grad({cls._qv_name}, seed): {problem}")
    lay = _layout(cls, _selection(cls, wrt, "rt.randn_grad"))
    device = cls._qv_torch_device
    gen = torch.Generator()
    gen.manual_seed(seed)
    values = []
    for f, d in zip(lay.fields, lay.diff):
        dtype = f.elem.dtype
        if d:
            draw = torch.float64 if dtype == torch.float64 else torch.float32
            values.append(torch.randn(f.shape, generator=gen, dtype=draw).to(dtype=dtype, device=device))
        else:
            values.append(torch.zeros(f.shape, dtype=dtype, device=device))
    return Grad._new(lay, values)


def _leaf_owner(m, path):
    """The (sub-)model instance holding leaf ``path`` and the field's name there."""
    *outer, name = path.split(".")
    obj = m
    for part in outer:
        obj = obj._qv_items[int(part)] if isinstance(obj, ModelStack) else obj.__dict__[part]
    return obj, name


def model_update(m, g, alpha=1):
    """``m += g`` (alpha 1), ``m -= g`` (-1), ``m -= lr * g`` (-lr): every param of
    ``m`` (every selected one, for a gradient with ``wrt``) plus ``alpha`` times
    its field of ``g``, in place and outside autograd, in multi-tensor steps
    that round as the written expression does: ``alpha * g`` (``_foreach_mul``),
    then the sum (``_foreach_add_``), bit for bit what ``m + alpha * g`` gives
    (``m - lr * g``: negating is exact). Buffers are not touched. A
    param with a refined element type (``NonNeg``...) is updated like an
    assignment, so its values are checked."""
    cls = type(m)
    if not isinstance(m, Model):
        raise GradError(f"a model update needs a model, found {_operand_text(m)}")
    if type(g) is not Grad or g._qv_model is not cls or g._qv_layout.batch:
        found = _operand_text(g)
        if type(g) is Grad and g._qv_model is cls:
            found += " (a batched gradient: reduce it with rt.mean_grad or rt.sum_grad first)"
        raise GradError(f"{cls._qv_name} can only be updated by a Grad[{cls._qv_name}], found {found}")
    lay = g._qv_layout
    params = m._qv_tensors
    if lay.wrt is not None:
        params = tuple(params[i] for i in lay.leaf_index)
    fused_p, fused_g = [], []
    for field, p, v, diff, path in zip(lay.fields, params, g._qv_values, lay.diff, lay.paths):
        if not diff:
            continue  # an integer param has no gradient (its field is zeros)
        if field.elem.refinement is not None or v.shape != p.shape or v.dtype != p.dtype:
            owner, name = _leaf_owner(m, path)
            setattr(owner, name, p.detach() + alpha * v)  # the assignment's checks and errors
        else:
            fused_p.append(p)
            fused_g.append(v.detach())
    if fused_p:
        with torch.no_grad():
            if alpha == 1:
                _foreach_add_(fused_p, fused_g)
            elif alpha == -1:
                _foreach_sub_(fused_p, fused_g)
            else:
                _foreach_add_(fused_p, _foreach_mul(fused_g, alpha))
