"""qlint: check .qv files from the command line or CI.

    qlint [PATH ...] [--format text|pretty|json|sarif|github] [--select CODES]
          [--ignore CODES] [--strict] [--fix [--diff]] [--explain CODE] [--list-codes]

Directories are searched for *.qv (hidden folders, node_modules and
__pycache__ are skipped, and so, with a note, are *.qv entries that are not
regular files: FIFOs, devices, sockets, broken links; and symbolic links that
lead out of the folder: the folder is untrusted, and nothing outside it is
read). `-` reads standard input. A file must be a regular file of at most 10 MiB (driver/inputs.py); one
given by name that is not, or that cannot be read, is reported ("cannot read
PATH: why"), counted in the summary, and makes the exit status 2. Exit status:
0 when no errors were found (warnings too with --strict), 1 when some were, 2
for a usage error (an empty --select, --ignore or --explain too), a file that
cannot be read, or an internal failure (a one-line message, never a traceback).

Formats: `text` is one line per diagnostic, `path:line:col: CODE message`, sorted
by path, line and column; `pretty` renders each diagnostic with its source line
underlined, like rustc, and is the default on a terminal. Lines and columns are
1-based; columns count characters. The summary goes to stderr.

Settings: `select`, `ignore` and `strict` under `[tool.quiver]` in the nearest
pyproject.toml (driver/config.py); an option given on the command line
replaces the setting. `--fix` applies the checker's quick fixes in place
(driver/fix.py) and reports what remains; with `--diff` it prints the change
as a unified diff instead (exit 1 when there is one).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import multiprocessing
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from quiver.checker import catalog
from quiver.checker.catalog_docs import VARIANTS_INTRO, variant_texts
from quiver.checker.diagnostics import Diagnostic
from quiver.checker.source import LineIndex, decode_source
from quiver.checker.workspace import DecodedText, Workspace

from . import config as qconfig
from . import fix as qfix
from . import inputs
from .cache import ResultCache, key_for
from .host import DiskHost, normal_path, workspace_for
from .inputs import is_regular, read_source
from .report import diagnostic_line, location

if TYPE_CHECKING:  # the analysis is imported only when a file is not in the cache
    from quiver.checker.analysis import Analysis

SKIP_DIRS = {"node_modules", "__pycache__"}
# Where docs/diagnostics.md is published: SARIF's helpUri of a code is this
# with the code's anchor (#e0201). The one place to change when the project
# moves.
DOCS_URL = "https://github.com/quiver-lang/quiver/blob/main/docs/diagnostics.md"
FORMATS = ("text", "pretty", "json", "sarif", "github")


@dataclass(frozen=True)
class Checked:
    """What the output needs of a checked file: its text and line index
    (an `Analysis` has both; so does a result read from the cache)."""

    text: str
    lines: LineIndex


@dataclass(frozen=True)
class Finding:
    path: str
    analysis: Analysis | Checked
    diagnostic: Diagnostic

    @property
    def start(self):
        return self.analysis.lines.position(self.diagnostic.span.start)

    @property
    def end(self):
        return self.analysis.lines.position(self.diagnostic.span.end)

    def sort_key(self):
        p = self.start
        return (self.path, p.line, p.column, self.diagnostic.code)


class UsageError(Exception):
    pass


def find_files(paths: list[str], skipped: list[tuple[str, str]] | None = None, follow_links: bool = True) -> list[str]:
    """The files to check: each path that is not a folder as given, and the
    *.qv regular files under each folder. A *.qv entry of a folder that is
    not a regular file (a FIFO, a device, a socket, a broken link), or is a
    symbolic link that leads out of the folder given (the folder is
    untrusted: `tok.qv -> ~/token.txt`), is left out and appended to
    `skipped` with the reason; without `follow_links`, so is every link
    (`quiver fmt` never writes through one). Links to folders are never
    followed."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
                for f in files:
                    if f.endswith(".qv"):
                        full = os.path.join(root, f)
                        reason = _unwalkable(full, p, follow_links)
                        if reason is None:
                            found.append(full)
                        elif skipped is not None:
                            skipped.append((full, reason))
            out.extend(sorted(found))
        else:
            out.append(p)
    return out


