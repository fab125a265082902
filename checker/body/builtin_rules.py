"""The typing rules of the built-in functions.

Each rule is registered under the name a spec in checker/builtins.py gives as
its `rule`; several built-ins of one family share a rule (every elementwise
function, every reduction). A call to a built-in runs exactly its rule: a
spec whose rule is missing is a test failure (tests/checker/test_builtins.py)
and an internal error at run time, never a silent fallback.

A rule gets the call's arguments bound to the spec's parameters by name
(`bound`), or, for a raw rule (print, value_and_grad), the arguments as
written.
"""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
# (the methods of these parts annotate self with BodyChecker, the class they
# are composed into, so each part sees the whole checker; pyright calls that
# a general type issue.)
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..builtins.registry import rule
from ..builtins.spec import Builtin
from ..declarations import leaf_params, model_closure, suggest
from ..results import Ref
from .env import CallArg, Env
from .rule_args import axes_value, keep_arg, number_arg, over_axes, quiet_over, without
from .text import expr_text, takes_dims

if TYPE_CHECKING:
    from .core import BodyChecker


# A call's arguments bound to the spec's parameters, by parameter name.
Bound = dict[str, CallArg]


def _reduced(dims: tuple[T.Dim, ...], axis: int, keep: bool) -> tuple[T.Dim, ...]:
    """The dims of a reduction along `axis`: without it, or with it as 1 (keep=True)."""
    return dims[:axis] + ((T.DimLit(1),) if keep else ()) + dims[axis + 1 :]


