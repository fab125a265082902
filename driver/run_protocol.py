"""What `quiver run --error-format json` tells the program that started it.

The runner (driver/cli.py) and the language server (server/runs.py) both read
this module, so the two cannot drift apart:

- the server starts `<python> -m quiver.cli` followed by `runner_args(FILE)`
  (with `--nproc N` when the `quiver.run.nproc` setting is above 1: the run
  is data-parallel, and a failure is the first failing worker's);
- with `runner_args(FILE, source_on_stdin=True)` (the editor's unsaved text)
  the runner reads the program's text from stdin, UTF-8, to its end, instead
  of from FILE; FILE still names the program: its folder is where extern
  modules are looked for, its path is the one errors report. The program
  itself then finds its stdin empty, as it does without the option (the
  server closes it);
- the program's own output goes to stdout and stderr as it is written;
- exit status 0: `main` returned;
- on a failure the runner exits with status 1 and the LAST line it writes to
  stderr is one JSON object, a `RunError`:

      {"path": "/abs/prog.qv", "line": 4, "col": 5, "end_line": 4, "end_col": 15,
       "message": "ZeroDivisionError: division by zero", "kind": "runtime"}

  lines and columns 1-based, the end exclusive, columns in characters.

Kinds of failure (`RunError.kind`):

- `"check"` (CHECK): nothing ran. Either the checker found errors (the record
  is the first one, its message `CODE message`; an editor already shows these
  from its own analysis), or the file has no `main` that can be run (the
  checker's rule, `quiver.checker.ide.runnable`).
- `"runtime"` (RUNTIME): `main` ran and raised; the place is the `.qv` line
  the failure is reported at.

Metrics (the `log(...)` built-in): with `--error-format json` the runner also
writes, for each logged step, one line to stderr that is a `MetricsRecord`:

    {"quiver_metrics": {"step": 120, "values": {"loss": 0.3125, "acc": 0.875}}}

A tool removes these lines from the output it shows and draws them instead
(the server forwards them as `quiver/runMetrics`). They never end a failing
run's stderr: the RunError line is always the last.

Arguments of `main`: the words after `--` in the runner's command line go to
the program's `main` (`--lr 1e-3 --steps 10`), whatever their names.

Standard library only: the language server imports it and must never pull in
the checker's compiler, the runtime or torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

ERROR_FORMAT = "json"  # the value of --error-format that asks for the JSON line

CHECK = "check"
RUNTIME = "runtime"
KINDS = (CHECK, RUNTIME)


SOURCE_ON_STDIN = "--source-stdin"  # the option that reads the program's text from stdin


def runner_args(
    path: str | Path, source_on_stdin: bool = False, nproc: int = 1, program_args: list[str] | tuple[str, ...] = ()
) -> list[str]:
    """The arguments after `python -m quiver.cli` that run a file for a tool;
    `nproc` > 1 runs it data-parallel in that many worker processes;
    `program_args` are passed to the program's `main` (after `--`)."""
    return (
        ["run", str(path), "--error-format", ERROR_FORMAT]
        + ([SOURCE_ON_STDIN] if source_on_stdin else [])
        + (["--nproc", str(nproc)] if nproc > 1 else [])
        + (["--", *program_args] if program_args else [])
    )


@dataclass(frozen=True)
class RunError:
    """The runner's last stderr line when a run fails."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    kind: str  # CHECK | RUNTIME

    def to_json(self) -> str:
        """The record as the one line the runner writes."""
        return json.dumps(asdict(self))  # ASCII: whatever encoding stderr has

    @staticmethod
    def parse(line: str) -> RunError | None:
        """The record in a line of stderr, or None when the line is not one.
        A missing end is the start; a missing kind is "runtime"."""
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        try:
            return RunError(
                str(obj["path"]),
                int(obj["line"]),
                int(obj["col"]),
                int(obj.get("end_line", obj["line"])),
                int(obj.get("end_col", obj["col"])),
                str(obj["message"]),
                str(obj.get("kind", RUNTIME)),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def describe(self) -> str:
        """`prog.qv:LINE:COL: message`, for a person."""
        return f"{Path(self.path).name}:{self.line}:{self.col}: {self.message}"


METRICS_KEY = "quiver_metrics"


@dataclass(frozen=True)
class MetricsRecord:
    """One logged step, as the runner writes it to stderr in JSON mode."""

    step: int
    values: dict[str, float]

    def to_json(self) -> str:
        """The line; a value that is not finite (NaN, inf) is written as null,
        which every JSON reader accepts."""
        values = {k: (v if math.isfinite(v) else None) for k, v in self.values.items()}
        return json.dumps({METRICS_KEY: {"step": self.step, "values": values}}, allow_nan=False)

    @staticmethod
    def parse(line: str) -> MetricsRecord | None:
        """The record in a line of stderr, or None when the line is not one."""
        if METRICS_KEY not in line:
            return None
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict) or set(obj) != {METRICS_KEY}:
            return None
        body = obj[METRICS_KEY]
        try:
            step = body["step"]
            values = body["values"]
            if isinstance(step, bool) or not isinstance(step, int) or not isinstance(values, dict):
                return None
            out = {}
            for k, v in values.items():
                if v is None:  # not finite when written
                    out[str(k)] = math.nan
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    return None
                out[str(k)] = float(v)
            return MetricsRecord(step, out)
        except (KeyError, TypeError):
            return None