def _unwalkable(path: str, folder: str, follow_links: bool) -> str | None:
    if os.path.islink(path):
        if not follow_links:
            return "a symbolic link (files are only written in place, never through a link)"
        if inputs.escapes(path, folder):
            return f"a symbolic link that leads out of {folder}"
    return None if is_regular(path) else "not a regular file"


def parse_codes(values: list[str] | None, flag: str = "--select") -> list[str]:
    codes: list[str] = []
    for v in values or []:
        if not v.strip(" ,"):
            raise UsageError(f"{flag} needs a code or prefix, such as E01 or W0101 (see qlint --list-codes)")
        for c in v.split(","):
            c = c.strip().upper()
            if not c:
                continue
            if not any(k.startswith(c) for k in catalog.CODES):
                raise UsageError(f"no diagnostic code matches '{c}' (see qlint --list-codes)")
            codes.append(c)
    return codes


def selected(code: str, select: list[str], ignore: list[str]) -> bool:
    return qconfig.Config(select=tuple(select), ignore=tuple(ignore)).shows(code)


# ------------------------------------------------------------------ formats


def format_text(findings: list[Finding]) -> str:
    return "".join(diagnostic_line(f.path, f.analysis.lines, f.diagnostic) + "\n" for f in findings)


def format_json(findings: list[Finding]) -> str:
    out = []
    for f in findings:
        s, e = f.start, f.end
        out.append(
            {
                "path": f.path,
                "line": s.line + 1,
                "col": s.column + 1,
                "end_line": e.line + 1,
                "end_col": e.column + 1,
                "code": f.diagnostic.code,
                "severity": f.diagnostic.severity.value,
                "message": f.diagnostic.message,
            }
        )
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _region(a: Analysis | Checked, span) -> dict:
    s, e = a.lines.position(span.start), a.lines.position(span.end)
    return {"startLine": s.line + 1, "startColumn": s.column + 1, "endLine": e.line + 1, "endColumn": e.column + 1}


