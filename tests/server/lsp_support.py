"""What the language server's end-to-end tests share: a pytest-lsp client
that records every publishDiagnostics and the server's quiver/* notifications,
the server's command line and environment (with the stand-in runner), and
`Session`, which opens documents written with `$0` cursors, applies edits and
waits for the diagnostics of a given version. Fixtures are in conftest.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FAKE_RUNNER = Path(__file__).with_name("fake_runner.py")
SERVER = [sys.executable, "-m", "quiver.server", "--stdio"]
PROFILES = ["visual-studio-code", "neovim"]
CUSTOM = ("quiver/runStarted", "quiver/runOutput", "quiver/runMetrics", "quiver/runFinished")


def plain(value: Any) -> Any:
    """pygls hands unknown JSON to us as namedtuples: back to dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # every publishDiagnostics, in order
    client.custom = []  # (method, params) of the quiver/* notifications
    client.registrations = []  # what the server registered dynamically
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(c: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        c.diagnostics[params.uri] = params.diagnostics
        c.published.append(params)

    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish

    def register(c: LanguageClient, params: lsp.RegistrationParams) -> None:
        c.registrations.extend(params.registrations)

    features[lsp.CLIENT_REGISTER_CAPABILITY] = register
    register_lsp_features(client, features)
    for method in CUSTOM:
        client.feature(method)(_recorder(method))
    return client


def _recorder(method: str):
    def record(ls: LanguageClient, params) -> None:
        ls.custom.append((method, plain(params)))

    return record


def server_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["QUIVER_LSP_RUNNER"] = json.dumps([sys.executable, str(FAKE_RUNNER)])
    env.update(extra)
    return env


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client, server_env=server_env())


DATA = ROOT / "tests" / "server" / "data"


def init_params(profile: str, root: Path | None = None, **options: Any) -> lsp.InitializeParams:
    """No workspace folder unless a test gives one (every .qv file under it
    is then analysed at start, and its diagnostics published)."""
    opts = {"diagnostics": {"debounceMs": 20}}
    opts.update(options)
    return lsp.InitializeParams(
        capabilities=client_capabilities(profile),
        initialization_options=opts,
        root_uri=root.as_uri() if root is not None else None,
    )


# ---------------------------------------------------------------------- helpers


def cursors(text: str) -> tuple[str, list[int]]:
    """The text without its `$0` markers, and the offsets where they were."""
    offsets = []
    while "$0" in text:
        i = text.index("$0")
        offsets.append(i)
        text = text[:i] + text[i + 2 :]
    return text, offsets


def position(text: str, offset: int, encoding: str = "utf-16") -> lsp.Position:
    """A position computed independently of the server (str.splitlines is
    not used: the protocol breaks lines at \\n, \\r\\n and \\r only)."""
    before = text[:offset]
    line = before.count("\n")
    col_text = before[before.rfind("\n") + 1 :]
    if encoding == "utf-16":
        col = len(col_text.encode("utf-16-le")) // 2
    elif encoding == "utf-8":
        col = len(col_text.encode("utf-8"))
    else:
        col = len(col_text)
    return lsp.Position(line, col)


def span_range(text: str, start: int, end: int, encoding: str = "utf-16") -> lsp.Range:
    return lsp.Range(position(text, start, encoding), position(text, end, encoding))


def find_range(text: str, needle: str, nth: int = 0, encoding: str = "utf-16") -> lsp.Range:
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return span_range(text, i, i + len(needle), encoding)


# The least time a test waits for anything: only a hang takes this long, on
# any machine (CI may be three times slower than a developer's, and busy).
# Speed is measured in bench/, never asserted by a test.
HANG_GUARD = 60.0


async def wait_until(predicate, timeout: float = HANG_GUARD, what: str = "condition"):
    """The first true value of `predicate()`, polled; fails after `timeout`
    seconds, at least HANG_GUARD (a shorter figure a test gives is only
    how long it expects to wait)."""
    deadline = asyncio.get_running_loop().time() + max(timeout, HANG_GUARD)
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


class Session:
    """A test's view of one client connected to the server."""

    counter = 0

    def __init__(self, client: LanguageClient, folder: Path | None = None) -> None:
        self.client = client
        self.folder = folder or ROOT / "tests" / "server" / "data"
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.encoding = getattr(client, "encoding", "utf-16")

    def uri(self, name: str | None = None) -> str:
        if name is None:
            Session.counter += 1
            name = f"doc{Session.counter}.qv"
        return (self.folder / name).as_uri()

    def open(self, text: str, uri: str | None = None) -> str:
        uri = uri or self.uri()
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri=uri, language_id="quiver", version=1, text=text))
        )
        return uri

    def change(self, uri: str, start: int, end: int, new: str) -> int:
        """Replace [start, end) of the current text; returns the new version."""
        text = self.texts[uri]
        rng = span_range(text, start, end, self.encoding)
        self.texts[uri] = text[:start] + new + text[end:]
        self.versions[uri] += 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=new)],
            )
        )
        return self.versions[uri]

    def replace_all(self, uri: str, text: str) -> int:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))

    async def diagnostics(
        self, uri: str, version: int | None = None, timeout: float = HANG_GUARD
    ) -> list[lsp.Diagnostic]:
        """The diagnostics published for `uri` at `version` (default: its latest)."""
        version = self.versions[uri] if version is None else version

        def found():
            for p in reversed(self.client.published):
                if p.uri == uri and p.version == version:
                    return p
            return None

        return (await wait_until(found, timeout, f"diagnostics of {uri} v{version}")).diagnostics

    def pos(self, uri: str, offset: int) -> lsp.Position:
        return position(self.texts[uri], offset, self.encoding)

    def range(self, uri: str, start: int, end: int) -> lsp.Range:
        return span_range(self.texts[uri], start, end, self.encoding)

    def doc(self, uri: str) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(uri)

    async def hover(self, uri: str, offset: int) -> lsp.Hover | None:
        return await self.client.text_document_hover_async(lsp.HoverParams(self.doc(uri), self.pos(uri, offset)))

    async def command(self, name: str, *args: Any) -> Any:
        result = await self.client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=name, arguments=list(args))
        )
        return plain(result)

    async def raw(self, method: str, params: Any) -> Any:
        """A request whose result is returned as plain JSON (dicts and lists),
        not structured by lsprotocol (whose Python hook, for one, reads every
        code action that has a command as a bare Command)."""
        protocol = self.client.protocol
        protocol.get_result_type = lambda _method: None
        protocol.get_message_type = lambda _method: None
        try:
            return plain(await self.client.protocol.send_request_async(method, params))
        finally:
            del protocol.get_result_type
            del protocol.get_message_type

    def raw_notify(self, method: str, params: Any) -> None:
        """A notification sent as the JSON given, whatever the protocol says."""
        protocol = self.client.protocol
        protocol.get_message_type = lambda _method: None
        try:
            protocol.notify(method, params)
        finally:
            del protocol.get_message_type

    def custom(self, method: str, run_id: str | None = None) -> list[dict]:
        return [p for m, p in self.client.custom if m == method and (run_id is None or p.get("runId") == run_id)]
