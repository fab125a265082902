"""The diagnostics of the layers of issue 40: instance_norm's running
statistics and mode, pad's modes (registered in the one catalog,
`catalog_code.CODES`: checker/catalog.py imports this module at its end, so
they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0950 = _code(
    "E0950",
    "instance_norm's running statistics without a mode",
    "instance_norm: {problem}",
    """
    `instance_norm` normalises each channel of each example with the
    example's own statistics. With running statistics (torch's
    `track_running_stats=True`) it needs to know the mode too: under
    `Train(...)` it uses the instance statistics and updates
    `running_mean` and `running_var` in place, under `Eval` it uses them.
    So `running_mean=`, `running_var=` and `mode=` are given together, or
    none of them (the instance statistics in every mode).
    """,
    """
    model Norm:
        buffer running_mean: [4] = zeros
        buffer running_var: [4] = ones

    fn f(m: Norm, x: [8 4 16]) -> [8 4 16]:
        return instance_norm(x, running_mean=m.running_mean, running_var=m.running_var)
    """,
    """
    model Norm:
        buffer running_mean: [4] = zeros
        buffer running_var: [4] = ones

    fn f(m: Norm, x: [8 4 16], mode: Mode) -> [8 4 16]:
        return instance_norm(x, running_mean=m.running_mean, running_var=m.running_var, mode=mode)
    """,
    variants={
        "missing": "{given} need {missing} as well (running statistics, updated under Train and used under Eval)",
        "mode_alone": "mode= needs running_mean= and running_var=: without running statistics each example's "
        "own statistics are used in every mode",
    },
)
