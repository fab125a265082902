"""Gradients: ``rt.Grad`` and ``rt.value_and_grad``."""

from __future__ import annotations

import numbers
import threading
import warnings
from collections.abc import Callable
from typing import NoReturn

import torch

from . import _checks, _dist
from ._elems import tensor_text
from ._errors import GradError
from ._model import Model, ModelStack, model_class_of

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
        return x._qv_layout.text
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


class _Layout:
    """What a gradient holds: its model class, the selected top-level params
    (``wrt``, None for all), whether it is batched (a leading example dim on
    every leaf), and where each field's leaves are in ``_qv_values``.  One per
    (class, selection, batch), cached on the class, so gradients of the same
    kind share it and compare it by identity."""

    __slots__ = (
        "model",
        "wrt",
        "batch",
        "names",
        "leaf_index",
        "own",
        "subs",
        "flat",
        "paths",
        "fields",
        "diff",
        "text",
    )

    def __init__(self, cls, wrt, batch):
        self.model = cls
        self.wrt = wrt
        self.batch = batch
        self.names = cls._qv_param_names if wrt is None else wrt
        leaf_index: list[int] = []
        self.own = {}
        self.subs = {}
        for name in self.names:
            start, stop = cls._qv_param_slices[name]
            pos = len(leaf_index)
            sub = cls._qv_subs.get(name)
            if sub is None:
                self.own[name] = pos
            else:
                self.subs[name] = (sub.cls, sub.count, pos, len(sub.cls._qv_leaf_paths))
            leaf_index.extend(range(start, stop))
        self.leaf_index = tuple(leaf_index)
        self.flat = not self.subs
        self.paths = tuple(cls._qv_leaf_paths[i] for i in leaf_index)
        self.fields = tuple(cls._qv_leaf_fields[i] for i in leaf_index)
        self.diff = tuple(cls._qv_diff[i] for i in leaf_index)
        text = f"Grad[{cls._qv_name}" + ("" if wrt is None else f", wrt=[{', '.join(wrt)}]") + "]"
        self.text = "[b] " + text if batch else text


def _layout(cls, wrt=None, batch=False) -> _Layout:
    """The layout of a gradient of ``cls`` (``wrt`` already normalised)."""
    key = None if wrt is None and not batch else (wrt, batch)
    layouts = cls._qv_grad_layouts
    lay = layouts.get(key)
    if lay is None:
        lay = layouts[key] = _Layout(cls, wrt, batch)
    return lay


def _selection(cls, wrt, what="value_and_grad"):
    """``wrt`` as a tuple of top-level param names in declaration order, or
    None for every param (also when it names them all)."""
    if wrt is None:
        return None
    if isinstance(wrt, str):
        wrt = (wrt,)
    try:
        wrt = tuple(wrt)
    except TypeError:
        raise GradError(f"{what}: wrt must be a tuple of param names of {cls._qv_name}, found {wrt!r}") from None
    names = cls._qv_param_names
    for n in wrt:
        if n not in names:
            raise GradError(
                f"{what}: {n!r} in wrt is not a param of {cls._qv_name} (its params: {', '.join(names) or 'none'})"
            )
    if len(set(wrt)) != len(wrt):
        raise GradError(f"{what}: wrt names a param twice: {', '.join(wrt)}")
    if not wrt:
        raise GradError(f"{what}: wrt must name at least one param of {cls._qv_name}")
    if len(wrt) == len(names):
        return None
    return tuple(n for n in names if n in wrt)


