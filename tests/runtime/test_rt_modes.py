"""Modes and dropout: Eval is the identity, Train(seed) is deterministic."""

from __future__ import annotations

import pytest
import torch

from quiver import runtime as rt

X = torch.randn(64, 32, generator=torch.Generator().manual_seed(0)) + 3.0  # no zeros


def test_eval_is_the_identity():
    assert rt.dropout(X, 0.5, rt.Eval) is X
    assert rt.dropout(X, 0.0, rt.Train(seed=1)) is X


def test_eval_is_a_single_value():
    assert type(rt.Eval)() is rt.Eval
    assert repr(rt.Eval) == "Eval" and repr(rt.Train(seed=3)) == "Train(seed=3)"
    assert isinstance(rt.Eval, rt.Mode) and isinstance(rt.Train(seed=0), rt.Mode)


def test_the_exact_semantics_of_train():
    # k-th dropout draw of Train(seed=s) on the CPU: bernoulli_(1 - p) from a
    # generator seeded with s, continued from the previous draw; kept values
    # scaled by 1 / (1 - p).
    mode = rt.Train(seed=42)
    out1 = rt.dropout(X, 0.25, mode)
    out2 = rt.dropout(X, 0.25, mode)
    gen = torch.Generator().manual_seed(42)
    keep1 = torch.empty_like(X).bernoulli_(0.75, generator=gen)
    keep2 = torch.empty_like(X).bernoulli_(0.75, generator=gen)
    assert torch.equal(out1, X * (keep1 / 0.75))
    assert torch.equal(out2, X * (keep2 / 0.75))


def test_same_seed_same_mask():
    a = rt.dropout(X, 0.5, rt.Train(seed=7))
    b = rt.dropout(X, 0.5, rt.Train(seed=7))
    assert torch.equal(a, b)


def test_different_seeds_different_masks():
    a = rt.dropout(X, 0.5, rt.Train(seed=7))
    b = rt.dropout(X, 0.5, rt.Train(seed=8))
    assert not torch.equal(a == 0, b == 0)


def test_two_dropout_calls_with_one_mode_do_not_share_a_mask():
    mode = rt.Train(seed=7)
    a = rt.dropout(X, 0.5, mode)
    b = rt.dropout(X, 0.5, mode)
    assert not torch.equal(a == 0, b == 0)


def test_kept_values_are_scaled_and_dropped_values_are_zero():
    out = rt.dropout(X, 0.2, rt.Train(seed=1))
    kept = out != 0
    assert torch.allclose(out[kept], X[kept] / 0.8)
    frac = float(kept.float().mean())
    assert 0.75 < frac < 0.85


def test_p_one_drops_everything_and_bad_p_is_an_error():
    assert torch.equal(rt.dropout(X, 1.0, rt.Train(seed=0)), torch.zeros_like(X))
    with pytest.raises(rt.QuiverError, match=r"dropout probability must be in \[0, 1\], found 1.5"):
        rt.dropout(X, 1.5, rt.Train(seed=0))
    with pytest.raises(rt.QuiverError, match="found -0.1"):
        rt.dropout(X, -0.1, rt.Train(seed=0))


def test_dropout_needs_a_mode():
    with pytest.raises(rt.ModeError, match=r"dropout needs a mode \(Train\(seed=...\) or Eval\), found bool"):
        rt.dropout(X, 0.5, True)


def test_train_seed_must_be_an_int():
    assert rt.Train(seed=torch.tensor(5)).seed == 5
    assert rt.Train(3).seed == 3
    for bad in (1.5, "3", True, torch.tensor(1.0)):
        with pytest.raises(rt.ModeError, match=r"Train\(seed=...\) needs an Int"):
            rt.Train(seed=bad)


def test_same_seed_same_masks_in_a_forward_pass(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((16, 784), seed=1)
    a = mlp.forward(m, x, rt.Train(seed=3))
    b = mlp.forward(m, x, rt.Train(seed=3))
    c = mlp.forward(m, x, rt.Train(seed=4))
    e = mlp.forward(m, x, rt.Eval)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert not torch.equal(a, e)
    assert torch.equal(e, mlp.forward(m, x, rt.Eval))


def test_value_and_grad_with_a_mode_matches_a_direct_call(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((16, 784), seed=1)
    y = rt.randint((16,), 10, seed=2)
    value, _ = rt.value_and_grad(mlp.loss, m, x, y, rt.Train(seed=9))
    assert torch.equal(value, mlp.loss(m, x, y, rt.Train(seed=9)))


def test_train_streams_are_per_device():
    mode = rt.Train(seed=5)
    cpu = mode.generator(torch.device("cpu"))
    assert mode.generator(torch.device("cpu")) is cpu
    meta_out = rt.dropout(torch.ones(4, device="meta"), 0.5, mode)
    assert meta_out.device.type == "meta"


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_dropout_keeps_the_dtype(dtype):
    out = rt.dropout(X.to(dtype), 0.5, rt.Train(seed=0))
    assert out.dtype == dtype and out.shape == X.shape
