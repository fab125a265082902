"""nn.Conv1d, nn.Conv2d and nn.ConvTranspose2d against torch.nn.Conv1d,
torch.nn.Conv2d and torch.nn.ConvTranspose2d: forward values and the
gradients of the weight, the bias and the input (f32 and f64; with and
without a bias; strided, padded, dilated and grouped), through Quiver's own
grad and through torch's autograd on the compiled forward; the output sizes
the checker computes, for concrete and for generic sizes (a DCGAN-like
generator and a classifier-like stack, against torch's); the default
initialisation's distribution over many seeds, with torch's fans; and the
checker's diagnostic for a layer applied to the wrong channels."""

from __future__ import annotations

import math

import pytest
import torch
from nn_library import LIBRARY
from parity import close, copy_into, load

from quiver.checker.workspace import check_example

SRC = """
import nn

dim N = 2
dim L = 9
dim H = 9
dim W = 8

fn c1(seed: Int) -> nn.Conv1d[4, 6, 3, stride=2, padding=1{o}]:
    return nn.Conv1d[4, 6, 3, stride=2, padding=1{o}].init(seed=seed)

fn c1_apply(l: nn.Conv1d[4, 6, 3, stride=2, padding=1{o}], x: [N 4 L]{f}) -> [N 6 5]{f}:
    return l(x)

fn c1_grads(l: nn.Conv1d[4, 6, 3, stride=2, padding=1{o}], x: [N 4 L]{f}, w: [N 6 5]{f}) -> Grad[nn.Conv1d[4, 6, 3, stride=2, padding=1{o}]]:
    return grad(c1_loss, l, x, w)

fn c1_loss(l: nn.Conv1d[4, 6, 3, stride=2, padding=1{o}], x: [N 4 L]{f}, w: [N 6 5]{f}) -> []{f}:
    return sum(l(x) * w)

fn c1g(seed: Int) -> nn.Conv1d[4, 6, 3, dilation=2, groups=2, bias=False{o}]:
    return nn.Conv1d[4, 6, 3, dilation=2, groups=2, bias=False{o}].init(seed=seed)

fn c1g_apply(l: nn.Conv1d[4, 6, 3, dilation=2, groups=2, bias=False{o}], x: [N 4 t]{f}) -> [N 6 (t-4)]{f}:
    return l(x)

fn c2(seed: Int) -> nn.Conv2d[3, 8, 3, stride=2, padding=1{o}]:
    return nn.Conv2d[3, 8, 3, stride=2, padding=1{o}].init(seed=seed)

fn c2_apply(l: nn.Conv2d[3, 8, 3, stride=2, padding=1{o}], x: [N 3 H W]{f}) -> [N 8 5 4]{f}:
    return l(x)

fn c2_any(l: nn.Conv2d[3, 8, 3, stride=2, padding=1{o}], x: [b 3 h w]{f}) -> [b 8 ((h+1)/2) ((w-1)/2+1)]{f}:
    return l(x)

fn c2_loss(l: nn.Conv2d[3, 8, 3, stride=2, padding=1{o}], x: [N 3 H W]{f}, w: [N 8 5 4]{f}) -> []{f}:
    return sum(l(x) * w)

fn c2_grads(l: nn.Conv2d[3, 8, 3, stride=2, padding=1{o}], x: [N 3 H W]{f}, w: [N 8 5 4]{f}) -> Grad[nn.Conv2d[3, 8, 3, stride=2, padding=1{o}]]:
    return grad(c2_loss, l, x, w)

fn c2g(seed: Int) -> nn.Conv2d[4, 8, 3, padding=2, dilation=2, groups=4, bias=False{o}]:
    return nn.Conv2d[4, 8, 3, padding=2, dilation=2, groups=4, bias=False{o}].init(seed=seed)

fn c2g_apply(l: nn.Conv2d[4, 8, 3, padding=2, dilation=2, groups=4, bias=False{o}], x: [b 4 h w]{f}) -> [b 8 h w]{f}:
    return l(x)

fn c2g_loss(l: nn.Conv2d[4, 8, 3, padding=2, dilation=2, groups=4, bias=False{o}], x: [N 4 H W]{f}, w: [N 8 H W]{f}) -> []{f}:
    return sum(l(x) * w)

fn c2g_grads(l: nn.Conv2d[4, 8, 3, padding=2, dilation=2, groups=4, bias=False{o}], x: [N 4 H W]{f}, w: [N 8 H W]{f}) -> Grad[nn.Conv2d[4, 8, 3, padding=2, dilation=2, groups=4, bias=False{o}]]:
    return grad(c2g_loss, l, x, w)

fn dw(seed: Int) -> nn.Conv2d[6, 6, 5, padding=2, groups=6{o}]:
    return nn.Conv2d[6, 6, 5, padding=2, groups=6{o}].init(seed=seed)

fn dw_apply(l: nn.Conv2d[6, 6, 5, padding=2, groups=6{o}], x: [b 6 h w]{f}) -> [b 6 h w]{f}:
    return l(x)

fn ct(seed: Int) -> nn.ConvTranspose2d[6, 4, 3, stride=2, padding=1, output_padding=1{o}]:
    return nn.ConvTranspose2d[6, 4, 3, stride=2, padding=1, output_padding=1{o}].init(seed=seed)

fn ct_apply(l: nn.ConvTranspose2d[6, 4, 3, stride=2, padding=1, output_padding=1{o}], x: [b 6 h w]{f}) -> [b 4 (2*h) (2*w)]{f}:
    return l(x)

fn ct_loss(l: nn.ConvTranspose2d[6, 4, 3, stride=2, padding=1, output_padding=1{o}], x: [N 6 H W]{f}, w: [N 4 18 16]{f}) -> []{f}:
    return sum(l(x) * w)

fn ct_grads(l: nn.ConvTranspose2d[6, 4, 3, stride=2, padding=1, output_padding=1{o}], x: [N 6 H W]{f}, w: [N 4 18 16]{f}) -> Grad[nn.ConvTranspose2d[6, 4, 3, stride=2, padding=1, output_padding=1{o}]]:
    return grad(ct_loss, l, x, w)

fn ctg(seed: Int) -> nn.ConvTranspose2d[4, 6, 3, stride=2, groups=2, dilation=2, bias=False{o}]:
    return nn.ConvTranspose2d[4, 6, 3, stride=2, groups=2, dilation=2, bias=False{o}].init(seed=seed)

fn ctg_apply(l: nn.ConvTranspose2d[4, 6, 3, stride=2, groups=2, dilation=2, bias=False{o}], x: [b 4 h w]{f}) -> [b 6 (2*h+3) (2*w+3)]{f}:
    return l(x)

fn ctg_loss(l: nn.ConvTranspose2d[4, 6, 3, stride=2, groups=2, dilation=2, bias=False{o}], x: [N 4 3 5]{f}, w: [N 6 9 13]{f}) -> []{f}:
    return sum(l(x) * w)

fn ctg_grads(l: nn.ConvTranspose2d[4, 6, 3, stride=2, groups=2, dilation=2, bias=False{o}], x: [N 4 3 5]{f}, w: [N 6 9 13]{f}) -> Grad[nn.ConvTranspose2d[4, 6, 3, stride=2, groups=2, dilation=2, bias=False{o}]]:
    return grad(ctg_loss, l, x, w)

model Generator:
    param up1: nn.ConvTranspose2d[100, 64, 4, bias=False{o}]
    param up2: nn.ConvTranspose2d[64, 32, 4, stride=2, padding=1, bias=False{o}]
    param up3: nn.ConvTranspose2d[32, 3, 4, stride=2, padding=1{o}]

    fn forward(self, z: [b 100 1 1]{f}) -> [b 3 16 16]{f}:
        h = relu(self.up1(z))
        h = relu(self.up2(h))
        return tanh(self.up3(h))

fn generator(seed: Int) -> Generator:
    return Generator.init(seed=seed)

fn generate(g: Generator, z: [b 100 1 1]{f}) -> [b 3 16 16]{f}:
    return g(z)

fn grow(l: nn.ConvTranspose2d[64, 32, 4, stride=2, padding=1, bias=False{o}], x: [b 64 h w]{f}) -> [b 32 (2*h) (2*w)]{f}:
    return l(x)

fn generator_loss(g: Generator, z: [b 100 1 1]{f}, w: [b 3 16 16]{f}) -> []{f}:
    return sum(g(z) * w)

fn generator_grads(g: Generator, z: [b 100 1 1]{f}, w: [b 3 16 16]{f}) -> Grad[Generator]:
    return grad(generator_loss, g, z, w)

model Classifier:
    param conv1: nn.Conv2d[3, 16, 3, stride=2, padding=1{o}]
    param conv2: nn.Conv2d[16, 32, 3, stride=2, padding=1{o}]
    param conv3: nn.Conv2d[32, 32, 3, padding=1, groups=32{o}]
    param pool: nn.MaxPool2d[2{o}]
    param fc: nn.Linear[(32*4*4), 10{o}]

    fn forward(self, x: [b 3 32 32]{f}) -> [b 10]{f}:
        h = relu(self.conv1(x))
        h = relu(self.conv2(h))
        h = self.pool(relu(self.conv3(h)))
        return self.fc(reshape(h, [b (32*4*4)]))

    fn features(self, x: [b 3 h w]{f}) -> [b 32 (((h+1)/2+1)/2) (((w+1)/2+1)/2)]{f}:
        return self.conv3(self.conv2(self.conv1(x)))

fn classifier(seed: Int) -> Classifier:
    return Classifier.init(seed=seed)

fn classify(m: Classifier, x: [b 3 32 32]{f}) -> [b 10]{f}:
    return m(x)

fn features(m: Classifier, x: [b 3 h w]{f}) -> [b 32 (((h+1)/2+1)/2) (((w+1)/2+1)/2)]{f}:
    return m.features(x)

fn classifier_loss(m: Classifier, x: [b 3 32 32]{f}, w: [b 10]{f}) -> []{f}:
    return sum(m(x) * w)

fn classifier_grads(m: Classifier, x: [b 3 32 32]{f}, w: [b 10]{f}) -> Grad[Classifier]:
    return grad(classifier_loss, m, x, w)

fn max2(p: nn.MaxPool2d[2{o}], x: [b c h w]{f}) -> [b c (h/2) (w/2)]{f}:
    return p(x)

fn max3(p: nn.MaxPool2d[3, stride=2, padding=1{o}], x: [b c h w]{f}) -> [b c ((h-1)/2+1) ((w+1)/2)]{f}:
    return p(x)

fn avg2(p: nn.AvgPool2d[2{o}], x: [b c h w]{f}) -> [b c (h/2) (w/2)]{f}:
    return p(x)

fn avg3(p: nn.AvgPool2d[3, stride=1, padding=1{o}], x: [b c h w]{f}) -> [b c h w]{f}:
    return p(x)

fn pools(seed: Int) -> (nn.MaxPool2d[2{o}], nn.MaxPool2d[3, stride=2, padding=1{o}], nn.AvgPool2d[2, stride=2{o}], nn.AvgPool2d[3, stride=1, padding=1{o}]):
    return nn.MaxPool2d[2{o}].init(seed=seed), nn.MaxPool2d[3, stride=2, padding=1{o}].init(seed=seed), nn.AvgPool2d[2{o}].init(seed=seed), nn.AvgPool2d[3, stride=1, padding=1{o}].init(seed=seed)

fn wide2(seed: Int) -> nn.Conv2d[16, 32, 3]:
    return nn.Conv2d[16, 32, 3].init(seed=seed)

fn wide2g(seed: Int) -> nn.Conv2d[8, 64, 3, groups=4]:
    return nn.Conv2d[8, 64, 3, groups=4].init(seed=seed)

fn wide1(seed: Int) -> nn.Conv1d[12, 64, 5]:
    return nn.Conv1d[12, 64, 5].init(seed=seed)

fn widet(seed: Int) -> nn.ConvTranspose2d[32, 16, 3]:
    return nn.ConvTranspose2d[32, 16, 3].init(seed=seed)

fn widetg(seed: Int) -> nn.ConvTranspose2d[16, 48, 4, stride=2, groups=2]:
    return nn.ConvTranspose2d[16, 48, 4, stride=2, groups=2].init(seed=seed)
"""

