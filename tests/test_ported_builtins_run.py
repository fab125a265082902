"""The built-ins PyTorch ports need (issue 23), compiled and run against the
torch functions they wrap: values and gradients, in f32 and f64. Where the
runtime calls torch's own kernel the comparison is exact; where it computes
the same thing another way (attention with seeded dropout) it is to rtol
1e-5 in f32 and 1e-12 in f64.

The batch_norm tests follow torch's BatchNorm over several training steps
and then evaluation: outputs, gradients and the running statistics step by
step."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

# {f}: the float element type written after a shape (f32 is written as
# nothing); {nn}: a refined result, NonNeg in f32 (a refinement of f32 only)
# and plain f64 in f64.
SRC = """
dim N = 3
dim C = 4
dim H = 5
dim W = 6
dim K = 2
dim L = 7

fn leaky(x: [N C H W]{f}) -> [N C H W]{f}:
    return leaky_relu(x, 0.2)

fn leaky_default(x: [N C H W]{f}) -> [N C H W]{f}:
    return leaky_relu(x)

fn elu_(x: [N C H W]{f}) -> [N C H W]{f}:
    return elu(x, alpha=0.5)

fn padded(x: [N C H W]{f}) -> [N C (H+3) (W+2)]{f}:
    return pad(x, (1, 1, 2, 1), value=0.5)

fn padded_k(x: [N C H W]{f}) -> [N C H (W+K+K)]{f}:
    return pad(x, (K, K))

fn flipped(x: [N C H W]{f}) -> [N C H W]{f}:
    return flip(x, over=(H, W))

fn flipped_one(x: [N C H W]{f}) -> [N C H W]{f}:
    return flip(x, over=1)

fn shuffled(x: [N C H W]{f}) -> [N 1 (H*2) (W*2)]{f}:
    return pixel_shuffle(x, 2)

fn unshuffled(x: [N C 3 W]{f}) -> [N (C*9) 1 2]{f}:
    return pixel_unshuffle(x, 3)

fn drop2d(x: [N C H W]{f}, s: Int) -> [N C H W]{f}:
    return dropout2d(x, 0.5, Train(seed=s))

fn drop2d_eval(x: [N C H W]{f}) -> [N C H W]{f}:
    return dropout2d(x, 0.5, Eval)

fn smooth(x: [N C]{f}, y: [N C]{f}) -> []{nn}:
    return smooth_l1(x, y, beta=0.5)

fn smooth_each(x: [N C]{f}, y: [N C]{f}) -> [N C]{nn}:
    return smooth_l1(x, y, reduction="none")

fn huber_(x: [N C]{f}, y: [N C]{f}) -> []{nn}:
    return huber(x, y, delta=0.7, reduction="sum")

fn huber_mean(x: [N C]{f}, y: [N C]{f}) -> []{nn}:
    return huber(x, y, delta=0.7)

fn smooth_delta(x: [N C]{f}, y: [N C]{f}) -> []{nn}:
    return smooth_l1(x, y, beta=0.7)

fn smooth_zero(x: [N C]{f}, y: [N C]{f}) -> []{nn}:
    return smooth_l1(x, y, beta=0.0)

fn bce(z: [N C]{f}, y: [N C]{f}) -> []{nn}:
    return binary_cross_entropy(sigmoid(z), y)

fn bce_each(z: [N C]{f}, y: [N C]{f}) -> [N C]{nn}:
    return binary_cross_entropy(sigmoid(z), y, reduction="none")

fn ce_none(x: [N C]{f}, y: [N] Index[C]) -> [N]{nn}:
    return cross_entropy(x, y, over=C, reduction="none")

fn ce_sum_smooth(x: [N C]{f}, y: [N] Index[C]) -> []{nn}:
    return cross_entropy(x, y, over=C, reduction="sum", label_smoothing=0.1)

fn ce_ignored(x: [N C]{f}, y: [N] i64) -> []{nn}:
    return cross_entropy(x, y, over=C, ignore_index=-100)

fn ce_ignored_class(x: [N C]{f}, y: [N] Index[C]) -> []{nn}:
    return cross_entropy(x, y, over=C, ignore_index=0, label_smoothing=0.2)

fn ce_seq(x: [N C L]{f}, y: [N L] i64) -> [N L]{nn}:
    return cross_entropy(x, y, over=C, ignore_index=-1, reduction="none")

fn nll_ignored(x: [N C]{f}, y: [N] i64) -> []{nn}:
    return nll(log_softmax(x, over=C), y, over=C, ignore_index=-100, reduction="sum")

fn std_hw(x: [N C H W]{f}) -> [N C]{nn}:
    return std(x, over=(H, W))

