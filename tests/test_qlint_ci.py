"""CI and editor habits: suppression comments (W0105), [tool.quiver] in
pyproject.toml, qlint --fix, quiver fmt --diff, SARIF links, pre-commit hooks."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from quiver.checker import check_text
from quiver.checker.analysis import Analyzer
from quiver.checker.suppressions import find
from quiver.cli import main as quiver_main
from quiver.qlint import DOCS_URL, main

ROOT = Path(__file__).resolve().parents[1]
BASE = "dim C = 10\n\nfn p(z: [b C]) -> [b C]:\n    return softmax(z, over=0)"
W0202_LINE = "    return softmax(z, over=0)"


def diags(text: str) -> list[tuple[str, str]]:
    """(code, the text under the range) of each diagnostic."""
    return [(d.code, text[d.span.start : d.span.end]) for d in check_text(text).diagnostics]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ suppressions


def test_both_spellings_silence_the_codes_they_name() -> None:
    assert [c for c, _ in diags(BASE + "\n")] == ["W0202"]
    for comment in ("# qlint: ignore[W0202]", "# quiver: ignore[W0202]", "# qlint: ignore", "#qlint:ignore[w0202]"):
        assert diags(f"{BASE}  {comment}\n") == [], comment


def test_an_unused_code_is_w0105_on_that_code() -> None:
    text = BASE + "  # qlint: ignore[W0202, W0101, X9999, E0201]\n"
    got = check_text(text).diagnostics
    assert [(d.code, text[d.span.start : d.span.end]) for d in got] == [
        ("W0105", "W0101"),
        ("W0105", "X9999"),
        ("W0105", "E0201"),
    ]
    assert [d.message for d in got] == [
        "this suppression silences nothing: no W0101 warning on this line to silence",
        "this suppression silences nothing: 'X9999' is not a diagnostic code (see qlint --list-codes)",
        "this suppression silences nothing: E0201 is an error, and errors cannot be silenced",
    ]
    assert all(d.unnecessary for d in got)


def test_a_bare_or_empty_suppression_that_silences_nothing_covers_the_comment() -> None:
    text = "fn main():\n    print(1)  # qlint: ignore\n"
    assert diags(text) == [("W0105", "# qlint: ignore")]
    text = "fn main():\n    print(1)  # qlint: ignore[]  why\n"
    assert diags(text) == [("W0105", "# qlint: ignore[]")]
    (d,) = check_text(text).diagnostics
    assert d.message == "this suppression silences nothing: it names no code"


def test_errors_are_never_silenced() -> None:
    text = "fn p(z: [b]) -> [b]:\n    return q  # qlint: ignore[E0101]\n"
    assert [c for c, _ in diags(text)] == ["E0101", "W0105"]


def test_a_suppression_inside_a_string_is_text() -> None:
    text = 'fn main():\n    print("# qlint: ignore[W0101]")\n'
    assert diags(text) == []
    assert find(text) == {}


def test_a_warning_over_several_lines_is_silenced_at_its_first_or_last_line() -> None:
    text = "fn f(x: [4]) -> [4]:\n    return x\n    print(1)\n    print(2)\n    print(3)\n"
    assert diags(text) == [("W0102", "print(1)\n    print(2)\n    print(3)")]
    assert diags(text.replace("print(1)", "print(1)  # qlint: ignore[W0102]")) == []  # where it starts
    assert diags(text.replace("print(3)", "print(3)  # qlint: ignore[W0102]")) == []  # where it ends
    # a line in between does not silence it
    assert [c for c, _ in diags(text.replace("print(2)", "print(2)  # qlint: ignore[W0102]"))] == ["W0102", "W0105"]


def test_incremental_analysis_equals_a_fresh_one_as_suppressions_come_and_go() -> None:
    texts = [
        BASE + "\n",
        BASE + "  # qlint: ignore[W0202]\n",
        BASE + "  # qlint: ignore[W0202, W0101]\n",
        BASE.replace("over=0", "over=C") + "  # qlint: ignore[W0202]\n",
        BASE + "\n",
    ]
    an = Analyzer()
    for text in texts * 2:
        got = [(d.code, d.span, d.message) for d in an.update(text).diagnostics]
        assert got == [(d.code, d.span, d.message) for d in check_text(text).diagnostics]


# ------------------------------------------------------------------ config


def write_project(root: Path, table: str) -> Path:
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.quiver]\n{table}\n')
    src = root / "src"
    src.mkdir(exist_ok=True)
    (src / "a.qv").write_text(BASE + "\n\nfn main():\n    y = 1\n    print(2)\n")
    return src


def test_the_nearest_pyproject_is_read_and_options_override_it(tmp_path: Path, capsys) -> None:
    src = write_project(tmp_path, 'ignore = ["W0202"]\nstrict = true')
    code, out, _ = run(capsys, "--format", "text", str(src))
    assert [line.split()[1] for line in out.splitlines()] == ["W0101"]
    assert code == 1  # strict: the warning fails the run
    code, out, _ = run(capsys, "--format", "text", "--ignore", "W0101", str(src))
    assert [line.split()[1] for line in out.splitlines()] == ["W0202"]  # the option replaces the setting
    write_project(tmp_path, 'select = ["W02"]')
    code, out, _ = run(capsys, "--format", "text", str(src / "a.qv"))
    assert ([line.split()[1] for line in out.splitlines()], code) == (["W0202"], 0)


def test_a_pyproject_without_a_quiver_table_is_passed_by(tmp_path: Path, capsys) -> None:
    write_project(tmp_path, 'ignore = ["W0202"]')
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "quiver-thing"\n')
    (inner / "a.qv").write_text(BASE + "\n")
    code, out, _ = run(capsys, "--format", "text", str(inner))
    assert (out, code) == ("", 0)


@pytest.mark.parametrize(
    ("table", "message", "line"),
    [
        ('ignor = ["W0202"]', "unknown key tool.quiver.ignor (the keys are select, ignore, strict)", 5),
        ("strict = 1", "tool.quiver.strict must be true or false", 5),
        ('select = "E"', 'tool.quiver.select must be a list of codes or prefixes, such as ["E02", "W0101"]', 5),
        ('\nignore = ["Q12"]', "tool.quiver.ignore: no diagnostic code matches 'Q12' (see qlint --list-codes)", 6),
        ("ignore = [", "not valid TOML: ", 5),
        # valid TOML that Python's reader refuses: one diagnostic, never an internal error
        ("select = " + "[" * 200_000 + "]" * 200_000, "not read: its arrays or tables are nested too deeply", 4),
        ("depth = " + "9" * 5000, "not read: Exceeds the limit (4300 digits)", 4),
    ],
)
def test_a_bad_config_is_e0014_at_the_file_and_the_files_are_checked_with_defaults(
    tmp_path: Path, capsys, monkeypatch, table: str, message: str, line: int
) -> None:
    write_project(tmp_path, table)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "--format", "text", "src")
    rows = out.splitlines()
    assert code == 1 and "internal error" not in err
    assert [r.split()[1] for r in rows] == ["E0014", "W0202", "W0101"]  # every code shown: the defaults
    assert rows[0].startswith(f"pyproject.toml:{line}:")
    assert f"E0014 the [tool.quiver] settings of this file are not applied: {message}" in rows[0]
    assert rows[1].startswith("src/a.qv:")
    # --ignore on the command line still applies to it
    code, out, _ = run(capsys, "--format", "text", "--ignore", "E0014,W", "src")
    assert (out, code) == ("", 0)


def test_the_cache_never_answers_for_another_config(tmp_path: Path, capsys, monkeypatch) -> None:
    # the cache holds every diagnostic of a file; select/ignore apply after it
    src = write_project(tmp_path, 'ignore = ["W0202"]')
    monkeypatch.chdir(tmp_path)
    cache = str(tmp_path / "cache")
    assert [x.split()[1] for x in _lint(capsys, cache, src)] == ["W0101"]
    write_project(tmp_path, 'ignore = ["W0101"]')
    assert [x.split()[1] for x in _lint(capsys, cache, src)] == ["W0202"]


def _lint(capsys, cache: str, src: Path) -> list[str]:
    main(["--cache-dir", cache, "--format", "text", str(src)])
    return capsys.readouterr().out.splitlines()


# ------------------------------------------------------------------ --fix


FIXABLE = """\
dim C = 10

