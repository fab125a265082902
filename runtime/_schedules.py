"""Learning-rate schedules: ``rt.StepLR``, ``rt.MultiStepLR``, ``rt.ExponentialLR``,
``rt.CosineAnnealingLR``, ``rt.LinearLR``, ``rt.OneCycleLR``, ``rt.WarmupCosineLR``.

A schedule belongs to one optimizer (``sched = StepLR(opt, step_size=30)``);
``sched.step(opt)`` advances it and sets the optimizer's learning rate (and,
for OneCycleLR with cycle_momentum, its momentum or beta1).

The arithmetic is torch.optim.lr_scheduler's own: each schedule drives the
torch scheduler of the same name on a stand-in torch optimizer with one param
group per param group of ``opt``.  Before every step the stand-in's groups take
``opt``'s current values (so ``opt.lr = e`` between steps acts as it does on
torch's optimizer), after it ``opt`` takes the stand-in's.  Creating a schedule
takes torch's initial step, which already sets the learning rate for step 0
(LinearLR starts at ``start_factor * lr``, OneCycleLR at ``max_lr / div_factor``).

``WarmupCosineLR(opt, warmup_steps, total_steps, start_factor, eta_min)`` is
torch's ``SequentialLR([LinearLR(opt, start_factor, 1.0, warmup_steps),
CosineAnnealingLR(opt, total_steps - warmup_steps, eta_min)], [warmup_steps])``.
"""

from __future__ import annotations

import collections

import torch
from torch.optim import lr_scheduler as _ls

from ._errors import OptimError
from ._optim import Optimizer, _found
from ._optim_groups import group_count, group_value, set_group_value
from ._specs import ArgSpec, describe


def _momentum_kind(opt) -> str | None:
    if "betas" in type(opt)._qv_hyper:
        return "betas"
    if "momentum" in type(opt)._qv_hyper:
        return "momentum"
    return None


def _plain(x):
    """A torch scheduler's state as data torch.load(weights_only=True) reads."""
    if isinstance(x, collections.Counter):
        return {"__counter__": [[k, v] for k, v in x.items()]}
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


def _unplain(x):
    if isinstance(x, dict):
        if set(x) == {"__counter__"}:
            return collections.Counter(dict(x["__counter__"]))
        return {k: _unplain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_unplain(v) for v in x]
    return x


