"""Nested value_and_grad is differentiable: the enclosing gradient is exact.

Each program is compiled from .qv source by the real compiler and its
gradients are compared with the same computation written by hand in torch,
with ``torch.autograd.grad(..., create_graph=True)`` for the inner gradient.
Run with ``-s`` to see the largest absolute error of each case.
"""

from __future__ import annotations

import gc
import re
import threading
import weakref
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

DOCS = Path(__file__).resolve().parents[2] / "docs" / "language.md"

F64_TOL = 1e-12
F32_TOL = 1e-6


def load(tmp_path: Path, src: str, name: str = "prog.qv"):
    p = tmp_path / name
    p.write_text(src)
    return quiver.load(str(p))


def leaves(*tensors):
    return [t.detach().clone().requires_grad_(True) for t in tensors]


def max_err(got, want) -> float:
    return max(float((g.detach() - w.detach()).abs().max()) for g, w in zip(got, want))


def report(case: str, err: float) -> None:
    print(f"\n[nested grad] {case}: max abs error against torch {err:.3g}")


def assert_no_graph(value, g) -> None:
    for t in (value, *g.values()):
        assert not t.requires_grad and t.grad_fn is None


# --- 1. the gradient penalty of docs/language.md ----------------------------------------------

PENALTY = """\
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = xavier
    param b: [C] = zeros

fn loss(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w + m.b, y, over=C)

fn penalised(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    return l + 0.1 * norm(g)

fn main():
    m = Lin.init(seed=0)
    x = randn([8 D], seed=1)
    y = randint([8] Index[C], seed=2)
    l, g = value_and_grad(penalised, m, x, y)
    print(l, norm(g))
"""


def torch_penalised(w, b, x, y):
    """penalised() by hand: the inner gradient kept differentiable."""
    loss = F.cross_entropy(x @ w + b, y)
    gw, gb = torch.autograd.grad(loss, [w, b], create_graph=True)
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(gw), torch.linalg.vector_norm(gb)]))
    return loss + 0.1 * norm, (gw, gb)


def torch_penalty_reference(m, x, y):
    w, b = leaves(m.w, m.b)
    value, _ = torch_penalised(w, b, x, y)
    return (value, *torch.autograd.grad(value, [w, b]))


def test_the_documented_example_is_the_one_tested():
    text = DOCS.read_text()
    section = text[text.index("### Nested `value_and_grad`") :]
    block = re.search(r"```quiver\n(.*?)```", section, re.S).group(1)
    assert block == PENALTY


def test_gradient_penalty_as_documented(tmp_path):
    prog = load(tmp_path, PENALTY)
    m = prog.Lin.init(seed=0)
    x = rt.randn((8, 4), seed=1)
    y = rt.randint((8,), 3, seed=2)
    m.b = rt.randn((3,), seed=3)  # so that b's field is not trivially zero
    value, g = rt.value_and_grad(prog.penalised, m, x, y)
    want = torch_penalty_reference(m, x, y)
    err = max_err((value, g.w, g.b), want)
    report("gradient penalty (f32, as documented)", err)
    assert err < F32_TOL
    # the penalty's own contribution is there: the first-order answer differs
    w, b = leaves(m.w, m.b)
    first_order = torch.autograd.grad(F.cross_entropy(x @ w + b, y), [w, b])
    assert max_err((g.w, g.b), first_order) > 1e-3
    assert_no_graph(value, g)
    assert not m.w.requires_grad and not m.b.requires_grad


