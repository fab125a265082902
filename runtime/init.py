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
    "glorot",
    "gain",
    "fans",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "trunc_normal",
    "Computed",
    "computed",
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
    def __init__(self, mean, std, padding_idx=-1):
        self.mean = float(mean)
        self.std = float(std)
        self.padding_idx = int(padding_idx)
        extra = f", padding_idx={self.padding_idx}" if self.padding_idx >= 0 else ""
        self.name = f"normal({mean!r}, {std!r}{extra})"

    def sample(self, shape, dtype, generator):
        t = torch.randn(shape, generator=generator, dtype=dtype).mul_(self.std).add_(self.mean)
        if 0 <= self.padding_idx < (shape[0] if shape else 0):
            t[self.padding_idx].zero_()  # torch's Embedding: normal_, then the padding row zeroed
        return t


class _Uniform(_Random):
    def __init__(self, lo, hi):
        self.lo = float(lo)
        self.hi = float(hi)
        self.name = f"uniform({lo!r}, {hi!r})"

    def sample(self, shape, dtype, generator):
        t = torch.rand(shape, generator=generator, dtype=dtype)
        return t.mul_(self.hi - self.lo).add_(self.lo)


def normal(mean=0.0, std=1.0, padding_idx=-1) -> Initializer:
    """Independent draws from N(mean, std**2); row ``padding_idx`` (where it
    is one of the first dim's) zeros, as torch's ``nn.Embedding`` starts."""
    return _Normal(mean, std, padding_idx)


def uniform(lo=0.0, hi=1.0) -> Initializer:
    """Independent draws from U[lo, hi)."""
    return _Uniform(lo, hi)


def fans(shape):
    """(fan_in, fan_out) of a weight, as Glorot's and He's initialisations use them.

    - ``[n]``: n and n;
    - ``[D H]``, Quiver's ``x @ w`` layout: D in, H out;
    - ``[Co Ci k...]``, a convolution's kernel, torch's rule: ``Ci`` times the
      receptive field (the product of the kernel dims) in, ``Co`` times it out
      (so ``[20 10 5 5]`` has 250 in and 500 out, as ``nn.Conv2d(10, 20, 5)``).
    """
    shape = tuple(shape)
    if len(shape) == 0:
        raise ValueError("this initialisation needs at least one dim")
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


_LINEAR_GAINS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def gain(nonlinearity: str, param: float | None = None) -> float:
    """torch.nn.init.calculate_gain: the factor that keeps the variance of a
    layer's output for the nonlinearity after it."""
    if nonlinearity in _LINEAR_GAINS or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"no gain for the nonlinearity {nonlinearity!r}")


class _Glorot(_Random):
    def __init__(self, kind, gain=1.0):
        self.kind = kind
        self.gain = float(gain)
        self.name = f"glorot_{kind}" if gain == 1.0 else f"glorot_{kind}(gain={gain!r})"

    def sample(self, shape, dtype, generator):
        fan_in, fan_out = fans(shape)
        std = self.gain * math.sqrt(2.0 / (fan_in + fan_out))
        if self.kind == "uniform":
            bound = math.sqrt(3.0) * std
            t = torch.rand(shape, generator=generator, dtype=dtype)
            return t.mul_(2 * bound).sub_(bound)
        return torch.randn(shape, generator=generator, dtype=dtype).mul_(std)


def glorot(kind: str = "uniform", gain: float = 1.0) -> Initializer:
    """Glorot (Xavier) initialisation, uniform or normal, with torch's gain."""
    return _Glorot(kind, gain)


