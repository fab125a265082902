"""nn.Conv2dSame and nn.Conv1dSame against torch.nn.Conv2d(..., padding="same")
and torch.nn.Conv1d(..., padding="same"): odd and even kernels (an even one
pads one more at the end, as torch), dilation, groups, without bias; the
output the input's size in the type; forward values, the gradients of the
weight and the bias (through Quiver's own grad) and of the input (torch's
autograd through the compiled forward), in f32 and f64; the start drawn as
Conv2d's; a stride is one diagnostic, as torch refuses one."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch
from nn_library import LIBRARY
from parity import close, copy_into, load

from quiver.checker.workspace import check_example

# torch's note that an even kernel pads a copy of the input (as these layers do)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")


@dataclass(frozen=True)
class Case:
    key: str
    ci: int
    co: int
    k: int
    x: tuple[int, ...]  # the input's sizes
    options: dict  # torch's keyword arguments, written as the Quiver options

    @property
    def layer(self) -> str:
        name = "nn.Conv1dSame" if len(self.x) == 3 else "nn.Conv2dSame"
        opts = "".join(f", {k}={v}" for k, v in self.options.items())
        return f"{name}[{self.ci}, {self.co}, {self.k}{opts}{{o}}]"

    def out(self) -> tuple[int, ...]:
        return (self.x[0], self.co, *self.x[2:])


CASES = [
    Case("odd", 3, 4, 3, (2, 3, 6, 5), {}),
    Case("even", 3, 4, 4, (2, 3, 6, 5), {}),
    Case("even2", 3, 2, 2, (2, 3, 5, 7), {}),
    Case("dilated", 3, 4, 4, (2, 3, 9, 8), {"dilation": 3}),
    Case("grouped", 4, 6, 3, (2, 4, 5, 5), {"groups": 2, "bias": False}),
    Case("one", 3, 4, 5, (2, 3, 9), {}),
    Case("one_even", 3, 4, 4, (2, 3, 9), {"dilation": 2}),
    Case("one_plain", 2, 4, 6, (2, 2, 7), {"groups": 2, "bias": False}),
]


def _sizes(case: Case) -> str:
    return " ".join(str(s) for s in case.x)


def _program(dt: torch.dtype) -> str:
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    out = ["import nn\n"]
    for c in CASES:
        t = c.layer.replace("{o}", o)
        xs, ys = f"[{_sizes(c)}]{f}", f"[{' '.join(str(s) for s in c.out())}]{f}"
        out.append(
            f"fn {c.key}_make(seed: Int) -> {t}:\n    return {t}.init(seed=seed)\n\n"
            f"fn {c.key}_apply(l: {t}, x: {xs}) -> {ys}:\n    return l(x)\n\n"
            f"fn {c.key}_loss(l: {t}, x: {xs}, w: {ys}) -> []{f}:\n    return sum(l(x) * w)\n\n"
            f"fn {c.key}_grads(l: {t}, x: {xs}, w: {ys}) -> Grad[{t}]:\n    return grad({c.key}_loss, l, x, w)\n"
        )
    return "\n".join(out)


# a generic input size: the output keeps b, h and w whatever they are
GENERIC = """
import nn

fn make(seed: Int) -> nn.Conv2dSame[3, 4, 4]:
    return nn.Conv2dSame[3, 4, 4].init(seed=seed)

fn apply(l: nn.Conv2dSame[3, 4, 4], x: [b 3 h w]) -> [b 4 h w]:
    return l(x)
