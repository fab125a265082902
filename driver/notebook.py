"""Quiver in Jupyter/IPython: `%load_ext quiver` and the `%%quiver` cell magic.

A `%%quiver` cell is Quiver source. Running it checks it with the real
checker, compiles it and defines its models, functions, dims and consts in
the notebook's namespace. Diagnostics are shown in the cell's output with
the cell's line and carets; an error stops the cell (the magic raises, so
"run all" stops there), warnings are shown and the cell runs.

The notebook program. Cells build one program, as a Python session does:
every top-level definition (`dim`, `const`, `model`, `fn`, `extern`) and
import of every cell run so far is kept, by name, and a later definition of
a name replaces the earlier one. A cell is checked as its own text followed
by the kept definitions it does not redefine, so a cell may use what earlier
cells defined, and a redefinition that breaks an earlier cell's function is
reported at that function's cell and line. The text starts with a blank line
in place of the `%%quiver` line, so line numbers are the cell's own. Each
run compiles the whole program anew under a fresh path; the module's names
that cells defined are then (re)bound in the namespace.

Instances of replaced models. After a run, every live instance of the
previous class of a model name is converted to the new class when its fields
fit (the same fields, in the same order, with the same shapes, element types
and device): its tensors are kept, it only changes class, so `m` made before
the re-run works with the new functions. An instance whose fields do not fit
keeps its old class, and a new function refuses it with a message naming
the cell to run again (`rt.ModelArg` reads `_qv_stale_note`).

Run-time errors. An exception that passed through compiled code of the
notebook is shown at its cell and line (`<cell 3>:5:12`, the `In [3]` of the
cell that defined the function), with the source line and the calls that led
there; other exceptions get IPython's usual traceback.
"""

from __future__ import annotations

import gc
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

from quiver.checker import ast as A
from quiver.checker.items import split_items
from quiver.checker.parser import parse_item
from quiver.checker.workspace import Workspace

from .host import DiskHost, normal_path
from .loader import CheckFailed, compile_file, execute


class CellFailed(Exception):
    """A `%%quiver` cell did not pass the checker (its diagnostics were shown)."""

    def _render_traceback_(self) -> list[str]:  # IPython: this line, no Python frames
        return [f"{type(self).__name__}: {self}"]


@dataclass
class _Item:
    text: str
    where: str  # the cell's label, `<cell 3>`
    line: int  # the cell line the item starts at (1-based)
    lines: list[str]  # the cell's lines, for showing a source line


@dataclass
class _Segment:
    first: int  # first line in the program (1-based)
    count: int
    where: str
    line: int  # the cell line of `first`
    lines: list[str]


def _item_key(item: A.Item | None, text: str) -> tuple | None:
    if item is None:
        return None
    if isinstance(item, A.ImportDecl):
        return ("import", item.module.text)
    if isinstance(item, A.FromImport):
        return ("from", item.module.text, tuple(n.name.text for n in item.names))
    name = getattr(item, "name", None)
    if isinstance(name, A.Ident):
        return ("name", name.text)
    return ("text", text)


