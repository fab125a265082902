"""Indexing: `x[i]`, gathers by labels (`emb[tokens]`), slices and their
bounds, a model class given its dims (`Linear[D, H]`)."""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
# (the methods of these parts annotate self with BodyChecker, the class they
# are composed into, so each part sees the whole checker; pyright calls that
# a general type issue.)
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..declarations import dotted_text
from .env import Env
from .text import expr_text

if TYPE_CHECKING:
    from .core import BodyChecker


class IndexingRules:
    def index(self: BodyChecker, e: A.Index, env: Env) -> T.Type:
        """`x[i]` drops the first dim; `x[labels]` with labels `[..] Index[V]`
        gathers along a first dim V (an embedding); `x[i:j]` keeps (j-i) of it."""
        t = self.expr(e.value, env)
        if isinstance(t, T.ModelClassT):
            return self.model_class_args(e, t)
        t = self.as_value(e.value, t)
        if isinstance(e.index, A.Subscripts):
            for item in e.index.items:
                if isinstance(item, A.Slice):
                    for bound in (item.start, item.end):
                        if bound is not None:
                            self.value(bound, env)
                elif isinstance(item, A.Arg):
                    self.value(item.value, env)
                else:
                    self.value(item, env)
            if not isinstance(t, T.UnknownT):
                self.diags.append(C.E0215.at(e.index.span, what=f"{expr_text(e.value)}[{expr_text(e.index)}]"))
            return T.UNKNOWN
        if isinstance(e.index, A.Slice):
            return self.slice(e, e.index, t, env)
        i = self.value(e.index, env)
        if isinstance(i, T.TensorT) and not isinstance(t, T.UnknownT):
            return self.gather(e, t, i)
        if isinstance(i, T.NumberT) and i.kind != "Int":
            self.diags.append(C.E0301.at(e.index.span, context="index: ", expected="Int", found=T.describe(i)))
            return T.UNKNOWN
        if not isinstance(i, (T.NumberT, T.UnknownT)):
            self.diags.append(C.E0301.at(e.index.span, context="index: ", expected="Int", found=T.describe(i)))
            return T.UNKNOWN
        if isinstance(t, T.UnknownT):
            return t
        if isinstance(t, T.StackT) and not t.per_example:
            return t.item
        if isinstance(t, T.TensorT):
            if t.rank == 0:
                self.diags.append(C.E0210.at(e.span, operation="indexing", needed="1 dim or more", found=str(t)))
                return T.UNKNOWN
            return T.TensorT(t.dims[1:], t.elem)
        self.diags.append(C.E0306.at(e.span, op="indexing", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN

    def model_class_args(self: BodyChecker, e: A.Index, t: T.ModelClassT) -> T.Type:
        """`Linear[D, H, bias=False]` in an expression: the model with those
        dims and options (checked as in a type), ready for `.init(seed=...)`."""
        items = e.index.items if isinstance(e.index, A.Subscripts) else (e.index,)
        args: list[A.TypeArg] = []
        options: list[A.TypeOption] = []
        for item in items:
            if isinstance(item, A.Arg) and item.keyword is not None:
                value = item.value.value if isinstance(item.value, A.BoolLit) else None
                number = item.value.value if isinstance(item.value, A.FloatLit) else None
                dim = _plain_dim(item.value) if value is None and number is None else None
                options.append(A.TypeOption(item.span, item.keyword, (), value, dim, number))
                continue
            arg = _dim_node(item) if not isinstance(item, (A.Slice, A.Arg)) else None
            if arg is None:
                self.diags.append(
                    C.E0910.at(
                        item.span,
                        model=t.name,
                        problem="takes dims here (a name, a number or (dim arithmetic)), "
                        f"found {expr_text(item) if not isinstance(item, A.Slice) else 'a slice'}",
                    )
                )
                return T.UNKNOWN
            args.append(arg)
        if t.dims or t.options:
            self.diags.append(C.E0910.at(e.index.span, model=str(t)[6:], problem="has its dims already"))
            return T.UNKNOWN
        ctx = self.type_context()
        name_node = A.Ident(e.value.span, dotted_text(e.value) or expr_text(e.value))  # `nn.Linear` as written
        model = ctx.model(name_node, tuple(args), tuple(options), e.span)
        self._take(ctx)
        if not isinstance(model, T.ModelT):
            return T.UNKNOWN
        return T.ModelClassT(model.name, model.dims, model.options)

    def gather(self: BodyChecker, e: A.Index, t: T.Type, labels: T.TensorT) -> T.Type:
        """`m.emb[tokens]`: `[V E]` indexed by `[b T] Index[V]` is `[b T E]`."""
        if not isinstance(t, T.TensorT) or t.rank == 0:
            self.diags.append(C.E0210.at(e.span, operation="indexing", needed="1 dim or more", found=T.describe(t)))
            return T.UNKNOWN
        first = t.dims[0]
        want = T.TensorT(labels.dims, T.index_of(first))
        if labels.elem.index is None or not T.dims_equal(labels.elem.index, first):
            what = f"index into {expr_text(e.value)} ({t}) by labels of its first dim {first}: "
            self.diags.append(C.E0305.at(e.index.span, context=what, expected=str(want), found=str(labels)))
            return T.UNKNOWN
        return T.TensorT(labels.dims + t.dims[1:], t.elem)

    def slice(self: BodyChecker, e: A.Index, s: A.Slice, t: T.Type, env: Env) -> T.Type:
        """`x[i:j]`: the first dim becomes (j-i); bounds are Ints, and when
        they are literals or dims the size is known (negative: from the end)."""
        bounds = []
        for b in (s.start, s.end):
            if b is not None:
                bt = self.value(b, env)
                if not isinstance(bt, T.UnknownT) and not (isinstance(bt, T.NumberT) and bt.kind == "Int"):
                    self.diags.append(C.E0301.at(b.span, context="slice bound: ", expected="Int", found=T.describe(bt)))
                    return T.UNKNOWN
            bounds.append(b)
        if isinstance(t, T.UnknownT):
            return t
        if not isinstance(t, T.TensorT):
            self.diags.append(C.E0306.at(e.span, op="slicing", left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        if t.rank == 0:
            self.diags.append(C.E0210.at(e.span, operation="slicing", needed="1 dim or more", found=str(t)))
            return T.UNKNOWN
        n = T.dim_poly(t.dims[0])
        start = self.slice_bound(s.start, n, DX.const(0))
        end = self.slice_bound(s.end, n, n)
        if start is None or end is None or n is None:
            return T.TensorT((T.DimUnknown(),) + t.dims[1:], t.elem)
        size = DX.sub(end, start)
        value, whole = DX.value(size), DX.value(n)
        lo, hi = DX.value(start), DX.value(end)
        problem = None
        if value is not None and value <= 0:
            problem = f"it keeps {value} of {t.dims[0]}"
        elif whole is not None and ((lo is not None and lo > whole) or (hi is not None and hi > whole)):
            problem = f"it reaches past the end of {t.dims[0]}"
        if problem is not None:
            self.diags.append(C.E0213.at(s.span, dim=str(t.dims[0]), reason=problem))
            return T.UNKNOWN
        return T.TensorT((T.dim_of_poly(size),) + t.dims[1:], t.elem)

    def slice_bound(self: BodyChecker, b: A.Expr | None, n: DX.Poly | None, default: DX.Poly | None) -> DX.Poly | None:
        """A slice bound as a dim normal form: a generic dim, or a literal, a
        dim constant or arithmetic of them (negative counts from the end, as
        in Python); None when its value is only known at run time."""
        if b is None:
            return default
        if isinstance(b, A.IntLit):
            return DX.const(b.value)
        if isinstance(b, A.Unary) and b.op == "-" and isinstance(b.operand, A.IntLit):
            return DX.sub(n, DX.const(b.operand.value)) if n is not None else None
        if isinstance(b, A.Name) and b.name in self.fn.generics:
            return DX.var(b.name)
        value = self.int_value(b)
        if value is None:
            return None
        if value < 0:  # from the end, as in Python: x[T-10:] with T = 8 is x[-2:]
            return DX.sub(n, DX.const(-value)) if n is not None else None
        return DX.const(value)

    def int_value(self: BodyChecker, e: A.Expr) -> int | None:
        """The value of an Int expression of integer literals and dim
        constants joined by + - * (`T - 1`); None when it is known only at
        run time."""
        if isinstance(e, A.IntLit):
            return e.value
        if isinstance(e, A.Unary) and e.op in ("-", "+"):
            v = self.int_value(e.operand)
            return None if v is None else -v if e.op == "-" else v
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
            left, right = self.int_value(e.left), self.int_value(e.right)
            if left is None or right is None:
                return None
            return left + right if e.op == "+" else left - right if e.op == "-" else left * right
        const = self.dim_constant(e)
        return self.g.names.dim_values.get(const[1]) if const is not None else None


def _dim_node(e: A.Expr) -> A.TypeArg | None:
    """A dim written as an expression (`D`, `784`, `2*E`, `layers.H`), as a
    type would hold it; None for anything else."""
    if isinstance(e, A.IntLit):
        return A.DimInt(e.span, e.value)
    written = dotted_text(e)
    if written is not None:
        return A.NamedType(e.span, A.Ident(e.span, written))
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
        left, right = _plain_dim(e.left), _plain_dim(e.right)
        if left is not None and right is not None:
            return A.DimBinary(e.span, e.op, left, right)
    return None


def _plain_dim(e: A.Expr) -> A.Dim | None:
    d = _dim_node(e)
    if isinstance(d, A.NamedType):
        return A.DimName(d.span, d.name.text)
    return d if isinstance(d, (A.DimInt, A.DimBinary)) else None
