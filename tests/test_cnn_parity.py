"""examples/cnn.qv trains exactly as the same network built from torch.nn modules.

The test loads the example with quiver.load, copies the params of a freshly
initialised model into a torch.nn twin (nn.Conv2d, nn.MaxPool2d, nn.Linear:
the layers the example takes from Quiver's nn library), and trains both side
by side for 25 steps of SGD on the example's own images: the compiled
train_step on the Quiver model, torch.optim.SGD on the twin. Losses and every
param agree at every step.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import quiver

ROOT = Path(__file__).resolve().parents[1]
# Quiver field -> torch param; Linear's weight is stored [in out] in Quiver, [out in] in torch
NAMES = {
    "conv1.weight": "0.weight",
    "conv1.bias": "0.bias",
    "conv2.weight": "3.weight",
    "conv2.bias": "3.bias",
    "fc.weight": "7.weight",
    "fc.bias": "7.bias",
}


def _twin() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten()
    ).append(nn.Linear(8 * 5 * 5, 2))


def _layout(ours: str, value: torch.Tensor) -> torch.Tensor:
    return value.t() if ours == "fc.weight" else value


def test_cnn_trains_as_torch_nn() -> None:
    mod = quiver.load(str(ROOT / "examples" / "cnn.qv"))
    m = mod.Cnn.init(seed=0)
    y = mod.labels()
    x = mod.images(y)
    assert x.shape == (32, 1, 28, 28)
    state = m.state_dict()
    assert sorted(state) == sorted(NAMES)
    net = _twin()
    theirs = dict(net.named_parameters())
    assert sorted(theirs) == sorted(NAMES.values())
    with torch.no_grad():
        for ours, name in NAMES.items():
            theirs[name].copy_(_layout(ours, state[ours]))
    opt = torch.optim.SGD(net.parameters(), lr=0.3)
    losses = []
    for step in range(25):
        ours = mod.train_step(m, x, y, 0.3)
        opt.zero_grad()
        hand = F.cross_entropy(net(x), y)
        hand.backward()
        opt.step()
        torch.testing.assert_close(
            ours, hand.detach(), rtol=1e-5, atol=1e-6, msg=lambda s, step=step: f"step {step}, loss: {s}"
        )
        now = m.state_dict()
        for n, name in NAMES.items():
            torch.testing.assert_close(
                _layout(n, now[n]),
                theirs[name].detach(),
                rtol=1e-5,
                atol=1e-6,
                msg=lambda s, step=step, n=n: f"step {step}, {n}: {s}",
            )
        losses.append(float(ours))
    assert losses[-1] < 0.8 * losses[0], losses  # it learns


def test_the_checker_works_out_every_size() -> None:
    from nn_library import LIBRARY

    from quiver.checker import ide
    from quiver.checker.workspace import check_example

    src = (ROOT / "examples" / "cnn.qv").read_text()
    a = check_example(src, library=LIBRARY)
    assert a.diagnostics == []
    hints = {h.label for h in ide.inlay_hints(a)}
    assert ": [b C1 13 13]" in hints  # after the first conv and pool
    assert ": [b C2 5 5]" in hints  # after the second
