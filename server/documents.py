"""Open documents: their text, version and analyses.

A document is its text, its line index and its version; versions only go
forward. Each document owns one `Analyzer` (the checker's incremental API), so
an edit re-checks only what it touched. Analyses run on one worker thread (the
checker is pure Python: one thread is all the interpreter can use, and it keeps
each Analyzer used by one thread at a time); the event loop only applies edits,
answers from finished analyses and publishes.

Freshness rules:
- an analysis is tagged with the version of the text it was computed from;
- diagnostics are published only from an analysis whose version is still the
  document's version when it finishes (a stale result is dropped, never
  published);
- a request is answered from an analysis of the version current when the
  request arrived, computed on demand if the debounce has not fired yet.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from quiver.checker import Analyzer
from quiver.checker.analysis import Analysis
from quiver.checker.ast import Span

from .convert import Codec, Lines, apply_change

log = logging.getLogger(__name__)


@dataclass
class RunFailure:
    """A runtime failure of `quiver run`, shown as a diagnostic while the
    document stays at the version that was run."""

    version: int
    span: Span
    message: str


class Document:
    def __init__(self, uri: str, text: str, version: int) -> None:
        self.uri = uri
        self.text = text
        self.version = version
        self.lines = Lines(text)
        self.analyzer = Analyzer()
        self.analysis: Analysis | None = None
        self.analysis_version: int | None = None
        self.inflight: tuple[int, asyncio.Future] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.run_failure: RunFailure | None = None
        self.published: tuple | None = None  # (version, run generation) last pushed

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

    def __init__(self, publish: Callable[[Document], None], debounce: Callable[[], float]) -> None:
        self._docs: dict[str, Document] = {}
        self._publish = publish
        self._debounce = debounce
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="quiver-analysis")

    # ------------------------------------------------------------------ store

    def get(self, uri: str) -> Document | None:
        return self._docs.get(uri)

    def open(self, uri: str, text: str, version: int) -> Document:
        old = self._docs.pop(uri, None)
        if old is not None:
            self._cancel(old)
        doc = Document(uri, text, version)
        self._docs[uri] = doc
        self._schedule(doc, 0.0)
        return doc

    def change(self, uri: str, changes, version: int, codec: Codec) -> Document | None:
        doc = self._docs.get(uri)
        if doc is None:
            return None
        doc.apply_changes(changes, version, codec)
        self._schedule(doc, self._debounce())
        return doc

    def close(self, uri: str) -> Document | None:
        doc = self._docs.pop(uri, None)
        if doc is not None:
            self._cancel(doc)
        return doc

    def shutdown(self) -> None:
        for doc in list(self._docs.values()):
            self._cancel(doc)
        self._worker.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ analysis

    def _cancel(self, doc: Document) -> None:
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None

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
        if self._docs.get(doc.uri) is doc and doc.analysis_version != doc.version:
            self.analyze(doc)

    def analyze(self, doc: Document) -> asyncio.Future:
        """The analysis of the document's current version (started now unless
        it is already running)."""
        v = doc.version
        if doc.inflight is not None and doc.inflight[0] == v:
            return doc.inflight[1]
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(self._worker, doc.analyzer.update, doc.text)
        doc.inflight = (v, fut)
        fut.add_done_callback(partial(self._analyzed, doc, v))
        return fut

    def _analyzed(self, doc: Document, version: int, fut: asyncio.Future) -> None:
        if doc.inflight is not None and doc.inflight[1] is fut:
            doc.inflight = None
        if fut.cancelled():
            return
        if fut.exception() is not None:
            log.error("analysis of %s failed", doc.uri, exc_info=fut.exception())
            return
        if self._docs.get(doc.uri) is not doc or doc.version != version:
            return  # stale: a newer version exists (its own analysis is scheduled)
        doc.analysis = fut.result()
        doc.analysis_version = version
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None
        self._publish(doc)

    async def analysis(self, doc: Document) -> Analysis:
        """The analysis of the version the document has now."""
        if doc.analysis_version == doc.version and doc.analysis is not None:
            return doc.analysis
        return await self.analyze(doc)

    async def run_on_worker(self, fn, *args):
        """Run a query on the analysis thread (off the event loop)."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)
