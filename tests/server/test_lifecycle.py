"""Starting, initializing and stopping the server; its settings; what it
never does (import torch, write anything but protocol to stdout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import pytest_lsp
from lsp_support import CONFIG, PROFILES, ROOT, SERVER, Session, init_params, server_env, wait_until
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

# ---------------------------------------------------------------------- raw stdio


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_frames(data: bytes) -> list[dict]:
    """Every message on a server's stdout; fails on anything that is not a frame."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"not a frame: {data[:80]!r}"
        length = None
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            assert name.strip().lower() in (b"content-length", b"content-type"), f"bad header {line!r}"
            if name.strip().lower() == b"content-length":
                length = int(value)
        assert length is not None
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


def opening(profile: str = "neovim") -> bytes:
    """initialize, initialized, didOpen and a hover (id 2)."""
    caps = _caps(profile)
    uri = (ROOT / "tests" / "server" / "data" / "raw.qv").as_uri()
    text = "fn main():\n    x = randn([3], seed=1)\n    print(x)\n"
    return b"".join(
        frame(m)
        for m in [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": caps},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": text}},
            },
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}},
            },
        ]
    )


CLOSING = frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}) + frame({"jsonrpc": "2.0", "method": "exit"})


def read_one(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        assert line, "the server closed its output"
        if line == b"\r\n":
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(stream.read(length))


def converse(command: list[str], env: dict, first: bytes, wait_for_id, then: bytes):
    """Send `first`, read until the reply to `wait_for_id`, send `then`; returns
    (every message on stdout, stderr, exit status)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(first)
    proc.stdin.flush()
    seen = []
    while True:
        m = read_one(proc.stdout)
        seen.append(m)
        if m.get("id") == wait_for_id and "method" not in m:
            break
    out, err = proc.communicate(then, timeout=60)
    return seen + read_frames(out), err, proc.returncode


def replies(messages: list[dict]) -> dict:
    return {m["id"]: m for m in messages if "id" in m and "method" not in m}


def _caps(profile: str) -> dict:
    from lsprotocol.converters import get_converter

    return get_converter().unstructure(client_capabilities(profile), lsp.ClientCapabilities)


def run_raw(data: bytes, extra_env: dict | None = None, args: list[str] | None = None) -> subprocess.CompletedProcess:
    env = server_env(**(extra_env or {}))
    return subprocess.run(
        SERVER[:-1] + (args if args is not None else ["--stdio"]), input=data, capture_output=True, env=env, timeout=60
    )


@pytest.mark.parametrize("fast", ["1", "0"])
def test_a_whole_session_over_raw_stdio(fast: str) -> None:
    """Only protocol on stdout, one reply per request, exit status 0 after shutdown,
    and torch never imported (checked with -X importtime)."""
    messages, err, status = converse(
        SERVER, server_env(QUIVER_LSP_FAST_START=fast, PYTHONPROFILEIMPORTTIME="1"), opening(), 2, CLOSING
    )
    assert status == 0, err.decode()[-2000:]
    got = replies(messages)
    assert sorted(got) == [1, 2, 3]
    assert got[2]["result"]["contents"]["value"] == "```quiver\n(local) x: [3]\n```"
    assert got[3]["result"] is None
    publishes = [m for m in messages if m.get("method") == "textDocument/publishDiagnostics"]
    assert publishes and publishes[0]["params"]["diagnostics"] == []
    imported = [line.split("|")[-1].strip() for line in err.decode().splitlines() if line.startswith("import time:")]
    assert "pygls.lsp.server" in imported and "quiver.checker.ide" in imported
    assert not [m for m in imported if m == "torch" or m.startswith("torch.")]


def test_importing_the_server_builds_nothing_and_never_loads_torch() -> None:
    """`import quiver.server.server` (and the run protocol it shares with
    `quiver run`) registers no handlers and starts no server: create_server()
    does, once per call. torch and the runtime stay out."""
    code = """
import sys
import quiver.server, quiver.server.server as s, quiver.server.runs, quiver.run_protocol
from quiver.server import capabilities
assert not [k for k, v in vars(s).items() if isinstance(v, s.QuiverServer)], "a server built at import"
one, two = s.create_server(), s.create_server()
assert one is not two and one.protocol.fm.features.keys() == two.protocol.fm.features.keys()
assert sorted(one.protocol.fm.commands) == sorted(capabilities.COMMANDS)
loaded = [m for m in sys.modules if m == "torch" or m.startswith("torch.") or m.startswith("quiver.runtime")]
assert not loaded, loaded
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_fast_and_plain_initialize_agree() -> None:
    for profile in ["visual-studio-code", "neovim", "neovim@v0.7.0", "emacs"]:
        fast = read_frames(run_raw(opening(profile) + CLOSING, {"QUIVER_LSP_FAST_START": "1"}).stdout)[0]
        plain = read_frames(run_raw(opening(profile) + CLOSING, {"QUIVER_LSP_FAST_START": "0"}).stdout)[0]
        assert fast["id"] == 1 and "capabilities" in fast["result"]
        assert fast == plain, profile


def test_command_line() -> None:
    assert run_raw(b"", args=["--version"]).stderr.decode().startswith("quiver-lsp 0.1.0")
    bad = run_raw(b"", args=["--tcp"])
    assert bad.returncode == 2 and "unknown argument '--tcp'" in bad.stderr.decode()
    assert bad.stdout == b""
    # with no client at all it just ends
    assert run_raw(b"").returncode in (0, 1)


def test_the_console_script_is_installed() -> None:
    script = os.path.join(os.path.dirname(sys.executable), "quiver-lsp")
    assert os.path.exists(script)
    messages, _, status = converse([script, "--stdio"], server_env(), opening(), 2, CLOSING)
    assert status == 0 and sorted(replies(messages)) == [1, 2, 3]


def test_exit_without_shutdown_is_status_1() -> None:
    data = frame(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        }
    ) + frame({"jsonrpc": "2.0", "method": "exit"})
    assert run_raw(data).returncode == 1


