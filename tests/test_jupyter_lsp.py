"""The language server as JupyterLab reaches it: a real Jupyter server with
jupyter-lsp finds the `quiver-lsp` spec (server/jupyter_spec.py) and serves
the server over its websocket, where diagnostics come back for a `.qv`
document. (JupyterLab's front end talks to exactly these endpoints.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("jupyter_lsp")
websocket = pytest.importorskip("websocket")

TOKEN = "quiver-test-token"
BAD = "fn widen(x: [3]) -> [4]:\n    return x\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyter(tmp_path: Path):
    port = free_port()
    env = dict(os.environ)
    for k in ("JUPYTER_TOKEN", "JUPYTER_CONFIG_PATH"):
        env.pop(k, None)
    # Jupyter's runtime files and config in the test's folder, not the user's home
    env.update(
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
    )
    root = tmp_path / "root"
    root.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--port-retries=0",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
        ],
        env=env,
        cwd=tmp_path,  # not the checkout: `python -m` puts its folder first on sys.path
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"127.0.0.1:{port}"
    status = None
    deadline = time.monotonic() + 90  # a hang guard: Jupyter starts in a few seconds
    try:
        while status is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://{base}/lsp/status?token={TOKEN}", timeout=5) as r:
                    status = json.load(r)
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.3)
        if status is None:
            proc.kill()
            pytest.fail(f"the Jupyter server did not answer: {proc.communicate(timeout=30)[1][-3000:]}")
        yield base, status, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_jupyter_lsp_lists_the_quiver_server(jupyter) -> None:
    _, status, _ = jupyter
    session = status["sessions"]["quiver-lsp"]
    assert session["spec"]["languages"] == ["quiver"]
    assert session["spec"]["mime_types"] == ["text/x-quiver"]
    assert session["spec"]["display_name"] == "Quiver"


def test_diagnostics_through_jupyter_lsp_s_websocket(jupyter) -> None:
    base, _, root = jupyter
    path = root / "bad.qv"
    path.write_text(BAD)
    ws = websocket.create_connection(f"ws://{base}/lsp/ws/quiver-lsp?token={TOKEN}", timeout=60)

    def send(msg: dict) -> None:
        ws.send(json.dumps({"jsonrpc": "2.0", **msg}))

    def until(pred) -> dict:
        while True:
            msg = json.loads(ws.recv())
            if pred(msg):
                return msg

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
            }
        )
        init = until(lambda m: m.get("id") == 1)
        assert init["result"]["serverInfo"]["name"] == "quiver-lsp"
        send({"method": "initialized", "params": {}})
        doc = {"uri": path.as_uri(), "languageId": "quiver", "version": 1, "text": BAD}
        send({"method": "textDocument/didOpen", "params": {"textDocument": doc}})
        diags = until(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == path.as_uri()
        )["params"]["diagnostics"]
        assert [(d["code"], d["range"]["start"], d["range"]["end"], d["message"]) for d in diags] == [
            (
                "E0201",
                {"line": 1, "character": 11},
                {"line": 1, "character": 12},
                "return value: expected [4], found [3]",
            )
        ]
        send({"id": 2, "method": "shutdown"})
        until(lambda m: m.get("id") == 2)
    finally:
        ws.close()
