"""Diagnostic values: plain frozen data in offsets, no protocol types.

A `LocalDiagnostic` is what parsing and checking of one item produce: spans
relative to the item, related locations either in the same item or named
symbolically (a declaration found again when the diagnostic is published, so a
cached result never points at a stale place). `Diagnostic` is the published,
absolute form. Codes and messages come only from checker/catalog.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .ast import Span


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class SymbolRef:
    """A declaration named by path: ("model", "Mlp"), ("member", "Mlp", "w1"),
    ("fn", "loss"), ("param", "loss", "x"), ("dim", "D"), ("extern", "f")."""

    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LocalRelated:
    message: str
    span: Span | None = None  # in the same item
    symbol: SymbolRef | None = None  # elsewhere


@dataclass(frozen=True, slots=True)
class TextEdit:
    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A mechanical fix, offered as a quick fix by the language server."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True, slots=True)
class LocalDiagnostic:
    code: str
    severity: Severity
    message: str
    span: Span
    related: tuple[LocalRelated, ...] = ()
    fix: Fix | None = None
    unnecessary: bool = False  # unused or unreachable code: editors fade it


@dataclass(frozen=True, slots=True)
class RelatedInfo:
    message: str
    span: Span  # absolute


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A published diagnostic, in absolute offsets of the document's text."""

    code: str
    severity: Severity
    message: str
    span: Span
    related: tuple[RelatedInfo, ...] = ()
    fix: Fix | None = None
    unnecessary: bool = False

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR
