"""Models that take dims over the protocol (issue 23), against the VS Code and
Neovim profiles: a document that imports `nn` is checked against the library
the package ships, and hover, completion, signature help, inlay hints and go
to definition show `nn.Linear[D, H]` with its dims put in. The checker's
answers are pinned by tests/checker/test_ide_models.py; these compare the
server's with the checker's for the same text (checked with the same library)
and check the few words each feature is about."""

from __future__ import annotations

from pathlib import Path

from lsp_support import Session, cursors
from lsprotocol import types as lsp
from nn_library import LIBRARY, LIBRARY_FOLDER, NN_USER_PROGRAM

from quiver.checker import ide
from quiver.checker.workspace import check_example

LIBRARY_FILE = LIBRARY_FOLDER / "nn.qv"

PROGRAM = NN_USER_PROGRAM


def at(needle: str, into: int = 0, src: str = PROGRAM) -> int:
    return src.index(needle) + into


async def opened(session: Session, text: str = PROGRAM) -> str:
    uri = session.open(text)
    assert list(await session.diagnostics(uri)) == []
    return uri


async def test_hover_shows_the_instance_and_the_forward_a_layer_runs(session: Session) -> None:
    uri = await opened(session)
    analysis = check_example(PROGRAM, library=LIBRARY)
    for offset, words in [
        (at("self.fc1(x)", 6), "Calling it runs `forward` of `nn.Linear[D, H]`"),
        (at("self.fc2(", 6), "fn forward(x: [.. H]) -> [.. C]"),
        (at("fc1: nn", 1), "param Mlp.fc1: nn.Linear[D, H]"),
        (at("nn.Linear[D, H]\n", 4), "    param weight: [D H]\n    param bias: [H]\n"),
        (at("fc.forward", 4), "fn nn.Linear[D, H].forward(x: [.. D]) -> [.. H]"),
    ]:
        want = ide.hover(analysis, offset)
        h = await session.hover(uri, offset)
        assert want is not None and h is not None
        assert h.contents.value == want.markdown and words in h.contents.value
        assert h.range == session.range(uri, want.span.start, want.span.end)


async def test_completion_lists_an_instances_fields_and_methods(session: Session) -> None:
    for line, labels in [
        ("q = fc.$0", ["weight", "bias", "forward"]),
        ("q = m.fc2.$0", ["weight", "forward"]),  # bias=False: no bias
    ]:
        text, (offset,) = cursors(PROGRAM + f"    {line}\n")
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
        want = ide.completions(check_example(text, library=LIBRARY), offset)
        assert [i.label for i in result.items] == [c.label for c in want] == labels
        assert [i.detail for i in result.items] == [c.detail for c in want]
        kinds = {i.label: i.kind for i in result.items}
        assert (kinds["weight"], kinds["forward"]) == (lsp.CompletionItemKind.Field, lsp.CompletionItemKind.Method)


async def test_signature_help_of_a_layer_call(session: Session) -> None:
    text, (offset,) = cursors(
        PROGRAM.replace("        return self.fc2(", "        q = self.fc1($0\n        return self.fc2(")
    )
    uri = session.open(text)
    h = await session.client.text_document_signature_help_async(
        lsp.SignatureHelpParams(session.doc(uri), session.pos(uri, offset))
    )
    (sig,) = h.signatures
    assert sig.label == "nn.Linear[D, H].forward(x: [.. D]) -> [.. H]"
    assert [p.label for p in sig.parameters] == [
        (len("nn.Linear[D, H].forward("), len("nn.Linear[D, H].forward(x: [.. D]"))
    ]
    assert h.active_parameter == 0


async def test_inlay_hints_show_the_instance(session: Session) -> None:
    uri = await opened(session)
    hints = await session.client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=session.doc(uri), range=session.range(uri, 0, len(PROGRAM)))
    )
    labels = {(h.position.line, h.label) for h in hints}
    assert (14, ": nn.Linear[D, H]") in labels and (15, ": [2 H]") in labels


async def test_definition_goes_into_the_library(session: Session) -> None:
    uri = await opened(session)
    source = LIBRARY["nn.qv"]
    model_at = source.index("model Linear[") + len("model ")
    forward_at = source.index("fn forward", model_at) + len("fn ")
    lib_uri = Path(LIBRARY_FILE).resolve().as_uri()
    for offset, start, word in [
        (at("nn.Linear[D, H]\n", 4), model_at, "Linear"),
        (at("fc.forward", 4), forward_at, "forward"),
    ]:
        result = await session.client.text_document_definition_async(
            lsp.DefinitionParams(session.doc(uri), session.pos(uri, offset))
        )
        (loc,) = result
        line = source[:start].count("\n")
        column = start - (source.rfind("\n", 0, start) + 1)
        assert loc.uri == lib_uri
        assert loc.range == lsp.Range(lsp.Position(line, column), lsp.Position(line, column + len(word)))
