"""The switch for run-time checks (``rt.checks``)."""

from __future__ import annotations

import os
import threading

_OFF_WORDS = {"0", "false", "off", "no"}


class _Restore:
    __slots__ = ("_switch", "_want", "_prev")

    def __init__(self, switch, want):
        self._switch = switch
        self._want = bool(want)
        self._prev = None

    def __enter__(self):
        self._prev = self._switch.enabled
        self._switch.enabled = self._want
        return self._switch

    def __exit__(self, *exc):
        self._switch.enabled = self._prev
        return False


class Checks:
    """Whether compiled code checks its arguments (and the runtime its values).

    Compiled functions test ``rt.checks.enabled`` on entry, so flipping it
    takes effect at the next call.  ``with rt.checks(False): ...`` switches
    checks off for a block and restores the previous state afterwards, also
    when the block raises.  The initial state comes from the environment
    variable ``QUIVER_CHECKS`` (``0``, ``false``, ``off`` or ``no`` switch
    checks off); the default is on.
    """

    __slots__ = ("enabled",)

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def __call__(self, enabled: bool = True) -> _Restore:
        return _Restore(self, enabled)

    def on(self) -> None:
        self.enabled = True

    def off(self) -> None:
        self.enabled = False

    def __repr__(self) -> str:
        return f"rt.checks(enabled={self.enabled})"


def _initial() -> bool:
    value = os.environ.get("QUIVER_CHECKS")
    if value is None:
        return True
    return value.strip().lower() not in _OFF_WORDS


checks = Checks(_initial())


class _Transforms(threading.local):
    """``depth``: how many torch.func transforms (per-example gradients, jvp)
    the runtime is running in this thread.  Value checks that read values
    (``.item()``: refined element types) are skipped inside them, where
    tensors are batched or dual and per-example values cannot be read."""

    def __init__(self):
        self.depth = 0


transforms = _Transforms()


class _Deferred:
    """``counts``: while torch.compile traces a gradient (``_grad._traced``),
    the 0-dim counters (batch norm's ``num_batches_tracked``) to count up by
    one when the transform has returned; None otherwise. torch.func's grad
    refuses an in-place op on a tensor it did not take as an input, and
    dynamo refuses it while tracing; the count is not read inside the loss,
    so adding it after the gradient gives eager's state. A plain object, not
    thread-local: dynamo traces attribute writes on it, and only a trace
    (one thread) sets it."""

    def __init__(self):
        self.counts: list | None = None


deferred = _Deferred()


# Seeds: torch generators take any integer that fits in 64 bits, signed or not
# (a negative seed s is the same stream as s + 2**64).
SEED_MIN = -(2**63)
SEED_MAX = 2**64 - 1
SEED_RANGE = "-2**63 .. 2**64-1"


def seed_problem(seed: int) -> str | None:
    """Why an Int seed cannot seed a generator (it does not fit in 64 bits), or None."""
    if SEED_MIN <= seed <= SEED_MAX:
        return None
    return f"seed {seed} does not fit in 64 bits (seeds are Ints in {SEED_RANGE})"