fn std_all(x: [N C H W]{f}) -> []{nn}:
    return std(x)

fn var_c(x: [N C H W]{f}) -> [N 1 H W]{nn}:
    return var(x, over=C, correction=0, keep=True)

fn lse(x: [N C H W]{f}) -> [N C]{f}:
    return logsumexp(x, over=(-1, -2))

fn lse_keep(x: [N C H W]{f}) -> [N C H 1]{f}:
    return logsumexp(x, over=W, keep=True)

fn top(x: [N C]{f}) -> ([N K]{f}, [N K] Index[C]):
    return topk(x, K, over=C)

fn bottom(x: [N C]{f}) -> ([N 3]{f}, [N 3] Index[C]):
    return topk(x, 3, over=-1, largest=False)

fn sorted_(x: [N C]{f}) -> ([N C]{f}, [N C] Index[C]):
    return sort(x, over=C, descending=True)

fn sorted_rows(x: [N C]{f}) -> ([N C]{f}, [N C] Index[N]):
    return sort(x, over=N)

fn sum_hw(x: [N C H W]{f}) -> [N C]{f}:
    return sum(x, over=(H, W))

fn mean_keep(x: [N C H W]{f}) -> [1 C 1 1]{f}:
    return mean(x, over=(0, H, W), keep=True)

fn max_nw(x: [N C H W]{f}) -> [C H]{f}:
    return max(x, over=(N, W))

fn min_ch(x: [N C H W]{f}) -> [N W]{f}:
    return min(x, over=(C, H))

fn norm_w(x: [N C H W]{f}) -> [N C H]{nn}:
    return norm(x, over=W)

fn norm_p(x: [N C H W]{f}) -> [N 1 1 W]{nn}:
    return norm(x, over=(C, H), p=1.0, keep=True)

fn norm_inf(x: [N C H W]{f}) -> []{nn}:
    return norm(x, p=inf)

fn masked(x: [N C]{f}) -> [N C]{f}:
    return where(x > 0.0, x, -inf)

fn gauss(x: [N C]{f}) -> [N C]{f}:
    return exp(-0.5 * x * x) / sqrt(2.0 * pi)

fn attend(q: [N H C]{f}, k: [N W C]{f}, v: [N W K]{f}) -> [N H K]{f}:
    return scaled_dot_product_attention(q, k, v)

fn attend_bool(q: [N H C]{f}, k: [N W C]{f}, v: [N W K]{f}, mask: [H W] Bool) -> [N H K]{f}:
    return scaled_dot_product_attention(q, k, v, mask=mask, scale=0.3)

fn attend_float(q: [N H C]{f}, k: [N W C]{f}, v: [N W K]{f}, mask: [N 1 W]{f}) -> [N H K]{f}:
    return scaled_dot_product_attention(q, k, v, mask=mask)

fn attend_causal(q: [N H C]{f}, k: [N H C]{f}, v: [N H K]{f}) -> [N H K]{f}:
    return scaled_dot_product_attention(q, k, v, is_causal=True)

fn attend_drop(q: [N H C]{f}, k: [N H C]{f}, v: [N H K]{f}, mode: Mode) -> [N H K]{f}:
    return scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.3, mode=mode)

fn up(x: [N C H W]{f}, w: [C 3 3 3]{f}, b: [3]{f}) -> [N 3 (2*H) (2*W)]{f}:
    return conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)

fn up_plain(x: [N C h v]{f}, w: [C 2 K K]{f}) -> [N 2 (h+1) (v+1)]{f}:
    return conv_transpose2d(x, w)

fn conv_1d(x: [N C L]{f}, w: [3 C K]{f}, b: [3]{f}) -> [N 3 4]{f}:
    return conv1d(x, w, b, stride=2, padding=1)

fn conv_bias(x: [N C H W]{f}, w: [2 C 3 3]{f}, b: [2]{f}) -> [N 2 H W]{f}:
    return conv2d(x, w, b, padding=1)

fn groups(x: [N C H W]{f}, w: [C]{f}, b: [C]{f}) -> [N C H W]{f}:
    return group_norm(x, 2, weight=w, bias=b, eps=0.001)
