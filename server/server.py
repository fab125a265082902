"""The language server: pygls handlers, one per LSP method.

Each handler is short: it hands `QuiverServer.query` (or `query_at`, for a
position) a function that asks quiver.checker.ide one question and converts
the answer (server/convert.py); `query` finds the document's analysis of its
current version and runs that function on the analysis thread. Mutations
(open, change, close, configuration) run in order on the event loop.

Nothing is built at import: `create_server()` makes a server and registers
the handlers below on it (`python -m quiver.server` calls it, see
__main__.py), so importing this module for its parts starts nothing.

Every request gets exactly one response: an unknown document or a position
past the end gives null; malformed params give an InvalidParams error; an
exception in a handler is logged (window/logMessage) and answered with an
InternalError, and the server carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.protocol.language_server import lsp_method

from quiver.cache import CACHE_DIR_NAME, ResultCache, key_for
from quiver.checker import formatter, ide
from quiver.checker.analysis import Analysis
from quiver.checker.ast import Span
from quiver.checker.ide import workspace_nav as nav
from quiver.checker.modules import ModuleExports
from quiver.checker.source import LineIndex
from quiver.checker.workspace import Workspace
from quiver.run_protocol import RUNTIME, RunError

from . import __version__, capabilities, convert
from . import settings as S
from .documents import Document, Documents, RunFailure, Superseded
from .runs import Run, RunManager, RunRefused, uri_to_path
from .workspace import Background, path_to_uri, scan, under
from .workspace import uri_to_path as file_path

log = logging.getLogger("quiver.server")

_IGNORED = object()  # a message already answered while it was being read
SERVER_CANCELLED = -32802  # LSP's ServerCancelled (3.17)
REQUEST_FAILED = -32803  # LSP's RequestFailed (3.17): a valid request that failed, the message says why
STOP_WAIT_SECONDS = 5.0


def request_failed(message: str) -> JsonRpcException:
    return JsonRpcException(message, REQUEST_FAILED)


class QuiverProtocol(LanguageServerProtocol):
    """pygls' protocol with three changes: the `initialize` reply comes from
    server/capabilities.py; a request whose params do not match the protocol
    gets an InvalidParams error instead of no reply; and a request already
    answered by the fast start (see __main__.py) is not answered twice."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.answered_early: set = set()
        self.raw_initialize_params: dict | None = None
        self.exiting = False

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        yield from super().lsp_initialize(params)
        raw = self.raw_initialize_params
        if raw is None:
            raw = self._converter.unstructure(params, lsp.InitializeParams)
        result = capabilities.initialize_result(raw)
        self.server_capabilities = self._converter.structure(result["capabilities"], lsp.ServerCapabilities)
        return lsp.InitializeResult(
            capabilities=self.server_capabilities, server_info=lsp.ServerInfo(**result["serverInfo"])
        )

    # The server keeps its own documents (server/documents.py). pygls would
    # keep a second copy, updated on every edit at a cost that grows with the
    # document, and never read: these three only pass the notification on.

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    def _handle_notification(self, method_name: str, params: Any) -> None:
        super()._handle_notification(method_name, params)
        # pygls files a future for each notification handled by a generator
        # (didOpen, didChange, ...) under a fresh id and never removes it: one
        # entry per keystroke, forever. Finished ones are dropped here (a
        # request's own entry is removed when its reply is sent, or is done).
        done = [k for k, f in self._request_futures.items() if f.done()]
        for k in done:
            del self._request_futures[k]

    def structure_message(self, data: dict[str, Any]):
        if isinstance(data, dict) and data.get("method") == lsp.INITIALIZE and isinstance(data.get("params"), dict):
            self.raw_initialize_params = data["params"]
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data and data["id"] not in self.answered_early:
                error = exc if isinstance(exc, JsonRpcInvalidParams) else JsonRpcInvalidParams()
                self._send_response(data["id"], None, error.to_response_error())
                return _IGNORED
            raise

    def handle_message(self, message) -> None:
        if message is _IGNORED:
            return
        if self._shutdown and isinstance(message, RPCRequest) and message.method != lsp.EXIT:
            # pygls logs and drops these; the protocol says they fail (a client waits for an answer)
            error = JsonRpcInvalidRequest("the server is shutting down: no request but exit is answered")
            self._send_response(message.id, None, error.to_response_error())
            return
        super().handle_message(message)

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args):
        # pygls closes the output and raises SystemExit; whatever is still
        # pending (a run's last output, its end) is dropped from here on
        # instead of failing to write, with a traceback, into a closed pipe.
        self.exiting = True
        yield from super().lsp_exit(*args)

    def _send_data(self, data) -> None:
        if self.exiting:
            return
        super()._send_data(data)

    def _send_handler_result(self, future, *, msg_id) -> None:
        # An error the server answers on purpose (ContentModified, a run that
        # cannot start, bad arguments) is one line in the log, not a
        # traceback at ERROR level as pygls would write it.
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, JsonRpcException):
            self._request_futures.pop(msg_id, None)
            log.info("request %s answered with error %s: %s", msg_id, exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_response(self, msg_id, result=None, error=None) -> None:
        if msg_id in self.answered_early:
            self.answered_early.discard(msg_id)
            return
        super()._send_response(msg_id, result, error)


class QuiverServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "quiver-lsp",
            __version__,
            protocol_cls=QuiverProtocol,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
        )
        self.codec = convert.Codec("utf-16")
        self.settings = S.Settings()
        self.diagnostic_mode = "both"
        self._reported: set[str] = set()
        self._docs_base: str | None | bool = False  # False: not worked out yet
        # Every file through one Workspace (`self.ws`, checker/workspace.py):
        # open documents by their editors' text, the other .qv files under
        # the workspace folders from disk, analysed in the background.
        self.roots: list[str] = []
        self.files: set[str] = set()  # the .qv files under the roots
        self._exports_seen: dict[str, ModuleExports | None] = {}
        self._pushed: dict[str, Analysis | None] = {}  # files not open: the analysis last published
        # The tools' persistent cache of results (driver/cache.py): a file
        # opened (or found at start) whose text and imports were checked
        # before shows those diagnostics at once, before its analysis ends.
        self._result_cache: ResultCache | None | bool = False  # False: not made yet
        self._result_ids: dict[str, tuple[Analysis, int]] = {}  # pull diagnostics
        self._next_result = 0
        self._result_lock = threading.Lock()
        self.background = Background(
            lambda: self.ws, lambda: self.docs.busy > 0, lambda p: self.docs.by_path(p) is not None, self._analyzed_file
        )
        self.docs = Documents(self._publish, lambda: self.settings.diagnostics.debounce_ms / 1000)
        self.runs = RunManager(
            self._notify, self._run_failed, lambda: self.settings.run.timeout_seconds, lambda: self.settings.run.nproc
        )

    @property
    def ws(self) -> Workspace:
        """The workspace every file is analysed in (the documents')."""
        return self.docs.workspace

    @property
    def quiver_protocol(self) -> QuiverProtocol:
        """The protocol, as the class this server was built with."""
        assert isinstance(self.protocol, QuiverProtocol)
        return self.protocol

    # ------------------------------------------------------------------ plumbing

    def log(self, message: str, level: lsp.MessageType = lsp.MessageType.Log) -> None:
        with contextlib.suppress(Exception):  # the client may be gone
            self.window_log_message(lsp.LogMessageParams(type=level, message=message))

    def report_server_error(self, error: Exception, source) -> None:
        # Logged, never shown as a pop-up: the handler boundary already logged it.
        log.warning("%s: %s", getattr(source, "__name__", source), error)

    def shutdown(self) -> None:
        """After the event loop has ended (exit, or the client went away):
        every run killed, every analysis cancelled. Never raises."""
        for step in (self.runs.stop_all, self.background.stop, self.docs.shutdown, super().shutdown):
            try:
                step()
            except Exception:  # pragma: no cover - going away regardless
                log.exception("shutting down")

    def _notify(self, method: str, params: dict) -> None:
        self.protocol.notify(method, params)

    def update_settings(self, raw: Any) -> None:
        self.settings, problems = S.parse(raw, self.settings)
        for p in problems:
            if p not in self._reported:
                self._reported.add(p)
                self.window_show_message(
                    lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"Quiver: {p}; using the default")
                )

    @property
    def docs_base(self) -> str | None:
        """Where each diagnostic code links to (anchors `#e0201`)."""
        if self.settings.diagnostics.docs_base_url:
            return self.settings.diagnostics.docs_base_url
        if self._docs_base is False:
            self._docs_base = diagnostics_doc_uri()
        return self._docs_base  # type: ignore[return-value]

    # ------------------------------------------------------------------ publishing

    def _publish(self, doc: Document) -> None:
        if doc.path is not None and doc.analysis is not None:
            self._exports_changed(doc.path, doc.exports)
        analysis = doc.current_analysis
        if analysis is None or self.diagnostic_mode == "pull":
            return
        failure = doc.run_failure_of(doc.version)
        key = (doc.version, analysis, failure)
        old = doc.published
        if old is not None and old[0] == key[0] and old[1] is analysis and old[2] is failure:
            return  # analysed again (a module it imports changed) to the same result
        if old is None:
            self.remember(doc.path, analysis)  # the text it was opened with
        doc.published = key
        diagnostics = self.diagnostics_of(doc.uri, analysis, doc.lines_of(analysis), failure)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=doc.uri, version=doc.version, diagnostics=diagnostics)
        )

    def diagnostics_of(
        self, uri: str, analysis: Analysis, lines: LineIndex, failure: RunFailure | None
    ) -> list[lsp.Diagnostic]:
        """The checker's diagnostics of an analysis, and a run's failure at the same version."""
        base = self.docs_base
        out = [convert.diagnostic(d, lines, self.codec, uri, base) for d in analysis.diagnostics]
        if failure is not None:
            out.append(convert.run_diagnostic(failure.span, failure.message, lines, self.codec))
        return out

    # ------------------------------------------------------------------ workspace

    def uri_of(self, path: str) -> str:
        doc = self.docs.by_path(path)
        return doc.uri if doc is not None else path_to_uri(path)

    def workspace_files(self) -> list[str]:
        """The files of the workspace: under its folders, and the open ones."""
        out = set(self.files)
        out.update(d.path for d in self.docs.all() if d.path is not None)
        return sorted(out)

    def _exports_changed(self, path: str, exports: ModuleExports | None) -> None:
        """After an analysis of `path`: when what it exports changed, every
        file importing it is analysed again (open ones at their versions)."""
        missing = object()
        old = self._exports_seen.get(path, missing)
        self._exports_seen[path] = exports
        if old is not exports:
            self.reanalyze(self.ws.dependents(path))
            if self.diagnostic_mode == "pull":
                self._refresh_pull()  # the client pulls again (each pull waits for the new analyses)

    def reanalyze(self, paths) -> None:
        later = []
        for p in sorted(paths):
            doc = self.docs.by_path(p)
            if doc is not None:
                self.docs.refresh(doc)
            else:
                later.append(p)
        self.background.enqueue(later, urgent=True)

    def _analyzed_file(self, path: str, analysis: Analysis | None, exports: ModuleExports | None) -> None:
        """A file that is not open was analysed in the background."""
        if self.docs.by_path(path) is not None:
            return  # opened meanwhile: its document is analysed and published
        self._exports_changed(path, exports)
        if path in self.files:
            self.publish_file(path, analysis)

    # ------------------------------------------------------------------ the cache of results

    @property
    def result_cache(self) -> ResultCache | None:
        """`$QUIVER_CACHE_DIR`, else `.quiver_cache` in the first workspace
        folder (where qlint run from it keeps its own); none without either."""
        if self._result_cache is False:
            folder = os.environ.get("QUIVER_CACHE_DIR") or (
                os.path.join(self.roots[0], CACHE_DIR_NAME) if self.roots else None
            )
            self._result_cache = ResultCache(Path(folder)) if folder else None
        return self._result_cache  # type: ignore[return-value]

    def cached_diagnostics(self, path: str, text: str) -> list | None:
        cache = self.result_cache
        if cache is None or self.diagnostic_mode == "pull":
            return None
        try:
            return cache.get(key_for(self.ws, path, text))
        except Exception:  # the cache only saves time: never a reason to fail
            log.exception("reading the cache of results")
            return None

    def remember(self, path: str | None, analysis: Analysis) -> None:
        """Store an analysis' diagnostics under its text's key (when it is
        the one a file was opened or found with: not at every keystroke)."""
        cache = self.result_cache
        if cache is None or path is None:
            return
        try:
            cache.put(key_for(self.ws, path, analysis.text), list(analysis.diagnostics))
        except Exception:
            log.exception("writing the cache of results")

    def publish_cached(self, uri: str, path: str, text: str, version: int | None, lines) -> bool:
        diagnostics = self.cached_diagnostics(path, text)
        if diagnostics is None:
            return False
        base = self.docs_base
        items = [convert.diagnostic(d, lines, self.codec, uri, base) for d in diagnostics]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=items)
        )
        return True

    def publish_file(self, path: str, analysis: Analysis | None) -> None:
        """The diagnostics of a file that is not open (none when it is gone)."""
        if self.diagnostic_mode == "pull" or (path in self._pushed and self._pushed[path] is analysis):
            return
        if analysis is not None and path not in self._pushed:
            self.remember(path, analysis)
        self._pushed[path] = analysis
        uri = path_to_uri(path)
        items = [] if analysis is None else self.diagnostics_of(uri, analysis, analysis.lines, None)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items))

    def clear_file(self, path: str) -> None:
        if self._pushed.pop(path, None) is not None and self.diagnostic_mode != "pull":
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=path_to_uri(path), diagnostics=[]))

    def set_roots(self, roots: list[str]) -> None:
        """The workspace folders changed (or are first known): qualified
        names and resolution may change, so every file not open is read and
        analysed again."""
        self.roots = roots
        self.ws.set_roots(roots)
        for p in self.ws.files():
            if self.docs.by_path(p) is None:
                self.ws.forget(p)
        self._exports_seen.clear()
        asyncio.get_running_loop().create_task(self._scan())

    async def _scan(self) -> None:
        roots = list(self.roots)
        try:
            found = await asyncio.get_running_loop().run_in_executor(None, scan, roots)
        except Exception:
            log.exception("scanning the workspace folders")
            return
        if roots != self.roots:
            return  # changed again meanwhile; that scan follows
        for gone in self.files - set(found):
            self.clear_file(gone)
        self.files = set(found)
        for doc in self.docs.all():
            self.docs.refresh(doc)
        self.background.enqueue(found)
        if self.result_cache is None or self.diagnostic_mode == "pull":
            return
        # What the cache knows of the files not open, until their analyses end
        # (read off the event loop: a workspace may hold thousands of files).
        loop = asyncio.get_running_loop()
        hits = await loop.run_in_executor(None, self._cached_files, found)
        for path, text, diagnostics in hits:
            if self.docs.by_path(path) is None and path not in self._pushed:
                lines = LineIndex(text)
                base = self.docs_base
                uri = path_to_uri(path)
                items = [convert.diagnostic(d, lines, self.codec, uri, base) for d in diagnostics]
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items))

    def _cached_files(self, paths: list[str]) -> list[tuple[str, str, list]]:
        out = []
        for path in paths:
            text = self.ws.text(path)
            diagnostics = self.cached_diagnostics(path, text) if text is not None else None
            if diagnostics is not None and text is not None:
                out.append((path, str(text), diagnostics))
        return out

    def files_changed(self, changes: list[tuple[str, bool]]) -> None:
        """Files created, changed (False) or deleted (True) on disk."""
        affected: set[str] = set()
        for path, deleted in changes:
            stem = path.rsplit("/", 1)[-1].removesuffix(".qv")
            affected |= self.ws.dependents(path)
            # files whose import of this name found nothing, or another file
            for f in self.ws.files():
                if any(s.rsplit(".", 1)[-1] == stem for s in self.ws.imports_of(f)):
                    affected.add(f)
            self.ws.file_changed(path)
            is_open = self.docs.by_path(path) is not None
            if deleted:
                self.files.discard(path)
                self._exports_seen.pop(path, None)
                if not is_open:
                    self.ws.forget(path)
                    self.clear_file(path)
            else:
                if under(path, self.roots):
                    self.files.add(path)
                if not is_open:
                    affected.add(path)
        self.reanalyze(affected)

    # ------------------------------------------------------------------ pull diagnostics

    def result_id(self, key: str, analysis: Analysis) -> str:
        """One id per analysis of a document (a document analysed again to
        the same analysis keeps its id). Called from query threads too."""
        with self._result_lock:
            hit = self._result_ids.get(key)
            if hit is not None and hit[0] is analysis:
                return str(hit[1])
            self._next_result += 1
            self._result_ids[key] = (analysis, self._next_result)
            return str(self._next_result)

    async def document_report(self, doc: Document, previous: str | None):
        version = doc.version  # the report is of this version, whatever arrives while it is computed
        failure = doc.run_failure_of(version)
        try:
            analysis = await self.docs.analysis(doc, latest=True)
        except Superseded:
            # The protocol's way for diagnostics: the client asks again (for the new version).
            raise JsonRpcException(
                f"{doc.uri} changed or closed while this request waited for its analysis",
                SERVER_CANCELLED,
                {"retriggerRequest": True},
            ) from None
        result_id = self.result_id(doc.uri, analysis) + (f"+run{version}" if failure is not None else "")
        if previous == result_id:
            return lsp.UnchangedDocumentDiagnosticReport(result_id=result_id)
        lines = doc.lines_of(analysis)
        items = await self.docs.run_query(self.diagnostics_of, doc.uri, analysis, lines, failure)
        return lsp.FullDocumentDiagnosticReport(items=items, result_id=result_id)

    def file_report(self, path: str, uri: str, previous: str | None):
        """On a query thread: the report of a file that is not open."""
        analysis = self.ws.analyze(path)
        if analysis is None:
            return lsp.FullDocumentDiagnosticReport(items=[])
        result_id = self.result_id(uri, analysis)
        if previous == result_id:
            return lsp.UnchangedDocumentDiagnosticReport(result_id=result_id)
        items = self.diagnostics_of(uri, analysis, analysis.lines, None)
        return lsp.FullDocumentDiagnosticReport(items=items, result_id=result_id)

    # ------------------------------------------------------------------ runs

    def _run_failed(self, run: Run, error: RunError | None) -> None:
        doc = self.docs.get(run.uri)
        if doc is None or error is None or error.kind != RUNTIME or doc.version != run.version:
            return
        if Path(error.path).resolve() != run.path.resolve():
            return
        lines = doc.lines
        start = lines.offset(error.line - 1, error.col - 1)
        end = lines.offset(error.end_line - 1, error.end_col - 1)
        if end <= start:
            end = min(lines.line_end(lines.position(start).line), start + 1)
        doc.run_failure = RunFailure(run.version, Span(start, max(end, start)), error.message)
        self._publish(doc)
        self._refresh_pull()

    def _refresh_pull(self) -> None:
        caps = self.client_capabilities.workspace
        if (
            self.diagnostic_mode != "push"
            and caps is not None
            and caps.diagnostics is not None
            and caps.diagnostics.refresh_support
        ):
            self.workspace_diagnostic_refresh(None)

    # ------------------------------------------------------------------ queries

    async def query(self, uri: str, answer: Callable[[Analysis, LineIndex], Any]) -> Any:
        """The one path of a request about a document: its analysis of the
        version it has now (computed at once if the debounce has not fired
        yet), then `answer(analysis, lines)` on the analysis thread, off the
        event loop. `answer` asks quiver.checker.ide and converts what it
        says; `lines` is the line index of the analysed text. None when the
        document is not open."""
        doc = self.docs.get(uri)
        if doc is None:
            return None
        analysis = await self._request_analysis(doc)
        return await self.docs.run_query(answer, analysis, doc.lines_of(analysis))

    async def _request_analysis(self, doc: Document) -> Analysis:
        """The analysis a request waits for; ContentModified when it is
        cancelled all the same (the document closed meanwhile)."""
        try:
            return await self.docs.analysis(doc)
        except Superseded:
            raise JsonRpcContentModified(
                f"{doc.uri} changed or closed while this request waited for its analysis"
            ) from None

    async def query_at(
        self, uri: str, position: lsp.Position, answer: Callable[[Analysis, LineIndex, int], Any]
    ) -> Any:
        """`query` about a position: `answer(analysis, lines, offset)`; None
        when the position's line is past the end of the text."""

        def at(analysis: Analysis, lines: LineIndex) -> Any:
            offset = self.codec.offset(lines, position)
            return None if offset is None else answer(analysis, lines, offset)

        return await self.query(uri, at)

    async def query_files(
        self,
        uri: str,
        position: lsp.Position,
        across: Callable[[str, int], Any],
        answer: Callable[[Analysis, LineIndex, int], Any],
    ) -> Any:
        """A request that may look at other files: `across(path, offset)`
        through the workspace, once the document's analysis of its current
        version is there; `answer` (as for `query_at`) for a document that
        is not a file."""
        doc = self.docs.get(uri)
        if doc is None:
            return None
        if doc.path is None:
            return await self.query_at(uri, position, answer)
        path = doc.path
        analysis = await self._request_analysis(doc)
        lines = doc.lines_of(analysis)

        def run() -> Any:
            offset = self.codec.offset(lines, position)
            return None if offset is None else across(path, offset)

        return await self.docs.run_query(run)

    def analyses(self) -> Callable[[str], Analysis | None]:
        """How the cross-file queries get a file's analysis without waiting
        for one in progress: an open document's latest, else the
        workspace's latest, else (a file never analysed) a new one."""

        def get(path: str) -> Analysis | None:
            doc = self.docs.by_path(path)
            if doc is not None and doc.analysis is not None:
                return doc.analysis
            return self.ws.analysis_of(path) or self.ws.analyze(path)

        return get

    async def settle(self) -> None:
        """Every open document analysed at its current version (before a
        query whose answer edits them)."""
        for doc in self.docs.all():
            with contextlib.suppress(Superseded):
                await self.docs.analysis(doc)

    def location(self, path: str, span: Span, lines: LineIndex) -> lsp.Location:
        return convert.location(self.uri_of(path), span, lines, self.codec)

    @property
    def markdown_formats(self):
        td = self.client_capabilities.text_document
        return td.hover.content_format if td is not None and td.hover is not None else None

    @property
    def doc_formats(self):
        td = self.client_capabilities.text_document
        c = td.completion if td is not None else None
        item = c.completion_item if c is not None else None
        return item.documentation_format if item is not None else None


