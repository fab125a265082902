"""Compiled modules in ``sys.modules``, so that tools which look a function's
or a class's module up by name find it: torch.compile (dynamo imports
``fn.__module__``), pickle (``cls.__module__`` + ``cls.__qualname__``),
``copy`` and ``inspect``.

A compiled module is named ``quiver_compiled.<qualified name of the .qv
module>`` (driver/loader.py). ``register`` puts it, and an empty package
module for each dotted prefix (``quiver_compiled``, ``quiver_compiled.pkg``),
into ``sys.modules``. A file loaded again with other text replaces the
entry: the name finds the latest load, while older instances keep their own
classes (pickling one of them then names a class that is no longer the
registered one, and says so)."""

from __future__ import annotations

import sys
import types

ROOT = "quiver_compiled"


def register(module: types.ModuleType) -> None:
    """Make ``module`` importable under its ``__name__`` in this process."""
    name = module.__name__
    if not name.startswith(ROOT + ".") and name != ROOT:
        return
    parts = name.split(".")
    for i in range(1, len(parts)):
        prefix = ".".join(parts[:i])
        pkg = sys.modules.get(prefix)
        if pkg is None:
            pkg = types.ModuleType(prefix, "Quiver programs compiled in this process (quiver.load, quiver run).")
            pkg.__path__ = []  # a namespace: nothing is found on disk under it
            sys.modules[prefix] = pkg
        if i > 1:
            parent = sys.modules.get(".".join(parts[: i - 1]))
            if parent is not None and not hasattr(parent, parts[i - 1]):
                setattr(parent, parts[i - 1], pkg)
    sys.modules[name] = module
    parent = sys.modules.get(".".join(parts[:-1]))
    if parent is not None:
        setattr(parent, parts[-1], module)


def registered(name: str) -> types.ModuleType | None:
    """The compiled module registered under ``name``, or None."""
    module = sys.modules.get(name)
    if module is None or not name.startswith(ROOT + "."):
        return None
    return module
