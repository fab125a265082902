"""`layer(x)` calls the model's `forward`, so the body holding the call
depends on the model's declaration: when the model loses its `forward` (or
gains one), the call is checked again, as the incremental fuzz found with a
docs example whose method lost its body."""

from __future__ import annotations

from quiver.checker import Analyzer, check_text

BEFORE = """\
dim D = 4

model Scale:
    param w: [D] = ones

    fn forward(self, x: [b D]) -> [b D]:
        return x * self.w

fn loss(m: Scale, x: [b D]) -> []:
    return sum(m(x))
"""

# the method is renamed: the model has no forward any more
AFTER = BEFORE.replace("fn forward(", "fn forwards(")
# the method's body is cut off: its syntax error is the one diagnostic (the
# model may have a forward that did not parse, so the call stays silent)
CUT = BEFORE.replace("        return x * self.w\n", "dim E = 2\n        return x * self.w\n")


def _diagnostics(analysis) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in analysis.diagnostics]


def test_a_call_of_a_layer_follows_its_model_losing_forward() -> None:
    analyzer = Analyzer()
    assert _diagnostics(analyzer.update(BEFORE)) == []
    fresh = _diagnostics(check_text(AFTER))
    assert (
        "E0409",
        "m cannot be called: model Scale has no method forward (a fn forward(self, ...) inside the model)",
    ) in fresh
    assert _diagnostics(analyzer.update(AFTER)) == fresh
    # and back: the forward is there again
    assert _diagnostics(analyzer.update(BEFORE)) == []
    cut = _diagnostics(check_text(CUT))
    assert cut and all(code != "E0409" for code, _ in cut)
    assert _diagnostics(analyzer.update(CUT)) == cut
    assert _diagnostics(analyzer.update(BEFORE)) == []
