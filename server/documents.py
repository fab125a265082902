"""Open documents: their text, version and analyses.

A document is its text, its line index and its version; versions only go
forward. Each document owns one `Analyzer` (the checker's incremental API), so
an edit re-checks only what it touched.

Scheduling. The event loop only applies edits, answers from finished analyses
and publishes; the checker runs on threads:

- analyses run on a pool of threads, at most one per document at a time (a
  document's lock keeps its Analyzer used by one thread), so a slow document
  never holds up another document's analysis;
- an analysis is cancelled when a newer version of its document arrives and
  no request waits for it (or when the last request waiting for it is
  cancelled by the client, or the document closes, or the server shuts
  down): the checker stops at its next item boundary
  (`Analyzer.update(cancelled=...)`), keeping in its caches only what is
  keyed correctly, and the newer version's analysis, which waits for the
  document's lock, starts from there;
- queries (hover, completion, ...) on a finished analysis run on a separate
  small pool, never queued behind an analysis: an `Analysis` is read-only.

The checker is pure Python, so these threads share one interpreter lock; it
changes hands every few milliseconds (`sys.setswitchinterval`, see
server.serve), which bounds how long a long analysis can keep a request on
another document waiting.

Files. A document with a file: URI is analysed through the server's one
`Workspace` (checker/workspace.py): its text is the workspace's overlay for
its path, set by its own analysis (under the document's lock, so an analysis
always sees the text of its version), and the modules it imports are
analysed first, from their editors' text when they are open. When an
analysis of a document changes what the document exports (its
`ModuleExports` object) every document importing it is analysed again at its
same version (`refresh`: a new generation), and so are the files not open
(server/workspace.py). Other URIs (untitled:) have an `Analyzer` of their own.

Freshness rules:
- an analysis is tagged with the version of the text it was computed from;
- diagnostics are published only from an analysis whose version is still the
  document's version when it finishes (a stale result is dropped, never
  published; usually it is not even finished: it is cancelled);
- a request is answered from an analysis of the version current when the
  request arrived, computed on demand if the debounce has not fired yet, even
  if newer versions arrive meanwhile (as the protocol asks: an answer about
  the older text may still be of use). Only if that analysis is cancelled
  all the same (closed, shutting down) does it fail with `Superseded` (the
  server answers ContentModified).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from quiver.checker import Analyzer, check_text
from quiver.checker.analysis import Analysis, Cancelled
from quiver.checker.ast import Span
from quiver.checker.modules import ModuleExports
from quiver.checker.workspace import Workspace

from .convert import Codec, Lines, apply_change
from .workspace import DiskHost

log = logging.getLogger(__name__)

ANALYSIS_THREADS = 32  # analyses of different documents at the same time
QUERY_THREADS = 4
_WARM_UP = "dim D = 2\n\nmodel M:\n    param w: [D] = zeros\n\nfn main():\n    m = M.init(seed=1)\n    print(m.w)\n"


class Superseded(Exception):
    """The analysis a request waited for was cancelled: the document has a
    newer version than the request's."""


@dataclass
class RunFailure:
    """A runtime failure of `quiver run`, shown as a diagnostic while the
    document stays at the version that was run."""

    version: int
    span: Span
    message: str


@dataclass
class Inflight:
    """An analysis started on a thread."""

    version: int
    future: asyncio.Future
    generation: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)
    waiters: int = 0  # requests waiting for it

    def outdated(self, doc: Document, docs: dict) -> bool:
        return self.version != doc.version or docs.get(doc.uri) is not doc


