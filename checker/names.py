"""Stage one of the global scope: every top-level name, its kind, the first
item naming it, the dims' values and what the imports bind (`Names`, filled
by `modules.collect_names`: binding imports needs the modules' exports).
Later stages read names only through `Names`, whose `meaning` of a name is
what a declaration's cache entry is validated against."""

from __future__ import annotations

import dataclasses
import difflib
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from . import ast as A
from . import dimexpr as DX
from . import types as T
from .consts import ConstProblem, evaluate
from .diagnostics import LocalDiagnostic
from .show import dotted_text

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
    # a constant's kind and value (`const LR = 3e-4`: ("Float", 0.0003)); ""
    # when it has none (its declaration says why, E0118)
    const_values: dict[str, tuple[str, int | float | bool | str] | str] = field(default_factory=dict)
    # written name -> qualified name (`Mlp` or `layers.Mlp` -> `layers.Mlp`)
    aliases: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # bound module name -> its qualified name
    imported: dict[str, str] = field(default_factory=dict)  # qualified name -> kind
    origin: dict[str, str] = field(default_factory=dict)  # qualified name -> path of its file
    # the import items' own diagnostics (missing modules, names, clashes)
    import_diagnostics: dict[A.Item, list[LocalDiagnostic]] = field(default_factory=dict)
    exports: list = field(default_factory=list)  # the modules imported (`modules.ModuleExports`), each once
    # what each model takes, by qualified name: its dims and its options with
    # their defaults (`Linear` -> (("I", "O"), (("bias", True),))); from the
    # header alone, so a type `Linear[D, H]` is checked without the fields
    model_sigs: dict[str, ModelSig] = field(default_factory=dict)
    # what each type alias stands for, by qualified name (checker/aliases.py)
    alias_sigs: dict[str, AliasSig] = field(default_factory=dict)

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
        if kind == "model":
            return (kind, None, self.aliases.get(name), self.model_sigs.get(self.canonical(name)))
        if kind == "const":
            return (kind, self.const_values.get(name), self.aliases.get(name))
        if kind == "alias":
            return (kind, self.alias_sigs.get(self.canonical(name)), self.aliases.get(name))
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
            or self.const_values != older.const_values
            or self.aliases != older.aliases
            or self.imported != older.imported
            or self.model_sigs != older.model_sigs
            or self.alias_sigs != older.alias_sigs
        ):
            return False
        self.__dict__["_all_kinds"] = older.meaning(ALL_NAMES)
        return True


def item_name(item: A.Item) -> A.Ident | None:
    if isinstance(item, (A.DimDecl, A.ConstDecl, A.TypeAlias, A.ModelDecl, A.TraitDecl, A.FnDecl, A.ExternDecl)):
        return item.name
    if isinstance(item, A.BrokenItem):
        return item.name
    return None


