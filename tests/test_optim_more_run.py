"""RMSprop, Adagrad, Adadelta, LBFGS, param groups (`groups=Group(...)`) and
clip_grad_norm written in Quiver, compiled and run against torch.optim and
torch.nn.utils.clip_grad_norm_ (issue 26): 20 steps each, to 1e-6, on an
nn.Module with the same initial values; and the
checkpoint protocol (`_qv_state_dict` / `_qv_load_state_dict`) of each."""

from __future__ import annotations

import io
import math

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

fn make_rmsprop(m: Mlp) -> RMSprop[Mlp]:
    return RMSprop(m, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.01, momentum=0.8, centered=True)

fn make_rmsprop_plain(m: Mlp) -> RMSprop[Mlp]:
    return RMSprop(m)

fn make_adagrad(m: Mlp) -> Adagrad[Mlp]:
    return Adagrad(m, lr=0.1, lr_decay=0.01, weight_decay=0.001, initial_accumulator_value=0.1, eps=1e-9)

fn make_adadelta(m: Mlp) -> Adadelta[Mlp]:
    return Adadelta(m, lr=1.0, rho=0.95, eps=1e-5, weight_decay=0.01)

fn make_lbfgs(m: Mlp) -> LBFGS[Mlp]:
    return LBFGS(m, lr=0.5, max_iter=5, history_size=4)

fn make_lbfgs_wolfe(m: Mlp) -> LBFGS[Mlp]:
    return LBFGS(m, max_iter=4, line_search_fn="strong_wolfe")

fn make_grouped(m: Mlp) -> AdamW[Mlp]:
    return AdamW(m, lr=0.01, betas=(0.9, 0.95), weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))

fn make_rmsprop_groups(m: Mlp) -> RMSprop[Mlp]:
    return RMSprop(m, momentum=0.5, groups=Group(min_rank=2, lr=0.001, alpha=0.9))

fn make_adagrad_groups(m: Mlp) -> Adagrad[Mlp]:
    return Adagrad(m, lr=0.1, groups=Group(max_rank=1, lr_decay=0.1, eps=1e-6))

fn make_adadelta_groups(m: Mlp) -> Adadelta[Mlp]:
    return Adadelta(m, groups=Group(names="w*", rho=0.5, weight_decay=0.01))

fn make_adamw_betas_groups(m: Mlp) -> AdamW[Mlp]:
    return AdamW(m, lr=0.01, groups=Group(max_rank=1, betas=(0.5, 0.9), eps=0.001, weight_decay=0.0))

fn make_sgd_momentum_groups(m: Mlp) -> SGD[Mlp]:
    return SGD(m, lr=0.1, momentum=0.9, groups=Group(max_rank=1, momentum=0.5, dampening=0.1))

fn make_named_groups(m: Mlp) -> SGD[Mlp]:
    return SGD(m, lr=0.1, momentum=0.9, groups=(Group(names="w2", lr=0.01), Group(max_rank=1, weight_decay=0.5)))