@dataclass
class Session:
    """The notebook program of one IPython shell (see the module's doc)."""

    cwd: str = field(default_factory=os.getcwd)
    items: dict[tuple, _Item] = field(default_factory=dict)
    programs: dict[str, list[_Segment]] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    runs: int = 0
    cell_number: int = 0  # the `In [N]` of the cell running now (a pre_run_cell hook)

    # ------------------------------------------------------------ a cell

    def run_cell(self, text: str, where: str, namespace: dict) -> Any:
        """Check, compile and define the cell `text` (line 1 is the magic's
        line, blank); returns the diagnostics view (None when there are none)
        and raises CellFailed on an error."""
        from quiver.runtime import _display as D

        if not text.endswith("\n"):
            text += "\n"
        cell_lines = text.split("\n")
        new_items: dict[tuple, _Item] = {}
        for s, e in split_items(text):
            chunk = text[s:e]
            key = _item_key(parse_item(chunk).item, chunk)
            if key is not None:
                new_items[key] = _Item(chunk, where, text.count("\n", 0, s) + 1, cell_lines)
        parts = [text]
        segments = [_Segment(1, text.count("\n"), where, 1, cell_lines)]
        line = 1 + text.count("\n")
        for key, it in self.items.items():
            if key in new_items:
                continue
            chunk = it.text if it.text.endswith("\n") else it.text + "\n"
            segments.append(_Segment(line, chunk.count("\n"), it.where, it.line, it.lines))
            parts.append(chunk)
            line += chunk.count("\n")
        self.runs += 1
        self.cwd = os.getcwd()  # imports are found from the working folder the cell runs in
        path = normal_path(os.path.join(self.cwd, f"quiver-notebook-{self.runs}.qv"))
        self.programs[path] = segments
        from quiver.runtime._errors import name_lines

        # an exception's own message names the cell line too, not the joined program's
        name_lines(path, lambda line: self._cell_line(path, line))
        # running a cell runs its code anyway: the project folder above the working folder counts
        workspace = Workspace(DiskHost(projects_above_roots=True), [normal_path(self.cwd)])
        try:
            program = compile_file(path, "".join(parts).encode(), workspace)
        except CheckFailed as e:
            view = D.DiagnosticsView(tuple(self._reports(e.path, e.analysis)))
            n = len(e.diagnostics)
            place = where if e.path == path else self._display_path(e.path)
            raise CellFailed(f"{n} error{'s' if n != 1 else ''} in {place}", view) from None
        view = D.DiagnosticsView(tuple(self._reports(path, program.analysis)))
        module = execute(program)
        self._define(module, {**self.items, **new_items}, where, namespace)
        for key, it in new_items.items():
            self.items.pop(key, None)  # a redefinition moves to the end, where it now is
            self.items[key] = it
        return view if view.reports else None

    def _define(self, module, items: dict[tuple, _Item], where: str, namespace: dict) -> None:
        from quiver import runtime as rt

        rt.use_program_device(module)
        view = rt.python_view(module)
        for key in items:
            if key[0] != "name" or not hasattr(view, key[1]):
                continue
            name = key[1]
            value = getattr(view, name)
            if isinstance(value, rt.GenericModel) or (isinstance(value, type) and issubclass(value, rt.Model)):
                old = self.models.get(name)
                if old is not None and old is not value:
                    _replace_model(name, old, value, where)
                self.models[name] = value
            namespace[name] = value

    # ------------------------------------------------------------ reports

    def _display_path(self, path: str) -> str:
        rel = posixpath.relpath(path, normal_path(self.cwd))
        return path if rel.startswith("..") else rel

    def _reports(self, path: str, analysis) -> list:
        from quiver.runtime import _display as D

        out = []
        for d in analysis.diagnostics:
            start = analysis.lines.position(d.span.start)
            end = analysis.lines.position(d.span.end)
            line_text = analysis.text.split("\n")[start.line] if start.line < analysis.text.count("\n") + 1 else ""
            width = end.column - start.column if end.line == start.line else len(line_text) - start.column
            mark = self._mark(path, start.line + 1, start.column + 1, line_text, width)
            out.append(D.Report(str(d.severity), d.message, mark, d.code))
        return out

    def _cell_line(self, path: str, line: int) -> tuple[str, int]:
        mark = self._mark(path, line, 1, "")
        return mark.where, mark.line

    def _mark(self, path: str, line: int, col: int, text: str, width: int = 1):
        """The place of a program line: its cell and cell line."""
        from quiver.runtime import _display as D

        segments = self.programs.get(path)
        if segments is None:
            return D.SourceMark(self._display_path(path), line, col, text, width)
        for seg in segments:
            if seg.first <= line < seg.first + seg.count:
                n = seg.line + line - seg.first
                src = seg.lines[n - 1] if 0 < n <= len(seg.lines) else text
                return D.SourceMark(seg.where, n, col, src, width)
        return D.SourceMark(segments[0].where, line, col, text, width)

    # ------------------------------------------------------------ run-time errors

    def error_view(self, exc: BaseException):
        """The view of an exception from compiled code of this notebook (or
        of a .qv file it imports), else None."""
        import linecache

        from quiver import runtime as rt
        from quiver.runtime import _display as D

        frames = rt.qv_traceback(exc)
        loc = rt.qv_location(exc)
        mine = [f for f in frames if f.loc.path in self.programs]
        if loc is None or not (mine or loc.path in self.programs):
            return None

        def mark(lc):
            text = ""
            if lc.path not in self.programs:
                text = linecache.getline(lc.path, lc.line)
            return self._mark(lc.path, lc.line, lc.col, text)

        notes = []
        seen = {(loc.path, loc.line)}
        for fr in reversed(frames):
            if (fr.loc.path, fr.loc.line) in seen:
                continue
            seen.add((fr.loc.path, fr.loc.line))
            notes.append(f"called from {mark(fr.loc).header()} (in {fr.function})")
        return D.ErrorView(D.Report("error", rt.error_message(exc), mark(loc), notes=tuple(notes[:8])))


def _fields(cls) -> list[tuple]:
    return [(p, f.shape, f.elem.dtype) for p, f in cls._qv_state_fields.items()]


def _misfit(old, new) -> str | None:
    """Why an instance of `old` cannot become a `new`, or None."""
    if old._qv_torch_device != new._qv_torch_device:
        return f"it lives on {old._qv_torch_device}, the new one on {new._qv_torch_device}"
    a, b = _fields(old), _fields(new)
    if a == b and old._qv_leaf_paths == new._qv_leaf_paths:
        return None
    fa, fb = old._qv_state_fields, new._qv_state_fields
    for p, f in fa.items():
        if p not in fb:
            return f"field {p} is gone"
        g = fb[p]
        if (f.shape, f.elem.dtype) != (g.shape, g.elem.dtype):
            return f"field {p} was {f.type_text}, now {g.type_text}"
    for p in fb:
        if p not in fa:
            return f"field {p} is new"
    return "its fields are in another order"


