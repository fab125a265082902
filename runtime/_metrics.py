"""``log(step, loss=l, acc=a)``: metrics to a CSV file, TensorBoard event files and sinks.

The compiler lowers a call to ``rt.log_metrics(step, {"loss": l, "acc": a}, _src)``.
Each call, on rank 0 only (other ranks of a data-parallel run log nothing):

- converts each value to a Python number, with one ``.item()`` per tensor
  value (the only synchronisation it causes);
- appends one row to ``metrics.csv`` in the log folder: a header ``step,``
  followed by the metric names in the order they first appeared, and one row
  per call, a metric the call does not give left empty. A name that first
  appears later adds a column: the file is rewritten once with the wider
  header (pandas reads it as it is: ``pd.read_csv(path)``, empty cells NaN);
- adds the values to TensorBoard event files in the same folder when the
  ``tensorboard`` package is installed (else the CSV only, with one note);
- calls every sink (:func:`add_sink`) with ``(step, {name: float})``: the
  runner's JSON mode writes ``MetricsRecord`` lines through one;
- hands the values to the progress line.

The log folder: :func:`configure`'s ``log_dir``, else
``runs/<program stem>`` beside the program's ``.qv`` file. The first call of a
run says where, in one line on stderr, and replaces what an earlier run left
there: ``metrics.csv`` and the ``events.out.tfevents.*`` files (nothing else
in the folder is touched, and nothing is written elsewhere). A folder that
cannot be written is reported once; the run goes on without files.
"""

from __future__ import annotations

import atexit
import contextlib
import csv
import io
import math
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quiver import outputs

from . import _dist, _progress

Sink = Callable[[int, dict[str, float]], None]

CSV_NAME = "metrics.csv"
EVENTS_PREFIX = "events.out.tfevents."

_FLUSH_S = 1.0  # the files are flushed at least this often (and when the run ends)

_sinks: list[Sink] = []


class _State:
    log_dir: str | None = None  # configured; None: runs/<stem> beside the program
    files = True  # False: sinks and progress only
    announce = True  # say where the files go (one line on stderr)
    run: _Run | None = None  # the files of this run, opened by its first call


def configure(log_dir: str | os.PathLike | None = None, files: bool = True, announce: bool = True) -> None:
    """Where the next run's files go (``quiver run --log-dir``); ``files``
    False writes none. Closes the files of the run before."""
    close()
    _State.log_dir = None if log_dir is None else os.fspath(log_dir)
    _State.files = files
    _State.announce = announce


def add_sink(sink: Sink) -> None:
    """Call ``sink(step, values)`` for every logged step (values as floats)."""
    _sinks.append(sink)


def remove_sink(sink: Sink) -> None:
    if sink in _sinks:
        _sinks.remove(sink)


def log_metrics(step: int, values: dict[str, Any], src: Any = None) -> None:
    """One ``log(step, name=value, ...)`` call."""
    if _dist.rank() != 0:
        return
    numbers = {name: _number(v) for name, v in values.items()}
    step = int(step)
    if _State.files:
        run = _State.run
        if run is None or (src is not run.src and _State.log_dir is None and _folders(src)[0] != run.folder):
            close()  # (quiver.load: another program logs, beside its own file)
            run = _State.run = _Run(*_folders(src))
            run.src = src
        if run.ok:
            run.write(step, numbers)
    if _sinks:
        floats = {k: float(v) for k, v in numbers.items()}
        for sink in list(_sinks):
            sink(step, floats)
    if _progress.enabled():
        _progress.note(numbers)


def close() -> None:
    """Flush and close this run's files (the runner calls it when main ends;
    it is registered with atexit too). The next call starts a new run."""
    run, _State.run = _State.run, None
    if run is not None:
        run.close()


def _number(v: Any) -> int | float:
    if hasattr(v, "item"):  # a [] tensor: its one synchronisation
        v = v.item()
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, int) else float(v)


def _folders(src: Any) -> tuple[str, str | None]:
    """The log folder of the program ``src``, and the folder it must stay
    inside: runs/<stem> beside the program, inside the program's folder (the
    user's, which may hold links); --log-dir, the user's own choice, as given."""
    if _State.log_dir is not None:
        return _State.log_dir, None
    path = getattr(src, "path", None) or "program.qv"
    home = os.path.dirname(os.path.abspath(path))
    return os.path.join(home, "runs", Path(path).stem), home


def _inside(folder: str, within: str) -> bool:
    """Whether ``folder`` (made or not yet) resolves to a place inside ``within``."""
    real, root = os.path.realpath(folder), os.path.realpath(within)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _create(path: str) -> io.TextIOWrapper:
    """A new, empty file at ``path`` in place of what was there, never through
    a symbolic link at the name (quiver.outputs: a link is an error naming
    it), open for appending text."""
    return _text(outputs.open_new_stream(path))


def _text(fh) -> io.TextIOWrapper:
    return io.TextIOWrapper(fh, encoding="utf-8", newline="", write_through=False)


