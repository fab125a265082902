"""Packaging (issue 27): the base package works without the torch extra, the
`--version` flags, and the metadata in pyproject.toml.

A fresh venv with only the base package is too slow to build in a test, so
the tools run here in a subprocess of this venv with torch, numpy,
safetensors and tqdm made unimportable: a meta-path finder, inserted before
any other import, raises ModuleNotFoundError for them, as a venv without
them would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mlp.qv"
RUNTIME_MODULES = ("torch", "numpy", "safetensors", "tqdm")
HINT = (
    "pip install 'quiver-lang[torch]' --extra-index-url https://download.pytorch.org/whl/cpu (torch's CPU build,"
    " about 1 GB), or without --extra-index-url torch's default build (on Linux with its CUDA libraries, several GB)"
)

# sys.argv[1]: the modules to block (comma-separated); sys.argv[2]: the code to run.
BLOCKER = """
import sys
BLOCKED = frozenset(sys.argv[1].split(","))

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None

sys.meta_path.insert(0, Blocker())
code, sys.argv = sys.argv[2], [sys.argv[0], *sys.argv[3:]]
exec(compile(code, "<test>", "exec"))
"""


def without(code: str, *args: str, blocked=RUNTIME_MODULES, stdin: str | None = None, cwd: Path = ROOT):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-c", BLOCKER, ",".join(blocked), code, *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
        env=env,
        timeout=120,
    )


CLI = "import sys; from quiver.cli import main; sys.exit(main(sys.argv[1:]))"
QLINT = "import sys; from quiver.qlint import main; sys.exit(main(sys.argv[1:]))"


def test_the_blocker_blocks():
    r = without("import torch")
    assert r.returncode == 1
    assert "ModuleNotFoundError: No module named 'torch' (blocked by the test)" in r.stderr


def test_the_tools_and_the_server_import_without_the_runtime():
    """Every module of the checker, the server and the driver's lint side
    imports with the torch extra missing, and none of them pulls it in."""
    code = """
import importlib, pkgutil, sys
import quiver, quiver.qlint, quiver.cli, quiver.fmt, quiver.server, quiver.checker
for pkg in (quiver.server, quiver.checker):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if not m.name.endswith("__main__"):
            importlib.import_module(m.name)
import quiver.server.__main__  # the entry point's module: its main() is not called on import
bad = sorted(n for n in sys.modules if n.partition(".")[0] in {"torch", "numpy", "safetensors", "tqdm"})
assert not bad, bad
assert "quiver.runtime" not in sys.modules
print("ok")
"""
    r = without(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ok\n"


def test_qlint_and_quiver_check_work_without_the_runtime(tmp_path):
    r = without(QLINT, "--no-cache", "--format", "text", str(EXAMPLE))
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.qv"
    bad.write_text("fn f(x: [3] f32) -> [4] f32:\n    return x\n")
    r = without(CLI, "check", "--no-cache", "--format", "text", str(bad))
    assert r.returncode == 1, r.stderr
    assert r.stdout == f"{bad}:2:12: E0201 return value: expected [4], found [3]\n"
    assert "Traceback" not in r.stderr


def test_fmt_and_compile_work_without_the_runtime():
    r = without(CLI, "fmt", "--check", str(EXAMPLE))
    assert r.returncode == 0, r.stderr
    r = without(CLI, "fmt", "-", stdin="fn f(x:int)->int:\n    return x+1\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "fn f(x: int) -> int:\n    return x + 1\n"
    r = without(CLI, "compile", str(EXAMPLE))
    assert r.returncode == 0, r.stderr
    assert "\nfrom quiver import runtime" in r.stdout  # the compiled code imports the runtime; compiling needs no torch


@pytest.mark.parametrize("blocked", [RUNTIME_MODULES, ("tqdm",), ("numpy", "safetensors")])
def test_quiver_run_without_the_runtime_says_how_to_install_it(blocked):
    r = without(CLI, "run", str(EXAMPLE), blocked=blocked)
    assert r.returncode == 2
    assert r.stdout == ""
    first = next(m for m in RUNTIME_MODULES if m in blocked)
    assert r.stderr == f"quiver: quiver run needs {first}, which is not installed: {HINT}\n"


def test_quiver_run_help_needs_no_runtime():
    r = without(CLI, "run", "--help")
    assert r.returncode == 0, r.stderr
    assert "--nproc" in r.stdout


def test_quiver_load_without_the_runtime_says_how_to_install_it():
    code = """
import quiver
try:
    quiver.load(sys.argv[1])
except ModuleNotFoundError as e:
    print(e.name, "|", e)
