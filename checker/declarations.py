"""The global scope: what each top-level item declares, with resolved types.

Building it is split in two so edits stay cheap: `collect_names` reads only the
names and kinds of the items (and the values of dims); `declare_item` resolves
one item's signature or fields against those names and is cached per item and
per "naming environment" (dim values and model names), the only things a
signature's meaning depends on.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from . import ast as A
from . import catalog as C
from . import dimexpr as DX
from . import types as T
from .diagnostics import LocalDiagnostic, LocalRelated, SymbolRef

NUMBER_TYPES = {"Int": T.INT, "Float": T.FLOAT, "Bool": T.BOOL_N, "Str": T.STR}
ELEM_TYPES = T.ELEM_TYPES
DEVICES = ("cpu", "cuda", "mps")
# Names every compiled model has as methods (see runtime/_model.py); a field
# with one of them would hide it from Python users.
RESERVED_FIELDS = frozenset({"init", "save", "load", "state_dict", "load_state_dict", "keys", "values", "items"})


# ------------------------------------------------------------------ declared things


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


@dataclass(frozen=True)
class ModelInfo:
    name: str
    device: str
    fields: tuple[FieldInfo, ...]
    decl: A.ModelDecl
    # Some members did not parse: an unknown field may be one of them, so it
    # is not reported.
    partial: bool = False

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
        return ("model", self.device, tuple((f.name, f.kind, f.type) for f in self.fields), self.partial)


@dataclass(frozen=True, slots=True)
class ParamInfo:
    name: str
    mut: bool
    type: T.Type
    decl: A.Param


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
    # What users of the function see (its fingerprint): made once, with the info
    # (slots keep a file of many small functions small; no cached_property).
    interface: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "interface", ("fn", self.extern, tuple((p.name, p.mut, p.type) for p in self.params), self.ret)
        )

    def signature(self) -> str:
        params = ", ".join(("mut " if p.mut else "") + f"{p.name}: {p.type}" for p in self.params)
        head = f"{'extern fn' if self.extern else 'fn'} {self.name}({params})"
        return head + (f" -> {self.ret}" if self.declared_ret else "")


ALL_NAMES = "*names*"  # the dependency on the whole set of global names


class _AllKinds:
    """Every global name with its kind, as one comparable, hashable value:
    equal when the names and kinds are (the map itself is compared), hashed
    without building a set of pairs (a file of 100,000 items would hold one
    more copy of its names for it). The map is never changed after Names is
    built."""

    __slots__ = ("kinds", "_hash")

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = kinds
        h = len(kinds)
        for pair in kinds.items():
            h ^= hash(pair)
        self._hash = h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _AllKinds) and (other is self or other.kinds == self.kinds)

    def __hash__(self) -> int:
        return self._hash


@dataclass
class Names:
    """Stage one: every top-level name, its kind and the first item naming it.

    With imports (checker/modules.py), `kinds` holds every name the file can
    write: its own definitions, the names `from` imports bind (aliases of
    qualified names), the modules `import` binds (kind "module") and the
    written qualified names through them (`layers.Mlp`). `imported` holds
    the qualified names of everything the imported modules define, which
    types carry (private ones and those of modules imported in turn
    included); a user cannot write those unless they are also in `kinds`."""

    kinds: dict[str, str] = field(default_factory=dict)  # name -> dim|model|fn|extern|module|broken-<kind>
    first: dict[str, A.Item] = field(default_factory=dict)
    dim_values: dict[str, int | None] = field(default_factory=dict)
    # written name -> qualified name (`Mlp` or `layers.Mlp` -> `layers.Mlp`)
    aliases: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # bound module name -> its qualified name
    imported: dict[str, str] = field(default_factory=dict)  # qualified name -> kind
    origin: dict[str, str] = field(default_factory=dict)  # qualified name -> path of its file
    # the import items' own diagnostics (missing modules, names, clashes)
    import_diagnostics: dict[A.Item, list[LocalDiagnostic]] = field(default_factory=dict)
    exports: list = field(default_factory=list)  # the modules imported (`modules.ModuleExports`), each once

    def meaning(self, name: str) -> object:
        """What a declaration or a written type can learn about a global
        name: its kind, for a dim its value, and for an imported name the
        qualified name it stands for. "*names*" (a lookup of all names, for
        a suggestion) stands for every name with its kind."""
        if name == ALL_NAMES:
            return self._all_kinds
        kind = self.kinds.get(name)
        if kind is None:
            kind = self.imported.get(name)
        return (kind, self.dim_values.get(name), self.aliases.get(name))

    def kind(self, name: str) -> str | None:
        """The kind of a name as written, or of a qualified name a type holds."""
        kind = self.kinds.get(name)
        return kind if kind is not None else self.imported.get(name)

    def canonical(self, name: str) -> str:
        """The name types use for a written name (`Mlp` -> `layers.Mlp`)."""
        return self.aliases.get(name, name)

    @cached_property
    def _all_kinds(self) -> _AllKinds:
        return _AllKinds(self.kinds)

    def same_as(self, older: Names | None) -> bool:
        """Whether `older` has the same names, kinds and dim values; if so,
        this one shares its set of all names (not rebuilt, and the same
        object for as long as the names stay the same)."""
        if (
            older is None
            or self.kinds != older.kinds
            or self.dim_values != older.dim_values
            or self.aliases != older.aliases
            or self.imported != older.imported
        ):
            return False
        self.__dict__["_all_kinds"] = older.meaning(ALL_NAMES)
        return True


def item_name(item: A.Item) -> A.Ident | None:
    if isinstance(item, (A.DimDecl, A.ModelDecl, A.FnDecl, A.ExternDecl)):
        return item.name
    if isinstance(item, A.BrokenItem):
        return item.name
    return None


def item_kind(item: A.Item) -> str:
    if isinstance(item, A.DimDecl):
        return "dim"
    if isinstance(item, A.ModelDecl):
        return "model"
    if isinstance(item, A.FnDecl):
        return "fn"
    if isinstance(item, A.ExternDecl):
        return "extern"
    assert isinstance(item, A.BrokenItem)
    return f"broken-{item.kind}"


def dim_decl_value(item: A.DimDecl, names: Names, seen: frozenset[str] = frozenset()) -> int | None:
    """The value of `dim NAME = e`: a positive integer, from an expression of
    integers and other dims (`E / NH`); None when it is not one (the
    declaration reports why). Stored in `names.dim_values`, so each dim is
    worked out once per update. (A dim met again while its own value is being
    worked out is in a cycle, as is every dim on the way: none has a value.)"""
    name = item.name.text
    if name in names.dim_values:
        return names.dim_values[name]
    value, _problem, _refs = _dim_decl_eval(item.value, names, seen | {name})
    value = value if value is not None and value > 0 else None
    names.dim_values[name] = value
    return value


def _dim_decl_eval(e: A.Expr, names: Names, seen: frozenset[str]) -> tuple[int | None, str | None, set[str]]:
    """(value, why there is none, the dims it names) of a dim declaration's expression."""
    if isinstance(e, A.IntLit):
        return e.value, None, set()
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.IntLit):
        return -e.operand.value, None, set()
    written = dotted_text(e)
    if written is not None and names.first.get(written) is None and names.kinds.get(written) == "dim":
        v = names.dim_values.get(written)  # an imported dim
        return v, None if v is not None else f"'{written}' has no value", {written}
    head = written.split(".")[0] if written is not None else None
    if written is not None and head is not None and (names.kinds.get(head) or "").startswith("broken-"):
        return None, "", {written, head}  # through an import that failed: reported there
    if isinstance(e, A.Name):
        item = names.first.get(e.name)
        if not isinstance(item, A.DimDecl) or e.name in seen:
            why = f"'{e.name}' is not a dim" if e.name not in seen else f"'{e.name}' is defined by itself"
            return None, why, {e.name}
        v = dim_decl_value(item, names, seen)
        return v, None if v is not None else f"'{e.name}' has no value", {e.name}
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
        a, why_a, refs_a = _dim_decl_eval(e.left, names, seen)
        b, why_b, refs_b = _dim_decl_eval(e.right, names, seen)
        refs = refs_a | refs_b
        if a is None or b is None:
            if why_a == "" or why_b == "":
                return None, "", refs  # reported elsewhere
            return None, why_a or why_b, refs
        if e.op == "/":
            if b == 0:
                return None, "division by zero", refs
            if a % b:
                return None, f"{a} / {b} leaves a remainder of {a % b}", refs
            return a // b, None, refs
        return (a + b if e.op == "+" else a - b if e.op == "-" else a * b), None, refs
    if written is not None:  # `layers.X`, not a dim of a module: it may become one
        return None, f"'{written}' is not a dim", {written, head or written}
    return None, None, set()


