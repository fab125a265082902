"""Models: classes whose instances hold a fixed set of named tensors.

Compiled code declares a model as a subclass of :class:`Model` with the class
attributes ``_qv_name``, ``_qv_device``, ``_qv_params`` and ``_qv_buffers``
(tuples of :class:`Field`).  Each field is an instance attribute holding a
tensor with the declared shape, dtype and device.  The tensor object of a
field never changes: assigning the field writes the new values into it.
"""

from __future__ import annotations

import torch

from . import _device
from . import _model_texts as _texts
from . import init as _init
from ._checks import checks, seed_problem
from ._dim_defaults import bool_flags, dim_default
from ._elems import Elem, dims_text, dtype_name, elem_of, tensor_text
from ._errors import ModelError, place

_RESERVED_PREFIX = "_qv_"
_FORMAT = "quiver-model"
_FORMAT_VERSION = 1


class Field:
    """A declared param or buffer: name, shape (ints), element type,
    initialiser; ``persistent=False`` for a buffer left out of ``save``,
    checkpoints and ``state_dict`` (computed again by ``init`` and ``load``)."""

    __slots__ = ("name", "shape", "elem", "init", "loc", "persistent")

    def __init__(self, name, shape, elem, init=None, loc=None, persistent=True):
        self.name = name
        self.shape = tuple(shape)
        self.elem = elem_of(elem)
        self.init = _init.zeros if init is None else init
        self.loc = loc
        self.persistent = bool(persistent)

    @property
    def type_text(self) -> str:
        return f"{dims_text(self.shape)} {self.elem.name}"

    def __repr__(self) -> str:
        return f"Field({self.name}: {self.type_text} = {self.init!r})"


class SubModel:
    """A param that is a model: ``param enc: Encoder`` (``count=None``), a
    stack ``param blocks: [L] Block`` (``count=L``) or a list of models of
    different classes ``param layers: (Layer[784, 500], Layer[500, 500])``
    (``cls`` a tuple of classes, ``count`` their number; ``modes``: which
    elements' forward takes the Mode of a chained call, as torch's
    nn.Sequential)."""

    __slots__ = ("name", "cls", "count", "loc", "modes")

    def __init__(self, name, cls, count=None, loc=None, modes=None):
        self.name = name
        self.cls = cls
        self.count = len(cls) if isinstance(cls, tuple) else count
        self.loc = loc
        self.modes = modes

    @property
    def classes(self) -> tuple:
        """The class of each model the field holds (one for a single sub-model)."""
        if isinstance(self.cls, tuple):
            return self.cls
        return (self.cls,) if self.count is None else (self.cls,) * self.count

    @property
    def prefixes(self) -> list:
        return [f"{self.name}."] if self.count is None else [f"{self.name}.{k}." for k in range(self.count)]

    @property
    def type_text(self) -> str:
        if isinstance(self.cls, tuple):
            return "(" + ", ".join(getattr(c, "_qv_name", repr(c)) for c in self.cls) + ")"
        name = getattr(self.cls, "_qv_name", repr(self.cls))
        return name if self.count is None else f"[{self.count}] {name}"

    def __repr__(self) -> str:
        return f"SubModel({self.name}: {self.type_text})"


class ModelStack:
    """``m.blocks`` for ``param blocks: [L] Block``: a read-only sequence of L
    models (also used for the matching field of a gradient)."""

    __slots__ = ("_qv_items", "_qv_what", "_qv_error", "_qv_modes")

    def __init__(self, items, what, error, modes=None):
        object.__setattr__(self, "_qv_items", tuple(items))
        object.__setattr__(self, "_qv_what", what)
        object.__setattr__(self, "_qv_error", error)
        object.__setattr__(self, "_qv_modes", modes)

    def __call__(self, x, mode=None):
        """``m.main(x)``, ``m.main(x, mode)`` for a list of models: each
        one's forward on what the one before gave (torch's nn.Sequential);
        the mode goes to those whose forward takes one."""
        modes = self._qv_modes or (False,) * len(self._qv_items)
        for item, takes in zip(self._qv_items, modes):
            x = item(x, mode) if takes else item(x)
        return x

    def __len__(self):
        return len(self._qv_items)

    def __iter__(self):
        return iter(self._qv_items)

    def __getitem__(self, i):
        items = self._qv_items
        if isinstance(i, bool) or not isinstance(i, int):
            raise self._qv_error(f"{self._qv_what} needs an Int index, found {type(i).__name__}")
        if not -len(items) <= i < len(items):  # (as Python's: -1 is the last)
            raise self._qv_error(f"index {i} is out of range for {self._qv_what}, a stack of {len(items)}")
        return items[i]

    def __setitem__(self, i, value):
        raise self._qv_error(f"{self._qv_what} is read-only: assign the fields of {self._qv_what}[i] instead")

    def __setattr__(self, name, value):
        raise self._qv_error(f"{self._qv_what} is read-only")

    def __repr__(self) -> str:
        return "[" + ", ".join(map(repr, self._qv_items)) + "]"


