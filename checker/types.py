"""Quiver's types, as immutable values.

Tensor types carry their dims and element type. Dims are of four kinds:
integer literals, `dim` constants, generic dims (names bound per call), and
dim expressions such as `(T*E)` (checker/dimexpr.py gives their normal form;
two expressions are equal when their normal forms are, constants evaluated).
Literal and constant dims compare by value (`D` = `784` when `dim D = 784`);
two constants compare by name, so `H` and `E` differ even if both are 128 —
mixing up two dims that happen to have the same size is exactly the bug the
checker exists to catch. Generic dims are rigid inside the body that declares
them and are bound at each call site.

Element types are a dtype plus a refinement: `NonNeg` (>= 0) and `Prob`
(in [0, 1]) for floats, `Index[C]` (0..C-1) for int64. `Prob` is a `NonNeg`, and
both are plain floats of their dtype; `Index[C]` is an `i64`.

`Unknown` stands for a type that could not be worked out because of an earlier
error: every check involving it passes silently, so one mistake gives one
diagnostic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import dimexpr as DX
from .ast import wraps_whole

# the optimizers' and schedules' tables (pure data), re-exported: T.OPTIMIZERS, ...
from .optim_tables import GROUP_OVERRIDABLE, GROUPED_OPTIMIZERS, OPTIMIZERS, SCHEDULES  # noqa: F401

# ------------------------------------------------------------------ dims


@dataclass(frozen=True, slots=True)
class DimLit:
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class DimConst:
    name: str
    value: int

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class DimVar:
    """A generic dim of a function signature (`b` in `x: [b D]`)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class DimUnknown:
    def __str__(self) -> str:
        return "?"


# What joins a run-time dim's name to where it is bound in its key (`n'412`):
# no name can hold it, so a key never reads as a generic dim's name.
RUN_MARK = "'"


@dataclass(frozen=True, slots=True)
class DimRun:
    """A dim whose size is known only when the program runs, named where a
    value brings it in: a reader's shape (`load_npy(p, [n D])`), a cast that
    names it (`x[a:b] as [k D]`), an `Int` used as a size (`zeros([n D])`),
    the batches of a loop. Its key is the name and where it is bound (an
    offset in the item), so two values from the same binding line up and two
    independent loads do not. It is local to the body that binds it."""

    key: str

    @property
    def name(self) -> str:
        return self.key.split(RUN_MARK, 1)[0]

    @property
    def at(self) -> int:
        return int(self.key.split(RUN_MARK, 1)[1] or 0)

    def __str__(self) -> str:
        return self.name


def run_dim(name: str, at: int) -> DimRun:
    return DimRun(f"{name}{RUN_MARK}{at}")


def shown_name(key: str) -> str:
    """A dim's name in a normal form as the user wrote it (a run-time dim's key without its place)."""
    return key.split(RUN_MARK, 1)[0]


@dataclass(frozen=True, slots=True)
class DimExpr:
    """A dim computed from others (`(T*E)`, `((H-K)/S+1)`): the text as written
    and its normal form. Its value is known when no generic dim is in it."""

    text: str
    poly: DX.Poly = field(compare=False)

    @property
    def value(self) -> int | None:
        return DX.value(self.poly)

    def __str__(self) -> str:
        v = self.value
        return self.text if v is None else f"{self.text}={v}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DimExpr) and self.poly == other.poly

    def __hash__(self) -> int:
        return hash(self.poly)


@dataclass(frozen=True, slots=True)
class DimRest:
    """`..` at the front of a fn's shape (`[.. d]`): any number of leading
    dims, the same sequence wherever the signature writes it, bound at each
    call (an argument of type `[b T d]` binds it to `b T`)."""

    def __str__(self) -> str:
        return ".."


Dim = DimLit | DimConst | DimVar | DimUnknown | DimExpr | DimRest | DimRun
DIM_CLASSES = (DimLit, DimConst, DimVar, DimUnknown, DimExpr, DimRest, DimRun)
REST = DimRest()


def has_rest(t: Type) -> bool:
    """A tensor type written `[.. d]`: its first dim stands for any number of them."""
    return isinstance(t, TensorT) and bool(t.dims) and isinstance(t.dims[0], DimRest)


