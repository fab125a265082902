"""Reading .qv source files for the command-line tools (qlint, `quiver run`,
`quiver compile`, `quiver.load`).

A source file must be a regular file (not a FIFO, a device such as
/dev/zero, a socket or a folder) of at most MAX_SOURCE_BYTES bytes. Both are
checked before anything is read, and the read itself stops one byte past the
limit, so neither a pipe that never ends nor an endless device can hang a tool
or fill its memory. Failures raise InputError, an OSError whose `strerror` is
the message the tools print after "cannot read PATH: ".

Standard library only.
"""

from __future__ import annotations

import os
import stat

MAX_SOURCE_BYTES = 10 * 1024 * 1024  # 10 MiB


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


def read_source(path: str, limit: int | None = None) -> bytes:
    """The bytes of the source file at `path`. Raises InputError when it is not
    a regular file or is larger than `limit` bytes (MAX_SOURCE_BYTES by
    default), OSError when it cannot be opened or read."""
    if limit is None:
        limit = MAX_SOURCE_BYTES
    try:
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
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise too_large(limit)
    return data


def limit_text(limit: int) -> str:
    """`10 MiB`, or `8 bytes` for a limit that is not a whole number of MiB."""
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit} bytes"


def too_large(limit: int | None = None) -> InputError:
    limit = MAX_SOURCE_BYTES if limit is None else limit
    return InputError(f"it is larger than {limit_text(limit)}, the limit for a source file")
