"""A Float option written with a sign in a type's brackets
(`nn.ConstantPad2d[1, value=-2.5]`): both parsers read the same number, the
formatter prints it back, and the layer pads with it (it was a syntax error)."""

from __future__ import annotations

import pytest

from quiver.checker.formatter import format_text
from quiver.checker.parser import parse_item


@pytest.mark.parametrize(("written", "number"), [("-2.5", -2.5), ("+0.5", 0.5), ("- 1e-3", -1e-3), ("3.0", 3.0)])
def test_both_parsers_read_the_signed_number(written: str, number: float) -> None:
    text = f"model M:\n    param pad: nn.ConstantPad2d[1, value={written}, bias=False]\n"
    fast, lark = parse_item(text, fast=True), parse_item(text, fast=False)
    assert fast.item is not None and lark.item is not None
    assert repr(fast.item) == repr(lark.item)
    (value, _) = fast.item.members[0].type.options  # type: ignore[union-attr]
    assert value.number == number
    assert text[value.span.start : value.span.end] == f"value={written}"


def test_the_formatter_prints_it_without_a_space() -> None:
    src = "import nn\n\nmodel M:\n    param pad: nn.ConstantPad2d[1, value=- 2.5]\n"
    once = format_text(src).text
    assert once == src.replace("- 2.5", "-2.5")
    assert format_text(once).text == once


def test_a_sign_before_an_integer_or_a_name_stays_a_syntax_error() -> None:
    for written in ("-2", "-K"):
        text = f"model M:\n    param pad: nn.ConstantPad2d[1, value={written}]\n"
        assert parse_item(text, fast=True).item is None or parse_item(text, fast=True).diagnostics
        assert [d.code for d in parse_item(text, fast=False).diagnostics] == ["E0003"]
