"""`quiver run` and `quiver.load`: what a user sees when a program runs or fails."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import quiver
from quiver.checker import check_text, ide
from quiver.cli import main as quiver_main
from quiver.run_protocol import CHECK, KINDS, RUNTIME, RunError, runner_args

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
    p = write(
        tmp_path,
        """
    fn main():
        x = ones([3]) * 2.0
        print("sum", sum(x))
    """,
    )
    code, out, err = run(capsys, "run", str(p))
    assert (code, out) == (0, "sum 6.0000\n")


def test_a_program_with_errors_does_not_run(tmp_path: Path, capsys) -> None:
    p = write(
        tmp_path,
        """
    fn main():
        print("never")
        print(nope)
    """,
    )
    code, out, err = run(capsys, "run", str(p), "--error-format", "json")
    assert code == 1 and out == ""
    assert f"{p}:4:11: E0101 unknown name 'nope'" in err
    last = RunError.parse(err.strip().splitlines()[-1])
    assert last == RunError(str(p), 4, 11, 4, 15, "E0101 unknown name 'nope'", CHECK)


def test_a_runtime_failure_names_the_qv_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "data.py").write_text("import torch\n\ndef load():\n    return torch.zeros(5, 4)\n")
    p = write(
        tmp_path,
        """
    dim D = 3

    extern fn load() -> [8 D] from "data:load"

    fn main():
        x = load()
        print(x)
    """,
    )
    code, out, err = run(capsys, "run", str(p), "--error-format", "json")
    assert code == 1
    last = RunError.parse(err.strip().splitlines()[-1])
    assert last.kind == RUNTIME and last.path == str(p)
    assert last.line in (4, 7), last
    assert "[8 3]" in last.message and "[5 4]" in last.message
    assert "Traceback" not in err
    # The text output names the extern's declaration and the call.
    assert f"{p}:4:1: error: load(): return value expected [8 3] f32, found [5 4] f32" in err
    assert f"  called from {p}:7:5 (in main)" in err


def test_a_missing_extern_module_is_a_clear_error(tmp_path: Path, capsys) -> None:
    p = write(
        tmp_path,
        """
    extern fn load() -> [4] from "nowhere:load"

    fn main():
        print(load())
    """,
    )
    code, _, err = run(capsys, "run", str(p))
    assert code == 1
    assert "nowhere" in err and "Traceback" not in err


def test_traceback_flag_adds_the_python_traceback(tmp_path: Path, capsys) -> None:
    p = write(
        tmp_path,
        """
    fn main():
        x = ones([2]) as [2] Prob
        y = (x * 3.0) as [2] Prob
        print(y)
    """,
    )
    code, _, err = run(capsys, "run", str(p), "--traceback")
    assert code == 1 and "Traceback" in err
    assert f"{p.name}:4:" in err or "prog.qv:4:" in err


def test_no_main_is_reported(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, "fn f() -> Int:\n    return 1\n")
    code, _, err = run(capsys, "run", str(p))
    assert code == 1 and "has no fn main()" in err
    code, _, err = run(capsys, "run", str(p), "--error-format", "json")
    last = RunError.parse(err.strip().splitlines()[-1])
    assert code == 1 and last.kind == CHECK and "has no fn main()" in last.message


def test_a_main_with_parameters_is_not_run(tmp_path: Path, capsys) -> None:
    """It checks (with a warning, W0403), but the checker's rule says it
    cannot be run: a clear error at `main`, not a Python TypeError from
    calling it. (A main of Int, Float, Bool and Str parameters takes them
    from the command line: tests/test_main_args.py.)"""
    p = write(tmp_path, "fn main(x: [4]):\n    print(x)\n")
    why = "main cannot take 'x: [4]' from the command line (only Int, Float, Bool and Str) (found fn main(x: [4]))"
    code, out, err = run(capsys, "run", str(p), "--no-warnings")
    assert (code, out) == (1, "")
    assert err == f"{p}:1:4: error: {why}\n"
    code, _, err = run(capsys, "run", str(p), "--error-format", "json")
    assert code == 1
    assert RunError.parse(err.strip().splitlines()[-1]) == RunError(str(p), 1, 4, 1, 8, why, CHECK)


@pytest.mark.parametrize(
    "src",
    [
        "fn main():\n    print(1)\n",
        "fn main() -> Int:\n    return 1\n",
        "fn main(n: Int = 3):\n    print(n)\n",
        "fn main(x: [4]):\n    print(x)\n",
        "model M:\n    param w: [2]\n\nfn main(mut m: M):\n    print(m.w)\n",
        'extern fn main() from "nowhere:main"\n',
        "dim D = 2\n",
    ],
)
def test_run_follows_the_checkers_rule(tmp_path: Path, capsys, src: str) -> None:
    """`quiver run` runs a file exactly when ide.runnable says so (the rule
    behind the editor's Run action and lens)."""
    p = write(tmp_path, src)
    assert not check_text(src).errors
    code, _, err = run(capsys, "run", str(p))
    if ide.runnable(check_text(src)):
        assert code == 0, err
    else:
        assert (
            code == 1
            and ("main must" in err or "main cannot" in err or "has no fn main()" in err)
            and "Traceback" not in err
        )


# ---------------------------------------------------------------------- the run protocol


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_run_error_round_trips(kind: str) -> None:
    error = RunError("/tmp/ünï code.qv", 3, 5, 4, 1, 'E0101 unknown name "x" — 🎉', kind)
    line = error.to_json()
    assert "\n" not in line and line.isascii()  # one line, whatever stderr's encoding
    assert RunError.parse(line) == error
    assert error.describe() == 'ünï code.qv:3:5: E0101 unknown name "x" — 🎉'


def test_run_error_lines_that_are_not_records() -> None:
    for line in [
        "",
        "Traceback (most recent call last):",
        "[1, 2]",
        "{}",
        '{"path": "a.qv", "line": "x"}',
        '{"line": 1, "col": 1, "message": "m"}',
    ]:
        assert RunError.parse(line) is None, line
    # the end defaults to the start, the kind to "runtime"
    assert RunError.parse('{"path": "a.qv", "line": 2, "col": 3, "message": "boom"}') == RunError(
        "a.qv", 2, 3, 2, 3, "boom", RUNTIME
    )


def test_the_server_starts_the_runner_with_the_protocols_arguments(tmp_path: Path) -> None:
    from quiver.cli import build_parser

    args = build_parser().parse_args(runner_args(tmp_path / "prog.qv"))
    assert (args.command, args.file, args.error_format) == ("run", str(tmp_path / "prog.qv"), "json")


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
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "run", str(ROOT / "examples" / "regression.qv")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("step ")]
    assert lines[0].startswith("step 0 mse") and len(lines) == 5
    first = float(lines[0].split()[-1])
    last = float(lines[-1].split()[-1])
    assert last < first / 100