def dotted_text(e: A.Expr) -> str | None:
    """`layers.H` for a chain of fields on a name; None for anything else."""
    parts = []
    while isinstance(e, A.Field):
        parts.append(e.name.text)
        e = e.value
    if not isinstance(e, A.Name):
        return None
    parts.append(e.name)
    return ".".join(reversed(parts))


def collect_names(items: list[A.Item], imports=None) -> Names:
    """The file's names: its own definitions, then what its imports bind
    (`imports`: module name -> `modules.Resolved`), then the dims' values
    (a dim may be defined from an imported one)."""
    from .modules import bind_imports

    names = Names()
    dims: list[A.DimDecl] = []
    for item in items:
        ident = item_name(item)
        if ident is None or ident.text in names.kinds:
            continue
        names.kinds[ident.text] = item_kind(item)
        names.first[ident.text] = item
        if isinstance(item, A.DimDecl):
            dims.append(item)
    names.exports = bind_imports(names, items, imports or {})
    # Values after all names are known: `dim HD = E / NH` may come before E.
    for item in dims:
        dim_decl_value(item, names)
    return names


class Hint(str):
    """ "; did you mean 'x'?" — a message suffix that also carries the name, so
    the diagnostic built with it offers the rename as a quick fix."""

    name: str | None = None