def diagnostics_doc_uri() -> str | None:
    """docs/diagnostics.md next to the package (a source checkout or an
    editable install); otherwise the same page generated from the catalog
    into the user's cache folder."""
    import quiver.checker

    repo_doc = Path(quiver.checker.__file__).resolve().parent.parent / "docs" / "diagnostics.md"
    if repo_doc.is_file():
        return repo_doc.as_uri()
    try:
        from quiver.checker.catalog import render_markdown

        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "quiver"
        page = cache / f"diagnostics-{__version__}.md"
        text = render_markdown()
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            cache.mkdir(parents=True, exist_ok=True)
            page.write_text(text, encoding="utf-8")
        return page.as_uri()
    except OSError:
        return None


# ====================================================================== registration

_FEATURES: list[tuple[str, Any, Callable]] = []  # (method, options, handler), in the order below
_COMMANDS: list[tuple[str, Callable]] = []


def feature(method: str, options: Any = None):
    """Mark a function as the handler of an LSP method (registered by create_server)."""

    def mark(fn):
        _FEATURES.append((method, options, fn))
        return fn

    return mark


def command(name: str):
    """Mark a function as the handler of a `workspace/executeCommand` command
    (registered by create_server). As for requests, an unexpected exception is
    logged with its traceback and answered with an InternalError whose
    message says what failed, never with the traceback."""

    def mark(fn):
        @functools.wraps(fn)
        async def wrapper(ls: QuiverServer, *args):
            try:
                return await fn(ls, *args)
            except JsonRpcException:
                raise
            except Exception as exc:
                ls.log(f"{name} failed:\n{traceback.format_exc()}", lsp.MessageType.Error)
                raise JsonRpcInternalError(f"{name} failed: {exc} (the server log has the details)") from exc

        _COMMANDS.append((name, wrapper))
        return fn

    return mark


