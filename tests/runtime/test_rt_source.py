"""Source mapping: from an exception in compiled code to its .qv location."""

from __future__ import annotations

import importlib.util
import io
import os
import traceback

import torch
from rt_support import FIXTURES, compile_text

from quiver import runtime as rt

KITCHEN = os.path.join(FIXTURES, "kitchen.qv")


def raised(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # any error: the tests check which
        return exc
    raise AssertionError("nothing raised")


def test_locations_and_the_line_map():
    src = rt.SourceFile("/abs/dir/prog.qv")
    loc = src.loc(14, 9)
    assert loc == rt.Loc("/abs/dir/prog.qv", 14, 9)
    assert str(loc) == "/abs/dir/prog.qv:14:9" and loc.filename == "prog.qv"
    src.set_line_map({10: (3, 1), 12: (4, 5), 20: (9, 2)})
    assert src.map_line(12) == rt.Loc("/abs/dir/prog.qv", 4, 5)
    assert src.map_line(15) == rt.Loc("/abs/dir/prog.qv", 4, 5)  # nearest line above
    assert src.map_line(9) is None
    assert rt.compiled_filename("/abs/dir/prog.qv") == "/abs/dir/prog.qv"  # compiled at .qv lines
    assert rt.mapped_filename("/abs/dir/prog.qv") == "<quiver:/abs/dir/prog.qv>"  # no line map: Python lines
    assert rt.SourceFile.compiled_filename("/abs/dir/prog.qv") == src.code_filename


def test_a_torch_error_maps_to_the_innermost_qv_line(kitchen):
    exc = raised(kitchen.boom, torch.ones(3), torch.ones(4))
    assert type(exc) is RuntimeError
    assert rt.qv_location(exc) == rt.Loc(KITCHEN, 31, 12)
    assert rt.format_error(exc, relative_to=FIXTURES) == (f"kitchen.qv:31:12: error: RuntimeError: {exc}")


def test_the_qv_traceback(kitchen):
    exc = raised(kitchen.outer, torch.ones(3), torch.ones(4))
    frames = rt.qv_traceback(exc)
    assert [(f.function, f.loc.line, f.loc.col) for f in frames] == [("outer", 34, 12), ("boom", 31, 12)]
    text = rt.format_error(exc, traceback=True, relative_to=FIXTURES)
    assert text.splitlines() == [
        f"kitchen.qv:31:12: error: RuntimeError: {exc}",
        "  kitchen.qv:31:12: in boom",
        "  kitchen.qv:34:12: in outer",
    ]


def test_a_check_error_reports_the_parameter(mlp):
    m = mlp.Mlp.init(seed=0)
    exc = raised(mlp.forward, m, torch.zeros(64, 10), rt.Eval)
    assert rt.qv_location(exc) == mlp._src.loc(13, 20)
    assert rt.format_error(exc, relative_to=FIXTURES) == (
        "mlp.qv:13:20: error: forward(): argument 'x' expected [b 784] f32, found [64 10] f32"
    )


def test_an_error_inside_value_and_grad_maps_through_the_runtime(mlp):
    m = mlp.Mlp.init(seed=0)
    rt.checks.enabled = False
    try:
        exc = raised(mlp.train_step, m, torch.zeros(4, 784), torch.zeros(4, dtype=torch.int64) + 20, 0.1, 0)
    finally:
        rt.checks.enabled = True
    frames = rt.qv_traceback(exc)
    assert [f.function for f in frames] == ["train_step", "loss"]
    assert rt.qv_location(exc) == mlp._src.loc(19, 12)


def test_paths_below_the_working_directory_are_shown_relative(kitchen, monkeypatch):
    exc = raised(kitchen.boom, torch.ones(3), torch.ones(4))
    monkeypatch.chdir(os.path.dirname(FIXTURES))
    assert rt.format_error(exc).startswith(os.path.join("fixtures", "kitchen.qv") + ":31:12: error:")
    assert rt.format_error(exc, relative_to="/nonexistent/elsewhere").startswith(KITCHEN + ":31:12: error:")


def test_a_grad_error_in_compiled_code(tmp_path):
    qv = str(tmp_path / "g.qv")
    code = compile_text(
        "from quiver import runtime as rt\n"
        '_src = rt.SourceFile("@QV_PATH@")\n'
        "def bad(g):\n"
        "    return g * g  # qv 5:12\n",
        qv,
    )
    module = rt.load_compiled(code, qv)
    g = rt.Grad(type("M", (rt.Model,), {"_qv_params": (rt.Field("w", (1,), rt.f32),)}), {"w": torch.ones(1)})
    exc = raised(module.bad, g)
    assert isinstance(exc, rt.GradError)
    assert rt.format_error(exc, relative_to=str(tmp_path)).startswith(
        "g.qv:5:12: error: unsupported operation on gradients: Grad[M] * Grad[M]"
    )


def test_errors_outside_compiled_code_have_no_location():
    exc = raised(lambda: 1 / 0)
    assert rt.qv_location(exc) is None
    assert rt.format_error(exc) == "error: ZeroDivisionError: division by zero"


def test_compiled_modules_imported_as_plain_python_files(tmp_path):
    # a compiled module written to disk and imported normally: found through its `_src`
    qv = os.path.join(FIXTURES, "kitchen.qv")
    with open(os.path.join(FIXTURES, "kitchen_compiled.py"), encoding="utf-8") as fh:
        text = compile_text(fh.read(), qv)
    path = tmp_path / "kitchen_on_disk.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("kitchen_on_disk", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    exc = raised(module.outer, torch.ones(3), torch.ones(4))
    assert rt.qv_location(exc) == rt.Loc(qv, 31, 12)


def test_load_compiled_registers_the_source_for_tracebacks(kitchen):
    exc = raised(kitchen.boom, torch.ones(3), torch.ones(4))
    text = "".join(traceback.format_exception(exc))
    assert "return z + y" in text
    assert kitchen.__file__ == rt.compiled_filename(KITCHEN)


def test_run_main_prints_the_error_at_its_qv_location(tmp_path):
    qv = str(tmp_path / "run.qv")
    code = compile_text(
        "import torch\n"
        "from quiver import runtime as rt\n"
        '_src = rt.SourceFile("@QV_PATH@")\n'
        "def main():\n"
        "    rt.print('hello')  # qv 2:5\n"
        "    x = torch.ones(2) @ torch.ones(3)  # qv 3:9\n",
        qv,
    )
    module = rt.load_compiled(code, qv)
    err = io.StringIO()
    assert rt.run_main(module, stream=err, relative_to=str(tmp_path)) == 1
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("run.qv:3:9: error: RuntimeError: ")
    assert lines[1] == "  run.qv:3:9: in main"


def test_run_main_succeeds(tmp_path, capsys):
    qv = str(tmp_path / "ok.qv")
    code = compile_text(
        "from quiver import runtime as rt\n"
        '_src = rt.SourceFile("@QV_PATH@")\n'
        "def main():\n"
        "    rt.print('fine')  # qv 2:5\n",
        qv,
    )
    assert rt.run_main(rt.load_compiled(code, qv)) == 0
    assert capsys.readouterr().out == "fine\n"
