"""A real client: Neovim (Debian's 0.7) in headless mode starts the server,
opens a file, receives its diagnostic with its code, gets a hover, edits the
buffer (Neovim sends incremental changes) and sees the diagnostic go."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quiver.checker import check_text

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install neovim)")

SOURCE = """\
dim D = 4

fn main():
    total = randn([2 D], seed=1)
    print("🎉 中文", totl)
"""

LUA = r"""
local out = {}
local function finish()
  vim.fn.writefile({vim.fn.json_encode(out)}, vim.env.QUIVER_NVIM_OUT)
  vim.cmd('qa!')
end
local ok, err = pcall(function()
  local id = vim.lsp.start_client({
    name = 'quiver',
    cmd = {vim.env.QUIVER_PYTHON, '-m', 'quiver.server', '--stdio'},
    root_dir = vim.fn.getcwd(),
  })
  out.client = id ~= nil
  vim.lsp.buf_attach_client(0, id)
  out.got_diagnostics = vim.wait(90000, function() return #vim.diagnostic.get(0) > 0 end, 20)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.diagnostics, {lnum = d.lnum, col = d.col, end_col = d.end_col, code = d.code,
      message = d.message, source = d.source, severity = d.severity,
      href = d.user_data and d.user_data.lsp and d.user_data.lsp.codeDescription
             and d.user_data.lsp.codeDescription.href or vim.NIL})
  end
  -- hover on `total` (line 4, column 5)
  vim.api.nvim_win_set_cursor(0, {4, 5})
  local params = vim.lsp.util.make_position_params()
  local replies = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 10000)
  out.hover = vim.NIL
  for _, r in pairs(replies or {}) do
    if r.result then out.hover = r.result.contents.value end
  end
  -- fix the typo in the buffer: Neovim sends an incremental change
  local line = vim.api.nvim_buf_get_lines(0, 4, 5, false)[1]
  local s, e = string.find(line, 'totl', 1, true)
  vim.api.nvim_buf_set_text(0, 4, s - 1, 4, e, {'total'})
  out.cleared = vim.wait(90000, function() return #vim.diagnostic.get(0) == 0 end, 20)
  out.text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.lsp.stop_client(id)
end)
out.ok = ok
out.err = err and tostring(err) or vim.NIL
finish()
"""


def test_neovim_gets_diagnostics_and_hover(tmp_path: Path) -> None:
    src = tmp_path / "prog.qv"
    src.write_text(SOURCE, encoding="utf-8")
    script = tmp_path / "check.lua"
    script.write_text(LUA, encoding="utf-8")
    result = tmp_path / "out.json"
    env = dict(
        os.environ,
        QUIVER_PYTHON=sys.executable,
        QUIVER_NVIM_OUT=str(result),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    done = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {script}", str(src)],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert result.exists(), done.stderr.decode()[-2000:] + done.stdout.decode()[-2000:]
    out = json.loads(result.read_text())
    assert out["ok"], out["err"]
    assert out["client"] and out["got_diagnostics"]
    # Neovim's columns are bytes: the server's UTF-16 range went through its conversion
    line = SOURCE.splitlines()[4]
    col = len(line[: line.index("totl")].encode("utf-8"))
    docs = (Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md").as_uri()
    (d,) = check_text(SOURCE).diagnostics  # its message is the checker's (pinned in tests/checker)
    assert out["diagnostics"] == [
        {
            "lnum": 4,
            "col": col,
            "end_col": col + 4,
            "code": "E0101",
            "severity": 1,
            "source": "quiver",
            "message": d.message,
            "href": f"{docs}#e0101",
        }
    ]
    assert out["hover"] == "```quiver\n(local) total: [2 D]\n```"
    assert out["cleared"]
    assert out["text"] == SOURCE.replace("totl", "total").rstrip("\n")
