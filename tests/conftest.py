"""Settings every test process (and every process a test starts) shares."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

# The result cache signs its entries with a key of the user's, kept in
# $XDG_CACHE_HOME/quiver (driver/cache.py): tests make and use one of their
# own, never the real user's. Processes the tests start inherit it, so a
# server and a qlint started by one test agree on it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="quiver-tests-xdg-")


@pytest.fixture(autouse=True)
def _no_value_and_grad_left_running():
    """A test that leaves a value_and_grad of this thread running (its f
    entered and never left) would make every later top-level value_and_grad
    a nested one: the test that leaked it fails, and the next starts clean."""
    yield
    grad = sys.modules.get("quiver.runtime._grad")
    if grad is not None and grad._running.depth[0]:
        grad._running.depth[0] = 0
        pytest.fail("a value_and_grad was left running in this thread (its f entered and never left)")
