"""Walks over a model: ``named_params(m, seed)``, ``modules(m, kind, seed)``,
``num_params(m)`` and ``init_param(p, initializer)``, what
``for name, p in named_params(m, seed=0): p.init(normal(0.0, 0.02))``
compiles to (docs/language.md, "Walking a model").

A walk visits the params in the model's leaf order (its state_dict order:
the fields in declaration order, a sub-model's in its place, block 0 of a
stack before block 1) and names each by its path, the state_dict key
(``blocks.0.attn.c_proj.weight``). Each walk owns one ``torch.Generator``
seeded with its seed: while the walk runs, ``init_param`` of any of the
model's param tensors draws from it, in the order the program calls it, so
a walk's values depend only on its seed and its code, as
``g = torch.Generator().manual_seed(seed)`` then ``nn.init.*_(p,
generator=g)`` in torch's order.
"""

from __future__ import annotations

import torch

from ._errors import ModelError
from ._model import Model, ModelStack

__all__ = ["init_param", "modules", "named_params", "ndim", "num_params", "numel"]

# id(param tensor) -> (the generator of the walk now visiting it, its path)
_ACTIVE: dict[int, tuple[torch.Generator, str]] = {}
# the generators of the walks now running (a walk gives back only to those)
_LIVE: set[torch.Generator] = set()


def _generator(seed) -> torch.Generator:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ModelError(f"a walk needs an Int seed, found {seed!r}")
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _walk(m: Model, seed):
    """A context for one walk: every param of ``m`` draws from its generator."""
    if not isinstance(m, Model):
        raise ModelError(f"a walk needs a Quiver model, found {type(m).__name__}")
    gen = _generator(seed)
    tensors = m._qv_tensors
    paths = type(m)._qv_leaf_paths
    saved = {id(t): _ACTIVE.get(id(t)) for t in tensors}
    tied = type(m)._qv_tied
    for i, (t, p) in enumerate(zip(tensors, paths)):
        if i not in tied:
            _ACTIVE[id(t)] = (gen, p)
    _LIVE.add(gen)
    return saved, gen


def _end(started) -> None:
    """Gives back what the walk took, where it still holds it: a walk that
    ends while one started after it runs on (a generator closed early)
    leaves that one's params to it."""
    saved, gen = started
    _LIVE.discard(gen)
    for k, v in saved.items():
        if _ACTIVE.get(k, (None,))[0] is not gen:
            continue
        if v is None or v[0] not in _LIVE:
            _ACTIVE.pop(k, None)
        else:
            _ACTIVE[k] = v


def named_params(m: Model, seed):
    """``(path, tensor)`` of every param of ``m``, in state_dict order."""
    saved = _walk(m, seed)
    tied = type(m)._qv_tied
    try:
        for i, (path, t) in enumerate(zip(type(m)._qv_leaf_paths, m._qv_tensors)):
            if i not in tied:  # a tied param once, under its source's name (torch's remove_duplicate)
                yield path, t
    finally:
        _end(saved)


def _of_kind(cls, kind) -> bool:
    return cls is kind or getattr(cls, "_qv_generic", None) is kind


def _submodels(m: Model):
    """``m`` and every sub-model under it, pre-order, in declaration order
    (torch's ``modules()`` order); a sub-model tied to one before it
    (``param dec: Block = tied(enc)``) once, as torch's ``modules()`` gives a
    shared module once."""
    yield from _submodels_once(m, set())


def _submodels_once(m: Model, seen: set):
    key = (type(m), *(id(t) for t in m._qv_tensors))
    if len(key) > 1:  # (a model without params, nn.ReLU, is its own each time)
        if key in seen:
            return
        seen.add(key)
    yield m
    cls = type(m)
    for f in cls._qv_param_fields:
        sub = cls._qv_subs.get(f.name)
        if sub is None:
            continue
        value = m.__dict__[f.name]
        items = value._qv_items if isinstance(value, ModelStack) else (value,)
        for inst in items:
            yield from _submodels_once(inst, seen)


def modules(m: Model, kind, seed):
    """Every sub-model of ``m`` (``m`` itself included) whose class is
    ``kind`` or of the family ``kind`` (``nn.Linear``)."""
    saved = _walk(m, seed)
    try:
        for sub in _submodels(m):
            if _of_kind(type(sub), kind):
                yield sub
    finally:
        _end(saved)


def num_params(m: Model) -> int:
    """torch's ``sum(p.numel() for p in m.parameters())``: each tensor once."""
    if not isinstance(m, Model):
        raise ModelError(f"num_params needs a Quiver model, found {type(m).__name__}")
    seen: set[int] = set()
    n = 0
    for t in m._qv_tensors:
        if id(t) not in seen:
            seen.add(id(t))
            n += t.numel()
    return n


def ndim(x) -> int:
    return x.dim()


def numel(x) -> int:
    return x.numel()


def init_param(p: torch.Tensor, initializer) -> None:
    """``p.init(initializer)``: new values for the param ``p`` of the walk now
    running, drawn from its generator, written in place."""
    active = _ACTIVE.get(id(p))
    if active is None:
        raise ModelError("p.init(...) initialises a param of a running walk (named_params, modules)")
    gen, path = active
    if not callable(initializer):  # a number: every value set to it
        with torch.no_grad():
            p.fill_(initializer)
        return
    try:
        value = initializer(tuple(p.shape), p.dtype, gen)
    except (ValueError, TypeError, RuntimeError) as exc:
        raise ModelError(f"cannot initialise {path} ({list(p.shape)}) with {initializer!r}: {exc}") from None
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(p.shape):
        raise ModelError(f"{initializer!r} gave {path} a value of another shape")  # pragma: no cover
    with torch.no_grad():
        p.copy_(value.to(p.device))


def run_resets(model: Model, resets) -> None:
    """After ``M.init(seed=s)`` has drawn every field: each sub-model (``model``
    itself included) whose model declares ``fn reset_parameters(mut self,
    seed: Int)`` runs it, inner ones first (torch's order: a module's
    ``__init__`` ends with its own ``reset_parameters()``), each with a seed
    drawn from the init's generator right after that sub-model's fields."""
    for prefix, seed in resets:
        sub = model
        for part in prefix.split(".")[:-1]:
            sub = sub[int(part)] if part.isdigit() else getattr(sub, part)  # pyright: ignore[reportIndexIssue]
        type(sub).reset_parameters(sub, seed)  # pyright: ignore[reportAttributeAccessIssue]
