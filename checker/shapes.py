"""Shape arithmetic: broadcasting, matmul, generic-dim binding, compatibility.

Functions here return results or a small description of what went wrong;
they never build diagnostics themselves (the body checker does, with the
right code and range).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from . import dimexpr as DX
from . import types as T
from .ast import Span


@dataclass(frozen=True)
class DimClash:
    """Two dims that had to agree and did not (index counted from the left
    of the *longer* operand, as shown to the user)."""

    left: T.Dim
    right: T.Dim


def element_count(dims: tuple[T.Dim, ...]) -> DX.Poly | None:
    """The number of elements of a shape, as a normal form (None: unknown)."""
    out = DX.const(1)
    for d in dims:
        p = T.dim_poly(d)
        if p is None:
            return None
        out = DX.mul(out, p)
    return out


def broadcast(a: tuple[T.Dim, ...], b: tuple[T.Dim, ...]) -> tuple[T.Dim, ...] | DimClash:
    """Trailing alignment: each pair of dims must be equal or one of them 1."""
    out: list[T.Dim] = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else None
        db = b[-i] if i <= len(b) else None
        if da is None:
            out.append(db)  # type: ignore[arg-type]
        elif db is None:
            out.append(da)
        elif T.dims_equal(da, db):
            # Prefer the more informative spelling (a name over a literal, a
            # static dim over one known only at run time).
            out.append(T.prefer(da, db))
        elif T.is_one(da):
            out.append(db)
        elif T.is_one(db):
            out.append(da)
        else:
            return DimClash(da, db)
    out.reverse()
    return tuple(out)


def matmul(a: tuple[T.Dim, ...], b: tuple[T.Dim, ...]) -> tuple[T.Dim, ...] | DimClash | str:
    """`a @ b` as torch.matmul: 1-d operands are vectors, leading dims
    broadcast. Returns the result dims, the clashing inner dims, or a reason."""
    if len(a) == 0 or len(b) == 0:
        return "scalar"
    inner_a = a[-1]
    inner_b = b[-2] if len(b) >= 2 else b[-1]
    if not T.dims_equal(inner_a, inner_b):
        return DimClash(inner_a, inner_b)
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    batch = broadcast(a[:-2], b[:-2])
    if isinstance(batch, DimClash):
        return batch
    return batch + (a[-2], b[-1])


# ------------------------------------------------------------------ binding generic dims


@dataclass
class Binding:
    dim: T.Dim
    where: str  # the argument that bound it, for messages ("x")
    span: Span | None  # that argument's span (relative to the caller's item)


class Bindings:
    """Generic dims of a callee, bound to the caller's dims at one call."""

    def __init__(self, generics: tuple[str, ...]) -> None:
        self.generics = set(generics)
        self.bound: dict[str, Binding] = {}
        # what `..` of the callee's `[.. d]` stands for here: the leading dims
        # of the first argument written so
        self.rest: tuple[T.Dim, ...] | None = None
        # the element types of a model's DType options ("~dtype" -> "f64"),
        # bound from the instance a method is called on
        self.elems: dict[str, str] = {}
        # the Bool and Float options of the instance whose fields these are
        # (for a sub-model given one of them, `Linear[E, F, bias=bias]`)
        self.options: dict[str, bool | float | T.OptionRef] = {}
        # a generic function's type parameters (`M` of `fn f[M: CharModel]`):
        # the model each stands for at this call, bound by the first argument
        self.models: dict[str, T.ModelT] = {}
        # an instance's models for its model parameters (`B` of
        # `ResNet[BasicBlock, 1]`): B's instances in its fields become the model's
        self.ctors: dict[str, T.ModelArg] = {}
        # the options a top-level fn is generic over (`flash=fl`): bound in
        # `options` from the first model argument that gives them
        self.option_generics: set[str] = set()

    def copy(self) -> Bindings:
        out = Bindings(())
        out.generics = set(self.generics)
        out.bound, out.rest, out.elems, out.options = dict(self.bound), self.rest, dict(self.elems), dict(self.options)
        out.models = dict(self.models)
        out.ctors = dict(self.ctors)
        out.option_generics = set(self.option_generics)
        return out

    def subst_dim(self, d: T.Dim, forget: bool = False) -> T.Dim:
        """`d` with the bound generic dims replaced; with `forget`, a generic
        dim of the callee that is not bound is unknown (`?`), so a call's
        result never names the callee's own generic dims."""
        if isinstance(d, T.DimVar) and d.name in self.bound:
            return self.bound[d.name].dim
        if forget and isinstance(d, T.DimVar) and d.name in self.generics:
            return T.DimUnknown()
        if isinstance(d, T.DimExpr):
            if forget and DX.generics(d.poly) & self.generics - self.bound.keys():
                return T.DimUnknown()
            names = DX.generics(d.poly) & self.bound.keys()
            if not names:
                return d
            env = {n: T.dim_poly(self.bound[n].dim) for n in names}
            if any(p is None for p in env.values()):
                return T.DimUnknown()
            p = DX.substitute(d.poly, env)  # type: ignore[arg-type]
            return T.substituted(d, {n: self.bound[n].dim for n in names}, p) if p is not None else T.DimUnknown()
        return d

    def solve(self, d: T.DimExpr, arg: T.Dim, where: str, span: Span | None) -> T.Dim:
        """`d` with its generic dims bound, binding one from `arg` when `d` is
        a multiple of that dim plus a constant (`(t+1)` against 9 binds t to
        8; `(2*t)` against 6 binds t to 3)."""
        d2 = self.subst_dim(d)
        if not isinstance(d2, T.DimExpr):
            return d2
        free = DX.generics(d2.poly) & self.generics
        arg_poly = T.dim_poly(arg)
        if len(free) == 1 and arg_poly is not None:
            (name,) = free
            linear = DX.linear(d2.poly, name)
            if linear is not None:  # d = c*name + k: name = (arg - k) / c
                c, k = linear
                solved = DX.div(DX.sub(arg_poly, DX.const(k)), DX.const(c))
                if solved is not None:
                    self.bound[name] = Binding(T.dim_of_poly(solved), where, span)
                    return self.subst_dim(d2)
        return d2

    def subst(self, t: T.Type, forget: bool = False) -> T.Type:
        """`t` with the bound generic dims replaced (`forget`: see subst_dim)."""
        if isinstance(t, T.TensorT):
            elem = t.elem
            if elem.index is not None:
                elem = T.Elem(elem.dtype, elem.refine, self.subst_dim(elem.index, forget))
            elif elem.dtype in self.elems:
                elem = T.Elem(self.elems[elem.dtype], elem.refine)
            dims = tuple(self.subst_dim(d, forget) for d in t.dims)
            if dims and isinstance(dims[0], T.DimRest) and self.rest is not None:
                dims = self.rest + dims[1:]
            elif forget and dims and isinstance(dims[0], T.DimRest):
                return T.UNKNOWN  # `..` not bound (its argument did not fit): how many dims is not known
            return T.TensorT(dims, elem)
        if isinstance(t, T.TupleT):
            return T.TupleT(tuple(self.subst(x, forget) for x in t.items))
        if isinstance(t, T.StackT):
            return T.StackT(self.subst_dim(t.dim, forget), self.subst(t.item, forget), t.per_example)
        if isinstance(t, T.ModelT) and t.bound and t.name in self.ctors:  # `B[C1, C2]`: BasicBlock[C1, C2]
            arg = self.ctors[t.name]
            inner = self.subst(dataclasses.replace(t, bound=()), forget)
            assert isinstance(inner, T.ModelT)
            return T.ModelT(arg.name, inner.dims, inner.options, bound=arg.bound)
        if isinstance(t, (T.ModelT, T.GradT, T.OptimT)) and t.bound and self.models:
            return _put_model(t, self.models)
        if isinstance(t, (T.ModelT, T.GradT, T.OptimT)) and (t.dims or t.options):
            options = t.options
            if self.options and any(isinstance(v, T.OptionRef) for _, v in options):
                # `LSTMCell[I, H, bias=bias]` in an instance with bias=False: bias=False;
                # with the sub-model's default, the plain type
                options = tuple(
                    (k, self.options[v.name] if isinstance(v, T.OptionRef) and v.name in self.options else v)
                    for k, v in options
                    if not (isinstance(v, T.OptionRef) and v.name in self.options and self.options[v.name] == v.default)
                )
            if self.elems and any(v in self.elems for _, v in options if isinstance(v, str)):
                # `Linear[E, F, dtype=dtype]` in an instance of f64: dtype=f64; of f32, the default
                options = tuple(
                    (k, self.elems.get(v, v) if isinstance(v, str) else v)
                    for k, v in options
                    if not (isinstance(v, str) and self.elems.get(v) == T.DTYPE_DEFAULT)
                )
            if self.options and any(isinstance(v, T.OptionRef) for _, v in options):
                options = self._passed_on(options)
            if self.ctors and any(isinstance(v, T.ModelArg) and v.name in self.ctors for _, v in options):
                # `Stage[B, 4, 8]` in `Deep[Gated]`: Stage[Gated, 4, 8]
                options = tuple(
                    (k, self.ctors[v.name] if isinstance(v, T.ModelArg) and v.name in self.ctors else v)
                    for k, v in options
                )
            return dataclasses.replace(t, dims=tuple(self.subst_dim(d, forget) for d in t.dims), options=options)
        return t

    def _passed_on(self, options: T.Options) -> T.Options:
        """A sub-model's options with those it is given from the enclosing
        model (`bias=bias`) replaced by the instance's; one that is then the
        sub-model's default is left out, as a written default is."""
        out = []
        for k, v in options:
            if isinstance(v, T.OptionRef) and v.name in self.options:
                given = self.options[v.name]
                if isinstance(given, T.OptionRef):
                    v = T.OptionRef(given.name, v.default)
                elif given == v.default:
                    continue
                else:
                    v = given
            out.append((k, v))
        return tuple(out)

    def result(self, t: T.Type) -> T.Type:
        """A call's result type `t` as the caller sees it: the bindings made
        (all of them, or those made before a failed argument), and `?` for a
        generic dim that was not bound."""
        return self.subst(t, forget=True)


