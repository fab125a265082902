"""``einsum`` and ``rearrange``: the built-ins that take a pattern of dim
names (checker/builtins/patterns.py checks them). A pattern is read once
(cached by its text): einsum's names become torch.einsum's letters,
rearrange's groups a reshape, a permute and a reshape, as einops does it
(without depending on einops)."""

from __future__ import annotations

import functools
import re
import string

import torch

from ._errors import CheckError

_TOKEN = re.compile(r"\.\.\.|\(|\)|\w+")


def _side(text: str) -> list[list[str]]:
    """The items of one side: each a list of names (a group's several);
    a leading `...` is an item of its own, ["..."]."""
    items: list[list[str]] = []
    group: list[str] | None = None
    for tok in _TOKEN.findall(text):
        if tok == "(":
            group = []
        elif tok == ")":
            assert group is not None
            items.append(group)
            group = None
        elif group is not None:
            group.append(tok)
        else:
            items.append([tok])
    return items


@functools.lru_cache(maxsize=512)
def _equation(pattern: str) -> str:
    """torch.einsum's equation of a pattern: "b n d, b m d -> b n m" is "abc,adc->abd"."""
    inputs, output = pattern.split("->")
    letters: dict[str, str] = {}

    def side(text: str) -> str:
        out = ""
        for [name] in _side(text):
            if name == "...":
                out += name
                continue
            if name not in letters:
                letters[name] = string.ascii_letters[len(letters)]
            out += letters[name]
        return out

    return ",".join(side(s) for s in inputs.split(",")) + "->" + side(output)


def einsum(pattern: str, *tensors):
    """``einsum("b n d, b m d -> b n m", q, k)``: torch.einsum with names."""
    return torch.einsum(_equation(pattern), *tensors)


@functools.lru_cache(maxsize=512)
def _plan(pattern: str) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...], tuple[int, ...]]:
    """The input's items, the result's items (without a leading `...`),
    and the permutation of the input's names that puts them in the
    result's order."""
    left, right = pattern.split("->")
    ins = tuple(tuple(item) for item in _side(left) if item != ["..."])
    outs = tuple(tuple(item) for item in _side(right) if item != ["..."])
    flat_in = [n for item in ins for n in item]
    order = tuple(flat_in.index(n) for item in outs for n in item)
    return ins, outs, order


def rearrange(x, pattern: str, sizes: dict[str, int]):
    """``rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", {"p1": 16, "p2": 16})``:
    x split, moved and merged as the pattern says."""
    ins, outs, order = _plan(pattern)
    lead = list(x.shape[: x.dim() - len(ins)])  # what a leading `...` stands for
    size: dict[str, int] = {}
    for item, n in zip(ins, x.shape[len(lead) :]):
        n = int(n)
        given = [int(sizes[name]) for name in item if name in sizes]
        known = 1
        for s in given:
            known *= s
        left = [name for name in item if name not in sizes]
        if left:
            if known <= 0 or n % known:
                raise CheckError(
                    f"rearrange(): the group ({' '.join(item)}) splits a dim of {n} by {known}, which does not divide it"
                )
            size[left[0]] = n // known
        elif known != n:
            raise CheckError(f"rearrange(): the group ({' '.join(item)}) is {known}, not the dim of {n}")
        for name in item:
            if name in sizes:
                size[name] = int(sizes[name])
    flat = lead + [size[name] for item in ins for name in item]
    y = x.reshape(flat)
    if order != tuple(range(len(order))):
        y = y.permute(tuple(range(len(lead))) + tuple(len(lead) + i for i in order))
    shape = list(lead)
    for item in outs:
        total = 1
        for name in item:
            total *= size[name]
        shape.append(total)
    return y.reshape(shape)
