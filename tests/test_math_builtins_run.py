"""The math built-ins and losses added for real models (issue 11), compiled
and run against torch: values and gradients. (Each is also called by
tests/test_builtins_run.py's program, which calls every built-in.)"""

from __future__ import annotations

import math
import textwrap

import pytest
import torch
import torch.nn.functional as F

import quiver


def _value_and_grad_against_torch(tmp_path, quiver_expr: str, torch_fn, x: torch.Tensor) -> None:
    """loss(m, x) = quiver_expr (of x and m.w, w = ones) and its gradient, against torch_fn(x, w)."""
    path = tmp_path / "g.qv"
    path.write_text(
        textwrap.dedent(f"""
        dim D = {x.shape[0]}

        model P:
            param w: [D] = ones

        fn loss(m: P, x: [D]) -> []:
            return {quiver_expr}
    """)
    )
    mod = quiver.load(str(path))
    value, g = quiver.runtime.value_and_grad(mod.loss, mod.P.init(seed=0), x)
    w = torch.ones(x.shape[0], requires_grad=True)
    expected = torch_fn(x, w)
    (expected_grad,) = torch.autograd.grad(expected, w)
    assert torch.allclose(value, expected.detach()), (value, expected)
    assert torch.allclose(g.w, expected_grad), (g.w, expected_grad)


@pytest.mark.parametrize(
    "name, torch_fn",
    [("gelu", F.gelu), ("silu", F.silu), ("sin", torch.sin), ("cos", torch.cos)],
)
def test_new_elementwise_gradients_match_torch(tmp_path, name: str, torch_fn) -> None:
    x = torch.tensor([0.5, -2.0, 3.0, 0.0])
    _value_and_grad_against_torch(tmp_path, f"sum({name}(x * m.w))", lambda x, w: torch_fn(x * w).sum(), x)


@pytest.mark.parametrize(
    "quiver_expr, torch_fn",
    [
        ("sum(clamp(x * m.w, min=-1.0, max=1.0))", lambda x, w: torch.clamp(x * w, -1.0, 1.0).sum()),
        ("sum(clamp(x * m.w, min=0.0))", lambda x, w: torch.clamp(x * w, min=0.0).sum()),
        ("sum(maximum(x * m.w, 0.25 * x))", lambda x, w: torch.maximum(x * w, 0.25 * x).sum()),
        ("sum(maximum(0.5, x * m.w))", lambda x, w: torch.clamp(x * w, min=0.5).sum()),
        ("sum(minimum(x * m.w, x * m.w * m.w))", lambda x, w: torch.minimum(x * w, x * w * w).sum()),
        ("sum(minimum(x * m.w, 1.0))", lambda x, w: torch.clamp(x * w, max=1.0).sum()),
    ],
)
def test_clamp_maximum_minimum_values_and_gradients(tmp_path, quiver_expr: str, torch_fn) -> None:
    x = torch.tensor([0.5, -2.0, 3.0, 0.75])
    _value_and_grad_against_torch(tmp_path, quiver_expr, torch_fn, x)


def test_maximum_and_minimum_of_a_tensor_and_a_number_keep_the_dtype() -> None:
    x = torch.tensor([1.0, -2.0], dtype=torch.float64)
    assert quiver.runtime.maximum(x, 0).dtype == torch.float64
    assert torch.equal(quiver.runtime.minimum(0, x), torch.tensor([0.0, -2.0], dtype=torch.float64))
    n = torch.tensor([1, -2])
    assert torch.equal(quiver.runtime.maximum(n, 0), torch.tensor([1, 0]))


