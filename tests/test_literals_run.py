"""Tensor literals compiled and run."""

from __future__ import annotations

import torch

import quiver

SRC = """
fn rotate(x: [b 2]) -> [b 2]:
    return x @ [[0.0, -1.0], [1.0, 0.0]]

fn steps() -> [3] i64:
    return [1, 2, -3]

fn one() -> [1] i64:
    return [7,]
"""


def test_literals_are_torch_tensors_of_their_type(tmp_path) -> None:
    path = tmp_path / "lit.qv"
    path.write_text(SRC)
    mod = quiver.load(str(path))
    x = torch.tensor([[1.0, 2.0]])
    assert torch.equal(mod.rotate(x), x @ torch.tensor([[0.0, -1.0], [1.0, 0.0]]))
    assert torch.equal(mod.steps(), torch.tensor([1, 2, -3])) and mod.steps().dtype == torch.int64
    assert torch.equal(mod.one(), torch.tensor([7]))