def create_server() -> QuiverServer:
    """A new server with every handler of this module registered."""
    server = QuiverServer()
    for method, options, fn in _FEATURES:
        server.feature(method, options)(fn)
    for name, fn in _COMMANDS:
        server.command(name)(fn)
    return server


# ====================================================================== handler boundary


def request(fn):
    """A request handler: exceptions are logged and answered with an error."""

    @functools.wraps(fn)
    async def wrapper(ls: QuiverServer, params):
        try:
            return await fn(ls, params)
        except JsonRpcException:
            raise
        except Exception as exc:
            ls.log(f"{fn.__name__} failed:\n{traceback.format_exc()}", lsp.MessageType.Error)
            raise JsonRpcInternalError(f"{fn.__name__}: {exc}") from exc

    return wrapper


def notification(fn):
    """A notification handler: exceptions are logged and dropped."""

    @functools.wraps(fn)
    def wrapper(ls: QuiverServer, params):
        try:
            fn(ls, params)
        except Exception:
            ls.log(f"{fn.__name__} failed:\n{traceback.format_exc()}", lsp.MessageType.Error)

    return wrapper


# ====================================================================== lifecycle


@feature(lsp.INITIALIZE)
@notification
def initialize(ls: QuiverServer, params: lsp.InitializeParams) -> None:
    raw = ls.quiver_protocol.raw_initialize_params
    ls.codec = convert.Codec(capabilities.choose_encoding(raw.get("capabilities") if raw else None))
    ls.diagnostic_mode = capabilities.diagnostic_mode(params.initialization_options)
    ls.update_settings(params.initialization_options)
    ls.roots = _roots(params)
    ls.ws.set_roots(ls.roots)


