"""Notebooks over the protocol (server/notebooks.py): the Quiver cells of a
notebook checked as one document, diagnostics on their cells with
cell-relative ranges, edits, hover, and a Python cell that starts with
`%%quiver`. The expected diagnostics are the checker's own of the cells'
concatenation, positions worked out here."""

from __future__ import annotations

from typing import Any

from lsp_support import DATA, find_range, position, wait_until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from quiver.checker import check_text

NOTEBOOK = (DATA / "analysis.ipynb").as_uri()

CELL1 = """\
dim D = 4
model Lin:
    param w: [D D] = zeros

fn apply(m: Lin, x: [D]) -> [D]:
    return m.w @ x
"""

CELL2 = """\
%%quiver
fn twice(m: Lin, x: [D]) -> [D D]:
    return apply(m, x) + apply(m, x)
"""

OK_CELL = "fn ok(m: Lin) -> [D D]:\n    return m.w\n"

PY = "import torch\nx = torch.ones(4)\n"


def cell_uri(i: int) -> str:
    return f"vscode-notebook-cell:{(DATA / 'analysis.ipynb').as_posix()}#cell{i}"


def open_notebook(client: LanguageClient, cells: list[tuple[str, str]]) -> list[str]:
    uris = [cell_uri(i) for i in range(len(cells))]
    client.notebook_document_did_open(
        lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(
                uri=NOTEBOOK,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[lsp.NotebookCell(kind=lsp.NotebookCellKind.Code, document=u) for u in uris],
            ),
            cell_text_documents=[
                lsp.TextDocumentItem(uri=u, language_id=lang, version=1, text=text)
                for u, (lang, text) in zip(uris, cells)
            ],
        )
    )
    return uris


def published(client: Any, uri: str, version: int | None = None) -> Any:
    for p in reversed(client.published):
        if p.uri == uri and (version is None or p.version == version):
            return p
    return None


async def test_cells_checked_together_diagnostics_on_their_cell(client: LanguageClient):
    uris = open_notebook(client, [("quiver", CELL1), ("python", PY), ("python", CELL2)])
    p2 = await wait_until(lambda: published(client, uris[2]), what="diagnostics of the %%quiver cell")
    p0 = await wait_until(lambda: published(client, uris[0]), what="diagnostics of the first cell")
    # the checker's view: the two Quiver cells, one after the other, the magic line blank
    whole = CELL1 + "\n" + "\n" + CELL2.split("\n", 1)[1]
    (d,) = check_text(whole).diagnostics
    assert list(p0.diagnostics) == []
    assert published(client, uris[1]) is None  # a plain Python cell is not Quiver
    (got,) = p2.diagnostics
    assert got.code == d.code == "E0201"
    assert got.message == d.message
    # `apply(m, x) + apply(m, x)` in cell 2, line 2 of the cell
    assert got.range == find_range(CELL2, "apply(m, x) + apply(m, x)")
    assert got.range.start.line == 2


async def test_editing_a_cell_updates_its_diagnostics(client: LanguageClient):
    uris = open_notebook(client, [("quiver", CELL1), ("python", CELL2)])
    await wait_until(lambda: published(client, uris[1]) and published(client, uris[1]).diagnostics, what="E0201")
    start = position(CELL2, CELL2.index("[D D]"))
    end = position(CELL2, CELL2.index("[D D]") + len("[D D]"))
    client.notebook_document_did_change(
        lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=2, uri=NOTEBOOK),
            change=lsp.NotebookDocumentChangeEvent(
                cells=lsp.NotebookDocumentCellChanges(
                    text_content=[
                        lsp.NotebookDocumentCellContentChanges(
                            document=lsp.VersionedTextDocumentIdentifier(uri=uris[1], version=2),
                            changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start, end), text="[D]")],
                        )
                    ]
                )
            ),
        )
    )
    p = await wait_until(lambda: published(client, uris[1], 2), what="diagnostics of version 2")
    assert list(p.diagnostics) == []
    # an error in the first cell now: the second cell's call is fine, the first reports
    end0 = position(CELL1, len(CELL1))
    client.notebook_document_did_change(
        lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=3, uri=NOTEBOOK),
            change=lsp.NotebookDocumentChangeEvent(
                cells=lsp.NotebookDocumentCellChanges(
                    text_content=[
                        lsp.NotebookDocumentCellContentChanges(
                            document=lsp.VersionedTextDocumentIdentifier(uri=uris[0], version=2),
                            changes=[
                                lsp.TextDocumentContentChangePartial(
                                    range=lsp.Range(end0, end0), text="fn bad(x: [D]) -> []:\n    return x\n"
                                )
                            ],
                        )
                    ]
                )
            ),
        )
    )
    p0 = await wait_until(
        lambda: (q := published(client, uris[0], 2)) is not None and q.diagnostics and q, what="the new error"
    )
    (d,) = p0.diagnostics
    assert d.code == "E0201"
    assert d.range.start.line == 7 and d.range.start.character == 11  # `x` of `return x`, line 8 of cell 1


