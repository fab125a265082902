"""Argument checks (rt.Signature) and the checks switch."""

from __future__ import annotations

import math
import os
import traceback

import pytest
import torch
import torch.nn.functional as F

from quiver import runtime as rt


def check_error(fn, *args):
    with pytest.raises(rt.CheckError) as info:
        fn(*args)
    return info.value


def torch_error(fn, *args) -> str:
    """The message of the RuntimeError that torch itself raises for ``fn(*args)``."""
    with pytest.raises(RuntimeError) as info:
        fn(*args)
    return str(info.value)


# --- the messages, through the hand-written compiled mlp ------------------------------------------


def test_wrong_dim(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.forward, m, torch.zeros(64, 10), rt.Eval)
    assert str(err) == "mlp.qv:13: forward(): argument 'x' expected [b 784] f32, found [64 10] f32"
    assert err.loc == mlp._src.loc(13, 20)
    assert err.detail == "forward(): argument 'x' expected [b 784] f32, found [64 10] f32"


def test_wrong_rank(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.forward, m, torch.zeros(784), rt.Eval)
    assert str(err) == "mlp.qv:13: forward(): argument 'x' expected [b 784] f32, found [784] f32"


def test_wrong_dtype(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.forward, m, torch.zeros(2, 784, dtype=torch.float64), rt.Eval)
    assert str(err) == "mlp.qv:13: forward(): argument 'x' expected [b 784] f32, found [2 784] f64"


def test_inconsistent_generic_binding_names_both_arguments(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.loss, m, torch.zeros(64, 784), torch.zeros(32, dtype=torch.int64), rt.Eval)
    assert str(err) == (
        "mlp.qv:18: loss(): dim b is 64 in argument 'x' but 32 in argument 'y' (expected [b] Index[10], found [32] i64)"
    )
    assert err.loc == mlp._src.loc(18, 27)


def test_generic_dims_are_bound_per_call(mlp):
    m = mlp.Mlp.init(seed=0)
    x4, y4 = torch.zeros(4, 784), torch.zeros(4, dtype=torch.int64)
    x9, y9 = torch.zeros(9, 784), torch.zeros(9, dtype=torch.int64)
    assert mlp._sig_loss.bind(m, x4, y4, rt.Eval) == {"b": (4, "argument 'x'")}
    assert mlp._sig_loss.bind(m, x9, y9, rt.Eval) == {"b": (9, "argument 'x'")}
    # zero inputs give zero logits (b1 and b2 start at zeros): the loss is log 10 for any b
    assert float(mlp.loss(m, x4, y4, rt.Eval)) == pytest.approx(math.log(10))
    assert float(mlp.loss(m, x9, y9, rt.Eval)) == pytest.approx(math.log(10))


def test_index_values_out_of_range(mlp):
    m = mlp.Mlp.init(seed=0)
    y = torch.tensor([0, 3, 12, -1])
    err = check_error(mlp.loss, m, torch.zeros(4, 784), y, rt.Eval)
    assert isinstance(err, rt.ValueCheckError)
    assert str(err) == (
        "mlp.qv:18: loss(): argument 'y' expected [b] Index[10], found values outside 0..9 (min -1, max 12)"
    )


def test_index_needs_int64(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.loss, m, torch.zeros(4, 784), torch.zeros(4, dtype=torch.int32), rt.Eval)
    assert str(err) == "mlp.qv:18: loss(): argument 'y' expected [b] Index[10], found [4] i32"


def test_a_non_tensor(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.forward, m, [[0.0] * 784], rt.Eval)
    assert str(err) == "mlp.qv:13: forward(): argument 'x' expected [b 784] f32, found a Python list"
    err = check_error(mlp.forward, m, 3.0, rt.Eval)
    assert str(err) == "mlp.qv:13: forward(): argument 'x' expected [b 784] f32, found Float 3.0"


