"""The documentation's ```` ```quiver run ```` examples, compiled and run: each
one's `main()` runs without an error, and where the docs show what it prints
(a ```` ```text output ```` block right after it) it prints exactly that. The
examples are found, and checked clean, by tests/test_docs.py."""

from __future__ import annotations

import contextlib
import io

import pytest
from test_docs import EXAMPLES, Example

import quiver

RUNS = [e for e in EXAMPLES if e.runs]


def test_the_docs_have_examples_that_run() -> None:
    assert any(e.path.name == "nn.md" for e in RUNS)


@pytest.mark.parametrize("example", RUNS, ids=[e.id for e in RUNS])
def test_example_runs(example: Example, tmp_path) -> None:
    path = tmp_path / "example.qv"
    path.write_text(example.source, encoding="utf-8")
    module = quiver.load(str(path))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        module.main()
    if example.output is not None:
        assert printed.getvalue() == example.output, f"{example.id} printed:\n{printed.getvalue()}"
