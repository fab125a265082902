"""The losses under torch's functional names (issue 40): `mse_loss` and
`l1_loss` with `reduction=`, and `nll_loss`, `smooth_l1_loss`, `huber_loss`
(the same as `nll`, `smooth_l1`, `huber`), values and gradients equal to
torch.nn.functional's, in f32 and f64."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import quiver

PROGRAM = """\
dim C = 5

fn mse_mean(x: [b d] dt, y: [b d] dt) -> [] dt:
    return mse_loss(x, y)

fn mse_sum(x: [b d] dt, y: [b d] dt) -> [] dt:
    return mse_loss(x, y, reduction="sum")

fn mse_none(x: [b d] dt, y: [b d] dt) -> [b d] dt:
    return mse_loss(x, y, reduction="none")

fn l1_mean(x: [b d] dt, y: [b d] dt) -> [] dt:
    return l1_loss(x, y)

fn l1_sum(x: [b d] dt, y: [b d] dt) -> [] dt:
    return l1_loss(x, y, reduction="sum")

fn l1_none(x: [b d] dt, y: [b d] dt) -> [b d] dt:
    return l1_loss(x, y, reduction="none")

fn smooth(x: [b d] dt, y: [b d] dt) -> [] dt:
    return smooth_l1_loss(x, y, beta=0.5)

fn hub(x: [b d] dt, y: [b d] dt) -> [] dt:
    return huber_loss(x, y, delta=0.7, reduction="sum")

fn nll_of(x: [b C] dt, y: [b] Index[C]) -> [] dt:
    return nll_loss(log_softmax(x, over=C), y, over=C)
"""

_TORCH = {
    "mse_mean": lambda x, y: F.mse_loss(x, y),
    "mse_sum": lambda x, y: F.mse_loss(x, y, reduction="sum"),
    "mse_none": lambda x, y: F.mse_loss(x, y, reduction="none"),
    "l1_mean": lambda x, y: F.l1_loss(x, y),
    "l1_sum": lambda x, y: F.l1_loss(x, y, reduction="sum"),
    "l1_none": lambda x, y: F.l1_loss(x, y, reduction="none"),
    "smooth": lambda x, y: F.smooth_l1_loss(x, y, beta=0.5),
    "hub": lambda x, y: F.huber_loss(x, y, delta=0.7, reduction="sum"),
}


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    """The program in f32 (`dt` left out) and in f64."""
    out = {}
    for dtype, elem in ((torch.float32, ""), (torch.float64, " f64")):
        path = tmp_path_factory.mktemp("losses") / "losses.qv"
        path.write_text(PROGRAM.replace(" dt", elem), encoding="utf-8")
        out[dtype] = quiver.load(str(path))
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(_TORCH))
def test_values_and_gradients_equal_torchs(progs, name, dtype) -> None:
    prog = progs[dtype]
    g = torch.Generator().manual_seed(7)
    x = torch.randn(4, 3, generator=g, dtype=dtype).requires_grad_()
    y = torch.randn(4, 3, generator=g, dtype=dtype)
    ours, theirs = getattr(prog, name)(x, y), _TORCH[name](x, y)
    torch.testing.assert_close(ours, theirs)
    (gx,) = torch.autograd.grad(ours.sum(), x)
    (want,) = torch.autograd.grad(theirs.sum(), x)
    torch.testing.assert_close(gx, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nll_loss_is_torchs(progs, dtype) -> None:
    prog = progs[dtype]
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 5, generator=g, dtype=dtype).requires_grad_()
    y = torch.randint(0, 5, (6,), generator=g)
    ours, theirs = prog.nll_of(x, y), F.nll_loss(F.log_softmax(x, -1), y)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(torch.autograd.grad(ours, x)[0], torch.autograd.grad(theirs, x)[0])
