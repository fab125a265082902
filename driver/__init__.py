"""Quiver: a statically typed language for tensor programs and trainable models.

    import quiver
    mlp = quiver.load("examples/mlp.qv")
    m = mlp.Mlp.init(seed=0)

`quiver.load` checks, compiles and imports a .qv file (see docs/runtime.md).
The language itself lives in `quiver.checker`, the torch runtime in
`quiver.runtime`, the language server in `quiver.server`.

Nothing is imported here eagerly: compiled programs import `quiver.runtime`,
which must not pull in the checker, and the language server must not pull in
torch.
"""

from typing import TYPE_CHECKING

__all__ = ["CheckFailed", "load"]

if TYPE_CHECKING:
    from .loader import CheckFailed, load
__version__ = "0.1.0"


def untrusted_folder_off_path() -> None:
    """For the entry points (`python -m quiver.server`, `python -m quiver
    run`): the working folder is the user's project, which is untrusted, and
    `python -m` puts it first on sys.path, where a `lark.py` or `torch/` of
    the project would replace the real module at its first import. Every
    process we start passes -P so that it is never there; this takes it off
    for a process started without (an editor's own configuration). Only
    `quiver` itself, imported before this runs, could still come from it."""
    import os
    import sys

    if sys.flags.safe_path or not sys.path:
        return
    first = sys.path[0]
    try:
        if first in ("", ".") or os.path.samefile(first, os.getcwd()):
            del sys.path[0]
    except OSError:
        pass


def __getattr__(name: str):
    if name in __all__:
        from . import loader

        return getattr(loader, name)
    raise AttributeError(f"module 'quiver' has no attribute {name!r}")