class _PerExample:
    """A ``[b]`` factor of a batched gradient, shaped for each leaf."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def like(self, a):
        return self.t.reshape((-1,) + (1,) * (a.dim() - 1))


def _batch_size(g) -> int | None:
    values = g._qv_values
    return int(values[0].shape[0]) if values else None


class Grad:
    """The gradient of a value with respect to the params of a model class.

    One field per param (or per selected param, ``wrt``), in declaration
    order, readable as ``g.w1`` or ``g["w1"]``; a sub-model's field is a
    ``Grad`` of the sub-model, a stack's a read-only sequence of them.
    Immutable.  ``_qv_values`` holds the leaf tensors, flat, in the order of
    the model's ``_qv_tensors`` (``_qv_leaf_index`` says which).  Supports
    ``g + h``, ``g - h`` (same model and selection), ``-g``, ``g * s``,
    ``s * g`` and ``g / s`` for a number or a 0-dim tensor ``s`` (also a
    ``[b]`` tensor for a batched gradient); ``rt.norm(g)``.  Everything else
    raises :class:`GradError`.
    """

    __slots__ = ("__dict__", "_qv_model", "_qv_values", "_qv_trusted", "_qv_layout")

    def __init__(self, model, values, wrt=None):
        cls = model_class_of(model)
        if cls is None:
            raise GradError(f"Grad(model, values) needs a model class, found {type(model).__name__}")
        lay = _layout(cls, _selection(cls, wrt, "Grad(model, values)"))
        names = lay.names
        if not hasattr(values, "keys"):
            raise GradError("Grad(model, values) needs a mapping from param names to tensors")
        keys = list(values.keys())
        if set(keys) != set(names) or len(keys) != len(names):
            raise GradError(
                f"{lay.text} needs exactly the fields {', '.join(names) or '(none)'}, "
                f"found {', '.join(map(str, keys)) or '(none)'}"
            )
        tensors: list = []
        for n in names:
            v = values[n]
            sub = cls._qv_subs.get(n)
            if sub is None:
                if not isinstance(v, torch.Tensor):
                    raise GradError(f"{lay.text} field {n!r} must be a tensor, found {type(v).__name__}")
                tensors.append(v)
                continue
            want = _layout(sub.cls)
            if sub.count is None:
                items = [v]
            else:
                items = list(v) if isinstance(v, (tuple, list, ModelStack)) else None
                if items is None or len(items) != sub.count:
                    raise GradError(
                        f"{lay.text} field {n!r} must be a sequence of {sub.count} Grad[{sub.cls._qv_name}], "
                        f"found {_operand_text(v)}"
                    )
            for item in items:
                if type(item) is not Grad or item._qv_layout is not want:
                    raise GradError(f"{lay.text} field {n!r} must be {want.text}, found {_operand_text(item)}")
                tensors.extend(item._qv_values)
        self._qv_init(lay, tuple(tensors), False)

    def _qv_init(self, lay, tensors, trusted):
        object.__setattr__(self, "_qv_model", lay.model)
        object.__setattr__(self, "_qv_values", tensors)
        object.__setattr__(self, "_qv_trusted", trusted)
        object.__setattr__(self, "_qv_layout", lay)
        if lay.flat and lay.wrt is None:
            self.__dict__.update(zip(lay.names, tensors))
        else:
            self.__dict__.update((n, tensors[i]) for n, i in lay.own.items())

    @classmethod
    def _make(cls, model_cls, tensors) -> Grad:
        """A full gradient built by the runtime, known to have the right fields."""
        g = object.__new__(cls)
        lay = model_cls._qv_grad_layouts.get(None)
        g._qv_init(_layout(model_cls) if lay is None else lay, tuple(tensors), True)
        return g

    @classmethod
    def _new(cls, lay, tensors, trusted=True) -> Grad:
        """A gradient of layout ``lay`` built by the runtime."""
        g = object.__new__(cls)
        g._qv_init(lay, tuple(tensors), trusted)
        return g

    @property
    def _qv_leaf_index(self) -> tuple:
        return self._qv_layout.leaf_index

    @property
    def _qv_wrt(self):
        return self._qv_layout.wrt

    @property
    def _qv_batch(self) -> bool:
        return self._qv_layout.batch

    # --- access ---------------------------------------------------------------

    def _qv_sub(self, name):
        lay = self._qv_layout
        sub_cls, count, pos, size = lay.subs[name]
        sub_lay = _layout(sub_cls, None, lay.batch)
        values = self._qv_values
        trusted = self._qv_trusted
        if count is None:
            v = Grad._new(sub_lay, values[pos : pos + size], trusted)
        else:
            v = ModelStack(
                [Grad._new(sub_lay, values[pos + k * size : pos + (k + 1) * size], trusted) for k in range(count)],
                f"{lay.text}.{name}",
                GradError,
            )
        self.__dict__[name] = v
        return v

    def _qv_no_field(self, name, error):
        lay = self._qv_layout
        if lay.wrt is not None and name in lay.model._qv_param_names:
            return error(
                f"{lay.text} has no field {name!r}: it was not selected with wrt (selected: {', '.join(lay.names)})"
            )
        return error(f"{lay.text} has no field {name!r} (its fields: {', '.join(lay.names) or 'none'})")

    def __getattr__(self, name):
        if name.startswith("__") or name.startswith("_qv_"):
            raise AttributeError(name)
        if name in self._qv_layout.subs:
            return self._qv_sub(name)
        raise self._qv_no_field(name, GradAttributeError)

    def __getitem__(self, name):
        try:
            return self.__dict__[name]
        except (KeyError, TypeError):
            if isinstance(name, str) and name in self._qv_layout.subs:
                return self._qv_sub(name)
            raise self._qv_no_field(name, GradKeyError) from None

    def __setattr__(self, name, value):
        raise GradError(f"gradients are read-only: cannot set {name!r} of {self._qv_layout.text}")

    def __delattr__(self, name):
        raise GradError(f"gradients are read-only: cannot delete {name!r}")

    def __iter__(self):
        return iter(self._qv_layout.names)

    def keys(self):
        return self._qv_layout.names

    def values(self):
        lay = self._qv_layout
        if lay.flat:
            return self._qv_values
        return tuple(self[n] for n in lay.names)

    def items(self):
        return tuple(zip(self._qv_layout.names, self.values()))

    def __len__(self):
        return len(self._qv_layout.names)

    def __contains__(self, name):
        return isinstance(name, str) and name in self._qv_layout.names

    def __bool__(self):
        raise GradError("a gradient has no truth value")

    def __repr__(self) -> str:
        lay = self._qv_layout
        parts = ", ".join(f"{n}: {tensor_text(t)}" for n, t in zip(lay.paths, self._qv_values))
        return f"{lay.text}({parts})"

    def __reduce__(self):
        raise GradError("gradients cannot be pickled")

    # --- arithmetic -------------------------------------------------------------

    def _same(self, other, op):
        if type(other) is not Grad:
            raise _bad(op, self, other)
        a, b = self._qv_layout, other._qv_layout
        if a is not b:
            verb = "add" if op == "+" else "subtract"
            if a.model is not b.model:
                an, bn = a.text, b.text
                if a.model._qv_name == b.model._qv_name:
                    bn = bn[:-1] + " (another class of that name)]"
                raise GradError(f"cannot {verb} gradients of different models: {an} {op} {bn}")
            if a.batch != b.batch:
                raise GradError(f"cannot {verb} a batched and an unbatched gradient: {a.text} {op} {b.text}")
            raise GradError(f"cannot {verb} gradients of different selections (wrt): {a.text} {op} {b.text}")
        return other._qv_values

    def __add__(self, other):
        ov = self._same(other, "+")
        return Grad._new(self._qv_layout, [a + b for a, b in zip(self._qv_values, ov)])

    def __sub__(self, other):
        ov = self._same(other, "-")
        return Grad._new(self._qv_layout, [a - b for a, b in zip(self._qv_values, ov)])

    def __radd__(self, other):
        raise _bad("+", other, self)

    def __rsub__(self, other):
        raise _bad("-", other, self)

    def __neg__(self):
        return Grad._new(self._qv_layout, [-a for a in self._qv_values])

    def _factor(self, other, op, left):
        """``other`` as a factor for every leaf: a number or a 0-dim tensor, or
        for a batched gradient a ``[b]`` tensor (one factor per example);
        None when it is not one."""
        if _is_scalar(other):
            return other
        if (
            self._qv_layout.batch
            and isinstance(other, torch.Tensor)
            and not isinstance(other, Grad)
            and other.dim() == 1
            and other.dtype is not torch.bool
        ):
            b = _batch_size(self)
            if b is not None and other.shape[0] != b:
                raise GradError(
                    f"cannot scale {self._qv_layout.text} of {b} examples by {tensor_text(other)}: "
                    f"one factor per example is needed"
                )
            return _PerExample(other)
        raise _bad(op, self, other) if left else _bad(op, other, self)

    def __mul__(self, other):
        s = self._factor(other, "*", True)
        if type(s) is _PerExample:
            return Grad._new(self._qv_layout, [a * s.like(a) for a in self._qv_values])
        return Grad._new(self._qv_layout, [a * s for a in self._qv_values])

    def __rmul__(self, other):
        s = self._factor(other, "*", False)
        if type(s) is _PerExample:
            return Grad._new(self._qv_layout, [s.like(a) * a for a in self._qv_values])
        return Grad._new(self._qv_layout, [s * a for a in self._qv_values])

    def __truediv__(self, other):
        s = self._factor(other, "/", True)
        if type(s) is _PerExample:
            return Grad._new(self._qv_layout, [a / s.like(a) for a in self._qv_values])
        return Grad._new(self._qv_layout, [a / s for a in self._qv_values])

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


def value_and_grad(f, m, *args, wrt=None, aux=False, batch=None):
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

    ``wrt`` (top-level param names) selects the params to differentiate;
    ``aux=True``: ``f`` returns a tuple whose first element is the loss;
    ``batch`` (one 0/None per argument): per-example gradients.  See
    :func:`_value_and_grad_ex`.
    """
    if wrt is not None or aux or batch is not None:
        return _value_and_grad_ex(f, m, args, wrt, aux, batch)
    if not isinstance(m, Model):
        raise GradError(f"value_and_grad needs a model as its second argument, found {_operand_text(m)}")
    if not callable(f):
        raise GradError(f"value_and_grad needs a function as its first argument, found {_operand_text(f)}")
    running = _running.depth
    if running[0]:
        return _nested(f, m, args, running, _layout(type(m)), False)
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
    if _dist._current().size > 1:  # data-parallel: averaged over the ranks, one all-reduce
        got, value = _averaged(got, diff, value)
    return value, Grad._make(cls, got)


