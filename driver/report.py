"""How the command-line tools name a place in a .qv file.

One format, `path:line:col: ...`, for qlint's text output, the errors of
`quiver run` and the message of `quiver.load`'s `CheckFailed`: lines and
columns are 1-based and columns count characters (code points). Editors,
terminals and CI annotators parse these lines, so every tool writes them here.

Standard library only (the checker's types are only named in annotations).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from quiver.checker.diagnostics import Diagnostic
    from quiver.checker.source import LineIndex


def location(path: str, line: int, col: int) -> str:
    """`path:line:col`, 1-based."""
    return f"{path}:{line}:{col}"


def diagnostic_line(path: str, lines: LineIndex, d: Diagnostic) -> str:
    """`path:line:col: CODE message` for a checker diagnostic, at its start."""
    p = lines.position(d.span.start)
    return f"{location(path, p.line + 1, p.column + 1)}: {d.code} {d.message}"


def error_line(path: str, line: int, col: int, message: str) -> str:
    """`path:line:col: error: message` for an error that has no diagnostic code."""
    return f"{location(path, line, col)}: error: {message}"
