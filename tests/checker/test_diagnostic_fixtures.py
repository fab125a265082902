"""Every diagnostic code, triggered once with its exact range and message.

tests/checker/diagnostics/CODE.qv holds a program that makes exactly that
diagnostic, annotated in place (see tests/annotations.py). The few codes whose
range cannot be drawn under the line (it starts at column 1, or the input is
not text) are checked below in Python.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from annotations import check_annotated

from quiver.checker import check_bytes, check_text
from quiver.checker.catalog import CODES

FIXTURES = Path(__file__).parent / "diagnostics"
# E0011: a line of thousands of digits; E0012: a text of more than 10 MiB;
# E0015: a statement of more than 100,000 links;
# W0001: a bidirectional control, which would reorder the fixture as shown
# (tests/checker/test_bidi.py)
IN_PYTHON = {"E0001", "E0005", "E0006", "E0011", "E0012", "E0015", "W0001"}
# E0014 is at a pyproject.toml, reported by the tools: tests/test_qlint_ci.py, tests/server/test_project_config.py.
IN_TOOLS = {"E0014"}
# The codes about imports need several files: tests/checker/test_modules.py.
MULTI_FILE = {"E0113", "E0114", "E0115", "E0116", "E0117", "W0103"}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.qv")), ids=lambda p: p.stem)
def test_fixture(path: Path) -> None:
    analysis = check_annotated(path.read_text())
    assert [d.code for d in analysis.diagnostics] == [path.stem], "each fixture triggers its own code once"


def test_every_code_is_covered() -> None:
    covered = {p.stem for p in FIXTURES.glob("*.qv")} | IN_PYTHON | MULTI_FILE | IN_TOOLS
    assert covered == set(CODES)


def test_e0012_a_text_over_the_size_limit_is_not_parsed() -> None:
    from quiver.checker.source import MAX_SOURCE_BYTES

    src = "fn main(:\n" + "# padding\n" * (MAX_SOURCE_BYTES // 10)  # a syntax error that is never seen
    d = _only(check_text(src))
    size = len(src.encode())
    assert (d.code, d.span.start, d.span.end) == ("E0012", 0, len("fn main(:"))
    assert (
        d.message == f"this file is not checked: it is larger than 10 MiB ({size:,} bytes), the limit for a source file"
    )
    # one byte under the limit is checked
    small = "fn main(:\n" + "#" * (MAX_SOURCE_BYTES - len("fn main(:\n") - 1) + "\n"
    assert len(small.encode()) == MAX_SOURCE_BYTES
    assert [x.code for x in check_text(small).diagnostics] == ["E0004"]  # parsed: its syntax error is seen


def test_e0012_counts_bytes_not_characters() -> None:
    from quiver.checker.source import MAX_SOURCE_BYTES

    src = "dim D = 4\n# " + "é" * (MAX_SOURCE_BYTES // 2) + "\n"  # fewer characters than the limit, more bytes
    assert len(src) < MAX_SOURCE_BYTES < len(src.encode())
    assert _only(check_text(src)).code == "E0012"


def _only(analysis):
    assert len(analysis.diagnostics) == 1, analysis.diagnostics
    return analysis.diagnostics[0]


def test_e0001_invalid_utf8_points_at_the_byte() -> None:
    data = b"dim D = 4\n# caf\xff\nfn f(x: [D]) -> [D]:\n    return x\n"
    d = _only(check_bytes(data))
    assert d.code == "E0001"
    assert d.message == "the file is not valid UTF-8: byte 0xFF cannot be decoded"
    text = data.decode("utf-8", errors="replace")
    assert (d.span.start, d.span.end) == (text.index("\ufffd"), text.index("\ufffd") + 1)


def test_e0005_unexpected_indentation() -> None:
    src = "fn main():\n    x = 1\n      print(x)\n"
    d = _only(check_text(src))
    assert (d.code, d.message) == ("E0005", "this line is indented more than its block")
    start = src.index("      print")
    assert (d.span.start, d.span.end) == (start, start + 6)


def test_e0005_inconsistent_dedent() -> None:
    src = "fn main():\n    if True:\n        x = 1\n      print(x)\n"
    d = _only(check_text(src))
    assert (d.code, d.message) == ("E0005", "this line dedents to a column that no enclosing block uses")
    start = src.index("      print")
    assert (d.span.start, d.span.end) == (start, start + 6)


def test_e0006_tabs_and_spaces() -> None:
    src = "fn main():\n    x = 1\n\tprint(x)\n"
    d = _only(check_text(src))
    assert (d.code, d.message) == ("E0006", "indentation mixes tabs and spaces")
    start = src.index("\tprint")
    assert (d.span.start, d.span.end) == (start, start + 1)


def test_e0011_an_integer_too_long_to_read() -> None:
    number = "9" * 4301
    src = f"fn main():\n    print({number})\n"
    d = _only(check_text(src))
    assert (d.code, d.message) == ("E0011", "this integer has 4,301 digits, more than the 4,300 a program may write")
    start = src.index(number)
    assert (d.span.start, d.span.end) == (start, start + len(number))


def test_e0015_a_statement_chaining_too_many_links() -> None:
    # 100,001 fields after `m`: the error is at the last `.`, the first too
    # many; the statement is skipped and the rest of the function checked.
    src = "fn main():\n    m = 1\n    x = m" + ".w" * 100_001 + "\n    print(totl)\n"
    d, unknown = check_text(src).diagnostics
    assert (d.code, d.message) == (
        "E0015",
        "this statement chains more than 100,000 operators, fields, calls or indexes",
    )
    start = src.rindex(".w")
    assert (d.span.start, d.span.end) == (start, start + 1)
    assert (unknown.code, src[unknown.span.start : unknown.span.end]) == ("E0101", "totl")


def test_related_locations_point_at_declarations() -> None:
    src = (FIXTURES / "W1101.qv").read_text()
    a = check_text(src)
    (d,) = a.diagnostics
    (r,) = d.related
    assert r.message == "param b is declared here"
    assert src[r.span.start : r.span.end] == "b"
    assert a.lines.position(r.span.start).line == src.splitlines().index("    param b: [C] = zeros")