def test_wrong_model_class(mlp, kitchen):
    err = check_error(mlp.forward, kitchen.Tiny.init(seed=0), torch.zeros(1, 784), rt.Eval)
    assert str(err) == "mlp.qv:13: forward(): argument 'm' expected model Mlp, found model Tiny"
    err = check_error(mlp.forward, mlp.Mlp, torch.zeros(1, 784), rt.Eval)
    assert str(err) == (
        "mlp.qv:13: forward(): argument 'm' expected model Mlp, found the model class Mlp (not a model value)"
    )


def test_a_model_from_another_load_of_the_file(mlp):
    from rt_support import load_fixture

    other = load_fixture("mlp")
    err = check_error(mlp.forward, other.Mlp.init(seed=0), torch.zeros(1, 784), rt.Eval)
    assert str(err) == (
        "mlp.qv:13: forward(): argument 'm' expected model Mlp, found model Mlp "
        "(another class of that name, from another load of the file)"
    )


def test_wrong_mode(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.forward, m, torch.zeros(1, 784), "train")
    assert str(err) == (
        "mlp.qv:13: forward(): argument 'mode' expected Mode (Train(seed=...) or Eval), found Str 'train'"
    )


def test_numbers_and_tensors(mlp):
    m = mlp.Mlp.init(seed=0)
    x, y = torch.zeros(2, 784), torch.zeros(2, dtype=torch.int64)
    err = check_error(mlp.train_step, m, x, y, torch.tensor(0.1), 0)
    assert str(err) == (
        "mlp.qv:21: train_step(): argument 'lr' expected Float, found a tensor [] f32 (a tensor is not a plain number)"
    )
    err = check_error(mlp.train_step, m, x, y, 0.1, 1.0)
    assert str(err) == "mlp.qv:21: train_step(): argument 'step' expected Int, found Float 1.0"
    err = check_error(mlp.train_step, m, x, y, 0.1, True)
    assert str(err) == "mlp.qv:21: train_step(): argument 'step' expected Int, found Bool True"
    err = check_error(mlp.train_step, m, x, y, "0.1", 0)
    assert str(err) == "mlp.qv:21: train_step(): argument 'lr' expected Float, found Str '0.1'"


def test_a_float_parameter_accepts_an_int(mlp):
    x, y = torch.zeros(2, 784), torch.zeros(2, dtype=torch.int64)
    m = mlp.Mlp.init(seed=0)
    assert float(mlp.train_step(m, x, y, 1, 0)) == pytest.approx(math.log(10))
    # zero inputs: only b2 moves, by -lr * (softmax(0) - onehot(0)) with lr = 1
    assert torch.allclose(m.b2, torch.tensor([0.9] + [-0.1] * 9))
    assert int(m.steps) == 1
    with_float = mlp.Mlp.init(seed=0)
    mlp.train_step(with_float, x, y, 1.0, 0)
    for name, t in m.state_dict().items():
        assert torch.equal(t, with_float.state_dict()[name]), name


def test_wrong_number_of_arguments(mlp):
    err = check_error(mlp._sig_forward.check, 1, 2)
    assert str(err) == "mlp.qv:13: forward() takes 3 arguments (m, x, mode), found 2"


# --- through the kitchen fixture: Grad, repeated dims, Bool/Str, refined types, tuples ------------


def grad_of(kitchen, **over):
    values = {"w": torch.zeros(4, 3), "b": torch.zeros(3)}
    values.update(over)
    return rt.Grad(kitchen.Tiny, values)


def test_a_grad_argument(kitchen):
    m = kitchen.Tiny.init(seed=0)
    kitchen.apply(m, grad_of(kitchen, b=torch.ones(3)), 0.5)
    assert torch.equal(m.b, torch.full((3,), -0.5))


def test_a_grad_of_another_model(kitchen):
    m = kitchen.Tiny.init(seed=0)
    g = rt.Grad(kitchen.Other, {"w": torch.zeros(4, 3)})
    err = check_error(kitchen.apply, m, g, 0.1)
    assert str(err) == "kitchen.qv:16: apply(): argument 'g' expected Grad[Tiny], found Grad[Other]"