# What differs: the kind of type, the model, the shape, the element type, its
# refinement, the dim an Index indexes, or a generic dim bound two ways.
MismatchKind = Literal["kind", "model", "shape", "dtype", "refine", "index", "binding"]


@dataclass(frozen=True)
class Mismatch:
    kind: MismatchKind
    expected: T.Type
    found: T.Type
    # for "binding": the generic dim and its earlier binding
    dim: str | None = None
    earlier: Binding | None = None
    now: T.Dim | None = None


def match(param: T.Type, arg: T.Type, bindings: Bindings, where: str, span: Span | None) -> Mismatch | None:
    """Check an argument of type `arg` against a parameter type, binding the
    callee's generic dims. Unknowns match anything."""
    if isinstance(param, T.UnknownT) or isinstance(arg, T.UnknownT):
        return None
    if isinstance(param, T.OptionalT):  # `Int | None`: None, or a value of its type (or an optional one)
        if isinstance(arg, T.NoneT):
            return None
        m = match(param.inner, arg.inner if isinstance(arg, T.OptionalT) else arg, bindings, where, span)
        return None if m is None else Mismatch(m.kind, param, arg) if m.kind == "kind" else m
    if isinstance(param, T.TensorT):
        if not isinstance(arg, T.TensorT):
            return Mismatch("kind", param, arg)
        if T.has_rest(param):  # `[.. d]`: the leading dims bound once, the rest as written
            tail = param.rank - 1
            if arg.rank < tail or (T.has_rest(arg) and arg.rank - 1 != tail):
                return Mismatch("shape", param, arg)
            lead = arg.dims[: arg.rank - tail]
            if bindings.rest is None:
                bindings.rest = lead
            elif len(bindings.rest) != len(lead) or not all(T.dims_equal(x, y) for x, y in zip(bindings.rest, lead)):
                return Mismatch("shape", bindings.subst(param), arg)
            m = match(
                T.TensorT(param.dims[1:], param.elem), T.TensorT(arg.dims[len(lead) :], arg.elem), bindings, where, span
            )
            return None if m is None else Mismatch(m.kind, param, arg, m.dim, m.earlier, m.now)
        if param.rank != arg.rank:
            return Mismatch("shape", param, arg)
        for pd, ad in zip(param.dims, arg.dims):
            if isinstance(pd, T.DimExpr):
                continue  # after the plain generic dims of this argument are bound
            if isinstance(pd, T.DimVar) and pd.name in bindings.generics:
                _bind(bindings, pd.name, ad, where, span)
                earlier = bindings.bound[pd.name]
                if not T.dims_equal(earlier.dim, ad):
                    return Mismatch("binding", param, arg, pd.name, earlier, ad)
            elif not T.dims_equal(pd, ad):
                return Mismatch("shape", param, arg)
        for pd, ad in zip(param.dims, arg.dims):
            if isinstance(pd, T.DimExpr):
                want = bindings.solve(pd, ad, where, span)
                if isinstance(want, T.DimExpr) and DX.generics(want.poly) & bindings.generics:
                    continue  # a generic dim that cannot be bound from here
                if not T.dims_equal(want, ad):
                    return Mismatch("shape", param, arg)
        pe, ae = param.elem, arg.elem
        if pe.dtype in bindings.elems:  # `[.. I] dtype` of a method, on an instance of f64
            pe = T.Elem(bindings.elems[pe.dtype], pe.refine)
        if pe.dtype != ae.dtype:
            return Mismatch("dtype", param, arg)
        if pe.index is not None:
            want = bindings.subst_dim(pe.index)
            if (
                isinstance(pe.index, T.DimVar)
                and pe.index.name in bindings.generics
                and pe.index.name not in bindings.bound
            ):
                if ae.index is None:
                    return Mismatch("index", param, arg)
                bindings.bound[pe.index.name] = Binding(ae.index, where, span)
                return None
            if ae.index is None or not T.dims_equal(want, ae.index):
                return Mismatch("index", param, arg)
            return None
        if not T.elem_assignable(ae, pe):
            return Mismatch("refine", param, arg)
        return None
    if isinstance(param, T.NumberT):
        if not isinstance(arg, T.NumberT):
            return Mismatch("kind", param, arg)
        if param.kind == arg.kind or (param.kind == "Float" and arg.kind == "Int"):
            return None
        return Mismatch("kind", param, arg)
    if isinstance(param, T.ModelT):
        if isinstance(arg, T.ModelT):
            return _match_model(param, arg, param, arg, bindings, where, span)
        return Mismatch("model", param, arg)
    if isinstance(param, T.GradT):
        if isinstance(arg, T.GradT):
            if arg.wrt != param.wrt:
                return Mismatch("model", param, arg)
            return _match_model(param.of, arg.of, param, arg, bindings, where, span)
        return Mismatch("kind", param, arg)
    if isinstance(param, T.OptimT):
        if isinstance(arg, T.OptimT) and arg.kind == param.kind:
            return _match_model(param.of, arg.of, param, arg, bindings, where, span)
        return Mismatch("model" if isinstance(arg, T.OptimT) else "kind", param, arg)
    if isinstance(param, T.StackT):
        if not isinstance(arg, T.StackT) or arg.per_example != param.per_example:
            return Mismatch("kind", param, arg)
        pd, ad = param.dim, arg.dim
        if isinstance(pd, T.DimVar) and pd.name in bindings.generics:
            _bind(bindings, pd.name, ad, where, span)
            earlier = bindings.bound[pd.name]
            if not T.dims_equal(earlier.dim, ad):
                return Mismatch("binding", param, arg, pd.name, earlier, ad)
        elif not T.dims_equal(pd, ad):
            return Mismatch("shape", param, arg)
        inner = match(param.item, arg.item, bindings, where, span)
        return None if inner is None else Mismatch(inner.kind, param, arg)
    if isinstance(param, T.TupleT):
        if not isinstance(arg, T.TupleT) or len(arg.items) != len(param.items):
            return Mismatch("kind", param, arg)
        for p, a in zip(param.items, arg.items):
            m = match(p, a, bindings, where, span)
            if m is not None:
                return Mismatch(m.kind, param, arg, m.dim, m.earlier, m.now)
        return None
    if param == arg:
        return None
    return Mismatch("kind", param, arg)


