"""Per-field options of an optimizer: torch.optim's param groups.

``AdamW(m, weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))``
steps the params of rank 0 and 1 (biases, norms' gains) without weight decay
and the others with it.  The params are split as torch.optim's param groups
are: group 0 holds the params that no ``Group`` selects, with the optimizer's
own hyper-parameters; group k (k >= 1) the params that the k-th ``Group``
selects first, with that group's overrides.  Each param is stepped with the
hyper-parameters of its group, by the optimizer's own arithmetic
(``_qv_apply`` on the params of one group at a time, in group order, as
``torch.optim.Optimizer.step`` does).

``opt._qv_groups`` is None without groups, else a list of
``[members, overrides]``: ``members`` a frozenset of leaf-param indices,
``overrides`` a dict from hyper-parameter name to value (group 0's is empty:
its values are the optimizer's own).  ``opt.lr = e`` drops every group's
``lr`` override, so every group then has the learning rate e.
"""

from __future__ import annotations

import fnmatch
import numbers

import torch

from ._errors import OptimError

# the hyper-parameters a group may set: numbers (flags such as amsgrad change
# which state an optimizer keeps, so they stay the optimizer's)
OVERRIDABLE = ("lr", "momentum", "dampening", "weight_decay", "eps", "betas", "alpha", "rho", "lr_decay")


