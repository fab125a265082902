"""The diagnostics of einsum's and rearrange's patterns (registered in the one
catalog, `catalog_code.CODES`: checker/catalog.py imports this module at its
end, so they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0970 = _code(
    "E0970",
    "malformed pattern",
    "{fn} pattern: {problem}",
    """
    The pattern of `einsum` and `rearrange` is a string literal: the dims of
    each input, separated by `,` (einsum takes one list per tensor,
    rearrange one), then `->` and the dims of the result. A dim is a name
    (an ASCII letter or `_`, then letters, digits or `_`); rearrange also takes a
    group of names in parentheses, `(h p1)`, for one dim that is their
    product. Names are the pattern's own, as in einops: they are bound to
    the tensors' dims position by position. A size is given as a keyword
    (`p1=16`), never written in the pattern. A side may start with `...`,
    the leading dims of the tensor however many (its batch dims, or the
    `..` of a shape of any rank), which the result keeps in front: `...`
    stands in front only.
    """,
    """
    fn f(x: [b c h w]) -> [b (c*h*w)]:
        return rearrange(x, "b c h w > b (c h w)")
    """,
    """
    fn f(x: [b c h w]) -> [b (c*h*w)]:
        return rearrange(x, "b c h w -> b (c h w)")
    """,
    variants={
        "no_arrow": "it has no '->' between the inputs and the result",
        "two_arrows": "a second '->': one arrow goes between the inputs and the result",
        "comma_in_output": "',' in the result: einsum and rearrange make one tensor",
        "comma_in_rearrange": "',' in rearrange's input: rearrange takes one tensor",
        "ellipsis": "'...' stands only in front of a side, for the leading dims",
        "group_in_einsum": "einsum's names are one dim each; a group such as '(h w)' is rearrange's",
        "nested": "a group inside a group: a group holds names only",
        "unopened": "')' closes no '('",
        "unclosed": "'(' is not closed",
        "empty_group": "an empty group '()' holds no name",
        "bad_name": "'{name}' is not a name (an ASCII letter or _, then letters, digits or _; "
        "a size is given as a keyword, p=16)",
        "bad_char": "'{char}' cannot stand in a pattern (names, ( ) groups, ',' and '->')",
        "too_many": "{count} different names; torch.einsum takes 52 at most",
    },
)

E0971 = _code(
    "E0971",
    "pattern does not match the tensors",
    "{fn} pattern: {reason}",
    """
    Each input of the pattern names the dims of one tensor, one name (or,
    for rearrange, one group) per dim, in order: `"b n d"` is for a tensor
    of 3 dims; after a leading `...`, the last dims (`"... d"` is for
    `[b T d]` and for `[.. d]`). einsum's pattern has one input per tensor
    it is given.
    """,
    """
    fn f(q: [b n d]) -> [b d n]:
        return rearrange(q, "b n -> b n")
    """,
    """
    fn f(q: [b n d]) -> [b d n]:
        return rearrange(q, "b n d -> b d n")
    """,
    variants={
        "rank": "'{side}' names {names} for {x}, which has {dims}",
        "rank_lead": "'{side}' names {names} after '...' for {x}, which has {dims}",
        "rest": "'{side}' names the dims of {x} after its '..': write '...' in front for them",
        "operands": "{inputs} before '->' for {tensors}",
    },
)

E0972 = _code(
    "E0972",
    "pattern name bound to two dims",
    "{fn} pattern: '{name}' is {first} in {first_place} and {second} in {second_place}",
    """
    A name of a pattern stands for one dim: wherever it appears in the
    inputs, the tensors' dims at those places must be the same dim. A
    contraction over `d` needs the same `d` in both tensors.
    """,
    """
    fn f(q: [b n d], k: [b m e]) -> [b n m]:
        return einsum("b n d, b m d -> b n m", q, k)
    """,
    """
    fn f(q: [b n d], k: [b m d]) -> [b n m]:
        return einsum("b n d, b m d -> b n m", q, k)
    """,
)

E0973 = _code(
    "E0973",
    "pattern's result does not fit its inputs",
    "{fn} pattern: {problem}",
    """
    The result of a pattern is made of the inputs' names. A name of the
    result that no input names has no size to take. A name stands once in
    the result. einsum sums over the names the result leaves out;
    rearrange only moves values, so each name of its input stands once in
    its input and once in its result (sum or mean over a dim first to drop
    it).
    """,
    """
    fn f(q: [b n d], k: [b m d]) -> [b n m]:
        return einsum("b n d, b m d -> b n k", q, k)
    """,
    """
    fn f(q: [b n d], k: [b m d]) -> [b n m]:
        return einsum("b n d, b m d -> b n m", q, k)
    """,
    variants={
        "not_in_inputs": "'{name}' of the result is no name of the {inputs}",
        "twice_in_result": "'{name}' stands twice in the result",
        "twice_in_input": "'{name}' stands twice in rearrange's input",
        "dropped": "'{name}' of the input is not in the result: rearrange keeps every value "
        "(sum or mean over it first)",
        "lead_dropped": "the input has '...' and the result does not: the leading dims stay in front",
        "lead_made": "the result has '...' and {inputs} no '...'",
    },
)

E0974 = _code(
    "E0974",
    "group does not split its dim",
    "rearrange: {reason}",
    """
    A group of rearrange's input, `(h p1)`, splits one dim of the tensor
    into several: the sizes of all but one of its names are given as
    keywords (`p1=16`: an integer, a dim or dim arithmetic), and the one
    left is the dim divided by their product, which must divide it. With
    every size given, their product is the dim. A keyword for a name that
    is a whole dim of the tensor must be that dim. A division that cannot
    be proved exact when checking (`(H/16)` of a generic `H`) is checked
    when the program runs.
    """,
    """
    dim H = 30

    fn f(x: [b H]) -> [b 16 2]:
        return rearrange(x, "b (p h) -> b p h", p=16)
    """,
    """
    dim H = 32

    fn f(x: [b H]) -> [b 16 2]:
        return rearrange(x, "b (p h) -> b p h", p=16)
    """,
    variants={
        "two_left": "the group '{group}' splits {dim} with no size for {names}: give all but one as keywords, "
        "such as {example}=...",
        "not_divisible": "the group '{group}' splits {dim} by {sizes}, which does not divide it",
        "product": "the group '{group}' is {product}, not {dim}",
        "whole_dim": "{name}={size}, but '{name}' is the dim {dim} of {x}",
    },
)

E0975 = _code(
    "E0975",
    "size for no name of the pattern",
    "rearrange: {problem}",
    """
    rearrange's keyword arguments give the sizes of the pattern's names
    (`p1=16`), for the groups of its input to split. A keyword whose name
    is not in the pattern sizes nothing.
    """,
    """
    fn f(x: [b (p*16)]) -> [b p 16]:
        return rearrange(x, "b (p q) -> b p q", r=16)
    """,
    """
    fn f(x: [b (p*16)]) -> [b p 16]:
        return rearrange(x, "b (p q) -> b p q", q=16)
    """,
    variants={
        "not_in_pattern": "'{name}' is no name of the pattern '{pattern}'",
        "twice": "'{name}' is given twice",
    },
)
