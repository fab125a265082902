"""Every Python module of the packages stays under a size a reader can hold:
a module that grows past the limit is split along its seams (one concern per
module), not exempted. Only pure data tables may be longer."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("checker", "runtime", "server", "driver")
LIMIT = 900

# Pure data tables, which grow one entry at a time and read top to bottom:
EXEMPT = {
    # the diagnostic catalog: one entry (message, explanation, example, fix) per code
    # (the page generated from it lives in checker/catalog_docs.py)
    "checker/catalog.py",
}


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_the_limit() -> None:
    too_long = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in EXEMPT:
                continue
            lines = _line_count(path)
            if lines > LIMIT:
                too_long.append(f"{name} has {lines} lines (limit {LIMIT}): split it along its seams")
    assert not too_long, "\n".join(too_long)


def test_the_exemptions_exist() -> None:
    for name in EXEMPT:
        assert (ROOT / name).is_file(), f"{name} is exempted but does not exist: drop it from EXEMPT"
