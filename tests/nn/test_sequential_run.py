"""A list of sub-models called as a chain (torch's nn.Sequential): a
DCGAN-like generator `param main: (nn.ConvTranspose2d[...], nn.BatchNorm2d[...],
nn.ReLU, ..., nn.Tanh)` called as `self.main(x, mode)`, equal to torch's
nn.Sequential of the same layers with the same weights (Train and Eval, the
running statistics, the gradients), with torch's state_dict keys."""

from __future__ import annotations

import torch
from torch import nn

import quiver
from quiver import runtime as rt

SRC = """\
import nn

dim NZ = 8
dim NGF = 4
dim NGF2 = 2 * NGF
dim NC = 3

model Generator:
    param main: (
        nn.ConvTranspose2d[NZ, NGF2, 4, 1, 0, bias=False], nn.BatchNorm2d[NGF2], nn.ReLU[inplace=True],
        nn.ConvTranspose2d[NGF2, NGF, 4, 2, 1, bias=False], nn.BatchNorm2d[NGF], nn.LeakyReLU[negative_slope=0.2],
        nn.ConvTranspose2d[NGF, NC, 4, 2, 1, bias=False], nn.Tanh)

    fn forward(self, x: [b NZ 1 1], mode: Mode) -> [b NC 16 16]:
        return self.main(x, mode)

model Head:
    param main: (nn.Flatten, nn.Linear[48, 10], nn.Sigmoid, nn.Linear[10, 6], nn.GELU, nn.Linear[6, 4], nn.SiLU)

    fn forward(self, x: [b 3 4 4]) -> [b 4]:
        return self.main(x)

fn g_loss(g: Generator, z: [b NZ 1 1], mode: Mode) -> [] Float:
    return sum(g(z, mode) ** 2)

fn g_grads(g: Generator, z: [b NZ 1 1]) -> Grad[Generator]:
    return grad(g_loss, g, z, Eval)
"""


def _torch_generator():
    return nn.Sequential(
        nn.ConvTranspose2d(8, 8, 4, 1, 0, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(True),
        nn.ConvTranspose2d(8, 4, 4, 2, 1, bias=False),
        nn.BatchNorm2d(4),
        nn.LeakyReLU(0.2),
        nn.ConvTranspose2d(4, 3, 4, 2, 1, bias=False),
        nn.Tanh(),
    )


def _load(tmp_path):
    path = tmp_path / "seq.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


def test_generator_equals_torch_sequential(tmp_path):
    q = _load(tmp_path)
    g = q.Generator.init(seed=0)
    main = _torch_generator()
    ref = nn.Module()
    ref.main = main
    # torch's keys, the same tensors (conv weights in torch's layout)
    assert sorted(g.state_dict()) == sorted(ref.state_dict())
    assert "main.0.weight" in g.state_dict() and "main.1.running_mean" in g.state_dict()
    ref.load_state_dict(g.state_dict())
    z = torch.randn(5, 8, 1, 1, generator=torch.Generator().manual_seed(1))
    main.train()
    for step in range(2):
        torch.testing.assert_close(g(z, rt.Train(seed=step)), main(z), rtol=1e-5, atol=1e-6)
    for k, v in ref.state_dict().items():  # the running statistics, updated alike
        torch.testing.assert_close(g.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    main.eval()
    torch.testing.assert_close(g(z, rt.Eval), main(z), rtol=1e-5, atol=1e-6)
    (main(z) ** 2).sum().backward()
    grads = q.g_grads(g, z)
    for k in (0, 3, 6):
        torch.testing.assert_close(grads.main[k].weight, main[k].weight.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(grads.main[1].weight, main[1].weight.grad, rtol=1e-4, atol=1e-5)


def test_activations_chain_equals_torch(tmp_path):
    q = _load(tmp_path)
    h = q.Head.init(seed=0)
    ref = nn.Sequential(
        nn.Flatten(), nn.Linear(48, 10), nn.Sigmoid(), nn.Linear(10, 6), nn.GELU(), nn.Linear(6, 4), nn.SiLU()
    )
    with torch.no_grad():
        for k in (1, 3, 5):  # nn.Linear keeps its weight [I O]: torch's transposed
            ref[k].weight.copy_(h.main[k].weight.T)
            ref[k].bias.copy_(h.main[k].bias)
    assert list(h.state_dict()) == [f"main.{k}.{p}" for k in (1, 3, 5) for p in ("weight", "bias")]
    x = torch.randn(2, 3, 4, 4, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(h(x), ref(x), rtol=1e-5, atol=1e-6)


def test_to_module_of_a_chain_passes_the_mode_to_the_elements_that_take_it(tmp_path):
    # the module's view of the list lost which elements take the Mode: its
    # BatchNorm2d was called without one
    from quiver import runtime as rt

    q = _load(tmp_path)
    g = q.Generator.init(seed=0)
    z = torch.randn(3, 8, 1, 1, generator=torch.Generator().manual_seed(1))
    module = quiver.to_module(g, q.Generator.forward)
    for mode in (rt.Eval, rt.Train(seed=0)):
        torch.testing.assert_close(module(z, mode), g(z, mode), rtol=0, atol=0)
