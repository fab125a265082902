"""Dim arithmetic compiled and run: sizes computed from generic dims, model
fields with computed shapes, and the run-time checks of computed dims."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver
from quiver import runtime as rt

SRC = """
dim T = 4
dim E = 8
dim NH = 2
dim HD = E / NH

model M:
    param w: [(T*E) HD] = ones

fn pad(x: [b t]) -> [b (t+1)]:
    return zeros([b (t+1)])

fn project(m: M, x: [b (T*E)]) -> [b HD]:
    return x @ m.w

fn shrink(x: [b (2*t)]) -> [b t]:
    return zeros([b t])

fn halves(x: [b (2*t+1)]) -> Int:
    return t
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("dims") / "dims.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def test_sizes_computed_from_generic_dims(mod) -> None:
    assert mod.pad(torch.ones(3, 5)).shape == (3, 6)
    assert mod.shrink(torch.ones(2, 6)).shape == (2, 3)
    assert mod.halves(torch.ones(1, 9)) == 4  # t read back from (2*t+1)


def test_model_fields_have_the_computed_shape(mod) -> None:
    m = mod.M.init(seed=0)
    assert m.w.shape == (32, 4)
    assert torch.equal(mod.project(m, torch.ones(2, 32)), torch.full((2, 4), 32.0))


def test_computed_dims_are_checked_at_run_time(mod) -> None:
    with pytest.raises(
        rt.CheckError,
        match=r"shrink\(\): argument 'x' expected \[b \(2\*t\)\] f32, found \[2 7\] f32: dim 1 is not \(2\*t\) for any t",
    ):
        mod.shrink(torch.ones(2, 7))
    with pytest.raises(rt.CheckError, match=r"project\(\): argument 'x' expected \[b 32\] f32, found \[2 31\] f32"):
        mod.project(mod.M.init(seed=0), torch.ones(2, 31))


def test_a_dim_expr_spec_checks_once_its_names_are_bound() -> None:
    e = rt.DimExpr("(t+1)", ("+", "t", 1))
    assert e.value({}) is None and e.value({"t": (3, "x")}) == 4
    sig = rt.Signature(None, "f", None, (rt.TensorArg("x", ("t",), rt.f32), rt.TensorArg("y", (e,), rt.f32)))
    sig.check(torch.ones(3), torch.ones(4))
    with pytest.raises(rt.CheckError, match=r"dim 0 must be \(t\+1\) = 4"):
        sig.check(torch.ones(3), torch.ones(5))
