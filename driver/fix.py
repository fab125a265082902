"""`qlint --fix`: apply the checker's quick fixes to the files given.

Every diagnostic the run reports (after --select/--ignore and the config)
whose checker attached a `Fix` has that fix applied: a diagnostic carries at
most one, so there is no choice to make. Fixes whose edits overlap or touch
one already taken in a round wait for the next round: the file is checked
again after each round and the fixes still offered are applied, at most
MAX_ROUNDS times (as ruff does). A file is written only when its fixed text
parses cleanly (no syntax error); one that has a syntax error already, or a
byte that is not UTF-8, is left alone. Files are written whole, never
through a symbolic link (driver/outputs.py); a byte order mark
is kept. With --diff nothing is written: the change is printed as a
unified diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from quiver.checker.diagnostics import Diagnostic, Fix
from quiver.checker.workspace import DecodedText, Workspace

from . import outputs
from .inputs import read_source

MAX_ROUNDS = 10


@dataclass
class Fixed:
    original: str
    text: str
    codes: list[str] = field(default_factory=list)  # the codes of the fixes applied, in order
    refused: str | None = None  # why the fixed text was not kept


def _parses_cleanly(analysis) -> bool:
    return not any(slot.parse.diagnostics for slot in analysis.parsed.slots)


def choose(diagnostics: list[Diagnostic]) -> list[tuple[str, Fix]]:
    """The fixes to apply together: each diagnostic's fix, in order of
    position, leaving out one whose edits overlap or touch (two insertions
    at one place) those of a fix already chosen."""
    taken: list[tuple[int, int]] = []
    out = []
    for d in sorted((d for d in diagnostics if d.fix is not None), key=lambda d: d.span.start):
        assert d.fix is not None
        spans = [(e.span.start, e.span.end) for e in d.fix.edits]
        if any(s <= te and ts <= e for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        out.append((d.code, d.fix))
    return out


def apply_fixes(text: str, fixes: list[tuple[str, Fix]]) -> str:
    edits = sorted((e for _, f in fixes for e in f.edits), key=lambda e: (e.span.start, e.span.end), reverse=True)
    for e in edits:
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    return text


def fix_file(workspace: Workspace, key: str, wanted: Callable[[Diagnostic], bool]) -> Fixed | None:
    """Fix the file `key` of the workspace in rounds; its overlay is left
    holding the text kept. None when it has no text."""
    start = workspace.text(key)
    if start is None:
        return None
    out = Fixed(str(start), str(start))
    if getattr(start, "decode_problem", None) is not None or getattr(start, "unreadable", None) is not None:
        return out
    analysis = workspace.analyze(key)
    if analysis is None or not _parses_cleanly(analysis):
        return out
    for _ in range(MAX_ROUNDS):
        fixes = choose([d for d in analysis.diagnostics if wanted(d)])
        if not fixes:
            break
        new = apply_fixes(out.text, fixes)
        if new == out.text:
            break
        workspace.set_overlay(key, DecodedText(new))
        after = workspace.analyze(key)
        if after is None or not _parses_cleanly(after):
            workspace.set_overlay(key, DecodedText(out.text))
            out.refused = "a fix would leave a syntax error"
            break
        out.text = new
        out.codes += [code for code, _ in fixes]
        analysis = after
    return out


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )


def write(path: str, text: str) -> None:
    """Write the fixed text over the file, whole, keeping its byte order mark;
    never through a symbolic link (outputs.write_file refuses one, naming it)."""
    outputs.refuse_link(path)  # before reading: read_source would follow it
    bom = b"\xef\xbb\xbf" if read_source(path).startswith(b"\xef\xbb\xbf") else b""
    outputs.write_file(path, bom + text.encode("utf-8"))
