"""The built-ins PyTorch ports need (issue 23) in the checker: the shapes,
dims and refinements of their results, and one diagnostic with its exact
code, range and message for each misuse (a wrong dim, element type, option
or argument). Values and gradients against torch are in
tests/test_ported_builtins_run.py."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

from quiver.checker import check_text

P = """dim B = 2
dim C = 4
dim H = 3
dim W = 5
dim K = 2
dim D = 6

model Bn:
    param weight: [C] = ones
    param bias: [C] = zeros
    buffer running_mean: [C] = zeros
    buffer running_var: [C] = ones
    buffer steps: [] i64 = 0
    buffer fsteps: [] = 0.0

"""


diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        # activations and dropout2d keep the shape; neither activation is NonNeg
        ("(x: [B C]) -> [B C]", "leaky_relu(x, 0.2)"),
        ("(x: [B C] f64) -> [B C] f64", "elu(x, alpha=2)"),
        ("(x: [B C] NonNeg) -> [B C]", "leaky_relu(x, negative_slope=0.1)"),
        ("(x: [B C H W] NonNeg, mode: Mode) -> [B C H W] NonNeg", "dropout2d(x, 0.5, mode)"),
        # pad: dim arithmetic from the last dim back; a refinement stays for a fill inside it
        ("(x: [B C H W]) -> [B C (H+3) (W+2)]", "pad(x, (1, 1, 2, 1))"),
        ("(x: [B C 4 5]) -> [B C 7 5]", "pad(x, (0, 0, 3, 0))"),
        ("(x: [B c]) -> [B (c+K+1)]", "pad(x, (K, 1))"),
        ("(x: [B C] Prob) -> [B (C+2)] Prob", "pad(x, (1, 1), value=0.5)"),
        ("(x: [B C] NonNeg) -> [B (C+2)] NonNeg", "pad(x, (1, 1))"),
        ("(x: [B C] Index[D]) -> [B (C+2)] Index[D]", "pad(x, (1, 1), value=5)"),
        ("(x: [B C] Bool) -> [B (C+1)] Bool", "pad(x, (1, 0), value=True)"),
        # flip, pixel_shuffle, pixel_unshuffle
        ("(x: [B C H] Index[D]) -> [B C H] Index[D]", "flip(x, over=(C, -1))"),
        ("(x: [B 8 H W]) -> [B 2 (H*2) (W*2)]", "pixel_shuffle(x, 2)"),
        ("(x: [B (C*K*K) H W]) -> [B C (H*K) (W*K)]", "pixel_shuffle(x, K)"),
        ("(x: [B c h w]) -> [B (c/4) (h*2) (w*2)]", "pixel_shuffle(x, 2)"),
        ("(x: [B (4*c) h w]) -> [B c (2*h) (w*2)]", "pixel_shuffle(x, 2)"),
        ("(x: [B C 4 6]) -> [B (C*4) 2 3]", "pixel_unshuffle(x, 2)"),
        ("(x: [B C (2*h) w]) -> [B (4*C) h (w/2)]", "pixel_unshuffle(x, 2)"),
        # losses: NonNeg, [] or per example with reduction="none"
        ("(x: [B C], y: [B] Index[C]) -> [B] NonNeg", 'cross_entropy(x, y, over=C, reduction="none")'),
        (
            "(x: [C B], y: [B] Index[C]) -> [] NonNeg",
            'cross_entropy(x, y, over=C, reduction="sum", label_smoothing=0.1)',
        ),
        ("(x: [B C], y: [B] i64) -> [] NonNeg", "cross_entropy(x, y, over=C, ignore_index=-100)"),
        ("(x: [B C], y: [B] Index[C]) -> [] NonNeg", "cross_entropy(x, y, over=C, ignore_index=0)"),
        ("(x: [B C H], y: [B H] i64) -> [B H] NonNeg", 'nll(x, y, over=C, ignore_index=-1, reduction="none")'),
        ("(x: [B C] f64, y: [B C] f64) -> [] f64", "smooth_l1(x, y, beta=0.0)"),
        ("(x: [B C], y: [B C]) -> [B C] NonNeg", 'huber(x, y, reduction="none")'),
        ("(z: [B C], y: [B C]) -> [] NonNeg", "binary_cross_entropy(sigmoid(z), y)"),
        ("(z: [B C], y: [B C]) -> [] NonNeg", "binary_cross_entropy(softmax(z, over=C), y)"),
        # statistics and reductions over several dims
        ("(x: [B C H W]) -> [B C] NonNeg", "std(x, over=(H, W))"),
        ("(x: [B C H W] f64) -> [] f64", "var(x, correction=0)"),
        ("(x: [B C H W]) -> [1 1 1 1] NonNeg", "std(x, keep=True)"),
        ("(x: [B C H W]) -> [B 1 H 1]", "logsumexp(x, over=(C, -1), keep=True)"),
        ("(x: [B C H W]) -> [B]", "sum(x, over=(1, H, W))"),
        ("(x: [B C H W] NonNeg) -> [C W] NonNeg", "sum(x, over=(B, H))"),
        ("(x: [B C H W] Index[D]) -> [B C] Index[D]", "max(x, over=(W, H))"),
        ("(x: [B C H W]) -> [B 1 1 W]", "mean(x, over=(C, H), keep=True)"),
        ("(x: [B C H W]) -> [B C H] NonNeg", "norm(x, over=W)"),
        ("(x: [B C H W]) -> [B 1 1 W] NonNeg", "norm(x, over=(C, H), p=1, keep=True)"),
        ("(x: [B C]) -> [] NonNeg", "norm(x, p=inf)"),
        # topk and sort: values and labels of the dim sorted along
        ("(x: [B C]) -> ([B K], [B K] Index[C])", "topk(x, K, over=C)"),
        ("(x: [B C] NonNeg) -> ([2 C] NonNeg, [2 C] Index[B])", "topk(x, 2, over=B, largest=False)"),
        ("(x: [B t]) -> ([B 1] , [B 1] Index[t])", "topk(x, 1, over=t)"),
        ("(x: [B C] i64) -> ([B C] i64, [B C] Index[C])", "sort(x, over=-1, descending=True)"),
        # constants
        ("(x: [B C]) -> [B C]", "where(x > 0.0, x, -inf)"),
        ("(x: [B C]) -> [B C]", "x * sqrt(2.0 * pi)"),
        # attention
        ("(q: [B H C], k: [B W C], v: [B W K]) -> [B H K]", "scaled_dot_product_attention(q, k, v)"),
        (
            "(q: [B D H C], k: [B D W C], v: [B D W K], m: [H W] Bool) -> [B D H K]",
            "scaled_dot_product_attention(q, k, v, mask=m, scale=0.5)",
        ),
        (
            "(q: [B H C], k: [B W C], v: [B W K], m: [B 1 W]) -> [B H K]",
            "scaled_dot_product_attention(q, k, v, mask=m)",
        ),
        (
            "(q: [B H C] f64, k: [B H C] f64, v: [B H K] f64, mode: Mode) -> [B H K] f64",
            "scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1, mode=mode)",
        ),
        ("(q: [B H C], k: [B W C], v: [B W K]) -> [B H K]", "scaled_dot_product_attention(q, k, v, dropout_p=0.0)"),
        # convolutions
        (
            "(x: [B C H W], w: [C 3 3 3], b: [3]) -> [B 3 6 10]",
            "conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)",
        ),
        ("(x: [B C h v], w: [C 3 3 3]) -> [B 3 (2*h+1) (2*v+1)]", "conv_transpose2d(x, w, stride=2)"),
        ("(x: [B C h v], w: [C 3 K K]) -> [B 3 (h+1) (v+1)]", "conv_transpose2d(x, w)"),
        ("(x: [B C D], w: [3 C K]) -> [B 3 5]", "conv1d(x, w)"),
        ("(x: [B C l], w: [3 C 3], b: [3]) -> [B 3 ((l-1)/2+1)]", "conv1d(x, w, b, stride=2, padding=1)"),
        ("(x: [B C H W], w: [2 C 3 3], b: [2]) -> [B 2 H W]", "conv2d(x, w, b, padding=1)"),
        # normalisations
        (
            "(m: Bn, x: [B C H W], mode: Mode) -> [B C H W]",
            "batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C)",
        ),
        (
            "(m: Bn, x: [B W C]) -> [B W C]",
            "batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, Train(seed=1), over=-1, momentum=0.3, eps=0.001, num_batches_tracked=m.steps)",
        ),
        ("(x: [B C H W]) -> [B C H W]", "group_norm(x, 2)"),
        ("(m: Bn, x: [B C H]) -> [B C H]", "group_norm(x, K, weight=m.weight, bias=m.bias, eps=0.01)"),
    ],
)
def test_results_that_fit(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "fn f(x: [B C] i64) -> [B C]:\n    return leaky_relu(x)\n",
            ("E0310", "leaky_relu of tensor [B C] i64 needs a float tensor; cast it with `as`", "x"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return leaky_relu(x, True)\n",
            ("E0301", "negative_slope of leaky_relu: expected Float, found number Bool", "True"),
        ),
        (
            "fn f(x: [B C]) -> [B C] NonNeg:\n    return elu(x)\n",
            ("E0304", "return value: expected [B C] NonNeg, found [B C] Float", "elu(x)"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return elu(x, alpha=x)\n",
            ("E0301", "alpha of elu: expected Float, found tensor [B C]", "x"),
        ),
        (
            "fn f(x: [B C H]) -> [B C H]:\n    return dropout2d(x, 0.1, Eval)\n",
            ("E0214", "dropout2d: x is [b C H W], 4 dims; found [B C H]", "x"),
        ),
        (
            "fn f(x: [B C H W]) -> [B C H W]:\n    return dropout2d(x, 1.0, Eval)\n",
            ("E0301", "p of dropout2d: expected a number in [0, 1), found 1.0", "1.0"),
        ),
        (
            "fn f(x: [B C H W]) -> [B C H W]:\n    return dropout2d(x, 0.1, 3)\n",
            ("E0301", "mode of dropout2d: expected Mode, found number Int", "3"),
        ),
        (
            "fn f(x: [B C H W]) -> [B C H W]:\n    return pad(x, (1, 2))\n",
            ("E0201", "return value: expected [B C H W=5], found [B C H (W+3)=8]", "pad(x, (1, 2))"),
        ),
        (
            "fn f(x: [B C H W]) -> [B C H W]:\n    return pad(x, (1, 2, 3))\n",
            ("E0214", "pad: the sizes come in pairs (left, right), from the last dim back; found 3", "(1, 2, 3)"),
        ),
        (
            "fn f(x: [B]) -> [B]:\n    return pad(x, (1, 2, 3, 4))\n",
            ("E0210", "pad of 2 pairs needs 2 dims or more, found [B]", "(1, 2, 3, 4)"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return pad(x, 1)\n",
            ("E0301", "pad of pad: expected a tuple of sizes (left, right, ...) for the last dims, found 1", "1"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return pad(x, (1, -1))\n",
            ("E0301", "each size of pad: expected an integer literal >= 0 or a dim, found -1", "-1"),
        ),
        (
            "fn f(x: [B C], n: Int) -> [B C]:\n    return pad(x, (n, 1))\n",
            ("E0301", "each size of pad: expected an integer literal >= 0 or a dim, found n", "n"),
        ),
        (
            "fn f(x: [B C] i64) -> [B C]:\n    return pad(x, (1, 1), value=0.5)\n",
            ("E0302", "value of pad on [B C] i64: expected Int, found Float", "0.5"),
        ),
        (
            "fn f(x: [B C] NonNeg) -> [B (C+2)] NonNeg:\n    return pad(x, (1, 1), value=-1.0)\n",
            (
                "E0304",
                "return value: expected [B (C+2)=6] NonNeg, found [B (C+2)=6] Float",
                "pad(x, (1, 1), value=-1.0)",
            ),
        ),
        (
            "fn f(x: [B C] Index[D]) -> [B (C+2)] Index[D]:\n    return pad(x, (1, 1), value=6)\n",
            ("E0305", "return value: expected [B (C+2)=6] Index[D], found [B (C+2)=6] i64", "pad(x, (1, 1), value=6)"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return flip(x, over=(C, C))\n",
            ("E0214", "flip: over= names C (position 1) twice", "C"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return flip(x, over=(C, H))\n",
            ("E0204", "over=H: H is not a dim of [B C]", "H"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    return flip(x, over=(C, 5))\n",
            ("E0210", "flip(over=5) needs 6 dims or more, found [B C]", "5"),
        ),
        (
            "fn f(x: [B 6 H W]) -> [B 1 H W]:\n    return pixel_shuffle(x, 2)\n",
            ("E0214", "pixel_shuffle: r*r=4 does not divide 6 (dim -3 of [B 6 H W])", "2"),
        ),
        (
            "fn f(x: [B C H W]) -> [B 1 H W]:\n    return pixel_shuffle(x, 0)\n",
            ("E0301", "r of pixel_shuffle: expected a positive integer literal or a dim, found 0", "0"),
        ),
        (
            "fn f(x: [B C W]) -> [B C W]:\n    return pixel_unshuffle(x, 2)\n",
            ("E0214", "pixel_unshuffle: r=2 does not divide W=5 (dim -1 of [B C W])", "2"),
        ),
        (
            "fn f(x: [B C H W]) -> [B C H W]:\n    return pixel_unshuffle(x, 2)\n",
            ("E0214", "pixel_unshuffle: r=2 does not divide H=3 (dim -2 of [B C H W])", "2"),
        ),
        (
            "fn f(x: [B C h w], r: Int) -> [B C h w]:\n    return pixel_shuffle(x, r)\n",
            ("E0301", "r of pixel_shuffle: expected a positive integer literal or a dim, found r", "r"),
        ),
        (
            "fn f(x: [B C], y: [B C]) -> [] NonNeg:\n    return binary_cross_entropy(x, y)\n",
            (
                "E0304",
                "p of binary_cross_entropy: expected probabilities known to be in [0, 1] (Prob, as sigmoid gives), found [B C]",
                "x",
            ),
        ),
        (
            "fn f(x: [B C], y: [B]) -> [] NonNeg:\n    return binary_cross_entropy(sigmoid(x), y)\n",
            ("E0201", "y of binary_cross_entropy (same shape as p): expected [B C], found [B]", "y"),
        ),
        (
            'fn f(x: [B C], y: [B C]) -> [] NonNeg:\n    return binary_cross_entropy(sigmoid(x), y, reduction="avg")\n',
            (
                "E0301",
                'reduction of binary_cross_entropy: expected "mean", "sum" or "none" (a string literal), found "avg"',
                '"avg"',
            ),
        ),
        (
            "fn f(x: [B C], y: [B C]) -> [B C] NonNeg:\n    return smooth_l1(x, y)\n",
            ("E0201", "return value: expected [B C] NonNeg, found [] NonNeg", "smooth_l1(x, y)"),
        ),
        (
            "fn f(x: [B C], y: [B C]) -> [] NonNeg:\n    return smooth_l1(x, y, beta=-1.0)\n",
            ("E0301", "beta of smooth_l1: expected a number >= 0, found -1.0", "-1.0"),
        ),
        (
            "fn f(x: [B C], y: [B C]) -> [] NonNeg:\n    return huber(x, y, delta=0.0)\n",
            ("E0301", "delta of huber: expected a number > 0, found 0.0", "0.0"),
        ),
        (
            "fn f(x: [B C], y: [B C] f64) -> [] NonNeg:\n    return huber(x, y)\n",
            ("E0302", "huber needs one element type: expected [B C] Float, found [B C] f64", "huber(x, y)"),
        ),
        (
            "fn f(x: [B C], y: [B C], r: Str) -> [] NonNeg:\n    return huber(x, y, reduction=r)\n",
            ("E0301", 'reduction of huber: expected "mean", "sum" or "none" (a string literal), found r', "r"),
        ),
        (
            "fn f(x: [B C], y: [B] i64) -> [] NonNeg:\n    return cross_entropy(x, y, over=C)\n",
            ("E0305", "the labels must be Index[C] to index over=C: expected [B] Index[C], found [B] i64", "y"),
        ),
        (
            "fn f(x: [B C], y: [B] i32) -> [] NonNeg:\n    return cross_entropy(x, y, over=C, ignore_index=-100)\n",
            (
                "E0305",
                "the labels must be Index[C] to index over=C (or i64, with ignore_index=): expected [B] Index[C], found [B] i32",
                "y",
            ),
        ),
        (
            "fn f(x: [B C], y: [B] Index[C]) -> [] NonNeg:\n    return cross_entropy(x, y, over=C, ignore_index=0.5)\n",
            ("E0301", "ignore_index of cross_entropy: expected Int, found number Float", "0.5"),
        ),
        (
            'fn f(x: [B C], y: [B] Index[C]) -> [] NonNeg:\n    return cross_entropy(x, y, over=C, reduction="none")\n',
            (
                "E0201",
                "return value: expected [] NonNeg, found [B] NonNeg",
                'cross_entropy(x, y, over=C, reduction="none")',
            ),
        ),
        (
            "fn f(x: [B C], y: [B] Index[C]) -> [] NonNeg:\n    return cross_entropy(x, y, over=C, label_smoothing=1.5)\n",
            ("E0301", "label_smoothing of cross_entropy: expected a number in [0, 1], found 1.5", "1.5"),
        ),
        (
            "fn f(x: [B C], y: [B] Index[C]) -> [] NonNeg:\n    return nll(x, y, over=C, label_smoothing=0.1)\n",
            ("E0402", "nll has no parameter 'label_smoothing'", "label_smoothing"),
        ),
        (
            "fn f(x: [B C] i64) -> [B]:\n    return std(x, over=C)\n",
            ("E0310", "std of tensor [B C] i64 needs a float tensor; cast it with `as`", "x"),
        ),
        (
            "fn f(x: [B C]) -> [B]:\n    return var(x, over=C, correction=-1)\n",
            ("E0301", "correction of var: expected a number >= 0, found -1", "-1"),
        ),
        (
            "fn f(x: [B C]) -> [B]:\n    return var(x, over=C, correction=0.5)\n",
            ("E0301", "correction of var: expected Int, found number Float", "0.5"),
        ),
        (
            "fn f(x: [B C]) -> [B] NonNeg:\n    return logsumexp(x, over=C)\n",
            ("E0304", "return value: expected [B] NonNeg, found [B] Float", "logsumexp(x, over=C)"),
        ),
        (
            "fn f(x: [B C]) -> [B]:\n    return logsumexp(x)\n",
            ("E0403", "logsumexp needs the argument over=", "(x)"),
        ),
        (
            "fn f(x: [B C]) -> [B]:\n    return std(x, over=(C, K))\n",
            ("E0204", "over=K: K is not a dim of [B C]", "K"),
        ),
        (
            "fn f(x: [B C]) -> ([B K], [B K] Index[C]):\n    return topk(x, 5, over=C)\n",
            ("E0214", "topk: k=5 is more than the size of C=4 (dim 1 of [B C])", "5"),
        ),
        (
            "fn f(x: [B C]) -> ([B K], [B K] Index[B]):\n    return topk(x, K, over=C)\n",
            (
                "E0305",
                "return value: expected ([B K], [B K] Index[B]), found ([B K], [B K] Index[C])",
                "topk(x, K, over=C)",
            ),
        ),
        (
            "fn f(x: [B C] Bool) -> ([B C] Bool, [B C] Index[C]):\n    return sort(x, over=C)\n",
            ("E0306", "sort is not defined for tensor [B C] Bool", "x"),
        ),
        (
            "fn f(x: [B C], k: Float) -> [B C]:\n    v, i = topk(x, k, over=C)\n    return v\n",
            ("E0301", "k of topk: expected a positive integer literal, a dim or an Int, found k", "k"),
        ),
        (
            "fn f(x: [B C]) -> [B C]:\n    v, i = sort(x, over=C, descending=1)\n    return v\n",
            ("E0301", "descending of sort: expected Bool, found number Int", "1"),
        ),
        (
            "fn f(x: [B C]) -> [B]:\n    v, i = topk(x, 1, over=(B, C))\n    return v\n",
            ("E0301", "over=: expected a dim name or a position such as -1, found this expression", "(B, C)"),
        ),
        (
            "fn f(x: [B C H]) -> [B]:\n    return sum(x, over=(C, C))\n",
            ("E0214", "sum: over= names C (position 1) twice", "C"),
        ),
        (
            "fn f(x: [B C H]) -> [B C]:\n    return sum(x, over=(C, H))\n",
            ("E0201", "return value: expected [B C], found [B]", "sum(x, over=(C, H))"),
        ),
        (
            "fn f(x: [B C H]) -> [B]:\n    return mean(x, over=(C, W))\n",
            ("E0204", "over=W: W is not a dim of [B C H]", "W"),
        ),
        (
            "fn f(x: [B C H]) -> [B]:\n    return max(x, over=(1, 3))\n",
            ("E0210", "max(over=3) needs 4 dims or more, found [B C H]", "3"),
        ),
        (
            "fn f(x: [B C H]) -> [B]:\n    return argmax(x, over=(C, H))\n",
            ("E0301", "over=: expected a dim name or a position such as -1, found this expression", "(C, H)"),
        ),
        (
            "fn f(x: [B C]) -> [B]:\n    return norm(x, over=C, p=0.0)\n",
            ("E0301", "p of norm: expected a number > 0, found 0.0", "0.0"),
        ),
        (
            "fn f(x: [B C]) -> [C]:\n    return norm(x, over=C)\n",
            ("E0201", "return value: expected [C], found [B]", "norm(x, over=C)"),
        ),
        (
            "fn f() -> Int:\n    return pi\n",
            ("E0301", "return value: expected number Int, found number Float", "pi"),
        ),
        (
            "fn f(q: [B H C], k: [B W D], v: [B W K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v)\n",
            (
                "E0214",
                "scaled_dot_product_attention: the queries' last dim C (of [B H C]) is not the keys' D (of [B W D])",
                "k",
            ),
        ),
        (
            "fn f(q: [B H C], k: [B W C], v: [B H K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v)\n",
            (
                "E0214",
                "scaled_dot_product_attention: the keys' W (dim -2 of [B W C]) is not the values' H (of [B H K])",
                "v",
            ),
        ),
        (
            "fn f(q: [B H C], k: [W C], v: [W K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v)\n",
            (
                "E0214",
                "scaled_dot_product_attention: q, k and v have the same leading dims; q is [B H C], k is [W C]",
                "k",
            ),
        ),
        (
            "fn f(q: [B H C], k: [B W C], v: [B W K], m: [W H] Bool) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v, mask=m)\n",
            (
                "E0214",
                "scaled_dot_product_attention: the mask [W H] Bool does not broadcast to the scores [B H W] Bool",
                "m",
            ),
        ),
        (
            "fn f(q: [B H C], k: [B W C], v: [B W K], m: [H W] i64) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v, mask=m)\n",
            ("E0302", "mask of scaled_dot_product_attention: expected Bool or Float, found [H W] i64", "m"),
        ),
        (
            "fn f(q: [B H C], k: [B W C], v: [B W K], m: [H W] Bool) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v, mask=m, is_causal=True)\n",
            (
                "E0301",
                "is_causal of scaled_dot_product_attention with a mask: expected False (give the causal mask in mask=, or is_causal=True alone), found True",
                "True",
            ),
        ),
        (
            "fn f(q: [B H C], k: [B W C], v: [B W K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v, dropout_p=0.1)\n",
            (
                "E0403",
                "scaled_dot_product_attention needs the argument mode= (dropout_p= draws from the mode's stream)",
                "(q, k, v, dropout_p=0.1)",
            ),
        ),
        (
            "fn f(q: [B H C], k: [B W C], v: [B W K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v, dropout_p=1.0, mode=Eval)\n",
            ("E0301", "dropout_p of scaled_dot_product_attention: expected a number in [0, 1), found 1.0", "1.0"),
        ),
        (
            "fn f(q: [B H C], k: [B W C] f64, v: [B W K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v)\n",
            (
                "E0302",
                "scaled_dot_product_attention needs one element type: expected [B H C] Float, found [B W C] f64",
                "k",
            ),
        ),
        (
            "fn f(q: [C], k: [B W C], v: [B W K]) -> [B H K]:\n    return scaled_dot_product_attention(q, k, v)\n",
            ("E0210", "scaled_dot_product_attention (q) needs 2 dims or more, found [C]", "q"),
        ),
        (
            "fn f(x: [B C H W], w: [3 C 3 3]) -> [B 3 ((H-1)*2-2+3+1) ((W-1)*2-2+3+1)]:\n    return conv_transpose2d(x, w)\n",
            (
                "E0214",
                "conv_transpose2d: x has C channels (dim 1 of [B C H W]) and w takes 3 (dim 0 of [3 C 3 3])",
                "w",
            ),
        ),
        (
            "fn f(x: [B C H W], w: [C 3 3 3]) -> [B 3 H W]:\n    return conv_transpose2d(x, w, stride=2, output_padding=2)\n",
            (
                "E0301",
                "output_padding of conv_transpose2d: expected an integer literal below the stride (2), found 2",
                "2",
            ),
        ),
        (
            "fn f(x: [B C 1 1], w: [C 3 1 1]) -> [B 3 1 1]:\n    return conv_transpose2d(x, w, padding=1)\n",
            ("E0214", "conv_transpose2d: padding 1 leaves no output: (1-1)*1-2*1+1 is below 1", "w"),
        ),
        (
            "fn f(x: [B C H W], w: [C 3 3 3], b: [C]) -> [B 3 5 7]:\n    return conv_transpose2d(x, w, b)\n",
            ("E0201", "bias of conv_transpose2d: expected [3], found [C]", "b"),
        ),
        (
            "fn f(x: [B C D], w: [3 K K]) -> [B 3 5]:\n    return conv1d(x, w)\n",
            ("E0214", "conv1d: x has C channels (dim 1 of [B C D]) and w takes K (dim 1 of [3 K K])", "w"),
        ),
        (
            "fn f(x: [B C H W], w: [3 C K K]) -> [B 3 5]:\n    return conv1d(x, w)\n",
            ("E0214", "conv1d: x is [b Ci L], 3 dims; found [B C H W]", "x"),
        ),
        (
            "fn f(x: [B C H W], w: [3 C 3 3], b: [3] f64) -> [B 3 1 3]:\n    return conv2d(x, w, b)\n",
            ("E0302", "conv2d needs one element type: expected [B C H W] Float, found [3] f64", "conv2d(x, w, b)"),
        ),
        (
            "fn f(m: Bn, x: [B C], rm: [C], mode: Mode) -> [B C]:\n    return batch_norm(x, rm, m.running_var, m.weight, m.bias, mode, over=C)\n",
            (
                "E0301",
                "running_mean of batch_norm is updated in place: expected a buffer of a model (such as bn.running_mean), found tensor [C]",
                "rm",
            ),
        ),
        (
            "fn f(m: Bn, x: [B C], mode: Mode) -> [B C]:\n    return batch_norm(x, m.weight, m.running_var, m.weight, m.bias, mode, over=C)\n",
            (
                "E0301",
                "running_mean of batch_norm is updated in place: expected a buffer of a model (such as bn.running_mean), found param weight of Bn",
                "m.weight",
            ),
        ),
        (
            "fn f(m: Bn, x: [B D], mode: Mode) -> [B D]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=D)\n",
            ("E0201", "running_mean of batch_norm: expected [D], found [C]", "m.running_mean"),
        ),
        (
            "fn f(m: Bn, x: [C], mode: Mode) -> [C]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C)\n",
            ("E0210", "batch_norm needs 2 dims or more (a batch and C), found [C]", "x"),
        ),
        (
            "fn f(m: Bn, x: [B C]) -> [B C]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, 0.1, over=C)\n",
            ("E0301", "mode of batch_norm: expected Mode, found number Float", "0.1"),
        ),
        (
            "fn f(m: Bn, x: [B C], mode: Mode) -> [B C]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C, momentum=2.0)\n",
            ("E0301", "momentum of batch_norm: expected a number in [0, 1], found 2.0", "2.0"),
        ),
        (
            "fn f(m: Bn, x: [B C], mode: Mode) -> [B C]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C, eps=0.0)\n",
            ("E0301", "eps of batch_norm: expected a number > 0, found 0.0", "0.0"),
        ),
        (
            "fn f(m: Bn, x: [B C], mode: Mode) -> [B C]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C, num_batches_tracked=m.fsteps)\n",
            (
                "E0301",
                "num_batches_tracked of batch_norm: expected a [] i64 buffer (the count of training batches), found tensor []",
                "m.fsteps",
            ),
        ),
        (
            "fn f(m: Bn, x: [B C] f64, mode: Mode) -> [B C] f64:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode, over=C)\n",
            ("E0302", "running_mean of batch_norm: expected [C] f64, found [C] Float", "m.running_mean"),
        ),
        (
            "fn f(m: Bn, x: [B C], mode: Mode) -> [B C]:\n    return batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, mode)\n",
            (
                "E0403",
                "batch_norm needs the argument over=",
                "(x, m.running_mean, m.running_var, m.weight, m.bias, mode)",
            ),
        ),
        (
            "fn f(m: Bn, x: [B C], mode: Mode) -> [B C]:\n    return batch_norm(x, m.running_mean, m.running_var, ones([D]), m.bias, mode, over=C)\n",
            ("E0201", "weight of batch_norm: expected [C], found [D]", "ones([D])"),
        ),
        (
            "fn f(x: [B C H]) -> [B C H]:\n    return group_norm(x, 3)\n",
            ("E0214", "group_norm: 3 groups do not divide the C=4 channels (dim 1 of [B C H])", "3"),
        ),
        (
            "fn f(x: [B]) -> [B]:\n    return group_norm(x, 1)\n",
            ("E0210", "group_norm needs 2 dims or more ([b C ..]), found [B]", "x"),
        ),
        (
            "fn f(x: [B C H], w: [H]) -> [B C H]:\n    return group_norm(x, 2, weight=w)\n",
            ("E0201", "weight of group_norm: expected [C], found [H]", "w"),
        ),
    ],
)
def test_each_misuse_is_one_diagnostic(body: str, expected: tuple[str, str, str]) -> None:
    assert diags(body) == [expected]


@pytest.mark.parametrize(
    "expr",
    [
        "pad(nope, (1, 2))",
        "flip(nope, over=(C, Q))",
        "std(nope, over=(H, W))",
        "topk(nope, K, over=C)",
        "sort(nope, over=C)",
        'cross_entropy(nope, y, over=C, reduction="none")',
        "batch_norm(nope, m.running_mean, m.running_var, m.weight, m.bias, Eval, over=C)",
        "scaled_dot_product_attention(nope, x, x)",
        "conv_transpose2d(nope, x)",
        "pixel_shuffle(nope, 2)",
        "sum(nope, over=(B, C))",
        "norm(nope, over=(B, C))",
    ],
)
def test_an_unknown_operand_gives_only_its_own_diagnostic(expr: str) -> None:
    found = diags(f"fn f(m: Bn, x: [B C], y: [B] Index[C]):\n    print({expr})\n")
    codes = [d[0] for d in found]
    assert codes in (["E0101"], ["E0101", "E0109"]), found
    assert found[0] == ("E0101", "unknown name 'nope'", "nope")


def test_the_axes_of_several_dims_are_what_the_compiler_passes() -> None:
    from quiver.checker import ast as A

    a = check_text(P + "fn f(x: [B C H W]) -> [B C]:\n    return sum(x, over=(W, 2))\n")
    axes = [body.axes[n] for body in a.bodies.values() for n in body.axes if isinstance(n, A.Call)]
    assert axes == [(3, 2)]


def test_inf_and_pi_are_float_constants_with_hover_text() -> None:
    from quiver.checker.builtins import CONSTANTS

    src = P + "fn f() -> Float:\n    return pi + inf\n"
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == []
    assert CONSTANTS["pi"].startswith("pi: Float") and CONSTANTS["inf"].startswith("inf: Float")
    from quiver.checker.ide.hover import hover

    text = hover(a, src.index("pi +") + 1)
    assert (
        text is not None and text.markdown == "```quiver\npi: Float\n```\n\nThe number pi (3.141592653589793), a Float."
    )


BN_PROGRAM = """
dim C = 3

