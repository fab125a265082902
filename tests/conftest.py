"""Settings every test process (and every process a test starts) shares."""

from __future__ import annotations

import os
import tempfile

# The result cache signs its entries with a key of the user's, kept in
# $XDG_CACHE_HOME/quiver (driver/cache.py): tests make and use one of their
# own, never the real user's. Processes the tests start inherit it, so a
# server and a qlint started by one test agree on it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="quiver-tests-xdg-")
