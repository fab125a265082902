"""Every language feature over the protocol, against the VS Code and Neovim
client profiles: that each request reaches the checker's answer
(quiver.checker.ide) and comes back as the protocol says, with its ranges in
the client's encoding, its kinds mapped, its markup and its edits.

What the checker answers (the text of a hover, which completions, the titles
of lenses and fixes) is pinned by the checker's tests (tests/checker); these tests
compare against the checker's answer for the same text instead of repeating it.
"""

from __future__ import annotations

from pathlib import Path

from lsp_support import Session, cursors, position
from lsprotocol import types as lsp

from quiver.checker import check_text, ide
from quiver.checker.ast import Span

PROGRAM = (Path(__file__).with_name("data") / "chain.qv").read_text(encoding="utf-8")


def at(needle: str, nth: int = 0, into: int = 0, src: str = PROGRAM) -> int:
    i = -1
    for _ in range(nth + 1):
        i = src.index(needle, i + 1)
    return i + into


async def opened(session: Session, text: str = PROGRAM) -> str:
    uri = session.open(text)
    await session.diagnostics(uri)
    return uri


# ====================================================================== hover


async def test_hover_is_the_checkers_markdown_at_its_range(session: Session) -> None:
    uri = await opened(session)
    analysis = check_text(PROGRAM)
    offsets = [
        at("g.w1"),
        at("value_and_grad(loss", into=16),
        at("l, g"),
        at("x = randn"),
        at("@ m.w1"),
        at("over=C", into=5),
        at("m.steps + 1", into=3),
        at("relu"),
    ]
    for offset in offsets:
        want = ide.hover(analysis, offset)
        h = await session.hover(uri, offset)
        assert h is not None and h.contents.kind == lsp.MarkupKind.Markdown, PROGRAM[offset : offset + 10]
        assert h.contents.value == want.markdown
        assert h.range == session.range(uri, want.span.start, want.span.end)


TRAINING = (Path(__file__).parents[1] / "checker" / "training_forms" / "nested.qv").read_text(encoding="utf-8")


async def test_hover_on_optimizers_and_gradient_forms(session: Session) -> None:
    uri = await opened(session, TRAINING)
    analysis = check_text(TRAINING)
    offsets = [
        at("opt.step(m, g)", src=TRAINING),
        at("l, g = value_and_grad(head_only", into=3, src=TRAINING),
        at("ls, gs = value_and_grad(one", into=4, src=TRAINING),
        at("m.blocks[i]", into=3, src=TRAINING),
    ]
    for offset in offsets:
        want = ide.hover(analysis, offset)
        h = await session.hover(uri, offset)
        assert want is not None and h is not None and h.contents.value == want.markdown
        assert h.range == session.range(uri, want.span.start, want.span.end)
    assert "exp_avg_sq: Grad[Net]" in (await session.hover(uri, offsets[0])).contents.value


async def test_no_hover_on_keywords_or_blank_lines(session: Session) -> None:
    uri = await opened(session)
    assert await session.hover(uri, at("fn main")) is None
    assert await session.hover(uri, at("\n\nfn hidden", into=1)) is None


# ====================================================================== navigation


async def test_definition(session: Session) -> None:
    uri = await opened(session)
    result = await session.client.text_document_definition_async(
        lsp.DefinitionParams(session.doc(uri), session.pos(uri, at("g.w1", into=2)))
    )
    assert list(result) == [lsp.Location(uri, session.range(uri, at("w1: [D H]"), at("w1: [D H]") + 2))]
    nothing = await session.client.text_document_definition_async(
        lsp.DefinitionParams(session.doc(uri), session.pos(uri, at("relu")))
    )
    assert nothing is None


async def test_references(session: Session) -> None:
    uri = await opened(session)
    refs = await session.client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=session.doc(uri),
            position=session.pos(uri, at("fn loss", into=3)),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    assert list(refs) == [
        lsp.Location(uri, session.range(uri, at("loss("), at("loss(") + 4)),
        lsp.Location(uri, session.range(uri, at("loss, m"), at("loss, m") + 4)),
    ]
    refs = await session.client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=session.doc(uri),
            position=session.pos(uri, at("fn loss", into=3)),
            context=lsp.ReferenceContext(include_declaration=False),
        )
    )
    assert list(refs) == [lsp.Location(uri, session.range(uri, at("loss, m"), at("loss, m") + 4))]


async def test_document_highlight(session: Session) -> None:
    uri = await opened(session)
    hl = await session.client.text_document_document_highlight_async(
        lsp.DocumentHighlightParams(session.doc(uri), session.pos(uri, at("return l", into=7)))
    )
    assert [(h.range, h.kind) for h in hl] == [
        (session.range(uri, at("l, g"), at("l, g") + 1), lsp.DocumentHighlightKind.Write),
        (session.range(uri, at("return l", into=7), at("return l", into=8)), lsp.DocumentHighlightKind.Read),
    ]