def test_gradient_penalty_in_f64(tmp_path):
    src = (
        PENALTY.replace("[D C] =", "[D C] f64 =")
        .replace("[C] =", "[C] f64 =")
        .replace("x: [b D]", "x: [b D] f64")
        .replace("-> [] NonNeg", "-> [] f64")
        .replace("randn([8 D]", "randn([8 D] f64")
    )
    prog = load(tmp_path, src)
    m = prog.Lin.init(seed=0)
    m.b = rt.randn((3,), seed=3, dtype=rt.f64)
    x = rt.randn((8, 4), seed=1, dtype=rt.f64)
    y = rt.randint((8,), 3, seed=2)
    value, g = rt.value_and_grad(prog.penalised, m, x, y)
    assert g.w.dtype == torch.float64
    err = max_err((value, g.w, g.b), torch_penalty_reference(m, x, y))
    report("gradient penalty (f64)", err)
    assert err < F64_TOL


# --- 2. MAML: one inner SGD step, then the loss of the adapted weights ------------------------

NET = """\
dim D = 4
dim K = 2

model Net:
    param w: [D K] f64 = xavier
    param b: [K] f64 = normal(0.0, 0.5)

fn loss(m: Net, x: [n D] f64, y: [n K] f64) -> [] f64:
    return mse(tanh(x @ m.w + m.b), y)
"""

MAML = (
    NET
    + """
fn maml(m: Net, xs: [n D] f64, ys: [n K] f64, xq: [q D] f64, yq: [q K] f64) -> [] f64:
    l, g = value_and_grad(loss, m, xs, ys)
    w = m.w - 0.1 * g.w
    b = m.b - 0.1 * g.b
    return mse(tanh(xq @ w + b), yq)
"""
)


def torch_loss(w, b, x, y):
    return F.mse_loss(torch.tanh(x @ w + b), y)


def data(seed, n=6, d=4, k=2):
    return rt.randn((n, d), seed=seed, dtype=rt.f64), rt.randn((n, k), seed=seed + 100, dtype=rt.f64)


def test_maml_is_second_order(tmp_path):
    prog = load(tmp_path, MAML)
    m = prog.Net.init(seed=0)
    xs, ys = data(1)
    xq, yq = data(2)
    value, g = rt.value_and_grad(prog.maml, m, xs, ys, xq, yq)

    def by_hand(create_graph):
        w, b = leaves(m.w, m.b)
        gw, gb = torch.autograd.grad(torch_loss(w, b, xs, ys), [w, b], create_graph=create_graph)
        outer = torch_loss(w - 0.1 * gw, b - 0.1 * gb, xq, yq)
        return (outer, *torch.autograd.grad(outer, [w, b]))

    want = by_hand(True)
    err = max_err((value, g.w, g.b), want)
    report("MAML", err)
    assert err < F64_TOL
    assert float(g.w.abs().max()) > 1e-3
    # first-order MAML (the old, constant inner gradient) is measurably different
    assert max_err((g.w, g.b), by_hand(False)[1:]) > 1e-4
    assert_no_graph(value, g)


# --- 3. Hessian-vector product -----------------------------------------------------------------

HVP = (
    NET
    + """
fn g_dot_v(m: Net, x: [n D] f64, y: [n K] f64, vw: [D K] f64, vb: [K] f64) -> [] f64:
    l, g = value_and_grad(loss, m, x, y)
    return sum(g.w * vw) + sum(g.b * vb)
"""
)


def test_hessian_vector_product(tmp_path):
    prog = load(tmp_path, HVP)
    m = prog.Net.init(seed=0)
    x, y = data(3)
    vw = rt.randn((4, 2), seed=4, dtype=rt.f64)
    vb = rt.randn((2,), seed=5, dtype=rt.f64)
    value, hv = rt.value_and_grad(prog.g_dot_v, m, x, y, vw, vb)

    w, b = leaves(m.w, m.b)
    gw, gb = torch.autograd.grad(torch_loss(w, b, x, y), [w, b], create_graph=True)
    dot = (gw * vw).sum() + (gb * vb).sum()
    want = (dot, *torch.autograd.grad(dot, [w, b]))
    err = max_err((value, hv.w, hv.b), want)
    # and against the full Hessian built by torch.autograd.functional
    flat = torch.cat([m.w.reshape(-1), m.b])

    def flat_loss(p):
        return torch_loss(p[:8].reshape(4, 2), p[8:], x, y)

    h = torch.autograd.functional.hessian(flat_loss, flat)
    hv_full = h @ torch.cat([vw.reshape(-1), vb])
    err = max(err, max_err([torch.cat([hv.w.reshape(-1), hv.b])], [hv_full]))
    report("Hessian-vector product", err)
    assert err < F64_TOL
    assert float(hv.w.abs().max()) > 1e-3


