"""Per-example gradients: ``rt.value_and_grad(f, m, *args, batch=in_dims)``.

The loss is written in the style the compiler emits (argument checks on
entry, an Index label, rt.cross_entropy) and compared with a hand-written
``torch.func.vmap(torch.func.grad(...))`` and with a Python loop of
``torch.autograd.grad`` per example.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from quiver import runtime as rt

TOL = 1e-6
D, H, C, B = 5, 7, 3, 6


class Mlp(rt.Model):
    _qv_params = (
        rt.Field("w1", (D, H), rt.f32, rt.init.normal(0.0, 0.5)),
        rt.Field("b1", (H,), rt.f32, rt.init.normal(0.0, 0.1)),
        rt.Field("w2", (H, C), rt.f32, rt.init.normal(0.0, 0.5)),
        rt.Field("b2", (C,), rt.f32, rt.init.zeros),
    )
    _qv_buffers = (rt.Field("steps", (), rt.i64, rt.init.fill(0)),)


_sig_loss = rt.Signature(
    None,
    "loss",
    None,
    (
        rt.ModelArg("m", Mlp),
        rt.TensorArg("x", (D,), rt.f32),
        rt.TensorArg("y", (), rt.index(C)),
        rt.TensorArg("t", (), rt.nonneg),
    ),
)


def loss(m, x, y, t):
    """One example: x [D], label y (Index[C]), a shared temperature t."""
    if rt.checks.enabled:
        _sig_loss.check(m, x, y, t)
    h = rt.relu(x @ m.w1 + m.b1)
    return rt.cross_entropy((h @ m.w2 + m.b2) / t, y, 0)


def torch_loss(p, x, y, t):
    w1, b1, w2, b2 = p
    h = torch.relu(x @ w1 + b1)
    return F.cross_entropy((h @ w2 + b2) / t, y)


def data(seed=0):
    gen = torch.Generator()
    gen.manual_seed(seed)
    x = torch.randn(B, D, generator=gen)
    y = torch.randint(0, C, (B,), generator=gen)
    return x, y, torch.tensor(1.5)


def loop_grads(m, x, y, t):
    values, grads = [], []
    for i in range(x.shape[0]):
        p = [q.detach().clone().requires_grad_(True) for q in m._qv_tensors]
        v = torch_loss(p, x[i], y[i], t)
        values.append(v.detach())
        grads.append(torch.autograd.grad(v, p))
    return torch.stack(values), [torch.stack([g[k] for g in grads]) for k in range(4)]


def close(a, b, tol=TOL):
    return a.shape == b.shape and float((a.detach() - b.detach()).abs().max()) <= tol


def test_per_example_gradients_match_torch_func_and_a_loop():
    m = Mlp.init(seed=0)
    x, y, t = data()
    values, gs = rt.value_and_grad(loss, m, x, y, t, batch=(0, 0, None))
    assert gs._qv_batch and gs._qv_model is Mlp and values.shape == (B,)
    params = tuple(p.detach() for p in m._qv_tensors)
    want_g, want_v = torch.func.vmap(torch.func.grad_and_value(torch_loss), in_dims=(None, 0, 0, None))(params, x, y, t)
    loop_v, loop_g = loop_grads(m, x, y, t)
    assert close(values, want_v) and close(values, loop_v)
    for got, a, b in zip(gs._qv_values, want_g, loop_g):
        assert close(got, a) and close(got, b)
    assert not values.requires_grad and not any(v.requires_grad for v in gs._qv_values)
    assert not any(p.requires_grad for p in m._qv_tensors)
    assert repr(gs) == "[b] Grad[Mlp](w1: [6 5 7] f32, b1: [6 7] f32, w2: [6 7 3] f32, b2: [6 3] f32)"
    # the mean of the per-example gradients is the batch gradient
    p = [q.detach().clone().requires_grad_(True) for q in m._qv_tensors]
    batch_grad = torch.autograd.grad(torch.stack([torch_loss(p, x[i], y[i], t) for i in range(B)]).mean(), p)
    for got, w in zip(rt.mean_grad(gs)._qv_values, batch_grad):
        assert close(got, w)


def test_checks_inside_the_map():
    m = Mlp.init(seed=0)
    x, y, t = data()
    # shapes are checked per example; value checks (Index, NonNeg), which read values
    # (.item(), impossible on a batched tensor), are skipped under the map
    assert rt.checks.enabled
    rt.value_and_grad(loss, m, x, y, t, batch=(0, 0, None))
    bad = y.clone()
    bad[0] = 7
    with pytest.raises(rt.CheckError, match=r"loss\(\): argument 'x' expected \[5\] f32, found \[4\] f32"):
        rt.value_and_grad(loss, m, x[:, :4], y, t, batch=(0, 0, None))
    # outside, the value checks are back
    with pytest.raises(rt.ValueCheckError, match=r"argument 'y' expected \[\] Index\[3\], found values outside 0..2"):
        loss(m, x[0], bad[0], t)


def test_batched_grad_arithmetic_and_norm():
    m = Mlp.init(seed=0)
    x, y, t = data()
    _, gs = rt.value_and_grad(loss, m, x, y, t, batch=(0, 0, None))
    _, hs = rt.value_and_grad(loss, m, 2 * x, y, t, batch=(0, 0, None))
    flat = torch.cat([v.reshape(B, -1) for v in gs._qv_values], dim=1)
    norms = rt.norm(gs)
    assert close(norms, torch.linalg.vector_norm(flat, dim=1))
    s = torch.rand(B)
    for scaled in (s * gs, gs * s):
        for a, v in zip(scaled._qv_values, gs._qv_values):
            assert close(a, v * s.reshape((B,) + (1,) * (v.dim() - 1)))
    for a, v in zip((gs / s)._qv_values, gs._qv_values):
        assert close(a, v / s.reshape((B,) + (1,) * (v.dim() - 1)))
    for a, v in zip((torch.tensor(2.0) * gs - 0.5 * gs / 2 + (-hs) + hs)._qv_values, gs._qv_values):
        assert close(a, 2 * v - 0.25 * v)
    total = rt.sum_grad(gs + hs)
    assert not total._qv_batch and repr(total).startswith("Grad[Mlp](w1: [5 7] f32")
    for a, v, w in zip(total._qv_values, gs._qv_values, hs._qv_values):
        assert close(a, v.sum(0) + w.sum(0), 1e-5)
    plain = rt.mean_grad(gs)
    with pytest.raises(
        rt.GradError, match=r"cannot add a batched and an unbatched gradient: \[b\] Grad\[Mlp\] \+ Grad"
    ):
        gs + plain
    with pytest.raises(rt.GradError, match=r"rt.mean_grad needs a batched gradient \(\[b\] Grad\[M\]\), found Grad"):
        rt.mean_grad(plain)
    with pytest.raises(rt.GradError, match=r"cannot scale \[b\] Grad\[Mlp\] of 6 examples by \[4\] f32"):
        gs * torch.ones(4)
    with pytest.raises(rt.GradError, match=r"unsupported operation on gradients: Grad\[Mlp\] \* a tensor \[6\] f32"):
        plain * torch.ones(6)
    with pytest.raises(rt.GradError, match=r"a batched gradient: reduce it with rt.mean_grad or rt.sum_grad first"):
        rt.model_update(m, gs, -0.1)


def test_grad_arg_of_a_batched_gradient():
    m = Mlp.init(seed=0)
    x, y, t = data()
    _, gs = rt.value_and_grad(loss, m, x, y, t, batch=(0, 0, None))
    sig = rt.Signature(None, "clip", None, (rt.GradArg("gs", Mlp, None, batch=True),))
    sig.check(gs)
    with pytest.raises(rt.CheckError, match=r"clip\(\): argument 'gs' expected \[b\] Grad\[Mlp\], found Grad\[Mlp\]"):
        sig.check(rt.mean_grad(gs))
    plain = rt.Signature(None, "apply", None, (rt.GradArg("g", Mlp),))
    with pytest.raises(rt.CheckError, match=r"expected Grad\[Mlp\], found \[b\] Grad\[Mlp\]"):
        plain.check(gs)


def test_per_example_with_wrt_and_a_nested_model():
    class Head(rt.Model):
        _qv_params = (rt.Field("w", (H, C), rt.f32, rt.init.normal(0.0, 0.5)),)

    class Net(rt.Model):
        _qv_params = (
            rt.Field("w1", (D, H), rt.f32, rt.init.normal(0.0, 0.5)),
            rt.SubModel("heads", Head, 2, None),
        )

    def f(m, x, y):
        h = torch.tanh(x @ m.w1)
        return rt.cross_entropy(h @ m.heads[0].w + h @ m.heads[1].w, y, 0)

    def tf(w1, wa, wb, x, y):
        h = torch.tanh(x @ w1)
        return F.cross_entropy(h @ wa + h @ wb, y)

    m = Net.init(seed=1)
    x, y, _ = data(1)
    values, gs = rt.value_and_grad(f, m, x, y, batch=(0, 0), wrt=("heads",))
    assert repr(gs) == "[b] Grad[Net, wrt=[heads]](heads.0.w: [6 7 3] f32, heads.1.w: [6 7 3] f32)"
    w1, wa, wb = (p.detach() for p in m._qv_tensors)
    want = torch.func.vmap(torch.func.grad(tf, argnums=(1, 2)), in_dims=(None, None, None, 0, 0))(w1, wa, wb, x, y)
    assert close(gs.heads[0].w, want[0]) and close(gs.heads[1].w, want[1])
    assert gs.heads[1]._qv_batch
    assert close(rt.norm(gs.heads[0]), torch.linalg.vector_norm(want[0].reshape(B, -1), dim=1))


def test_dp_sgd_step_matches_plain_torch():
    m = Mlp.init(seed=0)
    ref = [p.detach().clone() for p in m._qv_tensors]
    x, y, t = data()
    clip, sigma, lr = 0.5, 0.8, 0.1
    # with rt: clip each example's gradient to norm <= clip, average, add noise, step
    _, gs = rt.value_and_grad(loss, m, x, y, t, batch=(0, 0, None))
    factor = 1.0 / torch.clamp(rt.norm(gs) / clip, min=1.0)
    g = rt.mean_grad(gs * factor) + rt.randn_grad(Mlp, 11) * (sigma * clip / B)
    rt.model_update(m, g, -lr)
    # plain torch
    per = torch.func.vmap(torch.func.grad(torch_loss), in_dims=(None, 0, 0, None))(tuple(ref), x, y, t)
    norms = torch.linalg.vector_norm(torch.cat([v.reshape(B, -1) for v in per], dim=1), dim=1)
    f = 1.0 / torch.clamp(norms / clip, min=1.0)
    gen = torch.Generator()
    gen.manual_seed(11)
    for p, v, got in zip(ref, per, m._qv_tensors):
        clipped = (v * f.reshape((B,) + (1,) * (v.dim() - 1))).mean(0)
        noise = torch.randn(p.shape, generator=gen) * (sigma * clip / B)
        assert close(got, p - lr * (clipped + noise))


def test_aux_with_batch():
    m = Mlp.init(seed=0)
    x, y, t = data()

    def f(m, x, y, t):
        logits = rt.relu(x @ m.w1 + m.b1) @ m.w2 + m.b2
        return rt.cross_entropy(logits / t, y, 0), rt.argmax(logits, 0)

    (values, preds), gs = rt.value_and_grad(f, m, x, y, t, batch=(0, 0, None), aux=True)
    want_v, _ = loop_grads(m, x, y, t)
    assert close(values, want_v)
    assert torch.equal(preds, (torch.relu(x @ m.w1 + m.b1) @ m.w2 + m.b2).argmax(1))
    assert gs._qv_batch


def test_batch_errors():
    m = Mlp.init(seed=0)
    x, y, t = data()
    with pytest.raises(rt.GradError, match=r"batch needs one entry \(0 or None\) per argument after the model \(3\)"):
        rt.value_and_grad(loss, m, x, y, t, batch=(0, 0))
    with pytest.raises(rt.GradError, match=r"each entry of batch must be 0 .* found \(1, 0, None\)"):
        rt.value_and_grad(loss, m, x, y, t, batch=(1, 0, None))
    with pytest.raises(rt.GradError, match=r"at least one must be 0; found \(None, None, None\)"):
        rt.value_and_grad(loss, m, x, y, t, batch=(None, None, None))

    def outer(m, x, y, t):
        return rt.value_and_grad(loss, m, x, y, t, batch=(0, 0, None))[0].sum()

    with pytest.raises(rt.GradError, match=r"cannot be taken inside the function of another value_and_grad"):
        rt.value_and_grad(outer, m, x, y, t)


def test_dropout_under_the_map_draws_a_mask_per_example():
    m = Mlp.init(seed=0)
    x, y, t = data()

    def f(m, x, y, mode):
        h = rt.dropout(rt.relu(x @ m.w1 + m.b1), 0.5, mode)
        return rt.cross_entropy(h @ m.w2 + m.b2, y, 0)

    v1, g1 = rt.value_and_grad(f, m, x, y, rt.Train(seed=3), batch=(0, 0, None))
    v2, g2 = rt.value_and_grad(f, m, x, y, rt.Train(seed=3), batch=(0, 0, None))
    assert torch.equal(v1, v2) and all(torch.equal(a, b) for a, b in zip(g1._qv_values, g2._qv_values))
    ve, ge = rt.value_and_grad(f, m, x, y, rt.Eval, batch=(0, 0, None))
    want_v, want_g = loop_grads(m, x, y, torch.tensor(1.0))
    assert close(ve, want_v) and all(close(a, b) for a, b in zip(ge._qv_values, want_g))
    # b1's gradient of an example is zero exactly where its mask dropped the unit (or relu cut it)
    dropped = (g1.b1 == 0) & (ge.b1 != 0)
    assert dropped.any() and not torch.equal(v1, ve)
    masks = [dropped[i] for i in range(B)]
    assert any(not torch.equal(masks[0], k) for k in masks[1:])


def test_generic_dims_bind_per_example_and_result_errors():
    m = Mlp.init(seed=0)
    x, y, t = data()
    sig = rt.Signature(
        None, "g", None, (rt.ModelArg("m", Mlp), rt.TensorArg("x", ("d",), rt.f32), rt.TensorArg("z", ("d",), rt.f32))
    )

    def g(m, x, z):
        if rt.checks.enabled:
            sig.check(m, x, z)
        return (rt.relu(x @ m.w1 + m.b1) * rt.sum(z)).sum()

    values, _ = rt.value_and_grad(g, m, x, x[0], batch=[0, None])  # a list works too
    assert close(values, torch.relu(x @ m.w1 + m.b1).sum(1) * x[0].sum())
    with pytest.raises(rt.CheckError, match=r"g\(\): dim d is 5 in argument 'x' but 4 in argument 'z'"):
        rt.value_and_grad(g, m, x, x[0, :4], batch=(0, None))

    def logits(m, x):
        return x @ m.w1

    with pytest.raises(
        rt.GradError, match=r"value_and_grad\(logits\): the function must return a \[\] of floats, found \[7\] f32"
    ):
        rt.value_and_grad(logits, m, x, batch=(0,))


def test_integer_params_get_batched_zeros():
    class Scaled(rt.Model):
        _qv_params = (
            rt.Field("w", (D, C), rt.f64, rt.init.normal(0.0, 1.0)),
            rt.Field("k", (), rt.i64, rt.init.fill(3)),
        )

    def f(m, x):
        return ((x @ m.w) ** 2).sum() * m.k

    m = Scaled.init(seed=0)
    x = torch.randn(B, D, dtype=torch.float64)
    values, gs = rt.value_and_grad(f, m, x, batch=(0,))
    assert torch.equal(gs.k, torch.zeros(B, dtype=torch.int64))
    for i in range(B):
        w = m.w.detach().clone().requires_grad_(True)
        v = ((x[i] @ w) ** 2).sum() * 3
        assert abs(float(values[i] - v.detach())) < 1e-12
        assert close(gs.w[i], torch.autograd.grad(v, w)[0], 1e-12)
    assert close(rt.norm(gs), torch.linalg.vector_norm(gs.w.reshape(B, -1), dim=1), 1e-12)
