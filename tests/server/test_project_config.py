"""`[tool.quiver]` in pyproject.toml over the protocol: the editor leaves out
the codes qlint leaves out, for open files and files not open, pushed and
pulled, and follows the table as pyproject.toml changes on disk."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, Session, init_params, wait_until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from quiver.qlint import main as qlint

# W0101 (x unused) and E0101 (nothing undefined)
TWO = """\
fn f(a: [4]) -> [4]:
    x = a * 2.0
    return a + nothing
"""
IGNORING = '[project]\nname = "demo"\n\n[tool.quiver]\nignore = ["W0101"]\n'


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text(IGNORING)
    (root / "sub" / "closed.qv").write_text(TWO)
    (root / "open.qv").write_text(TWO)
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


async def latest_codes(session: Session, uri: str, want: list[str], what: str) -> None:
    def found():
        for p in reversed(session.client.published):
            if p.uri == uri:
                return sorted(str(d.code) for d in p.diagnostics) == want or None
        return None

    await wait_until(found, 15, what)


def changed(session: Session, path: Path, kind: lsp.FileChangeType) -> None:
    session.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent(path.as_uri(), kind)])
    )


async def test_the_table_leaves_codes_out_and_is_followed_on_disk(session: Session, folder: Path) -> None:
    await wait_until(lambda: session.client.registrations, 10, "the watcher")
    (reg,) = session.client.registrations
    assert reg.register_options == {"watchers": [{"globPattern": "**/*.qv"}, {"globPattern": "**/pyproject.toml"}]}
    closed = (folder / "sub" / "closed.qv").as_uri()
    opened = session.open(TWO, session.uri("open.qv"))
    await latest_codes(session, closed, ["E0101"], "a file not open, W0101 left out (the table is in a folder above)")
    await latest_codes(session, opened, ["E0101"], "an open file, W0101 left out")

    # qlint agrees
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert qlint(["--format", "json", "--no-cache", str(folder / "open.qv")]) == 1
    assert [d["code"] for d in json.loads(out.getvalue())] == ["E0101"]

    # the table changed: W0101 is back, and E0101 is now the one left out
    (folder / "pyproject.toml").write_text(IGNORING.replace('"W0101"', '"E01"'))
    changed(session, folder / "pyproject.toml", lsp.FileChangeType.Changed)
    await latest_codes(session, opened, ["W0101"], "the open file under the new table")
    await latest_codes(session, closed, ["W0101"], "the file not open under the new table")
    report = await session.client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(opened))
    )
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    assert [d.code for d in report.items] == ["W0101"]

    # a nearer pyproject.toml without the table changes nothing; with one, it wins
    (folder / "sub" / "pyproject.toml").write_text('[project]\nname = "sub"\n')
    changed(session, folder / "sub" / "pyproject.toml", lsp.FileChangeType.Created)
    (folder / "sub" / "pyproject.toml").write_text('[tool.quiver]\nselect = ["E"]\n')
    changed(session, folder / "sub" / "pyproject.toml", lsp.FileChangeType.Changed)
    await latest_codes(session, closed, ["E0101"], "the nearer table")

    # deleted: no settings, everything shown
    (folder / "pyproject.toml").unlink()
    (folder / "sub" / "pyproject.toml").unlink()
    changed(session, folder / "pyproject.toml", lsp.FileChangeType.Deleted)
    await latest_codes(session, opened, ["E0101", "W0101"], "no table: both")
    await latest_codes(session, closed, ["E0101", "W0101"], "no table: both, not open")


@pytest.mark.parametrize(
    ("table", "problem", "line"),
    [
        ('[tool.quiver]\nignore = ["Z9"]\n', "tool.quiver.ignore: no diagnostic code matches 'Z9'", 1),
        # valid TOML Python's reader refuses: before, an exception that left the whole folder without diagnostics
        ("[tool.quiver]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply", 0),
        ("[tool.quiver]\nx = " + "7" * 5000 + "\n", "Exceeds the limit (4300 digits)", 0),
    ],
)
async def test_a_bad_table_is_e0014_at_the_file_and_filters_nothing(
    session: Session, folder: Path, table: str, problem: str, line: int
) -> None:
    closed = (folder / "sub" / "closed.qv").as_uri()
    await latest_codes(session, closed, ["E0101"], "the start, under the good table")
    (folder / "pyproject.toml").write_text(table)
    changed(session, folder / "pyproject.toml", lsp.FileChangeType.Changed)
    opened = session.open(TWO, session.uri("open.qv"))
    await latest_codes(session, opened, ["E0101", "W0101"], "everything shown")
    await latest_codes(session, closed, ["E0101", "W0101"], "everything shown, not open (another folder)")
    config_uri = (folder / "pyproject.toml").as_uri()
    await latest_codes(session, config_uri, ["E0014"], "E0014 at the pyproject.toml")
    (published,) = [p for p in session.client.published if p.uri == config_uri]
    (d,) = published.diagnostics
    assert problem in d.message and d.range.start.line == line
    assert d.message.startswith("the [tool.quiver] settings of this file are not applied: ")
    assert not [m for m in session.client.messages if "pyproject.toml" in m.message], "no pop-up: a diagnostic"
    # fixed: E0014 is cleared, and the table applies again
    (folder / "pyproject.toml").write_text(IGNORING)
    changed(session, folder / "pyproject.toml", lsp.FileChangeType.Changed)
    await latest_codes(session, config_uri, [], "E0014 cleared")
    await latest_codes(session, opened, ["E0101"], "the good table again")
