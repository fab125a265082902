"""The server's side of a multi-file workspace: the files on disk.

The checker's `Workspace` (checker/workspace.py) analyses files in import
order and does no I/O; this module gives it a `DiskHost` (regular files of
at most 10 MiB, as driver/inputs.py reads them, so a FIFO or /dev/zero is
never read), finds the .qv files under the workspace folders (hidden
folders, .venv and node_modules skipped), and analyses the files that are
not open on one background thread (`Background`), after the open documents
and never delaying them: an analysis in the background is cancelled at its
next item boundary whenever an open document's analysis waits to run, and
tried again afterwards.
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from urllib.parse import unquote, urlparse

from quiver.checker.analysis import Analysis, Cancelled
from quiver.checker.modules import ModuleExports
from quiver.checker.workspace import MODULE_SUFFIX, Workspace
from quiver.host import DiskHost as _DiskHost

log = logging.getLogger(__name__)

SKIPPED_FOLDERS = frozenset({".venv", "venv", "node_modules", "__pycache__"})
MAX_SCANNED_FILES = 20_000


def uri_to_path(uri: str) -> str | None:
    """The absolute, normalised posix path of a file: URI; None otherwise."""
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file" or not parsed.path:
        return None
    path = unquote(parsed.path)
    if not path.startswith("/") or "\x00" in path:
        return None
    return posixpath.normpath(path)


def path_to_uri(path: str) -> str:
    from pathlib import PurePosixPath

    return PurePosixPath(path).as_uri()


class DiskHost(_DiskHost):
    """The tools' view of the disk (driver/host.py: regular files of at most
    10 MiB, decoded as the checker decodes bytes, a file that is not UTF-8
    reported as E0001), looking for `quiver.toml` afresh each time."""

    def __init__(self) -> None:
        super().__init__(remember_projects=False)


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def scan(roots: Iterable[str], limit: int = MAX_SCANNED_FILES) -> list[str]:
    """Every .qv file under the roots (hidden folders, virtual environments
    and node_modules skipped; symbolic links to folders not followed), in a
    stable order, at most `limit`."""
    out: list[str] = []
    seen: set[str] = set()
    for root in roots:
        for folder, dirs, files in os.walk(root, onerror=lambda e: None):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
            for name in sorted(files):
                if name.endswith(MODULE_SUFFIX) and not name.startswith("."):
                    path = posixpath.normpath(posixpath.join(folder, name))
                    if path not in seen:
                        seen.add(path)
                        out.append(path)
                        if len(out) >= limit:
                            return out
    return out


# How long the event loop hands finished background analyses on before it
# takes a request again, and how many may wait for it before the thread does.
DRAIN_SECONDS = 0.005
BACKLOG = 64


class Background:
    """Analyses of files that are not open, one at a time on a thread of
    its own, in the order asked (a file asked again moves to the front
    when `urgent`). `done(path, analysis, exports)` is called on the event
    loop after each; `busy()` says whether an open document's analysis is
    waiting or running, and stops the one in progress."""

    def __init__(
        self,
        ws: Callable[[], Workspace],
        busy: Callable[[], bool],
        is_open: Callable[[str], bool],
        done: Callable[[str, Analysis | None, ModuleExports | None], None],
    ) -> None:
        self.ws = ws
        self._busy = busy
        self._is_open = is_open
        self._done = done
        # The paths to analyse, in order (an ordered set: asking again, taking
        # the first and moving to the front are each O(1)).
        self._queue: OrderedDict[str, None] = OrderedDict()
        self._asks: dict[str, int] = {}  # how often each path was asked for
        self._cond = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None
        # Finished analyses wait here for the event loop, which takes them a
        # slice at a time (`_drain`), so a request is never queued behind
        # thousands of them; past BACKLOG the thread waits for the loop.
        self._results: deque[tuple[str, Analysis | None, ModuleExports | None]] = deque()
        self._draining = False
        self._loop = None
        self.idle = threading.Event()
        self.idle.set()

    def start(self, loop) -> None:
        if self._thread is None:
            self._loop = loop
            self._thread = threading.Thread(target=self._run, name="quiver-background", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._queue.clear()
            self._cond.notify_all()

    def enqueue(self, paths: Iterable[str], urgent: bool = False) -> None:
        """Ask for the analyses of `paths`: after those asked before, or
        before them when `urgent`. Costs what `paths` costs, whatever the
        length of the queue (a workspace's first scan asks for thousands)."""
        with self._cond:
            new = list(dict.fromkeys(paths))
            if not new:
                return
            queue = self._queue
            for p in new:
                self._asks[p] = self._asks.get(p, 0) + 1
                queue[p] = None  # (kept where it was when already there)
            if urgent:
                for p in reversed(new):
                    queue.move_to_end(p, last=False)
            self.idle.clear()
            self._cond.notify_all()

    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    def _cancelled(self) -> bool:
        return self._stopped or self._busy()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopped:
                    self.idle.set()
                    self._cond.wait()
                if self._stopped:
                    return
                path = next(iter(self._queue))
                asked = self._asks.get(path, 0)
            # Open documents first: wait while any is being analysed.
            while self._busy() and not self._stopped:
                time.sleep(0.01)
            if self._stopped:
                return
            if self._is_open(path):
                self._take(path, asked)
                continue
            try:
                ws = self.ws()
                analysis = ws.analyze(path, self._cancelled)
                exports = ws.exports(path, self._cancelled) if analysis is not None else None
            except Cancelled:
                continue  # stays first in the queue, tried again when the open documents are done
            except Exception:
                log.exception("background analysis of %s failed", path)
                self._take(path, asked)
                continue
            self._take(path, asked)
            loop = self._loop
            if loop is None or loop.is_closed():
                continue
            with self._cond:
                self._results.append((path, analysis, exports))
                schedule = not self._draining
                self._draining = True
            if schedule:
                try:
                    loop.call_soon_threadsafe(self._drain)
                except RuntimeError:  # the loop closed meanwhile
                    return
            while len(self._results) > BACKLOG and not self._stopped and not loop.is_closed():
                time.sleep(0.005)

    def _drain(self) -> None:
        """On the event loop: hand finished analyses to `done` for at most
        DRAIN_SECONDS, then yield to whatever else is waiting (a hover) and
        go on at the next turn."""
        until = time.perf_counter() + DRAIN_SECONDS
        while True:
            with self._cond:
                if not self._results:
                    self._draining = False
                    return
                item = self._results.popleft()
            self._done(*item)
            if time.perf_counter() > until:
                break
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon(self._drain)

    def _take(self, path: str, asked: int) -> None:
        """Done with `path`, unless it was asked for again meanwhile (its
        file changed while it was analysed)."""
        with self._cond:
            if self._asks.get(path, 0) == asked and path in self._queue:
                del self._queue[path]
                del self._asks[path]
