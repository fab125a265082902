"""The patterns of `einsum` and `rearrange`, read from their string literal:
`"b n d, b m d -> b n m"`, `"b c (h p1) (w p2) -> b (h w) (p1 p2 c)"`.

A pattern is its inputs (one per tensor, separated by `,`), `->`, and its
output. Each input or output is a list of items: a name (one dim) or, for
rearrange, a group of names in parentheses (one dim that is their product).
Every name and group keeps its offsets in the pattern's text, so a
diagnostic can underline the very name it is about. A side may start with `...`: the
tensor's leading dims, however many, which the result keeps in front
(einops' and torch.einsum's ellipsis, here only in front). A malformed pattern is
a `PatternError`: the catalog variant of E0970 that says what is wrong, its
arguments and the offsets of the offending text.

This module imports nothing of the checker (runtime/_patterns.py reads the
patterns the checker accepted on its own).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Name:
    text: str
    start: int  # offsets in the pattern's text
    end: int


@dataclass(frozen=True)
class Item:
    """One dim of a side: a name, or a group `(h p1)` (grouped is True)."""

    names: tuple[Name, ...]
    grouped: bool
    start: int
    end: int

    @property
    def text(self) -> str:
        inner = " ".join(n.text for n in self.names)
        return f"({inner})" if self.grouped else inner


@dataclass(frozen=True)
class Side:
    items: tuple[Item, ...]
    start: int
    end: int
    # `...` in front: the leading dims of the tensor, however many, kept as they are
    lead: Name | None = None

    @property
    def names(self) -> tuple[Name, ...]:
        return tuple(n for item in self.items for n in item.names)

    @property
    def text(self) -> str:
        return " ".join(["..."] * (self.lead is not None) + [item.text for item in self.items])


@dataclass(frozen=True)
class Pattern:
    inputs: tuple[Side, ...]
    output: Side


@dataclass(frozen=True)
class PatternError:
    variant: str  # a variant of E0970
    args: tuple[tuple[str, str], ...]
    start: int
    end: int


def _error(variant: str, start: int, end: int, **args: str) -> PatternError:
    return PatternError(variant, tuple(args.items()), start, end)


def _is_name(word: str) -> bool:
    return word.isidentifier() and word.isascii()


def _side(text: str, start: int, end: int, groups: bool) -> Side | PatternError:
    items: list[Item] = []
    lead: Name | None = None
    group: list[Name] | None = None
    opened = 0
    i = start
    while i < end:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if text.startswith("...", i):
            if items or group is not None or lead is not None:
                return _error("ellipsis", i, i + 3)
            lead = Name("...", i, i + 3)
            i += 3
            continue
        if ch == "(":
            if not groups:
                close = text.find(")", i, end)
                return _error("group_in_einsum", i, close + 1 if close >= 0 else i + 1)
            if group is not None:
                return _error("nested", i, i + 1)
            group, opened = [], i
            i += 1
            continue
        if ch == ")":
            if group is None:
                return _error("unopened", i, i + 1)
            if not group:
                return _error("empty_group", opened, i + 1)
            items.append(Item(tuple(group), True, opened, i + 1))
            group = None
            i += 1
            continue
        if ch.isalnum() or ch == "_":
            j = i
            while j < end and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if not _is_name(word):
                return _error("bad_name", i, j, name=word)
            name = Name(word, i, j)
            if group is not None:
                group.append(name)
            else:
                items.append(Item((name,), False, i, j))
            i = j
            continue
        return _error("bad_char", i, i + 1, char=ch)
    if group is not None:
        return _error("unclosed", opened, opened + 1)
    return Side(tuple(items), start, end, lead)


def parse(text: str, *, groups: bool, many: bool) -> Pattern | PatternError:
    """The pattern of `text`: `groups` (rearrange) allows `(h w)`, `many`
    (einsum) one input per tensor, separated by commas."""
    arrow = text.find("->")
    if arrow < 0:
        return _error("no_arrow", 0, len(text))
    again = text.find("->", arrow + 2)
    if again >= 0:
        return _error("two_arrows", again, again + 2)
    comma = text.find(",", arrow + 2)
    if comma >= 0:
        return _error("comma_in_output", comma, comma + 1)
    cuts = [-1] + [i for i in range(arrow) if text[i] == ","] + [arrow]
    if not many and len(cuts) > 2:
        return _error("comma_in_rearrange", cuts[1], cuts[1] + 1)
    inputs: list[Side] = []
    for a, b in zip(cuts, cuts[1:]):
        side = _side(text, a + 1, b, groups)
        if isinstance(side, PatternError):
            return side
        inputs.append(side)
    output = _side(text, arrow + 2, len(text), groups)
    if isinstance(output, PatternError):
        return output
    return Pattern(tuple(inputs), output)


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The offsets of `text[start:end]` without its surrounding spaces (a
    side's own text, for underlining; an empty side keeps its place)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
