"""What checking a function body produces: references, read facts, gradient
sites and the result itself. The read analysis, the IDE queries and the
compiler read these; checker/body/ makes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeVar, cast

from . import ast as A
from . import types as T
from .diagnostics import LocalDiagnostic

# What a name refers to: a local variable, a parameter, a dim constant, a
# generic dim, a function, an extern fn, a model, a built-in, a model field,
# or a field of a gradient.
RefKind = Literal[
    "local",
    "param",
    "dim",
    "const",
    "generic",
    "fn",
    "extern",
    "model",
    "builtin",
    "field",
    "gradfield",
    "module",
    "option",
    "size",  # a named dim known only at run time used as an Int (its key is the name)
]
# "sg_field"/"sg_call": a read or a call under stop_grad(...), which is not
# differentiated (W1101 then says the param is read only under stop_grad).
FactKind = Literal["field", "call", "escape", "sg_field", "sg_call"]


@dataclass(frozen=True)
class Ref:
    """What a name (or field name) at one place refers to."""

    kind: RefKind
    name: str
    owner: str | None = None  # model of a field; function of a param
    defs: tuple[A.Node, ...] = ()  # reaching definitions of a local


@dataclass(frozen=True)
class ReadFact:
    """One way a function's model parameter `param` is used.

    kind "field": reads field `target` at `span`;
    kind "call": passes it on as argument `index` of function `target`;
    kind "escape": hands it somewhere that may read anything (`target` says where).
    """

    kind: FactKind
    param: str
    target: str
    span: A.Span
    index: int = 0
    # "call" of a sub-model (`encode(m.enc, x)`): the callee's reads are
    # the caller's under this path prefix ("enc.").
    prefix: str = ""


@dataclass(frozen=True)
class GradSite:
    """A `value_and_grad(f, m, ...)` call whose f is valid: where to report
    E1107/W1101 once f's reads are known."""

    call: A.Call
    f_span: A.Span
    f_name: str
    model: str
    wrt: tuple[str, ...] | None = None  # the selected top-level fields
    # the instance differentiated (`Linear[D, H]`): its params are the ones read
    instance: T.ModelT | None = None

    @property
    def model_type(self) -> T.ModelT:
        return self.instance if self.instance is not None else T.ModelT(self.model)


@dataclass(frozen=True)
class DimCheck:
    """A value whose type has a dim known only at run time (`?`, as from a
    slice with run-time bounds) where it meets a known dim: a return, an
    argument, a cast, a field assignment, a reshape, a permute or an over=.
    The checker accepts it and the compiler checks it there at run time.

    `dims` has one entry per dim of the value: the dim it must be (in the
    checking function's own terms) where the value's dim is `?`, None where
    the checker proved it. `count` is set instead for a reshape: the number
    of elements the value must have. `what` names the value in the message
    (`win(): result`, `g(): argument 'x'`), `declared` is the type it meets
    as written there (`[T b]`)."""

    what: str
    declared: str
    dims: tuple[T.Dim | None, ...] = ()
    count: tuple[T.Dim, ...] | None = None
    # the element of a tuple value that is checked (load_chars' ids); None: the value
    item: int | None = None
    # the value of a reader (load_npy, ...): the reader checks the sizes itself,
    # so its message names the file
    reader: bool = False


@dataclass(frozen=True)
class RunDimOrigin:
    """Where a named run-time dim of a body is bound: what binds it (`load_npz`,
    `a cast`, `the Int n`), the name or value there, and for an Int's dim
    the variable whose value is the size."""

    what: str
    span: A.Span
    var: str | None = None


@dataclass(slots=True)
class BodyResult:
    """Read-only once made: empty maps may be shared between results (see
    `shared_if_empty`), which keeps a file of many small functions small."""

    diagnostics: tuple[LocalDiagnostic, ...]
    types: dict[A.Node, T.Type]
    refs: dict[A.Node, Ref]
    facts: frozenset[ReadFact]
    sites: tuple[GradSite, ...]
    deps: dict[str, object]
    # Static facts the compiler needs: the axis of each over= dim, resolved
    # shape literals, the callee kind of each call.
    axes: dict[A.Node, int | tuple[int, ...] | None]  # over= axes; permute's order
    locals: dict[str, T.Type]
    # the values checked at run time where a `?` dim meets a known one
    dim_checks: dict[A.Node, tuple[DimCheck, ...]]
    # warnings that hold only when the function is given to value_and_grad
    # (checker/body/lints/): the analysis reports them for those functions
    loss_warnings: tuple[LocalDiagnostic, ...] = ()
    # the named run-time dims (by key) and the values that bind them at run
    # time: (key, item of a tuple or -1, axis)
    run_dims: dict[str, RunDimOrigin] = field(default_factory=dict)
    run_binds: dict[A.Node, tuple[tuple[str, int, int], ...]] = field(default_factory=dict)


_EMPTY_DICT: dict = {}
_EMPTY_SET: frozenset = frozenset()
_C = TypeVar("_C", dict, frozenset)


def shared_if_empty(d: _C) -> _C:
    """`d`, or one shared empty object of its kind when it is empty (results
    are never changed after they are made)."""
    if d:
        return d
    return cast(_C, _EMPTY_SET if isinstance(d, frozenset) else _EMPTY_DICT)
