"""Every diagnostic code, triggered once with its exact range and message.

Most codes are checked on their catalog example (checker/catalog.py): the
program is the example itself, and where its diagnostic is (the line, the
range under it, the message) is written down in
tests/checker/diagnostics/catalog_examples.txt, in the annotation form of
tests/annotations.py. A code whose case needs more than its example has a
fixture of its own instead, tests/checker/diagnostics/CODE.qv: a program that
makes exactly that diagnostic, annotated in place. The few codes whose range
cannot be drawn under the line (it starts at column 1, or the input is not
text) are checked below in Python.

Both are written from the checker's report in update mode, the code lines
left as they are:

    QUIVER_UPDATE_FIXTURES=1 pytest tests/checker/test_diagnostic_fixtures.py
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from annotations import _ANNOTATION, annotation_lines, check_annotated, check_fixture, is_update_mode, parse_annotations

from quiver.checker import check_bytes, check_text
from quiver.checker.catalog import CODES

FIXTURES = Path(__file__).parent / "diagnostics"
EXPECTED = FIXTURES / "catalog_examples.txt"
# E0011: a line of thousands of digits; E0012: a text of more than 10 MiB;
# E0015: a statement of more than 100,000 links;
# W0001: a bidirectional control, which would reorder the fixture as shown
# (tests/checker/test_bidi.py)
IN_PYTHON = {"E0001", "E0005", "E0006", "E0011", "E0012", "E0015", "W0001"}
# E0014 is at a pyproject.toml, reported by the tools: tests/test_qlint_ci.py, tests/server/test_project_config.py.
IN_TOOLS = {"E0014"}
# The codes about imports need several files: tests/checker/test_modules.py.
MULTI_FILE = {"E0113", "E0114", "E0115", "E0116", "E0117", "W0103"}
# The codes checked on their catalog example: every other code without a fixture of its own.
OWN_FIXTURE = {p.stem for p in FIXTURES.glob("*.qv")}
ON_EXAMPLE = sorted(set(CODES) - OWN_FIXTURE - IN_PYTHON - IN_TOOLS - MULTI_FILE)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.qv")), ids=lambda p: p.stem)
def test_fixture(path: Path) -> None:
    analysis = check_fixture(path)
    assert [d.code for d in analysis.diagnostics] == [path.stem], "each fixture triggers its own code once"


# ------------------------------------------------------------------ the catalog's examples

_HEADER = re.compile(r"^=== ([EW]\d{4}) line (\d+)$")
_PREAMBLE = """\
# Where the catalog's example of each code (checker/catalog.py) reports it:
# for each diagnostic, the code and the line of the example it is on, that
# line as the example has it, and under it the range and the message as in an
# annotated fixture (tests/annotations.py). Checked, and written in update
# mode, by tests/checker/test_diagnostic_fixtures.py:
#     QUIVER_UPDATE_FIXTURES=1 pytest tests/checker/test_diagnostic_fixtures.py
"""


@dataclass(frozen=True)
class Expectation:
    code: str
    line: int  # 1-based, in the example
    text: str  # that line of the example
    annotations: tuple[str, ...]


def read_expectations(text: str) -> dict[str, list[Expectation]]:
    out: dict[str, list[Expectation]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _HEADER.match(lines[i])
        if not m:
            assert lines[i] == "" or lines[i].startswith("# "), f"line {i + 1}: {lines[i]!r}"
            i += 1
            continue
        code_line = lines[i + 1]
        i += 2
        notes = []
        while i < len(lines) and _ANNOTATION.match(lines[i]):
            notes.append(lines[i])
            i += 1
        assert notes, f"{m.group(1)}: no annotation under line {m.group(2)}"
        out.setdefault(m.group(1), []).append(Expectation(m.group(1), int(m.group(2)), code_line, tuple(notes)))
    return out


def write_expectations(codes: list[str]) -> str:
    """The expectations file for the examples of `codes`, from what the checker reports on them."""
    parts = [_PREAMBLE]
    for code in codes:
        example = CODES[code].example.splitlines()
        for at, notes in sorted(annotation_lines(CODES[code].example).items()):
            parts.append(f"=== {code} line {at}\n{example[at - 1]}\n" + "".join(f"{x}\n" for x in notes))
    return "\n".join(parts)


def annotated_example(code: str, expectations: list[Expectation]) -> str:
    """The catalog's example of `code` with the expected diagnostics annotated in."""
    lines = CODES[code].example.splitlines()
    for e in sorted(expectations, key=lambda e: e.line, reverse=True):
        assert 0 < e.line <= len(lines) and lines[e.line - 1] == e.text, (
            f"the example of {code} changed at line {e.line}: run the update mode (module docstring)"
        )
        lines[e.line : e.line] = e.annotations
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def expectations() -> dict[str, list[Expectation]]:
    if is_update_mode():
        text = write_expectations(ON_EXAMPLE)
        if not EXPECTED.exists() or EXPECTED.read_text(encoding="utf-8") != text:
            EXPECTED.write_text(text, encoding="utf-8")
    return read_expectations(EXPECTED.read_text(encoding="utf-8"))


