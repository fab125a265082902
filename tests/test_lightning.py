"""A Quiver model trained by PyTorch Lightning through quiver.to_module.

Lightning's manual optimisation (and its automatic one) over the module
must give the numbers the same training gives written in Quiver
(docs/torch-interop.md, "Lightning")."""

from __future__ import annotations

import warnings
from pathlib import Path

import lightning as L
import pytest
import torch
from interop_mlp import MLP
from interop_mlp import data as mlp_data
from torch.utils.data import DataLoader, TensorDataset

import quiver

STEPS = 6
LR = 0.2


class ManualSgd(L.LightningModule):
    """The documented pattern: the Quiver model as an attribute, one optimizer, manual steps."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.automatic_optimization = False
        self.net = net
        self.losses: list[float] = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        opt.zero_grad()
        loss = self.net(x, y)
        self.manual_backward(loss)
        opt.step()
        self.losses.append(loss.item())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


class AutomaticSgd(ManualSgd):
    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__(net)
        self.automatic_optimization = True

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.net(x, y)
        self.losses.append(loss.item())
        return loss


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("lightning") / "mlp_lightning.qv"
    path.write_text(MLP)
    return quiver.load(str(path))


def _batches():
    x, y = mlp_data()
    # the whole set as one batch, STEPS times: each step sees what the Quiver loop sees
    loader = DataLoader(TensorDataset(x.repeat(STEPS, 1), y.repeat(STEPS)), batch_size=10, shuffle=False)
    return x, y, loader


def _fit(module: L.LightningModule, loader: DataLoader, root: Path) -> None:
    trainer = L.Trainer(
        max_epochs=1,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's advice on num_workers and the like
        trainer.fit(module, loader)


@pytest.mark.parametrize("kind", [ManualSgd, AutomaticSgd], ids=["manual", "automatic"])
def test_lightning_trains_the_model_as_quiver_does(prog, kind, tmp_path: Path) -> None:
    x, y, loader = _batches()
    ref = prog.Mlp.init(seed=0)
    ref_losses = [prog.sgd_step(ref, x, y, LR, i).item() for i in range(STEPS)]

    m = prog.Mlp.init(seed=0)
    module = kind(quiver.to_module(m, forward=prog.loss))  # Train(seed=0), Train(seed=1), ...
    _fit(module, loader, tmp_path)

    assert module.losses == pytest.approx(ref_losses, rel=0, abs=1e-6)
    assert [n for n, _ in module.named_parameters()] == ["net.w1", "net.b1", "net.w2", "net.b2"]
    for name in ("w1", "b1", "w2", "b2"):
        # Lightning's steps went into the model's own tensors
        torch.testing.assert_close(getattr(m, name), getattr(ref, name), rtol=0, atol=1e-6)
    assert module.losses[-1] < module.losses[0] - 0.1