def suggest(name: str, candidates) -> Hint:
    """ "; did you mean 'x'?" or "" (as a Hint)."""
    match = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    if not match:
        return Hint("")
    hint = Hint(f"; did you mean '{match[0]}'?")
    hint.name = match[0]
    return hint


# ------------------------------------------------------------------ types


@dataclass
class TypeContext:
    """How dim names in a type are read: in a signature an unknown name is a
    generic dim; in a model it is an error; in a body it must be a constant or
    one of the function's generic dims."""

    names: Names
    where: str  # "signature" | "model" | "body"
    generics: list[str] = field(default_factory=list)
    diagnostics: list[LocalDiagnostic] = field(default_factory=list)
    silent: tuple[str, ...] = ()  # dim names already reported elsewhere
    # Every global name looked up ("*names*" when the set of all names was
    # used, for a suggestion): a body records them as its dependencies.
    lookups: set[str] = field(default_factory=set)

    def kind(self, name: str, span: A.Span | None = None) -> str | None:
        """The kind of a name as written (`Mlp`, `layers.Mlp`); with its
        span, a private name of a module (`layers._Hidden`) is reported."""
        self.lookups.add(name)
        kind = self.names.kinds.get(name)
        if kind is None and "." in name:
            module, _, last = name.rpartition(".")
            # what the module names mean decides how an unknown name is reported
            self.lookups.add(module)
            self.lookups.add(name.split(".")[0])
            private = last.startswith("_") and self.names.kinds.get(module) == "module"
            if private and f"{self.names.modules[module]}.{last}" in self.names.imported:
                if span is not None:
                    self.diagnostics.append(C.E0116.at(span, name=last, module=module))
                return "broken-private"
            head = name.split(".")[0]
            if (self.names.kinds.get(head) or "").startswith("broken-"):
                return "broken-module"  # through an import that failed: reported there
        return kind

    def canon(self, name: str) -> str:
        """The qualified name a type holds for a name as written."""
        return self.names.canonical(name)

    def all_of(self, kind: str) -> list[str]:
        self.lookups.add(ALL_NAMES)
        return [n for n, k in self.names.kinds.items() if k == kind]

    def dim(self, d: A.Dim) -> T.Dim:
        if isinstance(d, A.DimBinary):
            return self._dim_binary(d)
        if isinstance(d, A.DimInt):
            if d.value <= 0:
                self.diagnostics.append(C.E0208.at(d.span, value=d.value))
                return T.DimUnknown()
            return T.DimLit(d.value)
        name = d.name
        if self.where == "body" and name in self.generics:
            return T.DimVar(name)
        kind = self.kind(name, d.span)
        if kind == "dim":
            value = self.names.dim_values.get(name)
            return T.DimConst(self.canon(name), value) if value is not None else T.DimUnknown()
        if kind in ("broken-dim", "broken-import", "broken-module", "broken-private"):
            return T.DimUnknown()  # reported where it is defined or imported
        if kind is not None:
            self.diagnostics.append(C.E0211.at(d.span, name=name, kind=kind_word(kind)))
            return T.DimUnknown()
        if self.where == "signature" and "." not in name:  # `layers.X` is never generic
            if name not in self.generics:
                self.generics.append(name)
            return T.DimVar(name)
        if name in self.silent:
            return T.DimUnknown()
        dims = self.all_of("dim") + list(self.generics)
        if self.where == "model":
            self.diagnostics.append(C.E0207.at(d.span, name=name, hint=suggest(name, dims)))
        else:
            self.diagnostics.append(C.E0109.at(d.span, name=name, hint=suggest(name, dims)))
        return T.DimUnknown()

    def _dim_binary(self, d: A.DimBinary) -> T.Dim:
        left, right = self.dim(d.left), self.dim(d.right)
        text = f"({dim_text(d)})"
        if d.op not in ("+", "-", "*", "/"):
            self.diagnostics.append(C.E0212.at(d.span, expr=text, reason=f"'{d.op}' is not dim arithmetic (+ - * /)"))
            return T.DimUnknown()
        pl, pr = T.dim_poly(left), T.dim_poly(right)
        if pl is None or pr is None:
            return T.DimUnknown()
        if d.op == "+":
            p: DX.Poly | None = DX.add(pl, pr)
        elif d.op == "-":
            p = DX.sub(pl, pr)
        elif d.op == "*":
            p = DX.mul(pl, pr)
        else:
            p = DX.div(pl, pr)
        if p is None:
            self.diagnostics.append(C.E0212.at(d.span, expr=text, reason="division by zero"))
            return T.DimUnknown()
        value = DX.value(p)
        if value is not None and value <= 0:
            self.diagnostics.append(C.E0212.at(d.span, expr=text, reason=f"it is {value}; a dim is a positive integer"))
            return T.DimUnknown()
        return T.DimExpr(text, p)

    def elem(self, e: A.ElemType | None) -> T.Elem | None:
        if e is None:
            return T.F32
        name = e.name.text
        if name == "Index":
            if e.arg is None:
                self.diagnostics.append(
                    C.E0309.at(e.span, elem="Index", reason="Index needs the dim it indexes, as in Index[C]")
                )
                return None
            dim = self.dim(A.DimName(e.arg.span, e.arg.text))
            return T.index_of(dim)
        elem = ELEM_TYPES.get(name)
        if elem is None:
            self.diagnostics.append(
                C.E0102.at(
                    e.name.span, what="element type", name=name, hint=suggest(name, list(ELEM_TYPES) + ["Index"])
                )
            )
            return None
        if e.arg is not None:
            self.diagnostics.append(C.E0309.at(e.span, elem=f"{name}[...]", reason=f"{name} takes no argument"))
            return None
        return elem

    def resolve(self, t: A.TypeExpr) -> T.Type:
        if isinstance(t, A.TensorType):
            stacked = self._stack(t)
            if stacked is not None:
                return stacked
            dims = tuple(self.dim(d) for d in t.dims)
            elem = self.elem(t.elem)
            if elem is None:
                return T.UNKNOWN
            return T.TensorT(dims, elem)
        if isinstance(t, A.TupleType):
            return T.TupleT(tuple(self.resolve(x) for x in t.items))
        assert isinstance(t, A.NamedType)
        name = t.name.text
        if name == "Grad":
            return self._grad(t)
        if name in T.OPTIMIZERS and t.arg is not None and self.kind(name) is None:
            return self._optimizer(t)
        if t.option is not None:
            self.diagnostics.append(C.E0309.at(t.span, elem=f"{name}[...]", reason=f"{name} takes no {t.option.text}="))
            return T.UNKNOWN
        if t.arg is not None and name != "Index":
            self.diagnostics.append(C.E0309.at(t.span, elem=f"{name}[...]", reason=f"{name} takes no argument"))
            return T.UNKNOWN
        if name in NUMBER_TYPES:
            return NUMBER_TYPES[name]
        if name == "Mode":
            return T.MODE
        kind = self.kind(name, t.name.span)
        if kind == "model":
            return T.ModelT(self.canon(name))
        if kind is not None and kind.startswith("broken"):
            return T.UNKNOWN
        if name in ELEM_TYPES or name == "Index":
            written = name if t.arg is None else f"{name}[...]"
            self.diagnostics.append(
                C.E0309.at(
                    t.span, elem=written, reason=f"it is not a type by itself; write [] {written} for a scalar tensor"
                )
            )
            return T.UNKNOWN
        if kind is not None:
            self.diagnostics.append(C.E0110.at(t.name.span, name=name, kind=kind_word(kind), use="a type"))
            return T.UNKNOWN
        candidates = list(NUMBER_TYPES) + ["Mode", "Grad"] + self.all_of("model")
        self.diagnostics.append(C.E0102.at(t.name.span, what="type", name=name, hint=suggest(name, candidates)))
        return T.UNKNOWN

    def _stack(self, t: A.TensorType) -> T.Type | None:
        """`[L] Block` (a stack of sub-models) or `[b] Grad[M]` (one gradient
        per example); None when `t` is a tensor type."""
        e = t.elem
        if e is None:
            return None
        name = e.name.text
        if name == "Grad":
            if e.arg is None or self.kind(e.arg.text, e.arg.span) != "model":
                return None  # reported as an element type
            inner: T.Type = T.GradT(self.canon(e.arg.text))
            per_example = True
        elif (kind := self.kind(name, e.name.span)) == "model" and e.arg is None:
            inner = T.ModelT(self.canon(name))
            per_example = False
        elif kind is not None and kind.startswith("broken-") and "." in name:
            return T.UNKNOWN  # `[L] layers.Block` through an import that failed
        else:
            return None
        if len(t.dims) != 1:
            self.diagnostics.append(
                C.E0309.at(t.span, elem=str(inner), reason=f"a stack of {inner} has exactly one dim, as in [L] {inner}")
            )
            return T.UNKNOWN
        dim = self.dim(t.dims[0])
        if isinstance(dim, T.DimUnknown):
            return T.UNKNOWN
        return T.StackT(dim, inner, per_example)

    def _optimizer(self, t: A.NamedType) -> T.Type:
        name = t.name.text
        arg = t.arg
        if isinstance(arg, A.NamedType) and arg.arg is None and t.option is None:
            kind = self.kind(arg.name.text, arg.name.span)
            if kind == "model":
                return T.OptimT(name, self.canon(arg.name.text))
            if kind is not None and kind.startswith("broken"):
                return T.UNKNOWN
        inner = type_text(arg) if arg is not None else ""
        self.diagnostics.append(
            C.E0303.at(t.span, type=f"{name}[{inner}]", reason=f"an optimizer is of a model, as in {name}[Mlp]")
        )
        return T.UNKNOWN

    def _grad(self, t: A.NamedType) -> T.Type:
        arg = t.arg
        if arg is None:
            self.diagnostics.append(C.E0303.at(t.span, type="Grad", reason="Grad needs a model, as in Grad[Mlp]"))
            return T.UNKNOWN
        if t.option is not None and t.option.text != "wrt":
            self.diagnostics.append(
                C.E0303.at(t.option.span, type="Grad[...]", reason=f"Grad takes wrt=[...], not {t.option.text}=")
            )
            return T.UNKNOWN
        if isinstance(arg, A.NamedType) and arg.arg is None:
            kind = self.kind(arg.name.text, arg.name.span)
            if kind == "model":
                model = self.canon(arg.name.text)
                if t.option is not None:
                    # which names are params of the model is checked where the
                    # model's fields are known (the body, E1109)
                    return T.GradT(model, tuple(sorted({n.text for n in t.names})))
                return T.GradT(model)
            if kind is not None and kind.startswith("broken"):
                return T.UNKNOWN
            if (
                kind is None
                and arg.name.text not in NUMBER_TYPES
                and arg.name.text not in ELEM_TYPES
                and arg.name.text != "Mode"
            ):
                models = self.all_of("model")
                self.diagnostics.append(
                    C.E0102.at(arg.name.span, what="model", name=arg.name.text, hint=suggest(arg.name.text, models))
                )
                return T.UNKNOWN
        inner = type_text(arg)
        self.diagnostics.append(C.E0303.at(t.span, type=f"Grad[{inner}]", reason=f"{inner} is not a model"))
        return T.UNKNOWN