def dim_value(d: Dim) -> int | None:
    if isinstance(d, (DimLit, DimConst)):
        return d.value
    if isinstance(d, DimExpr):
        return d.value
    return None


def dim_poly(d: Dim) -> DX.Poly | None:
    """The normal form of a dim (None for an unknown one)."""
    if isinstance(d, DimLit):
        return DX.const(d.value)
    if isinstance(d, DimConst):
        return DX.const(d.value)
    if isinstance(d, DimVar):
        return DX.var(d.name)
    if isinstance(d, DimExpr):
        return d.poly
    if isinstance(d, DimRun):
        return DX.var(d.key)
    return None


def is_run(d: Dim) -> bool:
    """A dim known only at run time: `?`, a named run-time dim, or arithmetic
    of one (`(n-1)`)."""
    kind = type(d)
    if kind is DimUnknown or kind is DimRun:
        return True
    if kind is not DimExpr:
        return False
    poly = d.poly  # type: ignore[union-attr]
    known = _RUN_POLYS.get(poly)
    if known is None:
        if len(_RUN_POLYS) > 50_000:  # bounded: a long editing session makes many forms
            _RUN_POLYS.clear()
        known = _RUN_POLYS[poly] = any(RUN_MARK in g for g in DX.generics(poly))
    return known


# Whether a normal form mentions a run-time dim, by normal form (a type is
# checked many times; the forms are few)
_RUN_POLYS: dict[DX.Poly, bool] = {}


def same_dim(a: Dim, b: Dim) -> bool:
    """Whether two dims are known to be one dim (a name looked up in a shape:
    `over=C`, a permute): unlike `dims_equal`, a dim known only at run time
    is the same only as itself."""
    if isinstance(a, DimUnknown) or isinstance(b, DimUnknown) or is_run(a) != is_run(b):
        return False
    return dims_equal(a, b)


def run_keys(d: Dim) -> set[str]:
    """The keys of the named run-time dims in `d`."""
    p = dim_poly(d)
    return {g for g in DX.generics(p) if RUN_MARK in g} if p is not None else set()


def dims_equal(a: Dim, b: Dim) -> bool:
    """Whether two dims agree. A dim known only at run time agrees with any
    dim known statically (the compiled code checks it where they meet: docs,
    "Dims known only at run time"); two named run-time dims agree only when
    they are the same binding."""
    if a is b:
        return True
    if isinstance(a, DimUnknown) or isinstance(b, DimUnknown):
        return True
    if isinstance(a, DimRest) or isinstance(b, DimRest):
        return isinstance(a, DimRest) and isinstance(b, DimRest)
    ra, rb = is_run(a), is_run(b)
    if ra != rb:
        return True
    if ra:
        return dim_poly(a) == dim_poly(b)
    if isinstance(a, DimConst) and isinstance(b, DimConst):
        return a.name == b.name
    if isinstance(a, DimExpr) or isinstance(b, DimExpr):
        pa, pb = dim_poly(a), dim_poly(b)
        # an exact division (a chunk's part) is also the floored one written
        return pa == pb or (pa is not None and pb is not None and DX.loose(pa) == DX.loose(pb))
    if isinstance(a, DimVar) or isinstance(b, DimVar):
        return a == b
    return dim_value(a) == dim_value(b)


def dim_of_poly(p: DX.Poly, text: str | None = None) -> Dim:
    """A dim for a normal form: a literal when it is a number, a generic dim
    when it is one, else an expression (`text` as written, or rendered)."""
    v = DX.value(p)
    if v is not None and text is None:
        return DimLit(v)
    if text is None and len(p) == 1 and p[0][1] == 1 and len(p[0][0]) == 1 and p[0][0][0][0] == "v":
        name = p[0][0][0][1]
        return DimRun(name) if RUN_MARK in name else DimVar(name)
    return DimExpr(text if text is not None else f"({DX.render(p, shown_name)})", p)


# a dim's name in a DimExpr's text (`T`, `layers.E`)
_DIM_NAME = re.compile(r"[A-Za-z_][\w.]*")


