"""The JupyterLab spec of the language server (server/jupyter_spec.py): found
through the `jupyter_lsp_spec_v1` entry point as jupyter-lsp finds it, and
its argv starts a server that answers `initialize` with notebook sync."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

from quiver.server.jupyter_spec import spec


def test_spec_shape():
    specs = spec(None)
    assert list(specs) == ["quiver-lsp"]
    s = specs["quiver-lsp"]
    assert s["argv"] == [sys.executable, "-P", "-m", "quiver.server", "--stdio"]
    assert s["languages"] == ["quiver"]
    assert s["mime_types"] == ["text/x-quiver"]
    assert s["version"] == 2 and s["display_name"] == "Quiver"
    assert s["install"] == {"pip": "pip install quiver-lang"}


def test_entry_point_is_registered():
    (ep,) = [e for e in metadata.entry_points(group="jupyter_lsp_spec_v1") if e.name == "quiver-lsp"]
    assert ep.value == "quiver.server.jupyter_spec:spec"
    assert ep.load()(None) == spec(None)


def _message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_argv_starts_a_server_with_notebook_sync(tmp_path):
    argv = spec(None)["quiver-lsp"]["argv"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None}}
    done = _message({"jsonrpc": "2.0", "method": "exit"})
    out = subprocess.run(argv, input=_message(init) + done, capture_output=True, cwd=tmp_path, timeout=120).stdout
    head, _, rest = out.partition(b"\r\n\r\n")
    length = int(head.split(b":")[1])
    reply = json.loads(rest[:length])
    sync = reply["result"]["capabilities"]["notebookDocumentSync"]
    assert sync == {"notebookSelector": [{"notebook": "*", "cells": [{"language": "quiver"}, {"language": "python"}]}]}
