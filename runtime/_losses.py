"""Losses under torch's functional names that the other loss ops do not
already cover: ``mse_loss`` (``mse`` with ``reduction=``) and ``l1_loss``."""

from __future__ import annotations

import torch.nn.functional as F


def mse_loss(input, target, reduction="mean"):
    """torch's F.mse_loss (the checker has made the shapes equal)."""
    return F.mse_loss(input, target, reduction=reduction)


def l1_loss(input, target, reduction="mean"):
    """torch's F.l1_loss."""
    return F.l1_loss(input, target, reduction=reduction)