def substituted(d: DimExpr, dims: dict[str, Dim], p: DX.Poly) -> Dim:
    """`d` with some of its generic dims replaced by `dims`, its normal form
    now `p`. A product keeps the order it was written in (`(K*O)` with K =
    NH, O = HD is `(NH*HD)`: which factor is outer matters to a reshape),
    and the names of the constants put in (`(NH*HD)=32`, not 32); a lone
    generic dim, a number made of numbers, and a sum (a convolution's
    `((H+2*P-K)/S+1)`, simplest in its normal form) are as `dim_of_poly` gives."""
    plain = dim_of_poly(p)
    if "*" not in d.text or "+" in d.text or "-" in d.text:
        return plain
    named = isinstance(plain, DimExpr) or (
        isinstance(plain, DimLit) and any(isinstance(x, (DimConst, DimExpr)) for x in dims.values())
    )
    if not named:
        return plain
    return DimExpr(_DIM_NAME.sub(lambda m: _operand_text(dims[m[0]]) if m[0] in dims else m[0], d.text), p)


def _operand_text(d: Dim) -> str:
    """A dim as it reads inside an expression's text: a name, a number, or a
    parenthesised expression."""
    if not isinstance(d, DimExpr):
        return str(d)
    return d.text if wraps_whole(d.text) else f"({d.text})"


def run_apart_note(expected: Type | tuple[Dim, ...], found: Type | tuple[Dim, ...]) -> str:
    """For a message about two shapes that differ in two named run-time dims
    bound apart (two loads): that they are not known to agree, and how to say
    they do. Empty when no such pair is why they differ."""
    a = expected.dims if isinstance(expected, TensorT) else expected
    b = found.dims if isinstance(found, TensorT) else found
    if not isinstance(a, tuple) or not isinstance(b, tuple):
        return ""
    for x, y in zip(reversed(a), reversed(b)):
        if (
            is_run(x)
            and is_run(y)
            and not dims_equal(x, y)
            and not (isinstance(x, DimUnknown) or isinstance(y, DimUnknown))
        ):
            what = (
                f"two sizes known only at run time, both named {x} but bound apart"
                if str(x) == str(y)
                else f"{y} and {x} are sizes known only at run time, bound apart"
            )
            return f" ({what}; if they agree, say so with a cast, `... as [.. {x} ..]`, checked at run time)"
    return ""


def prefer(a: Dim, b: Dim) -> Dim:
    """Of two dims that agree, the one a result should keep: a dim known
    statically over one known only at run time, a named run-time dim over
    `?`, and a name over a literal."""
    if isinstance(a, DimUnknown):
        return b
    if isinstance(b, DimUnknown):
        return a
    if is_run(a) != is_run(b):
        return b if is_run(a) else a
    return b if isinstance(a, DimLit) else a


def is_one(d: Dim) -> bool:
    return dim_value(d) == 1


# ------------------------------------------------------------------ element types

# The one table of element types. Each dtype: its family and the name of its
# element spec in the runtime (`rt.f16`, ...), which compiled code uses.
DTYPES: dict[str, tuple[str, str]] = {
    "f16": ("float", "f16"),
    "bf16": ("float", "bf16"),
    "f32": ("float", "f32"),
    "f64": ("float", "f64"),
    "i32": ("int", "i32"),
    "i64": ("int", "i64"),
    "bool": ("bool", "bool_"),
}
FLOAT_DTYPES = tuple(d for d, (family, _) in DTYPES.items() if family == "float")
INT_DTYPES = tuple(d for d, (family, _) in DTYPES.items() if family == "int")