def _where(loc) -> str:
    return "" if loc is None else f" (declared at {place(loc)}:{loc.col})"


class Model:
    """Base class of compiled models.  Create instances with ``M.init(seed=...)``
    or ``M.load(path)``."""

    __slots__ = ("__dict__", "__weakref__", "_qv_tensors", "_qv_depth")

    _qv_name = "Model"
    _qv_device = "cpu"
    _qv_params: tuple = ()
    _qv_buffers: tuple = ()
    _qv_ties: tuple = ()  # (tied path, source path) pairs: one tensor in two places
    _qv_tie_paths: tuple = ()
    _qv_tie_index: tuple = ()
    _qv_file_name: str  # its name in a saved file, where not _qv_name (_model_texts.file_name)
    _qv_tied: frozenset = frozenset()

    # --- class set-up ---------------------------------------------------------

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_qv_name" not in cls.__dict__:
            cls._qv_name = cls.__name__
        params = tuple(cls._qv_params)
        buffers = tuple(cls._qv_buffers)
        fields = {}
        subs = {}
        for f in params + buffers:
            is_sub = isinstance(f, SubModel) and f in params
            if isinstance(f, SubModel) and not is_sub:
                raise ModelError(f"model {cls._qv_name}: a sub-model must be a param, found buffer {f!r}")
            if not isinstance(f, Field) and not is_sub:
                raise ModelError(f"model {cls._qv_name}: fields must be rt.Field or rt.SubModel, found {f!r}")
            if f.name in fields or f.name in subs:
                raise ModelError(f"model {cls._qv_name}: field {f.name!r} declared twice{_where(f.loc)}")
            if f.name.startswith(_RESERVED_PREFIX) or f.name.startswith("__"):
                raise ModelError(f"model {cls._qv_name}: field name {f.name!r} is reserved{_where(f.loc)}")
            if isinstance(f, Field) and not f.persistent and f in params:
                raise ModelError(f"model {cls._qv_name}: param {f.name!r} cannot be persistent=False{_where(f.loc)}")
            if isinstance(f, SubModel):
                count = f.count
                if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
                    raise ModelError(
                        f"model {cls._qv_name}: param {f.name!r} needs a fixed stack size, found {count!r}"
                    )
                for sub in f.classes:
                    if not (isinstance(sub, type) and issubclass(sub, Model)) or sub is Model:
                        raise ModelError(f"model {cls._qv_name}: param {f.name!r} needs a model class, found {sub!r}")
                subs[f.name] = f
                continue
            if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in f.shape):
                raise ModelError(f"model {cls._qv_name}: field {f.name!r} needs fixed dims, found {dims_text(f.shape)}")
            fields[f.name] = f
        cls._qv_fields = fields
        cls._qv_subs = subs
        cls._qv_nested = bool(subs)
        cls._qv_param_fields = params
        cls._qv_param_names = tuple(f.name for f in params)
        cls._qv_buffer_names = tuple(f.name for f in buffers)
        # The leaves: every param tensor, sub-models' params in place of the
        # sub-model (a stack: block 0's, then block 1's ...).
        leaf_paths, leaf_fields, buffer_paths, buffer_fields = [], [], [], []
        slices = {}  # top-level param name -> (start, stop) in the leaves
        # per top-level param: (name, count, first leaf, leaves per model, sub-model class);
        # a Field is (name, None, its leaf, 1, None)
        layout = []
        elems = {}  # a stack's or list's name -> (class, first leaf, end) of each model
        for f in params:
            start = len(leaf_paths)
            if isinstance(f, Field):
                layout.append((f.name, None, start, 1, None))
                leaf_paths.append(f.name)
                leaf_fields.append(f)
            else:
                parts = []
                for pre, sub in zip(f.prefixes, f.classes):
                    parts.append((sub, len(leaf_paths), len(leaf_paths) + len(sub._qv_leaf_paths)))
                    leaf_paths.extend(pre + p for p in sub._qv_leaf_paths)
                    leaf_fields.extend(sub._qv_leaf_fields)
                layout.append((f.name, f.count, start, len(f.classes[0]._qv_leaf_paths) if f.classes else 0, f.cls))
                elems[f.name] = tuple(parts)
            slices[f.name] = (start, len(leaf_paths))
        for f in buffers:
            buffer_paths.append(f.name)
            buffer_fields.append(f)
        for f in subs.values():
            for pre, sub in zip(f.prefixes, f.classes):
                buffer_paths.extend(pre + p for p in sub._qv_buffer_paths)
                buffer_fields.extend(sub._qv_buffer_fields)
        # which buffers are saved (`persistent=False` ones are not), in buffer order
        cls._qv_buffer_saved = tuple(f.persistent for f in buffer_fields)
        cls._qv_all_saved = all(cls._qv_buffer_saved)
        cls._qv_leaf_paths = tuple(leaf_paths)
        cls._qv_leaf_fields = tuple(leaf_fields)
        _set_ties(cls, params, leaf_paths, leaf_fields)
        cls._qv_buffer_paths = tuple(buffer_paths)
        cls._qv_buffer_fields = tuple(buffer_fields)
        cls._qv_param_slices = slices
        cls._qv_param_layout = tuple(layout)
        cls._qv_elems = elems
        # every field, and those that state_dict, save and load hold (the params
        # and the persistent buffers), in the order of the leaves, then the buffers
        cls._qv_all_fields = dict(zip(leaf_paths + buffer_paths, leaf_fields + buffer_fields))
        cls._qv_state_fields = {p: f for p, f in cls._qv_all_fields.items() if f.persistent}
        cls._qv_grad_layouts = {}
        # Differentiable leaves: floating (or complex) element types.
        cls._qv_diff = tuple(f.elem.dtype.is_floating_point or f.elem.dtype.is_complex for f in leaf_fields)
        cls._qv_all_diff = all(cls._qv_diff)
        everything = list(params) + list(buffers)
        if all(f.loc is not None for f in everything):
            order = sorted(everything, key=lambda f: (f.loc.line, f.loc.col))
        else:
            order = everything
        cls._qv_init_order = tuple(order)
        cls._qv_torch_device = _device.model_device(cls._qv_device)

    def __init__(self, *args, **kwargs):
        raise ModelError(
            f"create a {type(self)._qv_name} with {type(self).__name__}.init(seed=...) "
            f"or {type(self).__name__}.load(path)"
        )

    def __call__(self, *args, **kwargs):
        """`layer(x)`: the model's method `forward` (a Python caller's way;
        compiled code calls the method's function directly)."""
        forward = getattr(type(self), "forward", None)  # rt.add_methods sets it on the class
        if forward is None:
            raise ModelError(f"model {type(self)._qv_name} has no method forward, so it cannot be called")
        return forward(self, *args, **kwargs)

    def __class_getitem__(cls, key):
        """`Mlp[4]` from Python: only a model that takes dims has a class per dims."""
        if getattr(cls, "_qv_generic", None) is not None:
            raise ModelError(f"model {cls._qv_name} has its dims already: create one with .init(seed=...)")
        raise ModelError(f"model {cls._qv_name} takes no dims: create one with {cls._qv_name}.init(seed=...)")

    @classmethod
    def _qv_device_or_error(cls) -> torch.device:
        device = cls._qv_torch_device
        if device.type == "cpu":
            return device
        try:
            torch.empty(0, device=device)
        except Exception as exc:  # torch raises RuntimeError / AssertionError
            where = (
                f"is declared on {cls._qv_device}"
                if device == torch.device(cls._qv_device)
                else f"is placed on {device} (the device the run was given)"
            )
            raise ModelError(f"model {cls._qv_name} {where}, but that device is not available here ({exc})") from None
        return device

    @classmethod
    def _qv_from_tensors(cls, values, prefix="") -> Model:
        """A new instance whose fields are ``values[prefix + path]`` (a tied
        param, its source's tensor)."""
        if not prefix and not cls._qv_all_saved:
            values = cls._qv_drawn_unsaved(values)
        if cls._qv_tie_paths and not prefix:
            values = dict(values)
            for tied, source in cls._qv_tie_paths:
                values[tied] = values[source]
        m = object.__new__(cls)
        d = m.__dict__
        for name, f in cls._qv_fields.items():
            key = prefix + name
            # a buffer that is not saved: computed again, as init does
            d[name] = values[key] if f.persistent or key in values else cls._qv_unsaved_value(f)
        if cls._qv_nested:
            for name, f in cls._qv_subs.items():
                if f.count is None:
                    d[name] = f.cls._qv_from_tensors(values, f"{prefix}{name}.")
                else:
                    d[name] = ModelStack(
                        [sub._qv_from_tensors(values, prefix + pre) for pre, sub in zip(f.prefixes, f.classes)],
                        f"{cls._qv_name}.{name}",
                        ModelError,
                        f.modes,
                    )
            object.__setattr__(m, "_qv_tensors", tuple(values[prefix + p] for p in cls._qv_leaf_paths))
        else:
            object.__setattr__(m, "_qv_tensors", tuple(d[n] for n in cls._qv_param_names))
        object.__setattr__(m, "_qv_depth", 0)
        return m

    def _qv_install(self, tensors) -> None:
        """Put ``tensors`` (one per leaf, in leaf order) in the param fields of
        this model and of its sub-models, and as their ``_qv_tensors``."""
        cls = type(self)
        tensors = tied_tensors(cls, tensors)
        object.__setattr__(self, "_qv_tensors", tensors)
        d = self.__dict__
        if not cls._qv_nested:
            d.update(zip(cls._qv_param_names, tensors))
            return
        for name, count, start, size, sub in cls._qv_param_layout:
            if sub is None:
                d[name] = tensors[start]
            elif count is None:
                d[name]._qv_install(tensors[start : start + size])
            else:
                for inst, (_c, lo, hi) in zip(d[name]._qv_items, cls._qv_elems[name]):
                    inst._qv_install(tensors[lo:hi])

    def _qv_shallow(self, tensors) -> Model:
        """A new instance of this class sharing this one's buffers, whose param
        leaves are ``tensors`` (for torch.func transforms)."""
        cls = type(self)
        tensors = tied_tensors(cls, tensors)
        m = object.__new__(cls)
        d = m.__dict__
        d.update(self.__dict__)
        object.__setattr__(m, "_qv_depth", 0)
        if not cls._qv_nested:
            tensors = tuple(tensors)
            object.__setattr__(m, "_qv_tensors", tensors)
            d.update(zip(cls._qv_param_names, tensors))
            return m
        for name, count, start, size, sub in cls._qv_param_layout:
            if sub is None:
                d[name] = tensors[start]
            elif count is None:
                d[name] = d[name]._qv_shallow(tensors[start : start + size])
            else:
                stack = d[name]
                d[name] = ModelStack(
                    [
                        inst._qv_shallow(tensors[lo:hi])
                        for inst, (_c, lo, hi) in zip(stack._qv_items, cls._qv_elems[name])
                    ],
                    f"{cls._qv_name}.{name}",
                    ModelError,
                    stack._qv_modes,
                )
        object.__setattr__(m, "_qv_tensors", tuple(tensors))
        return m

    def _qv_buffer_tensors(self) -> list:
        """The buffers of this model and its sub-models, in ``_qv_buffer_paths`` order."""
        cls = type(self)
        d = self.__dict__
        out = [d[n] for n in cls._qv_buffer_names]
        for name, f in cls._qv_subs.items():
            if f.count is None:
                out.extend(d[name]._qv_buffer_tensors())
            else:
                for inst in d[name]._qv_items:
                    out.extend(inst._qv_buffer_tensors())
        return out

    def _qv_state_tensors(self) -> list:
        """The saved field tensors, in ``_qv_state_fields`` order (leaves, then
        the persistent buffers)."""
        buffers = self._qv_buffer_tensors()
        if not type(self)._qv_all_saved:
            buffers = [t for t, keep in zip(buffers, type(self)._qv_buffer_saved) if keep]
        return list(self._qv_tensors) + buffers

    def _qv_all_tensors(self) -> list:
        """Every field tensor, in ``_qv_all_fields`` order (leaves, then buffers)."""
        return list(self._qv_tensors) + self._qv_buffer_tensors()

    # --- creation -------------------------------------------------------------

    @classmethod
    def init(cls, seed) -> Model:
        """A new model with every field initialised from one generator seeded
        with ``seed``, in the order the fields are declared in the source
        (a sub-model's fields in its own declaration order, where it is declared)."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ModelError(f"{cls._qv_name}.init(seed=...) needs an Int seed, found {seed!r}")
        problem = seed_problem(seed)
        if problem is not None:
            raise ModelError(f"{cls._qv_name}.init(seed=...): {problem}")
        device = cls._qv_device_or_error()
        gen = torch.Generator()
        gen.manual_seed(seed)
        values, resets = {}, []
        cls._qv_init_values(gen, device, "", cls._qv_name + ".", values, resets)
        model = cls._qv_from_tensors(values)
        if resets:
            from ._walks import run_resets

            run_resets(model, resets)
        return model

    @classmethod
    def _qv_init_values(cls, gen, device, prefix, text, values, resets) -> None:
        for f in cls._qv_init_order:
            if isinstance(f, SubModel):
                if f.count is None:
                    f.cls._qv_init_values(gen, device, f"{prefix}{f.name}.", f"{text}{f.name}.", values, resets)
                else:
                    for k, sub in enumerate(f.classes):
                        sub._qv_init_values(
                            gen, device, f"{prefix}{f.name}.{k}.", f"{text}{f.name}[{k}].", values, resets
                        )
                continue
            values[prefix + f.name] = cls._qv_field_value(f, gen, device, text + f.name)
        if getattr(cls, "reset_parameters", None) is not None:
            # torch's reset_parameters() at the end of __init__: its walk's seed is
            # drawn here, after the model's fields (run once the model is made)
            resets.append((prefix, int(torch.randint(0, 2**62, (), generator=gen))))

    @classmethod
    def _qv_unsaved_value(cls, f) -> torch.Tensor:
        """A buffer that is not saved (``persistent=False``), for a model made
        from a checkpoint or a state: computed as ``init`` computes it (one
        drawn at random is in the values already: ``_qv_drawn_unsaved``)."""
        gen = torch.Generator()
        gen.manual_seed(0)
        return cls._qv_field_value(f, gen, cls._qv_device_or_error(), f"{cls._qv_name}.{f.name}")

    @classmethod
    def _qv_drawn_unsaved(cls, values) -> dict:
        """``values`` (a model's saved fields) with the unsaved buffers that are
        drawn at random, as ``M.init(seed=0)`` draws them: each its own numbers."""
        drawn = [p for p, f in zip(cls._qv_buffer_paths, cls._qv_buffer_fields) if getattr(f.init, "random", False)]
        if not (drawn := [p for p in drawn if p not in values]):
            return values
        gen, fresh = torch.Generator(), {}
        gen.manual_seed(0)
        cls._qv_init_values(gen, cls._qv_device_or_error(), "", cls._qv_name + ".", fresh, [])
        return {**values, **{p: fresh[p] for p in drawn}}

    @classmethod
    def _qv_field_value(cls, f, gen, device, where) -> torch.Tensor:
        """The initial value of field ``f``, checked, on ``device``."""
        try:
            if isinstance(f.init, _init.Computed):
                t = f.init.of_class(cls, f.shape, f.elem.dtype)
            else:
                t = f.init(f.shape, f.elem.dtype, gen)
        except (ValueError, TypeError, RuntimeError) as exc:
            raise ModelError(f"cannot initialise {where} ({f.type_text}) with {f.init!r}: {exc}", f.loc) from None
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != f.shape or t.dtype != f.elem.dtype:
            raise ModelError(
                f"initialiser {f.init!r} of {where} gave {_describe(t)}, expected {f.type_text}",
                f.loc,
            )
        if checks.enabled and f.elem.refinement is not None:
            problem = f.elem.value_problem(t)
            if problem is not None:
                raise ModelError(f"{f.init!r} gives {where} ({f.type_text}) {problem}", f.loc)
        return t.to(device).detach()

    # --- field assignment ---------------------------------------------------------

    def __setattr__(self, name, value):
        cls = type(self)
        field = cls._qv_fields.get(name)
        if field is None:
            if name in cls._qv_subs:
                return self._qv_assign_sub(name, value)
            raise ModelError(
                f"model {cls._qv_name} has no field {name!r}; only its params and "
                f"buffers ({', '.join(cls._qv_param_names + cls._qv_buffer_names) or 'none'}) can be assigned"
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

    def _qv_assign_sub(self, name, value):
        cls = type(self)
        f = cls._qv_subs[name]
        if isinstance(f.cls, tuple):  # a list of models: each element's fields, from the same list type
            items = value._qv_items if isinstance(value, ModelStack) else None
            if items is None or tuple(type(v) for v in items) != f.cls:
                found = _value_text(value) if items is None else "(" + ", ".join(type(v)._qv_name for v in items) + ")"
                raise ModelError(
                    f"cannot assign {found} to {cls._qv_name}.{name}, which is {f.type_text}{_where(f.loc)}"
                )
            for target, v in zip(self.__dict__[name]._qv_items, items):
                if v is not target:
                    _copy_fields(target, v)
            return
        if f.count is not None:
            raise ModelError(
                f"cannot assign {cls._qv_name}.{name} ({f.type_text}): a stack of models is read-only; "
                f"assign the fields of {cls._qv_name}.{name}[i] instead{_where(f.loc)}"
            )
        if type(value) is not f.cls:  # (a stack or list was refused above)
            found = f"model {type(value)._qv_name}" if isinstance(value, Model) else _value_text(value)
            raise ModelError(f"cannot assign {found} to {cls._qv_name}.{name}, which is {f.type_text}{_where(f.loc)}")
        target = self.__dict__[name]
        if value is target:
            return
        # every field of the sub-model, through its assignment (checked shapes)
        _copy_fields(target, value)

    def __delattr__(self, name):
        raise ModelError(f"cannot delete {type(self)._qv_name}.{name}")

    # --- state ------------------------------------------------------------------

    def state_dict(self) -> dict:
        """A snapshot: ``{path: tensor}`` (copies): the params in leaf order
        (``w``, ``enc.w1``, ``blocks.0.wq``...), then the buffers."""
        return {path: t.detach().clone() for path, t in zip(type(self)._qv_state_fields, self._qv_state_tensors())}

    def load_state_dict(self, state) -> None:
        """Overwrite every field from ``state`` (same paths, shapes, dtypes)."""
        cls = type(self)
        state = _validate_state(cls, state)
        with torch.no_grad():
            for path, t in zip(cls._qv_state_fields, self._qv_state_tensors()):
                t.copy_(state[path])

    # --- the checkpoint protocol (runtime/_checkpoint.py) -------------------------

    def _qv_state_dict(self) -> dict:
        """``{path: tensor}`` of every field (the tensors themselves, detached):
        what ``save(path, m)`` writes."""
        return {path: t.detach() for path, t in zip(type(self)._qv_state_fields, self._qv_state_tensors())}

    def _qv_load_state_dict(self, d, where) -> None:
        """Every field from ``d``, in place; a ModelError naming ``where`` and
        the field when ``d`` does not fit (a missing or extra field, another
        shape or element type)."""
        cls = type(self)
        if not isinstance(d, dict):
            raise ModelError(f"{where} holds {type(d).__name__}, not the fields of a model {cls._qv_name}")
        fields = cls._qv_state_fields
        missing = [n for n in fields if n not in d]
        extra = [str(n) for n in d if n not in fields]
        if missing or extra:
            bits = []
            if missing:
                bits.append("it lacks " + ", ".join(missing))
            if extra:
                bits.append("it has fields " + cls._qv_name + " does not: " + ", ".join(extra))
            raise ModelError(f"{where} does not fit {cls._qv_name}: " + "; ".join(bits))
        for name, f in fields.items():
            t = d[name]
            if not isinstance(t, torch.Tensor) or tuple(t.shape) != f.shape or t.dtype != f.elem.dtype:
                raise ModelError(
                    f"{where} does not fit {cls._qv_name}: {name} is {_describe(t)} in the file, "
                    f"but {cls._qv_name}.{name} is {f.type_text}{_where(f.loc)}"
                )
            problem = f.elem.value_problem(t) if f.elem.refinement is not None else None
            if problem is not None:
                raise ModelError(f"{where}: {name} does not fit {cls._qv_name}.{name} ({f.type_text}): {problem}")
        with torch.no_grad():
            for path, t in zip(fields, self._qv_state_tensors()):
                t.copy_(d[path])

    def save(self, path) -> None:
        """Write the model's fields to ``path`` (a torch checkpoint)."""
        from quiver import outputs  # (never through a link at the name, replaced whole)

        with outputs.replacing(path) as fh:
            torch.save(
                {
                    "format": _FORMAT,
                    "version": _FORMAT_VERSION,
                    "model": _texts.file_name(type(self)),
                    "fields": self.state_dict(),
                },
                fh,
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
        if data.get("model") != _texts.file_name(cls):
            raise ModelError(f"cannot load {cls._qv_name}: {str(path)!r} holds a {data.get('model')}")
        state = _validate_state(cls, data.get("fields"))
        device = cls._qv_device_or_error()
        values = {name: state[name].to(device).detach().clone() for name in cls._qv_state_fields}
        return cls._qv_from_tensors(values)

    def __repr__(self) -> str:
        cls = type(self)
        parts = []
        n_params = len(cls._qv_leaf_paths)
        for i, (path, t) in enumerate(zip(cls._qv_all_fields, self._qv_all_tensors())):
            kind = "param" if i < n_params else "buffer"
            text = f"{kind} {path}: {tensor_text(t)}"
            if t.dim() == 0:
                text += f" = {t.item()!r}"
            parts.append(text)
        dev = cls._qv_torch_device
        where = "" if dev.type == "cpu" else f" on {cls._qv_device if dev == torch.device(cls._qv_device) else dev}"
        return f"{cls._qv_name}{where}(" + ", ".join(parts) + ")"

    def _repr_html_(self) -> str:  # a notebook's display: a table of the fields
        from ._display import model_html

        return model_html(self)

    def __reduce__(self):
        raise ModelError(f"a {type(self)._qv_name} cannot be pickled; use .save(path) / .load(path)")


def _set_ties(cls, params, leaf_paths, leaf_fields) -> None:
    """Tied params (``_qv_ties``: ``(("lm_head", "wte"),)``, paths relative
    to the class): one tensor that is the param of two places, as torch's
    ``self.lm_head.weight = self.wte.weight``. Sets ``_qv_tie_paths`` (every
    tie of the class and of its sub-models, full paths), ``_qv_tie_index``
    ((tied leaf, source leaf) pairs) and ``_qv_tied`` (the tied leaves)."""
    ties = []
    subs = {f.name: f for f in params if isinstance(f, SubModel)}
    for tied, source in cls.__dict__.get("_qv_ties", ()):
        a, b = subs.get(tied), subs.get(source)
        if a is not None and b is not None and a.classes == b.classes and a.count == b.count:
            # two sub-models made one: each of their leaves
            ks = [""] if a.count is None else [f"{k}." for k in range(a.count)]
            ties += [
                (f"{tied}.{k}{p}", f"{source}.{k}{p}") for k, sub in zip(ks, a.classes) for p in sub._qv_leaf_paths
            ]
        else:
            ties.append((tied, source))
    for f in params:
        if isinstance(f, SubModel):
            ties += [(pre + t, pre + s) for pre, sub in zip(f.prefixes, f.classes) for t, s in sub._qv_tie_paths]
    index = {p: i for i, p in enumerate(leaf_paths)}
    pairs = []
    for tied, source in ties:
        for p in (tied, source):
            if p not in index:
                raise ModelError(f"model {cls._qv_name}: tie {tied} = {source}: {p} is not a param path")
        a, b = leaf_fields[index[tied]], leaf_fields[index[source]]
        if a.shape != b.shape or a.elem.dtype != b.elem.dtype or tied == source:
            raise ModelError(f"model {cls._qv_name}: cannot tie {tied} ({a.type_text}) to {source} ({b.type_text})")
        pairs.append((index[tied], index[source]))
    tied_set = {t for t, _ in pairs}
    if any(s in tied_set for _, s in pairs) or len(tied_set) != len(pairs):
        raise ModelError(f"model {cls._qv_name}: a tied param is tied once, to a param that is not tied itself")
    cls._qv_tie_paths = tuple(ties)
    cls._qv_tie_index = tuple(pairs)
    cls._qv_tied = frozenset(tied_set)


def tied_tensors(cls, tensors) -> tuple:
    """``tensors`` (one per leaf) with each tied leaf given its source's."""
    tensors = tuple(tensors)
    if not cls._qv_tie_index:
        return tensors
    out = list(tensors)
    for t, s in cls._qv_tie_index:
        out[t] = out[s]
    return tuple(out)


def _copy_fields(target, value) -> None:
    cls = type(target)
    d, v = target.__dict__, value.__dict__
    for name in cls._qv_param_names + cls._qv_buffer_names:
        if name in cls._qv_subs:
            f = cls._qv_subs[name]
            if f.count is None:
                _copy_fields(d[name], v[name])
            else:
                for a, b in zip(d[name]._qv_items, v[name]._qv_items):
                    _copy_fields(a, b)
        else:
            target.__setattr__(name, v[name])


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
    fields = cls._qv_state_fields
    missing = [n for n in fields if n not in state]
    extra = [n for n in state if n not in fields]
    if missing or extra:
        bits = []
        if missing:
            bits.append("missing " + ", ".join(missing))
        if extra:
            bits.append("unknown " + ", ".join(map(str, extra)))
        raise ModelError(f"state does not fit {cls._qv_name}: " + "; ".join(bits))
    for name, f in fields.items():
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


__all__ = ["Field", "Model", "ModelStack", "SubModel", "Elem", "dtype_name"]


class GenericModel:
    """A model that takes dims and options (``model Linear[I, O, bias: Bool =
    True]``): ``Linear.of(784, 128)`` (or ``Linear[784, 128]``,
    ``Linear.of(784, 128, bias=False)``) is the model class of that instance,
    made once by the compiled factory ``make(I, O, bias)`` and kept. Each
    class made knows its family (``_qv_generic``), its dims (``_qv_dims``) and
    its options (``_qv_opt_<name>``, and ``_qv_options``)."""

    def __init__(self, name, make, dims, options=(), defaults=(), models=()):
        self._qv_name = name
        self._make = make
        # `model ResNet[B: ResBlock, E]`: the model parameters, given first (families)
        self._qv_model_names = tuple(models)
        self._qv_dim_names = tuple(dims)
        self._qv_option_defaults = dict(options)
        self._qv_dim_defaults = dict(defaults)  # `stride = 1`, `stride = "K"`: the last dims
        self._qv_prefix = ""  # `nn.` for a model of an imported module (rt.name_imported)
        self._classes: dict = {}
        self._methods: dict = {}

    def of(self, *dims, **options) -> type[Model]:
        """The class of one instance: its dims in order (those with defaults
        may be left out or given by name, ``stride=2``), then its options."""
        given_models = dims[: len(self._qv_model_names)]
        dims = dims[len(self._qv_model_names) :]
        if len(given_models) < len(self._qv_model_names):
            wanted = ", ".join(self._qv_model_names)
            raise ModelError(f"model {self._qv_name} takes a model for each of {wanted} first")
        for n, family in zip(self._qv_model_names, given_models):
            if not isinstance(family, GenericModel):
                raise ModelError(f"model {self._qv_name}: {n} must be a model that takes dims, found {family!r}")
        names = self._qv_dim_names
        if len(dims) > len(names):
            count = f"{len(names)} dim{'s' if len(names) != 1 else ''}"
            raise ModelError(f"model {self._qv_name} takes {count} ({', '.join(names)}), found {len(dims)}")
        given = dict(zip(names, dims))
        flags = bool_flags(self._qv_option_defaults, options)  # `num_directions = 1 + bidirectional`
        for n in names[len(dims) :]:
            if n in options:
                given[n] = options.pop(n)
            elif n in self._qv_dim_defaults:
                # a number, the name of a dim before n or of a Bool option, or arithmetic of those (`P = K // 2`)
                given[n] = dim_default(self._qv_name, n, self._qv_dim_defaults[n], {**flags, **given})
            else:
                raise ModelError(f"model {self._qv_name} needs its dim {n} ({', '.join(names)})")
        dims = tuple(given[n] for n in names)
        for n, d in zip(names, dims):
            # 0 is a size too (`padding = 0`); the checker proves what each dim must be
            if isinstance(d, bool) or not isinstance(d, int) or d < 0:
                raise ModelError(f"model {self._qv_name}: dim {n} must be an Int >= 0, found {d!r}")
        chosen = dict(self._qv_option_defaults)
        for k, v in options.items():
            if k not in chosen:
                raise ModelError(_texts.no_option(self, k))
            if isinstance(chosen[k], bool) and not isinstance(v, bool):
                raise ModelError(f"model {self._qv_name}: option {k} must be True or False, found {v!r}")
            if isinstance(chosen[k], Elem):  # a DType option: rt.f64 or torch.float64
                try:
                    v = elem_of(v)
                except TypeError:
                    v = None
                if v is None or not v.is_float or v.refinement is not None:
                    raise ModelError(f"model {self._qv_name}: option {k} must be a float element type (f32, f64, ...)")
            elif not isinstance(chosen[k], bool):  # a Float option (`eps: Float = 1e-5`)
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ModelError(f"model {self._qv_name}: option {k} must be a number, found {v!r}")
                v = float(v)
            chosen[k] = v
        key = (tuple(given_models), tuple(dims), tuple(chosen.items()))
        cls = self._classes.get(key)
        if cls is None:
            cls = self._make(*given_models, *dims, **chosen)
            cls._qv_models = dict(zip(self._qv_model_names, given_models))
            cls._qv_generic = self
            # its repr: <class 'quiver_compiled.prog.GCN[3, 16, 4]'>; its name in a saved file
            cls.__qualname__ = cls._qv_file_name = cls._qv_name
            cls._qv_name = self._qv_prefix + cls._qv_name  # in messages: `nn.Linear[4, 1]`
            cls._qv_dims = tuple(dims)
            cls._qv_options = dict(chosen)
            for k, v in chosen.items():
                setattr(cls, f"_qv_opt_{k}", v)
            for k, fn in self._methods.items():
                setattr(cls, k, fn)
            self._classes[key] = cls
        return cls

    def __getitem__(self, key) -> type[Model]:
        """`Linear[784, 128]`: the class of the instance with these dims and
        the default options (Python's subscript takes no `name=value`: give
        options with `of`)."""
        return self.of(*(key if isinstance(key, tuple) else (key,)))

    def __instancecheck__(self, value) -> bool:
        """`isinstance(m, Linear)`: m is an instance of the family, whatever its dims and options."""
        return isinstance(value, Model) and getattr(type(value), "_qv_generic", None) is self

    def __subclasscheck__(self, cls) -> bool:
        """`issubclass(Linear[4, 1], Linear)`."""
        return isinstance(cls, type) and getattr(cls, "_qv_generic", None) is self

    def __call__(self, *args, **kwargs):  # a message for Python callers who write Linear(4, 1)
        raise ModelError(_texts.how_to_make(self))

    def add_methods(self, **methods) -> None:
        """The model's methods (the compiled functions), on every class of the family."""
        self._methods.update(methods)
        for cls in self._classes.values():
            for k, fn in methods.items():
                setattr(cls, k, fn)

    def init(self, seed):  # a message for Python callers
        raise ModelError(_texts.how_to_make(self))

    def __repr__(self) -> str:
        """`<model Linear[I, O, bias: Bool = True, dtype: DType = f32]>`: what it takes, as declared."""
        return _texts.family_repr(self)


def add_methods(cls, **methods) -> None:
    """A (non-generic) model's methods, as attributes of its class."""
    if isinstance(cls, GenericModel):
        cls.add_methods(**methods)
        return
    for k, fn in methods.items():
        setattr(cls, k, fn)
