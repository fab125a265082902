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
        "missing": "{given} without {missing}: the running statistics are updated under Train and used under "
        "Eval, so running_mean=, running_var= and mode= come together",
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

E0952 = _code(
    "E0952",
    "interpolate's or an adaptive pool's sizes do not fit",
    "{fn}: {problem}",
    """
    `interpolate(x, ...)` resizes the dims after the batch and the channels,
    as torch's `F.interpolate`: give either `size=` (the new sizes: one for
    every dim, or one per dim) or `scale_factor=` (an integer literal or a
    dim: `H` becomes `(H*r)`), not both and not neither. `align_corners=`
    belongs to the modes that interpolate (`"linear"`, `"bilinear"`); torch
    refuses it with `"nearest"`. The adaptive pools take one output size
    (a square) or two.
    """,
    """
    fn f(x: [2 3 8 8]) -> [2 3 16 16]:
        return interpolate(x, scale_factor=2, align_corners=True)
    """,
    """
    fn f(x: [2 3 8 8]) -> [2 3 16 16]:
        return interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
    """,
    variants={
        "both": "give size= or scale_factor=, not both",
        "neither": "give the new size, size= or scale_factor=",
        "corners": 'align_corners= is for the modes that interpolate ("linear", "bilinear"), not "{mode}"',
        "sizes": "{what} has {count} sizes, where {want} fit",
    },
)
