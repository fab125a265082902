"""Every Quiver example in the documentation is checked.

A fenced block in any `docs/*.md` file whose info string starts with `quiver`
is an example, and its info string says what the checker must make of it:

- ```` ```quiver ````: a complete program that checks clean (no diagnostic at all);
- ```` ```quiver E0201 W1101 ````: a program that gives exactly these codes
  (as a multiset: each listed once per time it is reported, nothing else);
- ```` ```quiver fragment ````: a piece of a program (an expression, a
  statement, a signature, a type); it must only be free of syntax errors;
- ```` ```quiver run ````: a complete program that checks clean and that
  tests/test_docs_run.py compiles and runs (its `main()`); when the next block
  is ```` ```text output ````, what it prints must be exactly that block.

Blocks with any other info string (```` ```text ````, ```` ```python ````,
```` ```sh ````) are not checked. Each example is its own test, named after its
file and the line of its opening fence.
"""

from __future__ import annotations

import functools
import re
import textwrap
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from nn_library import LIBRARY

from quiver.checker.workspace import check_example


def check_text(source: str):
    """An example's analysis: `# file:` sections are several files, and
    Quiver's library (`import nn`) is there to import."""
    return check_example(source, LIBRARY)


ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# A fence opens with three or more backticks (or tildes), indented at most three
# spaces, as CommonMark has it; it closes with at least as many of the same.
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
_CODE = re.compile(r"[EW]\d{4}")


@dataclass(frozen=True)
class Example:
    path: Path
    line: int  # 1-based line of the opening fence
    info: str
    source: str
    # a ```text output block right after a `run` example: what it prints
    output: str | None = None

    @property
    def id(self) -> str:
        return f"{self.path.name}:{self.line}"

    @property
    def words(self) -> list[str]:
        return self.info.split()[1:]

    @property
    def is_fragment(self) -> bool:
        return "fragment" in self.words

    @property
    def runs(self) -> bool:
        return "run" in self.words

    @property
    def expected(self) -> Counter:
        return Counter(w for w in self.words if _CODE.fullmatch(w))


def _blocks(path: Path) -> list[tuple[int, str, str]]:
    """(line of the opening fence, info string, content) of each fenced block."""
    out = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, info, indent = m.group("fence"), m.group("info").strip(), len(m.group("indent"))
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = re.match(r"^ {0,3}(`{3,}|~{3,})\s*$", lines[i])
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                break
            line = lines[i]
            # Content lines lose the fence's own indentation, as CommonMark says.
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            i += 1
        out.append((start + 1, info, "\n".join(body) + "\n"))
        i += 1
    return out


