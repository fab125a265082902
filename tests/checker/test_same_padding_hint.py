"""torch's `nn.Conv2d(..., padding="same")` written as a type's option: the
syntax error at the string says which layer is "same" padding here
(nn.Conv2dSame, nn.Conv1dSame); another string in
the brackets gets no such hint."""

from __future__ import annotations

from quiver.checker import check_text


def _errors(text: str) -> list[tuple[str, str, str]]:
    a = check_text(text)
    return [(d.code, d.message, text[d.span.start : d.span.end]) for d in a.diagnostics if d.code.startswith("E")]


def test_padding_same_points_to_conv2dsame() -> None:
    text = 'model M:\n    param c: nn.Conv2d[3, 8, 3, padding="same"]\n'
    assert _errors(text) == [
        (
            "E0003",
            "expected 'False', a number, an integer, a name or 'True' in the brackets, found a string "
            '(torch\'s padding="same" is its own layer here, nn.Conv2dSame[Ci, Co, K] or nn.Conv1dSame[Ci, Co, K], '
            "which keeps the input's size in its type)",
            '"same"',
        )
    ]


def test_another_string_gets_no_hint() -> None:
    text = 'model M:\n    param c: nn.Conv2d[3, 8, 3, padding="valid"]\n'
    ((code, message, written),) = _errors(text)
    assert (code, written) == ("E0003", '"valid"')
    assert message.endswith("found a string")
