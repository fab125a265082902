"""The fields an optimizer and a schedule show (`opt.lr`, `opt.momentum_buffer`,
`sched.last_epoch`): their names, types and what each is, from the tables of
`optim_tables`, for the checker's field access, hover and completion."""

from __future__ import annotations

from .optim_tables import OPTIMIZERS, SCHEDULES
from .types import BOOL_N, FLOAT, INT, STR, OptimT, ScheduleT, TupleT, Type, grad_of


def _hyper_type(word: str) -> Type:
    if word == "Bool":
        return BOOL_N
    if word == "(Float, Float)":
        return TupleT((FLOAT, FLOAT))
    if word == "Int":
        return INT
    if word == "Str":
        return STR
    return FLOAT


def optimizer_fields(t: OptimT) -> list[tuple[str, Type, str]]:
    """(name, type, what) for every field of an optimizer: its
    hyper-parameters, then its state."""
    hyper, state = OPTIMIZERS[t.kind]
    out: list[tuple[str, Type, str]] = [(n, _hyper_type(w), f"default {d}") for n, w, d in hyper]
    for n, k in state.items():
        out.append((n, grad_of(t.of) if k == "grad" else INT, "state" if k == "grad" else "steps taken"))
    return out


def schedule_fields(t: ScheduleT) -> list[tuple[str, Type, str]]:
    """(name, type, what) for every readable field of a schedule: its
    hyper-parameters (not MultiStepLR's milestones), then lr and last_epoch."""
    out: list[tuple[str, Type, str]] = [
        (n, _hyper_type(w), "required" if d == "required" else f"default {d}")
        for n, w, d in SCHEDULES[t.kind]
        if w != "Ints"
    ]
    out.append(("lr", FLOAT, "the learning rate of the last step"))
    out.append(("last_epoch", INT, "steps taken"))
    return out