@dataclass(frozen=True, slots=True)
class Elem:
    dtype: str  # f16 bf16 f32 f64 i32 i64 bool
    refine: str | None = None  # "nonneg" | "prob" (floats only)
    index: Dim | None = None  # Index[C] (dtype i64)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES or self.dtype[:1] == "~"

    @property
    def var(self) -> str | None:
        """`dtype` for the element type a model's DType option stands for
        (`[I O] dtype` in `model Linear[I, O, dtype: DType = f32]`): a float
        type fixed by each instance."""
        return self.dtype[1:] if self.dtype[:1] == "~" else None

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES

    @property
    def is_bool(self) -> bool:
        return self.dtype == "bool"

    @property
    def nonneg(self) -> bool:
        return self.refine in ("nonneg", "prob")

    def plain(self) -> Elem:
        """The same dtype without refinement."""
        return Elem(self.dtype)

    def __str__(self) -> str:
        if self.index is not None:
            return f"Index[{self.index}]"
        if self.refine is not None and self.dtype == "f32":
            return "NonNeg" if self.refine == "nonneg" else "Prob"
        if self.dtype == "f32":
            return "Float"
        if self.dtype == "bool":
            return "Bool"
        if self.dtype[:1] == "~":  # a DType option, refined as written: `Prob[dtype]`
            if self.refine is not None:
                return f"{'NonNeg' if self.refine == 'nonneg' else 'Prob'}[{self.dtype[1:]}]"
            return self.dtype[1:]
        return self.dtype


def elem_var(option: str) -> Elem:
    """The element type a model's DType option stands for in its own types."""
    return Elem("~" + option)


# What a DType option may be: a float type, f32 (torch's default dtype) when not given.
DTYPE_CHOICES = ("f32", "f64", "f16", "bf16")
DTYPE_DEFAULT = "f32"


F32 = Elem("f32")
NONNEG = Elem("f32", "nonneg")
PROB = Elem("f32", "prob")
I64 = Elem("i64")
BOOL = Elem("bool")


# How element types are written in Quiver (after the shape: `[b D] f64`).
# `Float`, `Int` and `Bool` written alone, without a shape, are numbers.
ELEM_TYPES: dict[str, Elem] = {
    "Float": F32,
    "f32": F32,
    "f16": Elem("f16"),
    "bf16": Elem("bf16"),
    "f64": Elem("f64"),
    "i32": Elem("i32"),
    "i64": I64,
    "Int": I64,
    "Bool": BOOL,
    "NonNeg": NONNEG,
    "Prob": PROB,
}


def with_refine(elem: Elem, refine: str | None) -> Elem:
    if not elem.is_float:
        return elem
    return Elem(elem.dtype, refine)


def index_of(d: Dim) -> Elem:
    return Elem("i64", None, d)


def elem_assignable(actual: Elem, expected: Elem) -> bool:
    if actual.dtype != expected.dtype:
        return False
    if expected.index is not None:
        return actual.index is not None and dims_equal(actual.index, expected.index)
    if expected.refine == "prob":
        return actual.refine == "prob"
    if expected.refine == "nonneg":
        return actual.nonneg
    return True


# ------------------------------------------------------------------ types


class Type:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class TensorT(Type):
    dims: tuple[Dim, ...]
    elem: Elem = F32

    @property
    def rank(self) -> int:
        return len(self.dims)

    def __str__(self) -> str:
        shape = "[" + " ".join(str(d) for d in self.dims) + "]"
        if self.elem == F32:
            return shape
        return f"{shape} {self.elem}"

    def show_elem(self) -> str:
        """The type with its element type always written out."""
        return "[" + " ".join(str(d) for d in self.dims) + f"] {self.elem}"


@dataclass(frozen=True, slots=True)
class NumberT(Type):
    kind: str  # Int | Float | Bool | Str
    # A number known to be >= 0 (a literal such as 0.1); only refinement flow uses it.
    nonneg: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return self.kind

    def show_elem(self) -> str:
        """As an element type in a message: a number shows its kind."""
        return self.kind


# The options of a model's type that differ from their defaults, by name in
# declaration order: `(("bias", False),)` for `Linear[D, H, bias=False]`,
# `(("eps", 1e-06),)` for `LayerNorm[E, eps=1e-6]` (a Float option),
# `(("dtype", "f64"),)` for `Linear[D, H, dtype=f64]` (a DType option; "~dtype"
# inside a model that passes its own on, `Linear[E, F, dtype=dtype]`; an
# OptionRef for a Bool or Float option passed on so, `Linear[E, F, bias=bias]`).


