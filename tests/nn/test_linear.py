"""nn.Linear against torch.nn.Linear: forward values and the gradients of
the weight, the bias and the input (f32 and f64, with and without a bias, on
inputs of rank 1 to 3), through Quiver's own grad and through torch's
autograd on the compiled forward; and the default initialisation's
distribution over many seeds."""

from __future__ import annotations

import math

import pytest
import torch
from parity import close, copy_into, load

SRC = """
import nn

dim N = 3
dim T = 2
dim D = 5
dim H = 4

fn make(seed: Int) -> nn.Linear[D, H{o}]:
    return nn.Linear[D, H{o}].init(seed=seed)

fn make_plain(seed: Int) -> nn.Linear[D, H, bias=False{o}]:
    return nn.Linear[D, H, bias=False{o}].init(seed=seed)

fn make_wide(seed: Int) -> nn.Linear[400, 300{o}]:
    return nn.Linear[400, 300{o}].init(seed=seed)

fn apply(l: nn.Linear[D, H{o}], x: [N T D]{f}) -> [N T H]{f}:
    return l(x)

fn apply_plain(l: nn.Linear[D, H, bias=False{o}], x: [N D]{f}) -> [N H]{f}:
    return l(x)

fn apply_vector(l: nn.Linear[D, H{o}], x: [D]{f}) -> [H]{f}:
    return l(x)

fn loss(l: nn.Linear[D, H{o}], x: [N T D]{f}, w: [N T H]{f}) -> []{f}:
    return sum(l(x) * w)

fn grads(l: nn.Linear[D, H{o}], x: [N T D]{f}, w: [N T H]{f}) -> Grad[nn.Linear[D, H{o}]]:
    return grad(loss, l, x, w)
"""


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    # {f}: the element type after a shape, {o}: the layer's dtype option
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SRC.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("linear")), dt


def _torch_linear(layer, bias: bool, dt) -> torch.nn.Linear:
    ref = torch.nn.Linear(5, 4, bias=bias, dtype=dt)
    copy_into(ref, layer, layouts={"weight": lambda w: w.T})  # Quiver keeps [I O], torch [O I]
    return ref


def test_forward_and_gradients_match_torch(env) -> None:
    mod, dt = env
    layer = mod.make(3)
    ref = _torch_linear(layer, True, dt)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 2, 5, generator=gen, dtype=dt)
    w = torch.randn(3, 2, 4, generator=gen, dtype=dt)
    close(mod.apply(layer, x), ref(x), "forward")
    close(mod.apply_vector(layer, x[0, 0]), ref(x[0, 0]), "forward of a vector")
    # Quiver's grad, against torch's backward of the same loss
    g = mod.grads(layer, x, w)
    xr = x.clone().requires_grad_(True)
    (ref(xr) * w).sum().backward()
    assert ref.weight.grad is not None and ref.bias.grad is not None and xr.grad is not None
    close(g.weight, ref.weight.grad.T, "grad of weight")
    close(g.bias, ref.bias.grad, "grad of bias")
    # the input's gradient, by torch's autograd through the compiled forward
    xq = x.clone().requires_grad_(True)
    (mod.apply(layer, xq) * w).sum().backward()
    assert xq.grad is not None
    close(xq.grad, xr.grad, "grad of x")


def test_without_a_bias(env) -> None:
    mod, dt = env
    layer = mod.make_plain(1)
    assert not hasattr(layer, "bias") or "bias" not in layer.state_dict()
    ref = _torch_linear(layer, False, dt)
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(1), dtype=dt)
    close(mod.apply_plain(layer, x), ref(x), "forward without bias")


def test_default_initialisation_is_torchs_distribution(env) -> None:
    # torch: weight and bias both U(-1/sqrt(in), 1/sqrt(in)); over a wide layer
    # the bounds, mean and standard deviation are those of that uniform.
    mod, _ = env
    bound = 1 / math.sqrt(400)
    weights, biases = [], []
    for seed in range(4):
        layer = mod.make_wide(seed)
        weights.append(layer.weight.flatten())
        biases.append(layer.bias)
    w, b = torch.cat(weights).double(), torch.cat(biases).double()
    for values, what in ((w, "weight"), (b, "bias")):
        assert values.abs().max() <= bound * (1 + 1e-6), what  # a float32 draw may round up by an ulp
        assert values.abs().max() > 0.98 * bound, what
        assert abs(values.mean()) < 0.05 * bound, what
        assert abs(values.std() - bound / math.sqrt(3)) < 0.05 * bound / math.sqrt(3), what
    # different seeds, different layers; one seed, one layer
    assert not torch.equal(mod.make(0).weight, mod.make(1).weight)
    assert torch.equal(mod.make(2).weight, mod.make(2).weight)
