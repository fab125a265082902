"""Running a file's `main` in a separate process: `quiver run FILE --error-format json`.

The runner is spawned with the server's own interpreter, in a new process
group (so stopping a run also stops whatever the program started), with stdin
closed and stdout/stderr piped. Everything is asynchronous: the event loop
never waits for the program, and nothing the program does (flooding its
output, never ending, crashing, killing itself) reaches the server beyond the
notifications below.

Notifications to the client (the VS Code extension is built against these):

- `quiver/runStarted  {uri, runId, command}`
- `quiver/runOutput   {uri, runId, stream: "stdout"|"stderr", text}`
- `quiver/runFinished {uri, runId, exitCode: number|null, status, message?}`
  with status "ok", "failed", "stopped" or "timeout"; exitCode is null when
  the process was ended by a signal.

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
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from quiver.run_protocol import RunError, runner_args

log = logging.getLogger(__name__)

# The runner command before `runner_args(FILE)`. Tests point the
# server at a stand-in runner with QUIVER_LSP_RUNNER (a JSON list or a shell-
# quoted string).
RUNNER_ENV = "QUIVER_LSP_RUNNER"

FLUSH_SECONDS = 0.03  # output is sent in batches at most this often
FLUSH_BYTES = 16 * 1024
MAX_OUTPUT_CHARS = 4 * 1024 * 1024  # per stream and run; the rest is dropped (the program keeps running)
STOP_GRACE_SECONDS = 2.0


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
    return [sys.executable, "-m", "quiver.cli"]


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
    path: Path  # the file the runner reads
    temp_dir: str | None
    proc: asyncio.subprocess.Process | None = None
    stop_reason: str | None = None  # "stopped" | "timeout"
    task: asyncio.Task | None = None
    started: float = field(default_factory=time.monotonic)
    finished: bool = False


class RunManager:
    """The runs in progress, at most one per document."""

    def __init__(
        self,
        notify: Callable[[str, dict], None],
        on_failure: Callable[[Run, RunError | None], None],
        timeout: Callable[[], float],
    ) -> None:
        self._notify = notify
        self._on_failure = on_failure
        self._timeout = timeout
        self._runs: dict[str, Run] = {}  # by id
        self._ids = itertools.count(1)

    def start(self, uri: str, text: str, version: int) -> Run:
        """Start running `main` of the document's current text; a run of the
        same document still going is stopped first."""
        for old in [r for r in self._runs.values() if r.uri == uri]:
            self.stop(old.id)
        path, temp_dir = _source_file(uri, text)
        command = runner_prefix() + runner_args(path)
        run = Run(f"run-{next(self._ids)}", uri, version, command, path, temp_dir)
        self._runs[run.id] = run
        run.task = asyncio.get_running_loop().create_task(self._drive(run))
        return run

    def find(self, key: str) -> list[Run]:
        """Runs by id, or by document URI."""
        if key in self._runs:
            return [self._runs[key]]
        return [r for r in self._runs.values() if r.uri == key]

    def stop(self, run_id: str, reason: str = "stopped") -> bool:
        run = self._runs.get(run_id)
        if run is None:
            return False
        if run.stop_reason is None:
            run.stop_reason = reason
        _kill(run, signal.SIGTERM)
        asyncio.get_running_loop().call_later(STOP_GRACE_SECONDS, _kill, run, signal.SIGKILL)
        return True

    def stop_all(self) -> None:
        for run in list(self._runs.values()):
            self.stop(run.id)
            _kill(run, signal.SIGKILL)

    # ------------------------------------------------------------------ one run

    async def _drive(self, run: Run) -> None:
        error: RunError | None = None
        exit_code: int | None = None
        message: str | None = None
        try:
            cwd = str(run.path.parent) if run.temp_dir is None else _cwd_for(run.uri, run.temp_dir)
            env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
            self._notify("quiver/runStarted", {"uri": run.uri, "runId": run.id, "command": shlex.join(run.command)})
            try:
                run.proc = await asyncio.create_subprocess_exec(
                    *run.command,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as e:
                message = f"could not start the runner: {e}"
                self._finish(run, None, "failed", message, None)
                return
            if run.stop_reason is not None:  # stopped while starting
                _kill(run, signal.SIGKILL)
            out = _Stream(self, run, "stdout")
            err = _Stream(self, run, "stderr")
            readers = asyncio.gather(out.pump(run.proc.stdout), err.pump(run.proc.stderr))
            try:
                await asyncio.wait_for(asyncio.shield(run.proc.wait()), timeout=self._timeout())
            except TimeoutError:
                self.stop(run.id, "timeout")
                await run.proc.wait()
            try:
                # A grandchild may hold the pipes open after the runner exits.
                await asyncio.wait_for(readers, timeout=1.0)
            except TimeoutError:
                _kill(run, signal.SIGKILL)
                readers.cancel()
            _kill(run, signal.SIGKILL)  # whatever the program left behind
            out.close()
            last = err.close()
            exit_code = run.proc.returncode
            if last is not None:
                error = RunError.parse(last)
                if error is None:
                    err.emit(last + "\n")
            out.flush()
            err.flush()
            if run.stop_reason is not None:
                status = run.stop_reason
                message = "stopped" if status == "stopped" else f"timed out after {self._timeout():g} s"
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
        except asyncio.CancelledError:
            _kill(run, signal.SIGKILL)
            raise
        except Exception:  # pragma: no cover - a bug here must not take the server down
            log.exception("run %s failed", run.id)
            _kill(run, signal.SIGKILL)
            self._finish(run, None, "failed", "internal error in the language server (see its log)", None)

    def _finish(
        self, run: Run, exit_code: int | None, status: str, message: str | None, error: RunError | None
    ) -> None:
        run.finished = True
        self._runs.pop(run.id, None)
        if run.temp_dir is not None:
            shutil.rmtree(run.temp_dir, ignore_errors=True)
        params: dict = {"uri": run.uri, "runId": run.id, "exitCode": exit_code, "status": status}
        if message:
            params["message"] = message
        try:
            self._on_failure(run, error)
        finally:
            self._notify("quiver/runFinished", params)


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
            if line.lstrip().startswith("{"):
                self.held = line
            else:
                self.emit(line + "\n")

    def close(self) -> str | None:
        """End of the stream; for stderr, its last line if it was held back."""
        tail = self.decoder.decode(b"", final=True)
        if self.name == "stdout":
            if tail:
                self.emit(tail)
            return None
        rest = self.partial + tail
        self.partial = ""
        last = self.held
        self.held = None
        if rest.strip():
            if last is not None:
                self.emit(last + "\n")
            last = rest
        return last

    def emit(self, text: str) -> None:
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


def _kill(run: Run, sig: int) -> None:
    """Signal the run's whole process group (the runner and anything it
    started), as long as the run is not finished."""
    proc = run.proc
    if proc is None or run.finished:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _source_file(uri: str, text: str) -> tuple[Path, str | None]:
    """The file to run: the document's own file when it holds exactly the
    editor's text, else a copy of the text in a temporary folder."""
    path = uri_to_path(uri)
    if path is not None:
        try:
            if path.read_text(encoding="utf-8") == text:
                return path, None
        except (OSError, UnicodeDecodeError):
            pass
    temp_dir = tempfile.mkdtemp(prefix="quiver-run-")
    name = path.name if path is not None and path.name.endswith(".qv") else "untitled.qv"
    copy = Path(temp_dir) / name
    copy.write_text(text, encoding="utf-8")
    return copy, temp_dir


def _cwd_for(uri: str, temp_dir: str) -> str:
    path = uri_to_path(uri)
    if path is not None and path.parent.is_dir():
        return str(path.parent)
    return temp_dir