# --- 4. a nested call on another model, its arguments computed from the outer model ----------

TWO = """\
dim D = 4
dim H = 3
dim K = 2

model Enc:
    param w: [D H] f64 = xavier

model Head:
    param v: [H K] f64 = xavier

fn head_loss(h: Head, z: [n H] f64, y: [n K] f64) -> [] f64:
    return mse(tanh(z @ h.v), y)

fn outer(e: Enc, h: Head, x: [n D] f64, y: [n K] f64) -> [] f64:
    z = tanh(x @ e.w)
    l, g = value_and_grad(head_loss, h, z, y)
    return l + sum(g.v * g.v)
"""


def test_nested_call_on_another_model_differentiates_through_its_arguments(tmp_path):
    prog = load(tmp_path, TWO)
    e = prog.Enc.init(seed=0)
    h = prog.Head.init(seed=1)
    x, y = data(6, k=2)
    value, g = rt.value_and_grad(prog.outer, e, h, x, y)

    w, v = leaves(e.w, h.v)
    z = torch.tanh(x @ w)
    loss = F.mse_loss(torch.tanh(z @ v), y)
    (gv,) = torch.autograd.grad(loss, [v], create_graph=True)
    ref = loss + (gv * gv).sum()
    want = (ref, *torch.autograd.grad(ref, [w]))
    err = max_err((value, g.w), want)
    report("nested call on another model", err)
    assert err < F64_TOL
    assert float(g.w.abs().max()) > 1e-3
    # without the path through z into the inner gradient the answer differs
    (w2,) = leaves(e.w)
    z2 = torch.tanh(x @ w2)
    l2 = F.mse_loss(torch.tanh(z2 @ h.v), y)
    assert max_err(torch.autograd.grad(l2 + (gv.detach() ** 2).sum(), [w2]), [g.w]) > 1e-4
    assert_no_graph(value, g)
    # the inner model is neither differentiated by the outer call nor left requiring grad
    assert not h.v.requires_grad and not e.w.requires_grad
    # Seen from inside: the inner f gets z undetached and a stand-in for v; the
    # Head's own param never requires grad.
    real_v = h.v
    seen = []

    def spy(hh, z, yy):
        seen.append((z.requires_grad, hh.v is real_v, hh.v.requires_grad, real_v.requires_grad))
        return prog.head_loss(hh, z, yy)

    def outer_spy(ee, hh, xx, yy):
        return rt.value_and_grad(spy, hh, rt.tanh(xx @ ee.w), yy)[0]

    rt.value_and_grad(outer_spy, e, h, x, y)
    assert seen == [(True, False, True, False)]
    assert h.v is real_v


# --- 5. the same model nested, its arguments computed from the params --------------------------

SAME = """\
dim D = 4
dim K = 2

model Net:
    param w: [D K] f64 = xavier
    param u: [K K] f64 = xavier

fn inner(m: Net, h: [n K] f64, x: [n D] f64, y: [n K] f64) -> [] f64:
    return mse(tanh(h @ m.u) + x @ m.w, y)

fn outer(m: Net, x: [n D] f64, y: [n K] f64) -> [] f64:
    h = tanh(x @ m.w)
    l, g = value_and_grad(inner, m, h, x, y)
    return l + sum(g.w * g.w) + sum(g.u * g.u)
"""


def torch_inner(w, u, h, x, y):
    return F.mse_loss(torch.tanh(h @ u) + x @ w, y)


