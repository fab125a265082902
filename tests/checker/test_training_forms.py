"""The checker on the training forms of issue 12 (sub-models, optimizers,
wrt=, aux outputs, per-example gradients, jvp): each program under
training_forms/ carries its expected diagnostics as annotations (several
cases per code, which the one-case fixtures under diagnostics/ do not)."""

from __future__ import annotations

from pathlib import Path

import pytest
from annotations import check_annotated

PROGRAMS = Path(__file__).with_name("training_forms")


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.qv")), ids=lambda p: p.stem)
def test_program(path: Path) -> None:
    analysis = check_annotated(path.read_text())
    assert not analysis.internal_errors
