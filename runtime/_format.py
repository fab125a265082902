"""f-strings at run time: `f"step {step}: loss {l:.4f}"` compiles to
`rt.fstring("step ", rt.f_show(step), ": loss ", rt.f_format(l, ".4f"))`.

A field without a spec shows its value as `print` does; with a spec it is
Python's `format`, a `[]` tensor as its number and a Bool as its text; `!t`
is the value's type as Quiver writes it (`[4 8] Float`, `[100] Index[C]`,
`Int`): the sizes of the value, the element type of the checked program."""

from __future__ import annotations

import torch

from ._ops import format_value

_ELEM_NAMES = {
    torch.float32: "Float",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.bool: "Bool",
}


def fstring(*parts: str) -> str:
    return "".join(parts)


def f_show(v) -> str:
    return format_value(v)


def f_format(v, spec: str) -> str:
    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, bool):
        v = str(v)
    return format(v, spec)


def f_type(v, hint=None) -> str:
    """``v``'s type as Quiver writes it. ``hint`` is what the compiler knows
    of it statically and the value does not say: a tensor's element type as
    written (``Index[C]``, ``NonNeg``; the sizes are the value's own), a
    model's or gradient's type (``Grad[Lin]``), a tuple of such hints for a
    tuple. Without one, a tensor shows its dtype's name."""
    if isinstance(v, torch.Tensor):
        dims = " ".join(str(n) for n in v.shape)
        elem = hint if isinstance(hint, str) else _ELEM_NAMES.get(v.dtype, str(v.dtype).removeprefix("torch."))
        return f"[{dims}] {elem}"
    if isinstance(v, tuple):
        hints = hint if isinstance(hint, tuple) and len(hint) == len(v) else (None,) * len(v)
        return "(" + ", ".join(f_type(x, h) for x, h in zip(v, hints)) + ")"
    if isinstance(v, bool):
        return "Bool"
    if isinstance(v, int):
        return "Int"
    if isinstance(v, float):
        return "Float"
    if isinstance(v, str):
        return "Str"
    return hint if isinstance(hint, str) else type(v).__name__
