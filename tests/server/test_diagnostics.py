"""Diagnostics over the protocol: pushed on open and change, debounced, never
stale, empty on close, pulled on request; exact ranges in every encoding.

What the checker reports (which codes, their messages) is pinned by
tests/checker; here the expected diagnostics are the checker's own, with what
the server adds (ranges in the client's encoding, severity, source, code link,
tags, related locations) worked out independently.
"""

from __future__ import annotations

import asyncio
import random

import pytest_lsp
from lsp_support import CONFIG, ROOT, Session, init_params, position, span_range, wait_until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from quiver.checker import check_text

DOCS = (ROOT / "docs" / "diagnostics.md").as_uri()

SOURCE = """\
model M:
    param w: [2]
    param b: [2]

fn loss(m: M) -> [] NonNeg:
    return sum(relu(m.w))

fn main():
    m = M.init(seed=0)
    l, g = value_and_grad(loss, m)
    unused = 3
    print("🎉 中文", l, gg)
"""


def summary(d: lsp.Diagnostic):
    related = [(r.location.range, r.message) for r in d.related_information or ()]
    return (
        d.range,
        d.severity,
        d.code,
        d.source,
        d.message,
        d.code_description.href if d.code_description else None,
        list(d.tags or ()),
        related,
    )


def R(l1, c1, l2, c2) -> lsp.Range:
    return lsp.Range(lsp.Position(l1, c1), lsp.Position(l2, c2))


def expected(encoding: str = "utf-16"):
    """The diagnostics of SOURCE as the server must publish them."""
    w1101, w0101, e0101 = check_text(SOURCE).diagnostics

    def rng(span) -> lsp.Range:
        return span_range(SOURCE, span.start, span.end, encoding)

    (declared,) = w1101.related
    return [
        (
            rng(w1101.span),
            lsp.DiagnosticSeverity.Warning,
            "W1101",
            "quiver",
            w1101.message,
            f"{DOCS}#w1101",
            [],
            [(rng(declared.span), declared.message)],
        ),
        (
            rng(w0101.span),
            lsp.DiagnosticSeverity.Warning,
            "W0101",
            "quiver",
            w0101.message,
            f"{DOCS}#w0101",
            [lsp.DiagnosticTag.Unnecessary],
            [],
        ),
        (rng(e0101.span), lsp.DiagnosticSeverity.Error, "E0101", "quiver", e0101.message, f"{DOCS}#e0101", [], []),
    ]


async def test_published_on_open_with_code_link_tags_and_related(session: Session) -> None:
    uri = session.open(SOURCE)
    assert [summary(d) for d in await session.diagnostics(uri)] == expected(session.encoding)
    # the last one follows "🎉 中文": 🎉 is two UTF-16 code units and four bytes, 中 and 文 three bytes each
    assert expected("utf-16")[2][0] == R(11, 22, 11, 24) and expected("utf-8")[2][0] == R(11, 28, 11, 30)


async def test_code_links_point_at_existing_anchors(session: Session) -> None:
    uri = session.open(SOURCE)
    page = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for d in await session.diagnostics(uri):
        anchor = d.code_description.href.split("#", 1)[1]
        assert f'<a id="{anchor}"></a>' in page


async def test_republished_on_change_and_cleared_when_fixed(session: Session) -> None:
    uri = session.open(SOURCE)
    await session.diagnostics(uri)
    counts = []
    for old, new in [("gg)", "g)"), ("    unused = 3\n", ""), ("m.w))", "m.w + m.b))")]:
        at = session.texts[uri].index(old)
        v = session.change(uri, at, at + len(old), new)
        published = await session.diagnostics(uri, v)
        assert published_view(published) == checker_view(session.texts[uri], session.encoding)
        counts.append(len(published))
    assert counts == [2, 1, 0]  # one fixed at each step, the last publish empty


async def test_empty_list_published_on_close(session: Session) -> None:
    uri = session.open(SOURCE)
    assert await session.diagnostics(uri)
    count = len(session.client.published)
    session.close(uri)
    last = await wait_until(lambda: session.client.published[count:] and session.client.published[-1], 5, "close")
    assert last.uri == uri and list(last.diagnostics) == []