def self_sized(param: T.Type, bindings: Bindings) -> bool:
    """Whether `param` writes arithmetic of the dims a layer's instance gave
    (`[(num_layers*num_directions) b H]` of `nn.LSTM[I, H, num_layers=2]`):
    such a dim is the layer's number, shown as the number where an argument
    does not fit, as a plain dim of the layer is."""
    if isinstance(param, T.TupleT):
        return any(self_sized(x, bindings) for x in param.items)
    if not isinstance(param, T.TensorT):
        return False
    for d in param.dims:
        if isinstance(d, T.DimExpr):
            names = DX.generics(d.poly) & bindings.generics
            if names and all(n in bindings.bound and bindings.bound[n].where == "self" for n in names):
                return True
    return False


def as_bound(param: T.Type, arg: T.Type, bindings: Bindings) -> T.Type:
    """`param` in the caller's dims, for the message of a call whose argument
    `arg` did not fit it: the callee's generic dims bound so far replaced,
    and each one still free taken from `arg` where it stands there, as
    matching on would have bound it. So `m: [q k] Bool` given `[s b] Bool`
    after `scores: [b q k]` bound q and k to s reads `[s s] Bool`, never
    the callee's own names beside the caller's. `bindings` is not changed."""
    shown = bindings.copy()
    _bind_free(param, arg, shown)
    return shown.subst(param)


