"""The language server: `create_server` (a `QuiverServer`, server/quiver_server.py,
with the handlers of lifecycle.py, document_sync.py, features.py and
commands.py registered on it) and `serve`.

Each handler is short: it hands `QuiverServer.query` (or `query_at`, for a
position) a function that asks quiver.checker.ide one question and converts
the answer (server/convert.py); `query` finds the document's analysis of its
current version and runs that function on the analysis thread. Mutations
(open, change, close, configuration) run in order on the event loop.

Nothing is built at import: `create_server()` makes a server and registers
the handlers on it (`python -m quiver.server` calls it, see
__main__.py), so importing this module for its parts starts nothing.

Every request gets exactly one response: an unknown document or a position
past the end gives null; malformed params give an InvalidParams error; an
exception in a handler is logged (window/logMessage) and answered with an
InternalError, and the server carries on.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import sys
import threading

from . import commands, document_sync, features, lifecycle, notebooks
from .quiver_server import QuiverServer, diagnostics_doc_uri  # noqa: F401  (re-exported)
from .registry import _COMMANDS, _FEATURES, notification, request  # noqa: F401  (re-exported)

# The modules whose handlers create_server registers (each records its own on import).
HANDLER_MODULES = (lifecycle, document_sync, features, commands, notebooks)


def create_server() -> QuiverServer:
    """A new server with every handler registered."""
    server = QuiverServer()
    for method, options, fn in _FEATURES:
        server.feature(method, options)(notebooks.wrap(method, fn))  # a request about a notebook cell
    for name, fn in _COMMANDS:
        server.command(name)(fn)
    return server


# ====================================================================== entry


def _end_runs_on_signals(server: QuiverServer) -> None:
    """SIGTERM (a supervisor, `kill`) and SIGHUP (the terminal went away) end
    the server as `exit` would: every run is killed first (a run also ends by
    itself when the server is killed outright: driver/lifeline.py), then the
    process leaves at once, without waiting for an analysis in progress."""

    def end(signum, frame) -> None:
        with contextlib.suppress(Exception):
            server.runs.stop_all()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(0 if server.protocol._shutdown else 128 + signum)

    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                signal.signal(sig, end)


def serve(server: QuiverServer, stdin=None, stdout=None, answered_early=None) -> int:
    """Serve over stdio until the client says exit or goes away. The exit
    status is 0 after a `shutdown` request, 1 otherwise (as the protocol says)."""
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("QUIVER_LSP_LOG", "WARNING").upper(),
        format="quiver-lsp %(levelname)s %(name)s: %(message)s",
    )
    if answered_early is not None:
        server.quiver_protocol.answered_early.add(answered_early)
    # A long-running process with a large, long-lived heap (the protocol
    # types, the checker, the documents' syntax trees): what is loaded now is
    # never garbage, so the cyclic collector stops scanning it. A collection
    # holds the interpreter lock, stopping every thread: young collections
    # run less often than by default, and the middle generation is collected
    # after 5 of them (not 20), which keeps each pause short (measured on a
    # 16,000-line file: at most about 20 ms instead of 150 ms, for the same
    # total).
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 5, 100)
    _end_runs_on_signals(server)
    # The analysis of a large document runs on a thread next to the event
    # loop and the threads answering requests on other documents; a waiting
    # thread gets the interpreter lock after at most this long (default 5 ms).
    sys.setswitchinterval(0.001)
    try:
        server.start_io(stdin, stdout)
    finally:
        with contextlib.suppress(Exception):
            server.runs.stop_all()
    return 0 if server.protocol._shutdown else 1
