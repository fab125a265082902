"""Warnings about bugs whose shapes are legal (W04xx-W09xx).

A pass over a function body after it has been typed: it reads the types and
references the body check recorded and never changes them. What it knows that
torch does not: every dim has a name (generic batch dims versus named class
dims), which values are probabilities (the `Prob` refinement), which locals
are computed from the differentiated model, and where a causal mask came from.

Two kinds of result: warnings that stand on their own, and warnings that only
make sense in a function given to `value_and_grad` (a target that reads the
model trains through itself; a loss computed with `Eval`). The second kind is
kept apart in the body's result and reported by the analysis only for the
functions a `value_and_grad` of the same file differentiates.

One module per theme, each lint registering itself (`base.on_call`,
`base.on_node`): softmax (W0202, W0203), reshape (W0204), probabilities
(W0302, W0303), targets (W1102, W1103), masks (W0205), modes (W1104, W0402),
swapped (W0401). The lints run in the order of `THEMES`, which is the order
of their diagnostics; `names` holds the name tables they read.
"""

from __future__ import annotations

from ...diagnostics import LocalDiagnostic
from . import masks, modes, probabilities, reshape, softmax, swapped, targets
from .base import CheckedBody, LintPass, order_by

THEMES = (softmax, reshape, probabilities, targets, masks, modes, swapped)
order_by([m.__name__ for m in THEMES])


def lint_body(c: CheckedBody) -> tuple[list[LocalDiagnostic], list[LocalDiagnostic]]:
    """The body's warnings that stand on their own, and those that count only
    in a function `value_and_grad` differentiates."""
    return LintPass(c).run()
