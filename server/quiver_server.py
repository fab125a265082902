"""The server's state and the queries its handlers make (`QuiverServer`): the
documents, the workspace and its background analysis, published and pulled
diagnostics, the cache of results, runs; `query` / `query_at` run a function
on a document's current analysis."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcException
from pygls.lsp.server import LanguageServer

from quiver import config, inputs, outputs
from quiver.cache import CACHE_DIR_NAME, ResultCache, key_for
from quiver.checker.analysis import Analysis
from quiver.checker.ast import Span
from quiver.checker.modules import ModuleExports
from quiver.checker.source import LineIndex
from quiver.checker.workspace import Workspace
from quiver.run_protocol import RUNTIME, RunError

from . import __version__, convert, edit_scope
from . import settings as S
from .documents import Document, Documents, RunFailure, Superseded
from .project_config import ProjectConfigs
from .protocol import SERVER_CANCELLED, QuiverProtocol
from .runs import Run, RunManager
from .workspace import Background, path_to_uri, scan, under, uri_to_path

log = logging.getLogger("quiver.server")

# Publishing what the cache knows of thousands of files at start: this many
# at a time, then the event loop answers what is waiting.
PUBLISH_SLICE = 100


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
        # [tool.quiver] select/ignore, as qlint applies them (server/project_config.py)
        self.project = ProjectConfigs(
            lambda m: self.log(f"[tool.quiver]: {m}", lsp.MessageType.Info),
            self._publish_config_problem,
            lambda path: self._publish_config_problem(None, path),
            lambda: tuple(self.roots),
        )
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
        key = (doc.version, analysis, failure, self.project.generation)
        old = doc.published
        if old is not None and old[0] == key[0] and old[1] is analysis and old[2] is failure and old[3] == key[3]:
            return  # analysed again (a module it imports changed) to the same result
        if old is None:
            self.remember(doc.path, analysis)  # the text it was opened with
        doc.published = key
        diagnostics = self.diagnostics_of(doc.uri, analysis, doc.lines_of(analysis), failure)
        from .notebooks import notebooks  # a notebook's cells: published on each cell

        if notebooks(self).publish(doc.uri, diagnostics):
            return
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=doc.uri, version=doc.version, diagnostics=diagnostics)
        )

    def diagnostics_of(
        self, uri: str, analysis: Analysis, lines: LineIndex, failure: RunFailure | None
    ) -> list[lsp.Diagnostic]:
        """The checker's diagnostics of an analysis, and a run's failure at the same version."""
        out = self.converted(uri, analysis.diagnostics, lines)
        if failure is not None:
            out.append(convert.run_diagnostic(failure.span, failure.message, lines, self.codec))
        return out

    def converted(self, uri: str, diagnostics, lines: LineIndex) -> list[lsp.Diagnostic]:
        """The checker's diagnostics of a file as LSP's, less the codes its
        [tool.quiver] settings leave out."""
        base = self.docs_base
        shown = self.project.shown(uri_to_path(uri), diagnostics, lambda d: d.code)
        return [convert.diagnostic(d, lines, self.codec, uri, base) for d in shown]

    def _publish_config_problem(self, problem: config.ConfigError | None, path: str = "") -> None:
        """E0014 at a pyproject.toml whose [tool.quiver] is not applied; with
        None, that file's E0014 is gone."""
        items = []
        if problem is not None:
            path = problem.path
            lines = LineIndex(problem.text)
            items = [convert.diagnostic(problem.diagnostic(), lines, self.codec, path_to_uri(path), self.docs_base)]
        with contextlib.suppress(Exception):  # the client may be gone
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=path_to_uri(path), diagnostics=items)
            )

    def project_config_changed(self) -> None:
        """A pyproject.toml changed: every file's diagnostics again, under
        the settings read afresh."""
        self.project.changed()
        for doc in self.docs.all():
            self._publish(doc)
        if self.diagnostic_mode != "pull":
            for path, analysis in list(self._pushed.items()):
                if analysis is not None:
                    uri = path_to_uri(path)
                    items = self.diagnostics_of(uri, analysis, analysis.lines, None)
                    self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items))
        self._refresh_pull()

    # ------------------------------------------------------------------ workspace

    def uri_of(self, path: str) -> str:
        doc = self.docs.by_path(path)
        return doc.uri if doc is not None else path_to_uri(path)

    def editable(self, path: str | None) -> bool:
        """Whether rename, code actions and formatting may edit `path`:
        inside a workspace folder (server/edit_scope.py). A document that is
        not a file (untitled) lives in the editor only."""
        if path is None:
            return True
        libraries = getattr(self.ws.host, "libraries", ())
        open_paths = [d.path for d in self.docs.all() if d.path is not None]
        return edit_scope.editable(path, self.roots, open_paths, libraries)

    def outside_workspace(self, path: str) -> str:
        """How a refusal names a file outside the workspace."""
        return edit_scope.where(path, getattr(self.ws.host, "libraries", ()))

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
            if self._result_cache is not None and self._result_cache.note is not None:
                # once (the cache is made once), in the log: the editor's output channel
                self.log(f"quiver: {self._result_cache.note}", lsp.MessageType.Warning)
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
        items = self.converted(uri, diagnostics, lines)
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
        for n, (path, text, diagnostics) in enumerate(hits):
            if n % PUBLISH_SLICE == PUBLISH_SLICE - 1:
                await asyncio.sleep(0)  # requests are answered between slices
            if self.docs.by_path(path) is None and path not in self._pushed:
                uri = path_to_uri(path)
                items = self.converted(uri, diagnostics, LineIndex(text))
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
        # Per changed file only (a branch switch reports thousands at once):
        # its importers come from the workspace's reverse maps, never from a
        # pass over every file.
        affected: set[str] = set()
        for path, deleted in changes:
            stem = path.rsplit("/", 1)[-1].removesuffix(".qv")
            affected |= self.ws.dependents(path)
            # files whose import of this name found nothing, or another file
            affected |= self.ws.importers_of_name(stem)
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
        result_id = self.result_id(doc.uri, analysis) + f".{self.project.generation}"
        result_id += f"+run{version}" if failure is not None else ""
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
        result_id = self.result_id(uri, analysis) + f".{self.project.generation}"
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
        from quiver.checker.catalog_docs import render_markdown

        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "quiver"
        page = cache / f"diagnostics-{__version__}.md"
        text = render_markdown()
        try:
            same = inputs.read_source(str(page), limit=len(text.encode("utf-8"))) == text.encode("utf-8")
        except OSError:
            same = False
        if not same:
            cache.mkdir(parents=True, exist_ok=True)
            outputs.write_file(page, text.encode("utf-8"))
        return page.as_uri()
    except OSError:
        return None
