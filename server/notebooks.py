"""Notebooks: the Quiver cells of a notebook checked as one document.

The client syncs notebooks with `notebookDocument/didOpen|didChange|didClose`
(the `notebookDocumentSync` capability, server/capabilities.py). The cells
that hold Quiver — language `quiver`, or a Python cell whose first line is
`%%quiver` (the IPython cell magic of driver/notebook.py) — are concatenated
in notebook order into one virtual document, which the server analyses as
any open document (`Documents`; its path is the notebook's path plus `.qv`,
so `import layers` finds `layers.qv` next to the notebook). A `%%quiver`
first line is blanked, so every position keeps its line and column: cell
line k is line `first + k` of the virtual document.

Both directions are plain line shifts, done here and nowhere else:
published diagnostics are split by cell (`Notebooks.publish`, called from
QuiverServer._publish) and every `textDocument/*` request about a cell is
translated into one about the virtual document and its answer back (`wrap`,
applied by create_server): positions and ranges move by the cell's first
line, locations in the virtual document become locations in their cells,
ranges in other cells are dropped. No language logic: the analysis is the
one of an ordinary document.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types as lsp

from .convert import Lines, apply_change
from .registry import feature, notification
from .workspace import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from .quiver_server import QuiverServer

MAGIC = "%%quiver"
VIRTUAL_SCHEME = "quiver-notebook"


def is_quiver_cell(language_id: str, text: str) -> bool:
    if language_id == "quiver":
        return True
    return language_id == "python" and text.lstrip(" \t").startswith(MAGIC)


def cell_source(text: str) -> str:
    """The cell's text as the checker sees it: a `%%quiver` first line blank."""
    first, nl, rest = text.partition("\n")
    if first.strip().startswith(MAGIC):
        return nl + rest
    return text


@dataclass
class Cell:
    uri: str
    language_id: str
    lines: Lines
    version: int = 0


@dataclass
class Placed:
    """A Quiver cell in the virtual document: lines [first, first + count)."""

    uri: str
    first: int
    lines: list[str]

    @property
    def count(self) -> int:
        return len(self.lines)


@dataclass
class Notebook:
    uri: str
    order: list[str] = field(default_factory=list)  # cell document URIs, in notebook order
    cells: dict[str, Cell] = field(default_factory=dict)
    placed: list[Placed] = field(default_factory=list)
    virtual_uri: str = ""
    version: int = 0
    published: set[str] = field(default_factory=set)  # cells given diagnostics last time

    def text(self) -> tuple[str, list[Placed]]:
        parts, placed, line = [], [], 0
        for uri in self.order:
            cell = self.cells.get(uri)
            if cell is None or not is_quiver_cell(cell.language_id, cell.lines.text):
                continue
            src = cell_source(cell.lines.text)
            lines = src.split("\n")
            placed.append(Placed(uri, line, lines))
            parts.append(src)
            line += len(lines)
        return "\n".join(parts), placed

    def at_line(self, line: int) -> Placed | None:
        for p in self.placed:
            if p.first <= line < p.first + p.count:
                return p
        return None