def _bind_free(param: T.Type, arg: T.Type, b: Bindings) -> None:
    if isinstance(param, T.TensorT) and isinstance(arg, T.TensorT):
        pdims, adims = param.dims, arg.dims
        if T.has_rest(param) and not T.has_rest(arg) and arg.rank >= param.rank - 1:
            lead = arg.rank - (param.rank - 1)
            if b.rest is None:
                b.rest = adims[:lead]
            pdims, adims = pdims[1:], adims[lead:]
        if len(pdims) != len(adims):
            return
        for pd, ad in zip(pdims, adims):
            if isinstance(pd, T.DimVar) and pd.name in b.generics and pd.name not in b.bound:
                b.bound[pd.name] = Binding(ad, "", None)
        for pd, ad in zip(pdims, adims):
            if isinstance(pd, T.DimExpr):
                b.solve(pd, ad, "", None)
        pi, ai = param.elem.index, arg.elem.index
        if isinstance(pi, T.DimVar) and pi.name in b.generics and pi.name not in b.bound and ai is not None:
            b.bound[pi.name] = Binding(ai, "", None)
    elif isinstance(param, (T.GradT, T.OptimT)) and isinstance(arg, type(param)):
        _bind_free(param.of, arg.of, b)
    elif isinstance(param, T.ModelT) and isinstance(arg, T.ModelT):
        _bind_free(T.TensorT(param.dims), T.TensorT(arg.dims), b)
    elif isinstance(param, T.StackT) and isinstance(arg, T.StackT):
        _bind_free(T.TensorT((param.dim,)), T.TensorT((arg.dim,)), b)
        _bind_free(param.item, arg.item, b)
    elif isinstance(param, T.TupleT) and isinstance(arg, T.TupleT) and len(param.items) == len(arg.items):
        for p, a in zip(param.items, arg.items):
            _bind_free(p, a, b)