def test_math_of_a_number_compiles_to_a_python_float(tmp_path) -> None:
    path = tmp_path / "n.qv"
    path.write_text(
        textwrap.dedent("""
        fn schedule(step: Int, base: Float) -> Float:
            return base * sqrt(32.0) / sqrt(step) + exp(0.5) + log(2.0) + sin(1.0) + cos(1.0)
    """)
    )
    mod = quiver.load(str(path))
    got = mod.schedule(4, 0.1)
    assert type(got) is float
    expected = 0.1 * math.sqrt(32.0) / math.sqrt(4) + math.exp(0.5) + math.log(2.0) + math.sin(1.0) + math.cos(1.0)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "name, x",
    [("sqrt", -1.0), ("sqrt", 0.0), ("log", 0.0), ("log", -1.0), ("exp", 1000.0), ("exp", -1000.0)]
    + [(f, v) for f in ("sin", "cos") for v in (math.inf, math.nan, 2.0)]
    + [(f, math.nan) for f in ("sqrt", "log", "exp")]
    + [(f, 3) for f in ("sqrt", "log", "exp", "sin", "cos")],
)
def test_math_of_a_number_gives_what_torch_gives_in_f64(name: str, x: float) -> None:
    # IEEE results where math raises: sqrt(-1) is nan, log(0) is -inf, exp(1000) is inf.
    got = getattr(quiver.runtime, f"{name}_of_number")(x)
    expected = getattr(torch, name)(torch.tensor(x, dtype=torch.float64)).item()
    assert type(got) is float
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos"])
def test_math_of_a_tensor_is_torchs_function(name: str) -> None:
    assert getattr(quiver.runtime, name) is getattr(torch, name)  # no check in front of the tensor path
    x = torch.tensor([[0.5, 2.0], [3.0, 0.25]], dtype=torch.float64, requires_grad=True)
    got = getattr(quiver.runtime, name)(x)
    expected = getattr(torch, name)(x)
    assert got.dtype == expected.dtype and torch.equal(got, expected)
    (g1,) = torch.autograd.grad(got.sum(), x)
    (g2,) = torch.autograd.grad(expected.sum(), x)
    assert torch.equal(g1, g2)


def test_loss_gradients_match_torch(tmp_path) -> None:
    path = tmp_path / "l.qv"
    path.write_text(
        textwrap.dedent("""
        dim T = 2
        dim C = 3

        model P:
            param w: [T C] = ones

        fn nll_loss(m: P, x: [C T], y: [T] Index[C]) -> [] NonNeg:
            return nll(log_softmax(x * transpose(m.w), over=C), y, over=C)

        fn bce_loss(m: P, x: [T C], y: [T C]) -> [] NonNeg:
            return binary_cross_entropy_with_logits(x * m.w, y)

        fn kl_loss(m: P, x: [T C], y: [T C]) -> [] NonNeg:
            return kl_div(log_softmax(x * m.w, over=C), softmax(y, over=C))

        fn kl_one(m: P, x: [T C], y: [T C]) -> [] NonNeg:
            return kl_div(log_softmax(x[0] * m.w[0], over=C), softmax(y[0], over=C))
    """)
    )
    mod = quiver.load(str(path))
    m = mod.P.init(seed=0)
    x = torch.tensor([[0.5, -1.0, 2.0], [-0.25, 3.0, 0.0]])
    y = torch.tensor([2, 0])
    t = torch.tensor([[0.9, 0.1, 0.5], [0.0, 1.0, 0.25]])

    def torch_nll(w):
        return F.nll_loss(torch.log_softmax(x * w, 1), y)

    def torch_bce(w):
        return F.binary_cross_entropy_with_logits(x * w, t)

    def torch_kl(w):
        return F.kl_div(torch.log_softmax(x * w, 1), torch.softmax(t, 1), reduction="batchmean")

    def torch_kl_one(w):
        return F.kl_div(torch.log_softmax(x[0] * w[0], 0), torch.softmax(t[0], 0), reduction="sum")

    cases = [
        (mod.nll_loss, (x.T.contiguous(), y), torch_nll),
        (mod.bce_loss, (x, t), torch_bce),
        (mod.kl_loss, (x, t), torch_kl),
        (mod.kl_one, (x, t), torch_kl_one),
    ]
    for fn, args, torch_fn in cases:
        value, g = quiver.runtime.value_and_grad(fn, m, *args)
        w = torch.ones(2, 3, requires_grad=True)
        expected = torch_fn(w)
        (expected_grad,) = torch.autograd.grad(expected, w)
        assert torch.allclose(value, expected.detach()), (fn, value, expected)
        assert torch.allclose(g.w, expected_grad), (fn, g.w, expected_grad)


def test_nll_of_log_softmax_is_cross_entropy_and_kl_div_of_itself_is_zero() -> None:
    rt = quiver.runtime
    x = torch.randn(4, 5, 3, generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 5, (4, 3), generator=torch.Generator().manual_seed(1))
    assert torch.allclose(rt.nll(rt.log_softmax(x, 1), y, 1), rt.cross_entropy(x, y, 1))
    xc = x.movedim(1, 2).contiguous()  # the class dim last
    assert torch.allclose(rt.nll(rt.log_softmax(xc, -1), y, -1), rt.cross_entropy(x, y, 1))
    lp = torch.log_softmax(x, 1)
    assert float(rt.kl_div(lp, lp.exp())) == pytest.approx(0.0, abs=1e-6)
    assert float(rt.kl_div(lp, torch.softmax(x.flip(0), 1))) > 0
