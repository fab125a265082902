"""Fixtures for the runtime tests (helpers live in rt_support.py)."""

from __future__ import annotations

import pytest
import torch
from rt_support import load_fixture

from quiver import runtime as rt


@pytest.fixture
def mlp():
    """A fresh load of fixtures/mlp_compiled.py (the compiled form of mlp.qv)."""
    return load_fixture("mlp")


@pytest.fixture
def kitchen():
    """A fresh load of fixtures/kitchen_compiled.py."""
    return load_fixture("kitchen")


@pytest.fixture(autouse=True)
def _checks_on():
    """Every test starts with checks on and leaves them as it found them."""
    before = rt.checks.enabled
    rt.checks.enabled = True
    yield
    rt.checks.enabled = before


@pytest.fixture(autouse=True)
def _grad_mode_untouched():
    """No test may leave autograd switched off or on behind it."""
    before = torch.is_grad_enabled()
    yield
    assert torch.is_grad_enabled() == before


@pytest.fixture(autouse=True)
def _no_transform_left():
    """No test may leave the runtime believing a torch.func transform runs
    (value checks would stay skipped)."""
    from quiver.runtime import _checks

    yield
    assert _checks.transforms.depth == 0