def _averaged(got, diff, value):
    """The gradient's floating leaves (``diff``) and the value averaged over
    the ranks of the process group, in one all-reduce (``_dist.average``);
    integer leaves (zeros) are left as they are."""
    at = [i for i, d in enumerate(diff) if d]
    reduced, value = _dist.average([got[i] for i in at], value)
    got = list(got)
    for i, t in zip(at, reduced):
        got[i] = t
    return got, value


def _value_and_grad_ex(f, m, args, wrt, aux, batch):
    """value_and_grad with a selection (``wrt``), an aux output or a batch."""
    if not isinstance(m, Model):
        raise GradError(f"value_and_grad needs a model as its second argument, found {_operand_text(m)}")
    if not callable(f):
        raise GradError(f"value_and_grad needs a function as its first argument, found {_operand_text(f)}")
    cls = type(m)
    lay = _layout(cls, _selection(cls, wrt))
    if batch is not None:
        return _per_example(f, m, args, lay, aux, batch)
    running = _running.depth
    if running[0]:
        return _nested(f, m, args, running, lay, bool(aux))
    params = m._qv_tensors
    sel = [params[i] for i in lay.leaf_index]
    diff = lay.diff
    depth = m._qv_depth
    if depth == 0:
        for p, d in zip(sel, diff):
            if d:
                p.requires_grad_(True)
    object.__setattr__(m, "_qv_depth", depth + 1)
    running[0] = 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        args = tuple([_detached(a) for a in args])
        out = f(m, *args)
        loss = _loss_of(f, out, aux)
        wrt_t = [p for p, d in zip(sel, diff) if d]
        got: list = [None] * len(sel)
        if loss.requires_grad and wrt_t:
            found = iter(torch.autograd.grad(loss, wrt_t, allow_unused=True))
            got = [next(found) if d else None for d in diff]
        got = [torch.zeros_like(p) if gr is None else gr for p, gr in zip(sel, got)]
    finally:
        _set_grad_enabled(grad_was)
        running[0] = 0
        object.__setattr__(m, "_qv_depth", depth)
        if depth == 0:
            for p in sel:
                p.requires_grad_(False)
    value = _detach_value(out)
    if _dist._current().size > 1:  # data-parallel: averaged over the ranks, one all-reduce
        if aux:  # the loss is averaged, the aux outputs stay this rank's
            assert isinstance(value, tuple)
            got, first = _averaged(got, diff, value[0])
            value = (first, *value[1:])
        else:
            got, value = _averaged(got, diff, value)
    return value, Grad._new(lay, got)


