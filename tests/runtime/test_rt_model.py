"""rt.Model: init, fields, in-place assignment, field_add, save/load, repr, initialisers."""

from __future__ import annotations

import math
import pickle

import pytest
import torch

from quiver import runtime as rt


class Net(rt.Model):
    _qv_name = "Net"
    _qv_params = (
        rt.Field("w", (4, 3), rt.f32, rt.init.normal(0.0, 0.5)),
        rt.Field("b", (3,), rt.f32, rt.init.uniform(-1.0, 1.0)),
        rt.Field("h", (2,), rt.f64, rt.init.glorot_normal),
    )
    _qv_buffers = (
        rt.Field("steps", (), rt.i64, rt.init.fill(0)),
        rt.Field("scale", (2,), rt.nonneg, rt.init.ones),
    )


# --- init ------------------------------------------------------------------------------------


def test_same_seed_gives_identical_tensors(mlp):
    a, b = mlp.Mlp.init(seed=3), mlp.Mlp.init(seed=3)
    for name in ("w1", "b1", "w2", "b2", "steps"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
        assert getattr(a, name) is not getattr(b, name)


def test_different_seeds_differ(mlp):
    a, b = mlp.Mlp.init(seed=3), mlp.Mlp.init(seed=4)
    assert not torch.equal(a.w1, b.w1)
    assert not torch.equal(a.w2, b.w2)


def test_one_generator_per_init_in_declaration_order(mlp):
    m = mlp.Mlp.init(seed=5)
    gen = torch.Generator().manual_seed(5)
    w1 = torch.randn(784, 128, generator=gen) * 0.02
    w2 = torch.randn(128, 10, generator=gen) * 0.02
    assert torch.equal(m.w1, w1)
    assert torch.equal(m.w2, w2)
    assert torch.equal(m.b1, torch.zeros(128)) and torch.equal(m.b2, torch.zeros(10))


def test_fields_are_initialised_in_source_order_params_and_buffers_together(kitchen):
    # kitchen.qv declares w (line 6), the buffer count (line 7), then b (line 8)
    order = [f.name for f in kitchen.Tiny._qv_init_order]
    assert order == ["w", "count", "b"]


def test_fields_hold_tensors_of_the_declared_shape_dtype_and_device(mlp):
    m = mlp.Mlp.init(seed=0)
    expected = {
        "w1": ((784, 128), torch.float32),
        "b1": ((128,), torch.float32),
        "w2": ((128, 10), torch.float32),
        "b2": ((10,), torch.float32),
        "steps": ((), torch.int64),
    }
    for name, (shape, dtype) in expected.items():
        t = getattr(m, name)
        assert type(t) is torch.Tensor
        assert tuple(t.shape) == shape and t.dtype == dtype and t.device == torch.device("cpu"), name
        assert not t.requires_grad


def test_declared_device_is_used():
    class OnMeta(rt.Model):
        _qv_device = "meta"
        _qv_params = (rt.Field("w", (2, 2), rt.f32, rt.init.normal(0.0, 1.0)),)

    assert OnMeta.init(seed=0).w.device.type == "meta"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_an_unavailable_device_is_a_clear_error():
    class OnCuda(rt.Model):
        _qv_name = "OnCuda"
        _qv_device = "cuda"
        _qv_params = (rt.Field("w", (2,), rt.f32),)

    with pytest.raises(rt.ModelError, match="model OnCuda is declared on cuda, but that device is not available here"):
        OnCuda.init(seed=0)


def test_models_are_made_with_init_or_load():
    with pytest.raises(rt.ModelError, match=r"create a Net with Net.init\(seed=...\) or Net.load\(path\)"):
        Net()
    with pytest.raises(rt.ModelError, match="needs an Int seed"):
        Net.init(seed=1.5)


def test_a_random_initialiser_on_an_integer_field_is_an_error():
    src = rt.SourceFile("/x/bad.qv")

    class Bad(rt.Model):
        _qv_params = (rt.Field("k", (2,), rt.i64, rt.init.normal(0.0, 1.0), src.loc(3, 5)),)

    with pytest.raises(rt.ModelError) as info:
        Bad.init(seed=0)
    assert str(info.value) == (
        "bad.qv:3: cannot initialise Bad.k ([2] i64) with normal(0.0, 1.0): normal(0.0, 1.0) needs a float element type"
    )


def test_initial_values_must_fit_a_refined_type():
    class Neg(rt.Model):
        _qv_params = (rt.Field("p", (3,), rt.nonneg, rt.init.fill(-1.0)),)

    with pytest.raises(rt.ModelError, match=r"fill\(-1.0\) gives Neg.p \(\[3\] NonNeg\) values below 0"):
        Neg.init(seed=0)


def test_bad_field_declarations_are_rejected():
    with pytest.raises(rt.ModelError, match="declared twice"):

        class Twice(rt.Model):
            _qv_params = (rt.Field("w", (1,), rt.f32), rt.Field("w", (1,), rt.f32))

    with pytest.raises(rt.ModelError, match="is reserved"):

        class Reserved(rt.Model):
            _qv_params = (rt.Field("_qv_x", (1,), rt.f32),)

    with pytest.raises(rt.ModelError, match="needs fixed dims"):

        class Generic(rt.Model):
            _qv_params = (rt.Field("w", ("n",), rt.f32),)


# --- assignment -----------------------------------------------------------------------------------


def test_assigning_a_field_updates_the_same_tensor_in_place(mlp):
    m = mlp.Mlp.init(seed=0)
    w1 = m.w1
    new = torch.full((784, 128), 0.25)
    m.w1 = new
    assert m.w1 is w1
    assert torch.equal(w1, new)
    new.fill_(7.0)  # no aliasing: the field has its own memory
    assert float(m.w1[0, 0]) == 0.25


def test_assignment_records_no_autograd(mlp):
    m = mlp.Mlp.init(seed=0)
    src = torch.ones(128, requires_grad=True)
    m.b1 = src * 2
    assert not m.b1.requires_grad and m.b1.grad_fn is None
    assert torch.equal(m.b1, torch.full((128,), 2.0))


def test_the_optimizer_style_loop_updates_the_model(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((16, 784), seed=1)
    y = rt.randint((16,), 10, seed=2)
    losses = [float(mlp.train_step(m, x, y, 0.5, i)) for i in range(5)]
    assert losses[-1] < losses[0]
    assert int(m.steps) == 5


def test_assigning_a_wrong_shape_is_an_error(mlp):
    m = mlp.Mlp.init(seed=0)
    with pytest.raises(rt.ModelError) as info:
        m.w1 = torch.zeros(3, 3)
    assert str(info.value) == "cannot assign [3 3] f32 to Mlp.w1, which is [784 128] f32 (declared at mlp.qv:7:5)"
    assert info.value.loc is None  # reported where the assignment is (see rt.format_error)


def test_assigning_a_wrong_dtype_is_an_error(mlp):
    m = mlp.Mlp.init(seed=0)
    with pytest.raises(rt.ModelError, match=r"cannot assign \[10\] f64 to Mlp.b2, which is \[10\] f32"):
        m.b2 = torch.zeros(10, dtype=torch.float64)


def test_without_checks_a_wrong_dtype_is_converted(mlp):
    m = mlp.Mlp.init(seed=0)
    with rt.checks(False):
        m.b2 = torch.ones(10, dtype=torch.float64)
    assert m.b2.dtype == torch.float32 and torch.equal(m.b2, torch.ones(10))


def test_assigning_anything_else_is_an_error(mlp):
    m = mlp.Mlp.init(seed=0)
    with pytest.raises(rt.ModelError) as info:
        m.w3 = torch.zeros(1)
    assert str(info.value) == (
        "model Mlp has no field 'w3'; only its params and buffers (w1, b1, w2, b2, steps) can be assigned"
    )
    with pytest.raises(rt.ModelError, match="cannot assign a str to Mlp.w1"):
        m.w1 = "zeros"
    with pytest.raises(rt.ModelError, match=r"cannot assign float 1.5 to Mlp.w1, which is \[784 128\] f32"):
        m.w1 = 1.5
    with pytest.raises(rt.ModelError, match="cannot delete"):
        del m.w1


def test_a_number_can_be_assigned_to_a_0_dim_field(mlp):
    m = mlp.Mlp.init(seed=0)
    steps = m.steps
    m.steps = 41
    assert m.steps is steps and int(m.steps) == 41


def test_assigning_values_outside_a_refined_type_is_an_error():
    m = Net.init(seed=0)
    with pytest.raises(rt.ModelError, match=r"cannot assign to Net.scale \(\[2\] NonNeg\): values below 0"):
        m.scale = torch.tensor([1.0, -2.0])
    assert torch.equal(m.scale, torch.ones(2))


# --- field_add ---------------------------------------------------------------------------------------


def test_field_add_equals_the_plain_assignment(mlp):
    a, b = mlp.Mlp.init(seed=0), mlp.Mlp.init(seed=0)
    g = rt.randn((784, 128), seed=3)
    w1 = a.w1
    rt.field_add(a, "w1", g, -0.1)
    b.w1 = b.w1 - 0.1 * g
    assert a.w1 is w1
    assert torch.allclose(a.w1, b.w1, atol=1e-7)
    rt.field_add(a, "steps", 1)
    assert int(a.steps) == 1 and a.steps.dtype == torch.int64
    rt.field_add(a, "b2", torch.ones(10))
    rt.field_add(a, "b2", torch.ones(10), -3)
    assert torch.equal(a.b2, torch.full((10,), -2.0))


def test_field_add_broadcasts_like_the_plain_form(mlp):
    m = mlp.Mlp.init(seed=0)
    rt.field_add(m, "b1", torch.tensor(2.0), 0.5)
    assert torch.equal(m.b1, torch.full((128,), 1.0))


def test_field_add_checks_like_the_plain_assignment(mlp):
    m = mlp.Mlp.init(seed=0)
    with pytest.raises(rt.ModelError, match=r"cannot update Mlp.b1, which is \[128\] f32, with \[3\] f32"):
        rt.field_add(m, "b1", torch.ones(3))
    with pytest.raises(rt.ModelError, match=r"cannot assign \[\] f32 to Mlp.steps, which is \[\] i64"):
        rt.field_add(m, "steps", 0.5)
    with pytest.raises(rt.ModelError, match=r"cannot assign \[128\] f64 to Mlp.b1, which is \[128\] f32"):
        rt.field_add(m, "b1", torch.ones(128, dtype=torch.float64))
    with pytest.raises(rt.ModelError, match="has no field 'nope'"):
        rt.field_add(m, "nope", torch.ones(1))
    assert torch.equal(m.b1, torch.zeros(128)) and int(m.steps) == 0


def test_field_add_with_an_overlapping_value_falls_back_to_the_plain_form():
    class Sq(rt.Model):
        _qv_params = (rt.Field("w", (2, 2), rt.f32, rt.init.zeros),)

    m = Sq.init(seed=0)
    m.w = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    rt.field_add(m, "w", rt.transpose(m.w), -1)
    assert torch.equal(m.w, torch.tensor([[0.0, -1.0], [1.0, 0.0]]))
    rt.field_add(m, "w", m.w, 1)  # full overlap is fine in place
    assert torch.equal(m.w, torch.tensor([[0.0, -2.0], [2.0, 0.0]]))


def test_field_add_with_a_tensor_alpha_and_on_refined_fields():
    m = Net.init(seed=0)
    b = m.b.clone()
    rt.field_add(m, "b", torch.ones(3), torch.tensor(2.0))
    assert torch.allclose(m.b, b + 2)
    with pytest.raises(rt.ModelError, match="values below 0"):
        rt.field_add(m, "scale", torch.ones(2), -5)
    rt.field_add(m, "scale", torch.ones(2), 1)
    assert torch.equal(m.scale, torch.full((2,), 2.0))


def test_field_add_records_no_autograd():
    m = Net.init(seed=0)
    g = torch.ones(3, requires_grad=True) * 1.0
    rt.field_add(m, "b", g, -1)
    assert not m.b.requires_grad and m.b.grad_fn is None


# --- state, save and load -----------------------------------------------------------------------


def test_save_and_load_round_trip_exactly(mlp, tmp_path):
    m = mlp.Mlp.init(seed=9)
    x = rt.randn((8, 784), seed=1)
    y = rt.randint((8,), 10, seed=2)
    mlp.train_step(m, x, y, 0.1, 0)
    path = tmp_path / "mlp.pt"
    m.save(path)
    back = mlp.Mlp.load(path)
    assert type(back) is mlp.Mlp
    for name in ("w1", "b1", "w2", "b2", "steps"):
        assert torch.equal(getattr(back, name), getattr(m, name)), name
        assert getattr(back, name).dtype == getattr(m, name).dtype
        assert getattr(back, name) is not getattr(m, name)
    assert int(back.steps) == 1
    assert not back.w1.requires_grad


def test_state_dict_is_a_snapshot_and_load_state_dict_copies_in_place(mlp):
    m = mlp.Mlp.init(seed=0)
    state = m.state_dict()
    assert list(state) == ["w1", "b1", "w2", "b2", "steps"]
    m.b1 = torch.ones(128)
    assert torch.equal(state["b1"], torch.zeros(128))
    b1 = m.b1
    m.load_state_dict(state)
    assert m.b1 is b1 and torch.equal(m.b1, torch.zeros(128))


def test_load_state_dict_rejects_a_state_that_does_not_fit(mlp):
    m = mlp.Mlp.init(seed=0)
    state = m.state_dict()
    del state["b2"]
    state["extra"] = torch.zeros(1)
    with pytest.raises(rt.ModelError, match="state does not fit Mlp: missing b2; unknown extra"):
        m.load_state_dict(state)
    state = m.state_dict()
    state["w2"] = torch.zeros(10, 128)
    with pytest.raises(rt.ModelError, match=r"state does not fit Mlp: w2 is \[10 128\] f32, expected \[128 10\] f32"):
        m.load_state_dict(state)


def test_load_rejects_other_files(mlp, tmp_path):
    other = Net.init(seed=0)
    other.save(tmp_path / "net.pt")
    with pytest.raises(rt.ModelError, match="holds a Net"):
        mlp.Mlp.load(tmp_path / "net.pt")
    torch.save({"w": torch.zeros(1)}, tmp_path / "plain.pt")
    with pytest.raises(rt.ModelError, match="is not a saved Quiver model"):
        mlp.Mlp.load(tmp_path / "plain.pt")
    with pytest.raises(rt.ModelError, match="no file"):
        mlp.Mlp.load(tmp_path / "missing.pt")


def test_models_are_not_pickled(mlp):
    with pytest.raises(rt.ModelError, match=r"use .save\(path\)"):
        pickle.dumps(mlp.Mlp.init(seed=0))


def test_repr(kitchen):
    m = kitchen.Tiny.init(seed=0)
    assert repr(m) == "Tiny(param w: [4 3] f32, param b: [3] f32, buffer count: [] i64 = 0)"

    class OnMeta(rt.Model):
        _qv_name = "OnMeta"
        _qv_device = "meta"
        _qv_params = (rt.Field("w", (2,), rt.f32),)

    assert repr(OnMeta.init(seed=0)) == "OnMeta on meta(param w: [2] f32)"


# --- initialisers ------------------------------------------------------------------------------------


def test_constant_initialisers():
    gen = torch.Generator().manual_seed(0)
    assert torch.equal(rt.init.zeros((2, 3), torch.float32, gen), torch.zeros(2, 3))
    assert torch.equal(rt.init.ones((2,), torch.float64, gen), torch.ones(2, dtype=torch.float64))
    t = rt.init.fill(7)((3,), torch.int64, gen)
    assert torch.equal(t, torch.full((3,), 7)) and t.dtype == torch.int64
    assert repr(rt.init.fill(0.5)) == "fill(0.5)" and repr(rt.init.zeros) == "zeros"


def test_normal_and_uniform_follow_their_parameters():
    gen = torch.Generator().manual_seed(0)
    t = rt.init.normal(2.0, 0.5)((200, 200), torch.float32, gen)
    assert abs(float(t.mean()) - 2.0) < 0.01 and abs(float(t.std()) - 0.5) < 0.01
    u = rt.init.uniform(-3.0, -1.0)((200, 200), torch.float32, gen)
    assert float(u.min()) >= -3.0 and float(u.max()) < -1.0
    assert abs(float(u.mean()) + 2.0) < 0.01


def test_random_initialisers_draw_from_the_given_generator():
    a = rt.init.normal(0.0, 1.0)((5,), torch.float32, torch.Generator().manual_seed(1))
    b = torch.randn(5, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    c = rt.init.uniform(0.0, 1.0)((5,), torch.float32, torch.Generator().manual_seed(1))
    assert torch.equal(c, torch.rand(5, generator=torch.Generator().manual_seed(1)))


def test_glorot_initialisers():
    gen = torch.Generator().manual_seed(0)
    assert rt.init.fans((300, 200)) == (300, 200)
    assert rt.init.fans((7,)) == (7, 7)
    assert rt.init.fans((2, 3, 4)) == (12, 8)  # [Co Ci k]: torch's rule for kernels
    assert rt.init.fans((20, 10, 5, 5)) == (250, 500)
    u = rt.init.glorot_uniform((300, 200), torch.float32, gen)
    bound = math.sqrt(6.0 / 500)
    assert float(u.abs().max()) <= bound and float(u.abs().max()) > 0.95 * bound
    n = rt.init.glorot_normal((300, 200), torch.float32, gen)
    assert abs(float(n.std()) - math.sqrt(2.0 / 500)) < 0.002
    assert rt.init.xavier_uniform is rt.init.glorot_uniform


def test_low_precision_fields_get_the_f32_draw_rounded():
    a = rt.init.normal(0.0, 1.0)((4,), torch.bfloat16, torch.Generator().manual_seed(2))
    b = rt.init.normal(0.0, 1.0)((4,), torch.float32, torch.Generator().manual_seed(2))
    assert a.dtype == torch.bfloat16 and torch.equal(a, b.to(torch.bfloat16))


def test_init_of_a_model_with_every_initialiser():
    m = Net.init(seed=0)
    assert m.h.dtype == torch.float64
    assert torch.equal(m.scale, torch.ones(2))
    assert float(m.b.abs().max()) <= 1.0
