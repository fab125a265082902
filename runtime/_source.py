"""Source mapping: from compiled Python back to ``.qv`` locations.

Compiled code creates one :class:`SourceFile` per ``.qv`` file
(``_src = rt.SourceFile("/abs/path/file.qv")``), makes :class:`Loc` values
with ``_src.loc(line, col)`` and, as its last statement, hands over the map
from Python line numbers to ``.qv`` positions with ``_src.set_line_map``.

:func:`load_compiled` compiles that code at ``.qv`` lines (``_lines.py``):
its code objects' filename is the absolute ``.qv`` path
(:func:`compiled_filename`) and their line numbers are ``.qv`` lines, so a
frame's own line is its ``.qv`` line and ``linecache`` reads the ``.qv``
file. Code that cannot be relocated (no literal line map) is compiled under
``<quiver:/abs/path.qv>`` with the compiled text in ``linecache``, and its
frames go through the line map.

A frame belongs to compiled code when its code object's filename is one a
SourceFile is registered under (the ``.qv`` path or its ``<quiver:...>``
name), or, as a fallback for compiled modules imported as ordinary ``.py``
files, when the frame's module globals hold a SourceFile under the name
``_src`` (their lines are Python lines: the line map applies).
"""

from __future__ import annotations

import bisect
import linecache
import os
import sys
import types
from typing import NamedTuple

from ._errors import QuiverError
from ._lines import NAN_HOOK, add_nan_checks, frame_column, line_map_of, relocate


class Loc(NamedTuple):
    """A position in a ``.qv`` file; line and column are 1-based."""

    path: str
    line: int
    col: int

    @property
    def filename(self) -> str:
        return os.path.basename(self.path)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


def compiled_filename(qv_path: str) -> str:
    """The filename that compiled code for ``qv_path`` is compiled under:
    the absolute ``.qv`` path itself (its lines are ``.qv`` lines)."""
    return os.path.abspath(qv_path)


def mapped_filename(qv_path: str) -> str:
    """The filename of compiled code that keeps Python lines (no line map
    could be read from it): ``<quiver:/abs/path.qv>``."""
    return f"<quiver:{os.path.abspath(qv_path)}>"


class SourceFile:
    """One ``.qv`` file as seen by the compiled module made from it."""

    _registry: dict[str, SourceFile] = {}

    compiled_filename = staticmethod(compiled_filename)

    def __init__(self, path: str, code_filename: str | None = None):
        self.path = path
        self.name = os.path.basename(path)
        self.code_filename = code_filename or compiled_filename(path)
        self._lines: list[int] = []
        self._locs: list[tuple[int, int]] = []
        self._cols: dict[int, int] = {}  # qv line -> the column of its first entry
        SourceFile._registry[self.code_filename] = self
        if code_filename is None:
            SourceFile._registry[mapped_filename(path)] = self

    def loc(self, line: int, col: int) -> Loc:
        return Loc(self.path, line, col)

    def set_line_map(self, mapping) -> None:
        """``{python_line: (qv_line, qv_col)}`` for the compiled module."""
        items = sorted(mapping.items())
        self._lines = [k for k, _ in items]
        self._locs = [tuple(v) for _, v in items]
        self._cols = {}
        for line, col in self._locs:
            self._cols.setdefault(line, col)

    def map_line(self, py_line: int) -> Loc | None:
        """The ``.qv`` location of a compiled line: the entry for that line,
        else the nearest entry above it; None above the first entry."""
        i = bisect.bisect_right(self._lines, py_line) - 1
        if i < 0:
            return None
        line, col = self._locs[i]
        return Loc(self.path, line, col)

    def frame_loc(self, code, line: int, lasti: int) -> Loc | None:
        """The ``.qv`` location of a frame of ``code`` stopped at Python line
        ``line`` (instruction ``lasti``): code compiled at ``.qv`` lines
        (its filename is the ``.qv`` path) is already there, its column
        kept in the instruction's position; other code goes through the map."""
        if code.co_filename == compiled_filename(self.path):
            if line is None or line < 1:
                return None
            col = frame_column(code, lasti)
            if col is None:
                col = self._cols.get(line, 1)
            return Loc(self.path, line, col)
        return self.map_line(line)

    def __repr__(self) -> str:
        return f"SourceFile({self.path!r})"


def _source_of(frame) -> SourceFile | None:
    src = SourceFile._registry.get(frame.f_code.co_filename)
    if src is None:
        cand = frame.f_globals.get("_src")
        if isinstance(cand, SourceFile):
            src = cand
    return src


class QvFrame(NamedTuple):
    """One frame of compiled code: the ``.qv`` location and the fn's name."""

    loc: Loc
    function: str


