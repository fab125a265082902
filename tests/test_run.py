"""`quiver run` and `quiver.load`: what a user sees when a program runs or fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import quiver
from quiver.cli import main as quiver_main

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, src: str, name: str = "prog.qv") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(src))
    return p


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = quiver_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_prints_the_program_output(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, """
    fn main():
        x = ones([3]) * 2.0
        print("sum", sum(x))
    """)
    code, out, err = run(capsys, "run", str(p))
    assert (code, out) == (0, "sum 6.0000\n")


def test_a_program_with_errors_does_not_run(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, """
    fn main():
        print("never")
        print(nope)
    """)
    code, out, err = run(capsys, "run", str(p), "--error-format", "json")
    assert code == 1 and out == ""
    assert f"{p}:4:11: E0101 unknown name 'nope'" in err
    last = json.loads(err.strip().splitlines()[-1])
    assert last == {"path": str(p), "line": 4, "col": 11, "end_line": 4, "end_col": 15,
                    "message": "E0101 unknown name 'nope'", "kind": "check"}


def test_a_runtime_failure_names_the_qv_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "data.py").write_text("import torch\n\ndef load():\n    return torch.zeros(5, 4)\n")
    p = write(tmp_path, """
    dim D = 3

    extern fn load() -> [8 D] from "data:load"

    fn main():
        x = load()
        print(x)
    """)
    code, out, err = run(capsys, "run", str(p), "--error-format", "json")
    assert code == 1
    last = json.loads(err.strip().splitlines()[-1])
    assert last["kind"] == "runtime" and last["path"] == str(p)
    assert last["line"] in (4, 7), last
    assert "[8 3]" in last["message"] and "[5 4]" in last["message"]
    assert "Traceback" not in err
    # The text output names the extern's declaration and the call.
    assert f"{p}:4:1: error: load(): return value expected [8 3] f32, found [5 4] f32" in err
    assert f"  called from {p}:7:5 (in main)" in err


def test_a_missing_extern_module_is_a_clear_error(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, """
    extern fn load() -> [4] from "nowhere:load"

    fn main():
        print(load())
    """)
    code, _, err = run(capsys, "run", str(p))
    assert code == 1
    assert "nowhere" in err and "Traceback" not in err


def test_traceback_flag_adds_the_python_traceback(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, """
    fn main():
        x = ones([2]) as [2] Prob
        y = (x * 3.0) as [2] Prob
        print(y)
    """)
    code, _, err = run(capsys, "run", str(p), "--traceback")
    assert code == 1 and "Traceback" in err
    assert f"{p.name}:4:" in err or "prog.qv:4:" in err


def test_no_main_is_reported(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, "fn f() -> Int:\n    return 1\n")
    code, _, err = run(capsys, "run", str(p))
    assert code == 1 and "has no fn main()" in err


def test_compile_command(tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "compile", str(ROOT / "examples" / "mlp.qv"))
    assert code == 0 and "def train_step(m, x, y, lr, step):" in out


def test_load_raises_check_failed_with_the_errors(tmp_path: Path) -> None:
    p = write(tmp_path, "fn main():\n    print(nope)\n")
    with pytest.raises(quiver.CheckFailed) as info:
        quiver.load(str(p))
    assert f"{p}:2:11: E0101 unknown name 'nope'" in str(info.value)


def test_loaded_functions_check_python_arguments(tmp_path: Path) -> None:
    mod = quiver.load(str(ROOT / "examples" / "mlp.qv"))
    m = mod.Mlp.init(seed=0)
    with pytest.raises(quiver.runtime.QuiverError) as info:
        mod.forward(m, torch.zeros(4, 10), quiver.runtime.Eval)
    text = str(info.value)
    assert "mlp.qv:13" in text and "'x'" in text


def test_run_as_a_process_streams_and_exits_zero() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run([sys.executable, "-m", "quiver", "run", str(ROOT / "examples" / "regression.qv")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("step ")]
    assert lines[0].startswith("step 0 mse") and len(lines) == 5
    first = float(lines[0].split()[-1])
    last = float(lines[-1].split()[-1])
    assert last < first / 100
