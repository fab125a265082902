"""`qlint --fix` and `quiver fmt` write only the files found from the paths on
their command line (issue 37, item 2): a module imported from a sibling
folder outside them (found through a `quiver.toml` above), with a fix and a
layout of its own to change, is checked but never written."""

from __future__ import annotations

from pathlib import Path

import pytest

from quiver.cli import main as quiver_main
from quiver.qlint import main as qlint_main

# W0105 (a suppression of an error, which silences nothing) has a fix: remove it.
UTIL = "fn  helper(x: [4]) -> [4]:\n    return x  # qlint: ignore[E0201]\n"
MAIN = "import shared.util\n\nfn main():\n    print(shared.util.helper(zeros([4])))  # qlint: ignore[E0202]\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "quiver.toml").write_text("")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "util.qv").write_text(UTIL)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "main.qv").write_text(MAIN)
    return tmp_path


@pytest.mark.parametrize("given", ["proj", "proj/main.qv"])
def test_fix_writes_only_the_files_given(tree: Path, given: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    qlint_main(["--fix", "--no-cache", given])
    out, err = capsys.readouterr()
    assert "fixed 1 problem in proj/main.qv (W0105)" in err
    assert (tree / "proj" / "main.qv").read_text() == MAIN.replace("  # qlint: ignore[E0202]", "")
    # reported, as an imported module's diagnostics are, but not written
    assert "shared/util.qv:2:31: W0105" in out
    assert (tree / "shared" / "util.qv").read_text() == UTIL


def test_fmt_writes_only_the_files_given(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    assert quiver_main(["fmt", "proj"]) == 0
    assert (tree / "shared" / "util.qv").read_text() == UTIL
