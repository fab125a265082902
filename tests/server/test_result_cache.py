"""The server shows what the persistent cache of results (driver/cache.py)
knows of a file it opens, before that file's analysis ends, and fills the
cache with what it analysed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest_lsp
from lsp_support import CONFIG, SERVER, Session, init_params, make_client, server_env, wait_until
from pytest_lsp import ClientServerConfig, LanguageClient

from quiver.cache import CACHE_DIR_NAME, ResultCache, key_for
from quiver.checker.ast import Span
from quiver.checker.diagnostics import Diagnostic, Severity
from quiver.checker.workspace import Workspace
from quiver.host import DiskHost

TEXT = "fn main():\n    print(totl)\n"


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    return root


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    root = _folder(tmp_path)
    # A cache entry for main.qv's text that says something the checker never
    # would: if it is shown, it came from the cache.
    path = str(root / "main.qv")
    ws = Workspace(DiskHost(), [str(root)])
    planted = Diagnostic("E0000", Severity.WARNING, "from the cache", Span(0, 2))
    ResultCache(root / CACHE_DIR_NAME).put(key_for(ws, path, TEXT), [planted])
    await lsp_client.initialize_session(init_params("visual-studio-code", root=root))
    yield
    await lsp_client.shutdown_session()


async def test_an_opened_file_shows_its_cached_diagnostics_first(client: LanguageClient, tmp_path: Path) -> None:
    session = Session(client, _folder(tmp_path))
    uri = session.open(TEXT, session.uri("main.qv"))

    def of_uri():
        return [p for p in client.published if p.uri == uri]

    await wait_until(lambda: len(of_uri()) >= 2 or None, 15, "the cached and the analysed diagnostics")
    first, second = of_uri()[:2]
    assert [(d.code, d.message) for d in first.diagnostics] == [("E0000", "from the cache")]
    assert [(d.code, d.message) for d in second.diagnostics] == [("E0101", "unknown name 'totl'")]
    assert first.version == second.version == 1


async def test_what_the_server_analysed_is_in_the_cache_for_qlint(client: LanguageClient, tmp_path: Path) -> None:
    root = _folder(tmp_path)
    session = Session(client, root)
    text = "fn main():\n    print(1)\n    x = 2\n"
    uri = session.open(text, session.uri("other.qv"))
    await wait_until(lambda: any(p.uri == uri for p in client.published) or None, 15, "diagnostics")
    path = str(root / "other.qv")
    cache = ResultCache(root / CACHE_DIR_NAME)
    key = key_for(Workspace(DiskHost(), [str(root)]), path, text)
    found = await wait_until(lambda: cache.get(key), 15, "the cache entry")
    assert [d.code for d in found] == ["W0101"]


# A key folder of the server's own whose key anyone may write (0666): the
# server must not sign or trust entries with it (issue 37 item 9).
_XDG = tempfile.mkdtemp(prefix="quiver-tests-xdg-shared-key-")
_SHARED_KEY = ClientServerConfig(
    server_command=SERVER, client_factory=make_client, server_env=server_env(XDG_CACHE_HOME=_XDG)
)


@pytest_lsp.fixture(config=_SHARED_KEY)
async def shared_key_client(lsp_client: LanguageClient, tmp_path: Path):
    folder = Path(_XDG) / "quiver"
    folder.mkdir(mode=0o700, exist_ok=True)
    key = folder / "cache-key"
    key.unlink(missing_ok=True)
    key.write_bytes(b"K" * 32)
    key.chmod(0o666)
    await lsp_client.initialize_session(init_params("visual-studio-code", root=_folder(tmp_path)))
    yield
    await lsp_client.shutdown_session()


async def test_a_key_others_can_write_is_replaced_and_said_once_in_the_log(
    shared_key_client: LanguageClient, tmp_path: Path
) -> None:
    client = shared_key_client
    session = Session(client, _folder(tmp_path))
    for name in ("a.qv", "b.qv"):
        uri = session.open(TEXT, session.uri(name))
        await wait_until(lambda uri=uri: any(p.uri == uri for p in client.published) or None, 15, "diagnostics")
    key = Path(_XDG) / "quiver" / "cache-key"
    notes = [m.message for m in client.log_messages if "cache key" in m.message]
    assert notes == [f"quiver: the cache key {key} is writable by others (mode 0666): it was replaced by a new one"]
    assert key.read_bytes() != b"K" * 32 and (os.stat(key).st_mode & 0o777) == 0o600
