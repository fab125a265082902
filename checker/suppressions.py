"""Suppression comments: `# qlint: ignore[W0202]` at the end of a line.

A comment `# qlint: ignore[CODE, CODE]` (or, the older spelling, `# quiver:
ignore[...]`) silences those warnings on its line; a bare `# qlint: ignore`
silences every warning of the line. A warning is on a line when it starts or
ends there (a warning over several lines can be silenced at either end).
Errors are never silenced: the program could not run.

A suppression that silences nothing is itself a warning, W0105, on the code
in the list (or on the whole comment when it is bare or its list is empty):
a code with no such warning on the line, a code that is not a diagnostic code,
or the code of an error. Each carries a fix that removes the code from the
list, or the whole comment when nothing in it is used. W0105 is not silenced
by comments (`qlint --ignore W0105` or `ignore = ["W0105"]` turns it off).

`apply` is a pure function of the text and the diagnostics: the analysis
calls it last, so qlint, `quiver run` and the language server agree, and an
incremental analysis gives what a fresh one does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from . import ast as A
from . import catalog as C
from .diagnostics import Diagnostic, Fix, Severity, TextEdit
from .source import LineIndex

# where a suppression may start: a `#`, then `qlint:` or `quiver:`, then `ignore`
_HEAD = re.compile(r"#[ \t]*(?:qlint|quiver):[ \t]*ignore\b")
_LIST = re.compile(r"\[([^\]\n]*)\]")
_CODE = re.compile(r"[^,\s]+")

UNUSED = "W0105"


@dataclass
class _Entry:
    code: str
    span: A.Span
    remove: A.Span  # the code and one separator next to it
    used: bool = False


@dataclass
class _Suppression:
    span: A.Span  # `# qlint: ignore[...]`
    removal: TextEdit  # the edit that removes the whole comment
    bare: bool
    entries: list[_Entry] = field(default_factory=list)
    used: bool = False


def _comment_start(text: str, start: int, end: int) -> int:
    """The offset of the `#` that starts the comment of the line
    text[start:end], or -1 (a `#` inside a string literal is not one)."""
    quote = ""
    i = start
    while i < end:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return i
        i += 1
    return -1


def find(text: str, lines: LineIndex | None = None) -> dict[int, _Suppression]:
    """The suppressions of the text, by line number (0-based; the lines of
    `lines`, the analysis's index of the text, made when not given)."""
    out: dict[int, _Suppression] = {}
    if "ignore" not in text:
        return out
    lines = lines or LineIndex(text)
    starts = lines.line_starts
    for m in _HEAD.finditer(text):
        line = bisect_right(starts, m.start()) - 1
        if line in out:
            continue
        ls, le = starts[line], lines.line_end(line)
        comment = _comment_start(text, ls, le)
        if comment < 0 or comment > m.start() or m.start() >= le:
            continue  # in a string, or a second suppression on the line
        lm = _LIST.match(text, m.end(), le)
        end = lm.end() if lm is not None else m.end()
        rest = text[end:le].rstrip("\r")
        if rest.strip():
            removal = TextEdit(A.Span(m.start(), end), "#")  # keep the words after it as a comment
        else:
            before = m.start()
            while before > ls and text[before - 1] in " \t":
                before -= 1
            removal = TextEdit(A.Span(before, end), "")
        s = _Suppression(A.Span(m.start(), end), removal, lm is None)
        if lm is not None:
            codes = list(_CODE.finditer(text, lm.start(1), lm.end(1)))
            for i, c in enumerate(codes):
                if i + 1 < len(codes):
                    remove = A.Span(c.start(), codes[i + 1].start())
                elif i > 0:
                    remove = A.Span(codes[i - 1].end(), c.end())
                else:
                    remove = A.Span(c.start(), c.end())
                s.entries.append(_Entry(c.group().upper(), A.Span(c.start(), c.end()), remove))
        out[line] = s
    return out


def apply(text: str, diagnostics: list[Diagnostic], lines: LineIndex | None = None) -> list[Diagnostic]:
    """The diagnostics without the warnings the text's suppression comments
    silence, with a W0105 for each suppression (or code in one) that
    silences nothing; sorted as the analysis sorts them. Without a
    suppression in the text: the list given, after one scan for "ignore"."""
    lines = lines or LineIndex(text)
    found = find(text, lines)
    if not found:
        return diagnostics
    starts = lines.line_starts
    out: list[Diagnostic] = []
    for d in diagnostics:
        on = {bisect_right(starts, d.span.start) - 1, bisect_right(starts, max(d.span.start, d.span.end - 1)) - 1}
        silenced = False
        for line in on:
            s = found.get(line)
            if s is None or d.severity is not Severity.WARNING:
                continue
            if s.bare:
                s.used = silenced = True
            for e in s.entries:
                if e.code == d.code:
                    e.used = s.used = silenced = True
        if not silenced:
            out.append(d)
    for s in found.values():
        if s.bare or not s.entries:
            if not s.used:
                why = "no warning on this line to silence" if s.bare else "it names no code"
                out.append(_unused(C, s.span, why, s.removal))
            continue
        whole = not s.used
        for e in s.entries:
            if e.used:
                continue
            code = C.CODES.get(e.code)
            if code is None:
                why = f"'{e.code}' is not a diagnostic code (see qlint --list-codes)"
            elif code.severity is Severity.ERROR:
                why = f"{e.code} is an error, and errors cannot be silenced"
            else:
                why = f"no {e.code} warning on this line to silence"
            out.append(_unused(C, e.span, why, s.removal if whole else TextEdit(e.remove, "")))
    out.sort(key=lambda d: (d.span.start, d.span.end, d.code, d.message))
    return out


def _unused(C, span: A.Span, why: str, edit: TextEdit) -> Diagnostic:
    d = C.W0105.at(span, why=why, fix=Fix("Remove the unused suppression", (edit,)))
    return Diagnostic(d.code, d.severity, d.message, d.span, (), d.fix, d.unnecessary)