def _replace_model(name: str, old, new, where: str) -> None:
    """Convert the live instances of `old` (a model class or a family of
    them) to `new` where their fields fit; mark the old classes so that a
    new function's refusal of the rest names the cell."""
    from quiver import runtime as rt

    pairs = []
    if isinstance(old, rt.GenericModel):
        for (dims, options), cls in list(old._classes.items()):
            target = None
            if isinstance(new, rt.GenericModel):
                try:
                    target = new.of(*dims, **dict(options))
                except rt.QuiverError:
                    target = None
            pairs.append((cls, target))
    elif isinstance(new, type):
        pairs.append((old, new))
    for cls, target in pairs:
        why = "the new model takes other dims" if target is None else _misfit(cls, target)
        if why is None:
            for obj in gc.get_referrers(cls):
                if type(obj) is cls:
                    object.__setattr__(obj, "__class__", target)
            cls._qv_stale_note = (
                f" (a {name} of an earlier run of the cell that defines it; run {where} again to convert it)"
            )
        else:
            cls._qv_stale_note = (
                f" (a {name} made before {where} redefined it, which does not fit the new {name}: {why};"
                f" make a new one, e.g. with {name}.init(seed=...))"
            )


# ------------------------------------------------------------------ IPython


def _session(shell) -> Session:
    s = getattr(shell, "_quiver_session", None)
    if s is None:
        s = Session()
        shell._quiver_session = s
    return s


def load_ipython_extension(shell) -> None:
    """`%load_ext quiver`: registers `%%quiver` and the display of run-time errors."""
    from quiver import missing_runtime_module, needs_runtime_message

    missing = missing_runtime_module()
    if missing is not None:
        raise ModuleNotFoundError(needs_runtime_message("%%quiver", missing), name=missing)
    session = _session(shell)

    def quiver(line: str, cell: str):
        """%%quiver: check, compile and define the cell's Quiver definitions."""
        from IPython.display import display

        where = f"<cell {session.cell_number or shell.execution_count}>"
        try:
            view = session.run_cell("\n" + cell, where, shell.user_ns)
        except CellFailed as e:
            display(e.args[1])
            raise CellFailed(e.args[0]) from None
        if view is not None:
            display(view)

    shell.register_magic_function(quiver, magic_kind="cell", magic_name="quiver")

    def numbered(info) -> None:
        # the `In [N]` of the cell about to run: the count is already one past it
        # when the cell is kept in the history (IPython counts before running)
        session.cell_number = (
            shell.execution_count - 1 if getattr(info, "store_history", False) else shell.execution_count
        )

    old = getattr(shell, "_quiver_numbered", None)
    if old is not None:  # loaded again: one hook
        shell.events.unregister("pre_run_cell", old)
    shell._quiver_numbered = numbered
    shell.events.register("pre_run_cell", numbered)

    # a handler the user (or another extension) had set keeps its exceptions
    prior = getattr(shell, "_quiver_prior_exc", None)
    if prior is None:  # not when loaded again: quiver's own handler is set now
        prior = (tuple(shell.custom_exceptions), shell.CustomTB)
        shell._quiver_prior_exc = prior
    prior_types, prior_handler = prior

    def handler(self, etype, value, tb, tb_offset=None):
        view = session.error_view(value)
        if view is None:
            if prior_types and issubclass(etype, prior_types):
                return prior_handler(etype, value, tb, tb_offset=tb_offset)
            self.showtraceback((etype, value, tb), tb_offset=tb_offset)
            return None
        from IPython.display import display

        display(view)
        head = view.reports[0]
        where = f" at {head.mark.header()}" if head.mark is not None else ""
        self._showtraceback(etype, value, [f"{etype.__name__}{where}: {head.message}"])
        return None

    shell.set_custom_exc((Exception, *prior_types), handler)


def unload_ipython_extension(shell) -> None:
    """`%unload_ext quiver`: the display of run-time errors (the handler set
    before `%load_ext quiver` is back) and the cell numbering go; `%%quiver`
    stays registered (IPython has no way to remove a magic), and the
    definitions stay in the namespace."""
    prior = getattr(shell, "_quiver_prior_exc", None)
    if prior is not None:
        shell.custom_exceptions, shell.CustomTB = prior
        shell._quiver_prior_exc = None
    else:
        shell.set_custom_exc((), None)
    hook = getattr(shell, "_quiver_numbered", None)
    if hook is not None:
        shell.events.unregister("pre_run_cell", hook)
        shell._quiver_numbered = None