def _loss_of(f, out, aux):
    """The value to differentiate: ``out`` itself, or its first element with ``aux``."""
    if aux:
        if not isinstance(out, tuple) or not out:
            raise GradError(
                f"value_and_grad({getattr(f, '__name__', 'f')}, aux=True): the function must return a tuple "
                f"whose first element is a [] of floats, found {_result_text(out)}"
            )
        loss = out[0]
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0 or not loss.is_floating_point():
            raise GradError(
                f"value_and_grad({getattr(f, '__name__', 'f')}, aux=True): the first element of the result "
                f"must be a [] of floats, found {_result_text(loss)}"
            )
        return loss
    if not isinstance(out, torch.Tensor) or out.dim() != 0 or not out.is_floating_point():
        raise _result_error(f, out)
    return out


def _detach_value(x):
    """A returned value cut from autograd: tensors detached, and copied when
    they are a leaf or a view (a param, an argument, ``m.w[0]``)."""
    if isinstance(x, torch.Tensor):
        v = x.detach()
        if x.is_leaf or x._base is not None:
            v = v.clone()
        return v
    if type(x) is tuple:
        return tuple(_detach_value(v) for v in x)
    return x


def _nested(f, m, args, running, lay, aux):
    """value_and_grad inside the ``f`` of another one: differentiable.

    ``f`` runs on stand-ins for the floating params of ``m`` (the selected
    ones with ``wrt``), put in the model's fields (and its sub-models') for
    the duration of the call, and the gradient is taken with respect to the
    stand-ins with ``create_graph=True``.  Since nothing computed before the
    call depends on a stand-in, the gradient is the partial derivative with
    the arguments held fixed, even when they were computed from the params
    (or are a param).  The arguments are not detached and the value is not
    detached, so the enclosing calls differentiate through the value, the
    gradient and the arguments.

    When an enclosing call differentiates ``m`` itself, a stand-in is an
    identity view of the current param (``p.view_as(p)``), through which the
    enclosing gradient reaches the param; otherwise no enclosing call needs a
    gradient with respect to ``m``, and a stand-in is a fresh leaf sharing
    the param's storage (the param itself never requires grad then).
    """
    cls = type(m)
    params = m._qv_tensors
    depth = m._qv_depth
    index = lay.leaf_index
    diff = lay.diff
    # A param requires grad exactly when an enclosing call differentiates m.
    stand = list(params)
    for i, ok in zip(index, diff):
        if ok:
            p = params[i]
            stand[i] = p.view_as(p) if p.requires_grad else p.detach().requires_grad_(True)
    stand_ins = tuple(stand)
    object.__setattr__(m, "_qv_depth", depth + 1)
    if cls._qv_nested:
        m._qv_install(stand_ins)
    else:
        object.__setattr__(m, "_qv_tensors", stand_ins)
        m.__dict__.update(zip(cls._qv_param_names, stand_ins))
    outer = running[0]
    running[0] = outer + 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        out = f(m, *args)
        loss = _loss_of(f, out, aux)
        if aux:
            out = tuple(_own(v, stand_ins) for v in out)
            loss = out[0]
        else:
            out = loss = _own(loss, stand_ins)
        got: list = [None] * len(index)
        if loss.requires_grad:
            wrt = [stand_ins[i] for i, ok in zip(index, diff) if ok]
            if wrt:
                found = iter(torch.autograd.grad(loss, wrt, allow_unused=True, create_graph=True))
                got = [next(found) if ok else None for ok in diff]
        got = [torch.zeros_like(params[i]) if gr is None else gr for i, gr in zip(index, got)]
    finally:
        _set_grad_enabled(grad_was)
        running[0] = outer
        if cls._qv_nested:
            m._qv_install(params)
        else:
            m.__dict__.update(zip(cls._qv_param_names, params))
            object.__setattr__(m, "_qv_tensors", params)
        object.__setattr__(m, "_qv_depth", depth)
    return out, Grad._new(lay, got)


