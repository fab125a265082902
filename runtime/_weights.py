"""``load_weights``: a torch ``state_dict`` from elsewhere read into a model.

``save``/``load`` (runtime/_checkpoint.py) read back what Quiver wrote. This
module reads the weights of another program: a torch file (``.pt``,
``.bin``, read with ``torch.load(weights_only=True)``), a ``.safetensors``
file, or (from Python) a dict of tensors, with a name map between the file's
keys and the model's field paths:

1. ``prefix=``: a ``Str`` is stripped from the keys that start with it
   (``"transformer."``: ``transformer.h.0.attn.weight`` -> ``h.0.attn.weight``);
   a pair ``(old, new)`` replaces a leading ``old`` by ``new`` (``("", "enc.")``
   adds ``enc.`` to every key).
2. ``rename=``: after the prefix, a dict ``{key: field}`` (from Quiver, pairs
   ``("key", "field")``) renames the keys it names; from Python it may be a
   function of the key, returning the field path, or None to leave the key out.

Then every field of the model is compared with the mapped keys: the fields
the file lacks (missing), the keys the model lacks (unexpected) and the
shapes that differ are reported together, sorted, in one error, by name and
shape. With ``strict=False`` missing fields keep their values and unexpected
keys are left out (a shape that differs is still an error, as torch's
``load_state_dict`` has it), and the Python function returns the two lists.
``dtype=`` converts the file's float tensors first (a bf16 checkpoint into
an f32 model); without it an element type that differs is reported with the
shapes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import torch

from ._checkpoint import CheckpointError
from ._data import _regular_file, resolve_path
from ._elems import tensor_text
from ._errors import ModelError, QuiverError
from ._model import Model

HF_HINT = "pip install 'quiver-lang[hf]'"

_DTYPES = {
    "f32": torch.float32,
    "f64": torch.float64,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
}


class WeightsError(CheckpointError):
    """Weights that cannot be read, or that do not fit the model they are loaded into."""


def _loc(src, line, col):
    return src.loc(line, col) if src is not None else None


def read_state_dict(path, *, src=None, loc=None) -> dict[str, torch.Tensor]:
    """The tensors of a ``.safetensors`` file or of a torch file (``.pt``,
    ``.bin``, anything else ``torch.load(weights_only=True)`` reads) as a dict
    ``{key: tensor}`` on the CPU."""
    shown = os.fspath(path)
    full = resolve_path(path, src)
    _regular_file(shown, full, loc, WeightsError)
    if shown.endswith(".safetensors"):
        try:
            from safetensors.torch import load_file
        except ImportError:
            raise WeightsError(f"{shown}: reading .safetensors needs safetensors ({HF_HINT})", loc) from None
        try:
            data = load_file(full, device="cpu")
        except Exception as e:  # safetensors' own words: a header it cannot parse
            raise WeightsError(f"{shown}: not a safetensors file ({_first_line(e)})", loc) from None
    else:
        try:
            data = torch.load(full, map_location="cpu", weights_only=True)
        except Exception as e:  # torch's own words: not a torch file, an unsafe pickle...
            raise WeightsError(f"{shown}: not a file torch can read ({_first_line(e)})", loc) from None
    return _flat(data, shown, loc)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _flat(data, shown: str, loc) -> dict[str, torch.Tensor]:
    """A dict of tensors; a checkpoint that wraps it (``{"state_dict": ...}``,
    ``{"model": ...}``) is not guessed at: the error names its keys."""
    if not isinstance(data, Mapping):
        raise WeightsError(f"{shown} holds a Python {type(data).__name__}, not a state_dict (a dict of tensors)", loc)
    bad = [str(k) for k, v in data.items() if not isinstance(v, torch.Tensor) or not isinstance(k, str)]
    if bad:
        keys = ", ".join(sorted(bad)[:8]) + (f", ... ({len(bad)} in all)" if len(bad) > 8 else "")
        raise WeightsError(
            f"{shown} is not a state_dict: its entries {keys} are not tensors (a checkpoint of several "
            "entries is read with load(path, model=m, ...))",
            loc,
        )
    return dict(data)


def _dtype(dtype, loc) -> torch.dtype | None:
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPES:
        return _DTYPES[dtype]
    raise WeightsError(f"dtype={dtype!r}: expected one of {', '.join(_DTYPES)} or a torch float dtype", loc)


def _prefixed(key: str, prefix) -> str:
    if prefix is None or prefix == "":
        return key
    if isinstance(prefix, str):
        return key[len(prefix) :] if key.startswith(prefix) else key
    old, new = prefix
    return new + key[len(old) :] if key.startswith(old) else key


def map_names(
    data: Mapping[str, torch.Tensor],
    *,
    prefix=None,
    rename: Mapping[str, str] | Callable[[str], str | None] | None = None,
    loc=None,
) -> dict[str, torch.Tensor]:
    """``data`` with its keys mapped by ``prefix`` then ``rename``: two keys
    mapped to one field are an error naming both."""
    if prefix is not None and not (
        isinstance(prefix, str)
        or (isinstance(prefix, (tuple, list)) and len(prefix) == 2 and all(isinstance(p, str) for p in prefix))
    ):
        raise WeightsError(f"prefix={prefix!r}: expected a Str, or a pair (old, new) of them", loc)
    if rename is not None and not isinstance(rename, Mapping) and not callable(rename):
        if isinstance(rename, (tuple, list)):  # pairs (key, field), as Quiver writes them
            pairs = [rename] if len(rename) == 2 and all(isinstance(x, str) for x in rename) else rename
            rename = {str(k): str(v) for k, v in pairs}
        else:
            raise WeightsError(f"rename= is a Python {type(rename).__name__}: expected a dict or a function", loc)
    out: dict[str, torch.Tensor] = {}
    origin: dict[str, str] = {}
    for key, t in data.items():
        name: str | None = _prefixed(key, prefix)
        if isinstance(rename, Mapping):
            name = rename.get(name, name)
        elif rename is not None:
            name = rename(name)
            if name is not None and not isinstance(name, str):
                raise WeightsError(f"rename({key!r}) gave a Python {type(name).__name__}, not a Str or None", loc)
        if name is None:
            continue
        if name in out:
            raise WeightsError(f"the keys {origin[name]} and {key} are both mapped to {name}", loc)
        out[name] = t
        origin[name] = key
    return out


def _converted(data: dict[str, torch.Tensor], dtype: torch.dtype | None) -> dict[str, torch.Tensor]:
    if dtype is None:
        return data
    return {k: t.to(dtype) if t.is_floating_point() else t for k, t in data.items()}


def _fields(model) -> dict[str, torch.Tensor]:
    if isinstance(model, Model):
        return model._qv_state_dict()
    if isinstance(model, torch.nn.Module):
        return dict(model.state_dict())
    raise WeightsError(f"load_weights: expected a Quiver model, found a Python {type(model).__name__}")


def compare(
    mine: Mapping[str, torch.Tensor], theirs: Mapping[str, torch.Tensor]
) -> tuple[list[str], list[str], list[str]]:
    """The missing fields, the unexpected keys and the fields whose shape or
    element type differ, each sorted."""
    missing = sorted(k for k in mine if k not in theirs)
    unexpected = sorted(k for k in theirs if k not in mine)
    differ = sorted(
        k for k in mine if k in theirs and (mine[k].shape != theirs[k].shape or mine[k].dtype != theirs[k].dtype)
    )
    return missing, unexpected, differ


def mismatch_text(
    shown: str, name: str, mine, theirs, missing, unexpected, differ, *, strict: bool, converted: bool
) -> str:
    """The one message of every key that does not fit: one line each."""
    lines = [f"{shown} does not fit {name}:"]
    if strict:
        lines += [f"  missing: {k} ({tensor_text(mine[k])})" for k in missing]
        lines += [f"  unexpected: {k} ({tensor_text(theirs[k])})" for k in unexpected]
    for k in differ:
        lines.append(f"  shape: {k} is {tensor_text(theirs[k])} in the file, but {name}.{k} is {tensor_text(mine[k])}")
    if not converted and any(mine[k].shape == theirs[k].shape for k in differ):
        lines.append("  (dtype= converts the file's floats to the model's: dtype=f32)")
    return "\n".join(lines)


def load_weights(
    model,
    source,
    *,
    prefix=None,
    rename=None,
    strict: bool = True,
    dtype=None,
    src=None,
    line: int = 0,
    col: int = 0,
) -> tuple[list[str], list[str]]:
    """Read ``source`` (a path, or a dict of tensors) into ``model`` in place
    and return ``(missing, unexpected)`` (both empty when ``strict``)."""
    loc = _loc(src, line, col)
    if isinstance(source, Mapping):
        shown = "the state_dict"
        data = _flat(source, shown, loc)
    elif isinstance(source, (str, os.PathLike)):
        shown = os.fspath(source)
        data = read_state_dict(source, src=src, loc=loc)
    else:
        raise WeightsError(
            f"load_weights: expected a path or a dict of tensors, found a Python {type(source).__name__}", loc
        )
    want = _dtype(dtype, loc)
    theirs = _converted(map_names(data, prefix=prefix, rename=rename, loc=loc), want)
    mine = _fields(model)
    name = type(model)._qv_name if isinstance(model, Model) else type(model).__name__
    missing, unexpected, differ = compare(mine, theirs)
    if differ or (strict and (missing or unexpected)):
        text = mismatch_text(
            shown, name, mine, theirs, missing, unexpected, differ, strict=strict, converted=want is not None
        )
        raise WeightsError(text, loc)
    full = {k: theirs.get(k, v) for k, v in mine.items()}
    if isinstance(model, Model):
        try:
            model._qv_load_state_dict(full, shown)
        except (QuiverError, ValueError, TypeError, KeyError) as e:
            detail = getattr(e, "detail", None) or (e.args[0] if e.args else str(e))
            raise WeightsError(str(detail), loc) from None
    else:
        try:
            model.load_state_dict(full)
        except (RuntimeError, ModelError) as e:
            raise WeightsError(_first_line(e), loc) from None
    return missing, unexpected


__all__ = ["WeightsError", "load_weights", "map_names", "read_state_dict"]