def format_sarif(findings: list[Finding]) -> str:
    used = sorted({f.diagnostic.code for f in findings})
    rules = []
    for code in used:
        c = catalog.CODES[code]
        rules.append(
            {
                "id": code,
                "name": c.title.replace(" ", "-"),
                "shortDescription": {"text": c.title},
                "fullDescription": {"text": c.explanation},
                "helpUri": f"{DOCS_URL}#{c.docs_anchor}",
                "defaultConfiguration": {"level": "error" if c.severity.value == "error" else "warning"},
            }
        )
    index = {code: i for i, code in enumerate(used)}
    results = []
    for f in findings:
        d = f.diagnostic
        loc = {
            "physicalLocation": {
                "artifactLocation": {"uri": f.path.replace(os.sep, "/")},
                "region": _region(f.analysis, d.span),
            }
        }
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": d.severity.value,
            "message": {"text": d.message},
            "locations": [loc],
        }
        if d.related:
            result["relatedLocations"] = [
                {
                    "id": i,
                    "message": {"text": r.message},
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path.replace(os.sep, "/")},
                        "region": _region(f.analysis, r.span),
                    },
                }
                for i, r in enumerate(d.related)
            ]
        results.append(result)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "qlint", "informationUri": DOCS_URL, "rules": rules}},
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_github(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        s, e = f.start, f.end
        kind = "error" if f.diagnostic.is_error else "warning"
        props = (
            f"file={_gh_escape(f.path, True)},line={s.line + 1},col={s.column + 1},"
            f"endLine={e.line + 1},endColumn={e.column + 1},title={_gh_escape(f.diagnostic.code, True)}"
        )
        lines.append(f"::{kind} {props}::{_gh_escape(f.diagnostic.code + ' ' + f.diagnostic.message)}")
    return "\n".join(lines) + ("\n" if lines else "")


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


def format_pretty(findings: list[Finding], color: bool) -> str:
    st = _Style(color)
    out = []
    for f in findings:
        d = f.diagnostic
        a = f.analysis
        kind = "error" if d.is_error else "warning"
        head = st(f"{kind}[{d.code}]", "1;31" if d.is_error else "1;33")
        out.append(f"{head}{st(': ' + d.message, '1')}")
        out.extend(_snippet(f.path, a, d.span, st, "^", "1;31" if d.is_error else "1;33"))
        for r in d.related:
            out.append(f"{st('note', '1;36')}: {r.message}")
            out.extend(_snippet(f.path, a, r.span, st, "-", "1;36"))
        out.append(f"   {st('= help', '1')}: qlint --explain {d.code}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def _snippet(path: str, a: Analysis | Checked, span, st: _Style, mark: str, color: str) -> list[str]:
    s, e = a.lines.position(span.start), a.lines.position(span.end)
    width = len(str(s.line + 1))
    bar = st(" " * width + " |", "1;34")
    text = a.lines.line_text(s.line).replace("\t", " ")
    end_col = e.column if e.line == s.line else len(text)
    count = max(1, end_col - s.column)
    return [
        f"{' ' * width}{st('-->', '1;34')} {location(path, s.line + 1, s.column + 1)}",
        bar,
        f"{st(str(s.line + 1) + ' |', '1;34')} {text}",
        f"{bar} {' ' * s.column}{st(mark * count, color)}",
    ]


def explain(code: str) -> str:
    if not code.strip():
        raise UsageError("--explain needs a diagnostic code, such as E0101 (see qlint --list-codes)")
    c = catalog.get(code.strip())
    if c is None:
        raise UsageError(f"unknown diagnostic code '{code}' (see qlint --list-codes)")
    indent = lambda s: "\n".join(("    " + line) if line else "" for line in s.rstrip().splitlines())
    parts = [f"{c.code}: {c.title} ({c.severity.value})", "", c.explanation, ""]
    if c.variants:
        width = max(len(name) for name, _ in c.variants)
        listed = "\n".join(f"{name.ljust(width)}  {text}" for name, text in variant_texts(c))
        parts += [VARIANTS_INTRO, "", indent(listed), ""]
    parts += ["Example:", "", indent(c.example_text)]
    if c.fixed is not None:
        parts += ["", "Fixed:", "", indent(c.fixed)]
    return "\n".join(parts) + "\n"


def show_settings(
    conf: qconfig.Config, roots: tuple[str, ...], notes: list[str], problem: qconfig.ConfigError | None
) -> str:
    """What `--show-settings` prints: where the settings come from and what they are."""
    lines = []
    if problem is not None:
        lines.append(f"settings: defaults ({problem.path} is not applied: {problem.problem})")
    else:
        lines.append(f"settings: {conf.path or 'defaults (no pyproject.toml with [tool.quiver] found)'}")
    lines.append(f"select: {', '.join(conf.select) or '(every code)'}")
    lines.append(f"ignore: {', '.join(conf.ignore) or '(none)'}")
    lines.append(f"strict: {'true' if conf.strict else 'false'}")
    lines.append(f"roots: {', '.join(roots)}")
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines) + "\n"


def list_codes() -> str:
    return "".join(f"{c.code}  {c.severity.value:<7}  {c.title}\n" for c in catalog.CODES.values())


# ------------------------------------------------------------------ checking

# Below this many lines to check, worker processes cost more than they save.
PARALLEL_LINES = 3000


def check_files(
    workspace: Workspace, shown_as: dict[str, str], cache: ResultCache | None, jobs: int | None
) -> dict[str, tuple[Checked, list[Diagnostic]]]:
    """The diagnostics of every file given (`shown_as`: path -> how it is
    shown) and of every module they import, which is added to `shown_as`.
    Results come from the cache when their key is there; the others are
    checked, in worker processes when there is enough to check."""
    queue = list(shown_as)
    for key in queue:  # grows: modules outside the files given are reported at themselves
        for target in workspace.scanned_imports(key):
            if target not in shown_as:
                shown_as[target] = os.path.relpath(target)
                queue.append(target)
    out: dict[str, tuple[Checked, list[Diagnostic]]] = {}
    misses: list[tuple[str, str]] = []
    for key in queue:
        text = workspace.text(key)
        if text is None or getattr(text, "unreadable", None) is not None:
            continue  # an imported module that cannot be read: E0113 at its importers
        ck = key_for(workspace, key, text)
        hit = cache.get(ck) if cache is not None else None
        if hit is not None:
            out[key] = (Checked(text, LineIndex(text)), hit)
        else:
            misses.append((key, ck))
    lines = sum((workspace.text(k) or "").count("\n") for k, _ in misses)
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(misses) > 1 and lines >= PARALLEL_LINES:
        checked = _check_in_workers(workspace, [k for k, _ in misses], jobs)
    else:
        checked = {}
        for k, _ in misses:
            analysis = workspace.analyze(k)
            if analysis is not None:
                checked[k] = list(analysis.diagnostics)
    for key, ck in misses:
        if key not in checked:
            continue
        if cache is not None:
            cache.put(ck, checked[key])
        text = workspace.text(key) or ""
        out[key] = (Checked(text, LineIndex(text)), checked[key])
    return {k: out[k] for k in queue if k in out}


def _check_in_workers(workspace: Workspace, keys: list[str], jobs: int) -> dict[str, list[Diagnostic]]:
    """Check files in `jobs` processes, each with a workspace of its own (a
    module imported by files of two workers is checked by both). Files are
    dealt biggest first, to the worker with the fewest lines so far."""
    overlays = {k: workspace.text(k) for k in workspace.files() if workspace.is_overlaid(k)}
    sizes = sorted(keys, key=lambda k: -len(workspace.text(k) or ""))
    shares: list[list[str]] = [[] for _ in range(min(jobs, len(keys)))]
    loads = [0] * len(shares)
    for k in sizes:
        i = loads.index(min(loads))
        shares[i].append(k)
        loads[i] += len(workspace.text(k) or "")
    work = [(list(workspace.roots), overlays, share) for share in shares]
    with multiprocessing.get_context("fork").Pool(len(shares)) as pool:
        results = pool.map(_worker, work)
    out: dict[str, list[Diagnostic]] = {}
    for r in results:
        out.update(r)
    return out


def _worker(args) -> dict[str, list[Diagnostic]]:
    roots, overlays, keys = args
    ws = Workspace(DiskHost(), roots)
    for k, text in overlays.items():
        ws.set_overlay(k, text)
    out = {}
    for k in keys:
        analysis = ws.analyze(k)
        if analysis is not None:
            out[k] = list(analysis.diagnostics)
    return out


# ------------------------------------------------------------------ main


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="qlint",
        description="Check Quiver (.qv) files: shapes, types, names and gradients.",
        epilog="Exit status: 0 no errors, 1 errors found (or warnings with --strict), "
        "2 usage error or unreadable input.",
    )
    ap.add_argument("paths", nargs="*", help="files or directories (searched for *.qv); '-' reads stdin")
    ap.add_argument("--format", choices=FORMATS, help="output format (default: pretty on a terminal, else text)")
    ap.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="only report these codes or prefixes, comma-separated (E02, W1101)",
    )
    ap.add_argument("--ignore", action="append", metavar="CODES", help="do not report these codes or prefixes")
    ap.add_argument("--strict", action="store_true", help="warnings also fail the run")
    ap.add_argument("--fix", action="store_true", help="apply the quick fixes of the diagnostics, in place")
    ap.add_argument("--diff", action="store_true", help="with --fix: print the fixes as a diff, write nothing")
    ap.add_argument("--explain", metavar="CODE", help="print the explanation of a diagnostic code and exit")
    ap.add_argument("--list-codes", action="store_true", help="list every diagnostic code and exit")
    ap.add_argument("--stdin-filename", default="<stdin>", help="the path to show for '-'")
    ap.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour in pretty output")
    ap.add_argument("--no-summary", action="store_true", help="do not print the summary line on stderr")
    ap.add_argument("--no-cache", action="store_true", help="do not read or write the cache of results (.quiver_cache)")
    ap.add_argument(
        "--cache-dir", metavar="DIR", help="where the cache lives (default .quiver_cache, or $QUIVER_CACHE_DIR)"
    )
    ap.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        help="a folder of the workspace besides the paths checked (modules are found there, and links may lead "
        "anywhere inside it); a quiver.toml above every root is not used",
    )
    ap.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings that apply (which pyproject.toml, select, ignore, strict, roots) and exit",
    )
    ap.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: one per CPU)")
    from quiver import version  # the installed distribution's, else quiver.__version__

    ap.add_argument("-V", "--version", action="version", version=f"qlint {version()}")
    return ap