def _roots(params: lsp.InitializeParams) -> list[str]:
    """The workspace folders (file: URIs only), else the root URI or path."""
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    out = [p for p in (file_path(u) for u in uris) if p is not None]
    if not out and params.root_path and params.root_path.startswith("/"):
        out = [os.path.normpath(params.root_path)]
    return list(dict.fromkeys(out))


@feature(lsp.INITIALIZED)
def initialized(ls: QuiverServer, params: lsp.InitializedParams) -> None:
    ls.docs.warm_up()
    loop = asyncio.get_running_loop()
    loop.create_task(_pull_configuration(ls))
    ls.background.start(loop)
    loop.create_task(ls._scan())
    loop.create_task(_watch_files(ls))


async def _watch_files(ls: QuiverServer) -> None:
    """Ask the client to report created, changed and deleted .qv files."""
    ws = ls.client_capabilities.workspace
    watched = ws.did_change_watched_files if ws is not None else None
    if watched is None or not watched.dynamic_registration:
        return
    options = lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[lsp.FileSystemWatcher(glob_pattern="**/*.qv")])
    registration = lsp.Registration(
        id="quiver-watch-qv", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
    except Exception as exc:  # the client may refuse; files are then read when opened or imported
        ls.log(f"registering the file watcher failed: {exc}")


@feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@notification
def workspace_did_change_watched_files(ls: QuiverServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    changes = []
    for ch in params.changes:
        path = file_path(ch.uri)
        if path is not None and path.endswith(".qv"):
            changes.append((path, ch.type == lsp.FileChangeType.Deleted))
    if changes:
        ls.files_changed(changes)


@feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
@notification
def workspace_did_change_workspace_folders(ls: QuiverServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    removed = {p for p in (file_path(f.uri) for f in params.event.removed) if p is not None}
    added = [p for p in (file_path(f.uri) for f in params.event.added) if p is not None]
    roots = [r for r in ls.roots if r not in removed]
    roots += [a for a in added if a not in roots]
    ls.set_roots(roots)


async def _pull_configuration(ls: QuiverServer) -> None:
    ws = ls.client_capabilities.workspace
    if ws is None or not ws.configuration:
        return
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="quiver")])
        )
    except Exception as exc:  # the client may not answer; the defaults stand
        ls.log(f"workspace/configuration failed: {exc}")
        return
    if result:
        ls.update_settings(result[0])


@feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
@notification
def workspace_did_change_configuration(ls: QuiverServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and settings:
        ls.update_settings(settings)
    else:
        asyncio.get_running_loop().create_task(_pull_configuration(ls))


@feature(lsp.SHUTDOWN)
def shutdown(ls: QuiverServer, params) -> None:
    ls.runs.stop_all()


# ====================================================================== documents


@feature(lsp.TEXT_DOCUMENT_DID_OPEN)
@notification
def text_document_did_open(ls: QuiverServer, params: lsp.DidOpenTextDocumentParams) -> None:
    td = params.text_document
    path = file_path(td.uri)
    doc = ls.docs.open(td.uri, td.text, td.version, path)
    if path is not None:
        ls._pushed.pop(path, None)
        ls.publish_cached(td.uri, path, td.text, td.version, doc.lines)


@feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
@notification
def text_document_did_change(ls: QuiverServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.docs.change(params.text_document.uri, params.content_changes, params.text_document.version, ls.codec)


@feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
@notification
def text_document_did_close(ls: QuiverServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = ls.docs.close(uri)
    if doc is None:
        return
    if doc.path is None or doc.path not in ls.files:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    if doc.path is not None:
        # Back to the file on disk: its diagnostics (a file of the workspace)
        # and its importers' come from that text now.
        ls.background.enqueue([doc.path], urgent=True)


@feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC)
@request
async def text_document_diagnostic(ls: QuiverServer, params: lsp.DocumentDiagnosticParams):
    uri = params.text_document.uri
    doc = ls.docs.get(uri)
    if doc is None:
        path = file_path(uri)
        if path is None:
            return lsp.FullDocumentDiagnosticReport(items=[])
        report = await ls.docs.run_query(ls.file_report, path, uri, params.previous_result_id)
        return report or lsp.FullDocumentDiagnosticReport(items=[])
    return await ls.document_report(doc, params.previous_result_id)


@feature(lsp.WORKSPACE_DIAGNOSTIC)
@request
async def workspace_diagnostic(ls: QuiverServer, params: lsp.WorkspaceDiagnosticParams):
    """A report of every file of the workspace (unchanged ones as such)."""
    previous = {p.uri: p.value for p in params.previous_result_ids}
    items: list = []
    for path in ls.workspace_files():
        doc = ls.docs.by_path(path)
        if doc is not None:
            try:
                report = await ls.document_report(doc, previous.get(doc.uri))
            except JsonRpcException:
                continue  # changed meanwhile: its next report follows
            cls = (
                lsp.WorkspaceUnchangedDocumentDiagnosticReport
                if isinstance(report, lsp.UnchangedDocumentDiagnosticReport)
                else lsp.WorkspaceFullDocumentDiagnosticReport
            )
            fields = {"items": report.items} if isinstance(report, lsp.FullDocumentDiagnosticReport) else {}
            items.append(cls(uri=doc.uri, version=doc.version, result_id=report.result_id, **fields))  # type: ignore[arg-type]
            continue
        uri = path_to_uri(path)
        report = await ls.docs.run_query(ls.file_report, path, uri, previous.get(uri))
        if isinstance(report, lsp.UnchangedDocumentDiagnosticReport):
            items.append(
                lsp.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=None, result_id=report.result_id)
            )
        elif report is not None:
            items.append(
                lsp.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, version=None, items=report.items, result_id=report.result_id
                )
            )
    return lsp.WorkspaceDiagnosticReport(items=items)


