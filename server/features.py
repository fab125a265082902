"""The language-feature handlers, one per LSP request: hover, completion,
signature help, navigation and rename, symbols, highlights, inlay hints,
semantic tokens, code lenses and actions, formatting. Each hands the server
a function that asks quiver.checker.ide one question and converts the answer."""

from __future__ import annotations

from lsprotocol import types as lsp

from quiver.checker import formatter, ide
from quiver.checker.analysis import Analysis
from quiver.checker.ast import Span
from quiver.checker.ide import workspace_nav as nav
from quiver.checker.source import LineIndex

from . import capabilities, convert
from .protocol import request_failed
from .quiver_server import QuiverServer
from .registry import feature, request

# ====================================================================== language features


@feature(lsp.TEXT_DOCUMENT_HOVER)
@request
async def text_document_hover(ls: QuiverServer, params: lsp.HoverParams):
    formats = ls.markdown_formats

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        h = ide.hover(analysis, offset)
        return convert.hover(h, lines, ls.codec, formats) if h is not None else None

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_COMPLETION)
@request
async def text_document_completion(ls: QuiverServer, params: lsp.CompletionParams):
    formats = ls.doc_formats

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        items = [convert.completion_item(c, formats) for c in ide.completions(analysis, offset)]
        return lsp.CompletionList(is_incomplete=False, items=items)

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP)
@request
async def text_document_signature_help(ls: QuiverServer, params: lsp.SignatureHelpParams):
    formats = ls.doc_formats

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        h = ide.signature_help(analysis, offset)
        return convert.signature_help(h, formats) if h is not None else None

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_DEFINITION)
@request
async def text_document_definition(ls: QuiverServer, params: lsp.DefinitionParams):
    uri = params.text_document.uri

    def across(path: str, offset: int):
        return [
            ls.location(t.path, t.target.focus, t.lines)
            for t in nav.definition(ls.ws, path, offset, analyses=ls.analyses())
        ] or None

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        return [convert.location(uri, t.focus, lines, ls.codec) for t in ide.definition(analysis, offset)] or None

    return await ls.query_files(uri, params.position, across, answer)


@feature(lsp.TEXT_DOCUMENT_REFERENCES)
@request
async def text_document_references(ls: QuiverServer, params: lsp.ReferenceParams):
    uri = params.text_document.uri
    include = params.context.include_declaration if params.context is not None else True
    files = ls.workspace_files()
    await ls.settle()

    def across(path: str, offset: int):
        spans = nav.references(ls.ws, path, offset, files, include, analyses=ls.analyses())
        return [ls.location(s.path, s.span, s.lines) for s in spans] or None

    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        spans = ide.references(analysis, offset, include)
        return [convert.location(uri, s, lines, ls.codec) for s in spans] or None

    return await ls.query_files(uri, params.position, across, answer)


@feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
@request
async def text_document_prepare_rename(ls: QuiverServer, params: lsp.PrepareRenameParams):
    def across(path: str, offset: int):
        get = ls.analyses()
        try:
            found = nav.prepare_rename(ls.ws, path, offset, analyses=get)
            _refuse_outside(ls, path, offset)
        except nav.RenameError as exc:
            raise request_failed(str(exc)) from None
        analysis = get(path)
        if found is None or analysis is None:
            return None
        span, text = found
        return lsp.PrepareRenamePlaceholder(range=ls.codec.range(analysis.lines, span), placeholder=text)

    return await ls.query_files(params.text_document.uri, params.position, across, lambda *a: None)


