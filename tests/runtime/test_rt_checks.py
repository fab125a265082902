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


def test_tensors_that_take_turns_are_each_read_once(monkeypatch):
    """Tokens and their targets (both Index[V]) checked by a train step, then by
    its loss, then by its logits: each tensor's values are read once, not at
    every check, while it is unchanged; a changed one is read again."""
    from quiver.runtime import _elems

    elem = rt.index(5)
    reads = []
    real = _elems.Elem._problem

    def counting(self, t):
        reads.append(t)
        return real(self, t)

    monkeypatch.setattr(_elems.Elem, "_problem", counting)
    tokens, targets = torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3])
    for _ in range(3):
        for t in (tokens, targets):
            assert elem.value_problem(t) is None
    assert len(reads) == 2
    targets[0] = 4
    assert elem.value_problem(targets) is None
    assert elem.value_problem(tokens) is None
    assert len(reads) == 3
    targets[0] = 5
    assert "max 5" in elem.value_problem(targets)
    assert "max 5" in elem.value_problem(targets)  # a bad tensor is never remembered as good
    assert len(reads) == 5
    others = [torch.tensor([i % 5]) for i in range(_elems._OK_SLOTS + 1)]
    for t in others:
        assert elem.value_problem(t) is None
    assert elem.value_problem(others[0]) is None  # pushed out by the newer ones: read again
    assert len(reads) == 5 + len(others) + 1


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


# --- devices (issue 13, item 5) -------------------------------------------------------------------


def test_a_meta_tensor_argument_is_rejected(mlp):
    m = mlp.Mlp.init(seed=0)
    err = check_error(mlp.forward, m, torch.zeros(4, 784, device="meta"), rt.Eval)
    assert err.detail == (
        "forward(): argument 'x' expected [b 784] f32, "
        "found [4 784] f32 on the meta device (a meta tensor has a shape but no values)"
    )
    assert err.loc == mlp._src.loc(13, 20) and not isinstance(err, rt.ValueCheckError)


def test_a_meta_tensor_is_rejected_before_its_values_are_read(mlp):
    m = mlp.Mlp.init(seed=0)
    y = torch.zeros(4, dtype=torch.int64, device="meta")
    err = check_error(mlp.loss, m, torch.zeros(4, 784), y, rt.Eval)
    assert "argument 'y' expected [b] Index[10], found [4] i64 on the meta device" in err.detail


def test_a_tensor_on_another_device_than_the_model(mlp):
    class MetaMlp(mlp.Mlp):  # the same model class, declared on another device
        _qv_device = "meta"

    m = MetaMlp.init(seed=0)
    err = check_error(mlp.forward, m, torch.zeros(4, 784), rt.Eval)
    assert err.detail == (
        "forward(): argument 'x' expected [b 784] f32 on meta (the device of argument 'm', model Mlp), "
        "found [4 784] f32 on cpu"
    )
    assert err.loc == mlp._src.loc(13, 20)


def test_without_a_model_the_first_tensor_sets_the_device():
    src = rt.SourceFile("dev.qv")
    sig = rt.Signature(
        src,
        "add",
        src.loc(1, 1),
        (rt.TensorArg("a", (3,), rt.f32, src.loc(1, 8)), rt.TensorArg("b", (3,), rt.f32, src.loc(1, 19))),
    )
    sig.check(torch.zeros(3), torch.zeros(3))
    with pytest.raises(rt.CheckError) as info:
        sig.check_devices((torch.zeros(3), torch.zeros(3, device="meta")))
    assert (
        info.value.detail
        == "add(): argument 'b' expected [3] f32 on cpu (the device of argument 'a'), found [3] f32 on meta"
    )
    assert info.value.loc == src.loc(1, 19)


