"""Argument specs and signatures: the checks compiled functions run on entry.

``Signature.check(*args)`` verifies every argument against its spec and binds
the generic dims (``b`` in ``[b 784]``) consistently across the arguments of
one call.  On the first mismatch it raises :class:`CheckError` whose location
is the parameter's declaration and whose message names the function, the
parameter, what was expected and what was found.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

from ._checks import transforms as _transforms
from ._elems import Elem, ElemVar, dims_text, elem_of, tensor_text
from ._errors import CheckError, ValueCheckError
from ._grad_value import Grad, _layout, _selection
from ._model import Model, ModelStack
from ._modes import EvalMode, Mode, Train
from ._optim import Optimizer

_Tensor = torch.Tensor


def describe(x) -> str:
    """A short text for a run-time value, as argument errors show it."""
    if isinstance(x, _Tensor):
        return tensor_text(x)
    if isinstance(x, Model):
        return f"model {type(x)._qv_name}"
    if isinstance(x, Grad):
        return x._qv_layout.text
    if isinstance(x, Optimizer):
        return x._qv_kind_text()
    if isinstance(x, Mode):
        return repr(x)
    if isinstance(x, ModelStack):
        items = x._qv_items
        return f"a stack of {len(items)} model{'s' if len(items) != 1 else ''}" + (
            f" {type(items[0])._qv_name}" if items else ""
        )
    if isinstance(x, bool):
        return f"Bool {x}"
    if isinstance(x, numbers.Integral):
        return f"Int {x}"
    if isinstance(x, numbers.Real):
        return f"Float {x!r}"
    if isinstance(x, str):
        return f"Str {x!r}"
    if x is None:
        return "nothing (None)"
    if isinstance(x, tuple):
        return "(" + ", ".join(describe(v) for v in x) + ")"
    if isinstance(x, type) and issubclass(x, Model):
        return f"the model class {x._qv_name} (not a model value)"
    return f"a Python {type(x).__name__}"


class ArgSpec:
    """Base class of the argument specs. ``_check(value, env, sig)`` raises
    CheckError unless ``value`` fits; it returns True when the value is a
    model or tensor (or holds one) that is not on the CPU, so that a call
    whose arguments are all on the CPU skips the device rule."""

    __slots__ = ("name", "loc", "label")
    generic = False

    def __init__(self, name, loc):
        self.name = name
        self.loc = loc
        self.label = f"argument '{name}'"

    def type_text(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fail(self, sig, found, error=CheckError):
        raise error(
            f"{sig.name}(): {self.label} expected {self.type_text()}, found {found}",
            self.loc if self.loc is not None else sig.loc,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}: {self.type_text()})"


class DimExpr:
    """A dim computed from generic dims, as the compiler writes it: ``(t+1)``.
    ``tree`` is an int, a generic dim's name, or ``("+" | "*" | "/", a, b)``
    (``/`` floored). It is checked once every name in it is bound."""

    __slots__ = ("text", "tree", "names", "solve")

    def __init__(self, text: str, tree, solve=None) -> None:
        self.text = text
        self.tree = tree
        self.names = frozenset(_tree_names(tree))
        # (name, c, k) when the dim is c*name + k: an argument's size binds name
        self.solve = solve

    def value(self, env) -> int | None:
        """Its size with the call's bindings, or None while a name is unbound."""
        if env is None or not all(n in env for n in self.names):
            return None
        return _evaluate(self.tree, env)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"DimExpr({self.text!r})"


def _tree_names(tree) -> set:
    if isinstance(tree, str):
        return {tree}
    if isinstance(tree, tuple):
        return _tree_names(tree[1]) | _tree_names(tree[2])
    return set()


def _evaluate(tree, env) -> int:
    if isinstance(tree, int):
        return tree
    if isinstance(tree, str):
        return env[tree][0]
    op, a, b = tree
    x, y = _evaluate(a, env), _evaluate(b, env)
    return x + y if op == "+" else x * y if op == "*" else x // y


