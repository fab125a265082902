"""The diagnostics of integer arithmetic for sizes: `min` and `max` of
numbers (registered in the one catalog, `catalog_code.CODES`: checker/catalog.py
imports this module at its end, so they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0960 = _code(
    "E0960",
    "min or max of numbers takes numbers",
    "{fn}: {reason}",
    """
    `max` and `min` have two forms. Of two or more numbers, as Python's
    (`max(1, n // 2)`, `min(top_k, V)`), they give a number: an Int when
    every argument is an Int (a dim used as a value is one), else a Float.
    Of one tensor (`max(x)`, `max(x, over=D)`), they reduce it, as torch's
    amax and amin. The form is chosen by the first argument; a tensor among
    the numbers, a lone number, or more than one argument after a tensor
    is this error. The larger of two tensors
    element by element is `maximum(a, b)` (`minimum(a, b)`), as torch's.
    """,
    """
    fn f(x: [n] f32, k: Int) -> Int:
        return max(k, x)
    """,
    """
    fn f(x: [n] f32, k: Int) -> Int:
        return max(k, 1)
    """,
    variants={
        "not_number": "argument {index} is {found}, not an Int or a Float (of tensors element by element: "
        "{tensor_fn}(a, b))",
        "tensors": "of a tensor it takes one ({fn}(x) or {fn}(x, over=D)), found {count} arguments; of tensors "
        "element by element: {tensor_fn}(a, b)",
        "one": "of numbers it takes two or more, found one (a number is its own {fn})",
        "keyword": "of numbers it takes no {keyword}= (that is of the tensor form: {fn}(x, {keyword}=...))",
    },
)