"""


def _load(tmp_path, dtype: torch.dtype):
    f, nn = ("", " NonNeg") if dtype is torch.float32 else (" f64", " f64")
    path = tmp_path / f"ported_{str(dtype).split('.')[-1]}.qv"
    path.write_text(textwrap.dedent(SRC).format(f=f, nn=nn))
    return quiver.load(str(path))


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    return _load(tmp_path_factory.mktemp("ported"), request.param), request.param


def _same(got, want) -> None:
    """Exactly torch's result: the same kernel on the same values."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def _against(fn, ref, *inputs, exact: bool = True) -> None:
    """fn(*inputs) against ref(*inputs): the values, and the gradients of the
    float inputs under one random cotangent."""
    leaves = [x.clone().requires_grad_() if x.is_floating_point() else x for x in inputs]
    twins = [x.clone().requires_grad_() if x.is_floating_point() else x for x in inputs]
    got, want = fn(*leaves), ref(*twins)
    outs_got = got if isinstance(got, tuple) else (got,)
    outs_want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(outs_got, outs_want):
        if exact:
            _same(a, b)
        else:
            tol = 1e-12 if a.dtype is torch.float64 else 1e-5
            torch.testing.assert_close(a, b, rtol=tol, atol=tol)
    grads_of = [i for i, x in enumerate(leaves) if x.is_floating_point()]
    first = outs_got[0]
    ct = torch.randn(first.shape, dtype=first.dtype, generator=torch.Generator().manual_seed(5))
    g_got = torch.autograd.grad((outs_got[0] * ct).sum(), [leaves[i] for i in grads_of], allow_unused=True)
    g_want = torch.autograd.grad((outs_want[0] * ct).sum(), [twins[i] for i in grads_of], allow_unused=True)
    for a, b in zip(g_got, g_want):
        if b is None:
            assert a is None or not bool(a.any())
            continue
        if exact:
            _same(a, b)
        else:
            tol = 1e-12 if a.dtype is torch.float64 else 1e-5
            torch.testing.assert_close(a, b, rtol=tol, atol=tol)


def _rand(*shape, dtype, seed=0):
    return torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


# -- activations, layout --------------------------------------------------------


def test_activations(env) -> None:
    mod, dt = env
    x = _rand(3, 4, 5, 6, dtype=dt)
    _against(mod.leaky, lambda x: F.leaky_relu(x, 0.2), x)
    _against(mod.leaky_default, F.leaky_relu, x)
    _against(mod.elu_, lambda x: F.elu(x, alpha=0.5), x)


def test_pad_flip_and_pixel_shuffles(env) -> None:
    mod, dt = env
    x = _rand(3, 4, 5, 6, dtype=dt)
    _against(mod.padded, lambda x: F.pad(x, (1, 1, 2, 1), value=0.5), x)
    assert mod.padded(x).shape == (3, 4, 8, 8)
    _against(mod.padded_k, lambda x: F.pad(x, (2, 2)), x)
    _against(mod.flipped, lambda x: torch.flip(x, (2, 3)), x)
    _against(mod.flipped_one, lambda x: torch.flip(x, (1,)), x)
    _against(mod.shuffled, lambda x: F.pixel_shuffle(x, 2), x)
    assert mod.shuffled(x).shape == (3, 1, 10, 12)
    x3 = x[:, :, 0:3].contiguous()
    _against(mod.unshuffled, lambda x: F.pixel_unshuffle(x, 3), x3)
    assert torch.equal(F.pixel_shuffle(mod.unshuffled(x3), 3), x3)


def test_dropout2d_is_torchs_channel_dropout_with_the_modes_stream(env) -> None:
    mod, dt = env
    x = _rand(3, 4, 5, 6, dtype=dt)
    for seed in (0, 1, 7):
        torch.manual_seed(seed)  # torch's own draws from the global generator, seeded alike
        want = F.dropout2d(x, 0.5, training=True)
        _same(mod.drop2d(x, seed), want)
    got = mod.drop2d(x, 3)
    per_channel = got.flatten(2)
    zeroed = (per_channel == 0).all(-1)
    kept = (per_channel == x.flatten(2) * 2).all(-1)
    assert bool((zeroed | kept).all()) and bool(zeroed.any()) and bool(kept.any())
    _same(mod.drop2d_eval(x), x)
    # the gradient is the mask: 2 through the kept channels, 0 through the dropped
    leaf = x.clone().requires_grad_()
    (g,) = torch.autograd.grad(mod.drop2d(leaf, 3).sum(), [leaf])
    _same(g, mod.drop2d(torch.ones_like(x), 3))


# -- losses -----------------------------------------------------------------------


def test_robust_losses_and_binary_cross_entropy(env) -> None:
    mod, dt = env
    x, y = _rand(3, 4, dtype=dt, seed=1), _rand(3, 4, dtype=dt, seed=2)
    _against(mod.smooth, lambda x, y: F.smooth_l1_loss(x, y, beta=0.5), x, y)
    _against(mod.smooth_each, lambda x, y: F.smooth_l1_loss(x, y, reduction="none"), x, y)
    _against(mod.huber_, lambda x, y: F.huber_loss(x, y, delta=0.7, reduction="sum"), x, y)
    # the docs' claims: huber is delta times smooth_l1 with beta=delta; beta=0 is L1
    torch.testing.assert_close(mod.huber_mean(x, y), 0.7 * mod.smooth_delta(x, y))
    _same(mod.smooth_zero(x, y), F.l1_loss(x, y))
    t = torch.sigmoid(y)
    _against(lambda z: mod.bce(z, t), lambda z: F.binary_cross_entropy(torch.sigmoid(z), t), x)
    ref = lambda z: F.binary_cross_entropy(torch.sigmoid(z), t, reduction="none")
    _against(lambda z: mod.bce_each(z, t), ref, x)