fn rmsprop_step(mut m: Mlp, mut opt: RMSprop[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn adagrad_step(mut m: Mlp, mut opt: Adagrad[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn adadelta_step(mut m: Mlp, mut opt: Adadelta[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn adamw_step(mut m: Mlp, mut opt: AdamW[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn sgd_step(mut m: Mlp, mut opt: SGD[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn lbfgs_step(mut m: Mlp, mut opt: LBFGS[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return opt.step(m, loss, x, y)

fn clipped_step(mut m: Mlp, mut opt: SGD[Mlp], x: [b D], y: [b] Index[C], max_norm: Float) -> [] Float:
    g, total = clip_grad_norm(grad(loss, m, x, y), max_norm)
    opt.step(m, g)
    return total

fn clip(m: Mlp, x: [b D], y: [b] Index[C], max_norm: Float, p: Float) -> (Grad[Mlp], [] Float):
    return clip_grad_norm(grad(loss, m, x, y), max_norm, norm_type=p)

fn clip_grad(g: Grad[Mlp]) -> (Grad[Mlp], [] Float):
    return clip_grad_norm(g, 1.0)

fn clip_strict(g: Grad[Mlp]) -> [] Float:
    clipped, total = clip_grad_norm(g, 1.0, error_if_nonfinite=True)
    return total

fn set_lr(mut opt: AdamW[Mlp], lr: Float):
    opt.lr = lr
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("optim_more") / "optim_more.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


def _data():
    gen = torch.Generator().manual_seed(3)
    return torch.randn(16, 6, generator=gen), torch.randint(0, 3, (16,), generator=gen)


class _Torch(torch.nn.Module):
    """The same network as an nn.Module, with the Quiver model's initial values."""

    def __init__(self, m) -> None:
        super().__init__()
        self.w1 = torch.nn.Parameter(m.w1.detach().clone())
        self.b1 = torch.nn.Parameter(m.b1.detach().clone())
        self.w2 = torch.nn.Parameter(m.w2.detach().clone())
        self.b2 = torch.nn.Parameter(m.b2.detach().clone())


def _copy(m):
    """The module's parameters, in registration order (w1, b1, w2, b2)."""
    return list(_Torch(m).parameters())


def _ref_loss(ps, x, y):
    w1, b1, w2, b2 = ps
    return F.cross_entropy(torch.tanh(x @ w1 + b1) @ w2 + b2, y)


def _torch_step(opt, ps, x, y):
    opt.zero_grad()
    _ref_loss(ps, x, y).backward()
    opt.step()


def _assert_params(m, ps) -> None:
    for ours, ref in zip((m.w1, m.b1, m.w2, m.b2), ps):
        torch.testing.assert_close(ours, ref.detach(), rtol=1e-6, atol=1e-6)


CASES = {
    "rmsprop": (
        "make_rmsprop",
        "rmsprop_step",
        lambda ps: torch.optim.RMSprop(
            ps, lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.01, momentum=0.8, centered=True
        ),
    ),
    "rmsprop_defaults": ("make_rmsprop_plain", "rmsprop_step", lambda ps: torch.optim.RMSprop(ps)),
    "adagrad": (
        "make_adagrad",
        "adagrad_step",
        lambda ps: torch.optim.Adagrad(
            ps, lr=0.1, lr_decay=0.01, weight_decay=0.001, initial_accumulator_value=0.1, eps=1e-9
        ),
    ),
    "adadelta": (
        "make_adadelta",
        "adadelta_step",
        lambda ps: torch.optim.Adadelta(ps, lr=1.0, rho=0.95, eps=1e-5, weight_decay=0.01),
    ),
    # nanoGPT's groups: weight decay for the 2-D params only
    "adamw_groups": (
        "make_grouped",
        "adamw_step",
        lambda ps: torch.optim.AdamW(
            [
                {"params": [p for p in ps if p.dim() >= 2], "weight_decay": 0.1},
                {"params": [p for p in ps if p.dim() < 2], "weight_decay": 0.0},
            ],
            lr=0.01,
            betas=(0.9, 0.95),
        ),
    ),
    # every kind of group value against torch's param_groups (ps: w1, b1, w2, b2)
    "rmsprop_groups": (
        "make_rmsprop_groups",
        "rmsprop_step",
        lambda ps: torch.optim.RMSprop(
            [{"params": [ps[1], ps[3]]}, {"params": [ps[0], ps[2]], "lr": 0.001, "alpha": 0.9}], momentum=0.5
        ),
    ),
    "adagrad_groups": (
        "make_adagrad_groups",
        "adagrad_step",
        lambda ps: torch.optim.Adagrad(
            [{"params": [ps[0], ps[2]]}, {"params": [ps[1], ps[3]], "lr_decay": 0.1, "eps": 1e-6}], lr=0.1
        ),
    ),
    "adadelta_groups": (
        "make_adadelta_groups",
        "adadelta_step",
        lambda ps: torch.optim.Adadelta(
            [{"params": [ps[1], ps[3]]}, {"params": [ps[0], ps[2]], "rho": 0.5, "weight_decay": 0.01}]
        ),
    ),
    "adamw_betas_groups": (
        "make_adamw_betas_groups",
        "adamw_step",
        lambda ps: torch.optim.AdamW(
            [
                {"params": [ps[0], ps[2]]},
                {"params": [ps[1], ps[3]], "betas": (0.5, 0.9), "eps": 0.001, "weight_decay": 0.0},
            ],
            lr=0.01,
        ),
    ),
    "sgd_momentum_groups": (
        "make_sgd_momentum_groups",
        "sgd_step",
        lambda ps: torch.optim.SGD(
            [{"params": [ps[0], ps[2]]}, {"params": [ps[1], ps[3]], "momentum": 0.5, "dampening": 0.1}],
            lr=0.1,
            momentum=0.9,
        ),
    ),
    # group 0: w1; group 1 (names="w2"): lr 0.01; group 2 (rank <= 1): weight decay 0.5
    "sgd_named_groups": (
        "make_named_groups",
        "sgd_step",
        lambda ps: torch.optim.SGD(
            [{"params": [ps[0]]}, {"params": [ps[2]], "lr": 0.01}, {"params": [ps[1], ps[3]], "weight_decay": 0.5}],
            lr=0.1,
            momentum=0.9,
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_20_steps_equal_torch_optim(mod, case) -> None:
    make, step, torch_opt = CASES[case]
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    ps = _copy(m)
    opt = getattr(mod, make)(m)
    ref = torch_opt(ps)
    for _ in range(20):
        getattr(mod, step)(m, opt, x, y)
        _torch_step(ref, ps, x, y)
    _assert_params(m, ps)
    assert opt.steps == 20


def test_state_fields_equal_torchs(mod) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    ps = _copy(m)
    opt = mod.make_rmsprop(m)
    ref = CASES["rmsprop"][2](ps)
    for _ in range(5):
        mod.rmsprop_step(m, opt, x, y)
        _torch_step(ref, ps, x, y)
    torch.testing.assert_close(opt.square_avg.w1, ref.state[ps[0]]["square_avg"], rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(opt.grad_avg.b2, ref.state[ps[3]]["grad_avg"], rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(opt.momentum_buffer.w2, ref.state[ps[2]]["momentum_buffer"], rtol=1e-6, atol=1e-9)
    m2 = mod.Mlp.init(seed=0)
    ps2 = _copy(m2)
    ada = mod.make_adadelta(m2)
    ref2 = CASES["adadelta"][2](ps2)
    for _ in range(5):
        mod.adadelta_step(m2, ada, x, y)
        _torch_step(ref2, ps2, x, y)
    torch.testing.assert_close(ada.acc_delta.w1, ref2.state[ps2[0]]["acc_delta"], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    ("make", "torch_opt"),
    [
        ("make_lbfgs", lambda ps: torch.optim.LBFGS(ps, lr=0.5, max_iter=5, history_size=4)),
        ("make_lbfgs_wolfe", lambda ps: torch.optim.LBFGS(ps, max_iter=4, line_search_fn="strong_wolfe")),
    ],
)
def test_lbfgs_20_steps_equal_torch_and_evaluate_f_as_often(mod, make, torch_opt) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=1)
    ps = _copy(m)
    opt = getattr(mod, make)(m)
    ref = torch_opt(ps)
    calls = 0

    def closure():
        nonlocal calls
        calls += 1
        ref.zero_grad()
        value = _ref_loss(ps, x, y)
        value.backward()
        return value

    for _ in range(20):
        ours = mod.lbfgs_step(m, opt, x, y)
        theirs = ref.step(closure)
        assert float(ours) == pytest.approx(theirs.item(), rel=1e-6, abs=1e-7)  # the step's first loss
    _assert_params(m, ps)
    state = ref.state[ps[0]]
    assert (opt.func_evals, opt.n_iter, opt.steps) == (state["func_evals"], state["n_iter"], 20)
    assert opt.func_evals == calls
    assert all(p.grad is None for p in (m.w1, m.b1, m.w2, m.b2))  # .grad is left as it was


@pytest.mark.parametrize("p", [2.0, math.inf, 1.0, 3.0])
@pytest.mark.parametrize("max_norm", [0.05, 100.0])
def test_clip_grad_norm_equals_torch(mod, p, max_norm) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    g, total = mod.clip(m, x, y, max_norm, p)
    ps = _copy(m)
    _ref_loss(ps, x, y).backward()
    ref_total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=p)
    assert torch.equal(total, ref_total)
    for name, ref in zip(("w1", "b1", "w2", "b2"), ps):
        assert torch.equal(g[name], ref.grad)


def test_clip_grad_norm_in_a_training_loop_equals_torch(mod) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=2)
    ps = _copy(m)
    opt = rt.SGD(m, lr=0.5, momentum=0.9)
    ref = torch.optim.SGD(ps, lr=0.5, momentum=0.9)
    for _ in range(20):
        total = mod.clipped_step(m, opt, x, y, 0.1)
        ref.zero_grad()
        _ref_loss(ps, x, y).backward()
        ref_total = torch.nn.utils.clip_grad_norm_(ps, 0.1)
        ref.step()
        torch.testing.assert_close(total, ref_total, rtol=1e-6, atol=1e-7)
    _assert_params(m, ps)


def test_clip_grad_norm_leaves_its_argument_as_it_was(mod) -> None:
    """Unlike torch's in-place clip_grad_norm_, the gradient given keeps its
    values (a Grad is a value); the clipped one equals torch's."""
    m = mod.Mlp.init(seed=0)
    big = {"w1": torch.full((6, 5), 2.0), "b1": torch.ones(5), "w2": torch.ones(5, 3), "b2": torch.ones(3)}
    g = rt.Grad(type(m), {k: v.clone() for k, v in big.items()})
    clipped, total = mod.clip_grad(g)
    for name, v in big.items():
        assert torch.equal(g[name], v), name
    ps = []
    for name in ("w1", "b1", "w2", "b2"):
        p = torch.zeros_like(big[name], requires_grad=True)
        p.grad = big[name].clone()
        ps.append(p)
    ref_total = torch.nn.utils.clip_grad_norm_(ps, 1.0)
    assert torch.equal(total, ref_total)
    for name, p in zip(("w1", "b1", "w2", "b2"), ps):
        assert torch.equal(clipped[name], p.grad), name


def test_clip_grad_norm_error_if_nonfinite_as_torch(mod) -> None:
    m = mod.Mlp.init(seed=0)
    ones = {"w1": torch.ones(6, 5), "b1": torch.ones(5), "w2": torch.ones(5, 3), "b2": torch.ones(3)}
    assert float(mod.clip_strict(rt.Grad(type(m), ones))) == pytest.approx(math.sqrt(6 * 5 + 5 + 5 * 3 + 3))
    bad = rt.Grad(type(m), {**ones, "w1": torch.full((6, 5), math.inf)})
    with pytest.raises(rt.OptimError, match=r"clip_grad_norm: the total norm of order 2.0 of the gradient is inf"):
        mod.clip_strict(bad)
    # torch refuses the same gradient (its values as .grad of params of the same shapes)
    ps = []
    for name in ("w1", "b1", "w2", "b2"):
        p = torch.zeros_like(ones[name], requires_grad=True)
        p.grad = bad[name].clone()
        ps.append(p)
    with pytest.raises(RuntimeError, match="non-finite"):
        torch.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)


def test_setting_lr_sets_every_groups_lr(mod) -> None:
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    ps = _copy(m)
    opt = mod.make_named_groups(m)
    ref = CASES["sgd_named_groups"][2](ps)
    for i in range(10):
        if i == 5:
            opt.lr = 0.03
            for group in ref.param_groups:
                group["lr"] = 0.03
        mod.sgd_step(m, opt, x, y)
        _torch_step(ref, ps, x, y)
    _assert_params(m, ps)


def test_a_group_that_selects_nothing_at_run_time_is_an_error(mod) -> None:
    m = mod.Mlp.init(seed=0)
    with pytest.raises(
        rt.OptimError,
        match=r"Adam\[Mlp\]: Group\(names='nope', lr=0.1\) selects no param of Mlp \(params: w1, b1, w2, b2\)",
    ):
        rt.Adam(m, groups=rt.Group(names="nope", lr=0.1))
    with pytest.raises(rt.OptimError, match=r"Adagrad\[Mlp\]: Group\(max_rank=1, momentum=0.9\) sets momentum"):
        rt.Adagrad(m, groups=rt.Group(max_rank=1, momentum=0.9))


# --- the checkpoint protocol ------------------------------------------------------------------

ROUND_TRIP = {
    "rmsprop": ("make_rmsprop", "rmsprop_step"),
    "adagrad": ("make_adagrad", "adagrad_step"),
    "adadelta": ("make_adadelta", "adadelta_step"),
    "rmsprop_groups": ("make_rmsprop_groups", "rmsprop_step"),
    "lbfgs": ("make_lbfgs", "lbfgs_step"),
    "lbfgs_wolfe": ("make_lbfgs_wolfe", "lbfgs_step"),
}


def _through_torch_save(d):
    buf = io.BytesIO()
    torch.save(d, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


@pytest.mark.parametrize("case", sorted(ROUND_TRIP))
def test_a_state_dict_round_trips_bit_for_bit(mod, case) -> None:
    make, step = ROUND_TRIP[case]
    x, y = _data()
    m = mod.Mlp.init(seed=0)
    opt = getattr(mod, make)(m)
    for _ in range(4):
        getattr(mod, step)(m, opt, x, y)
    saved_params = {k: getattr(m, k).clone() for k in ("w1", "b1", "w2", "b2")}
    d = _through_torch_save(opt._qv_state_dict())
    for _ in range(3):
        getattr(mod, step)(m, opt, x, y)
    after = {k: getattr(m, k).clone() for k in ("w1", "b1", "w2", "b2")}
    # a fresh model with the saved params, a fresh optimizer with the saved state
    m2 = mod.Mlp.init(seed=5)
    for k, v in saved_params.items():
        getattr(m2, k).copy_(v)
    opt2 = getattr(mod, make)(m2)
    opt2._qv_load_state_dict(d, "ckpt.pt: opt")
    assert opt2.steps == 4
    for _ in range(3):
        getattr(mod, step)(m2, opt2, x, y)
    for k, v in after.items():
        assert torch.equal(getattr(m2, k), v), k


def test_loading_a_state_that_does_not_fit_names_where(mod) -> None:
    m = mod.Mlp.init(seed=0)
    d = mod.make_rmsprop(m)._qv_state_dict()
    with pytest.raises(rt.OptimError, match=r"ckpt.pt: opt.*Adagrad\[Mlp\]"):
        mod.make_adagrad(m)._qv_load_state_dict(d, "ckpt.pt: opt")
    with pytest.raises(rt.OptimError, match=r"ckpt.pt: opt: .*RMSprop\[Mlp\].*param groups \(none\) differ"):
        mod.make_rmsprop(m)._qv_load_state_dict(mod.make_rmsprop_groups(m)._qv_state_dict(), "ckpt.pt: opt")
    d["state"]["square_avg"]["w1"] = torch.zeros(2, 2)
    with pytest.raises(rt.OptimError, match=r"ckpt.pt: opt: .*square_avg of w1"):
        mod.make_rmsprop(m)._qv_load_state_dict(d, "ckpt.pt: opt")
    # a group's saved values come from the file: only hyper-parameters, checked as keywords are
    g = mod.make_rmsprop_groups(m)._qv_state_dict()
    g["groups"][1]["overrides"]["params"] = 3
    with pytest.raises(rt.OptimError, match=r"ckpt.pt: opt: .*are not hyper-parameters of RMSprop"):
        mod.make_rmsprop_groups(m)._qv_load_state_dict(g, "ckpt.pt: opt")
    g = mod.make_rmsprop_groups(m)._qv_state_dict()
    g["groups"][1]["overrides"]["alpha"] = -1.0
    with pytest.raises(rt.OptimError, match=r"alpha must be >= 0"):
        mod.make_rmsprop_groups(m)._qv_load_state_dict(g, "ckpt.pt: opt")
    lb = mod.make_lbfgs(m)._qv_state_dict()
    with pytest.raises(rt.OptimError, match=r"ckpt.pt: opt: cannot load the state of LBFGS\[Mlp\]"):
        mod.make_lbfgs(m)._qv_load_state_dict({"kind": "Adam"}, "ckpt.pt: opt")
    assert lb["kind"] == "LBFGS"


@pytest.mark.parametrize("kind", ["RMSprop", "Adagrad", "Adadelta", "LBFGS"])
def test_the_checker_and_the_runtime_agree_with_torch_on_hyper_parameters(kind) -> None:
    """The checker's table (hover, docs) and the runtime's signature name
    torch's hyper-parameters with torch's defaults."""
    import inspect

    from quiver.checker import types as T

    ours = inspect.signature(getattr(rt, kind)).parameters
    theirs = inspect.signature(getattr(torch.optim, kind)).parameters
    hyper = T.OPTIMIZERS[kind][0]
    assert [n for n, _, _ in hyper] == [n for n in ours if n not in ("m", "groups")]
    for name, _, default in hyper:
        assert ours[name].default == eval(default) == theirs[name].default, name
