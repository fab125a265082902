"""The language server on a multi-file workspace, driven over stdio like an editor.

    python bench/workspace.py [--runs 5] [--edits 10] [--json OUT]

A generated workspace of 20 files and about 20,000 lines (bench/generate.py's
program in each, about 1,000 lines a file): `base.qv`, which 10 files import
(`import base`, each with a function that calls `base.shared` on a
`base.Base`), and 9 files that import nothing. Measured, with a minimal
JSON-RPC client (no pytest-lsp):

- start: from spawning `python -m quiver.server --stdio` (workspace folder =
  the generated folder, nothing open) to the first publishDiagnostics of
  every one of the 20 files (median of `--runs` fresh processes);
- edit -> importers: with base.qv open, an edit of its text (unsaved) that
  changes what it exports (`fn shared` renamed to `shared2` and back, so the
  10 importers' diagnostics change each time), from `didChange` to the
  publishDiagnostics of base.qv and of all 10 importers (median of
  `--edits`). The importers are not open (their diagnostics come from the
  background analysis); `--open-importers` opens them too.

The debounce is set to 0 for the edits, so the figures are the server's own
work.

    python bench/workspace.py --big 5000 50000 [--json OUT]

A big repository (issue 37): N small generated modules (folders of 500, each
module importing one or two of its folder's others) and `open.qv`, which
imports one of them. Measured per N, one fresh server each:

- first hover: from `initialized` (the scan and the background indexing
  start then) to the answer of a hover on `open.qv`, opened at once;
- hover after a branch switch: one `workspace/didChangeWatchedFiles` with
  3,000 changed files, then a hover on `open.qv` at once (from the
  notification to the answer);
- the server's peak memory (VmHWM) when those are answered, and after
  `--index-seconds` more of indexing (the server indexes at most 20,000 files
  of a folder).

Measured for issue 37 on the 2-core development machine, idle (load under
1), `--big 5000 50000`, medians of three runs: the first hover 0.80 s at
5,000 files and 0.71 s at 50,000; the hover after 3,000 changes 0.19 s at
5,000 and 0.16 s at 50,000; peak memory 71 and 73 MiB when they are
answered (221 and 316 MiB after 20 s more of indexing). The changes come
1 s after the start, while the first indexing is under way (a few hundred
files analysed). Before the background's results were handed to the event
loop a slice at a time (server/workspace.Background._drain), the hover
after the changes waited behind every finished analysis: 17.3 s at 5,000
files and 71.8 s at 50,000, 224 and 736 MiB (one run each).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lsp_latency as latency  # noqa: E402
from generate import generate  # noqa: E402

IMPORTERS = 10
OTHERS = 9
LINES_PER_FILE = 1000

BASE_HEAD = """\
dim E = 16

model Base:
    param w: [E E] = xavier

fn shared(m: Base, x: [b E]) -> [b E]:
    return relu(x @ m.w)

"""

IMPORTER_HEAD = """\
import base

fn use_base(m: base.Base, x: [b base.E]) -> [b base.E]:
    return base.shared(m, x) + base.shared(m, x)

"""


def write_workspace(folder: Path) -> dict[str, str]:
    body = generate(LINES_PER_FILE)
    files = {"base.qv": BASE_HEAD + body}
    for i in range(IMPORTERS):
        files[f"user{i:02}.qv"] = IMPORTER_HEAD + body
    for i in range(OTHERS):
        files[f"alone{i:02}.qv"] = body
    for name, text in files.items():
        (folder / name).write_text(text)
    return files


class Client(latency.Client):
    """bench/lsp_latency.py's client, recording every publishDiagnostics
    with its arrival time."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.published: list[tuple[float, str, int | None, int]] = []  # (time, uri, version, count)
        self.changed = asyncio.Event()
        super().__init__(proc)

    def on_publish(self, p: dict, now: float) -> None:
        self.published.append((now, p["uri"], p.get("version"), len(p["diagnostics"])))
        self.changed.set()

    async def until(self, predicate, timeout: float = 300) -> float:
        """Waits until `predicate(published)` is true; the time it became so."""
        deadline = time.perf_counter() + timeout
        while True:
            if predicate(self.published):
                return self.published[-1][0]
            self.changed.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("the server did not publish what was expected")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)

    async def initialize(self, root: Path, debounce_ms: int) -> None:
        caps = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": caps,
                "initializationOptions": {"diagnostics": {"debounceMs": debounce_ms}},
            },
        )
        self.notify("initialized", {})


