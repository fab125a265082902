"""Whole-model updates (`m -= lr * g`, `m += e`) and `grad(f, m, ...)` (issue 12)."""

from __future__ import annotations

from functools import partial

from annotations import spanned

from quiver.checker import check_text
from quiver.checker.compiler import compile_program

P = (
    "dim D = 4\n\nmodel Lin:\n    param w: [D] = zeros\n    buffer n: [] i64 = 0\n\n"
    "model Other:\n    param u: [D] = zeros\n\n"
    "fn loss(m: Lin, x: [b D]) -> []:\n    return sum(x * m.w)\n\n"
)


diags = partial(spanned, prelude=P)


def test_a_mut_model_takes_a_gradient_of_its_own_model() -> None:
    body = "fn step(mut m: Lin, x: [b D], lr: Float):\n    g = grad(loss, m, x)\n    m -= lr * g\n    m += g / 2.0\n    m -= g\n"
    assert diags(body) == []


def test_only_through_a_mut_parameter() -> None:
    body = "fn step(m: Lin, x: [b D], lr: Float):\n    g = grad(loss, m, x)\n    m -= lr * g\n    m -= g\n"
    assert diags(body) == [("E0501", "cannot assign m: 'm' is not a mut parameter", "m")]
    a = check_text(P + body)
    assert a.diagnostics[0].fix is not None and a.diagnostics[0].fix.title == "Make 'm' mut"


def test_anything_else_on_a_model_stays_an_error() -> None:
    assert diags("fn step(mut m: Lin, o: Other, lr: Float):\n    m -= lr * o\n") == [
        ("E0306", "'*' is not defined for number Float and model Other", "lr * o")
    ]
    other = "fn lo(o: Other, x: [b D]) -> []:\n    return sum(x * o.u)\n\nfn step(mut m: Lin, o: Other, x: [b D]):\n    m -= grad(lo, o, x)\n"
    assert [c for c, *_ in diags(other)] == ["E1108"]  # one mistake, one diagnostic
    assert [c for c, *_ in diags("fn step(mut m: Lin):\n    m *= 2.0\n")] == ["E0306"]


def test_grad_is_the_gradient_alone_and_may_be_used_as_a_value() -> None:
    assert diags("fn size(m: Lin, x: [b D]) -> [] NonNeg:\n    return norm(grad(loss, m, x))\n") == []
    assert diags("fn size(m: Lin, x: [b D]) -> [] NonNeg:\n    return norm(grad(loss, m))\n") == [
        ("E0401", "loss takes 1 positional argument, found 0", "(loss, m)")
    ]


def test_the_update_compiles_to_one_fused_step() -> None:
    src = P + "fn step(mut m: Lin, x: [b D], lr: Float):\n    g = grad(loss, m, x)\n    m -= lr * g\n    m += g\n"
    out = compile_program(check_text(src), "t.qv").source
    assert "rt.model_update(m, g, -lr)" in out and "rt.model_update(m, g, 1)" in out
