"""Running a file's `main` in a separate process: `quiver run FILE --error-format json`.

The runner is spawned with the server's own interpreter, in a session (and so
a process group) of its own, with stdin closed and stdout/stderr piped. When
the editor's text differs from the file on disk (unsaved changes, or an
untitled document), that text is what runs: it goes to the runner on stdin
(quiver.run_protocol: `--source-stdin`), and the file's path still names the
program, so extern modules are found in its folder and errors point at it.
Nothing is written to disk. The program runs in the file's folder.

Ending a run. Everything the run starts carries a token in its environment
(QUIVER_RUN_TOKEN); stopping a run signals its process group and every
process that carries its token (found in /proc on Linux), which reaches the
children that left the group (a new session, a daemon). SIGTERM first, SIGKILL
after STOP_GRACE_SECONDS. The runner's end is its exit, not the end of its
output: a process that escaped and holds the pipes open does not keep the run
going (the output is read for at most a second more). So every run ends
within a few seconds of Stop or of its timeout.

Everything is asynchronous: the event loop never waits for the program, and
nothing the program does (flooding its output, never ending, crashing,
killing itself) reaches the server beyond the notifications below.

Notifications to the client (the VS Code extension is built against these):

- `quiver/runStarted  {uri, runId, command}`
- `quiver/runOutput   {uri, runId, stream: "stdout"|"stderr", text}`
- `quiver/runMetrics  {uri, runId, records: [{step, values: {name: number|null}}, ...]}`
  the steps the program logged (quiver.run_protocol.MetricsRecord lines on
  the runner's stderr, which are not sent as output), in the order logged; a
  value that is not finite (NaN, inf) is null. Sent in batches like the
  output, at most every METRICS_FLUSH_SECONDS and at most METRICS_BATCH
  records each: a program that logs faster than that has its records thinned
  (every other one dropped, the newest always kept; see `_Metrics`), so
  however often it logs, the client receives at most
  METRICS_BATCH / METRICS_FLUSH_SECONDS records a second. All of a run's
  runMetrics come before its runFinished.
- `quiver/runFinished {uri, runId, exitCode: number|null, status, message?}`
  with status "ok", "failed", "stopped" or "timeout"; exitCode is null when
  the process was ended by a signal.

`quiver.runFile` takes the document's URI and, optionally, `{"args": [...]}`:
the words given to the program's `main` (`runner_args(..., program_args=)`,
after `--`). Without it the `quiver.run.args` setting is used. A run has no
timeout unless `quiver.run.timeoutSeconds` sets one.

The runner's side of the contract (its arguments, and the JSON line that ends
its stderr on a failure) is quiver.run_protocol, which the runner uses too.
That line is not forwarded as output; a runtime failure becomes a diagnostic
at its location.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import itertools
import json
import logging
import math
import os
import re
import secrets
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from quiver.inputs import read_source
from quiver.lifeline import PARENT_ENV
from quiver.run_protocol import MetricsRecord, RunError, runner_args

log = logging.getLogger(__name__)

# The runner command before `runner_args(FILE)`. Tests point the
# server at a stand-in runner with QUIVER_LSP_RUNNER (a JSON list or a shell-
# quoted string).
RUNNER_ENV = "QUIVER_LSP_RUNNER"

FLUSH_SECONDS = 0.03  # output is sent in batches at most this often
FLUSH_BYTES = 16 * 1024
MAX_OUTPUT_CHARS = 4 * 1024 * 1024  # per stream and run; the rest is dropped (the program keeps running)
STOP_GRACE_SECONDS = 2.0  # from SIGTERM to SIGKILL
OUTPUT_GRACE_SECONDS = 1.0  # output still read after the runner exited
POLL_SECONDS = 0.05
METRICS_FLUSH_SECONDS = 0.1  # logged steps are sent in batches at most this often
METRICS_BATCH = 500  # and at most this many in one batch (more are thinned out)
TOKEN_ENV = "QUIVER_RUN_TOKEN"


class RunRefused(Exception):
    """A run that cannot start, with the reason in words."""


def runner_prefix() -> list[str]:
    raw = os.environ.get(RUNNER_ENV)
    if raw:
        try:
            value = json.loads(raw)
            if isinstance(value, list) and all(isinstance(x, str) for x in value) and value:
                return value
        except ValueError:
            pass
        return shlex.split(raw)
    # -P: the working folder (the program's, in the user's project) is not on sys.path
    return [sys.executable, "-P", "-m", "quiver.cli"]


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


@dataclass
class Run:
    id: str
    uri: str
    version: int
    command: list[str]
    path: Path  # the file the runner is given (it reads `source` instead, when set)
    source: bytes | None  # the editor's text, sent on stdin
    cwd: str
    token: str  # in the environment of the runner and of everything it starts
    proc: asyncio.subprocess.Process | None = None
    stop_reason: str | None = None  # "stopped" | "timeout"
    kill_at: float | None = None  # when a stop turns into SIGKILL
    task: asyncio.Task | None = None
    ended: asyncio.Future | None = None  # done when runFinished has been sent
    started: float = field(default_factory=time.monotonic)
    finished: bool = False


class RunManager:
    """The runs in progress, at most one per document."""

    def __init__(
        self,
        notify: Callable[[str, dict], None],
        on_failure: Callable[[Run, RunError | None], None],
        timeout: Callable[[], float | None],
        nproc: Callable[[], int] = lambda: 1,
    ) -> None:
        self._notify = notify
        self._on_failure = on_failure
        self._timeout = timeout  # the quiver.run.timeoutSeconds setting; None: no timeout
        self._nproc = nproc  # the quiver.run.nproc setting: worker processes of a run
        self._runs: dict[str, Run] = {}  # by id
        self._ids = itertools.count(1)

    def start(self, uri: str, text: str, version: int, program_args: Sequence[str] = ()) -> Run:
        """Start running `main` of the document's current text, with
        `program_args` for `main`; a run of the same document still going is
        stopped first. Raises RunRefused."""
        path, source = _source_file(uri, text)
        for old in [r for r in self._runs.values() if r.uri == uri]:
            self.stop(old.id)
        command = runner_prefix() + runner_args(
            path, source_on_stdin=source is not None, nproc=self._nproc(), program_args=list(program_args)
        )
        cwd = str(path.parent) if path.parent.is_dir() else os.getcwd()
        loop = asyncio.get_running_loop()
        run = Run(f"run-{next(self._ids)}", uri, version, command, path, source, cwd, secrets.token_hex(8))
        run.ended = loop.create_future()
        self._runs[run.id] = run
        run.task = loop.create_task(self._drive(run))
        return run

    def find(self, key: str) -> list[Run]:
        """Runs by id, or by document URI."""
        if key in self._runs:
            return [self._runs[key]]
        return [r for r in self._runs.values() if r.uri == key]

    def stop(self, run_id: str, reason: str = "stopped") -> bool:
        """Ask a run to end: SIGTERM to it and everything it started now,
        SIGKILL after STOP_GRACE_SECONDS. Needs no event loop."""
        run = self._runs.get(run_id)
        if run is None:
            return False
        if run.stop_reason is None:
            run.stop_reason = reason
        if run.kill_at is None:
            run.kill_at = time.monotonic() + STOP_GRACE_SECONDS
        _kill(run, signal.SIGTERM)
        return True

    async def stop_and_wait(self, runs: list[Run], timeout: float) -> list[Run]:
        """Stop the runs and wait (at most `timeout` s) for them to end; the
        runs that did."""
        for r in runs:
            self.stop(r.id)
        waiting = [r.ended for r in runs if r.ended is not None and not r.ended.done()]
        if waiting:
            await asyncio.wait(waiting, timeout=timeout)
        return [r for r in runs if r.finished]

    def stop_all(self) -> None:
        """End every run at once (SIGKILL): the server is going away. Needs
        no event loop (it also runs after the loop has ended)."""
        for run in list(self._runs.values()):
            if run.stop_reason is None:
                run.stop_reason = "stopped"
            _kill(run, signal.SIGKILL)

    # ------------------------------------------------------------------ one run

    async def _drive(self, run: Run) -> None:
        error: RunError | None = None
        exit_code: int | None = None
        message: str | None = None
        readers: asyncio.Future | None = None
        out: _Stream | None = None
        err: _Stream | None = None
        try:
            env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
            env[TOKEN_ENV] = run.token
            env[PARENT_ENV] = str(os.getpid())  # the runner ends with the server, even when it is killed
            self._notify("quiver/runStarted", {"uri": run.uri, "runId": run.id, "command": shlex.join(run.command)})
            try:
                run.proc = await asyncio.create_subprocess_exec(
                    *run.command,
                    stdin=asyncio.subprocess.DEVNULL if run.source is None else asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    cwd=run.cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as e:
                message = f"could not start the runner: {e}"
                self._finish(run, None, "failed", message, None)
                return
            proc = run.proc
            run.started = time.monotonic()
            if run.stop_reason is not None:  # stopped while starting
                _kill(run, signal.SIGKILL)
            if run.source is not None:
                asyncio.get_running_loop().create_task(_feed(proc, run.source))
            out = _Stream(self, run, "stdout")
            err = _Stream(self, run, "stderr")
            readers = asyncio.gather(out.pump(proc.stdout), err.pump(proc.stderr))
            # The end of the runner is its exit: `proc.wait()` would also wait
            # for the pipes, which a process that escaped may hold forever.
            while proc.returncode is None:
                now = time.monotonic()
                limit = self._timeout()
                if run.stop_reason is None and limit is not None and now - run.started >= limit:
                    self.stop(run.id, "timeout")
                elif run.kill_at is not None and now >= run.kill_at:
                    _kill(run, signal.SIGKILL)
                    run.kill_at = now + STOP_GRACE_SECONDS  # (again, should that not have been enough)
                await asyncio.sleep(POLL_SECONDS)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(readers), timeout=OUTPUT_GRACE_SECONDS)
            _kill(run, signal.SIGKILL)  # whatever the program left behind
            if not readers.done():  # an escaped process holds the pipes: stop reading them
                readers.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await readers
            _close(proc)
            out.close()
            last = err.close()
            exit_code = proc.returncode
            if last is not None:
                error = RunError.parse(last)
                if error is None:
                    err.emit(last + "\n")
            err.emit_rest()
            out.flush()
            err.flush()
            err.metrics.flush()
            err.metrics.close()
            if run.stop_reason is not None:
                status = run.stop_reason
                limit = self._timeout()
                message = "timed out" + (f" after {limit:g} s" if limit is not None else "")
                message = "stopped" if status == "stopped" else message
            elif exit_code == 0:
                status = "ok"
            else:
                status = "failed"
                if error is not None:
                    message = error.describe()
                elif exit_code is not None and exit_code < 0:
                    message = f"ended by signal {-exit_code}"
                else:
                    message = (last or "").strip() or f"exited with code {exit_code}"
            self._finish(
                run,
                None if exit_code is None or exit_code < 0 else exit_code,
                status,
                message,
                error if status == "failed" else None,
            )
        except asyncio.CancelledError:  # the server is exiting
            _kill(run, signal.SIGKILL)
            _cancel_timers(out, err)
            if readers is not None:
                readers.cancel()
            raise
        except Exception:  # pragma: no cover - a bug here must not take the server down
            log.exception("run %s failed", run.id)
            _kill(run, signal.SIGKILL)
            _cancel_timers(out, err)
            if readers is not None:
                readers.cancel()
            if not run.finished:
                self._finish(run, None, "failed", "internal error in the language server (see its log)", None)

    def _finish(
        self, run: Run, exit_code: int | None, status: str, message: str | None, error: RunError | None
    ) -> None:
        run.finished = True
        self._runs.pop(run.id, None)
        params: dict = {"uri": run.uri, "runId": run.id, "exitCode": exit_code, "status": status}
        if message:
            params["message"] = message
        try:
            self._on_failure(run, error)
        finally:
            try:
                self._notify("quiver/runFinished", params)
            finally:
                if run.ended is not None and not run.ended.done():
                    run.ended.set_result(None)


class _Stream:
    """Forwards one output stream of a run, decoded and in batches."""

    def __init__(self, manager: RunManager, run: Run, name: str) -> None:
        self.m = manager
        self.run = run
        self.name = name
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending: list[str] = []
        self.pending_len = 0
        self.sent = 0
        self.truncated = False
        self.timer: asyncio.TimerHandle | None = None
        self.partial = ""  # stderr: an unfinished line
        self.held: str | None = None  # stderr: a line that may be the runner's JSON error
        self.clean = TerminalText()
        self.metrics = _Metrics(manager, run)  # stderr: the logged steps

    async def pump(self, reader: asyncio.StreamReader | None) -> None:
        if reader is None:
            return
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            self.feed(self.decoder.decode(chunk))

    def feed(self, text: str) -> None:
        if self.name == "stdout":
            self.emit(text)
            return
        text = self.partial + text
        lines = text.split("\n")
        self.partial = lines.pop()
        for line in lines:
            if self.held is not None:
                self.emit(self.held + "\n")
                self.held = None
            record = MetricsRecord.parse(line)
            if record is not None:  # a logged step: drawn by the client, not shown as output
                self.metrics.add(record)
            elif line.lstrip().startswith("{"):
                self.held = line
            else:
                self.emit(line + "\n")

    def close(self) -> str | None:
        """End of the stream; for stderr, its last line if it was held back."""
        tail = self.decoder.decode(b"", final=True)
        if self.name == "stdout":
            if tail:
                self.emit(tail)
            self.emit_rest()
            return None
        rest = self.partial + tail
        self.partial = ""
        last = self.held
        self.held = None
        record = MetricsRecord.parse(rest)
        if record is not None:  # a logged step without its newline (never the RunError: that is last)
            self.metrics.add(record)
        elif rest.strip():
            if last is not None:
                self.emit(last + "\n")
            last = rest
        return last

    def emit(self, text: str) -> None:
        text = self.clean.feed(text)
        if not text:
            return
        if self.sent + self.pending_len + len(text) > MAX_OUTPUT_CHARS:
            if not self.truncated:
                self.truncated = True
                self.pending.append(
                    f"\n[quiver: more than {MAX_OUTPUT_CHARS // (1024 * 1024)} MiB of {self.name}; "
                    "the rest is not shown]\n"
                )
                self.pending_len += 1
            return
        self.pending.append(text)
        self.pending_len += len(text)
        if self.pending_len >= FLUSH_BYTES:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)

    def emit_rest(self) -> None:
        """What the sanitizer held back (an escape sequence that never ended)."""
        rest = self.clean.close()
        self.clean = TerminalText()
        if rest:
            self.emit(rest)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.pending:
            return
        text = "".join(self.pending)
        self.sent += self.pending_len
        self.pending.clear()
        self.pending_len = 0
        self.m._notify(
            "quiver/runOutput", {"uri": self.run.uri, "runId": self.run.id, "stream": self.name, "text": text}
        )


class _Metrics:
    """Forwards a run's logged steps (MetricsRecord lines of its stderr) as
    `quiver/runMetrics`, in batches: one notification at most every
    METRICS_FLUSH_SECONDS, holding at most METRICS_BATCH records. A program
    that logs more often than that (every step of a fast loop) would flood the
    client with records it cannot draw anyway, so when a batch is full it is
    thinned: every other record goes, the newest one always stays (the last
    value the chart shows is the latest), and the batch takes records again.
    So a batch covers its steps evenly, and the client gets at most
    METRICS_BATCH / METRICS_FLUSH_SECONDS records a second whatever the
    program does. Memory stays at one batch."""

    def __init__(self, manager: RunManager, run: Run) -> None:
        self.m = manager
        self.run = run
        self.pending: list[dict] = []
        self.timer: asyncio.TimerHandle | None = None
        self.thinned = 0  # records dropped, for the log

    def add(self, record: MetricsRecord) -> None:
        values = {k: (v if math.isfinite(v) else None) for k, v in record.values.items()}  # JSON has no NaN
        self.pending.append({"step": record.step, "values": values})
        if len(self.pending) > METRICS_BATCH:
            # keep the newest record and every other one before it
            kept = self.pending[-1::-2][::-1]
            self.thinned += len(self.pending) - len(kept)
            self.pending = kept
        if self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(METRICS_FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.pending:
            return
        records, self.pending = self.pending, []
        self.m._notify("quiver/runMetrics", {"uri": self.run.uri, "runId": self.run.id, "records": records})

    def close(self) -> None:
        """No more batches (the run ended): stop the timer of one not sent."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.thinned:
            log.info("run %s: %d logged steps were thinned out", self.run.id, self.thinned)


