"""The notebook displays of runtime/_display.py: the rows of a model's and a
gradient's table (exact shapes, counts, norms), the text with carets of a
diagnostic, and HTML in which every piece of text is escaped."""

from __future__ import annotations

import math

import torch

from quiver import runtime as rt
from quiver.runtime import _display as D


class Small(rt.Model):
    _qv_name = "Small"
    _qv_params = (rt.Field("w", (2, 3), rt.f32), rt.Field("b", (3,), rt.f32))
    _qv_buffers = (rt.Field("steps", (), rt.i64),)


class Sneaky(rt.Model):
    _qv_name = "<script>alert(1)</script>"
    _qv_params = (rt.Field("w", (1,), rt.f32),)


def test_model_rows_count_and_html():
    m = Small.init(seed=0)
    assert D.model_rows(m) == [
        ["w", "param", "[2 3]", "f32", "6", ""],
        ["b", "param", "[3]", "f32", "3", ""],
        ["steps", "buffer", "[]", "i64", "1", "0"],
    ]
    assert D.param_count(m) == 9
    html = m._repr_html_()
    assert "model Small" in html and "9 params, 1 buffer values" in html
    assert html.count("<tr>") == 4  # the header and three fields
    assert repr(m).startswith("Small(param w: [2 3] f32")


def test_model_html_escapes_names():
    html = Sneaky.init(seed=0)._repr_html_()
    assert "<script>" not in html
    assert "model &lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_grad_rows_norms():
    g = rt.Grad(Small, {"w": torch.full((2, 3), 2.0), "b": torch.tensor([3.0, 4.0, 0.0])})
    assert D.grad_rows(g) == [["w", "[2 3]", "f32", f"{math.sqrt(24):.6g}"], ["b", "[3]", "f32", "5"]]
    html = g._repr_html_()
    assert "Grad[Small]" in html and "total norm 7" in html
    assert html.count("<tr>") == 3


def test_diagnostics_view_text_and_escaped_html():
    mark = D.SourceMark("<cell 3>", 2, 12, "    return a & b", 5)
    view = D.DiagnosticsView((D.Report("error", "expected <[D]>, found [D D]", mark, "E0201"),))
    assert repr(view) == (
        "<cell 3>:2:12: error E0201: expected <[D]>, found [D D]\n        return a & b\n               ^^^^^"
    )
    html = view._repr_html_()
    assert "&lt;cell 3&gt;:2:12: " in html and "expected &lt;[D]&gt;, found [D D]" in html
    assert "return a &amp; b" in html and "<cell" not in html


def test_caret_width_is_cut_at_the_line_end():
    mark = D.SourceMark("f.qv", 1, 5, "abcdef", 40)
    assert mark.caret_lines() == ["    abcdef", "        ^^"]


def test_error_view_notes():
    view = D.ErrorView(
        D.Report("error", "boom", D.SourceMark("<cell 2>", 4, 1, "x", 1), notes=("called from <cell 5>:2:5 (in f)",))
    )
    assert repr(view).splitlines() == [
        "<cell 2>:4:1: error: boom",
        "    x",
        "    ^",
        "  called from <cell 5>:2:5 (in f)",
    ]