async def test_document_symbols(session: Session) -> None:
    uri = await opened(session)
    symbols = await session.client.text_document_document_symbol_async(lsp.DocumentSymbolParams(session.doc(uri)))
    want = ide.document_symbols(check_text(PROGRAM))
    assert [(s.name, s.kind) for s in symbols] == [
        ("D", lsp.SymbolKind.Constant),
        ("H", lsp.SymbolKind.Constant),
        ("C", lsp.SymbolKind.Constant),
        ("Mlp", lsp.SymbolKind.Class),
        ("hidden", lsp.SymbolKind.Function),
        ("forward", lsp.SymbolKind.Function),
        ("loss", lsp.SymbolKind.Function),
        ("step", lsp.SymbolKind.Function),
        ("main", lsp.SymbolKind.Function),
    ]
    assert [s.detail for s in symbols] == [w.detail or None for w in want]  # an empty detail is left out
    model = symbols[3]
    assert model.range == session.range(uri, at("model Mlp"), at("buffer steps: [] i64 = 0", into=24))
    assert model.selection_range == session.range(uri, at("Mlp:"), at("Mlp:") + 3)
    assert [(c.name, c.kind, c.detail) for c in model.children] == [
        ("w1", lsp.SymbolKind.Field, "[D H]"),
        ("b1", lsp.SymbolKind.Field, "[H]"),
        ("w2", lsp.SymbolKind.Field, "[H C]"),
        ("b2", lsp.SymbolKind.Field, "[C]"),
        ("steps", lsp.SymbolKind.Property, "[] i64"),
    ]


# ====================================================================== completion


def in_step(line: str) -> tuple[str, int]:
    text, (offset,) = cursors(PROGRAM.replace("    return l\n", f"    {line}\n    return l\n", 1))
    return text, offset


async def complete(session: Session, line: str) -> tuple[list[lsp.CompletionItem], list[ide.Completion]]:
    """The server's completions at the cursor of `line`, and the checker's."""
    text, offset = in_step(line)
    uri = session.open(text)
    result = await session.client.text_document_completion_async(
        lsp.CompletionParams(
            text_document=session.doc(uri),
            position=session.pos(uri, offset),
            context=lsp.CompletionContext(
                trigger_kind=lsp.CompletionTriggerKind.TriggerCharacter, trigger_character="."
            ),
        )
    )
    assert result.is_incomplete is False
    return list(result.items), ide.completions(check_text(text), offset)


def as_sent(c: ide.Completion) -> tuple:
    """A checker completion as the server must send it: empty strings left out,
    documentation as markdown."""
    doc = lsp.MarkupContent(lsp.MarkupKind.Markdown, c.documentation) if c.documentation else None
    return c.label, c.detail or None, c.sort_text or None, doc


def sent(i: lsp.CompletionItem) -> tuple:
    return i.label, i.detail, i.sort_text, i.documentation


async def test_completion_after_a_model_and_a_gradient(session: Session) -> None:
    for line in ("z = m.$0", "z = g.$0"):
        items, want = await complete(session, line)
        assert want and [sent(i) for i in items] == [as_sent(c) for c in want]
        assert {i.kind for i in items} == {lsp.CompletionItemKind.Field}


async def test_completion_of_names(session: Session) -> None:
    items, want = await complete(session, "z = $0")
    assert [sent(i) for i in items] == [as_sent(c) for c in want]
    kinds = {i.label: i.kind for i in items}
    # the server's mapping of the checker's kinds
    assert (kinds["relu"], kinds["loss"], kinds["Mlp"]) == (
        lsp.CompletionItemKind.Function,
        lsp.CompletionItemKind.Function,
        lsp.CompletionItemKind.Class,
    )
    assert (kinds["D"], kinds["b"], kinds["g"], kinds["m"]) == (
        lsp.CompletionItemKind.Constant,
        lsp.CompletionItemKind.TypeParameter,
        lsp.CompletionItemKind.Variable,
        lsp.CompletionItemKind.Variable,
    )
    assert kinds["return"] == lsp.CompletionItemKind.Keyword


# ====================================================================== signature help


async def test_signature_help(session: Session) -> None:
    text, offset = in_step("z = value_and_grad(loss, m, x, $0")
    uri = session.open(text)
    h = await session.client.text_document_signature_help_async(
        lsp.SignatureHelpParams(session.doc(uri), session.pos(uri, offset))
    )
    want = ide.signature_help(check_text(text), offset)
    (sig,) = h.signatures
    (want_sig,) = want.signatures
    assert sig.label == want_sig.label
    assert [p.label for p in sig.parameters] == list(want_sig.parameters)  # ASCII: code points are UTF-16 units
    assert (h.active_signature, h.active_parameter) == (want.active_signature, want.active_parameter)
    assert sig.documentation == lsp.MarkupContent(lsp.MarkupKind.Markdown, want_sig.documentation)


