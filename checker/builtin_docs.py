"""Text generated from the built-in specs (checker/builtins/) and the
initializers (checker/initializers.py): the built-in tables of
docs/language.md, its table of initializers, and the TextMate grammar's list
of built-ins (initializers included).
`scripts/gen-builtins` writes both; tests/checker/test_builtins.py checks they
are in sync."""

from __future__ import annotations

import re

from .builtins import BUILTINS, CONSTANTS, INITIALIZERS, MODEL_METHODS
from .initializers import docs_table as initializers_table


def docs_table(group: str) -> str:
    """The markdown table of one group, as docs/language.md lists it."""
    rows = ["| Function | Meaning | Example |", "| --- | --- | --- |"]
    entries: list[tuple[str, str, str]] = []
    specs = [b for b in BUILTINS.values() if b.group == group]
    if group == "other":
        specs += list(MODEL_METHODS.values())
    for b in specs:
        example = f"`{b.example.split(chr(10))[0]}`"
        for sig in b.overloads:
            entries.append((sig, _cell(b.doc, b.note), example))
            example = ""
    if group == "other":
        for text in CONSTANTS.values():
            sig, _, doc = text.partition(" — ")
            entries.append((sig, doc, ""))
    for sig, meaning, example in entries:
        rows.append(f"| `{sig}` | {meaning} | {example} |")
    return "\n".join(rows) + "\n"


_GENERATED = re.compile(
    r"(<!-- generated from checker/builtins/ by scripts/gen-builtins: (\w+) -->\n)"
    r"(.*?)(<!-- end generated -->)",
    re.S,
)


def render_docs(page: str) -> str:
    """docs/language.md with each generated built-in table brought up to date."""
    table = lambda group: initializers_table() if group == "initializers" else docs_table(group)
    return _GENERATED.sub(lambda m: m.group(1) + table(m.group(2)) + m.group(4), page)


def _cell(doc: str, note: str) -> str:
    return (doc + (" " + note if note else "")).replace("|", "\\|")


def grammar_names() -> list[str]:
    """What the TextMate grammar highlights as built-in functions."""
    return sorted(set(BUILTINS) | set(INITIALIZERS))
