"""Indexing: `x[i]`, gathers by labels (`emb[tokens]`), slices and their
bounds, a model class given its dims (`Linear[D, H]`)."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..declarations import dotted_text
from ..model_lists import is_model_list
from ..results import Ref
from .engine_api import EngineBase
from .env import Env
from .text import expr_text


class IndexingRules(EngineBase):
    def index(self, e: A.Index, env: Env) -> T.Type:
        """`x[i]` drops the first dim; `x[labels]` with labels `[..] Index[V]`
        gathers along a first dim V (an embedding); `x[i:j]` keeps (j-i) of it."""
        written = dotted_text(e.value)
        if (
            written is not None
            and not (isinstance(e.value, A.Name) and e.value.name in env.vars)
            and self.written_kind(written) == "alias"
        ):
            return self.alias_class_args(e, written)
        t = self.expr(e.value, env)
        if isinstance(t, T.ModelClassT):
            return self.model_class_args(e, t)
        t = self.as_value(e.value, t)
        if isinstance(e.index, (A.Subscripts, A.Slice)):
            return self.subscripts(e, t, env)
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
        if isinstance(t, T.ListT):  # hs[i]
            shown = expr_text(e.value)
            if t.item is None:
                self.diags.append(C.E0962.at(e.span, name=shown, use="indexing"))
                return T.UNKNOWN
            k = self.int_value(e.index)
            n = T.dim_value(t.length) if t.length is not None else None
            if k is not None and n is not None and not -n <= k < n:
                self.diags.append(C.E0967.at(e.index.span, name=shown, index=k, length=n))
                return T.UNKNOWN
            return t.item
        if is_model_list(t):  # self.layers[1]
            assert isinstance(t, T.TupleT)
            return self.index_models(e, t, env)
        if isinstance(t, T.TensorT):
            if t.rank == 0:
                self.diags.append(C.E0210.at(e.span, operation="indexing", needed="1 dim or more", found=str(t)))
                return T.UNKNOWN
            if not self._index_in_range(e.index, t.dims[0]):
                return T.UNKNOWN
            return T.TensorT(t.dims[1:], t.elem)
        self.diags.append(C.E0306.at(e.span, op="indexing", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN

    def model_class_args(self, e: A.Index, t: T.ModelClassT) -> T.Type:
        """`Linear[D, H, bias=False]` in an expression: the model with those
        dims and options (checked as in a type), ready for `.init(seed=...)`."""
        given = self._type_args(e, t.name)
        if given is None:
            return T.UNKNOWN
        args, options = given
        if t.dims or t.options:
            self.diags.append(C.E0910.at(e.index.span, model=str(t)[6:], problem=C.E0910.say("has_dims")))
            return T.UNKNOWN
        ctx = self.type_context()
        name_node = A.Ident(e.value.span, dotted_text(e.value) or expr_text(e.value))  # `nn.Linear` as written
        model = ctx.model(name_node, tuple(args), tuple(options), e.span)
        self._take(ctx)
        if not isinstance(model, T.ModelT):
            return T.UNKNOWN
        return T.ModelClassT(model.name, model.dims, model.options)

    def alias_class_args(self, e: A.Index, written: str) -> T.Type:
        """`Lin[D, H]` in an expression, `type Lin[i, o] = Linear[i, o,
        bias=False]`: the class of the model instance it stands for."""
        given = self._type_args(e, written)
        if given is None:
            return T.UNKNOWN
        ctx = self.type_context()
        t = ctx.alias(A.Ident(e.value.span, written), tuple(given[0]), tuple(given[1]), e.span)
        self._take(ctx)
        if isinstance(t, T.ModelT):
            self.global_kind(t.name)  # (the body depends on the model too, as if it were written)
            self.refs[e.value.name if isinstance(e.value, A.Field) else e.value] = Ref("model", t.name)
            return T.ModelClassT(t.name, t.dims, t.options)
        if not isinstance(t, T.UnknownT):
            self.diags.append(C.E0110.at(e.value.span, name=written, kind="a type alias", use="a value"))
        return T.UNKNOWN

    def _type_args(self, e: A.Index, owner: str) -> tuple[list[A.TypeArg], list[A.TypeOption]] | None:
        """The dims and options written in `Model[...]` in an expression (None when one is no dim)."""
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
            arg = _dim_node(item) if not isinstance(item, (A.Slice, A.Arg, A.EllipsisItem)) else None
            if arg is None:
                self.diags.append(
                    C.E0910.at(
                        item.span,
                        model=owner,
                        problem=C.E0910.say(
                            "dims_here", found=expr_text(item) if not isinstance(item, A.Slice) else "a slice"
                        ),
                    )
                )
                return None
            args.append(arg)
        return args, options

    def gather(self, e: A.Index, t: T.Type, labels: T.TensorT) -> T.Type:
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

    def slice_bound(self, b: A.Expr | None, n: DX.Poly | None, default: DX.Poly | None) -> DX.Poly | None:
        """A slice bound as a dim normal form: literals, dim constants,
        generic dims and + - * of them (a negative one counts from the end,
        as in Python: `x[-2:]`, `x[T-10:]` with T = 8, `x[-t:]`); None when
        its value is only known at run time."""
        if b is None:
            return default
        p = self.bound_poly(b)
        if p is None:
            return None
        value = DX.value(p)
        if value is not None and value < 0 or value is None and isinstance(b, A.Unary) and b.op == "-":
            return DX.add(n, p) if n is not None else None
        return p

    def bound_poly(self, e: A.Expr) -> DX.Poly | None:
        """An Int expression of integer literals, dim constants and generic
        dims joined by + - * as a dim normal form; None when it is known
        only at run time."""
        if isinstance(e, A.IntLit):
            return DX.const(e.value)
        if isinstance(e, A.Name) and e.name in self.fn.generics:
            return DX.var(e.name)
        if isinstance(e, A.Unary) and e.op in ("-", "+"):
            p = self.bound_poly(e.operand)
            return None if p is None else DX.neg(p) if e.op == "-" else p
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
            left, right = self.bound_poly(e.left), self.bound_poly(e.right)
            if left is None or right is None:
                return None
            return DX.add(left, right) if e.op == "+" else DX.sub(left, right) if e.op == "-" else DX.mul(left, right)
        value = self.int_value(e)
        return DX.const(value) if value is not None else None

    def int_value(self, e: A.Expr) -> int | None:
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
