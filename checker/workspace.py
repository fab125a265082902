"""Programs of many files: module resolution and the analyses of a workspace.

A `Workspace` holds one incremental `Analyzer` per file and analyses a file
after the modules it imports, handing each importer the exports of its
imports (checker/modules.py). It does no I/O itself: a `Host` (the language
server, qlint, `quiver.load`) says which files exist and what they contain,
and an editor's unsaved text overrides the host's (`set_overlay`).

Resolution (`import nn.layers`): `nn/layers.qv` next to the importing file,
then under each root in order (the folder holding a `quiver.toml` above the
file, then the roots the host gave: workspace folders, the folder given to
qlint). A module's qualified name (`nn.layers`) is its path below the deepest
root that holds it (or its file name when none does): the name its
definitions carry in every importer, so a model is one model everywhere.

Threads: `analyze` may be called from several threads at once (the server
analyses documents on a pool). No lock is held while a file's imports are
analysed, so two threads that meet at a shared module wait only for that
module's own update. Import cycles are found from a scan of the import
graph (`scanned_imports`), not from the order files are analysed in, so a
cycle is reported in every file on it and cannot deadlock.

Freshness: an analysis is reused while its text and the exports of its
imports are the same objects; exports are rebuilt when a module's analysis
changes, but kept (the same object) when its interface did not change, so
editing inside a function of an imported module re-checks no importer.

Who imports what: the imports each file's last analysis found are kept in
reverse as well (by the file they found, and by the last part of the name
written), so `dependents` and `importers_of_name` cost what they return,
never a pass over every file: a workspace of tens of thousands of files
answers them as fast as one of ten.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .deep import deep
from .source import refusal

if TYPE_CHECKING:  # imported on first analysis: reading a cache needs none of it
    from .analysis import Analysis, Analyzer
    from .modules import ModuleExports, Resolved

MODULE_SUFFIX = ".qv"
PROJECT_FILE = "quiver.toml"
# Import items start at column 0 (as every item): a scan of the lines is
# enough to know which modules to analyse first; the parser reports bad ones.
_IMPORT_LINE = re.compile(r"^(?:import[ \t]+([\w.]+)|from[ \t]+([\w.]+)[ \t]+import\b)", re.M)


class Host(Protocol):
    """What the workspace needs from the outside world (all paths are
    absolute, normalised, with `/` separators)."""

    def read(self, path: str) -> str | None:
        """The text of a module file; None when it is missing or unreadable."""
        ...

    def is_file(self, path: str) -> bool: ...

    def project_root(self, path: str) -> str | None:
        """The folder of the nearest `quiver.toml` above `path`, if any."""
        ...

    # Optional: `libraries`, folders searched after all others (Quiver's own
    # library, `nn`); `list_modules(folder) -> list[str]`, the module names of the
    # `.qv` files in a folder, for suggestions on a missing import; and
    # `why_unusable(path) -> str | None`, why an entry that is there is not a
    # module file ("it is a folder, not a regular file"), for E0113.


class MemoryHost:
    """A host over a dict of path -> text (tests, docs examples)."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files: dict[str, str] = dict(files or {})
        self.reads = 0
        self.libraries: tuple[str, ...] = ()

    def read(self, path: str) -> str | None:
        self.reads += 1
        return self.files.get(path)

    def is_file(self, path: str) -> bool:
        return path in self.files

    def list_modules(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return sorted(
            p[len(prefix) : -len(MODULE_SUFFIX)]
            for p in self.files
            if p.startswith(prefix) and p.endswith(MODULE_SUFFIX) and "/" not in p[len(prefix) :]
        )

    def project_root(self, path: str) -> str | None:
        folder = posixpath.dirname(path)
        while True:
            if posixpath.join(folder, PROJECT_FILE) in self.files:
                return folder
            parent = posixpath.dirname(folder)
            if parent == folder:
                return None
            folder = parent


class DecodedText(str):
    """A module's text as a host decoded it from bytes, with the first byte
    that was not UTF-8 (reported as E0001), if any; or, with `unreadable`,
    an empty text standing for a file the host would not read, and why
    ("it is a FIFO (named pipe), not a regular file"): E0012 at the file,
    E0113 at its importers."""

    decode_problem = None
    unreadable: str | None = None

    def __new__(cls, text: str, problem=None, unreadable: str | None = None) -> DecodedText:
        out = super().__new__(cls, text)
        out.decode_problem = problem
        out.unreadable = unreadable
        return out


_UNREAD = object()


def _analysis():
    from . import analysis

    return analysis


@dataclass
class _File:
    path: str
    analyzer: Analyzer | None = None  # made at the first analysis
    lock: threading.Lock = field(default_factory=threading.Lock)  # held while `analyzer` updates
    overlay: str | None = None  # the editor's text, when the file is open
    disk: object = _UNREAD  # the host's text (str | None), read once until `file_changed`
    analysis: Analysis | None = None
    key: tuple | None = None  # (text, the resolved imports) `analysis` was computed from
    exports: ModuleExports | None = None
    imports: dict[str, str | None] = field(default_factory=dict)  # spelling -> path, as last resolved
    scan: tuple[str, list[str]] | None = None  # (text, the modules it imports)


def import_spellings(text: str) -> list[str]:
    """The modules a text imports, in order, each once."""
    out: list[str] = []
    for m in _IMPORT_LINE.finditer(text):
        name = m.group(1) or m.group(2)
        if name not in out:
            out.append(name)
    return out


class Workspace:
    def __init__(self, host: Host, roots: Iterable[str] = ()) -> None:
        self.host = host
        self.roots: tuple[str, ...] = tuple(roots)
        self._tell_host()
        self._files: dict[str, _File] = {}
        self._meta = threading.Lock()  # guards _files and the resolution cache
        self._resolved: dict[tuple[str, str], str | None] = {}
        self._local = threading.local()  # the chain of files being analysed by this thread
        # The imports of every file's last analysis, in reverse (under _meta):
        # the file an import found -> the files importing it, and the last
        # part of an import's name (`layers` of `nn.layers`) -> the files
        # that import a module of that name, whatever it found.
        self._importers: dict[str, set[str]] = {}
        self._by_name: dict[str, set[str]] = {}
        # How much work the reverse lookups did (tests count it, never time it):
        # "dependents" counts the import edges followed.
        self.stats: Counter[str] = Counter()

    # ------------------------------------------------------------ inputs

    def set_roots(self, roots: Iterable[str]) -> None:
        with self._meta:
            self.roots = tuple(roots)
            self._resolved.clear()
            for f in self._files.values():  # what a host may read depends on the roots
                f.disk = _UNREAD
        self._tell_host()

    def _tell_host(self) -> None:
        """A host that keeps reads inside the roots (driver/host.py) is told them."""
        tell = getattr(self.host, "set_roots", None)
        if tell is not None:
            tell(self.roots)

    def set_overlay(self, path: str, text: str | None) -> None:
        """The editor's text of `path` (None: the file closed, back to disk)."""
        self._file(path).overlay = text

    def file_changed(self, path: str) -> None:
        """The file at `path` was created, changed or deleted on disk."""
        with self._meta:
            f = self._files.get(path)
            if f is not None:
                f.disk = _UNREAD
            self._resolved.clear()  # a new or deleted file may change what an import finds

    def forget(self, path: str) -> None:
        """Drop everything known about `path` (deleted, or left the workspace)."""
        with self._meta:
            f = self._files.pop(path, None)
            if f is not None:
                self._index_imports(path, f.imports, {})
            self._resolved.clear()

    # ------------------------------------------------------------ queries

    def is_overlaid(self, path: str) -> bool:
        f = self._files.get(path)
        return f is not None and f.overlay is not None

    def text(self, path: str) -> str | None:
        f = self._file(path)
        if f.overlay is not None:
            return f.overlay
        if f.disk is _UNREAD:
            f.disk = self.host.read(path)
        return f.disk  # type: ignore[return-value]

    def analyze(self, path: str, cancelled: Callable[[], bool] | None = None) -> Analysis | None:
        """The analysis of the file's current text (None when it has none:
        not open and missing on disk). Its imports are analysed first."""
        if self._chain():  # for an importer: its own call has the room
            return self._analyze(path, cancelled)
        # Imports are analysed recursively, one level per module: a chain of
        # a few hundred modules each importing the next is retried with
        # room for it (checker/deep.py) rather than failing.
        return deep(lambda: self._analyze(path, cancelled))

    def _analyze(self, path: str, cancelled: Callable[[], bool] | None) -> Analysis | None:
        text = self.text(path)
        if text is None:
            return None
        chain: list[str] = self._chain()
        chain.append(path)
        try:
            env, imports = self._environment(path, text, chain, cancelled)
        finally:
            chain.pop()
        f = self._file(path)
        key = (text, tuple((s, id(r)) for s, r in env.items()))
        with f.lock:
            if f.analysis is not None and f.key is not None and f.key[0] == text and f.key[1] == key[1]:
                return f.analysis
            kwargs = {"cancelled": cancelled} if cancelled is not None else {}
            problem = getattr(text, "decode_problem", None)
            if f.analyzer is None:
                f.analyzer = _analysis().Analyzer()
            analysis = f.analyzer.update(str(text), problem, imports=env, refused=refusal(text), **kwargs)
            f.analysis = analysis
            f.key = (text, key[1], tuple(env.values()))  # the values keep the ids valid
            with self._meta:
                self._index_imports(path, f.imports, imports)
                f.imports = imports
            return analysis

    def exports(self, path: str, cancelled: Callable[[], bool] | None = None) -> ModuleExports | None:
        analysis = self.analyze(path, cancelled)
        if analysis is None:
            return None
        f = self._file(path)
        with f.lock:
            old = f.exports
            if old is not None and old.analysis is analysis and old.qual == self.qualified_name(path):
                return old
            from .modules import build_exports

            new = build_exports(self.qualified_name(path), path, analysis, old)
            f.exports = new
            return new

    def analysis_of(self, path: str) -> Analysis | None:
        """The last analysis computed for `path`, without analysing."""
        f = self._files.get(path)
        return f.analysis if f is not None else None

    def files(self) -> list[str]:
        with self._meta:
            return list(self._files)

    def imports_of(self, path: str) -> dict[str, str | None]:
        f = self._files.get(path)
        return dict(f.imports) if f is not None else {}

    def dependents(self, path: str) -> set[str]:
        """Every known file that imports `path`, directly or not (from the
        imports found by their last analyses); the cost is the import edges
        into the files returned, not the size of the workspace."""
        out: set[str] = set()
        todo = [path]
        edges = 0
        with self._meta:
            while todo:
                for p in self._importers.get(todo.pop(), ()):
                    edges += 1
                    if p not in out:
                        out.add(p)
                        todo.append(p)
            self.stats["dependents"] += edges
        out.discard(path)
        return out

    def importers_of_name(self, name: str) -> set[str]:
        """The known files with an import whose last part is `name`
        (`import nn.layers` for `layers`), whatever file it found or none:
        those a new or deleted `name.qv` may change."""
        with self._meta:
            found = self._by_name.get(name, ())
            self.stats["dependents"] += len(found)
            return set(found)

    def resolve(self, importer: str, spelling: str) -> str | None:
        """The file `import <spelling>` in `importer` means, or None."""
        key = (importer, spelling)
        with self._meta:
            if key in self._resolved:
                return self._resolved[key]
        found = None
        tail = spelling.replace(".", "/") + MODULE_SUFFIX
        for folder in self.search_folders(importer):
            candidate = posixpath.normpath(posixpath.join(folder, tail))
            if self.host.is_file(candidate):
                found = candidate
                break
        with self._meta:
            self._resolved[key] = found
        return found

    def unusable(self, importer: str, spelling: str) -> tuple[str, str] | None:
        """For an import that found no module: the first place searched
        where an entry of the module's name is there but is not a module
        file, and why (the host says: a folder, a FIFO, a link out of the
        workspace), else None."""
        why = getattr(self.host, "why_unusable", None)
        if why is None:
            return None
        tail = spelling.replace(".", "/") + MODULE_SUFFIX
        for folder in self.search_folders(importer):
            candidate = posixpath.normpath(posixpath.join(folder, tail))
            reason = why(candidate)
            if reason is not None:
                return candidate, reason
        return None

    def search_folders(self, importer: str) -> list[str]:
        folders = [posixpath.dirname(importer)]
        project = self.host.project_root(importer)
        if project is not None:
            folders.append(project)
        folders += self.roots
        # last: the libraries shipped with Quiver (`import nn`), which a module
        # of the project's own of that name comes before
        folders += getattr(self.host, "libraries", ())
        out: list[str] = []
        for f in folders:
            if f not in out:
                out.append(f)
        return out

    def nearby_modules(self, importer: str, spelling: str) -> list[str]:
        """Module names that `import <spelling>` may have meant: the modules
        in the folders searched, at the same depth (for a suggestion)."""
        lister = getattr(self.host, "list_modules", None)
        if lister is None:
            return []
        package, _, _ = spelling.rpartition(".")
        sub = package.replace(".", "/")
        out: list[str] = []
        for folder in self.search_folders(importer):
            for name in lister(posixpath.join(folder, sub) if sub else folder):
                full = f"{package}.{name}" if package else name
                if full not in out:
                    out.append(full)
        return out

    def qualified_name(self, path: str) -> str:
        """`nn.layers` for `<root>/nn/layers.qv`: below the deepest root (or
        project folder) holding the file, else its file name."""
        best = None
        candidates = list(self.roots)
        project = self.host.project_root(path)
        if project is not None:
            candidates.append(project)
        for root in candidates:
            prefix = root.rstrip("/") + "/"
            if path.startswith(prefix) and (best is None or len(root) > len(best)):
                best = root
        rel = path[len(best.rstrip("/")) + 1 :] if best is not None else posixpath.basename(path)
        if rel.endswith(MODULE_SUFFIX):
            rel = rel[: -len(MODULE_SUFFIX)]
        return rel.replace("/", ".")

    # ------------------------------------------------------------ internals

    def _index_imports(self, path: str, old: Mapping[str, str | None], new: Mapping[str, str | None]) -> None:
        """Move `path`'s entries in the reverse maps from its `old` imports
        to its `new` ones (under _meta)."""
        if old == new:
            return
        for table, before, after in (
            (self._importers, {t for t in old.values() if t is not None}, {t for t in new.values() if t is not None}),
            (self._by_name, {s.rsplit(".", 1)[-1] for s in old}, {s.rsplit(".", 1)[-1] for s in new}),
        ):
            for key in before - after:
                users = table.get(key)
                if users is not None:
                    users.discard(path)
                    if not users:
                        del table[key]
            for key in after - before:
                table.setdefault(key, set()).add(path)

    def _file(self, path: str) -> _File:
        with self._meta:
            f = self._files.get(path)
            if f is None:
                f = self._files[path] = _File(path)
            return f

    def scanned_imports(self, path: str) -> list[str]:
        """The files `path` imports (from a scan of its text, cached by it)."""
        text = self.text(path)
        if text is None:
            return []
        out = []
        for spelling in self._spellings(path, text):
            target = self.resolve(path, spelling)
            if target is not None:
                out.append(target)
        return out

    def import_closure(self, path: str) -> list[str]:
        """Every file `path` imports, directly or not (from scans), sorted."""
        seen: set[str] = set()
        todo = self.scanned_imports(path)
        while todo:
            p = todo.pop()
            if p not in seen and p != path:
                seen.add(p)
                todo.extend(self.scanned_imports(p))
        return sorted(seen)

    def _path(self, start: str, goal: str) -> list[str] | None:
        """A chain of imports from `start` to `goal` (both included), or None."""
        if start == goal:
            return [start]
        parent: dict[str, str] = {start: start}
        todo = [start]
        while todo:
            p = todo.pop()
            for q in self.scanned_imports(p):
                if q in parent:
                    continue
                parent[q] = p
                if q == goal:
                    out = [q]
                    while out[-1] != start:
                        out.append(parent[out[-1]])
                    return out[::-1]
                todo.append(q)
        return None

    def _chain(self) -> list[str]:
        chain = getattr(self._local, "chain", None)
        if chain is None:
            chain = self._local.chain = []
        return chain

    def _spellings(self, path: str, text: str) -> list[str]:
        """import_spellings(text), kept while the file's text is the same object
        (a scan of the whole text, asked for at least twice per analysis)."""
        f = self._file(path)
        scan = f.scan
        if scan is None or scan[0] is not text:
            scan = f.scan = (text, import_spellings(text))
        return scan[1]

    def _environment(
        self, path: str, text: str, chain: list[str], cancelled: Callable[[], bool] | None
    ) -> tuple[dict[str, Resolved], dict[str, str | None]]:
        from .modules import ImportProblem

        env: dict[str, Resolved] = {}
        imports: dict[str, str | None] = {}
        for spelling in self._spellings(path, text):
            target = self.resolve(path, spelling)
            imports[spelling] = target
            if target is None:
                unusable = self.unusable(path, spelling)
                if unusable is not None:
                    env[spelling] = ImportProblem("unreadable", unusable)
                    continue
                env[spelling] = ImportProblem(
                    "missing", tuple(self.search_folders(path)), tuple(self.nearby_modules(path, spelling))
                )
                continue
            target_text = self.text(target)
            refused = refusal(target_text) if target_text is not None else None
            if refused is not None:
                env[spelling] = ImportProblem("unreadable", (target, refused))
                continue
            # Found from the import graph, not from the order of analysis, so
            # every file of a cycle reports it, whichever is analysed first.
            back = self._path(target, path)
            if back is None and target in chain:  # the graph changed under us
                back = [*chain[chain.index(target) :], path]
            if back is not None:
                cycle = [path, *back]
                env[spelling] = ImportProblem("cycle", tuple(self.qualified_name(p) for p in cycle))
            else:
                exported = self.exports(target, cancelled)
                env[spelling] = exported if exported is not None else ImportProblem("unreadable", (target,))
        return env, imports


_FILE_MARK = re.compile(r"^# file: (\S+)[ \t]*$", re.M)
EXAMPLE_ROOT = "/example"


def example_files(text: str) -> dict[str, str] | None:
    """The files of a multi-file example (`# file: layers.qv` starts each,
    the first is the one shown checked), by path under EXAMPLE_ROOT; None
    for a one-file example."""
    marks = list(_FILE_MARK.finditer(text))
    if not marks or marks[0].start() != 0:
        return None
    files = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        files[posixpath.join(EXAMPLE_ROOT, m.group(1))] = text[m.end() + 1 : end]
    return files


EXAMPLE_LIBRARY = "/quiver-library"


def check_example(text: str, library: Mapping[str, str] | None = None) -> Analysis:
    """The analysis of an example: of its first file for a multi-file one.
    `library`: the texts of Quiver's own library by module file name
    (`{"nn.qv": ...}`), which an example may import (`import nn`); the
    caller reads them (this module does no I/O)."""
    files = example_files(text)
    if files is None and not (library and import_spellings(text)):
        return _analysis().Analyzer().update(text)
    if files is None:
        files = {posixpath.join(EXAMPLE_ROOT, "example.qv"): text}
    host = MemoryHost({**files, **{posixpath.join(EXAMPLE_LIBRARY, n): t for n, t in (library or {}).items()}})
    host.libraries = (EXAMPLE_LIBRARY,) if library else ()
    ws = Workspace(host, [EXAMPLE_ROOT])
    analysis = ws.analyze(next(iter(files)))
    assert analysis is not None
    return analysis
