"""Whatever the client sends, every request gets one answer and the server
stays up: positions past the end, unknown documents, malformed params,
garbage on the wire, exceptions in handlers."""

from __future__ import annotations

import asyncio

import pytest
from lsp_support import Session
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcMethodNotFound

TEXT = "dim D = 3\n\nfn main():\n    x = randn([4 D], seed=1)\n    print(x)\n"


async def still_up(session: Session, uri: str) -> None:
    h = await session.hover(uri, TEXT.index("x = randn"))
    assert h.contents.value == "```quiver\n(local) x: [4 D]\n```"


async def test_positions_past_the_end(session: Session) -> None:
    uri = session.open(TEXT)
    await session.diagnostics(uri)
    doc = lsp.TextDocumentIdentifier(uri)
    far = lsp.Position(line=1000, character=3)
    assert await session.client.text_document_hover_async(lsp.HoverParams(doc, far)) is None
    assert await session.client.text_document_definition_async(lsp.DefinitionParams(doc, far)) is None
    assert (
        await session.client.text_document_references_async(
            lsp.ReferenceParams(context=lsp.ReferenceContext(include_declaration=True), text_document=doc, position=far)
        )
        is None
    )
    assert await session.client.text_document_completion_async(lsp.CompletionParams(doc, far)) is None
    assert await session.client.text_document_signature_help_async(lsp.SignatureHelpParams(doc, far)) is None
    # a character past the end of its line means the end of the line
    long = lsp.Position(line=3, character=500)
    assert await session.client.text_document_hover_async(lsp.HoverParams(doc, long)) is None
    actions = await session.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=doc, range=lsp.Range(far, far), context=lsp.CodeActionContext(diagnostics=[])
        )
    )
    assert actions is None
    await still_up(session, uri)


async def test_unknown_documents(session: Session) -> None:
    uri = session.open(TEXT)
    await session.diagnostics(uri)
    other = lsp.TextDocumentIdentifier(session.uri("never-opened.qv"))
    p = lsp.Position(0, 0)
    assert await session.client.text_document_hover_async(lsp.HoverParams(other, p)) is None
    assert await session.client.text_document_completion_async(lsp.CompletionParams(other, p)) is None
    assert await session.client.text_document_document_symbol_async(lsp.DocumentSymbolParams(other)) is None
    assert await session.client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(other)) is None
    assert await session.client.text_document_code_lens_async(lsp.CodeLensParams(other)) is None
    assert (
        await session.client.text_document_inlay_hint_async(
            lsp.InlayHintParams(text_document=other, range=lsp.Range(p, p))
        )
        is None
    )
    # changes and closes of documents that are not open are ignored
    session.client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=other.uri, version=5),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="x")],
        )
    )
    session.client.text_document_did_close(lsp.DidCloseTextDocumentParams(other))
    await still_up(session, uri)


async def error_of(awaitable) -> Exception:
    try:
        await awaitable
    except Exception as exc:
        return exc
    raise AssertionError("expected an error reply")


async def test_malformed_params_get_an_error_reply(session: Session) -> None:
    uri = session.open(TEXT)
    await session.diagnostics(uri)
    bad = [
        {},
        {"textDocument": {"uri": uri}},
        {"textDocument": {"uri": uri}, "position": {"line": "three", "character": 0}},
        {"textDocument": 42, "position": {"line": 0, "character": 0}},
        None,
        [1, 2, 3],
    ]
    for params in bad:
        exc = await error_of(session.raw("textDocument/hover", params))
        assert isinstance(exc, JsonRpcInvalidParams), (params, exc)
    exc = await error_of(session.raw("textDocument/completion", {"textDocument": {}, "position": {}}))
    assert isinstance(exc, JsonRpcInvalidParams)
    exc = await error_of(session.raw("quiver/noSuchMethod", {}))
    assert isinstance(exc, JsonRpcMethodNotFound)
    # commands with the wrong arguments
    for args in ([], [42], [None]):
        exc = await error_of(session.raw("workspace/executeCommand", {"command": "quiver.runFile", "arguments": args}))
        assert isinstance(exc, JsonRpcInvalidParams), args
    exc = await error_of(session.raw("workspace/executeCommand", {"command": "quiver.nope", "arguments": []}))
    assert isinstance(exc, JsonRpcInvalidParams)
    await still_up(session, uri)