def test_tuple_elements_are_placed_too(kitchen):
    # every tensor inside a tuple argument counts; a model argument sets the device
    class OnMeta(rt.Model):
        _qv_name = "OnMeta"
        _qv_device = "meta"
        _qv_params = (rt.Field("w", (2,), rt.f32, rt.init.zeros),)

    src = rt.SourceFile("dev.qv")
    sig = rt.Signature(
        src,
        "f",
        src.loc(1, 1),
        (
            rt.ModelArg("m", OnMeta, src.loc(1, 6)),
            rt.TupleArg("t", (rt.TensorArg("t0", (), rt.f32), rt.TensorArg("t1", (2,), rt.f32)), src.loc(1, 12)),
        ),
    )
    with pytest.raises(rt.CheckError) as info:
        sig.check(OnMeta.init(seed=0), (torch.tensor(1.0), torch.zeros(2)))
    assert info.value.detail == (
        "f(): element 0 of argument 't' expected [] f32 on meta (the device of argument 'm', model OnMeta), "
        "found [] f32 on cpu"
    )


def test_devices_without_an_index_match_any_index():
    from quiver.runtime._specs import _same_device

    d = torch.device
    assert _same_device(d("cuda"), d("cuda:1")) and _same_device(d("cuda:0"), d("cuda"))
    assert not _same_device(d("cuda:0"), d("cuda:1")) and not _same_device(d("cpu"), d("cuda"))


def test_extern_fns_are_not_held_to_one_device():
    # an extern fn is where Python may move data between devices: only meta is refused there
    src = rt.SourceFile("dev.qv")
    sig = rt.Signature(src, "mv", src.loc(1, 1), (rt.TensorArg("a", (3,), rt.f32), rt.TensorArg("b", (3,), rt.f32)))
    sig.bind(torch.zeros(3), torch.zeros(3))
    with pytest.raises(rt.CheckError, match="meta device"):
        sig.bind(torch.zeros(3), torch.zeros(3, device="meta"))


# --- results of compiled fns (issue 13, item 5) ---------------------------------------------------

RESULTS_QV = """\
fn loss(x: [n] f32) -> [] NonNeg:
    return mean(relu(x))

fn share(x: [n] f32) -> [n] Prob:
    return softmax(x, over=n)

fn both(x: [n] f32) -> ([] NonNeg, [n] f32):
    if sum(x) > 0.0:
        return mean(relu(x)), x
    return mean(relu(x)), x
"""


@pytest.fixture
def results(tmp_path):
    import quiver

    p = tmp_path / "results.qv"
    p.write_text(RESULTS_QV)
    return quiver.load(str(p))


@pytest.mark.parametrize(
    "x",
    [torch.tensor([float("nan")]), torch.zeros(0), torch.tensor([1.0, float("nan")])],
    ids=["nan", "empty", "mixed"],
)
def test_a_nonneg_result_that_is_nan_is_reported(results, x):
    with pytest.raises(rt.ValueCheckError) as info:
        results.loss(x)
    err = info.value
    assert err.detail == "loss(): result expected [] NonNeg, found values below 0 or NaN (min nan)"
    assert (err.loc.line, err.loc.col) == (2, 5), "at the return statement"


def test_the_result_message_matches_the_cast():
    with pytest.raises(rt.ValueCheckError) as info:
        rt.cast(torch.tensor(float("nan")), rt.nonneg)
    assert info.value.detail.endswith("found values below 0 or NaN (min nan)")


def test_good_results_pass_and_inf_is_nonneg(results):
    assert results.loss(torch.tensor([-1.0, 3.0])).item() == 1.5
    assert results.loss(torch.tensor([float("inf")])).item() == float("inf")
    assert torch.allclose(results.share(torch.zeros(4)), torch.full((4,), 0.25))


def test_prob_results_are_checked(results):
    with pytest.raises(
        rt.ValueCheckError, match=r"share\(\): result expected \[n\] Prob, found values outside \[0, 1\] or NaN"
    ):
        results.share(torch.tensor([0.0, float("nan")]))