class Document:
    def __init__(self, uri: str, text: str, version: int, path: str | None = None) -> None:
        self.uri = uri
        self.path = path  # in the workspace; None for a URI that is not a file
        # bumped when an imported module's exports changed: the same version is analysed again
        self.generation = 0
        self.analysis_generation = 0
        self.exports: ModuleExports | None = None  # what its latest analysis exports
        self.text = text
        self.version = version
        self.lines = Lines(text)
        self.analyzer = Analyzer()
        self.analysis: Analysis | None = None
        self.analysis_version: int | None = None
        self.inflight: Inflight | None = None  # the analysis started last
        self.lock = threading.Lock()  # held by the thread analysing it (shared by the documents of its URI)
        self.timer: asyncio.TimerHandle | None = None
        self.run_failure: RunFailure | None = None
        self.closed = False
        self.published: tuple | None = None  # (version, analysis, run failure) last pushed

    def apply_changes(self, changes, version: int, codec: Codec) -> None:
        lines = self.lines
        for change in changes:
            lines = apply_change(lines, codec, change)
        self.text = lines.text
        self.lines = lines
        self.version = version

    def lines_of(self, analysis: Analysis):
        """The line index of an analysis' text: the document's own when it is
        the same text (its line starts are kept up to date edit by edit)."""
        return self.lines if self.lines.text is analysis.text else analysis.lines

    @property
    def current_analysis(self) -> Analysis | None:
        return self.analysis if self.analysis_version == self.version else None

    def run_failure_of(self, version: int) -> RunFailure | None:
        """The run failure to show with the diagnostics of `version`: only one
        found by a run of that same version."""
        failure = self.run_failure
        return failure if failure is not None and failure.version == version else None


