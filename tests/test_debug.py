"""Debugging a Quiver program: compiled code at .qv lines, `quiver debug`
under debugpy (driven over DAP, as VS Code does), --pdb, --break-on-nan, and
tracebacks that show .qv frames (docs/debugging.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

pytest.importorskip("torch")
debugpy = pytest.importorskip("debugpy")

from dap_client import TIMEOUT, Dap, start_quiver_debug  # noqa: E402

from quiver import loader  # noqa: E402

PROG = """\
model Lin:
    param w: [3 2] = zeros
    param b: [2] = zeros

fn forward(m: Lin, x: [n 3]) -> [n 2]:
    h = x @ m.w
    return h + m.b

fn main():
    m = Lin.init(seed=0)
    x = ones([4 3])
    y = forward(m,
                x)
    s = sum(y)
    print(s)
"""

NAN = """\
fn main():
    x = ones([4])
    y = x - 1.0
    z = log(y)
    w = z * 2.0
    print(w)
"""

FAILS = """\
extern fn hboom(x: [n]) -> [n] from "helper:boom"

fn div(a: [n], b: [n]) -> [n]:
    c = a + b
    return hboom(c)

fn main():
    k = ones([3])
    r = div(k, k)
    print(r)
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def helper(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("def boom(x):\n    raise ZeroDivisionError('the helper divided by zero')\n")


def quiver(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "quiver.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 2,
    )


# ------------------------------------------------------------------ compiled code at .qv lines


def test_compiled_functions_carry_the_qv_path_and_lines(tmp_path):
    path = write(tmp_path, "prog.qv", PROG)
    module = loader.execute(loader.compile_file(path))
    main = module.main.__code__
    assert main.co_filename == path and main.co_name == "main"
    lines = sorted({line for _, _, line in main.co_lines() if line is not None})
    assert lines == [9, 10, 11, 12, 14, 15]  # the def, then one line per statement (12-13 is one)
    body = module.__dict__["_qv_u_forward"].__code__
    assert body.co_filename == path and body.co_name == "forward"
    assert sorted({line for _, _, line in body.co_lines() if line is not None}) == [5, 6, 7]


def test_stepping_goes_one_qv_statement_at_a_time(tmp_path):
    path = write(tmp_path, "prog.qv", PROG)
    module = loader.execute(loader.compile_file(path))
    seen: list[tuple[str, int]] = []

    def trace(frame, event, arg):
        if frame.f_code.co_filename != path:
            return None
        if event == "line":
            seen.append((frame.f_code.co_name, frame.f_lineno))
        return trace

    sys.settrace(trace)
    try:
        module.main()
    finally:
        sys.settrace(None)
    assert seen == [
        ("main", 10),
        ("main", 11),
        ("main", 12),
        ("forward", 6),
        ("forward", 7),
        ("main", 14),
        ("main", 15),
    ]


def test_a_python_traceback_shows_qv_frames_and_qv_text(tmp_path):
    helper(tmp_path)
    path = write(tmp_path, "fails.qv", FAILS)
    module = loader.execute(loader.compile_file(path))
    with pytest.raises(ZeroDivisionError) as info:
        module.main()
    frames = [f for f in traceback.extract_tb(info.value.__traceback__) if f.filename == path]
    assert [(f.name, f.lineno, f.line) for f in frames] == [
        ("main", 9, "r = div(k, k)"),
        ("div", 5, "return hboom(c)"),
    ]


def test_quiver_run_reports_the_qv_frames_and_the_message(tmp_path):
    helper(tmp_path)
    write(tmp_path, "fails.qv", FAILS)
    r = quiver(["run", "fails.qv"], tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == "fails.qv:5:5: error: ZeroDivisionError: the helper divided by zero"
    assert "Traceback" not in r.stderr
    t = quiver(["run", "fails.qv", "--traceback"], tmp_path)
    assert f'File "{tmp_path / "fails.qv"}", line 5, in div\n    return hboom(c)' in t.stderr


def test_a_traceback_shows_the_editor_s_unsaved_text(tmp_path):
    """`--source-stdin` (Run File on an unsaved editor): the lines shown are
    the text that ran, not the file on disk."""
    helper(tmp_path)
    write(tmp_path, "fails.qv", FAILS)
    unsaved = FAILS.replace("    c = a + b\n", "    # added in the editor\n    c = a + b\n")
    r = quiver(["run", "fails.qv", "--source-stdin", "--traceback"], tmp_path, stdin=unsaved)
    assert r.returncode == 1
    assert f'File "{tmp_path / "fails.qv"}", line 6, in div\n    return hboom(c)' in r.stderr, r.stderr
    assert f'File "{tmp_path / "fails.qv"}", line 10, in main\n    r = div(k, k)' in r.stderr
    assert "fails.qv:6:5: error: ZeroDivisionError: the helper divided by zero" in r.stderr


def test_no_nan_checks_unless_asked(tmp_path):
    path = write(tmp_path, "nan.qv", NAN)
    module = loader.execute(loader.compile_file(path))
    assert "_qv_nan_check" not in module.__dict__
    assert "_qv_nan_check" not in module.main.__code__.co_names


# ------------------------------------------------------------------ pdb


def test_pdb_opens_at_the_qv_line_of_the_error(tmp_path):
    helper(tmp_path)
    write(tmp_path, "fails.qv", FAILS)
    r = quiver(["debug", "fails.qv", "--pdb"], tmp_path, stdin="p c\np a + 2\nup\np k\nc\n")
    assert r.returncode == 1
    out = r.stdout
    assert f"> {tmp_path / 'fails.qv'}(5)div()\n-> return hboom(c)" in out
    assert "tensor([2., 2., 2.])" in out  # c
    assert "tensor([3., 3., 3.])" in out  # a + 2 (evaluated in div's frame)
    assert f"> {tmp_path / 'fails.qv'}(9)main()\n-> r = div(k, k)" in out
    assert "fails.qv:5:5: error: ZeroDivisionError: the helper divided by zero" in r.stderr


def test_pdb_breaks_on_the_first_nan(tmp_path):
    write(tmp_path, "nan.qv", NAN)
    r = quiver(["debug", "nan.qv", "--pdb", "--break-on-nan"], tmp_path, stdin="p z\nn\np w\nc\n")
    assert r.returncode == 0, r.stderr
    assert "quiver: nan.qv:4: z holds a NaN or an infinity: [4] f32 [-inf, -inf, -inf, -inf]" in r.stderr
    out = r.stdout
    assert f"> {tmp_path / 'nan.qv'}(4)main()\n-> z = log(y)" in out
    assert "tensor([-inf, -inf, -inf, -inf])" in out
    assert f"> {tmp_path / 'nan.qv'}(5)main()\n-> w = z * 2.0" in out  # `next` went on to line 5
    assert "*** NameError: name 'w' is not defined" in out  # not yet assigned there


def test_debug_options_that_do_not_fit(tmp_path):
    write(tmp_path, "nan.qv", NAN)
    r = quiver(["debug", "nan.qv", "--pdb", "--listen", "1234"], tmp_path)
    assert r.returncode == 2 and "--pdb runs pdb in this terminal" in r.stderr
    r = quiver(["debug", "nan.qv", "--listen", "localhost:http"], tmp_path)
    assert r.returncode == 2 and "expected HOST:PORT or PORT, found 'localhost:http'" in r.stderr


# ------------------------------------------------------------------ debugpy over DAP


def _session(tmp_path: Path, name: str, extra: tuple[str, ...] = (), command: list[str] | None = None):
    args = [name, "--listen", "127.0.0.1:0", "--wait-for-client", *extra]
    proc, port, err = start_quiver_debug(args, str(tmp_path), command=command)
    return proc, Dap("127.0.0.1", port), err


def _end(proc, dap: Dap, err: list[str]) -> str:
    try:
        proc.wait(timeout=TIMEOUT)
    finally:
        dap.close()
        if proc.poll() is None:
            proc.kill()
    return "".join(proc.out_lines)


def test_debugpy_breakpoint_step_and_variables(tmp_path):
    path = write(tmp_path, "prog.qv", PROG)
    proc, dap, err = _session(tmp_path, "prog.qv")
    try:
        dap.start({path: [11, 6]})
        stop = dap.stopped()
        assert stop["reason"] == "breakpoint"
        tid = stop["threadId"]
        frames = dap.frames(tid)
        # only the program's frames: the runtime and the driver are library code
        assert [(f["name"], f["source"]["path"], f["line"]) for f in frames] == [("main", path, 11)]
        assert dap.locals(frames[0]["id"])["m"]["value"] == "Lin(param w: [3 2] f32, param b: [2] f32)"
        dap.request("next", {"threadId": tid})
        assert dap.stopped()["reason"] == "step"
        assert dap.top(tid)["line"] == 12  # the statement after, once (12-13 is one statement)
        dap.request("continue", {"threadId": tid})
        stop = dap.stopped()
        assert stop["reason"] == "breakpoint"
        frames = dap.frames(tid)
        assert [(f["name"], f["line"]) for f in frames] == [("forward", 6), ("main", 12)]
        local = dap.locals(frames[0]["id"])
        assert local["x"]["value"] == "[4 3] f32 [1, 1, 1, 1, 1, 1, ...]"
        params = dap.children(local["m"]["variablesReference"])
        assert {k: v["value"] for k, v in params.items()} == {
            "w": "[3 2] f32 [0, 0, 0, 0, 0, 0]",
            "b": "[2] f32 [0, 0]",
        }
        about = dap.children(local["x"]["variablesReference"])
        assert about["type"]["value"] == "'[4 3] f32'" and about["nan or inf"]["value"] == "0"
        assert about["mean"]["value"] == "1.0"
        # the debug console evaluates names and fields
        got = dap.request("evaluate", {"expression": "m.w", "frameId": frames[0]["id"], "context": "repl"})
        assert got["result"] == "[3 2] f32 [0, 0, 0, 0, 0, 0]"
        dap.request("continue", {"threadId": tid})
        out = _end(proc, dap, err)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, "".join(err)
    assert out.strip() == "0.0000"  # print(s): the sum of zeros


def _console_script() -> list[str]:
    """The `quiver` command pip installed beside this Python (a script whose
    own frame, `quiver:8 (<module>)`, calls quiver.cli.main)."""
    script = Path(sys.executable).with_name("quiver")
    if not script.is_file():
        pytest.skip("no quiver console script beside this Python")
    return [str(script)]


@pytest.mark.parametrize("exception", [False, True])
def test_the_quiver_command_s_own_frame_is_not_shown(tmp_path, exception):
    # `quiver debug` started by the console script, attached with justMyCode:
    # the script that calls quiver.cli.main is quiver's, not the program's,
    # so a stop shows only .qv frames, at a breakpoint and at an error.
    helper(tmp_path)
    path = write(tmp_path, "fails.qv", FAILS)
    proc, dap, err = _session(tmp_path, "fails.qv", command=_console_script())
    try:
        dap.start({} if exception else {path: [4]}, exception_filters=("uncaught",) if exception else ())
        stop = dap.stopped()
        assert stop["reason"] == ("exception" if exception else "breakpoint")
        frames = dap.frames(stop["threadId"])
        names = [(f["name"], f.get("source", {}).get("path"), f["line"]) for f in frames]
        if exception:  # the extern fn's module is the user's code: shown, above the .qv frames
            assert names[0][:2] == ("boom", str(tmp_path / "helper.py"))
            names = names[1:]
        assert names == [("div", path, 5 if exception else 4), ("main", path, 9)]
        dap.request("continue", {"threadId": stop["threadId"]})
        _end(proc, dap, err)
    finally:
        if proc.poll() is None:
            proc.kill()


TRAIN = """\
model Lin:
    param w: [3 2] = ones
    param b: [2] = zeros

fn loss(m: Lin, x: [n 3]) -> []:
    return sum(x @ m.w + m.b)

fn step(mut m: Lin, x: [n 3]) -> []:
    l, g = value_and_grad(loss, m, x)
    m.w = m.w - 0.1 * g.w
    return l

fn main():
    m = Lin.init(seed=0)
    x = ones([4 3])
    for i in range(5):
        l = step(m, x)
        print(l)
"""


def test_debugpy_conditional_breakpoints_and_a_gradient_s_fields(tmp_path):
    path = write(tmp_path, "train.qv", TRAIN)
    proc, dap, err = _session(tmp_path, "train.qv")
    try:
        # Quiver-like conditions: a field of a model, a loop variable. Each
        # step takes 0.4 off every entry of w (g.w is 4 everywhere): 1, 0.6,
        # 0.2, -0.2, -0.6 before steps 0..4.
        dap.start(
            {
                path: [
                    {"line": 10, "condition": "-0.5 < m.w[0, 0] < 0"},
                    {"line": 18, "condition": "i == 4"},
                ]
            }
        )
        stop = dap.stopped()
        assert stop["reason"] == "breakpoint"
        tid = stop["threadId"]
        top = dap.top(tid)
        assert (top["name"], top["line"]) == ("step", 10)
        local = dap.locals(top["id"])
        assert local["l"]["value"] == "[] f32 -4.8"  # 8 outputs of 3 * -0.2
        assert local["g"]["value"] == "Grad[Lin](w: [3 2] f32, b: [2] f32)"
        fields = dap.children(local["g"]["variablesReference"])
        assert fields["w"]["value"] == "[3 2] f32 [4, 4, 4, 4, 4, 4]"
        # the debug console: the fields of the gradient and of the model
        got = dap.request("evaluate", {"expression": "g.w", "frameId": top["id"], "context": "repl"})
        assert got["result"] == "[3 2] f32 [4, 4, 4, 4, 4, 4]"
        got = dap.request("evaluate", {"expression": "m.w[0, 0]", "frameId": top["id"], "context": "repl"})
        assert got["result"] == "[] f32 -0.2"
        dap.request("continue", {"threadId": tid})
        stop = dap.stopped()
        top = dap.top(tid)
        assert (stop["reason"], top["name"], top["line"]) == ("breakpoint", "main", 18)
        local = dap.locals(top["id"])
        assert local["i"]["value"] == "4" and local["l"]["value"] == "[] f32 -14.4"
        dap.request("continue", {"threadId": tid})
        out = _end(proc, dap, err)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, "".join(err)
    assert out.split() == ["24.0000", "14.4000", "4.8000", "-4.8000", "-14.4000"]


def test_debugpy_stops_at_the_qv_line_of_an_error(tmp_path):
    helper(tmp_path)
    path = write(tmp_path, "fails.qv", FAILS)
    proc, dap, err = _session(tmp_path, "fails.qv")
    try:
        dap.start({}, exception_filters=("uncaught",))
        stop = dap.stopped()
        assert stop["reason"] == "exception"
        tid = stop["threadId"]
        frames = [f for f in dap.frames(tid) if f.get("source", {}).get("path") == path]
        assert [(f["name"], f["line"]) for f in frames][:2] == [("div", 5), ("main", 9)]
        info = dap.request("exceptionInfo", {"threadId": tid})
        assert "the helper divided by zero" in info["description"]
        local = dap.locals(frames[0]["id"])
        assert local["c"]["value"] == "[3] f32 [2, 2, 2]"
        dap.request("continue", {"threadId": tid})
        _end(proc, dap, err)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert "fails.qv:5:5: error: ZeroDivisionError: the helper divided by zero" in "".join(err)


def test_debugpy_breaks_on_the_first_nan(tmp_path):
    path = write(tmp_path, "nan.qv", NAN)
    proc, dap, err = _session(tmp_path, "nan.qv", ("--break-on-nan",))
    try:
        dap.start({}, exception_filters=())
        stop = dap.stopped()
        assert stop["reason"] == "exception"
        tid = stop["threadId"]
        top = dap.top(tid)
        assert (top["source"]["path"], top["line"], top["name"]) == (path, 4, "main")
        local = dap.locals(top["id"])
        assert local["z"]["value"] == "[4] f32 [-inf, -inf, -inf, -inf]"
        assert local["y"]["value"] == "[4] f32 [0, 0, 0, 0]"
        info = dap.request("exceptionInfo", {"threadId": tid})
        assert "z holds a NaN or an infinity" in info["description"]
        dap.request("continue", {"threadId": tid})
        _end(proc, dap, err)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, "".join(err)


def test_vscode_launch_through_debugpys_adapter(tmp_path):
    # What the extension's `quiver` debug type does (vscode-extension/src/debug.ts,
    # debugpyLaunch): debugpy's own adapter launches `-m quiver.cli debug FILE`.
    path = write(tmp_path, "nan.qv", NAN)
    endpoints = tmp_path / "endpoints.json"
    adapter = subprocess.Popen(
        [sys.executable, "-m", "debugpy.adapter", "--host", "127.0.0.1", "--port", "0"],
        env={**os.environ, "DEBUGPY_ADAPTER_ENDPOINTS": str(endpoints)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    dap = None
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (endpoints.exists() and endpoints.read_text().strip()):
            assert time.monotonic() < deadline, "the debug adapter did not start"
            time.sleep(0.1)
        client = json.loads(endpoints.read_text())["client"]
        dap = Dap(client["host"], client["port"])
        dap.request(
            "initialize", {"clientID": "vscode", "adapterID": "quiver", "pathFormat": "path", "linesStartAt1": True}
        )
        launch = {
            "type": "quiver",
            "request": "launch",
            "name": "Debug nan.qv",
            "module": "quiver.cli",
            "args": ["debug", path, "--break-on-nan"],
            "python": [sys.executable],
            "cwd": str(tmp_path),
            "console": "internalConsole",
            "justMyCode": True,
            "rules": [{"module": "quiver", "include": False}],
            "redirectOutput": True,
        }
        launched = dap.send("launch", launch)
        dap.event("initialized")
        dap.request("setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": 3}]})
        dap.request("setExceptionBreakpoints", {"filters": ["uncaught"]})
        dap.request("configurationDone")
        dap.response(launched)
        stop = dap.stopped()
        assert stop["reason"] == "breakpoint"
        tid = stop["threadId"]
        assert [(f["name"], f["line"]) for f in dap.frames(tid)] == [("main", 3)]  # no frame of quiver itself
        assert dap.locals(dap.top(tid)["id"])["x"]["value"] == "[4] f32 [1, 1, 1, 1]"
        dap.request("continue", {"threadId": tid})
        stop = dap.stopped()  # break on NaN
        top = dap.top(tid)
        assert (stop["reason"], top["line"]) == ("exception", 4)
        dap.request("continue", {"threadId": tid})
        dap.event("terminated")
        output = "".join(e["body"].get("output", "") for e in dap.events if e.get("event") == "output")
        assert "[-inf, -inf, -inf, -inf]" in output
    finally:
        if dap is not None:
            dap.close()
        adapter.kill()
        adapter.wait(timeout=TIMEOUT)