def test_index_results_are_checked():
    src = rt.SourceFile("pick.qv")
    check = rt.ResultCheck(src, "pick", rt.TensorArg("result", ("b",), rt.index(3)))
    good = torch.tensor([0, 2])
    assert check.check(good, 2, 5) is good
    assert check.check(torch.tensor(2), 2, 5).item() == 2
    with pytest.raises(rt.ValueCheckError) as info:
        check.check(torch.tensor([0, 3]), 2, 5)
    assert info.value.detail == "pick(): result expected [b] Index[3], found values outside 0..2 (min 0, max 3)"
    assert info.value.loc == src.loc(2, 5)
    with pytest.raises(rt.ValueCheckError, match=r"found values outside 0..2 \(min -1, max -1\)"):
        check.check(torch.tensor(-1), 2, 5)


def test_tuple_results_name_the_element(results):
    with pytest.raises(rt.ValueCheckError) as info:
        results.both(torch.zeros(0))
    assert info.value.detail == "both(): element 0 of result expected [] NonNeg, found values below 0 or NaN (min nan)"
    assert info.value.loc.line == 10, "the second return"


def test_result_checks_are_off_with_the_switch(results):
    with checks_off():
        assert math.isnan(results.loss(torch.zeros(0)).item())


def test_result_checks_are_skipped_inside_transforms(results):
    from quiver.runtime._checks import transforms

    transforms.depth += 1  # as per-example gradients and jvp do
    try:
        assert math.isnan(results.loss(torch.zeros(0)).item())
    finally:
        transforms.depth -= 1


def checks_off():
    return rt.checks(False)


def test_the_compiled_result_check_costs_nothing_with_checks_off(results):
    text = results.__quiver_program__.compiled.source
    assert "_ret_loss = rt.ResultCheck(_src, 'loss', rt.TensorArg('result', (), rt.nonneg" in text
    assert "    if rt.checks.enabled:\n        _ret_loss.check(_ret_value, 2, 5)\n    return _ret_value" in text


# --- seeds (issue 13, item 5) ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [2**64, 2**70, -(2**63) - 1])
def test_a_seed_that_does_not_fit_in_64_bits_is_a_model_error(mlp, seed):
    with pytest.raises(rt.ModelError) as info:
        mlp.Mlp.init(seed=seed)
    assert str(info.value) == (
        f"Mlp.init(seed=...): seed {seed} does not fit in 64 bits (seeds are Ints in -2**63 .. 2**64-1)"
    )


def test_seeds_at_the_ends_of_the_range_work(mlp):
    mlp.Mlp.init(seed=2**64 - 1)
    mlp.Mlp.init(seed=-(2**63))


def test_other_seeds_are_checked_the_same_way(mlp):
    with pytest.raises(rt.ModeError, match=r"Train\(seed=...\): seed 18446744073709551616 does not fit in 64 bits"):
        rt.Train(seed=2**64)
    with pytest.raises(rt.QuiverError, match="does not fit in 64 bits"):
        rt.randn((2,), seed=2**70)
    with pytest.raises(rt.GradError, match=r"randn_grad\(Mlp, seed\): seed .* does not fit in 64 bits"):
        rt.randn_grad(mlp.Mlp, 2**70)


def test_a_result_check_of_an_unrefined_type_checks_nothing():
    src = rt.SourceFile("plain.qv")
    check = rt.ResultCheck(src, "f", rt.TensorArg("result", (), rt.f32))
    nan = torch.tensor(float("nan"))
    assert check.check(nan, 1, 1) is nan


def test_a_scalar_result_of_another_dtype_takes_the_general_path():
    # compiled code always returns the declared dtype; a Python caller of ResultCheck may not
    src = rt.SourceFile("r.qv")
    check = rt.ResultCheck(src, "f", rt.TensorArg("result", (), rt.nonneg))
    odd = torch.tensor(-1.0, dtype=torch.float64)
    assert check.check(odd, 1, 1) is odd
    with pytest.raises(
        rt.ValueCheckError, match=r"f\(\): result expected \[\] NonNeg, found values below 0 or NaN \(min -1\)"
    ):
        check.check(torch.tensor(-1.0), 1, 1)
