"""The typed syntax tree of a Quiver item.

Every node carries a `span` in offsets *relative to the start of its item*
(see checker/items.py). Relative spans are what makes incremental parsing cheap:
an edit elsewhere in the document shifts an item as a whole, and its tree is
reused untouched. `ItemSlot.start` and `LineIndex` turn a relative span into
absolute offsets and line/column positions.

Nodes compare by identity (`eq=False`) so they can key dictionaries of analysis
results; `dump()` gives a structural form for tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Literal


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


@dataclass(frozen=True, eq=False, slots=True)
class Node:
    span: Span

    def children(self) -> Iterator[Node]:
        cls = type(self)
        names = _CHILD_FIELDS.get(cls)
        if names is None:
            names = _CHILD_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.name != "span")
        for name in names:
            value = getattr(self, name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, tuple):
                for v in value:
                    if isinstance(v, Node):
                        yield v
                    elif isinstance(v, tuple):
                        yield from (w for w in v if isinstance(w, Node))


@dataclass(frozen=True, eq=False, slots=True)
class Ident(Node):
    """A name as written at one place: the `w1` of `m.w1`, a declared name."""

    text: str


# ------------------------------------------------------------------ types


@dataclass(frozen=True, eq=False, slots=True)
class DimName(Node):
    name: str


@dataclass(frozen=True, eq=False, slots=True)
class DimInt(Node):
    value: int


@dataclass(frozen=True, eq=False, slots=True)
class DimBinary(Node):
    """Dim arithmetic: `(T*E)`; `op` is one of + - * /. `parens`: written
    inside parentheses of its own (`(H/PH)` in `((H/PH)*W)`), so that its text
    is printed as written."""

    op: str
    left: Dim
    right: Dim
    parens: bool = False


Dim = DimName | DimInt | DimBinary


@dataclass(frozen=True, eq=False, slots=True)
class TypeOption(Node):
    """`wrt=[head, b2]`, `bias=False` or `stride=2` in a type's brackets."""

    name: Ident
    names: tuple[Ident, ...] = ()  # wrt=[...]
    value: bool | None = None  # bias=False
    dim: DimName | DimInt | DimBinary | None = None  # stride=2, padding=P
    number: float | None = None  # eps=1e-6 (a Float option)


@dataclass(frozen=True, eq=False, slots=True)
class ElemType(Node):
    """`f64`, `NonNeg`, `Index[C]` after the brackets of a tensor type; a
    model (`[L] Block[E, NH]`, a stack of sub-models) with what it takes."""

    name: Ident
    args: tuple[TypeArg, ...] = ()
    options: tuple[TypeOption, ...] = ()

    @property
    def arg(self) -> Ident | None:
        """The one plain name in the brackets (`C` of `Index[C]`), if that is what they hold."""
        if len(self.args) == 1 and not self.options:
            a = self.args[0]
            if isinstance(a, NamedType) and not a.args and not a.options:
                return a.name
        return None

    @property
    def bracketed(self) -> bool:
        return bool(self.args or self.options)


@dataclass(frozen=True, eq=False, slots=True)
class TensorType(Node):
    """`[b D] f32`; also a shape literal in expressions (`randn([64 D], seed=1)`).
    `rest`: written `[.. d]`, any number of leading dims before `dims`."""

    dims: tuple[Dim, ...]
    elem: ElemType | None
    rest: bool = False


@dataclass(frozen=True, eq=False, slots=True)
class NamedType(Node):
    """`Int`, `Float`, `Mode`, a model name, `Grad[Mlp]`, `Adam[Mlp]`,
    `Grad[Net, wrt=[head, b2]]`, `Linear[D, H]`, `Linear[784, (2*E), bias=False]`.
    A dim in the brackets is written as a name (a NamedType without
    brackets), an integer (DimInt) or dim arithmetic (DimBinary)."""

    name: Ident
    args: tuple[TypeArg, ...] = ()
    options: tuple[TypeOption, ...] = ()

    @property
    def arg(self) -> TypeArg | None:
        """The first thing in the brackets, if any."""
        return self.args[0] if self.args else None

    @property
    def option(self) -> Ident | None:
        """The word before the first `=` in the brackets (`wrt`)."""
        return self.options[0].name if self.options else None

    @property
    def names(self) -> tuple[Ident, ...]:
        return self.options[0].names if self.options else ()