async def test_malformed_notifications_are_ignored(session: Session) -> None:
    uri = session.open(TEXT)
    await session.diagnostics(uri)
    session.raw_notify("textDocument/didChange", {"textDocument": {"uri": uri}, "contentChanges": "oops"})
    session.raw_notify("textDocument/didOpen", {"textDocument": {"uri": 3}})
    session.raw_notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 9}, "contentChanges": [{"range": "everything", "text": 1}]},
    )
    await still_up(session, uri)


async def test_garbage_on_the_wire(session: Session) -> None:
    uri = session.open(TEXT)
    await session.diagnostics(uri)
    stdin = session.client._server.stdin
    stdin.write(b"Content-Length: 9\r\n\r\n{not json")
    stdin.write(b"Content-Length: 2\r\n\r\n[]")
    await stdin.drain()
    await asyncio.sleep(0.1)
    await still_up(session, uri)


async def test_requests_on_a_document_mid_edit(session: Session) -> None:
    """Requests arriving between edits answer for the text as it was when they arrived."""
    uri = session.open(TEXT)
    await session.diagnostics(uri)
    at = TEXT.index("x = randn")

    async def send_hover(line: int) -> asyncio.Task:
        task = asyncio.ensure_future(
            session.client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line=line, character=4))
            )
        )
        await asyncio.sleep(0)  # let it go out before the next edit
        return task

    pending = [await send_hover(session.pos(uri, at).line)]
    for i in range(20):
        session.change(uri, 0, 0, f"# {i}\n")
        pending.append(await send_hover(3 + i + 1))
    results = await asyncio.gather(*pending)
    assert [r.contents.value for r in results] == ["```quiver\n(local) x: [4 D]\n```"] * 21


# ---------------------------------------------------------------------- the handler boundary (in process)


class _FakeServer:
    def __init__(self) -> None:
        self.logged: list[tuple[str, object]] = []

    def log(self, message: str, level=None) -> None:
        self.logged.append((message, level))


async def test_an_exception_in_a_request_handler_is_logged_and_answered() -> None:
    from quiver.server.server import notification, request

    @request
    async def text_document_hover(ls, params):
        raise ZeroDivisionError("boom")

    ls = _FakeServer()
    with pytest.raises(JsonRpcInternalError, match="text_document_hover: boom"):
        await text_document_hover(ls, None)
    ((message, level),) = ls.logged
    assert message.startswith("text_document_hover failed:\nTraceback") and "ZeroDivisionError: boom" in message
    assert level == lsp.MessageType.Error

    @notification
    def text_document_did_save(ls, params):
        raise KeyError("x")

    text_document_did_save(ls, None)  # does not raise
    assert "KeyError: 'x'" in ls.logged[-1][0]


def test_notifications_leave_nothing_behind() -> None:
    """pygls keeps a future per notification handled by a generator; the
    server's protocol drops them, so memory stays flat over many edits."""
    from quiver.server.server import QuiverServer

    ls = QuiverServer()
    params = lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri="file:///nowhere.qv", version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="x")],
    )
    for _ in range(50):
        ls.protocol._handle_notification(lsp.TEXT_DOCUMENT_DID_CHANGE, params)
    assert ls.protocol._request_futures == {}


async def test_deep_nesting_and_a_byte_order_mark(session: Session) -> None:
    # Issue 13: 2,000 nested blocks used to raise RecursionError in the
    # analysis, so the file got no diagnostics and every request an
    # InternalError; a text with a leading U+FEFF got E0002 at it.
    deep = "fn nest():\n" + "".join(" " * (i + 1) + "if True:\n" for i in range(2000)) + " " * 2001 + "pass\n"
    uri = session.open(deep + TEXT)
    (d,) = await session.diagnostics(uri, timeout=60.0)
    assert (d.code, d.message, d.range.start.line) == ("E0009", "nested more than 100 levels deep", 101)
    assert await session.hover(uri, len(deep) + TEXT.index("x = randn")) is not None
    uri = session.open("\ufeff" + TEXT, session.uri("bom.qv"))
    assert not await session.diagnostics(uri)
    h = await session.hover(uri, 1 + TEXT.index("x = randn"))
    assert h is not None and h.contents.value == "```quiver\n(local) x: [4 D]\n```"