def _examples() -> list[Example]:
    found = []
    for path in sorted(DOCS.glob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        blocks = _blocks(path)
        for k, (line, info, source) in enumerate(blocks):
            if info.split()[:1] != ["quiver"]:
                continue
            output = None
            if k + 1 < len(blocks) and blocks[k + 1][1] == "text output":
                end = line + source.count("\n")  # the closing fence's line (1-based)
                between = lines[end : blocks[k + 1][0] - 1]
                if all(not x.strip() for x in between):
                    output = blocks[k + 1][2]
            found.append(Example(path, line, info, source, output))
    return found


EXAMPLES = _examples()


def _show(example: Example, analysis) -> str:
    """The diagnostics, with the doc line each one is on, for failure messages."""
    rows = []
    for d in analysis.diagnostics:
        line = analysis.text.count("\n", 0, d.span.start) + 1
        rows.append(f"  {example.path.name}:{example.line + line}: {d.code} {d.message}")
    return "\n".join(rows) or "  (no diagnostics)"


# Ways to complete a fragment into something that parses: as it is (items, or
# a header whose body follows), inside a function body, as a parameter type.
def _completions(source: str) -> list[str]:
    text = source.rstrip() + "\n"
    body = textwrap.indent(textwrap.dedent(text), "    ")
    return [
        text,
        "fn fragment__():\n" + body,
        text.rstrip() + "\n    pass\n",
        text.rstrip() + ":\n    pass\n",
        "fn fragment__(x: " + text.strip() + "):\n    pass\n",
    ]


def _syntax_codes(analysis) -> list[str]:
    return [d.code for d in analysis.diagnostics if d.code.startswith("E00")]


def test_the_language_reference_has_examples() -> None:
    names = Counter(e.path.name for e in EXAMPLES)
    assert names["language.md"] > 0
    assert names["diagnostics.md"] > 0


def test_info_strings_are_well_formed() -> None:
    for e in EXAMPLES:
        for w in e.words:
            assert w in ("fragment", "run") or _CODE.fullmatch(w), f"{e.id}: unknown word {w!r} in ```{e.info}"
        assert not (e.is_fragment and e.expected), f"{e.id}: a fragment cannot expect codes"
        assert not (e.runs and (e.expected or e.is_fragment)), f"{e.id}: an example that runs checks clean"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example(example: Example) -> None:
    if example.is_fragment:
        tries = [check_text(text) for text in _completions(example.source)]
        for analysis in tries:
            assert not analysis.internal_errors, analysis.internal_errors
        best = min(tries, key=lambda a: len(_syntax_codes(a)))
        assert not _syntax_codes(best), (
            f"{example.id}: the fragment does not parse, however it is completed:\n{_show(example, tries[0])}"
        )
        return
    analysis = check_text(example.source)
    assert not analysis.internal_errors, analysis.internal_errors
    found = Counter(d.code for d in analysis.diagnostics)
    want = example.expected
    assert found == want, (
        f"{example.id}: expected {sorted(want.elements()) or 'no diagnostics'}, "
        f"found {sorted(found.elements()) or 'none'}:\n{_show(example, analysis)}"
    )


# ------------------------------------------------------------------ links


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces
    to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _headings(path: Path) -> list[str]:
    """The text of each Markdown heading outside fenced blocks."""
    inside = set()
    for start, _, content in _blocks(path):
        inside.update(range(start, start + content.count("\n") + 2))
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        m = re.match(r"^#{1,6} (.+)$", line)
        if m and n not in inside:
            out.append(m.group(1))
    return out


@functools.cache
def _anchors(path: Path) -> frozenset[str]:
    """The anchors of a page: its headings' slugs and explicit `<a id>`s."""
    explicit = re.findall(r'<a id="([^"]+)"></a>', path.read_text(encoding="utf-8"))
    return frozenset(explicit) | {_slug(h) for h in _headings(path)}


def _links(path: Path) -> list[tuple[str, str]]:
    """(file, anchor) of each Markdown link to a .md file or to an anchor."""
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        file, _, anchor = target.partition("#")
        out.append((file or path.name, anchor))
    return out


def test_language_reference_links_resolve() -> None:
    page = DOCS / "language.md"
    headings = [_slug(h) for h in _headings(page)]
    repeated = sorted({h for h in headings if headings.count(h) > 1})
    assert not repeated, f"headings with the same anchor: {repeated}"
    for file, anchor in _links(page):
        target = DOCS / file
        if file == "runtime.md" and not target.exists():
            continue  # written separately; the link is for readers
        assert target.exists(), f"language.md links to missing {file}"
        if anchor:
            assert anchor in _anchors(target), f"language.md links to {file}#{anchor}, which does not exist"


def test_readme_links_are_absolute_and_resolve() -> None:
    # the README is the package page too, where a relative link is broken:
    # each link is absolute, and one under the project's URL names a file
    # (and heading) of this checkout
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = project["urls"]["Homepage"] + "/blob/main/"
    links = re.findall(r"\]\(([^)\s]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(links) > 20
    for target in links:
        if target.startswith("#"):
            assert target[1:] in _anchors(ROOT / "README.md"), target
            continue
        assert re.match(r"https?://", target), f"README.md has a relative link: {target}"
        if target.startswith(base):
            file, _, anchor = target[len(base) :].partition("#")
            assert (ROOT / file).exists(), f"README.md links to missing {file}"
            if anchor:
                assert anchor in _anchors(ROOT / file), f"README.md links to {file}#{anchor}, which does not exist"


def test_language_reference_links_every_diagnostic() -> None:
    from quiver.checker.catalog import CODES

    linked = {anchor for file, anchor in _links(DOCS / "language.md") if file == "diagnostics.md"}
    missing = sorted(code for code in CODES if code.lower() not in linked)
    assert not missing, f"docs/language.md never links these codes: {missing}"
