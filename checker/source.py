"""Source text: decoding bytes, and mapping offsets to lines and columns.

Offsets are indices into the Python `str` (code points). Lines break at `\\n`,
`\\r\\n` and a lone `\\r`, as the LSP specification says. Columns here are code
points; the language server converts them to the client's encoding (UTF-16 by
default) itself.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from . import catalog as C

_LINE_BREAK = re.compile(r"\r\n?|\n")

# The largest source text checked (a file read from disk, an editor's
# document): past it nothing is parsed, and the analysis is one E0012. A
# text that big is not a program someone wrote, and checking it would take
# minutes and gigabytes.
MAX_SOURCE_BYTES = 10 * 1024 * 1024  # 10 MiB


def oversize(text: str) -> int | None:
    """The size in UTF-8 bytes of a text larger than MAX_SOURCE_BYTES, else
    None (without encoding it when its length alone decides)."""
    if len(text) * 4 <= MAX_SOURCE_BYTES:
        return None
    size = len(text) if len(text) > MAX_SOURCE_BYTES else len(text.encode("utf-8", "surrogatepass"))
    return size if size > MAX_SOURCE_BYTES else None


def refusal(text: str) -> str | None:
    """Why a text is not checked (E0012), or None: a host marked it
    unreadable (checker.workspace.DecodedText), or it is too large."""
    reason = getattr(text, "unreadable", None)
    if reason is None and (size := oversize(text)) is not None:
        reason = C.E0012.say("too_large", limit=size_text(MAX_SOURCE_BYTES), size=f"{size:,}")
    return reason


def size_text(size: int) -> str:
    """`10 MiB`, or `8 bytes` for a size that is not a whole number of MiB."""
    mib = 1024 * 1024
    return f"{size // mib} MiB" if size % mib == 0 else f"{size} bytes"


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 0-based
    column: int  # 0-based, code points


class LineIndex:
    """Built on first use: most edits never need line numbers of the whole text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]
        return self._starts

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return Position(line, offset - self.line_starts[line])

    def offset(self, line: int, column: int) -> int:
        """The offset of a 0-based (line, column); clamped into the text."""
        if line < 0:
            return 0
        if line >= len(self.line_starts):
            return len(self.text)
        start = self.line_starts[line]
        end = self.line_end(line)
        return min(start + max(column, 0), end)

    def line_end(self, line: int) -> int:
        """Offset of the end of `line`, before its line break."""
        if line + 1 < len(self.line_starts):
            end = self.line_starts[line + 1]
            while end > self.line_starts[line] and self.text[end - 1] in "\r\n":
                end -= 1
            return end
        return len(self.text)

    def line_text(self, line: int) -> str:
        return self.text[self.line_starts[line] : self.line_end(line)]

    @property
    def line_count(self) -> int:
        return len(self.line_starts)


@dataclass(frozen=True, slots=True)
class DecodeProblem:
    """Where undecodable bytes were replaced while decoding."""

    offset: int  # offset in the decoded text of the first replacement character
    byte: int


def decode_source(data: bytes) -> tuple[str, DecodeProblem | None]:
    """Decode a file's bytes as UTF-8 (a BOM is dropped). Invalid bytes become
    U+FFFD so the rest can still be checked; the first one is reported."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        prefix = data[: e.start].decode("utf-8", errors="replace")
        text = data.decode("utf-8", errors="replace")
        return text, DecodeProblem(len(prefix), data[e.start])