DTYPES = [torch.float32, torch.float64]


@pytest.fixture(scope="module", params=DTYPES, ids=["f32", "f64"])
def env(request, tmp_path_factory):
    # {f}: the element type after a shape, {o}: the layers' dtype option
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SRC.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("conv")), dt


def _rand(*shape: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _torch_layer(cls, layer, dt, **config) -> torch.nn.Module:
    ref = cls(**config, dtype=dt)
    copy_into(ref, layer)  # the weights are laid out as torch's
    return ref


def _against(apply, grads, layer, ref, x: torch.Tensor, names: tuple[str, ...]) -> None:
    """apply(layer, x) is ref(x); Quiver's grad of sum(layer(x) * w) is torch's
    for every param, and torch's autograd through the compiled forward gives
    the input's gradient torch does."""
    want = ref(x)
    close(apply(layer, x), want, "forward")
    w = _rand(*want.shape, dtype=x.dtype, seed=99)
    xr = x.clone().requires_grad_(True)
    (ref(xr) * w).sum().backward()
    if grads is not None:
        g = grads(layer, x, w)
        for name in names:
            theirs = getattr(ref, name).grad
            assert theirs is not None
            close(getattr(g, name), theirs, f"grad of {name}")
    xq = x.clone().requires_grad_(True)
    (apply(layer, xq) * w).sum().backward()
    assert xq.grad is not None and xr.grad is not None
    close(xq.grad, xr.grad, "grad of the input")


def test_conv1d_matches_torch(env) -> None:
    mod, dt = env
    layer = mod.c1(0)
    assert layer.weight.shape == (6, 4, 3) and layer.bias.shape == (6,) and layer.weight.dtype == dt
    ref = _torch_layer(torch.nn.Conv1d, layer, dt, in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1)
    _against(mod.c1_apply, mod.c1_grads, layer, ref, _rand(2, 4, 9, dtype=dt, seed=1), ("weight", "bias"))


def test_conv1d_dilated_grouped_without_bias(env) -> None:
    mod, dt = env
    layer = mod.c1g(1)
    assert layer.weight.shape == (6, 2, 3) and "bias" not in layer.state_dict()
    ref = _torch_layer(
        torch.nn.Conv1d, layer, dt, in_channels=4, out_channels=6, kernel_size=3, dilation=2, groups=2, bias=False
    )
    for length in (5, 11):
        _against(mod.c1g_apply, None, layer, ref, _rand(2, 4, length, dtype=dt, seed=length), ())


def test_conv2d_matches_torch(env) -> None:
    mod, dt = env
    layer = mod.c2(2)
    assert layer.weight.shape == (8, 3, 3, 3) and layer.weight.dtype == dt
    ref = _torch_layer(torch.nn.Conv2d, layer, dt, in_channels=3, out_channels=8, kernel_size=3, stride=2, padding=1)
    _against(mod.c2_apply, mod.c2_grads, layer, ref, _rand(2, 3, 9, 8, dtype=dt, seed=3), ("weight", "bias"))


def test_conv2d_generic_sizes_are_torchs(env) -> None:
    # c2_any's signature says [b 8 ((h+1)/2) ((w-1)/2+1)]: floor division, as torch's sizes
    mod, dt = env
    layer = mod.c2(4)
    ref = _torch_layer(torch.nn.Conv2d, layer, dt, in_channels=3, out_channels=8, kernel_size=3, stride=2, padding=1)
    for h, w in ((1, 1), (2, 3), (7, 10), (28, 27)):
        x = _rand(3, 3, h, w, dtype=dt, seed=h * 100 + w)
        want = ref(x)
        assert want.shape[2:] == ((h + 1) // 2, (w - 1) // 2 + 1)
        close(mod.c2_any(layer, x), want, f"forward of {h}x{w}")


def test_conv2d_dilated_grouped_without_bias(env) -> None:
    mod, dt = env
    layer = mod.c2g(5)
    assert layer.weight.shape == (8, 1, 3, 3) and "bias" not in layer.state_dict()
    ref = _torch_layer(
        torch.nn.Conv2d,
        layer,
        dt,
        in_channels=4,
        out_channels=8,
        kernel_size=3,
        padding=2,
        dilation=2,
        groups=4,
        bias=False,
    )
    _against(mod.c2g_apply, mod.c2g_grads, layer, ref, _rand(2, 4, 9, 8, dtype=dt, seed=6), ("weight",))
    _against(mod.c2g_apply, None, layer, ref, _rand(1, 4, 3, 5, dtype=dt, seed=7), ())


def test_depthwise_conv2d(env) -> None:
    mod, dt = env
    layer = mod.dw(6)
    assert layer.weight.shape == (6, 1, 5, 5)
    ref = _torch_layer(torch.nn.Conv2d, layer, dt, in_channels=6, out_channels=6, kernel_size=5, padding=2, groups=6)
    _against(mod.dw_apply, None, layer, ref, _rand(2, 6, 7, 4, dtype=dt, seed=8), ())


def test_conv_transpose2d_matches_torch(env) -> None:
    mod, dt = env
    layer = mod.ct(7)
    assert layer.weight.shape == (6, 4, 3, 3) and layer.bias.shape == (4,)  # torch's layout, [Ci Co K K]
    ref = _torch_layer(
        torch.nn.ConvTranspose2d,
        layer,
        dt,
        in_channels=6,
        out_channels=4,
        kernel_size=3,
        stride=2,
        padding=1,
        output_padding=1,
    )
    _against(mod.ct_apply, mod.ct_grads, layer, ref, _rand(2, 6, 9, 8, dtype=dt, seed=9), ("weight", "bias"))
    for h, w in ((1, 1), (4, 7)):  # doubles any size
        x = _rand(1, 6, h, w, dtype=dt, seed=h + w)
        assert ref(x).shape[2:] == (2 * h, 2 * w)
        close(mod.ct_apply(layer, x), ref(x), f"forward of {h}x{w}")


def test_conv_transpose2d_grouped_dilated_without_bias(env) -> None:
    mod, dt = env
    layer = mod.ctg(8)
    assert layer.weight.shape == (4, 3, 3, 3) and "bias" not in layer.state_dict()
    ref = _torch_layer(
        torch.nn.ConvTranspose2d,
        layer,
        dt,
        in_channels=4,
        out_channels=6,
        kernel_size=3,
        stride=2,
        groups=2,
        dilation=2,
        bias=False,
    )
    _against(mod.ctg_apply, mod.ctg_grads, layer, ref, _rand(2, 4, 3, 5, dtype=dt, seed=10), ("weight",))
    assert ref(_rand(1, 4, 2, 6, dtype=dt, seed=0)).shape[2:] == (2 * 2 + 3, 2 * 6 + 3)


def _dcgan(g, dt) -> torch.nn.Sequential:
    ref = torch.nn.Sequential(
        torch.nn.ConvTranspose2d(100, 64, 4, bias=False, dtype=dt),
        torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1, bias=False, dtype=dt),
        torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(32, 3, 4, stride=2, padding=1, dtype=dt),
        torch.nn.Tanh(),
    )
    copy_into(
        ref,
        g,
        names={"0.weight": "up1.weight", "2.weight": "up2.weight", "4.weight": "up3.weight", "4.bias": "up3.bias"},
    )
    return ref


def test_a_dcgan_generator_like_torchs(env) -> None:
    # 1x1 -> 4x4 (K=4, stride 1, padding 0) -> 8x8 -> 16x16 (K=4, stride 2, padding 1)
    mod, dt = env
    g = mod.generator(11)
    ref = _dcgan(g, dt)
    z = _rand(3, 100, 1, 1, dtype=dt, seed=12)
    assert ref[0](z).shape == (3, 64, 4, 4) and ref[:3](z).shape == (3, 32, 8, 8)
    want = ref(z)
    assert want.shape == (3, 3, 16, 16)
    close(mod.generate(g, z), want, "generator")
    w = _rand(3, 3, 16, 16, dtype=dt, seed=13)
    (want * w).sum().backward()
    grads = mod.generator_grads(g, z, w)
    for name, index in (("up1", 0), ("up2", 2), ("up3", 4)):
        weight_grad = ref[index].weight.grad
        assert weight_grad is not None
        close(getattr(grads, name).weight, weight_grad, f"grad of {name}.weight")
    assert ref[4].bias.grad is not None
    close(grads.up3.bias, ref[4].bias.grad, "grad of up3.bias")
    # the doubling layer on any size, against torch's sizes
    for h, w_ in ((4, 4), (3, 5)):
        x = _rand(1, 64, h, w_, dtype=dt, seed=h * w_)
        close(mod.grow(g.up2, x), ref[2](x), f"grow {h}x{w_}")
        assert ref[2](x).shape[2:] == (2 * h, 2 * w_)


def test_a_classifier_stack_like_torchs(env) -> None:
    mod, dt = env
    m = mod.classifier(14)
    ref = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, stride=2, padding=1, dtype=dt),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, stride=2, padding=1, dtype=dt),
        torch.nn.ReLU(),
        torch.nn.Conv2d(32, 32, 3, padding=1, groups=32, dtype=dt),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(32 * 4 * 4, 10, dtype=dt),
    )
    names = {}
    for index, name in ((0, "conv1"), (2, "conv2"), (4, "conv3"), (8, "fc")):
        names[f"{index}.weight"], names[f"{index}.bias"] = f"{name}.weight", f"{name}.bias"
    copy_into(ref, m, names=names, layouts={"8.weight": lambda w: w.T})
    x = _rand(2, 3, 32, 32, dtype=dt, seed=15)
    assert ref[:2](x).shape == (2, 16, 16, 16) and ref[:4](x).shape == (2, 32, 8, 8)
    want = ref(x)
    close(mod.classify(m, x), want, "classifier")
    w = _rand(2, 10, dtype=dt, seed=16)
    (want * w).sum().backward()
    grads = mod.classifier_grads(m, x, w)
    for index, name in ((0, "conv1"), (2, "conv2"), (4, "conv3")):
        for p in ("weight", "bias"):
            theirs = getattr(ref[index], p).grad
            assert theirs is not None
            close(getattr(getattr(grads, name), p), theirs, f"grad of {name}.{p}")
    # the convolutions alone on other sizes: the generic signature's sizes are torch's
    for h, w_ in ((32, 32), (7, 12), (1, 2)):
        x = _rand(1, 3, h, w_, dtype=dt, seed=h + w_)
        want = ref[4](ref[2](ref[0](x)))
        close(mod.features(m, x), want, f"features of {h}x{w_}")


