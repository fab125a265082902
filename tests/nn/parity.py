"""Helpers for comparing an nn layer with its torch module: load a Quiver
program (it may `import nn`), copy a Quiver layer's params into a torch
module under a name map (with a layout change where Quiver stores a weight
differently), and compare values and gradients to a tolerance per dtype."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import torch

import quiver

# rtol 1e-5 in f32 (the bar); f64 far tighter
RTOL = {torch.float32: 1e-5, torch.float64: 1e-12}
ATOL = {torch.float32: 1e-6, torch.float64: 1e-13}


def load(source: str, folder: Path, name: str = "layer.qv"):
    """The compiled module of `source` (dedented), written into `folder`."""
    path = folder / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return quiver.load(str(path))


def close(got: torch.Tensor, want: torch.Tensor, what: str = "") -> None:
    """`got` equals `want` to the tolerance of `want`'s dtype, shape included."""
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    torch.testing.assert_close(got, want, rtol=RTOL[want.dtype], atol=ATOL[want.dtype], msg=lambda m: f"{what}: {m}")


def copy_into(
    module: torch.nn.Module,
    layer,
    names: Mapping[str, str] | None = None,
    layouts: Mapping[str, Callable[[torch.Tensor], torch.Tensor]] | None = None,
) -> None:
    """Copy a Quiver layer's params and buffers into a torch module: each
    torch name (`weight`, `lstm.weight_ih_l0`) from the Quiver field named by
    `names` (default: the same name; a dotted path reaches a sub-layer or a
    stack item, `blocks.0.weight`), through `layouts[torch name]` when the
    layouts differ (a transpose for Linear)."""
    names = dict(names or {})
    layouts = dict(layouts or {})
    state = module.state_dict()
    with torch.no_grad():
        for key, target in state.items():
            value = field(layer, names.get(key, key))
            if key in layouts:
                value = layouts[key](value)
            assert value.shape == target.shape, f"{key}: {tuple(value.shape)} != {tuple(target.shape)}"
            target.copy_(value.to(target.dtype))


def field(layer, path: str) -> torch.Tensor:
    """`blocks.0.weight` of a Quiver model: fields by name, stack items by index."""
    value = layer
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part)
    return value
