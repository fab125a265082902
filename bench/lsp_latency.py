"""Latency and memory of the language server, driven over stdio like an editor.

    python bench/lsp_latency.py [--edits 100] [--hovers 100] [--rss-edits 2000] [--json OUT]

Measures, with a minimal JSON-RPC client of its own (no pytest-lsp):

- start: from spawning `python -m quiver.server --stdio` to the `initialize`
  reply (median of fresh processes);
- edit -> diagnostics: for a one-character edit inside a function of a
  500-line and a 5,000-line document (bench/generate.py), the time from
  sending `didChange` to receiving the `publishDiagnostics` of that version.
  The server waits `debounceMs` after the last edit before it analyses; the
  figures are given with and without it ("after the debounce" = measured -
  debounce);
- hover: request to response on a name in the middle of the 5,000-line document;
- open: didOpen of the 5,000-line document to its first diagnostics in a
  server that has started (a small document analysed first), with an empty
  cache of results and with one an earlier server filled
  (`$QUIVER_CACHE_DIR`; the warm figure is the cache's, issue 15: <= 300 ms);
- RSS: the server's resident memory after opening the 5,000-line document and
  after each 500 of 2,000 edits (debounce 0, every edit analysed, each with a
  different literal so nothing is served from a cache).

Targets (issue 5): at most 50 ms median after the debounce at 5,000 lines and
at most 2x the 500-line figure; initialize at most 300 ms; RSS flat. Issue 15:
RSS after 10,000 edits at most 250 MiB (`--rss-edits 10000`); a warm open at most
300 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import generate  # noqa: E402

SERVER = [sys.executable, "-m", "quiver.server", "--stdio"]


class Client:
    """Just enough JSON-RPC to drive a server and time it."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future] = {}
        self.publish_waiters: dict[tuple[str, int], asyncio.Future] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, env: dict | None = None) -> Client:
        proc = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            limit=2**24,
        )
        return cls(proc)

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params) -> object:
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        await self.proc.stdin.drain()
        return await fut

    def notify(self, method: str, params) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def published(self, uri: str, version: int) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.publish_waiters[(uri, version)] = fut
        return fut

    async def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            now = time.perf_counter()
            if "id" in msg and "method" not in msg:
                fut = self.waiting.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result((now, msg.get("result")))
            elif "id" in msg:  # the server's requests: configuration, registerCapability
                result = [None] if msg["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif msg.get("method") == "textDocument/publishDiagnostics":
                self.on_publish(msg["params"], now)

    def on_publish(self, p: dict, now: float) -> None:
        fut = self.publish_waiters.pop((p["uri"], p.get("version")), None)
        if fut is not None and not fut.done():
            fut.set_result(now)

    async def initialize(self, debounce_ms: int | None = None) -> None:
        opts = {} if debounce_ms is None else {"diagnostics": {"debounceMs": debounce_ms}}
        await self.request(
            "initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}, "initializationOptions": opts}
        )
        self.notify("initialized", {})

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 10)
        except (TimeoutError, ConnectionError):
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


def stats(samples: list[float]) -> dict:
    s = sorted(samples)
    return {
        "median": statistics.median(s),
        "p95": s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))],
        "min": s[0],
        "max": s[-1],
        "n": len(s),
    }


def position_of(text: str, offset: int) -> dict:
    line = text.count("\n", 0, offset)
    return {"line": line, "character": offset - (text.rfind("\n", 0, offset) + 1)}


def edit_site(text: str) -> int:
    """The `1` of `dropout(h, 0.1, mode)` in a function in the middle of the document."""
    i = text.index("h = dropout(h, 0.1, mode)", len(text) // 2)
    return i + len("h = dropout(h, 0.")


async def measure_start(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        c = await Client.start()
        t1, _ = await c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        out.append((t1 - t0) * 1000)
        c.proc.kill()
        await c.proc.wait()
        c.reader.cancel()
    return out


async def measure_edits(lines: int, edits: int, debounce_ms: int) -> dict:
    text = generate(lines)
    c = await Client.start()
    await c.initialize(debounce_ms)
    uri = f"file:///bench/doc{lines}.qv"
    first = c.published(uri, 1)
    t0 = time.perf_counter()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": text}})
    open_ms = (await first - t0) * 1000
    at = edit_site(text)
    pos = position_of(text, at)
    samples = []
    for k in range(edits):
        version = k + 2
        digit = "2" if k % 2 == 0 else "1"
        waiter = c.published(uri, version)
        t0 = time.perf_counter()
        c.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {"start": pos, "end": {"line": pos["line"], "character": pos["character"] + 1}},
                        "text": digit,
                    }
                ],
            },
        )
        samples.append((await asyncio.wait_for(waiter, 30) - t0) * 1000)
    await c.close()
    return {
        "lines": text.count("\n"),
        "open_ms": open_ms,
        "raw": stats(samples),
        "after_debounce": stats([s - debounce_ms for s in samples]),
    }