def _match_model(
    p: T.ModelT, a: T.ModelT, param: T.Type, arg: T.Type, bindings: Bindings, where: str, span: Span | None
) -> Mismatch | None:
    """One model (or its gradient, or its optimizer) for another: the same
    model with the same options, and its dims as a tensor's are matched,
    binding the callee's generic dims (`l: Linear[i, o]`)."""
    if p.bound or a.bound:
        return _match_param(p, a, param, arg, bindings, where, span)
    # `self` of a method takes every instance, whatever its options
    if p.name != a.name or len(p.dims) != len(a.dims):
        return Mismatch("model", param, arg)
    if p.options != a.options and not p.generic and not _bind_options(p, a, bindings):
        return Mismatch("model", bindings.subst(param) if bindings.option_generics else param, arg)
    if p.generic and p.elems:  # the element types of its DType options, for the method's types
        given = dict(a.options)
        for option in p.elems:
            value = given.get(option, T.DTYPE_DEFAULT) if not a.generic else "~" + option
            bindings.elems["~" + option] = value if isinstance(value, str) else T.DTYPE_DEFAULT
    m = match(T.TensorT(p.dims), T.TensorT(a.dims), bindings, where, span)
    if m is None:
        return None
    return Mismatch("binding" if m.kind == "binding" else "model", param, arg, m.dim, m.earlier, m.now)


