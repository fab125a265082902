"""Code actions: quick fixes from the diagnostics' fixes."""

from __future__ import annotations

import re

from .. import ast as A
from .. import suppressions
from ..analysis import Analysis
from ..diagnostics import Diagnostic, Severity, TextEdit
from .completion import _IDENT
from .results import CodeAction


def fixes(analysis: Analysis, d: Diagnostic) -> list[CodeAction]:
    """The mechanical fixes of one diagnostic."""
    out = []
    if d.fix is not None:
        out.append(CodeAction(d.fix.title, "quickfix", d.fix.edits, d, True))
    if d.code == "W0101":
        written = analysis.text[d.span.start : d.span.end]
        if re.fullmatch(_IDENT, written):
            out.append(
                CodeAction(
                    f"Rename to '_{written}' (unused on purpose)",
                    "quickfix",
                    (TextEdit(A.Span(d.span.start, d.span.start), "_"),),
                    d,
                )
            )
    if d.code == "W0102":
        lines = analysis.lines
        first = lines.position(d.span.start).line
        last = lines.position(d.span.end).line
        start = lines.line_starts[first]
        end = lines.line_starts[last + 1] if last + 1 < lines.line_count else len(analysis.text)
        out.append(CodeAction("Remove unreachable code", "quickfix", (TextEdit(A.Span(start, end), ""),), d))
    if d.severity is Severity.WARNING and not d.code.startswith("W01"):  # (unused code has its own fixes)
        out.append(_ignore_on_line(analysis, d))
    return out


def _ignore_on_line(analysis: Analysis, d: Diagnostic) -> CodeAction:
    """`# qlint: ignore[CODE]` at the end of the warning's line (the code
    added to the list when the line already has one: the suppressions the
    checker itself reads, checker/suppressions.py)."""
    text = analysis.text
    line = analysis.lines.position(d.span.start).line
    title = f"Ignore {d.code} on this line"
    s = suppressions.find(text, analysis.lines).get(line)
    if s is not None and not s.bare:
        at = s.span.end - 1  # before the `]`
        sep = ", " if s.entries else ""
        return CodeAction(title, "quickfix", (TextEdit(A.Span(at, at), f"{sep}{d.code}"),), d)
    start = analysis.lines.line_starts[line]
    end = analysis.lines.line_end(line)
    at = start + len(text[start:end].rstrip())
    return CodeAction(title, "quickfix", (TextEdit(A.Span(at, end), f"  # qlint: ignore[{d.code}]"),), d)


def code_actions(analysis: Analysis, span: A.Span) -> list[CodeAction]:
    """Quick fixes for the diagnostics that touch `span`."""
    out = []
    for d in analysis.diagnostics:
        if d.span.start <= span.end and span.start <= d.span.end:
            out.extend(fixes(analysis, d))
    return out