@pytest.mark.parametrize("code", ON_EXAMPLE)
def test_catalog_example(code: str, expectations: dict[str, list[Expectation]]) -> None:
    assert code in expectations, f"no expected diagnostic for {code}'s example: run the update mode"
    analysis = check_annotated(annotated_example(code, expectations[code]))
    assert [d.code for d in analysis.diagnostics] == [code], "each example triggers its own code once"


def test_every_code_is_covered(expectations: dict[str, list[Expectation]]) -> None:
    assert not set(expectations) & OWN_FIXTURE, "a code with a fixture of its own is not also checked on its example"
    covered = OWN_FIXTURE | set(expectations) | IN_PYTHON | MULTI_FILE | IN_TOOLS
    assert covered == set(CODES)


# ------------------------------------------------------------------ the update mode itself


def test_update_mode_rewrites_a_fixtures_annotations_only(tmp_path: Path) -> None:
    original = (FIXTURES / "E0213.qv").read_text()
    stale = original.replace("^^^^ E0213: slice of T: it reaches past the end of T", "^^ E0213: an old message")
    stale = stale.replace("    return 1\n", "    return 1\n#      ^ E0101: a diagnostic no longer made\n")
    assert stale != original and len(parse_annotations(stale)) == 2
    path = tmp_path / "E0213.qv"
    path.write_text(stale)
    with pytest.raises(AssertionError):
        check_fixture(path, update=False)
    assert path.read_text() == stale, "not written outside update mode"
    check_fixture(path, update=True)
    assert path.read_text() == original
    # a new code line is kept as written, and its diagnostics annotated
    path.write_text(original.replace("    return 1\n", "    print(totl)\n    return 1\n"))
    check_fixture(path, update=True)
    assert path.read_text() == original.replace(
        "    return 1\n",
        "    print(totl)\n#         ^^^^ E0101: unknown name 'totl'\n    return 1\n",
    )


def test_update_mode_rewrites_the_examples_expectations(tmp_path: Path) -> None:
    text = EXPECTED.read_text()
    assert write_expectations(ON_EXAMPLE) == text, "run the update mode"
    copy = tmp_path / "catalog_examples.txt"
    shutil.copy(EXPECTED, copy)
    found = read_expectations(copy.read_text())
    (e,) = found["E0101"]
    assert (e.line, e.text) == (3, "    print(totl)")
    assert e.annotations == ("#         ^^^^ E0101: unknown name 'totl'; did you mean 'total'?",)
    assert check_annotated(annotated_example("E0101", [e])).diagnostics[0].code == "E0101"
    moved = Expectation("E0101", 3, e.text, ("#          ^^^ E0101: unknown name 'totl'; did you mean 'total'?",))
    with pytest.raises(AssertionError, match="missing"):
        check_annotated(annotated_example("E0101", [moved]))
    with pytest.raises(AssertionError, match="the example of E0101 changed"):
        annotated_example("E0101", [Expectation("E0101", 2, "    print(totl)", e.annotations)])


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
    src = CODES["W1101"].example
    a = check_text(src)
    (d,) = a.diagnostics
    (r,) = d.related
    assert r.message == "param b is declared here"
    assert src[r.span.start : r.span.end] == "b"
    assert a.lines.position(r.span.start).line == src.splitlines().index("    param b: [C] = zeros")
