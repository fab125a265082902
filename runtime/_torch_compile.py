"""``quiver run --compile``: torch.compile of a program's train steps.

The fns compiled are those whose body takes a gradient (calls
``value_and_grad`` or ``grad``): the train steps, where a program spends its
time and which are one graph each (forward, loss, backward, update). Each is
compiled with ``fullgraph=True``, so a fn that dynamo cannot trace whole
fails at its first call with one line naming the fn and its .qv line
(``CompileFailed``) instead of running partly compiled. Compiled code calls
a fn's unchecked body ``_qv_u_<name>`` (the checked entry calls it too), so
replacing that name in the module's namespace reaches every caller.

A value check that fails inside a compiled graph has neither the values nor
the .qv line (``torch._assert_async``), and under inductor the bounds check
of its C++ kernels may fire first, naming a temporary ``.cpp`` file. So the
Python entries of compiled code (a step under ``--compile``, a fn of
``quiver.load``, ``quiver.to_module``'s forward) catch such a failure and run
the call again eagerly, whose check reports it (:func:`report_eagerly`). The
entries of ``quiver.load`` and ``to_module`` are frames that dynamo does not
compile when a call starts at them (:func:`top_frame_only`), so that their
handler is Python around the compiled graph.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar, cast

import torch

from ._elems import IN_GRAPH_CHECK as _IN_GRAPH_CHECK
from ._errors import QuiverError, ValueCheckError

_F = TypeVar("_F", bound=Callable[..., Any])
_GRADIENT_CALLS = frozenset({"value_and_grad", "grad"})
_PREFIX = "_qv_u_"


class CompileFailed(QuiverError):
    """torch.compile could not compile a fn of the program (``--compile``)."""


def takes_gradient(fn) -> bool:
    """Whether a compiled fn's body calls ``rt.value_and_grad`` or ``rt.grad``."""
    code = getattr(fn, "__code__", None)
    return code is not None and not _GRADIENT_CALLS.isdisjoint(code.co_names)


def compile_train_steps(module: types.ModuleType, backend: str = "inductor"):
    """Replace each fn of ``module`` that takes a gradient by its
    ``torch.compile(fullgraph=True, backend=backend)`` form. Returns
    ``(names, undo)``: the .qv names compiled and a function that puts the
    eager fns back."""
    space = module.__dict__
    originals = {}
    names = []
    for key, fn in list(space.items()):
        if key.startswith(_PREFIX) and isinstance(fn, types.FunctionType) and takes_gradient(fn):
            name = key[len(_PREFIX) :]
            sig = space.get("_sig_" + name)
            originals[key] = fn
            space[key] = _compiled(fn, name, getattr(sig, "loc", None), backend)
            names.append(name)

    def undo() -> None:
        space.update(originals)

    return names, undo


def _compile_failure(exc: BaseException) -> bool:
    import torch._dynamo.exc as dexc

    return isinstance(exc, dexc.TorchDynamoException) or type(exc).__module__.startswith(
        ("torch._dynamo", "torch._inductor")
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _compiled(fn, name, loc, backend):
    compiled = torch.compile(fn, fullgraph=True, backend=backend)

    def call(*args):
        try:
            return compiled(*args)
        except QuiverError:
            raise
        except Exception as exc:
            if in_graph_failure(exc):
                report_eagerly(exc, lambda: fn(*args), f"in fn {name}, compiled by --compile", loc)
            if not _compile_failure(exc):
                raise
            # a failed check in the program stops dynamo too: the program's own error first
            fn(*args)
            raise CompileFailed(
                f"--compile: torch.compile(fullgraph=True, backend={backend!r}) cannot compile fn {name}: "
                f"{_first_line(exc)} (run without --compile)",
                loc,
            ) from None

    call.__name__ = call.__qualname__ = fn.__name__
    call.__wrapped__ = fn  # pyright: ignore[reportFunctionMemberAccess]
    return call


# how inductor's C++ kernels word a failed bounds check of an index
# ("kernel, /tmp/torchinductor_.../x.cpp:143, index out of bounds: 0 <= tmp8 < 3L")
_KERNEL_BOUNDS = "index out of bounds: "


def never_compiled(fn: _F) -> _F:
    """``torch.compiler.disable(fn)``: ``fn`` and what it calls run eagerly,
    also when a frame of :func:`top_frame_only` calls it under torch.compile
    (typed: torch's own decorator is not)."""
    return cast(_F, torch.compiler.disable(fn))


@never_compiled
def in_graph_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised by compiled code, is a check that failed inside
    the graph: a Quiver value check (``IN_GRAPH_CHECK``) or the bounds check
    inductor's kernels make of an index, which a label outside its
    ``Index[C]`` can reach before Quiver's check has run."""
    if not isinstance(exc, RuntimeError):
        return False
    text = str(exc)
    return _IN_GRAPH_CHECK in text or _KERNEL_BOUNDS in text


@never_compiled
def report_eagerly(exc: BaseException, rerun, what: str, loc) -> NoReturn:
    """After ``exc`` (:func:`in_graph_failure`) from a compiled call: run the
    call again eagerly (``rerun()``, never compiled), so that the check that
    failed raises its own error, with the values and the .qv line. If the
    eager run passes, a failed Quiver check names ``what`` (the compiled fn)
    and its line ``loc``; anything else is ``exc`` itself."""
    rerun()
    if _IN_GRAPH_CHECK in str(exc):
        raise ValueCheckError(f"{_first_line(exc)} ({what}; the eager run did not fail here)", loc) from None
    raise exc


def top_frame_only(fn):
    """``fn``, whose frame dynamo skips when a compiled call starts at it (it
    compiles the frames ``fn`` calls instead), but inlines when it traces a
    caller: so ``fn`` can catch what its compiled callee raises, and adds no
    graph break inside a graph. (``torch.compiler.disable(recursive=False)``
    would also stop the inlining, a break that ``fullgraph=True`` refuses.)
    Each Python function that ``fn`` calls while skipped is compiled as a
    frame of its own, so what it calls on its failure path is
    :func:`never_compiled`."""
    try:  # torch's own tool for this (torch.compiler.disable uses it), not public
        from torch._dynamo.eval_frame import skip_code
    except ImportError:  # another torch: compiled failures keep the graph's own message
        return fn
    skip_code(fn.__code__)
    return fn
