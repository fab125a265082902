"""Models: classes whose instances hold a fixed set of named tensors.

Compiled code declares a model as a subclass of :class:`Model` with the class
attributes ``_qv_name``, ``_qv_device``, ``_qv_params`` and ``_qv_buffers``
(tuples of :class:`Field`).  Each field is an instance attribute holding a
tensor with the declared shape, dtype and device.  The tensor object of a
field never changes: assigning the field writes the new values into it.
"""

from __future__ import annotations

import torch

from . import init as _init
from ._checks import checks
from ._elems import Elem, dims_text, dtype_name, elem_of, tensor_text
from ._errors import ModelError

_RESERVED_PREFIX = "_qv_"
_FORMAT = "quiver-model"
_FORMAT_VERSION = 1


class Field:
    """A declared param or buffer: name, shape (ints), element type, initialiser."""

    __slots__ = ("name", "shape", "elem", "init", "loc")

    def __init__(self, name, shape, elem, init=None, loc=None):
        self.name = name
        self.shape = tuple(shape)
        self.elem = elem_of(elem)
        self.init = _init.zeros if init is None else init
        self.loc = loc

    @property
    def type_text(self) -> str:
        return f"{dims_text(self.shape)} {self.elem.name}"

    def __repr__(self) -> str:
        return f"Field({self.name}: {self.type_text} = {self.init!r})"


def _where(loc) -> str:
    return "" if loc is None else f" (declared at {loc.filename}:{loc.line}:{loc.col})"


