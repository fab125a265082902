"""textDocument/formatting and rangeFormatting over the protocol, against the
VS Code and Neovim client profiles (UTF-16 and UTF-8 positions). The layout
itself is pinned by tests/checker/test_formatter.py; these tests check that
the server's edits are the formatter's, in the client's encoding, and that
applying them gives the formatted text."""

from __future__ import annotations

from lsp_support import Session, span_range
from lsprotocol import types as lsp

from quiver.checker.formatter import format_edits, format_text

MESSY = (
    "dim  D=4  # «inputs» 🎉\n"
    'fn f(x:[b D])->[b D]:\n  s = "é🎉"  # ünïcode\n  return x*2.0\n'
    "fn  broken(:\n  return  1\n"
    "fn g(x:[b D])->[b D]:\n  return relu( x )\n"
)
OPTIONS = lsp.FormattingOptions(tab_size=2, insert_spaces=False)  # Quiver's layout is its own


def offset(text: str, pos: lsp.Position, encoding: str) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    start = starts[pos.line]
    line = text[start:]
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character or ch == "\n":
            return start + i
        units += len(ch.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(ch.encode(encoding))
    return start + len(line)


def apply(text: str, edits: list[lsp.TextEdit], encoding: str) -> str:
    spans = [(offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text) for e in edits]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


async def formatting(session: Session, uri: str) -> list[lsp.TextEdit]:
    result = await session.client.text_document_formatting_async(
        lsp.DocumentFormattingParams(session.doc(uri), OPTIONS)
    )
    return list(result or [])


async def test_formatting_edits_are_the_formatters_in_the_clients_encoding(session: Session) -> None:
    uri = session.open(MESSY)
    edits = await formatting(session, uri)
    want = [
        lsp.TextEdit(span_range(MESSY, e.span.start, e.span.end, session.encoding), e.new_text)
        for e in format_edits(MESSY)
    ]
    assert edits == want and len(edits) == 2  # the broken item is left alone, between the two edits
    formatted = apply(MESSY, edits, session.encoding)
    assert formatted == format_text(MESSY).text
    assert "fn  broken(:\n  return  1\n" in formatted
    assert 's = "é🎉"  # ünïcode' in formatted


async def test_a_formatted_document_needs_no_edit_and_the_latest_version_is_formatted(session: Session) -> None:
    uri = session.open(format_text(MESSY).text)
    assert await formatting(session, uri) == []
    text = session.texts[uri]
    at = text.index("relu(x)")
    session.change(uri, at, at + len("relu(x)"), "relu(  x  )")
    edits = await formatting(session, uri)
    after = session.texts[uri]
    line = after.index("    return relu(  x  )")
    assert edits == [
        lsp.TextEdit(span_range(after, line, after.index("\n", line) + 1, session.encoding), "    return relu(x)\n")
    ]


async def test_range_formatting_formats_the_items_the_range_touches(session: Session) -> None:
    uri = session.open(MESSY)
    inside_g = MESSY.index("relu")
    result = await session.client.text_document_range_formatting_async(
        lsp.DocumentRangeFormattingParams(session.doc(uri), session.range(uri, inside_g, inside_g + 2), OPTIONS)
    )
    g = MESSY.index("fn g")
    assert list(result or []) == [
        lsp.TextEdit(
            span_range(MESSY, g, len(MESSY), session.encoding),
            "fn g(x: [b D]) -> [b D]:\n    return relu(x)\n",
        )
    ]
    # a range past the end of the text reaches to its end
    result = await session.client.text_document_range_formatting_async(
        lsp.DocumentRangeFormattingParams(
            session.doc(uri),
            lsp.Range(session.pos(uri, g), lsp.Position(99, 0)),
            OPTIONS,
        )
    )
    assert len(result or []) == 1


async def test_formatting_an_unknown_document_is_null(session: Session) -> None:
    result = await session.client.text_document_formatting_async(
        lsp.DocumentFormattingParams(lsp.TextDocumentIdentifier(session.uri("never-opened.qv")), OPTIONS)
    )
    assert result is None


async def test_formatting_is_advertised(session: Session) -> None:
    caps = session.client.initialize_result.capabilities
    assert caps.document_formatting_provider is True
    assert caps.document_range_formatting_provider is True