class Schedule:
    """Base class of the schedules."""

    __slots__ = ("_qv_opt", "_qv_dummy", "_qv_sched", "_qv_args", "_qv_mkind")
    _qv_kind = "Schedule"
    _qv_hyper: tuple = ()

    def __init__(self, opt, **kw):
        kind = type(self)._qv_kind
        if not isinstance(opt, Optimizer):
            raise OptimError(f"rt.{kind}(opt, ...) needs an optimizer, found {_found(opt)}")
        s = object.__setattr__
        s(self, "_qv_opt", opt)
        s(self, "_qv_args", dict(kw))
        s(self, "_qv_mkind", _momentum_kind(opt))
        groups = [{"params": [torch.zeros(1)], "lr": group_value(opt, k, "lr")} for k in range(group_count(opt))]
        dummy = torch.optim.SGD(groups, lr=opt._qv_lr)
        mk = self._qv_mkind
        dummy.defaults.pop("momentum", None)
        for k, g in enumerate(dummy.param_groups):
            g.pop("momentum", None)
            if mk is not None:
                g[mk] = group_value(opt, k, mk)
        if mk is not None:
            dummy.defaults[mk] = group_value(opt, 0, mk)
        s(self, "_qv_dummy", dummy)
        try:
            sched = self._qv_make(dummy, **kw)
        except (ValueError, TypeError, ZeroDivisionError) as e:
            raise OptimError(f"{kind}: {e}") from None
        s(self, "_qv_sched", sched)
        self._qv_push()

    def _qv_make(self, dummy, **kw):  # pragma: no cover - abstract
        raise NotImplementedError

    def _qv_pull(self) -> None:
        opt = self._qv_opt
        mk = self._qv_mkind
        for k, g in enumerate(self._qv_dummy.param_groups):
            g["lr"] = group_value(opt, k, "lr")
            if mk is not None:
                g[mk] = group_value(opt, k, mk)

    def _qv_push(self) -> None:
        opt = self._qv_opt
        mk = self._qv_mkind
        moves_momentum = isinstance(self, OneCycleLR) and self._qv_args.get("cycle_momentum", True)
        for k, g in enumerate(self._qv_dummy.param_groups):
            set_group_value(opt, k, "lr", float(g["lr"]))
            if moves_momentum and mk is not None:
                v = g[mk]
                set_group_value(opt, k, mk, (float(v[0]), float(v[1])) if mk == "betas" else float(v))

    def step(self, opt) -> None:
        """Advance one step and set ``opt``'s learning rate (``opt`` must be the
        optimizer this schedule was created with)."""
        if opt is not self._qv_opt:
            mine = self._qv_opt._qv_kind_text()
            found = _found(opt)
            if isinstance(opt, Optimizer):
                found += " (another optimizer than the one it was created with)"
            raise OptimError(
                f"{type(self)._qv_kind}.step: expected the optimizer {mine} it was created with, found {found}"
            )
        self._qv_pull()
        self._qv_dummy._opt_called = True  # the optimizer has stepped (torch warns otherwise)
        self._qv_sched.step()
        self._qv_push()

    @property
    def lr(self) -> float:
        """The learning rate the last step set (of the first param group)."""
        return float(self._qv_sched.get_last_lr()[0])

    @property
    def last_epoch(self) -> int:
        """How many steps have been taken (0 right after creation)."""
        return int(self._qv_sched.last_epoch)

    @property
    def optimizer(self):
        return self._qv_opt

    def __getattr__(self, name):
        args = object.__getattribute__(self, "_qv_args")
        if name in type(self)._qv_hyper:
            return args[name]
        raise AttributeError(f"{type(self)._qv_kind} has no field {name!r}")

    def __setattr__(self, name, value):
        raise OptimError(f"cannot set {name!r} of {type(self)._qv_kind}: a schedule changes only by step")

    def __repr__(self) -> str:
        hyper = ", ".join(f"{h}={getattr(self, h)!r}" for h in type(self)._qv_hyper)
        return f"{type(self)._qv_kind}({hyper}, last_epoch={self.last_epoch}, lr={self.lr!r})"

    def __reduce__(self):
        raise OptimError(f"a {type(self)._qv_kind} cannot be pickled")

    # --- the checkpoint protocol ---------------------------------------------------

    def _qv_state_dict(self) -> dict:
        groups = [{k: v for k, v in g.items() if k != "params"} for g in self._qv_dummy.param_groups]
        return {"kind": type(self)._qv_kind, "torch": _plain(self._qv_sched.state_dict()), "groups": _plain(groups)}

    def _qv_load_state_dict(self, d: dict, where: str) -> None:
        kind = type(self)._qv_kind
        if not isinstance(d, dict) or "torch" not in d or "groups" not in d:
            raise OptimError(f"{where}: cannot load the state of {kind}: not the state of a schedule")
        if d.get("kind") != kind:
            raise OptimError(f"{where}: cannot load the state of {kind}: the saved schedule is {d.get('kind')!r}")
        saved = _unplain(d["torch"])
        mine = self._qv_sched.state_dict()
        if set(saved) != set(mine):
            raise OptimError(f"{where}: cannot load the state of {kind}: its fields differ from the saved ones")
        groups = d["groups"]
        if not isinstance(groups, list) or len(groups) != len(self._qv_dummy.param_groups):
            raise OptimError(
                f"{where}: cannot load the state of {kind}: {len(self._qv_dummy.param_groups)} param groups, "
                f"the saved schedule has {len(groups) if isinstance(groups, list) else '?'}"
            )
        self._qv_sched.load_state_dict(saved)
        for g, h in zip(self._qv_dummy.param_groups, groups):
            g.update(_unplain(h))


class StepLR(Schedule):
    """lr * gamma every step_size steps, as torch.optim.lr_scheduler.StepLR."""

    __slots__ = ()
    _qv_kind = "StepLR"
    _qv_hyper = ("step_size", "gamma")

    def __init__(self, opt, step_size, gamma=0.1):
        super().__init__(opt, step_size=step_size, gamma=gamma)

    def _qv_make(self, dummy, **kw):
        return _ls.StepLR(dummy, **kw)


class MultiStepLR(Schedule):
    """lr * gamma at each milestone, as torch.optim.lr_scheduler.MultiStepLR."""

    __slots__ = ()
    _qv_kind = "MultiStepLR"
    _qv_hyper = ("milestones", "gamma")

    def __init__(self, opt, milestones, gamma=0.1):
        super().__init__(opt, milestones=tuple(milestones), gamma=gamma)

    def _qv_make(self, dummy, **kw):
        return _ls.MultiStepLR(dummy, milestones=list(kw["milestones"]), gamma=kw["gamma"])


class ExponentialLR(Schedule):
    """lr * gamma every step, as torch.optim.lr_scheduler.ExponentialLR."""

    __slots__ = ()
    _qv_kind = "ExponentialLR"
    _qv_hyper = ("gamma",)

    def __init__(self, opt, gamma):
        super().__init__(opt, gamma=gamma)

    def _qv_make(self, dummy, **kw):
        return _ls.ExponentialLR(dummy, **kw)


