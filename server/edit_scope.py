"""Which files the server's edits may touch: rename, code actions and
formatting never edit a file outside the workspace folders (Quiver's own
library, a sibling folder found through an import), which the editor would
apply and save. The checker says which files an edit touches; this module
only compares paths with the folders the client opened."""

from __future__ import annotations

import os
from collections.abc import Iterable


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.normpath(path)


def _inside(path: str, folder: str) -> bool:
    """`path` is `folder` or lies below it, by path segments (a folder named
    `..x` is a name, not a way up)."""
    try:
        rel = os.path.relpath(path, folder)
    except ValueError:  # another drive (Windows)
        return False
    return rel == os.curdir or rel.split(os.sep, 1)[0] != os.pardir


def editable(path: str, roots: Iterable[str], open_paths: Iterable[str], libraries: Iterable[str]) -> bool:
    """Whether the server may send edits to `path`: it lies (its links
    resolved) in a workspace folder (resolved too). A client that opened no
    folder edits only its open documents, never Quiver's own library."""
    real = _real(path)
    roots = list(roots)
    if roots:
        return any(_inside(real, _real(r)) for r in roots)
    if any(_inside(real, _real(lib)) for lib in libraries):
        return False
    return any(real == _real(p) for p in open_paths)


def where(path: str, libraries: Iterable[str]) -> str:
    """How a message names a file outside the workspace."""
    if any(_inside(_real(path), _real(lib)) for lib in libraries):
        return f"in the installed Quiver library ({path})"
    return f"in {path}"
