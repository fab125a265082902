"""Reading .qv source files for the command-line tools (qlint, `quiver run`,
`quiver compile`, `quiver fmt`, `quiver.load`) and the language server.

A source file must be a regular file (not a FIFO, a device such as
/dev/zero, a socket or a folder) of at most MAX_SOURCE_BYTES bytes. Both are
checked before anything is read, and the read itself stops one byte past the
limit, so neither a pipe that never ends nor an endless device can hang a tool
or fill its memory. Failures raise InputError, an OSError whose `strerror` is
the message the tools print after "cannot read PATH: ".

The folder being checked is untrusted input: a symbolic link in it may point
anywhere (`tok.qv -> ~/token.txt`, `/proc/self/environ`). A read given a
`within` folder refuses a path that leads out of it once its links are
resolved, and checks that again on the file it opened (by /proc/self/fd on
Linux), so the refusal holds even if a link is swapped between the two.

Standard library only.
"""

from __future__ import annotations

import os
import stat

from quiver.checker.source import MAX_SOURCE_BYTES, size_text  # 10 MiB: the checker's own limit for a text


class InputError(OSError):
    """A path that is not a readable .qv source: not a regular file, or too large."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def is_regular(path: str) -> bool:
    """Whether `path` is a regular file (following symbolic links); False when
    it cannot be examined."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def why_not_source(path: str, within: str | None = None) -> str | None:
    """Why the entry at `path`, which exists, cannot be read as a source file
    ("it is a folder, not a regular file"); None when it can be, or when
    nothing is there at all."""
    try:
        if not os.path.lexists(path):
            return None
        if within is not None and escapes(path, within):
            return link_out_of(within).strerror
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return "it is a symbolic link to nothing (a broken link)"
        if not stat.S_ISREG(st.st_mode):
            return f"it is {_kind(st.st_mode)}, not a regular file"
        if st.st_size > MAX_SOURCE_BYTES:
            return f"it is larger than {limit_text(MAX_SOURCE_BYTES)} ({st.st_size} bytes), the limit for a source file"
    except (OSError, ValueError) as e:
        return getattr(e, "strerror", None) or str(e)
    return None


def inside(path: str, folder: str) -> bool:
    """Whether `path` lies in `folder` (or is it), both already resolved."""
    folder = folder.rstrip(os.sep) or os.sep
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def escapes(path: str, within: str) -> bool:
    """Whether `path`, its symbolic links resolved, leads out of the folder
    `within` (its own links resolved too). A path that cannot be resolved
    does not escape: reading it fails on its own."""
    try:
        return not inside(os.path.realpath(path), os.path.realpath(within))
    except (OSError, ValueError):
        return False


def link_out_of(within: str) -> InputError:
    return InputError(f"it is a symbolic link that leads out of {within}, and links out of the folder are not followed")


def _opened_path(fd: int) -> str | None:
    """Where an open file really is (Linux), else None."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def read_source(path: str, limit: int | None = None, within: str | None = None) -> bytes:
    """The bytes of the source file at `path`. Raises InputError when it is not
    a regular file, is larger than `limit` bytes (MAX_SOURCE_BYTES by
    default) or, given `within`, leads out of that folder through a symbolic
    link; OSError when it cannot be opened or read."""
    if limit is None:
        limit = MAX_SOURCE_BYTES
    try:
        if within is not None and escapes(path, within):
            raise link_out_of(within)
        st = os.stat(path)
    except ValueError as e:  # e.g. an embedded NUL byte in the path
        raise InputError(str(e)) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"it is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise InputError(f"it is larger than {limit_text(limit)} ({st.st_size} bytes), the limit for a source file")
    # O_NONBLOCK: should the path be swapped for a FIFO after the stat, opening it does not wait for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise InputError("it is not a regular file")
        if within is not None:
            opened = _opened_path(fh.fileno())
            if opened is not None and not inside(opened, os.path.realpath(within)):
                raise link_out_of(within)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise too_large(limit)
    return data


def limit_text(limit: int) -> str:
    """`10 MiB`, or `8 bytes` for a limit that is not a whole number of MiB."""
    return size_text(limit)


def too_large(limit: int | None = None) -> InputError:
    limit = MAX_SOURCE_BYTES if limit is None else limit
    return InputError(f"it is larger than {limit_text(limit)}, the limit for a source file")