class BuiltinRules:
    @rule("print", raw=True)
    def _builtin_print(
        self: BodyChecker, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span
    ) -> T.Type:
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
                    self.diags.append(error)
                    continue
                seen.add(a.keyword)
                self.expect_number(a, env, "Bool", "all_ranks")
                continue
            if seen:  # a value after all_ranks=
                self.diags.append(C.E0405.at(a.span))
            self.value(a.node, env)
            self.escape_if_model(a.node, env, "printed")
        return T.UNIT

    @rule("process")
    def _builtin_process(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """rank(), world_size(): an Int known only at run time."""
        return T.INT

    @rule("elementwise")
    def _builtin_elementwise(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, b.name, "x", float_only=not b.ints)
        if t is None:
            return T.UNKNOWN
        if b.ints and t.elem.is_bool:
            self.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        if not t.elem.is_float:  # an integer tensor (b.ints) stays one, unrefined
            return T.TensorT(t.dims, T.Elem(t.elem.dtype))
        return T.TensorT(t.dims, T.with_refine(t.elem, b.refine))

    @rule("elementwise_or_number")
    def _builtin_elementwise_or_number(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """sqrt, exp, log, sin, cos: as the elementwise rule on a float tensor; a number gives a Float."""
        x = bound["x"]
        t = self.value(x.node, env)
        if isinstance(t, T.UnknownT):
            return T.UNKNOWN
        if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
            return T.NumberT("Float", b.refine is not None)
        if isinstance(t, T.GradT):
            self.diags.append(C.E1108.at(x.node.span, operation=f"{b.name}({T.describe(t)})"))
            return T.UNKNOWN
        if not isinstance(t, T.TensorT):
            self.diags.append(
                C.E0301.at(
                    x.node.span,
                    context=f"argument 'x' of {b.name}: ",
                    expected="a tensor or number",
                    found=T.describe(t),
                )
            )
            return T.UNKNOWN
        if not t.elem.is_float:
            self.diags.append(C.E0310.at(x.node.span, what=f"{b.name} of {T.describe(t)}", hint="; cast it with `as`"))
            return T.UNKNOWN
        return T.TensorT(t.dims, T.with_refine(t.elem, b.refine))

    @rule("stop_grad")
    def _builtin_stop_grad(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        self.stop_grad_depth += 1
        try:
            t = self.tensor_arg(bound["x"], env, "stop_grad", "x", float_only=False)
        finally:
            self.stop_grad_depth -= 1
        return t if t is not None else T.UNKNOWN

    @rule("transpose")
    def _builtin_transpose(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "transpose", "x", float_only=False)
        if t is None:
            return T.UNKNOWN
        if t.rank < 2:
            self.diags.append(
                C.E0210.at(bound["x"].node.span, operation="transpose", needed="2 dims or more", found=str(t))
            )
            return T.UNKNOWN
        return T.TensorT(t.dims[:-2] + (t.dims[-1], t.dims[-2]), t.elem)

    @rule("softmax")
    def _builtin_softmax(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, b.name, "x")
        if t is None:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.UNKNOWN
        axis = self.dim_arg(bound["over"], env, t, b.name, bound["x"])
        self.axes[node] = axis
        if axis is None:
            return T.UNKNOWN
        t = self.named_over(t, axis, bound["over"])
        return T.TensorT(t.dims, T.with_refine(t.elem, b.refine))

    def _eval_dim_quietly(self: BodyChecker, a: CallArg | None, env: Env) -> None:
        if a is None:
            return
        if isinstance(a.node, A.Name) and a.node.name in self.fn.generics:
            self.refs[a.node] = Ref("generic", a.node.name, self.fn.name)
        elif (const := self.dim_constant(a.node)) is not None:
            self.refs[const[0]] = Ref("dim", const[1])

    @rule("reduce")
    def _builtin_reduce(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t0 = self.value(bound["x"].node, env)
        if T.is_example_grads(t0) and b.name in ("mean", "sum"):
            return self._reduce_example_grads(node, b, bound, env, t0)
        float_only = b.name == "mean"
        t = self.tensor_arg(bound["x"], env, b.name, "x", float_only=float_only, typed=t0)
        keep = self._keep_arg(bound.get("keep"), env)
        if t is None:
            quiet_over(self, bound.get("over"))
            return T.UNKNOWN
        if t.elem.is_bool and b.name != "sum":
            self.diags.append(C.E0306.at(bound["x"].node.span, op=b.name, left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        elem = t.elem
        if b.name == "sum":
            elem = (
                T.Elem("i64") if elem.is_bool else T.with_refine(T.Elem(elem.dtype), "nonneg" if elem.nonneg else None)
            )
        elif b.name == "mean":
            elem = T.with_refine(T.Elem(elem.dtype), elem.refine)
        # max / min keep the element type, refinement and Index included
        over = bound.get("over")
        if over is None:
            self.axes[node] = None
            if keep is None:
                return T.UNKNOWN
            return T.TensorT(tuple(T.DimLit(1) for _ in t.dims) if keep else (), elem)
        got = over_axes(self, over, env, t, b.name, bound["x"])  # over=H or over=(H, W)
        self.axes[node] = axes_value(over, got[0]) if got is not None else None
        if got is None or keep is None:
            return T.UNKNOWN
        return T.TensorT(without(t.dims, got[0], keep), elem)

    def _reduce_example_grads(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env, t: T.Type) -> T.Type:
        """`mean(gs, over=b)`, `sum(gs, over=b)`: per-example gradients `[b]
        Grad[M]` averaged or summed over the examples, a `Grad[M]`."""
        assert isinstance(t, T.StackT)
        over = bound.get("over")
        ok = over is not None and "keep" not in bound
        if over is not None and isinstance(over.node, (A.Name, A.Field)):
            const = self.dim_constant(over.node)
            if isinstance(over.node, A.Name) and over.node.name in self.fn.generics:
                d = over.node.name
                self.refs[over.node] = Ref("generic", d, self.fn.name)
                ok = ok and T.dims_equal(T.DimVar(d), t.dim)
            elif const is not None:
                node, d = const
                self.refs[node] = Ref("dim", d)
                ok = ok and T.dims_equal(T.DimConst(d, self.g.names.dim_values.get(d) or 0), t.dim)
            else:
                ok = False
        elif over is not None:
            ok = False
        if not ok:
            self.diags.append(C.E1108.at(node.span, operation=f"{b.name}({t}) without over={t.dim}"))
            return T.UNKNOWN
        self.axes[node] = 0
        return t.item

    def _keep_arg(self: BodyChecker, a: CallArg | None, env: Env) -> bool | None:
        """keep=: a literal True or False, since it decides the result's shape
        (False when left out; None after an error)."""
        if a is None:
            return False
        if isinstance(a.node, A.BoolLit):
            self.value(a.node, env)
            return a.node.value
        t = self.value(a.node, env)
        if not isinstance(t, T.UnknownT):
            self.diags.append(
                C.E0301.at(
                    a.node.span,
                    context="keep= decides the result's shape: ",
                    expected="True or False",
                    found=expr_text(a.node),
                )
            )
        return None

    @rule("argmax")
    def _builtin_argmax(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "argmax", "x", float_only=False)
        keep = self._keep_arg(bound.get("keep"), env)
        if t is None:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.UNKNOWN
        axis = self.dim_arg(bound["over"], env, t, "argmax", bound["x"])
        self.axes[node] = axis
        if axis is None or keep is None:
            return T.UNKNOWN
        t = self.named_over(t, axis, bound["over"])
        return T.TensorT(_reduced(t.dims, axis, keep), T.index_of(t.dims[axis]))

    @rule("normalize")
    def _builtin_normalize(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        # layer_norm, rms_norm: x's shape and plain float type (a normalised
        # value may be negative: not NonNeg, not Prob); eps= a number > 0
        from .norm_rules import _per_channel

        t = self.tensor_arg(bound["x"], env, b.name, "x")
        ok = number_arg(self, bound.get("eps"), env, f"eps of {b.name}", 0.0, lo_open=True)
        # layer_norm's weight= and bias=: [d] of x's element type
        affine = [(bound[k], self.tensor_arg(bound[k], env, b.name, k)) for k in ("weight", "bias") if k in bound]
        if t is None or not ok:
            self._eval_dim_quietly(bound.get("over"), env)
            return T.UNKNOWN
        axis = self.dim_arg(bound["over"], env, t, b.name, bound["x"])
        self.axes[node] = axis
        if axis is None:
            return T.UNKNOWN
        fits = [_per_channel(self, node, a, at, b.name, t.dims[axis], t) for a, at in affine]  # each reported
        if not all(fits):
            return T.UNKNOWN
        t = self.named_over(t, axis, bound["over"])
        return T.TensorT(t.dims, T.Elem(t.elem.dtype))

    @rule("mse")
    def _builtin_mse(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        p = self.tensor_arg(bound["pred"], env, "mse", "pred")
        t = self.tensor_arg(bound["target"], env, "mse", "target")
        if p is None or t is None:
            return T.scalar(T.NONNEG)
        if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
            self.diags.append(
                C.E0201.at(
                    bound["target"].node.span,
                    context="target of mse (same shape as pred): ",
                    expected=str(T.TensorT(p.dims, t.elem)),
                    found=str(t),
                )
            )
        elif p.elem.dtype != t.elem.dtype:
            self.diags.append(
                C.E0302.at(
                    node.span, context="mse needs one element type: ", expected=p.show_elem(), found=t.show_elem()
                )
            )
        else:
            self._same_shape_dims(b.name, bound, "pred", p, "target", t)
        return T.scalar(T.Elem(p.elem.dtype, "nonneg"))

    def _same_shape_dims(
        self: BodyChecker, fn: str, bound: Bound, first: str, p: T.TensorT, second: str, t: T.TensorT
    ) -> None:
        """Two operands of one shape (torch would broadcast a size-1 dim
        silently): a dim known only at run time on one side is checked
        against the other's known dim."""
        self.note_dims(bound[second].node, T.TensorT(p.dims, t.elem), t, f"{fn}(): ", f"argument '{second}'")
        self.note_dims(bound[first].node, T.TensorT(t.dims, p.elem), p, f"{fn}(): ", f"argument '{first}'")

    @rule("same_shape_loss")
    def _builtin_same_shape_loss(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """binary_cross_entropy_with_logits(z, y), kl_div(logp, q): two float tensors of one shape and
        element type give a [] NonNeg."""
        first, second = (p.name for p in b.params)
        p = self.tensor_arg(bound[first], env, b.name, first)
        t = self.tensor_arg(bound[second], env, b.name, second)
        if p is None or t is None:
            return T.scalar(T.NONNEG)
        if p.rank != t.rank or not all(T.dims_equal(x, y) for x, y in zip(p.dims, t.dims)):
            self.diags.append(
                C.E0201.at(
                    bound[second].node.span,
                    context=f"{second} of {b.name} (same shape as {first}): ",
                    expected=str(T.TensorT(p.dims, t.elem)),
                    found=str(t),
                )
            )
        elif p.elem.dtype != t.elem.dtype:
            self.diags.append(
                C.E0302.at(
                    node.span, context=f"{b.name} needs one element type: ", expected=p.show_elem(), found=t.show_elem()
                )
            )
        else:
            self._same_shape_dims(b.name, bound, first, p, second, t)
        return T.scalar(T.Elem(p.elem.dtype, "nonneg"))

    @rule("dropout")
    def _builtin_dropout(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "dropout", "x")
        self.expect_number(bound["p"], env, "Float", "p")
        mode = self.value(bound["mode"].node, env)
        if not isinstance(mode, (T.ModeT, T.UnknownT)):
            self.diags.append(
                C.E0301.at(
                    bound["mode"].node.span, context="mode of dropout: ", expected="Mode", found=T.describe(mode)
                )
            )
        p_node = bound["p"].node
        if isinstance(p_node, (A.FloatLit, A.IntLit)) and not (0 <= p_node.value < 1):
            self.diags.append(
                C.E0301.at(
                    p_node.span, context="p of dropout: ", expected="a probability in [0, 1)", found=str(p_node.value)
                )
            )
        if t is None:
            return T.UNKNOWN
        return T.TensorT(t.dims, T.with_refine(t.elem, "nonneg" if t.elem.nonneg else None))

    @rule("where")
    def _builtin_where(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        c = self.value(bound["cond"].node, env)
        a = self.value(bound["a"].node, env)
        bb = self.value(bound["b"].node, env)
        if any(isinstance(x, T.UnknownT) for x in (c, a, bb)):
            return T.UNKNOWN
        if not (isinstance(c, T.TensorT) and c.elem.is_bool):
            self.diags.append(
                C.E0301.at(
                    bound["cond"].node.span, context="cond of where: ", expected="a Bool tensor", found=T.describe(c)
                )
            )
            return T.UNKNOWN
        for x, k in ((a, "a"), (bb, "b")):
            if not isinstance(x, (T.TensorT, T.NumberT)) or (
                isinstance(x, T.NumberT) and x.kind not in ("Int", "Float")
            ):
                self.diags.append(
                    C.E0301.at(
                        bound[k].node.span,
                        context=f"{k} of where: ",
                        expected="a tensor or number",
                        found=T.describe(x),
                    )
                )
                return T.UNKNOWN
        elems = [x.elem for x in (a, bb) if isinstance(x, T.TensorT)]
        if len(elems) == 2 and elems[0].dtype != elems[1].dtype:
            assert isinstance(a, T.TensorT) and isinstance(bb, T.TensorT)
            self.diags.append(
                C.E0302.at(
                    node.span,
                    context="where needs one element type for a and b: ",
                    expected=a.show_elem(),
                    found=bb.show_elem(),
                )
            )
            return T.UNKNOWN
        elem = elems[0] if elems else T.F32
        if len(elems) == 2:
            j = S.join(T.TensorT((), elems[0]), T.TensorT((), elems[1]))
            elem = j.elem if isinstance(j, T.TensorT) else elems[0].plain()
        else:
            elem = elem.plain() if elem.index is None else T.Elem(elem.dtype)
        dims: object = c.dims
        for x in (a, bb):
            if isinstance(x, T.TensorT):
                dims = S.broadcast(dims, x.dims)
                if isinstance(dims, S.DimClash):
                    self.diags.append(
                        C.E0202.at(
                            node.span, op="where", left=str(c), right=str(x), a=str(dims.left), b=str(dims.right)
                        )
                    )
                    return T.UNKNOWN
        return T.TensorT(dims, elem)

    @rule("clamp")
    def _builtin_clamp(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.tensor_arg(bound["x"], env, "clamp", "x", float_only=False)
        lo, hi = bound.get("min"), bound.get("max")
        kinds: dict[str, T.Type] = {}  # the bounds' types
        for k, a in (("min", lo), ("max", hi)):
            if a is not None:
                kt = kinds[k] = self.value(a.node, env)
                if not isinstance(kt, (T.UnknownT, T.NumberT)) or (
                    isinstance(kt, T.NumberT) and kt.kind not in ("Int", "Float")
                ):
                    self.diags.append(
                        C.E0301.at(a.node.span, context=f"{k} of clamp: ", expected="a number", found=T.describe(kt))
                    )
                    return T.UNKNOWN
        if lo is None and hi is None:
            paren = node.paren_span if isinstance(node, A.Call) else node.span
            self.diags.append(C.E0403.at(paren, name="clamp", param="min= or max= (or both)"))
            return T.UNKNOWN
        lo_v = _literal_number(lo.node) if lo is not None else None
        hi_v = _literal_number(hi.node) if hi is not None else None
        if lo_v is not None and hi_v is not None and lo_v > hi_v:
            assert lo is not None
            self.diags.append(
                C.E0301.at(
                    lo.node.span, context="min of clamp: ", expected=f"a number <= max ({hi_v})", found=str(lo_v)
                )
            )
            return T.UNKNOWN
        if t is None:
            return T.UNKNOWN
        if t.elem.is_bool:
            self.diags.append(C.E0306.at(bound["x"].node.span, op="clamp", left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        if not t.elem.is_float:
            for k, a in (("min", lo), ("max", hi)):
                at = kinds.get(k)
                if a is not None and isinstance(at, T.NumberT) and at.kind == "Float":
                    self.diags.append(
                        C.E0302.at(
                            a.node.span,
                            context=f"{k} of clamp on an integer tensor: ",
                            expected=t.show_elem(),
                            found="Float",
                        )
                    )
                    return T.UNKNOWN
            return T.TensorT(t.dims, T.Elem(t.elem.dtype))
        # Refinement from literal bounds: min >= 0 gives NonNeg, and max <= 1
        # as well gives Prob. (A max that is not a literal could be below min,
        # where torch gives max: then only a NonNeg max keeps the result NonNeg.)
        hi_t = kinds.get("max")
        hi_nonneg = hi is None or hi_v is not None or (isinstance(hi_t, T.NumberT) and hi_t.nonneg)
        refine = None
        if lo_v is not None and lo_v >= 0 and hi_nonneg:
            refine = "prob" if hi_v is not None and hi_v <= 1 else "nonneg"
        return T.TensorT(t.dims, T.with_refine(t.elem, refine))

    @rule("maximum")
    def _builtin_maximum(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """maximum(a, b) / minimum(a, b): elementwise, broadcast and typed as `a + b` is."""
        ta = self.value(bound["a"].node, env)
        tb = self.value(bound["b"].node, env)
        if isinstance(ta, T.UnknownT) or isinstance(tb, T.UnknownT):
            return T.UNKNOWN
        for t, k in ((ta, "a"), (tb, "b")):
            if isinstance(t, T.GradT):
                self.diags.append(C.E1108.at(bound[k].node.span, operation=f"{b.name}({T.describe(t)})"))
                return T.UNKNOWN
            if not (isinstance(t, T.TensorT) or (isinstance(t, T.NumberT) and t.kind in ("Int", "Float"))):
                self.diags.append(
                    C.E0301.at(
                        bound[k].node.span,
                        context=f"argument '{k}' of {b.name}: ",
                        expected="a tensor or number",
                        found=T.describe(t),
                    )
                )
                return T.UNKNOWN
            if isinstance(t, T.TensorT) and t.elem.is_bool:
                self.diags.append(C.E0306.at(bound[k].node.span, op=b.name, left=T.describe(t), right="", detail=""))
                return T.UNKNOWN
        if not isinstance(ta, T.TensorT) and not isinstance(tb, T.TensorT):
            self.diags.append(
                C.E0301.at(
                    node.span,
                    context=f"{b.name} of two numbers: ",
                    expected="a tensor on one side at least",
                    found=f"{ta} and {tb}",
                )
            )
            return T.UNKNOWN
        ea = ta.elem if isinstance(ta, T.TensorT) else None
        eb = tb.elem if isinstance(tb, T.TensorT) else None
        if isinstance(ta, T.TensorT) and isinstance(tb, T.TensorT) and ta.elem.dtype != tb.elem.dtype:
            self.diags.append(
                C.E0302.at(
                    node.span,
                    context=f"{b.name} needs one element type for a and b: ",
                    expected=ta.show_elem(),
                    found=tb.show_elem(),
                )
            )
            return T.UNKNOWN
        elem = ea or eb
        assert elem is not None
        number = ta if isinstance(ta, T.NumberT) else tb if isinstance(tb, T.NumberT) else None
        if number is not None and number.kind == "Float" and not elem.is_float:
            tensor = ta if isinstance(ta, T.TensorT) else tb
            assert isinstance(tensor, T.TensorT)
            self.diags.append(
                C.E0302.at(
                    node.span,
                    context=f"{b.name} of an integer tensor and a Float: ",
                    expected=tensor.show_elem(),
                    found="Float",
                )
            )
            return T.UNKNOWN
        dims = S.broadcast(ta.dims if isinstance(ta, T.TensorT) else (), tb.dims if isinstance(tb, T.TensorT) else ())
        if isinstance(dims, S.DimClash):
            self.diags.append(
                C.E0202.at(
                    node.span,
                    op="and",
                    left=str(ta),
                    right=f"{tb} in {b.name}",
                    a=str(dims.left),
                    b=str(dims.right),
                )
            )
            return T.UNKNOWN
        if not elem.is_float:
            return T.TensorT(dims, T.Elem(elem.dtype))

        def nonneg(t: T.Type) -> bool:
            return t.nonneg if isinstance(t, T.NumberT) else isinstance(t, T.TensorT) and t.elem.nonneg

        def prob(t: T.Type) -> bool:
            return isinstance(t, T.TensorT) and t.elem.refine == "prob"

        refine = None
        if b.name == "maximum":  # >= each side: NonNeg if either is; Prob if both are
            refine = "prob" if prob(ta) and prob(tb) else "nonneg" if nonneg(ta) or nonneg(tb) else None
        elif nonneg(ta) and nonneg(tb):  # minimum: <= each side, >= 0 when both are
            refine = "prob" if prob(ta) or prob(tb) else "nonneg"
        return T.TensorT(dims, T.with_refine(elem, refine))

    @rule("norm")
    def _builtin_norm(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.value(bound["x"].node, env)
        over, p, keep_a = bound.get("over"), bound.get("p"), bound.get("keep")
        if T.is_example_grads(t) or isinstance(t, T.GradT):
            extra = next((a for a in (over, p, keep_a) if a is not None), None)
            if extra is not None:  # a gradient's norm is of all its values together
                self.diags.append(C.E1108.at(extra.span, operation=f"norm({T.describe(t)}, {extra.keyword}=...)"))
                return T.UNKNOWN
        if T.is_example_grads(t):
            assert isinstance(t, T.StackT) and isinstance(t.item, T.GradT)
            return T.TensorT((t.dim,), self._grad_norm_elem(t.item))
        if isinstance(t, T.GradT):
            return T.scalar(self._grad_norm_elem(t))
        number_arg(self, p, env, "p of norm", 0.0, lo_open=True)
        keep = keep_arg(self, keep_a, env)
        if isinstance(t, T.UnknownT):
            quiet_over(self, over)
            return T.scalar(T.NONNEG) if over is None and keep is False else T.UNKNOWN
        if not (isinstance(t, T.TensorT) and t.elem.is_float):
            self.diags.append(
                C.E0301.at(
                    bound["x"].node.span,
                    context="argument of norm: ",
                    expected="a gradient or a float tensor",
                    found=T.describe(t),
                )
            )
            return T.UNKNOWN
        elem = T.Elem(t.elem.dtype, "nonneg")
        if over is None:
            self.axes[node] = None
            if keep is None:
                return T.UNKNOWN
            return T.TensorT(tuple(T.DimLit(1) for _ in t.dims) if keep else (), elem)
        got = over_axes(self, over, env, t, "norm", bound["x"])
        self.axes[node] = axes_value(over, got[0]) if got is not None else None
        if got is None or keep is None:
            return T.UNKNOWN
        return T.TensorT(without(t.dims, got[0], keep), elem)

    def _grad_norm_elem(self: BodyChecker, g: T.GradT) -> T.Elem:
        """A gradient's norm: NonNeg, of its first leaf param's dtype (sub-models' included)."""
        for m in model_closure(self.g, g.of):
            self.global_kind(m if isinstance(m, str) else m.name)  # the leaves depend on every model inside g's
        leaves = leaf_params(self.g, g.of)
        first = leaves[0][2].type if leaves else None
        return T.Elem(first.elem.dtype if isinstance(first, T.TensorT) else "f32", "nonneg")

    def grad_type_arg(self: BodyChecker, a: CallArg, env: Env) -> T.Type | None:
        """`Grad[M]` written as zeros' or randn's argument: the gradient type
        (None when the argument is something else). The model is read as any
        model named in an expression (`M`, `layers.M`, `Linear[D, H]`), so the
        gradient holds its qualified name, the one every other type of that
        model holds (`from layers import M` and `layers.M` are one type)."""
        e = a.node
        if not (
            isinstance(e, A.Index)
            and isinstance(e.value, A.Name)
            and e.value.name == "Grad"
            and "Grad" not in env.vars
            and isinstance(e.index, (A.Name, A.Field, A.Index))
        ):
            return None
        if isinstance(e.index, A.Name) and e.index.name not in env.vars:
            kind = self.global_kind(e.index.name)
            if kind is not None and kind.startswith("broken"):
                return T.UNKNOWN
            if kind != "model":
                name = e.index.name
                self.diags.append(C.E0303.at(e.span, type=f"Grad[{name}]", reason=f"{name} is not a model"))
                return T.UNKNOWN
        inner = self.expr(e.index, env)
        if isinstance(inner, T.ModelClassT) and inner.applied:
            t = T.GradT(inner.name, None, inner.dims, inner.options)
            self.types[e] = t
            return t
        if isinstance(inner, T.ModelClassT):
            sig = self.g.names.model_sigs.get(inner.name)
            dims = sig.dims if sig is not None else ()
            written = expr_text(e.index)
            self.diags.append(
                C.E0910.at(
                    e.index.span,
                    model=written,
                    problem=f"{takes_dims(dims)}: write Grad[{written}[{', '.join(dims)}]] with the dims of the instance",
                )
            )
        elif not isinstance(inner, T.UnknownT):
            written = expr_text(e.index)
            self.diags.append(C.E0303.at(e.span, type=f"Grad[{written}]", reason=f"{written} is not a model"))
        return T.UNKNOWN

    @rule("randn")
    def _builtin_randn(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        g = self.grad_type_arg(bound["shape"], env)
        if g is not None:
            self.expect_number(bound["seed"], env, "Int", "seed")
            return g
        t = self.shape_arg(bound["shape"], "randn")
        self.expect_number(bound["seed"], env, "Int", "seed")
        if t is None:
            return T.UNKNOWN
        if not t.elem.is_float or t.elem.refine is not None:
            self.diags.append(
                C.E0309.at(
                    bound["shape"].node.span,
                    elem=str(t.elem),
                    reason="randn gives plain floats (Float, f16, bf16 or f64)",
                )
            )
            return T.UNKNOWN
        return t

    @rule("randint")
    def _builtin_randint(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        t = self.shape_arg(bound["shape"], "randint")
        self.expect_number(bound["seed"], env, "Int", "seed")
        if t is None:
            return T.UNKNOWN
        if t.elem.index is None:
            self.diags.append(
                C.E0309.at(
                    bound["shape"].node.span,
                    elem=str(t.elem),
                    reason="randint needs an Index[C] element type, as in [64] Index[C]",
                )
            )
            return T.UNKNOWN
        return t

    @rule("filled")
    def _builtin_filled(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        if b.name == "zeros":
            g = self.grad_type_arg(bound["shape"], env)
            if g is not None:
                return g
        t = self.shape_arg(bound["shape"], b.name)
        if t is None:
            return T.UNKNOWN
        return t

    @rule("range")
    def _builtin_range(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        for k in ("start", "stop", "step"):
            if k in bound:
                self.expect_number(bound[k], env, "Int", f"{k} of range")
        return T.RangeT()

    @rule("train")
    def _builtin_train(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        self.expect_number(bound["seed"], env, "Int", "seed")
        return T.MODE


def _literal_number(e: A.Expr) -> float | None:
    """The value of a number literal such as 1.0, -2 or +0.5; None for anything else."""
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return e.value
    if isinstance(e, A.Unary) and e.op in ("-", "+") and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -e.operand.value if e.op == "-" else e.operand.value
    return None
