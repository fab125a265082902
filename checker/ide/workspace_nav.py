"""Navigation across the files of a workspace: definition, references,
rename and workspace symbols over a `checker.workspace.Workspace`.

Each file's own index (symbols.py) names an imported definition by its
qualified name (`layers.forward`), whatever the file wrote (`fwd`,
`layers.forward`, `forward`). Here every occurrence gets one identity for
the whole workspace, a `Symbol`: its kind, the file that defines it and its
plain name there (and its model, for a member), so `Mlp` in layers.qv,
`layers.Mlp` in a signature of train.qv and `Net` of `from layers import Mlp
as Net` are one symbol. Import items add their own occurrences: the module
name (a `module` symbol), each imported name, and each alias (an `alias`
symbol, local to its file).

An occurrence knows the whole name as written (`span`: `layers.Mlp`) and its
last part (`name_span`: `Mlp`, with its `text`): a rename edits only name
spans whose text is the old name, so an alias (`fwd`) stays, `layers.forward`
becomes `layers.step`, and `from layers import forward as fwd` becomes `from
layers import step as fwd`. Renaming at an alias renames the alias, in its
file only.

Pure: the workspace's host does the reading. Results carry the line index of
the text they are offsets into, for the server to convert.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .. import ast as A
from ..analysis import Analysis
from ..declarations import RESERVED_FIELDS, Names
from ..lexical import HARD_KEYWORDS
from ..source import LineIndex
from ..workspace import Workspace
from .navigation import _target, document_symbols
from .navigation import definition as file_definition
from .results import DocumentSymbol, NavTarget
from .symbols import Sym, _abs, _index

GLOBAL_KINDS = ("dim", "const", "model", "fn")

# Where the queries get a file's analysis: `Workspace.analyze` by default; a
# server passes the analyses it already has, so that a query never waits
# for an analysis in progress.
Analyses = Callable[[str], "Analysis | None"]
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Symbol:
    """One thing a name can mean, the same in every file. `kind`: dim, model,
    fn (externs too, and methods: `Linear.forward`), member, var, generic,
    option (those three local to a function or a model of `path`), alias (a
    `from` import's `as` name, local to `path`), module (its file is `path`,
    `name` its qualified name), builtin (built-in functions and model
    methods)."""

    kind: str
    path: str
    name: str
    owner: str | None = None  # a member's model; a local's function


@dataclass(frozen=True, slots=True)
class Occurrence:
    path: str
    span: A.Span  # the name as written: `layers.Mlp`
    name_span: A.Span  # its last part, `Mlp`: what a rename edits
    text: str  # the text of name_span
    symbol: Symbol
    is_def: bool
    alias_of: Symbol | None = None  # for an alias: what it names


@dataclass(frozen=True, slots=True)
class FileSpan:
    path: str
    span: A.Span
    lines: LineIndex  # of the text `span` is in
    is_def: bool = False


@dataclass(frozen=True, slots=True)
class FileTarget:
    path: str
    target: NavTarget
    lines: LineIndex


@dataclass(frozen=True, slots=True)
class WorkspaceSymbol:
    path: str
    container: str  # the module's qualified name
    symbol: DocumentSymbol
    lines: LineIndex


class RenameError(Exception):
    """A rename that cannot be done; the message says why."""


# ---------------------------------------------------------------- occurrences


def occurrences(ws: Workspace, path: str, analysis: Analysis) -> list[Occurrence]:
    """Every name occurrence of one file's analysis, in text order (cached
    with the analysis)."""
    key = ("workspace_nav", path)
    hit = analysis.ide_cache.get(key)
    if hit is not None and hit[0] is analysis:
        return hit[1]
    out = _collect(ws, path, analysis)
    out.sort(key=lambda o: (o.span.start, o.span.end))
    analysis.ide_cache[key] = (analysis, out)
    return out


def _collect(ws: Workspace, path: str, analysis: Analysis) -> list[Occurrence]:
    names = analysis.globals.names
    text = analysis.text
    imports = ws.imports_of(path)
    out: list[Occurrence] = []

    def add(span: A.Span, sym: Symbol, is_def: bool, alias_of: Symbol | None = None) -> None:
        written = text[span.start : span.end]
        last = written.rsplit(".", 1)[-1]
        name_span = A.Span(span.end - len(last), span.end)
        out.append(Occurrence(path, span, name_span, last, sym, is_def, alias_of))

    for slot in analysis.parsed.slots:
        item = slot.item
        if item is None:
            continue
        if isinstance(item, (A.ImportDecl, A.FromImport)):
            spelling = item.module.text
            target = imports.get(spelling)
            if target is not None:
                add(_abs(slot, item.module.span), Symbol("module", target, ws.qualified_name(target)), False)
            if isinstance(item, A.FromImport):
                ex = next((m for m in analysis.modules if m.path == target), None) if target is not None else None
                for imp in item.names:
                    n = imp.name.text
                    if ex is None or n not in ex.own:
                        continue
                    sym = Symbol(_global_kind(ex.own[n]), ex.path, n)
                    add(_abs(slot, imp.name.span), sym, False)
                    if imp.alias is not None:
                        add(_abs(slot, imp.alias.span), Symbol("alias", path, imp.alias.text), True, sym)
            continue
        for o in _index(analysis, item).occs:
            sym = _symbol(path, names, o.sym)
            if sym is not None:
                add(_abs(slot, o.span), sym, o.is_def)
        for decl, _ in analysis.functions(item):
            body = analysis.bodies.get(decl)
            for node, ref in body.refs.items() if body is not None else ():
                if ref.kind == "module" and ref.name in imports and imports[ref.name] is not None:
                    target = imports[ref.name]
                    assert target is not None
                    add(_abs(slot, node.span), Symbol("module", target, ws.qualified_name(target)), False)
    return out


def _global_kind(kind: str) -> str:
    return "fn" if kind == "extern" else kind


def _global(path: str, names: Names, kind: str, name: str) -> Symbol | None:
    if "." not in name and names.first.get(name) is not None:
        return Symbol(kind, path, name)
    q = names.canonical(name)
    origin = names.origin.get(q)
    if origin is None:
        if kind == "fn" and "." in q:  # a method, `Linear.forward`: the file of its model
            model = _global(path, names, "model", q.rpartition(".")[0])
            if model is not None:
                return Symbol(kind, model.path, f"{model.name}.{q.rpartition('.')[2]}")
        return None
    return Symbol(kind, origin, q.rsplit(".", 1)[-1])


def _symbol(path: str, names: Names, sym: Sym) -> Symbol | None:
    if sym.kind in GLOBAL_KINDS:
        return _global(path, names, sym.kind, sym.name)
    if sym.kind == "member":
        model = _global(path, names, "model", sym.scope or "")
        return Symbol("member", model.path, sym.name, model.name) if model is not None else None
    if sym.kind in ("var", "generic", "option"):
        return Symbol(sym.kind, path, sym.name, sym.scope)
    if sym.kind in ("builtin", "method"):
        return Symbol("builtin", "", sym.name, sym.scope)
    return None


def occurrence_at(ws: Workspace, path: str, analysis: Analysis, offset: int) -> Occurrence | None:
    """The occurrence under the cursor: on a character of the name, or right
    after its last character."""
    occs = occurrences(ws, path, analysis)
    for probe in (offset, offset - 1):
        for o in occs:
            if o.span.start <= probe < o.span.end:
                return o
            if o.span.start > probe:
                break
    return None


# ---------------------------------------------------------------- definition


def definition(
    ws: Workspace,
    path: str,
    offset: int,
    cancelled: Callable[[], bool] | None = None,
    analyses: Analyses | None = None,
) -> list[FileTarget]:
    """Where the name under the cursor in `path` is defined, in whichever
    file that is (a module name goes to the start of its file)."""
    get = _getter(ws, analyses, cancelled)
    analysis = get(path)
    if analysis is None:
        return []
    occ = occurrence_at(ws, path, analysis, offset)
    if occ is None:
        return []
    sym = occ.alias_of or occ.symbol
    if sym.kind in ("var", "generic", "option"):
        return [FileTarget(path, t, analysis.lines) for t in file_definition(analysis, offset)]
    found = locate(ws, sym, get)
    return [found] if found is not None else []


def locate(ws: Workspace, sym: Symbol, analyses: Analyses | None = None) -> FileTarget | None:
    """The declaration of a dim, model, fn, member or module."""
    if sym.kind not in (*GLOBAL_KINDS, "member", "module"):
        return None
    analysis = _getter(ws, analyses, None)(sym.path)
    if analysis is None:
        return None
    if sym.kind == "module":
        return FileTarget(sym.path, NavTarget(A.Span(0, 0), A.Span(0, 0)), analysis.lines)
    if sym.kind == "member":
        t = _target(analysis, Sym("member", sym.name, sym.owner))
    else:
        t = _target(analysis, Sym(sym.kind, sym.name))
    return FileTarget(sym.path, t, analysis.lines) if t is not None else None


# ---------------------------------------------------------------- references


def _getter(ws: Workspace, analyses: Analyses | None, cancelled: Callable[[], bool] | None) -> Analyses:
    if analyses is not None:
        return analyses
    return lambda p: ws.analyze(p, cancelled)


def _files_mentioning(ws: Workspace, sym: Symbol, files: Iterable[str], get: Analyses) -> list[str]:
    """The files that can mention `sym`: its own and every file importing it,
    directly or through other modules (the types of a module's signatures
    can carry a model of a module it imports). Every file is analysed first,
    so the import graph is complete."""
    if sym.kind in ("var", "generic", "option", "alias"):
        return [sym.path]
    for f in files:
        get(f)
    return [sym.path, *sorted(ws.dependents(sym.path))]


def _all_occurrences(
    ws: Workspace, sym: Symbol, files: Iterable[str], get: Analyses
) -> list[tuple[Occurrence, Analysis]]:
    out = []
    for f in _files_mentioning(ws, sym, files, get):
        analysis = get(f)
        if analysis is None:
            continue
        for o in occurrences(ws, f, analysis):
            if o.symbol == sym:
                out.append((o, analysis))
    return out


def references(
    ws: Workspace,
    path: str,
    offset: int,
    files: Iterable[str],
    include_declaration: bool = True,
    cancelled: Callable[[], bool] | None = None,
    analyses: Analyses | None = None,
) -> list[FileSpan]:
    """Every occurrence of the symbol under the cursor in `path`, in every
    file of `files` (the workspace's) that can mention it."""
    get = _getter(ws, analyses, cancelled)
    analysis = get(path)
    if analysis is None:
        return []
    occ = occurrence_at(ws, path, analysis, offset)
    if occ is None or occ.symbol.kind == "builtin":
        return []
    sym = occ.alias_of or occ.symbol
    return [
        FileSpan(o.path, o.span, a.lines, o.is_def)
        for o, a in _all_occurrences(ws, sym, files, get)
        if include_declaration or not o.is_def
    ]


# ---------------------------------------------------------------- rename


def prepare_rename(
    ws: Workspace, path: str, offset: int, analyses: Analyses | None = None
) -> tuple[A.Span, str] | None:
    """The span a rename at the cursor would edit there, and the current
    name; None when the cursor is on no name; RenameError when the name
    cannot be renamed (a module, a built-in)."""
    found = _renamed(ws, path, offset, _getter(ws, analyses, None))
    return None if found is None else (found[1].name_span, found[1].text)


def rename_definition(
    ws: Workspace, path: str, offset: int, analyses: Analyses | None = None
) -> tuple[str, str] | None:
    """Where the name a rename at the cursor would rename is defined: its
    file (`path` itself for an alias, or a name used through one, whose
    rename stays in `path`) and the name as written from outside
    (`nn.Linear`, `layers.Mlp.w1`), so that an editor can refuse to edit a
    file it does not own; None when the cursor is on no name. RenameError
    as prepare_rename."""
    found = _renamed(ws, path, offset, _getter(ws, analyses, None))
    if found is None:
        return None
    occ = found[1]
    sym = occ.symbol
    if _is_alias_rename(occ):
        return path, occ.text
    if sym.kind in ("member", "var", "generic") and sym.owner:
        name = f"{sym.owner}.{sym.name}"
    else:
        name = sym.name
    return sym.path, f"{ws.qualified_name(sym.path)}.{name}"


def _is_alias_rename(occ: Occurrence) -> bool:
    """A rename at an alias, or at a name used through one: it renames the alias, in its file only."""
    return occ.symbol.kind == "alias" or (occ.symbol.kind in GLOBAL_KINDS and occ.text != occ.symbol.name)


def _renamed(ws: Workspace, path: str, offset: int, get) -> tuple[Analysis, Occurrence] | None:
    """The analysis of `path` and the occurrence a rename at `offset` is of;
    RenameError when it cannot be renamed."""
    analysis = get(path)
    if analysis is None:
        return None
    occ = occurrence_at(ws, path, analysis, offset)
    if occ is None:
        return None
    _refuse(occ)
    return analysis, occ


def _refuse(occ: Occurrence) -> None:
    if occ.symbol.kind == "module":
        raise RenameError(f"cannot rename the module '{occ.symbol.name}' here: rename its file instead")
    if occ.symbol.kind == "builtin":
        raise RenameError(f"cannot rename '{occ.text}': it is built in")
    if occ.symbol.kind == "fn" and "." in occ.symbol.name:
        raise RenameError(f"cannot rename the method '{occ.text}' of {occ.symbol.name.rpartition('.')[0]}")
    if occ.symbol.kind not in (*GLOBAL_KINDS, "member", "var", "generic", "alias"):
        raise RenameError(f"cannot rename '{occ.text}'")


def rename(
    ws: Workspace,
    path: str,
    offset: int,
    new_name: str,
    files: Iterable[str],
    cancelled: Callable[[], bool] | None = None,
    analyses: Analyses | None = None,
) -> dict[str, list[tuple[A.Span, LineIndex]]] | None:
    """The spans to replace by `new_name`, by file, for a rename at the
    cursor (each with the line index of its text); None when the cursor is
    on no name. Raises RenameError for a name that cannot be renamed or a
    new name that is not one."""
    get = _getter(ws, analyses, cancelled)
    found = _renamed(ws, path, offset, get)
    if found is None:
        return None
    analysis, occ = found
    if not _IDENT.match(new_name) or new_name in HARD_KEYWORDS:
        raise RenameError(f"'{new_name}' is not a name")
    if _is_alias_rename(occ):
        if new_name != occ.text and analysis.globals.names.kinds.get(new_name) is not None:
            raise RenameError(f"'{new_name}' is already a name in {ws.qualified_name(path)}")
        return _rename_alias(ws, path, analysis, occ)
    sym = occ.symbol
    if sym.kind == "member" and new_name in RESERVED_FIELDS:
        raise RenameError(f"'{new_name}' is reserved for models")
    found = [(o, a) for o, a in _all_occurrences(ws, sym, files, get) if o.text == sym.name]
    if new_name.startswith("_") and sym.kind in GLOBAL_KINDS and any(o.path != sym.path for o, _ in found):
        raise RenameError(f"'{new_name}' would be private to its module, and other files use '{sym.name}'")
    if new_name != sym.name:
        _clash(ws, sym, new_name, found, get)
    return _by_file((o.path, o.name_span, a.lines) for o, a in found)


def _clash(ws: Workspace, sym: Symbol, new: str, found: list[tuple[Occurrence, Analysis]], get: Analyses) -> None:
    """RenameError when `new` already means something where the renamed
    name is written: in the defining file, in a file that imports the name
    itself (`from layers import forward`), among a model's fields, among a
    function's locals."""
    if sym.kind in ("var", "generic"):
        analysis = get(sym.path)
        others = occurrences(ws, sym.path, analysis) if analysis is not None else []
        if any(o.symbol.kind in ("var", "generic") and o.symbol.owner == sym.owner and o.text == new for o in others):
            raise RenameError(f"'{new}' is already a name in {sym.owner}")
        return
    defining = get(sym.path)
    if defining is None:
        return
    if sym.kind == "member":
        model = defining.globals.models.get(sym.owner or "")
        if model is not None and model.field(new) is not None:
            raise RenameError(f"model {sym.owner} already has a field '{new}'")
        return
    if defining.globals.names.kinds.get(new) is not None:
        raise RenameError(f"'{new}' is already a name in {ws.qualified_name(sym.path)}")
    for o, a in found:
        if o.path != sym.path and o.span == o.name_span and a.globals.names.kinds.get(new) is not None:
            raise RenameError(f"'{new}' is already a name in {ws.qualified_name(o.path)}")


def _rename_alias(
    ws: Workspace, path: str, analysis: Analysis, occ: Occurrence
) -> dict[str, list[tuple[A.Span, LineIndex]]]:
    occs = occurrences(ws, path, analysis)
    if occ.symbol.kind == "alias":
        alias, target = occ.symbol.name, occ.alias_of
    else:
        alias, target = occ.text, occ.symbol
    spans = [
        (path, o.name_span, analysis.lines)
        for o in occs
        if o.text == alias
        and o.span == o.name_span
        and ((o.symbol.kind == "alias" and o.alias_of == target) or o.symbol == target)
    ]
    return _by_file(spans)


def _by_file(spans: Iterable[tuple[str, A.Span, LineIndex]]) -> dict[str, list[tuple[A.Span, LineIndex]]]:
    out: dict[str, list[tuple[A.Span, LineIndex]]] = {}
    for p, span, lines in spans:
        edits = out.setdefault(p, [])
        if all(s != span for s, _ in edits):
            edits.append((span, lines))
    for edits in out.values():
        edits.sort(key=lambda e: e[0].start)
    return out


# ---------------------------------------------------------------- symbols


def workspace_symbols(
    ws: Workspace,
    files: Iterable[str],
    query: str,
    cancelled: Callable[[], bool] | None = None,
    analyses: Analyses | None = None,
) -> list[WorkspaceSymbol]:
    """The top-level dims, models and functions of every file whose name
    matches `query` (its characters in order, any case; all for "")."""
    get = _getter(ws, analyses, cancelled)
    out = []
    q = query.lower()
    for f in files:
        analysis = get(f)
        if analysis is None:
            continue
        container = ws.qualified_name(f)
        for s in document_symbols(analysis):
            if _matches(q, s.name.lower()):
                out.append(WorkspaceSymbol(f, container, s, analysis.lines))
    return out


def _matches(query: str, name: str) -> bool:
    i = 0
    for ch in name:
        if i < len(query) and ch == query[i]:
            i += 1
    return i == len(query)
