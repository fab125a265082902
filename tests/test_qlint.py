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
    src = CODES["W1101"].example  # a param never read: its note names where it is declared
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


def test_explain_lists_the_variants_of_the_detail(capsys) -> None:
    status, out, _ = run(capsys, "--explain", "E0910")
    assert status == 0
    listed = out[out.index("The detail is one of:") : out.index("Example:")]
    assert [line.split()[0] for line in listed.splitlines()[2:] if line] == [n for n, _ in CODES["E0910"].variants]
    # each name, then its text in a column two spaces after the longest name
    width = max(len(n) for n, _ in CODES["E0910"].variants) + 2
    assert "    " + "takes_no_dims".ljust(width) + "takes no dims, found <written>[...]\n" in listed
    # a code without variants lists none
    assert "The detail is one of:" not in run(capsys, "--explain", "E0101")[1]


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


# ------------------------------------------------------------------ input handling (issue 13, item 6)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


@needs_fifo
def test_a_fifo_given_by_name_is_an_error_not_a_hang(tmp_path: Path, capsys) -> None:
    os.mkfifo(tmp_path / "p.qv")
    code, out, err = run(capsys, str(tmp_path / "p.qv"))
    assert code == 2 and out == ""
    assert f"cannot read {tmp_path / 'p.qv'}: it is a FIFO (named pipe), not a regular file" in err
    assert err.splitlines()[-1] == "qlint: 0 files checked, 1 could not be read"


@needs_fifo
def test_a_fifo_found_in_a_folder_is_skipped_with_a_note(tmp_path: Path, capsys) -> None:
    os.mkfifo(tmp_path / "p.qv")
    (tmp_path / "ok.qv").write_text("fn main():\n    print(1)\n")
    code, out, err = run(capsys, str(tmp_path))
    assert (code, out) == (0, "")
    assert f"qlint: note: skipped {tmp_path / 'p.qv'}: not a regular file" in err
    assert err.splitlines()[-1] == "qlint: 1 file checked, 1 skipped, no problems"


def test_a_link_to_a_device_given_as_a_qv_file_is_an_error(tmp_path: Path, capsys) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("needs /dev/zero")
    (tmp_path / "x.qv").symlink_to("/dev/zero")
    code, _, err = run(capsys, str(tmp_path / "x.qv"))
    assert code == 2
    assert f"cannot read {tmp_path / 'x.qv'}: it is a symbolic link that leads out of {tmp_path}" in err


def test_a_device_is_named_as_one() -> None:
    from quiver import inputs

    if not os.path.exists("/dev/null"):
        pytest.skip("needs /dev/null")
    assert inputs.why_not_source("/dev/null") == "it is a character device, not a regular file"
    with pytest.raises(inputs.InputError, match="it is a character device, not a regular file"):
        inputs.read_source("/dev/null")


def test_a_folder_with_a_broken_link_skips_it(tmp_path: Path, capsys) -> None:
    (tmp_path / "gone.qv").symlink_to(tmp_path / "nowhere.qv")
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and "skipped" in err and err.splitlines()[-1] == "qlint: no .qv files found (1 skipped)"


def test_a_file_over_the_size_limit_is_an_error(tmp_path: Path, capsys, monkeypatch) -> None:
    from quiver import inputs

    big = tmp_path / "big.qv"
    big.write_bytes(b"# " + b"x" * (inputs.MAX_SOURCE_BYTES) + b"\n")
    code, _, err = run(capsys, str(big))
    assert code == 2 and "it is larger than 10 MiB" in err
    # the read itself stops at the limit, even when the size seen before reading was small
    small = tmp_path / "small.qv"
    small.write_bytes(b"fn main():\n    print(1)\n")
    with pytest.raises(inputs.InputError, match="larger than 8 bytes"):
        inputs.read_source(str(small), limit=8)


def test_standard_input_over_the_size_limit_is_an_error(capsys, monkeypatch) -> None:
    import io

    from quiver import inputs

    monkeypatch.setattr(inputs, "MAX_SOURCE_BYTES", 16)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"fn main():\n    print(12345)\n")))
    code, _, err = run(capsys, "-", "--stdin-filename", "s.qv")
    assert code == 2 and "cannot read s.qv: it is larger than" in err


def test_the_summary_counts_unreadable_files(tree: Path, capsys) -> None:
    code, _, err = run(capsys, str(tree / "sub" / "clean.qv"), str(tree / "missing.qv"))
    assert code == 2
    assert err.splitlines()[-1] == "qlint: 1 file checked, 1 could not be read; no problems in the files checked"
    code, _, err = run(capsys, str(tree / "a.qv"), str(tree / "missing.qv"))
    assert code == 2, "an unreadable file makes the status 2 even when errors were found"
    assert err.splitlines()[-1] == "qlint: 1 file checked, 1 could not be read: 1 error, 0 warnings"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--explain", ""], "--explain needs a diagnostic code"),
        (["--explain", "  "], "--explain needs a diagnostic code"),
        (["--select", ""], "--select needs a code or prefix"),
        (["--select", " , "], "--select needs a code or prefix"),
        (["--ignore", ""], "--ignore needs a code or prefix"),
    ],
)
def test_empty_flag_values_are_usage_errors(args: list[str], message: str, capsys) -> None:
    code, out, err = run(capsys, *args, str(ROOT / "examples"))
    assert (code, out) == (2, "")
    assert message in err


def test_an_internal_failure_exits_two_with_a_message(tree: Path, capsys, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("quiver.checker.workspace.Workspace.analyze", broken)
    code, out, err = run(capsys, str(tree / "a.qv"))
    assert code == 2
    assert err.strip() == "qlint: internal error: RuntimeError: boom (please report it)"
    assert "Traceback" not in err
