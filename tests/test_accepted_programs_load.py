"""What the checker accepts compiles, loads and runs (issue 36).

Every program in the repository that checks clean is compiled, its module
imported through the runtime, and its `main` run where it takes no arguments:
the examples, an instance of every layer of the `nn` library (with each Bool
option flipped, and in f64), the docs' and the README's `quiver` blocks, the
test fixtures and corpora (tests/**/*.qv: tests/programs/ holds programs
written for this test, the planted-bug corpus is run with each bug fixed as
well), and programs the incremental fuzz makes from them
(tests/stress/incremental_fuzz.py's edits with a fixed seed: those that
still check clean). One test id per program.

A program passes when it compiles and loads, and its `main` ends, runs out
of its time budget (a training loop: what ran until then is what is tested),
or stops with the runtime's own error at a `.qv` line (a `QuiverError` with a
location: a file a reader does not find, a value check; or Python's
ZeroDivisionError of a division of numbers, as Python's numbers divide). Any other exception
out of the compiler, the loading or the compiled code is a bug: the checker
should have rejected the program, or the compiler compiled it wrongly.
"""

from __future__ import annotations

import inspect
import random
import re
import shutil
import signal
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nn_library import LIBRARY
from stress import incremental_fuzz as fuzz
from test_docs import EXAMPLES, _blocks

import quiver
from quiver.checker import check_text
from quiver.checker.workspace import EXAMPLE_ROOT, check_example, example_files
from quiver.loader import CheckFailed

ROOT = Path(__file__).resolve().parents[1]

# CPU seconds (of the process, torch's threads included: a busy machine
# does not shorten it) a `main` may run before it is stopped, which is no
# failure: it ran that long without an error. The examples get a little more.
BUDGET = 0.25
EXAMPLE_BUDGET = 1.0

# The fuzz: edits tried from the clean programs, and at most this many kept.
FUZZ_SEED = 36
FUZZ_TRIES = 400
FUZZ_KEEP = 40

_ERROR_ANNOTATION = re.compile(r"^\s*#\s*\^+\s+E\d{4}", re.M)


@dataclass(frozen=True)
class Program:
    id: str
    path: Path | None = None  # a file of the repository, loaded where it is
    text: str | None = None  # or a text (a `# file:` example: several files)
    budget: float = BUDGET
    data: Path | None = None  # a folder copied to the run's working directory
    known: str | None = None  # a strict xfail's reason: a finding left to another area
    marks: tuple = field(default=(), compare=False)


# -- the programs


def _examples() -> list[Program]:
    return [
        Program(f"examples/{p.name}", path=p, budget=EXAMPLE_BUDGET, data=ROOT / "examples" / "data")
        for p in sorted((ROOT / "examples").glob("*.qv"))
    ]


def _nn_instances() -> list[Program]:
    """A program per layer of `nn`: instances with its dims (4 each, those
    with defaults left out), defaults, then each Bool option flipped, then f64."""
    models = check_text(LIBRARY["nn.qv"]).globals.models
    out = []
    for name, info in sorted(models.items()):
        if name.startswith("_") or info.trait:  # (nn.Module: a trait, no layer to make)
            continue
        defaults = dict(info.defaults)
        dims = ", ".join("4" for d in info.dims if d not in defaults)
        variants = [""]
        variants += [f"{o}={not v}" for o, v in info.options if isinstance(v, bool)]
        variants += ["dtype=f64"] if any(o == "dtype" for o, _ in info.options) else []
        lines = ["import nn", "", "fn main():"]
        for k, opt in enumerate(variants):
            args = ", ".join(x for x in (dims, opt) if x)
            ty = f"nn.{name}[{args}]" if args else f"nn.{name}"
            lines.append(f"    m{k} = {ty}.init(seed={k})")
            lines.append(f"    print(m{k})")
        out.append(Program(f"nn/{name}", text="\n".join(lines) + "\n"))
    return out


def _docs() -> list[Program]:
    out = []
    for e in EXAMPLES:
        if e.is_fragment or any(c.startswith("E") for c in e.expected):
            continue
        out.append(Program(f"docs/{e.id}", text=e.source))
    for line, info, source in _blocks(ROOT / "README.md"):
        if info.split()[:1] == ["quiver"] and "fragment" not in info.split():
            out.append(Program(f"README.md:{line}", text=source))
    return out


def _planted_fixed(text: str) -> str:
    """A planted-bug program with its `# FIX:` line in place of the bug's."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)# FIX: (.*)$", line)
        if m and i + 1 < len(lines):
            lines[i + 1] = m.group(1) + m.group(2)
            del lines[i]
            break
    return "\n".join(lines)


def _fixtures() -> list[Program]:
    out = []
    for p in sorted((ROOT / "tests").rglob("*.qv")):
        rel = p.relative_to(ROOT).as_posix()
        text = p.read_text(encoding="utf-8")
        if _ERROR_ANNOTATION.search(text):
            continue  # an annotated fixture of an error
        if "/corpus/planted/" in rel:
            out.append(Program(f"{rel}#fixed", text=_planted_fixed(text)))
            if "BUG(shape)" in text:
                continue  # the bug is an error
        out.append(Program(rel, path=p))
    return out


PROGRAMS = _examples() + _nn_instances() + _docs() + _fixtures()


def _is_utf8(text: str) -> bool:
    """Whether `text` can be a file: not when an edit moved the catalog's
    example of a file that is not UTF-8 (`# caf\\udcff`, a 0xFF byte) into
    it, a file the checker reports (E0001)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fuzzed() -> list[str]:
    """Texts one fuzz edit makes from a clean program that still check clean."""
    rng = random.Random(FUZZ_SEED)
    programs = fuzz.corpus()
    names = sorted({m.group() for _, t in programs[:40] for m in fuzz._IDENT.finditer(t)})
    names = [n for n in names if len(n) < 12]
    clean = [t for _, t in programs if not check_example(t, LIBRARY).errors]
    seen: set[str] = set(clean)
    out: list[str] = []
    for _ in range(FUZZ_TRIES):
        text = rng.choice(clean)
        new, _what = fuzz.edit(text, rng, [text], names)
        if new in seen or not _is_utf8(new):
            continue
        seen.add(new)
        if not check_example(new, LIBRARY).errors:
            out.append(new)
            if len(out) == FUZZ_KEEP:
                break
    return out


