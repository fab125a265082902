"""Error classes raised by the runtime.

Every error the runtime raises on purpose derives from :class:`QuiverError`.
An error may carry a primary ``.qv`` location (``loc``); its message then
starts with ``file.qv:LINE:`` so that it reads well even as a plain Python
exception, while ``detail`` keeps the message without that prefix (used by
:func:`quiver.runtime.format_error`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

# How the lines of a program that is no file the user knows are named in
# messages: a notebook's cells are joined into one program, whose lines are
# named by their cell (``<cell 3>:2``). Keyed by the program's absolute path.
_LINE_NAMES: dict[str, Callable[[int], tuple[str, int]]] = {}


def name_lines(path: str, names: Callable[[int], tuple[str, int]] | None) -> None:
    """Name the lines of the program compiled from ``path`` in error
    messages by ``names(line) -> (where, line)`` (a notebook: the cell and
    its line, for a program of joined cells that is no file); ``None``
    forgets it."""
    key = os.path.abspath(path)
    if names is None:
        _LINE_NAMES.pop(key, None)
    else:
        _LINE_NAMES[key] = names


def place(loc) -> str:
    """``file.qv:LINE`` of a location, as a message names it."""
    named = _LINE_NAMES.get(getattr(loc, "path", "")) if _LINE_NAMES else None
    if named is not None:
        try:
            where, line = named(loc.line)
            return f"{where}:{line}"
        except Exception:  # an error's message must not fail: fall back to the program's own line
            pass
    return f"{loc.filename}:{loc.line}"


class QuiverError(Exception):
    """Base class of every error raised on purpose by the Quiver runtime."""

    def __init__(self, detail: str, loc=None):
        self.detail = detail
        self.loc = loc
        if loc is not None:
            msg = f"{place(loc)}: {detail}"
        else:
            msg = detail
        super().__init__(msg)


class CheckError(QuiverError, TypeError):
    """An argument or return value does not match its declared type."""


class ValueCheckError(CheckError, ValueError):
    """A value is outside its refined element type (Index[C], NonNeg, Prob)."""


class GradError(QuiverError, TypeError):
    """Misuse of gradients: bad arithmetic on rt.Grad, bad value_and_grad."""


class ModelError(QuiverError):
    """Misuse of a model: unknown field, bad assignment, bad checkpoint."""


class OptimError(QuiverError):
    """Misuse of an optimizer: bad hyper-params, a step with the wrong model or gradient."""


class ExternError(QuiverError):
    """An extern fn could not be resolved."""


class ModeError(QuiverError, TypeError):
    """A mode argument (Train/Eval) is missing or wrong."""
