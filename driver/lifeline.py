"""A child process that ends with the process that started it.

The language server starts `quiver run` for Run File, and `quiver run
--nproc N` starts N workers. When the starter is killed outright (SIGKILL,
the OOM killer, a crashed editor), it cannot stop what it started, and the
orphans would train on forever, reparented to PID 1. So the child asks the
kernel for a signal when its parent dies (Linux's PR_SET_PDEATHSIG; the
parent is the thread that forked it: the server forks from its event loop,
which lives as long as the server does), and elsewhere a daemon thread
watches for the parent to change.

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

# Set by the language server on the runner it starts: the server's pid.
PARENT_ENV = "QUIVER_PARENT_PID"
_PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.5


def die_with_parent() -> None:
    """End this process (SIGTERM) when its parent process ends, whatever
    ends it. If the parent ended already, end now."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) == 0:
                if os.getppid() != parent:  # it ended before the call
                    os.kill(os.getpid(), signal.SIGTERM)
                return
    threading.Thread(target=_watch, args=(parent,), name="quiver-lifeline", daemon=True).start()


def _watch(parent: int) -> None:
    stop = threading.Event()
    while not stop.wait(WATCH_SECONDS):
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def from_environment() -> None:
    """In a process the server started (PARENT_ENV holds the server's pid):
    die with it. The variable is removed, so that what this process starts
    in turn does not take this process's parent for its own."""
    value = os.environ.pop(PARENT_ENV, None)
    if value is None:
        return
    if value.isdigit() and int(value) != os.getppid():
        os.kill(os.getpid(), signal.SIGTERM)  # the server is gone already
        return
    die_with_parent()
