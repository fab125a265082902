"""Helpers for the embeddings and normalisation tests: the Quiver functions
that make, apply and differentiate one layer configuration, written from a
template (one module per dtype holds every configuration), and the torch
side's loss and gradients."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Config:
    """One layer configuration: its Quiver type (`{o}` where the dtype option
    goes), the input type (`{f}` where the element type goes), how it is
    applied (`l(x)`, `l(x, mode)`, `l.seq(x, mode)`), and the torch module
    with the same configuration, made in a dtype."""

    key: str
    layer: str
    x: str
    call: str
    torch_module: Callable[[torch.dtype], torch.nn.Module]
    params: bool = True

    @property
    def mode(self) -> bool:
        return "mode" in self.call

    def source(self) -> str:
        k, lt, xt = self.key, self.layer, self.x
        mp, ma = (", mode: Mode", ", mode") if self.mode else ("", "")
        text = f"""
fn {k}_make(seed: Int) -> {lt}:
    return {lt}.init(seed=seed)

fn {k}_apply(l: {lt}, x: {xt}{mp}) -> {xt}:
    return {self.call}

fn {k}_loss(l: {lt}, x: {xt}, w: {xt}{mp}) -> []{{f}}:
    return sum({k}_apply(l, x{ma}) * w)
"""
        if self.params:
            text += f"""
fn {k}_step(l: {lt}, x: {xt}, w: {xt}{mp}) -> ([]{{f}}, Grad[{lt}]):
    v, g = value_and_grad({k}_loss, l, x, w{ma})
    return v, g
"""
        return text


def module_source(header: str, configs: list[Config], dt: torch.dtype) -> str:
    """One module with every configuration's functions, in f32 or f64."""
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    body = header + "".join(c.source() for c in configs)
    # `{o}` closes a layer's brackets: `nn.LayerNorm[E{o}]`
    return body.replace("{f}", f).replace("{o}", o)


def randomise(layer, names: tuple[str, ...], seed: int) -> None:
    """Give a Quiver layer's float params random values (weight ones and bias
    zeros would hide a mix-up of the two)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name in names:
            t = getattr(layer, name)
            t.copy_(torch.randn(t.shape, generator=gen, dtype=t.dtype) * 0.5 + 1.0)


def torch_loss_and_grads(ref: torch.nn.Module, x: torch.Tensor, w: torch.Tensor):
    """torch's sum(ref(x) * w), the gradients of its params by name, and x's gradient."""
    ref.zero_grad()
    xr = x.clone().requires_grad_(True)
    loss = (ref(xr) * w).sum()
    loss.backward()
    grads = {n: p.grad for n, p in ref.named_parameters()}
    assert xr.grad is not None
    return loss.detach(), grads, xr.grad
