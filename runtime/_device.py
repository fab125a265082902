"""Where the tensors a program creates live: the current device.

The rule (docs/runtime.md, "Devices of created tensors"):

- A model lives on the device its class declares (``model M on cuda``:
  ``_qv_device``), unless the run *places* every model on one device
  (``quiver run --device D``: :func:`place`), which overrides every
  declaration.
- The tensors a program creates (``randn``, ``zeros``, ``ones``, ``full``,
  ``eye``, ``arange``, ``rand``, ``randint``, literals, ``n as []``) are made
  on the *current device*: the placed device when there is one, else the
  device of the program's models when they all declare the same one
  (:func:`program_device`, set by ``quiver run`` and ``quiver.load``), else
  the CPU.  Random values are drawn on the CPU from their seed and then
  moved, so a seed gives the same values on every device.

So a program whose models are declared ``on cuda`` creates its data on CUDA
too, and ``--device cpu`` runs the same program entirely on the CPU.
"""

from __future__ import annotations

import types

import torch

__all__ = ["current_device", "set_device"]

CPU = torch.device("cpu")


class _State:
    current: torch.device = CPU
    placed: torch.device | None = None  # quiver run --device: overrides every model's declaration


_state = _State()


def current_device() -> torch.device:
    """The device the program's creation functions make tensors on."""
    return _state.current


def set_device(device) -> torch.device:
    """Make ``device`` (a torch device or its name) the current device."""
    _state.current = torch.device(device)
    return _state.current


def place(device) -> torch.device | None:
    """Place every model on ``device`` from now on (``quiver run --device``),
    whatever its class declares, and make it the current device; ``None``
    goes back to the declarations.  Affects model classes defined after the
    call (a compiled module loaded afterwards)."""
    if device is None:
        _state.placed = None
        _state.current = CPU
        return None
    dev = torch.device(device)
    _state.placed = dev
    _state.current = dev
    return dev


def saved() -> tuple[torch.device, torch.device | None]:
    """The state, for :func:`restore`."""
    return _state.current, _state.placed


def restore(state: tuple[torch.device, torch.device | None]) -> None:
    _state.current, _state.placed = state


def placed() -> torch.device | None:
    """The device every model is placed on, or None (their declarations)."""
    return _state.placed


def model_device(declared: str) -> torch.device:
    """The device of a model class declared on ``declared``."""
    return _state.placed if _state.placed is not None else torch.device(declared)


def program_device(module) -> torch.device:
    """The device of a compiled program: the placed device, else the device
    of its models when they all live on one, else the CPU (a program without
    models, or with models on several devices)."""
    if _state.placed is not None:
        return _state.placed
    from ._model import Model

    # the models of the program's own module and of the Quiver modules it imports
    modules, todo = {}, [module]
    while todo:
        m = todo.pop()
        if id(m) in modules:
            continue
        modules[id(m)] = m
        todo.extend(v for v in vars(m).values() if isinstance(v, types.ModuleType) and "__quiver_source__" in vars(v))
    devices = {
        v._qv_torch_device
        for m in modules.values()
        for v in vars(m).values()
        if isinstance(v, type) and issubclass(v, Model) and v.__module__ == m.__name__
    }
    return devices.pop() if len(devices) == 1 else CPU


def use_program(module) -> torch.device:
    """Make the device of ``module``'s program current (:func:`program_device`)."""
    return set_device(program_device(module))
