"""Issue 12's gradient forms written in Quiver, compiled and run against torch:
sub-models and stacks, `wrt=`, aux outputs, `jvp`, per-example gradients and
`zeros`/`randn` of `Grad[M]`."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.func import jvp as torch_jvp

import quiver
from quiver import runtime as rt

SRC = """
dim D = 5
dim H = 4
dim C = 3
dim L = 2

model Layer:
    param w: [H H] = normal(0.0, 0.5)
    param b: [H] = normal(0.0, 0.1)

model Net:
    param inp: [D H] = normal(0.0, 0.5)
    param layers: [L] Layer
    param out: [H C] = normal(0.0, 0.5)

fn layer(k: Layer, h: [b H]) -> [b H]:
    return tanh(h @ k.w + k.b)

fn logits(m: Net, x: [b D]) -> [b C]:
    h = tanh(x @ m.inp)
    for i in range(L):
        h = layer(m.layers[i], h)
    return h @ m.out

fn loss(m: Net, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(logits(m, x), y, over=C)

fn loss_and_accuracy(m: Net, x: [b D], y: [b] Index[C]) -> ([] NonNeg, [] Float):
    z = logits(m, x)
    return cross_entropy(z, y, over=C), mean((argmax(z, over=C) == y) as [b] Float)

fn one(m: Net, x: [D], y: [] Index[C]) -> [] NonNeg:
    h = tanh(x @ m.inp)
    return cross_entropy(h @ m.out, y, over=C)

fn with_aux(m: Net, x: [b D], y: [b] Index[C]) -> ([] NonNeg, [] Float, Grad[Net]):
    (l, acc), g = value_and_grad(loss_and_accuracy, m, x, y)
    return l, acc, g

fn out_only(m: Net, x: [b D], y: [b] Index[C]) -> Grad[Net, wrt=[out]]:
    return grad(loss, m, x, y, wrt=[out])

fn tangent_of_logits(m: Net, x: [b D], t: Grad[Net]) -> ([b C], [b C]):
    y, dy = jvp(logits, m, t, x)
    return y, dy

fn per_example(m: Net, xs: [n D], ys: [n] Index[C]) -> ([n] NonNeg, [n] NonNeg, Grad[Net]):
    ls, gs = value_and_grad(one, m, xs, ys, batch=n)
    return ls, norm(gs), mean(gs, over=n)

fn nothing(m: Net) -> Grad[Net]:
    return zeros(Grad[Net])

fn noise(m: Net, seed: Int) -> Grad[Net]:
    return randn(Grad[Net], seed=seed)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("forms") / "forms.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


NAMES = ["inp", "layers.0.w", "layers.0.b", "layers.1.w", "layers.1.b", "out"]


def _params(m) -> dict[str, torch.Tensor]:
    return {n: t.clone().requires_grad_(True) for n, t in m.state_dict().items()}


def _logits(p, x):
    h = torch.tanh(x @ p["inp"])
    for i in range(2):
        h = torch.tanh(h @ p[f"layers.{i}.w"] + p[f"layers.{i}.b"])
    return h @ p["out"]


def _data(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(7, 5, generator=gen), torch.randint(0, 3, (7,), generator=gen)


def _leaves(g) -> dict[str, torch.Tensor]:
    out = {"inp": g.inp, "out": g.out}
    for i in range(2):
        out[f"layers.{i}.w"] = g.layers[i].w
        out[f"layers.{i}.b"] = g.layers[i].b
    return out


def test_a_stack_of_sub_models_is_initialised_in_order_and_differentiated(mod) -> None:
    m = mod.Net.init(seed=0)
    assert list(m.state_dict()) == NAMES
    assert isinstance(m.layers[1], mod.Layer) and not torch.equal(m.layers[0].w, m.layers[1].w)
    # one generator, fields in declaration order, the blocks in turn
    gen = torch.Generator().manual_seed(0)
    torch.testing.assert_close(m.inp, torch.randn(5, 4, generator=gen) * 0.5)
    torch.testing.assert_close(m.layers[0].w, torch.randn(4, 4, generator=gen) * 0.5)
    x, y = _data()
    p = _params(m)
    value, acc, g = mod.with_aux(m, x, y)
    z = _logits(p, x)
    ref = F.cross_entropy(z, y)
    grads = dict(zip(p, torch.autograd.grad(ref, list(p.values()))))
    torch.testing.assert_close(value, ref.detach())
    torch.testing.assert_close(acc, (z.argmax(1) == y).float().mean())
    for n, t in _leaves(g).items():
        torch.testing.assert_close(t, grads[n], msg=n)
    assert not value.requires_grad and not acc.requires_grad


def test_wrt_differentiates_only_the_selection(mod) -> None:
    m = mod.Net.init(seed=1)
    x, y = _data(1)
    g = mod.out_only(m, x, y)
    p = _params(m)
    (ref,) = torch.autograd.grad(F.cross_entropy(_logits(p, x), y), [p["out"]])
    torch.testing.assert_close(g.out, ref)
    assert list(g.keys()) == ["out"]


def test_jvp_equals_torch_func_jvp(mod) -> None:
    m = mod.Net.init(seed=2)
    x, _ = _data(2)
    t = mod.noise(m, 5)
    y, dy = mod.tangent_of_logits(m, x, t)
    p = {n: v.detach() for n, v in _params(m).items()}
    tangents = _leaves(t)
    ref_y, ref_dy = torch_jvp(lambda q: _logits(q, x), (p,), ({n: tangents[n] for n in p},))
    torch.testing.assert_close(y, ref_y)
    torch.testing.assert_close(dy, ref_dy, rtol=1e-5, atol=1e-6)


def test_per_example_gradients_equal_a_loop_of_torch_gradients(mod) -> None:
    m = mod.Net.init(seed=3)
    x, y = _data(3)
    ls, norms, mean_g = mod.per_example(m, x, y)
    p = _params(m)
    per = []
    for i in range(7):
        li = F.cross_entropy((torch.tanh(x[i] @ p["inp"]) @ p["out"])[None], y[i][None])
        torch.testing.assert_close(ls[i], li.detach())
        per.append(torch.autograd.grad(li, list(p.values()), allow_unused=True, materialize_grads=True))
    for i in range(7):
        torch.testing.assert_close(norms[i], torch.sqrt(sum((gi**2).sum() for gi in per[i])))
    for k, n in enumerate(p):
        torch.testing.assert_close(_leaves(mean_g)[n], torch.stack([per[i][k] for i in range(7)]).mean(0))


def test_zeros_and_randn_of_a_gradient_type(mod) -> None:
    m = mod.Net.init(seed=0)
    z = mod.nothing(m)
    assert all(not t.any() for t in _leaves(z).values())
    r = mod.noise(m, 9)
    gen = torch.Generator().manual_seed(9)
    for n in NAMES:
        torch.testing.assert_close(_leaves(r)[n], torch.randn(m.state_dict()[n].shape, generator=gen), msg=n)
    assert isinstance(r, rt.Grad) and not torch.equal(r.inp, mod.noise(m, 10).inp)
