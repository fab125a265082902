"""Edits never leave the workspace folders (issue 37, item 2): a rename of a
name defined in Quiver's installed library or in a sibling folder outside
the workspace root is refused (prepareRename too) with a message; a rename
that would edit an open document outside is refused; a document outside the
workspace folders gets no quick fixes and no formatting edits.

Layout (the workspace folder is `proj`):

    <tmp>/proj/main.qv       imports nn
    <tmp>/proj/layers.qv
    <tmp>/shared/util.qv     a sibling folder, outside the workspace
    <tmp>/shared/app.qv      opened by the user: imports util beside it
    <tmp>/scratch/s.qv       opened by the user, outside: imports layers
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, Session, init_params, span_range
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

import quiver.library

MAIN = """\
import nn

fn apply(m: nn.Linear[4, 2], x: [4]) -> [2]:
    return m.forward(x)
"""

UTIL = """\
fn helper(x: [4]) -> [4]:
    return x
"""

APP = """\
import util

fn main():
    print(util.helper(zeros([4])))
"""

LAYERS = """\
fn forward(x: [4]) -> [4]:
    return x
"""

SCRATCH = """\
import layers

fn main():
    print(layers.forward(zeros([4])))
"""

# A warning with a quick fix (W0101: rename to `_y`) and a layout to format.
MESSY = """\
fn  main():
    y = 1
    print( 2 )
"""

NN = str(Path(quiver.library.__file__).parent / "nn.qv")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    base = tmp_path.resolve()
    for rel, text in {
        "shared/util.qv": UTIL,
        "shared/app.qv": APP,
        "proj/main.qv": MAIN,
        "proj/layers.qv": LAYERS,
        "scratch/s.qv": SCRATCH,
    }.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return base


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tree: Path):
    result = await lsp_client.initialize_session(init_params("visual-studio-code", root=tree / "proj"))
    lsp_client.initialize_result = result
    lsp_client.encoding = result.capabilities.position_encoding or "utf-16"
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def session(client: LanguageClient, tree: Path) -> Session:
    return Session(client, tree / "proj")


async def prepare(session: Session, uri: str, offset: int):
    return await session.client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(session.doc(uri), session.pos(uri, offset))
    )


async def rename(session: Session, uri: str, offset: int, new: str):
    return await session.client.text_document_rename_async(
        lsp.RenameParams(session.doc(uri), session.pos(uri, offset), new)
    )


async def test_a_name_of_the_installed_library_cannot_be_renamed(session: Session) -> None:
    main = session.open(MAIN, session.uri("main.qv"))
    await session.diagnostics(main)
    message = (
        f"nn.Linear is defined in the installed Quiver library ({NN}), outside the workspace: it can't be renamed here"
    )
    at = MAIN.index("Linear") + 1
    with pytest.raises(Exception, match=re.escape(message)):
        await prepare(session, main, at)
    with pytest.raises(Exception, match=re.escape(message)):
        await rename(session, main, at, "Dense")
    # a method of the library's model: refused as a method, never edited either
    with pytest.raises(Exception, match="cannot rename the method 'forward' of Linear"):
        await prepare(session, main, MAIN.index("forward") + 1)
    # the workspace's own names are renamed as before
    edit = await rename(session, main, MAIN.index("m: nn"), "net")
    assert edit is not None and edit.changes is not None
    assert list(edit.changes) == [main]
    assert [(e.range, e.new_text) for e in edit.changes[main]] == [
        (span_range(MAIN, at_m, at_m + 1), "net") for at_m in (MAIN.index("m: nn"), MAIN.index("m.forward"))
    ]


async def test_a_name_of_a_sibling_folder_outside_the_workspace_cannot_be_renamed(session: Session, tree: Path) -> None:
    app = session.open(APP, (tree / "shared" / "app.qv").as_uri())
    assert list(await session.diagnostics(app)) == []
    util = tree / "shared" / "util.qv"
    message = f"util.helper is defined in {util}, outside the workspace: it can't be renamed here"
    at = APP.index("helper") + 1
    with pytest.raises(Exception, match=re.escape(message)):
        await prepare(session, app, at)
    with pytest.raises(Exception, match=re.escape(message)):
        await rename(session, app, at, "assist")
    # the defining file opened in the editor: refused there too
    util_uri = session.open(UTIL, util.as_uri())
    await session.diagnostics(util_uri)
    with pytest.raises(Exception, match=re.escape(message)):
        await prepare(session, util_uri, UTIL.index("helper") + 1)


async def test_a_rename_that_would_edit_an_open_file_outside_the_workspace_is_refused(
    session: Session, tree: Path
) -> None:
    layers = session.open(LAYERS, session.uri("layers.qv"))
    scratch = session.open(SCRATCH, (tree / "scratch" / "s.qv").as_uri())
    await session.diagnostics(scratch)
    assert [d for d in session.client.diagnostics.get(scratch, []) if d.severity == lsp.DiagnosticSeverity.Error] == []
    message = (
        f"renaming this name would also edit {tree / 'scratch' / 's.qv'}, outside the workspace folders: "
        "it can't be renamed here"
    )
    with pytest.raises(Exception, match=re.escape(message)):
        await rename(session, layers, LAYERS.index("forward") + 1, "apply")


async def code_actions(session: Session, uri: str) -> list[str]:
    diags = list(session.client.diagnostics.get(uri, []))
    result = await session.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=session.doc(uri),
            range=session.range(uri, MESSY.index("y = 1"), MESSY.index("y = 1") + 1),
            context=lsp.CodeActionContext(diagnostics=diags, only=[lsp.CodeActionKind.QuickFix]),
        )
    )
    return [a.title for a in result or [] if isinstance(a, lsp.CodeAction)]


async def format_edits(session: Session, uri: str):
    return await session.client.text_document_formatting_async(
        lsp.DocumentFormattingParams(session.doc(uri), lsp.FormattingOptions(tab_size=4, insert_spaces=True))
    )


async def test_no_quick_fixes_or_formatting_edits_for_a_file_outside_the_workspace(
    session: Session, tree: Path
) -> None:
    inside = session.open(MESSY, session.uri("messy.qv"))
    outside = session.open(MESSY, (tree / "shared" / "messy.qv").as_uri())
    for uri in (inside, outside):
        assert [d.code for d in await session.diagnostics(uri)] == ["W0101"]
    assert await code_actions(session, inside) == ["Rename to '_y' (unused on purpose)"]
    assert await format_edits(session, inside)
    assert await code_actions(session, outside) == []
    assert await format_edits(session, outside) is None