def test_binary_cross_entropy_clamps_the_log_at_minus_100(tmp_path) -> None:
    path = tmp_path / "bce.qv"
    path.write_text(
        'fn bce(p: [3] Prob, y: [3]) -> [3] NonNeg:\n    return binary_cross_entropy(p, y, reduction="none")\n'
    )
    mod = quiver.load(str(path))
    p, y = torch.tensor([0.0, 1.0, 0.5]), torch.tensor([1.0, 0.0, 1.0])
    got = mod.bce(p, y)
    _same(got, F.binary_cross_entropy(p, y, reduction="none"))
    assert got.tolist()[:2] == [100.0, 100.0]


def test_cross_entropy_options(env) -> None:
    mod, dt = env
    x = _rand(3, 4, dtype=dt, seed=3)
    y = torch.tensor([2, 0, 3])
    _against(lambda x: mod.ce_none(x, y), lambda x: F.cross_entropy(x, y, reduction="none"), x)
    assert mod.ce_none(x, y).shape == (3,)
    ref = lambda x: F.cross_entropy(x, y, reduction="sum", label_smoothing=0.1)
    _against(lambda x: mod.ce_sum_smooth(x, y), ref, x)
    ignored = torch.tensor([2, -100, 3])
    _against(lambda x: mod.ce_ignored(x, ignored), lambda x: F.cross_entropy(x, ignored), x)
    # the mean is over the labels not ignored, as torch's
    kept = F.cross_entropy(x[[0, 2]], ignored[[0, 2]])
    torch.testing.assert_close(mod.ce_ignored(x, ignored), kept)
    # every label ignored: torch's nan, which a checked NonNeg result reports
    if dt is torch.float64:
        assert torch.isnan(mod.ce_ignored(x, torch.full((3,), -100)))
    else:
        with pytest.raises(rt.ValueCheckError, match=r"result expected \[\] NonNeg, found values below 0 or NaN"):
            mod.ce_ignored(x, torch.full((3,), -100))
    ref = lambda x: F.cross_entropy(x, y, ignore_index=0, label_smoothing=0.2)
    _against(lambda x: mod.ce_ignored_class(x, y), ref, x)
    seq = _rand(3, 4, 7, dtype=dt, seed=4)
    labels = torch.randint(0, 4, (3, 7), generator=torch.Generator().manual_seed(0))
    labels[0, 2] = labels[2, 6] = -1
    ref = lambda x: F.cross_entropy(x, labels, ignore_index=-1, reduction="none")
    _against(lambda x: mod.ce_seq(x, labels), ref, seq)
    assert mod.ce_seq(seq, labels)[0, 2] == 0
    ref = lambda x: F.nll_loss(torch.log_softmax(x, 1), ignored, reduction="sum")
    _against(lambda x: mod.nll_ignored(x, ignored), ref, x)


def test_every_label_is_a_class_or_the_ignored_value(env) -> None:
    mod, dt = env
    x = _rand(3, 4, dtype=dt)
    with pytest.raises(rt.ValueCheckError, match=r"label 4 is neither a class \(0..3\) nor the ignored value -100"):
        mod.ce_ignored(x, torch.tensor([0, 4, -100]))
    with pytest.raises(rt.ValueCheckError, match="label -3 is neither"):
        mod.nll_ignored(x, torch.tensor([-3, 1, 2]))


# -- statistics, sorting, reductions ---------------------------------------------------


def test_std_var_logsumexp(env) -> None:
    mod, dt = env
    x = _rand(3, 4, 5, 6, dtype=dt, seed=5)
    _against(mod.std_hw, lambda x: torch.std(x, (2, 3)), x)
    _against(mod.std_all, torch.std, x)
    _against(mod.var_c, lambda x: torch.var(x, 1, correction=0, keepdim=True), x)
    _against(mod.lse, lambda x: torch.logsumexp(x, (-1, -2)), x)
    _against(mod.lse_keep, lambda x: torch.logsumexp(x, 3, keepdim=True), x)