def type_text(t: A.TypeExpr) -> str:
    if isinstance(t, A.TensorType):
        dims = " ".join(written_dim(d) for d in t.dims)
        elem = "" if t.elem is None else " " + t.elem.name.text + (f"[{t.elem.arg.text}]" if t.elem.arg else "")
        return f"[{dims}]{elem}"
    if isinstance(t, A.TupleType):
        return "(" + ", ".join(type_text(x) for x in t.items) + ")"
    return t.name.text + (f"[{type_text(t.arg)}]" if t.arg is not None else "")


def kind_word(kind: str) -> str:
    """'a dim', 'a model', 'a function', 'an extern function' (a broken item: the same)."""
    if kind.startswith("broken-"):
        kind = kind[len("broken-") :]
    return {"dim": "a dim", "model": "a model", "fn": "a function", "extern": "an extern function"}.get(kind, kind)


# ------------------------------------------------------------------ per-item declarations

_NO_LOOKUPS: frozenset[str] = frozenset()  # shared by every declaration that looked nothing up


@dataclass(frozen=True, slots=True)
class Declared:
    """What one item contributes to the global scope, and its own diagnostics."""

    info: DimInfo | ModelInfo | FnInfo | None
    diagnostics: tuple[LocalDiagnostic, ...]
    # The global names it looked up (through a TypeContext): the declaration
    # is a function of the item's text and these names' `Names.meaning`.
    lookups: frozenset[str] = frozenset()