def test_pools_match_torch(env) -> None:
    # torch's stride=None is the kernel size: nn.MaxPool2d[2] is nn.MaxPool2d[2, stride=2]
    mod, dt = env
    max2, max3, avg2, avg3 = mod.pools(0)
    assert max2.state_dict() == {} and avg3.state_dict() == {}  # no params, as torch's
    refs = (
        (mod.max2, max2, torch.nn.MaxPool2d(2)),
        (mod.max3, max3, torch.nn.MaxPool2d(3, stride=2, padding=1)),
        (mod.avg2, avg2, torch.nn.AvgPool2d(2)),
        (mod.avg3, avg3, torch.nn.AvgPool2d(3, stride=1, padding=1)),
    )
    for apply, layer, ref in refs:
        for h, w in ((8, 8), (7, 10), (2, 3)):
            x = _rand(2, 3, h, w, dtype=dt, seed=h * 10 + w)
            _against(apply, None, layer, ref, x, ())


# -- the default initialisation ----------------------------------------------------------

WIDE = {
    # Quiver maker: (torch module, how many seeds)
    "wide2": (lambda: torch.nn.Conv2d(16, 32, 3), 4),
    "wide2g": (lambda: torch.nn.Conv2d(8, 64, 3, groups=4), 8),
    "wide1": (lambda: torch.nn.Conv1d(12, 64, 5), 8),
    "widet": (lambda: torch.nn.ConvTranspose2d(32, 16, 3), 4),
    "widetg": (lambda: torch.nn.ConvTranspose2d(16, 48, 4, stride=2, groups=2), 4),
}


