"""Helpers for the runtime tests: load the hand-written "compiled" fixtures.

The files under fixtures/ are written in the style the compiler emits.  A
``# qv LINE:COL`` comment at the end of a line gives that line's ``.qv``
location; :func:`compile_text` turns those comments into the final
``_src.set_line_map({...})`` statement, as the compiler does, and puts the
absolute path of the ``.qv`` file in place of ``"@QV_PATH@"``.
"""

from __future__ import annotations

import os
import re

from quiver import runtime as rt

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
_QV_COMMENT = re.compile(r"#\s*qv\s+(\d+):(\d+)\s*$")


def compile_text(py_text: str, qv_path: str) -> str:
    """The fixture text made into what the compiler would emit."""
    text = py_text.replace('"@QV_PATH@"', repr(qv_path))
    mapping = {}
    for i, line in enumerate(text.splitlines(), start=1):
        m = _QV_COMMENT.search(line)
        if m:
            mapping[i] = (int(m.group(1)), int(m.group(2)))
    return text + f"\n_src.set_line_map({mapping!r})\n"


def load_fixture(name: str):
    """Load fixtures/<name>_compiled.py as the compiled module of <name>.qv."""
    qv_path = os.path.join(FIXTURES, f"{name}.qv")
    with open(os.path.join(FIXTURES, f"{name}_compiled.py"), encoding="utf-8") as fh:
        text = fh.read()
    return rt.load_compiled(compile_text(text, qv_path), qv_path)