"""


def _torch(c: Case, dt: torch.dtype) -> torch.nn.Module:
    conv = torch.nn.Conv1d if len(c.x) == 3 else torch.nn.Conv2d
    return conv(c.ci, c.co, c.k, padding="same", **c.options, dtype=dt)


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    return load(_program(dt), tmp_path_factory.mktemp("same")), dt


@pytest.mark.parametrize("c", CASES, ids=[c.key for c in CASES])
def test_values_and_gradients_match_torchs_same_padding(env, c: Case) -> None:
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(0)
    ref = _torch(c, dt)
    assert list(layer.state_dict()) == list(ref.state_dict()), "torch's members"
    copy_into(ref, layer)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(c.x, generator=gen, dtype=dt)
    w = torch.randn(c.out(), generator=gen, dtype=dt)
    xr = x.clone().requires_grad_(True)
    want = ref(xr)
    assert tuple(want.shape) == c.out()
    (want * w).sum().backward()
    xq = x.clone().requires_grad_(True)
    got = getattr(mod, f"{c.key}_apply")(layer, xq)
    close(got, want.detach(), "forward")
    (got * w).sum().backward()
    close(xq.grad, xr.grad, "grad of x")
    g = getattr(mod, f"{c.key}_grads")(layer, x, w)
    for name, p in ref.named_parameters():
        close(getattr(g, name), p.grad, f"grad of {name}")


def test_an_even_kernel_pads_one_more_at_the_end(env) -> None:
    # torch: left = dilation*(K-1)//2, the rest on the right (and below):
    # a kernel of ones on the zero-padded input of ones counts the cells it sees
    mod, dt = env
    layer = mod.even2_make(0)
    with torch.no_grad():
        layer.weight.fill_(1.0)
        layer.bias.zero_()
    y = mod.even2_apply(layer, torch.ones(2, 3, 5, 7, dtype=dt))
    # a 2x2 kernel starting at each cell: the last row and column see the padding
    assert y[0, 0, 0, 0] == 12 and y[0, 0, -1, 0] == 6 and y[0, 0, 0, -1] == 6 and y[0, 0, -1, -1] == 3


def test_the_start_is_conv2ds(env) -> None:
    # kaiming_uniform(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias too
    mod, _ = env
    layer = mod.odd_make(0)
    bound = 1 / math.sqrt(3 * 3 * 3)
    assert layer.weight.abs().max() <= bound and layer.bias.abs().max() <= bound
    assert layer.weight.abs().max() > 0.8 * bound
    assert not torch.equal(mod.odd_make(1).weight, layer.weight)


def test_the_size_is_kept_for_any_input(tmp_path) -> None:
    # [b 3 h w] -> [b 4 h w] checks clean with h and w unknown, and runs as torch's
    assert check_example(GENERIC, LIBRARY).diagnostics == []
    mod = load(GENERIC, tmp_path)
    layer = mod.make(0)
    ref = torch.nn.Conv2d(3, 4, 4, padding="same")
    copy_into(ref, layer)
    for h, w in ((1, 1), (4, 9), (8, 3)):
        x = torch.randn(2, 3, h, w)
        close(mod.apply(layer, x), ref(x).detach(), f"{h}x{w}")


def test_a_stride_is_one_diagnostic() -> None:
    # torch: ValueError "padding='same' is not supported for strided convolutions"
    with pytest.raises(ValueError, match="strided"):
        torch.nn.Conv2d(3, 4, 3, stride=2, padding="same")
    src = "import nn\n\nfn f(m: nn.Conv2dSame[3, 8, 3, stride=2], x: [2 3 9 7]) -> [2 8 9 7]:\n    return m(x)\n"
    found = [(d.code, d.message, src[d.span.start : d.span.end]) for d in check_example(src, LIBRARY).diagnostics]
    assert found == [
        ("E0911", "nn.Conv2dSame has no option 'stride' (it takes by name: bias, dtype, dilation, groups)", "stride")
    ]


def test_a_wrong_output_size_is_one_diagnostic() -> None:
    src = "import nn\n\nfn f(m: nn.Conv1dSame[3, 8, 4], x: [2 3 L]) -> [2 8 (L-3)]:\n    return m(x)\n"
    # the output is [2 8 L] (no arithmetic of the kernel left in it)
    found = [(d.code, d.message, src[d.span.start : d.span.end]) for d in check_example(src, LIBRARY).diagnostics]
    assert found == [("E0201", "return value: expected [2 8 (L-3)], found [2 8 L]", "m(x)")], found
