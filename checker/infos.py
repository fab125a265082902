"""What declarations declare: the infos of dims, models, their fields, and
functions (plain frozen data every later stage reads), and `Declared`, one
item's contribution to the global scope with its own diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from . import ast as A
from . import types as T
from .consts import show as show_const
from .diagnostics import LocalDiagnostic

if TYPE_CHECKING:
    from .member_conditions import Cond
    from .names import DimDefault


@dataclass(frozen=True)
class DimInfo:
    name: str
    value: int | None  # None when the declaration is invalid
    decl: A.DimDecl


@dataclass(frozen=True)
class FieldInfo:
    name: str
    kind: Literal["param", "buffer"]
    type: T.Type
    decl: A.Member
    # `param b: [O] if bias`, `if stride != 1 or Ci != Co`: the field exists
    # only when this condition holds (None: always; an instance's fields are
    # those that exist, each with what its instance leaves undecided).
    when: Cond | None = None
    # `, persistent=False`: a buffer left out of checkpoints and state_dict
    persistent: bool = True


@dataclass(frozen=True)
class ModelInfo:
    name: str
    device: str
    fields: tuple[FieldInfo, ...]
    decl: A.ModelDecl
    # Some members did not parse: an unknown field may be one of them, so it
    # is not reported.
    partial: bool = False
    # `model Linear[I, O, bias: Bool = True]`: the dims it takes, in order
    # (its fields' types hold them as generic dims), and its options with
    # their defaults. An instance (`Linear[D, H]`) has none: its `generic`
    # is the declaration, `applied` the type it is of.
    dims: tuple[str, ...] = ()
    options: tuple[tuple[str, bool | float | str], ...] = ()
    methods: tuple[FnInfo, ...] = ()
    generic: ModelInfo | None = None
    applied: T.ModelT | None = None
    # instances made of this declaration, by (dims, options): kept here, so an
    # instance is one object for as long as its declaration is
    instances: dict = field(default_factory=dict, compare=False, repr=False, hash=False)
    # the dims with a default (`stride = 1`, or the name of a dim before it:
    # `stride = K`), the last ones of `dims`
    defaults: tuple[tuple[str, DimDefault], ...] = ()
    # the divisions of its own dims that each instance must make exact
    # (names.model_divisions): `(Ci/groups)`, `(E/NH)`
    divisions: tuple = ()
    # the functions that compute its buffers with an expression as their
    # initializer (A.ComputedBuffer decls; checker/buffer_exprs.py)
    computed: tuple[FnInfo, ...] = ()
    # a `trait` (checker/traits.py): its methods are signatures only, it has
    # no fields, and it is no model a value can be of
    trait: bool = False
    # `model ResNet[B: ResBlock, ...]`: its model parameters, each with its
    # traits (qualified), given first in an instance (checker/model_params.py)
    model_params: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def takes(self) -> bool:
        """Whether it takes dims, options or models (`Linear[I, O]`)."""
        return bool(self.dims or self.options or self.model_params)

    def method(self, name: str) -> FnInfo | None:
        for m in self.methods:
            if m.name.rpartition(".")[2] == name:
                return m
        return None

    @property
    def params(self) -> tuple[FieldInfo, ...]:
        return tuple(f for f in self.fields if f.kind == "param")

    @property
    def buffers(self) -> tuple[FieldInfo, ...]:
        return tuple(f for f in self.fields if f.kind == "buffer")

    def field(self, name: str) -> FieldInfo | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    @cached_property
    def interface(self) -> tuple:
        return (
            "trait" if self.trait else "model",
            self.device,
            tuple((f.name, f.kind, f.type, f.when) for f in self.fields),
            self.partial,
            self.dims,
            self.options,
            self.defaults,
            self.model_params,
            tuple((m.name, m.interface) for m in self.methods),
        )


@dataclass(frozen=True, slots=True)
class ParamInfo:
    name: str
    mut: bool
    type: T.Type
    decl: A.Param
    # `lr: Float = 3e-4`: its default's kind and value (checker/consts.py);
    # a call may leave the parameter out
    default: tuple[str, int | float | bool | str] | None = None

    @property
    def optional(self) -> bool:
        """Whether a call may leave it out: it has a default (one that is
        wrong too, which is reported at it: the calls say nothing more)."""
        return self.default is not None or self.decl.default is not None


@dataclass(frozen=True, slots=True)
class FnInfo:
    name: str
    params: tuple[ParamInfo, ...]
    ret: T.Type  # UNIT when the function declares no return type
    declared_ret: bool
    generics: tuple[str, ...]  # generic dims, in order of first appearance
    extern: bool
    target: str | None  # "module:attr" of an extern
    decl: A.FnDecl | A.ExternDecl
    # Generic dims of the return type that no parameter binds (E0206): known
    # to be wrong, so the body does not report them again.
    unbound: tuple[str, ...] = ()
    # A method's model (`Linear` for `Linear.forward`, whose first parameter
    # is `self`); None for a top-level fn.
    owner: str | None = None
    # A method's model's options with their defaults, from the header of the
    # model it is written in (a second model of the same name has its own);
    # for a top-level fn, the options it is generic over (`m: Transformer[E,
    # flash=fl]`: fl, with the option's default), each a value in its body
    owner_options: tuple[tuple[str, bool | float | str], ...] = ()
    # `fn f[M: CharModel]`: its type parameters, each with the qualified
    # traits that bound it (checker/traits.py)
    type_params: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # What users of the function see (its fingerprint): made once, with the info
    # (slots keep a file of many small functions small; no cached_property).
    interface: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "interface",
            (
                "fn",
                self.extern,
                tuple((p.name, p.mut, p.type, p.default, p.optional) for p in self.params),
                self.ret,
                self.owner,
                self.owner_options,
                self.type_params,
            ),
        )

    def signature(self) -> str:
        """`fn f(x: [b D]) -> [b H]`; a method's `self` as written, without a type."""
        params = ", ".join(
            ("mut " if p.mut else "")
            + (p.name if self.owner is not None and i == 0 else f"{p.name}: {p.type}")
            + (f" = {show_const(*p.default)}" if p.default is not None else "")
            for i, p in enumerate(self.params)
        )
        tps = ", ".join(f"{n}: {' + '.join(b)}" for n, b in self.type_params)
        head = f"{'extern fn' if self.extern else 'fn'} {self.name}{f'[{tps}]' if tps else ''}({params})"
        return head + (f" -> {self.ret}" if self.declared_ret else "")


_NO_LOOKUPS: frozenset[str] = frozenset()  # shared by every declaration that looked nothing up


@dataclass(frozen=True, slots=True)
class Declared:
    """What one item contributes to the global scope, and its own diagnostics."""

    info: DimInfo | ModelInfo | FnInfo | None
    diagnostics: tuple[LocalDiagnostic, ...]
    # The global names it looked up (through a TypeContext): the declaration
    # is a function of the item's text and these names' `Names.meaning`.
    lookups: frozenset[str] = frozenset()
    # the models it gives for model parameters (`ResNet[BasicBlock, 1]`), to
    # check against their traits once every model is declared
    # (model_params.unmet_obligations): (model, traits, span, parameter)
    obligations: tuple = ()
