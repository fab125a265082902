"""The initialisers against torch.nn.init: the same fans, gains, bounds and,
where the draw is the same algorithm on the same shape, the same values."""

from __future__ import annotations

import math

import pytest
import torch

from quiver import runtime as rt


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("shape", [(20, 10, 5, 5), (6, 3, 7), (4, 2, 3, 3, 3)])
def test_fans_of_kernels_are_torchs(shape) -> None:
    assert rt.init.fans(shape) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_fans_of_a_matrix_follow_quivers_layout() -> None:
    """A [D H] weight is used as x @ w: D in, H out (torch stores a Linear's [out in])."""
    assert rt.init.fans((784, 128)) == (784, 128)
    assert torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(128, 784)) == (784, 128)


@pytest.mark.parametrize(
    "nonlinearity, param",
    [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("leaky_relu", math.sqrt(5)),
        ("selu", None),
    ],
)
def test_gains_are_torchs(nonlinearity: str, param) -> None:
    assert rt.init.gain(nonlinearity, param) == pytest.approx(torch.nn.init.calculate_gain(nonlinearity, param), abs=0)


@pytest.mark.parametrize("kind", ["uniform", "normal"])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kaiming_on_a_kernel_draws_what_torch_draws(kind: str, mode: str, dtype) -> None:
    shape = (20, 10, 5, 5)
    ours = getattr(rt.init, f"kaiming_{kind}")(a=math.sqrt(5), mode=mode)(shape, dtype, gen(3))
    theirs = getattr(torch.nn.init, f"kaiming_{kind}_")(
        torch.empty(shape, dtype=dtype), a=math.sqrt(5), mode=mode, generator=gen(3)
    )
    assert torch.equal(ours, theirs)


def test_kaiming_uniform_with_torchs_layer_default_is_one_over_sqrt_fan_in() -> None:
    """nn.Linear's weight: kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    init = rt.init.kaiming_uniform(a=math.sqrt(5))
    w = init((400, 300), torch.float64, gen(1))  # Quiver's [I O]: fan_in 400
    bound = 1 / math.sqrt(400)
    assert init.std((400, 300)) * math.sqrt(3) == pytest.approx(bound, rel=1e-12)
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.99 * bound
    assert float(w.mean()) == pytest.approx(0.0, abs=3 * bound / math.sqrt(3) / math.sqrt(w.numel()) * 3)
    assert float(w.std()) == pytest.approx(bound / math.sqrt(3), rel=0.01)
    # torch's own, on its [out in] layout, has the same bound
    t = torch.nn.init.kaiming_uniform_(torch.empty(300, 400, dtype=torch.float64), a=math.sqrt(5), generator=gen(1))
    assert float(t.abs().max()) <= bound and float(t.abs().max()) > 0.99 * bound


def test_xavier_on_a_kernel_has_torchs_bound() -> None:
    shape = (20, 10, 5, 5)
    bound = math.sqrt(6.0 / (250 + 500))
    assert bound == pytest.approx(0.0894, abs=1e-4)
    w = rt.init.xavier(shape, torch.float64, gen(2))
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.99 * bound
    t = torch.nn.init.xavier_uniform_(torch.empty(shape, dtype=torch.float64), generator=gen(2))
    assert float(w.std()) == pytest.approx(float(t.std()), rel=0.03)


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_xavier_with_a_gain_scales_like_torchs(kind: str) -> None:
    shape = (64, 32, 3, 3)
    ours = rt.init.glorot(kind, gain=2.0)(shape, torch.float64, gen(4))
    theirs = getattr(torch.nn.init, f"xavier_{kind}_")(
        torch.empty(shape, dtype=torch.float64), gain=2.0, generator=gen(4)
    )
    assert float(ours.std()) == pytest.approx(float(theirs.std()), rel=0.02)
    if kind == "uniform":
        bound = 2.0 * math.sqrt(6.0 / (32 * 9 + 64 * 9))
        assert float(ours.abs().max()) <= bound


@pytest.mark.parametrize("shape", [(8, 8), (6, 10), (10, 6), (4, 3, 5)])
def test_orthogonal_is_torchs(shape) -> None:
    ours = rt.init.orthogonal(gain=1.5)(shape, torch.float64, gen(5))
    theirs = torch.nn.init.orthogonal_(torch.empty(shape, dtype=torch.float64), gain=1.5, generator=gen(5))
    assert torch.equal(ours, theirs)
    flat = ours.reshape(shape[0], -1) / 1.5
    small = min(flat.shape)
    gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
    assert torch.allclose(gram, torch.eye(small, dtype=torch.float64), atol=1e-12)


def test_trunc_normal_is_torchs() -> None:
    ours = rt.init.trunc_normal(0.0, 0.02, a=-0.04, b=0.04)((300, 50), torch.float32, gen(6))
    theirs = torch.nn.init.trunc_normal_(torch.empty(300, 50), 0.0, 0.02, -0.04, 0.04, generator=gen(6))
    assert torch.equal(ours, theirs)
    assert float(ours.abs().max()) <= 0.04


def test_a_bad_mode_or_nonlinearity_is_an_error() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        rt.init.kaiming_uniform(mode="fan_middle")
    with pytest.raises(ValueError, match="no gain"):
        rt.init.kaiming_normal(nonlinearity="swish")
