"""`quiver plot RUN.csv [-o OUT.png]` (issue 26): one subplot per metric whose
line holds exactly the CSV's points (a metric that first appears later
included), a PNG written, and one-line errors for a missing or bad CSV."""

from __future__ import annotations

from pathlib import Path

import pytest

from quiver.cli import main as quiver_main
from quiver.plot import figure, read_metrics

CSV = "step,loss,acc,val\n0,2.5,0.1,\n1,1.25,0.5,\n2,0.625,,3.5\n2,,0.75,\n3,nan,1,4\n"


def test_the_figure_holds_the_csvs_points(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text(CSV, encoding="utf-8")
    series = read_metrics(str(path))
    fig = figure(series)
    lines = {ax.get_ylabel(): ax.get_lines()[0] for ax in fig.axes}
    assert sorted(lines) == ["acc", "loss", "val"]
    want = {
        "loss": ([0, 1, 2, 3], [2.5, 1.25, 0.625, float("nan")]),
        "acc": ([0, 1, 2, 3], [0.1, 0.5, 0.75, 1.0]),
        "val": ([2, 3], [3.5, 4.0]),
    }
    for name, (steps, values) in want.items():
        xs, ys = lines[name].get_xdata(), lines[name].get_ydata()
        assert list(xs) == steps
        assert [repr(float(y)) for y in ys] == [repr(v) for v in values]  # nan included
    assert [ax.get_xlabel() for ax in fig.axes][-1] == "step"


def test_plot_writes_a_png(tmp_path: Path, capsys) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text(CSV, encoding="utf-8")
    out = tmp_path / "out.png"
    assert quiver_main(["plot", str(path), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000
    assert f"quiver: wrote {out} (loss, acc, val)" in capsys.readouterr().err
    # without -o: beside the CSV
    assert quiver_main(["plot", str(path)]) == 0
    assert (tmp_path / "metrics.png").stat().st_size > 1000


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "cannot read {p}: No such file or directory"),
        ("", "{p} is not a metrics CSV: its header must be step,<name>,... (as log(...) writes it)"),
        ("epoch,loss\n0,1\n", "{p} is not a metrics CSV: its header must be step,<name>,... (as log(...) writes it)"),
        ("step,loss\n0,abc\n", "{p}:2: the value 'abc' of loss is not a number"),
        ("step,loss\nx,1\n", "{p}:2: the step 'x' is not an integer"),
        ("step,loss\n0,1,2\n", "{p}:2: 3 cells, the header has 2"),
        ("step,loss\n", "{p} has no values to plot"),
        (b"\xff\xfe\x00", "{p} is not a text file"),
    ],
)
def test_a_missing_or_bad_csv_is_one_line_and_no_image(tmp_path: Path, capsys, text, message: str) -> None:
    path = tmp_path / "m.csv"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    assert quiver_main(["plot", str(path), "-o", str(tmp_path / "o.png")]) == 2
    assert capsys.readouterr().err == f"quiver: {message.format(p=path)}\n"
    assert not (tmp_path / "o.png").exists()


def test_an_image_that_cannot_be_written(tmp_path: Path, capsys) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text(CSV, encoding="utf-8")
    assert quiver_main(["plot", str(path), "-o", str(tmp_path / "no" / "such" / "o.png")]) == 2
    assert capsys.readouterr().err.startswith("quiver: cannot write ")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path, capsys) -> None:
    import os

    fifo = tmp_path / "metrics.csv"
    os.mkfifo(fifo)
    assert quiver_main(["plot", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.csv"]
