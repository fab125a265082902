"""The one table of initializers (checker/initializers.py): the checker, the
compiler, hover, completion, semantic tokens, the TextMate grammar and the
docs all read it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from quiver.checker import builtin_docs, check_text, ide
from quiver.checker.initializers import INITIALIZERS, docs_table

ROOT = Path(__file__).resolve().parents[2]

SRC = """dim D = 4
dim H = 3

model Lin:
    param w: [D H] = kaiming_uniform(a=sqrt(5.0))
    param b: [H] = zeros
"""


def test_the_table_holds_every_initializer() -> None:
    assert list(INITIALIZERS) == [
        "zeros",
        "ones",
        "normal",
        "uniform",
        "xavier",
        "xavier_uniform",
        "xavier_normal",
        "kaiming_uniform",
        "kaiming_normal",
        "orthogonal",
        "trunc_normal",
    ]
    for init in INITIALIZERS.values():
        assert init.signature.startswith(init.name) and init.doc.endswith(".")
        # each example checks clean in a float field of two dims
        src = SRC.replace("kaiming_uniform(a=sqrt(5.0))", init.example)
        assert check_text(src).diagnostics == [], init.name


def test_hover_on_an_initializer() -> None:
    for into in (0, 5, len("kaiming_uniform")):  # on the name, and right after it
        offset = SRC.index("kaiming_uniform") + into
        h = ide.hover(check_text(SRC), offset)
        assert h is not None
        assert SRC[h.span.start : h.span.end] == "kaiming_uniform"
        assert h.markdown.startswith('```quiver\nkaiming_uniform(a=0.0, mode="fan_in", nonlinearity="leaky_relu")\n```')
        assert "He uniform" in h.markdown
    h = ide.hover(check_text(SRC), SRC.index("zeros") + 1)
    assert h is not None and "Every value 0." in h.markdown


def test_completion_at_a_field_initializer() -> None:
    src = SRC.replace("kaiming_uniform(a=sqrt(5.0))", "kai")
    labels = [c.label for c in ide.completions(check_text(src), src.index("kai") + 3)]
    assert labels == list(INITIALIZERS)
    item = next(c for c in ide.completions(check_text(src), src.index("kai") + 3) if c.label == "kaiming_uniform")
    assert item.kind == "builtin" and item.detail == INITIALIZERS["kaiming_uniform"].signature
    # the field's type still completes types, not initializers
    src = SRC.replace("[D H] = kaiming_uniform(a=sqrt(5.0))", "[D")
    assert "kaiming_uniform" not in [c.label for c in ide.completions(check_text(src), src.index("[D") + 2)]


def test_semantic_tokens_mark_an_initializer_as_a_builtin() -> None:
    a = check_text(SRC)
    tokens = {SRC[t.span.start : t.span.end]: (t.type, t.modifiers) for t in ide.semantic_tokens(a)}
    assert tokens["kaiming_uniform"] == ("function", ("defaultLibrary",))
    assert tokens["zeros"] == ("function", ("defaultLibrary",))
    starts = [t.span.start for t in ide.semantic_tokens(a)]
    assert starts == sorted(starts)


def test_the_grammar_highlights_every_initializer() -> None:
    grammar = (ROOT / "vscode-extension" / "syntaxes" / "quiver.tmLanguage.json").read_text()
    match = re.search(r'"match": "\\\\b\(\?:([^"]*)\)\\\\b",\s*"name": "support\.function\.builtin\.quiver"', grammar)
    assert match is not None
    names = match.group(1).split("|")
    assert set(INITIALIZERS) <= set(names)
    assert names == builtin_docs.grammar_names()
    json.loads(grammar)


def test_the_docs_table_lists_every_initializer() -> None:
    page = (ROOT / "docs" / "language.md").read_text()
    assert "scripts/gen-builtins: initializers -->\n" + docs_table() in page