def _match_param(
    p: T.ModelT, a: T.ModelT, param: T.Type, arg: T.Type, bindings: Bindings, where: str, span: Span | None
) -> Mismatch | None:
    """A type parameter's model (`M` of `fn f[M: CharModel]`) on either side.
    The callee's `M` takes the model of its first argument and then only that
    one (whether that model has the traits' methods is checked by the caller,
    checker/traits.py); a trait's own methods take a type parameter bounded
    by it as their `self`; otherwise two type parameters are one when they
    are the same."""
    if p.bound and p.name not in bindings.models and p.bound == _declared_bound(p, bindings):
        bindings.models[p.name] = a
        return None
    if p.bound and p.name in bindings.models:
        return None if bindings.models[p.name] == a else Mismatch("model", bindings.subst(param), arg)
    if a.bound and p.generic and not p.dims and p.name in a.bound:
        return None  # `m.forward(x)`: a method of the trait, on m: M
    if a.bound and p.generic and p.name in a.bound and len(p.dims) == len(a.dims):
        # `self.layer1(x)` of `layer1: B[C1, C2]`: the trait's method, its dims bound from B's
        m = match(T.TensorT(p.dims), T.TensorT(a.dims), bindings, where, span)
        return None if m is None else Mismatch("model", param, arg)
    return None if p == a else Mismatch("model", param, arg)


def _declared_bound(p: T.ModelT, bindings: Bindings) -> tuple[str, ...] | None:
    """The bound of `p` when it is a type parameter of the callee (its name
    one of the callee's generics), else None."""
    return p.bound if p.name in bindings.generics else None


def _put_model(t: T.ModelT | T.GradT | T.OptimT, models: dict[str, T.ModelT]) -> T.Type:
    """`t` with the model its type parameter stands for (`Grad[M]` -> `Grad[Bigram]`)."""
    name = t.name if isinstance(t, T.ModelT) else t.model
    m = models.get(name)
    if m is None:
        return t
    if isinstance(t, T.ModelT):
        return m
    if isinstance(t, T.GradT):
        return T.GradT(m.name, t.wrt, m.dims, m.options, m.bound)
    return T.OptimT(t.kind, m.name, m.dims, m.options, t.groups, m.bound)


def _bind_options(p: T.ModelT, a: T.ModelT, bindings: Bindings) -> bool:
    """Whether `a`'s options fit `p`'s, where `p` gives some of them the
    names of options its fn is generic over (`Transformer[E, flash=fl]`):
    each binds at its first model and must be the same at the others."""
    generic = bindings.option_generics
    if not generic or not any(isinstance(v, T.OptionRef) and v.name in generic for _, v in p.options):
        return False
    given = dict(a.options)
    wanted = dict(p.options)
    bound: dict[str, bool | float | T.OptionRef] = {}
    for k, v in p.options:
        if isinstance(v, T.OptionRef) and v.name in generic:
            got = given.get(k, v.default)
            if isinstance(got, (str, T.ModelArg)):  # (a DType option, or a model, is never bound so)
                return False
            earlier = bindings.options.get(v.name, bound.get(v.name))
            if earlier is not None and earlier != got:
                return False
            bound[v.name] = got
        elif given.get(k) != v:
            return False
    if any(k not in wanted for k in given):
        return False
    bindings.options.update(bound)
    return True


def _bind(bindings: Bindings, name: str, dim: T.Dim, where: str, span: Span | None) -> None:
    """Bind a generic dim at its first use; a binding to a dim known only at
    run time (`?`) gives way to the first known dim it meets, so the other
    arguments are checked against that one (at run time where they are `?`)."""
    earlier = bindings.bound.get(name)
    if earlier is None or (T.is_run(earlier.dim) and earlier.dim != dim and T.prefer(earlier.dim, dim) is dim):
        bindings.bound[name] = Binding(dim, where, span)


def unknown_meets(expected: T.Type, found: T.Type) -> tuple[T.Dim | None, ...] | None:
    """Where a tensor of type `found` has a dim known only at run time (`?`)
    and `expected` a known one: per dim, the known dim there and None
    elsewhere; None when there is no such dim (nothing to check at run time)."""
    if isinstance(expected, T.ModelT) and isinstance(found, T.ModelT):
        # a model made with a size known only at run time (`Net[r]` of an
        # Int r) where a known one is wanted: its dims are checked there
        if expected.name != found.name or len(expected.dims) != len(found.dims):
            return None
    elif not (isinstance(expected, T.TensorT) and isinstance(found, T.TensorT)) or expected.rank != found.rank:
        return None
    dims = tuple(e if _checked_here(e, f) else None for e, f in zip(expected.dims, found.dims))
    return dims if any(d is not None for d in dims) else None


def _checked_here(expected: T.Dim, found: T.Dim) -> bool:
    """A found dim known only at run time meets a dim known statically (or a
    named run-time dim meets `?`, or a `?` meets a named one)."""
    if isinstance(expected, (T.DimUnknown, T.DimRest)) or expected == found:
        return False
    return T.is_run(found) or T.is_run(expected)


