"""Answers of the IDE queries: plain frozen dataclasses in absolute code-point
offsets. (The semantic-token legend is checker/legend.py.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .. import ast as A
from ..diagnostics import Diagnostic, TextEdit


@dataclass(frozen=True, slots=True)
class Hover:
    span: A.Span  # what the hover is about
    markdown: str


@dataclass(frozen=True, slots=True)
class NavTarget:
    """A place to jump to: `span` covers the whole declaration, `focus` its name."""

    span: A.Span
    focus: A.Span


@dataclass(frozen=True, slots=True)
class DocumentSymbol:
    name: str
    kind: Literal["dim", "const", "model", "param", "buffer", "fn", "extern"]
    detail: str
    span: A.Span
    focus: A.Span
    children: tuple[DocumentSymbol, ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    kind: Literal[
        "field",
        "variable",
        "param",
        "dim",
        "generic",
        "model",
        "fn",
        "extern",
        "builtin",
        "method",
        "keyword",
        "type",
        "constant",
        "module",
    ]
    detail: str = ""
    documentation: str = ""  # markdown
    sort_text: str = ""


@dataclass(frozen=True, slots=True)
class Signature:
    label: str
    parameters: tuple[tuple[int, int], ...]  # each parameter's [start, end) in `label`
    documentation: str = ""


@dataclass(frozen=True, slots=True)
class SignatureHelp:
    signatures: tuple[Signature, ...]
    active_signature: int
    active_parameter: int | None


@dataclass(frozen=True, slots=True)
class InlayHint:
    offset: int
    label: str
    kind: str = "type"


@dataclass(frozen=True, slots=True)
class SemanticToken:
    span: A.Span
    type: str
    modifiers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CodeLens:
    span: A.Span
    title: str
    command: str  # "" when the lens is only a label
    arguments: tuple = ()


@dataclass(frozen=True, slots=True)
class CodeAction:
    title: str
    kind: Literal["quickfix"]
    edits: tuple[TextEdit, ...]
    diagnostic: Diagnostic | None = None
    preferred: bool = False


TOP_KEYWORDS = ("dim", "model", "fn", "extern fn")
