"""A model dim whose default is a dim before it (`model Pool[K, stride = K]`,
torch's "the kernel size unless given"): the checker and the runtime give
the left-out dim that dim's value, so `Pool[2]` is `Pool[2, stride=2]`; a
default that is neither a number nor an earlier dim is E0912."""

from __future__ import annotations

import textwrap

import torch
import torch.nn.functional as F
from annotations import spanned

import quiver

SRC = """
model Pool[K, stride = K, padding = 0]:
    param scale: [K] = ones

    fn forward(self, x: [b c h w]) -> [b c ((h+2*padding-K)/stride+1) ((w+2*padding-K)/stride+1)]:
        return max_pool2d(x, K, stride=stride, padding=padding) * sum(self.scale)

fn same(p: Pool[2]) -> Pool[2, stride=2]:
    return p

fn halve(p: Pool[2], x: [b c 8 6]) -> [b c 4 3]:
    return p(x)

fn overlap(p: Pool[3, stride=2, padding=1], x: [b c h w]) -> [b c ((h-1)/2+1) ((w-1)/2+1)]:
    return p(x)

fn make(seed: Int) -> Pool[2]:
    return Pool[2].init(seed=seed)

fn make_overlap(seed: Int) -> Pool[3, stride=2, padding=1]:
    return Pool[3, stride=2, padding=1].init(seed=seed)
"""


def test_a_default_that_names_an_earlier_dim_checks_and_runs(tmp_path) -> None:
    assert spanned(textwrap.dedent(SRC)) == []
    path = tmp_path / "pool.qv"
    path.write_text(textwrap.dedent(SRC), encoding="utf-8")
    mod = quiver.load(str(path))
    x = torch.randn(2, 3, 8, 6, generator=torch.Generator().manual_seed(0))
    p = mod.make(0)
    assert mod.Pool.of(2) is mod.Pool.of(2, stride=2) is type(p)
    assert mod.Pool.of(3, stride=1) is not mod.Pool.of(3)
    torch.testing.assert_close(mod.halve(p, x), F.max_pool2d(x, 2) * 2)
    q = mod.make_overlap(0)
    torch.testing.assert_close(mod.overlap(q, x), F.max_pool2d(x, 3, stride=2, padding=1) * 3)


def test_a_default_must_be_a_number_or_a_dim_before_it() -> None:
    src = "model Pool[stride = K, K, window = size]:\n    param w: [K] = zeros\n"
    got = spanned(src)
    # a dim after it (K) or no dim at all (size); K after the broken default is not reported again
    assert got == [
        (
            "E0912",
            "the default of dim stride reads dim K, which comes after it: a default reads the dims before it",
            "K",
        ),
        (
            "E0912",
            "the default of dim window must be a whole number, a dim before it, a Bool option (1 when True), or "
            "+ - * // % of those, as in window = 1 or window = K // 2 (found size)",
            "size",
        ),
    ]