_INITS = {"zeros": 0, "ones": 0, "normal": 2, "uniform": 2, "xavier": 0}


def declare_item(item: A.Item, names: Names, partial: bool = False) -> Declared:
    if isinstance(item, A.DimDecl):
        return _declare_dim(item, names)
    if isinstance(item, A.ModelDecl):
        return _declare_model(item, names, partial)
    if isinstance(item, (A.FnDecl, A.ExternDecl)):
        return _declare_fn(item, names)
    return Declared(None, ())


def _declare_dim(item: A.DimDecl, names: Names) -> Declared:
    value, why, refs = _dim_decl_eval(item.value, names, frozenset({item.name.text}))
    diags = []
    if why == "":
        pass  # its cause is reported elsewhere
    elif why is not None:
        diags.append(C.E0212.at(item.value.span, expr=_literal_text(item.value), reason=why))
    elif value is None or value <= 0:
        shown = _literal_text(item.value) if value is None else str(value)
        diags.append(C.E0208.at(item.value.span, value=shown))
        value = None
    # Its value depends on the dims it names: they are its lookups.
    return Declared(DimInfo(item.name.text, value, item), tuple(diags), frozenset(refs))


def _literal_text(e: A.Expr) -> str:
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return e.op + str(e.operand.value)
    if isinstance(e, A.FloatLit):
        return str(e.value)
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Binary):
        return f"{_literal_text(e.left)} {e.op} {_literal_text(e.right)}"
    return "this expression"