def test_topk_and_sort_give_values_and_labels(env) -> None:
    mod, dt = env
    x = _rand(3, 4, dtype=dt, seed=6)
    _against(mod.top, lambda x: tuple(torch.topk(x, 2, 1)), x)
    _against(mod.bottom, lambda x: tuple(torch.topk(x, 3, -1, largest=False)), x)
    _against(mod.sorted_, lambda x: tuple(torch.sort(x, 1, descending=True)), x)
    _against(mod.sorted_rows, lambda x: tuple(torch.sort(x, 0)), x)
    values, labels = mod.top(x)
    assert labels.dtype is torch.int64 and torch.equal(x.gather(1, labels), values)


def test_reductions_over_several_dims(env) -> None:
    mod, dt = env
    x = _rand(3, 4, 5, 6, dtype=dt, seed=7)
    _against(mod.sum_hw, lambda x: x.sum((2, 3)), x)
    _against(mod.mean_keep, lambda x: x.mean((0, 2, 3), keepdim=True), x)
    _against(mod.max_nw, lambda x: torch.amax(x, (0, 3)), x)
    _against(mod.min_ch, lambda x: torch.amin(x, (1, 2)), x)


def test_norm_along_dims_and_p(env) -> None:
    mod, dt = env
    x = _rand(3, 4, 5, 6, dtype=dt, seed=8)
    _against(mod.norm_w, lambda x: torch.linalg.vector_norm(x, dim=3), x)
    _against(mod.norm_p, lambda x: torch.linalg.vector_norm(x, 1, dim=(1, 2), keepdim=True), x)
    _against(mod.norm_inf, lambda x: torch.linalg.vector_norm(x, math.inf), x)
    _same(mod.norm_inf(x), x.abs().max())


def test_inf_and_pi(env) -> None:
    mod, dt = env
    x = _rand(3, 4, dtype=dt, seed=9)
    _same(mod.masked(x), torch.where(x > 0, x, -math.inf))
    assert rt.inf == math.inf and rt.pi == math.pi
    _against(mod.gauss, lambda x: torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi), x)


# -- attention ----------------------------------------------------------------------


def _reference_attention(q, k, v, mask=None, causal=False, scale=None, drop=None):
    """torch's documented reference computation of scaled_dot_product_attention."""
    w = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        w = w.masked_fill(~torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(), -math.inf)
    if mask is not None:
        w = w.masked_fill(~mask, -math.inf) if mask.dtype is torch.bool else w + mask
    w = torch.softmax(w, -1)
    if drop is not None:
        p, gen = drop
        keep = torch.empty_like(w).bernoulli_(1 - p, generator=gen)
        w = w * (keep / (1 - p))
    return w @ v


def test_scaled_dot_product_attention_is_torchs(env) -> None:
    mod, dt = env
    q, k, v = _rand(3, 5, 4, dtype=dt, seed=10), _rand(3, 6, 4, dtype=dt, seed=11), _rand(3, 6, 2, dtype=dt, seed=12)
    sdpa = F.scaled_dot_product_attention
    _against(mod.attend, sdpa, q, k, v)
    mask = torch.rand(5, 6, generator=torch.Generator().manual_seed(0)) > 0.3
    mask[:, 0] = True  # every query attends somewhere
    _against(lambda q, k, v: mod.attend_bool(q, k, v, mask), lambda q, k, v: sdpa(q, k, v, mask, scale=0.3), q, k, v)
    fmask = _rand(3, 1, 6, dtype=dt, seed=13)
    _against(lambda q, k, v: mod.attend_float(q, k, v, fmask), lambda q, k, v: sdpa(q, k, v, fmask), q, k, v)
    qc, kc, vc = q, _rand(3, 5, 4, dtype=dt, seed=14), _rand(3, 5, 2, dtype=dt, seed=15)
    _against(mod.attend_causal, lambda q, k, v: sdpa(q, k, v, is_causal=True), qc, kc, vc)
    # and torch's own function is its documented reference computation
    _against(mod.attend_bool, lambda *a: _reference_attention(*a[:3], mask=a[3], scale=0.3), q, k, v, mask, exact=False)
    _against(mod.attend_causal, lambda *a: _reference_attention(*a, causal=True), qc, kc, vc, exact=False)


def test_attention_dropout_draws_from_the_modes_stream(env) -> None:
    mod, dt = env
    q, k, v = _rand(3, 5, 4, dtype=dt, seed=16), _rand(3, 5, 4, dtype=dt, seed=17), _rand(3, 5, 2, dtype=dt, seed=18)
    gen = torch.Generator().manual_seed(4)
    ref = lambda q, k, v: _reference_attention(q, k, v, causal=True, drop=(0.3, gen))
    _against(lambda q, k, v: mod.attend_drop(q, k, v, rt.Train(seed=4)), ref, q, k, v, exact=False)
    _same(mod.attend_drop(q, k, v, rt.Train(seed=4)), mod.attend_drop(q, k, v, rt.Train(seed=4)))
    assert not torch.equal(mod.attend_drop(q, k, v, rt.Train(seed=4)), mod.attend_drop(q, k, v, rt.Train(seed=5)))
    _same(mod.attend_drop(q, k, v, rt.Eval), F.scaled_dot_product_attention(q, k, v, is_causal=True))