@dataclass(frozen=True, slots=True)
class OptionRef:
    """A sub-model's Bool or Float option given as the enclosing model's own
    option of the same kind (`param linear1: Linear[E, F, bias=bias]`,
    `MultiheadAttention[E, NH, dropout=dropout]`): what it is comes from the
    instance of the enclosing model. `default` is the sub-model's default for
    the option, so an instance that gives it the default drops it, as a
    written one does."""

    name: str
    default: bool | float

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ModelArg:
    """The model given for a model parameter (`B` of `model ResNet[B:
    ResBlock, E]`, checker/model_params.py): a model that takes dims, by its
    qualified name (`BasicBlock` of `ResNet[BasicBlock, 1]`); inside a generic
    model, the enclosing model's own parameter passed on (`Stage[B, ...]`),
    with its traits in `bound`. Kept among an instance's options, before them
    when written."""

    name: str
    bound: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name


Options = tuple[tuple[str, "bool | float | str | OptionRef | ModelArg"], ...]


def option_text(v: bool | float | str | OptionRef | ModelArg) -> str:
    return v[1:] if isinstance(v, str) and v[:1] == "~" else str(v)


def _applied(name: str, dims: tuple[Dim, ...], options: Options) -> str:
    """`Linear[D, H, bias=False]`, `Mlp`, `ResNet[BasicBlock, 1]` (the
    models given for its model parameters first)."""
    if not dims and not options:
        return name
    parts = [str(v) for _, v in options if isinstance(v, ModelArg)]
    parts += [str(d) for d in dims] + [f"{k}={option_text(v)}" for k, v in options if not isinstance(v, ModelArg)]
    return f"{name}[{', '.join(parts)}]"


@dataclass(frozen=True, slots=True)
class ModelT(Type):
    """A model, by its (qualified) name; a model that takes dims and options
    (`model Linear[I, O, bias: Bool = True]`) with those it is given: two
    instances with different dims are different types."""

    name: str
    dims: tuple[Dim, ...] = ()
    options: Options = ()
    # `self` in the model's own methods: every instance at once, whose
    # options are not known (a member under a condition may be absent)
    generic: bool = field(default=False, compare=False)
    # of `self`: the model's DType options, whose element types a call on an
    # instance binds (`dtype` of `Linear[D, H, dtype=f64]`)
    elems: tuple[str, ...] = field(default=(), compare=False)
    # a type parameter of a generic function (`M` of `fn f[M: CharModel]`):
    # the traits that bound it (qualified); its name is the parameter's
    bound: tuple[str, ...] = ()

    def __str__(self) -> str:
        return _applied(self.name, self.dims, self.options)


@dataclass(frozen=True, slots=True)
class GradT(Type):
    """`Grad[M]`; with `wrt`, only the selected top-level fields of M, in
    declaration order (`Grad[M, wrt=[head, b2]]`). For a model with dims,
    those of the instance (`Grad[Linear[D, H]]`)."""

    model: str
    wrt: tuple[str, ...] | None = None
    dims: tuple[Dim, ...] = ()
    options: Options = ()
    bound: tuple[str, ...] = ()  # of a type parameter's model (ModelT.bound)

    @property
    def of(self) -> ModelT:
        return ModelT(self.model, self.dims, self.options, bound=self.bound)

    def __str__(self) -> str:
        model = _applied(self.model, self.dims, self.options)
        if self.wrt is None:
            return f"Grad[{model}]"
        return f"Grad[{model}, wrt=[{', '.join(self.wrt)}]]"


def grad_of(t: ModelT, wrt: tuple[str, ...] | None = None) -> GradT:
    """The gradient type of a model type."""
    return GradT(t.name, wrt, t.dims, t.options, t.bound)


@dataclass(frozen=True, slots=True)
class StackT(Type):
    """A leading dim over something that is not a tensor: a stack of
    sub-models (`[L] Block`, a model field) or one gradient per example
    (`[b] Grad[M]`, from value_and_grad(..., batch=b))."""

    dim: Dim
    item: Type
    # one gradient per example (arithmetic, norm and mean apply), as opposed
    # to the gradients of a stack of sub-models (g.blocks: indexed only)
    per_example: bool = False

    def __str__(self) -> str:
        return f"[{self.dim}] {self.item}"