def _declare_model(item: A.ModelDecl, names: Names, partial: bool = False) -> Declared:
    ctx = TypeContext(names, "model")
    fields: list[FieldInfo] = []
    seen: dict[str, A.Member] = {}
    device = "cpu"
    if item.device is not None:
        device = item.device.name
        base = device.split(":", 1)[0]
        ok = base in DEVICES and (":" not in device or device.split(":", 1)[1].isdigit())
        if not ok:
            ctx.diagnostics.append(C.E0906.at(item.device.span, device=device))
            device = "cpu"
    for m in item.members:
        if m.name.text in RESERVED_FIELDS or m.name.text.startswith("_"):
            ctx.diagnostics.append(C.E0908.at(m.name.span, name=m.name.text))
            continue
        if m.name.text in seen:
            ctx.diagnostics.append(
                C.E0106.at(
                    m.name.span,
                    name=m.name.text,
                    model=item.name.text,
                    related=(LocalRelated("first declared here", span=seen[m.name.text].name.span),),
                )
            )
            continue
        seen[m.name.text] = m
        before = len(ctx.diagnostics)
        ty = ctx.resolve(m.type)
        sub_model = isinstance(ty, T.ModelT) or (isinstance(ty, T.StackT) and isinstance(ty.item, T.ModelT))
        if sub_model and m.kind == "buffer":
            ctx.diagnostics.append(C.E0907.at(m.type.span, kind=m.kind, found=str(ty)))
            ty = T.UNKNOWN
        elif sub_model and m.init is not None:
            assert m.init is not None
            ctx.diagnostics.append(
                C.E0903.at(m.init.span, what=f"sub-model {m.name.text} is initialised by its own model's fields")
            )
        elif len(ctx.diagnostics) == before and not isinstance(ty, T.TensorT) and not sub_model:
            ctx.diagnostics.append(C.E0907.at(m.type.span, kind=m.kind, found=str(ty)))
            ty = T.UNKNOWN
        if isinstance(ty, T.TensorT) and m.kind == "param" and not ty.elem.is_float:
            ctx.diagnostics.append(C.E0902.at(m.type.span, name=m.name.text, found=str(ty)))
        if m.init is not None and isinstance(ty, T.TensorT):
            _check_init(m, ty, ctx)
        fields.append(FieldInfo(m.name.text, m.kind, ty, m))
    return Declared(
        ModelInfo(item.name.text, device, tuple(fields), item, partial), tuple(ctx.diagnostics), frozenset(ctx.lookups)
    )