def test_same_model_nested_gives_the_partial_derivative_and_an_exact_outer_gradient(tmp_path):
    prog = load(tmp_path, SAME)
    m = prog.Net.init(seed=0)
    x, y = data(7)
    inner_grads = []

    def outer(mm, xx, yy):
        h = rt.tanh(xx @ mm.w)
        loss, g = rt.value_and_grad(prog.inner, mm, h, xx, yy)
        inner_grads.append(g)
        return loss + rt.sum(g.w * g.w) + rt.sum(g.u * g.u)

    value, g = rt.value_and_grad(prog.outer, m, x, y)
    value2, g2 = rt.value_and_grad(outer, m, x, y)
    assert torch.equal(value, value2) and torch.equal(g.w, g2.w) and torch.equal(g.u, g2.u)

    w, u = leaves(m.w, m.u)
    h = torch.tanh(x @ w)
    # the partial derivative: with respect to stand-ins for w and u that h does not depend on
    wi, ui = w.view_as(w), u.view_as(u)
    loss = torch_inner(wi, ui, h, x, y)
    gw, gu = torch.autograd.grad(loss, [wi, ui], create_graph=True)
    ref = loss + (gw * gw).sum() + (gu * gu).sum()
    want = (ref, *torch.autograd.grad(ref, [w, u]))
    err = max_err((value, g.w, g.u), want)
    # the inner gradient against the partial derivative computed with h a separate leaf
    (hh,) = leaves(h)
    w3, u3 = leaves(m.w, m.u)
    partial = torch.autograd.grad(torch_inner(w3, u3, hh, x, y), [w3, u3])
    ig = inner_grads[0]
    err = max(err, max_err((ig.w, ig.u), partial))
    report("same model nested, arguments from the params", err)
    assert err < F64_TOL
    # the total derivative (through h) differs, so this tells the two apart
    w4, u4 = leaves(m.w, m.u)
    total = torch.autograd.grad(torch_inner(w4, u4, torch.tanh(x @ w4), x, y), [w4, u4])
    assert max_err((ig.w,), total[:1]) > 1e-3
    assert float(g.w.abs().max()) > 1e-3 and float(g.u.abs().max()) > 1e-3
    assert_no_graph(value, g)


def test_a_param_passed_as_an_argument_is_held_fixed_at_every_depth(tmp_path):
    # f(m, a) = sum(m.v * a) with a = m.v: the partial derivative is a (= v), the
    # total one would be 2 v.  Differentiating the params themselves in a nested call
    # on a model nobody else differentiates would give the total one.
    prog = load(tmp_path, TWO)
    e = prog.Enc.init(seed=0)
    h = prog.Head.init(seed=1)
    x, y = data(8, k=2)
    got = {}

    def dot(hh, a):
        return rt.sum(hh.v * a)

    def dot_w(ee, a):
        return rt.sum(ee.w * a)

    def outer(ee, hh, xx, yy):
        _, g1 = rt.value_and_grad(dot, hh, hh.v)  # hh: not differentiated by anybody
        _, g2 = rt.value_and_grad(dot_w, ee, ee.w)  # ee: differentiated by this call
        z = rt.tanh(xx @ ee.w)
        _, g3 = rt.value_and_grad(prog.head_loss, hh, z, yy)
        _, g4 = rt.value_and_grad(dot, hh, g3.v)  # an argument with a graph to hh.v
        got.update(g1=g1, g2=g2, g3=g3, g4=g4)
        return rt.sum(g2.w * g2.w) + rt.sum(g4.v * g4.v)

    value, g = rt.value_and_grad(outer, e, h, x, y)
    assert torch.equal(got["g1"].v, h.v)
    assert torch.equal(got["g2"].w, e.w)
    assert torch.allclose(got["g4"].v, got["g3"].v, rtol=0, atol=F64_TOL)
    # the outermost call agrees: there too an argument is held fixed
    assert torch.equal(rt.value_and_grad(dot, h, h.v)[1].v, h.v)
    # outer gradient: d/dw [ |w|^2 + |d head_loss / dv (v, tanh(x w))|^2 ]
    (w,) = leaves(e.w)
    (v,) = leaves(h.v)
    loss = F.mse_loss(torch.tanh(torch.tanh(x @ w) @ v), y)
    (gv,) = torch.autograd.grad(loss, [v], create_graph=True)
    ref = (w * w).sum() + (gv * gv).sum()
    want = (ref, *torch.autograd.grad(ref, [w]))
    err = max_err((value, g.w), want)
    report("a param as an argument, nested", err)
    assert err < F64_TOL


