"""The diagnostics of the ops along a dim and of ranges (registered in the one
catalog, `catalog_code.CODES`: checker/catalog.py imports this module at its
end, so they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0955 = _code(
    "E0955",
    "empty range",
    "arange: {reason}",
    """
    `arange(start, stop)` and `arange(start, stop, step)` give the integers
    start, start+step, ... below stop, as torch's arange; the length of the
    result is a dim, worked out from the bounds (`arange(2, T)` is
    `[(T-2)]`). A range whose stop is not above its start holds nothing,
    and a dim is never 0: put the bounds in order (a range that counts down
    is `flip(arange(...), over=0)`).
    """,
    """
    dim T = 8

    fn main():
        print(arange(T, 2))
    """,
    """
    dim T = 8

    fn main():
        print(arange(2, T))
    """,
    variants={
        "empty": "the range from {start} up to {stop} holds no value",
    },
)
