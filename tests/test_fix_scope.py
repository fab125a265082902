"""`qlint --fix` and `quiver fmt` write only the files named on their command
line (issue 37, item 2): a module beside the file given, which it imports and
which has a fix and a layout of its own to change, is checked but never
written."""

from __future__ import annotations

from pathlib import Path

import pytest

from quiver.cli import main as quiver_main
from quiver.qlint import main as qlint_main

# W0105 (a suppression of an error, which silences nothing) has a fix: remove it.
UTIL = "fn  helper(x: [4]) -> [4]:\n    return x  # qlint: ignore[E0201]\n"
MAIN = "import util\n\nfn main():\n    print(util.helper(zeros([4])))  # qlint: ignore[E0202]\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "util.qv").write_text(UTIL)
    (tmp_path / "proj" / "main.qv").write_text(MAIN)
    return tmp_path


def test_fix_writes_only_the_files_given(tree: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    qlint_main(["--fix", "--no-cache", "proj/main.qv"])
    out, err = capsys.readouterr()
    assert "fixed 1 problem in proj/main.qv (W0105)" in err
    assert (tree / "proj" / "main.qv").read_text() == MAIN.replace("  # qlint: ignore[E0202]", "")
    # reported, as an imported module's diagnostics are, but not written
    assert "proj/util.qv:2:31: W0105" in out
    assert (tree / "proj" / "util.qv").read_text() == UTIL


def test_fmt_writes_only_the_files_given(tree: Path, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    assert quiver_main(["fmt", "proj/main.qv"]) == 0
    assert (tree / "proj" / "util.qv").read_text() == UTIL
