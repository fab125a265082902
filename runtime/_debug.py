"""What the runtime gives a debugger (``quiver debug``, docs/debugging.md).

- How values read in a debugger's Variables view: :func:`value_text` (a
  tensor as ``[64 784] f32 [0.0123, -0.5, ...]``; models and gradients
  have their own ``__repr__``) and :func:`children` (what a tensor, a
  model or a gradient opens to). The
  debugpy plugin ``pydevd_plugin_quiver.py`` hands them to debugpy; it is
  registered only by ``quiver debug``.
- Break on NaN: with :data:`nan_checks` on when a program is loaded,
  ``load_compiled`` adds after each assignment of compiled code a call of
  :func:`nan_check` (``_lines.add_nan_checks``); the first value holding a
  NaN or an infinity stops the debugger at that statement's ``.qv`` line.
  Nothing of this is in a program loaded with it off.
- :func:`stop_at` and :func:`post_mortem`: how the stop happens, under
  debugpy or pdb.
"""

from __future__ import annotations

import math
import os
import sys
import types

import torch

from ._elems import tensor_text

# Whether load_compiled adds the NaN checks (set by `quiver debug --break-on-nan`).
nan_checks = False
# Who stops the program: "debugpy", "pdb" or None (nobody: a message only).
debugger: str | None = None
_stopped_on_nan = False

_SHOWN = 6  # values shown after a tensor's type


def _number(x) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def value_text(t: torch.Tensor) -> str:
    """``[64 784] f32 [0.0123, -0.5, ...]``: the type, then the first values."""
    head = tensor_text(t)
    try:
        if t.is_meta:
            return head
        flat = t.detach().reshape(-1)
        first = flat[:_SHOWN].tolist()
    except (RuntimeError, TypeError, ValueError):
        return head
    if t.dim() == 0:
        return f"{head} {_number(first[0])}"
    more = ", ..." if flat.numel() > _SHOWN else ""
    return f"{head} [{', '.join(_number(x) for x in first)}{more}]"


def children(v) -> dict:
    """What a value opens to in a Variables view: a model's params and
    buffers, a gradient's fields, a tensor's type, device and statistics."""
    from ._grad_value import Grad
    from ._model import Model

    if isinstance(v, Model):
        cls = type(v)
        names = tuple(getattr(cls, "_qv_param_names", ())) + tuple(getattr(cls, "_qv_buffer_names", ()))
        return {n: v.__dict__[n] for n in names if n in v.__dict__}
    if isinstance(v, Grad):
        lay = v._qv_layout
        return dict(zip(lay.paths, v._qv_values))
    if isinstance(v, torch.Tensor):
        out: dict = {"type": tensor_text(v), "device": str(v.device)}
        if v.numel() and (v.dtype.is_floating_point or v.dtype.is_complex) and not v.is_meta:
            d = v.detach()
            finite = torch.isfinite(d)
            out["nan or inf"] = int(d.numel() - int(finite.sum()))
            if not v.dtype.is_complex:
                fin = d[finite].float()
                if fin.numel():
                    out["min"] = float(fin.min())
                    out["max"] = float(fin.max())
                    out["mean"] = float(fin.mean())
        if v.numel() and not v.is_meta:
            flat = v.detach().reshape(-1)
            out["values"] = flat[:100].tolist() if v.dim() else flat.item()
        return out
    return {}


# ---------------------------------------------------------------- break on NaN


def _holds_nan(v) -> bool:
    if isinstance(v, torch.Tensor):
        if not (v.dtype.is_floating_point or v.dtype.is_complex) or v.is_meta:
            return False
        return not bool(torch.isfinite(v.detach()).all())
    if isinstance(v, float):
        return not math.isfinite(v)
    if isinstance(v, (tuple, list)):
        return any(_holds_nan(x) for x in v)
    values = getattr(v, "_qv_values", None)  # a Grad
    if isinstance(values, (tuple, list)):
        return any(_holds_nan(x) for x in values)
    return False


def nan_check(names: tuple, values: tuple) -> None:
    """After a statement of compiled code (only with :data:`nan_checks`):
    stop at the caller's line when one of its results holds a NaN or inf."""
    global _stopped_on_nan
    if _stopped_on_nan:
        return
    for name, value in zip(names, values):
        if _holds_nan(value):
            _stopped_on_nan = True
            frame = sys._getframe(1)
            what = value_text(value) if isinstance(value, torch.Tensor) else type(value).__name__
            message = f"{name} holds a NaN or an infinity: {what}"
            stop_at(frame, message)
            return


def _where(frame) -> str:
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def stop_at(frame: types.FrameType, message: str) -> None:
    """Stop the debugger in ``frame`` (a frame of compiled code) at its
    current line, saying ``message``; the program goes on when it resumes."""
    print(f"quiver: {_where(frame)}: {message}", file=sys.stderr, flush=True)
    if debugger == "debugpy":
        import debugpy

        if not debugpy.is_client_connected() or not hasattr(debugpy, "trigger_exception_handler"):
            return
        exc = FloatingPointError(message)
        tb = types.TracebackType(None, frame, frame.f_lasti, frame.f_lineno)
        debugpy.trigger_exception_handler((FloatingPointError, exc, tb), as_uncaught=False)
    elif debugger == "pdb":
        import pdb

        p = pdb.Pdb()
        p.reset()
        f = frame
        while f is not None:  # as set_trace, without stopping at once
            f.f_trace = p.trace_dispatch
            p.botframe = f
            f = f.f_back
        p.interaction(frame, None)
        if p.stoplineno != -1:  # `next`, `step`: go on tracing from here (`continue` cleared it)
            sys.settrace(p.trace_dispatch)


def _compiled(frame) -> bool:
    from ._source import SourceFile

    return frame.f_code.co_filename in SourceFile._registry


def post_mortem(exc: BaseException) -> None:
    """Stop at the innermost frame of compiled code ``exc`` passed through:
    pdb's post-mortem there, or debugpy's stop on an uncaught exception."""
    if debugger == "debugpy":
        import debugpy

        if debugpy.is_client_connected() and hasattr(debugpy, "trigger_exception_handler"):
            debugpy.trigger_exception_handler((type(exc), exc, exc.__traceback__))
        return
    if debugger != "pdb" or exc.__traceback__ is None:
        return
    import pdb

    class _AtQv(pdb.Pdb):
        def setup(self, f, tb):
            super().setup(f, tb)
            for i in range(len(self.stack) - 1, -1, -1):
                if _compiled(self.stack[i][0]):
                    self.curindex = i
                    self.curframe = self.stack[i][0]
                    self.curframe_locals = self.curframe.f_locals
                    break

    p = _AtQv()
    p.reset()
    p.interaction(None, exc.__traceback__)
