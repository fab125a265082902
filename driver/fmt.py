"""`quiver fmt`: rewrite .qv files in the canonical layout (checker/formatter.py).

    quiver fmt [--check | --diff] PATH ...

A folder stands for every *.qv file under it (hidden folders, node_modules
and __pycache__ skipped, as qlint does); `-` formats standard input to
standard output. Files are read through driver/inputs.py (regular files of at
most 10 MiB) and must be UTF-8; a byte order mark is kept. A file is written
only when its layout changes, whole (a temporary file beside it takes its
name), and never through a symbolic link: a link named on the command line
is an error, one found in a folder is skipped with a note.

An item with a syntax error is left exactly as it was written, with a note on
stderr (`path:line:col: note: ...`) when its layout would change (--check
does not count it as a change); the rest of its file is formatted.

With --check nothing is written: each file that would change is named on
stdout (`Would reformat: PATH`). With --diff nothing is written either: the
change of each file is printed on stdout as a unified diff (`--- a/PATH`,
`+++ b/PATH`), as `git diff` shows it. Exit status: 0 when every file is (or now
is) formatted; 1 with --check or --diff when some file would change; 2 when a file
cannot be read or written, is not UTF-8, or for an internal failure (a
one-line message, never a traceback).
"""

from __future__ import annotations

import os
import sys

from quiver.checker.formatter import Formatted, format_text
from quiver.checker.source import LineIndex

from . import inputs, outputs
from .fix import unified_diff
from .inputs import read_source
from .qlint import find_files
from .report import location

_BOM = b"\xef\xbb\xbf"


class _NotUtf8(OSError):
    def __init__(self, e: UnicodeDecodeError, skipped: int) -> None:
        super().__init__(f"it is not valid UTF-8 (byte 0x{e.object[e.start]:02x} at offset {skipped + e.start})")
        self.strerror = str(self.args[0])


def _decode(data: bytes) -> tuple[bytes, str]:
    """(byte order mark or b"", text); raises _NotUtf8. The formatter never
    replaces a byte it cannot read, as writing it back would lose it."""
    bom = _BOM if data.startswith(_BOM) else b""
    try:
        return bom, data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError as e:
        raise _NotUtf8(e, len(bom)) from None


def _notes(shown: str, text: str, result: Formatted) -> None:
    lines = LineIndex(text)
    for span in result.skipped:
        p = lines.position(span.start)
        where = location(shown, p.line + 1, p.column + 1)
        print(f"{where}: note: not formatted: this item has a syntax error", file=sys.stderr)
    for span in result.refused:
        p = lines.position(span.start)
        where = location(shown, p.line + 1, p.column + 1)
        print(
            f"{where}: note: not formatted: the formatter would change its meaning (please report it)", file=sys.stderr
        )


def _read_stdin() -> bytes:
    data = sys.stdin.buffer.read(inputs.MAX_SOURCE_BYTES + 1)
    if len(data) > inputs.MAX_SOURCE_BYTES:
        raise inputs.too_large()
    return data


def run(paths: list[str], check: bool, diff: bool = False) -> int:
    check = check or diff
    skipped: list[tuple[str, str]] = []
    files = find_files(paths, skipped, follow_links=False)
    for path, reason in skipped:
        print(f"quiver: note: skipped {path}: {reason}", file=sys.stderr)
    failed = changed = 0
    for path in files:
        stdin = path == "-"
        try:
            if not stdin and not check and os.path.islink(path):
                raise inputs.InputError("it is a symbolic link, and quiver fmt never writes through one")
            bom, text = _decode(_read_stdin() if stdin else read_source(path))
        except OSError as e:
            print(f"quiver: cannot read {path}: {e.strerror or e}", file=sys.stderr)
            failed += 1
            continue
        result = format_text(text)
        _notes(path, text, result)
        if result.text != text:
            changed += 1
        if stdin and not check:
            sys.stdout.buffer.write(bom + result.text.encode("utf-8"))
            sys.stdout.flush()
        elif check:
            if result.text != text and diff:
                shown = "<stdin>" if stdin else path
                sys.stdout.write(unified_diff(shown, text, result.text))
            elif result.text != text:
                print(f"Would reformat: {path}")
        elif result.text != text:
            try:
                # whole, with its permissions, never through a link (driver/outputs.py)
                outputs.write_file(path, bom + result.text.encode("utf-8"))
            except OSError as e:
                print(f"quiver: cannot write {path}: {e.strerror or e}", file=sys.stderr)
                failed += 1
                changed -= 1
    if files != ["-"]:
        print(_summary(len(files) - failed, changed, check, failed), file=sys.stderr)
    if failed or (not files and paths):
        return 2
    return 1 if check and changed else 0


def _summary(done: int, changed: int, check: bool, failed: int) -> str:
    def n(k: int) -> str:
        return f"{k} file{'s' if k != 1 else ''}"

    if done == 0 and not failed:
        return "quiver: no .qv files found"
    if check:
        text = f"{n(changed)} would be reformatted, {n(done - changed)} already formatted"
    else:
        text = f"{n(changed)} reformatted, {n(done - changed)} left unchanged"
    return "quiver: " + text + (f", {n(failed)} could not be read or written" if failed else "")
