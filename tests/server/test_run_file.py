"""Run file: `quiver.runFile` / `quiver.stopRun`, streamed output, exit status,
runtime failures as diagnostics, timeouts; the server never blocks and
survives whatever the program does.

Most tests use tests/server/fake_runner.py (QUIVER_LSP_RUNNER), which follows
the runner's contract and does what the file's `# fake:` lines say; the last
ones use the real `python -m quiver.cli`.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, SERVER, Session, init_params, make_client, server_env, wait_until
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from quiver.checker import check_text

MAIN = "fn main():\n    x = randn([3], seed=1)\n    print(x)\n"


async def run(session: Session, text: str, uri: str | None = None) -> tuple[str, str]:
    uri = session.open(text, uri)
    await session.diagnostics(uri)
    result = await session.command("quiver.runFile", uri)
    return uri, result["runId"]


async def finished(session: Session, run_id: str, timeout: float = 20) -> dict:
    (done,) = await wait_until(lambda: session.custom("quiver/runFinished", run_id), timeout, f"end of {run_id}")
    return done


def output(session: Session, run_id: str, stream: str = "stdout") -> str:
    return "".join(p["text"] for p in session.custom("quiver/runOutput", run_id) if p["stream"] == stream)


async def test_output_streams_and_success_is_reported(session: Session) -> None:
    uri, run_id = await run(session, MAIN + "# fake: print 3\n# fake: stderr a warning\n")
    done = await finished(session, run_id)
    assert done == {"uri": uri, "runId": run_id, "exitCode": 0, "status": "ok"}
    assert output(session, run_id) == "line 1\nline 2\nline 3\n"
    assert output(session, run_id, "stderr") == "a warning\n"
    (started,) = session.custom("quiver/runStarted", run_id)
    assert started["uri"] == uri
    assert " --error-format json" in started["command"] and " run " in started["command"]
    # notifications came in order: started, output, finished
    methods = [m for m, p in session.client.custom if p.get("runId") == run_id]
    assert methods[0] == "quiver/runStarted" and methods[-1] == "quiver/runFinished"


async def test_a_runtime_failure_becomes_a_diagnostic_at_its_location(session: Session) -> None:
    text = MAIN + "# fake: print 1\n# fake: fail 2 9 2 25 shape mismatch in randn\n"
    uri, run_id = await run(session, text)
    done = await finished(session, run_id)
    assert done["status"] == "failed" and done["exitCode"] == 1
    assert done["message"].endswith(":2:9: shape mismatch in randn")
    # the runner's JSON line is not shown as output; the rest of stderr is
    assert output(session, run_id, "stderr") == "Traceback (most recent call last): ...\n"

    def with_run_failure():
        for p in reversed(session.client.published):
            if p.uri == uri and any(d.source == "quiver run" for d in p.diagnostics):
                return p
        return None

    published = await wait_until(with_run_failure, 5, "the run's diagnostic")
    (d,) = [d for d in published.diagnostics if d.source == "quiver run"]
    assert (d.range, d.message, d.severity, d.code) == (
        session.range(uri, text.index("randn"), text.index("randn") + 16),
        "shape mismatch in randn",
        lsp.DiagnosticSeverity.Error,
        "run",
    )
    assert published.version == 1
    # pulled too
    report = await session.client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri))
    )
    assert [x.message for x in report.items] == ["shape mismatch in randn"]
    # an edit makes the location stale: the diagnostic goes
    v = session.change(uri, 0, 0, "# edited\n")
    assert [x for x in await session.diagnostics(uri, v) if x.source == "quiver run"] == []


async def test_a_check_failure_is_reported_but_not_duplicated(session: Session) -> None:
    uri, run_id = await run(session, MAIN + "# fake: checkfail 2 5 2 6 E0101 unknown name\n")
    done = await finished(session, run_id)
    assert done["status"] == "failed" and done["message"].endswith(":2:5: E0101 unknown name")
    await asyncio.sleep(0.1)
    assert not [d for p in session.client.published if p.uri == uri for d in p.diagnostics if d.source == "quiver run"]


async def test_a_failure_without_json_reports_the_exit_status(session: Session) -> None:
    uri, run_id = await run(session, MAIN + "# fake: exit 3\n")
    assert await finished(session, run_id) == {
        "uri": uri,
        "runId": run_id,
        "exitCode": 3,
        "status": "failed",
        "message": "exited with code 3",
    }


async def test_stop_by_uri_and_by_id_ends_the_whole_process_group(session: Session, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    uri, run_id = await run(session, MAIN + f"# fake: print 1\n# fake: child 600 {pidfile}\n# fake: sleep 600\n")
    await wait_until(lambda: pidfile.exists() and pidfile.read_text(), 10, "the child to start")
    child = int(pidfile.read_text())
    assert await session.command("quiver.stopRun", uri) == {"stopped": [run_id]}
    done = await finished(session, run_id, 10)
    assert done == {"uri": uri, "runId": run_id, "exitCode": None, "status": "stopped", "message": "stopped"}
    await wait_until(lambda: not _alive(child), 5, "the child to end")
    # by run id
    _, second = await run(session, MAIN + "# fake: sleep 600\n", session.uri())
    await wait_until(lambda: session.custom("quiver/runStarted", second), 5)
    assert await session.command("quiver.stopRun", second) == {"stopped": [second]}
    assert (await finished(session, second, 10))["status"] == "stopped"
    assert await session.command("quiver.stopRun", "run-unknown") == {"stopped": []}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its parent counts as ended
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


async def test_the_server_answers_while_a_program_runs(session: Session) -> None:
    uri, run_id = await run(session, MAIN + "# fake: sleep 600\n")
    await wait_until(lambda: session.custom("quiver/runStarted", run_id), 5)
    h = await session.hover(uri, MAIN.index("x = randn"))
    assert h.contents.value == "```quiver\n(local) x: [3]\n```"
    assert not session.custom("quiver/runFinished", run_id)  # answered while the program ran
    await session.command("quiver.stopRun", run_id)
    await finished(session, run_id)


async def test_a_second_run_of_a_document_stops_the_first(session: Session) -> None:
    uri, first = await run(session, MAIN + "# fake: sleep 600\n")
    second = (await session.command("quiver.runFile", uri))["runId"]
    assert first != second
    assert (await finished(session, first))["status"] == "stopped"
    await session.command("quiver.stopRun", second)
    assert (await finished(session, second))["status"] == "stopped"


async def test_floods_and_binary_output_do_not_hurt(session: Session) -> None:
    uri, run_id = await run(session, MAIN + "# fake: binary\n# fake: flood 6000000\n# fake: print 1\n")
    done = await finished(session, run_id, 60)
    assert done["status"] == "ok"
    text = output(session, run_id)
    assert text.startswith("caf\ufffd \ufffd\ufffd ok\n")
    assert "[quiver: more than 4 MiB of stdout; the rest is not shown]" in text
    assert len(text) < 4 * 1024 * 1024 + 1000
    # batched: far fewer notifications than the program's writes
    assert len(session.custom("quiver/runOutput", run_id)) < 400
    h = await session.hover(uri, MAIN.index("x = randn"))
    assert h is not None


async def test_the_editors_text_is_run_and_the_file_when_unchanged(session: Session, tmp_path: Path) -> None:
    path = tmp_path / "prog.qv"
    text = MAIN + "# fake: file\n# fake: cwd\n# fake: stdin\n"
    path.write_text(text, encoding="utf-8")
    uri, run_id = await run(session, text, path.as_uri())
    await finished(session, run_id)
    assert output(session, run_id) == f"{path}\n{tmp_path}\n''\n"
    (started,) = session.custom("quiver/runStarted", run_id)
    assert "--source-stdin" not in started["command"]
    # unsaved changes: the editor's text runs (sent on the runner's stdin), as
    # the file itself, from its folder; the program's stdin is still empty
    before = set(os.listdir(tmp_path))
    session.change(uri, 0, 0, "# unsaved\n# fake: print 1\n")
    run_id = (await session.command("quiver.runFile", uri))["runId"]
    assert (await finished(session, run_id))["status"] == "ok"
    assert output(session, run_id) == f"line 1\n{path}\n{tmp_path}\n''\n"
    (started,) = session.custom("quiver/runStarted", run_id)
    assert started["command"].endswith(f"{path} --error-format json --source-stdin")
    assert set(os.listdir(tmp_path)) == before and path.read_text(encoding="utf-8") == text  # nothing written


async def test_a_failure_in_unsaved_text_is_a_diagnostic_of_the_file(session: Session, tmp_path: Path) -> None:
    path = tmp_path / "prog.qv"
    path.write_text(MAIN, encoding="utf-8")
    uri = session.open(MAIN, path.as_uri())
    await session.diagnostics(uri)
    text = MAIN + "# fake: fail 2 9 2 25 shape mismatch in randn\n"
    session.replace_all(uri, text)
    run_id = (await session.command("quiver.runFile", uri))["runId"]
    done = await finished(session, run_id)
    assert done["message"] == "prog.qv:2:9: shape mismatch in randn"

    def with_run_failure():
        return [d for p in session.client.published if p.uri == uri for d in p.diagnostics if d.source == "quiver run"]

    (d,) = await wait_until(with_run_failure, 5, "the run's diagnostic")
    assert d.message == "shape mismatch in randn"


async def test_an_untitled_document_runs_from_the_servers_folder(session: Session) -> None:
    uri = session.open(MAIN + "# fake: file\n# fake: cwd\n", "untitled:Untitled-1")
    await session.diagnostics(uri)
    run_id = (await session.command("quiver.runFile", uri))["runId"]
    assert (await finished(session, run_id))["status"] == "ok"
    ran, cwd = output(session, run_id).splitlines()
    assert Path(ran).name == "Untitled-1.qv" and Path(ran).parent == Path(cwd)


async def test_runs_that_cannot_start_say_why(session: Session, tmp_path: Path) -> None:
    """A document holding half of a UTF-16 pair (a lone surrogate: not a
    character, so not UTF-8), a document that is neither open nor a file, a
    file that is not UTF-8: a clear RequestFailed message, no traceback, no
    run, nothing left behind."""
    before = set(os.listdir(tempfile.gettempdir()))
    uri = session.open(MAIN + '    s = "\ud800"\n', session.uri("surrogate.qv"))
    await session.diagnostics(uri)
    errors = []
    for target in [uri, "untitled:never-opened", (tmp_path / "bad.qv").as_uri()]:
        if target.endswith("bad.qv"):
            (tmp_path / "bad.qv").write_bytes(b"fn main():\n    print(\xff)\n")
        with pytest.raises(JsonRpcException) as caught:
            await session.command("quiver.runFile", target)
        errors.append(caught.value)
    assert [e.code for e in errors] == [-32803] * 3
    assert errors[0].message == (
        "cannot run surrogate.qv: its text holds U+D800 at line 4, column 10, half of a UTF-16 pair, "
        "which is not a character (the editor sent a broken edit?); retype that character, or reopen the file"
    )
    assert (
        errors[1].message == "cannot run untitled:never-opened: it is not open in the editor, and it is not a file: URI"
    )
    assert errors[2].message == f"cannot run {tmp_path / 'bad.qv'}: it is not UTF-8 text (byte 21)"
    assert all(e.data is None and "Traceback" not in e.message for e in errors)
    assert not session.custom("quiver/runStarted")
    assert not [n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("quiver-run-")]


async def test_run_file_refuses_a_fifo_and_a_link_to_dev_zero(session: Session, tmp_path: Path) -> None:
    """Issue 37 item 6: a file that is not open is read through the one safe
    reader (driver/inputs.py), so a FIFO (which blocked the event loop
    forever) and a link to /dev/zero (which grew the server by a gigabyte a
    second) are refused with a message, and the server goes on answering."""
    fifo = tmp_path / "pipe.qv"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.qv"
    zero.symlink_to("/dev/zero")
    errors = []
    for target in (fifo, zero):
        with pytest.raises(JsonRpcException) as caught:
            await asyncio.wait_for(session.command("quiver.runFile", target.as_uri()), 60)
        errors.append(caught.value)
    assert [(e.code, e.message) for e in errors] == [
        (-32803, f"cannot read {fifo}: it is a FIFO (named pipe), not a regular file"),
        (
            -32803,
            f"cannot read {zero}: it is a symbolic link that leads out of {tmp_path}, "
            "and links out of the folder are not followed",
        ),
    ]
    assert not session.custom("quiver/runStarted")
    uri = session.open(MAIN)
    hover = await asyncio.wait_for(session.hover(uri, MAIN.index("randn")), 60)
    assert hover is not None and "randn" in str(hover.contents)


async def test_an_open_document_whose_file_is_a_fifo_runs_the_editors_text(session: Session, tmp_path: Path) -> None:
    """Comparing the editor's text with the file on disk reads it through the
    safe reader too: a FIFO there is "different", so the editor's text is
    sent to the runner, and nothing blocks."""
    fifo = tmp_path / "piped.qv"
    os.mkfifo(fifo)
    uri = session.open(MAIN + "# fake: print 1\n", fifo.as_uri())
    await session.diagnostics(uri)
    run_id = (await asyncio.wait_for(session.command("quiver.runFile", uri), 60))["runId"]
    done = await finished(session, run_id)
    assert done["status"] == "ok"
    assert output(session, run_id) == "line 1\n"


async def test_stop_ends_a_run_whose_child_left_its_session(session: Session, tmp_path: Path) -> None:
    """A child in a session of its own (outside the run's process group)
    holding the output pipes: Stop still ends it, the run ends within 5 s,
    and stopRun answers only once it has (runFinished came first)."""
    pidfile = tmp_path / "daemon.pid"
    uri, run_id = await run(session, MAIN + f"# fake: print 1\n# fake: daemon 600 {pidfile}\n# fake: sleep 600\n")
    await wait_until(lambda: pidfile.exists() and pidfile.read_text(), 10, "the daemon to start")
    daemon = int(pidfile.read_text())
    assert os.getsid(daemon) == daemon  # it left the run's session
    assert await session.command("quiver.stopRun", uri) == {"stopped": [run_id]}
    assert session.custom("quiver/runFinished", run_id)[0]["status"] == "stopped"
    await wait_until(lambda: not _alive(daemon), 5, "the daemon to end")


async def test_a_run_that_exits_is_done_even_if_its_child_holds_the_output(session: Session, tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    uri, run_id = await run(session, MAIN + f"# fake: print 1\n# fake: daemon 600 {pidfile}\n")
    # the daemon would hold the pipes for 10 minutes: the run's end is the runner's exit
    done = await finished(session, run_id)
    assert done["status"] == "ok"
    assert output(session, run_id) == "line 1\n"
    await wait_until(lambda: not _alive(int(pidfile.read_text())), 5, "the daemon to end")


@pytest_lsp.fixture(config=CONFIG)
async def impatient(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code", run={"timeoutSeconds": 1}))
    yield
    await lsp_client.shutdown_session()


async def test_a_run_is_ended_at_its_timeout_even_with_a_child_outside_its_session(
    impatient: LanguageClient, tmp_path: Path
) -> None:
    s = Session(impatient)
    pidfile = tmp_path / "daemon.pid"
    uri, run_id = await run(s, MAIN + f"# fake: daemon 600 {pidfile}\n# fake: sleep 600\n")
    done = await finished(s, run_id)
    assert done["status"] == "timeout"
    await wait_until(lambda: not _alive(int(pidfile.read_text())), 5, "the daemon to end")


async def test_a_run_that_takes_too_long_is_ended(impatient: LanguageClient) -> None:
    s = Session(impatient)
    uri, run_id = await run(s, MAIN + "# fake: print 1\n# fake: sleep 600\n")
    done = await finished(s, run_id)
    assert done == {
        "uri": uri,
        "runId": run_id,
        "exitCode": None,
        "status": "timeout",
        "message": "timed out after 1 s",
    }
    assert output(s, run_id) == "line 1\n"


async def test_the_server_exiting_ends_its_runs(tmp_path: Path) -> None:
    pidfile = tmp_path / "runner.pid"
    client = make_client()
    await client.start_io(*SERVER, env=server_env())
    await client.initialize_session(init_params("neovim"))
    s = Session(client)
    uri, run_id = await run(s, MAIN + f"# fake: child 600 {pidfile}\n# fake: sleep 600\n")
    await wait_until(lambda: pidfile.exists() and pidfile.read_text(), 10)
    child = int(pidfile.read_text())
    await client.shutdown_session()
    await client.stop()
    await wait_until(lambda: not _alive(child), 10, "the program to end with the server")


# ---------------------------------------------------------------------- the real runner

REAL = ClientServerConfig(
    server_command=SERVER,
    client_factory=make_client,
    server_env={k: v for k, v in os.environ.items() if k != "QUIVER_LSP_RUNNER"},
)


@pytest_lsp.fixture(config=REAL, params=["visual-studio-code", "neovim"])
async def real(lsp_client: LanguageClient, request):
    await lsp_client.initialize_session(init_params(request.param))
    yield
    await lsp_client.shutdown_session()


async def test_real_runner_reports_a_check_failure(real: LanguageClient, tmp_path: Path) -> None:
    s = Session(real, tmp_path)
    text = "fn main():\n    total = 1\n    print(totl)\n"
    uri, run_id = await run(s, text)
    done = await finished(s, run_id, 60)
    (started,) = s.custom("quiver/runStarted", run_id)
    assert " -m quiver.cli run " in started["command"]
    assert done["status"] == "failed" and done["exitCode"] == 1
    (d,) = check_text(text).errors
    assert done["message"] == f"{Path(uri).name}:3:11: {d.code} {d.message}"
    assert "has 1 error(s); nothing was run" in output(s, run_id, "stderr")


async def test_real_runner_refuses_a_main_the_editor_does_not_offer_to_run(
    real: LanguageClient, tmp_path: Path
) -> None:
    """`fn main(x: [4])` checks (with a warning, W0403), but the checker's rule
    (ide.runnable) says it cannot be run: the server offers no Run
    (test_features.py) and the runner, asked anyway, says why at `main`
    instead of failing in Python."""
    s = Session(real, tmp_path)
    text = "fn main(x: [4]):\n    print(x)\n"
    uri, run_id = await run(s, text)
    done = await finished(s, run_id, 60)
    assert done["status"] == "failed" and done["exitCode"] == 1
    assert done["message"] == (
        f"{Path(uri).name}:1:4: main cannot take 'x: [4]' from the command line "
        "(only Int, Float, Bool and Str) (found fn main(x: [4]))"
    )
    assert "TypeError" not in output(s, run_id, "stderr")
    await asyncio.sleep(0.1)  # nothing ran: no run diagnostic
    assert not [d for p in s.client.published if p.uri == uri for d in p.diagnostics if d.source == "quiver run"]


def _runtime_available() -> bool:
    try:
        from quiver import runtime
    except Exception:
        return False
    return hasattr(runtime, "load_compiled")


@pytest.mark.skipif(not _runtime_available(), reason="the torch runtime (quiver.runtime) has not landed on this branch")
async def test_real_runner_runs_main(real: LanguageClient, tmp_path: Path) -> None:
    s = Session(real, tmp_path)
    text = 'fn main():\n    for i in range(3):\n        print("step", i)\n'
    _, run_id = await run(s, text)
    done = await finished(s, run_id, 120)
    assert done["status"] == "ok", done
    assert output(s, run_id) == "step 0\nstep 1\nstep 2\n"


@pytest.mark.skipif(not _runtime_available(), reason="the torch runtime (quiver.runtime) has not landed on this branch")
async def test_real_runner_failure_at_run_time_is_a_diagnostic(real: LanguageClient, tmp_path: Path) -> None:
    s = Session(real, tmp_path)
    text = 'fn main():\n    print("start")\n    n = 0\n    x = 10 / n\n    print(x)\n'
    uri, run_id = await run(s, text)
    done = await finished(s, run_id, 120)
    assert done["status"] == "failed" and done["exitCode"] == 1
    assert done["message"] == f"{Path(uri).name}:4:5: ZeroDivisionError: division by zero"
    assert output(s, run_id) == "start\n"
    assert '"kind": "runtime"' not in output(s, run_id, "stderr")

    def run_diagnostics():
        for p in reversed(s.client.published):
            if p.uri == uri:
                return [d for d in p.diagnostics if d.source == "quiver run"]
        return []

    (d,) = await wait_until(run_diagnostics, 10, "the run's diagnostic")
    line = text.index("x = 10 / n")
    assert (d.range, d.message) == (s.range(uri, line, line + len("x = 10 / n")), "ZeroDivisionError: division by zero")


@pytest.mark.skipif(not _runtime_available(), reason="the torch runtime (quiver.runtime) has not landed on this branch")
async def test_real_runner_can_be_stopped(real: LanguageClient, tmp_path: Path) -> None:
    s = Session(real, tmp_path)
    text = (
        "fn main():\n    i = 0\n    while True:\n        i = i + 1\n"
        "        if i % 1000000 == 0:\n            print(i)\n"
    )
    uri, run_id = await run(s, text)
    await wait_until(lambda: output(s, run_id).startswith("1000000\n"), 120, "the program to print")
    assert await s.command("quiver.stopRun", uri) == {"stopped": [run_id]}
    done = await finished(s, run_id, 10)
    assert (done["status"], done["exitCode"]) == ("stopped", None)


@pytest.mark.skipif(not _runtime_available(), reason="the torch runtime (quiver.runtime) has not landed on this branch")
async def test_real_runner_runs_unsaved_text_as_the_file(real: LanguageClient, tmp_path: Path) -> None:
    """Unsaved text runs as if it were the file: the extern fn's module next to
    the file is found, a relative path opens from the file's folder, errors
    name the file, and nothing is written to the folder."""
    (tmp_path / "helpers.py").write_text(
        "import torch\n\ndef load():\n    return torch.ones(3) * len(open('data.txt').read())\n"
    )
    (tmp_path / "data.txt").write_text("abcd")
    path = tmp_path / "prog.qv"
    path.write_text("fn main():\n    print(1)\n", encoding="utf-8")
    s = Session(real, tmp_path)
    uri = s.open(path.read_text(encoding="utf-8"), path.as_uri())
    await s.diagnostics(uri)
    s.replace_all(uri, 'extern fn load() -> [3] from "helpers:load"\n\nfn main():\n    print(load())\n')
    before = sorted(os.listdir(tmp_path))
    run_id = (await s.command("quiver.runFile", uri))["runId"]
    done = await finished(s, run_id, 120)
    assert done["status"] == "ok", (done, output(s, run_id, "stderr"))
    assert "4." in output(s, run_id)
    assert sorted(n for n in os.listdir(tmp_path) if n != "__pycache__") == [n for n in before if n != "__pycache__"]
    # a failure in the unsaved text points at the file
    s.replace_all(uri, 'fn main():\n    print("start")\n    n = 0\n    x = 10 / n\n    print(x)\n')
    run_id = (await s.command("quiver.runFile", uri))["runId"]
    done = await finished(s, run_id, 120)
    assert done["message"] == "prog.qv:4:5: ZeroDivisionError: division by zero"


# ---------------------------------------------------------------------- quiver.run.nproc


@pytest_lsp.fixture(config=CONFIG)
async def parallel(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code", run={"nproc": 2}))
    yield
    await lsp_client.shutdown_session()


async def test_the_nproc_setting_is_passed_to_the_runner(parallel: LanguageClient) -> None:
    s = Session(parallel)
    _, run_id = await run(s, MAIN + "# fake: print 1\n")
    done = await finished(s, run_id)
    (started,) = s.custom("quiver/runStarted", run_id)
    assert started["command"].endswith(" --nproc 2") and done["status"] == "ok"
    # and without the setting, nothing is added
    parallel.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"quiver": {"run": {"nproc": 1}}})
    )
    await asyncio.sleep(0.2)
    _, run_id = await run(s, MAIN + "# fake: print 1\n")
    await finished(s, run_id)
    (started,) = s.custom("quiver/runStarted", run_id)
    assert "--nproc" not in started["command"]


REAL_PARALLEL = ClientServerConfig(
    server_command=SERVER,
    client_factory=make_client,
    server_env={k: v for k, v in os.environ.items() if k not in ("QUIVER_LSP_RUNNER", "RANK", "WORLD_SIZE")},
)


@pytest_lsp.fixture(config=REAL_PARALLEL)
async def real_parallel(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code", run={"nproc": 2}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.skipif(not _runtime_available(), reason="the torch runtime (quiver.runtime) has not landed on this branch")
async def test_real_runner_runs_data_parallel_and_reports_the_failing_worker(
    real_parallel: LanguageClient, tmp_path: Path
) -> None:
    s = Session(real_parallel, tmp_path)
    text = (
        "fn main():\n"
        '    print("worker", rank(), "of", world_size(), all_ranks=True)\n'
        "    x = randn([4], seed=1)\n"
        "    if rank() == 1:\n"
        "        print(x[rank() + 8])\n"  # known at run time only: E0217 would catch x[9]
    )
    uri, run_id = await run(s, text)
    done = await finished(s, run_id, 120)
    assert done["status"] == "failed" and done["exitCode"] == 1, done
    assert done["message"] == f"{Path(uri).name}:5:9: IndexError: index 9 is out of bounds for dimension 0 with size 4"
    assert sorted(output(s, run_id).splitlines()) == ["[rank 0] worker 0 of 2", "[rank 1] worker 1 of 2"]
