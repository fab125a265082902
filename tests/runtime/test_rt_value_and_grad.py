"""rt.value_and_grad: every run-time sentence of the gradients chapter."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from quiver import runtime as rt


class Pair(rt.Model):
    _qv_name = "Pair"
    _qv_params = (
        rt.Field("w", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("v", (2,), rt.f64, rt.init.normal(0.0, 1.0)),
        rt.Field("unused", (4,), rt.f32, rt.init.ones),
    )
    _qv_buffers = (rt.Field("count", (), rt.i64, rt.init.fill(0)),)


def pair_loss(m, x):
    return rt.sum(x @ m.w) + rt.sum(m.v * m.v).to(torch.float32)


def hand_mlp_loss(ps, x, y, keep=None):
    w1, b1, w2, b2 = ps
    h = torch.relu(x @ w1 + b1)
    if keep is not None:
        h = h * keep
    return F.cross_entropy(h @ w2 + b2, y)


def leaf_copies(m, names):
    return [getattr(m, n).detach().clone().requires_grad_(True) for n in names]


MLP_PARAMS = ("w1", "b1", "w2", "b2")


# --- what it calls and returns ------------------------------------------------------


def test_calls_f_with_the_model_and_the_arguments_and_returns_value_and_grad(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((4, 784), seed=1)
    y = rt.randint((4,), 10, seed=2)
    seen = []

    def f(model, *args):
        seen.append((model, args))
        return mlp.loss(model, *args)

    out = rt.value_and_grad(f, m, x, y, rt.Eval)
    assert isinstance(out, tuple) and len(out) == 2
    value, g = out
    assert len(seen) == 1
    model, args = seen[0]
    assert model is m
    assert args[0] is x and args[1] is y and args[2] is rt.Eval
    assert isinstance(g, rt.Grad)
    assert torch.allclose(value, mlp.loss(m, x, y, rt.Eval))


def test_gradients_equal_a_hand_written_autograd_computation(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((8, 784), seed=1)
    y = rt.randint((8,), 10, seed=2)
    value, g = rt.value_and_grad(mlp.loss, m, x, y, rt.Eval)
    ps = leaf_copies(m, MLP_PARAMS)
    ref = hand_mlp_loss(ps, x, y)
    ref_grads = torch.autograd.grad(ref, ps)
    assert torch.allclose(value, ref.detach())
    for name, r in zip(MLP_PARAMS, ref_grads):
        assert torch.allclose(g[name], r, atol=1e-7, rtol=1e-5), name
    # and the gradients are not trivially zero
    assert all(float(t.abs().sum()) > 0 for t in g.values())


def test_gradients_go_through_the_values_dropout_keeps(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((8, 784), seed=1)
    y = rt.randint((8,), 10, seed=2)
    value, g = rt.value_and_grad(mlp.loss, m, x, y, rt.Train(seed=7))
    # rebuild the mask as docs/runtime.md specifies: the first draw of Train(seed=7)
    ps = leaf_copies(m, MLP_PARAMS)
    h = torch.relu(x @ ps[0] + ps[1])
    gen = torch.Generator().manual_seed(7)
    keep = torch.empty_like(h).bernoulli_(0.9, generator=gen).div_(0.9)
    ref = hand_mlp_loss(ps, x, y, keep)
    ref_grads = torch.autograd.grad(ref, ps)
    assert torch.allclose(value, ref.detach())
    for name, r in zip(MLP_PARAMS, ref_grads):
        assert torch.allclose(g[name], r, atol=1e-7, rtol=1e-5), name


def test_dropped_units_get_no_gradient(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((1, 784), seed=3)
    y = rt.randint((1,), 10, seed=4)
    _, g = rt.value_and_grad(mlp.loss, m, x, y, rt.Train(seed=11))
    h = torch.relu(x @ m.w1 + m.b1)
    keep = torch.empty_like(h).bernoulli_(0.9, generator=torch.Generator().manual_seed(11))
    dropped = (keep[0] == 0) & (h[0] > 0)
    kept = (keep[0] == 1) & (h[0] > 0)
    assert dropped.any() and kept.any()
    row_norms = g.w2.abs().sum(dim=1)
    assert torch.all(row_norms[dropped] == 0)
    assert torch.all(row_norms[kept] > 0)


class Small(rt.Model):
    _qv_name = "Small"
    _qv_params = (
        rt.Field("w", (3, 2), rt.f64, rt.init.normal(0.0, 1.0)),
        rt.Field("b", (2,), rt.f64, rt.init.normal(0.0, 1.0)),
    )


def small_loss(m, x, y):
    return rt.cross_entropy(rt.tanh(x @ m.w + m.b), y, 1) + rt.mean(m.w * m.w)


def test_gradcheck_in_float64_through_value_and_grad():
    m = Small.init(seed=0)
    x = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.tensor([0, 1, 1, 0, 1])

    class ViaRt(torch.autograd.Function):
        # forward: load the inputs into the model, evaluate with rt.value_and_grad
        # (forward runs under no_grad); backward: hand back rt's gradient.
        @staticmethod
        def forward(ctx, w, b):
            m.load_state_dict({"w": w, "b": b})
            value, g = rt.value_and_grad(small_loss, m, x, y)
            ctx.save_for_backward(g.w, g.b)
            return value

        @staticmethod
        def backward(ctx, grad_out):
            gw, gb = ctx.saved_tensors
            return grad_out * gw, grad_out * gb

    w = m.w.detach().clone().requires_grad_(True)
    b = m.b.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(ViaRt.apply, (w, b), eps=1e-6, atol=1e-5)


# --- autograd mode, torch.autograd.grad, .grad ---------------------------------------------


def test_autograd_is_enabled_even_inside_no_grad():
    m = Pair.init(seed=0)
    x = torch.ones(5, 3)
    with torch.no_grad():
        value, g = rt.value_and_grad(pair_loss, m, x)
        assert not torch.is_grad_enabled()  # restored afterwards
    assert torch.allclose(g.w, x.sum(0)[:, None].expand(3, 2))
    assert torch.allclose(g.v, 2 * m.v)


def test_grad_mode_inside_f_is_on_even_under_no_grad():
    m = Pair.init(seed=0)
    modes = []

    def f(model, x):
        modes.append(torch.is_grad_enabled())
        return pair_loss(model, x)

    with torch.no_grad():
        rt.value_and_grad(f, m, torch.ones(2, 3))
    assert modes == [True]


def test_calls_torch_autograd_grad_with_the_params_in_declaration_order(monkeypatch):
    m = Pair.init(seed=0)
    calls = []
    real = torch.autograd.grad

    def spy(outputs, inputs, *args, **kwargs):
        calls.append((outputs, tuple(inputs)))
        return real(outputs, inputs, *args, **kwargs)

    monkeypatch.setattr(torch.autograd, "grad", spy)
    rt.value_and_grad(pair_loss, m, torch.ones(2, 3))
    assert len(calls) == 1
    inputs = calls[0][1]
    assert len(inputs) == 3
    assert inputs[0] is m.w and inputs[1] is m.v and inputs[2] is m.unused


def test_nothing_reads_or_writes_dot_grad():
    m = Pair.init(seed=0)
    rt.value_and_grad(pair_loss, m, torch.ones(2, 3))
    assert m.w.grad is None and m.v.grad is None and m.unused.grad is None
    # a .grad put there by someone else is neither read (it would change the
    # result) nor written (it would change its values)
    sentinel = torch.full((3, 2), float("nan"))
    m.w.grad = sentinel
    value, g = rt.value_and_grad(pair_loss, m, torch.ones(2, 3))
    assert m.w.grad is sentinel and torch.isnan(sentinel).all()
    assert torch.isfinite(g.w).all()
    assert torch.allclose(g.w, torch.full((3, 2), 2.0))


def test_models_have_no_train_eval_or_zero_grad(mlp):
    m = mlp.Mlp.init(seed=0)
    for name in ("train", "eval", "zero_grad", "parameters"):
        assert not hasattr(m, name), name


def test_the_mode_is_passed_on_to_f_like_any_other_argument():
    m = Pair.init(seed=0)
    got = []

    def f(model, x, mode):
        got.append(mode)
        return pair_loss(model, x)

    mode = rt.Train(seed=3)
    rt.value_and_grad(f, m, torch.ones(2, 3), mode)
    rt.value_and_grad(f, m, torch.ones(2, 3), rt.Eval)
    assert got[0] is mode and got[1] is rt.Eval


# --- the value ---------------------------------------------------------------------------


def test_the_value_is_detached_and_keeps_the_type_of_f_result():
    m = Small.init(seed=0)
    x = torch.randn(4, 3, dtype=torch.float64)
    y = torch.tensor([0, 1, 0, 1])
    value, _ = rt.value_and_grad(small_loss, m, x, y)
    assert value.dim() == 0 and value.dtype == torch.float64
    assert not value.requires_grad and value.grad_fn is None


def test_a_value_that_is_a_param_itself_does_not_alias_it():
    class S(rt.Model):
        _qv_params = (rt.Field("s", (), rt.f32, rt.init.fill(2.0)),)

    m = S.init(seed=0)
    value, g = rt.value_and_grad(lambda mm: mm.s, m)
    assert float(value) == 2.0 and float(g.s) == 1.0
    m.s = torch.tensor(5.0)
    assert float(value) == 2.0


def test_a_value_that_is_a_view_of_a_param_does_not_alias_it():
    class V(rt.Model):
        _qv_params = (rt.Field("w", (2, 2), rt.f32, rt.init.fill(2.0)),)

    m = V.init(seed=0)
    value, g = rt.value_and_grad(lambda mm: mm.w[0, 0], m)
    assert float(value) == 2.0 and float(g.w[0, 0]) == 1.0
    m.w = m.w * 5
    assert float(value) == 2.0


# --- the gradient --------------------------------------------------------------------------


def test_each_gradient_has_its_params_shape_dtype_and_device():
    m = Pair.init(seed=0)
    _, g = rt.value_and_grad(pair_loss, m, torch.ones(2, 3))
    for name in ("w", "v", "unused"):
        p, t = getattr(m, name), g[name]
        assert t.shape == p.shape and t.dtype == p.dtype and t.device == p.device, name


def test_params_that_f_does_not_use_get_zeros():
    m = Pair.init(seed=0)
    _, g = rt.value_and_grad(pair_loss, m, torch.ones(2, 3))
    assert torch.equal(g.unused, torch.zeros(4))
    assert g.unused.dtype == torch.float32


def test_f_that_reads_no_param_gives_all_zeros():
    m = Pair.init(seed=0)
    value, g = rt.value_and_grad(lambda mm, x: rt.sum(x), m, torch.ones(2, 3))
    assert float(value) == 6.0
    for name, t in g.items():
        assert torch.equal(t, torch.zeros_like(getattr(m, name))), name


def test_gradients_are_on_the_declared_device():
    class OnMeta(rt.Model):
        _qv_name = "OnMeta"
        _qv_device = "meta"
        _qv_params = (
            rt.Field("w", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),
            rt.Field("z", (2,), rt.f64),
        )

    m = OnMeta.init(seed=0)
    assert m.w.device.type == "meta"
    value, g = rt.value_and_grad(lambda mm, x: rt.sum(x @ mm.w), m, torch.ones(4, 3, device="meta"))
    assert value.device.type == "meta"
    assert g.w.device.type == "meta" and g.w.shape == (3, 2)
    assert g.z.device.type == "meta" and g.z.dtype == torch.float64 and g.z.shape == (2,)


def test_integer_params_get_zeros_of_their_dtype():
    class WithInt(rt.Model):
        _qv_params = (
            rt.Field("w", (2,), rt.f32, rt.init.ones),
            rt.Field("k", (2,), rt.i64, rt.init.fill(3)),
        )

    m = WithInt.init(seed=0)
    _, g = rt.value_and_grad(lambda mm: rt.sum(mm.w * mm.k), m)
    assert torch.equal(g.w, torch.full((2,), 3.0))
    assert torch.equal(g.k, torch.zeros(2, dtype=torch.int64))
    assert not m.k.requires_grad


# --- requires_grad outside and inside ----------------------------------------------------------


def test_params_do_not_require_grad_outside_value_and_grad():
    m = Pair.init(seed=0)
    assert not any(t.requires_grad for t in (m.w, m.v, m.unused))
    inside = []

    def f(model, x):
        inside.append([t.requires_grad for t in (model.w, model.v, model.unused)])
        return pair_loss(model, x)

    rt.value_and_grad(f, m, torch.ones(2, 3))
    assert inside == [[True, True, True]]
    assert not any(t.requires_grad for t in (m.w, m.v, m.unused))
    # an ordinary forward pass builds no graph
    out = pair_loss(m, torch.ones(2, 3))
    assert out.grad_fn is None and not out.requires_grad


def test_params_are_restored_when_f_raises():
    m = Pair.init(seed=0)

    def f(model, x):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        rt.value_and_grad(f, m, torch.ones(2, 3))
    assert not any(t.requires_grad for t in (m.w, m.v, m.unused))
    # and the model works normally afterwards
    _, g = rt.value_and_grad(pair_loss, m, torch.ones(2, 3))
    assert torch.allclose(g.w, torch.full((3, 2), 2.0))


def test_grad_mode_is_restored_when_f_raises():
    m = Pair.init(seed=0)
    with torch.no_grad():
        with pytest.raises(ZeroDivisionError):
            rt.value_and_grad(lambda mm, x: 1 / 0, m, torch.ones(2, 3))
        assert not torch.is_grad_enabled()


def test_nested_value_and_grad_on_the_same_model():
    m = Pair.init(seed=0)
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    inner_results = []
    states = []

    def inner(model, xx):
        return rt.sum(xx @ model.w)

    def outer(model, xx):
        v, g = rt.value_and_grad(inner, model, xx)
        inner_results.append((v, g))
        states.append(model.w.requires_grad)
        return rt.mean((xx @ model.w) ** 2) + rt.norm(g)

    value, g = rt.value_and_grad(outer, m, x)
    assert states == [True]  # still on in the outer call after the inner one returned
    assert not m.w.requires_grad
    iv, ig = inner_results[0]
    assert torch.allclose(ig.w, x.sum(0)[:, None].expand(3, 2))
    # the inner gradient, sum(x) over the batch, does not depend on w: it adds
    # nothing to the outer gradient (tests/runtime/test_nested_grad.py covers
    # inner gradients that do)
    w = m.w.detach().clone().requires_grad_(True)
    ref = torch.mean((x @ w) ** 2)
    (ref_gw,) = torch.autograd.grad(ref, [w])
    assert torch.allclose(g.w, ref_gw, atol=1e-6)
    # norm(g) covers every field (v and unused are zero here); f64 wins the promotion
    assert value.dtype == torch.float64
    assert torch.allclose(value.float(), ref.detach() + torch.linalg.vector_norm(ig.w))


def test_nested_call_takes_arguments_that_depend_on_params_as_constants():
    m = Pair.init(seed=0)
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(1))
    inner_g = []

    def inner(model, h):  # h: [4 2], a function of w in the outer call
        return rt.sum(h * h) + rt.sum(model.v)

    def outer(model, xx):
        h = xx @ model.w
        _, g = rt.value_and_grad(inner, model, h)
        inner_g.append(g)
        return rt.sum(h)

    _, g = rt.value_and_grad(outer, m, x)
    # inner: h is a constant, so d/dw = 0 and d/dv = 1
    assert torch.equal(inner_g[0].w, torch.zeros(3, 2))
    assert torch.equal(inner_g[0].v, torch.ones(2, dtype=torch.float64))
    # outer: the graph through h is intact
    assert torch.allclose(g.w, x.sum(0)[:, None].expand(3, 2))


def test_tensor_arguments_that_require_grad_are_not_differentiated():
    m = Pair.init(seed=0)
    x = torch.ones(2, 3, requires_grad=True)
    value, g = rt.value_and_grad(pair_loss, m, x)
    assert x.grad is None
    assert not value.requires_grad
    assert torch.allclose(g.w, torch.full((3, 2), 2.0))


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "result, found",
    [
        (lambda mm, x: x @ mm.w, "found [2 2] f32"),
        (lambda mm, x: torch.tensor(3), "found [] i64"),
        (lambda mm, x: 2.5, "found a plain float (2.5), not a tensor"),
        (lambda mm, x: None, "found nothing (None)"),
    ],
)
def test_f_must_return_a_0_dim_float_tensor(result, found):
    m = Pair.init(seed=0)
    with pytest.raises(rt.GradError) as info:
        rt.value_and_grad(result, m, torch.ones(2, 3))
    assert str(info.value) == f"value_and_grad(<lambda>): the function must return a [] of floats, {found}"
    assert not m.w.requires_grad


def test_the_error_names_the_function():
    m = Pair.init(seed=0)

    def scores(mm, x):
        return x @ mm.w

    with pytest.raises(rt.GradError, match=r"^value_and_grad\(scores\): the function must return a \[\] of floats"):
        rt.value_and_grad(scores, m, torch.ones(2, 3))


def test_the_second_argument_must_be_a_model():
    with pytest.raises(rt.GradError, match="value_and_grad needs a model as its second argument, found a tensor"):
        rt.value_and_grad(pair_loss, torch.ones(3), torch.ones(2, 3))


def test_grad_errors_are_quiver_errors():
    assert issubclass(rt.GradError, rt.QuiverError)
    assert issubclass(rt.CheckError, rt.QuiverError)
