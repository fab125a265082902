"""examples/cnn.qv trains exactly as the same network written by hand in PyTorch.

The test loads the example with quiver.load, copies the params of a freshly
initialised model into plain torch tensors, and trains both side by side for
25 steps of SGD on the example's own images: the compiled train_step on the
Quiver model, and the hand-written conv net below on the copies. Losses and
every param agree at every step.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

import quiver

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]


def _loss(p: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    h = F.max_pool2d(F.relu(F.conv2d(x, p["w1"]) + p["b1"]), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, p["w2"]) + p["b2"]), 2)
    return F.cross_entropy(h.reshape(h.shape[0], -1) @ p["w3"] + p["b3"], y)


def test_cnn_trains_as_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "cnn.qv"))
    m = mod.Cnn.init(seed=0)
    y = mod.labels()
    x = mod.images(y)
    assert x.shape == (32, 1, 28, 28)
    p = {n: getattr(m, n).detach().clone().requires_grad_(True) for n in NAMES}
    losses = []
    for step in range(25):
        ours = mod.train_step(m, x, y, 0.1)
        hand = _loss(p, x, y)
        grads = torch.autograd.grad(hand, list(p.values()))
        with torch.no_grad():
            p = {n: (v - 0.1 * g).requires_grad_(True) for (n, v), g in zip(p.items(), grads)}
        torch.testing.assert_close(
            ours, hand.detach(), rtol=1e-5, atol=1e-6, msg=lambda s, step=step: f"step {step}, loss: {s}"
        )
        for n in NAMES:
            torch.testing.assert_close(
                getattr(m, n),
                p[n].detach(),
                rtol=1e-5,
                atol=1e-6,
                msg=lambda s, step=step, n=n: f"step {step}, {n}: {s}",
            )
        losses.append(float(ours))
    assert losses[-1] < 0.8 * losses[0], losses  # it learns


def test_the_checker_works_out_every_size() -> None:
    from quiver.checker import check_text, ide

    src = (ROOT / "examples" / "cnn.qv").read_text()
    a = check_text(src)
    assert a.diagnostics == []
    hints = {h.label for h in ide.inlay_hints(a)}
    assert ": [b C1 13 13] NonNeg" in hints  # after the first conv and pool
