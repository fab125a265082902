"""Big repositories never hang the server (issue 37): the workspace is
indexed in the background while requests on open documents are answered,
and a batch of watched-file changes costs what the changed files cost.

In-process (a `QuiverServer` without a client, its publishing recorded), so
the indexer can be held still and the work counted; nothing here measures
time (bench/workspace.py does, at 5,000 and 50,000 files).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from quiver.checker import ide
from quiver.checker.workspace import MemoryHost, Workspace
from quiver.server import quiver_server
from quiver.server.quiver_server import QuiverServer
from quiver.server.workspace import path_to_uri

HANG_GUARD = 120  # seconds: only a hang fails on it

OPEN = "dim D = 4\n\nfn main():\n    x = zeros([D])\n    print(x)\n"


def quiet_server(monkeypatch: pytest.MonkeyPatch) -> tuple[QuiverServer, list]:
    ls = QuiverServer()
    published: list = []
    monkeypatch.setattr(ls, "text_document_publish_diagnostics", published.append)
    ls._result_cache = None  # no cache of results: nothing read or written
    return ls, published


def test_a_hover_on_an_open_document_is_answered_while_indexing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200,000 files found (the scan is stood in for) and the indexer held
    still inside its first file: a document opened meanwhile is analysed and
    hovered, with the indexing still under way (nothing an open document
    needs waits for the indexer)."""
    ls, _ = quiet_server(monkeypatch)
    many = [str(tmp_path / "many" / f"m{i}.qv") for i in range(200_000)]
    monkeypatch.setattr(quiver_server, "scan", lambda roots: many)
    indexing = threading.Event()  # the indexer is inside a file
    release = threading.Event()
    real = ls.ws.analyze

    def analyze(path: str, cancelled=None):
        if path.startswith(str(tmp_path / "many")):  # the indexer's files only
            indexing.set()
            release.wait(HANG_GUARD)
        return real(path, cancelled)

    monkeypatch.setattr(ls.ws, "analyze", analyze)
    path = str(tmp_path / "open.qv")
    uri = path_to_uri(path)
    answered = threading.Event()
    result: dict = {}

    async def run() -> None:
        loop = asyncio.get_running_loop()
        ls.roots = [str(tmp_path)]
        ls.ws.set_roots(ls.roots)
        ls.background.start(loop)
        await ls._scan()
        while not indexing.is_set():
            await asyncio.sleep(0.01)
        ls.docs.open(uri, OPEN, 1, path)
        at = OPEN.index("x = zeros")
        hover = await ls.query(uri, lambda analysis, lines: ide.hover(analysis, at))
        result["hover"] = hover
        result["pending"] = ls.background.pending()
        answered.set()

    def thread() -> None:
        try:
            asyncio.run(run())
        finally:
            answered.set()

    t = threading.Thread(target=thread, daemon=True)
    t.start()
    try:
        assert answered.wait(HANG_GUARD), "no hover answer while the workspace was being indexed"
        assert result["hover"] is not None and "x: [D]" in result["hover"].markdown
        assert result["pending"] == len(many)  # the indexer has not got past its first file
    finally:
        ls.background.stop()
        release.set()
        ls.docs.shutdown()
        t.join(HANG_GUARD)


def module(imports: list[str], n: int) -> str:
    return "".join(f"import {m}\n" for m in imports) + f"\ndim D{n} = {n + 1}\n"


def test_a_batch_of_watched_file_changes_costs_what_the_changed_files_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch switch: 300 files change at once in a workspace of 2,000.
    Exactly the changed files and their importers are analysed again, and
    finding those follows only the import edges into the changed files (it
    used to go over every file's imports once per changed file)."""
    ls, _ = quiet_server(monkeypatch)
    files = {"/p/base.qv": module([], 0)}
    users = [f"/p/user{i}.qv" for i in range(10)]
    for i, u in enumerate(users):
        files[u] = module(["base"], i)
    files["/p/top.qv"] = module(["user0"], 1)
    files["/p/wants.qv"] = module(["later"], 2)  # found nothing yet
    alone = [f"/p/alone{i}.qv" for i in range(1_988)]
    for i, a in enumerate(alone):
        files[a] = module([], i)
    host = MemoryHost(files)
    ws = Workspace(host, ["/p"])
    ls.docs.workspace = ws
    ls.roots = ["/p"]
    ls.files = set(files)
    for p in files:
        ws.analyze(p)
    asked: list[str] = []
    monkeypatch.setattr(ls.background, "enqueue", lambda paths, urgent=False: asked.extend(paths))
    looked = {"files": 0, "imports_of": 0}
    for name in looked:
        real = getattr(ws, name)

        def counting(*args, real=real, name=name):
            looked[name] += 1
            return real(*args)

        monkeypatch.setattr(ws, name, counting)
    before = ws.stats["dependents"]
    host.files["/p/later.qv"] = module([], 3)  # a new file an import was looking for
    changed = [*alone[:298], "/p/base.qv", "/p/later.qv"]
    ls.files_changed([(p, False) for p in changed])
    want = {*changed, *users, "/p/top.qv", "/p/wants.qv"}
    assert sorted(asked) == sorted(want)
    # importers looked at: base's 10 and user0's 1 (dependents), base's 10
    # and later's 1 by name; none for the 298 files nothing imports
    assert ws.stats["dependents"] - before == 22
    assert looked == {"files": 0, "imports_of": 0}


def test_the_indexing_queue_keeps_its_order_and_moves_urgent_files_first(monkeypatch: pytest.MonkeyPatch) -> None:
    ls, _ = quiet_server(monkeypatch)
    bg = ls.background
    bg.enqueue(["a", "b", "c", "d"])
    bg.enqueue(["b", "e"])  # asked again: stays where it was
    assert list(bg._queue) == ["a", "b", "c", "d", "e"]
    bg.enqueue(["d", "x", "c"], urgent=True)
    assert list(bg._queue) == ["d", "x", "c", "a", "b", "e"]
    assert bg.pending() == 6
    bg._take("d", bg._asks["d"] - 1)  # asked again since it was taken: kept
    assert bg.pending() == 6
    bg._take("d", bg._asks["d"])
    assert list(bg._queue) == ["x", "c", "a", "b", "e"]
