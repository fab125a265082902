"""`min` and `max` of numbers compiled and run (issue 40): equal to Python's
(an Int when every argument is one, a Float otherwise), with dims as values;
as sizes (`arange(min(T, 8))`, `padding=max(K // 2, 1)`) they give the
shapes torch gives; the tensor reductions beside them stay torch's amax/amin."""

from __future__ import annotations

import pytest
import torch

import quiver

PROGRAM = """\
dim T = 12
dim K = 5
dim V = 3

fn ints(a: Int, b: Int) -> Int:
    return max(a, b)

fn least(a: Int, b: Int, c: Int) -> Int:
    return min(a, b, c)

fn mixed(a: Int, b: Float) -> Float:
    return max(a, b)

fn top_k(k: Int) -> Int:
    return min(k, V) + max(1, K // 2)

fn steps() -> [8] i64:
    return arange(min(T, 8))

fn same(x: [b 2 h v], k: [3 2 K K]) -> [b 3 h v]:
    return conv2d(x, k, padding=max(K // 2, 1))

fn top(logits: [V] f32, top_k: Int) -> [V] f32:
    k = min(top_k, V)
    v, i = topk(logits, k, over=V)
    return where(logits < v[-1], -1e9, logits)

fn top_inline(logits: [b V] f32, top_k: Int) -> [b V] f32:
    v, i = topk(logits, min(top_k, V), over=V)
    return where(logits < v[:, -1:], -1e9, logits)

fn reduce(x: [n] f32) -> [] f32:
    return max(x) - min(x, over=n)
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("minmax") / "minmax.qv"
    path.write_text(PROGRAM, encoding="utf-8")
    return quiver.load(str(path))


@pytest.mark.parametrize(("a", "b", "c"), [(3, 4, 5), (-7, 2, 0), (5, 5, -1), (0, -3, -3)])
def test_numbers_as_python(prog, a, b, c) -> None:
    assert prog.ints(a, b) == max(a, b) and isinstance(prog.ints(a, b), int)
    assert prog.least(a, b, c) == min(a, b, c)
    got = prog.mixed(a, b + 0.5)
    assert got == float(max(a, b + 0.5)) and isinstance(got, float)
    assert isinstance(prog.mixed(a + 10, 0.5), float)


@pytest.mark.parametrize("k", [1, 2, 3, 10])
def test_dims_as_values(prog, k) -> None:
    assert prog.top_k(k) == min(k, 3) + max(1, 5 // 2)


def test_sizes(prog) -> None:
    assert torch.equal(prog.steps(), torch.arange(min(12, 8)))
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(1, 2, 8, 8, generator=g), torch.randn(3, 2, 5, 5, generator=g)
    torch.testing.assert_close(prog.same(x, w), torch.nn.functional.conv2d(x, w, padding=max(5 // 2, 1)))


def test_the_reductions_stay_torchs(prog) -> None:
    x = torch.tensor([3.0, -1.0, 7.5, 2.0])
    torch.testing.assert_close(prog.reduce(x), torch.amax(x) - torch.amin(x, 0))


@pytest.mark.parametrize("top_k", [1, 2, 3, 50])
def test_nanogpts_top_k_as_torch(prog, top_k) -> None:
    logits = torch.randn(3, generator=torch.Generator().manual_seed(top_k))
    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
    want = logits.masked_fill(logits < v[-1], -1e9)
    torch.testing.assert_close(prog.top(logits, top_k), want)


@pytest.mark.parametrize("top_k", [1, 2, 3, 50])
def test_min_of_an_int_written_where_the_size_is_taken(prog, top_k) -> None:
    # `topk(logits, min(top_k, V), over=V)`: a size known when it runs
    logits = torch.randn(4, 3, generator=torch.Generator().manual_seed(top_k))
    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
    want = logits.masked_fill(logits < v[:, [-1]], -1e9)
    torch.testing.assert_close(prog.top_inline(logits, top_k), want)
