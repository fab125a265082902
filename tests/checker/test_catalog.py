"""The diagnostic catalog: complete, self-consistent, and what the docs say."""

from __future__ import annotations

import re
import string
import tomllib
from pathlib import Path

import pytest
from nn_library import LIBRARY

from quiver.checker import check_bytes, check_text
from quiver.checker.catalog import CODES, Code
from quiver.checker.catalog_docs import render_markdown
from quiver.checker.source import MAX_SOURCE_BYTES
from quiver.checker.workspace import check_example

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("code", sorted(CODES))
def test_example_triggers_exactly_its_code(code: str) -> None:
    entry = CODES[code]
    if entry.example_language == "toml":  # a pyproject.toml: read by the tools' config, not the checker
        from quiver import config

        with pytest.raises(config.ConfigError) as problem:
            config.parse(Path("pyproject.toml"), tomllib.loads(entry.example)["tool"]["quiver"])
        assert problem.value.diagnostic().code == code
        return
    if code == "E0001":
        analysis = check_bytes(entry.example.encode("utf-8", "surrogateescape"))
    elif code == "E0012":  # the example stands for a file past the size limit
        analysis = check_text(entry.example + "#" * MAX_SOURCE_BYTES + "\n")
    elif code == "E0015":  # the example stands for a chain past the limit: written out
        analysis = check_text(entry.example.replace("a + a + a  # ... and 100,000 more", " + ".join(["a"] * 100_003)))
    else:
        analysis = check_example(entry.example, LIBRARY)  # `# file:` sections: several files
    assert not analysis.internal_errors
    assert [d.code for d in analysis.diagnostics] == [code]


@pytest.mark.parametrize("code", sorted(c for c in CODES if CODES[c].fixed is not None))
def test_fixed_example_checks_clean(code: str) -> None:
    if CODES[code].example_language == "toml":
        from quiver import config

        config.parse(Path("pyproject.toml"), tomllib.loads(CODES[code].fixed or "")["tool"]["quiver"])
        return
    analysis = check_example(CODES[code].fixed, LIBRARY)
    assert analysis.diagnostics == [] and not analysis.internal_errors


@pytest.mark.parametrize("code", sorted(CODES))
def test_entry_is_complete(code: str) -> None:
    entry = CODES[code]
    assert re.fullmatch(r"[EW]\d{4}", code)
    assert entry.title and entry.title[0].islower(), "titles are short lower-case phrases"
    assert len(entry.explanation) > 40
    assert entry.fixed is not None
    assert (entry.severity.value == "warning") == code.startswith("W")
    # Every placeholder is a plain name; messages never end with a full stop.
    for _, field, spec, conv in string.Formatter().parse(entry.message):
        assert field is None or field.isidentifier()
        assert not spec and not conv
    assert not entry.message.endswith(".")


def test_codes_are_in_their_ranges() -> None:
    for code in CODES:
        # warnings share the ranges of errors: W00xx characters and syntax, W02xx shapes, W03xx types, W04xx calls, W11xx gradients
        ranges = {"E00", "E01", "E02", "E03", "E04", "E05", "E09", "E10", "E11", "E12"}
        assert code[:3] in ranges | {"W00", "W01", "W02", "W03", "W04", "W11"}


def test_chapter_codes_exist() -> None:
    # The gradients chapter pins these codes and their meanings.
    for code in ("E0411", "E1105", "E0904", "E1106", "E1107", "W1101", "E0901", "E0303", "E1108"):
        assert code in CODES


def test_building_a_diagnostic_checks_its_arguments() -> None:
    from quiver.checker.ast import Span

    with pytest.raises(TypeError):
        CODES["E0201"].at(Span(0, 1), expected="[b]")
    d = CODES["E0201"].at(Span(0, 1), context="", expected="[b C]", found="[b H]")
    assert d.message == "expected [b C], found [b H]"


def test_docs_page_is_generated_from_the_catalog() -> None:
    page = (ROOT / "docs" / "diagnostics.md").read_text()
    assert page == render_markdown(), "run scripts/gen-diagnostics-doc"
    for code in CODES:
        assert f'<a id="{code.lower()}"></a>' in page


def test_explain_text_names_every_part() -> None:
    from quiver.qlint import explain

    text = explain("w1101")
    entry: Code = CODES["W1101"]
    assert text.startswith("W1101: param never read (warning)")
    assert entry.explanation in text
    assert "    fn loss(m: Lin, x: [b D]) -> [] NonNeg:" in text
    assert "Fixed:" in text
