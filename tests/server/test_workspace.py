"""Multi-file workspaces over the protocol: one Workspace for every file,
importers re-checked from the editor's unsaved text of what they import,
diagnostics of files that are not open (at start, and as files change on
disk), pull diagnostics of the whole workspace, and navigation, references,
rename and symbols across files (files not open included).

Each test gets a fresh folder (the workspace folder of its server), written
before the server starts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, Session, find_range, init_params, wait_until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

LAYERS = """\
dim H = 4

model Mlp:
    param w1: [H H] = zeros

fn forward(m: Mlp, x: [H]) -> [H]:
    return x @ m.w1
"""

TRAIN = """\
import layers
from layers import Mlp, forward as fwd

fn step(m: layers.Mlp, x: [layers.H]) -> [layers.H]:
    y = layers.forward(m, x)
    return fwd(m, y) + m.w1[0]

fn main():
    m = Mlp.init(seed=1)
    print(step(m, zeros([4])))
"""

# Not opened by the tests: found on disk.
USER = """\
import layers

fn twice(m: layers.Mlp, x: [layers.H]) -> [layers.H]:
    return layers.forward(m, layers.forward(m, x))
"""

BROKEN = """\
fn main():
    print(nothing)
"""

FILES = {"layers.qv": LAYERS, "train.qv": TRAIN, "user.qv": USER, "broken.qv": BROKEN}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skipped.qv").write_text(BROKEN)
    (root / "node_modules").mkdir()
    (root / "node_modules" / "skipped.qv").write_text(BROKEN)
    return root


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, folder: Path):
    result = await lsp_client.initialize_session(init_params("visual-studio-code", root=folder))
    lsp_client.initialize_result = result
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def session(client: LanguageClient, folder: Path) -> Session:
    return Session(client, folder)


def codes(diags) -> list:
    return [(d.code, d.range) for d in diags]


async def published_after(session: Session, uri: str, count: int, what: str = "diagnostics"):
    """The first publishDiagnostics of `uri` after the `count` first ones."""

    def found():
        return next((p for p in session.client.published[count:] if p.uri == uri), None)

    return await wait_until(found, 15, f"{what} of {uri}")


async def latest(session: Session, uri: str, predicate, what: str):
    """Waits until the latest diagnostics published for `uri` satisfy `predicate`."""

    def found():
        for p in reversed(session.client.published):
            if p.uri == uri:
                return p if predicate(p.diagnostics) else None
        return None

    return await wait_until(found, 15, what)


def open_both(session: Session) -> tuple[str, str]:
    layers = session.open(LAYERS, session.uri("layers.qv"))
    train = session.open(TRAIN, session.uri("train.qv"))
    return layers, train


# ---------------------------------------------------------------------- diagnostics


async def test_an_unsaved_rename_in_an_imported_module_is_seen_by_its_importer(session: Session) -> None:
    layers, train = open_both(session)
    assert list(await session.diagnostics(train)) == []
    assert list(await session.diagnostics(layers)) == []
    text = session.texts[layers]
    # `param w1` -> `param w9`, and its use in forward: only the importer breaks
    count = len(session.client.published)
    at = text.index("w1")
    session.change(layers, at, at + 2, "w9")
    at = session.texts[layers].index("m.w1") + 2
    session.change(layers, at, at + 2, "w9")
    broken = await latest(session, train, lambda d: len(d) == 1, "E0107 in train.qv")
    assert broken.version == 1  # train.qv itself did not change
    (d,) = broken.diagnostics
    assert d.code == "E0107"
    assert d.range == find_range(TRAIN, "w1")
    assert d.message == "model layers.Mlp has no field 'w1'"
    assert list(await session.diagnostics(layers)) == []
    assert len([p for p in session.client.published[count:] if p.uri == train]) >= 1
    # renamed back, still unsaved: clean again
    at = session.texts[layers].index("w9")
    session.change(layers, at, at + 2, "w1")
    at = session.texts[layers].index("m.w9") + 2
    session.change(layers, at, at + 2, "w1")
    await latest(session, train, lambda d: len(d) == 0, "train.qv clean again")
    assert (Path(session.folder) / "layers.qv").read_text() == LAYERS  # nothing was saved


async def test_files_not_open_are_analysed_and_published_at_start(session: Session) -> None:
    broken = session.uri("broken.qv")
    p = await latest(session, broken, lambda d: len(d) == 1, "broken.qv's E0101")
    assert p.version is None
    assert p.diagnostics[0].code == "E0101"
    assert p.diagnostics[0].range == find_range(BROKEN, "nothing")
    for name in ("layers.qv", "train.qv", "user.qv"):
        await latest(session, session.uri(name), lambda d: len(d) == 0, f"{name} published")
    assert not any("skipped" in p.uri for p in session.client.published)  # hidden, node_modules


async def test_an_unsaved_change_reaches_importers_that_are_not_open(session: Session) -> None:
    layers = session.open(LAYERS, session.uri("layers.qv"))
    user = session.uri("user.qv")
    await latest(session, user, lambda d: len(d) == 0, "user.qv clean")
    at = LAYERS.index("forward")
    session.change(layers, at, at + len("forward"), "fwd2")
    p = await latest(session, user, lambda d: len(d) == 2, "user.qv broken")
    assert [d.code for d in p.diagnostics] == ["E0115", "E0115"]
    session.change(layers, at, at + len("fwd2"), "forward")
    await latest(session, user, lambda d: len(d) == 0, "user.qv clean again")


async def test_file_watcher_is_registered_and_disk_changes_are_followed(session: Session, folder: Path) -> None:
    await wait_until(lambda: session.client.registrations, 10, "a registration")
    (reg,) = session.client.registrations
    assert reg.method == "workspace/didChangeWatchedFiles"
    assert reg.register_options == {"watchers": [{"globPattern": "**/*.qv"}, {"globPattern": "**/pyproject.toml"}]}

    # A new file importing a module that does not exist yet
    main = folder / "main.qv"
    main.write_text("import extra\n\nfn main():\n    print(extra.K)\n")
    session.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent(main.as_uri(), lsp.FileChangeType.Created)])
    )
    p = await latest(session, main.as_uri(), lambda d: len(d) == 1, "E0113 in main.qv")
    assert p.diagnostics[0].code == "E0113"
    # ... created: main.qv is clean
    extra = folder / "extra.qv"
    extra.write_text("dim K = 3\n")
    session.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent(extra.as_uri(), lsp.FileChangeType.Created)])
    )
    await latest(session, main.as_uri(), lambda d: len(d) == 0, "main.qv clean")
    await latest(session, extra.as_uri(), lambda d: len(d) == 0, "extra.qv published")
    # ... changed on disk: its importer sees it
    extra.write_text("dim L = 3\n")
    session.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent(extra.as_uri(), lsp.FileChangeType.Changed)])
    )
    p = await latest(session, main.as_uri(), lambda d: len(d) == 1, "E0115 in main.qv")
    assert p.diagnostics[0].code == "E0115"
    # ... deleted: its diagnostics are cleared, its importer reports it missing
    extra.unlink()
    count = len(session.client.published)
    session.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent(extra.as_uri(), lsp.FileChangeType.Deleted)])
    )
    p = await latest(session, main.as_uri(), lambda d: len(d) == 1 and d[0].code == "E0113", "E0113 again")
    cleared = [q for q in session.client.published[count:] if q.uri == extra.as_uri()]
    assert cleared and list(cleared[-1].diagnostics) == []


async def test_closing_a_workspace_file_publishes_its_text_on_disk(session: Session) -> None:
    broken = session.uri("broken.qv")
    await latest(session, broken, lambda d: len(d) == 1, "broken.qv at start")
    session.open("fn main():\n    print(1)\n", broken)
    assert list(await session.diagnostics(broken)) == []
    session.close(broken)
    p = await latest(session, broken, lambda d: len(d) == 1, "broken.qv from disk again")
    assert p.version is None


async def test_pull_diagnostics_follow_imports_and_cover_the_workspace(session: Session) -> None:
    layers, train = open_both(session)
    client = session.client
    first = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(session.doc(train)))
    assert first.kind == "full" and list(first.items) == []
    same = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(session.doc(train), previous_result_id=first.result_id)
    )
    assert same.kind == "unchanged"
    at = LAYERS.index("forward")
    session.change(layers, at, at + len("forward"), "fwd2")
    await latest(session, train, lambda d: len(d) == 2, "train.qv broken")
    changed = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(session.doc(train), previous_result_id=first.result_id)
    )
    assert changed.kind == "full"  # train.qv did not change, what it imports did
    assert [d.code for d in changed.items] == ["E0115", "E0115"]
    assert changed.items[0].range == find_range(TRAIN, "forward")

    report = await client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=[]))
    by_uri = {r.uri: r for r in report.items}
    names = {u.rsplit("/", 1)[-1] for u in by_uri}
    assert names == {"layers.qv", "train.qv", "user.qv", "broken.qv"}
    assert [d.code for d in by_uri[session.uri("broken.qv")].items] == ["E0101"]  # type: ignore[union-attr]
    assert by_uri[session.uri("broken.qv")].version is None
    assert by_uri[train].version == 1
    previous = [lsp.PreviousResultId(r.uri, r.result_id) for r in report.items if r.result_id]
    again = await client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=previous))
    assert {r.kind for r in again.items} == {"unchanged"}


@pytest.fixture
def big_folder(tmp_path: Path) -> Path:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from generate import generate

    root = tmp_path / "big"
    root.mkdir()
    text = generate(1500)
    for i in range(6):
        (root / f"big{i}.qv").write_text(text)
    return root


async def test_files_not_open_never_delay_an_open_document(client: LanguageClient, big_folder: Path) -> None:
    """Opened while the background checks six 1,500-line files, a document
    is checked and published before the background's next file (the one in
    progress stops for it)."""
    session = Session(client, big_folder)
    session.client.workspace_did_change_workspace_folders(
        lsp.DidChangeWorkspaceFoldersParams(
            lsp.WorkspaceFoldersChangeEvent(added=[lsp.WorkspaceFolder(big_folder.as_uri(), "big")], removed=[])
        )
    )
    big = {(big_folder / f"big{i}.qv").as_uri() for i in range(6)}
    await wait_until(lambda: any(p.uri in big for p in session.client.published), 60, "a first big file")
    before = sum(p.uri in big for p in session.client.published)
    doc = session.open(BROKEN, (big_folder / "small.qv").as_uri())
    diags = await session.diagnostics(doc, timeout=30)
    assert [d.code for d in diags] == ["E0101"]
    index = next(i for i, p in enumerate(session.client.published) if p.uri == doc)
    ahead = sum(p.uri in big for p in session.client.published[:index]) - before
    assert ahead <= 1, f"{ahead} big files were published before the open document"
    await wait_until(lambda: big <= {p.uri for p in session.client.published}, 120, "every big file")


# ---------------------------------------------------------------------- navigation


async def definition(session: Session, uri: str, offset: int):
    result = await session.client.text_document_definition_async(
        lsp.DefinitionParams(session.doc(uri), session.pos(uri, offset))
    )
    return [(loc.uri.rsplit("/", 1)[-1], loc.range) for loc in result or []]  # type: ignore[union-attr]


async def test_definition_across_files(session: Session) -> None:
    _, train = open_both(session)
    await session.diagnostics(train)
    mlp = ("layers.qv", find_range(LAYERS, "Mlp"))
    forward = ("layers.qv", find_range(LAYERS, "forward"))
    cases = {
        "Mlp, forward": mlp,  # the import
        "forward as": forward,
        "fwd\n": forward,  # the alias
        "fwd(m, y)": forward,  # a use of the alias
        "forward(m, x)": forward,  # layers.forward
        "Mlp, x": mlp,  # layers.Mlp in a signature
        "Mlp.init": mlp,
        "w1[0]": ("layers.qv", find_range(LAYERS, "w1")),  # a field of an imported model
        "H]) ->": ("layers.qv", find_range(LAYERS, "H")),
    }
    for needle, want in cases.items():
        assert await definition(session, train, TRAIN.index(needle) + 1) == [want], needle
    # the module name goes to its file
    assert await definition(session, train, TRAIN.index("layers") + 1) == [
        ("layers.qv", lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)))
    ]


async def test_references_across_files_include_files_not_open(session: Session) -> None:
    layers, train = open_both(session)
    await session.diagnostics(train)
    result = await session.client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=session.doc(layers),
            position=session.pos(layers, LAYERS.index("forward")),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    got = sorted((loc.uri.rsplit("/", 1)[-1], loc.range.start.line, loc.range.start.character) for loc in result)
    assert got == [
        ("layers.qv", 5, 3),
        ("train.qv", 1, 24),  # from layers import forward
        ("train.qv", 4, 15),  # layers.forward
        ("train.qv", 5, 11),  # fwd(...)
        ("user.qv", 3, 18),
        ("user.qv", 3, 36),
    ]


async def rename(session: Session, uri: str, offset: int, new: str):
    return await session.client.text_document_rename_async(
        lsp.RenameParams(session.doc(uri), session.pos(uri, offset), new)
    )


def edits(edit: lsp.WorkspaceEdit | None) -> dict[str, list]:
    assert edit is not None and edit.changes is not None
    return {u.rsplit("/", 1)[-1]: [(e.range, e.new_text) for e in es] for u, es in edit.changes.items()}


async def test_rename_from_an_importer_edits_every_file(session: Session) -> None:
    layers, train = open_both(session)
    await session.diagnostics(train)
    edit = await rename(session, train, TRAIN.index("forward(m, x)") + 2, "apply")
    assert edit is not None and edit.changes is not None
    assert set(edit.changes) == {layers, train, session.uri("user.qv")}
    assert edits(edit) == {
        "layers.qv": [(find_range(LAYERS, "forward"), "apply")],
        # `from layers import forward as fwd` and `layers.forward`; the alias stays
        "train.qv": [(find_range(TRAIN, "forward"), "apply"), (find_range(TRAIN, "forward", 1), "apply")],
        "user.qv": [(find_range(USER, "forward"), "apply"), (find_range(USER, "forward", 1), "apply")],
    }


async def test_rename_of_a_model_and_of_a_field(session: Session) -> None:
    layers, train = open_both(session)
    await session.diagnostics(train)
    edit = await rename(session, layers, LAYERS.index("Mlp"), "Net")
    assert edits(edit) == {
        "layers.qv": [(find_range(LAYERS, "Mlp", n), "Net") for n in range(2)],
        "train.qv": [(find_range(TRAIN, "Mlp", n), "Net") for n in range(3)],
        "user.qv": [(find_range(USER, "Mlp"), "Net")],
    }
    edit = await rename(session, train, TRAIN.index("w1"), "weight")
    assert edits(edit) == {
        "layers.qv": [(find_range(LAYERS, "w1", n), "weight") for n in range(2)],
        "train.qv": [(find_range(TRAIN, "w1"), "weight")],
    }


async def test_rename_at_an_alias_renames_the_alias(session: Session) -> None:
    _, train = open_both(session)
    await session.diagnostics(train)
    edit = await rename(session, train, TRAIN.index("fwd(m"), "f2")
    assert edits(edit) == {"train.qv": [(find_range(TRAIN, "fwd"), "f2"), (find_range(TRAIN, "fwd", 1), "f2")]}


async def test_prepare_rename_and_refusals(session: Session) -> None:
    _, train = open_both(session)
    await session.diagnostics(train)
    client = session.client
    prepared = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(session.doc(train), session.pos(train, TRAIN.index("forward(m, x)") + 1))
    )
    assert isinstance(prepared, lsp.PrepareRenamePlaceholder)
    assert prepared.range == find_range(TRAIN, "forward", 1) and prepared.placeholder == "forward"
    for needle, new, message in (
        ("layers\n", "nn", "cannot rename the module 'layers' here: rename its file instead"),
        ("print", "show", "cannot rename 'print': it is built in"),
        ("forward(m, x)", "not a name", "'not a name' is not a name"),
        ("Mlp.", "fn", "'fn' is not a name"),
    ):
        with pytest.raises(Exception, match=re.escape(message)):
            await rename(session, train, TRAIN.index(needle) + 1, new)
    with pytest.raises(Exception, match="module"):
        await client.text_document_prepare_rename_async(
            lsp.PrepareRenameParams(session.doc(train), session.pos(train, TRAIN.index("layers") + 1))
        )
    nothing = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(session.doc(train), session.pos(train, TRAIN.index("\n\nfn step") + 1))
    )
    assert nothing is None
    # the server carries on
    assert await definition(session, train, TRAIN.index("Mlp.init") + 1)


async def test_workspace_symbols_name_their_module(session: Session) -> None:
    open_both(session)
    result = await session.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=""))
    got = sorted((s.container_name, s.name, s.kind) for s in result)  # type: ignore[union-attr]
    assert got == [
        ("broken", "main", lsp.SymbolKind.Function),
        ("layers", "H", lsp.SymbolKind.Constant),
        ("layers", "Mlp", lsp.SymbolKind.Class),
        ("layers", "forward", lsp.SymbolKind.Function),
        ("train", "main", lsp.SymbolKind.Function),
        ("train", "step", lsp.SymbolKind.Function),
        ("user", "twice", lsp.SymbolKind.Function),
    ]
    result = await session.client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="fwd"))
    assert [(s.name, s.location.uri.rsplit("/", 1)[-1]) for s in result] == [("forward", "layers.qv")]  # type: ignore[union-attr]


async def test_hover_on_imported_names(session: Session) -> None:
    _, train = open_both(session)
    await session.diagnostics(train)
    h = await session.hover(train, TRAIN.index("fwd(m, y)") + 1)
    assert h is not None and "fn layers.forward(m: layers.Mlp, x: [layers.H]) -> [layers.H]" in h.contents.value  # type: ignore[union-attr]
    h = await session.hover(train, TRAIN.index("Mlp.init") + 1)
    assert h is not None and "param w1: [layers.H layers.H]" in h.contents.value  # type: ignore[union-attr]


async def test_workspace_folders_can_change(session: Session, folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "lonely.qv").write_text(BROKEN)
    session.client.workspace_did_change_workspace_folders(
        lsp.DidChangeWorkspaceFoldersParams(
            lsp.WorkspaceFoldersChangeEvent(added=[lsp.WorkspaceFolder(other.as_uri(), "other")], removed=[])
        )
    )
    await latest(session, (other / "lonely.qv").as_uri(), lambda d: len(d) == 1, "lonely.qv's E0101")
    session.client.workspace_did_change_workspace_folders(
        lsp.DidChangeWorkspaceFoldersParams(
            lsp.WorkspaceFoldersChangeEvent(added=[], removed=[lsp.WorkspaceFolder(folder.as_uri(), "proj")])
        )
    )
    await latest(session, session.uri("broken.qv"), lambda d: len(d) == 0, "broken.qv cleared")


async def test_bad_events_do_not_stop_the_server(session: Session) -> None:
    session.raw_notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": "file:///dev/zero.qv", "type": 2}, {"uri": "untitled:x.qv", "type": 1}]},
    )
    session.raw_notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": "file:///%00.qv", "type": 3}]})
    fifo_dir = Path(session.folder)
    import os

    os.mkfifo(fifo_dir / "pipe.qv")
    session.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent((fifo_dir / "pipe.qv").as_uri(), lsp.FileChangeType.Created)])
    )
    _, train = open_both(session)
    assert list(await session.diagnostics(train)) == []