# ---------------------------------------------------------------------- capabilities


@pytest_lsp.fixture(config=CONFIG, params=PROFILES)
async def fresh(lsp_client: LanguageClient, request):
    lsp_client.result = await lsp_client.initialize_session(init_params(request.param))
    lsp_client.profile = request.param
    yield
    await lsp_client.shutdown_session()


async def test_capabilities(fresh: LanguageClient) -> None:
    caps = fresh.result.capabilities
    assert fresh.result.server_info.name == "quiver-lsp"
    assert caps.text_document_sync.change == lsp.TextDocumentSyncKind.Incremental
    assert caps.text_document_sync.open_close
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.document_symbol_provider and caps.document_highlight_provider
    assert list(caps.completion_provider.trigger_characters) == ["."]
    assert list(caps.signature_help_provider.trigger_characters) == ["(", ","]
    assert list(caps.code_action_provider.code_action_kinds) == ["quickfix", "source.run"]
    assert caps.code_lens_provider is not None and caps.inlay_hint_provider is not None
    assert list(caps.semantic_tokens_provider.legend.token_types[:3]) == ["typeParameter", "class", "property"]
    assert caps.diagnostic_provider.identifier == "quiver"
    assert sorted(caps.execute_command_provider.commands) == [
        "quiver.runFile",
        "quiver.showParamReads",
        "quiver.stopRun",
    ]
    expected = {"visual-studio-code": "utf-16", "neovim": "utf-8"}[fresh.profile]
    assert caps.position_encoding == expected


# ---------------------------------------------------------------------- settings


