"""Issue 37 item 10b: a bidirectional control (U+202A-U+202E, U+2066-U+2069)
in a string or a comment is W0001 at that character, naming its code point,
with a quick fix that removes it (CVE-2021-42574: rustc, gcc and clang warn
too); anywhere else it is no token, E0002, and nothing more."""

from __future__ import annotations

import pytest

from quiver.checker import Analyzer, check_text, ide
from quiver.checker.ast import Span

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"
MESSAGE = "{code} ({name}) in a {where}: it changes the order in which the text after it is shown"


def found(text: str) -> list[tuple[str, int, int, str]]:
    analysis = check_text(text)
    assert not analysis.internal_errors
    return [(d.code, d.span.start, d.span.end, d.message) for d in analysis.diagnostics]


@pytest.mark.parametrize("control", [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]])
def test_every_control_in_a_comment_is_w0001(control: str) -> None:
    import unicodedata

    text = f"dim D = 4  # is {control}admin\n"
    at = text.index(control)
    code = f"U+{ord(control):04X}"
    assert found(text) == [
        ("W0001", at, at + 1, MESSAGE.format(code=code, name=unicodedata.name(control).lower(), where="comment"))
    ]


def test_in_strings_f_strings_and_comment_chunks() -> None:
    text = (
        f"# header {LRI}x{PDI}\n"
        "fn main():\n"
        f'    s = "user{RLO} "\n'
        f"    t = f'{{s}}{RLO}'\n"
        f'    print(s, t)  # "{RLO}" ends here\n'
    )
    got = found(text)
    starts = [i for i, c in enumerate(text) if c in (RLO, LRI, PDI)]
    assert [(c, s, e) for c, s, e, _ in got] == [("W0001", s, s + 1) for s in starts]
    assert [m.split(" in a ")[1].split(":")[0] for *_, m in got] == [
        "comment",
        "comment",
        "string",
        "string",
        "comment",
    ]
    assert got[0][3] == MESSAGE.format(code="U+2066", name="left-to-right isolate", where="comment")
    assert got[2][3] == MESSAGE.format(code="U+202E", name="right-to-left override", where="string")


def test_outside_strings_and_comments_it_is_e0002_alone() -> None:
    text = f"dim D{RLO} = 4\n"
    assert found(text) == [("E0002", 5, 6, "unexpected character U+202E")]


def test_both_parsers_report_it() -> None:
    """The fast path parses this item, lark the one with a syntax error: the
    warning comes from the item's text either way."""
    text = f'fn main():\n    print("a{RLO}")\n\nfn broken(:\n    print("b{RLO}")\n'
    got = found(text)
    w = [(s, e) for c, s, e, _ in got if c == "W0001"]
    firsts = [i for i, c in enumerate(text) if c == RLO]
    assert w == [(firsts[0], firsts[0] + 1), (firsts[1], firsts[1] + 1)]
    assert any(c.startswith("E00") for c, *_ in got)


def test_the_quick_fix_removes_the_character_and_the_warning() -> None:
    text = f'fn main():\n    print("ok")  # {RLO}done\n'
    analysis = check_text(text)
    (d,) = analysis.diagnostics
    assert d.fix is not None and d.fix.title == "Remove U+202E"
    (edit,) = d.fix.edits
    assert (edit.span, edit.new_text) == (Span(d.span.start, d.span.end), "")
    titles = [a.title for a in ide.code_actions(analysis, d.span)]
    assert titles[0] == "Remove U+202E"
    fixed = text[: edit.span.start] + text[edit.span.end :]
    assert check_text(fixed).diagnostics == []


def test_a_suppression_comment_silences_it() -> None:
    text = f'fn main():\n    print("{RLO}")  # qlint: ignore[W0001]\n'
    assert found(text) == []


def test_an_edit_keeps_the_warning_where_the_character_is() -> None:
    """Incremental: the warning moves with its item, and goes when the character does."""
    a = Analyzer()
    text = f"dim D = 4\n\nfn main():\n    print(1)  # {RLO}\n"
    first = a.update(text)
    assert [d.span.start for d in first.diagnostics] == [text.index(RLO)]
    moved = "dim E = 5\n" + text
    assert [d.span.start for d in a.update(moved).diagnostics] == [moved.index(RLO)]
    assert a.update(moved.replace(RLO, "")).diagnostics == []