class Group:
    """The params a group selects and the hyper-parameters it sets.

    Selectors (all given must hold): ``max_rank=k`` (params of rank <= k),
    ``min_rank=k`` (rank >= k), ``names="glob"`` (params whose path, such as
    ``blocks.0.ln.g``, matches the glob, ``fnmatch`` rules, case-sensitive).
    """

    __slots__ = ("max_rank", "min_rank", "names", "overrides")

    def __init__(self, max_rank=None, min_rank=None, names=None, **overrides):
        for what, v in (("max_rank", max_rank), ("min_rank", min_rank)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise OptimError(f"Group: {what} must be an Int >= 0, found {v!r}")
        if names is not None and not isinstance(names, str):
            raise OptimError(f"Group: names must be a string (a glob such as '*.bias'), found {names!r}")
        if max_rank is None and min_rank is None and names is None:
            raise OptimError("Group: give the params it selects (max_rank=, min_rank= or names=)")
        for k in overrides:
            if k not in OVERRIDABLE:
                raise OptimError(f"Group: {k!r} cannot be set per group (only {', '.join(OVERRIDABLE)})")
        self.max_rank = max_rank
        self.min_rank = min_rank
        self.names = names
        self.overrides = dict(overrides)

    def selects(self, path: str, rank: int) -> bool:
        if self.max_rank is not None and rank > self.max_rank:
            return False
        if self.min_rank is not None and rank < self.min_rank:
            return False
        return self.names is None or fnmatch.fnmatchcase(path, self.names)

    def text(self) -> str:
        parts = [f"{k}={getattr(self, k)!r}" for k in ("max_rank", "min_rank", "names") if getattr(self, k) is not None]
        parts += [f"{k}={v!r}" for k, v in self.overrides.items()]
        return f"Group({', '.join(parts)})"

    def __repr__(self) -> str:
        return self.text()


def _value(kind: str, g: Group, name: str, v):
    """An override checked as the optimizer's own keyword is."""
    return _checked(f"{kind}: {g.text()}: {name}", name, v)


def _checked(where: str, name: str, v):
    if name == "betas":
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            raise OptimError(f"{where} must be a pair of numbers, found {v!r}")
        out = []
        for j, b in enumerate(v):
            b = float(b) if isinstance(b, numbers.Real) and not isinstance(b, bool) else None
            if b is None or not 0.0 <= b < 1.0:
                raise OptimError(f"{where}[{j}] must be a number >= 0 and < 1, found {v[j]!r}")
            out.append(b)
        return (out[0], out[1])
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        v = float(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise OptimError(f"{where} must be a number, found {v!r}")
    v = float(v)
    if name not in ("dampening",) and not v >= 0.0:
        raise OptimError(f"{where} must be >= 0, found {v!r}")
    if name in ("alpha", "rho") and v > 1.0:
        raise OptimError(f"{where} must be <= 1, found {v!r}")
    return v


def set_groups(opt, groups) -> None:
    """Split ``opt``'s params by ``groups`` (None, a Group or a sequence of them)."""
    if groups is None:
        return
    kind = opt._qv_kind_text()
    items = [groups] if isinstance(groups, Group) else list(groups) if isinstance(groups, (tuple, list)) else None
    if items is None or not all(isinstance(g, Group) for g in items):
        raise OptimError(f"{kind}: groups must be a Group(...) or a tuple of them, found {groups!r}")
    hyper = type(opt)._qv_hyper
    checked = []
    for g in items:
        over = {}
        for name, v in g.overrides.items():
            if name not in hyper:
                raise OptimError(f"{kind}: {g.text()} sets {name}, which {type(opt)._qv_kind} does not have")
            over[name] = _value(kind, g, name, v)
        checked.append((g, over))
    members: list[set] = [set() for _ in range(len(items) + 1)]
    for i in opt._qv_float:
        path, rank = opt._qv_names[i], opt._qv_params[i].dim()
        k = next((k for k, (g, _) in enumerate(checked) if g.selects(path, rank)), None)
        members[0 if k is None else k + 1].add(i)
    for k, (g, _) in enumerate(checked):
        if not members[k + 1]:
            raise OptimError(
                f"{kind}: {g.text()} selects no param of {opt._qv_cls._qv_name} "
                f"(params: {', '.join(opt._qv_names[i] for i in opt._qv_float)})"
            )
    out = [[frozenset(members[0]), {}]]
    out += [[frozenset(members[k + 1]), over] for k, (_, over) in enumerate(checked)]
    object.__setattr__(opt, "_qv_groups", out)


def group_value(opt, k: int, name: str):
    """Group k's value of the hyper-parameter ``name``."""
    over = opt._qv_groups[k][1] if opt._qv_groups is not None else {}
    return over[name] if name in over else getattr(opt, "_qv_" + name)


def set_group_value(opt, k: int, name: str, v) -> None:
    """Set group k's ``name`` (group 0: the optimizer's own value)."""
    if k == 0:
        object.__setattr__(opt, "_qv_" + name, v)
    else:
        opt._qv_groups[k][1][name] = v


def group_count(opt) -> int:
    return 1 if opt._qv_groups is None else len(opt._qv_groups)


def apply_groups(opt, sel, params, grads) -> None:
    """One step of each group in turn, with the group's hyper-parameters set
    on the optimizer while its params are stepped."""
    for members, over in opt._qv_groups:
        idx = [j for j, i in enumerate(sel) if i in members]
        if not idx:
            continue
        saved = {name: getattr(opt, "_qv_" + name) for name in over}
        try:
            for name, v in over.items():
                object.__setattr__(opt, "_qv_" + name, v)
            opt._qv_apply(tuple(sel[j] for j in idx), [params[j] for j in idx], [grads[j] for j in idx])
        finally:
            for name, v in saved.items():
                object.__setattr__(opt, "_qv_" + name, v)


def groups_text(opt) -> list[str]:
    """One line per group: its params and hyper-parameters (for repr)."""
    if opt._qv_groups is None:
        return []
    return [
        f"group {k}: {', '.join(opt._qv_names[i] for i in sorted(members)) or '(none)'}"
        + "".join(f", {n}={v!r}" for n, v in over.items())
        for k, (members, over) in enumerate(opt._qv_groups)
    ]


def groups_state(opt) -> list | None:
    """The groups for a checkpoint: each group's params (paths) and overrides."""
    if opt._qv_groups is None:
        return None
    return [
        {"params": [opt._qv_names[i] for i in sorted(members)], "overrides": dict(over)}
        for members, over in opt._qv_groups
    ]


def check_groups_state(opt, saved, where: str) -> None:
    """The saved groups hold the same params as this optimizer's (their
    values may differ: a schedule changes each group's lr)."""
    mine = groups_state(opt)
    same = (mine is None and saved is None) or (
        isinstance(saved, list)
        and mine is not None
        and len(saved) == len(mine)
        and all(isinstance(s, dict) and s.get("params") == m["params"] for s, m in zip(saved, mine))
    )
    if same and saved is not None:
        # the values come from a file: each a hyper-parameter of this kind, checked as the keyword is
        hyper = type(opt)._qv_hyper
        for s in saved:
            over = s.get("overrides")
            bad = not isinstance(over, dict) or any(name not in hyper or name == "groups" for name in over)
            if bad:
                raise OptimError(
                    f"{where}: cannot load the state of {opt._qv_kind_text()}: a saved group's values "
                    f"({over!r}) are not hyper-parameters of {type(opt)._qv_kind}"
                )
            for name, v in over.items():
                over[name] = _checked(f"{where}: {opt._qv_kind_text()}: a saved group's {name}", name, v)
    if not same:

        def text(gs):
            return "none" if gs is None else "; ".join(", ".join(map(str, g.get("params", ()))) for g in gs)

        raise OptimError(
            f"{where}: cannot load the state of {opt._qv_kind_text()}: its param groups ({text(mine)}) "
            f"differ from the saved ones ({text(saved) if isinstance(saved, list) or saved is None else '?'})"
        )


def load_groups_state(opt, saved) -> None:
    if saved is None:
        return
    for (_, over), s in zip(opt._qv_groups, saved):
        over.clear()
        over.update(s["overrides"])


__all__ = ["Group"]