fn p(z: [b C]) -> [b C]:
    return softmax(z, over=0)

fn q(z: [b C]) -> [b C]:
    return log_softmax(z, over=-1)  # qlint: ignore[W0202, W0101]

fn main():
    print(totl)
"""


def test_fix_writes_the_fixes_and_reports_what_remains(tmp_path: Path, capsys) -> None:
    f = tmp_path / "a.qv"
    f.write_text(FIXABLE)
    code, out, err = run(capsys, "--fix", "--format", "text", "--ignore", "E0101", str(f))
    assert f.read_text() == FIXABLE.replace("over=0", "over=C").replace("  # qlint: ignore[W0202, W0101]", "")
    assert f"qlint: fixed 2 problems in {f} (W0105, W0202)" in err
    assert (out, code) == ("", 0)
    # a fix of an error with one sure hint is applied too; the rest remains
    g = tmp_path / "b.qv"
    g.write_text("fn main():\n    total = 1\n    print(totl)\n    print(nothing_like_it)\n")
    code, out, err = run(capsys, "--fix", "--format", "text", str(g))
    assert g.read_text() == "fn main():\n    total = 1\n    print(total)\n    print(nothing_like_it)\n"
    assert out == f"{g}:4:11: E0101 unknown name 'nothing_like_it'\n" and code == 1


def test_overlapping_fixes_take_more_rounds() -> None:
    from quiver.checker.workspace import Workspace
    from quiver.fix import fix_file
    from quiver.host import DiskHost

    text = BASE + "  # qlint: ignore[W0202, W0101, W0102]\n"
    ws = Workspace(DiskHost(), ["/nowhere"])
    ws.set_overlay("/nowhere/a.qv", text)
    result = fix_file(ws, "/nowhere/a.qv", lambda d: True)
    assert result is not None
    # W0202 is silenced, so not fixed; the removals of W0101 and W0102 overlap: two rounds
    assert result.text == BASE + "  # qlint: ignore[W0202]\n"
    assert result.codes == ["W0105", "W0105"]


def test_fix_diff_writes_nothing(tmp_path: Path, capsys) -> None:
    f = tmp_path / "a.qv"
    f.write_text(BASE + "\n")
    code, out, _ = run(capsys, "--fix", "--diff", str(f))
    assert f.read_text() == BASE + "\n" and code == 1
    assert out == (
        f"--- a/{f}\n+++ b/{f}\n@@ -1,4 +1,4 @@\n dim C = 10\n \n fn p(z: [b C]) -> [b C]:\n"
        "-    return softmax(z, over=0)\n+    return softmax(z, over=C)\n"
    )
    assert run(capsys, "--diff", str(f))[0] == 2  # --diff goes with --fix


def test_fix_leaves_a_file_with_a_syntax_error_alone(tmp_path: Path, capsys) -> None:
    f = tmp_path / "a.qv"
    text = BASE + "\n\nfn broken(:\n"
    f.write_text(text)
    run(capsys, "--fix", str(f))
    assert f.read_text() == text


# ------------------------------------------------------------------ fmt --diff


def test_fmt_diff_prints_the_change_and_writes_nothing(tmp_path: Path, capsys) -> None:
    f = tmp_path / "a.qv"
    f.write_text("fn f( x: [4] ) -> [4]:\n  return x\n")
    code = quiver_main(["fmt", "--diff", str(f)])
    out, err = capsys.readouterr()
    assert code == 1 and f.read_text() == "fn f( x: [4] ) -> [4]:\n  return x\n"
    assert out == (
        f"--- a/{f}\n+++ b/{f}\n@@ -1,2 +1,2 @@\n-fn f( x: [4] ) -> [4]:\n-  return x\n"
        "+fn f(x: [4]) -> [4]:\n+    return x\n"
    )
    assert "1 file would be reformatted" in err
    f.write_text("fn f(x: [4]) -> [4]:\n    return x\n")
    assert quiver_main(["fmt", "--diff", str(f)]) == 0
    assert capsys.readouterr().out == ""


# ------------------------------------------------------------------ SARIF and hooks


def test_sarif_links_each_rule_to_its_docs_anchor(tmp_path: Path, capsys) -> None:
    f = tmp_path / "a.qv"
    f.write_text(BASE + "\n")
    _, out, _ = run(capsys, "--format", "sarif", str(f))
    (rule,) = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert rule["helpUri"] == DOCS_URL + "#w0202"
    assert DOCS_URL.startswith("https://") and "example.invalid" not in out
    assert '<a id="w0202"></a>' in (ROOT / "docs" / "diagnostics.md").read_text()


def test_the_docs_url_is_under_the_project_homepage() -> None:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {})
    assert "Homepage" in urls
    assert urls["Homepage"].rstrip("/") + "/blob/main/docs/diagnostics.md" == DOCS_URL


def test_pre_commit_hooks_name_the_package_entry_points() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    try:
        import yaml  # type: ignore[import-untyped]

        hooks = yaml.safe_load(text)
    except ImportError:  # PyYAML is not a dependency: read the flat list by hand
        hooks = [
            dict(re.findall(r"^\s*-?\s*(\w+):\s*(.+?)\s*$", block, re.M))
            for block in re.split(r"^- ", text, flags=re.M)[1:]
        ]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    ids = {h["id"]: h for h in hooks}
    assert set(ids) == {"qlint", "quiver-fmt"}
    for hook in ids.values():
        assert str(hook["language"]) == "python"
        assert str(hook["entry"]).split()[0] in scripts
        assert ".qv" in str(hook.get("files", "")) or "quiver" in str(hook.get("types_or", ""))


def test_a_pyproject_that_is_not_a_regular_file_is_never_read(tmp_path: Path, capsys) -> None:
    import os

    src = write_project(tmp_path, 'ignore = ["W0202"]')
    (tmp_path / "pyproject.toml").unlink()
    os.mkfifo(tmp_path / "pyproject.toml")  # reading it would wait for ever
    code, out, err = run(capsys, "--format", "text", str(src))
    # it counts as absent: the files are checked with the defaults, and a note says why
    assert code == 0 and [r.split()[1] for r in out.splitlines()] == ["W0202", "W0101"]
    assert (
        f"qlint: note: {tmp_path / 'pyproject.toml'} was not read (it is a FIFO (named pipe), not a regular file); "
        "its settings do not apply\n"
    ) in err


def test_a_pyproject_linked_from_outside_the_workspace_does_not_stop_qlint(tmp_path: Path, capsys) -> None:
    # a monorepo layout: each package's pyproject.toml is a link to a shared one outside the folder checked
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "pyproject.toml").write_text('[tool.black]\nline-length = 100\n[tool.quiver]\nignore = ["W0202"]\n')
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "pyproject.toml").symlink_to(shared / "pyproject.toml")
    (pkg / "a.qv").write_text(BASE + "\n")
    code, out, err = run(capsys, "--format", "text", str(pkg))
    assert code == 0 and [r.split()[1] for r in out.splitlines()] == ["W0202"]
    assert "it is a symbolic link that leads out of" in err and "its settings do not apply" in err
    # inside the workspace (the shared file is under the root given), the link is followed
    code, out, _ = run(capsys, "--format", "text", "--root", str(tmp_path), str(pkg))
    assert (out, code) == ("", 0)


def test_show_settings_names_the_file_that_applies(tmp_path: Path, capsys) -> None:
    src = write_project(tmp_path, 'ignore = ["W0202"]\nstrict = true')
    code, out, _ = run(capsys, "--show-settings", str(src))
    assert code == 0
    assert out.splitlines() == [
        f"settings: {tmp_path / 'pyproject.toml'}",
        "select: (every code)",
        "ignore: W0202",
        "strict: true",
        f"roots: {src}",
    ]
    write_project(tmp_path, "ignore = [")
    code, out, _ = run(capsys, "--show-settings", str(src))
    assert out.splitlines()[0].startswith(
        f"settings: defaults ({tmp_path / 'pyproject.toml'} is not applied: not valid TOML"
    )
    (tmp_path / "pyproject.toml").unlink()
    code, out, _ = run(capsys, "--show-settings", str(src))
    assert out.splitlines()[0] == "settings: defaults (no pyproject.toml with [tool.quiver] found)"


def test_a_file_that_cannot_be_written_exits_2_and_is_reported_as_it_was(tmp_path: Path, capsys, monkeypatch) -> None:
    from quiver import fix

    f = tmp_path / "a.qv"
    f.write_text(BASE + "\n")

    def refuse(path: str, text: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fix, "write", refuse)
    code, out, err = run(capsys, "--fix", "--format", "text", str(f))
    assert code == 2 and f"qlint: error: cannot write {f}: Permission denied" in err
    assert [line.split()[1] for line in out.splitlines()] == ["W0202"]  # what is on disk