async def test_pull_diagnostics(session: Session) -> None:
    uri = session.open(SOURCE)
    report = await session.client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri))
    )
    assert report.kind == "full"
    assert [summary(d) for d in report.items] == expected(session.encoding)
    again = await session.client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri), previous_result_id=report.result_id)
    )
    assert again.kind == "unchanged" and again.result_id == report.result_id
    session.change(uri, 0, 0, "# a comment\n")
    third = await session.client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri), previous_result_id=report.result_id)
    )
    assert third.kind == "full" and third.result_id != report.result_id
    assert [d.range.start.line for d in third.items] == [10, 11, 12]


async def test_pull_of_an_unknown_document_is_empty(session: Session) -> None:
    report = await session.client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(session.uri("nowhere.qv")))
    )
    assert report.kind == "full" and list(report.items) == []


def checker_view(text: str, encoding: str):
    """What a fresh check of `text` says, in protocol ranges worked out here."""
    analysis = check_text(text)
    return [
        (lsp.Range(position(text, d.span.start, encoding), position(text, d.span.end, encoding)), d.code, d.message)
        for d in analysis.diagnostics
    ]


def published_view(ds):
    return [(d.range, d.code, d.message) for d in ds]


EDIT_TEXT = (ROOT / "examples" / "mlp.qv").read_text(encoding="utf-8")


async def test_rapid_edits_end_with_the_fresh_diagnostics_and_nothing_stale(session: Session) -> None:
    rng = random.Random(1234)
    uri = session.open(EDIT_TEXT)
    await session.diagnostics(uri)
    texts = {1: EDIT_TEXT}
    body_start = EDIT_TEXT.index("fn forward")
    for _ in range(200):
        text = session.texts[uri]
        at = rng.randrange(body_start, len(text))
        if rng.random() < 0.5 and at < len(text) - 1:
            v = session.change(uri, at, at + 1, "")
        else:
            v = session.change(uri, at, at, rng.choice("xm.(),:=+ \n1"))
        texts[v] = session.texts[uri]
    final = session.versions[uri]
    ds = await session.diagnostics(uri, final, timeout=30)
    assert published_view(ds) == checker_view(texts[final], session.encoding)
    # every publish was of the version it claims, and versions only went forward
    mine = [p for p in session.client.published if p.uri == uri]
    assert [p.version for p in mine] == sorted(p.version for p in mine)
    for p in mine:
        assert published_view(p.diagnostics) == checker_view(texts[p.version], session.encoding), p.version
    assert len(mine) < 100  # debounced: far fewer publishes than edits


@pytest_lsp.fixture(config=CONFIG)
async def slow_client(lsp_client: LanguageClient):
    # long enough that five edits 50 ms apart all fall in it, even on a busy machine
    params = init_params("visual-studio-code")
    params.initialization_options = {"diagnostics": {"debounceMs": 3000}}
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_changes_are_debounced(slow_client: LanguageClient) -> None:
    s = Session(slow_client)
    uri = s.open("fn main():\n    print(1)\n")
    await s.diagnostics(uri)  # opening publishes at once
    for _ in range(5):
        s.change(uri, len(s.texts[uri]), len(s.texts[uri]), "x\n")
        await asyncio.sleep(0.05)
    final = s.versions[uri]
    assert [p.version for p in slow_client.published if p.uri == uri] == [1]  # nothing yet: still typing
    await s.diagnostics(uri, final)
    assert [p.version for p in slow_client.published if p.uri == uri] == [1, final]


@pytest_lsp.fixture(config=CONFIG)
async def slowest_client(lsp_client: LanguageClient):
    params = init_params("visual-studio-code")
    params.initialization_options = {"diagnostics": {"debounceMs": 10000}}  # the most the setting allows
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_a_request_does_not_wait_for_the_debounce(slowest_client: LanguageClient) -> None:
    s = Session(slowest_client)
    uri = s.open("fn main():\n    total = 1\n    print(total)\n")
    await s.diagnostics(uri)
    at = s.texts[uri].index("print(total)") + len("print(")
    s.change(uri, at, at + 5, "tot")
    h = await s.hover(uri, at)
    assert h is None  # 'tot' is an unknown name: no type to show
    # The analysis the hover waited for published the diagnostics of that
    # version before the answer went out (not 10 s later, at the debounce):
    # they are here already, without waiting.
    (published,) = [p for p in slowest_client.published if p.uri == uri and p.version == s.versions[uri]]
    assert [d.code for d in published.diagnostics] == ["E0101"]


# ---------------------------------------------------------------------- position encodings


