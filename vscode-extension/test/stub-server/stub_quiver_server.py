"""STUB language server for exercising the e2e harness only. NOT the Quiver server.

It speaks the server contract just enough for vscode-extension/e2e to drive every
scenario before the real `python -m quiver.server` exists: one diagnostic (code
E9999, "STUB") on the first line that contains `m.w1 + m.b2`, a hover that lists
Grad[Mlp] fields, `quiver.runFile` streaming a few fake training lines (until
`quiver.stopRun` when the file says `range(100000)`). Every text it produces says
STUB. Run with a Python that has pygls:
    .venv/bin/python vscode-extension/test/stub-server/stub_quiver_server.py --stdio
"""

from __future__ import annotations

import sys
import threading
import uuid

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("quiver-stub", "0.0.0")
STUB_MARKER = "m.w1 + m.b2"


def publish(ls: LanguageServer, uri: str) -> None:
    doc = ls.workspace.get_text_document(uri)
    diagnostics = []
    for i, line in enumerate(doc.lines):
        col = line.find(STUB_MARKER)
        if col >= 0:
            diagnostics.append(
                types.Diagnostic(
                    range=types.Range(types.Position(i, col), types.Position(i, col + len(STUB_MARKER))),
                    message="STUB: shape mismatch, expected [b C], found [b H]",
                    severity=types.DiagnosticSeverity.Error,
                    code="E9999",
                    source="quiver",
                    code_description=types.CodeDescription(href="https://example.invalid/quiver/E9999"),
                )
            )
            break
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=diagnostics))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    word = doc.word_at_position(params.position)
    if word != "g":
        return None
    text = "STUB hover\n```quiver\ng: Grad[Mlp]\n  w1: [D H]\n  b1: [H]\n  w2: [H C]\n  b2: [C]\n```"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


STOPS: dict[str, threading.Event] = {}


def _stream(ls: LanguageServer, uri: str, run_id: str, steps: int) -> None:
    ls.protocol.notify("quiver/runStarted", {"uri": uri, "runId": run_id, "command": "STUB python -m quiver run"})
    for step in range(0, steps, 10):
        if STOPS[run_id].wait(0.05):
            ls.protocol.notify("quiver/runFinished", {"uri": uri, "runId": run_id, "exitCode": None, "status": "stopped"})
            return
        ls.protocol.notify("quiver/runOutput", {"uri": uri, "runId": run_id, "stream": "stdout", "text": f"step {step} loss {2.3 - step / 100:.4f}\n"})
    ls.protocol.notify("quiver/runFinished", {"uri": uri, "runId": run_id, "exitCode": 0, "status": "ok"})


@server.command("quiver.runFile")
def run_file(ls: LanguageServer, uri: str, *_rest: object) -> dict:
    run_id = uuid.uuid4().hex[:8]
    STOPS[run_id] = threading.Event()
    steps = 100_000 if "range(100000)" in ls.workspace.get_text_document(uri).source else 100
    threading.Thread(target=_stream, args=(ls, uri, run_id, steps), daemon=True).start()
    return {"runId": run_id}


@server.command("quiver.stopRun")
def stop_run(ls: LanguageServer, ref: str, *_rest: object) -> None:
    if ref in STOPS:
        STOPS[ref].set()


if __name__ == "__main__":
    print("quiver STUB server starting (not the real server)", file=sys.stderr)
    server.start_io()