def _an(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" or word[:1] in "fi" and word[1:2].isdigit() else "a ") + word


def _literal_value(e: A.Expr) -> float | bool | None:
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -e.operand.value if e.op == "-" else e.operand.value
    if isinstance(e, (A.IntLit, A.FloatLit, A.BoolLit)):
        return e.value
    return None


def _check_init(m: A.Member, ty: T.TensorT, ctx: TypeContext) -> None:
    """An initializer must suit the field's element type, refinement included:
    a NonNeg param cannot start negative, an Index[C] buffer must index C."""
    init = m.init
    assert init is not None
    elem = ty.elem
    field = f"{_an(str(elem))} {m.kind}"
    bad = lambda what: ctx.diagnostics.append(C.E0903.at(init.span, what=what))
    value = _literal_value(init)
    if value is not None:
        if isinstance(init, A.BoolLit) != elem.is_bool:
            kind = "Bool" if isinstance(init, A.BoolLit) else "number"
            bad(f"{_an(kind)} fill value for {field}" + ("; use True or False" if elem.is_bool else ""))
        elif isinstance(init, A.FloatLit) or (isinstance(init, A.Unary) and isinstance(init.operand, A.FloatLit)):
            if not elem.is_float:
                bad(f"a Float fill value for {field}")
            else:
                _check_range(value, value, elem, field, bad)
        elif not elem.is_bool:
            _check_range(value, value, elem, field, bad)
        return
    name = None
    args: tuple[A.Arg, ...] = ()
    if isinstance(init, A.Name):
        name = init.name
    elif isinstance(init, A.Call) and isinstance(init.func, A.Name):
        name = init.func.name
        args = init.args
    if name not in _INITS:
        shown = name if name is not None else "this expression"
        bad(f"{shown} is not an initializer{suggest(name or '', _INITS)}")
        return
    want = _INITS[name]
    example = {"normal": "normal(0.0, 0.02)", "uniform": "uniform(-0.1, 0.1)"}.get(name, name)
    if name in ("normal", "uniform", "xavier") and not elem.is_float:
        bad(f"{name} needs a float {m.kind}, found {elem}")
        return
    if name == "xavier" and ty.rank < 2:
        bad(f"xavier needs at least 2 dims, found {ty}")
        return
    if isinstance(init, A.Name) and want:
        bad(f"{name} takes {want} literal numbers, as in {example}")
        return
    values = [_literal_value(a.value) if a.keyword is None else None for a in args]
    if len(args) == want and all(a.keyword is None for a in args):
        computed = next((a.value for a, v in zip(args, values) if v is None), None)
        if computed is not None:  # `normal(0.0, 0.02 / sqrt(2 * L))`
            what = f"{name} takes {want} literal numbers, as in {example}; an initializer cannot compute one yet"
            ctx.diagnostics.append(C.E0903.at(computed.span, what=what))
            return
    if len(args) != want or any(v is None or isinstance(v, bool) for v in values):
        bad(f"{name} takes {want} literal numbers, as in {example}")
        return
    if name == "zeros":
        _check_range(0, 0, elem, field, bad)
    elif name == "ones":
        _check_range(1, 1, elem, field, bad)
    elif name == "normal":
        if values[1] < 0:  # type: ignore[operator]
            bad("normal's standard deviation must not be negative")
        elif elem.refine is not None:
            bad(f"normal can draw any real value, which does not suit {field}; use uniform")
    elif name == "uniform":
        lo, hi = values
        if lo > hi:  # type: ignore[operator]
            bad(f"uniform({lo}, {hi}) has its bounds the wrong way round")
        else:
            _check_range(lo, hi, elem, field, bad)  # type: ignore[arg-type]
    elif name == "xavier" and elem.refine is not None:
        bad(f"xavier draws negative values, which do not suit {field}")


def _check_range(lo: float, hi: float, elem: T.Elem, field: str, bad) -> None:
    if elem.index is not None:
        size = T.dim_value(elem.index)
        if lo != int(lo) or lo < 0 or (size is not None and hi >= size):
            bad(f"{_fmt(lo, hi)} is not a valid value for {field} (0 to {size - 1 if size else '?'})")
    elif elem.refine == "nonneg" and lo < 0:
        bad(f"{_fmt(lo, hi)} is negative, which does not suit {field}")
    elif elem.refine == "prob" and (lo < 0 or hi > 1):
        bad(f"{_fmt(lo, hi)} is outside [0, 1], which does not suit {field}")


def _fmt(lo: float, hi: float) -> str:
    return str(lo) if lo == hi else f"[{lo}, {hi}]"


def _is_number(e: A.Expr) -> bool:
    if isinstance(e, A.Unary):
        e = e.operand
    return isinstance(e, (A.IntLit, A.FloatLit))


def _declare_fn(item: A.FnDecl | A.ExternDecl, names: Names) -> Declared:
    ctx = TypeContext(names, "signature")
    params: list[ParamInfo] = []
    seen: dict[str, A.Param] = {}
    for p in item.params:
        ty = ctx.resolve(p.type)
        if p.name.text in seen:
            ctx.diagnostics.append(
                C.E0105.at(
                    p.name.span,
                    name=p.name.text,
                    related=(LocalRelated("first declared here", span=seen[p.name.text].name.span),),
                )
            )
            continue
        seen[p.name.text] = p
        if p.mut and isinstance(item, A.ExternDecl):
            ctx.diagnostics.append(
                C.E0503.at(p.span, name=p.name.text, reason="an extern fn cannot take a mut parameter")
            )
        elif p.mut and not isinstance(ty, (T.ModelT, T.OptimT, T.UnknownT)):
            ctx.diagnostics.append(
                C.E0503.at(
                    p.span,
                    name=p.name.text,
                    reason=f"only a model or an optimizer can be mut, and this is {T.describe(ty)}",
                )
            )
        params.append(ParamInfo(p.name.text, p.mut, ty, p))
    bound = list(ctx.generics)
    for p in params:
        if p.name in bound:
            ctx.diagnostics.append(C.E0112.at(p.decl.name.span, name=p.name))
    ret: T.Type = T.UNIT
    unbound: list[str] = []
    if item.ret is not None:
        ret = ctx.resolve(item.ret)
        unbound = [g for g in ctx.generics if g not in bound]
        for g in unbound:
            span = _first_dim_span(item.ret, g) or item.ret.span
            ctx.diagnostics.append(C.E0206.at(span, name=g))
        if unbound:
            ret = _forget_dims(ret, set(unbound))
    target = None
    if isinstance(item, A.ExternDecl) and item.target is not None:
        target = item.target.value
        if not _valid_target(target):
            ctx.diagnostics.append(C.E0412.at(item.target.span, target=target))
    info = FnInfo(
        item.name.text,
        tuple(params),
        ret,
        item.ret is not None,
        tuple(bound),
        isinstance(item, A.ExternDecl),
        target,
        item,
        tuple(unbound),
    )
    return Declared(info, tuple(ctx.diagnostics), frozenset(ctx.lookups) if ctx.lookups else _NO_LOOKUPS)


def _forget_dims(t: T.Type, names: set[str]) -> T.Type:
    """`t` with the given generic dims unknown (they were reported already)."""
    if isinstance(t, T.TensorT):
        dims = tuple(T.DimUnknown() if isinstance(d, T.DimVar) and d.name in names else d for d in t.dims)
        return T.TensorT(dims, t.elem)
    if isinstance(t, T.TupleT):
        return T.TupleT(tuple(_forget_dims(x, names) for x in t.items))
    return t


def _valid_target(target: str) -> bool:
    module, sep, attr = target.partition(":")
    ident = lambda s: s.isidentifier()
    return bool(sep) and all(ident(p) for p in module.split(".")) and all(ident(p) for p in attr.split("."))


def _first_dim_span(t: A.TypeExpr, name: str) -> A.Span | None:
    for node in A.walk(t):
        if isinstance(node, A.DimName) and node.name == name:
            return node.span
        if isinstance(node, A.ElemType) and node.arg is not None and node.arg.text == name:
            return node.arg.span
    return None


# ------------------------------------------------------------------ the global scope


@dataclass
class Globals:
    names: Names
    dims: dict[str, DimInfo]
    models: dict[str, ModelInfo]
    fns: dict[str, FnInfo]

    def fingerprint(self, name: str) -> object:
        """A value that changes exactly when what `name` means to a user of it
        changes (not when its body or position does)."""
        if name == ALL_NAMES:
            return self.names.meaning(name)
        kind = self.names.kind(name)
        if kind is None:
            return None
        alias = self.names.aliases.get(name)
        if kind == "dim":
            return ("dim", self.names.dim_values.get(name), alias)
        # (a declaration that failed inside the checker has no info: its
        # error is recorded, and the name means nothing more)
        if kind == "model":
            model = self.models.get(name)
            return (model.interface if model is not None else None, alias)
        if kind in ("fn", "extern"):
            fn = self.fns.get(name)
            return (fn.interface if fn is not None else None, alias)
        return (kind, alias)

    def symbol_span(self, ref: SymbolRef) -> tuple[A.Item, A.Span] | None:
        """The declaration a symbolic reference names: (item, span in item)."""
        path = ref.path
        if path[0] in ("dim", "model", "fn", "extern") and len(path) == 2:
            item = self.names.first.get(path[1])
            if item is None:
                return None
            ident = item_name(item)
            return (item, ident.span) if ident is not None else None
        if path[0] == "member" and len(path) == 3:
            model = self.models.get(path[1])
            f = model.field(path[2]) if model is not None else None
            return (model.decl, f.decl.name.span) if model is not None and f is not None else None
        if path[0] == "param" and len(path) == 3:
            fn = self.fns.get(path[1])
            if fn is None:
                return None
            for p in fn.params:
                if p.name == path[2]:
                    return (fn.decl, p.decl.span)
        if path[0] == "ret" and len(path) == 2:
            fn = self.fns.get(path[1])
            if fn is not None and fn.decl.ret is not None:
                return (fn.decl, fn.decl.ret.span)
        return None


def sub_model(t: T.Type) -> str | None:
    """The model of a sub-model field's type (`Encoder`, `[L] Block`)."""
    if isinstance(t, T.ModelT):
        return t.name
    if isinstance(t, T.StackT) and isinstance(t.item, T.ModelT):
        return t.item.name
    return None


def leaf_params(glob: Globals, model: str, _seen: frozenset[str] = frozenset()) -> list[tuple[str, str, FieldInfo]]:
    """Every tensor param of a model, sub-models' included, as (path, the
    model declaring it, field) in declaration order: `w`, `enc.w1`,
    `blocks.wq` (one path for all the blocks of a stack: the checker does not
    tell them apart)."""
    info = glob.models.get(model)
    if info is None or model in _seen:
        return []
    out: list[tuple[str, str, FieldInfo]] = []
    for f in info.params:
        sub = sub_model(f.type)
        if sub is None:
            out.append((f.name, model, f))
        else:
            out.extend((f"{f.name}.{p}", m, x) for p, m, x in leaf_params(glob, sub, _seen | {model}))
    return out


def model_closure(glob: Globals, model: str) -> list[str]:
    """`model` and every model inside it (sub-models, theirs...), each once."""
    out = [model]
    i = 0
    while i < len(out):
        info = glob.models.get(out[i])
        i += 1
        for f in info.params if info is not None else ():
            sub = sub_model(f.type)
            if sub is not None and sub not in out:
                out.append(sub)
    return out


def model_cycles(glob: Globals) -> dict[str, list[LocalDiagnostic]]:
    """E0909 for each sub-model field through which a model contains itself,
    keyed by model name (reported in that model's item)."""
    out: dict[str, list[LocalDiagnostic]] = {}
    for name, info in glob.models.items():
        if name not in glob.names.first:
            continue  # an imported model: its own file reports its cycles
        for f in info.params:
            sub = sub_model(f.type)
            if sub is None:
                continue
            path = _path_to(glob, sub, name, {sub})
            if path is not None:
                chain = " -> ".join([name, *path])
                out.setdefault(name, []).append(C.E0909.at(f.decl.type.span, model=name, chain=chain))
    return out


def _path_to(glob: Globals, start: str, goal: str, seen: set[str]) -> list[str] | None:
    if start == goal:
        return [start]
    info = glob.models.get(start)
    if info is None:
        return None
    for f in info.params:
        sub = sub_model(f.type)
        if sub is not None and sub not in seen:
            seen.add(sub)
            rest = _path_to(glob, sub, goal, seen)
            if rest is not None:
                return [start, *rest]
    return None


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def dim_text(d: A.Dim, parent: int = 0, right: bool = False) -> str:
    """A dim as written, with the parentheses its operators need (without the
    outer ones): `T*E`, `(H-K)/S+1`."""
    if isinstance(d, A.DimName):
        return d.name
    if isinstance(d, A.DimInt):
        return str(d.value)
    prec = _PRECEDENCE.get(d.op, 2)
    text = f"{dim_text(d.left, prec)}{d.op}{dim_text(d.right, prec, True)}"
    # a - (b - c) and a / (b * c) keep their parentheses
    return f"({text})" if prec < parent or (prec == parent and right) else text


def written_dim(d: A.Dim) -> str:
    """One dim of a shape as written: `b`, `64`, `(T*E)`."""
    return f"({dim_text(d)})" if isinstance(d, A.DimBinary) else dim_text(d)
