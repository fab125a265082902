"""The diagnostics of members' conditions over dims and options (`param
downsample: Downsample[Ci, Co, stride] if stride != 1 or Ci != Co`) and of
members declared twice under exclusive conditions (registered in the one
catalog, `catalog_code.CODES`: checker/catalog.py imports this module at its
end, so they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0931 = _code(
    "E0931",
    "member condition names an unknown dim",
    "'{name}' is not a dim of {model}{hint}",
    """
    A member's condition compares the model's own dims, or dim arithmetic of
    them and numbers (`if stride != 1 or Ci != Co * 4`); a dim constant of
    the file may be compared too. Any other name there is not known when an
    instance is made, so it cannot decide whether the member exists.
    """,
    """
    model Block[Ci, Co, stride = 1]:
        param w: [Ci Co] = zeros
        param skip: [Ci Co] = zeros if strde != 1
    """,
    """
    model Block[Ci, Co, stride = 1]:
        param w: [Ci Co] = zeros
        param skip: [Ci Co] = zeros if stride != 1
    """,
)

E0932 = _code(
    "E0932",
    "member condition is not a Bool",
    "a member's condition is a Bool of {model}'s dims and Bool options, found {found}",
    """
    What follows a member's `if` is a Boolean expression: Bool options
    (`bias`), comparisons of dims (`stride != 1`, `Ci <= Co * 2`, with `==`,
    `!=`, `<`, `<=`, `>`, `>=`), joined with `and`, `or`, `not` and
    parentheses. A dim alone, a number, arithmetic or a call is not a
    condition: write the comparison you mean.
    """,
    """
    model Block[Ci, Co, stride = 1]:
        param w: [Ci Co] = zeros
        param skip: [Ci Co] = zeros if stride
    """,
    """
    model Block[Ci, Co, stride = 1]:
        param w: [Ci Co] = zeros
        param skip: [Ci Co] = zeros if stride != 1
    """,
    variants={
        "a_dim": "the dim {name}, a number: compare it, as in `{name} != 1`",
        "written": "{text}",
    },
)

E0933 = _code(
    "E0933",
    "same-name members may both exist",
    "{model} declares '{name}' twice, and both could exist: {first} and {second} may hold together",
    """
    A member may be declared more than once when its shape depends on an
    option or dim (`param bias: [(NH*C)] = zeros if concat` and `param bias:
    [C] = zeros if not concat`): each instance has the one whose condition
    holds. The conditions must exclude each other, so that no instance has
    two. The checker decides this from the conditions' form: each option and
    each comparison (up to its negation: `stride != 1` is `not stride == 1`)
    is taken as free, and no choice of them may make both conditions true.
    """,
    """
    model Gat[C, NH, concat: Bool = True, bias: Bool = True]:
        param bias: [(NH*C)] = zeros if concat
        param bias: [C] = zeros if bias
    """,
    """
    model Gat[C, NH, concat: Bool = True, bias: Bool = True]:
        param bias: [(NH*C)] = zeros if concat and bias
        param bias: [C] = zeros if not concat and bias
    """,
)
