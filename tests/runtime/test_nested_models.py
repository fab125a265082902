"""Nested models (``rt.SubModel``): a model param that is a model, or a stack of L.

Values and gradients are compared with the same computation written by hand
in torch over the flat leaves.
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
    _qv_buffers = (rt.Field("calls", (), rt.i64, rt.init.fill(0)),)


class Block(rt.Model):
    _qv_params = (
        rt.Field("wq", (4, 4), rt.f32, rt.init.normal(0.0, 0.5)),
        rt.Field("bq", (4,), rt.f32, rt.init.uniform(-1.0, 1.0)),
    )


class Net(rt.Model):
    _qv_params = (
        rt.Field("w", (3,), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.SubModel("enc", Enc, None, None),
        rt.SubModel("blocks", Block, 3, None),
        rt.Field("head", (4, 2), rt.f32, rt.init.glorot_uniform),
        rt.Field("k", (), rt.i64, rt.init.fill(2)),
    )
    _qv_buffers = (rt.Field("steps", (), rt.i64, rt.init.fill(0)),)


PATHS = (
    "w",
    "enc.w1",
    "enc.b1",
    "blocks.0.wq",
    "blocks.0.bq",
    "blocks.1.wq",
    "blocks.1.bq",
    "blocks.2.wq",
    "blocks.2.bq",
    "head",
    "k",
)


def loss(m, x):
    h = torch.tanh(x * m.w @ m.enc.w1 + m.enc.b1)
    for b in m.blocks:
        h = torch.tanh(h @ b.wq + b.bq)
    return (h @ m.head).pow(2).mean() * m.k


def torch_loss(p, x):
    w, w1, b1, *rest = p
    blocks, head, k = rest[:6], rest[6], rest[7]
    h = torch.tanh(x * w @ w1 + b1)
    for i in range(3):
        h = torch.tanh(h @ blocks[2 * i] + blocks[2 * i + 1])
    return (h @ head).pow(2).mean() * k


def leaves(m):
    return [t.detach().clone().requires_grad_(t.is_floating_point()) for t in m._qv_tensors]


def torch_grads(p, x):
    diff = [t for t in p if t.requires_grad]
    return torch.autograd.grad(torch_loss(p, x), diff)


def close(a, b, tol=TOL):
    # relative to the size of the values: a loss of 69 in f32 has steps of 8e-6
    scale = max(1.0, float(b.detach().abs().max())) if b.numel() else 1.0
    return float((a.detach() - b.detach()).abs().max()) <= tol * scale


# --- the class and its instances ---------------------------------------------------------------


def test_leaf_paths_tensors_and_flags():
    assert Net._qv_leaf_paths == PATHS
    assert Net._qv_param_names == ("w", "enc", "blocks", "head", "k")
    assert Net._qv_diff == (True,) * 10 + (False,)
    assert not Net._qv_all_diff
    m = Net.init(seed=0)
    assert len(m._qv_tensors) == len(PATHS)
    assert m._qv_tensors[1] is m.enc.w1 and m._qv_tensors[2] is m.enc.b1
    assert m._qv_tensors[5] is m.blocks[1].wq
    assert m.enc._qv_tensors == (m.enc.w1, m.enc.b1)
    assert isinstance(m.enc, Enc) and isinstance(m.blocks[2], Block)
    assert len(m.blocks) == 3 and [b.wq for b in m.blocks] == [m.blocks[i].wq for i in range(3)]


def test_updates_through_either_side_are_seen_by_both():
    m = Net.init(seed=0)
    e = m.enc
    e.w1 = torch.ones(3, 4)
    assert torch.equal(m._qv_tensors[1], torch.ones(3, 4))
    rt.field_add(m.blocks[0], "bq", torch.ones(4), -2)
    assert m._qv_tensors[4] is m.blocks[0].bq
    m.steps = 5
    assert int(m.steps) == 5


def test_init_is_one_generator_in_declaration_order():
    m = Net.init(seed=7)
    gen = torch.Generator()
    gen.manual_seed(7)
    want = {}
    for path in PATHS[:3]:
        f = Net._qv_state_fields[path]
        want[path] = f.init(f.shape, f.elem.dtype, gen)
    want["enc.calls"] = torch.tensor(0)
    for i in range(3):
        for name in ("wq", "bq"):
            f = Block._qv_fields[name]
            want[f"blocks.{i}.{name}"] = f.init(f.shape, f.elem.dtype, gen)
    f = Net._qv_fields["head"]
    want["head"] = f.init(f.shape, f.elem.dtype, gen)
    state = m.state_dict()
    for path, t in want.items():
        assert torch.equal(state[path], t), path
    assert not torch.equal(m.blocks[0].wq, m.blocks[1].wq)
    again = Net.init(seed=7)
    assert all(torch.equal(a, b) for a, b in zip(m._qv_tensors, again._qv_tensors))


def test_init_order_follows_locations_with_sub_models():
    src = rt.SourceFile("/tmp/nested_order.qv")

    class Outer(rt.Model):
        _qv_params = (
            rt.Field("a", (2,), rt.f32, rt.init.normal(0.0, 1.0), src.loc(2, 5)),
            rt.SubModel("blk", Block, 2, src.loc(4, 5)),
        )
        _qv_buffers = (rt.Field("c", (2,), rt.f32, rt.init.normal(0.0, 1.0), src.loc(3, 5)),)

    m = Outer.init(seed=1)
    gen = torch.Generator()
    gen.manual_seed(1)
    a = torch.randn(2, generator=gen)
    c = torch.randn(2, generator=gen)
    assert torch.equal(m.a, a) and torch.equal(m.c, c)
    wq = Block._qv_fields["wq"]
    assert torch.equal(m.blk[0].wq, wq.init(wq.shape, wq.elem.dtype, gen))


def test_state_paths_save_load_and_repr(tmp_path):
    m = Net.init(seed=3)
    state = m.state_dict()
    assert tuple(state) == PATHS + ("steps", "enc.calls")
    p = tmp_path / "net.pt"
    m.save(p)
    n = Net.load(p)
    assert all(torch.equal(a, b) for a, b in zip(m._qv_tensors, n._qv_tensors))
    assert n._qv_tensors[3] is n.blocks[0].wq
    o = Net.init(seed=4)
    o.load_state_dict(state)
    assert torch.equal(o.blocks[2].bq, m.blocks[2].bq)
    bad = dict(state)
    del bad["blocks.1.wq"]
    with pytest.raises(rt.ModelError, match=r"state does not fit Net: missing blocks\.1\.wq"):
        o.load_state_dict(bad)
    text = repr(m)
    assert text.startswith("Net(param w: [3] f32, param enc.w1: [3 4] f32, param enc.b1: [4] f32, param blocks.0.wq")
    assert text.endswith("param k: [] i64 = 2, buffer steps: [] i64 = 0, buffer enc.calls: [] i64 = 0)")


def test_stack_access_errors():
    m = Net.init(seed=0)
    with pytest.raises(rt.ModelError, match=r"index 3 is out of range for Net\.blocks, a stack of 3"):
        m.blocks[3]
    with pytest.raises(rt.ModelError, match=r"Net\.blocks needs an Int index, found str"):
        m.blocks["0"]
    with pytest.raises(
        rt.ModelError, match=r"cannot assign Net\.blocks \(\[3\] Block\): a stack of models is read-only"
    ):
        m.blocks = [Block.init(seed=0)] * 3
    with pytest.raises(rt.ModelError, match=r"Net\.blocks is read-only"):
        m.blocks[0] = Block.init(seed=0)


def test_assigning_a_sub_model_copies_its_fields():
    m = Net.init(seed=0)
    held = m.enc.w1
    e = Enc.init(seed=9)
    e.calls = 4
    m.enc = e
    assert m.enc.w1 is held and torch.equal(held, e.w1) and held is not e.w1
    assert torch.equal(m.enc.b1, e.b1) and int(m.enc.calls) == 4
    with pytest.raises(rt.ModelError, match=r"cannot assign model Block to Net\.enc, which is Enc"):
        m.enc = Block.init(seed=0)
    with pytest.raises(rt.ModelError, match=r"cannot assign a Tensor to Net\.enc, which is Enc"):
        m.enc = torch.zeros(3)


def test_bad_declarations():
    with pytest.raises(rt.ModelError, match=r"param 'e' needs a model class"):

        class Bad(rt.Model):
            _qv_params = (rt.SubModel("e", int, None, None),)

    with pytest.raises(rt.ModelError, match=r"param 'e' needs a fixed stack size, found 'L'"):

        class Bad2(rt.Model):
            _qv_params = (rt.SubModel("e", Enc, "L", None),)


def test_model_arg_check_of_a_nested_model():
    sig = rt.Signature(None, "f", None, (rt.ModelArg("m", Net),))
    sig.check(Net.init(seed=0))
    with pytest.raises(rt.CheckError, match=r"f\(\): argument 'm' expected model Net, found model Enc"):
        sig.check(Enc.init(seed=0))
    with pytest.raises(rt.CheckError, match=r"expected model Net, found a stack of 3 models Block$"):
        sig.check(Net.init(seed=0).blocks)
    blk = rt.Signature(None, "f", None, (rt.ModelArg("b", Block),))
    blk.check(Net.init(seed=0).blocks[2])


# --- gradients -----------------------------------------------------------------------------------


def test_value_and_grad_matches_torch():
    m = Net.init(seed=0)
    x = torch.randn(5, 3)
    value, g = rt.value_and_grad(loss, m, x)
    p = leaves(m)
    want_value = torch_loss(p, x)
    want = torch_grads(p, x)
    assert close(value, want_value)
    assert len(g._qv_values) == len(PATHS)
    assert g._qv_leaf_index == tuple(range(len(PATHS)))
    for got, w in zip(g._qv_values[:10], want):
        assert close(got, w)
    assert torch.equal(g.k, torch.zeros((), dtype=torch.int64))
    # the sub-model fields: Grads over the same tensors, no copies
    assert type(g.enc) is rt.Grad and g.enc._qv_model is Enc
    assert g.enc.w1 is g._qv_values[1] and g["enc"] is g.enc
    assert len(g.blocks) == 3 and g.blocks[2].bq is g._qv_values[8]
    assert g.blocks[1]._qv_model is Block
    assert tuple(g.keys()) == ("w", "enc", "blocks", "head", "k")
    assert dict(g.items())["head"] is g.head
    assert "blocks" in g and "wq" not in g
    assert not any(t.requires_grad for t in m._qv_tensors)
    with pytest.raises(rt.GradError, match=r"index 3 is out of range for Grad\[Net\]\.blocks, a stack of 3"):
        g.blocks[3]


def test_grad_arithmetic_norm_and_repr():
    m = Net.init(seed=0)
    x = torch.randn(5, 3)
    g = rt.grad(loss, m, x)
    h = rt.grad(loss, m, 2 * x)
    s = g - 0.5 * h / 2.0 + (-g)
    for a, b, c in zip(s._qv_values, g._qv_values, h._qv_values):
        assert torch.allclose(a, b - 0.5 * c / 2.0 - b, atol=TOL)
    want = torch.linalg.vector_norm(torch.cat([v.flatten().double() for v in g._qv_values]))
    assert abs(float(rt.norm(g)) - float(want)) < 1e-5
    assert float(rt.norm(g.enc)) == pytest.approx(
        float(torch.linalg.vector_norm(torch.cat([g.enc.w1.flatten(), g.enc.b1]))), rel=1e-6
    )
    assert repr(g).startswith("Grad[Net](w: [3] f32, enc.w1: [3 4] f32, enc.b1: [4] f32, blocks.0.wq: [4 4] f32")
    assert repr(g.blocks[0]) == "Grad[Block](wq: [4 4] f32, bq: [4] f32)"
    with pytest.raises(rt.GradError, match=r"Grad\[Net\] \+ Grad\[Enc\]"):
        g + g.enc


def test_grad_from_python():
    enc = rt.Grad(Enc, {"w1": torch.ones(3, 4), "b1": torch.ones(4)})
    blocks = [rt.Grad(Block, {"wq": torch.full((4, 4), float(i)), "bq": torch.zeros(4)}) for i in range(3)]
    g = rt.Grad(
        Net,
        {"w": torch.zeros(3), "enc": enc, "blocks": blocks, "head": torch.zeros(4, 2), "k": torch.tensor(0)},
    )
    assert len(g._qv_values) == len(PATHS)
    assert torch.equal(g.blocks[2].wq, torch.full((4, 4), 2.0))
    assert g.enc.w1 is enc.w1
    with pytest.raises(rt.GradError, match=r"Grad\[Net\] field 'blocks' must be a sequence of 3 Grad\[Block\]"):
        rt.Grad(Net, {"w": torch.zeros(3), "enc": enc, "blocks": blocks[:2], "head": torch.zeros(4, 2), "k": 0})
    with pytest.raises(rt.GradError, match=r"Grad\[Net\] field 'enc' must be Grad\[Enc\], found a tensor"):
        rt.Grad(
            Net,
            {"w": torch.zeros(3), "enc": torch.zeros(3), "blocks": blocks, "head": torch.zeros(4, 2), "k": 0},
        )
    sig = rt.Signature(None, "f", None, (rt.GradArg("g", Net),))
    sig.check(g)
    bad = rt.Grad(
        Net,
        {"w": torch.zeros(3), "enc": enc, "blocks": blocks, "head": torch.zeros(2, 4), "k": torch.tensor(0)},
    )
    with pytest.raises(
        rt.CheckError, match=r"found Grad\[Net\] whose field head is \[2 4\] f32 instead of \[4 2\] f32"
    ):
        sig.check(bad)


def test_model_update_of_a_nested_model_matches_sgd():
    m = Net.init(seed=0)
    x = torch.randn(5, 3)
    p = leaves(m)
    want = torch_grads(p, x)
    before = [t.clone() for t in m._qv_tensors]
    held = m.blocks[1].wq
    rt.model_update(m, rt.grad(loss, m, x), -0.1)
    assert m.blocks[1].wq is held and m._qv_tensors[5] is held
    for t, b, w in zip(m._qv_tensors, before, want):
        assert close(t, b - 0.1 * w)
    assert torch.equal(m.k, before[10])


def test_refined_leaf_of_a_sub_model_is_updated_by_assignment():
    class Pos(rt.Model):
        _qv_params = (rt.Field("s", (2,), rt.nonneg, rt.init.fill(1.0)),)

    class Top(rt.Model):
        _qv_params = (rt.SubModel("pos", Pos, None, None),)

    m = Top.init(seed=0)
    rt.model_update(m, rt.Grad(Top, {"pos": rt.Grad(Pos, {"s": torch.ones(2)})}), -0.5)
    assert torch.equal(m.pos.s, torch.full((2,), 0.5))
    with pytest.raises(rt.ModelError, match=r"cannot assign to Pos\.s \(\[2\] NonNeg\)"):
        rt.model_update(m, rt.Grad(Top, {"pos": rt.Grad(Pos, {"s": torch.ones(2)})}), -1.0)


def test_nested_value_and_grad_on_a_nested_model_is_differentiable():
    # a gradient penalty: outer loss = loss + |d loss / d params|^2, through the inner call
    m = Net.init(seed=0)
    x = torch.randn(5, 3)
    held = (m.enc.w1, m.blocks[2].wq)
    seen = []

    def inner(m, x):
        seen.append((m.enc.w1, m.blocks[2].wq, m.enc._qv_tensors[0], m._qv_tensors[1]))
        return loss(m, x)

    def outer(m, x):
        v, g = rt.value_and_grad(inner, m, x)
        return v + rt.norm(g) ** 2

    value, g = rt.value_and_grad(outer, m, x)
    w1, wq, t0, t1 = seen[0]  # stand-ins in the sub-models while the inner call ran
    assert w1 is not held[0] and wq is not held[1] and t0 is w1 and t1 is w1
    assert (m.enc.w1, m.blocks[2].wq) == held and m._qv_tensors[1] is held[0]
    assert m.enc._qv_tensors[0] is held[0] and m.blocks[2]._qv_tensors[0] is held[1]
    p = leaves(m)
    diff = [t for t in p if t.requires_grad]
    v = torch_loss(p, x)
    inner_g = torch.autograd.grad(v, diff, create_graph=True)
    total = v + sum((t**2).sum() for t in inner_g)
    want = torch.autograd.grad(total, diff)
    assert close(value, total, 1e-5)
    for got, w in zip(g._qv_values, want):
        assert close(got, w, 1e-5)


def test_inner_call_on_a_sub_model():
    # value_and_grad on m.enc inside a call on m: the inner gradient is the partial one
    m = Net.init(seed=0)
    x = torch.randn(5, 3)

    def enc_loss(e, x):
        return torch.tanh(x @ e.w1 + e.b1).sum()

    def outer(m, x):
        v, ge = rt.value_and_grad(enc_loss, m.enc, x)
        return v + (ge.w1**2).sum()

    value, g = rt.value_and_grad(outer, m, x)
    p = leaves(m)
    w1, b1 = p[1], p[2]
    v = torch.tanh(x @ w1 + b1).sum()
    gw1 = torch.autograd.grad(v, w1, create_graph=True)[0]
    total = v + (gw1**2).sum()
    want = torch.autograd.grad(total, [w1, b1])
    assert close(value, total) and close(g.enc.w1, want[0]) and close(g.enc.b1, want[1])
    assert torch.equal(g.w, torch.zeros(3))
