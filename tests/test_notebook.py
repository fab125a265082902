"""A real notebook, executed by nbclient in a real IPython kernel: `%load_ext
quiver`, `%%quiver` cells that define a model, a train step and a gradient
(one imports a .qv file next to the notebook), trained a few steps from a
Python cell and compared with the same computation in torch; a cell with a
shape error shows the diagnostic with carets and stops; a cell edited and
run again replaces its definitions and converts the model made before (or
refuses it, naming the cell, when its fields no longer fit); a run-time
error names the cell and line."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

SCALING = "fn double(x: [n k]) -> [n k]:\n    return x * 2.0\n"

MODEL = """\
%%quiver
from scaling import double

dim F = 3

model Linear:
    param w: [F 1] = zeros
    param b: [1] = zeros

fn predict(m: Linear, x: [n F]) -> [n 1]:
    return double(x @ m.w) + m.b
"""

TRAIN = """\
%%quiver
fn loss(m: Linear, x: [n F], y: [n 1]) -> [] NonNeg:
    return mse(predict(m, x), y)

fn train_step(mut m: Linear, x: [n F], y: [n 1], lr: Float) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    m -= lr * g
    return l

fn gradient(m: Linear, x: [n F], y: [n 1]) -> Grad[Linear]:
    l, g = value_and_grad(loss, m, x, y)
    return g
"""

COMPARE = """\
import torch
x = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
y = x @ torch.ones(3, 1) + 0.5
m = Linear.init(seed=0)
losses = [float(train_step(m, x, y, 0.05)) for _ in range(5)]
# the same computation, in torch
w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
ref = []
for _ in range(5):
    l = torch.mean((2 * (x @ w) + b - y) ** 2)
    ref.append(l.item())
    gw, gb = torch.autograd.grad(l, [w, b])
    with torch.no_grad():
        w -= 0.05 * gw
        b -= 0.05 * gb
assert all(abs(a - r) <= 1e-5 * max(1.0, abs(r)) for a, r in zip(losses, ref)), (losses, ref)
assert torch.allclose(m.w, w.detach(), atol=1e-6) and torch.allclose(m.b, b.detach(), atol=1e-6)
print("MATCH", json.dumps(losses))
"""

BAD = """\
%%quiver
fn wrong(m: Linear, x: [n F]) -> [n F]:
    return predict(m, x)
