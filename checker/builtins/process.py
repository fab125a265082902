"""The program's own built-ins: print (values, and all_ranks=), rank and
world_size (Ints known only at run time), range, Train (a Mode).
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..declarations import suggest
from .args import Bound, expect_number
from .registry import builtin
from .spec import SEED, BParam, Builtin


@builtin(
    Builtin(
        name="print",
        params=(BParam(name="all_ranks", required=False, keyword_only=True),),
        signature="print(values..., all_ranks=False)",
        doc="Prints the values on one line, separated by spaces; in a data-parallel run only rank 0 prints, "
        "unless all_ranks=True.",
        example='print("loss", x)',
        group="other",
        runtime="print",
        variadic=True,
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    raw=True,
)
def _print(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    seen: set[str] = set()
    for a in args:
        if a.keyword is not None:
            if a.keyword != "all_ranks" or a.keyword in seen:
                error = (
                    C.E0404.at(a.span, name=a.keyword, fn="print")
                    if a.keyword in seen
                    else C.E0402.at(
                        a.arg.keyword.span if a.arg and a.arg.keyword else a.span,
                        name=a.keyword,
                        fn="print",
                        hint=suggest(a.keyword, ["all_ranks"]),
                    )
                )
                c.diags.append(error)
                continue
            seen.add(a.keyword)
            expect_number(c, a, env, "Bool", "all_ranks")
            continue
        if seen:  # a value after all_ranks=
            c.diags.append(C.E0405.at(a.span))
        c.value(a.node, env)
        c.escape_if_model(a.node, env, "printed")
    return T.UNIT


@builtin(
    Builtin(
        name="rank",
        params=(),
        signature="rank() -> Int",
        doc="This process's rank in a data-parallel run (quiver run --nproc, torchrun): 0 to world_size()-1; "
        "0 when not distributed.",
        example="r = rank()",
        group="other",
        runtime="rank",
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        name="world_size",
        params=(),
        signature="world_size() -> Int",
        doc="How many processes train together in a data-parallel run; 1 when not distributed.",
        example="n = world_size()",
        group="other",
        runtime="world_size",
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
)
def _process(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """rank(), world_size(): an Int known only at run time."""
    return T.INT


@builtin(
    Builtin(
        name="range",
        params=(BParam(name="start"), BParam(name="stop", required=False), BParam(name="step", required=False)),
        signature="range(stop: Int) / range(start: Int, stop: Int, step: Int)",
        doc="The integers start, start+step, ... below stop; only in a for loop.",
        example="for i in range(3):\n        print(i)",
        group="other",
        runtime=None,
        note="([E0414](diagnostics.md#e0414))",
    ),
)
def _range(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    for k in ("start", "stop", "step"):
        if k in bound:
            expect_number(c, bound[k], env, "Int", f"{k} of range")
    return T.RangeT()


@builtin(
    Builtin(
        name="Train",
        params=(SEED,),
        signature="Train(seed=Int) -> Mode",
        doc="Training mode: dropout is on, with randomness from the seed.",
        example="t = Train(seed=3)",
        group="other",
        runtime="Train",
    ),
)
def _train(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    expect_number(c, bound["seed"], env, "Int", "seed")
    return T.MODE