def _cancel_timers(*streams: _Stream | None) -> None:
    for s in streams:
        if s is not None:
            if s.timer is not None:
                s.timer.cancel()
                s.timer = None
            s.metrics.close()


# Terminal control sequences: CSI (ESC [ ... final byte), OSC and the other
# string commands (ESC ] ... BEL or ST), two-character escapes; and C0/C1
# controls but tab, newline and carriage return.
_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]",
    re.S,
)
# An escape sequence that may still be going on at the end of a chunk.
_UNFINISHED = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|[\]PX^_][^\x07]*|[ -/]*)?\Z", re.S)
_HOLD_LIMIT = 4096


class TerminalText:
    """Removes terminal control from a run's output before it reaches the
    editor: colours, cursor moves, window titles (OSC), hyperlinks, bells.
    The client shows text, and a program must not drive the user's terminal
    or confuse the output view. Tab, newline and carriage return stay. A
    sequence split between two chunks is held back until it ends."""

    def __init__(self) -> None:
        self.held = ""

    def feed(self, text: str) -> str:
        text = self.held + text
        self.held = ""
        m = _UNFINISHED.search(text)
        if m is not None and len(text) - m.start() <= _HOLD_LIMIT:
            self.held = text[m.start() :]
            text = text[: m.start()]
        return _ESCAPE.sub("", text)

    def close(self) -> str:
        rest, self.held = self.held, ""
        return _ESCAPE.sub("", rest).replace("\x1b", "")


