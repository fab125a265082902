"""How many of the bugs PyTorch users really make does the checker catch
(issue 24)? A measuring stick, independent of the rules it measures.

    .venv/bin/python bench/planted_bugs.py [--json] [--corpus DIR]

The corpus is in tests/corpus/:

- planted/*.qv: small programs ported from real PyTorch programs, each with
  exactly one planted bug, marked on the line where a diagnostic should
  point with a trailing `# BUG(legal): ...` (every shape still lines up),
  `# BUG(shape): ...` (a shape bug, which the checker should already catch
  as an error) or `# BUG(shape-missed): ...` (a shape bug it does not catch
  yet). The comment line directly above it is `# FIX: <the corrected line>`:
  with that line put in place of the bug (at the bug line's indentation),
  the program checks with no diagnostic at all.
- clean/*.qv: correct programs that a naive rule could flag; every
  diagnostic on them is a false positive.

Each file is checked in-process as qlint checks it: through a workspace of
its folder over the disk (so `import nn` finds Quiver's own library), with
the text given as an overlay. A planted bug is *caught* when a diagnostic,
error or warning, starts on its line; *caught elsewhere* when the file has
diagnostics but none starts there; *missed* when it has none.

The table goes to stdout, one row per planted file, then every diagnostic
on the clean corpus, then the totals; `--json` prints the same as one JSON
object instead (each bug's description and diagnostics included). Exit
status 2 when a planted file breaks the conventions above.

bench/results/planted_bugs_before.txt is the report at the checker before
issue 24's rules (W04xx-W09xx).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from quiver.checker.workspace import Workspace
from quiver.host import normal_path, workspace_for

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"

KINDS = ("legal", "shape", "shape-missed")
BUG = re.compile(r"#\s*BUG\((?P<kind>[a-z-]+)\):\s*(?P<what>.*?)\s*$")
FIX = re.compile(r"^(?P<indent>\s*)#\s*FIX:\s?(?P<code>.*?)\s*$")


class CorpusError(Exception):
    """A planted file that does not follow the conventions above."""


@dataclass(frozen=True)
class Planted:
    path: Path
    text: str
    line: int  # 1-based: the BUG line
    kind: str  # one of KINDS
    what: str  # the BUG comment's description
    fix: str  # the corrected line, without indentation

    @property
    def legal(self) -> bool:
        return self.kind == "legal"

    def fixed_text(self) -> str:
        """The program with the bug line replaced by the FIX line, at the bug
        line's indentation; every other line, the FIX comment included, stays."""
        lines = self.text.splitlines(keepends=True)
        bug = lines[self.line - 1]
        indent = bug[: len(bug) - len(bug.lstrip())]
        ending = bug[len(bug.rstrip("\r\n")) :]
        lines[self.line - 1] = indent + self.fix + ending
        return "".join(lines)


def read_planted(path: Path) -> Planted:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    bugs = [(i, m) for i, line in enumerate(lines) if (m := BUG.search(line))]
    if len(bugs) != 1:
        raise CorpusError(f"{path.name}: {len(bugs)} BUG markers, expected exactly one")
    i, m = bugs[0]
    if m.group("kind") not in KINDS:
        raise CorpusError(f"{path.name}:{i + 1}: BUG({m.group('kind')}): the kind is one of {', '.join(KINDS)}")
    if lines[i].lstrip().startswith("#"):
        raise CorpusError(f"{path.name}:{i + 1}: the BUG marker trails a line of code, not a comment line")
    fixes = [j for j, line in enumerate(lines) if FIX.match(line)]
    above = FIX.match(lines[i - 1]) if i > 0 else None
    if above is None or fixes != [i - 1]:
        raise CorpusError(f"{path.name}:{i + 1}: expected exactly one `# FIX: ...` line, directly above the BUG line")
    if above.group("indent") != lines[i][: len(lines[i]) - len(lines[i].lstrip())]:
        raise CorpusError(f"{path.name}:{i}: the FIX line is not indented as the BUG line is")
    return Planted(path, text, i + 1, m.group("kind"), m.group("what"), above.group("code"))


@dataclass(frozen=True)
class Found:
    code: str
    line: int  # 1-based
    column: int  # 1-based
    message: str


def diagnostics(path: Path, text: str, workspace: Workspace | None = None) -> list[Found]:
    """The diagnostics of `text` as the file at `path`, checked as qlint
    checks that file (its imports resolved from its folder and Quiver's
    library), sorted by position."""
    key = normal_path(str(path))
    ws = workspace if workspace is not None else workspace_for([str(path.parent)])
    ws.set_overlay(key, text)
    try:
        analysis = ws.analyze(key)
    finally:
        ws.set_overlay(key, None)
    assert analysis is not None, key
    out = []
    for d in analysis.diagnostics:
        p = analysis.lines.position(d.span.start)
        out.append(Found(d.code, p.line + 1, p.column + 1, d.message))
    return sorted(out, key=lambda f: (f.line, f.column, f.code))


