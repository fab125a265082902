"""`quiver run`'s progress line (issue 26): a tqdm bar updated in place on a
terminal (a pseudo-terminal here), plain lines without control characters
through a pipe, the program's prints whole on their own lines, --no-progress,
rank 0 only, nothing outside `quiver run`.

The runs here lower the bar's delay (DELAY_S, 2 s in use) so that a short
loop shows it: the subprocess sets it before calling the runner."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from quiver import runtime as rt
from quiver.runtime import _dist, _progress

PROGRAM = """\
fn main():
    for step in range(300):
        x = randn([16 16], seed=step)
        log(step, loss=mean(x @ x))
        if step == 150:
            print("halfway there")
    for j in range(2):
        print("after", j)
"""

RUNNER = (
    "import sys; from quiver.runtime import _progress as p; p.DELAY_S = {delay}; p.PLAIN_EVERY_S = {every}; "
    "from quiver.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _args(tmp_path: Path, *extra: str, delay: float = 0.0, every: float = 0.0) -> list[str]:
    prog = tmp_path / "prog.qv"
    prog.write_text(PROGRAM, encoding="utf-8")
    code = RUNNER.format(delay=delay, every=every)
    return [sys.executable, "-c", code, "run", str(prog), "--log-dir", str(tmp_path / "logs"), *extra]


def _in_pty(args: list[str], cwd: Path, rows: int = 24, cols: int = 100) -> tuple[int, bytes]:
    """Run with stdin, stdout and stderr on one pseudo-terminal; all it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=120), out


def _visible_lines(text: str) -> list[str]:
    """What a terminal shows of each line: the text after its last carriage return."""
    return [line.rsplit("\r", 1)[-1].rstrip() for line in text.replace("\r\n", "\n").split("\n")]


def test_a_terminal_gets_a_bar_updated_in_place(tmp_path: Path) -> None:
    code, raw = _in_pty(_args(tmp_path), tmp_path)
    text = raw.decode("utf-8")
    assert code == 0, text
    bars = re.findall(r"\rstep: +(\d+)%\|[^|\r]*\| (\d+)/300 \[[^\]\r]*step/s(?:, loss=[-0-9.e]+)?\]", text)
    assert len(bars) >= 2  # redrawn in place: carriage returns, not new lines
    assert bars[-1] == ("100", "300")
    assert re.search(r"300/300 \[[^\]]*, loss=[-0-9.e]+\]", text)  # the last logged value on the bar
    shown = _visible_lines(text)
    # the program's prints are whole lines, in order, the bar lifted off while each was written
    assert [x for x in shown if x.startswith(("halfway", "after"))] == ["halfway there", "after 0", "after 1"]


