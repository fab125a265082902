"""Distributions (`Categorical`, `Normal`, `Bernoulli`, `kl_divergence`):
torch.distributions' own objects and formulas, with Quiver's seeded draws.

Each class holds the torch distribution (built with validate_args=False: the
checker has proved what torch's validation checks, and a value it cannot
know, as a zero scale, gives torch's unvalidated numbers, not an exception).
`log_prob`, `entropy` and `kl_divergence` are torch's. A draw takes `seed=`
and makes the same generator calls as torch's `sample`/`rsample` do on the
global generator, from a generator seeded with it on the parameters' device:
`d.sample(seed=s)` equals `torch.manual_seed(s); d.sample()` bit for bit.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import torch
import torch.distributions as D

from ._ops import _seed

__all__ = ["Bernoulli", "Categorical", "Normal", "kl_divergence"]


def _generator(seed, device) -> torch.Generator:
    gen = torch.Generator(device=device)
    gen.manual_seed(_seed(seed))
    return gen


_D = TypeVar("_D", bound=D.Distribution)


class _Distribution(Generic[_D]):
    """What the three share: the torch distribution, its log_prob and entropy."""

    dist: _D

    def __getattr__(self, name: str):
        # the fields the checker allows (probs, logits, loc, scale, mean, stddev, variance): torch's
        if name.startswith("_") or name == "dist":
            raise AttributeError(name)
        return getattr(self.dist, name)

    def log_prob(self, value):
        return self.dist.log_prob(value)

    def entropy(self):
        return self.dist.entropy()

    def __repr__(self) -> str:
        return f"{type(self).__name__} of {tuple(self.dist.batch_shape)}"


class Categorical(_Distribution[D.Categorical]):
    def __init__(self, probs=None, logits=None):
        self.dist = D.Categorical(probs=probs, logits=logits, validate_args=False)

    def sample(self, seed):
        """One label per distribution of the batch: torch's Categorical.sample."""
        d = self.dist
        with torch.no_grad():
            probs_2d = d.probs.reshape(-1, d._num_events)
            gen = _generator(seed, probs_2d.device)
            drawn = torch.multinomial(probs_2d, 1, True, generator=gen).T
            return drawn.reshape(d.batch_shape)


class Normal(_Distribution[D.Normal]):
    def __init__(self, loc, scale):
        self.dist = D.Normal(loc, scale, validate_args=False)

    def sample(self, seed):
        """torch's Normal.sample: torch.normal of loc and scale, no gradient."""
        d = self.dist
        shape = d.batch_shape
        with torch.no_grad():
            gen = _generator(seed, d.loc.device)
            return torch.normal(d.loc.expand(shape), d.scale.expand(shape), generator=gen)

    def rsample(self, seed):
        """torch's Normal.rsample: loc + eps * scale, eps standard normal."""
        d = self.dist
        eps = torch.empty(d.batch_shape, dtype=d.loc.dtype, device=d.loc.device)
        eps.normal_(generator=_generator(seed, d.loc.device))
        return d.loc + eps * d.scale


class Bernoulli(_Distribution[D.Bernoulli]):
    def __init__(self, probs=None, logits=None):
        self.dist = D.Bernoulli(probs=probs, logits=logits, validate_args=False)

    def sample(self, seed):
        """torch's Bernoulli.sample: 0.0 or 1.0, of the parameters' type."""
        d = self.dist
        with torch.no_grad():
            gen = _generator(seed, d.probs.device)
            return torch.bernoulli(d.probs.expand(d.batch_shape), generator=gen)


def kl_divergence(p: _Distribution, q: _Distribution):
    """KL(p || q) of two distributions of one kind: torch's formula."""
    return D.kl_divergence(p.dist, q.dist)