# ====================================================================== language features


@feature(lsp.TEXT_DOCUMENT_HOVER)
@request
async def text_document_hover(ls: QuiverServer, params: lsp.HoverParams):
    formats = ls.markdown_formats

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        h = ide.hover(analysis, offset)
        return convert.hover(h, lines, ls.codec, formats) if h is not None else None

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_COMPLETION)
@request
async def text_document_completion(ls: QuiverServer, params: lsp.CompletionParams):
    formats = ls.doc_formats

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        items = [convert.completion_item(c, formats) for c in ide.completions(analysis, offset)]
        return lsp.CompletionList(is_incomplete=False, items=items)

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP)
@request
async def text_document_signature_help(ls: QuiverServer, params: lsp.SignatureHelpParams):
    formats = ls.doc_formats

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        h = ide.signature_help(analysis, offset)
        return convert.signature_help(h, formats) if h is not None else None

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_DEFINITION)
@request
async def text_document_definition(ls: QuiverServer, params: lsp.DefinitionParams):
    uri = params.text_document.uri

    def across(path: str, offset: int):
        return [
            ls.location(t.path, t.target.focus, t.lines)
            for t in nav.definition(ls.ws, path, offset, analyses=ls.analyses())
        ] or None

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        return [convert.location(uri, t.focus, lines, ls.codec) for t in ide.definition(analysis, offset)] or None

    return await ls.query_files(uri, params.position, across, answer)