def _uniform_stats(values: torch.Tensor, bound: float, what: str, tol: float) -> None:
    assert values.abs().max() <= bound * (1 + 1e-6), what  # a float32 draw may round up by an ulp
    assert values.abs().max() > 0.97 * bound, what
    assert abs(values.mean()) < tol * bound, what
    assert abs(values.std() - bound / math.sqrt(3)) < tol * bound / math.sqrt(3), what


@pytest.mark.parametrize("maker", sorted(WIDE))
def test_default_initialisation_is_torchs_distribution(env, maker: str) -> None:
    # torch (_ConvNd.reset_parameters): weight kaiming_uniform_(a=sqrt(5)), bias
    # U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in from the weight as torch
    # computes it (dim 1 times the kernel: Ci/groups*K*K, or Co/groups*K*K for
    # the transposed convolution). Quiver's draws have that distribution, and
    # so do torch's own.
    mod, _ = env
    build, seeds = WIDE[maker]
    ref = build()
    fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(ref.weight)
    bound = 1 / math.sqrt(fan_in)
    weights, biases, torch_weights, torch_biases = [], [], [], []
    with torch.random.fork_rng():  # torch's draws, seeded, leave the global generator as it was
        for seed in range(seeds * 25):
            layer = getattr(mod, maker)(seed)
            torch.manual_seed(seed)
            theirs = build()
            assert layer.weight.shape == theirs.weight.shape and layer.bias.shape == theirs.bias.shape
            if seed < seeds:
                weights.append(layer.weight.flatten())
                torch_weights.append(theirs.weight.detach().flatten())
            biases.append(layer.bias)
            torch_biases.append(theirs.bias.detach())
    w, b = torch.cat(weights).double(), torch.cat(biases).double()
    tw, tb = torch.cat(torch_weights).double(), torch.cat(torch_biases).double()
    for values, what in ((w, "weight"), (b, "bias"), (tw, "torch's weight"), (tb, "torch's bias")):
        _uniform_stats(values, bound, f"{maker} {what}", 0.05)
    # the same bound as torch's draws reach
    assert abs(w.abs().max() - tw.abs().max()) < 0.03 * bound
    assert abs(b.abs().max() - tb.abs().max()) < 0.03 * bound
    # different seeds, different layers; one seed, one layer
    maker_fn = getattr(mod, maker)
    assert not torch.equal(maker_fn(0).weight, maker_fn(1).weight)
    assert torch.equal(maker_fn(2).weight, maker_fn(2).weight)


