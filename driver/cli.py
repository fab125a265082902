"""The `quiver` command.

    quiver run FILE.qv [--nproc N] [--device D] [--no-checks] [--no-warnings] [--traceback] [--error-format text|json]
               [--log-dir DIR] [--no-progress]
    quiver compile FILE.qv [-o OUT.py]
    quiver check [PATH ...]          (the same as qlint)
    quiver fmt [--check|--diff] PATH ...    (see fmt.py)
    quiver plot RUN.csv [-o OUT.png] (see plot.py)

`quiver run` checks the file, compiles it and runs its `main`, streaming what
the program prints. The file must be a regular file of at most 10 MiB (a FIFO,
a device or a folder is refused before anything is read: "cannot read PATH:
why", exit status 2, as for a file that cannot be opened). A failure is reported at its .qv location
(`mlp.qv:14:9: error: ...`) and the exit status is 1; `--traceback` adds the
Python traceback. A file whose `main` cannot be run (none, or one that takes
parameters: the checker's rule, `ide.runnable`) fails the same way before
anything runs. The checker's warnings (of the file and of the modules it
imports) are printed on stderr before the program runs, one line each as
qlint's text format writes them; they do not change the exit status, and
`--no-warnings` leaves them out. With `--error-format json` the last line on stderr is one JSON
object describing the failure, for tools such as the language server; its
shape is defined in run_protocol.py. A failure of quiver itself (not of the
program) prints `quiver: internal error: ...` and exits 2, without a traceback
unless --traceback is given.

`log(step, name=value)` writes metrics.csv and TensorBoard events to
`--log-dir DIR` (default runs/<stem> beside FILE; the first call says where),
and in JSON mode one MetricsRecord line per call to stderr; main's long loops
show a progress line on stderr unless `--no-progress` (runtime/_metrics.py,
runtime/_progress.py; the block "log(...) and the progress line" below).

`--nproc N` runs the program data-parallel in N worker processes started by
torch's elastic launcher (driver/launch.py); a process whose environment
already describes a process group (torchrun's RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) joins it instead. `--device D` places every model, and the
tensors the program creates, on D whatever the models declare.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
import traceback as tb

from quiver.checker import ide
from quiver.checker.ast import Span
from quiver.checker.compiler import CompileError

from . import inputs, lifeline, main_args, outputs, report
from .host import normal_path
from .loader import CheckFailed, Program, compile_file, execute
from .run_protocol import CHECK, ERROR_FORMAT, RUNTIME, SOURCE_ON_STDIN, RunError


def _line_end_col(path: str, line: int, source: str | None = None) -> int:
    """The column after the end of `line` of the file (or of `source`, its text)."""
    try:
        if source is None:  # the one reader of sources: a FIFO or /dev/zero is refused, not read
            source = inputs.read_source(path).decode("utf-8", errors="replace")
    except OSError:
        return 1
    lines = source.splitlines()
    return len(lines[line - 1]) + 1 if 0 < line <= len(lines) else 1


def _run_text_in_linecache(path: str, data: bytes) -> None:
    """Tracebacks, pdb and `--traceback` show the text that runs (the
    editor's unsaved text), not the file on disk. An entry without an mtime
    is one `linecache.checkcache` keeps."""
    import linecache

    name = os.path.abspath(path)
    text = data.decode("utf-8", errors="replace")
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)


def _cannot_read(path: str, e: OSError) -> int:
    print(f"quiver: cannot read {path}: {e.strerror or e}", file=sys.stderr)
    return 2


def _main_problem(program: Program) -> tuple[Span | None, str] | None:
    """Why the program's `main` cannot be run, with the place to point at;
    None when it can. Whether it can is the checker's rule (`ide.runnable`,
    the same one behind the editor's Run action); this only says why not."""
    analysis = program.analysis
    if ide.runnable(analysis):
        return None
    info = analysis.globals.fns.get("main")
    if info is None:
        return None, "no fn main() to run"
    focus = next(
        (s.focus for s in ide.document_symbols(analysis) if s.name == "main" and s.kind in ("fn", "extern")), None
    )
    if info.extern:
        why = "main must be a fn with a body to be run"
    else:
        why = main_args.main_problem(info) or "main cannot be run"
    return focus, f"{why} (found {info.signature()})"


def _cannot_compile(file: str, e: CompileError, as_json: bool) -> int:
    """A program that checks but that Python cannot hold (an expression nested
    too deeply in the generated code): a message, never a traceback."""
    message = f"cannot compile {file}: {e}"
    print(f"quiver: {message}", file=sys.stderr)
    if as_json:
        print(RunError(os.path.abspath(file), 1, 1, 1, 1, message, CHECK).to_json(), file=sys.stderr)
    return 1


def cmd_run(args) -> int:
    lifeline.from_environment()  # started by the language server: end with it
    # Stream the program's output even through a pipe (the language server).
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    as_json = args.error_format == ERROR_FORMAT
    in_group = _launched()
    if args.nproc < 1:
        print(f"quiver: --nproc must be at least 1, found {args.nproc}", file=sys.stderr)
        return 2
    if args.nproc > 1 and in_group:
        print(
            "quiver: --nproc cannot be used inside a process group that a launcher started "
            "(RANK and WORLD_SIZE are set): the launcher starts the workers",
            file=sys.stderr,
        )
        return 2
    data = None
    if args.source_copy is not None:  # a worker of `--nproc` reading the editor's text
        try:
            data = inputs.read_source(args.source_copy)
        except OSError as e:
            return _cannot_read(args.file, e)
    elif args.source_stdin:
        data = sys.stdin.buffer.read(inputs.MAX_SOURCE_BYTES + 1)
        if len(data) > inputs.MAX_SOURCE_BYTES:
            return _cannot_read(args.file, inputs.too_large())
        # the program finds an empty stdin, as it would without the option
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    try:
        program = compile_file(args.file, data)
    except OSError as e:
        return _cannot_read(args.file, e)
    except CheckFailed as e:
        lines = e.analysis.lines
        # the file with errors may be one the program imports
        shown = args.file if e.path == normal_path(args.file) else os.path.relpath(e.path)
        for d in e.diagnostics:
            print(report.diagnostic_line(shown, lines, d), file=sys.stderr)
        print(f"quiver: {shown} has {len(e.diagnostics)} error(s); nothing was run", file=sys.stderr)
        if as_json and e.diagnostics:
            d = e.diagnostics[0]
            s, end = lines.position(d.span.start), lines.position(d.span.end)
            print(
                RunError(
                    e.path, s.line + 1, s.column + 1, end.line + 1, end.column + 1, f"{d.code} {d.message}", CHECK
                ).to_json(),
                file=sys.stderr,
            )
        return 1
    except CompileError as e:
        return _cannot_compile(args.file, e, as_json)
    if data is not None:
        _run_text_in_linecache(program.path, data)
    if not args.no_warnings and not _other_rank():
        _print_warnings(args.file, program)
    problem = _main_problem(program)
    if problem is not None:
        span, message = problem
        lines = program.analysis.lines
        if span is None:
            print(f"quiver: {args.file} has {message}", file=sys.stderr)
            error = RunError(program.path, 1, 1, 1, 1, f"{args.file} has {message}", CHECK)
        else:
            s, end = lines.position(span.start), lines.position(span.end)
            print(report.error_line(args.file, s.line + 1, s.column + 1, message), file=sys.stderr)
            error = RunError(program.path, s.line + 1, s.column + 1, end.line + 1, end.column + 1, message, CHECK)
        if as_json:
            print(error.to_json(), file=sys.stderr)
        return 1
    kwargs = _arguments_of_main(args, program, as_json)
    if isinstance(kwargs, int):
        return kwargs
    device = _device_of(args.device)
    if isinstance(device, str):
        print(f"quiver: {device}", file=sys.stderr)
        return 2
    # -- under a debugger (driver/debug.py): set up before the program is loaded
    session = None
    from . import debug

    if debug.wanted(args):
        why = debug.problem(args)
        if why is not None:
            print(f"quiver: {why}", file=sys.stderr)
            return 2
        session = debug.Session(args)
    # --
    if args.nproc > 1:
        from .launch import launch

        return launch(args, data, as_json)
    from quiver import runtime as rt
    from quiver.runtime import _device, _dist

    checks_before = rt.checks.enabled
    if args.no_checks:
        rt.checks.enabled = False
    started = time.perf_counter()
    joined = False
    before = _device.saved()
    shown = _show_metrics(args, as_json)  # log(...)'s files, sink and progress line
    undo_compile = None  # --compile
    try:
        _device.place(device)  # None: every model on its declared device
        module = execute(program)
        if args.compile:  # --compile: the train steps through torch.compile, put back at the end
            undo_compile = rt.compile_train_steps(module, args.compile_backend)[1]
        where = _device.use_program(module)
        if in_group:
            from .launch import die_with_parent

            die_with_parent()
            if where.type == "cuda" and where.index is None:
                _dist.use_local_gpu()
            _dist.join()
            joined = True
        if session is not None:
            session.call(module.main, kwargs)
        else:
            module.main(**kwargs)
        if joined:
            _dist.leave()
    except KeyboardInterrupt:
        _end_metrics(shown, failed=True)  # the bar is off the screen before "interrupted" is written
        return _ended(_worker_failed(args, program, None, 130, as_json, joined), joined)
    except Exception as exc:  # everything the program does is reported
        _end_metrics(shown, failed=True)  # the bar is off the screen before the error is written
        if args.traceback:
            tb.print_exc(file=sys.stderr)
        return _ended(_worker_failed(args, program, exc, 1, as_json, joined), joined)
    finally:
        _end_metrics(shown)
        _device.restore(before)  # (for a caller in the same process: tests)
        rt.checks.enabled = checks_before  # --no-checks holds for this run only
        if undo_compile is not None:  # --compile
            undo_compile()
    if args.timing and _dist.rank() == 0:
        print(f"quiver: main finished in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- log(...) and the progress line


def _show_metrics(args, as_json: bool):
    """Set up what `log(...)` writes and the progress line for this run: the
    log folder (--log-dir, else the runtime's runs/<stem> beside the file), the
    MetricsRecord lines on stderr in JSON mode, the progress line unless
    --no-progress. What `_end_metrics` undoes."""
    from quiver.runtime import _metrics, _progress

    from .run_protocol import MetricsRecord

    _metrics.configure(log_dir=args.log_dir)  # None: runs/<stem> beside the program (the runtime's default)

    def record(step: int, values: dict[str, float]) -> None:
        sys.stderr.write(MetricsRecord(step, values).to_json() + "\n")
        sys.stderr.flush()

    sink = record if as_json or getattr(args, "metrics_json", False) else None
    if sink is not None:
        _metrics.add_sink(sink)
    progress = _progress.configure(not args.no_progress)
    return sink, progress


def _end_metrics(shown, failed: bool = False) -> None:
    """The files flushed and closed, the sink removed, the progress line off
    (again harmless: a failure calls it before its report, and finally after);
    after a failure a bar still open is cleared off the terminal, not left."""
    from quiver.runtime import _metrics, _progress

    sink, progress = shown
    _progress.restore(progress, failed=failed)
    if sink is not None:
        _metrics.remove_sink(sink)
    _metrics.close()


def cmd_plot(args) -> int:
    from .plot import run

    return run(args.csv, args.output)


def _arguments_of_main(args, program: Program, as_json: bool) -> dict | int:
    """main's arguments from the command line (driver/main_args.py), or the
    exit status: 0 after `--help`, 2 for arguments that do not fit main."""
    info = program.analysis.globals.fns["main"]
    prog = f"quiver run {args.file}"
    if args.help:
        runner = "The options of quiver run itself:\n\n" + args.run_help()
        print(main_args.parser(info, prog, runner).format_help(), end="")
        return 0
    try:
        return main_args.parse(info, args.main_args, prog)
    except main_args.MainArgsError as e:
        takes = ", ".join(main_args.options(p.name)[0] for p in info.params) or "nothing"
        message = f"{e} (main takes {takes}; see {prog} --help)"
        print(f"quiver: {args.file}: {message}", file=sys.stderr)
        if as_json:
            at = program.analysis.lines.position(info.decl.name.span.start)
            line, col = at.line + 1, at.column + 1
            print(RunError(program.path, line, col, line, col + 4, message, CHECK).to_json(), file=sys.stderr)
        return 2


def _split_run_argv(argv: list[str], ap: argparse.ArgumentParser):
    """`quiver run`'s own options, and main's arguments: the others after
    FILE, then everything after `--` as it is."""
    after: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, after = argv[:cut], argv[cut + 1 :]
    args, extra = ap.parse_known_args(argv)
    args.main_args = extra + after
    if args.file is None and not args.help:
        print("usage: quiver run FILE [options] [--name VALUE ...] [-- ARGS ...]", file=sys.stderr)
        print("quiver run: error: the following arguments are required: FILE", file=sys.stderr)
        raise SystemExit(2)
    return args


def _print_warnings(file: str, program: Program) -> None:
    """The warnings of a program that checked (its file's and its imports'),
    on stderr, as qlint's text format writes them: each file shown as an
    error of `quiver run` shows it, sorted as qlint sorts them."""
    from .qlint import Finding, format_text

    findings = []
    for p in (program, *program.imports.values()):
        shown = file if p.path == program.path else os.path.relpath(p.path)
        findings += [Finding(shown, p.analysis, d) for d in p.analysis.diagnostics if not d.is_error]
    if findings:
        findings.sort(key=Finding.sort_key)
        sys.stderr.write(format_text(findings))
        sys.stderr.flush()


def _other_rank() -> bool:
    """A process of a group that a launcher started, other than rank 0: the
    warnings are rank 0's to print (under `--nproc` the parent prints them
    and the workers get `--no-warnings`)."""
    return _launched() and os.environ.get("RANK") != "0"


def _ended(code: int, joined: bool) -> int:
    """A failed worker of a process group ends here: the group cannot be left
    cleanly once a peer may be gone (its threads would abort the exit), so
    the process exits at once with its output flushed."""
    if not joined:
        return code
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _launched() -> bool:
    """Whether a launcher (torchrun, `quiver run --nproc`) started this process
    in a process group (its variables are set); the runtime's rule, read
    without importing torch."""
    return all(v in os.environ for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"))


def _device_of(name: str | None):
    """`--device`'s torch device; a message (str) when it is not one or not usable here."""
    if name is None:
        return None
    import torch

    try:
        dev = torch.device(name)
    except (RuntimeError, ValueError) as e:
        return f"--device {name}: not a torch device ({e})"
    try:
        torch.empty(0, device=dev)
    except Exception as e:  # torch raises RuntimeError / AssertionError
        return f"--device {name}: that device is not available here ({e})"
    return dev


def _worker_failed(args, program: Program, exc: BaseException | None, code: int, as_json: bool, joined: bool) -> int:
    """Report a failure of the program (exc None: Ctrl-C): printed here, or,
    in a worker of `quiver run --nproc`, handed to the parent, which reports
    the first failure of all the workers."""
    from quiver import runtime as rt
    from quiver.runtime import _dist

    from .launch import WorkerReport, report_failure

    rank, size = _dist.rank(), _dist.world_size()
    if exc is None:
        text = "quiver: interrupted"
        record = None
    else:
        text = rt.format_error(exc, traceback=args.traceback)
        loc = rt.qv_location(exc)
        message = rt.error_message(exc)
        if loc is not None:
            source = program.analysis.text if loc.path == program.path else None
            error = RunError(
                loc.path, loc.line, loc.col, loc.line, _line_end_col(loc.path, loc.line, source), message, RUNTIME
            )
        else:
            error = RunError(program.path, 1, 1, 1, 1, message, RUNTIME)
        record = error.to_json()
    comm = exc is not None and joined and _dist.is_comm_error(exc)
    if size > 1:
        text += f"\n  in worker rank {rank} of {size}" + (
            " (its process group failed: another worker stopped)" if comm else ""
        )
    report = WorkerReport(rank, size, time.time(), code, comm, text, record)
    if not report_failure(report):
        print(text, file=sys.stderr)
        if as_json and record is not None:
            print(record, file=sys.stderr)
    return code


def cmd_compile(args) -> int:
    try:
        # it runs nothing: a quiver.toml above the file's folder does not widen what it reads
        program = compile_file(args.file, project_above=False)
    except OSError as e:
        return _cannot_read(args.file, e)
    except CheckFailed as e:
        print(str(e), file=sys.stderr)
        return 1
    except CompileError as e:
        return _cannot_compile(args.file, e, False)
    if args.output:
        try:
            outputs.write_file(args.output, program.compiled.source.encode("utf-8"))
        except OSError as e:
            print(f"quiver: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(program.compiled.source)
    return 0


def cmd_fmt(args) -> int:
    from .fmt import run

    return run(args.paths, args.check, args.diff)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="quiver", description="Run, compile and check Quiver (.qv) programs.")
    from quiver import version

    ap.add_argument("-V", "--version", action="version", version=f"quiver {version()}")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="check, compile and run a file's main()",
        add_help=False,
        allow_abbrev=False,
        usage="quiver run FILE [options] [--name VALUE ...] [-- ARGS ...]",
        description="Check, compile and run FILE's main(). Options this list does not hold, and everything "
        "after --, are main's arguments (quiver run FILE --help lists them).",
    )
    run.add_argument("file", nargs="?")
    run.add_argument("-h", "--help", action="store_true", help="show main's arguments and these options")
    run.add_argument("--no-checks", action="store_true", help="skip argument checks at function entry (faster)")
    run.add_argument(
        "--no-warnings", action="store_true", help="do not print the checker's warnings before the program runs"
    )
    run.add_argument("--traceback", action="store_true", help="also print the Python traceback of a failure")
    run.add_argument(
        "--error-format",
        choices=("text", ERROR_FORMAT),
        default="text",
        help="json: end stderr with one JSON object describing a failure",
    )
    run.add_argument(
        SOURCE_ON_STDIN,
        dest="source_stdin",
        action="store_true",
        help="read the program's text from stdin; FILE names it (its folder, its errors)",
    )
    run.add_argument("--timing", action="store_true", help="print how long main() took")
    run.add_argument(
        "--nproc",
        type=int,
        default=1,
        metavar="N",
        help="train data-parallel in N worker processes (torch.distributed: gloo on CPU, NCCL on CUDA)",
    )
    run.add_argument(
        "--device",
        metavar="D",
        help="place every model, and the tensors the program creates, on D (cpu, cuda, cuda:1), "
        "whatever the models declare",
    )
    run.add_argument("--source-copy", dest="source_copy", help=argparse.SUPPRESS)  # a worker of --nproc
    run.add_argument(
        "--log-dir",
        metavar="DIR",
        help="where log(...) writes metrics.csv and TensorBoard events (default: runs/<stem> beside FILE)",
    )
    run.add_argument(
        "--no-progress", action="store_true", help="no progress line (step, steps/s, ETA) for main's long loops"
    )
    run.add_argument("--metrics-json", dest="metrics_json", action="store_true", help=argparse.SUPPRESS)  # a worker
    # ---- --compile: torch.compile the train steps (docs/torch-interop.md)
    run.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile (fullgraph) the fns that take a gradient (the train steps); "
        "the first call of each compiles it",
    )
    run.add_argument(
        "--compile-backend",
        dest="compile_backend",
        default="inductor",
        metavar="B",
        help="the torch.compile backend of --compile (default inductor; aot_eager compiles faster)",
    )
    # -- quiver debug / run --debug (driver/debug.py)
    from .debug import add_options as add_debug_options

    add_debug_options(run)
    sub.add_parser("debug", help="run a file's main() under a debugger (quiver run FILE --debug; see run --help)")
    # --
    run.set_defaults(func=cmd_run, run_help=run.format_help)
    plot = sub.add_parser("plot", help="draw the metrics of a run's metrics.csv to a PNG")
    plot.add_argument("csv", metavar="RUN.csv")
    plot.add_argument("-o", "--output", metavar="OUT.png", help="the image (default: RUN.png beside the CSV)")
    plot.set_defaults(func=cmd_plot)
    comp = sub.add_parser("compile", help="print the Python a file compiles to")
    comp.add_argument("file")
    comp.add_argument("-o", "--output", help="write it to this file")
    comp.set_defaults(func=cmd_compile)
    fmt = sub.add_parser("fmt", help="rewrite files in the canonical layout (FILE, DIR or - for stdin)")
    fmt.add_argument("paths", nargs="+", metavar="PATH")
    fmt.add_argument("--check", action="store_true", help="write nothing; exit 1 if some file would change")
    fmt.add_argument("--diff", action="store_true", help="write nothing; print the changes as a unified diff")
    fmt.set_defaults(func=cmd_fmt)
    check = sub.add_parser("check", help="check files (the same as qlint)", add_help=False)
    check.add_argument("rest", nargs=argparse.REMAINDER)
    check.set_defaults(func=None)
    return ap


def _without_runtime(args) -> int | None:
    """`quiver run` without the torch extra installed: one line that says how
    to install it, exit 2 (before the check: nothing could run anyway). None
    when the runtime's modules are all there. `--help` works without them."""
    if args.command != "run" or args.help:
        return None
    from quiver import missing_runtime_module, needs_runtime_message

    missing = missing_runtime_module()
    if missing is None:
        return None
    print(f"quiver: {needs_runtime_message('quiver run', missing)}", file=sys.stderr)
    return 2


def _runtime_import_failed(e: ModuleNotFoundError) -> bool:
    """A module of the torch extra missing after all (found, then broken, or
    removed meanwhile): the same one line as `_without_runtime`, no "internal error"."""
    from quiver import RUNTIME_MODULES, needs_runtime_message

    top = (e.name or "").partition(".")[0]
    if top not in RUNTIME_MODULES:
        return False
    print(f"quiver: {needs_runtime_message('quiver run', top)}", file=sys.stderr)
    return True


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "check":
        from .qlint import main as qlint_main

        return qlint_main(argv[1:])
    try:
        ap = build_parser()
        if argv and argv[0] == "debug":  # `quiver debug FILE ...` is `quiver run --debug FILE ...`
            argv = ["run", "--debug", *argv[1:]]
        args = _split_run_argv(argv, ap) if argv and argv[0] == "run" else ap.parse_args(argv)
        if args.command == "run" and args.help and args.file is None:
            print(args.run_help(), end="")
            return 0
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 for --help and --version
        return int(e.code or 0)
    without = _without_runtime(args)
    if without is not None:
        return without
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("quiver: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - `quiver compile f.qv | head`
        return 1
    except ModuleNotFoundError as e:
        if _runtime_import_failed(e):
            return 2
        if getattr(args, "traceback", False):
            tb.print_exc(file=sys.stderr)
        print(f"quiver: internal error: {type(e).__name__}: {e} (please report it)", file=sys.stderr)
        return 2
    except Exception as e:  # a failure of quiver itself: a message and exit 2, never a traceback
        if getattr(args, "traceback", False):
            tb.print_exc(file=sys.stderr)
        print(f"quiver: internal error: {type(e).__name__}: {e} (please report it)", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover - `python -m quiver.cli`
    from quiver import untrusted_folder_off_path

    untrusted_folder_off_path()
    sys.exit(main())