def test_deep_programs_run_or_are_refused_without_a_traceback(tmp_path: Path, capsys) -> None:
    # Issue 13: a long flat sum runs (Python's compiler recurses along it too);
    # 3,000 nested blocks (4.5 MB: under the 10 MiB limit on source files)
    # are one E0009; a chain Python cannot nest is a
    # message, not a traceback.
    p = tmp_path / "sum.qv"
    p.write_text("fn main():\n    a = 1.0\n    x = " + " + ".join(["a"] * 20_000) + "\n    print(x)\n")
    assert run(capsys, "run", str(p))[:2] == (0, "20000.0\n")
    p = tmp_path / "blocks.qv"
    p.write_text("fn main():\n" + "".join(" " * (i + 1) + "if True:\n" for i in range(3_000)) + " " * 3_001 + "pass\n")
    code, out, err = run(capsys, "run", str(p))
    assert code == 1 and "E0009 nested more than 100 levels deep" in err and "Traceback" not in err
    p = tmp_path / "casts.qv"
    p.write_text("fn main():\n    x = 1.0" + " as Float" * 300 + "\n    print(x)\n")
    code, out, err = run(capsys, "run", str(p))
    assert (code, out) == (1, "") and "Traceback" not in err
    assert err.strip().endswith("levels deep in the generated Python; name some of its intermediate values")


def test_a_byte_order_mark_runs(tmp_path: Path, capsys) -> None:
    p = tmp_path / "bom.qv"
    p.write_bytes("\ufefffn main():\n    print(1)\n".encode())
    assert run(capsys, "run", str(p))[:2] == (0, "1\n")


# ------------------------------------------------------------------ input handling (issue 13, item 6)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_run_refuses_a_fifo_without_waiting(tmp_path: Path, capsys) -> None:
    os.mkfifo(tmp_path / "p.qv")
    code, out, err = run(capsys, "run", str(tmp_path / "p.qv"))
    assert (code, out) == (2, "")
    assert err.strip() == f"quiver: cannot read {tmp_path / 'p.qv'}: it is a FIFO (named pipe), not a regular file"


def test_run_and_compile_refuse_a_folder_and_a_device(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "run", str(tmp_path))
    assert code == 2 and "it is a folder, not a regular file" in err
    if os.path.exists("/dev/zero"):
        (tmp_path / "z.qv").symlink_to("/dev/zero")
        code, _, err = run(capsys, "compile", str(tmp_path / "z.qv"))
        assert code == 2 and "it is a character device, not a regular file" in err
        with pytest.raises(OSError, match="not a regular file"):
            quiver.load(str(tmp_path / "z.qv"))


def test_run_refuses_a_file_over_the_size_limit(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("quiver.inputs.MAX_SOURCE_BYTES", 8)
    p = write(tmp_path, "fn main():\n    print(1)\n")
    code, _, err = run(capsys, "run", str(p))
    assert code == 2 and "it is larger than 8 bytes" in err


def test_compile_to_an_unwritable_path_is_a_clear_error(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, "fn main():\n    print(1)\n")
    code, _, err = run(capsys, "compile", str(p), "-o", str(tmp_path / "no" / "such" / "out.py"))
    assert code == 2 and err.startswith(f"quiver: cannot write {tmp_path / 'no' / 'such' / 'out.py'}: ")


def test_an_internal_failure_of_quiver_exits_two_without_a_traceback(tmp_path: Path, capsys, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("quiver.cli.compile_file", broken)
    p = write(tmp_path, "fn main():\n    print(1)\n")
    code, out, err = run(capsys, "run", str(p))
    assert (code, out) == (2, "")
    assert err.strip() == "quiver: internal error: RuntimeError: boom (please report it)"
    code, _, err = run(capsys, "run", str(p), "--traceback")
    assert code == 2 and "Traceback" in err


def test_usage_errors_exit_two(capsys) -> None:
    assert run(capsys, "run")[0] == 2
    assert run(capsys, "nonsense")[0] == 2


def test_no_checks_holds_for_its_run_only(tmp_path: Path, capsys) -> None:
    # `quiver run --no-checks` called in-process (a notebook, a test) left every
    # later program of the process unchecked
    from quiver import runtime as rt

    p = write(tmp_path, "fn main():\n    print(1)\n")
    assert rt.checks.enabled
    assert run(capsys, "run", str(p), "--no-checks")[0] == 0
    assert rt.checks.enabled
