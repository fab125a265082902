"""Run File for training runs (issue 26): the steps a program logs reach the
editor as `quiver/runMetrics` (not as output), the arguments of `main` reach
the program, and a run has no timeout unless the settings give one.

Most tests use tests/server/fake_runner.py, which writes MetricsRecord lines
(`# fake: metric ...`) as the real runner does for `log(...)`; the real-runner
test runs a program that calls `log(i, loss=l)`.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, SERVER, Session, init_params, make_client, wait_until
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from quiver.run_protocol import MetricsRecord
from quiver.server.runs import METRICS_BATCH, METRICS_FLUSH_SECONDS

MAIN = "fn main():\n    x = randn([3], seed=1)\n    print(x)\n"


async def run(session: Session, text: str, *args) -> tuple[str, str]:
    uri = session.open(text)
    await session.diagnostics(uri)
    result = await session.command("quiver.runFile", uri, *args)
    return uri, result["runId"]


async def finished(session: Session, run_id: str, timeout: float = 60) -> dict:
    (done,) = await wait_until(lambda: session.custom("quiver/runFinished", run_id), timeout, f"end of {run_id}")
    return done


def output(session: Session, run_id: str, stream: str = "stdout") -> str:
    return "".join(p["text"] for p in session.custom("quiver/runOutput", run_id) if p["stream"] == stream)


def records(session: Session, run_id: str) -> list[dict]:
    return [r for p in session.custom("quiver/runMetrics", run_id) for r in p["records"]]


# ---------------------------------------------------------------------- metrics


async def test_logged_steps_are_sent_as_metrics_and_not_as_output(session: Session) -> None:
    text = MAIN + (
        "# fake: stderr warming up\n"
        "# fake: metric 0 loss=2.5 acc=0.125\n"
        "# fake: print 1\n"
        "# fake: metric 10 loss=1.25 acc=0.5\n"
        "# fake: stderr {not a record}\n"
        "# fake: metric 20 loss=nan acc=inf\n"
        "# fake: stderr done\n"
    )
    uri, run_id = await run(session, text)
    done = await finished(session, run_id)
    assert done["status"] == "ok"
    assert records(session, run_id) == [
        {"step": 0, "values": {"loss": 2.5, "acc": 0.125}},
        {"step": 10, "values": {"loss": 1.25, "acc": 0.5}},
        {"step": 20, "values": {"loss": None, "acc": None}},  # not finite: null (JSON has no NaN)
    ]
    assert all(p["uri"] == uri for p in session.custom("quiver/runMetrics", run_id))
    # the lines are not output; everything else on stderr is, in order
    assert output(session, run_id, "stderr") == "warming up\n{not a record}\ndone\n"
    assert "quiver_metrics" not in output(session, run_id, "stdout")
    # every runMetrics comes before runFinished
    methods = [m for m, p in session.client.custom if p.get("runId") == run_id]
    assert methods[-1] == "quiver/runFinished" and "quiver/runMetrics" in methods


async def test_a_metrics_line_before_a_failure_leaves_the_failure_to_the_last_line(session: Session) -> None:
    text = MAIN + "# fake: metric 5 loss=0.5\n# fake: fail 2 5 2 10 boom\n"
    uri, run_id = await run(session, text)
    done = await finished(session, run_id)
    assert done["status"] == "failed" and done["message"].endswith(":2:5: boom")
    assert records(session, run_id) == [{"step": 5, "values": {"loss": 0.5}}]
    assert output(session, run_id, "stderr") == "Traceback (most recent call last): ...\n"


async def test_a_program_logging_every_step_does_not_flood_the_client(session: Session) -> None:
    n = 20_000
    started = time.monotonic()
    _, run_id = await run(session, MAIN + f"# fake: metrics {n}\n# fake: sleep 0.5\n# fake: metric {n} loss=0\n")
    await finished(session, run_id)
    elapsed = time.monotonic() - started
    batches = [p["records"] for p in session.custom("quiver/runMetrics", run_id)]
    got = [r for b in batches for r in b]
    assert (METRICS_BATCH, METRICS_FLUSH_SECONDS) == (500, 0.1)  # as docs/editor.md says
    # bounded however fast the machine: no batch over METRICS_BATCH, at most
    # one batch per METRICS_FLUSH_SECONDS of the run (and the last one)
    assert all(1 <= len(b) <= METRICS_BATCH for b in batches)
    assert len(batches) <= elapsed / METRICS_FLUSH_SECONDS + 2
    # what is sent is real records, in order, the newest kept
    steps = [r["step"] for r in got]
    assert steps == sorted(set(steps))
    assert all(r["values"] == {"loss": 1 / (r["step"] + 1)} for r in got if r["step"] < n)
    assert n - 1 in steps and steps[-1] == n
    assert output(session, run_id, "stderr") == ""


async def test_metrics_batches_are_spaced_in_time(session: Session) -> None:
    text = MAIN + "".join(f"# fake: metric {i} loss={i}\n# fake: sleep 0.01\n" for i in range(40))
    started = time.monotonic()
    _, run_id = await run(session, text)
    await finished(session, run_id)
    elapsed = time.monotonic() - started
    batches = [p["records"] for p in session.custom("quiver/runMetrics", run_id)]
    assert [r["step"] for b in batches for r in b] == list(range(40))  # none dropped at this pace
    # at most one batch per METRICS_FLUSH_SECONDS of the run (and the last one), whatever its pace
    assert 1 <= len(batches) <= elapsed / METRICS_FLUSH_SECONDS + 2


# ---------------------------------------------------------------------- arguments of main


async def test_the_arguments_of_the_request_reach_the_program(session: Session) -> None:
    words = ["--lr", "1e-3", "--steps", "10", "--name", "two words", "--", "-x"]
    _, run_id = await run(session, MAIN + "# fake: args\n", {"args": words})
    await finished(session, run_id)
    assert json.loads(output(session, run_id)) == words
    (started,) = session.custom("quiver/runStarted", run_id)
    assert started["command"].endswith(" -- --lr 1e-3 --steps 10 --name 'two words' -- -x")
    # none: nothing after the file's options
    _, run_id = await run(session, MAIN + "# fake: args\n", {"args": []})
    await finished(session, run_id)
    assert json.loads(output(session, run_id)) == []
    (started,) = session.custom("quiver/runStarted", run_id)
    assert " -- " not in started["command"]


async def test_bad_arguments_are_refused(session: Session) -> None:
    uri = session.open(MAIN)
    for bad in (["--lr", 1], "--lr 1", {"args": "--lr 1"}, {"args": [1]}):
        with pytest.raises(JsonRpcException, match="expected"):
            await session.command("quiver.runFile", uri, bad)
    assert session.custom("quiver/runStarted") == []


@pytest_lsp.fixture(config=CONFIG)
async def with_args(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code", run={"args": ["--steps", "3"]}))
    yield
    await lsp_client.shutdown_session()


async def test_the_args_setting_is_used_when_the_request_has_none(with_args: LanguageClient) -> None:
    s = Session(with_args)
    _, run_id = await run(s, MAIN + "# fake: args\n")
    await finished(s, run_id)
    assert json.loads(output(s, run_id)) == ["--steps", "3"]
    # the request's own arguments win, even none
    _, run_id = await run(s, MAIN + "# fake: args\n", {"args": []})
    await finished(s, run_id)
    assert json.loads(output(s, run_id)) == []


# ---------------------------------------------------------------------- timeout


async def test_a_run_has_no_timeout_by_default(session: Session) -> None:
    """The default used to be 300 s; now nothing ends a run but its end or Stop.
    (`quiver.run.timeoutSeconds` still sets one: test_run_file.py.)"""
    from quiver.server.settings import RunSettings

    assert RunSettings().timeout_seconds is None
    uri, run_id = await run(session, MAIN + "# fake: print 1\n# fake: sleep 1.5\n# fake: print 2\n")
    done = await finished(session, run_id)
    assert (done["status"], output(session, run_id)) == ("ok", "line 1\nline 1\nline 2\n")


@pytest_lsp.fixture(config=CONFIG)
async def timeout_off(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code", run={"timeoutSeconds": 1}))
    yield
    await lsp_client.shutdown_session()


async def test_a_timeout_of_zero_or_null_means_none(timeout_off: LanguageClient) -> None:
    from lsprotocol import types as lsp

    s = Session(timeout_off)
    for value in (0, None):
        timeout_off.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"quiver": {"run": {"timeoutSeconds": value}}})
        )
        # (a notification: handled before the request that follows it)
        _, run_id = await run(s, MAIN + "# fake: sleep 1.5\n# fake: print 1\n")
        done = await finished(s, run_id)
        assert (done["status"], output(s, run_id)) == ("ok", "line 1\n")
    assert timeout_off.messages == []  # neither value is a problem


# ---------------------------------------------------------------------- the real runner

REAL = ClientServerConfig(
    server_command=SERVER,
    client_factory=make_client,
    server_env={k: v for k, v in os.environ.items() if k != "QUIVER_LSP_RUNNER"},
)


@pytest_lsp.fixture(config=REAL)
async def real(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code"))
    yield
    await lsp_client.shutdown_session()


# A training loop that logs its loss.
LOGGING_PROGRAM = """\
fn main():
    w = randn([4], seed=1)
    for i in range(5):
        l = mean(w * w) / (i + 1.0)
        log(i, loss=l)
        print("step", i)
