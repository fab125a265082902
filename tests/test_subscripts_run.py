"""Subscripts on any dim, index assignment and `for a, b in e` at run time
(issue 25), compiled and compared with the same torch expressions: values
and gradients."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.checker import ast as A
from quiver.checker import types as T
from quiver.checker.body.core import BodyChecker

SRC = """
dim B = 2
dim T = 6
dim D = 4
dim K = 3
dim V = 5

model P:
    param x: [B T D] = normal(0.0, 1.0)
    param w: [B 2] = normal(0.0, 1.0)
    buffer buf: [T D] = zeros

fn cols(x: [B T D]) -> [B 2 D]:
    return x[:, 1:3]

fn last(x: [B T D]) -> [B T]:
    return x[..., -1]

fn pick(x: [B T D]) -> [B]:
    return x[:, 0, -1]

fn steps(x: [B T D]) -> [B 3 2]:
    return x[:, 1::2, ::2]

fn tail(x: [B T D]) -> [B 2 D]:
    return x[:, -2:]

fn window(x: [B T D], n: Int) -> [B 2 D]:
    return x[:, n:n + 2]

fn at(x: [B T D], n: Int) -> [B D]:
    return x[:, n]

fn gather_mid(x: [B T D], t: [K] Index[T]) -> [B K]:
    return x[:, t, 0]

fn gather_apart(x: [B T D], b: [K] Index[B], d: [K] Index[D]) -> [K T]:
    return x[b, :, d]

fn nll(logp: [b V], y: [b] Index[V]) -> [b]:
    return logp[arange(b), y]

fn loss_read(m: P, t: [K] Index[T]) -> []:
    return sum(m.x[:, 1:5:2, -1] ** 2.0) + sum(m.x[..., t, 0])

fn overwrite(x: [B T D]) -> ([B T D], [B T D]):
    y = x
    x[0] = 1.0
    x[:, :, 1:3] += 2.0
    return x, y

fn loss_write(m: P, x: [B D]) -> []:
    y = x * 1.0
    y[:, :2] = tanh(m.w)
    y[..., -1] = m.w[:, 0] * 3.0
    return sum(y * y)

fn scatter(x: [T D], ids: [K] Index[T], v: [K D]) -> [T D]:
    x[ids] = v
    x[ids, 0] = 7.0
    return x

fn put(mut m: P, v: [D], t: Int):
    m.buf[t] = v
    m.buf[:, ::2] += 1.0
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("subscripts") / "subscripts.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


X = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(0))


def test_subscripts_are_torch_s(mod) -> None:
    assert torch.equal(mod.cols(X), X[:, 1:3])
    assert torch.equal(mod.last(X), X[..., -1])
    assert torch.equal(mod.pick(X), X[:, 0, -1])
    assert torch.equal(mod.steps(X), X[:, 1::2, ::2])
    assert torch.equal(mod.tail(X), X[:, -2:])
    assert torch.equal(mod.window(X, 3), X[:, 3:5])
    assert torch.equal(mod.at(X, -1), X[:, -1])


def test_labels_at_any_position(mod) -> None:
    t = torch.tensor([5, 0, 2])
    assert torch.equal(mod.gather_mid(X, t), X[:, t, 0])
    b, d = torch.tensor([1, 0, 1]), torch.tensor([3, 3, 0])
    got = mod.gather_apart(X, b, d)
    assert got.shape == (3, 6) and torch.equal(got, X[b, :, d])
    logp = torch.randn(4, 5).log_softmax(-1)
    y = torch.tensor([4, 0, 2, 2])
    assert torch.equal(mod.nll(logp, y), logp[torch.arange(4), y])


def test_gradients_through_subscripts(mod) -> None:
    m = mod.P.init(seed=0)
    t = torch.tensor([5, 0, 0])
    value, g = rt.value_and_grad(mod.loss_read, m, t)
    x = m.x.detach().clone().requires_grad_()
    ref = (x[:, 1:5:2, -1] ** 2).sum() + x[..., t, 0].sum()
    (gx,) = torch.autograd.grad(ref, [x])
    assert torch.allclose(value, ref.detach()) and torch.allclose(g.x, gx)


def test_a_run_time_bound_out_of_range_fails_at_its_line(mod) -> None:
    # torch clamps the slice to one row; the result meets [B 2 D] at the return
    with pytest.raises(rt.CheckError, match=r"subscripts\.qv:\d+.*window\(\): result expected \[B 2 D\]"):
        mod.window(X, 5)
    with pytest.raises(IndexError):
        mod.at(X, 6)


def test_index_assignment_is_on_a_copy(mod) -> None:
    x = X.clone()
    got, y = mod.overwrite(x)
    ref = X.clone()
    ref[0] = 1.0
    ref[:, :, 1:3] += 2.0
    assert torch.equal(got, ref)
    assert torch.equal(y, X) and torch.equal(x, X)  # neither `y = x` nor the caller's tensor changed


def test_gradients_through_index_assignment_are_torch_s(mod) -> None:
    m = mod.P.init(seed=1)
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(2))
    value, g = rt.value_and_grad(mod.loss_write, m, x)
    w = m.w.detach().clone().requires_grad_()
    y = (x * 1.0).clone()
    y[:, :2] = torch.tanh(w)
    y[..., -1] = w[:, 0] * 3.0
    ref = (y * y).sum()
    (gw,) = torch.autograd.grad(ref, [w])
    assert torch.allclose(value, ref.detach()) and torch.allclose(g.w, gw)
    assert torch.count_nonzero(g.x) == 0


def test_index_assignment_through_labels(mod) -> None:
    x = torch.randn(6, 4)
    ids = torch.tensor([4, 1, 0])
    v = torch.randn(3, 4)
    ref = x.clone()
    ref[ids] = v
    ref[ids, 0] = 7.0
    assert torch.equal(mod.scatter(x, ids, v), ref)


def test_index_assignment_to_a_field_is_in_place(mod) -> None:
    m = mod.P.init(seed=0)
    before = m.buf
    v = torch.arange(4.0, requires_grad=True)
    mod.put(m, v * 2.0, 2)
    ref = torch.zeros(6, 4)
    ref[2] = torch.arange(4.0) * 2.0
    ref[:, ::2] += 1.0
    assert m.buf is before and torch.equal(m.buf, ref)
    assert not m.buf.requires_grad and m.buf.grad_fn is None


FOR_SRC = """
dim B = 2
dim D = 3

fn total(pairs: ([B D], [B])) -> [D]:
    acc = zeros([D])
    for xb, yb in pairs:
        acc = acc + sum(xb * reshape(yb, [B 1]), over=B)
    return acc
"""


def test_for_with_names_walks_an_iterable(tmp_path, monkeypatch) -> None:
    """`pairs` read as an iterable of its tuple type (nothing in the
    language makes one yet): the loop compiles to Python's tuple-target for."""
    value = BodyChecker.value

    def patched(self, e, env):
        t = value(self, e, env)
        if isinstance(e, A.Name) and e.name == "pairs" and not isinstance(t, T.UnknownT):
            t = T.IterT(t)
            self.types[e] = t
        return t

    monkeypatch.setattr(BodyChecker, "value", patched)
    path = tmp_path / "pairs.qv"
    path.write_text(textwrap.dedent(FOR_SRC))
    mod = quiver.load(str(path))
    batches = [(torch.randn(2, 3), torch.randn(2)) for _ in range(3)]
    monkeypatch.setattr(rt.checks, "enabled", False)  # a list is not the declared tuple
    got = mod.total(batches)
    ref = sum((xb * yb[:, None]).sum(0) for xb, yb in batches)
    assert torch.allclose(got, ref)
