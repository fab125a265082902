"""stride= and padding= of max_pool2d and avg_pool2d, as torch's
F.max_pool2d and F.avg_pool2d take them (stride the window when left out;
max pads with -inf, avg with zeros that count in the mean): the sizes the
checker gives, for numbers and generic dims, are torch's, and so are the
values and gradients (f32 and f64); padding above half the window is E0301."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F
from annotations import spanned

import quiver

SRC = """
fn overlap(x: [b c h w]{f}) -> [b c ((h-1)/2+1) ((w-1)/2+1)]{f}:
    return max_pool2d(x, 3, stride=2, padding=1)

fn slide(x: [b c h w]{f}) -> [b c (h-1) (w-1)]{f}:
    return avg_pool2d(x, 2, stride=1)

fn padded(x: [b c h w]{f}) -> [b c ((h+2-3)/3+1) ((w+2)/3)]{f}:
    return avg_pool2d(x, 3, padding=1)

fn fixed(x: [b c 7 9]{f}) -> [b c 4 5]{f}:
    return max_pool2d(x, 2, stride=2, padding=1)
"""


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    path = tmp_path_factory.mktemp("pools") / "pools.qv"
    path.write_text(textwrap.dedent(SRC).replace("{f}", "" if dt == torch.float32 else " f64"), encoding="utf-8")
    return quiver.load(str(path)), dt


CASES = {
    "overlap": lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
    "slide": lambda x: F.avg_pool2d(x, 2, stride=1),
    "padded": lambda x: F.avg_pool2d(x, 3, padding=1),
    "fixed": lambda x: F.max_pool2d(x, 2, stride=2, padding=1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pools_with_stride_and_padding_like_torch(env, name: str) -> None:
    mod, dt = env
    tol = {"rtol": 1e-5, "atol": 1e-6} if dt == torch.float32 else {"rtol": 1e-12, "atol": 1e-13}
    sizes = [(7, 9)] if name == "fixed" else [(7, 9), (8, 8), (3, 4), (2, 2)]
    for h, w in sizes:
        x = torch.randn(2, 3, h, w, generator=torch.Generator().manual_seed(h * w), dtype=dt)
        mine, theirs = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        got, want = getattr(mod, name)(mine), CASES[name](theirs)
        assert got.shape == want.shape, (name, h, w)
        torch.testing.assert_close(got, want, **tol)
        weights = torch.randn(want.shape, generator=torch.Generator().manual_seed(1), dtype=dt)
        (got * weights).sum().backward()
        (want * weights).sum().backward()
        assert mine.grad is not None and theirs.grad is not None
        torch.testing.assert_close(mine.grad, theirs.grad, **tol)


def test_padding_above_half_the_window_is_refused_as_torch_does() -> None:
    src = "fn f(x: [b c 8 8]) -> [b c 4 4]:\n    return max_pool2d(x, 3, padding=2)\n"
    assert spanned(src) == [
        ("E0301", "padding of max_pool2d: expected at most half the window (3/2), found 2", "2"),
    ]
    with pytest.raises(RuntimeError, match="half"):
        F.max_pool2d(torch.zeros(1, 1, 8, 8), 3, padding=2)
    src = "fn f(x: [b c 8 8]) -> [b c 4 4]:\n    return avg_pool2d(x, 2, stride=0)\n"
    assert [d[0] for d in spanned(src)] == ["E0301"]
    src = "fn f(x: [b c 2 8]) -> [b c 1 4]:\n    return avg_pool2d(x, 3, stride=2)\n"
    assert spanned(src) == [("E0214", "avg_pool2d: the window (3) is larger than the input (2)", "3")]
