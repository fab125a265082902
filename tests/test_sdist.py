"""The source distribution (issue 27): built from the repository's tracked
files, it builds the wheel, and the tests it ships pass against that wheel.

Everything runs offline with this venv's setuptools (no build isolation, no
index): the sdist and the wheel are built through setuptools' PEP 517 hooks
in subprocesses, the wheel is unpacked with pip `--no-deps --no-index`, and a
few of the shipped test files run from the unpacked sdist with the wheel
first on sys.path, so the package they import is the one the wheel holds,
not this checkout's editable install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_TESTS = ["tests/checker/test_diagnostic_fixtures.py", "tests/test_packaging.py", "tests/test_run.py"]


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [p for p in out.stdout.decode().split("\0") if p and (ROOT / p).is_file()]


def _hook(hook: str, cwd: Path, out: Path) -> str:
    code = f"import sys; from setuptools import build_meta; print(build_meta.{hook}(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("sdist")
    src = tmp / "src"
    for rel in _tracked_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = tmp / "dist"
    sdist = dist / _hook("build_sdist", src, dist)
    unpacked = tmp / "unpacked"
    with tarfile.open(sdist) as tar:
        tar.extractall(unpacked, filter="data")
    (top,) = unpacked.iterdir()
    wheel = dist / _hook("build_wheel", top, dist)
    site = tmp / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site)]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True, timeout=300)
    return {"sdist": sdist, "top": top, "wheel": wheel, "site": site}


def test_the_sdist_holds_what_builds_the_wheel_and_its_tests(built) -> None:
    with tarfile.open(built["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("pyproject.toml", "LICENSE", "README.md", "checker/grammar.lark", "library/nn.qv", *SHIPPED_TESTS):
        assert needed in names, needed
    assert not any("__pycache__" in n or n.startswith((".venv/", "node_modules/")) for n in names)


def test_the_wheel_built_from_the_sdist(built) -> None:
    with zipfile.ZipFile(built["wheel"]) as whl:
        names = set(whl.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(whl.read(info).decode())
        points = whl.read(info.replace("METADATA", "entry_points.txt")).decode()
    for needed in (
        "quiver/cli.py",
        "quiver/checker/grammar.lark",
        "quiver/library/nn.qv",
        "quiver/runtime/_checkpoint.py",
        "quiver/server/__main__.py",
    ):
        assert needed in names, needed
    assert not any(n.startswith(("tests/", "docs/", "examples/")) for n in names)
    assert meta["Name"] == "quiver-lang"
    assert meta["License-Expression"] == "MIT"
    requires = meta.get_all("Requires-Dist") or []
    base = [r for r in requires if "extra ==" not in r]
    assert sorted(r.split(">")[0].split("=")[0].split("<")[0].strip() for r in base) == ["lark", "lsprotocol", "pygls"]
    assert any(r.startswith("torch") and 'extra == "torch"' in r for r in requires)
    for script in ("qlint = quiver.qlint:main", "quiver = quiver.cli:main", "quiver-lsp = quiver.server.__main__:main"):
        assert script in points


def test_the_shipped_tests_pass_against_the_wheel(built) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(built["site"])
    where = subprocess.run(
        [sys.executable, "-c", "import quiver, quiver.runtime; print(quiver.__file__); print(quiver.runtime.__file__)"],
        cwd=built["top"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.returncode == 0, where.stderr
    assert all(line.startswith(str(built["site"])) for line in where.stdout.split()), where.stdout
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *SHIPPED_TESTS],
        cwd=built["top"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]
