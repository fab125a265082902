"""The builtins, each compared with plain torch."""

from __future__ import annotations

import io

import pytest
import torch
import torch.nn.functional as F

from quiver import runtime as rt

GEN = torch.Generator().manual_seed(0)
X = torch.randn(3, 4, 5, generator=GEN)
POS = X.abs() + 0.1


@pytest.mark.parametrize(
    "name, ref, arg",
    [
        ("relu", torch.relu, X),
        ("tanh", torch.tanh, X),
        ("sigmoid", torch.sigmoid, X),
        ("exp", torch.exp, X),
        ("log", torch.log, POS),
        ("sqrt", torch.sqrt, POS),
        ("abs", torch.abs, X),
    ],
)
def test_elementwise(name, ref, arg):
    assert torch.equal(getattr(rt, name)(arg), ref(arg))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_softmax_and_log_softmax(axis):
    assert torch.allclose(rt.softmax(X, axis), torch.softmax(X, dim=axis))
    assert torch.allclose(rt.log_softmax(X, axis), torch.log_softmax(X, dim=axis))


@pytest.mark.parametrize("axis", [0, 1, 2, (0, 2)])
def test_reductions_over_an_axis(axis):
    assert torch.allclose(rt.sum(X, axis), X.sum(dim=axis))
    assert torch.allclose(rt.mean(X, axis), X.mean(dim=axis))
    assert torch.equal(rt.max(X, axis), X.amax(dim=axis))


def test_reductions_over_all_dims_give_0_dim_tensors():
    for fn, ref in ((rt.sum, X.sum()), (rt.mean, X.mean()), (rt.max, X.max())):
        out = fn(X, None)
        assert out.dim() == 0 and torch.allclose(out, ref)
    assert rt.sum(X).dim() == 0


def test_max_returns_values_only():
    out = rt.max(X, 1)
    assert isinstance(out, torch.Tensor) and out.shape == (3, 5)
    assert torch.equal(out, torch.max(X, dim=1).values)


def test_argmax():
    out = rt.argmax(X, 2)
    assert out.dtype == torch.int64 and torch.equal(out, X.argmax(dim=2))
    assert torch.equal(rt.argmax(X, None), X.argmax())


def test_cross_entropy_with_the_class_axis_last_of_two():
    logits = torch.randn(6, 10, generator=GEN)
    labels = torch.randint(0, 10, (6,), generator=GEN)
    assert torch.allclose(rt.cross_entropy(logits, labels, 1), F.cross_entropy(logits, labels))
    assert torch.allclose(rt.cross_entropy(logits, labels, -1), F.cross_entropy(logits, labels))


def test_cross_entropy_with_the_class_axis_anywhere():
    logits = torch.randn(2, 7, 5, generator=GEN)  # [b T C]
    labels = torch.randint(0, 5, (2, 7), generator=GEN)
    ref = F.cross_entropy(logits.reshape(14, 5), labels.reshape(14))
    assert torch.allclose(rt.cross_entropy(logits, labels, 2), ref)
    first = logits.permute(2, 0, 1).contiguous()  # [C b T]
    assert torch.allclose(rt.cross_entropy(first, labels, 0), ref)


def test_cross_entropy_unbatched_and_with_probabilities():
    logits = torch.randn(5, generator=GEN)
    assert torch.allclose(rt.cross_entropy(logits, torch.tensor(3), 0), F.cross_entropy(logits, torch.tensor(3)))
    logits = torch.randn(4, 3, generator=GEN)
    probs = torch.softmax(torch.randn(4, 3, generator=GEN), 1)
    assert torch.allclose(rt.cross_entropy(logits.T, probs.T, 0), F.cross_entropy(logits, probs))


def test_cross_entropy_gradient():
    logits = torch.randn(2, 7, 5, generator=GEN, requires_grad=True)
    labels = torch.randint(0, 5, (2, 7), generator=GEN)
    (a,) = torch.autograd.grad(rt.cross_entropy(logits, labels, 2), [logits])
    (b,) = torch.autograd.grad(F.cross_entropy(logits.reshape(14, 5), labels.reshape(14)), [logits])
    assert torch.allclose(a, b)


