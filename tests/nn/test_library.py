"""The nn library (library/nn.qv) as a whole: it checks clean and is in the
formatter's layout, as user code must be; every layer in it has its entry in
docs/nn.md and is compared with torch by a test under tests/nn/."""

from __future__ import annotations

import re
from pathlib import Path

from nn_library import LIBRARY, LIBRARY_FOLDER

from quiver.checker import check_text
from quiver.checker.formatter import format_text

ROOT = Path(__file__).resolve().parents[2]
# the layers a user can name: a private model (`_OutProj`, a part of a layer) is none
LAYERS = re.findall(r"^model ([A-Za-z]\w*)", LIBRARY["nn.qv"], flags=re.M)


def test_the_library_has_its_layers() -> None:
    assert "Linear" in LAYERS
    assert len(LAYERS) == len(set(LAYERS))


def test_the_library_checks_clean_and_is_formatted() -> None:
    for name, text in LIBRARY.items():
        analysis = check_text(text)
        assert [(d.code, d.message) for d in analysis.diagnostics] == [], name
        assert format_text(text).text == text, f"{name} is not in the formatter's layout"


# the layers whose torch twin is another module with an argument: what a test builds
_TORCH_TWINS = {"Conv1dSame": "nn.Conv1d(", "Conv2dSame": "nn.Conv2d("}


def test_every_layer_has_a_docs_entry_and_a_test_against_torch() -> None:
    docs = (ROOT / "docs" / "nn.md").read_text(encoding="utf-8")
    tests = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "nn").glob("test_*.py")))
    for layer in LAYERS:
        assert re.search(rf"^##+ .*\b{layer}\b", docs, flags=re.M), f"docs/nn.md has no heading for {layer}"
        assert f"nn.{layer}[" in docs, f"docs/nn.md shows no use of nn.{layer}"
        twin = _TORCH_TWINS.get(layer, f"nn.{layer}(")
        assert f"torch.{twin}" in tests or twin in tests, f"no test builds torch.{twin}"


def test_every_layer_is_in_a_runnable_docs_example() -> None:
    # a ```quiver run block (tests/test_docs_run.py runs each and compares its output)
    docs = (ROOT / "docs" / "nn.md").read_text(encoding="utf-8")
    runs = [m.group(1) for m in re.finditer(r"^```quiver run\n(.*?)^```$", docs, flags=re.M | re.S)]
    missing = [layer for layer in LAYERS if not any(re.search(rf"\bnn\.{layer}\b", run) for run in runs)]
    assert missing == [], f"docs/nn.md runs no example of {missing}"


def test_the_library_folder_is_inside_the_package() -> None:
    assert LIBRARY_FOLDER == ROOT / "library"
    assert (LIBRARY_FOLDER / "__init__.py").exists()
