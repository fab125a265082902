"""Optimizers written in Quiver (`opt = Adam(m, ...)`, `opt.step(m, g)`,
`opt.lr = e`), compiled and run for 100 steps against torch.optim (issue 12)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

SRC = """
dim D = 6
dim H = 5
dim C = 3

model Mlp:
    param w1: [D H] = normal(0.0, 0.5)
    param b1: [H] = zeros
    param w2: [H C] = normal(0.0, 0.5)
    param b2: [C] = zeros

fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(tanh(x @ m.w1 + m.b1) @ m.w2 + m.b2, y, over=C)

fn adam_step(mut m: Mlp, mut opt: Adam[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn adamw_step(mut m: Mlp, mut opt: AdamW[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn sgd_step(mut m: Mlp, mut opt: SGD[Mlp], x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg:
    opt.lr = lr
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn make_adam(m: Mlp) -> Adam[Mlp]:
    return Adam(m, lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.001)

fn make_adamw(m: Mlp) -> AdamW[Mlp]:
    return AdamW(m, lr=0.01, weight_decay=0.1)

fn make_sgd(m: Mlp) -> SGD[Mlp]:
    return SGD(m, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)

fn fit(mut m: Mlp, x: [b D], y: [b] Index[C], steps: Int) -> Adam[Mlp]:
    opt = Adam(m, lr=0.05)
    for i in range(steps):
        if i == steps / 2:
            opt.lr = opt.lr * 0.1
        g = grad(loss, m, x, y)
        opt.step(m, g)
    return opt
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("optim") / "optim.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


def _data():
    gen = torch.Generator().manual_seed(3)
    return torch.randn(16, 6, generator=gen), torch.randint(0, 3, (16,), generator=gen)


def _torch_copy(m):
    return [t.detach().clone().requires_grad_(True) for t in (m.w1, m.b1, m.w2, m.b2)]


def _ref_loss(ps, x, y):
    w1, b1, w2, b2 = ps
    return F.cross_entropy(torch.tanh(x @ w1 + b1) @ w2 + b2, y)


def _run_torch(opt, ps, x, y, steps, schedule=None):
    for i in range(steps):
        if schedule is not None:
            schedule(opt, i)
        opt.zero_grad()
        _ref_loss(ps, x, y).backward()
        opt.step()


def _assert_params(m, ps) -> None:
    for ours, ref in zip((m.w1, m.b1, m.w2, m.b2), ps):
        torch.testing.assert_close(ours, ref.detach(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("kind", "make", "step", "torch_opt"),
    [
        (
            "adam",
            "make_adam",
            "adam_step",
            lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.001),
        ),
        ("adamw", "make_adamw", "adamw_step", lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1)),
    ],
)
def test_100_steps_equal_torch_optim(mod, kind, make, step, torch_opt) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    ps = _torch_copy(m)
    opt = getattr(mod, make)(m)
    for _ in range(100):
        getattr(mod, step)(m, opt, x, y)
    _run_torch(torch_opt(ps), ps, x, y, 100)
    _assert_params(m, ps)
    assert opt.steps == 100


def test_sgd_with_a_schedule_written_in_quiver_equals_torch(mod) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=1)
    ps = _torch_copy(m)
    opt = mod.make_sgd(m)
    lrs = [0.1 * 0.97**i for i in range(100)]
    for i in range(100):
        mod.sgd_step(m, opt, x, y, lrs[i])
    ref = torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)

    def schedule(o, i):
        o.param_groups[0]["lr"] = lrs[i]

    _run_torch(ref, ps, x, y, 100, schedule)
    _assert_params(m, ps)
    torch.testing.assert_close(opt.momentum_buffer.w1, ref.state[ps[0]]["momentum_buffer"], rtol=1e-6, atol=1e-6)


def test_a_local_optimizer_and_its_lr_change_equal_torch(mod) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=2)
    ps = _torch_copy(m)
    opt = mod.fit(m, x, y, 100)
    ref = torch.optim.Adam(ps, lr=0.05)

    def schedule(o, i):
        if i == 50:
            o.param_groups[0]["lr"] *= 0.1

    _run_torch(ref, ps, x, y, 100, schedule)
    _assert_params(m, ps)
    assert isinstance(opt, rt.Adam) and opt.lr == pytest.approx(0.005)
    torch.testing.assert_close(opt.exp_avg_sq.w2, ref.state[ps[2]]["exp_avg_sq"], rtol=1e-6, atol=1e-9)


def test_an_optimizer_argument_is_checked(mod) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    with pytest.raises(rt.CheckError, match=r"argument 'opt' expected Adam\[Mlp\], found SGD\[Mlp\]"):
        mod.adam_step(m, mod.make_sgd(m), x, y)


@pytest.mark.parametrize("kind", ["SGD", "Adam", "AdamW"])
def test_the_checker_and_the_runtime_agree_on_hyper_parameters(kind) -> None:
    """The checker's table (checker/types.py) is what hover and the docs show;
    the runtime's signature is what runs: names and defaults must agree."""
    import inspect

    from quiver.checker import types as T

    params = inspect.signature(getattr(rt, kind)).parameters
    hyper = T.OPTIMIZERS[kind][0]
    assert [n for n, _, _ in hyper] == [n for n in params if n not in ("m", "groups")]
    for name, _, default in hyper:
        assert params[name].default == eval(default), name
