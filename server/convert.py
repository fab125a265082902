"""Every conversion between the checker's answers and protocol types.

The checker speaks in absolute code-point offsets into a document's text;
clients speak in (line, character) positions whose character counts code units
of the negotiated encoding: UTF-16 unless the client offered UTF-8 or UTF-32.
`Codec` does that arithmetic against the checker's `LineIndex` of the exact
text the answer was computed from; the functions below build lsprotocol
objects from quiver.checker.ide's dataclasses. No other module of the server
builds a Range or a Position.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from lsprotocol import types as lsp

from quiver.checker import ide
from quiver.checker.ast import Span
from quiver.checker.diagnostics import Diagnostic, Severity, TextEdit
from quiver.checker.source import LineIndex

# ====================================================================== positions


class Codec:
    """Offsets <-> positions in one position encoding."""

    def __init__(self, encoding: str = "utf-16") -> None:
        if encoding not in ("utf-8", "utf-16", "utf-32"):
            raise ValueError(f"unknown position encoding {encoding!r}")
        self.encoding = encoding

    def units(self, s: str) -> int:
        """The length of `s` in code units of this encoding."""
        if self.encoding == "utf-32" or s.isascii():
            return len(s)
        if self.encoding == "utf-16":
            return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)
        return len(s.encode("utf-8", "surrogatepass"))

    def _chars(self, s: str, units: int) -> int:
        """How many code points of `s` fit in `units` code units (a position
        inside a character is taken to be at its start)."""
        if self.encoding == "utf-32" or s.isascii():
            return min(units, len(s))
        used = 0
        for i, c in enumerate(s):
            o = ord(c)
            w = (
                (2 if o > 0xFFFF else 1)
                if self.encoding == "utf-16"
                else (1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4)
            )
            if used + w > units:
                return i
            used += w
        return len(s)

    def position(self, lines: LineIndex, offset: int) -> lsp.Position:
        p = lines.position(offset)
        start = lines.line_starts[p.line]
        return lsp.Position(p.line, self.units(lines.text[start : start + p.column]))

    def range(self, lines: LineIndex, span: Span) -> lsp.Range:
        return lsp.Range(self.position(lines, span.start), self.position(lines, span.end))

    def offset(self, lines: LineIndex, pos: lsp.Position) -> int | None:
        """The offset of a client position; None when its line is past the end
        of the text. A character past the end of its line means the line's end,
        as the protocol says."""
        if pos.line < 0 or pos.character < 0:
            return None
        if pos.line >= lines.line_count:
            return None
        start = lines.line_starts[pos.line]
        end = lines.line_end(pos.line)
        return start + self._chars(lines.text[start:end], pos.character)

    def span(self, lines: LineIndex, rng: lsp.Range) -> Span | None:
        start = self.offset(lines, rng.start)
        end = self.offset(lines, rng.end)
        if start is None or end is None:
            return None
        return Span(min(start, end), max(start, end))


class Lines(LineIndex):
    """The checker's LineIndex, with line starts that can be carried over an
    edit instead of found again by scanning the whole text."""

    def __init__(self, text: str, starts: list[int] | None = None) -> None:
        super().__init__(text)
        self._known = starts

    @property
    def line_starts(self) -> list[int]:
        if self._known is None:
            self._known = LineIndex.line_starts.fget(self)  # type: ignore[attr-defined]
        return self._known

    def edited(self, start: int, end: int, new: str) -> Lines:
        """The lines of the text with [start, end) replaced by `new`."""
        text = self.text
        result = text[:start] + new + text[end:]
        if (
            self._known is None
            or "\r" in new
            or "\r" in text[max(0, start - 1) : start + 1]
            or "\r" in text[max(0, end - 1) : end + 1]
        ):
            return Lines(result)  # a carriage return near the edit: scan again
        starts = self._known
        delta = len(new) - (end - start)
        keep = bisect.bisect_right(starts, start)
        rest = bisect.bisect_right(starts, end)
        added = []
        i = new.find("\n")
        while i >= 0:
            added.append(start + i + 1)
            i = new.find("\n", i + 1)
        tail = starts[rest:]
        if delta:
            tail = [s + delta for s in tail]
        return Lines(result, starts[:keep] + added + tail)


def apply_change(lines: Lines, codec: Codec, change) -> Lines:
    """The text (and its lines) after one `TextDocumentContentChangeEvent`."""
    rng = getattr(change, "range", None)
    if rng is None:
        return Lines(change.text)
    start = _clamped_offset(lines, codec, rng.start)
    end = _clamped_offset(lines, codec, rng.end)
    if end < start:
        start, end = end, start
    return lines.edited(start, end, change.text)


def _clamped_offset(lines: LineIndex, codec: Codec, pos: lsp.Position) -> int:
    off = codec.offset(lines, pos)
    if off is not None:
        return off
    return 0 if pos.line < 0 else len(lines.text)


# ====================================================================== diagnostics


def docs_link(code: str, base: str) -> str:
    return f"{base}#{code.lower()}"


def diagnostic(d: Diagnostic, lines: LineIndex, codec: Codec, uri: str, docs_base: str | None) -> lsp.Diagnostic:
    related = [
        lsp.DiagnosticRelatedInformation(lsp.Location(uri, codec.range(lines, r.span)), r.message) for r in d.related
    ]
    return lsp.Diagnostic(
        range=codec.range(lines, d.span),
        message=d.message,
        severity=lsp.DiagnosticSeverity.Error if d.severity is Severity.ERROR else lsp.DiagnosticSeverity.Warning,
        code=d.code,
        code_description=lsp.CodeDescription(href=docs_link(d.code, docs_base)) if docs_base else None,
        source="quiver",
        related_information=related or None,
        tags=[lsp.DiagnosticTag.Unnecessary] if d.unnecessary else None,
    )


def run_diagnostic(span: Span, message: str, lines: LineIndex, codec: Codec) -> lsp.Diagnostic:
    """A failure of `quiver run` at its .qv location."""
    return lsp.Diagnostic(
        range=codec.range(lines, span),
        message=message,
        severity=lsp.DiagnosticSeverity.Error,
        code="run",
        source="quiver run",
    )


# ====================================================================== features

_COMPLETION_KINDS = {
    "field": lsp.CompletionItemKind.Field,
    "variable": lsp.CompletionItemKind.Variable,
    "param": lsp.CompletionItemKind.Variable,
    "dim": lsp.CompletionItemKind.Constant,
    "generic": lsp.CompletionItemKind.TypeParameter,
    "model": lsp.CompletionItemKind.Class,
    "fn": lsp.CompletionItemKind.Function,
    "extern": lsp.CompletionItemKind.Function,
    "builtin": lsp.CompletionItemKind.Function,
    "method": lsp.CompletionItemKind.Method,
    "module": lsp.CompletionItemKind.Module,
    "keyword": lsp.CompletionItemKind.Keyword,
    "type": lsp.CompletionItemKind.TypeParameter,
    "constant": lsp.CompletionItemKind.Constant,
}

_SYMBOL_KINDS = {
    "dim": lsp.SymbolKind.Constant,
    "const": lsp.SymbolKind.Constant,
    "model": lsp.SymbolKind.Class,
    "param": lsp.SymbolKind.Field,
    "buffer": lsp.SymbolKind.Property,
    "fn": lsp.SymbolKind.Function,
    "extern": lsp.SymbolKind.Function,
}


def markup(markdown: str, formats: Iterable[str] | None) -> lsp.MarkupContent:
    """Markdown, or plain text (code fences dropped) for clients that only take that."""
    formats = list(formats or [lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText])
    if lsp.MarkupKind.Markdown in formats or "markdown" in formats:
        return lsp.MarkupContent(lsp.MarkupKind.Markdown, markdown)
    plain = "\n".join(line for line in markdown.split("\n") if not line.startswith("```"))
    return lsp.MarkupContent(lsp.MarkupKind.PlainText, plain.replace("`", "").replace("**", ""))


def hover(h: ide.Hover, lines: LineIndex, codec: Codec, formats) -> lsp.Hover:
    return lsp.Hover(contents=markup(h.markdown, formats), range=codec.range(lines, h.span))


def completion_item(c: ide.Completion, doc_formats) -> lsp.CompletionItem:
    return lsp.CompletionItem(
        label=c.label,
        kind=_COMPLETION_KINDS.get(c.kind, lsp.CompletionItemKind.Text),
        detail=c.detail or None,
        documentation=markup(c.documentation, doc_formats) if c.documentation else None,
        sort_text=c.sort_text or None,
    )


def symbol_kind(kind: str) -> lsp.SymbolKind:
    return _SYMBOL_KINDS[kind]


def location(uri: str, span: Span, lines: LineIndex, codec: Codec) -> lsp.Location:
    return lsp.Location(uri, codec.range(lines, span))


def document_symbol(s: ide.DocumentSymbol, lines: LineIndex, codec: Codec) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=s.name,
        kind=_SYMBOL_KINDS[s.kind],
        range=codec.range(lines, s.span),
        selection_range=codec.range(lines, s.focus),
        detail=s.detail or None,
        children=[document_symbol(c, lines, codec) for c in s.children] or None,
    )


def symbol_information(
    s: ide.DocumentSymbol, uri: str, lines: LineIndex, codec: Codec, container: str | None = None
) -> list[lsp.SymbolInformation]:
    out = [
        lsp.SymbolInformation(
            name=s.name,
            kind=_SYMBOL_KINDS[s.kind],
            location=location(uri, s.span, lines, codec),
            container_name=container,
        )
    ]
    for c in s.children:
        out.extend(symbol_information(c, uri, lines, codec, s.name))
    return out


def signature_help(h: ide.SignatureHelp, doc_formats) -> lsp.SignatureHelp:
    sigs = []
    for s in h.signatures:
        params = [lsp.ParameterInformation(label=(a, b)) for a, b in _utf16_label_offsets(s)]
        sigs.append(
            lsp.SignatureInformation(
                label=s.label,
                documentation=markup(s.documentation, doc_formats) if s.documentation else None,
                parameters=params,
            )
        )
    return lsp.SignatureHelp(signatures=sigs, active_signature=h.active_signature, active_parameter=h.active_parameter)


def _utf16_label_offsets(s: ide.Signature) -> list[tuple[int, int]]:
    # Label offsets are always UTF-16 code units, whatever the position encoding.
    u = Codec("utf-16")
    return [(u.units(s.label[:a]), u.units(s.label[:b])) for a, b in s.parameters]


def inlay_hint(h: ide.InlayHint, lines: LineIndex, codec: Codec) -> lsp.InlayHint:
    return lsp.InlayHint(position=codec.position(lines, h.offset), label=h.label, kind=lsp.InlayHintKind.Type)


def semantic_tokens(tokens: list[ide.SemanticToken], lines: LineIndex, codec: Codec) -> lsp.SemanticTokens:
    """The relative five-integer encoding of the protocol, with type and
    modifier indices into the checker's legend (`ide.TOKEN_TYPES`,
    `ide.TOKEN_MODIFIERS`, which capabilities.py announces). Tokens never span
    lines (they are names). The tokens come in document order, so lines are
    found by walking forward rather than searched for each token."""
    data: list[int] = []
    type_index = {t: i for i, t in enumerate(ide.TOKEN_TYPES)}
    mod_bits: dict[tuple[str, ...], int] = {}
    starts = lines.line_starts
    text = lines.text
    n_lines = len(starts)
    line = 0
    prev_line = prev_char = 0
    line_text = ""
    ascii_line = True
    line_start = 0
    next_start = starts[1] if n_lines > 1 else len(text) + 1
    for t in sorted(tokens, key=lambda t: t.span.start):
        kind = type_index.get(t.type)
        if kind is None:
            continue
        offset = t.span.start
        if offset >= next_start or line == 0 and not line_text:
            while line + 1 < n_lines and starts[line + 1] <= offset:
                line += 1
            line_start = starts[line]
            next_start = starts[line + 1] if line + 1 < n_lines else len(text) + 1
            line_text = text[line_start:next_start]
            ascii_line = line_text.isascii()
        if ascii_line:
            char = offset - line_start
            length = t.span.end - t.span.start
        else:
            char = codec.units(text[line_start:offset])
            length = codec.units(text[offset : t.span.end])
        mods = mod_bits.get(t.modifiers)
        if mods is None:
            mods = 0
            for m in t.modifiers:
                if m in ide.TOKEN_MODIFIERS:
                    mods |= 1 << ide.TOKEN_MODIFIERS.index(m)
            mod_bits[t.modifiers] = mods
        delta_line = line - prev_line
        data.extend((delta_line, char - prev_char if delta_line == 0 else char, length, kind, mods))
        prev_line, prev_char = line, char
    return lsp.SemanticTokens(data=data)


def code_lens(lens: ide.CodeLens, uri: str, lines: LineIndex, codec: Codec) -> lsp.CodeLens:
    command = lsp.Command(title=lens.title, command=lens.command, arguments=[uri, *lens.arguments])
    return lsp.CodeLens(range=codec.range(lines, lens.span), command=command)


def text_edits(edits: Iterable[TextEdit], lines: LineIndex, codec: Codec) -> list[lsp.TextEdit]:
    return [lsp.TextEdit(codec.range(lines, e.span), e.new_text) for e in edits]


def quick_fix(a: ide.CodeAction, uri: str, lines: LineIndex, codec: Codec, docs_base: str | None) -> lsp.CodeAction:
    diags = [diagnostic(a.diagnostic, lines, codec, uri, docs_base)] if a.diagnostic is not None else None
    return lsp.CodeAction(
        title=a.title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=diags,
        edit=lsp.WorkspaceEdit(changes={uri: text_edits(a.edits, lines, codec)}),
        is_preferred=a.preferred or None,
    )


def run_action(uri: str, kind: str) -> lsp.CodeAction:
    return lsp.CodeAction(
        title="Run main (quiver run)",
        kind=kind,
        command=lsp.Command(title="Run main", command="quiver.runFile", arguments=[uri]),
    )