def stats(samples: list[float]) -> dict:
    s = sorted(samples)
    return {"median": statistics.median(s), "min": s[0], "max": s[-1], "n": len(s)}


async def measure_start(folder: Path, files: dict[str, str], runs: int) -> list[float]:
    uris = {(folder / n).as_uri() for n in files}
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        c = await Client.start()
        await c.initialize(folder, 0)
        t1 = await c.until(lambda pub: uris <= {u for _, u, _, _ in pub})
        out.append((t1 - t0) * 1000)
        await c.close()
    return out


async def measure_edit(folder: Path, files: dict[str, str], edits: int, open_importers: bool) -> list[float]:
    c = await Client.start()
    await c.initialize(folder, 0)
    uris = {(folder / n).as_uri() for n in files}
    await c.until(lambda pub: uris <= {u for _, u, _, _ in pub})  # the whole workspace checked
    base = (folder / "base.qv").as_uri()
    importers = [(folder / n).as_uri() for n in files if n.startswith("user")]
    text = files["base.qv"]
    c.notify(
        "textDocument/didOpen", {"textDocument": {"uri": base, "languageId": "quiver", "version": 1, "text": text}}
    )
    if open_importers:
        for u in importers:
            name = u.rsplit("/", 1)[-1]
            c.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": u, "languageId": "quiver", "version": 1, "text": files[name]}},
            )
    await c.until(lambda pub: any(u == base and v == 1 for _, u, v, _ in pub))
    await asyncio.sleep(1.0)
    at = text.index("fn shared") + len("fn shared")
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1)
    samples = []
    for k in range(edits):
        version = k + 2
        broken = k % 2 == 0  # `shared` -> `shared2`: every importer reports two E0115s
        if broken:
            rng = {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}}
            new = "2"
        else:
            rng = {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}}
            new = ""
        want = 2 if broken else 0
        n0 = len(c.published)
        t0 = time.perf_counter()
        c.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": base, "version": version}, "contentChanges": [{"range": rng, "text": new}]},
        )

        def done(pub, n0=n0, version=version, want=want) -> bool:
            new_pub = pub[n0:]
            if not any(u == base and v == version for _, u, v, _ in new_pub):
                return False
            last = {u: count for _, u, _, count in new_pub}
            return all(last.get(u) == want for u in importers)

        t1 = await c.until(done)
        samples.append((t1 - t0) * 1000)
        await asyncio.sleep(0.2)
    await c.close()
    return samples


BIG_FOLDER = 500
OPEN_TEXT = """\
import pkg0.m1

fn main():
    x = zeros([pkg0.m1.D])
    print(x)
"""


def big_module(i: int) -> str:
    k = i % BIG_FOLDER
    imports = "".join(f"import m{j}\n" for j in {(k * 7 + 1) % BIG_FOLDER, (k * 13 + 3) % BIG_FOLDER} if j < k)
    return imports + (
        f"\ndim D = {4 + i % 5}\n\nmodel M{k}:\n    param w: [D D] = zeros\n\n"
        f"fn f{k}(m: M{k}, x: [b D]) -> [b D]:\n    return relu(x @ m.w) + x\n"
    )


