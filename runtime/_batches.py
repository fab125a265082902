"""Random permutations and mini-batches over the first dim (``rt.randperm``, ``rt.batches``).

``rt.batches(x, y, size=64, shuffle=epoch, src=_src, line=L, col=C)`` is what
``for xb, yb in batches(x, y, size=64, shuffle=epoch):`` compiles to: an
iterable of tuples, one tensor per input, each the input's rows of that batch
on the input's device. Unshuffled batches are slices (views) of the inputs;
shuffled ones take their rows with one ``index_select`` per input per batch,
in the order of ``randperm(n, seed)``.
"""

from __future__ import annotations

import torch

from . import _device
from ._checks import seed_problem
from ._elems import tensor_text
from ._errors import CheckError
from ._specs import describe

__all__ = ["Batches", "batches", "randperm"]


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _permutation(n: int, seed: int) -> torch.Tensor:
    gen = torch.Generator()
    gen.manual_seed(seed)
    return torch.randperm(n, generator=gen)


def randperm(n, seed, *, src=None, line=0, col=0) -> torch.Tensor:
    """A permutation of ``0..n-1`` as int64 on the current device: the values of
    ``torch.randperm(n, generator=torch.Generator().manual_seed(seed))`` (drawn on
    the CPU, so a seed gives the same permutation on every device)."""
    loc = src.loc(line, col) if src is not None else None
    if not _int(n) or n < 0:
        raise CheckError(f"randperm(): n must be an Int >= 0, found {describe(n)}", loc)
    if not _int(seed):
        raise CheckError(f"randperm(): the seed must be an Int, found {describe(seed)}", loc)
    problem = seed_problem(seed)
    if problem is not None:
        raise CheckError(f"randperm(): {problem}", loc)
    perm = _permutation(n, seed)
    device = _device._state.current
    return perm if device.type == "cpu" else perm.to(device)


class Batches:
    """The batches of some tensors over their first dim; iterate it (each pass
    gives the same batches: a tuple of one batch of each input, or the batch
    itself for a single input) or take its ``len()``, the number of batches."""

    __slots__ = ("tensors", "size", "shuffle", "drop_last", "n")

    def __init__(self, tensors: tuple, size: int, shuffle: int | None, drop_last: bool, n: int):
        self.tensors = tensors
        self.size = size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.n = n

    def __len__(self) -> int:
        n, size = self.n, self.size
        return n // size if self.drop_last else -(-n // size)

    def __iter__(self):
        tensors, size = self.tensors, self.size
        stop = len(self) * size
        # one input: each batch is a tensor (`for xb in batches(x, ...)`), several: a tuple
        one = len(tensors) == 1
        if self.shuffle is None:
            for i in range(0, stop, size):
                yield tensors[0][i : i + size] if one else tuple(t[i : i + size] for t in tensors)
            return
        perm = _permutation(self.n, self.shuffle)
        # the permutation on each input's device, moved once per pass
        on: dict[torch.device, torch.Tensor] = {}
        perms = []
        for t in tensors:
            p = on.get(t.device)
            if p is None:
                p = on[t.device] = perm if t.device.type == "cpu" else perm.to(t.device)
            perms.append(p)
        for i in range(0, stop, size):
            if one:
                yield tensors[0].index_select(0, perms[0][i : i + size])
            else:
                yield tuple(t.index_select(0, p[i : i + size]) for t, p in zip(tensors, perms))

    def __repr__(self) -> str:
        inputs = ", ".join(tensor_text(t) for t in self.tensors)
        order = "in order" if self.shuffle is None else f"shuffle={self.shuffle}"
        last = ", drop_last" if self.drop_last else ""
        return f"Batches({inputs}; size={self.size}, {order}{last}: {len(self)} batches)"


def batches(*tensors, size, shuffle=None, drop_last=False, src=None, line=0, col=0) -> Batches:
    """The batches of ``tensors`` over their first dim, which they must share:
    ``size`` rows each, the last one short unless ``drop_last``; in order, or with
    ``shuffle=seed`` in the order of ``randperm(n, seed)``."""
    loc = src.loc(line, col) if src is not None else None
    if not tensors:
        raise CheckError("batches(): no tensors to batch", loc)
    for i, t in enumerate(tensors, start=1):
        if not isinstance(t, torch.Tensor):
            raise CheckError(f"batches(): input {i} is {describe(t)}, not a tensor", loc)
        if t.dim() == 0:
            raise CheckError(f"batches(): input {i} is {tensor_text(t)}, which has no first dim to batch over", loc)
    n = tensors[0].shape[0]
    if any(t.shape[0] != n for t in tensors):
        shown = ", ".join(f"input {i} is {tensor_text(t)}" for i, t in enumerate(tensors, start=1))
        raise CheckError(f"batches(): the inputs' first dims differ ({shown})", loc)
    if not _int(size) or size < 1:
        raise CheckError(f"batches(): size must be an Int >= 1, found {describe(size)}", loc)
    if shuffle is not None:
        if not _int(shuffle):
            raise CheckError(
                f"batches(): shuffle is a seed (an Int, such as the epoch) or none, found {describe(shuffle)}", loc
            )
        problem = seed_problem(shuffle)
        if problem is not None:
            raise CheckError(f"batches(): shuffle {problem}", loc)
    if not isinstance(drop_last, bool):
        raise CheckError(f"batches(): drop_last must be a Bool, found {describe(drop_last)}", loc)
    return Batches(tensors, size, shuffle, drop_last, n)
