"""reshape into heads of a layer's own dims: `[b T E]` as `[b T NH (E/NH)]`
inside a model that takes E and NH. The element counts are equal exactly
when NH divides E, so the checker accepts the reshape and the compiled
program checks the count when it runs (as torch's MultiheadAttention asserts
that num_heads divides embed_dim); an instance written with dims that leave a
remainder is E0212 where it is written, and one made from Python with such
dims is caught by that run-time check; counts that differ whatever the
divisions give stay an error."""

from __future__ import annotations

import textwrap

import pytest
import torch
from annotations import spanned

import quiver
from quiver import runtime as rt
from quiver.checker import dimexpr as DX

HEADS = """
model Heads[E, NH]:
    param w: [E E] = zeros

    fn split(self, x: [b T E]) -> [b NH T (E/NH)]:
        return permute(reshape(x @ self.w, [b T NH (E/NH)]), [b NH T (E/NH)])

    fn merge(self, x: [b NH T (E/NH)]) -> [b T E]:
        return reshape(permute(x, [b T NH (E/NH)]), [b T E])
"""


def test_equal_when_the_divisions_are_exact() -> None:
    e, nh, b = DX.var("E"), DX.var("NH"), DX.var("b")
    head = DX.div(e, nh)
    assert head != e and DX.mul(head, nh) != e  # floored: not the same normal form
    assert DX.equal_if_exact(DX.mul(e, b), DX.mul(DX.mul(head, nh), b))
    assert DX.equal_if_exact(e, DX.mul(DX.mul(DX.div(head, DX.const(2)), nh), DX.const(2)))
    assert DX.equal_if_exact(DX.mul(e, e), DX.mul(DX.mul(head, head), DX.mul(nh, nh)))
    assert not DX.equal_if_exact(e, DX.mul(head, e))
    assert not DX.equal_if_exact(e, DX.mul(head, head))
    assert not DX.equal_if_exact(DX.add(e, DX.const(1)), DX.mul(head, nh))


def test_a_layer_splits_its_dim_into_heads() -> None:
    assert spanned(HEADS) == []


def test_counts_that_differ_whatever_the_division_stay_an_error() -> None:
    src = "model Bad[E, NH]:\n    param w: [E] = zeros\n\n    fn f(self, x: [b E]) -> [b NH E]:\n        return reshape(x, [b NH E])\n"
    assert spanned(src) == [("E0214", "reshape: [b E] has E*b elements and [b NH E] has E*NH*b", "[b NH E]")]


@pytest.fixture(scope="module")
def heads(tmp_path_factory):
    path = tmp_path_factory.mktemp("heads") / "heads.qv"
    main = "\ndim D = 8\ndim H = 2\ndim Odd = 3\n\nfn make() -> Heads[D, H]:\n    return Heads[D, H].init(seed=0)\n"
    path.write_text(textwrap.dedent(HEADS) + main, encoding="utf-8")
    return quiver.load(str(path))


def test_the_split_runs_as_torch_views_it(heads) -> None:
    m = heads.make()
    with torch.no_grad():
        m.w.copy_(torch.eye(8))
    x = torch.randn(5, 3, 8)
    h = m.split(x)
    assert torch.equal(h, x.view(5, 3, 2, 4).transpose(1, 2))
    assert torch.equal(m.merge(h), x)


def test_a_division_that_is_not_exact_is_an_error_where_the_instance_is_written() -> None:
    src = textwrap.dedent(HEADS) + "\nfn make_odd() -> Heads[8, 3]:\n    return Heads[8, 3].init(seed=0)\n"
    message = "dim expression (E/NH): in Heads[8, 3] it is 8/3, not a whole number: NH must divide E"
    assert spanned(src) == [("E0212", message, "Heads[8, 3]")] * 2


def test_a_division_that_is_not_exact_is_caught_when_it_runs(heads) -> None:
    m = heads.Heads.of(8, 3).init(seed=0)  # made from Python: no instance written
    with pytest.raises(rt.CheckError, match=r"reshape\(\): argument 'x' expected 30 elements .*found \[5 1 8\]"):
        m.split(torch.randn(5, 1, 8))
