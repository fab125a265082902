"""Floor division compiled and run (issue 40): `//` on Ints and Floats
equals Python's (negative operands included), on tensors torch.floor_divide
(integer and float tensors), and sizes computed with it (`dim P = K // 2`,
`[(K//2) N]`, `padding=K // 2`) give the shapes torch gives."""

from __future__ import annotations

import pytest
import torch

import quiver

PROGRAM = """\
dim K = 5
dim P = K // 2
const N = 7 // 2

fn ints(a: Int, b: Int) -> Int:
    return a // b

fn floats(a: Float, b: Float) -> Float:
    return a // b

fn tensors(x: [n] f32, d: Float) -> [n] f32:
    return x // d

fn int_tensors(x: [n] i64, d: Int) -> [n] i64:
    return x // d

fn same(x: [b 2 h v], k: [3 2 K K]) -> [b 3 h v]:
    return conv2d(x, k, padding=K // 2)

fn sizes() -> [(K//2) N]:
    return zeros([P N])
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("floordiv") / "floordiv.qv"
    path.write_text(PROGRAM, encoding="utf-8")
    return quiver.load(str(path))


@pytest.mark.parametrize(("a", "b"), [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (6, 3)])
def test_numbers_floor_as_python(prog, a, b) -> None:
    assert prog.ints(a, b) == a // b
    assert prog.floats(a + 0.5, float(b)) == (a + 0.5) // float(b)


def test_tensors_floor_as_torch(prog) -> None:
    x = torch.tensor([-3.5, -1.0, 0.0, 2.5, 7.0])
    torch.testing.assert_close(prog.tensors(x, 2.0), torch.floor_divide(x, 2.0))
    i = torch.tensor([-7, -1, 0, 5, 9])
    assert torch.equal(prog.int_tensors(i, 2), torch.floor_divide(i, 2))


def test_sizes_computed_with_floor_division(prog) -> None:
    assert tuple(prog.sizes().shape) == (2, 3)
    x = torch.randn(1, 2, 8, 8, generator=torch.Generator().manual_seed(0))
    k = torch.randn(3, 2, 5, 5, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(prog.same(x, k), torch.nn.functional.conv2d(x, k, padding=2))
