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

E0956 = _code(
    "E0956",
    "expand or repeat does not fit",
    "{operation}: {reason}",
    """
    `expand(x, shape)` (torch's Tensor.expand) shows x in a larger shape
    without copying: matched from the right, each dim of x is 1 (stretched
    to the shape's dim) or the shape's dim itself, and the shape may have
    more dims in front. `repeat(x, (r1, r2, ...))` (torch's Tensor.repeat)
    takes one count per dim of x, or more: the extra counts, in front, add
    new dims. A dim of x that is neither 1 nor the shape's, or fewer counts
    than dims, is this error.
    """,
    """
    dim T = 8
    dim D = 4

    fn f(x: [T D]) -> [T T]:
        return expand(x, [T T])
    """,
    """
    dim T = 8
    dim D = 4

    fn f(x: [T 1]) -> [T T]:
        return expand(x, [T T])
    """,
    variants={
        "fewer_dims": "{x} has more dims than {shape}",
        "not_one": "dim {position} of {x} is {dim}, neither 1 nor {want}",
        "counts": "{counts} for the {dims} of {x}: one per dim, or more",
    },
)

E0957 = _code(
    "E0957",
    "parts do not fit the dim",
    "{operation}: {reason}",
    """
    `unbind(x, over=d)` gives one tensor per position of dim d, and
    `split(x, s, over=d)` parts of size s (the last what is left): the
    number of parts is the length of a tuple, so d's size must be known
    when the program is checked (a dim constant or a literal, 256 at
    most). `split(x, (s1, s2, ...), over=d)` takes the sizes of the parts,
    which add up to d, as torch.split's list of sections does. For parts of
    a generic dim, give their sizes as dims (`split(x, (H, H), over=G)` of
    `[b G]` where `G` is `2*H`) or use `chunk`.
    """,
    """
    dim T = 8

    fn f(x: [b T]) -> [b 3]:
        a, c = split(x, (3, 4), over=T)
        return a
    """,
    """
    dim T = 8

    fn f(x: [b T]) -> [b 3]:
        a, c = split(x, (3, 5), over=T)
        return a
    """,
    variants={
        "unbind_size": "the size of {dim} in {x} is not known when checking, or over {most}",
        "split_size": "parts of one size need the size of {dim} in {x} (known when checking, {most} parts at most)",
        "split_sum": "the sizes {sizes} add up to {total}, not {dim} (the dim of {x})",
    },
)