# -- diagnostics ---------------------------------------------------------------------------

WRONG = [
    (
        "fn f(c: nn.Conv1d[4, 6, 3], x: [b 5 l]) -> [b 6 (l-2)]:\n    return c(x)\n",
        "argument 'x' of nn.Conv1d.forward: expected [b 4 l], found [b 5 l]",
    ),
    (
        "fn f(c: nn.Conv2d[3, 8, 3], x: [b 4 28 28]) -> [b 8 26 26]:\n    return c(x)\n",
        "argument 'x' of nn.Conv2d.forward: expected [b 3 h w], found [b 4 28 28]",
    ),
    (
        "fn f(c: nn.ConvTranspose2d[100, 64, 4], x: [b 64 1 1]) -> [b 64 4 4]:\n    return c(x)\n",
        "argument 'x' of nn.ConvTranspose2d.forward: expected [b 100 h w], found [b 64 1 1]",
    ),
    (
        "fn f(c: nn.Conv2d[3, 8, 3, stride=2, padding=1], x: [b 3 28 28]) -> [b 8 28 28]:\n    return c(x)\n",
        "return value: expected [b 8 28 28], found [b 8 14 14]",
    ),
    (
        "fn f(c: nn.ConvTranspose2d[64, 32, 4, stride=2, padding=1], x: [b 64 h w]) -> [b 32 h w]:\n    return c(x)\n",
        "return value: expected [b 32 h w], found [b 32 (2*h) (2*w)]",
    ),
    (  # a padding that changes the size: the message names the layer and the padding that keeps it
        "fn f(c: nn.Conv2d[3, 8, 3], x: [b 3 28 28]) -> [b 8 28 28]:\n    return relu(c(x))\n",
        "return value: expected [b 8 28 28], found [b 8 26 26] (from c (nn.Conv2d) with padding 0; padding=1 keeps 28)",
    ),
    (  # through a layer that keeps the size, to the one that changed it
        "model Net:\n    param c1: nn.Conv2d[3, 8, 5, padding=1]\n    param c2: nn.Conv2d[8, 8, 3, padding=1]\n\n"
        "fn f(m: Net, x: [b 3 h w]) -> [b 8 h w]:\n    return m.c2(relu(m.c1(x)))\n",
        "return value: expected [b 8 h w], found [b 8 (h-2) (w-2)] "
        "(from m.c1 (nn.Conv2d) with padding 1; padding=2 keeps h and w)",
    ),
    (
        "fn f(c: nn.Conv2d[3, 8, 5], x: [b 3 4 9]) -> [b 8 1 5]:\n    return c(x)\n",
        "dim expression ((h+2*padding-dilation*(K-1)-1)/stride+1): in the result of nn.Conv2d.forward it is 0 "
        "for these arguments; a dim is a positive integer",
    ),
]


