"""Random draws that torch.compile can trace: dropout's mask while dynamo or
torch.export is tracing (``torch.compiler.is_compiling()``).

Eager code draws a mask with ``bernoulli_`` from the mode's
``torch.Generator`` (runtime/_modes.py); a generator cannot be created or
advanced inside a compiled graph (dynamo refuses it: a graph break, an error
with ``fullgraph=True``). While tracing, a mask is instead a pure function
of (the mode's seed, the number of the draw in that mode, the element's
index): a 32-bit integer hash (lowbias32, two rounds) of those, turned into a
uniform number in [0, 1) with 24 bits. It is made of plain integer tensor ops,
so it is one graph with no state, the same on every backend and device, and
reproducible from the seed (a seed at or above 2**63 is taken modulo 2**64 as a signed
int64, so it must fit in int64 here); but it is another stream than the generator's:
dropout masks under torch.compile differ from eager ones (docs/torch-interop.md).

Every product is kept below 2**49, so int64 arithmetic never overflows (the
inductor C++ backend must not wrap signed integers).
"""

from __future__ import annotations

import torch

_M32 = 0xFFFFFFFF


def _mul32(x, c: int):
    """``(x * c) mod 2**32`` for an int64 tensor ``x`` in [0, 2**32) and a 32-bit constant."""
    lo, hi = c & 0xFFFF, c >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & _M32


def _mix(x):
    """lowbias32 (Chris Wellons' hash prospector), on int64 tensors holding 32-bit values."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def _key(seed, draw: int, device) -> tuple:
    """Two 32-bit words (int64 tensors) from a seed (an int, or a symbolic one
    while dynamo traces: it stays out of the guards) and the draw number."""
    if isinstance(seed, torch.Tensor):  # a 0-dim int64 tensor (Train under compile)
        s = seed.to(device)
    else:
        s = torch.full((), seed, dtype=torch.int64, device=device)
    a = (s & _M32) ^ ((draw * 0x9E3779B9) & _M32)
    b = ((s >> 32) & _M32) ^ ((draw * 0x85EBCA6B + 0x632BE5AB) & _M32)
    return a, b


def uniform(shape, seed, draw: int, device) -> torch.Tensor:
    """float32 numbers in [0, 1), one per element of ``shape``."""
    a, b = _key(seed, draw, device)
    n = 1
    for d in shape:
        n *= d
    idx = torch.arange(n, dtype=torch.int64, device=device)
    h = _mix((idx & _M32) ^ a)
    h = _mix(h ^ b ^ ((idx >> 32) & _M32))
    return ((h >> 8).to(torch.float32) * (1.0 / 16777216.0)).reshape(shape)


def keep_mask(shape, p: float, seed: int | torch.Tensor, draw: int, device, dtype) -> torch.Tensor:
    """Inverted dropout's multiplier: 1 / (1 - p) where an element is kept
    (probability 1 - p), 0 elsewhere, in ``dtype``."""
    keep = uniform(shape, seed, draw, device) >= p
    return keep.to(dtype) * (1.0 / (1.0 - p))