@dataclass
class BugResult:
    file: str
    kind: str
    line: int
    what: str
    outcome: str  # "caught", "elsewhere" or "missed"
    codes_on_line: list[str] = field(default_factory=list)
    codes_elsewhere: list[str] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)


@dataclass
class CleanResult:
    file: str
    diagnostics: list[dict] = field(default_factory=list)


def measure_bug(case: Planted, workspace: Workspace | None = None) -> BugResult:
    found = diagnostics(case.path, case.text, workspace)
    on = [f.code for f in found if f.line == case.line]
    off = [f.code for f in found if f.line != case.line]
    outcome = "caught" if on else "elsewhere" if off else "missed"
    return BugResult(case.path.name, case.kind, case.line, case.what, outcome, on, off, [asdict(f) for f in found])


def planted_files(corpus: Path) -> list[Path]:
    return sorted((corpus / "planted").glob("*.qv"))


def clean_files(corpus: Path) -> list[Path]:
    return sorted((corpus / "clean").glob("*.qv"))


def measure(corpus: Path = CORPUS) -> dict:
    bugs = []
    ws = workspace_for([str(corpus / "planted")])
    for path in planted_files(corpus):
        bugs.append(measure_bug(read_planted(path), ws))
    cleans = []
    ws = workspace_for([str(corpus / "clean")])
    for path in clean_files(corpus):
        found = diagnostics(path, path.read_text(encoding="utf-8"), ws)
        cleans.append(CleanResult(path.name, [asdict(f) for f in found]))
    return {"bugs": [asdict(b) for b in bugs], "clean": [asdict(c) for c in cleans], "totals": totals(bugs, cleans)}


def totals(bugs: list[BugResult], cleans: list[CleanResult]) -> dict:
    def count(kinds: tuple[str, ...], outcome: str | None = None) -> int:
        return sum(1 for b in bugs if b.kind in kinds and (outcome is None or b.outcome == outcome))

    legal, shape = ("legal",), ("shape", "shape-missed")
    return {
        "bugs": len(bugs),
        "caught": count(legal + shape, "caught"),
        "legal": count(legal),
        "legal_caught": count(legal, "caught"),
        "shape": count(shape),
        "shape_caught": count(shape, "caught"),
        "elsewhere": count(legal + shape, "elsewhere"),
        "legal_elsewhere": count(legal, "elsewhere"),
        "shape_elsewhere": count(shape, "elsewhere"),
        "missed": count(legal + shape, "missed"),
        "legal_missed": count(legal, "missed"),
        "shape_missed": count(shape, "missed"),
        "clean_programs": len(cleans),
        "false_positives": sum(len(c.diagnostics) for c in cleans),
        "false_positive_programs": sum(1 for c in cleans if c.diagnostics),
    }


def table(result: dict) -> str:
    rows = [("file", "kind", "line", "outcome", "codes on the line", "codes elsewhere")]
    for b in result["bugs"]:
        rows.append(
            (
                b["file"],
                b["kind"],
                str(b["line"]),
                b["outcome"],
                " ".join(b["codes_on_line"]) or "-",
                " ".join(b["codes_elsewhere"]) or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    fps = [c for c in result["clean"] if c["diagnostics"]]
    out.append("")
    if fps:
        out.append("false positives on the clean corpus:")
        for c in fps:
            for d in c["diagnostics"]:
                out.append(f"  {c['file']}:{d['line']}:{d['column']}: {d['code']} {d['message']}")
        out.append("")
    t = result["totals"]
    out.append(
        f"caught {t['caught']}/{t['bugs']} (legal {t['legal_caught']}/{t['legal']}, shape {t['shape_caught']}/{t['shape']}), "
        f"caught elsewhere {t['elsewhere']} (legal {t['legal_elsewhere']}, shape {t['shape_elsewhere']}), "
        f"missed {t['missed']} (legal {t['legal_missed']}, shape {t['shape_missed']}), "
        f"false positives on clean corpus: {t['false_positives']} in {t['false_positive_programs']} programs "
        f"(of {t['clean_programs']})"
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the folder holding planted/ and clean/")
    args = ap.parse_args(argv)
    try:
        result = measure(args.corpus)
    except CorpusError as e:
        print(f"planted_bugs: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
