"""The built-in functions: one declarative spec per built-in, beside its rule.

A `Builtin` (spec.py) holds everything the tools know about one built-in: its
parameters (how each argument is read, which are keyword-only or optional),
the signature and one-line doc that hover, completion and signature help
show, an example, the refinement an elementwise rule gives its result, the
facts the engine, lints and compiler read (rest_ok, role, dim_args, ...), and
how a call compiles: the `rt` function it becomes and how its arguments map
to that function. Its typing rule is the function that its family module
decorates with `@builtin(spec, ...)` right below the spec (registry.py).

The family modules imported below are the registry: importing one registers
its built-ins and rules into `BUILTINS` and `RULES`. From that table come:
argument matching, hover, completion and signature help (checker/), the
compiled call (checker/compile_body.py), the built-in tables of
docs/language.md and the TextMate grammar's list of built-ins
(`scripts/gen-builtins` writes both; tests check they are in sync), and the
tests that every spec has a typing rule and a runtime function that `rt`
exports. Adding a built-in: its spec and rule (often an existing one) in its
family module, its run-time function in runtime/_ops.py, its tests.
"""

from __future__ import annotations

from ..initializers import INITIALIZERS as INITIALIZERS  # of model fields: highlighted as built-ins
from . import (  # noqa: F401  (the families: importing one registers its built-ins)
    checkpoint,
    conv,
    creation,
    data,
    distributions,
    elementwise,
    gradients,
    labels,
    layers,
    losses,
    metrics,
    norms,
    optim,
    patterns,
    process,
    random,
    reductions,
    resample,
    schedules,
    sequences,
    shapes,
    tensors,
    walks,
    weights,
)
from .registry import BUILTINS
from .spec import SEED, Builtin, Lowering, ParamKind

__all__ = ["BUILTINS", "CONSTANTS", "GROUPS", "INITIALIZERS", "MODEL_METHODS", "Builtin", "Lowering", "ParamKind"]

# The docs tables, in order: group key -> heading.
GROUPS = {
    "elementwise": "Elementwise",
    "along": "Along a dim",
    "losses": "Losses",
    "tensor": "Other tensor functions",
    "shape": "Shape operations",
    "conv": "Convolutions and pools",
    "layers": "Layer operations",
    "create": "Creating tensors",
    "data": "Reading data",
    "distributions": "Distributions",
    "other": "Other built-ins",
}

# Names that are values rather than functions: name -> "signature — doc".
CONSTANTS = {
    "Eval": "Eval: Mode — Evaluation mode: dropout is off.",
    "inf": "inf: Float — Positive infinity, a Float; -inf is below every number, as a mask's fill: "
    "where(keep, x, -inf).",
    "pi": "pi: Float — The number pi (3.141592653589793), a Float.",
}

# Model "methods": `Mlp.init(seed=0)`.
MODEL_METHODS = {
    "init": Builtin(
        name="init",
        params=(SEED,),
        signature="M.init(seed=Int) -> M",
        doc="A new model with its params and buffers initialised, deterministically for the seed.",
        example="m2 = M.init(seed=0)",
        group="other",
        rule="init",
        runtime=None,
    ),
}