WRONG += [
    (
        "fn f(p: nn.MaxPool2d[2], x: [b 3 8 8]) -> [b 3 8 8]:\n    return p(x)\n",
        "return value: expected [b 3 8 8], found [b 3 4 4]",
    ),
    (
        "fn f(p: nn.AvgPool2d[3, stride=1], x: [b 3 2 5]) -> [b 3 1 3]:\n    return p(x)\n",
        "dim expression ((h+2*padding-K)/stride+1): in the result of nn.AvgPool2d.forward it is 0 "
        "for these arguments; a dim is a positive integer",
    ),
]


WRONG += [
    (  # torch: in_channels must be divisible by groups
        "fn f(c: nn.Conv2d[4, 6, 3, groups=3], x: [b 4 8 8]) -> [b 6 6 6]:\n    return c(x)\n",
        "dim expression (Ci/groups): in nn.Conv2d[4, 6, 3, groups=3] it is 4/3, not a whole number: "
        "groups must divide Ci",
    ),
    (  # torch: embed_dim must be divisible by num_heads
        "fn f(a: nn.MultiheadAttention[10, 3], x: [L b 10]) -> [L b 10]:\n    return x\n",
        "dim expression (E/NH): in nn.MultiheadAttention[10, 3] it is 10/3, not a whole number: NH must divide E",
    ),
]


