"""qlint: output formats, exit codes, file discovery, selection, --explain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quiver.checker.catalog import CODES
from quiver.qlint import main

ROOT = Path(__file__).resolve().parents[1]

BAD = """\
dim D = 4

fn f(x: [b D]) -> [b]:
    y = 1
    return sum(x, over=K)
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "b.qv").write_text(BAD)
    (tmp_path / "a.qv").write_text("fn main():\n    print(totl)\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "clean.qv").write_text("fn main():\n    print(1)\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "skipped.qv").write_text("fn main(:\n")
    (tmp_path / "notes.txt").write_text("not quiver")
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output_is_sorted_and_pinned(tree: Path, capsys) -> None:
    code, out, err = run(capsys, "--format", "text", str(tree))
    a, b = tree / "a.qv", tree / "b.qv"
    assert out.splitlines() == [
        f"{a}:2:11: E0101 unknown name 'totl'",
        f"{b}:4:5: W0101 'y' is assigned but never used",
        f"{b}:5:24: E0109 unknown dim 'K'",
    ]
    assert code == 1
    assert err.strip() == "qlint: 3 files checked: 2 errors, 1 warning"


def test_default_format_off_a_terminal_is_text(tree: Path, capsys) -> None:
    _, out, _ = run(capsys, str(tree / "a.qv"))
    assert out == f"{tree / 'a.qv'}:2:11: E0101 unknown name 'totl'\n"


def test_json_output(tree: Path, capsys) -> None:
    code, out, _ = run(capsys, "--format", "json", str(tree / "b.qv"))
    data = json.loads(out)
    assert data[1] == {
        "path": str(tree / "b.qv"),
        "line": 5,
        "col": 24,
        "end_line": 5,
        "end_col": 25,
        "code": "E0109",
        "severity": "error",
        "message": "unknown dim 'K'",
    }
    assert [d["severity"] for d in data] == ["warning", "error"]
    assert code == 1


def test_sarif_output(tree: Path, capsys) -> None:
    _, out, _ = run(capsys, "--format", "sarif", str(tree / "b.qv"))
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run_ = doc["runs"][0]
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["E0109", "W0101"]
    result = run_["results"][1]
    assert result["ruleId"] == "E0109" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 5,
        "startColumn": 24,
        "endLine": 5,
        "endColumn": 25,
    }


def test_github_output(tree: Path, capsys) -> None:
    _, out, _ = run(capsys, "--format", "github", str(tree / "a.qv"))
    assert out == (
        f"::error file={tree / 'a.qv'},line=2,col=11,endLine=2,endColumn=15,title=E0101::E0101 unknown name 'totl'\n"
    )


def test_pretty_output_underlines_the_range(tree: Path, capsys) -> None:
    _, out, _ = run(capsys, "--format", "pretty", "--color", "never", str(tree / "b.qv"))
    assert "error[E0109]: unknown dim 'K'" in out
    assert f" --> {tree / 'b.qv'}:5:24" in out
    lines = out.splitlines()
    i = lines.index("5 |     return sum(x, over=K)")
    assert lines[i + 1] == "  |                        ^"


def test_related_locations_in_pretty_output(capsys, tmp_path: Path) -> None:
    src = (ROOT / "tests" / "checker" / "diagnostics" / "W1101.qv").read_text()
    (tmp_path / "w.qv").write_text(src)
    _, out, _ = run(capsys, "--format", "pretty", "--color", "never", str(tmp_path / "w.qv"))
    assert "note: param b is declared here" in out


def test_select_and_ignore(tree: Path, capsys) -> None:
    code, out, _ = run(capsys, "--format", "text", "--select", "W", str(tree / "b.qv"))
    assert [line.split()[1] for line in out.splitlines()] == ["W0101"]
    assert code == 0, "only warnings are left"
    code, out, _ = run(capsys, "--format", "text", "--ignore", "E01,W0101", str(tree / "b.qv"))
    assert out == "" and code == 0


def test_strict_makes_warnings_fail(tree: Path, capsys) -> None:
    assert run(capsys, "--select", "W0101", str(tree / "b.qv"))[0] == 0
    assert run(capsys, "--strict", "--select", "W0101", str(tree / "b.qv"))[0] == 1


def test_clean_files_exit_zero(capsys) -> None:
    code, out, err = run(capsys, str(ROOT / "examples"))
    assert (code, out) == (0, "")
    assert "no problems" in err


def test_unreadable_input_exits_two(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, str(tmp_path / "missing.qv"))
    assert code == 2 and "cannot read" in err


def test_unknown_code_in_select_is_a_usage_error(capsys) -> None:
    code, _, err = run(capsys, "--select", "E9999", str(ROOT / "examples"))
    assert code == 2 and "no diagnostic code matches 'E9999'" in err


def test_bad_flags_exit_two(capsys) -> None:
    assert run(capsys, "--format", "xml", ".")[0] == 2


def test_explain_every_code(capsys) -> None:
    for code in CODES:
        status, out, _ = run(capsys, "--explain", code.lower())
        assert status == 0 and out.startswith(f"{code}: {CODES[code].title}")
    assert run(capsys, "--explain", "E4242")[0] == 2


def test_list_codes(capsys) -> None:
    _, out, _ = run(capsys, "--list-codes")
    assert len(out.splitlines()) == len(CODES)


def test_stdin(capsys, monkeypatch) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"fn main():\n    print(q)\n")))
    code, out, _ = run(capsys, "-", "--stdin-filename", "snippet.qv")
    assert out == "snippet.qv:2:11: E0101 unknown name 'q'\n" and code == 1


def test_invalid_utf8_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "x.qv").write_bytes(b"# \xff\nfn main():\n    print(1)\n")
    code, out, _ = run(capsys, str(tmp_path / "x.qv"))
    assert out == f"{tmp_path / 'x.qv'}:1:3: E0001 the file is not valid UTF-8: byte 0xFF cannot be decoded\n"
    assert code == 1


def test_console_script_runs() -> None:
    exe = Path(sys.executable).with_name("qlint")
    proc = subprocess.run(
        [str(exe), "--format", "text", str(ROOT / "examples")],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
