"""debugpy's view of Quiver values (a pydevd extension).

`quiver debug` adds this folder to ``pydevd_plugins.extensions.__path__``;
debugpy then loads this module by its name (``pydevd_plugin_*``) and asks it
how tensors, models and gradients read in the Variables view
(runtime/_debug.py says what they show). Nothing imports it otherwise.
"""

from __future__ import annotations

import torch
from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider  # type: ignore

from quiver.runtime import _debug
from quiver.runtime._grad_value import Grad
from quiver.runtime._model import Model

__all__ = ["QuiverTensorText", "QuiverChildren"]


class QuiverTensorText(StrPresentationProvider):
    """A tensor as ``[64 784] f32 [0.0123, ...]``."""

    def can_provide(self, type_object, type_name):
        return isinstance(type_object, type) and issubclass(type_object, torch.Tensor)

    def get_str(self, val):
        return _debug.value_text(val)


class QuiverChildren(TypeResolveProvider):
    """A model opens to its params and buffers, a gradient to its fields, a
    tensor to its type, device, statistics and first values."""

    def can_provide(self, type_object, type_name):
        return isinstance(type_object, type) and issubclass(type_object, (torch.Tensor, Model, Grad))

    def get_dictionary(self, var):
        return _debug.children(var)

    def resolve(self, var, attribute):
        return _debug.children(var).get(attribute)
