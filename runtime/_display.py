"""Rich displays for notebooks: models, gradients, errors and diagnostics.

Jupyter shows an object through its ``_repr_html_`` when it has one; the
model and gradient classes call :func:`model_html` / :func:`grad_html` from
theirs. :class:`ErrorView` (a run-time error at its ``.qv`` line) and
:class:`DiagnosticsView` (what the checker said about a ``%%quiver`` cell)
are plain data made by the notebook driver (``quiver.notebook``), which
knows the cells; this module knows nothing about the checker. Every piece of
text that reaches HTML goes through :func:`html.escape`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import torch

from ._elems import dims_text, dtype_name

_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
_CELL = "padding:2px 8px;text-align:left;border-bottom:1px solid #ddd"


def _table(caption: str, head: list[str], rows: list[list[str]], foot: str = "") -> str:
    """A table of escaped cells: ``caption``, the header row, the rows, a note below."""
    out = [f'<div class="quiver-repr"><div style="font-family:monospace;font-weight:bold">{escape(caption)}</div>']
    out.append(f'<table style="{_TABLE}"><thead><tr>')
    out += [f'<th style="{_CELL}">{escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f'<td style="{_CELL}">{escape(c)}</td>' for c in r) + "</tr>")
    out.append("</tbody></table>")
    if foot:
        out.append(f'<div style="font-family:monospace;font-size:12px;color:#555">{escape(foot)}</div>')
    out.append("</div>")
    return "".join(out)


def _shape(t: torch.Tensor) -> str:
    return dims_text(tuple(t.shape))


def _value(t: torch.Tensor) -> str:
    """The value of a 0-dim field, else empty."""
    if t.dim() != 0:
        return ""
    return repr(t.item())


def model_rows(m) -> list[list[str]]:
    """One row per field of a model instance (sub-models' fields by their
    dotted path, params before buffers): field, kind, shape, dtype, count, value."""
    cls = type(m)
    n_params = len(cls._qv_leaf_paths)
    rows = []
    for i, (path, t) in enumerate(zip(cls._qv_all_fields, m._qv_all_tensors())):
        kind = "param" if i < n_params else "buffer"
        rows.append([path, kind, _shape(t), dtype_name(t.dtype), str(t.numel()), _value(t)])
    return rows


def param_count(m) -> int:
    """The number of trainable numbers: the elements of every param leaf."""
    return sum(t.numel() for t in m._qv_tensors)


def model_html(m) -> str:
    cls = type(m)
    rows = model_rows(m)
    n_params = param_count(m)
    n_buffers = sum(t.numel() for t in m._qv_buffer_tensors())
    dev = cls._qv_torch_device
    where = "" if dev.type == "cpu" else f" on {dev}"
    foot = f"{n_params:,} params" + (f", {n_buffers:,} buffer values" if n_buffers else "")
    return _table(f"model {cls._qv_name}{where}", ["field", "kind", "shape", "dtype", "count", "value"], rows, foot)


def grad_rows(g) -> list[list[str]]:
    """One row per field of a gradient: field, shape, dtype, norm (2-norm)."""
    lay = g._qv_layout
    rows = []
    for path, t in zip(lay.paths, g._qv_values):
        norm = torch.linalg.vector_norm(t.detach().to(torch.float64)).item() if t.numel() else 0.0
        rows.append([path, _shape(t), dtype_name(t.dtype), f"{norm:.6g}"])
    return rows


def grad_html(g) -> str:
    rows = grad_rows(g)
    total = sum(float(r[3]) ** 2 for r in rows) ** 0.5
    return _table(g._qv_layout.text, ["field", "shape", "dtype", "norm"], rows, f"total norm {total:.6g}")


# ---------------------------------------------------------------- errors and diagnostics


@dataclass(frozen=True)
class SourceMark:
    """A place in a cell or file: where (``<cell 3>``), 1-based line and
    column, the source line and how many characters to underline."""

    where: str
    line: int
    col: int
    text: str = ""
    width: int = 1

    def header(self) -> str:
        return f"{self.where}:{self.line}:{self.col}"

    def caret_lines(self) -> list[str]:
        """The source line and a line of carets under the marked range."""
        if not self.text:
            return []
        line = self.text.rstrip("\n").expandtabs(1)
        start = max(self.col - 1, 0)
        width = max(1, min(self.width, max(len(line) - start, 1)))
        return [f"    {line}", "    " + " " * start + "^" * width]


@dataclass(frozen=True)
class Report:
    """One message at a place: a diagnostic (``code``, ``severity``) or a run-time error."""

    severity: str  # "error", "warning", "info", "hint"
    message: str
    mark: SourceMark | None = None
    code: str = ""
    notes: tuple[str, ...] = ()

    def text_lines(self) -> list[str]:
        code = f" {self.code}" if self.code else ""
        head = f"{self.mark.header()}: " if self.mark is not None else ""
        out = [f"{head}{self.severity}{code}: {self.message}"]
        if self.mark is not None:
            out += self.mark.caret_lines()
        out += [f"  {n}" for n in self.notes]
        return out


_COLOURS = {"error": "#c00", "warning": "#b60", "info": "#06c", "hint": "#666"}


def _report_html(r: Report) -> str:
    colour = _COLOURS.get(r.severity, "#333")
    code = f" {r.code}" if r.code else ""
    head = f"{r.mark.header()}: " if r.mark is not None else ""
    out = [
        f'<div><span style="color:#555">{escape(head)}</span>'
        f'<span style="color:{colour};font-weight:bold">{escape(r.severity + code)}</span>: {escape(r.message)}</div>'
    ]
    if r.mark is not None and r.mark.text:
        src, carets = r.mark.caret_lines()
        out.append(f"<div>{escape(src)}</div>")
        out.append(f'<div style="color:{colour}">{escape(carets)}</div>')
    out += [f'<div style="color:#555">{escape("  " + n)}</div>' for n in r.notes]
    return "".join(out)


@dataclass(frozen=True)
class DiagnosticsView:
    """What the checker said about a cell (or a run-time error, one report):
    shown as text with carets, or as HTML in a notebook."""

    reports: tuple[Report, ...] = field(default_factory=tuple)

    def __repr__(self) -> str:
        return "\n".join(line for r in self.reports for line in r.text_lines())

    def _repr_pretty_(self, p, cycle) -> None:  # IPython's text display
        p.text(repr(self))

    def _repr_html_(self) -> str:
        body = "".join(f'<div style="margin:4px 0">{_report_html(r)}</div>' for r in self.reports)
        return (
            f'<div class="quiver-diagnostics" style="font-family:monospace;white-space:pre;font-size:12px">{body}</div>'
        )


class ErrorView(DiagnosticsView):
    """A run-time error from compiled code, at its ``.qv`` (cell) line."""

    def __init__(self, report: Report) -> None:
        super().__init__((report,))