def _own(v, stand_ins):
    """``v``, copied when it is a leaf or a stand-in (a param or an argument itself)."""
    if isinstance(v, torch.Tensor) and (v.is_leaf or any(v is s for s in stand_ins)):
        return v.clone()
    return v


# --- torch.func: per-example gradients and forward mode ----------------------------


def _functional(f, m, index, wrap_result=None):
    """``compute(leaves, *args)``: ``f`` on a shallow copy of ``m`` whose leaves
    at ``index`` are ``leaves`` (the others are ``m``'s own tensors)."""
    params = m._qv_tensors

    def compute(leaves, *args):
        full = list(params)
        for i, p in zip(index, leaves):
            full[i] = p
        out = f(m._qv_shallow(full), *args)
        return out if wrap_result is None else wrap_result(out)

    return compute


def _per_example(f, m, args, lay, aux, in_dims):
    name = getattr(f, "__name__", "f")
    if type(in_dims) is list:
        in_dims = tuple(in_dims)
    if not isinstance(in_dims, tuple) or len(in_dims) != len(args):
        raise GradError(
            f"value_and_grad({name}, batch=...): batch needs one entry (0 or None) per argument after the "
            f"model ({len(args)}), found {in_dims!r}"
        )
    if any(d is not None and (d != 0 or isinstance(d, bool)) for d in in_dims) or all(d is None for d in in_dims):
        raise GradError(
            f"value_and_grad({name}, batch=...): each entry of batch must be 0 (map over the leading dim) "
            f"or None (shared), and at least one must be 0; found {in_dims!r}"
        )
    if _running.depth[0]:
        raise GradError(
            f"value_and_grad({name}, batch=...): per-example gradients cannot be taken inside the "
            f"function of another value_and_grad"
        )
    cls = type(m)
    params = m._qv_tensors
    index = [i for i, d in zip(lay.leaf_index, lay.diff) if d]
    args = tuple(_detached(a) for a in args)
    b = 0
    for a, d in zip(args, in_dims):
        if d == 0:
            t = a
            while type(t) is tuple and t:
                t = t[0]
            if not isinstance(t, torch.Tensor) or t.dim() == 0:
                raise GradError(
                    f"value_and_grad({name}, batch=...): an argument mapped over (batch entry 0) must be a "
                    f"tensor with a leading example dim, found {_result_text(a)}"
                )
            b = int(t.shape[0])
            break

    if aux:

        def split(out):
            return _loss_of(f, out, True), out

        compute = _functional(f, m, index, split)
    else:
        compute = _functional(f, m, index, lambda out: _loss_of(f, out, False))
    primals = tuple(params[i] for i in index)
    # randomness="different": rt.dropout under Train draws its own mask per example
    mapped = torch.func.vmap(
        torch.func.grad_and_value(compute, has_aux=aux), in_dims=(None, *in_dims), randomness="different"
    )
    transform = _checks.transforms
    transform.depth += 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        grads, value = mapped(primals, *args)
        if aux:
            value = value[1]
    finally:
        _set_grad_enabled(grad_was)
        transform.depth -= 1
    found = iter(grads)
    got = []
    for i, d in zip(lay.leaf_index, lay.diff):
        if d:
            got.append(next(found).detach())
        else:
            p = params[i]
            got.append(torch.zeros((b, *p.shape), dtype=p.dtype, device=p.device))
    return _detach_value(value), Grad._new(_layout(cls, lay.wrt, True), got)


