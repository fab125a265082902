"""The math built-ins and losses added for real models (issue 11), compiled
and run against torch: values and gradients. (Each is also called by
tests/test_builtins_run.py's program, which calls every built-in.)"""

from __future__ import annotations

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
