"""The diagnostic of a tuple type of one element written anywhere but as a
member's type (`param layers: (nn.Linear[4, 8],)`, a list of one sub-model;
registered in the one catalog, `catalog_code.CODES`: checker/catalog.py
imports this module at its end, so it comes after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0941 = _code(
    "E0941",
    "tuple type of one element outside a list of sub-models",
    "{written} is a tuple of one element: only a member's type may be one (a list of one sub-model); write {item}",
    """
    `(A,)` is a list of one sub-model, written as a param's type in a model
    (`param layers: (nn.Linear[4, 8],)`, torch's `nn.Sequential` or
    `nn.ModuleList` of one layer). Anywhere else (a function's parameter or
    result, a type alias, a type argument) a value of one element is the
    element itself: a function returning one tensor returns `[4]`, not
    `([4],)`, and `return x,` returns `x`.
    """,
    """
    fn one(x: [4]) -> ([4],):
        return x
    """,
    """
    fn one(x: [4]) -> [4]:
        return x
    """,
)
