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


def __getattr__(name: str):
    if name in __all__:
        from . import loader

        return getattr(loader, name)
    raise AttributeError(f"module 'quiver' has no attribute {name!r}")