@dataclass(frozen=True, eq=False, slots=True)
class TupleType(Node):
    items: tuple[TypeExpr, ...]


@dataclass(frozen=True, eq=False, slots=True)
class OptionalType(Node):
    """`Int | None`, `[L S] Bool | None`: a parameter's type whose value may
    be None (Python's Optional); `if x is not None:` narrows it."""

    inner: TensorType | NamedType | TupleType


TypeExpr = TensorType | NamedType | TupleType
# a parameter's type: any type, or one that may be None (`Int | None`)
ParamType = TypeExpr | OptionalType
TypeArg = TensorType | NamedType | TupleType | DimName | DimInt | DimBinary


# ------------------------------------------------------------------ expressions


@dataclass(frozen=True, eq=False, slots=True)
class Name(Node):
    name: str


@dataclass(frozen=True, eq=False, slots=True)
class IntLit(Node):
    value: int


@dataclass(frozen=True, eq=False, slots=True)
class FloatLit(Node):
    value: float


@dataclass(frozen=True, eq=False, slots=True)
class StrLit(Node):
    value: str


@dataclass(frozen=True, eq=False, slots=True)
class BoolLit(Node):
    value: bool


@dataclass(frozen=True, eq=False, slots=True)
class FormatField(Node):
    """`{loss:.4f}` in an f-string: the expression, its conversion (`t` of
    `{x!t}`: the value's type) and its format spec as written (after `:`),
    with the spec's span (for E0312). The span covers the braces."""

    value: Expr
    conversion: str | None
    spec: str
    spec_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class FString(Node):
    """`f"step {step}: loss {l:.4f}"`: text pieces (StrLit, escapes and `{{`
    read) and fields, in order."""

    parts: tuple[StrLit | FormatField, ...]


@dataclass(frozen=True, eq=False, slots=True)
class NameList(Node):
    """`[head, b2]`: names, as `wrt=` takes them."""

    items: tuple[Name, ...]


@dataclass(frozen=True, eq=False, slots=True)
class TupleExpr(Node):
    items: tuple[Expr, ...]


@dataclass(frozen=True, eq=False, slots=True)
class Unary(Node):
    op: str  # "-" or "+"
    operand: Expr


@dataclass(frozen=True, eq=False, slots=True)
class Binary(Node):
    op: str  # + - * / % @ **
    left: Expr
    right: Expr
    op_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class Compare(Node):
    op: str
    left: Expr
    right: Expr
    op_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class BoolOp(Node):
    op: str  # "and" / "or"
    left: Expr
    right: Expr
    op_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class Not(Node):
    operand: Expr


@dataclass(frozen=True, eq=False, slots=True)
class Arg(Node):
    """One call argument; `keyword` is set for `over=C`."""

    keyword: Ident | None
    value: Expr


@dataclass(frozen=True, eq=False, slots=True)
class Call(Node):
    func: Expr
    args: tuple[Arg, ...]
    # The span of `(...)`, for signature help and argument-count diagnostics.
    paren_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class Field(Node):
    value: Expr
    name: Ident