# --- third order: nesting on one model three deep ---------------------------------------------

CUBE = """\
model S:
    param s: [] f64 = 0

fn p4(m: S) -> [] f64:
    return m.s ** 4

fn d1(m: S) -> [] f64:
    l, g = value_and_grad(p4, m)
    return g.s

fn d2(m: S) -> [] f64:
    l, g = value_and_grad(d1, m)
    return g.s
"""


def test_three_deep_gives_the_third_derivative(tmp_path):
    prog = load(tmp_path, CUBE)
    m = prog.S.init(seed=0)
    m.s = 1.5
    value, g = rt.value_and_grad(prog.d2, m)  # d2 = 12 s^2, its derivative 24 s
    err = max(abs(float(value) - 12 * 1.5**2), abs(float(g.s) - 24 * 1.5))
    report("third derivative (three deep)", err)
    assert err < F64_TOL
    assert_no_graph(value, g)
    assert not m.s.requires_grad


# --- 6. the outermost result holds no graph; nothing piles up over training ------------------

TRAIN = (
    PENALTY.replace("dim D = 4", "dim D = 32").replace("dim C = 3", "dim C = 16")
    + """
fn train_step(mut m: Lin, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg:
    l, g = value_and_grad(penalised, m, x, y)
    m.w = m.w - lr * g.w
    m.b = m.b - lr * g.b
    return l
"""
)


def live_tensors() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if issubclass(type(o), torch.Tensor))


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


def growth(step, n=1000, early=100):
    for i in range(early):
        step(i)
    tensors, rss = live_tensors(), rss_bytes()
    for i in range(early, n):
        step(i)
    return live_tensors() - tensors, rss_bytes() - rss


def test_outermost_result_holds_no_graph(tmp_path):
    prog = load(tmp_path, PENALTY)
    m = prog.Lin.init(seed=0)
    x, y = rt.randn((8, 4), seed=1), rt.randint((8,), 3, seed=2)
    inner = []

    def penalised(mm, xx, yy):
        loss, g = rt.value_and_grad(prog.loss, mm, xx, yy)
        assert loss.requires_grad and g.w.requires_grad  # differentiable inside
        inner.append(weakref.ref(g.w))
        return loss + 0.1 * rt.norm(g)

    value, g = rt.value_and_grad(penalised, m, x, y)
    assert_no_graph(value, g)
    gc.collect()
    assert inner[0]() is None  # the inner gradient died with the outer graph


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc/self/statm")
def test_training_with_a_penalty_does_not_accumulate_memory(tmp_path):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small ops: threads only add contention on a busy machine
    try:
        _training_does_not_accumulate_memory(tmp_path)
    finally:
        torch.set_num_threads(threads)