"""

# MODEL edited: no doubling, the same fields (instances made before convert)
MODEL_EDITED = MODEL.replace("return double(x @ m.w) + m.b", "return x @ m.w + m.b")
# MODEL edited again: a new field (instances made before are refused)
MODEL_GROWN = MODEL_EDITED.replace("    param b: [1] = zeros\n", "    param b: [1] = zeros\n    param s: [1] = ones\n")


def text_of(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "stream":
            out.append(o["text"])
        elif o["output_type"] in ("display_data", "execute_result"):
            out.append(o["data"].get("text/plain", ""))
        elif o["output_type"] == "error":
            out.append(f"{o['ename']}: {o['evalue']}\n" + "\n".join(o["traceback"]))
    return "\n".join(out)


def html_of(cell) -> str:
    return "\n".join(
        o["data"].get("text/html", "")
        for o in cell.get("outputs", [])
        if o["output_type"] in ("display_data", "execute_result")
    )


def errors(cell) -> list:
    return [o for o in cell.get("outputs", []) if o["output_type"] == "error"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nb")
    (folder / "scaling.qv").write_text(SCALING)
    nb = nbformat.v4.new_notebook()
    cells = [
        nbformat.v4.new_code_cell("%load_ext quiver"),  # In [1]
        nbformat.v4.new_code_cell(MODEL),  # 2
        nbformat.v4.new_code_cell(TRAIN),  # 3
        nbformat.v4.new_code_cell("import json\n" + COMPARE),  # 4
        nbformat.v4.new_code_cell("m"),  # 5
        nbformat.v4.new_code_cell("gradient(m, x, y)"),  # 6
        nbformat.v4.new_code_cell(BAD),  # 7: stops
        nbformat.v4.new_code_cell("predict(m, torch.ones(4, 5))"),  # 8: a run-time error
    ]
    nb.cells = cells
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    stopped = {}
    with client.setup_kernel():
        for i in range(6):
            client.execute_cell(cells[i], i)
        with pytest.raises(CellExecutionError) as e:  # what stops "run all"
            client.execute_cell(cells[6], 6)
        stopped["error"] = str(e.value)
        with pytest.raises(CellExecutionError):
            client.execute_cell(cells[7], 7)
        # cell 2 edited and run again: In [9]
        cells[1].source = MODEL_EDITED
        client.execute_cell(cells[1], 1)
        after = nbformat.v4.new_code_cell(
            "print('SAME', type(m) is Linear)\n"
            "print('VALUE', float((predict(m, x) - (x @ m.w + m.b)).abs().max()))\n"
            "print('STEP', float(train_step(m, x, y, 0.05)) >= 0)"
        )
        nb.cells.append(after)
        client.execute_cell(after, len(nb.cells) - 1)
        cells[1].source = MODEL_GROWN
        client.execute_cell(cells[1], 1)  # In [11]: loss, train_step, gradient still check against it
        refused = nbformat.v4.new_code_cell("predict(m, x)")
        nb.cells.append(refused)
        with pytest.raises(CellExecutionError):
            client.execute_cell(refused, len(nb.cells) - 1)
        fresh = nbformat.v4.new_code_cell("print('FRESH', predict(Linear.init(seed=0), x).shape)")
        nb.cells.append(fresh)
        client.execute_cell(fresh, len(nb.cells) - 1)
        caught = nbformat.v4.new_code_cell(
            "try:\n    predict(Linear.init(seed=0), torch.ones(4, 5))\n"
            "except Exception as e:\n    print('CAUGHT', type(e).__name__, e)"
        )
        nb.cells.append(caught)
        client.execute_cell(caught, len(nb.cells) - 1)
    return nb, stopped


def test_trains_and_matches_torch(ran):
    nb, _ = ran
    out = text_of(nb.cells[3])
    match = re.search(r"MATCH (\[.*\])", out)
    assert match, out
    losses = json.loads(match.group(1))
    assert len(losses) == 5 and losses[-1] < losses[0]


def test_model_and_gradient_display(ran):
    nb, _ = ran
    html = html_of(nb.cells[4])
    assert "model Linear" in html and "4 params" in html
    assert re.search(r"<td[^>]*>w</td><td[^>]*>param</td><td[^>]*>\[3 1\]</td><td[^>]*>f32</td>", html), html
    ghtml = html_of(nb.cells[5])
    assert "Grad[Linear]" in ghtml and re.search(r"<td[^>]*>b</td><td[^>]*>\[1\]</td>", ghtml), ghtml


def test_shape_error_shows_carets_and_stops(ran):
    nb, stopped = ran
    cell = nb.cells[6]
    out = text_of(cell)
    expected = (
        "<cell 7>:3:12: error E0201: return value: expected [n F], found [n 1]\n"
        "        return predict(m, x)\n"
        "               ^^^^^^^^^^^^^"
    )
    assert expected in out, out
    (err,) = errors(cell)
    assert err["ename"] == "CellFailed" and err["evalue"] == "1 error in <cell 7>"
    assert "CellFailed" in stopped["error"]
    assert "&lt;cell 7&gt;:3:12" in html_of(cell)  # escaped in the HTML view


def test_run_time_error_names_the_cell_line(ran):
    nb, _ = ran
    out = text_of(nb.cells[7])
    assert "<cell 2>:10:23: error: predict(): argument 'x' expected [n 3] f32, found [4 5] f32" in out, out
    assert "    fn predict(m: Linear, x: [n F]) -> [n 1]:\n" + " " * 26 + "^" in out


def test_a_caught_error_s_message_names_the_cell_line(ran):
    nb, _ = ran
    # the exception's own text, as a user's `except` prints it: the cell
    # that defines predict now (In [11], one field longer) and its line
    out = text_of(nb.cells[-1])
    assert out == "CAUGHT CheckError <cell 11>:11: predict(): argument 'x' expected [n 3] f32, found [4 5] f32\n"


def test_rerun_replaces_definitions_and_converts_instances(ran):
    nb, _ = ran
    out = text_of(nb.cells[8])
    assert "SAME True" in out and "VALUE 0.0" in out and "STEP True" in out, out


def test_rerun_refuses_an_instance_that_no_longer_fits(ran):
    nb, _ = ran
    out = text_of(nb.cells[9])
    assert "predict(): argument 'm' expected model Linear, found model Linear" in out, out
    assert "field s is new" in out and "<cell 11>" in out
    assert "FRESH torch.Size([64, 1])" in text_of(nb.cells[10])
