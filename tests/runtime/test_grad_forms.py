"""Forms of value_and_grad: a selection of params (``wrt``), aux outputs,
and the gradient constructors ``rt.zeros_grad`` / ``rt.randn_grad``.

Each gradient is compared with ``torch.autograd.grad`` on the same
computation written by hand.
"""

from __future__ import annotations

import pytest
import torch

from quiver import runtime as rt

TOL = 1e-6


class Enc(rt.Model):
    _qv_params = (
        rt.Field("w1", (3, 4), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("b1", (4,), rt.f32, rt.init.normal(0.0, 1.0)),
    )


class Net(rt.Model):
    _qv_params = (
        rt.SubModel("enc", Enc, None, None),
        rt.Field("head", (4, 2), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("b2", (2,), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("k", (), rt.i64, rt.init.fill(1)),
    )


class Flat(rt.Model):
    _qv_params = (
        rt.Field("w", (3, 2), rt.f64, rt.init.normal(0.0, 1.0)),
        rt.Field("b", (2,), rt.f64, rt.init.normal(0.0, 1.0)),
    )


def loss(m, x):
    h = torch.tanh(x @ m.enc.w1 + m.enc.b1)
    return ((h @ m.head + m.b2) ** 2).mean()


def torch_loss(w1, b1, head, b2, x):
    h = torch.tanh(x @ w1 + b1)
    return ((h @ head + b2) ** 2).mean()


def leaves(m):
    return [t.detach().clone().requires_grad_(True) for t in m._qv_tensors[:4]]


def close(a, b, tol=TOL):
    return float((a.detach() - b.detach()).abs().max()) <= tol


# --- wrt -----------------------------------------------------------------------------------------


def test_selected_gradient_matches_torch_and_has_only_those_fields():
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    flags = []

    def f(m, x):
        flags.append([t.requires_grad for t in m._qv_tensors])
        return loss(m, x)

    value, g = rt.value_and_grad(f, m, x, wrt=("head", "b2"))
    assert flags == [[False, False, True, True, False]]
    w1, b1, head, b2 = leaves(m)
    v = torch_loss(w1, b1, head, b2, x)
    want = torch.autograd.grad(v, [head, b2])
    assert close(value, v) and close(g.head, want[0]) and close(g.b2, want[1])
    assert g._qv_leaf_index == (2, 3) and g._qv_wrt == ("head", "b2")
    assert tuple(g.keys()) == ("head", "b2") and len(g) == 2
    assert repr(g) == "Grad[Net, wrt=[head, b2]](head: [4 2] f32, b2: [2] f32)"
    with pytest.raises(rt.GradError, match=r"Grad\[Net, wrt=\[head, b2\]\] has no field 'enc': it was not selected"):
        _ = g.enc
    with pytest.raises(rt.GradError, match=r"has no field 'enc': it was not selected with wrt \(selected: head, b2\)"):
        g["enc"]
    assert not any(t.requires_grad for t in m._qv_tensors)


def test_selecting_a_sub_model():
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    g = rt.grad(loss, m, x, wrt=("enc",))
    w1, b1, head, b2 = leaves(m)
    want = torch.autograd.grad(torch_loss(w1, b1, head, b2, x), [w1, b1])
    assert close(g.enc.w1, want[0]) and close(g.enc.b1, want[1])
    assert g._qv_leaf_index == (0, 1)
    assert rt.grad(loss, m, x, wrt="enc")._qv_layout is g._qv_layout


def test_selection_is_normalised_and_checked():
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    a = rt.grad(loss, m, x, wrt=("b2", "head"))
    assert a._qv_wrt == ("head", "b2")
    full = rt.grad(loss, m, x, wrt=("enc", "head", "b2", "k"))
    assert full._qv_wrt is None and repr(full).startswith("Grad[Net](")
    with pytest.raises(rt.GradError, match=r"'w9' in wrt is not a param of Net \(its params: enc, head, b2, k\)"):
        rt.grad(loss, m, x, wrt=("w9",))
    with pytest.raises(rt.GradError, match=r"wrt names a param twice"):
        rt.grad(loss, m, x, wrt=("head", "head"))


def test_selected_gradients_add_only_with_the_same_selection():
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    a = rt.grad(loss, m, x, wrt=("head", "b2"))
    b = rt.grad(loss, m, 2 * x, wrt=("head", "b2"))
    s = a + b - 0.5 * a
    assert torch.allclose(s.head, a.head + b.head - 0.5 * a.head)
    want = torch.linalg.vector_norm(torch.cat([a.head.flatten(), a.b2]))
    assert abs(float(rt.norm(a)) - float(want)) < TOL
    with pytest.raises(
        rt.GradError,
        match=r"cannot add gradients of different selections \(wrt\): Grad\[Net, wrt=\[head, b2\]\] \+ Grad\[Net\]",
    ):
        a + rt.grad(loss, m, x)
    with pytest.raises(rt.GradError, match=r"Grad\[Net, wrt=\[head\]\] - Grad\[Net, wrt=\[head, b2\]\]"):
        rt.grad(loss, m, x, wrt=("head",)) - a


def test_model_update_with_a_selection_touches_only_those_params():
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    before = [t.clone() for t in m._qv_tensors]
    g = rt.grad(loss, m, x, wrt=("enc", "b2"))
    rt.model_update(m, g, -0.1)
    assert torch.allclose(m.enc.w1, before[0] - 0.1 * g.enc.w1, atol=TOL)
    assert torch.allclose(m.b2, before[3] - 0.1 * g.b2, atol=TOL)
    assert torch.equal(m.head, before[2])


def test_nested_call_with_wrt_is_differentiable():
    # outer: d/d(all) of [loss + |d loss / d head|^2]; the inner selection is head only
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    seen = []

    def inner(m, x):
        seen.append([t.requires_grad for t in m._qv_tensors])
        return loss(m, x)

    def outer(m, x):
        v, g = rt.value_and_grad(inner, m, x, wrt=("head",))
        return v + (g.head**2).sum()

    value, g = rt.value_and_grad(outer, m, x)
    w1, b1, head, b2 = leaves(m)
    v = torch_loss(w1, b1, head, b2, x)
    gh = torch.autograd.grad(v, head, create_graph=True)[0]
    total = v + (gh**2).sum()
    want = torch.autograd.grad(total, [w1, b1, head, b2])
    assert close(value, total)
    for got, w in zip(g._qv_values[:4], want):
        assert close(got, w)


def test_grad_arg_with_a_selection():
    sig = rt.Signature(None, "step", None, (rt.GradArg("g", Net, None, wrt=("head", "b2")),))
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    sig.check(rt.grad(loss, m, x, wrt=("head", "b2")))
    with pytest.raises(
        rt.CheckError, match=r"step\(\): argument 'g' expected Grad\[Net, wrt=\[head, b2\]\], found Grad\[Net\]$"
    ):
        sig.check(rt.grad(loss, m, x))
    plain = rt.Signature(None, "step", None, (rt.GradArg("g", Net),))
    with pytest.raises(rt.CheckError, match=r"expected Grad\[Net\], found Grad\[Net, wrt=\[head\]\]"):
        plain.check(rt.grad(loss, m, x, wrt=("head",)))
    built = rt.Grad(Net, {"head": torch.zeros(4, 2), "b2": torch.zeros(3)}, wrt=("head", "b2"))
    with pytest.raises(rt.CheckError, match=r"found Grad\[Net, wrt=\[head, b2\]\] whose field b2 is \[3\] f32"):
        sig.check(built)


# --- aux -----------------------------------------------------------------------------------------


def test_aux_outputs():
    m = Flat.init(seed=0)
    x = torch.randn(5, 3, dtype=torch.float64)

    def f(m, x):
        logits = x @ m.w + m.b
        return (logits**2).mean(), logits, m.b, 3

    (value, logits, b, three), g = rt.value_and_grad(f, m, x, aux=True)
    w, bb = (t.detach().clone().requires_grad_(True) for t in m._qv_tensors)
    want_logits = x @ w + bb
    v = (want_logits**2).mean()
    want = torch.autograd.grad(v, [w, bb])
    assert close(value, v, 1e-12) and close(logits, want_logits, 1e-12) and three == 3
    assert close(g.w, want[0], 1e-12) and close(g.b, want[1], 1e-12)
    assert not logits.requires_grad and not value.requires_grad
    assert b is not m.b and torch.equal(b, m.b)  # a param in the aux output is copied
    m.b = torch.zeros(2, dtype=torch.float64)
    assert not torch.equal(b, m.b)
    g2 = rt.grad(f, m, x, aux=True)
    assert type(g2) is rt.Grad


def test_aux_in_a_nested_call_is_not_detached():
    m = Flat.init(seed=0)
    x = torch.randn(5, 3, dtype=torch.float64)

    def inner(m, x):
        logits = x @ m.w + m.b
        return (logits**2).mean(), logits

    def outer(m, x):
        (v, logits), g = rt.value_and_grad(inner, m, x, aux=True)
        assert logits.requires_grad
        return v + logits.sum() + (g.w**2).sum()

    value, g = rt.value_and_grad(outer, m, x)
    w, b = (t.detach().clone().requires_grad_(True) for t in m._qv_tensors)
    logits = x @ w + b
    v = (logits**2).mean()
    gw = torch.autograd.grad(v, w, create_graph=True)[0]
    total = v + logits.sum() + (gw**2).sum()
    want = torch.autograd.grad(total, [w, b])
    assert close(value, total, 1e-12) and close(g.w, want[0], 1e-12) and close(g.b, want[1], 1e-12)


def test_aux_result_errors():
    m = Flat.init(seed=0)

    def total(m):
        return m.b.sum()

    with pytest.raises(
        rt.GradError,
        match=r"value_and_grad\(total, aux=True\): the function must return a tuple whose first element is a \[\] "
        r"of floats, found \[\] f64",
    ):
        rt.value_and_grad(total, m, aux=True)

    def f(m):
        return m.b, 1

    with pytest.raises(
        rt.GradError, match=r"the first element of the result must be a \[\] of floats, found \[2\] f64"
    ):
        rt.value_and_grad(f, m, aux=True)
    assert not any(t.requires_grad for t in m._qv_tensors)


# --- zeros_grad / randn_grad -------------------------------------------------------------------


def test_zeros_grad():
    g = rt.zeros_grad(Net)
    assert g._qv_model is Net and g._qv_wrt is None
    for t, f in zip(g._qv_values, Net._qv_leaf_fields):
        assert t.shape == f.shape and t.dtype == f.elem.dtype and not t.any()
    s = rt.zeros_grad(Net.init(seed=0), wrt=("b2",))
    assert repr(s) == "Grad[Net, wrt=[b2]](b2: [2] f32)"
    m = Net.init(seed=0)
    x = torch.randn(6, 3)
    total = rt.zeros_grad(Net)
    for i in range(3):
        total = total + rt.grad(loss, m, x * i)
    assert torch.allclose(total.head, sum(rt.grad(loss, m, x * i).head for i in range(3)))


def test_randn_grad():
    g = rt.randn_grad(Net, 5)
    gen = torch.Generator()
    gen.manual_seed(5)
    for t, f in zip(g._qv_values[:4], Net._qv_leaf_fields):
        assert torch.equal(t, torch.randn(f.shape, generator=gen))
    assert torch.equal(g.k, torch.zeros((), dtype=torch.int64))
    assert all(torch.equal(a, b) for a, b in zip(g._qv_values, rt.randn_grad(Net, 5)._qv_values))
    s = rt.randn_grad(Flat, 2, wrt=("b",))
    gen.manual_seed(2)
    assert s.b.dtype == torch.float64 and torch.equal(s.b, torch.randn(2, generator=gen, dtype=torch.float64))
    with pytest.raises(rt.GradError, match=r"rt.randn_grad\(Net, seed\) needs an Int seed, found 1.5"):
        rt.randn_grad(Net, 1.5)
    with pytest.raises(rt.GradError, match=r"rt.zeros_grad needs a model class, found a number \(3\)"):
        rt.zeros_grad(3)
