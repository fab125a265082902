"""The progress line of `quiver run`: step, steps/s, ETA and the last logged metrics.

The compiler wraps each loop of ``main`` over ``range(...)`` or
``batches(...)`` that no other loop holds in ``rt.progress(sequence, name)``.
Outside ``quiver run`` (``quiver.load``, tests) progress is off and
``progress`` returns the sequence itself: not even a wrapper. ``quiver run``
turns it on (:func:`configure`) unless ``--no-progress`` is given; only rank 0
of a data-parallel run shows it.

Where it is shown (stderr):

- on a terminal, a tqdm bar that appears once the loop has run for
  ``DELAY_S`` seconds (short loops never show one) and updates in place;
- elsewhere (a pipe: CI logs, the editor) one plain line every
  ``PLAIN_EVERY_S`` seconds, the first after ``DELAY_S``, and one when the
  loop ends, without control characters:
  ``step 1200/5000 (24%) 85.3 steps/s ETA 00:44 loss=0.3125``.

``log(...)`` feeds its values in (:func:`note`); the program's own prints go
through :func:`writing`, which lifts a bar off the terminal while a line is
written, so the two never garble each other.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import weakref
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from . import _dist

DELAY_S = 2.0  # a loop shorter than this never shows progress
PLAIN_EVERY_S = 10.0  # a plain line this often when stderr is not a terminal


class _State:
    enabled = False
    stream: TextIO | None = None  # None: sys.stderr when the loop starts
    delay_s = DELAY_S
    every_s = PLAIN_EVERY_S
    last: dict[str, float] = {}  # the values of the last log(...) call


_bars: weakref.WeakSet[Any] = weakref.WeakSet()  # the tqdm bars on the screen now
_stopped: list[Any] = []  # bars of loops left early, not yet known to be a break or a failure


def configure(
    enabled: bool, stream: TextIO | None = None, delay_s: float | None = None, every_s: float | None = None
) -> tuple:
    """Turn progress on or off (and where it goes; the times default to
    DELAY_S and PLAIN_EVERY_S); the previous settings, for :func:`restore`."""
    before = (_State.enabled, _State.stream, _State.delay_s, _State.every_s)
    _State.enabled, _State.stream = enabled, stream
    _State.delay_s = DELAY_S if delay_s is None else delay_s
    _State.every_s = PLAIN_EVERY_S if every_s is None else every_s
    _State.last = {}
    return before


def restore(before: tuple, failed: bool = False) -> None:
    close_all(failed)
    _State.enabled, _State.stream, _State.delay_s, _State.every_s = before
    _State.last = {}


def enabled() -> bool:
    return _State.enabled


def progress(sequence: Iterable, name: str = "step") -> Iterable:
    """The sequence of a loop of ``main``, with a progress line when progress
    is on (rank 0 only); else the sequence itself."""
    if not _State.enabled or _dist.rank() != 0:
        return sequence
    stream = _State.stream if _State.stream is not None else sys.stderr
    try:
        total: int | None = len(sequence)  # type: ignore[arg-type]
    except TypeError:
        total = None
    if _is_terminal(stream):
        return _bar(sequence, total, name, stream)
    return _plain(sequence, total, name, stream)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def _bar(sequence: Iterable, total: int | None, name: str, stream: TextIO) -> Iterable:
    from tqdm import tqdm

    sized = min(_size(stream)) > 0  # a terminal that says its size (a bare pty says 0 x 0)
    _settle()
    bar = tqdm(
        total=total,
        desc=name,
        unit="step",
        file=stream,
        delay=_State.delay_s,
        mininterval=0.25,
        dynamic_ncols=sized,
        ncols=None if sized else 100,
        nrows=None if sized else 24,
        leave=True,
    )
    _bars.add(bar)
    if _State.last:
        bar.set_postfix({k: _number(v) for k, v in _State.last.items()}, refresh=False)
    return _counted(sequence, bar)


def _counted(sequence: Iterable, bar) -> Iterator:
    """The items of ``sequence``, counted on ``bar``. A loop that runs out
    closes its bar, which stays on the terminal as it ended. A loop left
    early is either a ``break``/``return`` or an error (or Ctrl-C) on its
    way to the report, and the generator cannot tell which (both close it
    with GeneratorExit): the bar is kept as it is, and the next thing the
    program does settles it (:func:`_settle`: kept), unless a failure is
    reported first (:func:`close_all`: cleared)."""
    ended = False
    try:
        for item in sequence:
            yield item
            bar.update(1)
        ended = True
    finally:
        if ended:
            _close(bar, leave=True)
        else:
            _stopped.append(bar)  # (held: tqdm's __del__ would close it and leave it)


def _close(bar, leave: bool) -> None:
    with contextlib.suppress(Exception):
        bar.leave = leave  # close() with leave=False erases the line instead of keeping it
        bar.close()
    _bars.discard(bar)


def _settle() -> None:
    """Close, as they stand, the bars of loops a ``break`` or ``return`` left:
    the program went on, so they were not stopped by a failure."""
    while _stopped:
        _close(_stopped.pop(), leave=True)


def _size(stream: TextIO) -> tuple[int, int]:
    try:
        return tuple(os.get_terminal_size(stream.fileno()))  # type: ignore[return-value]
    except (AttributeError, OSError, ValueError):
        return 0, 0


class _Plain:
    """The counts of one loop whose progress is written as plain lines."""

    def __init__(self, total: int | None, name: str, stream: TextIO) -> None:
        self.total, self.name, self.stream = total, name, stream
        self.start = time.monotonic()
        self.next_at = self.start + _State.delay_s
        self.done = 0
        self.shown = False

    def line(self, now: float, final: bool = False) -> str:
        from tqdm import tqdm

        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.name} {self.done}" + (f"/{self.total}" if self.total is not None else "")]
        if self.total:
            parts[0] += f" ({100 * self.done // self.total}%)"
        parts.append(f"{rate:.3g} steps/s")
        if final:
            parts.append(f"done in {tqdm.format_interval(elapsed)}")
        elif self.total is not None and rate > 0:
            parts.append(f"ETA {tqdm.format_interval((self.total - self.done) / rate)}")
        if _State.last:
            parts.append(" ".join(f"{k}={_number(v)}" for k, v in _State.last.items()))
        return " ".join(parts)

    def write(self, text: str) -> None:
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream: no progress, the run goes on
            pass


def _plain(sequence: Iterable, total: int | None, name: str, stream: TextIO) -> Iterator:
    p = _Plain(total, name, stream)
    clock = time.monotonic
    for item in sequence:
        yield item
        p.done += 1
        now = clock()
        if now >= p.next_at:
            p.write(p.line(now))
            p.shown = True
            p.next_at = now + _State.every_s
    if p.shown:  # the loop showed progress: say how it ended
        p.write(p.line(clock(), final=True))


def _number(v: float) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def note(values: dict[str, float]) -> None:
    """The values of a ``log(...)`` call, shown after the counts."""
    _State.last = dict(values)
    _settle()
    for bar in list(_bars):
        if not bar.disable:
            bar.set_postfix({k: _number(v) for k, v in values.items()}, refresh=False)


def writing():
    """A context in which a line may be written to stdout or stderr without
    garbling a bar on the terminal: the bars shown are lifted off and drawn
    again after it. Nothing at all when no bar is shown."""
    _settle()
    if not _bars:
        return contextlib.nullcontext()
    shown = [b for b in list(_bars) if not b.disable and b.last_print_t >= b.start_t + b.delay]  # drawn
    return _lifted(shown) if shown else contextlib.nullcontext()


@contextlib.contextmanager
def _lifted(bars: list):
    for bar in bars:
        bar.clear()
    try:
        yield
    finally:
        for bar in bars:
            bar.refresh()


def close_all(failed: bool = True) -> None:
    """Close every bar still open. After a failure (``failed``: an error or
    Ctrl-C, reported after this) they are taken off the terminal, not left
    frozen above the report; at a normal end a bar a ``break`` left stays as
    it ended."""
    if not failed:
        _settle()
    for bar in [*_stopped, *_bars]:  # (the stopped ones held until closed: tqdm's __del__ would leave them)
        _close(bar, leave=not failed)
    _stopped.clear()
