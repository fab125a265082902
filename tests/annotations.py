"""Diagnostics written into the source they are about.

A fixture is a .qv program in which comment lines made of carets mark the
range of each expected diagnostic on the nearest line above that is not such a
comment, followed by the code and message:

    fn f(x: [b C]) -> [b]:
        return sum(x, over=K)
    #                      ^ E0109: unknown dim 'K'

Annotation lines are comments, so the fixture is the program the checker sees.
`check_annotated` compares what the checker reports with the annotations and
fails listing missing and unexpected diagnostics separately.

The tests' one way to check a snippet: `check_annotated(source, prelude=...,
dedent=...)` for annotated programs and `spanned(...)` (with the same
options) for (code, message, underlined text) tuples; a module binds its own
prelude once with functools.partial.

Update mode: with QUIVER_UPDATE_FIXTURES=1 in the environment, `check_fixture`
first writes a fixture's annotation lines again from what the checker reports
(its other lines untouched), so that rewording a message or moving a range is
one command and a reviewed diff:

    QUIVER_UPDATE_FIXTURES=1 pytest tests/checker/test_diagnostic_fixtures.py
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from quiver.checker import check_text
from quiver.checker.analysis import Analysis

_ANNOTATION = re.compile(r"^(\s*#\s*?)(\s*)(\^+)\s+([EW]\d{4})(?::\s?(.*))?$")


@dataclass(frozen=True, order=True)
class Expected:
    line: int  # 1-based
    start: int  # 1-based column
    end: int  # 1-based column, exclusive
    code: str
    message: str | None


def parse_annotations(source: str) -> list[Expected]:
    expected = []
    last_code_line = None
    for number, line in enumerate(source.splitlines(), start=1):
        m = _ANNOTATION.match(line)
        if m and last_code_line is not None:
            col = line.index("^") + 1
            width = len(m.group(3))
            expected.append(Expected(last_code_line, col, col + width, m.group(4), m.group(5)))
        else:
            last_code_line = number
    return expected


def actual(analysis: Analysis) -> list[Expected]:
    out = []
    for d in analysis.diagnostics:
        s = analysis.lines.position(d.span.start)
        e = analysis.lines.position(d.span.end)
        end_col = e.column + 1 if e.line == s.line else len(analysis.lines.line_text(s.line)) + 2
        out.append(Expected(s.line + 1, s.column + 1, max(end_col, s.column + 2), d.code, d.message))
    return out


def program(source: str, *, prelude: str = "", dedent: bool = False) -> str:
    """The program a test checks: `prelude` (the dims and models it assumes)
    then `source`; with `dedent`, `source` is a triple-quoted block indented
    with the test's code: dedented, without the blank lines it starts with."""
    return prelude + (textwrap.dedent(source).lstrip("\n") if dedent else source)


def check_annotated(source: str, *, prelude: str = "", dedent: bool = False) -> Analysis:
    """Check the annotated `program(source, prelude=, dedent=)`: exactly the
    annotated diagnostics, with their ranges and messages."""
    source = program(source, prelude=prelude, dedent=dedent)
    analysis = check_text(source)
    assert not analysis.internal_errors, analysis.internal_errors[0]
    want = parse_annotations(source)
    got = actual(analysis)
    missing = []
    for w in want:
        match = [
            g
            for g in got
            if (g.line, g.start, g.end, g.code) == (w.line, w.start, w.end, w.code)
            and (w.message is None or g.message == w.message)
        ]
        if not match:
            missing.append(w)
        else:
            got.remove(match[0])
    problems = []
    if missing:
        problems.append("missing (false negatives):\n" + "\n".join(f"  {m}" for m in missing))
    if got:
        problems.append("unexpected (false positives):\n" + "\n".join(f"  {g}" for g in got))
    assert not problems, "\n".join(problems)
    return analysis


def annotation_lines(source: str) -> dict[int, list[str]]:
    """The annotation lines of the checker's diagnostics of `source`, by the
    (1-based) line they go under."""
    analysis = check_text(source)
    assert not analysis.internal_errors, analysis.internal_errors[0]
    out: dict[int, list[str]] = {}
    for a in actual(analysis):
        if a.start < 2:
            raise ValueError(f"cannot annotate column 1 on line {a.line}")
        carets = "^" * (a.end - a.start)
        out.setdefault(a.line, []).append(f"#{' ' * (a.start - 2)}{carets} {a.code}: {a.message}")
    return out


def annotate(source: str) -> str:
    """The source with the checker's diagnostics written in (to write fixtures)."""
    notes = annotation_lines(source)
    out = []
    for number, line in enumerate(source.splitlines(), start=1):
        out.append(line)
        out += notes.get(number, [])
    return "\n".join(out) + "\n"


def is_update_mode() -> bool:
    """Whether the tests are to write the expected diagnostics instead of reading them."""
    return os.environ.get("QUIVER_UPDATE_FIXTURES", "") not in ("", "0")


def strip_annotations(source: str) -> str:
    """The source without its annotation lines: the code lines, as they are."""
    out = []
    last_code_line = None
    for line in source.splitlines(keepends=True):
        if _ANNOTATION.match(line.rstrip("\r\n")) and last_code_line is not None:
            continue
        out.append(line)
        last_code_line = line
    return "".join(out)


def rewrite_annotations(source: str) -> str:
    """The source with its annotation lines written again from what the
    checker reports now; the code lines are not changed."""
    return annotate(strip_annotations(source))


def check_fixture(path: Path, *, update: bool | None = None) -> Analysis:
    """`check_annotated` of an annotated fixture file; in update mode
    (`is_update_mode()`, or `update=True`) its annotations are first
    rewritten from the checker's report."""
    text = path.read_text(encoding="utf-8")
    if is_update_mode() if update is None else update:
        new = rewrite_annotations(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            text = new
    return check_annotated(text)


def spanned_in(analysis: Analysis, *, ignore: Collection[str] = ()) -> list[tuple[str, str, str]]:
    """(code, message, the text it underlines) of each diagnostic of an
    analysis (leaving out the codes in `ignore`); the checker must not have
    failed internally."""
    assert not analysis.internal_errors, analysis.internal_errors[0]
    text = analysis.text
    return [(d.code, d.message, text[d.span.start : d.span.end]) for d in analysis.diagnostics if d.code not in ignore]


def spanned(
    src: str, *, prelude: str = "", dedent: bool = False, ignore: Collection[str] = ()
) -> list[tuple[str, str, str]]:
    """(code, message, the text it underlines) of each diagnostic of
    `program(src, prelude=, dedent=)`, checked from scratch (leaving out the
    codes in `ignore`); the checker must not fail internally."""
    return spanned_in(check_text(program(src, prelude=prelude, dedent=dedent)), ignore=ignore)