def _training_does_not_accumulate_memory(tmp_path):
    prog = load(tmp_path, TRAIN)
    x, y = rt.randn((256, 32), seed=1), rt.randint((256,), 16, seed=2)
    m = prog.Lin.init(seed=0)
    first = float(prog.train_step(m, x, y, 0.1))

    tensors, rss = growth(lambda i: prog.train_step(m, x, y, 0.1))
    assert float(prog.train_step(m, x, y, 0.1)) < first  # it trains
    # The detector works: steps that keep a nested program's value, and with it its
    # graph, grow both counts.
    kept = []

    def leaky(i):
        rt.value_and_grad(keeping, m, x, y)

    def keeping(mm, xx, yy):
        kept.append(prog.penalised(mm, xx, yy))  # a nested program's graph, never freed
        return prog.loss(mm, xx, yy)

    leak_tensors, leak_rss = growth(leaky)
    kept.clear()
    print(
        f"\n[nested grad] 900 steps: {tensors} more live tensors, RSS {rss / 2**20:+.1f} MiB; "
        f"leaking control: {leak_tensors} tensors, RSS {leak_rss / 2**20:+.1f} MiB"
    )
    assert leak_tensors >= 900 and leak_rss > 16 * 2**20
    assert tensors < 50  # the exact check: no graph kept alive
    # RSS is the allocator's: without a leak it has grown by up to 8.1 MiB on a
    # loaded machine (arenas kept), while the leaking control grows past 16 MiB
    assert rss < 12 * 2**20


# --- 7. params are left as they were, also after an exception in a nested f -----------------


def test_params_and_fields_are_restored_after_nested_calls_and_exceptions(tmp_path):
    prog = load(tmp_path, TWO)
    e = prog.Enc.init(seed=0)
    h = prog.Head.init(seed=1)
    x, y = data(9, k=2)
    before = [(m, dict(m.__dict__), m._qv_tensors) for m in (e, h)]

    def check_restored():
        for m, fields, tensors in before:
            assert m.__dict__.keys() == fields.keys()
            assert all(m.__dict__[k] is t for k, t in fields.items())
            assert len(m._qv_tensors) == len(tensors)
            assert all(a is b for a, b in zip(m._qv_tensors, tensors))
        assert e._qv_depth == 0 and h._qv_depth == 0
        assert not e.w.requires_grad and not h.v.requires_grad

    rt.value_and_grad(prog.outer, e, h, x, y)
    check_restored()

    class Boom(Exception):
        pass

    def raising_inner(hh, z, yy):
        prog.head_loss(hh, z, yy)
        raise Boom

    def raising_same(ee, z, yy):
        raise Boom

    def outer_calling(inner, on):
        def outer(ee, hh, xx, yy):
            z = rt.tanh(xx @ ee.w)
            model = hh if on == "h" else ee
            rt.value_and_grad(inner, model, z, yy)

        return outer

    for inner, on in ((raising_inner, "h"), (raising_same, "e")):
        outer = outer_calling(inner, on)
        with torch.no_grad():
            with pytest.raises(Boom):
                rt.value_and_grad(outer, e, h, x, y)
            assert not torch.is_grad_enabled()
        check_restored()

    # an error raised by value_and_grad itself in a nested call (a bad result)
    def bad_result(ee, hh, xx, yy):
        rt.value_and_grad(lambda mm, zz: zz, hh, xx)

    with pytest.raises(rt.GradError, match="must return a \\[\\] of floats"):
        rt.value_and_grad(bad_result, e, h, x, y)
    check_restored()

    # and the next call is an outermost one again: detached value, no graph kept
    value, g = rt.value_and_grad(prog.outer, e, h, x, y)
    assert_no_graph(value, g)
    check_restored()


def test_a_call_in_another_thread_is_an_outermost_call(tmp_path):
    prog = load(tmp_path, TWO)
    e = prog.Enc.init(seed=0)
    h = prog.Head.init(seed=1)
    x, y = data(10, k=2)
    z = torch.tanh(x @ e.w)
    seen = []

    def other_thread():
        seen.append(rt.value_and_grad(prog.head_loss, h, z, y))

    def outer(ee, xx):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        return rt.sum(xx @ ee.w)

    rt.value_and_grad(outer, e, x)
    value, g = seen[0]
    assert_no_graph(value, g)
    assert not h.v.requires_grad
