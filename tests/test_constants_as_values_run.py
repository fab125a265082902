"""Issue 36: what the checker now accepts runs as written. A numeric
constant given as a model's option (`eps=NORM_EPS`), a dim constant as the
label of `full`, labels of a dim written as a number (`Index[9]`), and a
product of model dims kept in its written order, compared with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver

SRC = """
import nn

dim E = 4
dim C = 28
dim V = 27
const NORM_EPS = 0.5
const AFFINE = False

model Net:
    param norm: nn.RMSNorm[E, eps=NORM_EPS, elementwise_affine=AFFINE]

fn normed(m: Net, x: [b E]) -> [b E]:
    return m.norm(x)

fn last_label() -> [3] Index[C]:
    return full([3] Index[C], V)

fn pick(x: [b 9], y: [b] Index[9]) -> [b]:
    return x[arange(b), y]

model Heads[I, NH, HD]:
    param W: [I (NH*HD)] = xavier

    fn forward(self, h: [n I]) -> [n NH HD]:
        return reshape(h @ self.W, [n NH HD])

fn heads(m: Heads[E, 2, 3], h: [n E]) -> [n 2 3]:
    return m(h)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("consts") / "consts.qv"
    path.write_text(textwrap.dedent(SRC).lstrip())
    return quiver.load(str(path))


def test_a_constant_option_is_the_number_it_names(mod) -> None:
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0)) * 0.1
    got = mod.normed(mod.Net.init(seed=0), x)
    assert torch.equal(got, torch.nn.functional.rms_norm(x, (4,), eps=0.5))  # no weight: elementwise_affine=False


def test_full_of_a_dim_constant(mod) -> None:
    assert mod.last_label().tolist() == [27, 27, 27]


def test_labels_of_a_dim_written_as_a_number(mod) -> None:
    x = torch.arange(18, dtype=torch.float32).reshape(2, 9)
    y = torch.tensor([8, 3])
    assert torch.equal(mod.pick(x, y), x[torch.arange(2), y])


def test_heads_split_in_the_written_order(mod) -> None:
    m = mod.Heads[4, 2, 3].init(seed=0)
    h = torch.randn(5, 4, generator=torch.Generator().manual_seed(1))
    assert torch.equal(mod.heads(m, h), (h @ m.W).view(5, 2, 3))