def item_kind(item: A.Item) -> str:
    if isinstance(item, A.DimDecl):
        return "dim"
    if isinstance(item, A.ConstDecl):
        return "const"
    if isinstance(item, A.TypeAlias):
        return "alias"
    if isinstance(item, A.ModelDecl):
        return "model"
    if isinstance(item, A.TraitDecl):
        return "trait"
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
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/", "//", "%"):
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
        if e.op == "//":  # floored, as Python's `//`: `dim P = K // 2`
            return (a // b, None, refs) if b else (None, "division by zero", refs)
        if e.op == "%":  # the remainder, as Python's: `dim R = N % 4`
            return (a % b, None, refs) if b else (None, "division by zero", refs)
        return (a + b if e.op == "+" else a - b if e.op == "-" else a * b), None, refs
    if written is not None:  # `layers.X`, not a dim of a module: it may become one
        return None, f"'{written}' is not a dim", {written, head or written}
    return None, None, set()


def const_decl_value(
    item: A.ConstDecl, names: Names, seen: frozenset[str] = frozenset()
) -> tuple[str, int | float | bool | str] | str:
    """The kind and value of `const NAME = e` ("" when it has none: its
    declaration reports why), worked out once per update, as a dim's."""
    name = item.name.text
    if name in names.const_values:
        return names.const_values[name]
    seen = seen | {name}

    def lookup(n: str):
        kind = names.kind(n)
        if kind == "dim":
            v = names.dim_values.get(n)
            return ("Int", v) if v is not None else ""
        if kind == "const":
            other = names.first.get(n)
            if n in seen:
                return ""  # a cycle: reported at the declaration
            if isinstance(other, A.ConstDecl):
                return const_decl_value(other, names, seen)
            return names.const_values.get(n, "")
        return "" if kind is not None and kind.startswith("broken-") else None

    try:
        found: tuple[str, int | float | bool | str] | str = evaluate(item.value, lookup)
    except ConstProblem:
        found = ""
    if isinstance(found, tuple) and isinstance(item.type, A.NamedType) and not item.type.args:
        want = item.type.name.text
        if want == "Float" and found[0] == "Int":
            found = ("Float", float(found[1]))
        elif want != found[0]:
            found = ""
    names.const_values[name] = found
    return found


# `(E/NH)` as (its text, E's normal form, NH's), over a model's own dims
Divisions = tuple[tuple[str, DX.Poly, DX.Poly], ...]


# A model dim's default: a number (`stride = 1`), a dim before it
# (`stride = K`), or integer arithmetic of those, (op, left, right) with op
# one of + - * // % (`P = K // 2` is ("//", "K", 2)).
DimDefault = int | str | tuple


def dim_default(e: A.Expr, before: Sequence[str], flags: Sequence[str] = ()) -> DimDefault | None:
    """The default `e` of a model dim whose earlier dims are `before`; None
    when it is not integer arithmetic of literals, those dims and the
    model's Bool options `flags` (1 when True, 0 when False: torch's
    `num_directions = 2 if bidirectional else 1` is `1 + bidirectional`)."""
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Name):
        return e.name if e.name in before or e.name in flags else None
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "//", "%"):
        left, right = dim_default(e.left, before, flags), dim_default(e.right, before, flags)
        return None if left is None or right is None else (e.op, left, right)
    return None


def default_reads(d: DimDefault) -> set[str]:
    """The names (dims before it, Bool options) a dim default reads."""
    if isinstance(d, int):
        return set()
    if isinstance(d, str):
        return {d}
    return default_reads(d[1]) | default_reads(d[2])


def bool_options(item: A.ModelDecl | A.TraitDecl) -> tuple[str, ...]:
    """The names of a model's Bool options (`bias: Bool = True`), which a
    dim's default may read wherever they stand in the header."""
    return tuple(
        p.name.text
        for p in item.params
        if isinstance(p.type, A.NamedType) and p.type.name.text == "Bool" and not p.type.args
    )


def dim_default_value(d: DimDefault, values: dict[str, int]) -> int | None:
    """The number default `d` comes to, with the dims before it at `values`
    (None for a division by zero); the runtime's GenericModel computes the same."""
    if isinstance(d, int):
        return d
    if isinstance(d, str):
        return values[d]
    op, a, b = d
    left, right = dim_default_value(a, values), dim_default_value(b, values)
    if left is None or right is None or (op in ("//", "%") and right == 0):
        return None
    if op == "%":
        return left % right
    return left + right if op == "+" else left - right if op == "-" else left * right if op == "*" else left // right


def dim_default_text(d: DimDefault) -> str:
    """A default as a dim expression writes it, without its outer parentheses: `K//2`."""
    if isinstance(d, (int, str)):
        return str(d)
    op, a, b = d
    return f"{_part(a)}{op}{_part(b)}"


def _part(d: DimDefault) -> str:
    return f"({dim_default_text(d)})" if isinstance(d, tuple) else str(d)