def test_mse():
    a, b = torch.randn(4, 3, generator=GEN), torch.randn(4, 3, generator=GEN)
    out = rt.mse(a, b)
    assert out.dim() == 0 and torch.allclose(out, F.mse_loss(a, b))
    assert torch.allclose(rt.mse(a, b[0]), ((a - b[0]) ** 2).mean())


def test_where():
    cond = X > 0
    assert torch.equal(rt.where(cond, X, -X), torch.where(cond, X, -X))
    assert torch.equal(rt.where(cond, X, 0.0), torch.where(cond, X, 0.0))


def test_stop_grad_stops_gradients():
    class M(rt.Model):
        _qv_params = (rt.Field("w", (3,), rt.f32, rt.init.ones),)

    m = M.init(seed=0)
    _, g = rt.value_and_grad(lambda mm: rt.sum(rt.stop_grad(mm.w) * mm.w), m)
    assert torch.equal(g.w, torch.ones(3))  # only the second factor is differentiated
    t = torch.ones(2, requires_grad=True)
    assert not rt.stop_grad(t).requires_grad


def test_norm_of_a_tensor():
    out = rt.norm(X)
    assert out.dim() == 0 and torch.allclose(out, torch.sqrt((X**2).sum()))


def test_transpose_swaps_the_last_two_dims():
    assert torch.equal(rt.transpose(X), X.transpose(1, 2))
    with pytest.raises(rt.QuiverError, match=r"transpose needs at least 2 dims, found \[3\] f32"):
        rt.transpose(torch.zeros(3))


def test_randn_is_seeded_and_on_the_cpu():
    a = rt.randn((3, 4), seed=5)
    assert torch.equal(a, torch.randn(3, 4, generator=torch.Generator().manual_seed(5)))
    assert a.device.type == "cpu" and a.dtype == torch.float32
    assert not torch.equal(a, rt.randn((3, 4), seed=6))
    b = rt.randn((3,), seed=5, dtype=rt.f64)
    assert b.dtype == torch.float64
    assert torch.equal(rt.randn((3,), seed=5, dtype=rt.bf16), rt.randn((3,), seed=5).to(torch.bfloat16))
    with pytest.raises(rt.QuiverError, match="randn needs a float element type, found i64"):
        rt.randn((2,), seed=0, dtype=rt.i64)


def test_randint_gives_index_values():
    y = rt.randint((1000,), 10, seed=2)
    assert y.dtype == torch.int64 and int(y.min()) == 0 and int(y.max()) == 9
    assert torch.equal(y, rt.randint((1000,), 10, seed=2))
    assert torch.equal(rt.randint((5,), rt.index(4), seed=1), rt.randint((5,), 4, seed=1))


def test_zeros_and_ones():
    assert torch.equal(rt.zeros((2, 3)), torch.zeros(2, 3))
    t = rt.ones((4,), dtype=rt.i32)
    assert t.dtype == torch.int32 and torch.equal(t, torch.ones(4, dtype=torch.int32))
    assert rt.zeros(()).dim() == 0


def test_cast_converts_dtypes():
    t = torch.tensor([1.7, -0.2, 2.0])
    assert torch.equal(rt.cast(t, rt.f64), t.double())
    assert torch.equal(rt.cast(t, rt.i32), torch.tensor([1, 0, 2], dtype=torch.int32))
    assert rt.cast(t, rt.f32) is t


