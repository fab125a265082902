"""A generic model's dim defaults at run time: a number (`stride = 1`), the
name of a dim before it (`stride = K`) or of a Bool option (1 when True, 0
when False: `num_directions = 1 + bidirectional`), or integer arithmetic of those (+ - * // %) as
the compiler writes it, ``("//", "K", 2)`` for `P = K // 2`. The checker's
names.dim_default_value computes the same value to type the instance."""

from __future__ import annotations

from ._errors import ModelError


def dim_default(model: str, dim: str, d, given: dict[str, int]) -> int:
    """The value of dim `dim`'s default `d`, with the dims before it (and the
    Bool options, as 1 or 0) at `given`."""
    if isinstance(d, int):
        return d
    if isinstance(d, str):
        return given[d]
    op, a, b = d
    left, right = dim_default(model, dim, a, given), dim_default(model, dim, b, given)
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        raise ModelError(f"model {model}: the default of dim {dim} divides by zero")
    return left % right if op == "%" else left // right


def bool_flags(option_defaults: dict, options: dict) -> dict[str, int]:
    """The Bool options of an instance, given or by default, as 1 or 0: what
    a dim's default reads of them (`num_directions = 1 + bidirectional`)."""
    out = {}
    for k, v in option_defaults.items():
        value = options.get(k, v)
        if isinstance(v, bool) and isinstance(value, bool):
            out[k] = int(value)
    return out
