"""Writing files: the one way every part of Quiver writes one.

Plots, `metrics.csv` and TensorBoard event files, checkpoints, the result
cache, `quiver fmt`, `qlint --fix`, `quiver compile -o` and the server's
generated pages all write through this module, because the folder they
write into is usually the user's project, which is untrusted: a
`runs/prog/metrics.png -> ~/.bashrc` planted in a repository must not make
`quiver plot` overwrite `~/.bashrc`.

- **Never through a link.** A symbolic link at the name written is an error
  that names it (`OutputError`); nothing is written. The check is for the
  message only: the writes below would not follow a link swapped in after
  it either.
- **Replaced whole.** New contents go to a temporary file in the same folder,
  created with O_CREAT|O_EXCL|O_NOFOLLOW (so never an existing file or a
  link's target), which then takes the name with `os.replace` (a rename
  replaces a link at the name, never what it points to). A reader sees the
  old file or the new one, never half of one; the file keeps the
  read/write/execute permissions of the one it replaces (not its setuid,
  setgid or sticky bit).
- **Appending** opens with O_APPEND|O_NOFOLLOW, and a file written as a
  stream (a run's metrics) is first put in place empty, as above, and then
  written through that same descriptor.

Only the folders above the name are followed as they are: they are where
the user (a command's argument, `--log-dir`) or the caller (which checks
that a default folder stays inside the project) chose.

Standard library only: the runtime (which must not import the checker), the
driver and the server import it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from typing import BinaryIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class OutputError(OSError):
    """A file Quiver will not write: a symbolic link at its name. `strerror`
    is the reason, in words, as the tools print it after "cannot write PATH: "."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.strerror = message
        self.filename = path


def _link_target(path: str, dir_fd: int | None) -> str | None:
    """Where the link at `path` points, or None when no link is there."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if not stat.S_ISLNK(st.st_mode):
        return None
    try:
        return os.readlink(path, dir_fd=dir_fd)
    except OSError:
        return "?"


def refuse_link(path: str, dir_fd: int | None = None) -> None:
    """Raise OutputError when the name `path` is a symbolic link."""
    target = _link_target(path, dir_fd)
    if target is not None:
        raise OutputError(
            f"it is a symbolic link (to {target}), and Quiver never writes through a link: remove it first", path
        )


def _mode_for(path: str, dir_fd: int | None, mode: int | None) -> int | None:
    """`mode` if given, else the permissions of the file being replaced;
    None for a new file, which gets 0666 less the umask (os.open applies it:
    the umask is never read by setting it, which would race other threads)."""
    if mode is not None:
        return mode
    try:
        # its read/write/execute bits only: never setuid, setgid or sticky from a file that may be planted
        return stat.S_IMODE(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode) & 0o777
    except (OSError, ValueError):
        return None


def _temp_beside(path: str, dir_fd: int | None, mode: int | None) -> tuple[int, str]:
    """A new, empty file in the folder of `path`: (descriptor, its path), with
    `mode` (None: 0666 less the umask, as any new file)."""
    folder, name = os.path.split(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue
        if mode is not None:
            with contextlib.suppress(OSError, AttributeError):  # (no fchmod on Windows)
                os.fchmod(fd, mode)  # (the umask applies to os.open's mode, not to this)
        return fd, tmp
    raise FileExistsError(f"cannot make a temporary file beside {path}")


def _unlink(path: str, dir_fd: int | None) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path, dir_fd=dir_fd)


@contextlib.contextmanager
def replacing(path: str | os.PathLike, mode: int | None = None, dir_fd: int | None = None) -> Iterator[BinaryIO]:
    """A binary file to write the new contents of `path` into; when the block
    ends without an exception, it takes the name `path` (replacing what was
    there), else it is removed and `path` is untouched. Raises OutputError
    for a link at `path`, OSError when the folder cannot be written. `mode`:
    the new file's permissions (default: those of the file replaced).
    `dir_fd`: `path` is relative to that folder's descriptor."""
    path = os.fspath(path)
    refuse_link(path, dir_fd)
    fd, tmp = _temp_beside(path, dir_fd, _mode_for(path, dir_fd, mode))
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink(tmp, dir_fd)
        raise


def write_file(path: str | os.PathLike, data: bytes, mode: int | None = None, dir_fd: int | None = None) -> None:
    """Replace the file at `path` by `data`, whole or not at all (see `replacing`)."""
    with replacing(path, mode, dir_fd) as fh:
        fh.write(data)


def write_text(path: str | os.PathLike, text: str, mode: int | None = None) -> None:
    write_file(path, text.encode("utf-8"), mode)


def create_new(path: str | os.PathLike, data: bytes, mode: int = 0o600, dir_fd: int | None = None) -> None:
    """Write `data` to a file at `path` that must not exist yet (FileExistsError
    when anything, a link included, is there): made whole beside it and then
    linked into place, so a reader never sees it half written. A file system
    without hard links gets it written in place, still never through a link."""
    path = os.fspath(path)
    fd, tmp = _temp_beside(path, dir_fd, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            return
        except FileExistsError:
            raise
        except (OSError, NotImplementedError):  # no hard links here
            pass
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
        with os.fdopen(os.open(path, flags, mode, dir_fd=dir_fd), "wb") as fh:
            fh.write(data)
    finally:
        _unlink(tmp, dir_fd)


def open_new_stream(path: str | os.PathLike, initial: bytes = b"") -> BinaryIO:
    """A file at `path` holding `initial`, opened for reading and appending,
    that has replaced whatever was at the name (see `replacing`; a link there
    is an OutputError): for a file written as it goes, such as a run's
    metrics. The descriptor returned is the file that took the name, so what
    is written next never goes through a link swapped in since."""
    path = os.fspath(path)
    refuse_link(path)
    fd, tmp = _temp_beside(path, None, _mode_for(path, None, None))
    try:
        view = memoryview(initial)
        while view:
            view = view[os.write(fd, view) :]
        os.replace(tmp, path)
    except BaseException:
        os.close(fd)
        _unlink(tmp, None)
        raise
    return os.fdopen(fd, "a+b")


def open_append(path: str | os.PathLike) -> BinaryIO:
    """The existing file at `path`, opened for reading and appending, never
    through a link at its name (OutputError) and only if it is a regular file."""
    path = os.fspath(path)
    refuse_link(path)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | _NOFOLLOW | _CLOEXEC | _BINARY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "a+b")