def test_a_grad_with_wrong_shapes(kitchen):
    m = kitchen.Tiny.init(seed=0)
    err = check_error(kitchen.apply, m, grad_of(kitchen, w=torch.zeros(3, 4)), 0.1)
    assert str(err) == (
        "kitchen.qv:16: apply(): argument 'g' expected Grad[Tiny], "
        "found Grad[Tiny] whose field w is [3 4] f32 instead of [4 3] f32"
    )
    err = check_error(kitchen.apply, m, grad_of(kitchen, b=torch.zeros(3, dtype=torch.float64)), 0.1)
    assert str(err) == (
        "kitchen.qv:16: apply(): argument 'g' expected Grad[Tiny], "
        "found Grad[Tiny] whose field b is [3] f64 instead of [3] f32"
    )


def test_a_tensor_where_a_grad_is_expected(kitchen):
    m = kitchen.Tiny.init(seed=0)
    err = check_error(kitchen.apply, m, torch.zeros(4, 3), 0.1)
    assert str(err) == "kitchen.qv:16: apply(): argument 'g' expected Grad[Tiny], found [4 3] f32"


def test_a_generic_dim_repeated_in_one_argument(kitchen):
    a = torch.zeros(3, 3)
    assert kitchen.square(a, 1, True, "a") is a
    err = check_error(kitchen.square, torch.zeros(3, 4), 1, True, "a")
    assert str(err) == (
        "kitchen.qv:20: square(): dim n is both 3 and 4 in argument 'a' (expected [n n] f32, found [3 4] f32)"
    )


def test_numpy_scalars_count_as_plain_numbers(kitchen):
    import numpy as np

    a = torch.zeros(2, 2)
    assert kitchen.square(a, np.int64(1), np.bool_(True), "a") is a
    m = kitchen.Tiny.init(seed=0)
    kitchen.apply(m, grad_of(kitchen, b=torch.ones(3)), np.float32(0.5))
    assert torch.equal(m.b, torch.full((3,), -0.5))


def test_bool_and_str_parameters(kitchen):
    err = check_error(kitchen.square, torch.zeros(2, 2), 1, 1, "a")
    assert str(err) == "kitchen.qv:20: square(): argument 'flag' expected Bool, found Int 1"
    err = check_error(kitchen.square, torch.zeros(2, 2), 1, False, 3)
    assert str(err) == "kitchen.qv:20: square(): argument 'name' expected Str, found Int 3"


def test_refined_element_types(kitchen):
    p = torch.tensor([0.0, 0.5, 1.0])
    q = torch.tensor([0.0, 2.0, 3.0])
    y = torch.tensor([0, 1, 2])
    assert torch.equal(kitchen.refined(p, q, y), torch.tensor([0.0, 1.0, 3.0]))
    err = check_error(kitchen.refined, torch.tensor([0.5, 1.5, 0.0]), q, y)
    assert str(err) == (
        "kitchen.qv:23: refined(): argument 'p' expected [k] Prob, found values outside [0, 1] or NaN (min 0, max 1.5)"
    )
    err = check_error(kitchen.refined, p, torch.tensor([1.0, -0.25, 0.0]), y)
    assert str(err) == (
        "kitchen.qv:23: refined(): argument 'q' expected [k] NonNeg, found values below 0 or NaN (min -0.25)"
    )
    err = check_error(kitchen.refined, p, torch.tensor([1.0, float("nan"), 0.0]), y)
    assert "argument 'q' expected [k] NonNeg, found values below 0 or NaN (min nan)" in str(err)
    err = check_error(kitchen.refined, p, q, torch.tensor([0, 3, 1]))
    assert str(err) == (
        "kitchen.qv:23: refined(): argument 'y' expected [k] Index[3], found values outside 0..2 (min 0, max 3)"
    )


def test_a_tensor_modified_in_place_is_checked_again(kitchen):
    p, q = torch.zeros(3), torch.zeros(3)
    y = torch.tensor([0, 1, 2])
    assert torch.equal(kitchen.refined(p, q, y), torch.zeros(3))
    y[1] = 7
    with pytest.raises(rt.ValueCheckError, match="max 7"):
        kitchen.refined(p, q, y)