def assignable(expected: T.Type, found: T.Type) -> Mismatch | None:
    """`found` where `expected` is declared, with no generic dims to bind
    (returns, field assignments)."""
    return match(expected, found, Bindings(()), "", None)


def join(a: T.Type, b: T.Type, grow: bool = False) -> T.Type | None:
    """The type of a variable that holds `a` on one path and `b` on another,
    or None when no type covers both. With `grow` (where a loop's rounds
    meet), a tensor dim that differs from one round to the next is known only
    at run time, `?`: an accumulator, `ys = concat(ys, y, over=0)`."""
    if a == b:
        if isinstance(a, T.NumberT) and isinstance(b, T.NumberT) and a.nonneg != b.nonneg:
            return T.NumberT(a.kind)
        return a
    if isinstance(a, T.UnknownT) or isinstance(b, T.UnknownT):
        return T.UNKNOWN
    if isinstance(a, T.NumberT) and isinstance(b, T.NumberT):
        if {a.kind, b.kind} == {"Int", "Float"}:
            return T.FLOAT
        return None
    # A number that becomes a scalar tensor (`total = 0.0` then `total = total + l`).
    if isinstance(a, T.NumberT) and isinstance(b, T.TensorT):
        a, b = b, a
    if isinstance(a, T.TensorT) and isinstance(b, T.NumberT):
        if a.rank == 0 and b.kind in ("Int", "Float") and a.elem.is_float:
            return T.TensorT((), a.elem.plain())
        return None
    if isinstance(a, T.TensorT) and isinstance(b, T.TensorT):
        if a.rank != b.rank:
            return None
        if grow:
            a = T.TensorT(tuple(x if T.dims_equal(x, y) else T.DimUnknown() for x, y in zip(a.dims, b.dims)), a.elem)
        elif not all(T.dims_equal(x, y) or T.is_run(x) or T.is_run(y) for x, y in zip(a.dims, b.dims)):
            return None
        if a.elem.dtype != b.elem.dtype:
            return None
        ea, eb = a.elem, b.elem
        if ea == eb or ea.index is not None and eb.index is not None and T.dims_equal(ea.index, eb.index):
            elem = ea
        elif ea.nonneg and eb.nonneg:
            elem = T.Elem(ea.dtype, "nonneg")
        else:
            elem = ea.plain()
        # A dim known only at run time on one path is not known after the
        # join, nor are two run-time dims that are not one binding.
        dims = tuple(
            x if x == y else T.DimUnknown() if T.is_run(x) or T.is_run(y) else x for x, y in zip(a.dims, b.dims)
        )
        return T.TensorT(dims, elem)
    if isinstance(a, T.NoneT) and not isinstance(b, T.NoneT):
        a, b = b, a
    if isinstance(b, T.NoneT) or isinstance(a, T.OptionalT) or isinstance(b, T.OptionalT):
        # a value on one path, None (or an optional value) on another: an optional value
        inner_a = a.inner if isinstance(a, T.OptionalT) else a
        inner_b = b.inner if isinstance(b, T.OptionalT) else b
        if isinstance(inner_b, T.NoneT):
            return T.OptionalT(inner_a) if not isinstance(inner_a, T.NoneT) else T.NONE
        inner = join(inner_a, inner_b, grow)
        return T.OptionalT(inner) if inner is not None and not isinstance(inner, T.UnknownT) else inner
    if isinstance(a, T.ListT) and isinstance(b, T.ListT):
        # a list on two paths: its elements' one type, its length where both agree
        if a.item is None or b.item is None:
            item = a.item if b.item is None else b.item
        else:
            item = join(a.item, b.item, grow)
            if item is None:
                return None
        same = a.length is not None and b.length is not None and T.dims_equal(a.length, b.length)
        same = same and not (T.is_run(a.length) or T.is_run(b.length))  # type: ignore[arg-type]
        if same:
            return T.ListT(item, a.length)
        return T.ListT(item, None, a.why or b.why or "joined")
    if isinstance(a, T.TupleT) and isinstance(b, T.TupleT) and len(a.items) == len(b.items):
        items = [join(x, y, grow) for x, y in zip(a.items, b.items)]
        if any(i is None for i in items):
            return None
        return T.TupleT(tuple(items))  # type: ignore[arg-type]
    return None
