"""Every module of checker/ is named in ARCHITECTURE.md's module map, so the
map cannot fall behind the code: a module added, moved or split is written
into the map in the same change.

The map is the table under **checker/** in "## Module map". A module of the
package itself is named, in backquotes, in the first cell of a row; a
subpackage has its own row (`body/`, `ide/`: the first cell names the folder)
and that row names each of its modules (`core`, `env`, ...).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "checker"


def _map_rows() -> list[tuple[set[str], set[str]]]:
    """(the names in the first cell, the names in the whole row) of each row
    of the checker's table in the module map."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Module map\n", 1)[1].split("\n## ", 1)[0]
    table = section.split("**checker/**", 1)[1].split("\n\n**", 1)[0]
    rows = []
    for line in table.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        first = line.split("|")[1]
        rows.append((set(re.findall(r"`([^`]+)`", first)), set(re.findall(r"`([^`]+)`", line))))
    assert rows, "no checker table under ## Module map"
    return rows


def _modules() -> list[tuple[str, ...]]:
    """The checker's modules as path parts below checker/, without .py."""
    return sorted(p.relative_to(CHECKER).with_suffix("").parts for p in CHECKER.rglob("*.py"))


def _named(parts: tuple[str, ...], rows: list[tuple[set[str], set[str]]]) -> bool:
    if len(parts) == 1:  # checker/X.py: a row's first cell names X
        return any(parts[0] in first for first, _ in rows)
    # checker/P/.../X.py: a row whose first cell names a folder above it
    # (`body/`, `body/lints/`) names the rest of its path (`core`, `features/gradients`)
    for cut in range(1, len(parts)):
        folder, rest = "/".join(parts[:cut]), parts[cut:]
        for first, row in rows:
            if f"{folder}/" not in first and folder not in first:
                continue
            if rest == ("__init__",):  # the folder's own row
                return True
            if rest[-1] == "__init__" and "/".join(rest[:-1]) + "/" in row:
                return True
            if "/".join(rest) in row:
                return True
    return False


def test_every_checker_module_is_in_the_module_map() -> None:
    rows = _map_rows()
    missing = ["checker/" + "/".join(parts) + ".py" for parts in _modules() if not _named(parts, rows)]
    assert not missing, "modules not named in ARCHITECTURE.md's module map:\n  " + "\n  ".join(missing)


def test_the_map_reader_finds_what_it_should() -> None:
    """The reader itself: a row's names are seen, a made-up module is not."""
    rows = _map_rows()
    assert _named(("analysis",), rows)
    assert _named(("body", "core"), rows)
    assert not _named(("no_such_module",), rows)
    assert not _named(("body", "no_such_module"), rows)
    assert not _named(("no_such_package", "__init__"), rows)