"""
    r = without(code, str(EXAMPLE))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"torch | quiver.load needs torch, which is not installed: {HINT}\n"
    r = without("import quiver; print(quiver.CheckFailed.__name__)")  # the rest of the API still imports
    assert r.stdout == "CheckFailed\n", r.stderr


def test_a_runtime_module_missing_at_import_is_the_same_one_line(monkeypatch, capsys):
    """Found by the early check, then failing at its import (a broken install):
    the one line too, never "internal error"."""
    from quiver import cli

    monkeypatch.setattr(cli, "_without_runtime", lambda args: None)

    def fail(args):
        raise ModuleNotFoundError("No module named 'safetensors'", name="safetensors")

    monkeypatch.setattr(cli, "cmd_run", fail)  # build_parser reads it when main calls it
    assert cli.main(["run", str(EXAMPLE)]) == 2
    err = capsys.readouterr().err
    assert err == f"quiver: quiver run needs safetensors, which is not installed: {HINT}\n"


def _lsp(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_the_language_server_answers_without_the_runtime():
    """initialize, a document with an error (its diagnostics), shutdown, exit:
    all with torch, numpy, safetensors and tqdm unimportable."""
    uri = (ROOT / "bad.qv").as_uri()
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": uri,
                    "languageId": "quiver",
                    "version": 1,
                    "text": "fn f(x: [3] f32) -> [4] f32:\n    return x\n",
                }
            },
        },
    ]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    code = "import runpy; sys.argv = ['quiver-lsp', '--stdio']; runpy.run_module('quiver.server', run_name='__main__')"
    proc = subprocess.Popen(
        [sys.executable, "-c", BLOCKER, ",".join(RUNTIME_MODULES), code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"".join(_lsp(m) for m in messages))
        proc.stdin.flush()
        seen = []
        while not any(m.get("method") == "textDocument/publishDiagnostics" for m in seen):
            seen.append(_read(proc.stdout))
        init = next(m for m in seen if m.get("id") == 1)
        assert "capabilities" in init["result"]
        diags = next(m for m in seen if m.get("method") == "textDocument/publishDiagnostics")["params"]["diagnostics"]
        assert [d["code"] for d in diags] == ["E0201"]
        proc.stdin.write(_lsp({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.write(_lsp({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert "blocked by the test" not in proc.stderr.read().decode()


def _read(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        assert line, "the server closed its output"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None
    return json.loads(stream.read(length))


# ---------------------------------------------------------------- --version


def test_version_flags(capsys):
    import quiver
    from quiver import cli, qlint

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == "quiver 0.1.0\n"
    assert cli.main(["-V"]) == 0
    assert capsys.readouterr().out == "quiver 0.1.0\n"
    assert qlint.main(["--version"]) == 0
    assert capsys.readouterr().out == "qlint 0.1.0\n"
    assert cli.main(["check", "--version"]) == 0  # `quiver check` is qlint
    assert capsys.readouterr().out == "qlint 0.1.0\n"
    assert quiver.version() == quiver.__version__ == _pyproject()["project"]["version"]


def test_version_flags_as_commands():
    bindir = Path(sys.executable).parent
    for tool, want in (("quiver", "quiver 0.1.0\n"), ("qlint", "qlint 0.1.0\n")):
        exe = bindir / tool
        if not exe.exists():
            pytest.skip(f"{tool} is not installed beside {sys.executable}")
        r = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout, r.stderr) == (0, want, "")


def test_version_falls_back_to_the_package_constant(monkeypatch):
    from importlib import metadata

    import quiver

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    monkeypatch.setattr(quiver, "__version__", "9.9.9")
    assert quiver.version() == "9.9.9"


def test_load_weights_and_load_tokenizer_without_the_runtime_say_how_to_install_it():
    code = """
import quiver
for name in ("load_weights", "load_tokenizer"):
    try:
        getattr(quiver, name)
    except ModuleNotFoundError as e:
        print(e.name, "|", e)
"""
    r = without(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"torch | quiver.{name} needs torch, which is not installed: {HINT}"
        for name in ("load_weights", "load_tokenizer")
    ]


def test_a_program_reading_a_tokenizer_without_the_hf_extra(tmp_path):
    """With torch but without tokenizers (a venv of the [torch] extra alone), the
    program checks and runs up to load_tokenizer, which stops with the one-line hint."""
    (tmp_path / "tokenizer.json").write_text("{}")
    prog = tmp_path / "tok.qv"
    prog.write_text('dim V = 10\n\nfn main():\n    print("start")\n    tok = load_tokenizer("tokenizer.json", V)\n')
    r = without(CLI, "run", str(prog), blocked=("tokenizers", "transformers"))
    assert r.returncode == 1, r.stderr
    assert r.stdout == "start\n"
    assert r.stderr.strip().endswith(
        "tok.qv:5:11: error: load_tokenizer needs the tokenizers library: pip install 'quiver-lang[hf]'"
    )


# ---------------------------------------------------------------- metadata


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _names(reqs: list[str]) -> set[str]:
    import re

    return {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in reqs}


def test_the_base_dependencies_hold_no_runtime():
    project = _pyproject()["project"]
    assert _names(project["dependencies"]) == {"lark", "pygls", "lsprotocol"}
    extras = project["optional-dependencies"]
    assert _names(extras["torch"]) == set(RUNTIME_MODULES)
    torch = next(r for r in extras["torch"] if r.startswith("torch"))
    assert torch == "torch>=2.13"  # the oldest the tests pass on; no upper cap for users
    assert "quiver-lang[torch,metrics,hf]" in extras["dev"]
    # Hugging Face interop (load_tokenizer; transformers for the tests' folders): its own extra, no torch of its own
    assert _names(extras["hf"]) == {"transformers", "tokenizers", "safetensors"}
    assert not _names(extras["hf"]) & (_names(project["dependencies"]) | {"torch"})
    assert not {"transformers", "tokenizers"} & _names(extras["torch"])


def test_the_venv_pins_the_cpu_wheel_through_the_constraints_file():
    constraints = (ROOT / "constraints" / "torch-cpu.txt").read_text(encoding="utf-8")
    assert "torch>=2.13,<2.14" in constraints.splitlines()
    venv = (ROOT / "scripts" / "_venv.sh").read_text(encoding="utf-8")
    assert "-c constraints/torch-cpu.txt -e '.[dev]'" in venv


def test_license_metadata():
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    requires = _pyproject()["build-system"]["requires"]
    assert any(r.startswith("setuptools>=7") and int(r.split(">=")[1].split(".")[0]) >= 77 for r in requires)
