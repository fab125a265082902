"""Loading .qv files from Python: check, compile, and run through the runtime.

`quiver.load(path)` is the public entry point: it returns a module object with
the program's models (`Mlp.init(seed=0)`), functions and dims, callable from
Python with torch tensors. A program with errors raises `CheckFailed`, whose
message lists them as qlint does.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass, field

from quiver.checker.analysis import Analysis
from quiver.checker.compile_names import py_name
from quiver.checker.compiler import CompiledModule, compile_program
from quiver.checker.source import decode_source
from quiver.checker.workspace import DecodedText, Workspace

from .host import DiskHost, normal_path
from .inputs import read_source
from .report import diagnostic_line


class CheckFailed(Exception):
    """The program did not pass the checker."""

    def __init__(self, path: str, analysis: Analysis) -> None:
        self.path = path
        self.analysis = analysis
        self.diagnostics = analysis.errors
        lines = [f"{path} has {len(self.diagnostics)} error(s):"]
        lines += [diagnostic_line(path, analysis.lines, d) for d in self.diagnostics[:20]]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Program:
    path: str
    analysis: Analysis
    compiled: CompiledModule
    # the programs of the modules it imports, in the order they are loaded
    # (each before its importers), by qualified name
    imports: dict[str, Program] = field(default_factory=dict)
    qual: str = ""


def compile_file(
    path: str, data: bytes | None = None, workspace: Workspace | None = None, project_above: bool = True
) -> Program:
    """Check and compile a .qv file and the modules it imports (raises
    OSError, CheckFailed for the first file with errors, CompileError); with
    `data`, that is the file's text (an editor's unsaved text), not what is
    on disk. Files read from disk must be regular files of at most 10 MiB
    (`inputs.read_source`; else `inputs.InputError`, an OSError). Modules are
    found next to the file, then in its project (a `quiver.toml` folder),
    then in the file's own folder."""
    path = normal_path(path)
    if data is None:
        data = read_source(path)
    if workspace is None:
        # running executes the program anyway: its project folder above counts
        # (`project_above`); `quiver compile`, which runs nothing, keeps to the file's folder
        workspace = Workspace(DiskHost(projects_above_roots=project_above), [os.path.dirname(path)])
    text, problem = decode_source(data)
    workspace.set_overlay(path, DecodedText(text, problem))
    return _compile(workspace, path, {})


def _compile(workspace: Workspace, path: str, done: dict[str, Program]) -> Program:
    if path in done:
        return done[path]
    analysis = workspace.analyze(path)
    if analysis is None:  # an imported file that vanished since it was found
        raise FileNotFoundError(2, "No such file or directory", path)
    if analysis.errors:
        raise CheckFailed(path, analysis)
    imports: dict[str, Program] = {}
    for ex in _closure(analysis):
        imports[ex.qual] = _compile(workspace, ex.path, done)
    program = Program(path, analysis, compile_program(analysis, path), imports, workspace.qualified_name(path))
    done[path] = program
    return program


def _closure(analysis: Analysis) -> list:
    """The modules a file's compiled code refers to: its imports and theirs."""
    out = {}
    todo = list(analysis.modules)
    while todo:
        ex = todo.pop()
        if ex.qual in out:
            continue
        out[ex.qual] = ex
        todo.extend(ex.analysis.modules)
    return sorted(out.values(), key=lambda ex: ex.qual)


# Loaded modules by (path, compiled source, the modules it was given, the
# device models are placed on): one
# .qv file loaded twice with the same text is one Python module, so its
# models are one class for every program that uses it.
_LOADED: dict[tuple, types.ModuleType] = {}


def execute(program: Program) -> types.ModuleType:
    """The loaded Python module of a compiled program (its imports first)."""
    from quiver import runtime as rt  # torch is imported here, not before

    imports = {qual: execute(p) for qual, p in program.imports.items()}
    for qual, imported in imports.items():
        # its models named as the checker names them here: `nn.Linear[4, 1]`
        rt.name_imported(imported, qual)
    # (a model class takes its device when it is made: `--device` is part of the key)
    key = (
        program.path,
        program.compiled.source,
        tuple((q, id(m)) for q, m in imports.items()),
        str(rt.placed_device()),
    )
    module = _LOADED.get(key)
    if module is None:
        name = "quiver_compiled." + "".join(c if c.isalnum() or c == "." else "_" for c in program.qual)
        module = rt.load_compiled(program.compiled.source, program.path, name, imports)
        module.__dict__["__quiver_program__"] = program
        # what Python users of the program see (runtime/_program.py): its names, and the
        # modules it imports under the names it imports them as (`prog.nn`)
        module.__dict__["__quiver_names__"] = public_names(program.analysis)
        module.__dict__["__quiver_imports__"] = {
            spelling: imports[qual]
            for spelling, qual in program.analysis.globals.names.modules.items()
            if qual in imports
        }
        _LOADED[key] = module
    # in sys.modules under its name: torch.compile and pickle look classes and fns up there
    rt.register_compiled(module)
    return module


# the kinds of names a program shows Python (`prog.Mlp`, `prog.loss`); the
# modules it imports are added by the runtime's view
_PUBLIC_KINDS = ("dim", "const", "model", "fn", "extern")


def public_names(analysis: Analysis) -> dict[str, str]:
    """The names a program shows Python: its own dims, constants, models, fns
    and extern fns, and those its `from` imports bind, except the names that
    start with `_` (private to the file), each with the Python name the
    compiled code gives it (`min` -> `min_q`)."""
    return {
        name: py_name(name)
        for name, kind in analysis.globals.names.kinds.items()
        if kind in _PUBLIC_KINDS and "." not in name and not name.startswith("_")
    }


def load(path: str) -> types.ModuleType:
    """Check, compile and import a .qv file; returns the program as Python
    sees it (an `rt.Program`, runtime/_program.py: its own names and the
    modules it imports, `prog.nn.Linear[4, 1]`). The modules it imports are
    loaded once per process and text: a model is the same class in every
    program that imports its file."""
    from quiver import runtime as rt  # torch is imported here, not before

    module = execute(compile_file(path))
    rt.use_program_device(module)  # creation functions make tensors where its models live
    return rt.python_view(module)  # a call with the wrong arguments is a CheckError at the fn's line