def _shown(path: str) -> str:
    """A path as the run's note shows it: relative to the working folder when under it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _note(text: str) -> None:
    with _progress.writing():
        sys.stderr.write(f"quiver: {text}\n")
        sys.stderr.flush()


class _Run:
    """The files of one run: the CSV and, with tensorboard, the event files."""

    def __init__(self, folder: str, within: str | None = None) -> None:
        """``within``: the program's folder, which the default log folder must
        not leave (the folder is the user's, and may hold links)."""
        self.folder = folder
        self.csv_path = os.path.join(folder, CSV_NAME)
        self.names: list[str] = []
        self.fh: Any = None
        self.writer: Any = None
        self.src: Any = None  # the program whose call opened the files
        self.flushed = time.monotonic()
        self.ok = True
        try:
            if within is not None and not _inside(folder, within):  # before anything is made there
                raise OSError(f"it leads out of {_shown(within)} through a symbolic link")
            os.makedirs(folder, exist_ok=True)
            for entry in os.listdir(folder):  # an earlier run's event files
                if entry.startswith(EVENTS_PREFIX):
                    os.remove(os.path.join(folder, entry))  # (a link itself, never what it points to)
            self.fh = _create(self.csv_path)
        except OSError as e:
            self.ok = False
            where = _shown(e.filename) if isinstance(e, outputs.OutputError) else _shown(folder)
            _note(f"cannot write metrics to {where}: {e.strerror or e}; they are not saved")
            return
        self.writer, why = _event_writer(folder)
        if _State.announce:
            where = f"metrics: {_shown(self.csv_path)}"
            where += " and TensorBoard events beside it" if self.writer is not None else f" ({why})"
            _note(where)

    def write(self, step: int, values: dict[str, int | float]) -> None:
        new = [k for k in values if k not in self.names]
        try:
            if new:
                self._widen(new)
            row = [str(step)] + [_cell(values[k]) if k in values else "" for k in self.names]
            self.fh.write(",".join(row) + "\n")
            now = time.monotonic()
            if now - self.flushed >= _FLUSH_S:  # a reader (quiver plot) mid-run sees rows this recent
                self.fh.flush()
                self.flushed = now
        except OSError as e:
            self.ok = False
            _note(
                f"cannot write {_shown(self.csv_path)}: {e.strerror or e}; the metrics after step {step} are not saved"
            )
            return
        if self.writer is not None:
            self.writer.write(step, values)

    def _widen(self, new: list[str]) -> None:
        """The header with the new names: the rows written so far get empty
        cells. They are read back through the open file (not its name, where
        something else may stand by now), and the wider file replaces it whole."""
        rows: list[list[str]] = []
        if self.names:
            self.fh.flush()
            self.fh.seek(0)
            rows = list(csv.reader(io.StringIO(self.fh.read(), newline="")))[1:]
        self.names += new
        out = io.StringIO(newline="")
        table = csv.writer(out, lineterminator="\n")
        table.writerow(["step", *self.names])
        table.writerows(r + [""] * (1 + len(self.names) - len(r)) for r in rows)
        old, self.fh = self.fh, None
        with contextlib.suppress(OSError):
            old.close()
        self.fh = _text(outputs.open_new_stream(self.csv_path, out.getvalue().encode("utf-8")))

    def close(self) -> None:
        if self.fh is not None:
            with contextlib.suppress(OSError):
                self.fh.close()
            self.fh = None
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _cell(v: int | float) -> str:
    if isinstance(v, int):
        return str(v)
    return repr(v) if math.isfinite(v) else str(v)  # repr: the float read back exactly; nan, inf, -inf


def _event_writer(folder: str) -> tuple[Any, str]:
    """A TensorBoard event file in the folder, or None and why not."""
    try:
        return _EventFile(folder), ""
    except ImportError:
        return None, "CSV only: install tensorboard for TensorBoard files (pip install 'quiver-lang[metrics]')"
    except OSError as e:
        return None, f"CSV only: cannot write a TensorBoard file: {e.strerror or e}"


class _EventFile:
    """One TensorBoard event file, written with tensorboard's own record
    writer and protos, in this thread: one event per log call holding all its
    values. (torch's SummaryWriter hands each value to a writer thread
    through a queue, which costs about 100 us a value in a tight loop.)"""

    def __init__(self, folder: str) -> None:
        from tensorboard.compat.proto.event_pb2 import Event  # pyright: ignore[reportAttributeAccessIssue]
        from tensorboard.compat.proto.summary_pb2 import Summary  # pyright: ignore[reportAttributeAccessIssue]
        from tensorboard.summary.writer.record_writer import RecordWriter

        self._event, self._summary = Event, Summary
        now = time.time()
        name = f"{EVENTS_PREFIX}{int(now):010d}.{socket.gethostname()}.{os.getpid()}.0"
        self._out = RecordWriter(outputs.open_new_stream(os.path.join(folder, name)))
        self._out.write(Event(wall_time=now, file_version="brain.Event:2").SerializeToString())
        self._out.flush()
        self._flushed = time.monotonic()

    def write(self, step: int, values: dict[str, int | float]) -> None:
        summary = self._summary(value=[self._summary.Value(tag=k, simple_value=v) for k, v in values.items()])
        self._out.write(self._event(wall_time=time.time(), step=step, summary=summary).SerializeToString())
        now = time.monotonic()
        if now - self._flushed >= _FLUSH_S:
            self._out.flush()
            self._flushed = now

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._out.flush()
            self._out.close()


atexit.register(close)  # the event files of a program run with quiver.load are flushed at exit