class TensorArg(ArgSpec):
    """A tensor parameter ``[dims] elem``; dims are ints (fixed), strs
    (generic) or DimExprs (computed from generic dims)."""

    __slots__ = (
        "dims",
        "elem",
        "_var",
        "_dtype",
        "_rank",
        "_size",
        "_fixed",
        "_generic",
        "_exprs",
        "_refined",
        "_rest",
    )

    def __init__(self, name, dims, elem, loc=None):
        super().__init__(name, loc)
        self.dims = tuple(dims)
        # an ElemVar: the element type of the instance's DType option, from
        # env at each call (`elem` stands in, unrefined, for what the rest reads)
        self._var = elem.option if isinstance(elem, ElemVar) else None
        self.elem: Elem = elem_of(elem) if self._var is None else elem_of(torch.float32)
        self._dtype = None if self._var is not None else self.elem.dtype
        # `('..', 'd')`, from `[.. d]`: any number of leading dims (bound once
        # per call, as a whole, under '..'), then the dims written, counted from the end
        self._rest = bool(self.dims) and self.dims[0] == ".."
        tail = self.dims[1:] if self._rest else self.dims
        self._rank = len(tail)
        for d in tail:
            if isinstance(d, bool) or not isinstance(d, (int, str, DimExpr)) or d == "..":
                raise TypeError(f"dims must be ints, names or DimExprs, found {d!r}")
        at = (lambda i: i - len(tail)) if self._rest else (lambda i: i)
        self._fixed = tuple((at(i), d) for i, d in enumerate(tail) if isinstance(d, int))
        self._generic = tuple((at(i), d) for i, d in enumerate(tail) if isinstance(d, str))
        self._exprs = tuple((at(i), d) for i, d in enumerate(tail) if isinstance(d, DimExpr))
        fixed = not self._generic and not self._exprs and not self._rest
        self._size = torch.Size(tail) if fixed else None
        self._refined = self._var is None and self.elem.refinement is not None

    @property
    def generic(self):
        # an instance's element type (`[N] dtype`) is bound per call too
        return bool(self._generic or self._exprs or self._rest or self._var)

    def type_text(self) -> str:
        return f"{dims_text(self.dims)} {self._var or self.elem.name}"

    def _check(self, a, env, sig):
        if not isinstance(a, _Tensor):
            self._fail(sig, describe(a))
        dtype = self._dtype
        if dtype is None:  # the instance's element type (bound by its ModelArg)
            bound = env.get("~" + str(self._var))
            dtype = bound[0].dtype if bound is not None else a.dtype
        if a.dtype is not dtype:
            self._fail(sig, tensor_text(a))
        off_cpu = not a.is_cpu
        if off_cpu and a.is_meta:
            self._fail(sig, f"{tensor_text(a)} on the meta device (a meta tensor has a shape but no values)")
        shape = a.shape
        if self._size is not None:
            if shape != self._size:
                self._fail(sig, tensor_text(a))
        else:
            if self._rest:
                if len(shape) < self._rank:
                    self._fail(sig, tensor_text(a))
                lead = tuple(shape[: len(shape) - self._rank])
                prev = env.get("..")
                if prev is None:
                    env[".."] = (lead, self.label)
                elif prev[0] != lead:
                    raise CheckError(
                        f"{sig.name}(): the leading dims [..] are {dims_text(prev[0])} in {prev[1]} "
                        f"but {dims_text(lead)} in {self.label} (expected {self.type_text()}, found {tensor_text(a)})",
                        self.loc if self.loc is not None else sig.loc,
                    )
            elif len(shape) != self._rank:
                self._fail(sig, tensor_text(a))
            for i, n in self._fixed:
                if shape[i] != n:
                    self._fail(sig, tensor_text(a))
            for i, g in self._generic:
                got = shape[i]
                prev = env.get(g)
                if prev is None:
                    env[g] = (got, self.label)
                elif prev[0] != got:
                    self._bind_fail(sig, g, prev, got, a)
            for i, e in self._exprs:
                want = e.value(env)
                if want is None and e.solve is not None and env is not None:
                    name, c, k = e.solve
                    if (shape[i] - k) % c:
                        self._fail(sig, f"{tensor_text(a)}: dim {i} is not {e} for any {name}")
                    env[name] = ((shape[i] - k) // c, self.label)
                elif want is not None and shape[i] != want:
                    self._fail(sig, f"{tensor_text(a)}: dim {i} must be {e} = {want}")
        if self._refined:
            problem = self.elem.value_problem(a)
            if problem is not None:
                self._fail(sig, problem, ValueCheckError)
        return off_cpu

    def _bind_fail(self, sig, g, prev, got, a):
        size, where = prev
        if where == self.label:
            what = f"dim {g} is both {size} and {got} in {self.label}"
        else:
            what = f"dim {g} is {size} in {where} but {got} in {self.label}"
        raise CheckError(
            f"{sig.name}(): {what} (expected {self.type_text()}, found {tensor_text(a)})",
            self.loc if self.loc is not None else sig.loc,
        )


class ModelArg(ArgSpec):
    """A model parameter: the value must be an instance of the model class.
    With a family (`rt.GenericModel`) and `dims`, any instance of the family
    whose dims fit: an int must be that size, a name (a generic dim of the
    function, `l: Linear[i, o]`) is bound from the instance's dims; `options`,
    when given, must be the instance's."""

    __slots__ = ("cls", "dims", "options")

    def __init__(self, name, cls, loc=None, dims=None, options=None):
        super().__init__(name, loc)
        self.cls = cls
        self.dims = tuple(dims) if dims is not None else None
        self.options = dict(options) if options is not None else None

    @property
    def generic(self):
        return _generic(self.dims)

    def type_text(self) -> str:
        if self.dims is not None:
            return f"model {self.cls._qv_name}[{', '.join(map(str, self.dims))}]"
        return f"model {self.cls._qv_name}"

    def _check(self, a, env, sig):
        if self.dims is None:
            if type(a) is not self.cls and not isinstance(a, self.cls):
                found = describe(a)
                if isinstance(a, Model) and type(a)._qv_name == self.cls._qv_name:
                    found += _other_class(a)
                self._fail(sig, found)
            return type(a)._qv_torch_device.type != "cpu"
        cls = type(a)
        if not isinstance(a, Model) or getattr(cls, "_qv_generic", None) is not self.cls:
            found = describe(a)
            if (
                isinstance(a, Model)
                and getattr(getattr(cls, "_qv_generic", None), "_qv_name", None) == self.cls._qv_name
            ):
                found += _other_class(a)
            self._fail(sig, found)
        _bind_instance(self, cls, env, sig, f"model {cls._qv_name}")
        return cls._qv_torch_device.type != "cpu"


def _generic(dims) -> bool:
    """Whether a model's `dims` in a spec name a generic dim (bound at the call)."""
    return dims is not None and any(isinstance(d, (str, DimExpr)) for d in dims)


def _family_text(family, dims) -> str:
    """A family's instance as its type is written: `Linear[i, o]`."""
    return f"{family._qv_name}[{', '.join(map(str, dims))}]"


def _bind_instance(spec, cls, env, sig, found) -> None:
    """An instance class of the spec's family against the spec's `dims` and
    `options`: an int must be that size, a name (a generic dim of the
    function) is bound from the instance's dims, consistently across the
    arguments of one call; the element types of its DType options are bound
    too, for `[.. I] dtype` in the signature."""
    if spec.options is not None and any(cls._qv_options.get(k) != v for k, v in spec.options.items()):
        spec._fail(sig, found)
    if env is not None:
        for k, v in cls._qv_options.items():
            if isinstance(v, Elem) and "~" + k not in env:
                env["~" + k] = (v, spec.label)
    for d, got in zip(spec.dims, cls._qv_dims):
        if isinstance(d, DimExpr):  # `Linear[(2*i), o]`: checked, or binds i
            want = d.value(env)
            if want is None and d.solve is not None and env is not None:
                name, c, k = d.solve
                if (got - k) % c:
                    spec._fail(sig, f"{found}: its dim {got} is not {d} for any {name}")
                env[name] = ((got - k) // c, spec.label)
            elif want is not None and got != want:
                spec._fail(sig, f"{found}: its dim {got} must be {d} = {want}")
        elif isinstance(d, str):
            prev = env.get(d) if env is not None else None
            if prev is None:
                if env is not None:
                    env[d] = (got, spec.label)
            elif prev[0] != got:
                raise CheckError(
                    f"{sig.name}(): dim {d} is {prev[0]} in {prev[1]} but {got} in {spec.label} "
                    f"(expected {spec.type_text()}, found {found})",
                    spec.loc if spec.loc is not None else sig.loc,
                )
        elif d != got:
            spec._fail(sig, found)


def _other_class(a) -> str:
    """Why a model of the right name is not the model expected: its class is
    from another load of the file, or (a notebook sets `_qv_stale_note` on
    the classes a re-run cell replaced) from an earlier run of a cell."""
    return getattr(type(a), "_qv_stale_note", " (another class of that name, from another load of the file)")


class GradArg(ArgSpec):
    """A ``Grad[M]`` parameter: a gradient of model class M, fields of the params'
    shapes and dtypes; ``wrt`` (top-level param names) for ``Grad[M, wrt=[...]]``,
    ``batch=True`` for a batched gradient ``[b] Grad[M]``. With ``dims``
    (``Grad[Linear[i, o]]``), ``cls`` is the family (``rt.GenericModel``): a
    gradient of any instance whose dims fit, as ``ModelArg`` takes them."""

    __slots__ = ("cls", "layout", "wrt", "batch", "dims", "options")

    def __init__(self, name, cls, loc=None, wrt=None, batch=False, dims=None, options=None):
        super().__init__(name, loc)
        self.cls = cls
        self.batch = bool(batch)
        self.dims = tuple(dims) if dims is not None else None
        self.options = dict(options) if options is not None else None
        if self.dims is None:
            self.wrt = None
            self.layout = _layout(cls, _selection(cls, wrt, f"rt.GradArg({name!r})"), self.batch)
        else:  # the layout is the instance's, known at the call
            self.wrt = None if wrt is None else tuple(wrt)
            self.layout = None

    @property
    def generic(self):
        return _generic(self.dims)

    def type_text(self) -> str:
        if self.layout is not None:
            return self.layout.text
        text = f"Grad[{_family_text(self.cls, self.dims)}" + (
            "" if self.wrt is None else f", wrt=[{', '.join(self.wrt)}]"
        )
        return ("[b] " if self.batch else "") + text + "]"

    def _check(self, a, env, sig):
        if type(a) is not Grad:
            self._fail(sig, describe(a))
        lay = self.layout
        if lay is None:
            cls = a._qv_model
            _fit_family(self, cls, a, env, sig)
            lay = _layout(cls, _selection(cls, self.wrt, f"rt.GradArg({self.name!r})"), self.batch)
        else:
            _same_class(self, a._qv_model, a, sig)
        if a._qv_layout is not lay:
            self._fail(sig, describe(a))
        if a._qv_trusted:
            return
        b = None
        for f, path, t in zip(lay.fields, lay.paths, a._qv_values):
            ok = isinstance(t, _Tensor) and t.dtype is f.elem.dtype
            if ok and lay.batch:
                ok = t.dim() == len(f.shape) + 1 and tuple(t.shape[1:]) == f.shape and (b is None or t.shape[0] == b)
                b = t.shape[0] if ok else b
            elif ok:
                ok = tuple(t.shape) == f.shape
            if not ok:
                want = f"{dims_text(('b', *f.shape))} {f.elem.name}" if lay.batch else f.type_text
                self._fail(sig, f"{lay.text} whose field {path} is {describe(t)} instead of {want}")
        object.__setattr__(a, "_qv_trusted", True)


_ANOTHER_LOAD = " of another class of that name (from another load of the file)"


def _fit_family(spec, cls, a, env, sig) -> None:
    """The model class `cls` of a gradient or optimizer argument `a` must be an
    instance of `spec.cls`'s family; its dims are bound as a model argument's."""
    family = getattr(cls, "_qv_generic", None)
    if family is not spec.cls:
        found = describe(a)
        if getattr(family, "_qv_name", None) == spec.cls._qv_name:
            found += _ANOTHER_LOAD
        spec._fail(sig, found)
    _bind_instance(spec, cls, env, sig, describe(a))


def _same_class(spec, cls, a, sig) -> None:
    """The model class `cls` of argument `a` must be exactly `spec.cls`."""
    if cls is not spec.cls:
        found = describe(a)
        if cls._qv_name == spec.cls._qv_name:
            found += _ANOTHER_LOAD
        spec._fail(sig, found)


class OptimArg(ArgSpec):
    """An optimizer parameter ``Adam[M]``: ``kind`` is ``rt.SGD``, ``rt.Adam`` or
    ``rt.AdamW`` (exactly that kind: an AdamW is not an Adam), for model class M;
    with ``dims`` (``Adam[Linear[i, o]]``), ``cls`` is the family and the
    optimizer's model any instance whose dims fit, as ``ModelArg`` takes them."""

    __slots__ = ("kind", "cls", "dims", "options")

    def __init__(self, name, kind, cls, loc=None, dims=None, options=None):
        super().__init__(name, loc)
        if not (isinstance(kind, type) and issubclass(kind, Optimizer) and kind is not Optimizer):
            raise TypeError(f"OptimArg kind must be rt.SGD, rt.Adam or rt.AdamW, found {kind!r}")
        self.kind = kind
        self.cls = cls
        self.dims = tuple(dims) if dims is not None else None
        self.options = dict(options) if options is not None else None

    @property
    def generic(self):
        return _generic(self.dims)

    def type_text(self) -> str:
        of = self.cls._qv_name if self.dims is None else _family_text(self.cls, self.dims)
        return f"{self.kind._qv_kind}[{of}]"

    def _check(self, a, env, sig):
        if type(a) is not self.kind:
            self._fail(sig, describe(a))
        if self.dims is not None:
            _fit_family(self, a._qv_cls, a, env, sig)
        else:
            _same_class(self, a._qv_cls, a, sig)


class ModeArg(ArgSpec):
    """A ``Mode`` parameter: ``Train(seed=...)`` or ``Eval``."""

    __slots__ = ()

    def type_text(self) -> str:
        return "Mode (Train(seed=...) or Eval)"

    def _check(self, a, env, sig):
        if type(a) is not Train and type(a) is not EvalMode:
            self._fail(sig, describe(a))


_KINDS = {
    "int": "Int",
    "float": "Float",
    "bool": "Bool",
    "str": "Str",
    int: "Int",
    float: "Float",
    bool: "Bool",
    str: "Str",
}


class NumberArg(ArgSpec):
    """A plain (non-tensor) value: kind ``int``, ``float`` (an Int is accepted
    too), ``bool`` or ``str``.  Tensors are not numbers, not even 0-dim ones."""

    __slots__ = ("kind", "size")

    def __init__(self, name, kind, loc=None, size=False):
        super().__init__(name, loc)
        key = kind.lower() if isinstance(kind, str) else kind
        if key not in _KINDS:
            raise TypeError(f"NumberArg kind must be int, float, bool or str, found {kind!r}")
        self.kind = _KINDS[key]
        # an Int that sizes the other parameters' types (`fn f(n: Int, x: [n D])`):
        # its value is the dim of its name, checked against the tensors that have it
        self.size = bool(size) and self.kind == "Int"

    @property
    def generic(self):
        return self.size

    def type_text(self) -> str:
        return self.kind

    def _check(self, a, env, sig):
        t = type(a)
        kind = self.kind
        if kind == "Float":
            if t is float or t is int:
                return
            ok = isinstance(a, numbers.Real) and not isinstance(a, (bool, _Tensor))
        elif kind == "Int":
            if t is int:
                if self.size and env is not None:
                    self._bind_size(a, env, sig)
                return
            ok = isinstance(a, numbers.Integral) and not isinstance(a, (bool, _Tensor))
        elif kind == "Bool":
            ok = t is bool or isinstance(a, np.bool_)
        else:
            ok = t is str or isinstance(a, str)
        if not ok:
            found = describe(a)
            if isinstance(a, _Tensor):
                found = "a tensor " + found + " (a tensor is not a plain number)"
            self._fail(sig, found)
        if self.size and env is not None:
            self._bind_size(a, env, sig)

    def _bind_size(self, a, env, sig):
        prev = env.get(self.name)
        if prev is None:
            env[self.name] = (a, self.label)
        elif prev[0] != a:
            raise CheckError(
                f"{sig.name}(): dim {self.name} is {prev[0]} in {prev[1]} but {self.label} is {a}",
                self.loc if self.loc is not None else sig.loc,
            )


class TupleArg(ArgSpec):
    """A tuple-typed parameter ``(A, B, ...)``; the inner specs are checked in order."""

    __slots__ = ("items",)

    def __init__(self, name, items, loc=None):
        super().__init__(name, loc)
        self.items = tuple(items)
        for i, s in enumerate(self.items):
            s.label = f"element {i} of argument '{name}'"
            if s.loc is None:
                s.loc = loc

    @property
    def generic(self):
        return any(s.generic for s in self.items)

    def type_text(self) -> str:
        return "(" + ", ".join(s.type_text() for s in self.items) + ")"

    def _check(self, a, env, sig):
        if not isinstance(a, tuple) or len(a) != len(self.items):
            self._fail(sig, describe(a))
        off_cpu = False
        for s, v in zip(self.items, a):
            if s._check(v, env, sig):
                off_cpu = True
        return off_cpu

    def _set_label(self, label):
        self.label = label
        for i, s in enumerate(self.items):
            s.label = f"element {i} of {label}"


class OptionalArg(ArgSpec):
    """A parameter ``x: A | None``: None, or a value ``inner`` checks."""

    __slots__ = ("inner",)

    def __init__(self, name, inner, loc=None):
        super().__init__(name, loc)
        self.inner = inner

    @property
    def generic(self):
        return self.inner.generic

    def type_text(self) -> str:
        return f"{self.inner.type_text()} | None"

    def _check(self, a, env, sig):
        if a is None:
            return False
        return self.inner._check(a, env, sig)

    def _set_label(self, label):
        self.label = label
        setter = getattr(self.inner, "_set_label", None)
        if setter is not None:
            setter(label)
        else:
            self.inner.label = label


def _placed_specs(spec, path, models, tensors) -> None:
    if isinstance(spec, ModelArg):
        models.append((path[0], path[1:], spec))
    elif isinstance(spec, TensorArg):
        tensors.append((path[0], path[1:], spec))
    elif isinstance(spec, TupleArg):
        for i, s in enumerate(spec.items):
            _placed_specs(s, (*path, i), models, tensors)


def _same_device(a: torch.device, b: torch.device) -> bool:
    """Whether two devices are the same: equal, or of one type where one of
    them has no index (a model declared ``on cuda``)."""
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


def _device_text(d: torch.device) -> str:
    return str(d)


_MISSING = object()


class Signature:
    """The parameters of one compiled fn (or extern fn), checked at each call."""

    __slots__ = ("src", "name", "loc", "specs", "_n", "_generic", "_models", "_tensors", "_placed")

    def __init__(self, src, name, loc, specs):
        self.src = src
        self.name = name
        self.loc = loc
        self.specs = tuple(specs)
        self._n = len(self.specs)
        self._generic = any(s.generic for s in self.specs)
        # Where the model and tensor arguments are: (index path into the args, spec).
        models: list = []
        tensors: list = []
        for i, spec in enumerate(self.specs):
            _placed_specs(spec, (i,), models, tensors)
        self._models = tuple(models)
        self._tensors = tuple(tensors)
        # one model or tensor alone has nothing to agree with
        self._placed = len(models) + len(tensors) > 1

    def check(self, *args) -> None:
        """Raise CheckError unless the arguments fit the parameters (and the
        tensor and model arguments are on one device: :meth:`check_devices`)."""
        if len(args) != self._n:
            self._arity(args)
        env = {} if self._generic else None
        off_cpu = False
        for spec, a in zip(self.specs, args):
            if spec._check(a, env, self):
                off_cpu = True
        if off_cpu and self._placed:  # all on the CPU: one device, nothing more to check
            self.check_devices(args)

    def check_devices(self, args) -> None:
        """The device rule of a call: every model argument and every tensor
        argument (tuple elements included) is on one device, the device of the
        first model argument, or without one of the first tensor argument.
        A model's device is its class's declared device (``cuda`` without an
        index matches any ``cuda:N``). The arguments must already have passed
        their specs."""
        ref = ref_spec = None
        for i, rest, spec in self._models:
            a = args[i]
            for j in rest:
                a = a[j]
            dev = type(a)._qv_torch_device
            if ref is None:
                ref, ref_spec = dev, spec
            elif dev != ref and not _same_device(dev, ref):
                self._device_fail(spec, f"model {spec.cls._qv_name} on {_device_text(dev)}", ref, ref_spec, args)
        on_cpu = ref is None or ref.type == "cpu"
        for i, rest, spec in self._tensors:
            a = args[i]
            for j in rest:
                a = a[j]
            if on_cpu and a.is_cpu:  # the common case, without making device objects
                if ref is None:
                    ref, ref_spec = a.device, spec
                continue
            dev = a.device
            if ref is None:
                ref, ref_spec, on_cpu = dev, spec, False
            elif dev != ref and not _same_device(dev, ref):
                self._device_fail(spec, f"{tensor_text(a)} on {_device_text(dev)}", ref, ref_spec, args)

    def _device_fail(self, spec, found, ref, ref_spec, args):
        whose = ref_spec.label
        if isinstance(ref_spec, ModelArg):
            whose += f", model {ref_spec.cls._qv_name}"
        raise CheckError(
            f"{self.name}(): {spec.label} expected {spec.type_text()} on {_device_text(ref)} "
            f"(the device of {whose}), found {found}",
            spec.loc if spec.loc is not None else self.loc,
        )

    def bind(self, *args) -> dict:
        """Like :meth:`check`; returns ``{generic dim: (size, where)}``."""
        if len(args) != self._n:
            self._arity(args)
        env = {}
        for spec, a in zip(self.specs, args):
            spec._check(a, env, self)
        return env

    def check_result(self, spec, value, env) -> None:
        """Check a return value against ``spec`` with the call's dim bindings."""
        spec._check(value, {} if env is None else env, self)

    def arguments(self, args: tuple, kwargs: dict) -> tuple:
        """The positional arguments of a call from Python that may name its
        arguments (`f(x=..., y=...)`); CheckError, at the fn's `.qv` line,
        for a call Python itself would refuse with a bare TypeError."""
        if not kwargs:
            if len(args) != self._n:
                self._arity(args)
            return args
        names = [s.name for s in self.specs]
        if len(args) > self._n:
            self._arity(tuple(args) + tuple(kwargs))
        out: list = list(args) + [_MISSING] * (self._n - len(args))
        for k, v in kwargs.items():
            if k not in names:
                raise CheckError(f"{self.name}() has no argument {k!r} (its arguments: {', '.join(names)})", self.loc)
            i = names.index(k)
            if out[i] is not _MISSING:
                raise CheckError(f"{self.name}(): argument {k!r} is given twice", self.loc)
            out[i] = v
        missing = [n for n, v in zip(names, out) if v is _MISSING]
        if missing:
            raise CheckError(
                f"{self.name}(): missing argument{'s' if len(missing) > 1 else ''} "
                + ", ".join(repr(m) for m in missing),
                self.loc,
            )
        return tuple(out)

    def _arity(self, args):
        names = ", ".join(s.name for s in self.specs)
        raise CheckError(
            f"{self.name}() takes {self._n} argument{'s' if self._n != 1 else ''} ({names}), found {len(args)}",
            self.loc,
        )

    def __repr__(self) -> str:
        return f"Signature({self.name}: " + ", ".join(f"{s.name}: {s.type_text()}" for s in self.specs) + ")"


class ResultCheck:
    """The check of a compiled fn's result against the refined element types
    of its declared return type (``-> [] NonNeg``, ``-> ([b] Index[10], [] Prob)``).

    Compiled code calls ``check(value, line, col)`` at each ``return`` while
    ``rt.checks.enabled``, with the ``.qv`` position of the ``return``. Only
    the values are checked (the checker has proved shapes and dtypes): a tensor
    of a refined type whose values do not fit raises :class:`ValueCheckError`
    at that position, with the message of the argument checks and of ``as``
    casts (``loss(): result expected [] NonNeg, found values below 0 or NaN
    (min nan)``). Like every value check, it is skipped inside torch.func
    transforms (per-example gradients, jvp)."""

    __slots__ = ("src", "name", "spec", "_leaves", "_scalar")

    def __init__(self, src, name, spec):
        self.src = src
        self.name = name
        self.spec = spec
        if isinstance(spec, TupleArg):
            spec._set_label("result")
        else:
            spec.label = "result"
        leaves: list = []
        _refined_specs(spec, (), leaves)
        self._leaves = tuple(leaves)
        # the common case, a `[]` result (a loss): its one value is read directly
        self._scalar = spec.elem if isinstance(spec, TensorArg) and spec._refined and not spec.dims else None

    def check(self, value, line, col):
        """``value`` itself, once its refined tensors have passed."""
        elem = self._scalar
        if elem is not None and type(value) is _Tensor and value.dtype is elem.dtype:
            if _transforms.depth:
                return value
            if torch.compiler.is_compiling():  # no .item() in a traced graph (runtime/_elems.py)
                elem.assert_in_graph(value)
                return value
            problem = elem._scalar_problem(value.item())
            if problem is None:
                return value
            raise ValueCheckError(
                f"{self.name}(): result expected {self.spec.type_text()}, found {problem}", self.src.loc(line, col)
            )
        for path, spec in self._leaves:
            t = value
            for i in path:
                t = t[i]
            if isinstance(t, _Tensor) and t.dtype is spec._dtype:
                problem = spec.elem.value_problem(t)
                if problem is not None:
                    raise ValueCheckError(
                        f"{self.name}(): {spec.label} expected {spec.type_text()}, found {problem}",
                        self.src.loc(line, col),
                    )
        return value

    def __repr__(self) -> str:
        return f"ResultCheck({self.name}: {self.spec.type_text()})"


def _refined_specs(spec, path, out) -> None:
    if isinstance(spec, TensorArg):
        if spec._refined:
            out.append((path, spec))
    elif isinstance(spec, TupleArg):
        for i, s in enumerate(spec.items):
            _refined_specs(s, (*path, i), out)
