"""Optimizers: ``rt.SGD``, ``rt.Adam`` and ``rt.AdamW``.

An optimizer belongs to one model instance.  ``opt.step(m, g)`` takes one step
of the algorithm on the params of ``m`` with the gradient ``g`` (a ``Grad`` of
``m``'s class), in place and outside autograd.  The arithmetic is torch's own:
the functional forms behind ``torch.optim.SGD`` / ``Adam`` / ``AdamW``
(``torch.optim.sgd.sgd``, ``torch.optim.adam.adam``) with ``foreach=True``, on
lists of the params, the gradient's tensors and the optimizer's state, so the
numbers are those of ``torch.optim`` with ``foreach=True``.  ``.grad`` of a
param is neither read nor written.

A gradient may cover a selection of the model's params
(``g._qv_leaf_index``): only those are stepped; the others keep their values
and their state, as torch.optim leaves a param whose ``.grad`` is None.
Params that are not floating (integer, Bool) are never stepped.

Checkpoints: an optimizer's state is saved and loaded through
``_qv_state_dict`` / ``_qv_load_state_dict`` (the protocol of
runtime/_checkpoint.py). The base class implements both from
``_qv_state_slots``, the names of the attributes that hold one entry per leaf
param (SGD: ``_qv_bufs``; Adam: the moments and the step counts), plus the
learning rate, the steps taken and the hyper-params of ``_qv_hyper``, which
must match on loading (lr, steps, and the momentum or betas a schedule moves,
are restored). Loading copies into the tensors the optimizer holds, so Adam's cached lists (``_qv_full``) stay
valid; an optimizer with other caches, or state that is not per param,
overrides the two methods.
"""

from __future__ import annotations

import numbers

import torch
from torch.optim.adam import adam as _adam
from torch.optim.sgd import sgd as _sgd

from ._checks import checks
from ._elems import tensor_text
from ._errors import OptimError
from ._grad_value import Grad
from ._model import Model
from ._optim_groups import apply_groups, check_groups_state, groups_state, load_groups_state, set_groups

_set_grad_enabled = torch._C._set_grad_enabled
_is_grad_enabled = torch.is_grad_enabled


def _leaf_names(cls) -> tuple:
    """A name for each leaf param of ``cls`` (``_qv_tensors`` order): its path."""
    return cls._qv_leaf_paths


def _leaf_fields(cls) -> tuple:
    """The Field of each leaf param of ``cls``."""
    return cls._qv_leaf_fields


def _found(x) -> str:
    if isinstance(x, Model):
        return f"a model {type(x)._qv_name}"
    if isinstance(x, Grad):
        return f"Grad[{x._qv_model._qv_name}]"
    if isinstance(x, torch.Tensor):
        return f"a tensor {tensor_text(x)}"
    if isinstance(x, Optimizer):
        return x._qv_kind_text()
    if isinstance(x, bool):
        return f"Bool {x}"
    if isinstance(x, int):
        return f"Int {x}"
    if isinstance(x, float):
        return f"Float {x!r}"
    if x is None:
        return "nothing (None)"
    return f"a Python {type(x).__name__}"


def _number(kind: str, what: str, x) -> float:
    """``x`` as a Python float: a plain number or a one-element tensor."""
    if isinstance(x, torch.Tensor) and x.numel() == 1 and not x.dtype.is_complex and x.dtype is not torch.bool:
        return float(x)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise OptimError(f"{kind}: {what} must be a number, found {_found(x)}")
    return float(x)


def _at_least_zero(kind: str, what: str, x) -> float:
    v = _number(kind, what, x)
    if not v >= 0.0:  # also NaN
        raise OptimError(f"{kind}: invalid {what} {v!r} (it must be >= 0)")
    return v


def _flag(kind: str, what: str, x) -> bool:
    if not isinstance(x, bool):
        raise OptimError(f"{kind}: {what} must be True or False, found {_found(x)}")
    return x


# Hyper-params that OneCycleLR's cycle_momentum changes step by step: a
# checkpoint restores them with lr (torch's load_state_dict restores every
# group's values), where the others must equal the file's.
_MOVED_BY_SCHEDULES = ("momentum", "betas")