model Net:
    param w: [C C] = zeros
    param weight: [C] = ones
    param bias: [C] = zeros
    buffer running_mean: [C] = zeros
    buffer running_var: [C] = ones

fn loss(n: Net, x: [b C], mode: Mode) -> []:
    h = batch_norm(x @ n.w, n.running_mean, n.running_var, n.weight, n.bias, mode, over=C)
    return mean(h * h)

fn stats_only(n: Net, x: [b C], mode: Mode) -> []:
    h = batch_norm(x, n.running_mean, n.running_var, ones([C]), zeros([C]), mode, over=C)
    return mean(h * h)

fn main():
    n = Net.init(seed=0)
    x = randn([8 C], seed=1)
    l, g = value_and_grad(loss, n, x, Train(seed=0))
    l2, g2 = value_and_grad(stats_only, n, x, Train(seed=0))
    print(l, g, l2, g2)
"""


def test_batch_norm_updates_buffers_without_mut_and_buffers_are_not_params() -> None:
    # loss is not mut, yet batch_norm updates n's buffers: the one documented
    # exception. Its params are read as usual; reading only the buffers is
    # reading no param (E1107), since buffers are not differentiated.
    found = spanned(BN_PROGRAM)
    assert found == [("E1107", "stats_only reads no param of Net: its gradient would always be zero", "stats_only")]
