"""pygls' protocol as the Quiver server speaks it (`QuiverProtocol`): the
`initialize` reply from server/capabilities.py, InvalidParams for malformed
params, no second answer to what the fast start answered; the LSP error codes
pygls lacks (`request_failed`)."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.protocol.language_server import lsp_method

from . import capabilities

log = logging.getLogger("quiver.server")

_IGNORED = object()  # a message already answered while it was being read
SERVER_CANCELLED = -32802  # LSP's ServerCancelled (3.17)
REQUEST_FAILED = -32803  # LSP's RequestFailed (3.17): a valid request that failed, the message says why


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