def test_a_pipe_gets_plain_lines_without_control_characters(tmp_path: Path) -> None:
    r = subprocess.run(_args(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "halfway there\nafter 0\nafter 1\n"
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", r.stderr)  # no \r, no escapes
    lines = [x for x in r.stderr.splitlines() if x.startswith("step ")]
    assert lines, r.stderr
    for line in lines[:-1]:
        assert re.fullmatch(r"step \d+/300 \(\d+%\) [0-9.e+]+ steps/s ETA \d\d:\d\d loss=[-0-9.e]+", line), line
    assert re.fullmatch(r"step 300/300 \(100%\) [0-9.e+]+ steps/s done in \d\d:\d\d loss=[-0-9.e]+", lines[-1])


def test_short_loops_show_nothing(tmp_path: Path) -> None:
    """A loop that ends before the delay never shows progress (a delay no
    machine reaches, so the test does not depend on the machine's speed)."""
    r = subprocess.run(
        _args(tmp_path, delay=3600.0, every=3600.0), cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0
    assert [x for x in r.stderr.splitlines() if not x.startswith("quiver: metrics:")] == []


def test_no_progress_turns_it_off(tmp_path: Path) -> None:
    code, raw = _in_pty(_args(tmp_path, "--no-progress"), tmp_path)
    text = raw.decode("utf-8")
    assert code == 0
    assert "step/s" not in text and "steps/s" not in text
    assert "halfway there" in text


def test_outside_quiver_run_the_sequence_is_itself() -> None:
    seq = range(5)
    assert rt.progress(seq, "step") is seq


def test_only_rank_0_shows_progress(monkeypatch) -> None:
    before = _progress.configure(True)
    try:
        seq = range(5)
        monkeypatch.setattr(_dist, "rank", lambda: 1)
        assert rt.progress(seq, "step") is seq
        monkeypatch.setattr(_dist, "rank", lambda: 0)
        assert rt.progress(seq, "step") is not seq
    finally:
        _progress.restore(before)


@pytest.mark.parametrize("stop_at", [None, 3])
def test_the_wrapped_loop_runs_the_same_items(stop_at, capsys) -> None:
    import io

    before = _progress.configure(True, stream=io.StringIO(), delay_s=0.0, every_s=0.0)
    try:
        seen = []
        for i in rt.progress(rt.batches(rt.arange(10), size=3), "xb"):
            seen.append(i.tolist())
            if stop_at is not None and len(seen) == stop_at:
                break
    finally:
        _progress.restore(before)
    want = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert seen == want[: stop_at or 4]


def test_plain_lines_name_the_loop_and_its_total() -> None:
    import io

    stream = io.StringIO()
    before = _progress.configure(True, stream=stream, delay_s=0.0, every_s=0.0)
    try:
        for i in rt.progress(range(4), "epoch"):
            _progress.note({"loss": 1.0 / (i + 1), "n": i})
    finally:
        _progress.restore(before)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("epoch 1/4 (25%) ") and lines[0].endswith(" loss=1 n=0")
    assert lines[-1].startswith("epoch 4/4 (100%) ") and re.search(r" done in \d\d:\d\d ", lines[-1])
    assert lines[-1].endswith("loss=0.25 n=3")


def test_prints_in_process_go_through_untouched(capsys) -> None:
    rt.print("a", 1)
    assert capsys.readouterr().out == "a 1\n"


FAILING = """\
fn main():
    for step in range(300):
        x = randn([16 16], seed=step)
        log(step, loss=mean(x @ x))
        if step == 150:
            print("halfway there")
            y = load_npy("missing.npy", [n] f32)
            print(y)
"""

ENDLESS = """\
fn main():
    for step in range(100000000):
        x = randn([16 16], seed=step)
        if step == 200:
            print("started")
"""


def _run_in_pty(tmp_path: Path, program: str, interrupt_after: bytes | None = None) -> tuple[int, str]:
    """`quiver run` of `program` on a pseudo-terminal (the bar shown at once); with
    `interrupt_after`, a Ctrl-C (SIGINT) once that text has been written."""
    import signal
    import time

    prog = tmp_path / "prog.qv"
    prog.write_text(program, encoding="utf-8")
    args = [sys.executable, "-c", RUNNER.format(delay=0.0, every=0.0), "run", str(prog), "--no-warnings"]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path, close_fds=True)
    os.close(slave)
    out, sent, deadline = b"", False, time.monotonic() + 120
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        out += chunk
        if interrupt_after is not None and not sent and interrupt_after in out:
            time.sleep(0.5)  # the bar has been drawn again after the print
            proc.send_signal(signal.SIGINT)
            sent = True
        if time.monotonic() > deadline:  # a hang bound, not a speed bound
            proc.kill()
    os.close(master)
    return proc.wait(timeout=120), out.decode("utf-8")


def test_a_failing_run_takes_the_bar_off_before_its_error(tmp_path: Path) -> None:
    code, text = _run_in_pty(tmp_path, FAILING)
    assert code == 1, text
    assert re.search(r"\rstep: +\d+%\|", text), text  # a bar was shown
    shown = [x for x in _visible_lines(text) if x]
    # the bar's line is erased, not left frozen above the error, which ends the output
    assert not [x for x in shown if x.startswith("step:")], shown
    assert (
        shown[-1] == "prog.qv:7:17: error: missing.npy: no such file (looked for " + str(tmp_path / "missing.npy") + ")"
    )
    assert "halfway there" in shown


def test_an_interrupted_run_takes_the_bar_off_before_saying_so(tmp_path: Path) -> None:
    code, text = _run_in_pty(tmp_path, ENDLESS, interrupt_after=b"started")
    assert code == 130, text
    shown = [x for x in _visible_lines(text) if x]
    assert not [x for x in shown if x.startswith("step:")], shown
    assert shown[-1] == "quiver: interrupted", shown


def test_a_loop_left_by_break_keeps_its_bar(tmp_path: Path) -> None:
    program = (
        'fn main():\n    for step in range(300):\n        if step == 150:\n            break\n    print("after")\n'
    )
    code, text = _run_in_pty(tmp_path, program)
    assert code == 0, text
    shown = [x for x in _visible_lines(text) if x]
    assert re.fullmatch(r"step: +50%\|.*\| 150/300 \[.*\]", shown[-2]) and shown[-1] == "after", shown