class ModelSig(NamedTuple):
    """What a model takes: its dims in order, the defaults of those that have
    one (`stride = 1`, or `stride = K`: the dim K given before it), and its
    options with their defaults."""

    dims: tuple[str, ...] = ()
    # a Bool's default is a bool, a Float's a float, a DType's the dtype's name ("f32")
    options: tuple[tuple[str, bool | float | str], ...] = ()
    defaults: tuple[tuple[str, DimDefault], ...] = ()
    # the divisions of its own dims that its members and methods write
    # (`(Ci/groups)`, `(E/NH)`): each instance must make them exact
    divisions: Divisions = ()
    # its model parameters (`B: ResBlock`, checker/model_params.py), first in
    # its brackets: each with its traits (qualified where imported)
    models: tuple[tuple[str, tuple[str, ...]], ...] = ()


NO_SIG = ModelSig()


@dataclass(frozen=True)
class AliasSig:
    """What a type alias stands for (`type Lin[i, o] = Linear[i, o,
    bias=False]`): the dims it takes and its type, in which each of them is
    a generic dim (`DimVar`). `broken`: its declaration has an error (reported
    there, so its uses stay silent); `cycle`: the aliases along the cycle it
    is defined through, itself first."""

    params: tuple[str, ...]
    type: T.Type
    broken: bool = False
    cycle: tuple[str, ...] = ()

    def applied(self, dims: tuple[T.Dim, ...]) -> T.Type:
        """Its type with the dims it is given in place of its own."""
        if not self.params:
            return self.type
        return _subst(self.type, dict(zip(self.params, dims)))


def _subst_dim(d: T.Dim, env: dict[str, T.Dim]) -> T.Dim:
    """A dim with the alias's dims replaced."""
    if isinstance(d, T.DimVar):
        return env.get(d.name, d)
    if isinstance(d, T.DimExpr):
        names = DX.generics(d.poly) & env.keys()
        if not names:
            return d
        polys = {n: T.dim_poly(env[n]) for n in names}
        if any(p is None for p in polys.values()):
            return T.DimUnknown()
        p = DX.substitute(d.poly, polys)  # type: ignore[arg-type]
        return T.substituted(d, {n: env[n] for n in names}, p) if p is not None else T.DimUnknown()
    return d


def _subst(t: T.Type, env: dict[str, T.Dim]) -> T.Type:
    """A type with the alias's dims replaced."""
    if isinstance(t, T.TensorT):
        elem = t.elem
        if elem.index is not None:
            elem = T.Elem(elem.dtype, elem.refine, _subst_dim(elem.index, env))
        return T.TensorT(tuple(_subst_dim(d, env) for d in t.dims), elem)
    if isinstance(t, T.TupleT):
        return T.TupleT(tuple(_subst(x, env) for x in t.items))
    if isinstance(t, T.StackT):
        return T.StackT(_subst_dim(t.dim, env), _subst(t.item, env), t.per_example)
    if isinstance(t, (T.ModelT, T.GradT, T.OptimT)):
        return dataclasses.replace(t, dims=tuple(_subst_dim(d, env) for d in t.dims))
    if isinstance(t, T.VocabT):
        return T.VocabT(_subst_dim(t.index, env))
    return t


# the words that make a typed header parameter an option (`bias: Bool =
# True`), even a malformed one (`n: Int = 3`, reported by model_decl)
OPTION_WORDS = frozenset({"Bool", "Float", "DType", "Int", "Str", "Mode", "Index", "Grad"})


def is_model_param(p: A.ModelParam) -> bool:
    """Whether a header parameter is a model parameter (`B: ResBlock`): typed
    by a name that is no option's kind, with no default."""
    t = p.type
    return (
        isinstance(t, A.NamedType)
        and not t.args
        and not t.options
        and t.name.text not in OPTION_WORDS
        and p.default is None
    )


