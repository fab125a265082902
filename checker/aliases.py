"""Type aliases: `type Gcn = GCN[FIN, H, C, use_bias=False, dropout_p=0.5]`
and, taking dims, `type Lin[i, o] = Linear[i, o, bias=False]`.

An alias is resolved once, when the names are collected (`resolve_aliases`,
called by modules.collect_names): its type is read as a written type is,
the dims it takes being generic dims (`DimVar`), and kept in
`Names.alias_sigs` (an `AliasSig`), which importers receive too
(`lib.Gcn`). A use (`m: Gcn`, `Grad[Gcn]`, `[L] Gcn`, `Lin[D, H]`) is that
type with the dims given in place of the alias's own (typectx.py); so a
message names the type an alias stands for, never the alias. An alias whose
declaration has an error is reported there once (`declare_alias`) and its
uses stay silent, as those of a broken item do.
"""

from __future__ import annotations

from . import ast as A
from . import catalog as C
from . import types as T
from .infos import Declared
from .names import AliasSig, Names
from .typectx import TypeContext


def resolve_aliases(items: list[A.Item], names: Names) -> None:
    """Each of the file's own aliases (the first item of its name) into
    `names.alias_sigs`, those it names first; the aliases along a cycle
    stand for no type."""
    own = {
        item.name.text: item
        for item in items
        if isinstance(item, A.TypeAlias) and names.first.get(item.name.text) is item
    }
    state: dict[str, str] = {}  # "busy" while its own aliases are resolved, then "done"

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "busy":
            cycle = tuple(path[path.index(name) :])
            # read from the alias the file declares first, which reports it: part
            # of what each name on it means, so moving one re-declares them all
            order = list(own)
            cycle = _from(cycle, min(cycle, key=order.index))
            for n in cycle:
                names.alias_sigs[n] = AliasSig(tuple(p.text for p in own[n].params), T.UNKNOWN, True, cycle)
                state[n] = "done"
            return
        state[name] = "busy"
        item = own[name]
        for other in _named_aliases(item.target, own):
            visit(other, [*path, name])
            if state.get(name) == "done":  # on a cycle found through `other`
                return
        state[name] = "done"
        ctx = _context(item, names)
        t = ctx.resolve(item.target)
        broken = bool(ctx.diagnostics) or T.is_unknown(t) or _params_twice(item) is not None
        names.alias_sigs[name] = AliasSig(tuple(p.text for p in item.params), T.UNKNOWN if broken else t, broken)

    for name in own:
        visit(name, [])


def declare_alias(item: A.TypeAlias, names: Names) -> Declared:
    """An alias's diagnostics: the cycle it is defined through (at the first
    alias of the cycle the file declares), or the problems of its type."""
    # (a second alias of the name, E0104, is declared as any duplicate item is)
    sig = names.alias_sigs.get(item.name.text)
    own = frozenset({item.name.text})  # whether it is on a cycle is what its name means
    if sig is not None and sig.cycle:
        shown = " -> ".join([*sig.cycle, sig.cycle[0]])
        first = sig.cycle[0]  # (the cycle is read from the alias declared first)
        diags = [C.E0926.at(item.name.span, name=item.name.text, cycle=shown)] if first == item.name.text else []
        return Declared(None, tuple(diags), frozenset(sig.cycle) | own)
    twice = _params_twice(item)
    if twice is not None:
        problem = C.E0925.say("param_twice", dim=twice.text)
        return Declared(None, (C.E0925.at(twice.span, name=item.name.text, problem=problem),), own)
    ctx = _context(item, names)
    ctx.resolve(item.target)
    return Declared(None, tuple(ctx.diagnostics), frozenset(ctx.lookups) | own, tuple(ctx.obligations))


def _context(item: A.TypeAlias, names: Names) -> TypeContext:
    """How an alias's type is read: its own dims are generic dims, any other
    name must be a dim, a constant or a type the file can name."""
    return TypeContext(names, "alias", [p.text for p in item.params])


def _params_twice(item: A.TypeAlias) -> A.Ident | None:
    seen: set[str] = set()
    for p in item.params:
        if p.text in seen:
            return p
        seen.add(p.text)
    return None


def _named_aliases(t: A.Node, own: dict[str, A.TypeAlias]) -> list[str]:
    """The file's aliases a type names (`Gcn` in `[L] Gcn`, `Grad[Gcn]`)."""
    out = []
    for node in A.walk(t):
        if isinstance(node, (A.NamedType, A.ElemType)) and node.name.text in own:
            out.append(node.name.text)
    return out


def _from(cycle: tuple[str, ...], name: str) -> tuple[str, ...]:
    """The cycle read from `name` on."""
    i = cycle.index(name)
    return cycle[i:] + cycle[:i]