def _moved_value(me: str, where: str, h: str, v):
    if h == "betas" and isinstance(v, (list, tuple)) and len(v) == 2:
        return (_number(me, f"{where}: betas[0]", v[0]), _number(me, f"{where}: betas[1]", v[1]))
    if h == "momentum" and v is not None:
        return _at_least_zero(me, f"{where}: momentum", v)
    raise OptimError(f"{where}: the {h} saved there is {_found(v)}, which does not fit {me}")


def scalar_dtype():
    """The dtype of torch.optim's step counts: float64 under a float64 default, else float32."""
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


class Optimizer:
    """Base class of ``rt.SGD``, ``rt.Adam`` and ``rt.AdamW``."""

    __slots__ = (
        "_qv_m",
        "_qv_cls",
        "_qv_params",
        "_qv_names",
        "_qv_fields",
        "_qv_float",
        "_qv_float_set",
        "_qv_all_float",
        "_qv_float_params",
        "_qv_refined",
        "_qv_lr",
        "_qv_steps",
        "_qv_groups",
    )
    _qv_kind = "Optimizer"
    _qv_hyper: tuple = ()
    # the attributes holding per-param state: each a list with one entry per
    # leaf param (a tensor, or None before that param's first step), or None
    # as a whole (Adam's max_exp_avg_sq without amsgrad). Saved and loaded by
    # _qv_state_dict / _qv_load_state_dict (the checkpoint protocol).
    _qv_state_slots: tuple[str, ...] = ()

    def _qv_setup(self, m) -> None:
        kind = type(self)._qv_kind
        if not isinstance(m, Model):
            raise OptimError(f"rt.{kind}(m, ...) needs a model instance, found {_found(m)}")
        cls = type(m)
        params = tuple(m._qv_tensors)
        diff = tuple(cls._qv_diff)
        if len(params) != len(diff):  # pragma: no cover - a model built by the runtime
            raise OptimError(f"rt.{kind}: model {cls._qv_name} has {len(params)} params but {len(diff)} kinds")
        fields = _leaf_fields(cls)
        # the params value_and_grad differentiates; a tied param is its source's tensor, stepped once
        floating = tuple(i for i, d in enumerate(diff) if d and i not in cls._qv_tied)
        s = object.__setattr__
        s(self, "_qv_m", m)
        s(self, "_qv_cls", cls)
        s(self, "_qv_params", params)
        s(self, "_qv_names", _leaf_names(cls))
        s(self, "_qv_fields", fields)
        s(self, "_qv_float", floating)
        s(self, "_qv_float_set", frozenset(floating))
        s(self, "_qv_all_float", len(floating) == len(params))
        s(self, "_qv_float_params", [params[i] for i in floating])
        s(
            self,
            "_qv_refined",
            frozenset(i for i in floating if fields[i] is not None and fields[i].elem.refinement is not None),
        )
        s(self, "_qv_steps", 0)
        s(self, "_qv_groups", None)

    # --- hyper-params -------------------------------------------------------------

    @property
    def lr(self) -> float:
        """The learning rate (settable: a number >= 0 or a one-element tensor)."""
        return self._qv_lr

    @property
    def steps(self) -> int:
        """How many times :meth:`step` has run."""
        return self._qv_steps

    @property
    def model(self):
        """The model instance this optimizer steps."""
        return self._qv_m

    def __setattr__(self, name, value):
        if name == "lr":
            object.__setattr__(self, "_qv_lr", _at_least_zero(self._qv_kind_text(), "learning rate", value))
            for _, over in self._qv_groups or ():  # every group's lr (param groups: runtime/_optim_groups.py)
                over.pop("lr", None)
            return
        raise OptimError(f"cannot set {name!r} of {self._qv_kind_text()}: only lr can be changed after creation")

    def __delattr__(self, name):
        raise OptimError(f"cannot delete {name!r} of {self._qv_kind_text()}")

    def _qv_kind_text(self) -> str:
        return f"{type(self)._qv_kind}[{self._qv_cls._qv_name}]"

    def __repr__(self) -> str:
        hyper = ", ".join(f"{h}={getattr(self, h)!r}" for h in type(self)._qv_hyper)
        return f"{self._qv_kind_text()}({hyper}, steps={self._qv_steps})"

    def __reduce__(self):
        raise OptimError(f"a {self._qv_kind_text()} cannot be pickled")

    def _qv_state(self, tensors) -> Grad:
        """A snapshot of per-leaf state as a gradient of the model."""
        return Grad._make(self._qv_cls, [t.detach().clone() for t in tensors])

    # --- checkpoints (runtime/_checkpoint.py) ------------------------------------------

    def _qv_state_dict(self) -> dict:
        """``{"kind", "lr", "steps", "hyper": {name: value}, "state": {slot:
        {param path: tensor or None} or None}}``: what ``save`` writes."""
        names = self._qv_names
        state = {}
        for slot in type(self)._qv_state_slots:
            values = getattr(self, slot)
            key = slot.removeprefix("_qv_")
            state[key] = None if values is None else dict(zip(names, values))
        hyper = {h: getattr(self, h) for h in type(self)._qv_hyper if h != "lr"}
        return {
            "kind": type(self)._qv_kind,
            "lr": self._qv_lr,
            "steps": self._qv_steps,
            "hyper": hyper,
            "state": state,
            "groups": groups_state(self),  # each group's params and its overrides (a schedule changes their lr)
        }

    def _qv_load_state_dict(self, d, where) -> None:
        """The state saved by :meth:`_qv_state_dict`, in place: the same kind,
        the same hyper-params (lr excepted: it is restored, as steps is) and
        state of the params' shapes. Tensors are copied into those the
        optimizer holds (a param's first state is made here)."""
        me = self._qv_kind_text()
        if not isinstance(d, dict) or not {"kind", "lr", "steps", "hyper", "state"} <= set(d):
            raise OptimError(f"{where} holds no optimizer state (found {_found(d)})")
        if d["kind"] != type(self)._qv_kind:
            raise OptimError(f"{where} holds {d['kind']} state, not the state of {me}")
        hyper = d["hyper"] if isinstance(d["hyper"], dict) else {}
        check_groups_state(self, d.get("groups"), where)  # the same params in the same groups
        moved = {}  # restored, not checked: a schedule (OneCycleLR) moves them as it moves lr
        for h in type(self)._qv_hyper:
            if h == "lr":
                continue
            if h in _MOVED_BY_SCHEDULES:
                moved[h] = _moved_value(me, where, h, hyper.get(h))
                continue
            mine = getattr(self, h)
            theirs = hyper.get(h)
            if isinstance(mine, tuple) and isinstance(theirs, list):
                theirs = tuple(theirs)
            if theirs != mine:
                raise OptimError(
                    f"{where}: the {d['kind']} saved there has {h}={theirs!r}, this {me} {h}={mine!r} "
                    f"(create it with the hyper-parameters of the checkpoint)"
                )
        state = d["state"] if isinstance(d["state"], dict) else {}
        names = self._qv_names
        plan = []
        for slot in type(self)._qv_state_slots:
            key = slot.removeprefix("_qv_")
            values = getattr(self, slot)
            if key not in state:
                raise OptimError(f"{where} lacks the state {key} of {me}")
            saved = state[key]
            if values is None or saved is None:
                if (values is None) != (saved is None):
                    raise OptimError(
                        f"{where}: the state {key} is {'absent' if saved is None else 'present'} there, not in {me}"
                    )
                continue
            if not isinstance(saved, dict) or set(saved) != set(names):
                lacks = [n for n in names if not isinstance(saved, dict) or n not in saved]
                extra = [str(n) for n in saved if n not in names] if isinstance(saved, dict) else []
                raise OptimError(
                    f"{where}: the state {key} does not fit {me}"
                    + (f"; it lacks {', '.join(lacks)}" if lacks else "")
                    + (f"; it has params {self._qv_cls._qv_name} does not: {', '.join(extra)}" if extra else "")
                )
            for i, n in enumerate(names):
                t, cur = saved[n], values[i]
                like = cur if cur is not None else self._qv_params[i]
                if t is None:
                    plan.append((values, i, None))
                    continue
                if not isinstance(t, torch.Tensor) or t.shape != like.shape or t.dtype != like.dtype:
                    raise OptimError(
                        f"{where}: the state {key} of {n} is {_found(t)} there, but {tensor_text(like)} in {me}"
                    )
                plan.append((values, i, t))
        lr = _at_least_zero(me, "learning rate", d["lr"])
        steps = d["steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise OptimError(f"{where}: steps is {_found(steps)}, expected an Int >= 0")
        with torch.no_grad():
            for values, i, t in plan:
                if t is None:
                    values[i] = None
                elif values[i] is not None:
                    values[i].copy_(t)
                else:
                    p = self._qv_params[i]
                    values[i] = t.to(device=p.device).clone()
        object.__setattr__(self, "_qv_lr", lr)
        object.__setattr__(self, "_qv_steps", steps)
        for h, v in moved.items():
            object.__setattr__(self, "_qv_" + h, v)
        load_groups_state(self, d.get("groups"))

    # --- the step ---------------------------------------------------------------------

    def step(self, m, g) -> None:
        """One step on the params of ``m`` (the model this optimizer was created
        for) with the gradient ``g``: in place, outside autograd."""
        if m is not self._qv_m:
            self._qv_model_error(m)
        if type(g) is not Grad or g._qv_model is not self._qv_cls or g._qv_layout.batch:
            self._qv_grad_error(g)  # per-example gradients too: average them first
        values = g._qv_values
        # a whole gradient takes the lists built at creation; a selection, its own
        index = None if g._qv_layout.wrt is None else g._qv_leaf_index
        params = self._qv_params
        if index is None:
            if len(values) != len(params):
                raise OptimError(
                    f"{self._qv_kind_text()}.step: the gradient has {len(values)} values, "
                    f"the model {len(params)} params"
                )
            sel = self._qv_float
            if self._qv_all_float:
                grads = list(values)
            else:
                grads = [values[i] for i in sel]
            ps = self._qv_float_params
        else:
            if len(index) != len(values):
                raise OptimError(
                    f"{self._qv_kind_text()}.step: the gradient has {len(values)} values for {len(index)} params"
                )
            floating = self._qv_float_set
            pairs = [(i, v) for i, v in zip(index, values) if i in floating]
            sel = tuple(i for i, _ in pairs)
            grads = [v for _, v in pairs]
            ps = [params[i] for i in sel]
        for i, p, v in zip(sel, ps, grads):
            if v.shape != p.shape or v.dtype != p.dtype:
                self._qv_value_error(i, p, v)
        refined = [(i, params[i].clone()) for i in sel if i in self._qv_refined] if self._qv_refined else ()
        grad_was = _is_grad_enabled()
        _set_grad_enabled(False)
        try:
            if sel and self._qv_groups is not None:
                apply_groups(self, sel, ps, grads)
            elif sel:
                self._qv_apply(sel, ps, grads)
        finally:
            _set_grad_enabled(grad_was)
        object.__setattr__(self, "_qv_steps", self._qv_steps + 1)
        if refined and checks.enabled:
            self._qv_check_refined(refined)

    def _qv_apply(self, sel, params, grads) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _qv_check_refined(self, refined) -> None:
        for i, old in refined:
            field = self._qv_fields[i]
            p = self._qv_params[i]
            problem = field.elem.value_problem(p)
            if problem is not None:
                p.copy_(old)
                name = self._qv_cls._qv_name
                raise OptimError(
                    f"{self._qv_kind_text()}.step would leave {name}.{self._qv_names[i]} "
                    f"({field.type_text}) with {problem}; the param keeps its values "
                    f"(the optimizer's state has taken the step)"
                )

    def _qv_model_error(self, m):
        mine = self._qv_cls._qv_name
        if isinstance(m, Model) and type(m) is self._qv_cls:
            raise OptimError(
                f"{self._qv_kind_text()}.step: this optimizer was created for another {mine} "
                f"instance than the one given (an optimizer steps the model it was created with)"
            )
        found = _found(m)
        if isinstance(m, Model) and type(m)._qv_name == mine:
            found += " (another class of that name)"
        raise OptimError(f"{self._qv_kind_text()}.step: expected the model {mine} it was created for, found {found}")

    def _qv_grad_error(self, g):
        mine = self._qv_cls._qv_name
        found = _found(g)
        if isinstance(g, Grad) and g._qv_model._qv_name == mine:
            found += " of another class of that name"
        raise OptimError(f"{self._qv_kind_text()}.step: expected a Grad[{mine}], found {found}")

    def _qv_value_error(self, i, p, v):
        name = self._qv_names[i]
        raise OptimError(
            f"{self._qv_kind_text()}.step: the gradient's field {name} is {_found(v)}, "
            f"but {self._qv_cls._qv_name}.{name} is {tensor_text(p)}"
        )


class SGD(Optimizer):
    """Stochastic gradient descent, as ``torch.optim.SGD`` (same defaults)."""

    __slots__ = ("_qv_momentum", "_qv_dampening", "_qv_weight_decay", "_qv_nesterov", "_qv_bufs")
    _qv_kind = "SGD"
    _qv_state_slots = ("_qv_bufs",)
    _qv_hyper = ("lr", "momentum", "dampening", "weight_decay", "nesterov")

    def __init__(self, m, lr=0.001, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, groups=None):
        self._qv_setup(m)
        k = self._qv_kind_text()
        s = object.__setattr__
        s(self, "_qv_lr", _at_least_zero(k, "learning rate", lr))
        s(self, "_qv_momentum", _at_least_zero(k, "momentum", momentum))
        s(self, "_qv_dampening", _number(k, "dampening", dampening))
        s(self, "_qv_weight_decay", _at_least_zero(k, "weight_decay", weight_decay))
        s(self, "_qv_nesterov", _flag(k, "nesterov", nesterov))
        if nesterov and (self._qv_momentum <= 0 or self._qv_dampening != 0):
            raise OptimError(
                f"{k}: Nesterov momentum requires a momentum and zero dampening "
                f"(momentum={self._qv_momentum!r}, dampening={self._qv_dampening!r})"
            )
        # per leaf: None until the leaf's first step (torch starts the buffer
        # as a copy of the first gradient)
        s(self, "_qv_bufs", [None] * len(self._qv_params))
        set_groups(self, groups)

    momentum = property(lambda self: self._qv_momentum, doc="The momentum factor.")
    dampening = property(lambda self: self._qv_dampening, doc="The dampening of the momentum.")
    weight_decay = property(lambda self: self._qv_weight_decay, doc="The L2 penalty (added to the gradient).")
    nesterov = property(lambda self: self._qv_nesterov, doc="Whether Nesterov momentum is used.")

    @property
    def momentum_buffer(self) -> Grad:
        """The momentum buffers as a gradient of the model (a copy; zeros for a
        param not stepped yet, and always zeros without momentum)."""
        return self._qv_state([torch.zeros_like(p) if b is None else b for p, b in zip(self._qv_params, self._qv_bufs)])

    def _qv_apply(self, sel, params, grads) -> None:
        momentum = self._qv_momentum
        if momentum != 0:
            store = self._qv_bufs
            bufs = [store[i] for i in sel]
        else:
            store = None
            bufs = []
        _sgd(
            params,
            grads,
            bufs,
            foreach=True,
            weight_decay=self._qv_weight_decay,
            momentum=momentum,
            lr=self._qv_lr,
            dampening=self._qv_dampening,
            nesterov=self._qv_nesterov,
            maximize=False,
        )
        if store is not None:
            for i, b in zip(sel, bufs):
                store[i] = b


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (same defaults)."""

    __slots__ = (
        "_qv_betas",
        "_qv_eps",
        "_qv_weight_decay",
        "_qv_amsgrad",
        "_qv_exp_avg",
        "_qv_exp_avg_sq",
        "_qv_max_exp_avg_sq",
        "_qv_step_counts",
        "_qv_full",
    )
    _qv_kind = "Adam"
    _qv_state_slots = ("_qv_exp_avg", "_qv_exp_avg_sq", "_qv_max_exp_avg_sq", "_qv_step_counts")
    _qv_hyper = ("lr", "betas", "eps", "weight_decay", "amsgrad")
    _qv_decoupled = False

    def __init__(self, m, lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, groups=None):
        self._qv_setup(m)
        k = self._qv_kind_text()
        s = object.__setattr__
        s(self, "_qv_lr", _at_least_zero(k, "learning rate", lr))
        s(self, "_qv_eps", _at_least_zero(k, "epsilon", eps))
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise OptimError(f"{k}: betas must be a pair of numbers, found {_found(betas)}")
        b = []
        for j, beta in enumerate(betas):
            v = _number(k, f"betas[{j}]", beta)
            if not 0.0 <= v < 1.0:
                raise OptimError(f"{k}: invalid beta parameter at index {j}: {v!r} (it must be >= 0 and < 1)")
            b.append(v)
        s(self, "_qv_betas", (b[0], b[1]))
        s(self, "_qv_weight_decay", _at_least_zero(k, "weight_decay", weight_decay))
        s(self, "_qv_amsgrad", _flag(k, "amsgrad", amsgrad))
        params = self._qv_params
        # torch.optim's state, made up front: zeros are what its lazy start gives
        zeros = torch.zeros_like
        s(self, "_qv_exp_avg", [zeros(p, memory_format=torch.preserve_format) for p in params])
        s(self, "_qv_exp_avg_sq", [zeros(p, memory_format=torch.preserve_format) for p in params])
        s(
            self,
            "_qv_max_exp_avg_sq",
            [zeros(p, memory_format=torch.preserve_format) for p in params] if amsgrad else None,
        )
        s(self, "_qv_step_counts", [torch.tensor(0.0, dtype=scalar_dtype(), device="cpu") for _ in params])
        s(self, "_qv_full", self._qv_lists(self._qv_float))
        set_groups(self, groups)

    def _qv_lists(self, sel):
        ea, eas, steps = self._qv_exp_avg, self._qv_exp_avg_sq, self._qv_step_counts
        mx = self._qv_max_exp_avg_sq
        return (
            [ea[i] for i in sel],
            [eas[i] for i in sel],
            [mx[i] for i in sel] if mx is not None else [],
            [steps[i] for i in sel],
            any(self._qv_params[i].is_complex() for i in sel),
        )

    betas = property(lambda self: self._qv_betas, doc="The decay rates (beta1, beta2) of the moment estimates.")
    eps = property(lambda self: self._qv_eps, doc="The term added to the denominator.")
    weight_decay = property(lambda self: self._qv_weight_decay, doc="The weight decay.")
    amsgrad = property(lambda self: self._qv_amsgrad, doc="Whether the AMSGrad variant is used.")

    @property
    def exp_avg(self) -> Grad:
        """The first moment estimates as a gradient of the model (a copy)."""
        return self._qv_state(self._qv_exp_avg)

    @property
    def exp_avg_sq(self) -> Grad:
        """The second moment estimates as a gradient of the model (a copy)."""
        return self._qv_state(self._qv_exp_avg_sq)

    @property
    def max_exp_avg_sq(self) -> Grad:
        """With amsgrad: the running maxima of the second moments (a copy)."""
        if self._qv_max_exp_avg_sq is None:
            raise OptimError(f"{self._qv_kind_text()} has no max_exp_avg_sq: it was created with amsgrad=False")
        return self._qv_state(self._qv_max_exp_avg_sq)

    @property
    def param_steps(self) -> tuple:
        """How many steps each leaf param has taken (an Int per param)."""
        return tuple(int(t) for t in self._qv_step_counts)

    def _qv_apply(self, sel, params, grads) -> None:
        if sel is self._qv_float:
            exp_avgs, exp_avg_sqs, maxes, steps, has_complex = self._qv_full
        else:
            exp_avgs, exp_avg_sqs, maxes, steps, has_complex = self._qv_lists(sel)
        beta1, beta2 = self._qv_betas
        _adam(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            maxes,
            steps,
            foreach=True,
            capturable=torch.compiler.is_compiling(),  # traced: step counts stay tensors in the graph
            differentiable=False,
            fused=None,
            grad_scale=None,
            found_inf=None,
            has_complex=has_complex,
            decoupled_weight_decay=self._qv_decoupled,
            amsgrad=self._qv_amsgrad,
            beta1=beta1,
            beta2=beta2,
            lr=self._qv_lr,
            weight_decay=self._qv_weight_decay,
            eps=self._qv_eps,
            maximize=False,
        )


class AdamW(Adam):
    """AdamW (Adam with decoupled weight decay), as ``torch.optim.AdamW``."""

    __slots__ = ()
    _qv_kind = "AdamW"
    _qv_decoupled = True

    def __init__(self, m, lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, amsgrad=False, groups=None):
        super().__init__(m, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, groups=groups)


def optimizer_text(x) -> str | None:
    """``Adam[Mlp]`` for an optimizer, else None."""
    if isinstance(x, Optimizer):
        return x._qv_kind_text()
    return None


__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