_jvp_loaded = []


def _load_jvp_decompositions() -> None:
    """torch loads its forward-mode decompositions at the first dual tensor,
    through the deprecated ``torch.jit.script``: a DeprecationWarning that is
    torch's own business, silenced here once."""
    if _jvp_loaded:
        return
    load = getattr(torch.autograd.forward_ad, "_maybe_load_decompositions", None)
    if load is not None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*", category=DeprecationWarning)
            load()
    _jvp_loaded.append(True)


def jvp(f, m, t, *args):
    """``(y, dy)``: ``y = f(m, *args)`` (detached) and its derivative along the
    params' direction ``t`` (a Grad of ``m``'s model, full or selected; params
    outside a selection have tangent zero).  ``f`` returns a floating tensor
    or a tuple of them; ``dy`` has the same form.  Forward mode
    (``torch.func.jvp``); the arguments are held fixed."""
    name = getattr(f, "__name__", "f")
    if not isinstance(m, Model):
        raise GradError(f"jvp needs a model as its second argument, found {_operand_text(m)}")
    if not callable(f):
        raise GradError(f"jvp needs a function as its first argument, found {_operand_text(f)}")
    cls = type(m)
    if type(t) is not Grad or t._qv_model is not cls or t._qv_layout.batch:
        raise GradError(f"jvp({name}): the tangent must be a Grad[{cls._qv_name}], found {_operand_text(t)}")
    lay = t._qv_layout
    params = m._qv_tensors
    index, tangents = [], []
    for i, v, d, path in zip(lay.leaf_index, t._qv_values, lay.diff, lay.paths):
        if not d:
            continue
        p = params[i]
        if not isinstance(v, torch.Tensor) or v.shape != p.shape or v.dtype != p.dtype:
            raise GradError(
                f"jvp({name}): the tangent's field {path} is {_result_text(v)}, "
                f"but {cls._qv_name}.{path} is {tensor_text(p)}"
            )
        index.append(i)
        tangents.append(v.detach().to(p.device))

    def result(out):
        items = out if type(out) is tuple else (out,)
        if not items or not all(isinstance(x, torch.Tensor) and x.is_floating_point() for x in items):
            raise GradError(
                f"jvp({name}): the function must return a floating tensor or a tuple of them, found {_result_text(out)}"
            )
        return out

    compute = _functional(f, m, index, result)
    args = tuple(_detached(a) for a in args)
    if not index:  # no floating param in the direction: the derivative is zero
        with torch.no_grad():
            y = compute((), *args)
        dy = tuple(torch.zeros_like(v) for v in y) if type(y) is tuple else torch.zeros_like(y)
        return _detach_value(y), dy
    _load_jvp_decompositions()
    transform = _checks.transforms
    transform.depth += 1
    try:
        y, dy = torch.func.jvp(
            lambda *leaves: compute(leaves, *args), tuple(params[i] for i in index), tuple(tangents)
        )[:2]
    finally:
        transform.depth -= 1
    return _detach_value(y), _detach_value(dy)


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
    """The 2-norm of all of ``g``'s values together (0-dim); for a batched
    gradient one norm per example (``[b]``)."""
    values = g._qv_values
    if not all(v.is_floating_point() for v in values):
        # integer params' fields (zeros): no part of the norm
        values = [v for v in values if v.is_floating_point() or v.is_complex()] or [values[0].double()]
    if g._qv_layout.batch:
        return _batched_norm(values)
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


