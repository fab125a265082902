"""``quiver run --compile``: torch.compile of a program's train steps.

The fns compiled are those whose body takes a gradient (calls
``value_and_grad`` or ``grad``): the train steps, where a program spends its
time and which are one graph each (forward, loss, backward, update). Each is
compiled with ``fullgraph=True``, so a fn that dynamo cannot trace whole
fails at its first call with one line naming the fn and its .qv line
(``CompileFailed``) instead of running partly compiled. Compiled code calls
a fn's unchecked body ``_qv_u_<name>`` (the checked entry calls it too), so
replacing that name in the module's namespace reaches every caller.
"""

from __future__ import annotations

import types

import torch

from ._elems import IN_GRAPH_CHECK as _IN_GRAPH_CHECK
from ._errors import QuiverError, ValueCheckError

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
            if _IN_GRAPH_CHECK in str(exc):
                # an in-graph value check failed: its message has neither the
                # values nor the line, which the eager step gives
                fn(*args)
                raise ValueCheckError(
                    f"{_first_line(exc)} (in fn {name}, compiled by --compile; the eager run did not fail here)", loc
                ) from None
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
