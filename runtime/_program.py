"""A loaded program as Python sees it (what `quiver.load` returns): its
public names, each under the name the `.qv` file gives it, and the modules
it imports under the names it imports them as (`import nn` -> `prog.nn`,
`import nn.layers` -> `prog.nn.layers`). Compiled internals (`_qv_*`,
`_sig_*`, `rt`) stay out of `dir(prog)`; they are still found by attribute
access, for tools and tests that look at the compiled code.

The loader (driver/loader.py) tells each compiled module its names: in its
namespace, ``__quiver_names__`` maps each Quiver name to the Python name the
compiled code gives it (`min` -> `min_q`), and ``__quiver_imports__`` maps
each module it imports, as written (`nn.layers`), to that module's loaded
module. A module without them (loaded by ``rt.load_compiled`` alone) shows
its names that do not start with `_`, as they are."""

from __future__ import annotations

import difflib
import types

# the raw compiled module behind a view, in the view's namespace
_MODULE = "__quiver_module__"


class Program(types.ModuleType):
    """A compiled Quiver module seen from Python: a module object whose
    attributes are the program's dims, constants, models, fns and the modules
    it imports. ``dir()`` lists only those."""

    def __dir__(self) -> list[str]:
        return sorted(n for n in self.__dict__ if not n.startswith("_"))

    def __getattr__(self, name: str):
        # (called only when the name is not one of the view's own)
        raw = self.__dict__.get(_MODULE)
        if raw is not None and name in raw.__dict__:
            return raw.__dict__[name]  # a compiled internal (`_src`, `_sig_loss`)
        if name.startswith("__"):
            raise AttributeError(name)
        public = dir(self)
        close = difflib.get_close_matches(name, public, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (its names: {', '.join(public)})" if public else ""
        raise AttributeError(f"{self._qv_what()} has no name {name!r}{hint}")

    def _qv_what(self) -> str:
        raw = self.__dict__.get(_MODULE)
        source = getattr(raw, "__quiver_source__", None) if raw is not None else None
        if source is None:
            return f"Quiver package {self.__name__!r}"
        return f"Quiver program {source!r}"

    def __repr__(self) -> str:
        return f"<{self._qv_what()}>"


def python_view(module: types.ModuleType) -> Program:
    """The module as Python callers see it (`quiver.load`): its public names
    (see the module docstring), each compiled fn binding its arguments first,
    so a call with too few, too many or unknown arguments raises CheckError at
    the fn's `.qv` line instead of Python's bare TypeError. Calls inside
    compiled code go to the fns themselves (the module's own globals), at no
    cost. One view per module."""
    view = _VIEWS.get(id(module))
    if view is not None and view[0] is module:
        return view[1]
    space = module.__dict__
    out = Program(module.__name__, module.__doc__)
    out.__dict__[_MODULE] = module
    if "__file__" in space:
        out.__file__ = space["__file__"]
    names = space.get("__quiver_names__")
    if names is None:
        names = {n: n for n in space if not n.startswith("_") and n != "rt"}
    for name, py in names.items():
        if py in space:
            out.__dict__[name] = _public(space[py])
    for name, value in _imports_tree(space.get("__quiver_imports__") or {}).items():
        out.__dict__[name] = value
    _VIEWS[id(module)] = (module, out)
    return out


_VIEWS: dict[int, tuple[types.ModuleType, Program]] = {}


def _public(value):
    """A compiled fn as Python calls it (its arguments bound and checked);
    anything else as it is. The fn's signature is in its own module's
    globals (a fn imported with `from lib import f` is lib's)."""
    if isinstance(value, types.FunctionType) and not value.__name__.startswith("_"):
        sig = value.__globals__.get(f"_sig_{value.__name__}")
        if sig is not None:
            bound = _BOUND.get(id(value))
            if bound is None or bound[0] is not value:
                bound = _BOUND[id(value)] = (value, _bound(value, sig))
            return bound[1]
    return value


_BOUND: dict[int, tuple[types.FunctionType, object]] = {}


def _imports_tree(imports: dict[str, types.ModuleType]) -> dict[str, types.ModuleType]:
    """The views of the imported modules by the first part of the name they
    are imported as: `import nn.layers` gives `nn`, a package whose `layers`
    is the module's view (with `import nn` too, `nn`'s own names and `layers`)."""
    tree: dict = {}
    for spelling in sorted(imports):
        node = tree
        for part in spelling.split("."):
            node = node.setdefault(part, {})
        node[""] = imports[spelling]
    return {name: _node_view(node, name) for name, node in tree.items()}


def _node_view(node: dict, name: str) -> types.ModuleType:
    module = node.get("")
    children = {k: v for k, v in node.items() if k}
    if module is not None and not children:
        return python_view(module)
    out = Program(name if module is None else module.__name__)
    if module is not None:
        view = python_view(module)
        out.__dict__.update(view.__dict__)
        out.__doc__ = view.__doc__
    for child, sub in children.items():
        out.__dict__[child] = _node_view(sub, f"{name}.{child}")
    return out


def _bound(fn, sig):
    import functools

    from ._torch_compile import in_graph_failure, report_eagerly, top_frame_only

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs or len(args) != sig._n:
            args = sig.arguments(args, kwargs)
        try:
            return fn(*args)
        except RuntimeError as exc:
            # torch.compile(prog.fn): a check failed in the graph (fn was
            # compiled, this frame was not: top_frame_only)
            if not in_graph_failure(exc):
                raise
            report_eagerly(exc, lambda: fn(*args), f"in fn {fn.__name__}, compiled by torch.compile", sig.loc)

    return top_frame_only(call)