class Model:
    """Base class of compiled models.  Create instances with ``M.init(seed=...)``
    or ``M.load(path)``."""

    __slots__ = ("__dict__", "__weakref__", "_qv_tensors", "_qv_depth")

    _qv_name = "Model"
    _qv_device = "cpu"
    _qv_params: tuple = ()
    _qv_buffers: tuple = ()

    # --- class set-up ---------------------------------------------------------

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_qv_name" not in cls.__dict__:
            cls._qv_name = cls.__name__
        params = tuple(cls._qv_params)
        buffers = tuple(cls._qv_buffers)
        fields = {}
        for f in params + buffers:
            if not isinstance(f, Field):
                raise ModelError(f"model {cls._qv_name}: fields must be rt.Field, found {f!r}")
            if f.name in fields:
                raise ModelError(f"model {cls._qv_name}: field {f.name!r} declared twice{_where(f.loc)}")
            if f.name.startswith(_RESERVED_PREFIX) or f.name.startswith("__"):
                raise ModelError(f"model {cls._qv_name}: field name {f.name!r} is reserved{_where(f.loc)}")
            if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in f.shape):
                raise ModelError(f"model {cls._qv_name}: field {f.name!r} needs fixed dims, found {dims_text(f.shape)}")
            fields[f.name] = f
        cls._qv_fields = fields
        cls._qv_param_fields = params
        cls._qv_param_names = tuple(f.name for f in params)
        cls._qv_buffer_names = tuple(f.name for f in buffers)
        # Differentiable params: floating (or complex) element types.
        cls._qv_diff = tuple(f.elem.dtype.is_floating_point or f.elem.dtype.is_complex for f in params)
        cls._qv_all_diff = all(cls._qv_diff)
        if all(f.loc is not None for f in fields.values()):
            order = sorted(fields.values(), key=lambda f: (f.loc.line, f.loc.col))
        else:
            order = list(fields.values())
        cls._qv_init_order = tuple(order)
        cls._qv_torch_device = torch.device(cls._qv_device)

    def __init__(self, *args, **kwargs):
        raise ModelError(
            f"create a {type(self)._qv_name} with {type(self).__name__}.init(seed=...) "
            f"or {type(self).__name__}.load(path)"
        )

    @classmethod
    def _qv_device_or_error(cls) -> torch.device:
        device = cls._qv_torch_device
        if device.type == "cpu":
            return device
        try:
            torch.empty(0, device=device)
        except Exception as exc:  # torch raises RuntimeError / AssertionError
            raise ModelError(
                f"model {cls._qv_name} is declared on {cls._qv_device}, but that device is not available here ({exc})"
            ) from None
        return device

    @classmethod
    def _qv_from_tensors(cls, values) -> Model:
        m = object.__new__(cls)
        d = m.__dict__
        for name in cls._qv_fields:
            d[name] = values[name]
        object.__setattr__(m, "_qv_tensors", tuple(d[n] for n in cls._qv_param_names))
        object.__setattr__(m, "_qv_depth", 0)
        return m

    # --- creation -------------------------------------------------------------

    @classmethod
    def init(cls, seed) -> Model:
        """A new model with every field initialised from one generator seeded
        with ``seed``, in the order the fields are declared in the source."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ModelError(f"{cls._qv_name}.init(seed=...) needs an Int seed, found {seed!r}")
        device = cls._qv_device_or_error()
        gen = torch.Generator()
        gen.manual_seed(seed)
        values = {}
        for f in cls._qv_init_order:
            try:
                t = f.init(f.shape, f.elem.dtype, gen)
            except (ValueError, TypeError, RuntimeError) as exc:
                raise ModelError(
                    f"cannot initialise {cls._qv_name}.{f.name} ({f.type_text}) with {f.init!r}: {exc}", f.loc
                ) from None
            if not isinstance(t, torch.Tensor) or tuple(t.shape) != f.shape or t.dtype != f.elem.dtype:
                raise ModelError(
                    f"initialiser {f.init!r} of {cls._qv_name}.{f.name} gave {_describe(t)}, expected {f.type_text}",
                    f.loc,
                )
            if checks.enabled and f.elem.refinement is not None:
                problem = f.elem.value_problem(t)
                if problem is not None:
                    raise ModelError(f"{f.init!r} gives {cls._qv_name}.{f.name} ({f.type_text}) {problem}", f.loc)
            values[f.name] = t.to(device).detach()
        return cls._qv_from_tensors(values)

    # --- field assignment ---------------------------------------------------------

    def __setattr__(self, name, value):
        cls = type(self)
        field = cls._qv_fields.get(name)
        if field is None:
            raise ModelError(
                f"model {cls._qv_name} has no field {name!r}; only its params and "
                f"buffers ({', '.join(cls._qv_fields) or 'none'}) can be assigned"
            )
        cur = self.__dict__[name]
        if not isinstance(value, torch.Tensor):
            value = _number_value(cls, field, value, cur)
        if checks.enabled:
            if value.shape != cur.shape or value.dtype != cur.dtype:
                raise ModelError(
                    f"cannot assign {tensor_text(value)} to {cls._qv_name}.{name}, "
                    f"which is {field.type_text}{_where(field.loc)}"
                )
            if field.elem.refinement is not None:
                problem = field.elem.value_problem(value)
                if problem is not None:
                    raise ModelError(
                        f"cannot assign to {cls._qv_name}.{name} ({field.type_text}): {problem}{_where(field.loc)}"
                    )
        if value.requires_grad or cur.requires_grad:
            with torch.no_grad():
                cur.copy_(value)
        else:
            cur.copy_(value)

    def __delattr__(self, name):
        raise ModelError(f"cannot delete {type(self)._qv_name}.{name}")

    # --- state ------------------------------------------------------------------

    def state_dict(self) -> dict:
        """A snapshot: ``{field name: tensor}`` (copies), params then buffers,
        each in declaration order."""
        d = self.__dict__
        return {name: d[name].detach().clone() for name in type(self)._qv_fields}

    def load_state_dict(self, state) -> None:
        """Overwrite every field from ``state`` (same names, shapes, dtypes)."""
        cls = type(self)
        state = _validate_state(cls, state)
        d = self.__dict__
        with torch.no_grad():
            for name in cls._qv_fields:
                d[name].copy_(state[name])

    def save(self, path) -> None:
        """Write the model's fields to ``path`` (a torch checkpoint)."""
        torch.save(
            {"format": _FORMAT, "version": _FORMAT_VERSION, "model": type(self)._qv_name, "fields": self.state_dict()},
            path,
        )

    @classmethod
    def load(cls, path) -> Model:
        """A new model with the fields saved by :meth:`save` at ``path``."""
        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except FileNotFoundError:
            raise ModelError(f"cannot load {cls._qv_name}: no file {str(path)!r}") from None
        except Exception as exc:
            raise ModelError(f"cannot load {cls._qv_name} from {str(path)!r}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ModelError(f"cannot load {cls._qv_name}: {str(path)!r} is not a saved Quiver model")
        if data.get("model") != cls._qv_name:
            raise ModelError(f"cannot load {cls._qv_name}: {str(path)!r} holds a {data.get('model')}")
        state = _validate_state(cls, data.get("fields"))
        device = cls._qv_device_or_error()
        values = {name: state[name].to(device).detach().clone() for name in cls._qv_fields}
        return cls._qv_from_tensors(values)

    def __repr__(self) -> str:
        cls = type(self)
        d = self.__dict__
        parts = []
        for name in cls._qv_fields:
            kind = "param" if name in cls._qv_param_names else "buffer"
            t = d[name]
            text = f"{kind} {name}: {tensor_text(t)}"
            if t.dim() == 0:
                text += f" = {t.item()!r}"
            parts.append(text)
        where = "" if cls._qv_torch_device.type == "cpu" else f" on {cls._qv_device}"
        return f"{cls._qv_name}{where}(" + ", ".join(parts) + ")"

    def __reduce__(self):
        raise ModelError(f"a {type(self)._qv_name} cannot be pickled; use .save(path) / .load(path)")


def field_add(m, name, value, alpha=1) -> None:
    """``m.<name> = m.<name> + alpha * value``, computed in place.

    The compiler may emit this for ``m.f = m.f + e``, ``m.f = m.f - e`` and
    ``m.f = m.f - s * e`` (alpha = 1, -1, -s, with ``s`` a plain number).  The
    result, the checks and the errors are those of the plain assignment; the
    difference is speed: one fused pass (``Tensor.add_(value, alpha=...)``)
    instead of two temporaries and a copy.  Where the in-place form could
    differ it falls back to the plain assignment: a refined element type, an
    ``alpha`` that is not a plain number, a ``value`` that is neither a tensor
    nor a plain number, a ``value`` that overlaps the field's memory (torch
    refuses the in-place op, then the plain form runs).
    """
    cls = type(m)
    try:
        field = cls._qv_fields.get(name)
    except AttributeError:
        raise ModelError(f"a field update needs a model, found {cls.__name__}") from None
    if field is None:
        return m.__setattr__(name, value)  # raises the unknown-field error
    cur = m.__dict__[name]
    ta = type(alpha)
    tv = type(value)
    if (ta is not int and ta is not float) or field.elem.refinement is not None:
        return _plain_add(m, name, cur, value, alpha)
    if tv is int or tv is float:
        if checks.enabled and (tv is float or ta is float) and not cur.dtype.is_floating_point:
            _dtype_error(cls, field, name, cur, torch.get_default_dtype())
        cur.add_(value * alpha if alpha != 1 else value)
        return
    if not isinstance(value, torch.Tensor):
        return _plain_add(m, name, cur, value, alpha)
    if checks.enabled:
        if value.shape != cur.shape:
            try:
                shape = torch.broadcast_shapes(cur.shape, value.shape)
            except RuntimeError:
                shape = None
            if shape != cur.shape:
                raise ModelError(
                    f"cannot update {cls._qv_name}.{name}, which is {field.type_text}, "
                    f"with {tensor_text(value)}{_where(field.loc)}"
                )
        if value.dtype != cur.dtype:
            result = torch.result_type(cur, value)
            if ta is float and not result.is_floating_point:
                result = torch.get_default_dtype()
            if result != cur.dtype:
                _dtype_error(cls, field, name, cur, result)
        elif ta is float and not cur.dtype.is_floating_point:
            _dtype_error(cls, field, name, cur, torch.get_default_dtype())
    try:
        if value.requires_grad or cur.requires_grad:
            with torch.no_grad():
                cur.add_(value, alpha=alpha)
        else:
            cur.add_(value, alpha=alpha)
    except RuntimeError as exc:
        if "single memory location" not in str(exc):
            raise
        _plain_add(m, name, cur, value.clone(), alpha)


def _plain_add(m, name, cur, value, alpha):
    m.__setattr__(name, cur + value if alpha == 1 else cur + alpha * value)


def _dtype_error(cls, field, name, cur, result):
    raise ModelError(
        f"cannot assign {dims_text(tuple(cur.shape))} {dtype_name(result)} to "
        f"{cls._qv_name}.{name}, which is {field.type_text}{_where(field.loc)}"
    )


def _describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return tensor_text(x)
    return type(x).__name__


def _number_value(cls, field, value, cur) -> torch.Tensor:
    if isinstance(value, (bool, int, float)) and cur.dim() == 0:
        return torch.tensor(value, dtype=cur.dtype, device=cur.device)
    raise ModelError(
        f"cannot assign {_value_text(value)} to {cls._qv_name}.{field.name}, "
        f"which is {field.type_text}{_where(field.loc)}"
    )


def _value_text(value) -> str:
    if isinstance(value, (bool, int, float)):
        return f"{type(value).__name__} {value!r}"
    return f"a {type(value).__name__}"


def _validate_state(cls, state: object) -> dict[str, torch.Tensor]:
    """``state`` itself if it is a dict of tensors that fits ``cls``; else a ModelError."""
    if not isinstance(state, dict):
        raise ModelError(f"{cls._qv_name}: a state must be a dict of tensors, found {type(state).__name__}")
    missing = [n for n in cls._qv_fields if n not in state]
    extra = [n for n in state if n not in cls._qv_fields]
    if missing or extra:
        bits = []
        if missing:
            bits.append("missing " + ", ".join(missing))
        if extra:
            bits.append("unknown " + ", ".join(map(str, extra)))
        raise ModelError(f"state does not fit {cls._qv_name}: " + "; ".join(bits))
    for name, f in cls._qv_fields.items():
        t = state[name]
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != f.shape or t.dtype != f.elem.dtype:
            raise ModelError(f"state does not fit {cls._qv_name}: {name} is {_describe(t)}, expected {f.type_text}")
    return state


def model_class_of(x):
    """The model class of a model instance or class, else None."""
    if isinstance(x, type) and issubclass(x, Model):
        return x
    if isinstance(x, Model):
        return type(x)
    return None


__all__ = ["Field", "Model", "Elem", "dtype_name"]