def grad_field_type(t: Type) -> Type:
    """The type of a gradient's field for a param of type `t`: the param's
    shape and dtype without refinement (the gradient of a NonNeg param can be
    negative); a sub-model's gradient; a stack of gradients for a stack."""
    if isinstance(t, TensorT):
        return TensorT(t.dims, t.elem.plain())
    if isinstance(t, ModelT):
        return grad_of(t)
    if isinstance(t, StackT) and isinstance(t.item, ModelT):
        return StackT(t.dim, grad_of(t.item))
    return t


def is_example_grads(t: Type) -> bool:
    return isinstance(t, StackT) and t.per_example


@dataclass(frozen=True, slots=True)
class OptimT(Type):
    """An optimizer for a model: `SGD[M]`, `Adam[M]`, `AdamW[M]`, `Adam[Linear[D, H]]`."""

    kind: str
    model: str
    dims: tuple[Dim, ...] = ()
    options: Options = ()
    # the param groups of the value a call made (hover): "max_rank=1: weight_decay=0.0"
    groups: tuple[str, ...] = field(default=(), compare=False)
    bound: tuple[str, ...] = ()  # of a type parameter's model (ModelT.bound)

    @property
    def of(self) -> ModelT:
        return ModelT(self.model, self.dims, self.options, bound=self.bound)

    def __str__(self) -> str:
        return f"{self.kind}[{_applied(self.model, self.dims, self.options)}]"


@dataclass(frozen=True, slots=True)
class ScheduleT(Type):
    """A learning-rate schedule: `StepLR`, `OneCycleLR`, ... (checker/types.SCHEDULES)."""

    kind: str

    def __str__(self) -> str:
        return self.kind


@dataclass(frozen=True, slots=True)
class GroupT(Type):
    """A param group for an optimizer's groups=, `Group(max_rank=1, weight_decay=0.0)`:
    its selectors (name, literal value) and overrides (name, value as written);
    `spans` (item-relative: "call" and each keyword's) place its diagnostics."""

    selectors: tuple[tuple[str, int | str], ...]
    overrides: tuple[tuple[str, str], ...]
    spans: tuple = field(default=(), compare=False)

    def __str__(self) -> str:
        return "Group"

    def text(self) -> str:
        sel = ", ".join(f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in self.selectors)
        sets = ", ".join(f"{k}={v}" for k, v in self.overrides) or "the optimizer's values"
        return f"{sel}: {sets}"


@dataclass(frozen=True, slots=True)
class ModeT(Type):
    def __str__(self) -> str:
        return "Mode"


@dataclass(frozen=True, slots=True)
class TupleT(Type):
    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(t) for t in self.items) + ("," if len(self.items) == 1 else "") + ")"


@dataclass(frozen=True, slots=True)
class UnitT(Type):
    """What a function without a return type gives: nothing."""

    def __str__(self) -> str:
        return "nothing"


@dataclass(frozen=True, slots=True)
class UnknownT(Type):
    def __str__(self) -> str:
        return "?"


@dataclass(frozen=True, slots=True)
class FnRefT(Type):
    """A function's name used as a value (only `value_and_grad` takes one)."""

    name: str
    extern: bool = False

    def __str__(self) -> str:
        return f"fn {self.name}"


@dataclass(frozen=True, slots=True)
class ModuleT(Type):
    """An imported module (or the package part of one, `nn` of `nn.layers`),
    by the name the file wrote for it."""

    name: str

    def __str__(self) -> str:
        return f"module {self.name}"


@dataclass(frozen=True, slots=True)
class BuiltinRefT(Type):
    name: str

    def __str__(self) -> str:
        return f"builtin {self.name}"


@dataclass(frozen=True, slots=True)
class ModelClassT(Type):
    """A model's name itself, as in `Mlp.init(seed=0)`; with the dims and
    options it is given, `Linear[D, H]` in `Linear[D, H].init(seed=0)`."""

    name: str
    dims: tuple[Dim, ...] = ()
    options: Options = ()
    # the dims it takes were given (a model that takes none: always)
    applied: bool = True

    def __str__(self) -> str:
        return f"model {_applied(self.name, self.dims, self.options)}"