glorot_uniform = _Glorot("uniform")
glorot_normal = _Glorot("normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
xavier = glorot_uniform  # the language's `xavier` initializer


class _Kaiming(_Random):
    """He initialisation, torch's kaiming_uniform_ / kaiming_normal_: std =
    gain(nonlinearity, a) / sqrt(fan), the uniform bound sqrt(3) * std."""

    def __init__(self, kind, a, mode, nonlinearity):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', found {mode!r}")
        self.kind = kind
        self.a = float(a)
        self.mode = mode
        self.nonlinearity = nonlinearity
        self.std_gain = gain(nonlinearity, a)
        self.name = f"kaiming_{kind}(a={a!r}, mode={mode!r}, nonlinearity={nonlinearity!r})"

    def std(self, shape) -> float:
        fan_in, fan_out = fans(shape)
        return self.std_gain / math.sqrt(fan_in if self.mode == "fan_in" else fan_out)

    def sample(self, shape, dtype, generator):
        std = self.std(shape)
        if self.kind == "uniform":
            bound = math.sqrt(3.0) * std
            return torch.empty(shape, dtype=dtype).uniform_(-bound, bound, generator=generator)
        return torch.empty(shape, dtype=dtype).normal_(0.0, std, generator=generator)


def kaiming_uniform(a=0.0, mode="fan_in", nonlinearity="leaky_relu") -> Initializer:
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan) (torch's kaiming_uniform_).
    torch's layers use a = sqrt(5) for their weights, which gives b = 1 / sqrt(fan_in)."""
    return _Kaiming("uniform", a, mode, nonlinearity)


def kaiming_normal(a=0.0, mode="fan_in", nonlinearity="leaky_relu") -> Initializer:
    """He normal: N(0, (gain / sqrt(fan))**2) (torch's kaiming_normal_)."""
    return _Kaiming("normal", a, mode, nonlinearity)


class _Orthogonal(_Random):
    def __init__(self, gain):
        self.gain = float(gain)
        self.name = f"orthogonal(gain={gain!r})"

    def sample(self, shape, dtype, generator):
        if len(shape) < 2:
            raise ValueError("orthogonal needs a field of two dims or more")
        return torch.nn.init.orthogonal_(torch.empty(shape, dtype=dtype), gain=self.gain, generator=generator)


def orthogonal(gain=1.0) -> Initializer:
    """A (semi-)orthogonal matrix times gain, the trailing dims flattened (torch's orthogonal_)."""
    return _Orthogonal(gain)


class _TruncNormal(_Random):
    def __init__(self, mean, std, a, b):
        self.mean, self.std, self.a, self.b = float(mean), float(std), float(a), float(b)
        self.name = f"trunc_normal({mean!r}, {std!r}, a={a!r}, b={b!r})"

    def sample(self, shape, dtype, generator):
        t = torch.empty(shape, dtype=dtype)
        return torch.nn.init.trunc_normal_(t, self.mean, self.std, self.a, self.b, generator=generator)


def trunc_normal(mean=0.0, std=1.0, a=-2.0, b=2.0) -> Initializer:
    """N(mean, std**2) truncated to [a, b] (torch's trunc_normal_)."""
    return _TruncNormal(mean, std, a, b)


class Computed(Initializer):
    """A buffer computed by an expression of its model's dims and options
    (``buffer mask: [T T] Bool = tril(ones([T T] Bool))``): ``fn(cls)`` is
    the compiled expression, called with the model's class, whose dims and
    options it reads. :meth:`Model.init` calls it through :meth:`of_class`,
    as torch computes such a buffer in ``__init__``; it draws nothing from
    the generator."""

    name = "computed"

    def __init__(self, fn):
        self.fn = fn

    def of_class(self, cls, shape, dtype):
        t = self.fn(cls)
        if isinstance(t, torch.Tensor) and t.dtype != dtype and tuple(t.shape) == tuple(shape):
            t = t.to(dtype)
        return t.detach().cpu() if isinstance(t, torch.Tensor) else t

    def __call__(self, shape, dtype, generator):
        raise TypeError("a computed buffer is computed with its model's class (Computed.of_class)")


def computed(fn) -> Initializer:
    return Computed(fn)
