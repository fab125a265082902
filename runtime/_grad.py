"""Gradients: ``rt.Grad`` and ``rt.value_and_grad``."""

from __future__ import annotations

import numbers
import threading
from collections.abc import Callable
from typing import NoReturn

import torch

from ._elems import tensor_text
from ._errors import GradError
from ._model import Model, model_class_of

_is_grad_enabled = torch.is_grad_enabled
# The multi-tensor update torch.optim uses (one kernel launch for all params).
_foreach_add_ = torch._foreach_add_  # pyright: ignore[reportPrivateImportUsage]
_set_grad_enabled = torch._C._set_grad_enabled


class GradAttributeError(GradError, AttributeError):
    """A Grad has no field of that name."""


class GradKeyError(GradError, KeyError):
    """A Grad has no field of that name (item access)."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return self.args[0]


def _model_name(cls) -> str:
    return cls._qv_name


def _operand_text(x) -> str:
    if isinstance(x, Grad):
        return f"Grad[{_model_name(x._qv_model)}]"
    if isinstance(x, torch.Tensor):
        return f"a tensor {tensor_text(x)}"
    if isinstance(x, bool):
        return "a Bool"
    if isinstance(x, numbers.Number):
        return f"a number ({x!r})"
    return f"a {type(x).__name__}"


def _bad(op: str, left, right=None) -> GradError:
    if right is None:
        what = f"{op}{_operand_text(left)}"
    else:
        what = f"{_operand_text(left)} {op} {_operand_text(right)}"
    return GradError(
        f"unsupported operation on gradients: {what} (gradients of one model can be "
        f"added and subtracted, negated, multiplied by a [] or a number, divided by one)"
    )


def _is_scalar(x) -> bool:
    if isinstance(x, torch.Tensor):
        return x.dim() == 0 and x.dtype is not torch.bool and not isinstance(x, Grad)
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _binary_error(op: str) -> tuple[Callable[[Grad, object], NoReturn], Callable[[Grad, object], NoReturn]]:
    """The methods ``g OP x`` and ``x OP g`` (reflected) for an operator that
    gradients do not support: both raise the error naming the operands."""

    def left(self: Grad, other: object) -> NoReturn:
        raise _bad(op, self, other)

    def right(self: Grad, other: object) -> NoReturn:
        raise _bad(op, other, self)

    return left, right


class Grad:
    """The gradient of a value with respect to the params of a model class.

    One field per param, in declaration order, readable as ``g.w1`` or
    ``g["w1"]``.  Immutable.  Supports ``g + h``, ``g - h`` (same model),
    ``-g``, ``g * s``, ``s * g`` and ``g / s`` for a number or a 0-dim tensor
    ``s``; ``rt.norm(g)``.  Everything else raises :class:`GradError`.
    """

    __slots__ = ("__dict__", "_qv_model", "_qv_values", "_qv_trusted")

    def __init__(self, model, values):
        cls = model_class_of(model)
        if cls is None:
            raise GradError(f"Grad(model, values) needs a model class, found {type(model).__name__}")
        names = cls._qv_param_names
        if not hasattr(values, "keys"):
            raise GradError("Grad(model, values) needs a mapping from param names to tensors")
        keys = list(values.keys())
        if set(keys) != set(names) or len(keys) != len(names):
            raise GradError(
                f"Grad[{cls._qv_name}] needs exactly the fields {', '.join(names) or '(none)'}, "
                f"found {', '.join(map(str, keys)) or '(none)'}"
            )
        tensors = tuple(values[n] for n in names)
        for n, t in zip(names, tensors):
            if not isinstance(t, torch.Tensor):
                raise GradError(f"Grad[{cls._qv_name}] field {n!r} must be a tensor, found {type(t).__name__}")
        self._qv_init(cls, tensors, False)

    def _qv_init(self, cls, tensors, trusted):
        object.__setattr__(self, "_qv_model", cls)
        object.__setattr__(self, "_qv_values", tensors)
        object.__setattr__(self, "_qv_trusted", trusted)
        self.__dict__.update(zip(cls._qv_param_names, tensors))

    @classmethod
    def _make(cls, model_cls, tensors) -> Grad:
        """A gradient built by the runtime, known to have the right fields."""
        g = object.__new__(cls)
        g._qv_init(model_cls, tuple(tensors), True)
        return g

    # --- access ---------------------------------------------------------------

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise GradAttributeError(
            f"Grad[{_model_name(self._qv_model)}] has no field {name!r} "
            f"(its fields: {', '.join(self._qv_model._qv_param_names) or 'none'})"
        )

    def __getitem__(self, name):
        try:
            return self.__dict__[name]
        except (KeyError, TypeError):
            raise GradKeyError(
                f"Grad[{_model_name(self._qv_model)}] has no field {name!r} "
                f"(its fields: {', '.join(self._qv_model._qv_param_names) or 'none'})"
            ) from None

    def __setattr__(self, name, value):
        raise GradError(f"gradients are read-only: cannot set {name!r} of Grad[{_model_name(self._qv_model)}]")

    def __delattr__(self, name):
        raise GradError(f"gradients are read-only: cannot delete {name!r}")

    def __iter__(self):
        return iter(self._qv_model._qv_param_names)

    def keys(self):
        return self._qv_model._qv_param_names

    def values(self):
        return self._qv_values

    def items(self):
        return tuple(zip(self._qv_model._qv_param_names, self._qv_values))

    def __len__(self):
        return len(self._qv_values)

    def __contains__(self, name):
        return name in self.__dict__

    def __bool__(self):
        raise GradError("a gradient has no truth value")

    def __repr__(self) -> str:
        parts = ", ".join(f"{n}: {tensor_text(t)}" for n, t in zip(self._qv_model._qv_param_names, self._qv_values))
        return f"Grad[{_model_name(self._qv_model)}]({parts})"

    def __reduce__(self):
        raise GradError("gradients cannot be pickled")

    # --- arithmetic -------------------------------------------------------------

    def _same(self, other, op):
        if type(other) is not Grad:
            raise _bad(op, self, other)
        if other._qv_model is not self._qv_model:
            a, b = _model_name(self._qv_model), _model_name(other._qv_model)
            if a == b:
                b += " (another class of that name)"
            raise GradError(
                f"cannot {'add' if op == '+' else 'subtract'} gradients of different models: Grad[{a}] {op} Grad[{b}]"
            )
        return other._qv_values

    def __add__(self, other):
        ov = self._same(other, "+")
        return Grad._make(self._qv_model, [a + b for a, b in zip(self._qv_values, ov)])

    def __sub__(self, other):
        ov = self._same(other, "-")
        return Grad._make(self._qv_model, [a - b for a, b in zip(self._qv_values, ov)])

    def __radd__(self, other):
        raise _bad("+", other, self)

    def __rsub__(self, other):
        raise _bad("-", other, self)

    def __neg__(self):
        return Grad._make(self._qv_model, [-a for a in self._qv_values])

    def __mul__(self, other):
        if not _is_scalar(other):
            raise _bad("*", self, other)
        return Grad._make(self._qv_model, [a * other for a in self._qv_values])

    def __rmul__(self, other):
        if not _is_scalar(other):
            raise _bad("*", other, self)
        return Grad._make(self._qv_model, [other * a for a in self._qv_values])

    def __truediv__(self, other):
        if not _is_scalar(other):
            raise _bad("/", self, other)
        return Grad._make(self._qv_model, [a / other for a in self._qv_values])

    def __rtruediv__(self, other):
        raise _bad("/", other, self)

    def __pos__(self):
        raise _bad("+", self)

    def __abs__(self):
        raise GradError(f"abs() is not defined on gradients ({_operand_text(self)})")

    def __invert__(self):
        raise _bad("~", self)

    __matmul__, __rmatmul__ = _binary_error("@")
    __pow__, __rpow__ = _binary_error("**")
    __floordiv__, __rfloordiv__ = _binary_error("//")
    __mod__, __rmod__ = _binary_error("%")
    __and__, __rand__ = _binary_error("&")
    __or__, __ror__ = _binary_error("|")
    __xor__, __rxor__ = _binary_error("^")
    __lt__ = _binary_error("<")[0]
    __le__ = _binary_error("<=")[0]
    __gt__ = _binary_error(">")[0]
    __ge__ = _binary_error(">=")[0]

    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        # A torch function got a Grad among its arguments.  Only ``s * g`` with
        # a 0-dim tensor ``s`` on the left is meaningful; everything else
        # (torch.mean(g), t + g, rt.relu(g) ...) is an error.
        name = getattr(func, "__name__", str(func))
        if name in ("mul", "__mul__", "__rmul__", "multiply") and not kwargs and len(args) == 2:
            a, b = args
            if isinstance(b, Grad) and not isinstance(a, Grad):
                return b.__rmul__(a)
            if isinstance(a, Grad) and not isinstance(b, Grad):
                return a.__mul__(b)
        ops = {
            "add": "+",
            "__add__": "+",
            "__radd__": "+",
            "sub": "-",
            "__sub__": "-",
            "__rsub__": "-",
            "rsub": "-",
            "div": "/",
            "__truediv__": "/",
            "__rtruediv__": "/",
            "true_divide": "/",
            "mul": "*",
            "__mul__": "*",
            "__rmul__": "*",
            "matmul": "@",
            "__matmul__": "@",
            "pow": "**",
            "__pow__": "**",
            "__rpow__": "**",
        }
        if name in ops and len(args) == 2:
            left, right = args
            if name.startswith("__r") or name == "rsub":
                left, right = right, left
            raise _bad(ops[name], left, right)
        grads = [a for a in args if isinstance(a, Grad)]
        what = _operand_text(grads[0]) if grads else "a gradient"
        raise GradError(f"{name}() is not defined on gradients ({what}); use rt.norm(g) for its size")


class _Running(threading.local):
    """``depth[0]``: how many value_and_grad calls are running in this thread
    (their f entered and not left).  A one-item list, so that a call does one
    thread-local lookup and then plain item reads and writes."""

    def __init__(self):
        self.depth = [0]


_running = _Running()


def value_and_grad(f, m, *args):
    """``(value, gradient)`` of ``f(m, *args)`` with respect to the params of ``m``.

    Runs ``f`` with autograd enabled (also inside ``torch.no_grad()``), then
    ``torch.autograd.grad`` over the params in declaration order; ``.grad`` is
    neither read nor written.  The gradient is the partial derivative with
    respect to the params, the other arguments held fixed; params that ``f``
    does not use get zeros.

    The outermost call in a thread (no other value_and_grad's ``f`` running)
    sets the params to require grad while ``f`` runs and back to not requiring
    it afterwards, passes tensor arguments that require grad detached, keeps
    no graph, and returns the value detached.

    A call made while another one's ``f`` is running (on any model) is
    differentiable for the enclosing calls: see :func:`_nested`.
    """
    if not isinstance(m, Model):
        raise GradError(f"value_and_grad needs a model as its second argument, found {_operand_text(m)}")
    if not callable(f):
        raise GradError(f"value_and_grad needs a function as its first argument, found {_operand_text(f)}")
    running = _running.depth
    if running[0]:
        return _nested(f, m, args, running)
    cls = type(m)
    params = m._qv_tensors
    diff = cls._qv_diff
    all_diff = cls._qv_all_diff
    depth = m._qv_depth
    if depth == 0:
        for p, d in zip(params, diff):
            if d:
                p.requires_grad_(True)
    object.__setattr__(m, "_qv_depth", depth + 1)
    running[0] = 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        for a in args:
            if (isinstance(a, torch.Tensor) and a.requires_grad) or type(a) is tuple:
                args = tuple([_detached(a) for a in args])
                break
        out = f(m, *args)
        if not isinstance(out, torch.Tensor) or out.dim() != 0 or not out.is_floating_point():
            raise _result_error(f, out)
        if out.requires_grad:
            wrt = params if all_diff else tuple([p for p, d in zip(params, diff) if d])
            got = torch.autograd.grad(out, wrt, allow_unused=True)
            if not all_diff:
                it = iter(got)
                got = [next(it) if d else None for d in diff]
            for gr in got:
                if gr is None:
                    got = [torch.zeros_like(p) if gr is None else gr for p, gr in zip(params, got)]
                    break
        else:
            got = [torch.zeros_like(p) for p in params]
    finally:
        _set_grad_enabled(grad_was)
        running[0] = 0
        object.__setattr__(m, "_qv_depth", depth)
        if depth == 0:
            for p in params:
                p.requires_grad_(False)
    value = out.detach()
    if out.is_leaf or out._base is not None:
        # a param or an argument itself, or a view of one (m.w[0, 0]): a
        # later update of the param must not change the returned value
        value = value.clone()
    return value, Grad._make(cls, got)


def _nested(f, m, args, running):
    """value_and_grad inside the ``f`` of another one: differentiable.

    ``f`` runs on stand-ins for the floating params of ``m``, put in the
    model's fields for the duration of the call, and the gradient is taken
    with respect to the stand-ins with ``create_graph=True``.  Since nothing
    computed before the call depends on a stand-in, the gradient is the
    partial derivative with the arguments held fixed, even when they were
    computed from the params (or are a param).  The arguments are not
    detached and the value is not detached, so the enclosing calls
    differentiate through the value, the gradient and the arguments.

    When an enclosing call differentiates ``m`` itself, a stand-in is an
    identity view of the current param (``p.view_as(p)``), through which the
    enclosing gradient reaches the param; otherwise no enclosing call needs a
    gradient with respect to ``m``, and a stand-in is a fresh leaf sharing
    the param's storage (the param itself never requires grad then).
    """
    cls = type(m)
    names = cls._qv_param_names
    diff = cls._qv_diff
    params = m._qv_tensors
    d = m.__dict__
    depth = m._qv_depth
    # A param requires grad exactly when an enclosing call differentiates m.
    stand_ins = tuple(
        [
            (p.view_as(p) if p.requires_grad else p.detach().requires_grad_(True)) if ok else p
            for p, ok in zip(params, diff)
        ]
    )
    object.__setattr__(m, "_qv_depth", depth + 1)
    object.__setattr__(m, "_qv_tensors", stand_ins)
    d.update(zip(names, stand_ins))
    outer = running[0]
    running[0] = outer + 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        out = f(m, *args)
        if not isinstance(out, torch.Tensor) or out.dim() != 0 or not out.is_floating_point():
            raise _result_error(f, out)
        if out.is_leaf or any(out is s for s in stand_ins):
            out = out.clone()  # a param or an argument itself: do not alias it
        got = [None] * len(params)
        if out.requires_grad:
            wrt = [s for s, ok in zip(stand_ins, diff) if ok]
            found = iter(torch.autograd.grad(out, wrt, allow_unused=True, create_graph=True))
            got = [next(found) if ok else None for ok in diff]
        got = [torch.zeros_like(p) if gr is None else gr for p, gr in zip(params, got)]
    finally:
        _set_grad_enabled(grad_was)
        running[0] = outer
        d.update(zip(names, params))
        object.__setattr__(m, "_qv_tensors", params)
        object.__setattr__(m, "_qv_depth", depth)
    return out, Grad._make(cls, got)


def _result_error(f, out) -> GradError:
    return GradError(
        f"value_and_grad({getattr(f, '__name__', 'f')}): the function must return "
        f"a [] of floats, found {_result_text(out)}"
    )


def _detached(a):
    if isinstance(a, torch.Tensor):
        return a.detach() if a.requires_grad else a
    if type(a) is tuple:
        return tuple(_detached(x) for x in a)
    return a


def _result_text(x) -> str:
    if isinstance(x, torch.Tensor):
        return tensor_text(x)
    if x is None:
        return "nothing (None)"
    if isinstance(x, (bool, int, float)):
        return f"a plain {type(x).__name__} ({x!r}), not a tensor"
    return _operand_text(x)


def norm_of_grad(g: Grad) -> torch.Tensor:
    """The 2-norm of all of ``g``'s values together (0-dim)."""
    values = g._qv_values
    if not values:
        return torch.zeros(())
    norms = [torch.linalg.vector_norm(v) for v in values]
    first = norms[0]
    dtype = first.dtype
    for n in norms[1:]:
        dtype = torch.promote_types(dtype, n.dtype)
    if len(norms) == 1:
        return first.to(dtype)
    return torch.linalg.vector_norm(torch.stack([n.to(device=first.device, dtype=dtype) for n in norms]))


def grad(f, m, *args):
    """``grad(f, m, args...)``: the gradient alone, as ``value_and_grad`` gives it."""
    return value_and_grad(f, m, *args)[1]


def model_update(m, g, alpha=1):
    """``m += g`` (alpha 1), ``m -= g`` (-1), ``m -= lr * g`` (-lr): every param of
    ``m`` plus ``alpha`` times its field of ``g``, in place and outside autograd,
    in one fused multi-tensor step (``torch._foreach_add_``). Buffers are not
    touched. A param with a refined element type (``NonNeg``...) is updated
    like an assignment, so its values are checked."""
    cls = type(m)
    if not isinstance(m, Model):
        raise GradError(f"a model update needs a model, found {_operand_text(m)}")
    if type(g) is not Grad or g._qv_model is not cls:
        raise GradError(f"{cls._qv_name} can only be updated by a Grad[{cls._qv_name}], found {_operand_text(g)}")
    fused_p, fused_g = [], []
    for field, p, v, diff in zip(cls._qv_param_fields, m._qv_tensors, g._qv_values, cls._qv_diff):
        if not diff:
            continue  # an integer param has no gradient (its field is zeros)
        if field.elem.refinement is not None or v.shape != p.shape or v.dtype != p.dtype:
            setattr(m, field.name, p.detach() + alpha * v)  # the assignment's checks and errors
        else:
            fused_p.append(p)
            fused_g.append(v.detach())
    if fused_p:
        with torch.no_grad():
            _foreach_add_(fused_p, fused_g, alpha=alpha)
