"""Every language feature over the protocol, against the VS Code and Neovim
client profiles: exact markdown, labels, ranges and edits."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from lsp_support import Session, cursors, position

PROGRAM = (Path(__file__).with_name("data") / "chain.qv").read_text(encoding="utf-8")


def at(needle: str, nth: int = 0, into: int = 0, src: str = PROGRAM) -> int:
    i = -1
    for _ in range(nth + 1):
        i = src.index(needle, i + 1)
    return i + into


def code(text: str) -> str:
    return f"```quiver\n{text}\n```"


async def opened(session: Session, text: str = PROGRAM) -> str:
    uri = session.open(text)
    await session.diagnostics(uri)
    return uri


# ====================================================================== hover


async def test_hover_on_a_gradient_lists_its_fields(session: Session) -> None:
    uri = await opened(session)
    h = await session.hover(uri, at("g.w1"))
    assert h.contents.kind == lsp.MarkupKind.Markdown
    assert h.contents.value == (
        code("(local) g: Grad[Mlp]")
        + "\n\nFields (one per param of `Mlp`; buffers have no gradient):\n\n"
        + code("w1: [D H]\nb1: [H]\nw2: [H C]\nb2: [C]"))
    assert h.range == session.range(uri, at("g.w1"), at("g.w1") + 1)


async def test_hover_on_a_function_gives_its_reads_with_chains(session: Session) -> None:
    uri = await opened(session)
    h = await session.hover(uri, at("value_and_grad(loss", into=16))
    assert h.contents.value == (
        code("fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg")
        + "\n\n**Param reads** of `m: Mlp`: reads w1, b1, w2 — never b2"
        + "\n- `w1`: `forward(...)` in `loss` (line 19) → `hidden(...)` in `forward` (line 16) → `m.w1` in `hidden` (line 13)"
        + "\n- `b1`: `forward(...)` in `loss` (line 19) → `hidden(...)` in `forward` (line 16) → `m.b1` in `hidden` (line 13)"
        + "\n- `w2`: `forward(...)` in `loss` (line 19) → `m.w2` in `forward` (line 16)")
    assert h.range == session.range(uri, at("loss, m"), at("loss, m") + 4)


async def test_hover_on_names_and_expressions(session: Session) -> None:
    uri = await opened(session)
    cases = [
        (at("h = ", src=PROGRAM) if "h = " in PROGRAM else at("l, g"), code("(local) l: [] NonNeg")),
        (at("x = randn"), code("(local) x: [16 D]")),
        (at("@ m.w1"), code("[b H]")),
        (at("over=C", into=5), code("dim C = 3")),
        (at("m.steps + 1", into=3), code("buffer Mlp.steps: [] i64")),
    ]
    for offset, expected in cases:
        h = await session.hover(uri, offset)
        assert h is not None and h.contents.value == expected, PROGRAM[offset:offset + 10]


async def test_no_hover_on_keywords_or_blank_lines(session: Session) -> None:
    uri = await opened(session)
    assert await session.hover(uri, at("fn main")) is None
    assert await session.hover(uri, at("\n\nfn hidden", into=1)) is None


# ====================================================================== navigation


async def test_definition(session: Session) -> None:
    uri = await opened(session)
    result = await session.client.text_document_definition_async(lsp.DefinitionParams(
        session.doc(uri), session.pos(uri, at("g.w1", into=2))))
    assert list(result) == [lsp.Location(uri, session.range(uri, at("w1: [D H]"), at("w1: [D H]") + 2))]
    nothing = await session.client.text_document_definition_async(lsp.DefinitionParams(
        session.doc(uri), session.pos(uri, at("relu"))))
    assert nothing is None


async def test_references(session: Session) -> None:
    uri = await opened(session)
    refs = await session.client.text_document_references_async(lsp.ReferenceParams(
        text_document=session.doc(uri), position=session.pos(uri, at("fn loss", into=3)),
        context=lsp.ReferenceContext(include_declaration=True)))
    assert list(refs) == [lsp.Location(uri, session.range(uri, at("loss("), at("loss(") + 4)),
                          lsp.Location(uri, session.range(uri, at("loss, m"), at("loss, m") + 4))]
    refs = await session.client.text_document_references_async(lsp.ReferenceParams(
        text_document=session.doc(uri), position=session.pos(uri, at("fn loss", into=3)),
        context=lsp.ReferenceContext(include_declaration=False)))
    assert list(refs) == [lsp.Location(uri, session.range(uri, at("loss, m"), at("loss, m") + 4))]


async def test_document_highlight(session: Session) -> None:
    uri = await opened(session)
    hl = await session.client.text_document_document_highlight_async(lsp.DocumentHighlightParams(
        session.doc(uri), session.pos(uri, at("return l", into=7))))
    assert [(h.range, h.kind) for h in hl] == [
        (session.range(uri, at("l, g"), at("l, g") + 1), lsp.DocumentHighlightKind.Write),
        (session.range(uri, at("return l", into=7), at("return l", into=8)), lsp.DocumentHighlightKind.Read),
    ]


async def test_document_symbols(session: Session) -> None:
    uri = await opened(session)
    symbols = await session.client.text_document_document_symbol_async(lsp.DocumentSymbolParams(session.doc(uri)))
    assert [(s.name, s.kind, s.detail) for s in symbols] == [
        ("D", lsp.SymbolKind.Constant, "= 4"), ("H", lsp.SymbolKind.Constant, "= 8"),
        ("C", lsp.SymbolKind.Constant, "= 3"), ("Mlp", lsp.SymbolKind.Class, None),
        ("hidden", lsp.SymbolKind.Function, "fn hidden(m: Mlp, x: [b D]) -> [b H]"),
        ("forward", lsp.SymbolKind.Function, "fn forward(m: Mlp, x: [b D]) -> [b C]"),
        ("loss", lsp.SymbolKind.Function, "fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg"),
        ("step", lsp.SymbolKind.Function, "fn step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg"),
        ("main", lsp.SymbolKind.Function, "fn main()"),
    ]
    model = symbols[3]
    assert model.range == session.range(uri, at("model Mlp"), at("buffer steps: [] i64 = 0", into=24))
    assert model.selection_range == session.range(uri, at("Mlp:"), at("Mlp:") + 3)
    assert [(c.name, c.kind, c.detail) for c in model.children] == [
        ("w1", lsp.SymbolKind.Field, "[D H]"), ("b1", lsp.SymbolKind.Field, "[H]"), ("w2", lsp.SymbolKind.Field, "[H C]"),
        ("b2", lsp.SymbolKind.Field, "[C]"), ("steps", lsp.SymbolKind.Property, "[] i64")]


# ====================================================================== completion


def in_step(line: str) -> tuple[str, int]:
    text, (offset,) = cursors(PROGRAM.replace("    return l\n", f"    {line}\n    return l\n", 1))
    return text, offset


async def complete(session: Session, line: str) -> list[lsp.CompletionItem]:
    text, offset = in_step(line)
    uri = session.open(text)
    result = await session.client.text_document_completion_async(lsp.CompletionParams(
        text_document=session.doc(uri), position=session.pos(uri, offset),
        context=lsp.CompletionContext(trigger_kind=lsp.CompletionTriggerKind.TriggerCharacter, trigger_character=".")))
    return list(result.items)


async def test_completion_after_a_model_and_a_gradient(session: Session) -> None:
    items = await complete(session, "z = m.$0")
    assert [(i.label, i.kind, i.detail) for i in items] == [
        ("w1", lsp.CompletionItemKind.Field, "param w1: [D H]"), ("b1", lsp.CompletionItemKind.Field, "param b1: [H]"),
        ("w2", lsp.CompletionItemKind.Field, "param w2: [H C]"), ("b2", lsp.CompletionItemKind.Field, "param b2: [C]"),
        ("steps", lsp.CompletionItemKind.Field, "buffer steps: [] i64")]
    items = await complete(session, "z = g.$0")
    assert [i.label for i in items] == ["w1", "b1", "w2", "b2"]
    assert items[0].documentation.value == "Gradient of param `w1` of `Mlp`."


async def test_completion_of_names(session: Session) -> None:
    items = {i.label: i for i in await complete(session, "z = $0")}
    assert items["relu"].kind == lsp.CompletionItemKind.Function
    assert items["relu"].detail == "relu(x: [..] Float) -> [..] NonNeg"
    assert items["relu"].documentation.value == "max(x, 0), elementwise."
    assert (items["D"].kind, items["D"].detail) == (lsp.CompletionItemKind.Constant, "dim D = 4")
    assert (items["b"].kind, items["b"].detail) == (lsp.CompletionItemKind.TypeParameter, "generic dim of step")
    assert (items["g"].kind, items["g"].detail) == (lsp.CompletionItemKind.Variable, "g: Grad[Mlp]")
    assert (items["Mlp"].kind, items["loss"].kind) == (lsp.CompletionItemKind.Class, lsp.CompletionItemKind.Function)
    assert items["return"].kind == lsp.CompletionItemKind.Keyword
    assert sorted(items, key=lambda k: items[k].sort_text)[:6] == ["g", "l", "lr", "m", "x", "y"]


async def test_completion_of_dims_after_over(session: Session) -> None:
    items = await complete(session, "z = sum(x, over=$0")
    assert [(i.label, i.detail) for i in items] == [
        ("b", "generic dim of step"), ("D", "dim D = 4"), ("H", "dim H = 8"), ("C", "dim C = 3")]


# ====================================================================== signature help


async def test_signature_help(session: Session) -> None:
    text, offset = in_step("z = value_and_grad(loss, m, x, $0")
    uri = session.open(text)
    h = await session.client.text_document_signature_help_async(lsp.SignatureHelpParams(
        session.doc(uri), session.pos(uri, offset)))
    (sig,) = h.signatures
    assert sig.label == "value_and_grad(loss, m: Mlp, x: [b D], y: [b] Index[C]) -> ([] NonNeg, Grad[Mlp])"
    assert [sig.label[a:b] for a, b in (p.label for p in sig.parameters)] == ["loss", "m: Mlp", "x: [b D]", "y: [b] Index[C]"]
    assert h.active_parameter == 3 and h.active_signature == 0
    assert sig.documentation.value == ("Calls `loss` and returns its value and its gradient with respect to the params "
                                       "of `m: Mlp`.")


async def test_signature_help_label_offsets_are_utf16(session: Session) -> None:
    text = "model Né:\n    param w: [2]\n\nfn f(m: Né, x: [2]) -> [2]:\n    return x\n\nfn main():\n    f("
    uri = session.open(text)
    h = await session.client.text_document_signature_help_async(lsp.SignatureHelpParams(
        session.doc(uri), session.pos(uri, len(text))))
    (sig,) = h.signatures
    assert sig.label == "f(m: Né, x: [2]) -> [2]"
    assert [p.label for p in sig.parameters] == [(2, 7), (9, 15)]


# ====================================================================== hints, tokens, lenses


async def test_inlay_hints(session: Session) -> None:
    uri = await opened(session)
    end = len(PROGRAM)
    hints = await session.client.text_document_inlay_hint_async(lsp.InlayHintParams(
        text_document=session.doc(uri), range=session.range(uri, 0, end)))
    assert [(h.position, h.label, h.kind) for h in hints] == [
        (session.pos(uri, at("l, g") + 1), ": [] NonNeg", lsp.InlayHintKind.Type),
        (session.pos(uri, at("g = value") + 1), ": Grad[Mlp]", lsp.InlayHintKind.Type),
        (session.pos(uri, at("m = Mlp") + 1), ": Mlp", lsp.InlayHintKind.Type),
        (session.pos(uri, at("x = randn") + 1), ": [16 D]", lsp.InlayHintKind.Type),
        (session.pos(uri, at("y = randint") + 1), ": [16] Index[C]", lsp.InlayHintKind.Type),
        (session.pos(uri, at("i in") + 1), ": Int", lsp.InlayHintKind.Type),
        (session.pos(uri, at("l = step") + 1), ": [] NonNeg", lsp.InlayHintKind.Type),
    ]


def decode(data: list[int], text: str, legend_types, legend_mods, encoding: str):
    """Semantic tokens back to (text, type, modifiers), using this test's own
    line splitting and unit counting."""
    lines = text.split("\n")
    out = []
    line = char = 0
    for i in range(0, len(data), 5):
        dl, dc, length, t, mods = data[i:i + 5]
        line += dl
        char = char + dc if dl == 0 else dc
        units = lines[line].encode("utf-16-le" if encoding == "utf-16" else "utf-8")
        width = 2 if encoding == "utf-16" else 1
        word = units[char * width:(char + length) * width].decode("utf-16-le" if encoding == "utf-16" else "utf-8")
        out.append((word, legend_types[t], tuple(m for j, m in enumerate(legend_mods) if mods >> j & 1)))
    return out


async def test_semantic_tokens(session: Session) -> None:
    text = "dim D = 4\n\nmodel Mé:\n    param w: [D]\n    buffer n: [] i64\n\nfn f(mut m: Mé, x: [b D]) -> [b D]:\n    y = x * m.w\n    return y\n"
    uri = session.open(text)
    await session.diagnostics(uri)
    result = await session.client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(session.doc(uri)))
    from quiver.server.capabilities import TOKEN_MODIFIERS, TOKEN_TYPES

    assert decode(result.data, text, TOKEN_TYPES, TOKEN_MODIFIERS, session.encoding) == [
        ("D", "typeParameter", ("declaration", "readonly")),
        ("Mé", "class", ("declaration",)),
        ("w", "property", ("declaration",)),
        ("D", "typeParameter", ("readonly",)),
        ("n", "property", ("declaration", "buffer")),
        ("f", "function", ("declaration",)),
        ("m", "parameter", ("declaration", "mutable")),
        ("Mé", "class", ()),
        ("x", "parameter", ("declaration",)),
        ("b", "typeParameter", ("declaration",)),
        ("D", "typeParameter", ("readonly",)),
        ("b", "typeParameter", ()),
        ("D", "typeParameter", ("readonly",)),
        ("y", "variable", ("declaration",)),
        ("x", "parameter", ()),
        ("m", "parameter", ("mutable",)),
        ("w", "property", ()),
        ("y", "variable", ()),
    ]
    ranged = await session.client.text_document_semantic_tokens_range_async(lsp.SemanticTokensRangeParams(
        text_document=session.doc(uri), range=session.range(uri, text.index("    y ="), len(text))))
    assert [w for w, _, _ in decode(ranged.data, "\n" * 7 + text.split("\n", 7)[7], TOKEN_TYPES, TOKEN_MODIFIERS,
                                    session.encoding)] == ["y", "x", "m", "w", "y"]


async def test_code_lenses(session: Session) -> None:
    uri = await opened(session)
    lenses = await session.client.text_document_code_lens_async(lsp.CodeLensParams(session.doc(uri)))
    got = [(session.texts[uri][:1] and lens.range.start.line, lens.command.title, lens.command.command,
            list(lens.command.arguments)) for lens in lenses]
    assert got == [
        (11, "reads 2 of 4 params of Mlp — never w2, b2", "quiver.showParamReads", [uri, "hidden"]),
        (14, "reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", [uri, "forward"]),
        (17, "reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", [uri, "loss"]),
        (20, "reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", [uri, "step"]),
        (21, "loss reads 3 of 4 params of Mlp — never b2", "quiver.showParamReads", [uri, "loss"]),
        (28, "▶ Run", "quiver.runFile", [uri]),
    ]
    # the lens command works, and shows the chains
    text = await session.command("quiver.showParamReads", uri, "forward")
    assert text == ("forward(m: Mlp) reads w1, b1, w2 — never b2\n"
                    "  w1: hidden(...) in forward (line 16) -> m.w1 in hidden (line 13)\n"
                    "  b1: hidden(...) in forward (line 16) -> m.b1 in hidden (line 13)\n"
                    "  w2: m.w2 in forward (line 16)")
    assert session.client.messages[-1].message == text


# ====================================================================== code actions


async def actions(session: Session, uri: str, start: int, end: int, only=None) -> list[lsp.CodeAction]:
    diags = list(session.client.diagnostics.get(uri, []))
    result = await session.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=session.doc(uri), range=session.range(uri, start, end),
        context=lsp.CodeActionContext(diagnostics=diags, only=only)))
    return list(result or [])


async def test_quick_fix_for_e0411(session: Session) -> None:
    text = PROGRAM.replace("l, g = value_and_grad", "l = value_and_grad")
    uri = session.open(text)
    ds = await session.diagnostics(uri)
    e0411 = next(d for d in ds if d.code == "E0411")
    at_l = text.index("l = value_and_grad")
    found = await actions(session, uri, at_l, at_l + 1, only=[lsp.CodeActionKind.QuickFix])
    (fix,) = [a for a in found if a.diagnostics and a.diagnostics[0].code == "E0411"]
    assert fix.title == "Bind the gradient too: l, g = ..."
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
    assert list(fix.diagnostics) == [e0411]
    assert fix.edit.changes == {uri: (lsp.TextEdit(session.range(uri, at_l + 1, at_l + 1), ", g"),)}


async def test_quick_fix_did_you_mean(session: Session) -> None:
    text = PROGRAM.replace("lr * g.w2", "lr * g.ww2")
    uri = session.open(text)
    await session.diagnostics(uri)
    bad = text.index("ww2")
    (fix,) = await actions(session, uri, bad, bad, only=[lsp.CodeActionKind.QuickFix])
    assert fix.title == "Change to 'w2'"
    assert fix.edit.changes == {uri: (lsp.TextEdit(session.range(uri, bad, bad + 3), "w2"),)}


async def test_run_action_is_offered_for_a_file_with_main(session: Session) -> None:
    uri = await opened(session)

    async def raw_actions(uri: str, only=None):
        params = {"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                                                           "end": {"line": 0, "character": 0}},
                  "context": {"diagnostics": [], **({"only": only} if only else {})}}
        return await session.raw("textDocument/codeAction", params)

    assert await raw_actions(uri) == [{
        "title": "Run main (quiver run)", "kind": "source.run",
        "command": {"title": "Run main", "command": "quiver.runFile", "arguments": [uri]}}]
    assert len(await raw_actions(uri, ["source"])) == 1
    assert await raw_actions(uri, ["quickfix"]) == []
    no_main = session.open("dim D = 3\n")
    await session.diagnostics(no_main)
    assert await raw_actions(no_main) == []


async def test_position_encoding_is_honoured_by_features(session: Session) -> None:
    text = 'fn main():\n    s = "🎉 中"\n    t = s\n    print(t)\n'
    uri = session.open(text)
    await session.diagnostics(uri)
    h = await session.hover(uri, text.index("t = s") + 4)
    assert h.range == lsp.Range(position(text, text.index("t = s") + 4, session.encoding),
                                position(text, text.index("t = s") + 5, session.encoding))