@pytest_lsp.fixture(config=CONFIG)
async def misconfigured(lsp_client: LanguageClient):
    lsp_client.set_configuration({"run": {"timeoutSeconds": -4}, "inlayHints": {"enabled": False}}, section="quiver")
    params = init_params("visual-studio-code", diagnostics={"debounceMs": "soon"})
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_bad_settings_are_reported_once_and_defaults_used(misconfigured: LanguageClient) -> None:
    s = Session(misconfigured)
    uri = s.open("fn main():\n    x = 1\n    print(x)\n")
    await s.diagnostics(uri)  # debounce fell back to its default: diagnostics still come
    await wait_until(lambda: len(misconfigured.messages) >= 2, 5, "warnings")
    texts = sorted(m.message for m in misconfigured.messages)
    assert texts == [
        "Quiver: quiver.diagnostics.debounceMs must be a number of milliseconds in 0..10000, found 'soon'; "
        "using the default",
        "Quiver: quiver.run.timeoutSeconds must be a number of seconds (0 or null: no timeout), found -4; "
        "using the default",
    ]
    assert all(m.type == lsp.MessageType.Warning for m in misconfigured.messages)
    # the valid part of the client's configuration was applied: no inlay hints
    hints = await misconfigured.text_document_inlay_hint_async(
        lsp.InlayHintParams(
            text_document=lsp.TextDocumentIdentifier(uri), range=lsp.Range(lsp.Position(0, 0), lsp.Position(3, 0))
        )
    )
    assert hints is None
    # a configuration change is picked up
    misconfigured.set_configuration({"inlayHints": {"enabled": True}}, section="quiver")
    misconfigured.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await wait_until(lambda: True, 0)

    async def hints_back():
        return await misconfigured.text_document_inlay_hint_async(
            lsp.InlayHintParams(
                text_document=lsp.TextDocumentIdentifier(uri), range=lsp.Range(lsp.Position(0, 0), lsp.Position(3, 0))
            )
        )

    for _ in range(100):
        got = await hints_back()
        if got:
            break
    assert [h.label for h in got] == [": Int"]


# ---------------------------------------------------------------------- where diagnostic codes link to


def test_code_links_fall_back_to_a_generated_page(tmp_path, monkeypatch) -> None:
    """Installed without the repository (no docs/diagnostics.md next to the
    package), the links point at the same page generated from the catalog."""
    import quiver.checker
    from quiver.checker.catalog_docs import render_markdown
    from quiver.server.server import diagnostics_doc_uri

    assert diagnostics_doc_uri() == (ROOT / "docs" / "diagnostics.md").as_uri()
    site = tmp_path / "site-packages" / "quiver" / "checker"
    site.mkdir(parents=True)
    monkeypatch.setattr(quiver.checker, "__file__", str(site / "__init__.py"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    uri = diagnostics_doc_uri()
    page = tmp_path / "cache" / "quiver" / "diagnostics-0.1.0.md"
    assert uri == page.as_uri()
    assert page.read_text(encoding="utf-8") == render_markdown()
    assert '<a id="e0411"></a>' in page.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- exit in every state


def _session_start(extra: list[dict]) -> bytes:
    caps = _caps("neovim")
    first = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": caps},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    ]
    return b"".join(frame(m) for m in first + extra)


def _open(uri: str, text: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "quiver", "version": 1, "text": text}},
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("with_shutdown", [True, False])
@pytest.mark.parametrize("state", ["idle", "analysing", "running"])
def test_exit_status_in_every_state(state: str, with_shutdown: bool, tmp_path) -> None:
    """shutdown + exit: status 0, exit alone: 1 (as the protocol says), whether
    the server is idle, analysing a slow document or running a program (whose
    processes end with it); never a traceback."""
    from test_scheduling import slow_program

    uri = (tmp_path / "prog.qv").as_uri()
    pidfile = tmp_path / "daemon.pid"
    main = "fn main():\n    x = randn([3], seed=1)\n    print(x)\n"
    hover = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}},
    }
    extra = [_open(uri, main + f"# fake: daemon 600 {pidfile}\n# fake: sleep 600\n"), hover]
    if state == "analysing":
        extra = [_open(uri, main), hover, _open((tmp_path / "slow.qv").as_uri(), slow_program())]
    elif state == "running":
        extra.append(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "workspace/executeCommand",
                "params": {"command": "quiver.runFile", "arguments": [uri]},
            }
        )
    closing = (CLOSING if with_shutdown else b"") + frame({"jsonrpc": "2.0", "method": "exit"})
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env()
    )
    proc.stdin.write(_session_start(extra))
    proc.stdin.flush()
    wait_for = 4 if state == "running" else 2
    while (m := read_one(proc.stdout)).get("id") != wait_for or "method" in m:
        pass
    if state == "running":
        assert "runId" in m["result"]
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
    _, err = proc.communicate(closing, timeout=60)  # a hang guard: exit does not wait for the run or the analysis
    assert proc.returncode == (0 if with_shutdown else 1), err.decode()[-3000:]
    assert b"Traceback" not in err and b"Error" not in err, err.decode()[-3000:]
    if state == "running":
        deadline = time.monotonic() + 60
        while _alive(int(pidfile.read_text())) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(int(pidfile.read_text()))
