"""dilation= and groups= of conv2d, conv1d and conv_transpose2d: the sizes
with a dilated kernel, `((H+2*p-d*(K-1)-1)/s+1)` and
`(H-1)*s-2*p+d*(K-1)+op+1`; grouped channels, kernels `[Co (Ci/g) K K]`
(depthwise with g = Ci); and the diagnostics when the channels do not fit,
the groups do not divide them, or a dilated kernel is larger than the input."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

P = "dim Ci = 8\ndim G = 2\ndim H = 28\n\n"


diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        ("(x: [b 8 h v], k: [8 1 3 3]) -> [b 8 (h-2) (v-2)]", "conv2d(x, k, groups=8)"),
        ("(x: [b Ci H H], k: [Ci 1 3 3]) -> [b Ci H H]", "conv2d(x, k, padding=1, groups=Ci)"),
        ("(x: [b Ci H H], k: [6 4 3 3]) -> [b 6 26 26]", "conv2d(x, k, groups=G)"),
        ("(x: [b 4 h v], k: [6 2 3 3]) -> [b 6 (h-4) (v-4)]", "conv2d(x, k, dilation=2, groups=2)"),
        ("(x: [b 4 H H], k: [6 4 3 3]) -> [b 6 12 12]", "conv2d(x, k, stride=2, padding=1, dilation=3)"),
        (
            "(x: [b 4 h v], k: [6 4 3 3]) -> [b 6 ((h+2*1-2*(3-1)-1)/2+1) ((v-1)/2)]",
            "conv2d(x, k, stride=2, padding=1, dilation=2)",
        ),
        ("(x: [b (2*c) h v], k: [6 c 3 3]) -> [b 6 (h-2) (v-2)]", "conv2d(x, k, groups=2)"),
        ("(x: [b 4 l], k: [6 2 3]) -> [b 6 (l-4)]", "conv1d(x, k, dilation=2, groups=2)"),
        ("(x: [b 4 l], k: [4 1 5]) -> [b 4 (l-8)]", "conv1d(x, k, groups=4, dilation=2)"),
        ("(x: [b 4 h v], k: [4 3 3 3]) -> [b 6 (h+2) (v+2)]", "conv_transpose2d(x, k, groups=2)"),
        ("(x: [b 4 h v], k: [4 3 3 3]) -> [b 3 (h+4) (v+4)]", "conv_transpose2d(x, k, dilation=2)"),
        (
            "(x: [b 4 h v], k: [4 3 3 3]) -> [b 6 ((h-1)*2-2*1+2*(3-1)+1+1) (2*v+2)]",
            "conv_transpose2d(x, k, stride=2, padding=1, output_padding=1, groups=2, dilation=2)",
        ),
        ("(x: [b 4 1 1], k: [4 1 3 3], c: [2]) -> [b 2 5 5]", "conv_transpose2d(x, k, c, groups=2, dilation=2)"),
    ],
)
def test_shapes_that_fit(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


def test_a_layer_with_groups_as_dims() -> None:
    # a layer's weight [Co (Ci/groups) K K] fits x: [b Ci h w] with groups=groups,
    # and the transposed layer's [Ci (Co/groups) K K] gives Co channels
    body = """model Grouped[I, O, K, groups = 1, dilation = 1]:
    param weight: [O (I/groups) K K] = zeros
    param up: [I (O/groups) K K] = zeros

    fn forward(self, x: [b I h w]) -> [b O ((h-dilation*(K-1)-1)+1) ((w-dilation*(K-1)-1)+1)]:
        return conv2d(x, self.weight, dilation=dilation, groups=groups)

    fn back(self, x: [b I h w]) -> [b O ((h-1)+dilation*(K-1)+1) ((w-1)+dilation*(K-1)+1)]:
        return conv_transpose2d(x, self.up, dilation=dilation, groups=groups)

fn fwd(m: Grouped[8, 4, 3, groups=2, dilation=2], x: [b 8 9 9]) -> [b 4 5 5]:
    return m(x)

fn back(m: Grouped[8, 4, 3, groups=2, dilation=2], x: [b 8 9 9]) -> [b 4 13 13]:
    return m.back(x)
