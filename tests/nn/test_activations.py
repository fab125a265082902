"""The activation layers of `nn` (nn.ReLU, nn.LeakyReLU, nn.Tanh,
nn.Sigmoid, nn.GELU, nn.SiLU, nn.Flatten): layers without params, as torch
users put them in an nn.Sequential. Each against its torch module: values in
f32 and f64, and the gradient through it of a param before it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import quiver

LAYERS = {
    "relu": ("nn.ReLU", nn.ReLU()),
    "relu_inplace": ("nn.ReLU[inplace=True]", nn.ReLU(True)),
    "leaky": ("nn.LeakyReLU", nn.LeakyReLU()),
    "leaky02": ("nn.LeakyReLU[negative_slope=0.2]", nn.LeakyReLU(0.2)),
    "tanh": ("nn.Tanh", nn.Tanh()),
    "sigmoid": ("nn.Sigmoid", nn.Sigmoid()),
    "gelu": ("nn.GELU", nn.GELU()),
    "silu": ("nn.SiLU", nn.SiLU()),
}


def _source() -> str:
    out = ["import nn", ""]
    for key, (layer, _) in LAYERS.items():
        f64 = layer[:-1] + ", dtype=f64]" if layer.endswith("]") else layer + "[dtype=f64]"
        out.append(f"""
model M_{key}:
    param w: [5] = uniform(0.5, 1.5)
    param act: {layer}

fn {key}_apply(m: M_{key}, x: [b 5]) -> [b 5]:
    return m.act(x * m.w)

fn {key}_loss(m: M_{key}, x: [b 5]) -> [] Float:
    return sum({key}_apply(m, x) ** 2)

fn {key}_grad(m: M_{key}, x: [b 5]) -> [5]:
    g = grad({key}_loss, m, x)
    return g.w

fn {key}_f64(x: [b 5] f64) -> [b 5] f64:
    a = {f64}.init(seed=0)
    return a(x)
""")
    # nn.ReLU's output is NonNeg, as relu(x)'s is (a type that says so checks)
    out.append("""
fn relu_nonneg(m: M_relu, x: [b 5]) -> [b 5] NonNeg:
    return m.act(x * m.w)
""")
    out.append("""
model Flat:
    param flat: nn.Flatten

fn flatten(m: Flat, x: [b 2 3 4]) -> [b 24]:
    return m.flat(x)
""")
    return "\n".join(out)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("acts") / "acts.qv"
    path.write_text(_source(), encoding="utf-8")
    return quiver.load(str(path))


@pytest.mark.parametrize("key", list(LAYERS))
def test_activation_equals_torch(mod, key):
    _, module = LAYERS[key]
    m = getattr(mod, f"M_{key}").init(seed=0)
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(7)) * 3
    w = m.w.detach().clone().requires_grad_(True)
    ref = module(x * w)
    torch.testing.assert_close(getattr(mod, f"{key}_apply")(m, x), ref, rtol=0, atol=1e-6)
    (ref**2).sum().backward()
    torch.testing.assert_close(getattr(mod, f"{key}_grad")(m, x), w.grad, rtol=1e-6, atol=1e-6)
    x64 = x.double()
    torch.testing.assert_close(getattr(mod, f"{key}_f64")(x64), module(x64), rtol=0, atol=1e-12)
    assert list(m.state_dict()) == ["w"]  # no params of its own


def test_flatten_equals_torch(mod):
    x = torch.randn(3, 2, 3, 4)
    torch.testing.assert_close(mod.flatten(mod.Flat.init(seed=0), x), nn.Flatten()(x), rtol=0, atol=0)


def test_relu_gives_non_negative_values_as_relu_does(mod) -> None:
    m = mod.M_relu.init(seed=0)
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(mod.relu_nonneg(m, x), torch.relu(x * m.w).detach())
