"""examples/dcgan.qv trains exactly as the same DCGAN built from torch.nn modules.

The twin is pytorch/examples' DCGAN at the example's size (its `self.main =
nn.Sequential(...)`, as the example's lists): a generator of
nn.ConvTranspose2d, nn.BatchNorm2d, ReLU and Tanh, a discriminator of
nn.Conv2d, nn.BatchNorm2d, LeakyReLU(0.2) and Sigmoid, nn.BCELoss, and two
torch.optim.Adam with betas (0.5, 0.999). The Quiver models are initialised
(their layers' init, then the example's DCGAN weights_init), copied into the
twin with load_state_dict (the names are the same, and convolution weights
have torch's layout), and both train side by side on the example's real
images and noise: the compiled train_step against the twin's step in
pytorch/examples' order. The losses, every param and every batch-norm buffer
(running_mean, running_var, num_batches_tracked) agree after every step, then
the models in Eval agree on new inputs.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[1]
STEPS = 8
LR = 0.001
RTOL = 1e-5
ATOL = 1e-6


class Generator(nn.Module):
    def __init__(self, nz: int = 8, ngf: int = 8, nc: int = 1) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf: int = 8, nc: int = 1) -> None:
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x).view(-1, 1).squeeze(1)


def _close(step: int, what: str, ours: torch.Tensor, theirs: torch.Tensor) -> None:
    assert ours.dtype == theirs.dtype, f"step {step}, {what}: {ours.dtype} != {theirs.dtype}"
    torch.testing.assert_close(
        ours.detach(), theirs.detach(), rtol=RTOL, atol=ATOL, msg=lambda s: f"step {step}, {what}: {s}"
    )


def _same_state(step: int, ours, twin: nn.Module, kind: str) -> None:
    mine, theirs = ours.state_dict(), twin.state_dict()
    assert sorted(mine) == sorted(theirs)
    for name, value in theirs.items():
        _close(step, f"{kind}.{name}", mine[name], value)


def test_the_dcgan_trains_as_pytorch_examples_dcgan() -> None:
    mod = quiver.load(str(ROOT / "examples" / "dcgan.qv"))
    g = mod.Generator.init(seed=0)
    d = mod.Discriminator.init(seed=1)
    mod.weights_init(g, 10)
    mod.weights_init(d, 20)
    # DCGAN's weights_init took effect: conv weights N(0, 0.02), batch norm N(1, 0.02) and 0
    for conv in (g.main[0], g.main[3], g.main[6], d.main[0], d.main[2], d.main[5]):
        assert 0.01 < float(conv.weight.std()) < 0.03 and abs(float(conv.weight.mean())) < 0.01
    for bn in (g.main[1], g.main[4], d.main[3]):
        assert float(bn.weight.min()) > 0.9 and float(bn.weight.max()) < 1.1 and float(bn.weight.std()) > 0
        assert not bool(bn.bias.any())
    # the params are pytorch/examples' nn.Sequential keys
    assert list(g.state_dict())[:3] == ["main.0.weight", "main.1.weight", "main.1.bias"]
    net_g, net_d = Generator(), Discriminator()
    net_g.load_state_dict(g.state_dict())
    net_d.load_state_dict(d.state_dict())
    opt_g = rt.Adam(g, lr=LR, betas=(0.5, 0.999))
    opt_d = rt.Adam(d, lr=LR, betas=(0.5, 0.999))
    ref_g = torch.optim.Adam(net_g.parameters(), lr=LR, betas=(0.5, 0.999))
    ref_d = torch.optim.Adam(net_d.parameters(), lr=LR, betas=(0.5, 0.999))
    criterion = nn.BCELoss()
    for step in range(STEPS):
        real = mod.real_images(step)
        z = torch.randn(16, 8, 1, 1, generator=torch.Generator().manual_seed(1000 + step))
        assert tuple(real.shape) == (16, 1, 16, 16) and float(real.min()) >= -1.0 and float(real.max()) <= 1.0
        l_d, l_g = mod.train_step(g, d, opt_g, opt_d, real, z, rt.Train(seed=step))
        # (1) the discriminator: real images labelled 1, the generator's (detached) 0
        fake = net_g(z)
        ref_d.zero_grad()
        err_d = criterion(net_d(real), torch.ones(16)) + criterion(net_d(fake.detach()), torch.zeros(16))
        err_d.backward()
        ref_d.step()
        # (2) the generator, through the stepped discriminator. The example's generator runs again
        # inside its value_and_grad (pytorch/examples reuses `fake`): the same values, and its
        # batch norms' running statistics move a second time, so the twin's run again too.
        ref_g.zero_grad()
        err_g = criterion(net_d(net_g(z)), torch.ones(16))
        err_g.backward()
        ref_g.step()
        _close(step, "loss_D", l_d, err_d)
        _close(step, "loss_G", l_g, err_g)
        _same_state(step, g, net_g, "generator")
        _same_state(step, d, net_d, "discriminator")
    assert int(g.main[1].num_batches_tracked) == 2 * STEPS and int(d.main[3].num_batches_tracked) == 3 * STEPS
    # Eval: the running statistics, the same on both sides
    net_g.eval()
    net_d.eval()
    z = torch.randn(16, 8, 1, 1, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        _close(STEPS, "D(G(z)) in Eval", d(g(z, rt.Eval), rt.Eval), net_d(net_g(z)))
