"""docs/diagnostics.md, generated from the diagnostic catalog (checker/catalog.py):
`scripts/gen-diagnostics-doc` writes it, tests/checker/test_catalog.py checks it
is in sync, and the server writes it into the user's cache when the package has
no docs folder."""

from __future__ import annotations

import string

from .catalog import CODES, Code

# The line before a code's variants, in `qlint --explain` and the docs page.
VARIANTS_INTRO = "The detail is one of:"

_RANGES = [
    ("E00", "Syntax"),
    ("E01", "Names and scopes"),
    ("E02", "Shapes and dims"),
    ("E03", "Types and element types"),
    ("E04", "Calls and bindings"),
    ("E05", "Mutability"),
    ("E09", "Models"),
    ("E10", "Pretrained weights and tokenizers"),
    ("E11", "Gradients"),
    ("E12", "Optimizers and schedules"),
    ("W", "Warnings"),
]


def variant_texts(code: Code) -> list[tuple[str, str]]:
    """The named variants of a code's free detail (`Code.say`), each text
    with its placeholders written as `<name>`."""
    return [(name, _with_slots(template)) for name, template in code.variants]


def _with_slots(template: str) -> str:
    parts = string.Formatter().parse(template)
    return "".join(text + (f"<{field}>" if field is not None else "") for text, field, _, _ in parts)


def _code_span(text: str) -> str:
    """`text` as inline code, even when it holds a backtick."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render_markdown() -> str:
    """docs/diagnostics.md, generated from this table (tests keep it in sync:
    regenerate with `scripts/gen-diagnostics-doc`)."""
    out = [
        "# Diagnostics",
        "",
        "Every diagnostic Quiver reports, generated from `checker/catalog.py`. "
        "`qlint --explain CODE` prints the same text. Each example triggers exactly its code; "
        "each fix checks clean (tests/checker/test_catalog.py).",
        "",
    ]
    for prefix, title in _RANGES:
        codes = [c for c in CODES.values() if c.code.startswith(prefix)]
        out.append(
            f"- [{title}](#{title.lower().replace(' ', '-')}): "
            + ", ".join(f"[{c.code}](#{c.docs_anchor})" for c in codes)
        )
    out.append("")
    for prefix, title in _RANGES:
        out += [f"## {title}", ""]
        if prefix == "W":
            out += [
                "A warning is silenced on one line by a comment at the end of it, "
                "`# qlint: ignore[W0202]` (codes separated by commas; a bare `# qlint: ignore` silences "
                "every warning of the line; `# quiver: ignore[...]` is the same), and for a whole run by "
                "`qlint --ignore CODE` or `ignore = [...]` under `[tool.quiver]` in pyproject.toml. A warning "
                "over several lines is silenced at the line where it starts or the one where it ends. Errors "
                "are never silenced, and a suppression that silences nothing is W0105.",
                "",
            ]
        for c in (c for c in CODES.values() if c.code.startswith(prefix)):
            out += [
                f'<a id="{c.docs_anchor}"></a>',
                f"### {c.code}: {c.title}",
                "",
                f"Severity: {c.severity.value}. Message: `{c.message}`",
                "",
                c.explanation,
                "",
                *_variants_markdown(c),
                "Example:",
                "",
                # The info string names the codes the block triggers; the docs
                # tests check it. E0001's example is bytes, and E0011's is
                # shortened for reading: text, checked by the catalog's tests.
                f"```{c.example_language}"
                if c.example_language != "quiver"
                else "```text"
                if c.example_text != c.example or c.example_stands_for
                else f"```quiver {c.code}",
                c.example_text.rstrip("\n"),
                "```",
                "",
            ]
            if c.fixed is not None:
                out += ["Fixed:", "", f"```{c.example_language}", c.fixed.rstrip("\n"), "```", ""]
    return "\n".join(out)


def _variants_markdown(c: Code) -> list[str]:
    if not c.variants:
        return []
    items = [f"- {_code_span(name)}: {_code_span(text)}" for name, text in variant_texts(c)]
    return [VARIANTS_INTRO, "", *items, ""]