def _batched_norm(values) -> torch.Tensor:
    if not values:
        raise GradError("rt.norm of a batched gradient without fields: the number of examples is unknown")
    norms = [torch.linalg.vector_norm(v.reshape(v.shape[0], -1), dim=1) for v in values]
    dtype = norms[0].dtype
    for n in norms[1:]:
        dtype = torch.promote_types(dtype, n.dtype)
    first = norms[0]
    if len(norms) == 1:
        return first.to(dtype)
    return torch.linalg.vector_norm(torch.stack([n.to(device=first.device, dtype=dtype) for n in norms]), dim=0)


def grad(f, m, *args, wrt=None, aux=False, batch=None):
    """``grad(f, m, args...)``: the gradient alone, as ``value_and_grad`` gives it."""
    if wrt is None and not aux and batch is None:
        return value_and_grad(f, m, *args)[1]
    return _value_and_grad_ex(f, m, args, wrt, aux, batch)[1]


def _reduce_batch(g, how):
    what = "mean_grad" if how == "mean" else "sum_grad"
    if type(g) is not Grad or not g._qv_layout.batch:
        raise GradError(f"rt.{what} needs a batched gradient ([b] Grad[M]), found {_operand_text(g)}")
    lay = g._qv_layout
    # (an integer leaf's gradient is zeros, whose sum is its mean: torch has no mean of integers)
    values = [v.mean(dim=0) if how == "mean" and v.is_floating_point() else v.sum(dim=0) for v in g._qv_values]
    if _dist._current().size > 1:
        # data-parallel: the examples of every rank (the mean of the ranks' means, the sum of their sums), one all-reduce
        at = [i for i, d in enumerate(lay.diff) if d]
        reduced, _ = _dist.average([values[i] for i in at], divide=how == "mean")
        for i, t in zip(at, reduced):
            values[i] = t
    return Grad._new(_layout(lay.model, lay.wrt, False), values)


def mean_grad(g: Grad) -> Grad:
    """The mean over the examples of a batched gradient: a plain Grad.  In a
    process group, over the examples of every rank (the mean of the ranks'
    means: one all-reduce), so DP-SGD steps alike on every rank."""
    return _reduce_batch(g, "mean")


