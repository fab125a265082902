"""Learning-rate schedules written in Quiver (`sched = StepLR(opt, ...)`,
`sched.step(opt)`), compiled and run step by step against
torch.optim.lr_scheduler (issue 26): 60+ steps each, the optimizer's lr (and
OneCycleLR's momentum / beta1) compared at every step; and the checkpoint
protocol of each schedule."""

from __future__ import annotations

import io

import pytest
import torch
from torch.optim import lr_scheduler as L

import quiver
from quiver import runtime as rt

SRC = """
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = normal(0.0, 0.5)
    param b: [C] = zeros

fn sgd(m: Lin) -> SGD[Lin]:
    return SGD(m, lr=0.1, momentum=0.9)

fn adamw(m: Lin) -> AdamW[Lin]:
    return AdamW(m, lr=0.001, betas=(0.9, 0.99))

fn rmsprop(m: Lin) -> RMSprop[Lin]:
    return RMSprop(m, lr=0.01, momentum=0.9)

fn one_cycle_rmsprop(mut opt: RMSprop[Lin]) -> OneCycleLR:
    return OneCycleLR(opt, max_lr=0.1, total_steps=70, base_momentum=0.8, max_momentum=0.9)

fn advance_one_rmsprop(mut opt: RMSprop[Lin], mut sched: OneCycleLR):
    sched.step(opt)

fn one_cycle_flat(mut opt: SGD[Lin]) -> OneCycleLR:
    return OneCycleLR(opt, max_lr=1.0, total_steps=70, cycle_momentum=False)

fn grouped(m: Lin) -> SGD[Lin]:
    return SGD(m, lr=0.1, momentum=0.9, groups=Group(max_rank=1, lr=0.5))

fn step_lr(mut opt: SGD[Lin]) -> StepLR:
    return StepLR(opt, step_size=7, gamma=0.5)

fn multi_step_lr(mut opt: SGD[Lin]) -> MultiStepLR:
    return MultiStepLR(opt, milestones=(5, 20, 33), gamma=0.3)

fn exponential_lr(mut opt: SGD[Lin]) -> ExponentialLR:
    return ExponentialLR(opt, gamma=0.95)

fn cosine_lr(mut opt: SGD[Lin]) -> CosineAnnealingLR:
    return CosineAnnealingLR(opt, T_max=20, eta_min=0.001)

fn linear_lr(mut opt: SGD[Lin]) -> LinearLR:
    return LinearLR(opt, start_factor=0.1, end_factor=0.9, total_iters=30)

fn one_cycle(mut opt: SGD[Lin]) -> OneCycleLR:
    return OneCycleLR(opt, max_lr=1.0, total_steps=70)

fn one_cycle_adamw(mut opt: AdamW[Lin]) -> OneCycleLR:
    return OneCycleLR(opt, max_lr=0.01, total_steps=70, pct_start=0.25, anneal_strategy="linear", three_phase=True)

fn warmup_cosine(mut opt: SGD[Lin]) -> WarmupCosineLR:
    return WarmupCosineLR(opt, warmup_steps=10, total_steps=60, start_factor=0.01, eta_min=1e-5)

fn warmup_cosine_adamw(mut opt: AdamW[Lin]) -> WarmupCosineLR:
    return WarmupCosineLR(opt, warmup_steps=5, total_steps=65)

fn advance_sgd(mut opt: SGD[Lin], mut sched: StepLR) -> Float:
    sched.step(opt)
    return sched.lr

fn advance(mut opt: SGD[Lin], mut sched: MultiStepLR):
    sched.step(opt)

fn advance_exp(mut opt: SGD[Lin], mut sched: ExponentialLR):
    sched.step(opt)

fn advance_cos(mut opt: SGD[Lin], mut sched: CosineAnnealingLR):
    sched.step(opt)

fn advance_lin(mut opt: SGD[Lin], mut sched: LinearLR):
    sched.step(opt)

fn advance_one(mut opt: SGD[Lin], mut sched: OneCycleLR):
    sched.step(opt)

fn advance_one_adamw(mut opt: AdamW[Lin], mut sched: OneCycleLR):
    sched.step(opt)

fn advance_warm(mut opt: SGD[Lin], mut sched: WarmupCosineLR):
    sched.step(opt)

fn advance_warm_adamw(mut opt: AdamW[Lin], mut sched: WarmupCosineLR) -> Int:
    sched.step(opt)
    return sched.last_epoch

fn manual(mut opt: SGD[Lin], mut sched: StepLR, lr: Float):
    opt.lr = lr
    sched.step(opt)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("schedules") / "schedules.qv"
    path.write_text(SRC)
    return quiver.load(str(path))


def _torch_opt(kind):
    ps = [torch.zeros(4, 3, requires_grad=True), torch.zeros(3, requires_grad=True)]
    if kind == "sgd":
        return torch.optim.SGD(ps, lr=0.1, momentum=0.9)
    if kind == "rmsprop":
        return torch.optim.RMSprop(ps, lr=0.01, momentum=0.9)
    if kind == "grouped":
        return torch.optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}], lr=0.1, momentum=0.9)
    return torch.optim.AdamW(ps, lr=0.001, betas=(0.9, 0.99))


def _torch_step(opt, sched):
    opt.step()  # no gradients: the params stay; the order torch wants
    sched.step()


def _warmup_cosine(opt, warmup, total, start_factor=1.0 / 3, eta_min=0.0):
    return L.SequentialLR(
        opt,
        [
            L.LinearLR(opt, start_factor=start_factor, end_factor=1.0, total_iters=warmup),
            L.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=eta_min),
        ],
        milestones=[warmup],
    )


CASES = {
    "step": ("sgd", "step_lr", "advance_sgd", lambda o: L.StepLR(o, step_size=7, gamma=0.5)),
    "multi_step": ("sgd", "multi_step_lr", "advance", lambda o: L.MultiStepLR(o, milestones=[5, 20, 33], gamma=0.3)),
    "exponential": ("sgd", "exponential_lr", "advance_exp", lambda o: L.ExponentialLR(o, gamma=0.95)),
    "cosine": ("sgd", "cosine_lr", "advance_cos", lambda o: L.CosineAnnealingLR(o, T_max=20, eta_min=0.001)),
    "linear": (
        "sgd",
        "linear_lr",
        "advance_lin",
        lambda o: L.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=30),
    ),
    "one_cycle": ("sgd", "one_cycle", "advance_one", lambda o: L.OneCycleLR(o, max_lr=1.0, total_steps=70)),
    "one_cycle_adamw": (
        "adamw",
        "one_cycle_adamw",
        "advance_one_adamw",
        lambda o: L.OneCycleLR(
            o, max_lr=0.01, total_steps=70, pct_start=0.25, anneal_strategy="linear", three_phase=True
        ),
    ),
    # OneCycleLR moves RMSprop's momentum too; with cycle_momentum=False it moves none
    "one_cycle_rmsprop": (
        "rmsprop",
        "one_cycle_rmsprop",
        "advance_one_rmsprop",
        lambda o: L.OneCycleLR(o, max_lr=0.1, total_steps=70, base_momentum=0.8, max_momentum=0.9),
    ),
    "one_cycle_flat": (
        "sgd",
        "one_cycle_flat",
        "advance_one",
        lambda o: L.OneCycleLR(o, max_lr=1.0, total_steps=70, cycle_momentum=False),
    ),
    "warmup_cosine": (
        "sgd",
        "warmup_cosine",
        "advance_warm",
        lambda o: _warmup_cosine(o, 10, 60, start_factor=0.01, eta_min=1e-5),
    ),
    "warmup_cosine_adamw": ("adamw", "warmup_cosine_adamw", "advance_warm_adamw", lambda o: _warmup_cosine(o, 5, 65)),
}


def _momentum(opt):
    return opt.betas[0] if isinstance(opt, rt.Adam) else opt.momentum


def _torch_momentum(opt):
    g = opt.param_groups[0]
    return g["betas"][0] if "betas" in g else g["momentum"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_step_equals_torchs_scheduler(mod, case) -> None:
    kind, make, advance, torch_sched = CASES[case]
    m = mod.Lin.init(seed=0)
    opt = getattr(mod, kind)(m)
    sched = getattr(mod, make)(opt)
    ref = _torch_opt(kind)
    ref_sched = torch_sched(ref)
    for i in range(70):
        # the lr of step i: set by creation (i = 0) or by the step before
        assert opt.lr == ref.param_groups[0]["lr"], (case, i)
        assert sched.lr == ref_sched.get_last_lr()[0], (case, i)
        assert _momentum(opt) == _torch_momentum(ref), (case, i)
        assert sched.last_epoch == ref_sched.last_epoch == i
        if case.startswith("one_cycle") and i == 69:
            break  # OneCycleLR's total_steps: one step more is torch's error too
        getattr(mod, advance)(opt, sched)
        _torch_step(ref, ref_sched)


def test_one_cycle_past_its_total_steps_is_an_error_as_in_torch(mod) -> None:
    m = mod.Lin.init(seed=0)
    opt = mod.sgd(m)
    sched = mod.one_cycle(opt)
    for _ in range(70):
        mod.advance_one(opt, sched)
    ref = _torch_opt("sgd")
    ref_sched = L.OneCycleLR(ref, max_lr=1.0, total_steps=70)
    with pytest.raises(ValueError, match="Tried to step 71 times"):
        for _ in range(71):
            _torch_step(ref, ref_sched)
    assert sched.last_epoch == 70


def test_setting_opt_lr_between_steps_acts_as_in_torch(mod) -> None:
    m = mod.Lin.init(seed=0)
    opt = mod.sgd(m)
    sched = mod.step_lr(opt)
    ref = _torch_opt("sgd")
    ref_sched = L.StepLR(ref, step_size=7, gamma=0.5)
    for i in range(60):
        lr = 0.2 if i % 9 == 0 else opt.lr
        mod.manual(opt, sched, lr)
        ref.param_groups[0]["lr"] = lr
        _torch_step(ref, ref_sched)
        assert opt.lr == ref.param_groups[0]["lr"], i


def test_a_schedule_sets_each_param_groups_lr_as_torch(mod) -> None:
    m = mod.Lin.init(seed=0)
    opt = mod.grouped(m)
    sched = rt.WarmupCosineLR(opt, warmup_steps=5, total_steps=60)
    w, b = m.w.clone().requires_grad_(True), m.b.clone().requires_grad_(True)
    ref = torch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    ref_sched = _warmup_cosine(ref, 5, 60)
    g = torch.ones(4, 3), torch.ones(3)
    for i in range(60):
        opt.step(m, rt.Grad(type(m), {"w": g[0], "b": g[1]}))
        for p, v in zip(ref.param_groups, g):
            p["params"][0].grad = v.clone()
        _torch_step(ref, ref_sched)
        sched.step(opt)
        assert [opt.lr, opt._qv_groups[1][1]["lr"]] == [p["lr"] for p in ref.param_groups], i
    torch.testing.assert_close(m.w, ref.param_groups[0]["params"][0].detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(m.b, ref.param_groups[1]["params"][0].detach(), rtol=1e-6, atol=1e-6)


def test_a_schedule_steps_only_its_optimizer(mod) -> None:
    m = mod.Lin.init(seed=0)
    opt, other = mod.sgd(m), mod.sgd(m)
    sched = mod.step_lr(opt)
    with pytest.raises(rt.OptimError, match=r"StepLR.step: expected the optimizer SGD\[Lin\] it was created with"):
        sched.step(other)
    with pytest.raises(rt.CheckError, match=r"argument 'sched' expected StepLR, found MultiStepLR"):
        mod.advance_sgd(opt, mod.multi_step_lr(opt))
    with pytest.raises(rt.OptimError, match="has no momentum or betas"):
        rt.OneCycleLR(rt.Adagrad(m), max_lr=0.1, total_steps=10)


def _through_torch_save(d):
    buf = io.BytesIO()
    torch.save(d, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_state_dict_round_trips_bit_for_bit(mod, case) -> None:
    kind, make, advance, _ = CASES[case]
    m = mod.Lin.init(seed=0)
    opt = getattr(mod, kind)(m)
    sched = getattr(mod, make)(opt)
    for _ in range(23):
        getattr(mod, advance)(opt, sched)
    d = _through_torch_save(sched._qv_state_dict())
    lr, mom = opt.lr, _momentum(opt)
    expected = []
    for _ in range(20):
        getattr(mod, advance)(opt, sched)
        expected.append((opt.lr, _momentum(opt), sched.last_epoch))
    opt2 = getattr(mod, kind)(mod.Lin.init(seed=0))
    sched2 = getattr(mod, make)(opt2)
    sched2._qv_load_state_dict(d, "ckpt.pt: sched")
    # the optimizer's own state (lr, momentum) comes from its checkpoint
    object.__setattr__(opt2, "_qv_lr", lr)
    if isinstance(opt2, rt.Adam):
        object.__setattr__(opt2, "_qv_betas", (mom, opt2.betas[1]))
    else:
        object.__setattr__(opt2, "_qv_momentum", mom)
    assert sched2.last_epoch == 23
    got = []
    for _ in range(20):
        getattr(mod, advance)(opt2, sched2)
        got.append((opt2.lr, _momentum(opt2), sched2.last_epoch))
    assert got == expected


def test_loading_another_schedules_state_names_where(mod) -> None:
    m = mod.Lin.init(seed=0)
    opt = mod.sgd(m)
    d = mod.step_lr(opt)._qv_state_dict()
    with pytest.raises(
        rt.OptimError, match=r"ckpt.pt: sched: cannot load the state of MultiStepLR: the saved schedule is 'StepLR'"
    ):
        mod.multi_step_lr(opt)._qv_load_state_dict(d, "ckpt.pt: sched")
    with pytest.raises(rt.OptimError, match=r"ckpt.pt: sched: cannot load the state of StepLR: 2 param groups"):
        mod.step_lr(mod.grouped(m))._qv_load_state_dict(d, "ckpt.pt: sched")
