"""The handlers that keep documents in sync: open, change, close, and the
pulled diagnostics of one document or of the whole workspace."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from .quiver_server import QuiverServer
from .registry import feature, notification, request
from .workspace import path_to_uri
from .workspace import uri_to_path as file_path

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
