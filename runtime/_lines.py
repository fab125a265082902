"""Compiled code at ``.qv`` lines.

The compiler writes Python text whose last statement hands the runtime a
line map (``_src.set_line_map({python_line: (qv_line, qv_col)})``).
:func:`compile_at_qv_lines` compiles that text so that its code objects
carry the ``.qv`` file as their filename and each statement's ``.qv`` line
as its line number: debuggers (debugpy, pdb), tracebacks, profilers and
coverage tools then see ``.qv`` locations without knowing about Quiver.

The rules, applied to the parsed Python before it is compiled:

- a statement whose Python line has an entry in the map gets that ``.qv``
  line, and its column (``col_offset`` holds the ``.qv`` column - 1, which
  :func:`frame_column` reads back for error messages);
- a statement inside a function without an entry (a check, the return of a
  fn's entry) gets the nearest entry above it in that function, else the
  function's own line: it is part of the statement before it, so stepping
  stops once per ``.qv`` statement;
- a function without an entry takes the line of the first entry inside it;
- module-level code without an entry (signatures, imports, the line map
  itself) gets line 1 (what a ``.qv`` file holds there is never code that a
  breakpoint could stop in);
- every expression takes the line of its statement, so a statement written on
  several Python lines is one line.
"""

from __future__ import annotations

import ast
import bisect
import itertools


def line_map_of(tree: ast.Module) -> dict[int, tuple[int, int]] | None:
    """The literal map of the module's final ``_src.set_line_map({...})``."""
    for stmt in reversed(tree.body):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "set_line_map"
            and len(call.args) == 1
            and not call.keywords
        ):
            try:
                value = ast.literal_eval(call.args[0])
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
            if isinstance(value, dict) and all(
                isinstance(k, int) and isinstance(v, tuple) and len(v) == 2 for k, v in value.items()
            ):
                return value
            return None
    return None


_LINE_END = 4096


class _Relines:
    def __init__(self, mapping: dict[int, tuple[int, int]]) -> None:
        items = sorted(mapping.items())
        self.keys = [k for k, _ in items]
        self.vals = [v for _, v in items]
        self.map = dict(items)

    def first_inside(self, node: ast.AST) -> tuple[int, int] | None:
        lo = bisect.bisect_left(self.keys, node.lineno)  # type: ignore[attr-defined]
        end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        if lo < len(self.keys) and self.keys[lo] <= end:
            return self.vals[lo]
        return None

    def above(self, line: int, floor: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self.keys, line) - 1
        if i >= 0 and self.keys[i] >= floor:
            return self.vals[i]
        return None

    def mark(self, node: ast.AST, loc: tuple[int, int], skip: set[int]) -> None:
        """Give ``node`` and the nodes below it (not those in ``skip``) ``loc``."""
        todo = [node]
        while todo:
            n = todo.pop()
            if hasattr(n, "lineno"):
                n.lineno = n.end_lineno = loc[0]  # type: ignore[attr-defined]
                n.col_offset = max(loc[1] - 1, 0)  # type: ignore[attr-defined]
                # (to the line's end: a traceback underlines the statement's
                # rest, or nothing when that is the whole line)
                n.end_col_offset = max(loc[1], _LINE_END)  # type: ignore[attr-defined]
            for child in ast.iter_child_nodes(n):
                if id(child) not in skip:
                    todo.append(child)


def relocate(tree: ast.Module, mapping: dict[int, tuple[int, int]]) -> ast.Module:
    """``tree`` with every node at its ``.qv`` line (the rules above)."""
    r = _Relines(mapping)
    _walk_module(r, tree.body)
    return tree


def _walk_module(r: _Relines, body: list[ast.stmt]) -> None:
    for stmt in body:
        own = r.map.get(stmt.lineno)
        if own is None and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own = r.first_inside(stmt)
        loc = own or (1, 1)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _walk_fn(r, stmt, loc)
        elif isinstance(stmt, ast.ClassDef):
            r.mark(stmt, loc, {id(s) for s in stmt.body})
            _walk_module(r, stmt.body)
        else:
            _walk_block_stmt(r, stmt, loc, None)


def _walk_fn(r: _Relines, fn: ast.FunctionDef | ast.AsyncFunctionDef, loc: tuple[int, int]) -> None:
    start = fn.lineno  # before relocation: a Python line
    r.mark(fn, loc, {id(s) for s in fn.body})
    _walk_body(r, fn.body, start, loc)


