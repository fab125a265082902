"""The server shows what the persistent cache of results (driver/cache.py)
knows of a file it opens, before that file's analysis ends, and fills the
cache with what it analysed."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from lsp_support import CONFIG, Session, init_params, wait_until
from pytest_lsp import LanguageClient

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
