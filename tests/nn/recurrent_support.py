"""Helpers for the recurrent layers' tests (tests/nn/test_recurrent_layers.py):
the map from torch's param names (`weight_ih_l1`) to the Quiver layer's
(`rest.0.weight_ih`, transposed: Quiver keeps `[I (4*H)]` where torch keeps
`[(4*H) I]`), and a torch reference of a stacked layer under Train with
dropout that draws the masks as the Quiver runtime does (from the mode's
generator, one `bernoulli_` per dropped layer output)."""

from __future__ import annotations

import torch
from parity import copy_into

PARAMS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def layer_path(k: int) -> str:
    """Where torch's layer k of a stack lives in the Quiver layer."""
    return "first" if k == 0 else f"rest.{k - 1}"


def reverse_path(k: int, num_directions: int = 2, d: int = 1) -> str:
    """Where torch's reverse direction of layer k (`_l{k}_reverse`) lives:
    first_reverse[d-1] for layer 0, rest_reverse[(k-1)*(D-1) + d-1] after."""
    return f"first_reverse.{d - 1}" if k == 0 else f"rest_reverse.{(k - 1) * (num_directions - 1) + d - 1}"


def stack_names(num_layers: int, bias: bool = True, num_directions: int = 1) -> dict[str, str]:
    """torch.nn.LSTM/GRU/RNN names -> Quiver paths (bidirectional=True is
    num_directions=2: `weight_ih_l0_reverse` is `first_reverse.0.weight_ih`)."""
    names = {}
    for k in range(num_layers):
        for p in PARAMS if bias else PARAMS[:2]:
            names[f"{p}_l{k}"] = f"{layer_path(k)}.{p}"
            if num_directions == 2:
                names[f"{p}_l{k}_reverse"] = f"{reverse_path(k)}.{p}"
    return names


def transposed(names) -> dict:
    """Every weight is kept transposed (x @ weight): a transpose for each."""
    return {k: (lambda w: w.T) for k in names if "weight" in k}


def copy_cell(ref: torch.nn.Module, cell) -> None:
    copy_into(ref, cell, layouts=transposed(PARAMS))


def copy_stack(ref: torch.nn.Module, layer, num_layers: int, bias: bool = True, num_directions: int = 1) -> None:
    names = stack_names(num_layers, bias, num_directions)
    copy_into(ref, layer, names, transposed(names))


def quiver_grad_of(g, torch_name: str, names: dict[str, str]) -> torch.Tensor:
    """The field of a Quiver gradient that a torch param's .grad compares
    with, in torch's layout."""
    value = g
    for part in names.get(torch_name, torch_name).split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part)
    return value.T if "weight" in torch_name else value


def dropout_masks(seed: int, count: int, shape, p: float, dtype) -> list[torch.Tensor]:
    """The masks `count` dropout calls on tensors of `shape` draw under
    Train(seed=seed): the runtime's rt.dropout, one bernoulli_(1 - p) each
    from the mode's generator, divided by 1 - p."""
    gen = torch.Generator().manual_seed(seed)
    masks = []
    for _ in range(count):
        keep = torch.empty(shape, dtype=dtype)
        keep.bernoulli_(1.0 - p, generator=gen)
        masks.append(keep.div_(1.0 - p))
    return masks


def layered(make, layer, num_layers: int) -> list[torch.nn.Module]:
    """One single-layer torch module per layer of the Quiver stack (`make(k)`
    builds layer k's), each with that layer's params: the reference that
    dropout masks are put between."""
    mods = []
    for k in range(num_layers):
        ref = make(k)
        names = {p: f"{layer_path(k)}.{p[:-3]}" for p, _ in ref.named_parameters()}  # weight_ih_l0 -> rest.0.weight_ih
        copy_into(ref, layer, names, transposed(names))
        mods.append(ref)
    return mods


def run_layered(mods, masks, x: torch.Tensor, state):
    """The layers in turn, each output but the last times its mask; the
    state is (h0, c0) for LSTM layers, h0 otherwise. Output and final state
    as the stacked torch module gives them."""
    lstm = isinstance(state, tuple)
    y, hs, cs = x, [], []
    for k, mod in enumerate(mods):
        if k > 0:
            y = y * masks[k - 1]
        if lstm:
            y, (h, c) = mod(y, (state[0][k : k + 1], state[1][k : k + 1]))
            cs.append(c)
        else:
            y, h = mod(y, state[k : k + 1])
        hs.append(h)
    if lstm:
        return y, (torch.cat(hs), torch.cat(cs))
    return y, torch.cat(hs)