@pytest.mark.parametrize("body, message", WRONG)
def test_a_layer_applied_to_the_wrong_size_is_one_diagnostic(body: str, message: str) -> None:
    analysis = check_example("import nn\n\n" + body, LIBRARY)
    assert not analysis.internal_errors
    assert [d.message for d in analysis.diagnostics] == [message]


# -- what differs from torch, as docs/nn.md says ----------------------------------------------

EDGES = """
import nn

fn same(l: nn.Conv2d[3, 4, 3, padding=1], x: [b 3 h w]) -> [b 4 h w]:
    return l(x)

fn same_made(seed: Int) -> nn.Conv2d[3, 4, 3, padding=1]:
    return nn.Conv2d[3, 4, 3, padding=1].init(seed=seed)

fn uneven(seed: Int) -> nn.Conv2d[6, 8, 3, groups=3]:
    return nn.Conv2d[6, 8, 3, groups=3].init(seed=seed)

fn uneven_apply(l: nn.Conv2d[6, 8, 3, groups=3], x: [b 6 5 5]) -> [b 8 3 3]:
    return l(x)

fn wide_extra(seed: Int) -> nn.ConvTranspose2d[2, 2, 3, output_padding=1]:
    return nn.ConvTranspose2d[2, 2, 3, output_padding=1].init(seed=seed)

fn wide_extra_apply(l: nn.ConvTranspose2d[2, 2, 3, output_padding=1], x: [b 2 4 4]) -> [b 2 7 7]:
    return l(x)

fn same_pool(p: nn.MaxPool2d[2]) -> nn.MaxPool2d[2, stride=2]:
    return p

fn pool_default(seed: Int) -> nn.MaxPool2d[2]:
    return nn.MaxPool2d[2].init(seed=seed)

fn pool_given(seed: Int) -> nn.MaxPool2d[2, stride=2]:
    return nn.MaxPool2d[2, stride=2].init(seed=seed)

fn wide_pad(seed: Int) -> nn.MaxPool2d[3, padding=2]:
    return nn.MaxPool2d[3, padding=2].init(seed=seed)

fn wide_pad_apply(p: nn.MaxPool2d[3, padding=2], x: [b 2 6 6]) -> [b 2 3 3]:
    return p(x)
"""


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    return load(EDGES, tmp_path_factory.mktemp("conv_edges"))


