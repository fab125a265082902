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


def f_type(v, elem: str | None = None) -> str:
    """``v``'s type: a tensor's sizes at run time and its element type, which
    the compiler passes as Quiver writes it (``Index[C]``, ``NonNeg``: what
    the dtype alone does not say); without it, the dtype's name."""
    if isinstance(v, torch.Tensor):
        dims = " ".join(str(n) for n in v.shape)
        if elem is None:
            elem = _ELEM_NAMES.get(v.dtype, str(v.dtype).removeprefix("torch."))
        return f"[{dims}] {elem}"
    if isinstance(v, bool):
        return "Bool"
    if isinstance(v, int):
        return "Int"
    if isinstance(v, float):
        return "Float"
    if isinstance(v, str):
        return "Str"
    return type(v).__name__
