"""Forward mode: ``rt.jvp(f, m, t, *args)`` against ``torch.func.jvp`` on the
same function written by hand, and against ``value_and_grad`` (the jvp of a
scalar loss along t is the dot product of its gradient with t)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from quiver import runtime as rt
from quiver.runtime import _checks


class Net(rt.Model):
    _qv_params = (
        rt.Field("w", (4, 3), rt.f64, rt.init.normal(0.0, 1.0)),
        rt.Field("b", (3,), rt.f64, rt.init.normal(0.0, 1.0)),
        rt.Field("n", (), rt.i64, rt.init.fill(2)),
    )


class Lin(rt.Model):
    _qv_params = (rt.Field("w", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),)


class Deep(rt.Model):
    _qv_params = (
        rt.SubModel("first", Lin, None, None),
        rt.SubModel("rest", Lin, 1, None),
        rt.Field("s", (2,), rt.f32, rt.init.normal(0.0, 1.0)),
    )


def f(m, x):
    return torch.tanh(x @ m.w + m.b) * m.n


def tf(w, b, x):
    return torch.tanh(x @ w + b) * 2


def test_jvp_matches_torch_func():
    m = Net.init(seed=0)
    x = torch.randn(5, 4, dtype=torch.float64)
    t = rt.randn_grad(Net, 1)
    y, dy = rt.jvp(f, m, t, x)
    w, b = m.w.detach(), m.b.detach()
    want_y, want_dy = torch.func.jvp(lambda w, b: tf(w, b, x), (w, b), (t.w, t.b))
    assert torch.allclose(y, want_y, atol=1e-12) and torch.allclose(dy, want_dy, atol=1e-12)
    assert y.shape == (5, 3) and not y.requires_grad and not dy.requires_grad
    assert not any(p.requires_grad for p in m._qv_tensors)


def test_jvp_with_a_selection_and_a_tuple_result():
    m = Net.init(seed=0)
    x = torch.randn(5, 4, dtype=torch.float64)
    t = rt.randn_grad(Net, 2, wrt=("b",))

    def g(m, x):
        h = x @ m.w + m.b
        return h.sum(), torch.sin(h)

    (s, h), (ds, dh) = rt.jvp(g, m, t, x)
    w, b = m.w.detach(), m.b.detach()
    want = torch.func.jvp(lambda w, b: ((x @ w + b).sum(), torch.sin(x @ w + b)), (w, b), (torch.zeros_like(w), t.b))
    assert torch.allclose(s, want[0][0], atol=1e-12) and torch.allclose(h, want[0][1], atol=1e-12)
    assert torch.allclose(ds, want[1][0], atol=1e-12) and torch.allclose(dh, want[1][1], atol=1e-12)


def test_jvp_of_a_loss_is_the_gradient_dot_the_tangent():
    m = Net.init(seed=3)
    x = torch.randn(5, 4, dtype=torch.float64)

    def loss(m, x):
        return (f(m, x) ** 2).mean()

    t = rt.randn_grad(Net, 4)
    value, g = rt.value_and_grad(loss, m, x)
    y, dy = rt.jvp(loss, m, t, x)
    dot = sum((a * b).sum() for a, b in zip(g._qv_values[:2], t._qv_values[:2]))
    assert abs(float(y - value)) < 1e-12 and abs(float(dy - dot)) < 1e-12


def test_jvp_of_a_nested_model_f32():
    m = Deep.init(seed=0)
    x = torch.randn(6, 3)

    def f(m, x):
        a = torch.tanh(x @ m.first.w)
        return (a * m.s + x @ m.rest[0].w).sum(1)

    t = rt.randn_grad(Deep, 5)
    y, dy = rt.jvp(f, m, t, x)
    prim = tuple(p.detach() for p in m._qv_tensors)
    want = torch.func.jvp(lambda w1, w2, s: (torch.tanh(x @ w1) * s + x @ w2).sum(1), prim, t._qv_values)
    assert float((y - want[0]).abs().max()) <= 1e-6 and float((dy - want[1]).abs().max()) <= 1e-6
    sel = rt.randn_grad(Deep, 5, wrt=("rest",))
    _, dsel = rt.jvp(f, m, sel, x)
    want = torch.func.jvp(lambda w2: (x @ w2).sum(1), (prim[1],), (sel.rest[0].w,))
    assert float((dsel - want[1]).abs().max()) <= 1e-6


def test_jvp_through_a_checked_function_with_index_labels():
    m = Lin.init(seed=0)
    x = torch.randn(6, 3)
    y = torch.tensor([0, 1, 1, 0, 1, 0])
    sig = rt.Signature(
        None,
        "loss",
        None,
        (rt.ModelArg("m", Lin), rt.TensorArg("x", ("b", 3), rt.f32), rt.TensorArg("y", ("b",), rt.index(2))),
    )

    def loss(m, x, y):
        if rt.checks.enabled:
            sig.check(m, x, y)
        return rt.cross_entropy(x @ m.w, y, 1)

    t = rt.randn_grad(Lin, 0)
    v, dv = rt.jvp(loss, m, t, x, y)
    want = torch.func.jvp(lambda w: F.cross_entropy(x @ w, y), (m.w.detach(),), (t.w,))
    assert float((v - want[0]).abs()) <= 1e-6 and float((dv - want[1]).abs()) <= 1e-6


def test_jvp_value_is_copied_and_zero_direction():
    m = Net.init(seed=0)

    def get_b(m):
        return m.b

    y, dy = rt.jvp(
        get_b,
        m,
        rt.zeros_grad(Net),
    )
    assert y is not m.b and torch.equal(y, m.b) and torch.equal(dy, torch.zeros(3, dtype=torch.float64))
    m.b = torch.zeros(3, dtype=torch.float64)
    assert not torch.equal(y, m.b)
    y, dy = rt.jvp(get_b, m, rt.zeros_grad(Net, wrt=("n",)))
    assert torch.equal(dy, torch.zeros(3, dtype=torch.float64))
    # value checks are back on after every form of jvp
    assert _checks.transforms.depth == 0


def test_jvp_errors():
    m = Net.init(seed=0)
    x = torch.randn(5, 4, dtype=torch.float64)
    with pytest.raises(rt.GradError, match=r"jvp\(f\): the tangent must be a Grad\[Net\], found Grad\[Lin\]"):
        rt.jvp(f, m, rt.zeros_grad(Lin), x)
    bad = rt.Grad(Net, {"w": torch.zeros(4, 3), "b": torch.zeros(3), "n": torch.tensor(0)})
    with pytest.raises(rt.GradError, match=r"the tangent's field w is \[4 3\] f32, but Net.w is \[4 3\] f64"):
        rt.jvp(f, m, bad, x)

    def count(m, x):
        return (x > 0).sum()

    with pytest.raises(rt.GradError, match=r"jvp\(count\): the function must return a floating tensor or a tuple"):
        rt.jvp(count, m, rt.zeros_grad(Net), x)
    with pytest.raises(rt.GradError, match=r"jvp needs a model as its second argument"):
        rt.jvp(f, x, rt.zeros_grad(Net))
