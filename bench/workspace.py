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


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="fresh server starts")
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--open-importers", action="store_true", help="open the 10 importers too")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
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
