"""The gradient value ``rt.Grad``: its layouts (which leaves, batched or not),
field access, the arithmetic it allows and the errors of what it does not."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import NoReturn

import torch

from ._elems import tensor_text
from ._errors import GradError
from ._model import ModelStack, model_class_of


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
        "tied_pos",
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
                # each model's class and its leaves' place in this gradient's values
                parts = (
                    tuple((c, pos + lo - start, pos + hi - start) for c, lo, hi in cls._qv_elems[name])
                    if (sub.count is not None)
                    else ((sub.cls, pos, pos + len(sub.cls._qv_leaf_paths)),)
                )
                self.subs[name] = (sub.count, parts)
            leaf_index.extend(range(start, stop))
        self.leaf_index = tuple(leaf_index)
        self.flat = not self.subs
        self.paths = tuple(cls._qv_leaf_paths[i] for i in leaf_index)
        self.fields = tuple(cls._qv_leaf_fields[i] for i in leaf_index)
        self.diff = tuple(cls._qv_diff[i] for i in leaf_index)
        # the positions of tied params (their gradient is their source's): once per layout
        self.tied_pos = tuple(j for j, i in enumerate(leaf_index) if i in cls._qv_tied)
        text = f"Grad[{cls._qv_name}" + ("" if wrt is None else f", wrt=[{', '.join(wrt)}]") + "]"
        self.text = "[b] " + text if batch else text


def _untied(lay: _Layout, tensors) -> tuple:
    """A gradient's values with zeros at each tied param (runtime/_model.py,
    `_set_ties`): the gradient of a tied tensor, the sum of its uses, is its
    source's, so that norms, updates and optimizers count it once."""
    if not lay.tied_pos:
        return tensors if type(tensors) is tuple else tuple(tensors)
    out = list(tensors)
    for j in lay.tied_pos:
        out[j] = torch.zeros_like(out[j])
    return tuple(out)


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
            if sub.count is None:
                items = [v]
            else:
                items = list(v) if isinstance(v, (tuple, list, ModelStack)) else None
                if items is None or len(items) != sub.count:
                    raise GradError(
                        f"{lay.text} field {n!r} must be a sequence of {sub.count} Grad[{sub.classes[0]._qv_name}], "
                        f"found {_operand_text(v)}"
                    )
            for item, sub_cls in zip(items, sub.classes):
                want = _layout(sub_cls)
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
        lay = _layout(model_cls) if lay is None else lay
        g._qv_init(lay, _untied(lay, tensors), True)
        return g

    @classmethod
    def _new(cls, lay, tensors, trusted=True) -> Grad:
        """A gradient of layout ``lay`` built by the runtime."""
        g = object.__new__(cls)
        g._qv_init(lay, _untied(lay, tensors), trusted)
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
        count, parts = lay.subs[name]
        values = self._qv_values
        trusted = self._qv_trusted
        if count is None:
            sub_cls, lo, hi = parts[0]
            v = Grad._new(_layout(sub_cls, None, lay.batch), values[lo:hi], trusted)
        else:
            v = ModelStack(
                [Grad._new(_layout(c, None, lay.batch), values[lo:hi], trusted) for c, lo, hi in parts],
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

    def _repr_html_(self) -> str:  # a notebook's display: field, shape, norm
        from ._display import grad_html

        return grad_html(self)

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