@dataclass(frozen=True, slots=True)
class VocabT(Type):
    """The characters of a text read by `load_chars`, with the dim their ids
    index (`Vocab[V]`): `decode` turns ids back into text, `encode` text
    into ids."""

    index: Dim

    def __str__(self) -> str:
        return f"Vocab[{self.index}]"


@dataclass(frozen=True, slots=True)
class DistT(Type):
    """A distribution of torch.distributions (checker/builtins/distributions.py):
    `kind` Categorical, Normal or Bernoulli; `dims` its batch shape, `elem`
    the float type of its parameters, `classes` a Categorical's K (the last
    dim of its logits); `weak`: made of numbers only (`Normal(0.0, 1.0)`), so
    it takes the float type of the tensors it meets, as torch's 0-dim ones."""

    kind: str
    dims: tuple[Dim, ...]
    elem: Elem
    classes: Dim | None = None
    weak: bool = False

    def __str__(self) -> str:
        dims = self.dims + ((self.classes,) if self.classes is not None else ())
        elem = "f32" if self.elem.dtype == "f32" else str(self.elem.plain())
        return f"{self.kind} of [" + " ".join(str(d) for d in dims) + f"] {elem}"


@dataclass(frozen=True, slots=True)
class RangeT(Type):
    def __str__(self) -> str:
        return "range"


@dataclass(frozen=True, slots=True)
class IterT(Type):
    """A value a `for` walks, each round giving `item` (`for xb, yb in e:`
    unpacks a tuple item into its names)."""

    item: Type

    def __str__(self) -> str:
        return f"iterable of {self.item}"


@dataclass(frozen=True, slots=True)
class ListT(Type):
    """A list built in a body (`hs = []`, `hs.append(h)`, `hs += [h]`):
    its elements' one type (None while nothing is appended) and its length,
    a dim when the checker knows it (`T` after one append per round of
    `for t in range(T)`), else None (appended to under an `if`, in a
    `while`, in a loop that breaks). docs/language.md, "Lists"."""

    item: Type | None
    length: Dim | None
    # why the length is not known (a variant of E0963), for the message
    why: str = field(default="", compare=False)

    def __str__(self) -> str:
        n = "?" if self.length is None else str(self.length)
        return f"list[{n}] of {'nothing' if self.item is None else self.item}"


@dataclass(frozen=True, slots=True)
class OptionalT(Type):
    """A parameter's value that may be None (`top_k: Int | None = None`):
    used as its value only where `if top_k is not None:` narrowed it."""

    inner: Type

    def __str__(self) -> str:
        return f"{self.inner} | None"


@dataclass(frozen=True, slots=True)
class NoneT(Type):
    """`None`, the value of an optional parameter left out."""

    def __str__(self) -> str:
        return "None"


NONE = NoneT()
UNKNOWN = UnknownT()
UNIT = UnitT()
INT = NumberT("Int")
FLOAT = NumberT("Float")
BOOL_N = NumberT("Bool")
STR = NumberT("Str")
MODE = ModeT()


def scalar(elem: Elem = F32) -> TensorT:
    return TensorT((), elem)


def is_unknown(t: Type) -> bool:
    return isinstance(t, UnknownT) or (isinstance(t, TupleT) and any(is_unknown(x) for x in t.items))


def describe(t: Type) -> str:
    """A type with a word of kind, for messages about the wrong kind of value."""
    if isinstance(t, TensorT):
        return f"tensor {t}"
    if isinstance(t, NumberT):
        return f"number {t}" if t.kind != "Str" else "string"
    if isinstance(t, ModelT):
        return f"model {t}"
    if isinstance(t, TupleT):
        return f"tuple {t}"
    if isinstance(t, ListT):
        return str(t)
    if isinstance(t, StackT):
        return f"stack {t}" if isinstance(t.item, ModelT) else str(t)
    if isinstance(t, OptimT):
        return f"optimizer {t}"
    return str(t)


def is_savable(t: Type) -> bool:
    """Whether a value of type `t` has a state that `save` writes and `load`
    reads back in place (docs/language.md, "Checkpoints"): a model, an
    optimizer or a learning-rate schedule. Numbers are saved as themselves
    (checker/builtins/checkpoint.py)."""
    return isinstance(t, (ModelT, OptimT, ScheduleT))
