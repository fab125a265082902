"""fast-neural-style's TransformerNet (pytorch/examples), ported as written
(tests/programs/fast_neural_style.qv): reflection padding of K // 2 before
each conv, two stride-2 convs down, residual blocks, nearest upsampling by 2
and a conv up. Its forward takes any image whose sides are multiples of 4,
`[b 3 (4*k) (4*m)]`, and gives one of the same size, as torch's does: the
checker simplifies the conv arithmetic (`((4*k+1)/2)` is `2*k`). Compared
with the network written with torch.nn as pytorch/examples writes it."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import quiver
from quiver import runtime as rt

PROGRAM = Path(__file__).parent / "programs" / "fast_neural_style.qv"


class _ConvLayer(nn.Module):
    def __init__(self, ci: int, co: int, k: int, stride: int = 1) -> None:
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(k // 2)
        self.conv2d = nn.Conv2d(ci, co, k, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class _ResidualBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1, self.in1 = _ConvLayer(c, c, 3), nn.InstanceNorm2d(c, affine=True)
        self.conv2, self.in2 = _ConvLayer(c, c, 3), nn.InstanceNorm2d(c, affine=True)

    def forward(self, x):
        return self.in2(self.conv2(F.relu(self.in1(self.conv1(x))))) + x


class _UpsampleConvLayer(nn.Module):
    def __init__(self, ci: int, co: int, k: int) -> None:
        super().__init__()
        self.conv = _ConvLayer(ci, co, k)

    def forward(self, x):
        return self.conv(F.interpolate(x, mode="nearest", scale_factor=2))


class _TransformerNet(nn.Module):
    def __init__(self, c: int = 8) -> None:
        super().__init__()
        self.conv1, self.in1 = _ConvLayer(3, c, 9), nn.InstanceNorm2d(c, affine=True)
        self.conv2, self.in2 = _ConvLayer(c, 2 * c, 3, 2), nn.InstanceNorm2d(2 * c, affine=True)
        self.conv3, self.in3 = _ConvLayer(2 * c, 4 * c, 3, 2), nn.InstanceNorm2d(4 * c, affine=True)
        self.res = nn.ModuleList([_ResidualBlock(4 * c) for _ in range(2)])
        self.deconv1, self.in4 = _UpsampleConvLayer(4 * c, 2 * c, 3), nn.InstanceNorm2d(2 * c, affine=True)
        self.deconv2, self.in5 = _UpsampleConvLayer(2 * c, c, 3), nn.InstanceNorm2d(c, affine=True)
        self.deconv3 = _ConvLayer(c, 3, 9)

    def forward(self, x):
        y = F.relu(self.in1(self.conv1(x)))
        y = F.relu(self.in2(self.conv2(y)))
        y = F.relu(self.in3(self.conv3(y)))
        for block in self.res:
            y = block(y)
        y = F.relu(self.in4(self.deconv1(y)))
        y = F.relu(self.in5(self.deconv2(y)))
        return self.deconv3(y)


@pytest.fixture(scope="module")
def prog():
    return quiver.load(str(PROGRAM))


def test_the_port_has_torchs_params(prog) -> None:
    net = prog.make()
    assert set(net.state_dict()) == set(_TransformerNet().state_dict())


@pytest.mark.parametrize("size", [(12, 20), (16, 16), (8, 8)])
def test_any_size_divisible_by_4_comes_back_at_its_size_as_torchs(prog, size) -> None:
    net = prog.make()
    ref = _TransformerNet()
    ref.load_state_dict(net.state_dict())
    x = torch.randn(2, 3, *size, generator=torch.Generator().manual_seed(1))
    out = prog.stylize(net, x)
    assert out.shape == (2, 3, *size)
    torch.testing.assert_close(out, ref(x).detach(), rtol=1e-4, atol=1e-5)


def test_a_side_not_divisible_by_4_is_refused_where_it_is_passed(prog) -> None:
    net = prog.make()
    with pytest.raises(rt.CheckError, match=r"stylize\(\): argument 'x' expected \[b 3 \(4\*k\) \(4\*m\)\]"):
        prog.stylize(net, torch.randn(1, 3, 14, 16))


def test_an_image_too_small_to_reflect_is_an_error_at_its_line(prog) -> None:
    # 4 columns cannot be reflected by 4 (torch refuses it too): the runtime
    # says so, the traceback at the ConvLayer's line, rather than torch's message
    net = prog.make()
    with pytest.raises(
        rt.QuiverError, match=r"pad: a reflection of 4 needs a dim larger than 4; dim 3 of \[1 3 8 4\] is 4"
    ) as e:
        prog.stylize(net, torch.randn(1, 3, 8, 4))
    shown = "".join(traceback.format_exception(e.value))
    assert 'fast_neural_style.qv", line 9, in _qv_m_ConvLayer__forward' in shown
