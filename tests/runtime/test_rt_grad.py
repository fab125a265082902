"""rt.Grad: fields, order, arithmetic, norm, errors, repr."""

from __future__ import annotations

import math

import pytest
import torch

from quiver import runtime as rt


class A(rt.Model):
    _qv_name = "A"
    _qv_params = (
        rt.Field("w1", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("b1", (2,), rt.f32, rt.init.zeros),
        rt.Field("z", (2,), rt.f32, rt.init.zeros),
    )
    _qv_buffers = (rt.Field("steps", (), rt.i64, rt.init.fill(0)),)


class B(rt.Model):
    _qv_name = "B"
    _qv_params = (rt.Field("w1", (3, 2), rt.f32),)


def grad_a(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return rt.Grad(
        A,
        {
            "w1": torch.randn(3, 2, generator=gen),
            "b1": torch.randn(2, generator=gen),
            "z": torch.randn(2, generator=gen),
        },
    )


def grad_b():
    return rt.Grad(B, {"w1": torch.ones(3, 2)})


def test_fields_are_attributes_and_items():
    g = grad_a()
    assert g.w1 is g["w1"] and g.b1 is g["b1"] and g.z is g["z"]


def test_fields_come_in_declaration_order():
    g = rt.Grad(A, {"z": torch.zeros(2), "b1": torch.ones(2), "w1": torch.ones(3, 2)})
    assert list(g) == ["w1", "b1", "z"]
    assert list(g.keys()) == ["w1", "b1", "z"]
    assert [t.shape for t in g.values()] == [(3, 2), (2,), (2,)]
    assert [n for n, _ in g.items()] == ["w1", "b1", "z"]
    assert len(g) == 3


def test_value_and_grad_fields_follow_the_model(mlp):
    m = mlp.Mlp.init(seed=0)
    _, g = rt.value_and_grad(mlp.loss, m, rt.randn((2, 784), seed=1), rt.randint((2,), 10, seed=1), rt.Eval)
    assert list(g) == ["w1", "b1", "w2", "b2"]


def test_no_fields_for_buffers():
    g = grad_a()
    assert "steps" not in g
    with pytest.raises(rt.GradError) as info:
        _ = g.steps
    assert str(info.value) == "Grad[A] has no field 'steps' (its fields: w1, b1, z)"
    assert isinstance(info.value, AttributeError)
    with pytest.raises(rt.GradError, match="Grad\\[A\\] has no field 'steps'"):
        g["steps"]
    assert not hasattr(g, "steps")


def test_repr():
    assert repr(grad_a()) == "Grad[A](w1: [3 2] f32, b1: [2] f32, z: [2] f32)"


def test_repr_of_an_mlp_gradient(mlp):
    m = mlp.Mlp.init(seed=0)
    _, g = rt.value_and_grad(mlp.loss, m, rt.randn((2, 784), seed=1), rt.randint((2,), 10, seed=1), rt.Eval)
    assert repr(g) == "Grad[Mlp](w1: [784 128] f32, b1: [128] f32, w2: [128 10] f32, b2: [10] f32)"


def test_gradients_are_read_only():
    g = grad_a()
    with pytest.raises(rt.GradError, match="read-only"):
        g.w1 = torch.zeros(3, 2)
    with pytest.raises(rt.GradError, match="read-only"):
        del g.w1


# --- arithmetic ----------------------------------------------------------------------------


def check_fields(g, expected):
    assert isinstance(g, rt.Grad) and g._qv_model is A
    for name, t in zip(("w1", "b1", "z"), expected):
        assert torch.allclose(g[name], t), name


def test_add_and_subtract_gradients_of_one_model():
    g, h = grad_a(0), grad_a(1)
    check_fields(g + h, [a + b for a, b in zip(g.values(), h.values())])
    check_fields(g - h, [a - b for a, b in zip(g.values(), h.values())])


def test_negate():
    g = grad_a()
    check_fields(-g, [-a for a in g.values()])


@pytest.mark.parametrize("s", [2, 0.5, torch.tensor(3.0), torch.tensor(2, dtype=torch.int64)])
def test_multiply_by_a_number_or_a_0_dim_tensor_on_either_side(s):
    g = grad_a()
    expected = [a * s for a in g.values()]
    check_fields(g * s, expected)
    check_fields(s * g, expected)


@pytest.mark.parametrize("s", [2, 0.5, torch.tensor(4.0)])
def test_divide_by_a_number_or_a_0_dim_tensor(s):
    g = grad_a()
    check_fields(g / s, [a / s for a in g.values()])


def test_results_keep_dtype():
    g = grad_a()
    assert all(t.dtype == torch.float32 for t in (g * torch.tensor(2.0, dtype=torch.float64)).values())


def test_adding_gradients_of_different_models_is_an_error():
    with pytest.raises(rt.GradError) as info:
        grad_a() + grad_b()
    assert str(info.value) == "cannot add gradients of different models: Grad[A] + Grad[B]"
    with pytest.raises(rt.GradError) as info:
        grad_a() - grad_b()
    assert str(info.value) == "cannot subtract gradients of different models: Grad[A] - Grad[B]"


def test_same_name_but_other_class_is_another_model():
    class A2(rt.Model):
        _qv_name = "A"
        _qv_params = A._qv_params

    other = rt.Grad(A2, {"w1": torch.ones(3, 2), "b1": torch.ones(2), "z": torch.ones(2)})
    with pytest.raises(rt.GradError, match=r"Grad\[A\] \+ Grad\[A \(another class of that name\)\]"):
        grad_a() + other


ALLOWED = "gradients of one model can be added and subtracted, negated, multiplied by a [] or a number, divided by one"

BAD_BINARY = [
    ("g * g", lambda g: g * g, "Grad[A] * Grad[A]"),
    ("g + x", lambda g: g + torch.ones(2), "Grad[A] + a tensor [2] f32"),
    ("x + g", lambda g: torch.ones(2) + g, "a tensor [2] f32 + Grad[A]"),
    ("x - g", lambda g: torch.ones(2) - g, "a tensor [2] f32 - Grad[A]"),
    ("2 / g", lambda g: 2 / g, "a number (2) / Grad[A]"),
    ("g / g", lambda g: g / g, "Grad[A] / Grad[A]"),
    ("g + 1", lambda g: g + 1, "Grad[A] + a number (1)"),
    ("1 + g", lambda g: 1 + g, "a number (1) + Grad[A]"),
    ("g * x", lambda g: g * torch.ones(2), "Grad[A] * a tensor [2] f32"),
    ("x * g", lambda g: torch.ones(2) * g, "a tensor [2] f32 * Grad[A]"),
    ("g * True", lambda g: g * True, "Grad[A] * a Bool"),
    ("g @ g", lambda g: g @ g, "Grad[A] @ Grad[A]"),
    ("g ** 2", lambda g: g**2, "Grad[A] ** a number (2)"),
    ("g < g", lambda g: g < g, "Grad[A] < Grad[A]"),
    ("+g", lambda g: +g, "+Grad[A]"),
]


@pytest.mark.parametrize("label, op, what", BAD_BINARY, ids=[b[0] for b in BAD_BINARY])
def test_anything_else_is_an_error(label, op, what):
    with pytest.raises(rt.GradError) as info:
        op(grad_a())
    assert str(info.value) == f"unsupported operation on gradients: {what} ({ALLOWED})"


@pytest.mark.parametrize(
    "fn, name",
    [
        (lambda g: rt.mean(g), "mean"),
        (lambda g: rt.sum(g), "sum"),
        (lambda g: rt.relu(g), "relu"),
        (lambda g: torch.mean(g), "mean"),
        (lambda g: rt.exp(g), "exp"),
    ],
)
def test_builtins_on_a_gradient_are_errors(fn, name):
    with pytest.raises(rt.GradError) as info:
        fn(grad_a())
    assert str(info.value) == f"{name}() is not defined on gradients (Grad[A]); use rt.norm(g) for its size"


def test_abs_and_truth_value_are_errors():
    with pytest.raises(rt.GradError, match=r"abs\(\) is not defined on gradients"):
        abs(grad_a())
    with pytest.raises(rt.GradError, match="no truth value"):
        bool(grad_a())


# --- norm -----------------------------------------------------------------------------------


def test_norm_is_the_2_norm_of_all_values_together():
    g = grad_a()
    flat = torch.cat([t.flatten() for t in g.values()])
    n = rt.norm(g)
    assert n.dim() == 0
    assert torch.allclose(n, torch.sqrt((flat**2).sum()))


def test_norm_by_hand():
    g = rt.Grad(A, {"w1": torch.zeros(3, 2), "b1": torch.tensor([3.0, 0.0]), "z": torch.tensor([0.0, 4.0])})
    assert float(rt.norm(g)) == 5.0


def test_norm_of_mixed_dtypes():
    class M(rt.Model):
        _qv_params = (rt.Field("a", (1,), rt.f64), rt.Field("b", (1,), rt.f32))

    g = rt.Grad(M, {"a": torch.tensor([3.0], dtype=torch.float64), "b": torch.tensor([4.0])})
    n = rt.norm(g)
    assert n.dtype == torch.float64 and float(n) == 5.0


def test_norm_of_a_gradient_without_fields_is_zero():
    class Empty(rt.Model):
        pass

    assert float(rt.norm(rt.Grad(Empty, {}))) == 0.0


def test_norm_of_a_real_gradient(mlp):
    m = mlp.Mlp.init(seed=0)
    _, g = rt.value_and_grad(mlp.loss, m, rt.randn((4, 784), seed=1), rt.randint((4,), 10, seed=1), rt.Eval)
    total = math.sqrt(sum(float((t.double() ** 2).sum()) for t in g.values()))
    assert math.isclose(float(rt.norm(g)), total, rel_tol=1e-5)


# --- the public constructor ----------------------------------------------------------------------


def test_constructor_needs_exactly_the_param_names():
    with pytest.raises(rt.GradError) as info:
        rt.Grad(A, {"w1": torch.ones(3, 2)})
    assert str(info.value) == "Grad[A] needs exactly the fields w1, b1, z, found w1"
    with pytest.raises(rt.GradError, match="needs a model class"):
        rt.Grad(3, {})
    with pytest.raises(rt.GradError, match="field 'z' must be a tensor"):
        rt.Grad(A, {"w1": torch.ones(3, 2), "b1": torch.ones(2), "z": 1.0})


def test_constructor_accepts_a_model_instance():
    m = A.init(seed=0)
    g = rt.Grad(m, {"w1": torch.ones(3, 2), "b1": torch.ones(2), "z": torch.ones(2)})
    assert g._qv_model is A