# -- convolutions, group_norm --------------------------------------------------------


def test_transposed_and_1d_convolutions_and_a_bias(env) -> None:
    mod, dt = env
    x, w, b = _rand(3, 4, 5, 6, dtype=dt, seed=19), _rand(4, 3, 3, 3, dtype=dt, seed=20), _rand(3, dtype=dt, seed=21)
    ref = lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)
    _against(mod.up, ref, x, w, b)
    assert mod.up(x, w, b).shape == (3, 3, 10, 12)
    w2 = _rand(4, 2, 2, 2, dtype=dt, seed=22)
    _against(mod.up_plain, F.conv_transpose2d, x, w2)
    assert mod.up_plain(_rand(3, 4, 2, 9, dtype=dt), w2).shape == (3, 2, 3, 10)
    x1, w1 = _rand(3, 4, 7, dtype=dt, seed=23), _rand(3, 4, 2, dtype=dt, seed=24)
    _against(mod.conv_1d, lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), x1, w1, b)
    wc, bc = _rand(2, 4, 3, 3, dtype=dt, seed=25), _rand(2, dtype=dt, seed=26)
    _against(mod.conv_bias, lambda x, w, b: F.conv2d(x, w, b, padding=1), x, wc, bc)


def test_the_checkers_transposed_sizes_are_torchs() -> None:
    from quiver.checker import dimexpr as DX
    from quiver.checker import types as T
    from quiver.checker.builtins.conv import _transposed_size

    for size in range(1, 7):
        for k in range(1, 4):
            for s in range(1, 4):
                for p in range(0, 3):
                    for op in range(0, s):
                        lits = T.DimLit(s), T.DimLit(p), T.DimLit(op)
                        fixed = _transposed_size(T.DimLit(size), T.DimLit(k), *lits)
                        generic = _transposed_size(T.DimVar("h"), T.DimLit(k), *lits)
                        poly = T.dim_poly(generic) if generic is not None else None
                        assert poly is not None
                        at = DX.value(DX.substitute(poly, {"h": DX.const(size)}) or ())
                        want = (size - 1) * s - 2 * p + k + op
                        if want < 1:
                            assert fixed is None
                            continue
                        out = F.conv_transpose2d(
                            torch.zeros(1, 1, size, size),
                            torch.zeros(1, 1, k, k),
                            stride=s,
                            padding=p,
                            output_padding=op,
                        )
                        assert fixed == T.DimLit(out.shape[-1]) and at == out.shape[-1], (size, k, s, p, op)


def test_group_norm(env) -> None:
    mod, dt = env
    x, w, b = _rand(3, 4, 5, 6, dtype=dt, seed=27), _rand(4, dtype=dt, seed=28), _rand(4, dtype=dt, seed=29)
    _against(mod.groups, lambda x, w, b: F.group_norm(x, 2, w, b, eps=0.001), x, w, b)


def test_layer_norm_with_a_scale_and_shift_is_torchs_affine_layer_norm(tmp_path) -> None:
    # layer_norm has no weights: a layer multiplies and adds its params, which
    # is torch's elementwise-affine layer_norm up to rounding.
    path = tmp_path / "ln.qv"
    path.write_text(
        textwrap.dedent("""
        dim E = 8

        fn ln(x: [b E], g: [E], s: [E]) -> [b E]:
            return layer_norm(x, over=E) * g + s
    """)
    )
    mod = quiver.load(str(path))
    x, g, s = (
        _rand(5, 8, dtype=torch.float32),
        _rand(8, dtype=torch.float32, seed=1),
        _rand(8, dtype=torch.float32, seed=2),
    )
    _against(mod.ln, lambda x, g, s: F.layer_norm(x, (8,), g, s), x, g, s, exact=False)


# -- batch_norm ---------------------------------------------------------------------

