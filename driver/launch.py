"""`quiver run --nproc N`: N worker processes, started by torch's elastic launcher.

The parent process checks and compiles the file (so a program with errors
fails once, before anything starts), then hands the rest to
`torch.distributed.launcher.elastic_launch`, the machinery behind
`torchrun --standalone`: a c10d rendezvous on a free localhost port, N
workers on this machine, no restarts. Each worker is

    <python> -m quiver run FILE [options]

with torch's RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT / LOCAL_RANK in its
environment, which is exactly how it runs under an external `torchrun ... -m
quiver run FILE`: it joins that process group (`runtime/_dist.join`) instead
of spawning.

Failures. A worker that fails writes its report (the `.qv` error text, the
`RunError` record, whether the failure was the process group's own) to a
file in a folder the parent names in QUIVER_RUN_REPORTS, and exits 1. The
elastic agent sees the exit within its monitor interval (0.1 s), stops the
other workers (SIGTERM, SIGKILL after a grace period) and raises; the parent
then prints the first failure of the program itself (a worker that only
lost its peers is not the cause) and exits with its status. Ctrl-C stops
every worker. Without QUIVER_RUN_REPORTS (under torchrun) a worker prints
its own report.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass

from . import inputs, lifeline, outputs
from .run_protocol import RunError

REPORTS_ENV = "QUIVER_RUN_REPORTS"
_MAX_REPORT = 16 * 1024 * 1024  # a worker's report: an error's text and its JSON record
SHUTDOWN_SECONDS = 3  # from SIGTERM to SIGKILL for the workers left when one fails


@dataclass(frozen=True)
class WorkerReport:
    """What a failed worker leaves for the parent."""

    rank: int
    world_size: int
    time: float
    code: int  # its exit status
    comm: bool  # the process group failed under it (a peer died): not the cause
    text: str  # the error as `quiver run` prints it
    record: str | None  # RunError JSON

    def to_json(self) -> str:
        return json.dumps(self.__dict__)


def report_failure(report: WorkerReport) -> bool:
    """Hand a worker's failure to the parent; False when there is no parent
    that reads it (the worker then prints it itself)."""
    folder = os.environ.get(REPORTS_ENV)
    if not folder or not os.path.isdir(folder):
        return False
    outputs.write_file(os.path.join(folder, f"rank{report.rank}.json"), report.to_json().encode("utf-8"))
    return True


def die_with_parent() -> None:
    """In a worker of `quiver run --nproc` (Linux): end when the `quiver run`
    that started it ends, even by SIGKILL, which it cannot pass on."""
    if os.environ.get(REPORTS_ENV):
        lifeline.die_with_parent()


def _read_reports(folder: str) -> list[WorkerReport]:
    out = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        try:
            out.append(WorkerReport(**json.loads(inputs.read_source(os.path.join(folder, name), limit=_MAX_REPORT))))
        except (OSError, ValueError, TypeError):
            continue
    return out


def first_cause(reports: list[WorkerReport]) -> WorkerReport | None:
    """The failure to report: the earliest of the program's own failures,
    else the earliest of all."""
    own = [r for r in reports if not r.comm]
    pool = own or reports
    return min(pool, key=lambda r: (r.time, r.rank)) if pool else None


def worker_args(args, source_copy: str | None) -> list[str]:
    """The `quiver run` arguments of each worker: the parent's, less --nproc,
    and --no-warnings (the parent printed the warnings, once)."""
    # -P: the working folder (the user's project, untrusted) is not on sys.path
    out = ["-P", "-m", "quiver", "run", args.file, "--no-warnings"]
    if args.no_checks:
        out.append("--no-checks")
    if args.traceback:
        out.append("--traceback")
    if args.timing:
        out.append("--timing")
    if args.device:
        out += ["--device", args.device]
    if getattr(args, "compile", False):  # --compile
        out += ["--compile", "--compile-backend", args.compile_backend]
    if source_copy is not None:
        out += ["--source-copy", source_copy]
    # log(...) and the progress line (rank 0 writes them): the parent's settings
    if getattr(args, "log_dir", None):
        out += ["--log-dir", args.log_dir]
    if getattr(args, "no_progress", False):
        out.append("--no-progress")
    if getattr(args, "error_format", None) == "json":
        out.append("--metrics-json")  # the MetricsRecord lines, on the stderr the parent's reader sees
    main_args = getattr(args, "main_args", None)
    if main_args:  # the arguments of main, as the parent was given them
        out += ["--", *main_args]
    return out


def _quiet_torch_logs(traceback: bool) -> None:
    """The elastic agent logs each worker's end at WARNING/ERROR; the parent
    says what happened itself."""
    if traceback:
        return
    import torch.distributed.elastic.agent.server.api
    import torch.distributed.elastic.agent.server.local_elastic_agent  # noqa: F401

    for name in list(logging.root.manager.loggerDict):
        if name.startswith(("torch.distributed.elastic", "torch.distributed.launcher")):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def launch(args, data: bytes | None, as_json: bool) -> int:
    """Run the checked file in `args.nproc` workers; the exit status of the run."""
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    _quiet_torch_logs(args.traceback)
    with tempfile.TemporaryDirectory(prefix="quiver-run-") as tmp:
        reports = os.path.join(tmp, "reports")
        os.mkdir(reports)
        source_copy = None
        if data is not None:  # the editor's text: every worker reads the same copy
            source_copy = os.path.join(tmp, "source.qv")
            outputs.write_file(source_copy, data)
        config = LaunchConfig(
            min_nodes=1,
            max_nodes=1,
            nproc_per_node=args.nproc,
            run_id=f"quiver-{uuid.uuid4().hex[:12]}",
            rdzv_backend="c10d",
            rdzv_endpoint="127.0.0.1:0",  # a free port on this machine, as torchrun --standalone
            max_restarts=0,
            monitor_interval=0.1,
            local_addr="127.0.0.1",
            logs_specs=DefaultLogsSpecs(log_dir=os.path.join(tmp, "logs")),
            shutdown_timeout=SHUTDOWN_SECONDS,
        )
        saved = {k: os.environ.get(k) for k in (REPORTS_ENV, "OMP_NUM_THREADS")}
        os.environ[REPORTS_ENV] = reports
        if "OMP_NUM_THREADS" not in os.environ:  # as torchrun: N workers share the cores
            os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // args.nproc))
        started = time.perf_counter()
        try:
            elastic_launch(config, sys.executable)(*worker_args(args, source_copy))
        except ChildFailedError as e:
            return _failed(args, e, _read_reports(reports), as_json)
        except (SignalException, KeyboardInterrupt):
            print("quiver: interrupted", file=sys.stderr)
            return 130
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if args.timing:
            print(f"quiver: {args.nproc} workers finished in {time.perf_counter() - started:.2f} s", file=sys.stderr)
        return 0


def _failed(args, e, reports: list[WorkerReport], as_json: bool) -> int:
    cause = first_cause(reports)
    if cause is not None:
        print(cause.text, file=sys.stderr)
        if as_json and cause.record:
            print(cause.record, file=sys.stderr)
        return cause.code or 1
    # a worker that left no report: killed by a signal, or failed before it ran the program
    rank, failure = e.get_first_failure()
    code = failure.exitcode
    if code is not None and code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
        status = 130 if code == -signal.SIGINT else 1
    else:
        how = f"exited with status {code}"
        status = code or 1
    message = f"worker rank {rank} of {args.nproc} {how}"
    print(f"quiver: {message}", file=sys.stderr)
    if as_json:
        print(RunError(os.path.abspath(args.file), 1, 1, 1, 1, message, "runtime").to_json(), file=sys.stderr)
    return status