class Notebooks:
    """The open notebooks of a server, by notebook, cell and virtual URI."""

    def __init__(self, ls: QuiverServer) -> None:
        self.ls = ls
        self.by_uri: dict[str, Notebook] = {}
        self.by_cell: dict[str, Notebook] = {}
        self.by_virtual: dict[str, Notebook] = {}

    # ------------------------------------------------------------ sync

    def open(self, params: lsp.DidOpenNotebookDocumentParams) -> None:
        nbd = params.notebook_document
        nb = Notebook(nbd.uri, [c.document for c in nbd.cells])
        path = uri_to_path(nbd.uri)
        nb.virtual_uri = path_to_uri(path + ".qv") if path is not None else f"{VIRTUAL_SCHEME}:{nbd.uri}"
        for item in params.cell_text_documents:
            nb.cells[item.uri] = Cell(item.uri, item.language_id, Lines(item.text), item.version)
        self.by_uri[nb.uri] = nb
        self.by_virtual[nb.virtual_uri] = nb
        self._sync(nb, opened=True)

    def change(self, params: lsp.DidChangeNotebookDocumentParams) -> None:
        nb = self.by_uri.get(params.notebook_document.uri)
        if nb is None:
            return
        cells = params.change.cells
        if cells is not None:
            structure = cells.structure
            if structure is not None:
                arr = structure.array
                nb.order[arr.start : arr.start + arr.delete_count] = [c.document for c in arr.cells or ()]
                for ident in structure.did_close or ():
                    nb.cells.pop(ident.uri, None)
                for item in structure.did_open or ():
                    nb.cells[item.uri] = Cell(item.uri, item.language_id, Lines(item.text), item.version)
            for content in cells.text_content or ():
                cell = nb.cells.get(content.document.uri)
                if cell is None:
                    continue
                lines = cell.lines
                for ch in content.changes:
                    lines = apply_change(lines, self.ls.codec, ch)
                cell.lines = lines
                cell.version = content.document.version
        self._sync(nb)

    def close(self, params: lsp.DidCloseNotebookDocumentParams) -> None:
        nb = self.by_uri.pop(params.notebook_document.uri, None)
        if nb is None:
            return
        self.by_virtual.pop(nb.virtual_uri, None)
        for uri in nb.order:
            self.by_cell.pop(uri, None)
        self.ls.docs.close(nb.virtual_uri)
        for uri in sorted(nb.published):
            self.ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def _sync(self, nb: Notebook, opened: bool = False) -> None:
        text, placed = nb.text()
        nb.placed = placed
        for uri in list(self.by_cell):
            if self.by_cell[uri] is nb:
                del self.by_cell[uri]
        for p in placed:
            self.by_cell[p.uri] = nb
        nb.version += 1
        if opened or self.ls.docs.get(nb.virtual_uri) is None:
            self.ls.docs.open(nb.virtual_uri, text, nb.version, uri_to_path(nb.virtual_uri))
        else:
            self.ls.docs.change(
                nb.virtual_uri, [lsp.TextDocumentContentChangeWholeDocument(text=text)], nb.version, self.ls.codec
            )

    # ------------------------------------------------------------ diagnostics

    def publish(self, uri: str, diagnostics: list[lsp.Diagnostic]) -> bool:
        """The virtual document's diagnostics, published on their cells
        (an empty list for each Quiver cell without any, and for a cell that
        had some and is no longer Quiver); False for any other document."""
        nb = self.by_virtual.get(uri)
        if nb is None:
            return False
        per: dict[str, list] = {p.uri: [] for p in nb.placed}
        for d in diagnostics:
            p = nb.at_line(d.range.start.line)
            if p is None:
                continue
            per[p.uri].append(_walk(d, lambda o, p=p: _back(o, nb, p)))
        for gone in nb.published - set(per):
            per[gone] = []
        nb.published = {u for u, items in per.items() if items}
        for cell_uri, items in per.items():
            cell = nb.cells.get(cell_uri)
            version = cell.version if cell is not None else None
            self.ls.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(
                    uri=cell_uri, version=version, diagnostics=[i for i in items if i is not _DROP]
                )
            )
        return True


def notebooks(ls: QuiverServer) -> Notebooks:
    nb = getattr(ls, "_notebooks", None)
    if nb is None:
        nb = ls._notebooks = Notebooks(ls)  # type: ignore[attr-defined]
    return nb


# ====================================================================== handlers


@feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
@notification
def notebook_did_open(ls: QuiverServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    notebooks(ls).open(params)


@feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
@notification
def notebook_did_change(ls: QuiverServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    notebooks(ls).change(params)


@feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
@notification
def notebook_did_close(ls: QuiverServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    notebooks(ls).close(params)


# ====================================================================== requests about a cell

_DROP = object()  # a range outside the cell asked about: left out of the answer
_SKIP = {
    lsp.TEXT_DOCUMENT_DID_OPEN,
    lsp.TEXT_DOCUMENT_DID_CHANGE,
    lsp.TEXT_DOCUMENT_DID_CLOSE,
}


def wrap(method: str, fn):
    """The handler of `method`, translating a request about a notebook cell
    into one about its notebook's virtual document (create_server applies it
    to every handler; only `textDocument/*` requests are changed)."""
    if not method.startswith("textDocument/") or method in _SKIP or not inspect.iscoroutinefunction(fn):
        if method == lsp.WORKSPACE_DIAGNOSTIC and inspect.iscoroutinefunction(fn):
            return _without_virtual(fn)
        return fn

    @functools.wraps(fn)
    async def handler(ls: QuiverServer, params):
        uri = getattr(getattr(params, "text_document", None), "uri", None)
        nb = notebooks(ls).by_cell.get(uri) if isinstance(uri, str) else None
        if nb is None:
            return await fn(ls, params)
        placed = next((p for p in nb.placed if p.uri == uri), None)
        if placed is None:
            return None
        result = await fn(ls, _walk(params, lambda o: _forward(o, nb, placed)))
        if isinstance(result, lsp.SemanticTokens):
            return _tokens(result, placed)
        out = _walk(result, lambda o: _back(o, nb, placed))
        return None if out is _DROP else out

    return handler


def _without_virtual(fn):
    @functools.wraps(fn)
    async def handler(ls: QuiverServer, params):
        report = await fn(ls, params)
        virtual = notebooks(ls).by_virtual
        if isinstance(report, lsp.WorkspaceDiagnosticReport):
            report.items = [i for i in report.items if i.uri not in virtual]
        return report

    return handler


_GO = object()


def _walk(obj: Any, f) -> Any:
    """`obj` with `f` applied to every part, outermost first: `f` gives the
    replacement of a part (or _DROP), or _GO to look inside it."""
    r = f(obj)
    if r is not _GO:
        return r
    if isinstance(obj, list):
        out = [_walk(x, f) for x in obj]
        return [x for x in out if x is not _DROP]
    if isinstance(obj, dict):
        return {k: _walk(v, f) for k, v in obj.items()}
    if attrs.has(type(obj)):
        changes = {}
        for a in attrs.fields(type(obj)):
            v = getattr(obj, a.name)
            nv = _walk(v, f)
            if nv is _DROP:
                if a.default is attrs.NOTHING:
                    return _DROP
                nv = None
            if nv is not v:
                changes[a.name] = nv
        return attrs.evolve(obj, **changes) if changes else obj
    return obj


def _forward(o: Any, nb: Notebook, placed: Placed) -> Any:
    if isinstance(o, lsp.Position):
        return lsp.Position(o.line + placed.first, o.character)
    if isinstance(o, (lsp.TextDocumentIdentifier, lsp.VersionedTextDocumentIdentifier)) and o.uri == placed.uri:
        return attrs.evolve(o, uri=nb.virtual_uri)
    if isinstance(o, (str, int, float, bool)) or o is None:
        return o
    return _GO


def _range_in(r: lsp.Range, p: Placed) -> lsp.Range | object:
    """A range of the virtual document as a range of cell `p`; _DROP when it
    starts outside the cell (an end past it is cut at the cell's end)."""
    start = r.start.line - p.first
    if not 0 <= start < p.count:
        return _DROP
    end_line = r.end.line - p.first
    end = lsp.Position(end_line, r.end.character)
    if end_line >= p.count:
        end = lsp.Position(p.count - 1, len(p.lines[-1]))
    return lsp.Range(lsp.Position(start, r.start.character), end)


def _located(uri: str, r: lsp.Range, nb: Notebook) -> tuple[str, lsp.Range] | None:
    if uri != nb.virtual_uri:
        return uri, r
    p = nb.at_line(r.start.line)
    if p is None:
        return None
    mapped = _range_in(r, p)
    return None if mapped is _DROP else (p.uri, mapped)  # type: ignore[return-value]


def _back(o: Any, nb: Notebook, placed: Placed) -> Any:
    if isinstance(o, (lsp.CodeLens, lsp.CodeAction)) and _runs_virtual(o.command, nb):
        return _DROP  # Run File on the notebook's virtual document: no file to run
    if isinstance(o, lsp.Location):
        got = _located(o.uri, o.range, nb)
        return _DROP if got is None else lsp.Location(uri=got[0], range=got[1])
    if isinstance(o, lsp.LocationLink):
        target = _located(o.target_uri, o.target_range, nb)
        sel = _located(o.target_uri, o.target_selection_range, nb)
        if target is None or sel is None:
            return _DROP
        origin = None
        if o.origin_selection_range is not None:
            mapped = _range_in(o.origin_selection_range, placed)
            origin = mapped if isinstance(mapped, lsp.Range) else None
        return lsp.LocationLink(
            target_uri=target[0], target_range=target[1], target_selection_range=sel[1], origin_selection_range=origin
        )
    if isinstance(o, lsp.WorkspaceEdit):
        return _edit(o, nb, placed)
    if isinstance(o, lsp.Range):
        return _range_in(o, placed)
    if isinstance(o, lsp.Position):
        line = o.line - placed.first
        return lsp.Position(line, o.character) if 0 <= line < placed.count else _DROP
    if isinstance(o, (str, int, float, bool)) or o is None:
        return o
    return _GO


def _runs_virtual(command: Any, nb: Notebook) -> bool:
    args = getattr(command, "arguments", None) or []
    return any(isinstance(a, str) and a == nb.virtual_uri for a in args)


def _edit(e: lsp.WorkspaceEdit, nb: Notebook, placed: Placed) -> lsp.WorkspaceEdit:
    """Edits of the virtual document as edits of its cells."""
    changes: dict[str, list] = {}
    for uri, edits in (e.changes or {}).items():
        for t in edits:
            got = _located(uri, t.range, nb)
            if got is not None:
                changes.setdefault(got[0], []).append(lsp.TextEdit(range=got[1], new_text=t.new_text))
    doc_changes: list = []
    for dc in e.document_changes or ():
        if isinstance(dc, lsp.TextDocumentEdit) and dc.text_document.uri == nb.virtual_uri:
            per: dict[str, list] = {}
            for t in dc.edits:
                got = _located(dc.text_document.uri, t.range, nb)
                if got is not None:
                    per.setdefault(got[0], []).append(attrs.evolve(t, range=got[1]))
            for uri, edits in per.items():
                cell = nb.cells.get(uri)
                ident = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=cell.version if cell else None)
                doc_changes.append(lsp.TextDocumentEdit(text_document=ident, edits=edits))
        else:
            doc_changes.append(dc)
    return lsp.WorkspaceEdit(
        changes=changes or None,
        document_changes=doc_changes or None,
        change_annotations=e.change_annotations,
    )


def _tokens(t: lsp.SemanticTokens, p: Placed) -> lsp.SemanticTokens:
    """The semantic tokens of the virtual document that lie in cell `p`."""
    data, out = t.data, []
    line = col = 0
    prev_line, prev_col = 0, 0
    for i in range(0, len(data) - 4, 5):
        dl, dc, length, kind, mods = data[i : i + 5]
        line += dl
        col = col + dc if dl == 0 else dc
        rel = line - p.first
        if 0 <= rel < p.count:
            out += [rel - prev_line, col - prev_col if rel == prev_line else col, length, kind, mods]
            prev_line, prev_col = rel, col
    return lsp.SemanticTokens(data=out, result_id=t.result_id)