BN = """
dim C = 3

model Bn:
    param weight: [C]{f} = ones
    param bias: [C]{f} = zeros
    buffer running_mean: [C]{f} = zeros
    buffer running_var: [C]{f} = ones
    buffer num_batches_tracked: [] i64 = 0

model Net:
    param w: [C C]{f} = normal(0.0, 0.5)
    param bn: Bn

fn bn2d(m: Bn, x: [b C h v]{f}, mode: Mode) -> [b C h v]{f}:
    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C, num_batches_tracked=m.num_batches_tracked)

fn bn_last(m: Bn, x: [b t C]{f}, mode: Mode) -> [b t C]{f}:
    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C, momentum=0.3, eps=0.001)

fn loss(n: Net, x: [b C]{f}, mode: Mode) -> []{f}:
    h = batch_norm(x @ n.w, n.bn.running_mean, n.bn.running_var, n.bn.weight, n.bn.bias, mode, over=C, num_batches_tracked=n.bn.num_batches_tracked)
    return mean(h * h * h)

fn penalty(n: Net, x: [b C]{f}) -> []{f}:
    l, g = value_and_grad(loss, n, x, Train(seed=0))
    return l + norm(g)
"""


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def bn_env(request, tmp_path_factory):
    dt = request.param
    path = tmp_path_factory.mktemp("bn") / f"bn_{str(dt).split('.')[-1]}.qv"
    path.write_text(textwrap.dedent(BN).format(f="" if dt is torch.float32 else " f64"))
    return quiver.load(str(path)), dt


def test_batch_norm_follows_torchs_batchnorm2d_step_by_step(bn_env) -> None:
    mod, dt = bn_env
    m = mod.Bn.init(seed=0)
    ref = torch.nn.BatchNorm2d(3, dtype=dt)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([1.5, 0.5, -1.0], dtype=dt))
        ref.bias.copy_(torch.tensor([0.1, -0.2, 0.3], dtype=dt))
        m.weight.copy_(ref.weight)
        m.bias.copy_(ref.bias)
    for step in range(4):
        x = _rand(4, 3, 5, 2, dtype=dt, seed=30 + step) * (step + 1) + step
        ref.train()
        xr = x.clone().requires_grad_()
        want = ref(xr)
        ct = _rand(*want.shape, dtype=dt, seed=40 + step)
        gx_want, gw_want, gb_want = torch.autograd.grad((want * ct).sum(), [xr, ref.weight, ref.bias])
        xq = x.clone().requires_grad_()
        params = [m.weight, m.bias]
        for p in params:
            p.requires_grad_(True)  # as value_and_grad does, to differentiate x and the params at once
        got = mod.bn2d(m, xq, rt.Train(seed=step))
        gx, gw, gb = torch.autograd.grad((got * ct).sum(), [xq, *params])
        for p in params:
            p.requires_grad_(False)
        _same(got, want.detach())
        _same(gx, gx_want)
        _same(gw, gw_want)
        _same(gb, gb_want)
        _same(m.running_mean, ref.running_mean)
        _same(m.running_var, ref.running_var)
        assert int(m.num_batches_tracked) == int(ref.num_batches_tracked) == step + 1
    ref.eval()
    x = _rand(2, 3, 5, 2, dtype=dt, seed=50)
    before = m.running_mean.clone(), m.running_var.clone()
    _same(mod.bn2d(m, x, rt.Eval), ref(x).detach())
    _same(m.running_mean, before[0])
    _same(m.running_var, before[1])
    assert int(m.num_batches_tracked) == 4


def test_batch_norm_over_a_last_dim_is_batchnorm1d_on_the_channels(bn_env) -> None:
    mod, dt = bn_env
    m = mod.Bn.init(seed=0)
    ref = torch.nn.BatchNorm1d(3, momentum=0.3, eps=0.001, dtype=dt)
    for step in range(3):
        x = _rand(4, 6, 3, dtype=dt, seed=60 + step) + step
        _same(mod.bn_last(m, x, rt.Train(seed=0)), ref(x.transpose(1, 2)).transpose(1, 2).detach())
        _same(m.running_mean, ref.running_mean)
        _same(m.running_var, ref.running_var)
    assert int(m.num_batches_tracked) == 0, "not passed, not counted"
    ref.eval()
    x = _rand(2, 6, 3, dtype=dt, seed=70)
    _same(mod.bn_last(m, x, rt.Eval), ref(x.transpose(1, 2)).transpose(1, 2).detach())


def _torch_net(n, dt):
    w = n.w.detach().clone().requires_grad_()
    bn = torch.nn.BatchNorm1d(3, dtype=dt)
    with torch.no_grad():
        bn.weight.copy_(n.bn.weight)
        bn.bias.copy_(n.bn.bias)
        bn.running_mean.copy_(n.bn.running_mean)
        bn.running_var.copy_(n.bn.running_var)

    def loss(x):
        h = bn(x @ w)
        return (h * h * h).mean()

    return w, bn, loss


