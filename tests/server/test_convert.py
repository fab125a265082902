"""The position arithmetic of server/convert.py, in process: every encoding,
every kind of line break, edits that keep the line index up to date."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsp_support import position
from lsprotocol import types as lsp

from quiver.checker.source import LineIndex
from quiver.server.convert import Codec, Lines, apply_change

ALPHABET = st.sampled_from(list("ab \n\r\t#é中🎉𝔘") + ["\r\n"])
TEXT = st.lists(ALPHABET, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.data())
def test_edited_lines_match_a_fresh_scan(text: str, data) -> None:
    lines = Lines(text)
    _ = lines.line_starts  # known, so the edit carries them over
    for _ in range(data.draw(st.integers(1, 5))):
        start = data.draw(st.integers(0, len(lines.text)))
        end = data.draw(st.integers(start, len(lines.text)))
        new = data.draw(TEXT)
        lines = lines.edited(start, end, new)
        assert lines.line_starts == LineIndex(lines.text).line_starts


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(["utf-8", "utf-16", "utf-32"]), st.data())
def test_offsets_and_positions_round_trip(text: str, encoding: str, data) -> None:
    codec = Codec(encoding)
    lines = Lines(text)
    offset = data.draw(st.integers(0, len(text)))
    if text[offset - 1 : offset + 1] == "\r\n":
        offset -= 1  # between the two characters of a line break is no position
    pos = codec.position(lines, offset)
    if "\r" not in text:  # the test's own reference splits at \n only
        assert pos == position(text, offset, encoding)
    assert codec.offset(lines, pos) == offset


def test_positions_past_the_end() -> None:
    codec = Codec("utf-16")
    lines = Lines("ab\ncd")
    assert codec.offset(lines, lsp.Position(1, 99)) == 5  # the end of its line
    assert codec.offset(lines, lsp.Position(0, 99)) == 2
    assert codec.offset(lines, lsp.Position(2, 0)) is None


def test_a_position_inside_a_character_is_at_its_start() -> None:
    lines = Lines("🎉x")
    assert Codec("utf-16").offset(lines, lsp.Position(0, 1)) == 0
    assert Codec("utf-16").offset(lines, lsp.Position(0, 2)) == 1
    assert Codec("utf-8").offset(lines, lsp.Position(0, 3)) == 0
    assert Codec("utf-8").offset(lines, lsp.Position(0, 4)) == 1


def test_changes_apply_in_the_clients_encoding() -> None:
    lines = Lines('s = "🎉"\nt = 1\n')
    change = lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(0, 7), lsp.Position(0, 7)), text="中")
    assert apply_change(lines, Codec("utf-16"), change).text == 's = "🎉中"\nt = 1\n'
    change = lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(0, 9), lsp.Position(0, 9)), text="中")
    assert apply_change(lines, Codec("utf-8"), change).text == 's = "🎉中"\nt = 1\n'
    whole = lsp.TextDocumentContentChangeWholeDocument(text="x")
    assert apply_change(lines, Codec("utf-16"), whole).text == "x"


def test_markdown_or_plain_text() -> None:
    from quiver.server.convert import markup

    md = "```quiver\n(local) g: Grad[Mlp]\n```\n\n**Param reads** of `m: Mlp`"
    assert markup(md, ["markdown", "plaintext"]) == lsp.MarkupContent(lsp.MarkupKind.Markdown, md)
    assert markup(md, ["plaintext"]) == lsp.MarkupContent(
        lsp.MarkupKind.PlainText, "(local) g: Grad[Mlp]\n\nParam reads of m: Mlp"
    )
    assert markup(md, None).kind == lsp.MarkupKind.Markdown


def test_settings() -> None:
    from quiver.server.settings import Settings, parse

    s, problems = parse(
        {
            "quiver": {
                "diagnostics": {"debounceMs": 40, "mode": "pull"},
                "run": {"timeoutSeconds": 2},
                "inlayHints": {"enabled": False},
                "unknown": 1,
            }
        }
    )
    assert (s.diagnostics.debounce_ms, s.diagnostics.mode, s.run.timeout_seconds, s.inlay_hints, s.code_lens) == (
        40,
        "pull",
        2.0,
        False,
        True,
    ) and problems == []
    s, problems = parse(
        {"diagnostics": {"debounceMs": True, "mode": "sometimes"}, "run": "fast", "codeLens": {"enabled": 1}}
    )
    assert s == Settings()
    assert problems == [
        "quiver.diagnostics.debounceMs must be a number of milliseconds in 0..10000, found True",
        "quiver.diagnostics.mode must be one of both, push, pull, found 'sometimes'",
        "quiver.run must be an object",
        "quiver.codeLens.enabled must be true or false, found 1",
    ]
    assert parse(None) == (Settings(), [])
    assert parse([1]) == (Settings(), ["quiver settings must be an object, found list"])
    s, problems = parse({"run": {"nproc": 4}})
    assert (s.run.nproc, problems) == (4, [])
    assert parse({"run": {"nproc": 2.0}})[0].run.nproc == 2  # JSON numbers may arrive as floats
    for bad in (0, True, 1.5, "2", 257):
        s, problems = parse({"run": {"nproc": bad}})
        assert s.run.nproc == 1
        assert problems == [f"quiver.run.nproc must be a whole number of processes in 1..256, found {bad!r}"]
    # later settings start from the earlier ones
    first, _ = parse({"run": {"timeoutSeconds": 5}})
    second, _ = parse({"inlayHints": {"enabled": False}}, first)
    assert (second.run.timeout_seconds, second.inlay_hints) == (5.0, False)


def test_run_settings_timeout_and_args() -> None:
    from quiver.server.settings import Settings, parse

    assert Settings().run.timeout_seconds is None  # no timeout by default
    assert Settings().run.args == ()
    five, _ = parse({"run": {"timeoutSeconds": 5}})
    for none in (0, 0.0, None):  # 0 or null: no timeout, also over an earlier value
        s, problems = parse({"run": {"timeoutSeconds": none}}, five)
        assert (s.run.timeout_seconds, problems) == (None, [])
    assert parse({"run": {"timeoutSeconds": 0.5}})[0].run.timeout_seconds == 0.5
    for bad in (-4, True, "300", float("inf")):
        s, problems = parse({"run": {"timeoutSeconds": bad}}, five)
        assert s.run.timeout_seconds == 5.0
        assert problems == [
            f"quiver.run.timeoutSeconds must be a number of seconds (0 or null: no timeout), found {bad!r}"
        ]
    s, problems = parse({"run": {"args": ["--lr", "1e-3", "--name", "a b"]}})
    assert (s.run.args, problems) == (("--lr", "1e-3", "--name", "a b"), [])
    assert parse({"run": {"args": None}}, s)[0].run.args == ()
    for bad in ("--lr 1e-3", ["--steps", 10], {"lr": 1}):
        s, problems = parse({"run": {"args": bad}})
        assert (s.run.args, problems) == ((), [f"quiver.run.args must be a list of strings, found {bad!r}"])


def test_the_extensions_run_settings_match_the_servers() -> None:
    import json
    from pathlib import Path

    from quiver.server.settings import MAX_NPROC, RunSettings

    manifest = json.loads((Path(__file__).resolve().parents[2] / "vscode-extension" / "package.json").read_text())
    props = manifest["contributes"]["configuration"]["properties"]
    nproc = props["quiver.run.nproc"]
    assert (nproc["type"], nproc["default"], nproc["minimum"], nproc["maximum"]) == (
        "integer",
        RunSettings().nproc,
        1,
        MAX_NPROC,
    )
    timeout = props["quiver.run.timeoutSeconds"]
    assert timeout["default"] == RunSettings().timeout_seconds is None
    assert (timeout["type"], timeout["minimum"]) == (["number", "null"], 0)
    args = props["quiver.run.args"]
    assert (args["type"], args["items"], args["default"], args["scope"]) == (
        "array",
        {"type": "string"},
        list(RunSettings().args),
        "resource",
    )