def test_tuple_parameters(kitchen):
    u = torch.ones(3, dtype=torch.float64)
    assert torch.equal(kitchen.pair((u, 1), u), 2 * u)
    err = check_error(kitchen.pair, u, u)
    assert str(err) == "kitchen.qv:26: pair(): argument 't' expected ([n] f64, Int), found [3] f64"
    err = check_error(kitchen.pair, (u,), u)
    assert str(err) == "kitchen.qv:26: pair(): argument 't' expected ([n] f64, Int), found ([3] f64)"
    err = check_error(kitchen.pair, (u, 1.5), u)
    assert str(err) == "kitchen.qv:26: pair(): element 1 of argument 't' expected Int, found Float 1.5"
    err = check_error(kitchen.pair, (u, 1), torch.ones(4, dtype=torch.float64))
    assert str(err) == (
        "kitchen.qv:26: pair(): dim n is 3 in element 0 of argument 't' but 4 in "
        "argument 'u' (expected [n] f64, found [4] f64)"
    )


# --- where the errors come from ------------------------------------------------------------------------


def test_check_errors_come_from_the_check_not_from_torch(mlp):
    m = mlp.Mlp.init(seed=0)
    with pytest.raises(rt.CheckError) as info:
        mlp.forward(m, torch.zeros(64, 10), rt.Eval)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename.endswith(os.path.join("runtime", "_specs.py"))
    assert not any("torch" + os.sep in f.filename for f in frames)
    assert type(info.value) is rt.CheckError
    assert issubclass(rt.CheckError, rt.QuiverError) and issubclass(rt.CheckError, TypeError)


# --- the switch -----------------------------------------------------------------------------------------


def test_checks_can_be_switched_off(mlp):
    m = mlp.Mlp.init(seed=0)
    rt.checks.enabled = False
    try:
        # a wrong dtype for y passes the entry check and fails inside torch instead
        with pytest.raises(RuntimeError) as info:
            mlp.loss(m, torch.zeros(2, 784), torch.zeros(2), rt.Eval)
    finally:
        rt.checks.enabled = True
    assert type(info.value) is RuntimeError
    assert str(info.value) == torch_error(F.cross_entropy, torch.zeros(2, 10), torch.zeros(2))


def test_the_context_manager_restores_the_previous_state(mlp):
    m = mlp.Mlp.init(seed=0)
    x64 = torch.zeros(2, 784, dtype=torch.float64)
    with rt.checks(False):
        assert not rt.checks.enabled
        with pytest.raises(RuntimeError) as info:
            mlp.forward(m, x64, rt.Eval)
        assert type(info.value) is RuntimeError
        assert str(info.value) == torch_error(torch.matmul, x64, m.w1)
        with rt.checks(True):
            assert rt.checks.enabled
        assert not rt.checks.enabled
    assert rt.checks.enabled
    with pytest.raises(rt.CheckError, match=r"found \[2 784\] f64$"):
        mlp.forward(m, x64, rt.Eval)
    with pytest.raises(ZeroDivisionError), rt.checks(False):
        _ = 1 / 0
    assert rt.checks.enabled
    rt.checks.off()
    assert not rt.checks.enabled
    rt.checks.on()
    assert rt.checks.enabled
    assert repr(rt.checks) == "rt.checks(enabled=True)"


@pytest.mark.parametrize(
    "value, expected",
    [("0", False), ("off", False), ("FALSE", False), ("no", False), ("1", True), ("yes", True), (None, True)],
)
def test_the_environment_variable_sets_the_initial_state(monkeypatch, value, expected):
    from quiver.runtime import _checks

    if value is None:
        monkeypatch.delenv("QUIVER_CHECKS", raising=False)
    else:
        monkeypatch.setenv("QUIVER_CHECKS", value)
    assert _checks._initial() is expected


def test_spec_reprs():
    src = rt.SourceFile("/x/a.qv")
    sig = rt.Signature(
        src, "f", src.loc(1, 1), (rt.TensorArg("x", ("b", 3), rt.f32, None), rt.NumberArg("k", int, None))
    )
    assert repr(sig) == "Signature(f: x: [b 3] f32, k: Int)"
    with pytest.raises(TypeError, match="NumberArg kind"):
        rt.NumberArg("k", "complex", None)