def sum_grad(g: Grad) -> Grad:
    """The sum over the examples of a batched gradient: a plain Grad.  In a
    process group, over the examples of every rank (one all-reduce)."""
    return _reduce_batch(g, "sum")


def _grad_class(model, what):
    cls = model_class_of(model)
    if cls is None:
        raise GradError(f"rt.{what} needs a model class, found {_operand_text(model)}")
    return cls


def zeros_grad(model, wrt=None) -> Grad:
    """A Grad of ``model`` (a class or an instance) with zeros in every leaf (the
    selected ones with ``wrt``), of the params' dtypes, on the model's device."""
    cls = _grad_class(model, "zeros_grad")
    lay = _layout(cls, _selection(cls, wrt, "rt.zeros_grad"))
    device = cls._qv_torch_device
    return Grad._new(lay, [torch.zeros(f.shape, dtype=f.elem.dtype, device=device) for f in lay.fields])


def randn_grad(model, seed, wrt=None) -> Grad:
    """A Grad of ``model`` with standard normal values: one CPU ``torch.Generator``
    seeded with ``seed`` draws the floating leaves in order (in f64 for f64
    leaves, f32 otherwise), moved to the model's device; integer leaves get zeros."""
    cls = _grad_class(model, "randn_grad")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise GradError(f"rt.randn_grad({cls._qv_name}, seed) needs an Int seed, found {seed!r}")
    problem = _checks.seed_problem(seed)
    if problem is not None:
        raise GradError(f"rt.randn_grad({cls._qv_name}, seed): {problem}")
    lay = _layout(cls, _selection(cls, wrt, "rt.randn_grad"))
    device = cls._qv_torch_device
    gen = torch.Generator()
    gen.manual_seed(seed)
    values = []
    for f, d in zip(lay.fields, lay.diff):
        dtype = f.elem.dtype
        if d:
            draw = torch.float64 if dtype == torch.float64 else torch.float32
            values.append(torch.randn(f.shape, generator=gen, dtype=draw).to(dtype=dtype, device=device))
        else:
            values.append(torch.zeros(f.shape, dtype=dtype, device=device))
    return Grad._new(lay, values)


def _leaf_owner(m, path):
    """The (sub-)model instance holding leaf ``path`` and the field's name there."""
    *outer, name = path.split(".")
    obj = m
    for part in outer:
        obj = obj._qv_items[int(part)] if isinstance(obj, ModelStack) else obj.__dict__[part]
    return obj, name


def model_update(m, g, alpha=1):
    """``m += g`` (alpha 1), ``m -= g`` (-1), ``m -= lr * g`` (-lr): every param of
    ``m`` (every selected one, for a gradient with ``wrt``) plus ``alpha`` times
    its field of ``g``, in place and outside autograd, in one fused
    multi-tensor step (``torch._foreach_add_``). Buffers are not touched. A
    param with a refined element type (``NonNeg``...) is updated like an
    assignment, so its values are checked."""
    cls = type(m)
    if not isinstance(m, Model):
        raise GradError(f"a model update needs a model, found {_operand_text(m)}")
    if type(g) is not Grad or g._qv_model is not cls or g._qv_layout.batch:
        found = _operand_text(g)
        if type(g) is Grad and g._qv_model is cls:
            found += " (a batched gradient: reduce it with rt.mean_grad or rt.sum_grad first)"
        raise GradError(f"{cls._qv_name} can only be updated by a Grad[{cls._qv_name}], found {found}")
    lay = g._qv_layout
    params = m._qv_tensors
    if lay.wrt is not None:
        params = tuple(params[i] for i in lay.leaf_index)
    fused_p, fused_g = [], []
    for field, p, v, diff, path in zip(lay.fields, params, g._qv_values, lay.diff, lay.paths):
        if not diff:
            continue  # an integer param has no gradient (its field is zeros)
        if field.elem.refinement is not None or v.shape != p.shape or v.dtype != p.dtype:
            owner, name = _leaf_owner(m, path)
            setattr(owner, name, p.detach() + alpha * v)  # the assignment's checks and errors
        else:
            fused_p.append(p)
            fused_g.append(v.detach())
    if fused_p:
        with torch.no_grad():
            _foreach_add_(fused_p, fused_g, alpha=alpha)