def _walk_body(r: _Relines, body: list[ast.stmt], floor: int | None, fn_loc: tuple[int, int]) -> None:
    for stmt in body:
        py_line = stmt.lineno
        own = r.map.get(py_line)
        if own is None and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own = r.first_inside(stmt)
        if own is None:
            own = (r.above(py_line, floor) if floor is not None else None) or fn_loc
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _walk_fn(r, stmt, own)
        elif isinstance(stmt, ast.ClassDef):
            r.mark(stmt, own, {id(s) for s in stmt.body})
            _walk_body(r, stmt.body, floor, own)
        else:
            _walk_block_stmt(r, stmt, own, floor, fn_loc)


def _walk_block_stmt(
    r: _Relines, stmt: ast.stmt, loc: tuple[int, int], floor: int | None, fn_loc: tuple[int, int] | None = None
) -> None:
    blocks: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            blocks.append(block)
    handlers = list(getattr(stmt, "handlers", None) or []) + list(getattr(stmt, "cases", None) or [])
    skip = {id(s) for block in blocks for s in block} | {id(h) for h in handlers}
    r.mark(stmt, loc, skip)
    inner_loc = fn_loc or loc
    for block in blocks:
        if floor is None:
            _walk_module(r, block)
        else:
            _walk_body(r, block, floor, inner_loc)
    for h in handlers:
        r.mark(h, loc, {id(s) for s in h.body})
        if floor is None:
            _walk_module(r, h.body)
        else:
            _walk_body(r, h.body, floor, inner_loc)


def frame_column(code, lasti: int) -> int | None:
    """The ``.qv`` column (1-based) of the instruction at ``lasti`` in code
    compiled by :func:`relocate`; None where Python has no position."""
    if lasti < 0:
        return None
    try:
        pos = next(itertools.islice(code.co_positions(), lasti // 2, None))
    except (StopIteration, AttributeError, ValueError):
        return None
    col = pos[2]
    return None if col is None else col + 1


# -------------------------------------------------------------- break on NaN

NAN_HOOK = "_qv_nan_check"  # the module global load_compiled binds to _debug.nan_check
_FIELD_UPDATES = ("field_add", "field_index_set", "model_update")


def _checked(stmt: ast.stmt) -> tuple[list[str], list[ast.expr]] | None:
    """The names (as written) and expressions a NaN check after ``stmt``
    looks at: the names an assignment binds, the field a field update writes."""
    if isinstance(stmt, ast.Assign):
        names: list[str] = []
        for t in stmt.targets:
            for n in t.elts if isinstance(t, ast.Tuple) else [t]:
                if isinstance(n, ast.Name) and not n.id.startswith("_"):
                    names.append(n.id)
        if names:
            return names, [ast.Name(n, ast.Load()) for n in names]
        return None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in _FIELD_UPDATES and call.args:
            m = call.args[0]
            if not isinstance(m, ast.Name):
                return None
            if len(call.args) > 1 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
                field = call.args[1].value
                return [f"{m.id}.{field}"], [ast.Attribute(ast.Name(m.id, ast.Load()), field, ast.Load())]
            return [m.id], [ast.Name(m.id, ast.Load())]
    return None


def _nan_block(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in body:
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(stmt, name, _nan_block(block))
        for h in getattr(stmt, "handlers", None) or []:
            h.body = _nan_block(h.body)
        out.append(stmt)
        what = None if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else _checked(stmt)
        if what is not None:
            names, exprs = what
            call = ast.Expr(
                ast.Call(
                    ast.Name(NAN_HOOK, ast.Load()),
                    [
                        ast.Tuple([ast.Constant(n) for n in names], ast.Load()),
                        ast.Tuple(exprs, ast.Load()),
                    ],
                    [],
                )
            )
            # at the statement's own line: part of the step, stops there
            for node in ast.walk(call):
                ast.copy_location(node, stmt)
            out.append(call)
    return out


def add_nan_checks(tree: ast.Module) -> ast.Module:
    """After each assignment and field update in the module's functions, a
    call ``_qv_nan_check(names, values)`` at the statement's line."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = _nan_block(node.body)
    return tree
