"""A model dim's default computed from the dims before it, compiled and run
(issue 40): `P = K // 2` gives the padding torch's `kernel_size // 2` gives,
the runtime's GenericModel.of computes the same instance the checker typed,
and a dim given by name or position overrides the default."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver.runtime._errors import ModelError

PROGRAM = """\
model Conv[Ci, Co, K = 3, P = K // 2]:
    param w: [Co Ci K K] = normal(0.0, 1.0)

    fn forward(self, x: [b Ci h v]) -> [b Co (h+2*P-K+1) (v+2*P-K+1)]:
        return conv2d(x, self.w, padding=P)

model Heads[E, H = 4, D = E // H, R = E % H]:
    param w: [E (H*D)] = zeros

model Zero[K = 2, S = 4 // (K - 2)]:
    param b: [K] = zeros

fn same(m: Conv[2, 3, 5], x: [b 2 8 8]) -> [b 3 8 8]:
    return m(x)

fn make() -> Conv[2, 3, 5]:
    return Conv[2, 3, 5].init(seed=0)
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("dimdefaults") / "dimdefaults.qv"
    path.write_text(PROGRAM, encoding="utf-8")
    return quiver.load(str(path))


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7])
def test_the_default_as_python_computes_it(prog, k) -> None:
    assert prog.Conv.of(2, 3, k) is prog.Conv.of(2, 3, k, k // 2)


@pytest.mark.parametrize(("e", "h"), [(8, 4), (12, 3), (9, 2)])
def test_a_default_of_two_dims_before_it(prog, e, h) -> None:
    assert prog.Heads.of(e, h) is prog.Heads.of(e, h, e // h, e % h)
    assert prog.Heads.of(e, H=h) is prog.Heads.of(e, h, e // h, e % h)


def test_same_padding_equals_torch(prog) -> None:
    m = prog.make()
    x = torch.randn(2, 2, 8, 8, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(prog.same(m, x), F.conv2d(x, m.w, padding=5 // 2))


def test_a_division_by_zero_at_run_time_is_a_model_error(prog) -> None:
    with pytest.raises(ModelError, match="default of dim S divides by zero"):
        prog.Zero.of(2)
    assert prog.Zero.of(4) is prog.Zero.of(4, 2)
