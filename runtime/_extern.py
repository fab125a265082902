"""Extern fns: Python functions that a ``.qv`` file declares with
``extern fn NAME(params) -> TYPE from "module:attr"``.

Resolution is lazy: the module is imported at the first call (or at an
explicit :meth:`Extern.resolve`), so loading a ``.qv`` file never imports
Python code that is not used.  The module is looked for first in the folder
of the ``.qv`` file (``module.py`` or a package ``module/`` there, dotted
names walking into packages), then on ``sys.path`` like any import.  A module
found in the ``.qv`` folder is imported under its own name unless a
different module of that name is already loaded, in which case it is loaded
under the private name ``quiver_extern_<n>.<name>``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading

from ._checks import checks
from ._errors import ExternError

_lock = threading.RLock()
_alias_count = [0]


def _same_file(a, b) -> bool:
    try:
        return a is not None and b is not None and os.path.samefile(a, b)
    except OSError:
        return False


def _import_top_from(folder: str, top: str):
    """Import the top-level module ``top`` found in ``folder``; None if absent."""
    spec = importlib.machinery.PathFinder.find_spec(top, [folder])
    if spec is None or spec.origin is None:
        return None
    origin = spec.origin
    existing = sys.modules.get(top)
    if existing is not None:
        if _same_file(getattr(existing, "__file__", None), origin):
            return existing
        _alias_count[0] += 1
        name = f"quiver_extern_{_alias_count[0]}.{top}"
        # make the private parent importable so that submodules resolve
        parent = name.rsplit(".", 1)[0]
        if parent not in sys.modules:
            import types

            pkg = types.ModuleType(parent)
            pkg.__path__ = []
            sys.modules[parent] = pkg
        spec = importlib.util.spec_from_file_location(
            name, origin, submodule_search_locations=spec.submodule_search_locations
        )
    else:
        name = top
    if spec is None or spec.loader is None:  # no loader for a file of that kind
        raise ImportError(f"cannot load module {top!r} from {origin}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


class Extern:
    """A callable standing for an extern fn; checks arguments and result."""

    def __init__(self, src, target, signature, returns=None, loc=None):
        if not isinstance(target, str) or target.count(":") != 1:
            raise ExternError(f'extern fn {signature.name}: target must be "module:attr", found {target!r}', loc)
        self.src = src
        self.target = target
        self.signature = signature
        self.returns = returns
        self.loc = loc if loc is not None else signature.loc
        self.name = signature.name
        self._fn = None
        if returns is not None:
            returns.label = "return value"
            if hasattr(returns, "_set_label"):
                returns._set_label("return value")
        self.__name__ = self.name
        self.__qualname__ = self.name

    @property
    def folder(self) -> str:
        return os.path.dirname(os.path.abspath(self.src.path))

    def resolve(self):
        """Import the target now (idempotent) and return the Python callable."""
        if self._fn is not None:
            return self._fn
        with _lock:
            if self._fn is None:
                self._fn = self._find()
        return self._fn

    def _find(self):
        modname, attr = self.target.split(":")
        where = self.folder
        what = f'extern fn {self.name}: cannot resolve "{self.target}"'
        if not modname or not attr or not all(p.isidentifier() for p in modname.split(".")):
            raise ExternError(f"{what}: not a module:attr name", self.loc)
        parts = modname.split(".")
        try:
            top = _import_top_from(where, parts[0])
            if top is not None:
                module = top
                if len(parts) > 1:
                    module = importlib.import_module(top.__name__ + "." + ".".join(parts[1:]))
            else:
                module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            raise ExternError(
                f"{what}: no module {modname!r} in {where} or on the Python path ({exc})", self.loc
            ) from None
        except Exception as exc:
            raise ExternError(f"{what}: importing {modname!r} failed: {type(exc).__name__}: {exc}", self.loc) from exc
        try:
            fn = getattr(module, attr)
        except AttributeError:
            raise ExternError(
                f"{what}: module {modname!r} ({getattr(module, '__file__', '?')}) has no attribute {attr!r}", self.loc
            ) from None
        if not callable(fn):
            raise ExternError(f"{what}: {modname}.{attr} is a {type(fn).__name__}, not callable", self.loc)
        return fn

    def __call__(self, *args):
        fn = self._fn
        if fn is None:
            fn = self.resolve()
        if not checks.enabled:
            return fn(*args)
        sig = self.signature
        env = sig.bind(*args)
        result = fn(*args)
        if self.returns is not None:
            sig.check_result(self.returns, result, env)
        return result

    def __repr__(self) -> str:
        return f"<extern fn {self.name} from {self.target!r}>"


def extern(src, target, signature, returns=None, loc=None) -> Extern:
    """The callable for ``extern fn ... from "module:attr"`` (resolved lazily)."""
    return Extern(src, target, signature, returns, loc)