async def test_signature_help_label_offsets_are_utf16(session: Session) -> None:
    text = "model Né:\n    param w: [2]\n\nfn f(m: Né, x: [2]) -> [2]:\n    return x\n\nfn main():\n    f("
    uri = session.open(text)
    h = await session.client.text_document_signature_help_async(
        lsp.SignatureHelpParams(session.doc(uri), session.pos(uri, len(text)))
    )
    (sig,) = h.signatures
    assert sig.label == "f(m: Né, x: [2]) -> [2]"
    assert [p.label for p in sig.parameters] == [(2, 7), (9, 15)]


# ====================================================================== hints, tokens, lenses


async def test_inlay_hints(session: Session) -> None:
    uri = await opened(session)
    end = len(PROGRAM)
    hints = await session.client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=session.doc(uri), range=session.range(uri, 0, end))
    )
    want = ide.inlay_hints(check_text(PROGRAM), Span(0, end))
    assert want and [(h.position, h.label, h.kind) for h in hints] == [
        (session.pos(uri, w.offset), w.label, lsp.InlayHintKind.Type) for w in want
    ]
    # a range gets the hints inside it
    start = at("fn main")
    hints = await session.client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=session.doc(uri), range=session.range(uri, start, end))
    )
    assert [h.label for h in hints] == [w.label for w in ide.inlay_hints(check_text(PROGRAM), Span(start, end))]
    assert len(hints) < len(want)


def decode(data: list[int], text: str, legend_types, legend_mods, encoding: str):
    """Semantic tokens back to (text, type, modifiers), using this test's own
    line splitting and unit counting."""
    lines = text.split("\n")
    out = []
    line = char = 0
    for i in range(0, len(data), 5):
        dl, dc, length, t, mods = data[i : i + 5]
        line += dl
        char = char + dc if dl == 0 else dc
        units = lines[line].encode("utf-16-le" if encoding == "utf-16" else "utf-8")
        width = 2 if encoding == "utf-16" else 1
        word = units[char * width : (char + length) * width].decode("utf-16-le" if encoding == "utf-16" else "utf-8")
        out.append((word, legend_types[t], tuple(m for j, m in enumerate(legend_mods) if mods >> j & 1)))
    return out


async def test_semantic_tokens(session: Session) -> None:
    # non-ASCII names (Mé) and tokens on many lines: the relative encoding in the client's units
    text = (
        "dim D = 4\n\nmodel Mé:\n    param w: [D]\n    buffer n: [] i64\n\n"
        "fn f(mut m: Mé, x: [b D]) -> [b D]:\n    y = x * m.w\n    return y\n"
    )
    uri = session.open(text)
    await session.diagnostics(uri)
    legend = session.client.initialize_result.capabilities.semantic_tokens_provider.legend
    want = [
        (text[t.span.start : t.span.end], t.type, frozenset(t.modifiers)) for t in ide.semantic_tokens(check_text(text))
    ]
    result = await session.client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(session.doc(uri)))
    got = decode(result.data, text, legend.token_types, legend.token_modifiers, session.encoding)
    assert [(w, t, frozenset(m)) for w, t, m in got] == want
    assert ("Mé", "class", ("declaration",)) in got and ("n", "property", ("declaration", "buffer")) in got
    start = text.index("    y =")
    ranged = await session.client.text_document_semantic_tokens_range_async(
        lsp.SemanticTokensRangeParams(text_document=session.doc(uri), range=session.range(uri, start, len(text)))
    )
    assert [
        w
        for w, _, _ in decode(
            ranged.data, "\n" * 7 + text.split("\n", 7)[7], legend.token_types, legend.token_modifiers, session.encoding
        )
    ] == ["y", "x", "m", "w", "y"]


async def test_code_lenses(session: Session) -> None:
    uri = await opened(session)
    lenses = await session.client.text_document_code_lens_async(lsp.CodeLensParams(session.doc(uri)))
    analysis = check_text(PROGRAM)
    want = ide.code_lenses(analysis)
    # each lens at its range, its command given the document first
    got = [(lens.range, lens.command.title, lens.command.command, list(lens.command.arguments)) for lens in lenses]
    assert got == [
        (session.range(uri, w.span.start, w.span.end), w.title, w.command, [uri, *w.arguments]) for w in want
    ]
    assert [lens.command.command for lens in lenses].count("quiver.runFile") == 1
    # the lens command answers with the checker's report, and shows it
    text = await session.command("quiver.showParamReads", uri, "forward")
    assert text == ide.param_reads_report(analysis, "forward")
    assert session.client.messages[-1].message == text
    assert session.client.messages[-1].type == lsp.MessageType.Info


