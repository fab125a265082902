"""The built-in specs (checker/builtins/) against everything derived from them.

Each spec has a typing rule, an example that checks clean, a docs row and a
grammar entry; a spec without a rule is an internal error, not a silent
fallback. (Every spec's runtime function is checked against `rt` in
tests/test_builtins_run.py, which may import torch.)
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from quiver.checker import builtin_docs, builtins, check_text
from quiver.checker.body.lints import names as N
from quiver.checker.builtins import BUILTINS, MODEL_METHODS, Builtin, ParamKind
from quiver.checker.builtins.registry import RULES
from quiver.checker.builtins.spec import OVER, X

ROOT = Path(__file__).resolve().parents[2]

# A body where each example runs: x a float batch, y labels, m a model, mode a Mode.
HARNESS = """\
dim D = 4
dim C = 3

model M:
    param w: [D C] = zeros
    buffer rm: [D] = zeros
    buffer rv: [D] = ones

fn loss(m: M, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w, y, over=C)

fn harness(m: M, x: [b D], y: [b] Index[C], mode: Mode):
{body}
"""


def test_every_spec_has_its_typing_rule_and_every_rule_is_used() -> None:
    specs = list(BUILTINS.values())
    assert {b.rule for b in specs} == set(RULES), "each spec's rule is a key of RULES, and each rule is used"


@pytest.mark.parametrize("b", list(BUILTINS.values()) + list(MODEL_METHODS.values()), ids=lambda b: b.name)
def test_each_example_checks_clean(b: Builtin) -> None:
    body = textwrap.indent(b.example, "    ") + "\n"
    analysis = check_text(HARNESS.format(body=body))
    assert [(d.code, d.message) for d in analysis.diagnostics if d.code != "W0101"] == []
    assert not analysis.internal_errors
    assert re.search(rf"\b{b.name}\b", b.example)


@pytest.mark.parametrize("b", list(BUILTINS.values()), ids=lambda b: b.name)
def test_a_spec_is_consistent(b: Builtin) -> None:
    assert b.signature.startswith(b.name + "(") and b.doc.endswith(".") and "\n" not in b.doc
    assert b.group in builtins.GROUPS
    names = [p.name for p in b.params]
    assert len(names) == len(set(names))
    # required positional parameters come before optional ones
    positional = [p for p in b.params if not p.keyword_only]
    assert all(p.required for p in positional[: len([q for q in positional if q.required])])
    assert b.refine in (None, "nonneg", "prob")
    if any(p.kind is ParamKind.DIM for p in b.params):
        assert "over=" in b.signature


def test_a_spec_without_a_rule_is_an_internal_error_not_a_fallback(monkeypatch) -> None:
    fake = Builtin(
        name="layer_norm",
        params=(X, OVER),
        signature="layer_norm(x: [..] Float, over=d) -> [..]",
        doc="Made up.",
        example="h = layer_norm(x, over=D)",
        group="along",
        rule="no-such-rule",
        runtime="layer_norm",
    )
    monkeypatch.setitem(BUILTINS, "layer_norm", fake)
    analysis = check_text(HARNESS.format(body="    h = layer_norm(x, over=Q)\n"))
    assert analysis.internal_errors and "no-such-rule" in analysis.internal_errors[0]


def test_the_docs_tables_are_generated_from_the_specs() -> None:
    page = (ROOT / "docs" / "language.md").read_text()
    assert builtin_docs.render_docs(page) == page, "run scripts/gen-builtins"
    for group in builtins.GROUPS:
        assert f"scripts/gen-builtins: {group} -->" in page
    for b in BUILTINS.values():
        assert f"`{b.overloads[0]}`" in page


def test_the_grammar_highlights_exactly_the_builtins() -> None:
    grammar = json.loads((ROOT / "vscode-extension" / "syntaxes" / "quiver.tmLanguage.json").read_text())
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("name") == "support.function.builtin.quiver":
                found.append(node["match"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(grammar)
    assert len(found) == 1, "run scripts/gen-builtins"
    names = re.fullmatch(r"\\b\(\?:(.*)\)\\b", found[0]).group(1).split("|")
    assert names == builtin_docs.grammar_names(), "run scripts/gen-builtins"
    assert {"jvp", "transpose", "grad", "Adam"} <= set(names)  # jvp, grad and optimizers since issue 12


def test_overloads_split_at_the_top_level_only() -> None:
    """A `/` in a default (`start_factor=1.0 / 3`) is not a second overload:
    the docs table and signature help show one signature for it."""
    assert BUILTINS["LinearLR"].overloads == [BUILTINS["LinearLR"].signature]
    assert "start_factor=1.0 / 3" in BUILTINS["LinearLR"].signature
    assert [s.split("(")[0] for s in BUILTINS["log"].overloads] == ["log", "log", "log"]


def test_the_lints_find_the_built_ins_by_the_facts_of_their_specs() -> None:
    # the lints read `role`, `target_param` and `symmetric`; these are the
    # built-ins each lint then looks at (a spec that loses its fact drops out)
    assert {"softmax", "sigmoid"} == N._MAKES_PROB
    assert {"log_softmax", "nll", "nll_loss", "cross_entropy"} == N._MAKES_LOGPROB
    assert N._SOFTMAXES == {
        "softmax": "x",
        "log_softmax": "x",
        "cross_entropy": "logits",
        "nll": "logp",
        "nll_loss": "logp",
    }
    # (torch's names, mse_loss ..., beside Quiver's first ones)
    assert (
        dict.fromkeys(("mse", "smooth_l1", "huber", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"), "target")
        == N._TARGET_LOSSES
    )
    assert {"mse", "mse_loss", "l1_loss", "maximum", "minimum"} == N._SYMMETRIC
    by = {b.name: b for b in BUILTINS.values()}
    assert {n for n, b in by.items() if b.target_param is not None} <= {n for n, b in by.items() if b.role == "loss"}
