"""``quiver.to_module(m)``: a Quiver model as a ``torch.nn.Module``.

The module's parameters share their storage with the model's params (each
``nn.Parameter`` is made from the model's tensor, which stays the model's
field), and its buffers are the model's buffer tensors themselves. So an
optimiser stepping the parameters changes the model, and a Quiver train step
(or ``load_state_dict``) on the model changes what the module holds.

``forward(*args)`` calls the model's fn (its method ``forward``, or the fn
given to ``to_module``) on a view of the model whose params are the module's
``nn.Parameter`` objects, so autograd reaches them (``loss.backward()``
fills ``.grad``). Names are the model's field paths (``w1``,
``conv1.weight``, ``blocks.0.attn.in_proj_weight``): a sub-model is a child
module, a stack ``[L] Block`` an ``nn.ModuleList``. Under
``torch.compile(module)``, ``forward`` stays an eager frame around the
compiled ``_qv_forward``, to report a value check that fails in the graph
as the eager call does (runtime/_torch_compile.py). See
docs/torch-interop.md.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import torch
from torch import nn

from ._errors import ModelError
from ._model import Model, ModelStack
from ._modes import Eval, Train
from ._registry import registered
from ._specs import ModeArg
from ._torch_compile import in_graph_failure, never_compiled, report_eagerly, top_frame_only


def _signature(fn):
    """The ``rt.Signature`` of a compiled fn (or of the checked view
    ``quiver.load`` gives), or None."""
    raw = getattr(fn, "__wrapped__", fn)
    space = getattr(raw, "__globals__", None)
    if space is None:
        return None
    return space.get("_sig_" + getattr(raw, "__name__", ""))


class QuiverModule(nn.Module):
    """An ``nn.Module`` over a Quiver model (made by :func:`to_module`)."""

    def __init__(self, model: Model, forward=None, seed: int = 0, _shared: dict | None = None):
        super().__init__()
        if not isinstance(model, Model):
            raise ModelError(f"quiver.to_module needs a Quiver model, found {type(model).__name__}")
        cls = type(model)
        self._qv_model = model
        self._qv_fn = forward
        self._qv_seed = int(seed)
        # forward calls in train mode, a 0-dim tensor: torch.compile guards
        # on the value of an int attribute of a module (a recompile at every
        # call), not on a tensor's; not a buffer, so not in the state dict
        self._qv_counter = torch.zeros((), dtype=torch.int64)
        d = model.__dict__
        # a tied param (one tensor in two places) is one nn.Parameter under both names, as in torch
        shared: dict = {} if _shared is None else _shared
        for f in cls._qv_param_fields:
            sub = cls._qv_subs.get(f.name)
            if sub is None:
                t = d[f.name]
                p = shared.get(id(t))
                if p is None:
                    p = shared[id(t)] = nn.Parameter(t, requires_grad=f.elem.is_float)
                self.register_parameter(f.name, p)
            elif sub.count is None:
                self.add_module(f.name, QuiverModule(d[f.name], _shared=shared))
            else:
                self.add_module(
                    f.name, nn.ModuleList([QuiverModule(inst, _shared=shared) for inst in d[f.name]._qv_items])
                )
        for name in cls._qv_buffer_names:
            # a persistent=False buffer is left out of state_dict(), as torch's own
            self.register_buffer(name, d[name], persistent=cls._qv_fields[name].persistent)

    # --- what the module and the model share -------------------------------------

    def _qv_relink(self) -> None:
        """The module's leaf params in the model's leaf order; the model's
        tensors made (again) those of the module: after ``.to(device)`` or
        ``load_state_dict(assign=True)`` gave the module new tensors."""
        cls = type(self._qv_model)
        leaves = [self.get_parameter(path) for path in cls._qv_leaf_paths]
        model = self._qv_model
        model._qv_install([p.detach() for p in leaves])
        self._qv_relink_buffers(model)

    def _qv_relink_buffers(self, model) -> None:
        d = model.__dict__
        for name in type(model)._qv_buffer_names:
            d[name] = self._buffers[name]
        for name, f in type(model)._qv_subs.items():
            child: Any = self._modules[name]  # a QuiverModule, or a ModuleList of them
            if f.count is None:
                child._qv_relink_buffers(d[name])
            else:
                for part, inst in zip(child, d[name]._qv_items):
                    part._qv_relink_buffers(inst)

    def _apply(self, fn, recurse=True):
        for name, t in list(self.named_parameters()) + list(self.named_buffers()):
            probe = fn(torch.empty(0, dtype=t.dtype, device=t.device))
            if isinstance(probe, torch.Tensor) and probe.dtype != t.dtype:
                raise ModelError(
                    f"quiver.to_module: {type(self._qv_model)._qv_name}.{name} is declared {t.dtype}; a Quiver "
                    "model's element types are part of its type, so .double()/.half()/.to(dtype) cannot change "
                    "them (declare the model with another dtype instead)"
                )
        out = super()._apply(fn, recurse)
        if "_qv_model" in self.__dict__:
            self._qv_relink()
        return out

    @property
    def model(self) -> Model:
        """The Quiver model (its params share storage with this module's)."""
        return self._qv_model

    # --- forward ---------------------------------------------------------------------

    def _qv_function(self):
        fn = self._qv_fn
        if fn is None:
            fn = getattr(type(self._qv_model), "forward", None)
            if fn is None:
                raise ModelError(
                    f"model {type(self._qv_model)._qv_name} has no method forward: "
                    "pass the fn to call, quiver.to_module(m, forward=program.some_fn)"
                )
        return fn

    def forward(self, *args, **kwargs):
        if torch.compiler.is_compiling():  # traced inside a caller's graph
            return self._qv_forward(*args, **kwargs)
        calls = self._qv_counter.item()  # not the property: its frame would be compiled
        try:
            return self._qv_forward(*args, **kwargs)
        except RuntimeError as exc:
            # torch.compile(module): a check failed in the graph (_qv_forward
            # was compiled, this frame was not: top_frame_only below)
            if not in_graph_failure(exc):
                raise
            self._qv_counter.fill_(calls)  # the eager run is the same call: the same Train seed
            _report(self, exc, args, kwargs)

    def _qv_forward(self, *args, **kwargs):
        fn = self._qv_function()
        view = _view(self, self._qv_model)
        sig = _signature(fn)
        if sig is not None and not kwargs:
            at = [i for i, s in enumerate(sig.specs) if isinstance(s, ModeArg)]
            # the fn takes a mode the caller did not pass: train() / eval() choose it
            if len(at) == 1 and len(args) == len(sig.specs) - 2 and at[0] >= 1:
                args = list(args)
                args.insert(at[0] - 1, self._qv_mode())
        return fn(view, *args, **kwargs)

    top_frame_only(forward)

    def _qv_mode(self):
        if not self.training:
            return Eval
        counter = self._qv_counter
        seed = counter + self._qv_seed  # Train reads it eagerly; traced, it stays a tensor
        with torch.no_grad():
            counter.add_(1)
        return Train(seed=seed)

    @property
    def _qv_calls(self) -> int:
        """Forward calls in train mode so far: the seed of the next one's Train
        is ``seed + _qv_calls``."""
        return int(self._qv_counter)

    @_qv_calls.setter
    def _qv_calls(self, n: int) -> None:
        self._qv_counter.fill_(n)

    def extra_repr(self) -> str:
        return f"model={type(self._qv_model)._qv_name}"

    # --- copies ------------------------------------------------------------------------

    def _qv_state(self) -> dict:
        return {path: t.detach() for path, t in self._qv_model._qv_state_dict().items()}

    def _qv_remade(self, model) -> QuiverModule:
        out = QuiverModule(model, self._qv_fn, self._qv_seed)
        out._qv_calls = self._qv_calls
        out.train(self.training)
        for (_, p), (_, q) in zip(self.named_parameters(), out.named_parameters()):
            q.requires_grad_(p.requires_grad)
        return out

    def __deepcopy__(self, memo):
        model = type(self._qv_model)._qv_from_tensors({k: t.clone() for k, t in self._qv_state().items()})
        out = self._qv_remade(model)
        for (_, p), (_, q) in zip(self.named_parameters(), out.named_parameters()):
            if p.grad is not None:
                q.grad = p.grad.detach().clone()
        memo[id(self)] = out
        return out

    def __reduce__(self):
        cls = type(self._qv_model)
        found = sys.modules.get(cls.__module__)
        if found is None or getattr(found, cls.__qualname__, None) is not cls:
            raise ModelError(
                f"cannot pickle a module of model {cls._qv_name}: its class is not a top-level model of a "
                f"loaded program (a generic model's instance, or a program loaded again since); "
                "use state_dict() instead"
            )
        fn = self._qv_fn
        fn_ref = None
        if fn is not None:
            raw = getattr(fn, "__wrapped__", fn)
            fn_ref = (raw.__module__, raw.__name__)
        where = getattr(found, "__quiver_source__", None)
        grads = [p.requires_grad for p in self.parameters()]
        return (
            _unpickle,
            (
                cls.__module__,
                cls.__qualname__,
                where,
                fn_ref,
                self._qv_state(),
                self._qv_seed,
                self._qv_calls,
                self.training,
                grads,
            ),
        )


@never_compiled  # called by forward when its frame is skipped: not compiled itself
def _report(module: QuiverModule, exc: BaseException, args, kwargs) -> NoReturn:
    """``report_eagerly`` for a call of ``module`` that failed in its graph."""
    fn = module._qv_function()
    sig = _signature(fn)
    name = getattr(getattr(fn, "__wrapped__", fn), "__name__", "forward")
    report_eagerly(
        exc,
        lambda: module._qv_forward(*args, **kwargs),
        f"in fn {name}, called by a quiver.to_module module compiled by torch.compile",
        getattr(sig, "loc", None),
    )


def _view(part: QuiverModule, model: Model) -> Model:
    """A new instance of the model's class whose params and buffers are the
    tensors ``part`` holds now: read from its ``_parameters`` and ``_buffers``
    at each call, so that what torch.func.functional_call and torch.export
    put there (in place of the parameters) is what the fn computes with."""
    cls = type(model)
    view = object.__new__(cls)
    d = view.__dict__
    d.update(model.__dict__)
    params, buffers = part._parameters, part._buffers
    for name in cls._qv_fields:
        d[name] = params[name] if name in params else buffers[name]
    leaves = []
    for name, count, _start, _size, sub in cls._qv_param_layout:
        child: Any = part._modules.get(name)  # a QuiverModule, or a ModuleList of them
        if sub is None:
            leaves.append(d[name])
        elif count is None:
            inner = d[name] = _view(child, model.__dict__[name])
            leaves.extend(inner._qv_tensors)
        else:
            items = [_view(c, inst) for c, inst in zip(child, model.__dict__[name]._qv_items)]
            d[name] = ModelStack(items, f"{cls._qv_name}.{name}", ModelError, model.__dict__[name]._qv_modes)
            for inner in items:
                leaves.extend(inner._qv_tensors)
    object.__setattr__(view, "_qv_tensors", tuple(leaves))
    object.__setattr__(view, "_qv_depth", 0)
    return view


def _unpickle(module_name, qualname, where, fn_ref, state, seed, calls, training, grads):
    module = registered(module_name)
    cls = getattr(module, qualname, None) if module is not None else None
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise ModelError(
            f"cannot unpickle a module of model {qualname}: its program ({where or module_name}) is not loaded "
            f"in this process; call quiver.load({where!r}) before unpickling"
        )
    fn = None
    if fn_ref is not None:
        home = registered(fn_ref[0])
        fn = getattr(home, fn_ref[1], None) if home is not None else None
        if fn is None:
            raise ModelError(f"cannot unpickle a module of model {qualname}: fn {fn_ref[1]} is not in {where}")
    device = cls._qv_device_or_error()
    model = cls._qv_from_tensors({k: t.to(device) for k, t in state.items()})
    out = QuiverModule(model, fn, seed)
    out._qv_calls = calls
    out.train(training)
    for p, g in zip(out.parameters(), grads):
        p.requires_grad_(g)
    return out


def to_module(model: Model, forward=None, seed: int = 0) -> QuiverModule:
    """``model`` as a ``torch.nn.Module`` whose parameters share storage with
    the model's params (docs/torch-interop.md). ``forward``: the fn that
    ``module(*args)`` calls as ``forward(model, *args)`` (default: the
    model's method ``forward``). When that fn takes a ``Mode`` the caller
    leaves out, ``module.train()`` passes ``Train(seed=seed + n)`` (n: the
    number of earlier forward calls in train mode) and ``module.eval()``
    passes ``Eval``."""
    return QuiverModule(model, forward, seed)
