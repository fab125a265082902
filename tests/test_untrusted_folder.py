"""A folder the user did not write is untrusted input (issue 21): qlint and
`quiver fmt` never read or write outside it through a symbolic link, and
never trust a cache entry they did not write themselves."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from quiver import fmt, qlint
from quiver.cache import CACHE_DIR_NAME, ResultCache, checker_version, key_for
from quiver.checker.ast import Span
from quiver.checker.diagnostics import Diagnostic, Severity
from quiver.host import normal_path, workspace_for

BAD = "dim D = 4\ndim H = 3\n\nfn f(x: [D], w: [H H]) -> [H]:\n    return x @ w\n"
SECRET = "ghp_SECRET_TOKEN_1234 is not a program\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A cloned repository (`repo/`) beside the user's own files (`home/`)."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "token.txt").write_text(SECRET)
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    monkeypatch.delenv("QUIVER_CACHE_DIR", raising=False)
    return repo


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = qlint.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the cache


def test_the_cache_never_writes_its_gitignore_through_a_link(repo: Path, capsys) -> None:
    victim = repo.parent / "home" / "victim"
    victim.write_text("precious\n")
    (repo / CACHE_DIR_NAME).mkdir()
    (repo / CACHE_DIR_NAME / ".gitignore").symlink_to(victim)
    (repo / "a.qv").write_text("dim D = 4\n")
    assert run(capsys, "a.qv")[0] == 0
    assert victim.read_text() == "precious\n"


def test_a_cache_folder_that_is_a_link_is_not_used(repo: Path, capsys) -> None:
    elsewhere = repo.parent / "home" / "project"
    elsewhere.mkdir()
    (elsewhere / ".gitignore").write_text("node_modules\n")
    (repo / CACHE_DIR_NAME).symlink_to(elsewhere)
    (repo / "a.qv").write_text("dim D = 4\n")
    assert run(capsys, "a.qv")[0] == 0
    assert (elsewhere / ".gitignore").read_text() == "node_modules\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == [".gitignore"]


def test_a_shard_that_is_a_link_is_not_written_through(repo: Path, capsys) -> None:
    (repo / "a.qv").write_text("dim D = 4\n")
    ws = workspace_for(["."])
    key = key_for(ws, normal_path("a.qv"), "dim D = 4\n")
    outside = repo.parent / "home" / "shard"
    outside.mkdir()
    version = repo / CACHE_DIR_NAME / checker_version()
    version.mkdir(parents=True)
    (version / key[:2]).symlink_to(outside)
    assert run(capsys, "a.qv")[0] == 0
    assert list(outside.iterdir()) == []


def _plant(repo: Path, path: str, text: str, body: bytes) -> Path:
    """An entry written by a repository, under the key qlint will compute."""
    ws = workspace_for(["."])
    key = key_for(ws, normal_path(path), text)
    entry = repo / CACHE_DIR_NAME / checker_version() / key[:2] / f"{key[2:]}.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(body)
    return entry


@pytest.mark.parametrize(
    "body",
    [
        b"[]",  # the format before entries were signed
        b"quiver-cache 1\n" + b"0" * 64 + b"\n[]",  # a signature made without the user's key
    ],
)
def test_a_forged_entry_does_not_hide_an_error(repo: Path, capsys, body: bytes) -> None:
    (repo / "bad.qv").write_text(BAD)
    _plant(repo, "bad.qv", BAD, body)
    code, out, _ = run(capsys, "--format", "text", "bad.qv")
    assert code == 1
    assert out == "bad.qv:5:12: E0203 matmul [D] @ [H H]: inner dims D and H differ\n"


def test_an_entry_signed_with_another_key_is_a_miss(repo: Path, capsys) -> None:
    (repo / "bad.qv").write_text(BAD)
    ws = workspace_for(["."])
    key = key_for(ws, normal_path("bad.qv"), BAD)
    ResultCache(repo / CACHE_DIR_NAME, key=b"k" * 32).put(key, [])  # another user's, or a forger's
    assert run(capsys, "--format", "text", "bad.qv")[0] == 1


def test_a_genuine_entry_moved_under_another_key_is_a_miss(repo: Path, capsys) -> None:
    (repo / "bad.qv").write_text(BAD)
    (repo / "good.qv").write_text("dim D = 4\n")
    ws = workspace_for(["."])
    good = key_for(ws, normal_path("good.qv"), "dim D = 4\n")
    bad = key_for(ws, normal_path("bad.qv"), BAD)
    cache = ResultCache(repo / CACHE_DIR_NAME)
    cache.put(good, [])
    root = repo / CACHE_DIR_NAME / checker_version()
    target = root / bad[:2] / f"{bad[2:]}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes((root / good[:2] / f"{good[2:]}.json").read_bytes())
    assert run(capsys, "--format", "text", "bad.qv")[0] == 1


def test_a_signed_entry_with_bad_values_is_ignored_and_rewritten(repo: Path, capsys) -> None:
    """A malformed entry (here: spans that are strings) is a miss, never a crash."""
    (repo / "bad.qv").write_text(BAD)
    ws = workspace_for(["."])
    key = key_for(ws, normal_path("bad.qv"), BAD)
    cache = ResultCache(repo / CACHE_DIR_NAME)
    body = json.dumps([{"c": "E0203", "s": "error", "m": "x", "p": ["a", "b"]}]).encode()
    entry = repo / CACHE_DIR_NAME / checker_version() / key[:2] / f"{key[2:]}.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(b"quiver-cache 1\n" + cache._mac(key, body) + b"\n" + body)
    code, out, err = run(capsys, "--format", "text", "bad.qv")
    assert code == 1 and "E0203 matmul" in out and "internal error" not in err
    assert ResultCache(repo / CACHE_DIR_NAME).get(key) is not None  # rewritten with the real result


def test_a_genuine_entry_is_used(repo: Path, capsys, monkeypatch) -> None:
    (repo / "a.qv").write_text("dim D = 4\n")
    ws = workspace_for(["."])
    key = key_for(ws, normal_path("a.qv"), "dim D = 4\n")
    ResultCache(repo / CACHE_DIR_NAME).put(key, [Diagnostic("W0101", Severity.WARNING, "from the cache", Span(0, 3))])
    assert run(capsys, "--format", "text", "a.qv")[1] == "a.qv:1:1: W0101 from the cache\n"


def test_the_signing_key_is_the_users_own(repo: Path, capsys) -> None:
    (repo / "a.qv").write_text("dim D = 4\n")
    run(capsys, "a.qv")
    key = Path(os.environ["XDG_CACHE_HOME"]) / "quiver" / "cache-key"
    assert key.is_file() and (key.stat().st_mode & 0o077) == 0
    assert not (repo / CACHE_DIR_NAME / "cache-key").exists()


def test_without_a_place_for_the_key_nothing_is_cached(repo: Path, capsys, monkeypatch) -> None:
    blocked = repo.parent / "home" / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    (repo / "a.qv").write_text("dim D = 4\n")
    assert run(capsys, "a.qv")[0] == 0
    assert not (repo / CACHE_DIR_NAME).exists()


# ------------------------------------------------------------------ the signing key (issue 37 item 9)

KNOWN = b"K" * 32  # a key an attacker wrote, and so knows


def _forge(repo: Path, xdg: Path, mode: int = 0o700) -> Path:
    """BAD in the repository, a cache entry saying it has no problems signed
    with KNOWN, and KNOWN planted as the user's key, writable by everyone."""
    (repo / "bad.qv").write_text(BAD)
    ws = workspace_for(["."])
    ResultCache(repo / CACHE_DIR_NAME, key=KNOWN).put(key_for(ws, normal_path("bad.qv"), BAD), [])
    folder = xdg / "quiver"
    folder.mkdir(parents=True)
    folder.chmod(mode)
    key = folder / "cache-key"
    key.write_bytes(KNOWN)
    key.chmod(0o666)
    return key