@feature(lsp.TEXT_DOCUMENT_RENAME)
@request
async def text_document_rename(ls: QuiverServer, params: lsp.RenameParams):
    """A rename across every file that mentions the name (files not open
    included), as text edits by URI."""
    files = ls.workspace_files()
    await ls.settle()

    def across(path: str, offset: int):
        try:
            _refuse_outside(ls, path, offset)
            edits = nav.rename(ls.ws, path, offset, params.new_name, files, analyses=ls.analyses())
        except nav.RenameError as exc:
            raise request_failed(str(exc)) from None
        if edits is None:
            return None
        # an open document outside the workspace folders that uses the name
        outside = next((p for p in edits if not ls.editable(p)), None)
        if outside is not None:
            raise request_failed(
                f"renaming this name would also edit {outside}, outside the workspace folders: it can't be renamed here"
            )
        changes = {
            ls.uri_of(p): [
                lsp.TextEdit(range=ls.codec.range(lines, span), new_text=params.new_name) for span, lines in e
            ]
            for p, e in edits.items()
        }
        return lsp.WorkspaceEdit(changes=changes)

    return await ls.query_files(params.text_document.uri, params.position, across, lambda *a: None)


def _refuse_outside(ls: QuiverServer, path: str, offset: int) -> None:
    """RenameError for a name defined in a file outside the workspace
    folders (Quiver's library, a sibling folder): the rename would edit it."""
    found = nav.rename_definition(ls.ws, path, offset, analyses=ls.analyses())
    if found is not None and not ls.editable(found[0]):
        defining, name = found
        raise nav.RenameError(
            f"{name} is defined {ls.outside_workspace(defining)}, outside the workspace: it can't be renamed here"
        )


@feature(lsp.WORKSPACE_SYMBOL)
@request
async def workspace_symbol(ls: QuiverServer, params: lsp.WorkspaceSymbolParams):
    """The top-level dims, models and functions of every file of the workspace."""
    files = ls.workspace_files()
    await ls.settle()

    def answer():
        out = []
        for s in nav.workspace_symbols(ls.ws, files, params.query, analyses=ls.analyses()):
            loc = ls.location(s.path, s.symbol.span, s.lines)
            out.append(
                lsp.SymbolInformation(
                    name=s.symbol.name,
                    kind=convert.symbol_kind(s.symbol.kind),
                    location=loc,
                    container_name=s.container,
                )
            )
        return out

    return await ls.docs.run_query(answer)


@feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@request
async def text_document_document_highlight(ls: QuiverServer, params: lsp.DocumentHighlightParams):
    def answer(analysis: Analysis, lines: LineIndex, offset: int):
        write, read = lsp.DocumentHighlightKind.Write, lsp.DocumentHighlightKind.Read
        return [
            lsp.DocumentHighlight(range=ls.codec.range(lines, s), kind=write if is_def else read)
            for s, is_def in ide.highlights(analysis, offset)
        ] or None

    return await ls.query_at(params.text_document.uri, params.position, answer)


@feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@request
async def text_document_document_symbol(ls: QuiverServer, params: lsp.DocumentSymbolParams):
    uri = params.text_document.uri
    td = ls.client_capabilities.text_document
    ds = td.document_symbol if td is not None else None
    hierarchical = ds is not None and bool(ds.hierarchical_document_symbol_support)

    def answer(analysis: Analysis, lines: LineIndex):
        symbols = ide.document_symbols(analysis)
        if hierarchical:
            return [convert.document_symbol(s, lines, ls.codec) for s in symbols]
        return [i for s in symbols for i in convert.symbol_information(s, uri, lines, ls.codec)]

    return await ls.query(uri, answer)


@feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
@request
async def text_document_inlay_hint(ls: QuiverServer, params: lsp.InlayHintParams):
    if not ls.settings.inlay_hints:
        return None

    def answer(analysis: Analysis, lines: LineIndex):
        span = ls.codec.span(lines, params.range)
        if span is None:
            span = Span(ls.codec.offset(lines, params.range.start) or 0, len(analysis.text))
        return [convert.inlay_hint(h, lines, ls.codec) for h in ide.inlay_hints(analysis, span)]

    return await ls.query(params.text_document.uri, answer)


@feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL)
@request
async def text_document_semantic_tokens_full(ls: QuiverServer, params: lsp.SemanticTokensParams):
    def answer(analysis: Analysis, lines: LineIndex):
        return convert.semantic_tokens(ide.semantic_tokens(analysis), lines, ls.codec)

    return await ls.query(params.text_document.uri, answer)


@feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE)
@request
async def text_document_semantic_tokens_range(ls: QuiverServer, params: lsp.SemanticTokensRangeParams):
    def answer(analysis: Analysis, lines: LineIndex):
        span = ls.codec.span(lines, params.range) or Span(0, len(analysis.text))
        tokens = [t for t in ide.semantic_tokens(analysis, span) if span.start <= t.span.start < span.end]
        return convert.semantic_tokens(tokens, lines, ls.codec)

    return await ls.query(params.text_document.uri, answer)


@feature(lsp.TEXT_DOCUMENT_CODE_LENS)
@request
async def text_document_code_lens(ls: QuiverServer, params: lsp.CodeLensParams):
    uri = params.text_document.uri
    if not ls.settings.code_lens:
        return None

    def answer(analysis: Analysis, lines: LineIndex):
        return [convert.code_lens(lens, uri, lines, ls.codec) for lens in ide.code_lenses(analysis)]

    return await ls.query(uri, answer)


@feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
@request
async def text_document_code_action(ls: QuiverServer, params: lsp.CodeActionParams):
    uri = params.text_document.uri
    only = params.context.only if params.context is not None else None
    doc = ls.docs.get(uri)

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)

    def answer(analysis: Analysis, lines: LineIndex):
        span = ls.codec.span(lines, params.range)
        if span is None:
            return None
        out: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix):
            fixes = ide.code_actions(analysis, span)
            # they edit this document: none for a file outside the workspace folders (asked
            # only when there are some: code actions are requested at every move of the cursor)
            if fixes and ls.editable(doc.path if doc is not None else None):
                out += [convert.quick_fix(a, uri, lines, ls.codec, ls.docs_base) for a in fixes]
        # The checker's rule for what can be run, the same that `quiver run` applies.
        if wanted(capabilities.RUN_ACTION_KIND) and ide.runnable(analysis):
            out.append(convert.run_action(uri, capabilities.RUN_ACTION_KIND))
        return out

    return await ls.query(uri, answer)


# ====================================================================== formatting
# The layout is Quiver's one canonical layout (checker/formatter.py), whatever
# the client's FormattingOptions say (tabSize, insertSpaces): an editor and
# `quiver fmt --check` in CI must agree. It already trims trailing whitespace
# and ends the text with exactly one newline.


def _format_answer(ls: QuiverServer, rng: lsp.Range | None):
    def answer(analysis: Analysis, lines: LineIndex):
        span = None
        if rng is not None:
            span = ls.codec.span(lines, rng) or Span(ls.codec.offset(lines, rng.start) or 0, len(analysis.text))
        known = [slot.parse for slot in analysis.parsed.slots]
        return convert.text_edits(formatter.format_edits(analysis.text, span, known), lines, ls.codec)

    return answer


def _formattable(ls: QuiverServer, uri: str) -> bool:
    """No formatting edits for a file outside the workspace folders (Quiver's
    library opened from a definition): the editor would save them there."""
    doc = ls.docs.get(uri)
    return ls.editable(doc.path if doc is not None else None)


@feature(lsp.TEXT_DOCUMENT_FORMATTING)
@request
async def text_document_formatting(ls: QuiverServer, params: lsp.DocumentFormattingParams):
    if not _formattable(ls, params.text_document.uri):
        return None
    return await ls.query(params.text_document.uri, _format_answer(ls, None))


@feature(lsp.TEXT_DOCUMENT_RANGE_FORMATTING)
@request
async def text_document_range_formatting(ls: QuiverServer, params: lsp.DocumentRangeFormattingParams):
    """Formats every item the range touches, whole."""
    if not _formattable(ls, params.text_document.uri):
        return None
    return await ls.query(params.text_document.uri, _format_answer(ls, params.range))
