"""Quiver: a statically typed language for tensor programs and trainable models.

    import quiver
    mlp = quiver.load("examples/mlp.qv")
    m = mlp.Mlp.init(seed=0)

`quiver.load` checks, compiles and imports a .qv file (see docs/runtime.md).
The language itself lives in `quiver.checker`, the torch runtime in
`quiver.runtime`, the language server in `quiver.server`.
"""

from .loader import CheckFailed, load

__all__ = ["CheckFailed", "load"]
__version__ = "0.1.0"
