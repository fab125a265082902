"""Creating tensors: zeros and ones (of a shape, or `zeros(Grad[M])`, a
gradient of zeros), `tril` and `triu` (the triangles of the last two dims,
the operand's type kept), `eye(N)`, `full([..] T, v)` (v checked against T).
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import Env
from ..body.text import expr_text
from .args import Bound, dim_of_arg, expect_number, grad_type_arg, literal_number, shape_arg, tensor_arg
from .registry import builtin
from .spec import SHAPE, BParam, Builtin, Lowering, X


@builtin(
    Builtin(
        name="zeros",
        params=(SHAPE,),
        signature="zeros(shape: [..] T) -> [..] T",
        doc="A tensor of zeros, of any element type.",
        example="z = zeros([D] i64)",
        group="create",
        runtime="zeros",
        grad_runtime="zeros_grad",
        lowering=Lowering.SHAPE,
    ),
    Builtin(
        name="ones",
        params=(SHAPE,),
        signature="ones(shape: [..] T) -> [..] T",
        doc="A tensor of ones, of any element type.",
        example="z = ones([D] Bool)",
        group="create",
        runtime="ones",
        lowering=Lowering.SHAPE,
    ),
)
def _filled(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    if b.name == "zeros":
        g = grad_type_arg(c, bound["shape"], env)
        if g is not None:
            return g
    t = shape_arg(c, bound["shape"], b.name)
    if t is None:
        return T.UNKNOWN
    return t


@builtin(
    Builtin(
        name="tril",
        params=(X, BParam(name="diagonal", required=False, keyword_only=True)),
        signature="tril(x: [.. a b], diagonal=0) -> [.. a b]",
        doc="x with the values above the diagonal of its last two dims zeroed (above diagonal k with diagonal=k).",
        example="t = tril(x)",
        group="create",
        runtime="tril",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        name="triu",
        params=(X, BParam(name="diagonal", required=False, keyword_only=True)),
        signature="triu(x: [.. a b], diagonal=0) -> [.. a b]",
        doc="x with the values below the diagonal of its last two dims zeroed (below diagonal k with diagonal=k).",
        example="t = triu(x, diagonal=1)",
        group="create",
        runtime="triu",
        note="([E0210](diagnostics.md#e0210))",
    ),
)
def _triangle(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """tril, triu: zeros above (below) a diagonal; a zero is a NonNeg, a Prob
    and an Index, so the type stays the operand's."""
    t = tensor_arg(c, bound["x"], env, b.name, "x", float_only=False)
    if "diagonal" in bound:
        expect_number(c, bound["diagonal"], env, "Int", f"diagonal of {b.name}")
    if t is None:
        return T.UNKNOWN
    if t.rank < 2:
        c.diags.append(C.E0210.at(bound["x"].node.span, operation=b.name, needed="2 dims or more", found=str(t)))
        return T.UNKNOWN
    return t


@builtin(
    Builtin(
        name="eye",
        params=(BParam(name="n"),),
        signature="eye(n: a dim) -> [n n] Float",
        doc="The identity matrix of a dim n: ones on the diagonal, zeros elsewhere.",
        example="i = eye(D)",
        group="create",
        runtime="eye",
        dim_args=("n",),
    ),
)
def _eye(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    dim = dim_of_arg(c, bound["n"].node, "eye", "n")
    if dim is None:
        return T.UNKNOWN
    return T.TensorT((dim, dim), T.F32)


@builtin(
    Builtin(
        name="full",
        params=(SHAPE, BParam(name="value")),
        signature="full(shape: [..] T, value) -> [..] T",
        doc="A tensor of one number, of any element type; the number suits the element type.",
        example="f = full([D C] NonNeg, 0.5)",
        group="create",
        runtime="full",
        lowering=Lowering.SHAPE,
        note="An Int for integer types, True or False for Bool, a literal in range for NonNeg and Prob, and for "
        "Index[C] a label in range known when the program is checked (a literal, a dim or an Int constant) "
        "([E0302](diagnostics.md#e0302), [E0304](diagnostics.md#e0304), [E0305](diagnostics.md#e0305)).",
    ),
)
def _full(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    t = shape_arg(c, bound["shape"], "full")
    e = bound["value"].node
    v = c.value(e, env)
    if t is None:
        return T.UNKNOWN
    if isinstance(v, T.UnknownT):
        return t
    context = f"value of full for {t.show_elem()}: "
    if not isinstance(v, T.NumberT) or v.kind == "Str":
        c.diags.append(C.E0301.at(e.span, context=context, expected="a number", found=T.describe(v)))
        return t
    elem = t.elem
    want = "Bool" if elem.is_bool else "Int" if not elem.is_float else "Int or Float"
    if v.kind not in want.split(" or "):
        c.diags.append(C.E0302.at(e.span, context=context, expected=want, found=v.kind))
        return t
    literal = literal_number(e)
    found = str(literal) if literal is not None else expr_text(e)
    if elem.index is not None:
        size = T.dim_value(elem.index)
        # a label known when the program is checked: a literal, or a dim or
        # Int constant (`V`), or arithmetic of them (`V - 1`)
        label = literal if literal is not None else _known_int(c, e)
        if literal is None and label is not None:
            found = f"{found} = {label}"
        if label is None or label < 0 or (label >= size if size is not None else label != 0):
            expected = (
                f"an integer in 0..{size - 1} known when the program is checked (a literal, or a dim or Int constant)"
                if size is not None
                else "0"
            )
            c.diags.append(C.E0305.at(e.span, context=context, expected=expected, found=found))
    elif elem.refine is not None:
        fits = literal is not None and literal >= 0 and (elem.refine == "nonneg" or literal <= 1)
        if literal is None and elem.refine == "nonneg" and v.nonneg:
            fits = True
        if not fits:
            expected = "a number >= 0" if elem.refine == "nonneg" else "a number in [0, 1]"
            c.diags.append(C.E0304.at(e.span, context=context, expected=expected, found=found))
    return t


def _known_int(c: RuleContext, e: A.Expr) -> int | None:
    const = c.int_constant(e)
    return const[2] if const is not None else c.int_value(e)
