"""Checkpoints: ``save(path, ...)`` and ``load(path, ...)`` of a Quiver program.

A checkpoint is one file written by ``torch.save`` and read back with
``torch.load(path, weights_only=True)``: plain dicts of tensors, numbers,
strings, tuples and None, so plain Python can open it.

- ``save(path, m)`` writes ``m``'s state alone: for a model the flat dict
  ``{field path: tensor}`` (``w1``, ``enc.w``, ``blocks.0.wq``, then the
  buffers), what ``torch.save(model.state_dict(), path)`` writes.
- ``save(path, model=m, opt=opt, step=step)`` writes ``{keyword: entry}``:
  a model or an optimizer as its nested dict, a number as itself.

The protocol. ``save``/``load`` accept any run-time object whose class has
the two methods

- ``_qv_state_dict(self) -> dict``: the object's state as a dict that
  ``torch.load(..., weights_only=True)`` reads back (tensors may share
  storage with the object: they are written at once);
- ``_qv_load_state_dict(self, d, where)``: overwrite the object's state from
  ``d`` in place (the tensors of a model keep their identity), or raise an
  exception (a ``QuiverError``, ``ValueError``, ``TypeError`` or ``KeyError``)
  whose message says what does not fit; ``where`` names the file and the
  entry (``'ckpt.pt', entry 'opt'``) for that message.

``rt.Model`` (runtime/_model.py) and ``rt.Optimizer`` (runtime/_optim.py)
implement it; an optimizer declares its per-param state in
``_qv_state_slots``. ``load`` adds the ``.qv`` line of the call to the error
(:class:`CheckpointError`).
"""

from __future__ import annotations

import os

import torch

from quiver import outputs

from ._data import _regular_file, resolve_path
from ._errors import ModelError, QuiverError
from ._model import Model


class CheckpointError(ModelError):
    """A checkpoint cannot be written, read, or does not fit what it is loaded into."""


def savable(x) -> bool:
    """Whether ``x`` has a state to save: the protocol's two methods."""
    t = type(x)
    return hasattr(t, "_qv_state_dict") and hasattr(t, "_qv_load_state_dict")


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float))


def _kind(x) -> str:
    if isinstance(x, bool):
        return "Bool"
    if isinstance(x, int):
        return "Int"
    if isinstance(x, float):
        return "Float"
    if isinstance(x, torch.Tensor):
        return "a tensor"
    if isinstance(x, dict):
        return "a dict"
    return f"a Python {type(x).__name__}"


def _loc(src, line, col):
    return src.loc(line, col) if src is not None else None


