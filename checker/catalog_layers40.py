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

E0951 = _code(
    "E0951",
    "pad's mode does not fit",
    "pad: {problem}",
    """
    `pad(x, sizes, mode=...)` with torch's modes other than `"constant"`
    (`"reflect"`, `"replicate"`, `"circular"`) takes the padding values from
    x itself, as torch's `F.pad` does, so torch's rules for them hold: they
    pad the last 1, 2 or 3 dims (1, 2 or 3 pairs of sizes) of a tensor with
    one or two dims more (channels, or a batch and channels: a `[b C W]`,
    `[b C H W]` or `[b C D H W]`), take no `value=`, do not pad Bool tensors
    (`"reflect"`, `"replicate"`), and a size must be below its dim for
    `"reflect"` (the mirror does not repeat the edge) and at most its dim
    for `"circular"` (it wraps around once).
    """,
    """
    fn f(x: [2 3 4 4]) -> [2 3 4 12]:
        return pad(x, (4, 4, 0, 0), mode="reflect")
    """,
    """
    fn f(x: [2 3 4 4]) -> [2 3 4 10]:
        return pad(x, (3, 3, 0, 0), mode="reflect")
    """,
    variants={
        "value": 'mode "{mode}" takes its values from x: it takes no value= (only mode "constant" does)',
        "rank": 'mode "{mode}" with {count} of sizes pads a tensor of {least} or {most} dims (channels, or a batch '
        "and channels, before the padded ones), found {x}",
        "bool": 'mode "{mode}" does not pad Bool tensors (torch has no such kernel), found {x}',
        "too_wide": 'mode "{mode}" pads by {size} a dim of size {n}: each size must be {bound} the size of its dim',
    },
)