@contextlib.contextmanager
def _batch_collection():
    """The garbage collector tuned for a batch run, as mypy does: the
    checker builds many small objects that live until the end, and with
    the default thresholds full collections scan them again and again
    (about 12% of a cold check of 10,000 lines). Restored afterwards, for
    callers in one process."""
    old = gc.get_threshold()
    gc.freeze()  # what is loaded so far (the checker, argparse) is never scanned again
    gc.set_threshold(200_000, 30, 30)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 for --help
        return int(e.code or 0)
    try:
        with _batch_collection():
            return _run(args)
    except UsageError as e:
        print(f"qlint: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - `qlint | head`
        return 1
    except KeyboardInterrupt:
        print("qlint: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # an internal failure: a message and exit 2, never a traceback
        print(f"qlint: internal error: {type(e).__name__}: {e} (please report it)", file=sys.stderr)
        return 2


def _fix(
    workspace: Workspace, shown_as: dict[str, str], select: list[str], ignore: list[str], diff: bool
) -> tuple[int, int]:
    """Fix the files given; (files changed, files that could not be written). Each file's
    overlay is left holding its fixed text, so the check that follows
    reports what remains."""
    changed = failed = 0
    for key, shown in list(shown_as.items()):
        result = qfix.fix_file(workspace, key, lambda d: selected(d.code, select, ignore))
        if result is None:
            continue
        if result.refused:
            print(f"qlint: note: {shown}: not every fix was applied: {result.refused}", file=sys.stderr)
        if result.text == result.original:
            continue
        if diff:
            sys.stdout.write(qfix.unified_diff(shown, result.original, result.text))
            changed += 1
            continue
        try:
            qfix.write(shown, result.text)
        except OSError as e:
            print(f"qlint: error: cannot write {shown}: {e.strerror or e}", file=sys.stderr)
            workspace.set_overlay(key, DecodedText(result.original))
            failed += 1
            continue
        changed += 1
        n = len(result.codes)
        print(
            f"qlint: fixed {n} problem{'s' if n != 1 else ''} in {shown} ({', '.join(sorted(set(result.codes)))})",
            file=sys.stderr,
        )
    return changed, failed


def _run(args) -> int:
    if args.explain is not None:
        sys.stdout.write(explain(args.explain))
        return 0
    if args.list_codes:
        sys.stdout.write(list_codes())
        return 0
    paths = args.paths or ["."]
    if args.diff and not args.fix:
        raise UsageError("--diff goes with --fix (quiver fmt --diff shows the formatter's changes)")
    if args.fix and "-" in paths:
        raise UsageError("--fix writes files in place; it does not read standard input")
    # One workspace for every file: a module imported by several files is
    # checked once, and its diagnostics are reported at it, once.
    workspace = workspace_for([p for p in paths if p != "-"] or ["."], args.root or ())
    notes: list[str] = []
    config_problem: qconfig.ConfigError | None = None
    try:
        conf = qconfig.load(next((p for p in paths if p != "-"), "."), workspace.roots, notes)
    except qconfig.ConfigError as e:
        # one diagnostic at the file, and every file is checked with the defaults
        conf, config_problem = qconfig.Config(), e
    if args.show_settings:
        sys.stdout.write(show_settings(conf, workspace.roots, notes, config_problem))
        return 0
    for note in notes:
        print(f"qlint: note: {note}", file=sys.stderr)
    select = parse_codes(args.select, "--select") if args.select else list(conf.select)
    ignore = parse_codes(args.ignore, "--ignore") if args.ignore else list(conf.ignore)
    strict = args.strict or conf.strict
    skipped: list[tuple[str, str]] = []
    files = find_files(paths, skipped)
    for path, reason in skipped:
        print(f"qlint: note: skipped {path}: {reason}", file=sys.stderr)
    findings: list[Finding] = []
    unreadable = 0
    assert isinstance(workspace.host, DiskHost)
    shown_as: dict[str, str] = {}
    for path in files:
        try:
            if path == "-":
                data = sys.stdin.buffer.read(inputs.MAX_SOURCE_BYTES + 1)
                if len(data) > inputs.MAX_SOURCE_BYTES:
                    raise inputs.too_large()
                shown = args.stdin_filename
                key = normal_path(args.stdin_filename)
            else:
                key = normal_path(path)
                data = read_source(path, within=workspace.host.boundary(key))
                shown = path
        except OSError as e:
            shown = args.stdin_filename if path == "-" else path
            print(f"qlint: error: cannot read {shown}: {e.strerror or e}", file=sys.stderr)
            unreadable += 1
            continue
        text, problem = decode_source(data)
        workspace.set_overlay(key, DecodedText(text, problem))
        shown_as.setdefault(key, shown)
    not_written = 0
    if args.fix:
        fixed, not_written = _fix(workspace, shown_as, select, ignore, args.diff)
        if args.diff:
            return 1 if fixed else 0
    cache = None if args.no_cache else ResultCache(Path(args.cache_dir) if args.cache_dir else None)
    if cache is not None and cache.note is not None:
        print(f"qlint: note: {cache.note}", file=sys.stderr)
    for key, (checked, diagnostics) in check_files(workspace, shown_as, cache, args.jobs).items():
        for d in diagnostics:
            if selected(d.code, select, ignore):
                findings.append(Finding(shown_as[key], checked, d))
    if config_problem is not None and selected("E0014", select, ignore):
        text = config_problem.text
        here = os.getcwd()
        shown = config_problem.path
        if inputs.inside(shown, here) and shown != here:
            shown = os.path.relpath(shown, here)
        findings.append(Finding(shown, Checked(text, LineIndex(text)), config_problem.diagnostic()))
    findings.sort(key=Finding.sort_key)
    fmt = args.format or ("pretty" if sys.stdout.isatty() else "text")
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    if fmt == "text":
        sys.stdout.write(format_text(findings))
    elif fmt == "pretty":
        sys.stdout.write(format_pretty(findings, color))
    elif fmt == "json":
        sys.stdout.write(format_json(findings))
    elif fmt == "sarif":
        sys.stdout.write(format_sarif(findings))
    else:
        sys.stdout.write(format_github(findings))
    sys.stdout.flush()
    errors = sum(1 for f in findings if f.diagnostic.is_error)
    warnings = len(findings) - errors
    checked = len(files) - unreadable
    if not args.no_summary:
        files_text = f"{checked} file{'s' if checked != 1 else ''} checked"
        if unreadable:
            files_text += f", {unreadable} could not be read"
        if skipped:
            files_text += f", {len(skipped)} skipped"
        if not files:
            print("qlint: no .qv files found" + (f" ({len(skipped)} skipped)" if skipped else ""), file=sys.stderr)
        elif not findings:
            tail = "" if not checked else ", no problems" if not unreadable else "; no problems in the files checked"
            print(f"qlint: {files_text}{tail}", file=sys.stderr)
        else:
            print(
                f"qlint: {files_text}: "
                f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}",
                file=sys.stderr,
            )
    if unreadable or not_written or (not files and args.paths):
        return 2
    if errors or (strict and warnings):
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover - `python -m quiver.qlint`
    from quiver import untrusted_folder_off_path

    untrusted_folder_off_path()
    sys.exit(main())
