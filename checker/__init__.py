"""The Quiver checker: parsing, checking and compiling .qv programs.

A pure library: no torch, no pygls, no file or network I/O in the analysis.
Entry points: `Analyzer` (incremental, one per document), `check_text`,
`check_bytes`, and `catalog` (every diagnostic code, documented).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["Analysis", "Analyzer", "Diagnostic", "Severity", "check_bytes", "check_text"]

if TYPE_CHECKING:
    from .analysis import Analysis, Analyzer, check_bytes, check_text
    from .diagnostics import Diagnostic, Severity


def __getattr__(name: str) -> object:
    # Loaded on first use, so that importing a light submodule (the token
    # legend, the catalog) does not load the parser and the analysis; then
    # kept in the module, so later lookups do not come here.
    if name in ("Analysis", "Analyzer", "check_bytes", "check_text"):
        from . import analysis as module
    elif name in ("Diagnostic", "Severity"):
        from . import diagnostics as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value