def test_batch_norm_in_a_differentiated_function_updates_the_buffers(bn_env) -> None:
    mod, dt = bn_env
    n = mod.Net.init(seed=1)
    w, bn, loss = _torch_net(n, dt)
    for step in range(3):
        x = _rand(8, 3, dtype=dt, seed=80 + step)
        value, g = rt.value_and_grad(mod.loss, n, x, rt.Train(seed=step))
        want = loss(x)
        gw, gweight, gbias = torch.autograd.grad(want, [w, bn.weight, bn.bias])
        _same(value, want.detach())
        _same(g.w, gw)
        _same(g.bn.weight, gweight)
        _same(g.bn.bias, gbias)
        _same(n.bn.running_mean, bn.running_mean)
        _same(n.bn.running_var, bn.running_var)
        assert not n.bn.running_mean.requires_grad and not n.bn.running_var.requires_grad
        assert int(n.bn.num_batches_tracked) == step + 1
    bn.eval()
    x = _rand(8, 3, dtype=dt, seed=90)
    value, _ = rt.value_and_grad(mod.loss, n, x, rt.Eval)
    _same(value, loss(x).detach())
    assert int(n.bn.num_batches_tracked) == 3


def test_batch_norm_under_a_gradient_of_a_gradient(bn_env) -> None:
    # penalty differentiates loss (create_graph) and is itself differentiated:
    # the in-place update of the running statistics breaks neither, and the
    # one run of loss updates them once, as in torch.
    mod, dt = bn_env
    n = mod.Net.init(seed=2)
    w, bn, loss = _torch_net(n, dt)
    x = _rand(8, 3, dtype=dt, seed=91)
    value, g = rt.value_and_grad(mod.penalty, n, x)
    params = [w, bn.weight, bn.bias]
    inner = loss(x)
    grads = torch.autograd.grad(inner, params, create_graph=True)
    want = inner + torch.linalg.vector_norm(torch.cat([gr.reshape(-1) for gr in grads]))
    gw, gweight, gbias = torch.autograd.grad(want, params)
    tol = 1e-12 if dt is torch.float64 else 1e-5
    torch.testing.assert_close(value, want.detach(), rtol=tol, atol=tol)
    torch.testing.assert_close(g.w, gw, rtol=tol, atol=tol)
    torch.testing.assert_close(g.bn.weight, gweight, rtol=tol, atol=tol)
    torch.testing.assert_close(g.bn.bias, gbias, rtol=tol, atol=tol)
    _same(n.bn.running_mean, bn.running_mean)
    _same(n.bn.running_var, bn.running_var)
    assert int(n.bn.num_batches_tracked) == 1 == int(bn.num_batches_tracked)


def test_batch_norm_in_per_example_gradients_needs_eval(tmp_path) -> None:
    path = tmp_path / "pe.qv"
    path.write_text(
        textwrap.dedent("""
        dim C = 3

        model Net:
            param weight: [C] = ones
            param bias: [C] = zeros
            buffer running_mean: [C] = zeros
            buffer running_var: [C] = ones

        fn loss(n: Net, x: [t C], mode: Mode) -> []:
            h = batch_norm(x, n.running_mean, n.running_var, n.weight, n.bias, mode, over=C)
            return mean(h * h * h)

        fn per(n: Net, x: [b t C], mode: Mode) -> [b]:
            ls, gs = value_and_grad(loss, n, x, mode, batch=b)
            return ls
    """)
    )
    mod = quiver.load(str(path))
    n = mod.Net.init(seed=0)
    x = _rand(4, 5, 3, dtype=torch.float32)
    with pytest.raises(rt.QuiverError, match=r"cannot update its running statistics inside per-example gradients"):
        mod.per(n, x, rt.Train(seed=0))
    want = torch.stack([mod.loss(n, x[i], rt.Eval) for i in range(4)])
    torch.testing.assert_close(mod.per(n, x, rt.Eval), want)
    _same(n.running_mean, torch.zeros(3))


def test_sizes_given_by_generic_dims(tmp_path) -> None:
    # a generic dim as a padding or as topk's k is bound from the arguments
    path = tmp_path / "generic.qv"
    path.write_text(
        textwrap.dedent("""
        fn padded(x: [b c], y: [p]) -> [b (c+p+p)]:
            return pad(x, (p, p))

        fn best(x: [b c], y: [r]) -> ([b r], [b r] Index[c]):
            return topk(x, r, over=c)
    """)
    )
    mod = quiver.load(str(path))
    x = _rand(2, 5, dtype=torch.float32)
    _same(mod.padded(x, torch.ones(2)), F.pad(x, (2, 2)))
    values, labels = mod.best(x, torch.ones(3))
    want = torch.topk(x, 3, 1)
    _same(values, want.values)
    _same(labels, want.indices)