@dataclass(frozen=True, eq=False, slots=True)
class TensorLit(Node):
    """`[1.0, -2.0]`, `[[1.0, 0.0], [0.0, 1.0]]`: numbers (IntLit, FloatLit, or
    a negated one as Unary) or nested literals."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, eq=False, slots=True)
class Slice(Node):
    """`i:j`, `i:`, `:j`, `i:j:k`, `::k` inside brackets: a range of one dim
    (every k-th entry when a step is written)."""

    start: Expr | None
    end: Expr | None
    step: Expr | None = None


@dataclass(frozen=True, eq=False, slots=True)
class EllipsisItem(Node):
    """`...` among subscripts (`x[..., 0]`): the dims no other subscript takes."""


@dataclass(frozen=True, eq=False, slots=True)
class Subscripts(Node):
    """What the brackets of `x[a, b:c]` or `Linear[D, H, bias=False]` hold when
    they hold more than one index or slice, or an option (an Arg with its
    keyword). The span runs from after `[` to before `]`."""

    items: tuple[Expr | Slice | Arg | EllipsisItem, ...]


@dataclass(frozen=True, eq=False, slots=True)
class Index(Node):
    """`x[i]` (an Int, or a tensor of Index labels: a gather) or `x[i:j]`;
    with several subscripts, `...` (or a model's type applied to its dims)
    `index` is a Subscripts."""

    value: Expr
    index: Expr | Slice | Subscripts


@dataclass(frozen=True, eq=False, slots=True)
class Pipe(Node):
    """`left |> target`: `target` is a call `f(b)` (meaning `f(left, b)`) or a name."""

    left: Expr
    target: Expr
    op_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class Cast(Node):
    value: Expr
    type: TypeExpr


Expr = (
    Name
    | IntLit
    | FloatLit
    | StrLit
    | FString
    | BoolLit
    | TupleExpr
    | Unary
    | Binary
    | Compare
    | BoolOp
    | Not
    | Call
    | Field
    | Index
    | Pipe
    | Cast
    | TensorType
    | TensorLit
    | NameList
)


# ------------------------------------------------------------------ statements


@dataclass(frozen=True, eq=False, slots=True)
class Assign(Node):
    """`x = e`, `a, b = e`, `m.w = e`, `x[:, 0] = e`, `m.buf[t] = e`. Targets
    are checked by the parser to be names, fields, or one subscript of a name
    or field."""

    targets: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True, eq=False, slots=True)
class AugAssign(Node):
    """`x += e` and friends: `x = x + e` with `x` evaluated once."""

    target: Expr
    op: str  # the arithmetic operator, without "="
    value: Expr
    op_span: Span


@dataclass(frozen=True, eq=False, slots=True)
class ExprStmt(Node):
    expr: Expr


@dataclass(frozen=True, eq=False, slots=True)
class Return(Node):
    values: tuple[Expr, ...]


@dataclass(frozen=True, eq=False, slots=True)
class Pass(Node):
    pass


@dataclass(frozen=True, eq=False, slots=True)
class Break(Node):
    pass


@dataclass(frozen=True, eq=False, slots=True)
class Continue(Node):
    pass


@dataclass(frozen=True, eq=False, slots=True)
class IfBranch(Node):
    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, eq=False, slots=True)
class If(Node):
    branches: tuple[IfBranch, ...]  # the `if` and each `elif`
    orelse: tuple[Stmt, ...] | None


@dataclass(frozen=True, eq=False, slots=True)
class For(Node):
    """`for i in e:`, or `for a, b in e:` (each round's item unpacked into
    the names): `targets` holds the names as written, one or more."""

    targets: tuple[Ident, ...]
    iter: Expr
    body: tuple[Stmt, ...]

    @property
    def var(self) -> Ident:
        """The loop variable of a one-name loop (the first name otherwise)."""
        return self.targets[0]


@dataclass(frozen=True, eq=False, slots=True)
class While(Node):
    cond: Expr
    body: tuple[Stmt, ...]


Stmt = Assign | AugAssign | ExprStmt | Return | Pass | Break | Continue | If | For | While


# ------------------------------------------------------------------ items


@dataclass(frozen=True, eq=False, slots=True)
class DimDecl(Node):
    name: Ident
    value: Expr


@dataclass(frozen=True, eq=False, slots=True)
class ConstDecl(Node):
    """`const LR = 3e-4`, `const STEPS: Int = 100`: a number or string every
    function may read (and importers, as `m.LR` or by `from m import LR`)."""

    name: Ident
    type: TypeExpr | None
    value: Expr


@dataclass(frozen=True, eq=False, slots=True)
class TypeAlias(Node):
    """`type Gcn = GCN[FIN, H, C, use_bias=False]`; with the dims it takes,
    `type Lin[i, o] = Linear[i, o, bias=False]`: a name for a type."""

    name: Ident
    params: tuple[Ident, ...]
    target: TypeExpr


@dataclass(frozen=True, eq=False, slots=True)
class MemberOption(Node):
    """`, persistent=False` after a member's initializer: a keyword and its value."""

    name: Ident
    value: Expr


@dataclass(frozen=True, eq=False, slots=True)
class Member(Node):
    kind: Literal["param", "buffer"]
    name: Ident
    type: TypeExpr
    init: Expr | None
    # `if bias`, `if stride != 1 or Ci != Co`: the member exists only when
    # this Boolean expression of the model's dims and Bool options holds
    cond: Expr | None = None
    options: tuple[MemberOption, ...] = ()


@dataclass(frozen=True, eq=False, slots=True)
class ModelParam(Node):
    """A dim a model takes (`I` of `model Linear[I, O]`, `stride = 1` with a
    default), or an option with its type and default (`bias: Bool = True`)."""

    name: Ident
    type: TypeExpr | None
    default: Expr | None


@dataclass(frozen=True, eq=False, slots=True)
class Device(Node):
    name: str  # "cpu", "cuda", "cuda:1", ...


@dataclass(frozen=True, eq=False, slots=True)
class ModelDecl(Node):
    name: Ident
    device: Device | None
    members: tuple[Member, ...]
    params: tuple[ModelParam, ...] = ()
    methods: tuple[FnDecl, ...] = ()


@dataclass(frozen=True, eq=False, slots=True)
class Param(Node):
    mut: bool
    name: Ident
    type: ParamType | None  # None only for `self`, a method's first parameter
    # `lr: Float = 3e-4`: a constant a call may leave out (a literal, a
    # constant's name, or arithmetic of those)
    default: Expr | None = None


@dataclass(frozen=True, eq=False, slots=True)
class TypeParam(Node):
    """`M: CharModel` (or `M: A + B`) in `fn f[M: CharModel](m: M)`: a model
    type the function is generic over, bounded by traits (checker/traits.py)."""

    name: Ident
    bounds: tuple[Ident, ...]
    # `M: A - B`: the `-` (only `+` joins bounds; reported by the checker)
    minus: Span | None = None


@dataclass(frozen=True, eq=False, slots=True)
class FnDecl(Node):
    name: Ident
    params: tuple[Param, ...]
    ret: TypeExpr | None
    body: tuple[Stmt, ...]
    # From `fn` to the `:` that ends the signature.
    header_span: Span
    # `fn f[M: CharModel](...)`: the model types it is generic over
    type_params: tuple[TypeParam, ...] = ()


@dataclass(frozen=True, eq=False, slots=True)
class TraitDecl(Node):
    """`trait CharModel:` and the signatures of its methods (FnDecls without
    bodies, `self` first): what a model must have to be given for a type
    parameter it bounds."""

    name: Ident
    methods: tuple[FnDecl, ...]
    # `trait ResBlock[Ci, Co, stride = 1]:` the dims (and options) a model
    # given for a model parameter bounded by it takes (`B[C1, C2, stride=2]`)
    params: tuple[ModelParam, ...] = ()


@dataclass(frozen=True, eq=False, slots=True)
class ComputedBuffer(FnDecl):
    """Not parsed: the function the checker makes of a buffer whose
    initializer is an expression (`buffer mask: [T T] Bool = tril(...)`),
    `fn mask(self): return EXPR`, checked and compiled as a method that
    never reads `self` but for the model's dims and options."""

    buffer: str = ""  # the buffer's name


@dataclass(frozen=True, eq=False, slots=True)
class ExternDecl(Node):
    name: Ident
    params: tuple[Param, ...]
    ret: TypeExpr | None
    target: StrLit | None


@dataclass(frozen=True, eq=False, slots=True)
class ImportDecl(Node):
    """`import layers`, `import nn.layers` (`module` holds the dotted text)."""

    module: Ident


@dataclass(frozen=True, eq=False, slots=True)
class ImportName(Node):
    """One name of a `from` import: `forward as fwd`."""

    name: Ident
    alias: Ident | None

    @property
    def bound(self) -> Ident:
        """The name it defines in the importing file."""
        return self.alias if self.alias is not None else self.name


@dataclass(frozen=True, eq=False, slots=True)
class FromImport(Node):
    """`from layers import Mlp, forward as fwd`."""

    module: Ident
    names: tuple[ImportName, ...]


@dataclass(frozen=True, eq=False, slots=True)
class BrokenItem(Node):
    """An item whose header did not parse. Its kind and name, when they can be
    read, are kept so that references to it elsewhere stay silent."""

    kind: str | None  # "dim", "const", "type", "model", "trait", "fn", "extern" or None
    name: Ident | None


Item = (
    DimDecl | ConstDecl | TypeAlias | ModelDecl | TraitDecl | FnDecl | ExternDecl | ImportDecl | FromImport | BrokenItem
)


def same_path(a: Node, b: Node) -> bool:
    """The same variable or field chain read twice (`x` and `x`, `m.w` and `m.w`)."""
    if isinstance(a, Name) and isinstance(b, Name):
        return a.name == b.name
    if isinstance(a, Field) and isinstance(b, Field):
        return a.name.text == b.name.text and same_path(a.value, b.value)
    return False


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node` (itself included), parents before children."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        kids = list(n.children())
        kids.reverse()
        stack.extend(kids)


def dump(node: object) -> object:
    """A structural, comparable form of a tree (for tests)."""
    if isinstance(node, Node):
        out: list[object] = [type(node).__name__]
        for f in fields(node):
            out.append((f.name, dump(getattr(node, f.name))))
        return tuple(out)
    if isinstance(node, Span):
        return (node.start, node.end)
    if isinstance(node, tuple):
        return tuple(dump(x) for x in node)
    return node


# How tightly the operators of dim arithmetic and of a `dim` declaration's
# value bind (`**` groups from the right).
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "%": 2, "**": 3}


def dim_text(d: Dim, parent: int = 0, right: bool = False) -> str:
    """A dim as written, with the parentheses its operators need (without the
    outer ones): `T*E`, `(H-K)/S+1`."""
    if isinstance(d, DimName):
        return d.name
    if isinstance(d, DimInt):
        return str(d.value)
    prec = PRECEDENCE.get(d.op, 2)
    text = f"{dim_text(d.left, prec)}{d.op}{dim_text(d.right, prec, True)}"
    # a - (b - c) and a / (b * c) keep their parentheses, and so does any
    # part the user wrote in parentheses (`(H/PH)*W`)
    return f"({text})" if parent and (d.parens or prec < parent or (prec == parent and right)) else text


def written_dim(d: Dim) -> str:
    """One dim of a shape as written: `b`, `64`, `(T*E)`."""
    return f"({dim_text(d)})" if isinstance(d, DimBinary) else dim_text(d)


# --- the text of written dim arithmetic (`(PH*PW*C)`, `(Ci/(M*G))`) ---


def wraps_whole(text: str) -> bool:
    """Whether `text` is one parenthesised whole: `(a*b)`, not `(a)*(b)`."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return i == len(text) - 1 and text.startswith("(")
    return False


def unwrapped(text: str) -> str:
    """`text` without the parentheses around all of it."""
    while wraps_whole(text):
        text = text[1:-1]
    return text


def top_level(text: str, op: str) -> list[str]:
    """`text` cut at `op` outside parentheses."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == op and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces
