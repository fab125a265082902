"""Opening an untrusted folder (issue 21): no code of the folder runs, runs end
with the server however it ends, a document too large to check costs
nothing, requests after shutdown are answered, files the server cannot read
are reported, and a program cannot drive the editor's terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, Session, init_params, make_client, server_env, wait_until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from test_lifecycle import _alive, _caps, _open, frame, read_one

from quiver.checker.source import MAX_SOURCE_BYTES

MAIN = "fn main():\n    x = randn([3], seed=1)\n    print(x)\n"
HANG_GUARD = 60  # seconds: only a hang takes this long, on any machine


def _impostor(folder: Path, name: str, package: bool) -> None:
    """A module of the folder's that, once imported, leaves a mark (and for
    lark, goes on to be the real one, so that nothing else shows it ran)."""
    mark = folder / f"pwned-{name}"
    body = f"open({str(mark)!r}, 'w').close()\n"
    if name == "lark":
        body += (
            "import sys, os\n"
            "here = os.path.dirname(os.path.abspath(__file__))\n"
            "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != here]\n"
            "del sys.modules['lark']\n"
            "import lark as _real\n"
            "sys.modules['lark'] = _real\n"
            "globals().update(_real.__dict__)\n"
        )
    if package:
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(body)
    else:
        (folder / f"{name}.py").write_text(body)


def _hostile(tmp_path: Path) -> Path:
    folder = tmp_path / "cloned"
    folder.mkdir()
    _impostor(folder, "lark", package=False)
    _impostor(folder, "pygls", package=True)
    _impostor(folder, "lsprotocol", package=True)
    _impostor(folder, "quiver", package=True)
    _impostor(folder, "torch", package=False)
    _impostor(folder, "numpy", package=False)
    (folder / "prog.qv").write_text(MAIN)
    return folder


def _converse_in(folder: Path, command: list[str], messages: list[dict], until) -> list[dict]:
    proc = subprocess.Popen(
        command, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env()
    )
    try:
        proc.stdin.write(b"".join(frame(m) for m in messages))
        proc.stdin.flush()
        seen = []
        while not until(seen):
            seen.append(read_one(proc.stdout))
        return seen
    finally:
        proc.kill()
        proc.communicate(timeout=HANG_GUARD)


def _init(root: Path | None = None) -> list[dict]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri() if root else None, "capabilities": _caps("neovim")},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    ]


def _published(seen: list[dict], uri: str) -> list[dict] | None:
    for m in seen:
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
            return m["params"]["diagnostics"]
    return None


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([sys.executable, "-P", "-m", "quiver.server", "--stdio"], id="as-the-extension-starts-it"),
        # An editor configured by hand, without -P: the server takes the folder off sys.path itself
        # (only a `quiver/` package of the folder could still win, which -P prevents).
        pytest.param([sys.executable, "-m", "quiver.server", "--stdio"], id="without-P"),
    ],
)
def test_opening_a_hostile_folder_runs_none_of_its_code(tmp_path: Path, command: list[str]) -> None:
    folder = _hostile(tmp_path)
    if "-P" not in command:
        (folder / "quiver" / "__init__.py").unlink()
        (folder / "quiver").rmdir()
    uri = (folder / "bad.qv").as_uri()
    messages = [*_init(folder), _open(uri, "fn main():\n    print(totl)\n")]
    seen = _converse_in(folder, command, messages, lambda seen: _published(seen, uri))
    assert [d["code"] for d in _published(seen, uri)] == ["E0101"]
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("pwned")) == []


async def test_run_file_in_a_hostile_folder_imports_the_real_torch(tmp_path: Path) -> None:
    """The runner (`python -P -m quiver.cli run`) starts in the program's folder,
    which holds a `torch.py`: the real torch runs the program."""
    folder = _hostile(tmp_path)
    env = server_env()
    env.pop("QUIVER_LSP_RUNNER")
    client = make_client()
    await client.start_io(sys.executable, "-P", "-m", "quiver.server", "--stdio", env=env, cwd=folder)
    try:
        await client.initialize_session(init_params("visual-studio-code"))
        session = Session(client, folder)
        uri = (folder / "prog.qv").as_uri()
        session.open(MAIN, uri)
        await session.diagnostics(uri)
        run_id = (await session.command("quiver.runFile", uri))["runId"]
        (done,) = await wait_until(lambda: session.custom("quiver/runFinished", run_id), HANG_GUARD, "the run")
        out = "".join(p["text"] for p in session.custom("quiver/runOutput", run_id))
        assert done["status"] == "ok", out
        assert "tensor(" in out or "[" in out
        assert sorted(p.name for p in folder.iterdir() if p.name.startswith("pwned")) == []
        await client.shutdown_session()
    finally:
        await client.stop()


# ---------------------------------------------------------------------- runs end with the server

LOOP = "fn main():\n    i = 0\n    while True:\n        i = i + 1\n        if i % 100000 == 0:\n            print(i)\n"


def _runner_pids(path: Path) -> list[int]:
    """The live `quiver.cli run` processes of a file (found in /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"quiver.cli" in cmd and str(path).encode() in cmd and _alive(int(entry)):
            out.append(int(entry))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the runner in /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_run_ends_when_the_server_is_killed(tmp_path: Path, sig: int) -> None:
    prog = tmp_path / "loop.qv"
    prog.write_text(LOOP)
    env = server_env()
    env.pop("QUIVER_LSP_RUNNER")  # the real runner
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "quiver.server", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    run = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "workspace/executeCommand",
        "params": {"command": "quiver.runFile", "arguments": [prog.as_uri()]},
    }
    proc.stdin.write(b"".join(frame(m) for m in [*_init(), _open(prog.as_uri(), LOOP), run]))
    proc.stdin.flush()
    while True:  # the program prints: it is running
        m = read_one(proc.stdout)
        if m.get("method") == "quiver/runOutput" and m["params"]["stream"] == "stdout":
            break
    (runner,) = _runner_pids(prog)
    os.kill(proc.pid, sig)
    proc.communicate(timeout=HANG_GUARD)
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM  # left on purpose, not killed by the signal
    deadline = time.monotonic() + HANG_GUARD
    while _alive(runner) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(runner)


# ---------------------------------------------------------------------- shutdown


def test_a_request_after_shutdown_is_an_invalid_request() -> None:
    messages = [
        *_init(),
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": "file:///x.qv"}, "position": {"line": 0, "character": 0}},
        },
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}},  # a notification: dropped
    ]
    seen = _converse_in(
        Path.cwd(),
        [sys.executable, "-P", "-m", "quiver.server", "--stdio"],
        messages,
        lambda seen: any(m.get("id") == 3 for m in seen),
    )
    (reply,) = [m for m in seen if m.get("id") == 3]
    assert reply["error"]["code"] == -32600  # InvalidRequest
    assert "shutting down" in reply["error"]["message"]
    assert [m for m in seen if m.get("id") == 2] == [{"jsonrpc": "2.0", "id": 2, "result": None}]


# ---------------------------------------------------------------------- documents too large


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's memory in /proc")
async def test_a_document_over_the_size_limit_is_one_diagnostic_and_no_memory(session: Session) -> None:
    uri = session.open(MAIN)
    assert list(await session.diagnostics(uri)) == []
    big = "fn main():\n" + "    x = randn([3], seed=1)\n" * (MAX_SOURCE_BYTES // 27 + 10)
    assert len(big.encode()) > MAX_SOURCE_BYTES
    v = session.replace_all(uri, big)
    (d,) = await session.diagnostics(uri, v, timeout=HANG_GUARD)
    size = len(big.encode())
    assert (d.code, d.range.start) == ("E0012", lsp.Position(0, 0))
    assert (
        d.message == f"this file is not checked: it is larger than 10 MiB ({size:,} bytes), the limit for a source file"
    )
    hover = await session.hover(uri, 20)
    assert hover is None
    v = session.replace_all(uri, MAIN + "fn f() -> [3]:\n    return zeros([4])\n")
    (d,) = await session.diagnostics(uri, v, timeout=HANG_GUARD)
    assert d.code == "E0201"
    server = session.client._server
    assert server is not None
    # The text itself was in the server's memory (10 MiB, and the messages that carried it);
    # nothing was parsed, so nothing of the size of a 10 MiB program's trees remains.
    assert _rss_mib(server.pid) < 250


# ---------------------------------------------------------------------- files that cannot be read


@pytest_lsp.fixture(config=CONFIG)
async def unreadable(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("unreadable")
    (root / "outside.txt").write_text("ghp_SECRET\n")
    ws = root / "ws"
    ws.mkdir()
    (ws / "main.qv").write_text("import lib\n\nfn main():\n    print(lib.D)\n")
    (ws / "lib.qv").mkdir()  # a folder with a module's name
    os.mkfifo(ws / "pipe.qv")
    (ws / "gone.qv").symlink_to(ws / "nowhere.qv")
    (ws / "tok.qv").symlink_to(root / "outside.txt")
    (ws / "big.qv").write_bytes(b"#" * (MAX_SOURCE_BYTES + 1))
    lsp_client.root = ws
    await lsp_client.initialize_session(init_params("visual-studio-code", ws))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_files_the_server_cannot_read_are_reported_at_themselves(unreadable: LanguageClient) -> None:
    ws: Path = unreadable.root
    expected = {
        "pipe.qv": "this file is not checked: it is a FIFO (named pipe), not a regular file",
        "gone.qv": "this file is not checked: it is a symbolic link to nothing (a broken link)",
        "tok.qv": f"this file is not checked: it is a symbolic link that leads out of {ws}, "
        "and links out of the folder are not followed",
        "big.qv": f"this file is not checked: it is larger than 10 MiB ({MAX_SOURCE_BYTES + 1} bytes), "
        "the limit for a source file",
    }

    def all_published():
        got = {}
        for name in [*expected, "main.qv"]:
            ds = unreadable.diagnostics.get((ws / name).as_uri())
            if not ds:
                return None
            got[name] = ds
        return got

    got = await wait_until(all_published, HANG_GUARD, "diagnostics of every file")
    for name, message in expected.items():
        assert [(d.code, d.message, d.range.start) for d in got[name]] == [("E0012", message, lsp.Position(0, 0))]
    (imp,) = got["main.qv"]
    assert imp.code == "E0113"
    assert imp.message == f"no module 'lib' ({ws}/lib.qv cannot be read: it is a folder, not a regular file)"
    assert "SECRET" not in json.dumps([d.message for ds in got.values() for d in ds])


@pytest_lsp.fixture(config=CONFIG)
async def marked_above(lsp_client: LanguageClient, tmp_path_factory):
    """A `quiver.toml` in the folder above the workspace (a home folder)."""
    home = tmp_path_factory.mktemp("home")
    (home / "quiver.toml").write_text("")
    (home / "token.txt").write_text("ghp_SECRET\n")
    ws = home / "ws"
    ws.mkdir()
    (ws / "main.qv").write_text("import tok\n\nfn main():\n    print(1)\n")
    (ws / "tok.qv").symlink_to("../token.txt")
    lsp_client.root = ws
    await lsp_client.initialize_session(init_params("visual-studio-code", ws))
    yield
    await lsp_client.shutdown_session()


async def test_a_quiver_toml_above_the_workspace_does_not_widen_it(marked_above: LanguageClient) -> None:
    ws: Path = marked_above.root

    def both():
        got = {n: marked_above.diagnostics.get((ws / n).as_uri()) for n in ("main.qv", "tok.qv")}
        return got if all(got.values()) else None

    got = await wait_until(both, HANG_GUARD, "diagnostics of both files")
    (tok,) = got["tok.qv"]
    assert (tok.code, tok.message) == (
        "E0012",
        f"this file is not checked: it is a symbolic link that leads out of {ws}, "
        "and links out of the folder are not followed",
    )
    assert [d.code for d in got["main.qv"]] == ["E0113"]
    assert "SECRET" not in json.dumps([d.message for ds in got.values() for d in ds])


# ---------------------------------------------------------------------- terminal control in run output


async def test_run_output_carries_no_terminal_control(session: Session) -> None:
    uri = session.open(MAIN + "# fake: escapes\n")
    await session.diagnostics(uri)
    run_id = (await session.command("quiver.runFile", uri))["runId"]
    await wait_until(lambda: session.custom("quiver/runFinished", run_id), HANG_GUARD, "the run")
    out = "".join(p["text"] for p in session.custom("quiver/runOutput", run_id))
    assert out == "red bold title set link done\r\nloss\t0.5\n"