E0203 = "bad.qv:5:12: E0203 matmul [D] @ [H H]: inner dims D and H differ\n"
SUMMARY = "qlint: 1 file checked: 1 error, 0 warnings\n"


@pytest.mark.parametrize(
    "mode, words", [(0o666, "writable by others (mode 0666)"), (0o620, "writable by its group (mode 0620)")]
)
def test_a_key_writable_by_others_is_replaced(
    repo: Path, capsys, monkeypatch, tmp_path: Path, mode: int, words: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = _forge(repo, tmp_path / "xdg")
    key.chmod(mode)
    code, out, err = run(capsys, "--format", "text", "bad.qv")
    assert (code, out) == (1, E0203)
    assert err == f"qlint: note: the cache key {key} is {words}: it was replaced by a new one\n" + SUMMARY
    assert key.read_bytes() != KNOWN and (key.stat().st_mode & 0o777) == 0o600
    assert run(capsys, "--format", "text", "bad.qv") == (1, E0203, SUMMARY)  # the new key is used, silently


def test_a_key_writable_by_others_in_a_shared_folder_means_no_cache(
    repo: Path, capsys, monkeypatch, tmp_path: Path
) -> None:
    """0666 in a 1777 folder: no key there can be trusted, so there is no cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = _forge(repo, tmp_path / "xdg", mode=0o1777)
    code, out, err = run(capsys, "--format", "text", "bad.qv")
    assert (code, out) == (1, E0203)
    assert err == (
        f"qlint: note: not using the cache: its key {key} is writable by others (mode 0666), "
        "and its folder is writable by others (mode 1777), so no key there can be trusted\n" + SUMMARY
    )
    assert key.read_bytes() == KNOWN  # left as it was


def test_a_good_key_in_a_folder_others_can_write_is_not_used(repo: Path, capsys, monkeypatch, tmp_path: Path) -> None:
    """The key itself is the user's and 0600, but anyone may rename another file
    over it there (docs/runtime.md: the folder must be the user's too)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = _forge(repo, tmp_path / "xdg", mode=0o1777)
    key.chmod(0o600)
    code, out, err = run(capsys, "--format", "text", "bad.qv")
    assert (code, out) == (1, E0203)  # the forged entry is not believed
    assert err == (
        f"qlint: note: not using the cache: the folder of its key, {key.parent}, "
        "is writable by others (mode 1777)\n" + SUMMARY
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_key_of_another_user_is_not_used(repo: Path, capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = _forge(repo, tmp_path / "xdg")
    key.chmod(0o600)
    os.chown(key, 12345, 12345)
    code, out, err = run(capsys, "--format", "text", "bad.qv")
    assert (code, out) == (1, E0203)
    assert err == (
        f"qlint: note: the cache key {key} belongs to another user (uid 12345): it was replaced by a new one\n"
        + SUMMARY
    )
    assert key.stat().st_uid == os.getuid()


def test_a_key_that_is_a_link_is_not_followed(repo: Path, capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = _forge(repo, tmp_path / "xdg")
    elsewhere = tmp_path / "elsewhere-key"
    elsewhere.write_bytes(KNOWN)
    elsewhere.chmod(0o600)
    key.unlink()
    key.symlink_to(elsewhere)
    code, out, err = run(capsys, "--format", "text", "bad.qv")
    assert (code, out) == (1, E0203)
    assert err == f"qlint: note: the cache key {key} is a symbolic link: it was replaced by a new one\n" + SUMMARY
    assert not key.is_symlink() and elsewhere.read_bytes() == KNOWN


def test_a_key_that_is_a_fifo_hangs_nothing(repo: Path, tmp_path: Path) -> None:
    """Run in a process of its own, so that a hang fails the test instead of
    stopping the suite."""
    import subprocess
    import sys

    (repo / "bad.qv").write_text(BAD)
    folder = tmp_path / "xdg" / "quiver"
    folder.mkdir(parents=True, mode=0o700)
    key = folder / "cache-key"
    os.mkfifo(key, 0o600)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [sys.executable, "-m", "quiver.qlint", "--format", "text", "bad.qv"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, E0203)
    assert done.stderr == (
        f"qlint: note: the cache key {key} is not a regular file: it was replaced by a new one\n" + SUMMARY
    )
    assert key.is_file()


def test_an_entry_that_is_a_fifo_hangs_nothing(repo: Path, tmp_path: Path) -> None:
    """The cache folder is the repository's: an entry there may be a FIFO."""
    import subprocess
    import sys

    (repo / "bad.qv").write_text(BAD)
    ws = workspace_for(["."])
    key = key_for(ws, normal_path("bad.qv"), BAD)
    entry = repo / CACHE_DIR_NAME / checker_version() / key[:2] / f"{key[2:]}.json"
    entry.parent.mkdir(parents=True)
    os.mkfifo(entry)
    done = subprocess.run(
        [sys.executable, "-m", "quiver.qlint", "--format", "text", "bad.qv"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, E0203, SUMMARY)


# ------------------------------------------------------------------ links out of the folder


def test_the_folder_walk_skips_a_link_out_of_the_folder(repo: Path, capsys) -> None:
    (repo / "tok.qv").symlink_to(repo.parent / "home" / "token.txt")
    (repo / "ok.qv").write_text("dim D = 4\n")
    for fmt_name in ("text", "json", "sarif", "github", "pretty"):
        code, out, err = run(capsys, "--format", fmt_name, ".")
        assert "SECRET" not in out + err and "ghp_" not in out + err
        assert code == 0
    assert "qlint: note: skipped ./tok.qv: a symbolic link that leads out of ." in err
    assert err.splitlines()[-1] == "qlint: 1 file checked, 1 skipped, no problems"


def test_a_link_inside_the_folder_is_followed(repo: Path, capsys) -> None:
    (repo / "real").mkdir()
    (repo / "real" / "bad.qv").write_text("fn main():\n    print(totl)\n")
    (repo / "alias.qv").symlink_to(repo / "real" / "bad.qv")
    code, out, _ = run(capsys, "--format", "text", "alias.qv")
    assert code == 1 and out.startswith("alias.qv:2:11: E0101")


def test_a_link_out_of_the_folder_given_by_name_is_not_read(repo: Path, capsys) -> None:
    (repo / "tok.qv").symlink_to(repo.parent / "home" / "token.txt")
    code, out, err = run(capsys, "tok.qv")
    assert code == 2 and out == "" and "SECRET" not in err
    assert f"cannot read tok.qv: it is a symbolic link that leads out of {repo}" in err


def test_a_link_to_the_environment_of_the_process_is_not_read(repo: Path, capsys) -> None:
    if not os.path.exists("/proc/self/environ"):
        pytest.skip("needs /proc")
    (repo / "env.qv").symlink_to("/proc/self/environ")
    code, out, err = run(capsys, "--format", "json", ".")
    assert json.loads(out) == [] and "PATH=" not in out + err and "XDG_CACHE_HOME" not in out + err
    assert "skipped ./env.qv: a symbolic link that leads out of ." in err


def test_an_import_through_a_link_out_of_the_folder_is_e0113(repo: Path, capsys) -> None:
    (repo / "lib.qv").symlink_to(repo.parent / "home" / "token.txt")
    (repo / "main.qv").write_text("import lib\n")
    code, out, err = run(capsys, "--format", "text", "main.qv")
    assert "SECRET" not in out + err
    assert out == (
        f"main.qv:1:8: E0113 no module 'lib' ({repo}/lib.qv cannot be read: it is a symbolic link that "
        f"leads out of {repo}, and links out of the folder are not followed)\n"
    )
    assert code == 1


def test_a_folder_with_a_module_name_is_named_as_one(repo: Path, capsys) -> None:
    (repo / "lib.qv").mkdir()
    (repo / "main.qv").write_text("import lib\n")
    out = run(capsys, "--format", "text", "main.qv")[1]
    assert (
        out
        == f"main.qv:1:8: E0113 no module 'lib' ({repo}/lib.qv cannot be read: it is a folder, not a regular file)\n"
    )


def test_a_fifo_with_a_module_name_is_named_as_one(repo: Path, capsys) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    os.mkfifo(repo / "lib.qv")
    (repo / "main.qv").write_text("import lib\n")
    out = run(capsys, "--format", "text", "main.qv")[1]
    assert out == (
        f"main.qv:1:8: E0113 no module 'lib' ({repo}/lib.qv cannot be read: it is a FIFO (named pipe), "
        "not a regular file)\n"
    )


def test_a_broken_link_with_a_module_name_is_named_as_one(repo: Path, capsys) -> None:
    (repo / "lib.qv").symlink_to(repo / "gone.qv")
    (repo / "main.qv").write_text("import lib\n")
    out = run(capsys, "--format", "text", "main.qv")[1]
    assert out == (
        f"main.qv:1:8: E0113 no module 'lib' ({repo}/lib.qv cannot be read: it is a symbolic link to nothing "
        "(a broken link))\n"
    )


# ------------------------------------------------------------------ quiver fmt

MESSY = "dim D=4\n"


def test_fmt_never_writes_through_a_link_given_by_name(repo: Path, capsys) -> None:
    outside = repo.parent / "home" / "other.qv"
    outside.write_text(MESSY)
    (repo / "x.qv").symlink_to(outside)
    code = fmt.run([str(repo / "x.qv")], check=False)
    err = capsys.readouterr().err
    assert code == 2 and "it is a symbolic link, and quiver fmt never writes through one" in err
    assert outside.read_text() == MESSY and (repo / "x.qv").is_symlink()


def test_fmt_skips_every_link_in_a_folder(repo: Path, capsys) -> None:
    outside = repo.parent / "home" / "other.qv"
    outside.write_text(MESSY)
    (repo / "x.qv").symlink_to(outside)
    (repo / "inner.qv").write_text(MESSY)
    (repo / "alias.qv").symlink_to(repo / "inner.qv")
    code = fmt.run(["."], check=False)
    err = capsys.readouterr().err
    assert code == 0
    assert outside.read_text() == MESSY and (repo / "inner.qv").read_text() == "dim D = 4\n"
    assert "quiver: note: skipped ./x.qv: a symbolic link" in err and "skipped ./alias.qv: a symbolic link" in err


def test_fmt_replaces_a_file_whole_and_keeps_its_mode(repo: Path, capsys) -> None:
    f = repo / "x.qv"
    f.write_text(MESSY)
    f.chmod(0o640)
    assert fmt.run(["x.qv"], check=False) == 0
    assert f.read_text() == "dim D = 4\n" and (f.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in repo.iterdir()) == ["x.qv"]  # no temporary file left


# ------------------------------------------------------------------ the boundary


def test_a_quiver_toml_above_the_folder_checked_does_not_widen_it(repo: Path, capsys) -> None:
    # A quiver.toml in the user's home (above the repository) is no project of
    # the repository: a link in the repository to a file beside it stays unread.
    home = repo.parent
    (home / "quiver.toml").write_text("")
    (repo / "tok.qv").symlink_to("../home/token.txt")
    (repo / "train.qv").write_text("import tok\n\nfn main():\n    print(1)\n")
    code, out, err = run(capsys, "--no-cache", "--format", "text", str(repo))
    assert SECRET.split()[0] not in out + err
    assert code == 1
    assert [line.split()[1] for line in out.splitlines()] == ["E0113"]
    assert "it is a symbolic link that leads out of" in out


def test_the_project_above_a_file_counts_when_it_is_inside_the_roots(tmp_path: Path, capsys) -> None:
    proj = tmp_path / "proj"
    (proj / "train").mkdir(parents=True)
    (proj / "quiver.toml").write_text("")
    (proj / "layers.qv").write_text("dim D = 4\n")
    (proj / "train" / "main.qv").write_text("import layers\n\nfn main():\n    print(layers.D)\n")
    # the file alone: its folder is the root; the project above it is not searched
    code, out, _ = run(capsys, "--no-cache", "--format", "text", str(proj / "train" / "main.qv"))
    assert code == 1 and [line.split()[1] for line in out.splitlines()] == ["E0113"]
    # the project given as a root (--root, or the folder itself): found
    for args in (["--root", str(proj), str(proj / "train" / "main.qv")], [str(proj)]):
        code, out, _ = run(capsys, "--no-cache", "--format", "text", *args)
        assert (code, out) == (0, ""), args


def test_quiver_compile_does_not_widen_the_folder_either(repo: Path, capsys) -> None:
    # `quiver compile` runs nothing: a quiver.toml above the folder is no project of it
    from quiver.cli import main as quiver_main

    (repo.parent / "quiver.toml").write_text("")
    (repo / "tok.qv").symlink_to("../home/token.txt")
    (repo / "train.qv").write_text("import tok\n\nfn main():\n    print(1)\n")
    code = quiver_main(["compile", str(repo / "train.qv")])
    out, err = capsys.readouterr()
    assert code == 1 and "E0113" in err
    assert SECRET.split()[0] not in out + err
