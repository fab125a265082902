"""A persistent cache of check results, for qlint and the language server.

Like ruff's and mypy's caches: a file's diagnostics are stored under a key
made of everything they depend on, and reused while the key is the same:

- the checker's version: a hash of the checker's own source files (any
  change to the checker, a rule or a message, is a new version);
- the file's path and text;
- the path and text of every module it imports, directly or not (the
  import graph comes from a scan of the texts, as the workspace does).

So a stale entry is never used: it is simply never looked up again. The
cache lives in `.quiver_cache/` (in the current folder, or `$QUIVER_CACHE_DIR`),
holds one small JSON file per entry, and is safe to delete at any time.
Every failure to read or write it is ignored: the cache only saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from quiver.checker import ast as A
from quiver.checker.diagnostics import Diagnostic, Fix, RelatedInfo, Severity, TextEdit

CACHE_DIR_NAME = ".quiver_cache"


@lru_cache(maxsize=1)
def checker_version() -> str:
    """A hash of the checker's source files and grammar."""
    import quiver.checker as checker

    root = Path(checker.__file__).parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".lark") and "__pycache__" not in p.parts:
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def default_dir() -> Path:
    return Path(os.environ.get("QUIVER_CACHE_DIR") or CACHE_DIR_NAME)


def file_key(path: str, text: str, deps: list[tuple[str, str]]) -> str:
    """The key of a file's diagnostics: (dep path, dep text) for every module
    it imports, directly or not."""
    h = hashlib.sha256()
    h.update(checker_version().encode())
    for p, t in [(path, text), *sorted(deps)]:
        h.update(b"\0" + p.encode("utf-8", "surrogatepass") + b"\0")
        h.update(t.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


class ResultCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.dir = (directory or default_dir()) / checker_version()
        self.hits = 0
        self.misses = 0

    def _entry(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key[2:]}.json"

    def get(self, key: str) -> list[Diagnostic] | None:
        try:
            data = json.loads(self._entry(key).read_text(encoding="utf-8"))
            diags = [_decode(d) for d in data]
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return diags

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        entry = self._entry(key)
        try:
            if not self.dir.exists():
                self.dir.mkdir(parents=True, exist_ok=True)
                # never committed by accident (as ruff does)
                (self.dir.parent / ".gitignore").write_text("# made by Quiver\n*\n", encoding="utf-8")
            entry.parent.mkdir(exist_ok=True)
            # written whole or not at all: a reader never sees half an entry
            fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump([_encode(d) for d in diagnostics], fh, separators=(",", ":"))
            os.replace(tmp, entry)
        except OSError:
            pass


def _span(s: A.Span) -> list[int]:
    return [s.start, s.end]


def _encode(d: Diagnostic) -> dict:
    out: dict = {"c": d.code, "s": d.severity.value, "m": d.message, "p": _span(d.span)}
    if d.related:
        out["r"] = [[r.message, _span(r.span)] for r in d.related]
    if d.fix is not None:
        out["f"] = [d.fix.title, [[_span(e.span), e.new_text] for e in d.fix.edits]]
    if d.unnecessary:
        out["u"] = 1
    return out


def _decode(x: dict) -> Diagnostic:
    fix = None
    if "f" in x:
        title, edits = x["f"]
        fix = Fix(title, tuple(TextEdit(A.Span(*s), t) for s, t in edits))
    return Diagnostic(
        x["c"],
        Severity(x["s"]),
        x["m"],
        A.Span(*x["p"]),
        tuple(RelatedInfo(m, A.Span(*s)) for m, s in x.get("r", ())),
        fix,
        bool(x.get("u")),
    )


def key_for(workspace, path: str, text: str) -> str:
    """The cache key of `path` with `text`, in a `checker.workspace.Workspace`:
    its imports' texts as the workspace sees them (an editor's unsaved text
    included), the folders it searches for modules, and for a module that
    is missing, the modules nearby (its message suggests one)."""
    from quiver.checker.workspace import import_spellings

    deps = [(p, workspace.text(p) or "") for p in workspace.import_closure(path)]
    deps.append(("*search*", "\0".join(workspace.search_folders(path))))
    for spelling in import_spellings(text):
        if workspace.resolve(path, spelling) is None:
            deps.append((f"*nearby* {spelling}", "\0".join(workspace.nearby_modules(path, spelling))))
    return file_key(path, text, deps)
