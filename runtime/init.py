"""Initialisers for model fields (``rt.init.zeros``, ``rt.init.normal(0, 0.02)``...).

An initialiser is called as ``init(shape, dtype, generator)`` and returns a new
CPU tensor of that shape and dtype; :meth:`Model.init` moves it to the model's
device.  Random initialisers draw from the generator they are given, which is
the one generator of a ``Model.init(seed=...)`` call, so the values depend only
on the seed and on the fields declared before.  Random values are drawn in
f64 for f64 fields and in f32 otherwise, then converted (so an f16 field gets
the f32 draw rounded, whatever its dtype).
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "Initializer",
    "zeros",
    "ones",
    "fill",
    "normal",
    "uniform",
    "glorot_uniform",
    "glorot_normal",
    "xavier",
    "xavier_uniform",
    "xavier_normal",
]


class Initializer:
    """Base class; subclasses implement ``__call__(shape, dtype, generator)``."""

    name = "init"
    random = False

    def __call__(self, shape, dtype, generator):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


def _draw_dtype(dtype):
    if not (dtype.is_floating_point):
        return None
    return torch.float64 if dtype == torch.float64 else torch.float32


class _Fill(Initializer):
    def __init__(self, value, name):
        self.value = value
        self.name = name

    def __call__(self, shape, dtype, generator):
        return torch.full(tuple(shape), self.value, dtype=dtype)


zeros = _Fill(0, "zeros")
ones = _Fill(1, "ones")


def fill(value) -> Initializer:
    """Every element set to ``value``."""
    return _Fill(value, f"fill({value!r})")


class _Random(Initializer):
    """Base class of the random initialisers; subclasses implement ``sample``."""

    random = True

    def __call__(self, shape, dtype, generator):
        draw = _draw_dtype(dtype)
        if draw is None:
            raise ValueError(f"{self.name} needs a float element type")
        return self.sample(tuple(shape), draw, generator).to(dtype)

    def sample(self, shape: tuple[int, ...], dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
        """Draws of ``shape`` in ``dtype`` (f32 or f64) from ``generator``."""
        raise NotImplementedError  # pragma: no cover - abstract


class _Normal(_Random):
    def __init__(self, mean, std):
        self.mean = float(mean)
        self.std = float(std)
        self.name = f"normal({mean!r}, {std!r})"

    def sample(self, shape, dtype, generator):
        t = torch.randn(shape, generator=generator, dtype=dtype)
        return t.mul_(self.std).add_(self.mean)


class _Uniform(_Random):
    def __init__(self, lo, hi):
        self.lo = float(lo)
        self.hi = float(hi)
        self.name = f"uniform({lo!r}, {hi!r})"

    def sample(self, shape, dtype, generator):
        t = torch.rand(shape, generator=generator, dtype=dtype)
        return t.mul_(self.hi - self.lo).add_(self.lo)


def normal(mean=0.0, std=1.0) -> Initializer:
    """Independent draws from N(mean, std**2)."""
    return _Normal(mean, std)


def uniform(lo=0.0, hi=1.0) -> Initializer:
    """Independent draws from U[lo, hi)."""
    return _Uniform(lo, hi)


def fans(shape):
    """(fan_in, fan_out) as Glorot uses them, for Quiver's ``x @ w`` layout.

    fan_out is the last dim; fan_in is the product of all the other dims (for
    a ``[D H]`` weight: D and H).  A ``[n]`` field has fan_in = fan_out = n.
    """
    shape = tuple(shape)
    if len(shape) == 0:
        raise ValueError("Glorot initialisation needs at least one dim")
    if len(shape) == 1:
        return shape[0], shape[0]
    return math.prod(shape[:-1]), shape[-1]


class _Glorot(_Random):
    def __init__(self, kind):
        self.kind = kind
        self.name = f"glorot_{kind}"

    def sample(self, shape, dtype, generator):
        fan_in, fan_out = fans(shape)
        if self.kind == "uniform":
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            t = torch.rand(shape, generator=generator, dtype=dtype)
            return t.mul_(2 * bound).sub_(bound)
        std = math.sqrt(2.0 / (fan_in + fan_out))
        return torch.randn(shape, generator=generator, dtype=dtype).mul_(std)


glorot_uniform = _Glorot("uniform")
glorot_normal = _Glorot("normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
xavier = glorot_uniform  # the language's `xavier` initializer
