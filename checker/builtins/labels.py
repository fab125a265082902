"""The built-ins that make labels: `arange(T)` gives the positions of a dim as
`[T] Index[T]`, and `one_hot(y, over=C)` turns `Index[C]` labels into a `C`
dim. (Indexing a tensor by labels, an embedding, is `x[labels]`:
checker/body/expressions.py.)
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from .args import Bound, dim_of_arg, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin


@builtin(
    Builtin(
        name="arange",
        params=(BParam(name="n"),),
        signature="arange(n: a dim) -> [n] Index[n]",
        doc="The positions 0, 1, ..., n-1 of a dim n, as labels of that dim: m.pos[arange(T)] is [T E].",
        example="p = arange(C)",
        group="create",
        runtime="arange",
        dim_args=("n",),
    ),
)
def _arange(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    dim = dim_of_arg(c, bound["n"].node, "arange", "n")
    if dim is None:
        return T.UNKNOWN
    return T.TensorT((dim,), T.index_of(dim))


@builtin(
    Builtin(
        name="one_hot",
        params=(BParam(name="labels"), BParam(name="over", keyword_only=True)),
        signature="one_hot(labels: [..] Index[C], over=C) -> [.. C] Float",
        doc="A float tensor with a 1 at each label's position along a new last dim C, 0 elsewhere.",
        example="h = one_hot(y, over=C)",
        group="tensor",
        runtime="one_hot",
        note="`over=` names the dim the labels index ([E0305](diagnostics.md#e0305)).",
        dim_args=("over",),
    ),
)
def _one_hot(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    labels = tensor_arg(c, bound["labels"], env, "one_hot", "labels", float_only=False)
    dim = dim_of_arg(c, bound["over"].node, "one_hot", "over")
    if labels is None or dim is None:
        return T.UNKNOWN
    if labels.elem.index is None or not T.dims_equal(labels.elem.index, dim):
        want = T.TensorT(labels.dims, T.index_of(dim))
        c.diags.append(
            C.E0305.at(bound["labels"].node.span, context="labels of one_hot: ", expected=str(want), found=str(labels))
        )
        return T.UNKNOWN
    return T.TensorT(labels.dims + (dim,), T.F32)