def write_big(folder: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        sub = folder / f"pkg{i // BIG_FOLDER}"
        if i % BIG_FOLDER == 0:
            sub.mkdir()
        path = sub / f"m{i % BIG_FOLDER}.qv"
        path.write_text(big_module(i))
        paths.append(path)
    (folder / "open.qv").write_text(OPEN_TEXT)
    return paths


def _peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def measure_big(n: int, index_seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="quiver-bench-big-") as tmp:
        folder = Path(tmp)
        paths = write_big(folder, n)
        env = {**os.environ, "QUIVER_CACHE_DIR": str(folder / ".cache")}  # a fresh, empty cache of results
        c = await Client.start(env)
        await c.initialize(folder, 0)
        t0 = time.perf_counter()
        uri = (folder / "open.qv").as_uri()
        c.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": OPEN_TEXT}},
        )
        at = OPEN_TEXT.index("x = zeros")
        pos = {"line": OPEN_TEXT.count("\n", 0, at), "character": at - OPEN_TEXT.rfind("\n", 0, at) - 1}
        hover = {"textDocument": {"uri": uri}, "position": pos}
        t1, first = await c.request("textDocument/hover", hover)
        first_ms = (t1 - t0) * 1000
        assert first is not None, "no hover"
        await asyncio.sleep(1.0)  # the indexing is under way
        changes = [{"uri": p.as_uri(), "type": 2} for p in paths[:3000]]
        t2 = time.perf_counter()
        c.notify("workspace/didChangeWatchedFiles", {"changes": changes})
        t3, again = await c.request("textDocument/hover", hover)
        switch_ms = (t3 - t2) * 1000
        assert again is not None, "no hover"
        peak = _peak_mib(c.proc.pid)
        published_then = len({u for _, u, _, _ in c.published})
        await asyncio.sleep(index_seconds)
        peak_later = _peak_mib(c.proc.pid)
        published_later = len({u for _, u, _, _ in c.published})
        await c.close()
    return {
        "files": n,
        "first_hover_ms": first_ms,
        "hover_after_3000_changes_ms": switch_ms,
        "peak_mib_at_hovers": peak,
        "files_published_at_hovers": published_then,
        f"peak_mib_after_{index_seconds:g}s": peak_later,
        f"files_published_after_{index_seconds:g}s": published_later,
    }


async def main_big(sizes: list[int], index_seconds: float, json_out: str | None) -> int:
    results = []
    for n in sizes:
        r = await measure_big(n, index_seconds)
        results.append(r)
        print(
            f"{n} files: first hover {r['first_hover_ms']:.0f} ms after initialized; "
            f"hover after 3,000 watched-file changes {r['hover_after_3000_changes_ms']:.0f} ms; "
            f"peak {r['peak_mib_at_hovers']:.0f} MiB then ({r['files_published_at_hovers']} files published), "
            f"{r[f'peak_mib_after_{index_seconds:g}s']:.0f} MiB after {index_seconds:g} s more "
            f"({r[f'files_published_after_{index_seconds:g}s']} files published)"
        )
    if json_out:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(json_out).write_text(json.dumps(results, indent=2))
    return 0


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="fresh server starts")
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--open-importers", action="store_true", help="open the 10 importers too")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--big", type=int, nargs="*", help="a big repository of these many files instead (5000 50000)")
    ap.add_argument(
        "--index-seconds", type=float, default=20.0, help="--big: indexing time before the last memory figure"
    )
    args = ap.parse_args()
    if args.big:
        return await main_big(args.big, args.index_seconds, args.json)
    with tempfile.TemporaryDirectory(prefix="quiver-bench-ws-") as tmp:
        folder = Path(tmp)
        files = write_workspace(folder)
        lines = sum(t.count("\n") for t in files.values())
        print(f"workspace: {len(files)} files, {lines} lines ({IMPORTERS} import base.qv)")
        results: dict = {"files": len(files), "lines": lines}
        start = await measure_start(folder, files, args.runs)
        results["start_to_all_diagnostics_ms"] = stats(start)
        print(
            f"start -> diagnostics of all {len(files)} files: median {statistics.median(start):.0f} ms, "
            f"min {min(start):.0f} ms, max {max(start):.0f} ms ({len(start)} fresh processes)"
        )
        edit = await measure_edit(folder, files, args.edits, args.open_importers)
        key = "edit_to_importers_ms" + ("_open" if args.open_importers else "")
        results[key] = stats(edit)
        where = "open" if args.open_importers else "not open"
        print(
            f"edit of base.qv's exports -> diagnostics of base.qv and its {IMPORTERS} importers ({where}): "
            f"median {statistics.median(edit):.0f} ms, min {min(edit):.0f} ms, max {max(edit):.0f} ms "
            f"({len(edit)} edits, debounce 0)"
        )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