"""
    assert diags(body) == []


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "fn f(x: [b 7 h v], k: [8 3 3 3]) -> [b 8 (h-2) (v-2)]:\n    return conv2d(x, k, groups=2)\n",
            (
                "E0214",
                "conv2d: x has 7 channels (dim 1 of [b 7 h v]) and w takes 3 (dim 1 of [8 3 3 3]) in each of 2 groups",
                "k",
            ),
        ),
        (
            "fn f(x: [b Ci h v], k: [8 2 3 3]) -> [b 8 (h-2) (v-2)]:\n    return conv2d(x, k, groups=G)\n",
            (
                "E0214",
                "conv2d: x has Ci channels (dim 1 of [b Ci h v]) and w takes 2 (dim 1 of [8 2 3 3]) "
                "in each of G=2 groups",
                "k",
            ),
        ),
        (
            "fn f(x: [b 6 h v], k: [9 3 3 3]) -> [b 9 (h-2) (v-2)]:\n    return conv2d(x, k, groups=2)\n",
            ("E0214", "conv2d: 2 groups do not divide the 9 output channels (dim 0 of [9 3 3 3])", "2"),
        ),
        (
            "fn f(x: [b 4 2 2], k: [6 2 3 3]) -> [b 6 1 1]:\n    return conv2d(x, k, dilation=2, groups=2)\n",
            ("E0214", "conv2d: the window (3 dilated by 2) is larger than the input (2)", "k"),
        ),
        (
            "fn f(x: [b 4 4], k: [6 2 3]) -> [b 6 1]:\n    return conv1d(x, k, dilation=2, groups=2)\n",
            ("E0214", "conv1d: the window (3 dilated by 2) is larger than the input (4)", "k"),
        ),
        (
            "fn f(x: [b 4 l], k: [6 4 3]) -> [b 6 l]:\n    return conv1d(x, k, groups=2)\n",
            (
                "E0214",
                "conv1d: x has 4 channels (dim 1 of [b 4 l]) and w takes 4 (dim 1 of [6 4 3]) in each of 2 groups",
                "k",
            ),
        ),
        (
            "fn f(x: [b 5 h v], k: [5 3 3 3]) -> [b 6 h v]:\n    return conv_transpose2d(x, k, groups=2)\n",
            ("E0214", "conv_transpose2d: 2 groups do not divide the 5 input channels (dim 1 of [b 5 h v])", "2"),
        ),
        (
            "fn f(x: [b 4 h v], k: [4 3 3 3]) -> [b 3 h v]:\n"
            "    return conv_transpose2d(x, k, stride=2, output_padding=2, dilation=3)\n",
            (
                "E0201",
                "return value: expected [b 3 h v], found [b 3 (2*h+7) (2*v+7)]",
                "conv_transpose2d(x, k, stride=2, output_padding=2, dilation=3)",
            ),
        ),
        (
            "fn f(x: [b 4 h v], k: [4 3 3 3]) -> [b 3 h v]:\n"
            "    return conv_transpose2d(x, k, stride=2, output_padding=3, dilation=3)\n",
            (
                "E0301",
                "output_padding of conv_transpose2d: expected an integer literal below the stride or the "
                "dilation (3), found 3",
                "3",
            ),
        ),
        (
            "fn f(x: [b 4 1 1], k: [4 3 2 2]) -> [b 3 1 1]:\n    return conv_transpose2d(x, k, padding=2, dilation=2)\n",
            ("E0214", "conv_transpose2d: padding 2 leaves no output: (1-1)*1-2*2+2*(2-1)+1 is below 1", "k"),
        ),
        (
            "fn f(x: [b 4 h v], k: [6 4 3 3]) -> [b 6 h v]:\n    return conv2d(x, k, dilation=0)\n",
            ("E0301", "dilation of conv2d: expected a positive integer literal or a dim, found 0", "0"),
        ),
        (
            "fn f(x: [b 4 h v], k: [6 4 3 3]) -> [b 6 h v]:\n    return conv2d(x, k, groups=1.5)\n",
            ("E0301", "groups of conv2d: expected a positive integer literal or a dim, found 1.5", "1.5"),
        ),
    ],
)
def test_diagnostics(body: str, expected: tuple[str, str, str]) -> None:
    got = diags(body)
    assert len(got) == 1, got
    code, message, text = got[0]
    assert (code, text) == (expected[0], expected[2]), got
    assert message == expected[1] or message.endswith(expected[1]), got