def _kill(run: Run, sig: int) -> None:
    """Signal the run's process group (the runner and what it started) and,
    where /proc tells, every process that carries the run's token: those
    that left the group too. The group only while the run is not finished
    (its id could be reused after that); the token at any time."""
    proc = run.proc
    if proc is None:
        return
    if not run.finished:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
    for pid in _carrying(run.token):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _carrying(token: str) -> list[int]:
    """The processes whose environment holds QUIVER_RUN_TOKEN=token (Linux;
    elsewhere none are found)."""
    needle = f"{TOKEN_ENV}={token}".encode()
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the program's text to the runner's stdin and close it."""
    stdin = proc.stdin
    if stdin is None:
        return
    with contextlib.suppress(OSError):  # the runner ended without reading it all
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(OSError):
        stdin.close()


def _close(proc: asyncio.subprocess.Process) -> None:
    """Close the pipes of a runner that has exited (asyncio keeps them open
    while any process still holds their other end)."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


def _source_file(uri: str, text: str) -> tuple[Path, bytes | None]:
    """The file to give the runner, and the text to send on its stdin: none
    when the file holds exactly the editor's text. Raises RunRefused."""
    path = uri_to_path(uri)
    name = path.name if path is not None else _untitled_name(uri)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        line = text.count("\n", 0, e.start) + 1
        col = e.start - (text.rfind("\n", 0, e.start) + 1) + 1
        raise RunRefused(
            f"cannot run {name}: its text holds U+{ord(text[e.start]):04X} at line {line}, column {col}, "
            "half of a UTF-16 pair, which is not a character (the editor sent a broken edit?); "
            "retype that character, or reopen the file"
        ) from None
    if path is None:
        return Path(os.getcwd()) / name, data
    try:
        # the one reader of sources (regular files, never more than the editor's text plus a byte, never
        # blocking), so that a FIFO or a link to /dev/zero at the path is taken as different, not read
        if read_source(str(path), limit=len(data)) == data:
            return path, None
    except OSError:
        pass
    return path, data


def _untitled_name(uri: str) -> str:
    """A file name for a document that is not a file (`untitled:Untitled-1`)."""
    tail = unquote(urlparse(uri).path or uri).rstrip("/").rsplit("/", 1)[-1]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in tail) or "untitled"
    return stem if stem.endswith(".qv") else f"{stem}.qv"