@feature(lsp.TEXT_DOCUMENT_REFERENCES)
@request
async def text_document_references(ls: QuiverServer, params: lsp.ReferenceParams):
    uri = params.text_document.uri
    include = params.context.include_declaration if params.context is not None else True
    files = ls.workspace_files()
    await ls.settle()

    def across(path: str, offset: int):
        spans = nav.references(ls.ws, path, offset, files, include, analyses=ls.analyses())
        return [ls.location(s.path, s.span, s.lines) for s in spans] or None

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        spans = ide.references(analysis, offset, include)
        return [convert.location(uri, s, lines, ls.codec) for s in spans] or None

    return await ls.query_files(uri, params.position, across, answer)


@feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
@request
async def text_document_prepare_rename(ls: QuiverServer, params: lsp.PrepareRenameParams):
    def across(path: str, offset: int):
        get = ls.analyses()
        try:
            found = nav.prepare_rename(ls.ws, path, offset, analyses=get)
        except nav.RenameError as exc:
            raise request_failed(str(exc)) from None
        analysis = get(path)
        if found is None or analysis is None:
            return None
        span, text = found
        return lsp.PrepareRenamePlaceholder(range=ls.codec.range(analysis.lines, span), placeholder=text)

    return await ls.query_files(params.text_document.uri, params.position, across, lambda *a: None)


@feature(lsp.TEXT_DOCUMENT_RENAME)
@request
async def text_document_rename(ls: QuiverServer, params: lsp.RenameParams):
    """A rename across every file that mentions the name (files not open
    included), as text edits by URI."""
    files = ls.workspace_files()
    await ls.settle()

    def across(path: str, offset: int):
        try:
            edits = nav.rename(ls.ws, path, offset, params.new_name, files, analyses=ls.analyses())
        except nav.RenameError as exc:
            raise request_failed(str(exc)) from None
        if edits is None:
            return None
        changes = {
            ls.uri_of(p): [
                lsp.TextEdit(range=ls.codec.range(lines, span), new_text=params.new_name) for span, lines in e
            ]
            for p, e in edits.items()
        }
        return lsp.WorkspaceEdit(changes=changes)

    return await ls.query_files(params.text_document.uri, params.position, across, lambda *a: None)


@feature(lsp.WORKSPACE_SYMBOL)
@request
async def workspace_symbol(ls: QuiverServer, params: lsp.WorkspaceSymbolParams):
    """The top-level dims, models and functions of every file of the workspace."""
    files = ls.workspace_files()
    await ls.settle()

    def answer():
        out = []
        for s in nav.workspace_symbols(ls.ws, files, params.query, analyses=ls.analyses()):
            loc = ls.location(s.path, s.symbol.span, s.lines)
            out.append(
                lsp.SymbolInformation(
                    name=s.symbol.name,
                    kind=convert.symbol_kind(s.symbol.kind),
                    location=loc,
                    container_name=s.container,
                )
            )
        return out

    return await ls.docs.run_query(answer)


@feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@request
async def text_document_document_highlight(ls: QuiverServer, params: lsp.DocumentHighlightParams):
    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        write, read = lsp.DocumentHighlightKind.Write, lsp.DocumentHighlightKind.Read
        return [
            lsp.DocumentHighlight(range=ls.codec.range(lines, s), kind=write if is_def else read)
            for s, is_def in ide.highlights(analysis, offset)
        ] or None

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@request
async def text_document_document_symbol(ls: QuiverServer, params: lsp.DocumentSymbolParams):
    uri = params.text_document.uri
    td = ls.client_capabilities.text_document
    ds = td.document_symbol if td is not None else None
    hierarchical = ds is not None and bool(ds.hierarchical_document_symbol_support)

    def answer(analysis: Analysis, lines: LineIndex):
        symbols = ide.document_symbols(analysis)
        if hierarchical:
            return [convert.document_symbol(s, lines, ls.codec) for s in symbols]
        return [i for s in symbols for i in convert.symbol_information(s, uri, lines, ls.codec)]

    return await ls.query(uri, answer)


@feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
@request
async def text_document_inlay_hint(ls: QuiverServer, params: lsp.InlayHintParams):
    if not ls.settings.inlay_hints:
        return None

    def answer(analysis: Analysis, lines: LineIndex):
        span = ls.codec.span(lines, params.range)
        if span is None:
            span = Span(ls.codec.offset(lines, params.range.start) or 0, len(analysis.text))
        return [convert.inlay_hint(h, lines, ls.codec) for h in ide.inlay_hints(analysis, span)]

    return await ls.query(params.text_document.uri, answer)


@feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL)
@request
async def text_document_semantic_tokens_full(ls: QuiverServer, params: lsp.SemanticTokensParams):
    def answer(analysis: Analysis, lines: LineIndex):
        return convert.semantic_tokens(ide.semantic_tokens(analysis), lines, ls.codec)

    return await ls.query(params.text_document.uri, answer)


@feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE)
@request
async def text_document_semantic_tokens_range(ls: QuiverServer, params: lsp.SemanticTokensRangeParams):
    def answer(analysis: Analysis, lines: LineIndex):
        span = ls.codec.span(lines, params.range) or Span(0, len(analysis.text))
        tokens = [t for t in ide.semantic_tokens(analysis, span) if span.start <= t.span.start < span.end]
        return convert.semantic_tokens(tokens, lines, ls.codec)

    return await ls.query(params.text_document.uri, answer)


@feature(lsp.TEXT_DOCUMENT_CODE_LENS)
@request
async def text_document_code_lens(ls: QuiverServer, params: lsp.CodeLensParams):
    uri = params.text_document.uri
    if not ls.settings.code_lens:
        return None

    def answer(analysis: Analysis, lines: LineIndex):
        return [convert.code_lens(lens, uri, lines, ls.codec) for lens in ide.code_lenses(analysis)]

    return await ls.query(uri, answer)


@feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
@request
async def text_document_code_action(ls: QuiverServer, params: lsp.CodeActionParams):
    uri = params.text_document.uri
    only = params.context.only if params.context is not None else None

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

    def answer(analysis: Analysis, lines: LineIndex):
        span = ls.codec.span(lines, params.range)
        if span is None:
            return None
        out: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix):
            out += [convert.quick_fix(a, uri, lines, ls.codec, ls.docs_base) for a in ide.code_actions(analysis, span)]
        # The checker's rule for what can be run, the same that `quiver run` applies.
        if wanted(capabilities.RUN_ACTION_KIND) and ide.runnable(analysis):
            out.append(convert.run_action(uri, capabilities.RUN_ACTION_KIND))
        return out

    return await ls.query(uri, answer)


# ====================================================================== formatting
# The layout is Quiver's one canonical layout (checker/formatter.py), whatever
# the client's FormattingOptions say (tabSize, insertSpaces): an editor and
# `quiver fmt --check` in CI must agree. It already trims trailing whitespace
# and ends the text with exactly one newline.


def _format_answer(ls: QuiverServer, rng: lsp.Range | None):
    def answer(analysis: Analysis, lines: LineIndex):
        span = None
        if rng is not None:
            span = ls.codec.span(lines, rng) or Span(ls.codec.offset(lines, rng.start) or 0, len(analysis.text))
        known = [slot.parse for slot in analysis.parsed.slots]
        return convert.text_edits(formatter.format_edits(analysis.text, span, known), lines, ls.codec)

    return answer


@feature(lsp.TEXT_DOCUMENT_FORMATTING)
@request
async def text_document_formatting(ls: QuiverServer, params: lsp.DocumentFormattingParams):
    return await ls.query(params.text_document.uri, _format_answer(ls, None))


@feature(lsp.TEXT_DOCUMENT_RANGE_FORMATTING)
@request
async def text_document_range_formatting(ls: QuiverServer, params: lsp.DocumentRangeFormattingParams):
    """Formats every item the range touches, whole."""
    return await ls.query(params.text_document.uri, _format_answer(ls, params.range))


# ====================================================================== commands


def _string_arg(args: tuple, what: str) -> str:
    if not args or not isinstance(args[0], str) or not args[0]:
        raise JsonRpcInvalidParams(f"expected {what} as the first argument")
    return args[0]


@command("quiver.runFile")
async def run_file(ls: QuiverServer, *args):
    """Run the document's `main`; answers `{runId}` at once."""
    uri = _string_arg(args, "a document URI")
    doc = ls.docs.get(uri)
    if doc is not None:
        text, version = doc.text, doc.version
    else:
        path = uri_to_path(uri)
        if path is None:
            raise request_failed(f"cannot run {uri}: it is not open in the editor, and it is not a file: URI")
        try:
            text, version = path.read_bytes().decode("utf-8"), 0
        except OSError as exc:
            raise request_failed(f"cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise request_failed(f"cannot run {path}: it is not UTF-8 text (byte {exc.start})") from None
    try:
        run = ls.runs.start(uri, text, version)
    except RunRefused as exc:
        raise request_failed(str(exc)) from None
    if doc is not None and doc.run_failure is not None:
        doc.run_failure = None
        ls._publish(doc)
    return {"runId": run.id}


@command("quiver.stopRun")
async def stop_run(ls: QuiverServer, *args):
    """Stop the runs of a document (by URI) or one run (by id). Answers when
    they have ended (within STOP_WAIT_SECONDS): `stopped` lists those that
    did, `running` any that had not yet."""
    key = _string_arg(args, "a document URI or a run id")
    runs = ls.runs.find(key)
    ended = await ls.runs.stop_and_wait(runs, STOP_WAIT_SECONDS)
    result: dict = {"stopped": [r.id for r in ended]}
    if len(ended) < len(runs):
        result["running"] = [r.id for r in runs if r not in ended]
    return result


@command("quiver.showParamReads")
async def show_param_reads(ls: QuiverServer, *args):
    """Show which params a function reads, with every chain (code lenses run this)."""
    uri = _string_arg(args, "a document URI")
    if len(args) < 2 or not isinstance(args[1], str):
        raise JsonRpcInvalidParams("expected a function name as the second argument")
    name = args[1]
    text = await ls.query(uri, lambda analysis, lines: ide.param_reads_report(analysis, name))
    if text is None:
        return None
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=text))
    return text


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
