"""Modes: where randomness comes from (``Train(seed=...)``) or that there is
none (``Eval``).

A ``Train`` value owns one random stream per device.  The stream for device
``d`` is a ``torch.Generator(device=d)`` seeded with the mode's seed, created
at the first random draw on that device.  Every random draw made with the mode
(each ``dropout`` call) takes the next numbers of that stream, so two draws in
one forward pass never share a mask, and a program that makes the same
sequence of draws with ``Train(seed=s)`` gets the same masks every run.
Passing the *same* ``Train`` value to two calls continues its stream; build a
new ``Train(seed=...)`` to start over.
"""

from __future__ import annotations

import operator

import torch

from ._checks import seed_problem
from ._errors import ModeError


class Mode:
    """Base class of ``Train`` and the type of ``Eval``."""

    __slots__ = ()

    training = False


class Train(Mode):
    """Training mode: dropout is active, drawing from a stream seeded by ``seed``."""

    __slots__ = ("seed", "_cpu", "_gens", "_draws")

    training = True

    def __init__(self, seed):
        if torch.compiler.is_compiling() and (
            not isinstance(seed, torch.Tensor) or (seed.dim() == 0 and seed.dtype is torch.int64)
        ):
            # traced (torch.compile): an Int seed stays symbolic, and a 0-dim
            # int64 tensor a tensor (quiver.to_module's count of calls), no
            # guard on its value (one graph for every step); the signature
            # checked that an Int is one
            self.seed: int | torch.Tensor = seed
            self._cpu = None
            self._gens = None
            self._draws = 0
            return
        if isinstance(seed, torch.Tensor):
            if seed.dim() != 0 or seed.is_floating_point() or seed.dtype is torch.bool:
                raise ModeError(f"Train(seed=...) needs an Int, found a tensor of dtype {seed.dtype}")
            seed = int(seed.item())
        elif isinstance(seed, bool):
            raise ModeError("Train(seed=...) needs an Int, found a Bool")
        else:
            try:
                seed = operator.index(seed)
            except TypeError:
                raise ModeError(f"Train(seed=...) needs an Int, found {type(seed).__name__}") from None
        problem = seed_problem(seed)
        if problem is not None:
            raise ModeError(f"Train(seed=...): {problem}")
        self.seed = seed
        self._cpu: torch.Generator | None = None
        self._gens: dict[torch.device, torch.Generator] | None = None
        self._draws = 0  # draws made while torch.compile traces (runtime/_traced_rng.py)

    def traced_draw(self) -> int:
        """The number of this draw among the mode's traced draws (0, 1, ...)."""
        n = self._draws
        self._draws = n + 1
        return n

    def generator(self, device: torch.device | str | int) -> torch.Generator | None:
        """This mode's random stream on ``device`` (created at first use); None
        on the meta device, where nothing is drawn."""
        device = torch.device(device) if not isinstance(device, torch.device) else device
        if device.type == "cpu":
            gen = self._cpu
            if gen is None:
                gen = self._cpu = torch.Generator()
                gen.manual_seed(int(self.seed))  # an int: eager
            return gen
        if device.type == "meta":
            return None  # shapes only: there is nothing to draw
        if self._gens is None:
            self._gens = {}
        gen = self._gens.get(device)
        if gen is None:
            gen = torch.Generator(device=device)
            gen.manual_seed(int(self.seed))  # an int: eager
            self._gens[device] = gen
        return gen

    def __repr__(self) -> str:
        return f"Train(seed={self.seed})"


class EvalMode(Mode):
    """The type of ``Eval``; there is exactly one value of it."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "Eval"

    def __reduce__(self):
        return (EvalMode, ())


Eval = EvalMode()