async def measure_hover(hovers: int) -> dict:
    text = generate(5000)
    c = await Client.start()
    await c.initialize(0)
    uri = "file:///bench/hover.qv"
    first = c.published(uri, 1)
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": text}})
    await first
    at = text.index("logits = forward", len(text) // 2)
    params = {"textDocument": {"uri": uri}, "position": position_of(text, at)}
    samples = []
    result = None
    for _ in range(hovers):
        t0 = time.perf_counter()
        t1, result = await c.request("textDocument/hover", params)
        samples.append((t1 - t0) * 1000)
    await c.close()
    assert result and "logits" in result["contents"]["value"], result
    return stats(samples)


async def measure_cached_open(lines: int, runs: int) -> dict:
    """didOpen -> first publishDiagnostics of a `lines`-line document in a
    server that has started (a small document analysed first): with no
    cache, and with the cache of results filled by an earlier server
    (issue 15: at most 300 ms at 5,000 lines)."""
    import tempfile

    text = generate(lines)
    uri = "file:///bench/cached.qv"
    out: dict[str, list[float]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, QUIVER_CACHE_DIR=cache)
        for k in range(runs + 1):
            c = await Client.start(env)
            await c.initialize(0)
            # the server answers initialize before it has loaded everything:
            # a small document first, so the figure is the open itself
            ready = c.published("file:///bench/ready.qv", 1)
            c.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": "file:///bench/ready.qv",
                        "languageId": "quiver",
                        "version": 1,
                        "text": "dim D = 1\n",
                    }
                },
            )
            await asyncio.wait_for(ready, 60)
            first = c.published(uri, 1)
            t0 = time.perf_counter()
            c.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": text}},
            )
            ms = (await asyncio.wait_for(first, 60) - t0) * 1000
            if k == 0:
                out["cold"].append(ms)
                # the analysed result reaches the cache after the first publish
                await c.request(
                    "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
                )
            else:
                out["warm"].append(ms)
            await c.close()
    return {k: stats(v) for k, v in out.items()}


async def measure_rss(edits: int) -> dict:
    text = generate(5000)
    c = await Client.start()
    await c.initialize(0)
    uri = "file:///bench/rss.qv"
    first = c.published(uri, 1)
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": text}})
    await first
    at = edit_site(text)
    pos = position_of(text, at)
    end = {"line": pos["line"], "character": pos["character"] + 1}
    current = "1"
    checkpoints = {0: c.rss_mib()}
    for k in range(edits):
        version = k + 2
        new = str(k + 2)  # a new literal each time: 0.2, 0.3, ... 0.2001
        waiter = c.published(uri, version)
        c.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": pos, "end": end}, "text": new}],
            },
        )
        end = {"line": pos["line"], "character": pos["character"] + len(new)}
        current = new
        await asyncio.wait_for(waiter, 30)
        if (k + 1) % 500 == 0:
            checkpoints[k + 1] = c.rss_mib()
    await c.close()
    del current
    return checkpoints


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--hovers", type=int, default=100)
    ap.add_argument("--rss-edits", type=int, default=2000)
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--cached-runs", type=int, default=5, help="fresh servers opening a file the cache knows")
    ap.add_argument("--debounce-ms", type=int, default=100, help="the server's debounce during the edit runs")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()

    results: dict = {"debounce_ms": args.debounce_ms}
    start = await measure_start(args.starts)
    results["initialize_ms"] = stats(start)
    print(
        f"start to initialize reply: median {statistics.median(start):.0f} ms, max {max(start):.0f} ms "
        f"({len(start)} fresh processes)"
    )
    for lines in (500, 5000):
        r = await measure_edits(lines, args.edits, args.debounce_ms)
        results[f"edit_{lines}"] = r
        print(
            f"{r['lines']:>5} lines: didChange -> publishDiagnostics median {r['raw']['median']:.1f} ms, "
            f"p95 {r['raw']['p95']:.1f} ms (debounce {args.debounce_ms} ms included); after the debounce: "
            f"median {r['after_debounce']['median']:.1f} ms, p95 {r['after_debounce']['p95']:.1f} ms; "
            f"first publish after open {r['open_ms']:.0f} ms"
        )
    h = await measure_hover(args.hovers)
    results["hover_ms"] = h
    print(f"hover (5,000 lines): median {h['median']:.1f} ms, p95 {h['p95']:.1f} ms")
    cached = await measure_cached_open(5000, args.cached_runs)
    results["open_5000_ms"] = cached
    print(
        f"open (5,000 lines) to first diagnostics in a started server: no cache {cached['cold']['median']:.0f} ms, "
        f"cache filled by an earlier server median {cached['warm']['median']:.0f} ms ({cached['warm']['n']} servers)"
    )
    rss = await measure_rss(args.rss_edits)
    results["rss_mib"] = rss
    print("RSS (5,000 lines, debounce 0): " + ", ".join(f"{k} edits {v:.1f} MiB" for k, v in rss.items()))

    small = results["edit_500"]["after_debounce"]["median"]
    big = results["edit_5000"]["after_debounce"]["median"]
    first_rss = rss.get(500, rss[0])
    last_rss = rss[max(rss)]
    checks = {
        "5,000-line median after the debounce <= 50 ms": big <= 50,
        "5,000-line median <= 2x the 500-line median": big <= 2 * small,
        "initialize median <= 300 ms": results["initialize_ms"]["median"] <= 300,
        "RSS flat (growth from 500 to the last edit <= 10%)": last_rss <= first_rss * 1.10,
        "RSS after the last edit <= 250 MiB": last_rss <= 250,
        "open of 5,000 lines with the cache warm <= 300 ms": cached["warm"]["median"] <= 300,
    }
    results["targets"] = checks
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'MISSED'}] {name}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
