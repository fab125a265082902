"""The server's side of the disk (server/workspace.py), without a client:
what DiskHost reads, what the scan finds, and the background analysis
yielding to open documents."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

from quiver.checker.workspace import MemoryHost, Workspace
from quiver.inputs import MAX_SOURCE_BYTES
from quiver.server.workspace import Background, DiskHost, path_to_uri, scan, uri_to_path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from generate import generate


def test_disk_host_reads_regular_files_only(tmp_path: Path) -> None:
    host = DiskHost()
    ok = tmp_path / "ok.qv"
    ok.write_bytes(b"\xef\xbb\xbfdim D = 2\n")
    assert host.read(str(ok)) == "dim D = 2\n"  # the BOM is dropped
    assert host.is_file(str(ok))
    fifo = tmp_path / "pipe.qv"
    os.mkfifo(fifo)
    # what is there but is no source file reads as an empty text that says why (E0012)
    assert host.read(str(fifo)) == "" and not host.is_file(str(fifo))
    assert host.read(str(fifo)).unreadable == "it is a FIFO (named pipe), not a regular file"
    big = tmp_path / "big.qv"
    with open(big, "wb") as f:
        f.truncate(MAX_SOURCE_BYTES + 1)
    assert host.read(str(big)).unreadable.startswith("it is larger than 10 MiB")
    assert host.read(str(tmp_path)).unreadable == "it is a folder, not a regular file"
    assert host.read(str(tmp_path / "missing.qv")) is None
    assert host.read("/dev/zero").unreadable == "it is a character device, not a regular file"
    assert host.read("/bad\x00path") is None
    (tmp_path / "sub").mkdir()
    (tmp_path / "quiver.toml").write_text("")
    assert host.project_root(str(tmp_path / "sub" / "a.qv")) == str(tmp_path)
    assert host.project_root("/a.qv") is None or host.project_root("/a.qv") == "/"


def test_scan_skips_hidden_folders_and_environments(tmp_path: Path) -> None:
    for rel in ["a.qv", "nn/b.qv", ".git/c.qv", ".venv/d.qv", "node_modules/e.qv", "nn/.f.qv", "g.txt", "nn/venv/h.qv"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    found = scan([str(tmp_path)])
    assert found == [str(tmp_path / "a.qv"), str(tmp_path / "nn" / "b.qv")]
    assert scan([str(tmp_path), str(tmp_path / "nn")]) == found  # each file once
    assert scan([str(tmp_path / "missing")]) == []
    assert len(scan([str(tmp_path)], limit=1)) == 1


def test_uris_and_paths() -> None:
    assert uri_to_path("file:///a/b%20c/d.qv") == "/a/b c/d.qv"
    assert uri_to_path("file:///a/../b.qv") == "/b.qv"
    assert uri_to_path("untitled:Untitled-1") is None
    assert uri_to_path("file:///a%00b.qv") is None
    assert uri_to_path("file:relative.qv") is None
    assert path_to_uri("/a/b c/d.qv") == "file:///a/b%20c/d.qv"


def test_background_stops_for_open_documents_and_resumes() -> None:
    text = generate(2000)
    ws = Workspace(MemoryHost({"/p/big.qv": text, "/p/small.qv": "dim D = 2\n"}), ["/p"])
    busy = threading.Event()
    done: list[str] = []
    finished = threading.Event()

    def on_done(path, analysis, exports) -> None:
        assert analysis is not None and exports is not None
        done.append(path)
        if len(done) == 2:
            finished.set()

    async def run() -> None:
        bg = Background(lambda: ws, busy.is_set, lambda p: False, on_done)
        bg.start(asyncio.get_running_loop())
        bg.enqueue(["/p/big.qv", "/p/small.qv"])
        await asyncio.sleep(0.05)  # the big file's analysis is under way
        busy.set()  # an open document waits: the analysis stops at its next item
        await asyncio.sleep(0.5)
        assert done == []
        stats = ws._files["/p/big.qv"].analyzer.stats  # nothing finished: no update completed
        assert ws.analysis_of("/p/big.qv") is None
        busy.clear()
        while not finished.is_set():
            await asyncio.sleep(0.02)
        assert done == ["/p/big.qv", "/p/small.qv"]
        assert ws._files["/p/big.qv"].analyzer.stats is not stats  # analysed once resumed
        bg.stop()

    asyncio.run(run())


def test_a_file_that_is_not_utf8_is_e0001_through_the_workspace(tmp_path: Path) -> None:
    from quiver.checker.workspace import Workspace

    (tmp_path / "bad.qv").write_bytes(b"dim D = 2\n# caf\xff\n")
    ws = Workspace(DiskHost(), [str(tmp_path)])
    a = ws.analyze(str(tmp_path / "bad.qv"))
    assert a is not None
    assert [(d.code, d.message) for d in a.diagnostics] == [
        ("E0001", "the file is not valid UTF-8: byte 0xFF cannot be decoded")
    ]


def test_finished_analyses_reach_the_loop_a_slice_at_a_time() -> None:
    """A branch switch finishes thousands of background analyses: the loop
    takes them a slice at a time, so a request waits for one slice, never
    for all of them (it waited 15 s at 5,000 files, issue 37)."""
    files = {f"/p/m{i}.qv": f"dim D{i} = 2\n" for i in range(300)}
    ws = Workspace(MemoryHost(files), ["/p"])
    done: list[str] = []
    waits: list[int] = []  # how many were handed on while one loop turn waited

    def on_done(path, analysis, exports) -> None:
        time.sleep(0.002)  # a publish costs the loop something
        done.append(path)

    async def run() -> None:
        bg = Background(lambda: ws, lambda: False, lambda p: False, on_done)
        bg.start(asyncio.get_running_loop())
        bg.enqueue(sorted(files))
        while len(done) < len(files):
            before = len(done)
            await asyncio.sleep(0)  # one turn of the loop, as each step of a request is
            waits.append(len(done) - before)
        bg.stop()

    asyncio.run(run())
    assert sorted(done) == sorted(files)
    # each turn hands on at most a slice (DRAIN_SECONDS / 2 ms, and a few more), never the backlog
    assert max(waits) <= 10, max(waits)