class Documents:
    """The open documents, and the scheduling of their analyses."""

    def __init__(
        self, publish: Callable[[Document], None], debounce: Callable[[], float], workspace: Workspace | None = None
    ) -> None:
        self._docs: dict[str, Document] = {}
        self._by_path: dict[str, Document] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._publish = publish
        self._debounce = debounce
        self.workspace = workspace if workspace is not None else Workspace(DiskHost())
        self.busy = 0  # analyses of documents submitted and not finished
        self._analyses = concurrent.futures.ThreadPoolExecutor(
            max_workers=ANALYSIS_THREADS, thread_name_prefix="quiver-analysis"
        )
        self._queries = concurrent.futures.ThreadPoolExecutor(
            max_workers=QUERY_THREADS, thread_name_prefix="quiver-query"
        )

    def warm_up(self) -> None:
        """Load what the checker builds on first use (the parser tables: about
        0.4 s) on an analysis thread, before the first document needs it."""
        self._analyses.submit(check_text, _WARM_UP)

    # ------------------------------------------------------------------ store

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def by_path(self, path: str) -> Document | None:
        return self._by_path.get(path)

    def all(self) -> list[Document]:
        return list(self._docs.values())

    def open(self, uri: str, text: str, version: int, path: str | None = None) -> Document:
        old = self._docs.pop(uri, None)
        if old is not None:
            self._cancel(old, force=True)
            if old.path is not None:
                self._by_path.pop(old.path, None)
        doc = Document(uri, text, version, path)
        doc.lock = self._locks.setdefault(uri, threading.Lock())
        self._docs[uri] = doc
        if path is not None:
            self._by_path[path] = doc
        self._schedule(doc, 0.0)
        return doc

    def refresh(self, doc: Document) -> None:
        """Analyse the document again at its version: a module it imports
        changed. Requests meanwhile are answered from the analysis it has."""
        if self._docs.get(doc.uri) is not doc:
            return
        doc.generation += 1
        if doc.timer is None:
            self._schedule(doc, 0.0)

    def change(self, uri: str, changes, version: int, codec: Codec) -> Document | None:
        doc = self._docs.get(uri)
        if doc is None:
            return None
        doc.apply_changes(changes, version, codec)
        self._schedule(doc, self._debounce())  # and the analysis of the older version is cancelled
        return doc

    def close(self, uri: str) -> Document | None:
        doc = self._docs.pop(uri, None)
        if doc is not None:
            doc.closed = True
            self._cancel(doc, force=True)
            if doc.path is not None and self._by_path.get(doc.path) is doc:
                del self._by_path[doc.path]
                self.workspace.set_overlay(doc.path, None)  # back to the file on disk
        return doc

    def shutdown(self) -> None:
        """Cancel every analysis (each stops at its next item boundary) and
        let the threads go; safe to call more than once, with or without an
        event loop."""
        for doc in list(self._docs.values()):
            self._cancel(doc, force=True)
        self._analyses.shutdown(wait=False, cancel_futures=True)
        self._queries.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ analysis

    def _cancel(self, doc: Document, force: bool = False) -> None:
        """Cancel the pending debounce, and the analysis in flight unless a
        request still waits for it (`force`: even then; the document closed or
        the server is shutting down)."""
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None
        inflight = doc.inflight
        if inflight is not None and (force or inflight.waiters == 0):
            inflight.cancel.set()

    def _schedule(self, doc: Document, delay: float) -> None:
        """Analyse (and publish) after `delay` seconds without further edits."""
        self._cancel(doc)
        loop = asyncio.get_running_loop()
        if delay <= 0:
            doc.timer = loop.call_soon(self._fire, doc)  # type: ignore[assignment]
        else:
            doc.timer = loop.call_later(delay, self._fire, doc)

    def _fire(self, doc: Document) -> None:
        doc.timer = None
        if self._docs.get(doc.uri) is doc and (
            doc.analysis_version != doc.version or doc.analysis_generation != doc.generation
        ):
            self.analyze(doc)

    def analyze(self, doc: Document) -> Inflight:
        """The analysis of the document's current version (started now unless
        it is already running). It starts once the analysis of an older
        version has stopped: cancelled, unless a request waits for it."""
        v = doc.version
        old = doc.inflight
        if old is not None and old.version == v and old.generation == doc.generation:
            return old
        if old is not None and old.waiters == 0:
            old.cancel.set()  # its result would be dropped
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        fut = loop.run_in_executor(self._analyses, _update, doc, doc.text, cancel, self.workspace)
        self.busy += 1
        inflight = Inflight(v, fut, doc.generation, cancel)
        doc.inflight = inflight
        fut.add_done_callback(partial(self._analyzed, doc, inflight))
        return inflight

    def _analyzed(self, doc: Document, inflight: Inflight, fut: asyncio.Future) -> None:
        self.busy -= 1
        if doc.inflight is inflight:
            doc.inflight = None
        if fut.cancelled() or isinstance(fut.exception(), Cancelled):
            return
        if fut.exception() is not None:
            log.error("analysis of %s failed", doc.uri, exc_info=fut.exception())
            return
        if self._docs.get(doc.uri) is not doc or doc.version != inflight.version:
            return  # stale: a newer version exists (its own analysis is scheduled)
        if doc.version == doc.analysis_version and inflight.generation < doc.analysis_generation:
            return  # an analysis with newer imports is already there
        doc.analysis, doc.exports = fut.result()
        doc.analysis_version = inflight.version
        doc.analysis_generation = inflight.generation
        if doc.timer is not None and doc.generation == inflight.generation:
            doc.timer.cancel()
            doc.timer = None
        self._publish(doc)  # (the server also looks at doc.exports there)

    async def analysis(self, doc: Document, latest: bool = False) -> Analysis:
        """The analysis of the version the document has now, even if newer
        versions arrive while it is computed; `Superseded` when it is
        cancelled all the same (the document closed, the server shuts down).
        A request cancelled by the client stops waiting, and an analysis of
        an outdated version that nobody waits for any more is cancelled.
        `latest`: with what its imports export now (not an analysis of the
        same version from before a module it imports changed)."""
        if (
            doc.analysis_version == doc.version
            and doc.analysis is not None
            and (not latest or doc.analysis_generation == doc.generation)
        ):
            return doc.analysis
        inflight = self.analyze(doc)
        inflight.waiters += 1
        try:
            # shielded: a request that is cancelled does not cancel the analysis
            return (await asyncio.shield(inflight.future))[0]
        except Cancelled:
            raise Superseded(doc.uri) from None
        finally:
            inflight.waiters -= 1
            if inflight.waiters == 0 and inflight.outdated(doc, self._docs):
                inflight.cancel.set()

    async def run_query(self, fn, *args):
        """Run a query on a finished analysis, off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self._queries, fn, *args)


def _update(doc: Document, text: str, cancel: threading.Event, ws: Workspace) -> tuple[Analysis, ModuleExports | None]:
    """On an analysis thread: the analysis of `text` (the document's, at one
    version) and what it exports, after any other analysis of the document
    (cancelled first when it is of an older version). Through the workspace
    for a file: its overlay is set to `text` here, under the document's
    lock, so the analysis is of this text."""
    with doc.lock:
        if cancel.is_set():
            raise Cancelled
        if doc.path is None:
            return doc.analyzer.update(text, cancelled=cancel.is_set), None
        ws.set_overlay(doc.path, text)
        if doc.closed:  # closed meanwhile (close() may have run before the line above)
            ws.set_overlay(doc.path, None)
            raise Cancelled
        analysis = ws.analyze(doc.path, cancelled=cancel.is_set)
        if analysis is None or analysis.text != text:
            raise Cancelled  # closed meanwhile
        return analysis, ws.exports(doc.path, cancelled=cancel.is_set)