def model_sig(item: A.ModelDecl | A.TraitDecl) -> ModelSig:
    """The dims and options of a model's header (`model Conv2d[Ci, Co, K,
    stride = 1, bias: Bool = True]`), or a trait's. A parameter with a type is
    an option, or a model parameter (`B: ResBlock`); one that is not well
    formed (checker/model_decl.py reports it) still counts, an option with the
    default True and a dim without a default, so that types written against
    it are read as intended."""
    dims: list[str] = []
    options: list[tuple[str, bool | float | str]] = []
    defaults: list[tuple[str, DimDefault]] = []
    models: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()
    for p in item.params:
        if p.name.text in seen:
            continue
        seen.add(p.name.text)
        if is_model_param(p):
            assert isinstance(p.type, A.NamedType)
            models.append((p.name.text, (p.type.name.text,)))
        elif p.type is None:
            default = dim_default(p.default, dims, bool_options(item)) if p.default is not None else None
            if default is not None:
                defaults.append((p.name.text, default))
            dims.append(p.name.text)
        else:
            options.append((p.name.text, option_default(p)))
    return ModelSig(tuple(dims), tuple(options), tuple(defaults), model_divisions(item, tuple(dims)), tuple(models))


@functools.lru_cache(maxsize=4096)  # items are kept across edits: one walk per version of a model
def model_divisions(item: A.ModelDecl, dims: tuple[str, ...]) -> Divisions:
    """The divisions of the model's own dims written anywhere in it, once
    each: `(Ci/groups)` in a conv's weight, `(E/NH)` in attention's heads.
    torch refuses a layer whose sizes do not divide there (in_channels not
    divisible by groups, embed_dim by num_heads), so an instance whose dims
    leave a remainder is an error where it is written (typectx.model). A
    division that also involves other dims (a conv's output size, floored
    as torch floors it) is not one of them."""
    if not dims:  # a model that takes no dims divides none of its own
        return ()
    found: dict[tuple[DX.Poly, DX.Poly], str] = {}
    for node in A.walk(item):
        if isinstance(node, A.DimBinary) and node.op == "/":
            num, den = _own_poly(node.left, dims), _own_poly(node.right, dims)
            if (
                num is None
                or den is None
                or DX.value(den) == 0
                or DX.value(num) is not None
                and DX.value(den) is not None
            ):
                continue
            found.setdefault((num, den), A.written_dim(node))  # as written: (Ci/(M*G)), not (Ci/G*M)
    return tuple((text, num, den) for (num, den), text in found.items())


def _own_poly(d: A.Dim, dims: tuple[str, ...]) -> DX.Poly | None:
    """`d` in the model's own dims and numbers; None when another name is in it."""
    if isinstance(d, A.DimInt):
        return DX.const(d.value)
    if isinstance(d, A.DimName):
        return DX.var(d.name) if d.name in dims else None
    left, right = _own_poly(d.left, dims), _own_poly(d.right, dims)
    if left is None or right is None:
        return None
    if d.op == "+":
        return DX.add(left, right)
    if d.op == "-":
        return DX.sub(left, right)
    if d.op == "*":
        return DX.mul(left, right)
    return DX.div(left, right) if d.op == "/" else None


def option_default(p: A.ModelParam) -> bool | float | str:
    """The default of an option (`bias: Bool = True`, `eps: Float = 1e-5`,
    `dtype: DType = f32`): a Bool's a bool, a Float's a float, a DType's
    "f32"; True or 0.0 when it is not well formed."""
    kind = p.type.name.text if isinstance(p.type, A.NamedType) else None
    if kind == "Float":
        number = float_literal(p.default) if p.default is not None else None
        return number if number is not None else 0.0
    if kind == "DType":
        return "f32"  # the only default a DType option has (torch's default dtype)
    return p.default.value if isinstance(p.default, A.BoolLit) else True


def float_literal(e: A.Expr) -> float | None:
    """The value of a number literal, signed or not (`1e-5`, `-0.5`, `2`)."""
    sign = 1.0
    while isinstance(e, A.Unary) and e.op in ("-", "+"):
        sign = -sign if e.op == "-" else sign
        e = e.operand
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return sign * float(e.value)
    return None


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


def kind_word(kind: str) -> str:
    """'a dim', 'a model', 'a function', 'an extern function' (a broken item: the same)."""
    if kind.startswith("broken-"):
        kind = kind[len("broken-") :]
    return {
        "dim": "a dim",
        "const": "a constant",
        "alias": "a type alias",
        "type": "a type alias",
        "model": "a model",
        "trait": "a trait",
        "fn": "a function",
        "extern": "an extern function",
    }.get(kind, kind)