"""


async def test_real_runner_metrics_reach_the_editor(real: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "train.qv"
    path.write_text(LOGGING_PROGRAM)
    s = Session(real, tmp_path)
    uri = s.open(LOGGING_PROGRAM, path.as_uri())
    await s.diagnostics(uri)
    run_id = (await s.command("quiver.runFile", uri))["runId"]
    done = await finished(s, run_id, 120)
    assert done["status"] == "ok", (done, output(s, run_id, "stderr"))
    got = records(s, run_id)
    assert [r["step"] for r in got] == [0, 1, 2, 3, 4]
    first = got[0]["values"]["loss"]
    assert first > 0 and all(math.isclose(r["values"]["loss"], first / (r["step"] + 1), rel_tol=1e-5) for r in got)
    assert output(s, run_id) == "".join(f"step {i}\n" for i in range(5))
    assert "quiver_metrics" not in output(s, run_id, "stderr")
    assert (tmp_path / "runs" / "train" / "metrics.csv").read_text().splitlines()[0] == "step,loss"
    # what the runner wrote is what the protocol parses
    assert MetricsRecord.parse(MetricsRecord(1, {"loss": first}).to_json()) == MetricsRecord(1, {"loss": first})


async def test_the_server_exiting_during_a_run_that_logs_is_clean(tmp_path: Path) -> None:
    """A run that is still sending batches when the server exits leaves no timer behind."""
    from lsp_support import server_env

    client = make_client()
    await client.start_io(*SERVER, env=server_env())
    await client.initialize_session(init_params("neovim"))
    s = Session(client)
    _, run_id = await run(s, MAIN + "".join(f"# fake: metric {i} loss=1\n# fake: sleep 0.05\n" for i in range(200)))
    await wait_until(lambda: records(s, run_id), 60, "the first records")
    await client.shutdown_session()
    await client.stop()
    assert client._server is not None and client._server.returncode == 0
    assert [m.message for m in client.log_messages if m.type == 1] == []  # no error logged (a timer left behind)


async def test_real_runner_gives_the_arguments_to_main(real: LanguageClient, tmp_path: Path) -> None:
    s = Session(real, tmp_path)
    text = 'fn main(lr: Float = 3e-4, steps: Int = 2):\n    print("lr", lr, "steps", steps)\n'
    uri = s.open(text)
    await s.diagnostics(uri)
    run_id = (await s.command("quiver.runFile", uri, {"args": ["--steps", "3", "--lr", "0.5"]}))["runId"]
    done = await finished(s, run_id, 120)
    assert done["status"] == "ok", (done, output(s, run_id, "stderr"))
    assert output(s, run_id) == "lr 0.5 steps 3\n"