async def test_hover_and_definition_in_a_cell(client: LanguageClient):
    uris = open_notebook(client, [("quiver", CELL1), ("python", CELL2)])
    await wait_until(lambda: published(client, uris[1]), what="the analysis")
    at = position(CELL2, CELL2.index("apply(m"))
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uris[1]), at))
    assert hover is not None
    text = hover.contents.value if isinstance(hover.contents, lsp.MarkupContent) else str(hover.contents)
    assert "fn apply(m: Lin, x: [D]) -> [D]" in text
    assert hover.range == find_range(CELL2, "apply", 0)
    found = await client.text_document_definition_async(lsp.DefinitionParams(lsp.TextDocumentIdentifier(uris[1]), at))
    locs: list[Any] = list(found) if isinstance(found, list) else [found]
    (loc,) = locs
    uri = loc.uri if isinstance(loc, lsp.Location) else loc.target_uri
    rng = loc.range if isinstance(loc, lsp.Location) else loc.target_selection_range
    assert uri == uris[0]  # the definition is in the first cell
    assert rng.start.line == CELL1.split("\n").index("fn apply(m: Lin, x: [D]) -> [D]:")


async def test_closing_the_notebook_clears_its_cells(client: LanguageClient):
    uris = open_notebook(client, [("quiver", CELL1), ("python", CELL2)])
    await wait_until(lambda: published(client, uris[1]) and published(client, uris[1]).diagnostics, what="E0201")
    client.notebook_document_did_close(
        lsp.DidCloseNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri=NOTEBOOK),
            cell_text_documents=[lsp.TextDocumentIdentifier(u) for u in uris],
        )
    )
    await wait_until(lambda: not published(client, uris[1]).diagnostics, what="cleared diagnostics")


async def test_removing_a_cell_rechecks_the_rest(client: LanguageClient):
    uris = open_notebook(client, [("quiver", CELL1), ("quiver", OK_CELL)])
    await wait_until(lambda: published(client, uris[1]), what="the analysis")
    assert list(published(client, uris[1]).diagnostics) == []
    client.notebook_document_did_change(
        lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=2, uri=NOTEBOOK),
            change=lsp.NotebookDocumentChangeEvent(
                cells=lsp.NotebookDocumentCellChanges(
                    structure=lsp.NotebookDocumentCellChangeStructure(
                        array=lsp.NotebookCellArrayChange(start=0, delete_count=1),
                        did_close=[lsp.TextDocumentIdentifier(uris[0])],
                    )
                )
            ),
        )
    )
    # `Lin` and `D` are gone with the first cell: the second is checked alone
    p = await wait_until(
        lambda: (q := published(client, uris[1])) is not None and q.diagnostics and q, what="unknown names"
    )
    alone = check_text(OK_CELL).diagnostics
    assert [(d.code, d.message) for d in p.diagnostics] == [(d.code, d.message) for d in alone]
    assert [d.code for d in alone] == ["E0102", "E0206"]
    assert p.diagnostics[0].range == find_range(OK_CELL, "Lin")
    # the first cell, gone from the notebook, had nothing to clear; hover there answers nothing
    hover = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(uris[0]), lsp.Position(1, 7))
    )
    assert hover is None


async def test_no_run_lens_in_a_cell(client: LanguageClient):
    main_cell = "fn main():\n    print(1)\n"
    uris = open_notebook(client, [("quiver", CELL1), ("quiver", main_cell)])
    await wait_until(lambda: published(client, uris[1]), what="the analysis")
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(lsp.TextDocumentIdentifier(uris[1])))
    # a .qv file with the same text gets the Run lens; a cell has no file to run
    assert not [lens for lens in lenses or [] if lens.command is not None and lens.command.command == "quiver.runFile"]
    file_uri = (DATA / "nb_main.qv").as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=file_uri, language_id="quiver", version=1, text=main_cell)
        )
    )
    file_lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(lsp.TextDocumentIdentifier(file_uri)))
    assert [lens.command.command for lens in file_lenses or [] if lens.command is not None] == ["quiver.runFile"]


def decode(data) -> list[tuple[int, int, int, int, int]]:
    out, line, col = [], 0, 0
    for i in range(0, len(data), 5):
        dl, dc, length, kind, mods = data[i : i + 5]
        line += dl
        col = col + dc if dl == 0 else dc
        out.append((line, col, length, kind, mods))
    return out


async def test_semantic_tokens_of_a_cell(client: LanguageClient):
    uris = open_notebook(client, [("quiver", CELL1), ("python", CELL2)])
    await wait_until(lambda: published(client, uris[1]), what="the analysis")
    got = await client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(lsp.TextDocumentIdentifier(uris[1]))
    )
    # the same text as one .qv file: its tokens on the second cell's lines, moved up
    whole = CELL1 + "\n" + "\n" + CELL2.split("\n", 1)[1]
    first = CELL1.count("\n") + 1
    file_uri = (DATA / "nb_whole.qv").as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri=file_uri, language_id="quiver", version=1, text=whole))
    )
    ref = await client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(lsp.TextDocumentIdentifier(file_uri))
    )
    assert got is not None and ref is not None
    want = [(ln - first, *rest) for ln, *rest in decode(ref.data) if ln >= first]
    assert decode(got.data) == want
    assert len(want) >= 8  # fn, twice, m, Lin, x, D, apply, ...
