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
holds one small file per entry, and is safe to delete at any time.

The cache folder is in the workspace, and the workspace is untrusted: a
repository can ship a `.quiver_cache` of its own. So:

- **Entries are authenticated.** Each is signed with an HMAC-SHA256 under a
  key of this user's, kept outside every workspace (`$XDG_CACHE_HOME/quiver/
  cache-key`, else `~/.cache/quiver/cache-key`, made on first use, mode 0600).
  An entry a repository shipped, or one written by another user or machine,
  does not verify and is treated as missing; the key is over the entry's own
  cache key as well, so a genuine entry moved under another name fails too.
- **The key is trusted only if no one else could have written it**, as ssh
  judges its keys: a regular file (opened without following a link and
  without waiting, so a FIFO cannot hang a tool; judged by its descriptor),
  owned by this user, not writable by group or others, in a folder of the
  same kind. A key that fails is replaced by a new one when its folder is
  safe; otherwise there is no cache. Either way `ResultCache.note` says so,
  and qlint (stderr) and the server (its log) say it once. Without a key
  (no home folder that can be written) there is no cache.
- **Nothing is written through a link.** Every folder and file of the cache is
  opened relative to its parent's descriptor with O_NOFOLLOW: a cache folder,
  a shard or a `.gitignore` that is a symbolic link is refused (the cache is
  then unused), never written through. Entries are written to a new file
  (O_EXCL) and renamed into place, so a reader never sees half an entry.
- **A bad entry is a miss.** Whatever an entry holds (not UTF-8, not JSON,
  the wrong shapes, spans that are strings), it is ignored and rewritten.

Every failure to read or write the cache is ignored: the cache only saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from quiver import outputs
from quiver.checker import ast as A
from quiver.checker.diagnostics import Diagnostic, Fix, RelatedInfo, Severity, TextEdit

CACHE_DIR_NAME = ".quiver_cache"
KEY_FILE_NAME = "cache-key"
_MAGIC = b"quiver-cache 1\n"
_MAX_ENTRY_BYTES = 16 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@lru_cache(maxsize=1)
def checker_version() -> str:
    """A hash of the checker's source files and grammar."""
    import quiver.checker as checker

    root = Path(checker.__file__).parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.suffix in (".py", ".lark") and "__pycache__" not in p.parts:
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())  # the installed checker's own files, never the user's folder
    return h.hexdigest()[:16]


def default_dir() -> Path:
    return Path(os.environ.get("QUIVER_CACHE_DIR") or CACHE_DIR_NAME)


def key_folder() -> Path | None:
    """Where this user's signing key lives: outside any workspace."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home == "~" or not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "quiver"


_KEY_BYTES = 32


def signing_key() -> tuple[bytes | None, str | None]:
    """This user's key for the cache's entries, made on first use, and a note
    for the user when it could not be used as it was (None when all is well).
    The key is None when there is no safe place for one: then nothing is
    cached. `_read_key` and `_owner_problem` say what makes a key (and its
    folder) safe to trust."""
    folder = key_folder()
    if folder is None:
        return None, "not using the cache: there is no home folder to keep its key in"
    path = folder / KEY_FILE_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        return None, f"not using the cache: cannot make {folder} for its key: {e.strerror or e}"
    unsafe_folder = _owner_problem(folder)
    key, problem = _read_key(path)
    if key is not None and unsafe_folder is None:
        return key, None
    if key is not None:  # the user's own key, in a folder others may write: it may have been swapped
        return None, f"not using the cache: the folder of its key, {folder}, {unsafe_folder}"
    if problem is None:  # no key yet
        if unsafe_folder is not None:
            return None, f"not using the cache: the folder of its key, {folder}, {unsafe_folder}"
        return _make_key(path, None)
    if unsafe_folder is not None:
        return None, (
            f"not using the cache: its key {path} {problem}, and its folder {unsafe_folder}, "
            "so no key there can be trusted"
        )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # (never follows a link; the folder is the user's own)
    return _make_key(path, f"the cache key {path} {problem}: it was replaced by a new one")


def _make_key(path: Path, note: str | None) -> tuple[bytes | None, str | None]:
    try:
        outputs.create_new(path, secrets.token_bytes(_KEY_BYTES), mode=0o600)
    except FileExistsError:  # another process made one first
        pass
    except OSError as e:
        return None, f"not using the cache: cannot write its key {path}: {e.strerror or e}"
    key, problem = _read_key(path)
    if key is None:
        return None, f"not using the cache: its key {path} {problem or 'vanished'}"
    return key, note


def _owner_problem(path: Path | str, st: os.stat_result | None = None) -> str | None:
    """Why a key (or its folder) that anyone but this user could have written
    cannot be trusted, as ssh judges its keys: owned by another user, or
    writable by its group or by everyone. None where there are no owners."""
    if not hasattr(os, "geteuid"):
        return None
    try:
        st = st if st is not None else os.stat(path)
    except OSError as e:
        return f"cannot be examined ({e.strerror or e})"
    if st.st_uid != os.geteuid():
        return f"belongs to another user (uid {st.st_uid})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o002:
        return f"is writable by others (mode {mode:04o})"
    if mode & 0o020:
        return f"is writable by its group (mode {mode:04o})"
    return None


def _read_key(path: Path) -> tuple[bytes | None, str | None]:
    """(the key, None) when the file at `path` is one to trust; (None, why
    not) when it is not; (None, None) when there is none. Opened without
    following a link and without waiting (a FIFO), then judged by the
    descriptor, so what is judged is what is read."""
    flags = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as e:
        if os.path.islink(path):
            return None, "is a symbolic link"
        return None, f"cannot be read ({e.strerror or e})"
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        problem = _owner_problem(path, st)
        if problem is not None:
            return None, problem
        key = fh.read(64)
    if len(key) < _KEY_BYTES:
        return None, "is too short to be a key"
    return key, None


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
    def __init__(self, directory: Path | None = None, key: bytes | None = None) -> None:
        self.root = directory or default_dir()
        self.dir = self.root / checker_version()
        self.note: str | None = None  # why the user's key was not used as it was: said once, by the caller
        if key is None:
            key, self.note = signing_key()
        self._key = key
        self.hits = 0
        self.misses = 0

    def _mac(self, key: str, body: bytes) -> bytes:
        assert self._key is not None
        return hmac.new(self._key, key.encode("ascii") + b"\0" + body, hashlib.sha256).hexdigest().encode("ascii")

    def get(self, key: str) -> list[Diagnostic] | None:
        diags = self._get(key) if self._key is not None else None
        if diags is None:
            self.misses += 1
        else:
            self.hits += 1
        return diags

    def _get(self, key: str) -> list[Diagnostic] | None:
        try:
            with self._shard(key, create=False) as shard:
                if shard is None:
                    return None
                # O_NONBLOCK: the cache is in the workspace, where an entry may be a FIFO
                flags = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
                fd = os.open(f"{key[2:]}.json", flags, dir_fd=shard)
                with os.fdopen(fd, "rb") as fh:
                    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                        return None
                    data = fh.read(_MAX_ENTRY_BYTES + 1)
        except (OSError, ValueError):
            return None
        if len(data) > _MAX_ENTRY_BYTES or not data.startswith(_MAGIC):
            return None
        mac, _, body = data[len(_MAGIC) :].partition(b"\n")
        if not hmac.compare_digest(mac, self._mac(key, body)):
            return None  # not written by this user's Quiver: a repository may have shipped it
        try:
            return [_decode(d) for d in json.loads(body)]
        except Exception:  # a genuine entry that no longer decodes: a miss, rewritten
            return None

    def put(self, key: str, diagnostics: list[Diagnostic]) -> None:
        if self._key is None:
            return
        body = json.dumps([_encode(d) for d in diagnostics], separators=(",", ":")).encode("utf-8")
        data = _MAGIC + self._mac(key, body) + b"\n" + body
        with contextlib.suppress(OSError, ValueError), self._shard(key, create=True) as shard:
            if shard is None:
                return
            # beside the name, then renamed over it, never through a link (quiver.outputs)
            outputs.write_file(f"{key[2:]}.json", data, mode=0o644, dir_fd=shard)

    @contextlib.contextmanager
    def _shard(self, key: str, create: bool) -> Iterator[int | None]:
        """The descriptor of the entry's folder, each folder on the way opened
        relative to the one before without following a link; None when it is
        not there (and not `create`d)."""
        fds: list[int] = []
        try:
            root = _open_dir(str(self.root), None, create)
            if root is None:
                yield None
                return
            fds.append(root)
            if create:
                _ignore_file(root)
            at = root
            for name in (checker_version(), key[:2]):
                sub = _open_dir(name, at, create)
                if sub is None:
                    yield None
                    return
                fds.append(sub)
                at = sub
            yield at
        finally:
            for fd in fds:
                os.close(fd)


def _open_dir(name: str, parent: int | None, create: bool) -> int | None:
    """A folder opened without following a link at its name (the path above
    it, for the cache's own root, is the user's choice)."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            return None
    if parent is None:
        os.makedirs(name, exist_ok=True)
    else:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent)
    return os.open(name, flags, dir_fd=parent)


def _ignore_file(root: int) -> None:
    """`.gitignore` in the cache's folder, so that it is never committed by
    accident (as ruff does); made only when missing, never through a link.
    Looked for first: every entry written passes here, and making a file
    only to find the name taken costs a write, a link and an unlink."""
    with contextlib.suppress(OSError):
        os.stat(".gitignore", dir_fd=root, follow_symlinks=False)
        return  # there (whatever it is: a link there is left alone, never followed)
    with contextlib.suppress(FileExistsError):
        outputs.create_new(".gitignore", b"# made by Quiver\n*\n", mode=0o644, dir_fd=root)


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


def _str(x: object) -> str:
    if not isinstance(x, str):
        raise TypeError("expected a string")
    return x


def _read_span(x: object) -> A.Span:
    if not (isinstance(x, list) and len(x) == 2 and all(type(v) is int and v >= 0 for v in x) and x[0] <= x[1]):
        raise TypeError("expected a span")
    return A.Span(x[0], x[1])


def _decode(x: object) -> Diagnostic:
    if not isinstance(x, dict):
        raise TypeError("expected an object")
    fix = None
    if "f" in x:
        title, edits = x["f"]
        fix = Fix(_str(title), tuple(TextEdit(_read_span(s), _str(t)) for s, t in edits))
    return Diagnostic(
        _str(x["c"]),
        Severity(x["s"]),
        _str(x["m"]),
        _read_span(x["p"]),
        tuple(RelatedInfo(_str(m), _read_span(s)) for m, s in x.get("r", ())),
        fix,
        bool(x.get("u")),
    )


def key_for(workspace, path: str, text: str) -> str:
    """The cache key of `path` with `text`, in a `checker.workspace.Workspace`:
    its imports' texts as the workspace sees them (an editor's unsaved text
    included), the folders it searches for modules, and for a module that
    is missing, the modules nearby (its message suggests one) or why the
    entry there is not a module file."""
    from quiver.checker.workspace import import_spellings

    deps = []
    for p in workspace.import_closure(path):
        dep = workspace.text(p) or ""
        deps.append((p, dep))
        unreadable = getattr(dep, "unreadable", None)
        if unreadable:
            deps.append((f"*unreadable* {p}", unreadable))
    deps.append(("*search*", "\0".join(workspace.search_folders(path))))
    for spelling in import_spellings(text):
        if workspace.resolve(path, spelling) is None:
            deps.append((f"*nearby* {spelling}", "\0".join(workspace.nearby_modules(path, spelling))))
            unusable = workspace.unusable(path, spelling)
            if unusable is not None:
                deps.append((f"*unusable* {spelling}", "\0".join(unusable)))
    return file_key(path, text, deps)