def test_cast_to_refined_types_checks_the_values():
    assert torch.equal(rt.cast(torch.tensor([0.0, 9.0]), rt.index(10)), torch.tensor([0, 9]))
    with pytest.raises(rt.ValueCheckError) as info:
        rt.cast(torch.tensor([0.0, 10.0]), rt.index(10))
    assert str(info.value) == "cannot cast [2] f32 to Index[10]: found values outside 0..9 (min 0, max 10)"
    with pytest.raises(rt.ValueCheckError, match=r"cannot cast \[2\] f32 to NonNeg: found values below 0"):
        rt.cast(torch.tensor([1.0, -1.0]), rt.nonneg)
    with pytest.raises(rt.ValueCheckError, match=r"cannot cast \[1\] f32 to Prob: found values outside \[0, 1\]"):
        rt.cast(torch.tensor([1.5]), rt.prob)
    with rt.checks(False):
        assert torch.equal(rt.cast(torch.tensor([-1.0]), rt.nonneg), torch.tensor([-1.0]))


def test_item():
    assert rt.item(torch.tensor(2.5)) == 2.5 and rt.item(torch.tensor(3)) == 3
    with pytest.raises(rt.QuiverError, match=r"item\(\) needs a \[\] tensor, found \[1\] f32"):
        rt.item(torch.tensor([1.0]))


def test_print(capsys):
    rt.print("step", 3, "loss", torch.tensor(2.302585), torch.tensor(7), torch.tensor(True), 0.5)
    assert capsys.readouterr().out == "step 3 loss 2.3026 7 True 0.5\n"


def test_print_small_large_and_special_floats(capsys):
    rt.print(
        torch.tensor(1.5e-7),
        torch.tensor(3.0e9),
        torch.tensor(0.0),
        torch.tensor(float("nan")),
        torch.tensor(-2.0, dtype=torch.float64),
    )
    assert capsys.readouterr().out == "1.5000e-07 3.0000e+09 0.0000 nan -2.0000\n"


def test_print_tensors_readably(capsys):
    rt.print("h", torch.tensor([[1.0, 2.5], [3.0, 4.0]]))
    assert capsys.readouterr().out == "h [[1.0000, 2.5000],\n [3.0000, 4.0000]]\n"
    rt.print(torch.tensor([1, 2, 3]), torch.tensor([0.5], dtype=torch.bfloat16))
    assert capsys.readouterr().out == "[1, 2, 3] [0.5000]\n"
    rt.print(torch.arange(5000.0))
    out = capsys.readouterr().out
    assert out.startswith("[0.0000, 1.0000, 2.0000, ...,") and out.endswith("4999.0000]\n")


def test_print_gradients_models_modes_and_tuples(capsys, kitchen):
    m = kitchen.Tiny.init(seed=0)
    g = rt.Grad(kitchen.Tiny, {"w": torch.zeros(4, 3), "b": torch.zeros(3)})
    rt.print(g, m, rt.Train(seed=2), (1, torch.tensor(0.5)))
    assert capsys.readouterr().out == (
        "Grad[Tiny](w: [4 3] f32, b: [3] f32) "
        "Tiny(param w: [4 3] f32, param b: [3] f32, buffer count: [] i64 = 0) "
        "Train(seed=2) (1, 0.5000)\n"
    )


def test_print_to_a_stream():
    buf = io.StringIO()
    rt.print("a", torch.tensor(1.0), file=buf)
    assert buf.getvalue() == "a 1.0000\n"


def test_element_types():
    assert [e.name for e in (rt.f32, rt.f16, rt.bf16, rt.f64, rt.i32, rt.i64, rt.bool_, rt.nonneg, rt.prob)] == [
        "f32",
        "f16",
        "bf16",
        "f64",
        "i32",
        "i64",
        "Bool",
        "NonNeg",
        "Prob",
    ]
    assert rt.nonneg.dtype == torch.float32 and rt.prob.dtype == torch.float32
    assert rt.index(10) is rt.index(10) and rt.index(10).name == "Index[10]"
    assert rt.index(10).dtype == torch.int64 and rt.index(10).size == 10
    assert repr(rt.index(3)) == "Index[3]"
    with pytest.raises(ValueError, match=r"^Index\[C\] needs a positive int C, got 0$"):
        rt.index(0)
    assert rt.elem_of(torch.float16) is rt.f16
    assert rt.dtype_name(torch.uint8) == "uint8"
