"""Loading .qv files from Python: check, compile, and run through the runtime.

`quiver.load(path)` is the public entry point: it returns a module object with
the program's models (`Mlp.init(seed=0)`), functions and dims, callable from
Python with torch tensors. A program with errors raises `CheckFailed`, whose
message lists them as qlint does.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass

from quiver.checker.analysis import Analysis, check_bytes
from quiver.checker.compiler import CompiledModule, compile_program

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


def compile_file(path: str, data: bytes | None = None) -> Program:
    """Check and compile a .qv file (raises OSError, CheckFailed); with
    `data`, that is its text (an editor's unsaved text), not what is on disk.
    A file read from disk must be a regular file of at most 10 MiB
    (`inputs.read_source`; else `inputs.InputError`, an OSError)."""
    path = os.path.abspath(path)
    if data is None:
        data = read_source(path)
    analysis = check_bytes(data)
    if analysis.errors:
        raise CheckFailed(path, analysis)
    return Program(path, analysis, compile_program(analysis, path))


def load(path: str) -> types.ModuleType:
    """Check, compile and import a .qv file; returns its module object."""
    program = compile_file(path)
    from quiver import runtime as rt  # torch is imported here, not before

    module = rt.load_compiled(program.compiled.source, program.path)
    rt.use_program_device(module)  # creation functions make tensors where its models live
    module.__dict__["__quiver_program__"] = program
    return module
