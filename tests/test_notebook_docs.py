"""docs/notebooks.md's cells, run as one notebook by nbclient: every
```` ```python cell ```` block in order, as a code cell; a block marked
```` ```python cell error ```` must fail, and the ```` ```text ```` block
right after it must appear in that cell's output."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

DOC = Path(__file__).resolve().parents[1] / "docs" / "notebooks.md"
_BLOCK = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.S | re.M)


def blocks() -> list[tuple[str, str, str | None]]:
    """(info, source, the text block after it) of each cell block."""
    found = list(_BLOCK.finditer(DOC.read_text(encoding="utf-8")))
    out = []
    for i, m in enumerate(found):
        info = m["info"].strip()
        if info.startswith("python cell"):
            nxt = found[i + 1] if i + 1 < len(found) else None
            text = nxt["body"] if nxt is not None and nxt["info"].strip() == "text" else None
            out.append((info, m["body"], text))
    return out


def output_text(cell) -> str:
    parts = []
    for o in cell.outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("display_data", "execute_result"):
            parts.append(o.data.get("text/plain", ""))
        elif o.output_type == "error":
            parts.append("\n".join(o.traceback))
    return "\n".join(parts)


def test_docs_notebook_runs(tmp_path):
    cells = blocks()
    assert len(cells) >= 6
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for _, src, _ in cells]
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        for i, (info, _, expected) in enumerate(cells):
            cell = nb.cells[i]
            if info == "python cell error":
                try:
                    client.execute_cell(cell, i)
                except CellExecutionError:
                    pass
                else:
                    raise AssertionError(f"cell {i} should fail")
                assert expected is not None and expected in output_text(cell), output_text(cell)
            else:
                client.execute_cell(cell, i)
    assert "<td" in nb.cells[-3].outputs[0].data["text/html"]  # the model's table
