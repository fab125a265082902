"""Random tensors, each deterministic for its `seed=`: randn (plain floats,
or `randn(Grad[M], seed=s)`), randint (of an `Index[C]` element type), rand
(uniform in [0, 1): a Prob), multinomial and categorical (one label drawn
per slice, an Index).
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from .args import Bound, dim_arg, expect_number, grad_type_arg, quiet_dim, shape_arg, tensor_arg
from .registry import builtin
from .spec import OVER, SEED, SHAPE, BParam, Builtin, Lowering


def _seeded_shape(
    c: RuleContext, b: Builtin, bound: Bound, env: Env, elem_ok: Callable[[T.Elem], bool], why: Callable[[], str]
) -> T.TensorT | None:
    """The shape of a random creation (randn, randint, rand) and its seed,
    checked; None (reported, unless the shape was) when its element type is
    not one the function makes (E0309 with the reason `why` says)."""
    t = shape_arg(c, bound["shape"], b.name)
    expect_number(c, bound["seed"], env, "Int", "seed")
    if t is None:
        return None
    if not elem_ok(t.elem):
        c.diags.append(C.E0309.at(bound["shape"].node.span, elem=str(t.elem), reason=why()))
        return None
    return t


@builtin(
    Builtin(
        name="randn",
        params=(SHAPE, SEED),
        signature="randn(shape: [..] Float, seed=Int) -> [..] Float",
        doc="Standard normal values of a plain float type, deterministic for the seed.",
        example="r = randn([4 D] f64, seed=1)",
        group="create",
        runtime="randn",
        grad_runtime="randn_grad",
        lowering=Lowering.SHAPE,
    ),
)
def _randn(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    g = grad_type_arg(c, bound["shape"], env)
    if g is not None:
        expect_number(c, bound["seed"], env, "Int", "seed")
        return g
    t = _seeded_shape(
        c, b, bound, env, lambda e: e.is_float and e.refine is None, lambda: C.E0309.say("randn_plain_float")
    )
    return t if t is not None else T.UNKNOWN


@builtin(
    Builtin(
        name="randint",
        params=(SHAPE, SEED),
        signature="randint(shape: [..] Index[C], seed=Int) -> [..] Index[C]",
        doc="Uniform integers in 0..C-1, deterministic for the seed.",
        example="r = randint([4] Index[C], seed=2)",
        group="create",
        runtime="randint",
        lowering=Lowering.SHAPE_INDEX,
    ),
)
def _randint(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = _seeded_shape(c, b, bound, env, lambda e: e.index is not None, lambda: C.E0309.say("randint_index"))
    return t if t is not None else T.UNKNOWN


@builtin(
    Builtin(
        name="rand",
        params=(SHAPE, SEED),
        signature="rand(shape: [..] Float, seed=Int) -> [..] Prob",
        doc="Uniform values in [0, 1), deterministic for the seed; being in [0, 1], they are a Prob.",
        example="u = rand([4 D], seed=3)",
        group="create",
        runtime="rand",
        lowering=Lowering.SHAPE,
    ),
)
def _rand(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = _seeded_shape(c, b, bound, env, lambda e: e.is_float, lambda: C.E0309.say("rand_float"))
    return T.TensorT(t.dims, T.with_refine(t.elem, "prob")) if t is not None else T.UNKNOWN


@builtin(
    Builtin(
        name="multinomial",
        params=(BParam(name="p"), OVER, SEED),
        signature="multinomial(p: [.. V ..] NonNeg, over=V, seed=Int) -> [..] Index[V]",
        doc="One label of V drawn for each slice of p along V, with probabilities p (weights >= 0, normalised); "
        "deterministic for the seed.",
        example="s = multinomial(softmax(x, over=D), over=D, seed=4)",
        group="create",
        runtime="multinomial",
        note="p is known to be >= 0, as softmax gives ([E0304](diagnostics.md#e0304)).",
    ),
    Builtin(
        name="categorical",
        params=(BParam(name="p"), OVER, SEED),
        signature="categorical(p: [.. V ..] NonNeg, over=V, seed=Int) -> [..] Index[V]",
        doc="The same draw as multinomial: one label of V for each slice of p along V, from probabilities p "
        "(not logits, unlike JAX's categorical).",
        example="s = categorical(softmax(x, over=D), over=D, seed=4)",
        group="create",
        runtime="multinomial",
    ),
)
def _multinomial(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    p = tensor_arg(c, bound["p"], env, b.name, "p")
    expect_number(c, bound["seed"], env, "Int", "seed")
    if p is None:
        quiet_dim(c, bound.get("over"), env)
        return T.UNKNOWN
    axis = dim_arg(c, bound["over"], env, p, b.name, bound["p"], "p")
    c.axes[node] = axis
    if axis is None:
        return T.UNKNOWN
    if not p.elem.nonneg:
        c.diags.append(
            C.E0304.at(
                bound["p"].node.span,
                context=f"p of {b.name}: ",
                expected="weights known to be >= 0 (NonNeg or Prob, as softmax gives)",
                found=str(p),
            )
        )
    return T.TensorT(p.dims[:axis] + p.dims[axis + 1 :], T.index_of(p.dims[axis]))