def _on_cpu(x):
    """``x`` with its tensors on the CPU, so that the file opens on any machine
    (``torch.load`` without ``map_location``); a CPU tensor is not copied."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: _on_cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_on_cpu(v) for v in x)
    return x


def _entry(x, what: str, loc):
    if savable(x):
        return _on_cpu(x._qv_state_dict())
    if _is_number(x):
        return x
    raise CheckpointError(f"save: {what} is {_kind(x)}, which cannot be saved (a model, an optimizer or a number)", loc)


def save_checkpoint(path, value, entries, *, src=None, line=0, col=0) -> None:
    """``save(path, value)`` (``entries`` None) or ``save(path, k=v, ...)``
    (``value`` None, ``entries`` the dict of keywords)."""
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    full = resolve_path(path, src)
    if entries is None:
        data = _entry(value, "the value", loc)
    else:
        data = {k: _entry(v, f"'{k}'", loc) for k, v in entries.items()}
    folder = os.path.dirname(full) or "."
    if not os.path.isdir(folder):
        raise CheckpointError(f"cannot save {shown}: no folder {folder}", loc)
    # written next to the file, then renamed over it (quiver.outputs): a run
    # stopped while saving leaves the previous checkpoint whole, and a link
    # at the name is refused rather than written through
    try:
        with outputs.replacing(full) as f:
            torch.save(data, f)
    except OSError as e:
        raise CheckpointError(f"cannot save {shown}: {e.strerror or e}", loc) from None


def _read(shown: str, full: str, loc):
    # a regular file only: a FIFO or a device in the folder would block torch.load
    _regular_file(shown, full, loc, CheckpointError)
    try:
        return torch.load(full, map_location="cpu", weights_only=True)
    except Exception as e:  # torch's own words: not a torch file, an unsafe pickle...
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"{shown}: not a checkpoint torch can read ({first})", loc) from None


def _is_flat(data) -> bool:
    return isinstance(data, dict) and all(isinstance(v, torch.Tensor) for v in data.values())


def _keys(d: dict, most: int = 12) -> str:
    keys = [str(k) for k in d]
    if len(keys) > most:
        return ", ".join(keys[:most]) + f", ... ({len(keys)} in all)"
    return ", ".join(keys) or "none"


def _load_into(obj, d, where: str, loc) -> None:
    try:
        obj._qv_load_state_dict(d, where)
    except (QuiverError, ValueError, TypeError, KeyError) as e:
        detail = getattr(e, "detail", None) or (e.args[0] if e.args else str(e))
        raise CheckpointError(str(detail), loc) from None


def _mapped(data: dict, names, transpose, strict: bool, obj, shown: str, loc) -> dict:
    """A torch state_dict with the names of ``obj``'s fields: renamed by
    ``names`` (pairs (file key, field)), 2-D tensors of ``transpose``
    transposed, and without ``strict``, the fields the file lacks kept and
    its keys ``obj`` lacks left."""
    rename = {}
    for pair in _pairs(names):
        key, field = pair
        if key not in data:
            if strict:
                raise CheckpointError(
                    f"{shown} has no key {key!r} (names= maps it to {field}); its keys: {_keys(data)}", loc
                )
            continue
        rename[key] = field
    out = {rename.get(k, k): v for k, v in data.items()}
    for field in (transpose,) if isinstance(transpose, str) else tuple(transpose or ()):
        if field not in out:
            if strict:
                raise CheckpointError(f"transpose= names {field}, which {shown} does not hold (after names=)", loc)
            continue
        t = out[field]
        if t.dim() != 2:
            raise CheckpointError(
                f"transpose= names {field}, which is a {t.dim()}-D tensor in {shown}; only 2-D ones can be transposed",
                loc,
            )
        out[field] = t.t()
    if not strict and isinstance(obj, Model):
        mine = obj._qv_state_dict()
        out = {k: out.get(k, v) for k, v in mine.items()}
    return out


def _pairs(names) -> list:
    if not names:
        return []
    if len(names) == 2 and all(isinstance(x, str) for x in names):
        return [tuple(names)]
    return [tuple(p) for p in names]


def _number(value, given, key: str, shown: str, loc):
    want = _kind(given)
    if want == "Bool":
        ok = isinstance(value, bool)
    elif want == "Int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise CheckpointError(f"{shown}: entry '{key}' is {_kind(value)} {value!r}, expected {want}", loc)
    return float(value) if want == "Float" else value


def load_checkpoint(path, value, entries, *, names=None, transpose=(), strict=True, src=None, line=0, col=0):
    """``load(path, value)``: ``value``'s state, in place (None). ``load(path,
    k=v, ...)``: each model or optimizer ``v`` in place, and the numbers the
    file holds for the number keywords (one: that number; several: a tuple)."""
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    data = _read(shown, resolve_path(path, src), loc)
    if not isinstance(data, dict):
        raise CheckpointError(f"{shown} holds {_kind(data)}, not a checkpoint (a dict)", loc)
    if entries is None:
        if not _is_flat(data) and "kind" not in data:
            raise CheckpointError(
                f"{shown} holds the entries {_keys(data)} (saved with keywords): name the one to load, "
                f"as in load(path, {next(iter(data), 'model')}=...)",
                loc,
            )
        if names or transpose or not strict:
            if not _is_flat(data):
                raise CheckpointError(
                    f"names=, transpose= and strict=False apply to a model's fields; {shown} is not a dict of tensors",
                    loc,
                )
            data = _mapped(data, names, transpose, strict, value, shown, loc)
        _load_into(value, data, shown, loc)
        return None
    if _is_flat(data) and data and not any(k in data for k in entries):
        raise CheckpointError(
            f"{shown} holds one model's fields ({_keys(data)}), saved with save(path, m): load it with load(path, m)",
            loc,
        )
    # the keywords and the numbers first, so that a file without them changes nothing
    numbers = []
    for key, target in entries.items():
        if key not in data:
            if strict:
                raise CheckpointError(f"{shown} has no entry '{key}' (its entries: {_keys(data)})", loc)
            if not savable(target):
                numbers.append(target)
        elif not savable(target):
            numbers.append(_number(data[key], target, key, shown, loc))
    for key, target in entries.items():
        if key in data and savable(target):
            _load_into(target, data[key], f"{shown}, entry '{key}'", loc)
    if not numbers:
        return None
    return numbers[0] if len(numbers) == 1 else tuple(numbers)


__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint"]