def test_padding_half_the_kernel_is_torchs_same(edges) -> None:
    layer = edges.same_made(0)
    ref = torch.nn.Conv2d(3, 4, 3, padding="same")
    copy_into(ref, layer)
    x = _rand(2, 3, 6, 5, dtype=torch.float32, seed=0)
    close(edges.same(layer, x), ref(x), "padding=1 against padding='same'")


def test_what_torch_refuses_when_a_layer_is_applied(edges) -> None:
    # groups that divide the input channels but not the output ones: torch
    # refuses them when it builds the module; Quiver's layer is made (groups
    # that do not divide Ci are E0212 where the instance is written), and
    # torch's kernel refuses it when applied
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        torch.nn.Conv2d(6, 8, 3, groups=3)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        torch.nn.Conv2d(6, 8, 3, groups=4)
    layer = edges.uneven(0)
    with pytest.raises(RuntimeError, match="groups|channels"):
        edges.uneven_apply(layer, torch.zeros(1, 6, 5, 5))
    # an output_padding that is not below the stride
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        edges.wide_extra_apply(edges.wide_extra(0), torch.zeros(1, 2, 4, 4))
    # a pool's padding above half its window
    with pytest.raises(RuntimeError, match="half"):
        edges.wide_pad_apply(edges.wide_pad(0), torch.zeros(1, 2, 6, 6))
    with pytest.raises(RuntimeError, match="half"):
        torch.nn.MaxPool2d(3, padding=2)(torch.zeros(1, 2, 6, 6))
    # nn.MaxPool2d[2] is nn.MaxPool2d[2, stride=2] (same_pool checks), one class at run time too
    assert type(edges.same_pool(edges.pool_default(0))) is type(edges.pool_given(0))