# ====================================================================== code actions


async def actions(session: Session, uri: str, start: int, end: int, only=None) -> list[lsp.CodeAction]:
    diags = list(session.client.diagnostics.get(uri, []))
    result = await session.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=session.doc(uri),
            range=session.range(uri, start, end),
            context=lsp.CodeActionContext(diagnostics=diags, only=only),
        )
    )
    return list(result or [])


async def test_quick_fix_for_e0411(session: Session) -> None:
    text = PROGRAM.replace("l, g = value_and_grad", "l = value_and_grad")
    uri = session.open(text)
    ds = await session.diagnostics(uri)
    e0411 = next(d for d in ds if d.code == "E0411")
    at_l = text.index("l = value_and_grad")
    found = await actions(session, uri, at_l, at_l + 1, only=[lsp.CodeActionKind.QuickFix])
    (fix,) = [a for a in found if a.diagnostics and a.diagnostics[0].code == "E0411"]
    analysis = check_text(text)
    (want,) = [a for a in ide.code_actions(analysis, Span(at_l, at_l + 1)) if a.diagnostic.code == "E0411"]
    assert fix.title == want.title
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
    assert list(fix.diagnostics) == [e0411]  # the same diagnostic as published
    assert fix.edit.changes == {
        uri: tuple(lsp.TextEdit(session.range(uri, e.span.start, e.span.end), e.new_text) for e in want.edits)
    }


async def test_quick_fix_did_you_mean(session: Session) -> None:
    text = PROGRAM.replace("lr * g.w2", "lr * g.ww2")
    uri = session.open(text)
    await session.diagnostics(uri)
    bad = text.index("ww2")
    (fix,) = await actions(session, uri, bad, bad, only=[lsp.CodeActionKind.QuickFix])
    (want,) = ide.code_actions(check_text(text), Span(bad, bad))
    assert fix.title == want.title
    assert fix.edit.changes == {
        uri: tuple(lsp.TextEdit(session.range(uri, e.span.start, e.span.end), e.new_text) for e in want.edits)
    }


async def test_run_action_is_offered_for_a_file_with_main(session: Session) -> None:
    uri = await opened(session)

    async def raw_actions(uri: str, only=None):
        params = {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], **({"only": only} if only else {})},
        }
        return await session.raw("textDocument/codeAction", params)

    assert await raw_actions(uri) == [
        {
            "title": "Run main (quiver run)",
            "kind": "source.run",
            "command": {"title": "Run main", "command": "quiver.runFile", "arguments": [uri]},
        }
    ]
    assert len(await raw_actions(uri, ["source"])) == 1
    assert await raw_actions(uri, ["quickfix"]) == []
    no_main = session.open("dim D = 3\n")
    await session.diagnostics(no_main)
    assert await raw_actions(no_main) == []


async def test_run_is_offered_by_the_checkers_rule(session: Session) -> None:
    """The Run action and lens follow ide.runnable, the rule `quiver run` applies:
    a `main` of command-line parameters (Int, Float, Bool, Str) can be run, one
    that takes a tensor checks clean (W0403) but cannot be."""
    texts = (
        "fn main():\n    print(1)\n",
        "fn main(n: Int = 2):\n    print(n)\n",
        "fn main(x: [2]):\n    print(x)\n",
        'extern fn main() from "m:main"\n',
    )
    for text in texts:
        uri = session.open(text)
        assert [d for d in await session.diagnostics(uri) if d.severity == lsp.DiagnosticSeverity.Error] == []
        runnable = ide.runnable(check_text(text))
        result = await session.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=session.doc(uri),
                range=session.range(uri, 0, 0),
                context=lsp.CodeActionContext(diagnostics=[], only=["source.run"]),
            )
        )
        assert len(result or []) == (1 if runnable else 0), text
        lenses = await session.client.text_document_code_lens_async(lsp.CodeLensParams(session.doc(uri)))
        assert [lens.command.command for lens in lenses or []].count("quiver.runFile") == (1 if runnable else 0), text
    assert ide.runnable(check_text("fn main():\n    print(1)\n"))
    assert ide.runnable(check_text("fn main(n: Int = 2):\n    print(n)\n"))
    assert not ide.runnable(check_text("fn main(x: [2]):\n    print(x)\n"))


async def test_position_encoding_is_honoured_by_features(session: Session) -> None:
    text = 'fn main():\n    s = "🎉 中"\n    t = s\n    print(t)\n'
    uri = session.open(text)
    await session.diagnostics(uri)
    h = await session.hover(uri, text.index("t = s") + 4)
    assert h.range == lsp.Range(
        position(text, text.index("t = s") + 4, session.encoding),
        position(text, text.index("t = s") + 5, session.encoding),
    )