# -- loading and running


class _OutOfBudget(BaseException):
    """Raised in `main` when its time is up (a BaseException: no `except
    Exception` of the runtime takes it for the program's error)."""


def _on_alarm(signum, frame):
    # Never inside an import (torch imports some modules on first use): a
    # module left half made would fail every later program. Soon after, then.
    f = frame
    while f is not None:
        if f.f_code.co_filename.startswith("<frozen importlib"):
            signal.setitimer(signal.ITIMER_PROF, 0.05)
            return
        f = f.f_back
    raise _OutOfBudget


def _write(text: str, folder: Path) -> Path:
    files = example_files(text) or {f"{EXAMPLE_ROOT}/example.qv": text}
    paths = []
    for name, body in files.items():
        path = folder / name[len(EXAMPLE_ROOT) + 1 :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        paths.append(path)
    return paths[0]


def _copy(path: Path, folder: Path) -> Path:
    """A repository file with the `.qv` files beside it (the modules it may
    import), copied: what a run writes beside its program (`runs/` of
    `log(...)`) stays out of the checkout."""
    folder.mkdir(parents=True)
    for p in path.parent.glob("*.qv"):
        shutil.copy(p, folder / p.name)
    return folder / path.name


def _is_runtime_error_at_a_line(exc: BaseException) -> bool:
    """The runtime's own error at a `.qv` line, or a division of numbers by
    zero there: numbers divide as Python's (`peak * step / steps` with
    `steps` 0), and the error names the line like any other."""
    from quiver import runtime as rt

    return isinstance(exc, (rt.QuiverError, ZeroDivisionError)) and rt.qv_location(exc) is not None


def _load_and_run(path: Path, budget: float, workdir: Path, monkeypatch) -> None:
    try:
        module = quiver.load(str(path))
    except CheckFailed as exc:  # (a fuzzed `# file:` program whose other file broke; a fixture of errors)
        first = exc.diagnostics[0]
        pytest.skip(f"the checker rejects {Path(exc.path).name}: {first.code} {first.message}")
    main = getattr(module, "main", None)
    if main is None or inspect.signature(main).parameters:
        return
    monkeypatch.chdir(workdir)  # what main writes (checkpoints, metrics) stays in the test's folder
    previous = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, budget)
    try:
        main()
    except _OutOfBudget:
        pass
    except Exception as exc:
        if not _is_runtime_error_at_a_line(exc):
            from quiver import runtime as rt

            pytest.fail(
                f"main() of a program that checks clean raised {type(exc).__name__}:\n"
                f"{rt.format_error(exc, traceback=True)}\n\n{''.join(traceback.format_exception(exc))}"
            )
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        _reset_after_interruption()


def _reset_after_interruption() -> None:
    """The budget's alarm raises wherever main happens to be, possibly between
    a value_and_grad's entry and its `try` (no program can do that): the
    thread's differentiation state and autograd's switch are put back, so
    the next test does not start inside a value_and_grad that never ended."""
    import torch

    from quiver.runtime import _grad

    _grad._running.depth[0] = 0
    torch.set_grad_enabled(True)


def _params(programs):
    return [
        pytest.param(p, id=p.id, marks=pytest.mark.xfail(strict=True, reason=p.known) if p.known else ())
        for p in programs
    ]


@pytest.mark.parametrize("program", _params(PROGRAMS))
def test_an_accepted_program_compiles_loads_and_runs(program: Program, tmp_path, monkeypatch) -> None:
    work = tmp_path / "run"
    work.mkdir()
    if program.data is not None:
        shutil.copytree(program.data, work / program.data.name)
    if program.path is not None:
        path = _copy(program.path, tmp_path / "src")
    else:
        path = _write(program.text or "", tmp_path / "src")
    _load_and_run(path, program.budget, work, monkeypatch)


@pytest.fixture(scope="module")
def fuzzed() -> list[str]:
    return _fuzzed()


@pytest.mark.parametrize("k", range(FUZZ_KEEP), ids=[f"fuzz-{k:02d}" for k in range(FUZZ_KEEP)])
def test_a_fuzzed_program_that_checks_clean_compiles_loads_and_runs(fuzzed, k: int, tmp_path, monkeypatch) -> None:
    if k >= len(fuzzed):
        pytest.skip(f"the fuzz kept {len(fuzzed)} programs")
    work = tmp_path / "run"
    work.mkdir()
    _load_and_run(_write(fuzzed[k], tmp_path / "src"), BUDGET, work, monkeypatch)


def test_the_collection_holds_every_kind_of_program() -> None:
    ids = [p.id for p in PROGRAMS]
    assert sum(i.startswith("examples/") for i in ids) >= 10
    assert "nn/Linear" in ids and "nn/TransformerDecoderLayer" in ids
    assert sum(i.startswith("docs/") for i in ids) >= 100
    assert any(i.startswith("tests/corpus/clean/") for i in ids)
    assert any(i.endswith("#fixed") for i in ids)
