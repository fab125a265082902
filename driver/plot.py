"""`quiver plot RUN.csv [-o OUT.png]`: the curves of a run's metrics.

Reads the `metrics.csv` that `log(...)` writes (runtime/_metrics.py: a header
`step,<name>,...`, one row per logged step, empty cells where a row has no
value of a metric) and draws one subplot per metric, its values against the
step, to a PNG with matplotlib's Agg backend (no display needed). The image
goes to OUT.png, or beside the CSV with the extension .png, through
driver/outputs.py: replaced whole, never written through a symbolic link at
that name (a link there is an error that names it).

Errors are one line, exit status 2, nothing written: a file that cannot be
read, one that is not such a CSV (no `step` column first, a cell that is not
a number), a CSV without any value, matplotlib not installed.
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
from dataclasses import dataclass

from . import outputs
from .inputs import read_source


class PlotError(Exception):
    """Why a CSV cannot be plotted, in words."""


@dataclass(frozen=True)
class Series:
    """One metric: its steps and values, in the file's order."""

    name: str
    steps: tuple[int, ...]
    values: tuple[float, ...]


MAX_CSV_BYTES = 1 << 30  # a long run logs many rows; a larger file is not a metrics log


def read_metrics(path: str) -> list[Series]:
    """The metrics of a CSV, in the order of its columns; a metric without any
    value is left out."""
    try:
        # a regular file only (a FIFO would block), read as the sources are
        data = read_source(path, limit=MAX_CSV_BYTES).decode("utf-8")
        rows = list(csv.reader(io.StringIO(data, newline="")))
    except UnicodeDecodeError:
        raise PlotError(f"{path} is not a text file") from None
    except OSError as e:
        raise PlotError(f"cannot read {path}: {e.strerror or e}") from None
    except csv.Error as e:
        raise PlotError(f"{path} is not a CSV file: {e}") from None
    if not rows or not rows[0] or rows[0][0].strip() != "step" or len(rows[0]) < 2:
        raise PlotError(f"{path} is not a metrics CSV: its header must be step,<name>,... (as log(...) writes it)")
    names = [n.strip() for n in rows[0][1:]]
    points: list[tuple[list[int], list[float]]] = [([], []) for _ in names]
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) > len(names) + 1:
            raise PlotError(f"{path}:{line}: {len(row)} cells, the header has {len(names) + 1}")
        try:
            step = int(row[0])
        except ValueError:
            raise PlotError(f"{path}:{line}: the step {row[0]!r} is not an integer") from None
        for i, cell in enumerate(row[1:]):
            if cell.strip() == "":
                continue
            try:
                value = float(cell)
            except ValueError:
                raise PlotError(f"{path}:{line}: the value {cell!r} of {names[i]} is not a number") from None
            points[i][0].append(step)
            points[i][1].append(value)
    series = [Series(n, tuple(s), tuple(v)) for n, (s, v) in zip(names, points) if s]
    if not series:
        raise PlotError(f"{path} has no values to plot")
    return series


def figure(series: list[Series], title: str = ""):
    """The matplotlib figure: one subplot per metric, stacked, sharing the step axis."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 2.6 * len(series) + 0.6), layout="constrained")
    axes = fig.subplots(len(series), 1, sharex=True, squeeze=False)[:, 0]
    for ax, s in zip(axes, series):
        ax.plot(s.steps, s.values, label=s.name, marker="." if len(s.steps) < 50 else None)
        ax.set_ylabel(s.name)
        ax.grid(True, alpha=0.3)
        finite = [v for v in s.values if math.isfinite(v)]
        if finite and min(finite) > 0 and max(finite) / min(finite) > 1e3:
            ax.set_yscale("log")  # a loss falling over orders of magnitude
    axes[-1].set_xlabel("step")
    if title:
        fig.suptitle(title)
    return fig


def run(csv_path: str, output: str | None) -> int:
    """`quiver plot`: the exit status."""
    out = output if output is not None else os.path.splitext(csv_path)[0] + ".png"
    try:
        series = read_metrics(csv_path)
    except PlotError as e:
        print(f"quiver: {e}", file=sys.stderr)
        return 2
    try:
        fig = figure(series, title=os.path.basename(os.path.dirname(os.path.abspath(csv_path))))
    except ImportError:
        print("quiver: quiver plot needs matplotlib: pip install 'quiver-lang[metrics]'", file=sys.stderr)
        return 2
    try:
        with outputs.replacing(out) as fh:  # never through a link at OUT.png, replaced whole
            fig.savefig(fh, format="png", dpi=100)
    except OSError as e:
        print(f"quiver: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"quiver: wrote {out} ({', '.join(s.name for s in series)})", file=sys.stderr)
    return 0