def qv_traceback(exc: BaseException) -> list[QvFrame]:
    """The frames of compiled code in ``exc``'s traceback, outermost first."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        src = _source_of(tb.tb_frame)
        if src is not None:
            loc = src.frame_loc(tb.tb_frame.f_code, tb.tb_lineno, tb.tb_lasti)
            if loc is not None:
                frames.append(QvFrame(loc, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    return frames


def qv_location(exc: BaseException) -> Loc | None:
    """The ``.qv`` location to report for ``exc``.

    A QuiverError that carries its own location (argument checks, extern
    resolution) reports that; any other exception reports the innermost frame
    of compiled code it passed through.  None when there is neither.
    """
    loc = getattr(exc, "loc", None) if isinstance(exc, QuiverError) else None
    if loc is not None:
        return loc
    frames = qv_traceback(exc)
    return frames[-1].loc if frames else None


def _display(path: str, relative_to: str | None) -> str:
    base = os.getcwd() if relative_to is None else relative_to
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def error_message(exc: BaseException) -> str:
    """The message of ``exc`` without a location prefix."""
    if isinstance(exc, QuiverError):
        return exc.detail
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def format_error(exc: BaseException, *, traceback: bool = False, relative_to: str | None = None) -> str:
    """``file.qv:LINE:COL: error: MESSAGE`` for an exception from compiled code.

    Paths are shown relative to ``relative_to`` (default: the current
    directory) when they lie below it.  An error that carries the location of
    a declaration (an argument check, an extern's result) adds the line of the
    call: ``  called from file.qv:LINE:COL (in FN)``.  With ``traceback=True``
    one line per frame of compiled code follows instead, innermost first:
    ``  file.qv:LINE:COL: in FN``.
    """
    loc = qv_location(exc)
    msg = error_message(exc)
    if loc is not None:
        head = f"{_display(loc.path, relative_to)}:{loc.line}:{loc.col}: error: {msg}"
    else:
        head = f"error: {msg}"
    if not traceback:
        # An error located at a declaration (a parameter's check, an extern's
        # result) also says where the call came from.
        own = getattr(exc, "loc", None) if isinstance(exc, QuiverError) else None
        if own is not None:
            for fr in reversed(qv_traceback(exc)):
                if (fr.loc.path, fr.loc.line) != (own.path, own.line):
                    where = f"{_display(fr.loc.path, relative_to)}:{fr.loc.line}:{fr.loc.col}"
                    return f"{head}\n  called from {where} (in {fr.function})"
        return head
    lines = [head]
    for fr in reversed(qv_traceback(exc)):
        lines.append(f"  {_display(fr.loc.path, relative_to)}:{fr.loc.line}:{fr.loc.col}: in {fr.function}")
    return "\n".join(lines)


# The imports of the module being executed by load_compiled (a stack: a
# module's imports are loaded before it, never during its execution, but a
# program may load another from its own code through extern fns).
_importing: list[dict[str, types.ModuleType]] = []


def imported(qual: str) -> types.ModuleType:
    """The loaded module of the Quiver module ``qual`` (`nn.layers`), for
    compiled code that imports it: given to ``load_compiled`` by the loader."""
    if _importing and qual in _importing[-1]:
        return _importing[-1][qual]
    raise ImportError(
        f"this compiled Quiver module imports the Quiver module {qual!r}, which was not loaded with it;"
        " load the program with quiver.load or `quiver run`"
    )


def load_compiled(
    code: str,
    qv_path: str,
    module_name: str | None = None,
    imports: dict[str, types.ModuleType] | None = None,
) -> types.ModuleType:
    """Execute compiled Python for ``qv_path`` as a fresh module and return it.

    The code is compiled at ``.qv`` lines under :func:`compiled_filename`
    (the ``.qv`` path: debuggers, tracebacks and ``linecache`` see the
    ``.qv`` file); code without a literal line map is compiled under
    :func:`mapped_filename` and its text registered with ``linecache``.
    The module is not put into ``sys.modules``.
    ``imports`` are the loaded modules of the Quiver modules it imports, by
    qualified name (`rt.imported` hands them to the code).
    """
    if module_name is None:
        stem = os.path.splitext(os.path.basename(qv_path))[0]
        module_name = "quiver_compiled." + "".join(c if c.isalnum() else "_" for c in stem)
    module = types.ModuleType(module_name)
    module.__dict__["__quiver_source__"] = qv_path  # not a ModuleType attribute: set in the namespace
    # Python's compiler recurses along a long flat chain (`a + a + ... + a`).
    code_obj = _compile(code, qv_path)
    filename = code_obj.co_filename
    module.__file__ = filename
    if _debug_nan_checks():
        from . import _debug

        module.__dict__[NAN_HOOK] = _debug.nan_check
    if filename != compiled_filename(qv_path):
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    _importing.append(imports or {})
    try:
        exec(code_obj, module.__dict__)
    finally:
        _importing.pop()
    return module


def _compile_at_qv_lines(code: str, qv_path: str):
    """The code object of compiled ``code``: at ``.qv`` lines when its line
    map can be read, else at its own lines under :func:`mapped_filename`."""
    import ast

    tree = ast.parse(code, mapped_filename(qv_path))
    mapping = line_map_of(tree)
    if mapping is None:
        return compile(tree, mapped_filename(qv_path), "exec")
    relocate(tree, mapping)
    if _debug_nan_checks():
        add_nan_checks(tree)
    return compile(tree, compiled_filename(qv_path), "exec")


def _debug_nan_checks() -> bool:
    from . import _debug

    return _debug.nan_checks


def _compile(code: str, qv_path: str):
    """_compile_at_qv_lines, retried with room for deep recursion: Python's
    parser and compiler recurse along a long flat chain (`a + a + ... + a`),
    which the checker accepts at any length (and recurses along the same
    way, with room)."""
    try:
        return _compile_at_qv_lines(code, qv_path)
    except RecursionError:
        pass
    import threading

    out: list = []

    def target() -> None:
        try:
            out.append(_compile_at_qv_lines(code, qv_path))
        except BaseException as e:  # handed to the caller's thread
            out.append(e)

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    try:
        threading.stack_size(512 * 1024 * 1024)
        sys.setrecursionlimit(2_000_000)
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(old_limit)
        threading.stack_size(old_stack)
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def run_main(module, *, stream=None, relative_to: str | None = None) -> int:
    """Run ``module.main()``; on an error print it at its ``.qv`` location.

    Returns a process exit code: 0 on success, 1 on an error, 130 on
    KeyboardInterrupt.
    """
    stream = sys.stderr if stream is None else stream
    try:
        module.main()
    except KeyboardInterrupt:
        print("interrupted", file=stream)
        return 130
    except Exception as exc:  # the runner reports every error
        print(format_error(exc, traceback=True, relative_to=relative_to), file=stream)
        return 1
    return 0
