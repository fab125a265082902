"""Issue 40: lists built in a loop and stacked, loops over tuples, optional
parameters: what the checker accepts runs, and equals torch. makemore's RNN
(`hiddens.append(h)`, `torch.stack(hiddens, 1)`) and
time_sequence_prediction's `outputs += [output]` then `torch.cat(outputs,
dim=1)`, values and gradients (f32 and f64); zip and enumerate of tuples;
nanoGPT's `top_k=None`."""

from __future__ import annotations

import pytest
import torch

import quiver
from quiver import runtime as rt

SRC = """\
dim F = 3

fn rnn(xs: [b T I], wx: [I H], wh: [H H]) -> [b T H]:
    h = zeros([b H])
    hs = []
    for t in range(T):
        xt = xs[:, t]
        h = tanh(xt @ wx + h @ wh)
        hs.append(h)
    return stack(hs, over=1)

fn seq(input: [b T], w: [1 1]) -> [b (T+F)]:
    outputs = []
    output = zeros([b 1])
    for t in range(T):
        xt = reshape(input[:, t], [b 1])
        output = tanh(xt @ w + output)
        outputs += [output]
    for i in range(F):
        output = tanh(output @ w + output)
        outputs += [output]
    return concat(outputs, over=1)

fn pairs(a: [4], b: [4], c: [5], d: [5]) -> [4]:
    s = zeros([4])
    for p, q in zip((a, c), (b, d)):
        s = s + sum(p * q)
    for i, x in enumerate((a, b)):
        s = s + x * (i as Float)
    return s

fn top(logits: [V], top_k: Int | None = None) -> [V]:
    if top_k is not None:
        k = min(top_k, V)
        v, ix = topk(logits, k, over=V)
        return where(logits < min(v), full([V], -1000.0), logits)
    return logits

fn top_default(logits: [V]) -> [V]:
    return top(logits)

fn attend(q: [L E], k: [S E], mask: [L S] Bool | None = None) -> [L S]:
    s = softmax(q @ transpose(k), over=S)
    if mask is not None:
        s = where(mask, s, zeros([L S]))
    return s

fn attend_unmasked(q: [L E], k: [S E]) -> [L S]:
    return attend(q, k)

fn rnn64(xs: [b T I] f64, wx: [I H] f64, wh: [H H] f64) -> [b T H] f64:
    h = zeros([b H] f64)
    hs = []
    for t in range(T):
        xt = xs[:, t]
        h = tanh(xt @ wx + h @ wh)
        hs.append(h)
    return stack(hs, over=1)

fn seq64(input: [b T] f64, w: [1 1] f64) -> [b (T+F)] f64:
    outputs = []
    output = zeros([b 1] f64)
    for t in range(T):
        xt = reshape(input[:, t], [b 1])
        output = tanh(xt @ w + output)
        outputs += [output]
    for i in range(F):
        output = tanh(output @ w + output)
        outputs += [output]
    return concat(outputs, over=1)
"""

FN = {torch.float32: "", torch.float64: "64"}


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("sequences40") / "sequences40.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


def _rnn_torch(xs, wx, wh):
    h = torch.zeros(xs.shape[0], wx.shape[1], dtype=xs.dtype)
    hiddens = []
    for t in range(xs.shape[1]):
        h = torch.tanh(xs[:, t] @ wx + h @ wh)
        hiddens.append(h)
    return torch.stack(hiddens, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_hiddens_appended_then_stacked_equal_torch(mod, dtype) -> None:
    g = torch.Generator().manual_seed(0)
    xs = torch.randn(2, 4, 3, generator=g, dtype=dtype)
    wx = torch.randn(3, 5, generator=g, dtype=dtype).requires_grad_()
    wh = torch.randn(5, 5, generator=g, dtype=dtype).requires_grad_()
    got = getattr(mod, "rnn" + FN[dtype])(xs, wx, wh)
    want = _rnn_torch(xs, wx, wh)
    assert got.shape == (2, 4, 5)
    torch.testing.assert_close(got, want)
    gx, gh = torch.autograd.grad(got.square().sum(), (wx, wh))
    wx2, wh2 = torch.autograd.grad(want.square().sum(), (wx, wh))
    torch.testing.assert_close(gx, wx2)
    torch.testing.assert_close(gh, wh2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_outputs_list_then_cat_equal_torch(mod, dtype) -> None:
    g = torch.Generator().manual_seed(1)
    inp = torch.randn(2, 6, generator=g, dtype=dtype)
    w = torch.randn(1, 1, generator=g, dtype=dtype).requires_grad_()
    got = getattr(mod, "seq" + FN[dtype])(inp, w)
    outputs = []
    output = torch.zeros(2, 1, dtype=dtype)
    for t in range(6):
        output = torch.tanh(inp[:, t].reshape(2, 1) @ w + output)
        outputs += [output]
    for _ in range(3):
        output = torch.tanh(output @ w + output)
        outputs += [output]
    want = torch.cat(outputs, dim=1)
    assert got.shape == (2, 9)
    torch.testing.assert_close(got, want)
    (a,) = torch.autograd.grad(got.sum(), (w,))
    (b,) = torch.autograd.grad(want.sum(), (w,))
    torch.testing.assert_close(a, b)


def test_zip_and_enumerate_of_tuples(mod) -> None:
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(4, generator=g), torch.randn(4, generator=g)
    c, d = torch.randn(5, generator=g), torch.randn(5, generator=g)
    want = (a * b).sum() + (c * d).sum() + a * 0.0 + b * 1.0
    torch.testing.assert_close(mod.pairs(a, b, c, d), want)


def test_top_k_none_and_given(mod) -> None:
    logits = torch.tensor([0.5, 2.0, -1.0, 3.0, 1.0])
    assert torch.equal(mod.top(logits, None), logits)
    assert torch.equal(mod.top_default(logits), logits)
    v, _ = torch.topk(logits, min(2, logits.size(-1)))
    want = logits.clone()
    want[want < v[-1]] = -1000.0
    assert torch.equal(mod.top(logits, 2), want)
    assert torch.equal(mod.top(logits, 9), logits)  # min(top_k, V): all of them


def test_an_optional_mask_absent_and_given(mod) -> None:
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(3, 4, generator=g), torch.randn(5, 4, generator=g)
    p = torch.softmax(q @ k.T, dim=-1)
    mask = torch.rand(3, 5, generator=g) > 0.5
    torch.testing.assert_close(mod.attend(q, k, None), p)
    torch.testing.assert_close(mod.attend_unmasked(q, k), p)
    torch.testing.assert_close(mod.attend(q, k, mask), p.masked_fill(~mask, 0.0))
    with pytest.raises(rt.CheckError, match=r"dim L is 3 in argument 'q' but 5 in argument 'mask'"):
        mod.attend(q, k, torch.ones(5, 3, dtype=torch.bool))  # [L S] checked where a mask is given