class CosineAnnealingLR(Schedule):
    """Cosine annealing to eta_min over T_max steps, as torch.optim.lr_scheduler.CosineAnnealingLR."""

    __slots__ = ()
    _qv_kind = "CosineAnnealingLR"
    _qv_hyper = ("T_max", "eta_min")

    def __init__(self, opt, T_max, eta_min=0.0):
        super().__init__(opt, T_max=T_max, eta_min=eta_min)

    def _qv_make(self, dummy, **kw):
        return _ls.CosineAnnealingLR(dummy, **kw)


class LinearLR(Schedule):
    """A linear change of the factor over total_iters steps, as torch.optim.lr_scheduler.LinearLR."""

    __slots__ = ()
    _qv_kind = "LinearLR"
    _qv_hyper = ("start_factor", "end_factor", "total_iters")

    def __init__(self, opt, start_factor=1.0 / 3, end_factor=1.0, total_iters=5):
        super().__init__(opt, start_factor=start_factor, end_factor=end_factor, total_iters=total_iters)

    def _qv_make(self, dummy, **kw):
        return _ls.LinearLR(dummy, **kw)


class OneCycleLR(Schedule):
    """The 1cycle policy, as torch.optim.lr_scheduler.OneCycleLR (with cycle_momentum it
    also sets the optimizer's momentum, or beta1 of Adam/AdamW)."""

    __slots__ = ()
    _qv_kind = "OneCycleLR"
    _qv_hyper = ("max_lr", "total_steps", "pct_start", "anneal_strategy", "cycle_momentum", "base_momentum",
                 "max_momentum", "div_factor", "final_div_factor", "three_phase")  # fmt: skip

    def __init__(self, opt, max_lr, total_steps, pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False):  # fmt: skip
        super().__init__(
            opt, max_lr=max_lr, total_steps=total_steps, pct_start=pct_start, anneal_strategy=anneal_strategy,
            cycle_momentum=cycle_momentum, base_momentum=base_momentum, max_momentum=max_momentum,
            div_factor=div_factor, final_div_factor=final_div_factor, three_phase=three_phase,
        )  # fmt: skip

    def _qv_make(self, dummy, **kw):
        if kw["cycle_momentum"] and self._qv_mkind is None:
            raise ValueError(
                f"optimizer {self._qv_opt._qv_kind_text()} has no momentum or betas, so cycle_momentum must be False"
            )
        return _ls.OneCycleLR(dummy, **kw)


class WarmupCosineLR(Schedule):
    """Linear warmup then cosine annealing: torch's SequentialLR of LinearLR and CosineAnnealingLR."""

    __slots__ = ()
    _qv_kind = "WarmupCosineLR"
    _qv_hyper = ("warmup_steps", "total_steps", "start_factor", "eta_min")

    def __init__(self, opt, warmup_steps, total_steps, start_factor=1.0 / 3, eta_min=0.0):
        if not (isinstance(warmup_steps, int) and isinstance(total_steps, int) and 0 < warmup_steps < total_steps):
            raise OptimError(
                f"WarmupCosineLR: needs 0 < warmup_steps < total_steps, found warmup_steps={warmup_steps!r}, "
                f"total_steps={total_steps!r}"
            )
        super().__init__(
            opt, warmup_steps=warmup_steps, total_steps=total_steps, start_factor=start_factor, eta_min=eta_min
        )

    def _qv_make(self, dummy, **kw):
        w = kw["warmup_steps"]
        warm = _ls.LinearLR(dummy, start_factor=kw["start_factor"], end_factor=1.0, total_iters=w)
        cos = _ls.CosineAnnealingLR(dummy, T_max=kw["total_steps"] - w, eta_min=kw["eta_min"])
        return _ls.SequentialLR(dummy, [warm, cos], milestones=[w])


__all__ = [
    "Schedule",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LinearLR",
    "OneCycleLR",
    "WarmupCosineLR",
    "ScheduleArg",
]


class ScheduleArg(ArgSpec):
    """A schedule parameter ``StepLR``: ``kind`` is ``rt.StepLR`` (exactly that kind)."""

    __slots__ = ("kind",)

    def __init__(self, name, kind, loc=None):
        super().__init__(name, loc)
        self.kind = kind

    def type_text(self) -> str:
        return self.kind._qv_kind

    def _check(self, a, env, sig):
        if type(a) is not self.kind:
            self._fail(sig, type(a)._qv_kind if isinstance(a, Schedule) else describe(a))