@pytest_lsp.fixture(config=CONFIG)
async def vscode(lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(init_params("visual-studio-code"))
    assert result.capabilities.position_encoding == "utf-16"
    yield
    await lsp_client.shutdown_session()


async def test_utf16_ranges_after_emoji_and_cjk(vscode: LanguageClient) -> None:
    session = Session(vscode)
    text = 'fn main():\n    s = "🎉😀中文"\n    print(s, nope)\n    print("𝔘 中", nope2)\n'
    uri = session.open(text)
    ds = await session.diagnostics(uri)
    # line 2: plain ASCII before the name; line 3: 𝔘 (two units) and 中 (one) before it
    assert [(d.range, d.code) for d in ds] == [(R(2, 13, 2, 17), "E0101"), (R(3, 18, 3, 23), "E0101")]
    assert published_view(ds) == checker_view(text, "utf-16")


async def test_edits_are_applied_in_utf16(vscode: LanguageClient) -> None:
    session = Session(vscode)
    text = 'fn main():\n    s = "🎉😀"\n    print(s, nope)\n'
    uri = session.open(text)
    await session.diagnostics(uri)
    # replace "nope" on a line after emoji, and insert after the emoji on their own line
    at = text.index("nope")
    session.change(uri, at, at + 4, "s")
    at = session.texts[uri].index('"\n')
    v = session.change(uri, at, at, "中")
    assert session.texts[uri] == 'fn main():\n    s = "🎉😀中"\n    print(s, s)\n'
    assert list(await session.diagnostics(uri, v)) == []
    h = await session.hover(uri, session.texts[uri].index("s, s)"))
    assert h.contents.value == "```quiver\n(local) s: Str\n```"


@pytest_lsp.fixture(config=CONFIG, params=["utf-8", "utf-32"])
async def encoded_client(lsp_client: LanguageClient, request):
    params = init_params("neovim")
    params.capabilities.general = lsp.GeneralClientCapabilities(position_encodings=[request.param, "utf-16"])
    result = await lsp_client.initialize_session(params)
    lsp_client.encoding = request.param
    assert result.capabilities.position_encoding == request.param
    yield
    await lsp_client.shutdown_session()


async def test_negotiated_encodings(encoded_client: LanguageClient) -> None:
    s = Session(encoded_client)
    enc = encoded_client.encoding
    text = 'fn main():\n    s = "🎉😀中文"\n    print("𝔘 中", s, nope)\n'
    uri = s.open(text)
    ds = await s.diagnostics(uri)
    start = text.index("nope")
    assert [d.range for d in ds] == [lsp.Range(position(text, start, enc), position(text, start + 4, enc))]
    expected_col = {"utf-8": 25, "utf-32": 20}[enc]
    assert ds[0].range.start.character == expected_col
    # an edit in the same encoding
    rng = lsp.Range(position(text, start, enc), position(text, start + 4, enc))
    encoded_client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text="s")],
        )
    )
    s.versions[uri] = 2
    assert list(await s.diagnostics(uri, 2)) == []
    h = await encoded_client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(uri), position(text, start, enc))
    )
    assert h.contents.value == "```quiver\n(local) s: Str\n```"
    assert h.range == lsp.Range(position(text, start, enc), position(text, start + 1, enc))


# ---------------------------------------------------------------------- modes


@pytest_lsp.fixture(config=CONFIG, params=["push", "pull"])
async def mode_client(lsp_client: LanguageClient, request):
    params = init_params("neovim", diagnostics={"debounceMs": 20, "mode": request.param})
    result = await lsp_client.initialize_session(params)
    lsp_client.mode = request.param
    lsp_client.result = result
    yield
    await lsp_client.shutdown_session()


async def test_diagnostic_modes(mode_client: LanguageClient) -> None:
    s = Session(mode_client)
    uri = s.open(SOURCE)
    report = await mode_client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri))
    )
    want = expected(mode_client.result.capabilities.position_encoding)
    assert [summary(d) for d in report.items] == want  # answered in every mode
    if mode_client.mode == "push":
        assert mode_client.result.capabilities.diagnostic_provider is None
        assert [summary(d) for d in await s.diagnostics(uri)] == want
    else:
        assert mode_client.result.capabilities.diagnostic_provider is not None
        await asyncio.sleep(0.3)
        assert [p for p in mode_client.published if p.uri == uri] == []
        s.close(uri)  # an empty list on close, still
        await wait_until(lambda: [p for p in mode_client.published if p.uri == uri], 5)


def test_both_profiles_are_exercised() -> None:
    assert client_capabilities("visual-studio-code").text_document is not None
    assert client_capabilities("neovim").text_document is not None
