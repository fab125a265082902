"""Functions generic over a model instance's dims (issue 36): dims bound only
from a model argument (or from a gradient's or an optimizer's model) are
sizes at run time, as those bound from a tensor's shape are: `Lin[i, o].init`,
`zeros([i o])`, `zeros(Grad[Lin[i, o]])` in the body; `Adam[Lin[i, o]]`,
`Grad[Lin[i, o]]` and `[b] Grad[Lin[i, o]]` parameters, which train as torch
does, and whose dims must agree with the other arguments'."""

from __future__ import annotations

import pytest
import torch

import quiver
from quiver import runtime as rt

SRC = """\
model Lin[I, O]:
    param w: [I O] = normal(0.0, 0.5)
    param b: [O] = zeros

    fn forward(self, x: [.. I]) -> [.. O]:
        return x @ self.w + self.b

model Net[R]:
    param a: Lin[R, R]

fn fresh(l: Lin[i, o]) -> Lin[i, o]:
    return Lin[i, o].init(seed=0)

fn fresh_layer(mut m: Net[r]) -> Lin[r, r]:
    return Lin[r, r].init(seed=1)

fn blank(l: Lin[i, o]) -> [i o]:
    return zeros([i o])

fn loss(l: Lin[i, o], x: [b i], y: [b o]) -> [] Float:
    return mean((l(x) - y) ** 2.0)

fn adam_step(mut opt: Adam[Lin[i, o]], mut l: Lin[i, o], x: [b i], y: [b o]) -> [] Float:
    v, g = value_and_grad(loss, l, x, y)
    opt.step(l, g)
    return v

fn sgd_step(mut l: Lin[i, o], g: Grad[Lin[i, o]], lr: Float):
    l -= lr * g

fn grads(l: Lin[i, o], x: [b i], y: [b o]) -> Grad[Lin[i, o]]:
    return grad(loss, l, x, y)

fn per_example(l: Lin[i, o], x: [b i], y: [b o]) -> [b] Grad[Lin[i, o]]:
    return grad(loss1, l, x, y, batch=b)

fn accumulate(gs: [b] Grad[Lin[i, o]], h: Grad[Lin[i, o]]) -> Grad[Lin[i, o]]:
    acc = zeros(Grad[Lin[i, o]])
    return acc + mean(gs, over=b) + h

fn make_adam(l: Lin[i, o]) -> Adam[Lin[i, o]]:
    return Adam(l, lr=0.01)

fn halves(l: Lin[(2*i), o]) -> [i o]:
    return zeros([i o])

fn from_tuple(t: ([b i], [b o])) -> Lin[i, o]:
    return Lin[i, o].init(seed=2)

fn cells(l: Lin[i, o]) -> Int:
    return i * o

fn loss1(l: Lin[i, o], x: [i], y: [o]) -> [] Float:
    return mean((l(x) - y) ** 2.0)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("generic_params") / "gen.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


def _data(seed: int, i: int = 3, o: int = 4):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(6, i, generator=gen), torch.randn(6, o, generator=gen)


def _ref_loss(w, b, x, y):
    return (((x @ w + b) - y) ** 2.0).mean()


def test_an_instance_made_from_dims_bound_by_a_model_argument(mod) -> None:
    layer = mod.Lin.of(3, 4).init(seed=5)
    made = mod.fresh(layer)
    assert type(made) is mod.Lin.of(3, 4)
    assert torch.equal(made.w, mod.Lin.of(3, 4).init(seed=0).w)
    inner = mod.fresh_layer(mod.Net.of(5).init(seed=0))
    assert type(inner) is mod.Lin.of(5, 5)
    assert torch.equal(inner.w, mod.Lin.of(5, 5).init(seed=1).w)
    assert torch.equal(mod.blank(layer), torch.zeros(3, 4))


def test_an_adam_parameter_of_a_generic_model_trains_as_torch_optim(mod) -> None:
    layer = mod.Lin.of(3, 4).init(seed=5)
    w, b = (t.detach().clone().requires_grad_(True) for t in (layer.w, layer.b))
    ours = mod.make_adam(layer)
    ref = torch.optim.Adam([w, b], lr=0.01, foreach=True)
    for step in range(50):
        x, y = _data(step)
        value = mod.adam_step(ours, layer, x, y)
        ref.zero_grad()
        expected = _ref_loss(w, b, x, y)
        expected.backward()
        ref.step()
        torch.testing.assert_close(value, expected.detach(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(layer.w, w.detach(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(layer.b, b.detach(), rtol=1e-6, atol=1e-7)
    assert ours.steps == 50


def test_a_gradient_parameter_of_a_generic_model_steps_as_torch(mod) -> None:
    layer = mod.Lin.of(3, 4).init(seed=5)
    w, b = (t.detach().clone() for t in (layer.w, layer.b))
    for step in range(50):
        x, y = _data(step)
        mod.sgd_step(layer, mod.grads(layer, x, y), 0.1)
        ww, bb = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
        gw, gb = torch.autograd.grad(_ref_loss(ww, bb, x, y), [ww, bb])
        w, b = w - 0.1 * gw, b - 0.1 * gb
    torch.testing.assert_close(layer.w, w, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(layer.b, b, rtol=1e-6, atol=1e-7)


def test_batched_gradients_of_a_generic_model_as_parameters(mod) -> None:
    layer = mod.Lin.of(3, 4).init(seed=5)
    x, y = _data(0)
    gs = mod.per_example(layer, x, y)
    total = mod.accumulate(gs, mod.grads(layer, x, y))
    w, b = layer.w.clone().requires_grad_(True), layer.b.clone().requires_grad_(True)
    per = [torch.autograd.grad(_ref_loss(w, b, x[k], y[k]), [w, b]) for k in range(6)]
    gw, gb = torch.autograd.grad(_ref_loss(w, b, x, y), [w, b])
    torch.testing.assert_close(total.w, torch.stack([p[0] for p in per]).mean(0) + gw, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(total.b, torch.stack([p[1] for p in per]).mean(0) + gb, rtol=1e-6, atol=1e-7)


def test_the_dims_of_a_gradient_or_optimizer_argument_must_agree(mod) -> None:
    small = mod.Lin.of(3, 4).init(seed=0)
    big = mod.Lin.of(5, 4).init(seed=0)
    opt = mod.make_adam(small)
    x, y = _data(0, i=5)
    with pytest.raises(rt.CheckError, match=r"adam_step\(\): dim i is 3 in argument 'opt' but 5 in argument 'l'"):
        mod.adam_step(opt, big, x, y)
    g = mod.grads(small, *_data(0))
    with pytest.raises(rt.CheckError, match=r"sgd_step\(\): dim i is 5 in argument 'l' but 3 in argument 'g' "):
        mod.sgd_step(big, g, 0.1)
    with pytest.raises(rt.CheckError, match=r"argument 'g' expected Grad\[Lin\[i, o\]\], found Adam\[Lin\[3, 4\]\]"):
        mod.sgd_step(small, opt, 0.1)
    with pytest.raises(rt.CheckError, match=r"argument 'opt' expected Adam\[Lin\[i, o\]\], found Grad\[Lin\[3, 4\]\]"):
        mod.adam_step(g, small, *_data(0))


def test_dims_from_an_instances_dim_arithmetic_and_from_a_tuple(mod) -> None:
    assert torch.equal(mod.halves(mod.Lin.of(8, 2).init(seed=0)), torch.zeros(4, 2))
    with pytest.raises(rt.CheckError, match=r"found model Lin\[5, 2\]: its dim 5 is not \(2\*i\) for any i"):
        mod.halves(mod.Lin.of(5, 2).init(seed=0))
    made = mod.from_tuple((torch.ones(2, 3), torch.ones(2, 5)))
    assert type(made) is mod.Lin.of(3, 5)
    assert mod.cells(mod.Lin.of(3, 5).init(seed=0)) == 15
