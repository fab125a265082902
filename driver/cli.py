"""The `quiver` command.

    quiver run FILE.qv [--no-checks] [--traceback] [--error-format text|json]
    quiver compile FILE.qv [-o OUT.py]
    quiver check [PATH ...]          (the same as qlint)

`quiver run` checks the file, compiles it and runs its `main`, streaming what
the program prints. A failure is reported at its .qv location
(`mlp.qv:14:9: error: ...`) and the exit status is 1; `--traceback` adds the
Python traceback. With `--error-format json` the last line on stderr is one
JSON object describing the failure (path, line, col, end_line, end_col,
message, kind), for tools such as the language server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback as tb

from .loader import CheckFailed, compile_file


def _error_json(path: str, line: int, col: int, end_line: int, end_col: int, message: str, kind: str) -> str:
    return json.dumps({"path": path, "line": line, "col": col, "end_line": end_line, "end_col": end_col,
                       "message": message, "kind": kind})


def _line_end_col(path: str, line: int) -> int:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, start=1):
                if i == line:
                    return len(text.rstrip("\r\n")) + 1
    except OSError:
        pass
    return 1


def _cannot_read(path: str, e: OSError) -> int:
    print(f"quiver: cannot read {path}: {e.strerror or e}", file=sys.stderr)
    return 2


def cmd_run(args) -> int:
    # Stream the program's output even through a pipe (the language server).
    sys.stdout.reconfigure(line_buffering=True)
    try:
        program = compile_file(args.file)
    except OSError as e:
        return _cannot_read(args.file, e)
    except CheckFailed as e:
        first = None
        for d in e.diagnostics:
            s = e.analysis.lines.position(d.span.start)
            end = e.analysis.lines.position(d.span.end)
            print(f"{args.file}:{s.line + 1}:{s.column + 1}: {d.code} {d.message}", file=sys.stderr)
            if first is None:
                first = (s.line + 1, s.column + 1, end.line + 1, end.column + 1, f"{d.code} {d.message}")
        print(f"quiver: {args.file} has {len(e.diagnostics)} error(s); nothing was run", file=sys.stderr)
        if args.error_format == "json" and first is not None:
            print(_error_json(e.path, *first, kind="check"), file=sys.stderr)
        return 1
    if "main" not in program.analysis.globals.fns or program.analysis.globals.fns["main"].extern:
        msg = f"{args.file} has no fn main() to run"
        print(f"quiver: {msg}", file=sys.stderr)
        if args.error_format == "json":
            print(_error_json(program.path, 1, 1, 1, 1, msg, "check"), file=sys.stderr)
        return 1
    from quiver import runtime as rt

    if args.no_checks:
        rt.checks.enabled = False
    started = time.perf_counter()
    try:
        module = rt.load_compiled(program.compiled.source, program.path)
        module.main()
    except KeyboardInterrupt:
        print("quiver: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - everything the program does is reported
        if args.traceback:
            tb.print_exc(file=sys.stderr)
        print(rt.format_error(exc, traceback=args.traceback), file=sys.stderr)
        if args.error_format == "json":
            loc = rt.qv_location(exc)
            message = rt.error_message(exc)
            if loc is not None:
                print(_error_json(loc.path, loc.line, loc.col, loc.line, _line_end_col(loc.path, loc.line), message,
                                  "runtime"), file=sys.stderr)
            else:
                print(_error_json(program.path, 1, 1, 1, 1, message, "runtime"), file=sys.stderr)
        return 1
    if args.timing:
        print(f"quiver: main finished in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    return 0


def cmd_compile(args) -> int:
    try:
        program = compile_file(args.file)
    except OSError as e:
        return _cannot_read(args.file, e)
    except CheckFailed as e:
        print(str(e), file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(program.compiled.source)
    else:
        sys.stdout.write(program.compiled.source)
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="quiver", description="Run, compile and check Quiver (.qv) programs.")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="check, compile and run a file's main()")
    run.add_argument("file")
    run.add_argument("--no-checks", action="store_true", help="skip argument checks at function entry (faster)")
    run.add_argument("--traceback", action="store_true", help="also print the Python traceback of a failure")
    run.add_argument("--error-format", choices=("text", "json"), default="text",
                     help="json: end stderr with one JSON object describing a failure")
    run.add_argument("--timing", action="store_true", help="print how long main() took")
    run.set_defaults(func=cmd_run)
    comp = sub.add_parser("compile", help="print the Python a file compiles to")
    comp.add_argument("file")
    comp.add_argument("-o", "--output", help="write it to this file")
    comp.set_defaults(func=cmd_compile)
    check = sub.add_parser("check", help="check files (the same as qlint)", add_help=False)
    check.add_argument("rest", nargs=argparse.REMAINDER)
    check.set_defaults(func=None)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "check":
        from .qlint import main as qlint_main

        return qlint_main(argv[1:])
    args = build_parser().parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
