"""The data readers (runtime/_data.py): .npy, .npz, .safetensors, CSV and text,
with the sizes of the file, the spec's checks and the messages of each failure."""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file as save_numpy
from safetensors.torch import save_file as save_torch

from quiver import runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def spec(dims, elem=rt.f32):
    return rt.TensorArg("data", dims, elem)


@pytest.fixture
def prog(tmp_path):
    """A .qv file's SourceFile in tmp_path, whose data lives in tmp_path/data."""
    (tmp_path / "data").mkdir()
    return rt.SourceFile(str(tmp_path / "prog.qv"))


def at(prog, line=7, col=9):
    return {"src": prog, "line": line, "col": col}


def fails(fn, *args, **kwargs) -> rt.CheckError:
    with pytest.raises(rt.CheckError) as info:
        fn(*args, **kwargs)
    return info.value


def message(prog, fn, *args, line=7, col=9, **kwargs) -> str:
    """The message of the CheckError the call raises at prog.qv:line:col."""
    exc = fails(fn, *args, **at(prog, line, col), **kwargs)
    assert exc.loc == rt.Loc(prog.path, line, col)
    assert str(exc) == f"prog.qv:{line}: {exc.detail}"
    return exc.detail


def data(prog, name) -> str:
    return os.path.join(os.path.dirname(prog.path), "data", name)


# --- .npy and .npz ------------------------------------------------------------------


def test_npy_round_trip_with_the_sizes_of_the_file(prog):
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    np.save(data(prog, "x.npy"), x)
    t = rt.load_npy("data/x.npy", spec(("n", 3)), **at(prog))
    assert t.dtype is torch.float32 and t.shape == (4, 3)
    assert torch.equal(t, torch.from_numpy(x))
    t = rt.load_npy("data/x.npy", spec((4, "f")), **at(prog))  # a static first dim, a run-time second
    assert torch.equal(t, torch.from_numpy(x))


def test_npz_round_trip_of_each_array(prog):
    x = np.linspace(-1, 1, 10, dtype=np.float64).reshape(5, 2)
    y = np.array([3, 0, 2, 2, 1], dtype=np.int64)
    np.savez(data(prog, "plain.npz"), x=x, y=y)
    np.savez_compressed(data(prog, "small.npz"), x=x, y=y)
    for name in ("plain.npz", "small.npz"):
        tx = rt.load_npz(f"data/{name}", "x", spec(("n", 2), rt.f64), **at(prog))
        ty = rt.load_npz(f"data/{name}", "y", spec(("n",), rt.index(4)), **at(prog))
        assert tx.dtype is torch.float64 and torch.equal(tx, torch.from_numpy(x))
        assert ty.dtype is torch.int64 and ty.tolist() == [3, 0, 2, 2, 1]


def test_a_zero_dim_array_and_an_empty_one(prog):
    np.save(data(prog, "s.npy"), np.float64(2.5))
    np.save(data(prog, "e.npy"), np.zeros((0, 4), dtype=np.float32))
    s = rt.load_npy("data/s.npy", spec(()), **at(prog))
    assert s.shape == () and s.item() == 2.5 and s.dtype is torch.float32
    e = rt.load_npy("data/e.npy", spec(("n", 4)), **at(prog))
    assert e.shape == (0, 4)


def test_a_big_endian_array_reads_its_values(prog):
    np.save(data(prog, "be.npy"), np.array([1.5, -2.0], dtype=">f8"))
    np.save(data(prog, "bei.npy"), np.array([1, 7], dtype=">i4"))
    assert rt.load_npy("data/be.npy", spec(("n",)), **at(prog)).tolist() == [1.5, -2.0]
    assert rt.load_npy("data/bei.npy", spec(("n",), rt.index(8)), **at(prog)).tolist() == [1, 7]


def test_a_static_dim_that_does_not_match(prog):
    np.savez(data(prog, "digits.npz"), x=np.zeros((1797, 63), dtype=np.uint8))
    got = message(prog, rt.load_npz, "data/digits.npz", "x", spec(("n", 64)))
    assert got == "data/digits.npz['x']: expected [n 64], found [1797 63]"


def test_a_wrong_rank(prog):
    np.save(data(prog, "x.npy"), np.zeros((5,), dtype=np.float32))
    assert message(prog, rt.load_npy, "data/x.npy", spec(("n", 3))) == "data/x.npy: expected [n 3], found [5]"
    np.save(data(prog, "m.npy"), np.zeros((2, 3, 4), dtype=np.float32))
    assert message(prog, rt.load_npy, "data/m.npy", spec(("n", 3))) == "data/m.npy: expected [n 3], found [2 3 4]"


def test_a_name_written_twice_is_one_size(prog):
    np.save(data(prog, "sq.npy"), np.eye(3, dtype=np.float32))
    assert rt.load_npy("data/sq.npy", spec(("n", "n")), **at(prog)).shape == (3, 3)
    np.save(data(prog, "r.npy"), np.zeros((3, 4), dtype=np.float32))
    got = message(prog, rt.load_npy, "data/r.npy", spec(("n", "n")))
    assert got == "data/r.npy: expected [n n], found [3 4] (dim n is both 3 and 4)"


def test_a_missing_key_lists_the_keys_there_are(prog):
    np.savez(data(prog, "d.npz"), x=np.zeros(2), y=np.zeros(2))
    got = message(prog, rt.load_npz, "data/d.npz", "labels", spec(("n",)))
    assert got == "data/d.npz has no array 'labels' (its arrays: 'x', 'y')"
    np.savez(data(prog, "none.npz"))
    got = message(prog, rt.load_npz, "data/none.npz", "x", spec(("n",)))
    assert got == "data/none.npz has no array 'x' (its arrays: none)"


def test_a_missing_file_says_where_it_looked(prog):
    got = message(prog, rt.load_npz, "data/digitz.npz", "x", spec(("n", 64)))
    assert got == f"data/digitz.npz: no such file (looked for {data(prog, 'digitz.npz')})"
    got = message(prog, rt.load_npy, "nope/x.npy", spec(("n",)))
    assert got.startswith("nope/x.npy: no such file (looked for ")
    absolute = data(prog, "absent.npy")
    assert message(prog, rt.load_npy, absolute, spec(("n",))) == f"{absolute}: no such file"


def test_not_a_regular_file(prog):
    assert message(prog, rt.load_npy, "data", spec(("n",))) == "data: not a regular file (a folder)"
    os.mkfifo(data(prog, "pipe.npy"))  # never opened: reading a FIFO would wait
    got = message(prog, rt.load_npy, "data/pipe.npy", spec(("n",)))
    assert got == "data/pipe.npy: not a regular file (a FIFO)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_an_unreadable_file(prog):
    path = data(prog, "secret.npy")
    np.save(path, np.zeros(2))
    os.chmod(path, 0)
    assert message(prog, rt.load_npy, "data/secret.npy", spec(("n",))) == (
        "data/secret.npy: cannot read it: Permission denied"
    )


def test_corrupt_and_mistaken_files(prog):
    with open(data(prog, "text.npz"), "w") as fh:
        fh.write("x,y\n1,2\n")
    got = message(prog, rt.load_npz, "data/text.npz", "x", spec(("n",)))
    assert got == "data/text.npz: not a valid .npz file (it does not start as a zip archive does)"
    got = message(prog, rt.load_npy, "data/text.npz", spec(("n",)))
    assert got == "data/text.npz: not a valid .npy file (it does not start as an .npy file does)"
    np.savez(data(prog, "cut.npz"), x=np.arange(1000))
    with open(data(prog, "cut.npz"), "rb") as fh:
        head = fh.read(200)
    with open(data(prog, "cut.npz"), "wb") as fh:
        fh.write(head)
    got = message(prog, rt.load_npz, "data/cut.npz", "x", spec(("n",)))
    assert got == "data/cut.npz: not a valid .npz file (File is not a zip file)"
    np.save(data(prog, "one.npy"), np.zeros(3))
    np.savez(data(prog, "two.npz"), x=np.zeros(3))
    got = message(prog, rt.load_npz, "data/one.npy", "x", spec(("n",)))
    assert got == "data/one.npy: an .npy file of one array, not an .npz archive: read it with load_npy"
    got = message(prog, rt.load_npy, "data/two.npz", spec(("n",)))
    assert got == "data/two.npz: an .npz archive of several arrays, not an .npy file: read it with load_npz"


def test_a_corrupt_member_of_an_archive(prog):
    path = data(prog, "bad.npz")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x.npy", b"\x93NUMPY garbage")
    got = message(prog, rt.load_npz, "data/bad.npz", "x", spec(("n",)))
    assert got.startswith("data/bad.npz['x']: cannot be read (")


def test_pickled_objects_are_not_read(prog):
    np.save(data(prog, "obj.npy"), np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    got = message(prog, rt.load_npy, "data/obj.npy", spec(("n",)))
    assert got == "data/obj.npy: not a valid .npy file (it holds Python objects (pickled), which are not read)"


def _huge_npy() -> bytes:
    """An .npy header claiming 10**12 float64 rows (7.28 TiB), and 64 bytes of data."""
    import io

    from numpy.lib import format as npy

    buf = io.BytesIO()
    npy.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    return buf.getvalue() + b"\0" * 64


def test_a_header_larger_than_the_file_is_refused_before_allocating(prog):
    """Issue 37 item 10a: numpy allocates the whole array before it reads, so
    this ended in `MemoryError: Unable to allocate 7.28 TiB` naming no file."""
    with open(data(prog, "huge.npy"), "wb") as fh:
        fh.write(_huge_npy())
    got = message(prog, rt.load_npy, "data/huge.npy", spec(("n",)))
    assert got == (
        "data/huge.npy: not a valid .npy file (its header says an array of shape (1000000000000,) and "
        "element type float64, 8000000000000 bytes, but the file holds 64 bytes of data)"
    )
    with zipfile.ZipFile(data(prog, "huge.npz"), "w") as zf:
        zf.writestr("x.npy", _huge_npy())
    got = message(prog, rt.load_npz, "data/huge.npz", "x", spec(("n",)))
    assert got == (
        "data/huge.npz['x']: cannot be read (its header says an array of shape (1000000000000,) and "
        "element type float64, 8000000000000 bytes, but the file holds 64 bytes of data)"
    )
    # a file one element short is refused the same way; an exact one is read
    np.save(data(prog, "ok.npy"), np.arange(3.0))
    with open(data(prog, "ok.npy"), "rb") as fh:
        whole = fh.read()
    with open(data(prog, "short.npy"), "wb") as fh:
        fh.write(whole[:-8])
    got = message(prog, rt.load_npy, "data/short.npy", spec(("n",)))
    assert got.endswith("24 bytes, but the file holds 16 bytes of data)")
    assert rt.load_npy("data/ok.npy", spec(("n",), rt.f64), **at(prog)).tolist() == [0.0, 1.0, 2.0]


# --- element types ------------------------------------------------------------------

CONVERSIONS = [
    # (numpy data, spec element, torch dtype of the result, its values)
    (np.array([0.5, -1.25], np.float64), rt.f32, torch.float32, [0.5, -1.25]),
    (np.array([0.5, -1.25], np.float32), rt.f64, torch.float64, [0.5, -1.25]),
    (np.array([0.5, -1.25], np.float16), rt.f32, torch.float32, [0.5, -1.25]),
    (np.array([0.5, 2.0], np.float64), rt.bf16, torch.bfloat16, [0.5, 2.0]),
    (np.array([0, 16], np.uint8), rt.f32, torch.float32, [0.0, 16.0]),
    (np.array([-3, 7], np.int64), rt.f64, torch.float64, [-3.0, 7.0]),
    (np.array([-3, 7], np.int8), rt.i64, torch.int64, [-3, 7]),
    (np.array([-3, 7], np.int64), rt.i32, torch.int32, [-3, 7]),
    (np.array([40000, 2], np.uint16), rt.i32, torch.int32, [40000, 2]),
    (np.array([9, 0], np.uint64), rt.index(10), torch.int64, [9, 0]),
    (np.array([1, 0, 1], np.int32), rt.bool_, torch.bool, [True, False, True]),
    (np.array([True, False]), rt.bool_, torch.bool, [True, False]),
    (np.array([True, False]), rt.f32, torch.float32, [1.0, 0.0]),
    (np.array([True, False]), rt.index(2), torch.int64, [1, 0]),
    (np.array([0.0, 2.5], np.float64), rt.nonneg, torch.float32, [0.0, 2.5]),
    (np.array([0.0, 1.0], np.float64), rt.prob, torch.float32, [0.0, 1.0]),
]


@pytest.mark.parametrize(("arr", "elem", "dtype", "values"), CONVERSIONS, ids=lambda v: getattr(v, "name", None))
def test_conversions(prog, arr, elem, dtype, values):
    np.save(data(prog, "v.npy"), arr)
    t = rt.load_npy("data/v.npy", spec(("n",), elem), **at(prog))
    assert t.dtype is dtype and t.tolist() == values


REFUSALS = [
    (np.array([1.0, 2.0]), rt.i64, "expected [n] i64, found float64 data (float data is not read as integer values)"),
    (
        np.array([1.0, 2.0], np.float32),
        rt.index(3),
        "expected [n] Index[3], found float32 data (float data is not read as integer values)",
    ),
    (np.array([0.0, 1.0]), rt.bool_, "expected [n] Bool, found float64 data (float data is not read as Bool values)"),
    (np.array([0, 2, 1]), rt.bool_, "expected [n] Bool, found int64 values other than 0 and 1 (min 0, max 2)"),
    (np.array([-1, 3]), rt.index(10), "expected [n] Index[10], found values outside 0..9 (min -1, max 3)"),
    (np.array([0, 10]), rt.index(10), "expected [n] Index[10], found values outside 0..9 (min 0, max 10)"),
    (
        np.array([0, 2**40]),
        rt.i32,
        "expected [n] i32, found int64 values outside the range of i32 (min 0, max 1099511627776)",
    ),
    (
        np.array([2**64 - 1], np.uint64),
        rt.i64,
        "expected [n] i64, found uint64 values above the int64 range (max 18446744073709551615)",
    ),
    (np.array([1 + 2j]), rt.f32, "expected [n] f32, found complex128 data (complex numbers)"),
    (np.array(["a", "b"]), rt.f32, "expected [n] f32, found <U1 data (not numbers)"),
    (np.array([-0.5, 1.0]), rt.nonneg, "expected [n] NonNeg, found values below 0 or NaN (min -0.5)"),
    (np.array([0.5, 1.5]), rt.prob, "expected [n] Prob, found values outside [0, 1] or NaN (min 0.5, max 1.5)"),
]


@pytest.mark.parametrize(("arr", "elem", "why"), REFUSALS, ids=lambda v: getattr(v, "name", None))
def test_refusals(prog, arr, elem, why):
    np.save(data(prog, "v.npy"), arr)
    assert message(prog, rt.load_npy, "data/v.npy", spec(("n",), elem)) == f"data/v.npy: {why}"


def test_the_checks_of_a_reader_do_not_depend_on_the_switch(prog):
    np.save(data(prog, "y.npy"), np.array([0, 12]))
    with rt.checks(False):
        got = message(prog, rt.load_npy, "data/y.npy", spec(("n",), rt.index(10)))
    assert got == "data/y.npy: expected [n] Index[10], found values outside 0..9 (min 0, max 12)"


def test_the_result_owns_its_memory_and_takes_part_in_nothing(prog):
    np.save(data(prog, "x.npy"), np.ones((2, 2), np.float32))
    t = rt.load_npy("data/x.npy", spec(("n", 2)), **at(prog))
    assert not t.requires_grad and t.is_contiguous()
    t.add_(1)  # writable
    assert t.tolist() == [[2.0, 2.0], [2.0, 2.0]]


# --- paths ------------------------------------------------------------------------------


def test_a_relative_path_is_read_from_the_qv_files_folder(prog, tmp_path, monkeypatch):
    np.save(data(prog, "x.npy"), np.array([1.0, 2.0]))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert rt.load_npy("data/x.npy", spec(("n",)), **at(prog)).tolist() == [1.0, 2.0]
    assert rt.load_npy(data(prog, "x.npy"), spec(("n",)), **at(prog)).tolist() == [1.0, 2.0]  # absolute
    # without a source file (Python callers): from the current folder
    monkeypatch.chdir(tmp_path)
    assert rt.load_npy("data/x.npy", spec(("n",))).tolist() == [1.0, 2.0]
    exc = fails(rt.load_npy, "x.npy", spec(("n",)))
    assert exc.loc is None and str(exc) == f"x.npy: no such file (looked for {tmp_path / 'x.npy'})"


def test_an_error_from_compiled_code_is_reported_at_the_qv_line(tmp_path):
    qv = tmp_path / "prog.qv"
    np.save(tmp_path / "x.npy", np.zeros((10, 3), np.float32))
    code = (
        "from quiver import runtime as rt\n"
        f"_src = rt.SourceFile({str(qv)!r})\n"
        "_data_x = rt.TensorArg('x', ('n', 4), rt.f32)\n"
        "def main():\n"
        "    x = rt.load_npy('x.npy', _data_x, src=_src, line=3, col=9)\n"
        "_src.set_line_map({4: (2, 1), 5: (3, 5)})\n"
    )
    module = rt.load_compiled(code, str(qv))
    with pytest.raises(rt.CheckError) as info:
        module.main()
    assert rt.format_error(info.value, relative_to=str(tmp_path)) == (
        "prog.qv:3:9: error: x.npy: expected [n 4], found [10 3]"
    )


def test_a_reader_makes_its_tensor_on_the_current_device(prog):
    np.save(data(prog, "x.npy"), np.array([1.0, 2.0]))
    before = rt.current_device()
    rt.set_device("meta")
    try:
        t = rt.load_npy("data/x.npy", spec(("n",)), **at(prog))
    finally:
        rt.set_device(before)
    assert t.device.type == "meta" and t.shape == (2,)


def test_a_spec_the_compiler_cannot_mean_is_a_type_error(prog):
    np.save(data(prog, "x.npy"), np.array([1.0]))
    with pytest.raises(TypeError, match="an rt.TensorArg"):
        rt.load_npy("data/x.npy", (("n",), rt.f32), **at(prog))
    with pytest.raises(TypeError, match="ints, names or DimExprs"):
        rt.load_npy("data/x.npy", rt.TensorArg("x", ("..", "d"), rt.f32), **at(prog))


def test_a_dim_expression_is_left_to_the_compiled_codes_check(prog):
    np.save(data(prog, "x.npy"), np.zeros((3, 4), np.float32))
    plus_one = rt.DimExpr("(b+1)", ("+", "b", 1), ("b", 1, 1))
    t = rt.load_npy("data/x.npy", rt.TensorArg("x", (plus_one, 4), rt.f32), **at(prog))
    assert t.shape == (3, 4)
    got = message(prog, rt.load_npy, "data/x.npy", rt.TensorArg("x", (plus_one, 5), rt.f32))
    assert got == "data/x.npy: expected [(b+1) 5], found [3 4]"


# --- safetensors -----------------------------------------------------------------------


def test_safetensors_round_trip(prog):
    w = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    save_torch({"w": w, "ids": torch.tensor([4, 0, 2]), "h": w.to(torch.bfloat16)}, data(prog, "m.safetensors"))
    save_numpy({"a": np.arange(6, dtype=np.int32).reshape(2, 3)}, data(prog, "n.safetensors"))
    got = rt.load_safetensors("data/m.safetensors", "w", spec(("r", 5)), **at(prog))
    assert torch.equal(got, w)
    got = rt.load_safetensors("data/m.safetensors", "ids", spec(("n",), rt.index(5)), **at(prog))
    assert got.tolist() == [4, 0, 2]
    got = rt.load_safetensors("data/m.safetensors", "h", spec((3, 5)), **at(prog))
    assert got.dtype is torch.float32 and torch.equal(got, w.to(torch.bfloat16).to(torch.float32))
    got = rt.load_safetensors("data/n.safetensors", "a", spec(("n", 3), rt.f64), **at(prog))
    assert got.dtype is torch.float64 and got.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_safetensors_failures(prog):
    save_torch({"w": torch.zeros(2, 3), "b": torch.zeros(3)}, data(prog, "m.safetensors"))
    got = message(prog, rt.load_safetensors, "data/m.safetensors", "v", spec(("n",)))
    assert got == "data/m.safetensors has no tensor 'v' (its tensors: 'b', 'w')"
    got = message(prog, rt.load_safetensors, "data/m.safetensors", "w", spec(("n", 4)))
    assert got == "data/m.safetensors['w']: expected [n 4], found [2 3]"
    got = message(prog, rt.load_safetensors, "data/m.safetensors", "w", spec(("n", 3), rt.i64))
    assert (
        got
        == "data/m.safetensors['w']: expected [n 3] i64, found float32 data (float data is not read as integer values)"
    )
    with open(data(prog, "junk.safetensors"), "wb") as fh:
        fh.write(b"\x05\x00\x00\x00\x00\x00\x00\x00{bad}")
    got = message(prog, rt.load_safetensors, "data/junk.safetensors", "w", spec(("n",)))
    assert got.startswith("data/junk.safetensors: not a valid .safetensors file (")
    got = message(prog, rt.load_safetensors, "data/none.safetensors", "w", spec(("n",)))
    assert got == f"data/none.safetensors: no such file (looked for {data(prog, 'none.safetensors')})"


# --- CSV -------------------------------------------------------------------------------


def test_csv_without_a_header(prog):
    x = np.array([[0.5, 1.0, -2.0], [3.25, 4.0, 5.5]])
    np.savetxt(data(prog, "x.csv"), x, delimiter=",")
    got = rt.load_csv("data/x.csv", spec(("n", 3)), **at(prog))
    assert got.dtype is torch.float32 and got.tolist() == x.tolist()
    got = rt.load_csv("data/x.csv", spec(("n",)), columns=1, **at(prog))
    assert got.tolist() == [1.0, 4.0]
    got = rt.load_csv("data/x.csv", spec(("n", 2), rt.f64), columns=[2, 0], **at(prog))
    assert got.tolist() == [[-2.0, 0.5], [5.5, 3.25]]


def test_csv_with_a_header_and_columns_by_name(prog):
    table = np.array([[1.5, 2, 0], [0.25, 7, 1], [3.0, 9, 1]])
    np.savetxt(data(prog, "t.csv"), table, delimiter=",", header="weight,age,label", comments="", fmt="%g")
    got = rt.load_csv("data/t.csv", spec(("n", 3)), header=True, **at(prog))
    assert got.tolist() == table.tolist()
    labels = rt.load_csv("data/t.csv", spec(("n",), rt.index(2)), header=True, columns="label", **at(prog))
    assert labels.dtype is torch.int64 and labels.tolist() == [0, 1, 1]
    got = rt.load_csv("data/t.csv", spec(("n", 2), rt.i64), header=True, columns=["age", "label"], **at(prog))
    assert got.tolist() == [[2, 0], [7, 1], [9, 1]]


def test_csv_delimiters_quotes_blank_lines_and_a_byte_order_mark(prog):
    with open(data(prog, "s.csv"), "w", encoding="utf-8") as fh:
        fh.write('\ufeff"a";"b"\n1;"2"\n\n3;4\n')
    got = rt.load_csv("data/s.csv", spec(("n", 2), rt.i64), header=True, delimiter=";", **at(prog))
    assert got.tolist() == [[1, 2], [3, 4]]
    got = rt.load_csv("data/s.csv", spec(("n",), rt.i64), header=True, delimiter=";", columns="b", **at(prog))
    assert got.tolist() == [2, 4]
    with open(data(prog, "tab.tsv"), "w") as fh:
        fh.write("1\t2.5\n3\t4\n")
    assert rt.load_csv("data/tab.tsv", spec((2, 2)), delimiter="\t", **at(prog)).tolist() == [[1.0, 2.5], [3.0, 4.0]]


def test_csv_with_no_rows(prog):
    with open(data(prog, "h.csv"), "w") as fh:
        fh.write("a,b\n")
    assert rt.load_csv("data/h.csv", spec(("n", 2)), header=True, **at(prog)).shape == (0, 2)
    with open(data(prog, "empty.csv"), "w"):
        pass
    assert rt.load_csv("data/empty.csv", spec(("n", "f")), **at(prog)).shape == (0, 0)


def test_csv_failures(prog):
    with open(data(prog, "bad.csv"), "w") as fh:
        fh.write("a,b,c\n1,2,3\n4,five,6\n")
    got = message(prog, rt.load_csv, "data/bad.csv", spec(("n", 3)), header=True)
    assert got == "data/bad.csv: line 3, column 2: 'five' is not a number"
    got = message(prog, rt.load_csv, "data/bad.csv", spec(("n", 3), rt.i64), header=True)
    assert got == "data/bad.csv: line 3, column 2: 'five' is not a number"
    with open(data(prog, "ragged.csv"), "w") as fh:
        fh.write("1,2\n3,4\n\n5,6,7\n")
    got = message(prog, rt.load_csv, "data/ragged.csv", spec(("n", 2)))
    assert got == "data/ragged.csv: line 4 has 3 columns, the first line 2"
    with open(data(prog, "f.csv"), "w") as fh:
        fh.write("x,y\n1.5,0\n2,1\n")
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n",), rt.index(2)), header=True, columns="x")
    assert got == (
        "data/f.csv (columns 'x'): expected [n] Index[2], found float64 data (float data is not read as integer values)"
    )
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n",), rt.index(2)), header=True, columns="z")
    assert got == "data/f.csv has no column 'z' (its columns: 'x', 'y')"
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n",)), columns="x")
    assert got == "data/f.csv: columns names 'x', but the file has no header (header=False)"
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n",)), header=True, columns=2)
    assert got == "data/f.csv: no column 2 (it has 2, numbered from 0)"
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n",)), header=True)
    assert (
        got == "data/f.csv: a [n] tensor reads one column, and 2 are chosen (the file has 2: choose one with columns=)"
    )
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n", 3)), header=True)
    assert got == "data/f.csv: expected [n 3], found [2 2]"
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n", 2, 1)), header=True)
    assert got == "data/f.csv: load_csv reads [n] or [n F] tensors, not [n 2 1]"
    got = message(prog, rt.load_csv, "data/f.csv", spec(("n", 2)), delimiter=", ")
    assert got == "data/f.csv: the delimiter must be one character, found ', '"
    with open(data(prog, "latin.csv"), "wb") as fh:
        fh.write(b"caf\xe9,1\n")
    got = message(prog, rt.load_csv, "data/latin.csv", spec(("n", 2)))
    assert got == "data/latin.csv: not UTF-8 text (invalid continuation byte at byte 3)"


# --- text as characters ----------------------------------------------------------------


def test_load_chars_ids_and_vocab(prog):
    text = "hello, world\nhi ü\n"
    with open(data(prog, "t.txt"), "w", encoding="utf-8") as fh:
        fh.write(text)
    ids, vocab = rt.load_chars("data/t.txt", spec(("n",), rt.index(20)), **at(prog))
    chars = sorted(set(text))
    assert vocab.chars == "".join(chars) and vocab.size == len(chars) == len(vocab) == 12
    assert ids.dtype is torch.int64 and ids.shape == (len(text),)
    assert ids.tolist() == [chars.index(c) for c in text]
    assert vocab.decode(ids) == text
    assert vocab.decode(vocab.encode(text)) == text
    assert vocab.encode("hü").tolist() == [chars.index("h"), chars.index("ü")]
    assert vocab.decode(ids[0]) == "h" and vocab.decode([1, 2]) == chars[1] + chars[2]
    assert repr(vocab) == str(vocab) == "Vocab(12 characters: '\\n ,dehilorwü')"
    assert rt.format_value(vocab) == repr(vocab)
    assert vocab == rt.Vocab(chars) and vocab != rt.Vocab("ab")


def test_load_chars_failures(prog):
    with open(data(prog, "t.txt"), "w", encoding="utf-8") as fh:
        fh.write("abcabc d")
    got = message(prog, rt.load_chars, "data/t.txt", spec(("n",), rt.index(4)))
    assert got == "data/t.txt: expected [n] Index[4], found 5 distinct characters, more than Index[4] holds"
    got = message(prog, rt.load_chars, "data/t.txt", spec((7,), rt.index(5)))
    assert got == "data/t.txt: expected [7], found [8]"
    got = message(prog, rt.load_chars, "data/t.txt", spec(("n",)))
    assert got == "data/t.txt: load_chars reads [n] Index[V] character ids, not [n] f32"
    with open(data(prog, "bin.txt"), "wb") as fh:
        fh.write(b"ok\xff\xfe")
    got = message(prog, rt.load_chars, "data/bin.txt", spec(("n",), rt.index(9)))
    assert got == "data/bin.txt: not UTF-8 text (invalid start byte at byte 2)"
    _, vocab = rt.load_chars("data/t.txt", spec(("n",), rt.index(5)), **at(prog))
    with pytest.raises(rt.CheckError) as info:
        vocab.encode("abz")
    assert str(info.value) == "encode(): character 'z' (U+007A) is not in the vocabulary of data/t.txt (5 characters)"
    with pytest.raises(rt.CheckError) as info:
        vocab.decode(torch.tensor([0, 5]))
    assert str(info.value) == "decode(): id 5 is not in the vocabulary of data/t.txt (5 characters): ids are 0..4"
    with pytest.raises(rt.CheckError) as info:
        vocab.decode(torch.tensor([0.0, 1.0]))
    assert str(info.value) == "decode(): expected [n] integer ids, found [2] f32"
    with pytest.raises(rt.CheckError, match=r"decode\(\): id True is not in the vocabulary"):
        vocab.decode(True)


def test_load_chars_of_an_empty_text_and_a_byte_order_mark(prog):
    with open(data(prog, "e.txt"), "w"):
        pass
    ids, vocab = rt.load_chars("data/e.txt", spec(("n",), rt.index(3)), **at(prog))
    assert ids.shape == (0,) and vocab.size == 0 and vocab.decode(ids) == ""
    with open(data(prog, "b.txt"), "w", encoding="utf-8-sig") as fh:
        fh.write("ba")
    ids, vocab = rt.load_chars("data/b.txt", spec(("n",), rt.index(3)), **at(prog))
    assert vocab.chars == "ab" and ids.tolist() == [1, 0]


# --- the shipped data ----------------------------------------------------------------


def test_the_shipped_digits_load_with_their_shapes():
    src = rt.SourceFile(os.path.join(EXAMPLES, "digits.qv"))
    x = rt.load_npz("data/digits.npz", "x", spec(("n", 64)), src=src, line=1, col=1)
    y = rt.load_npz("data/digits.npz", "y", spec(("n",), rt.index(10)), src=src, line=2, col=1)
    assert x.shape == (1797, 64) and x.dtype is torch.float32
    assert x.min().item() == 0 and x.max().item() == 16 and torch.equal(x, x.round())
    assert y.shape == (1797,) and y.dtype is torch.int64
    assert torch.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert y[:10].tolist() == list(range(10))
    # the first digit, a 0, as scikit-learn's load_digits() gives it
    assert x[0, :16].tolist() == [0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0]


def test_the_shipped_text_loads_as_characters():
    src = rt.SourceFile(os.path.join(EXAMPLES, "chars.qv"))
    ids, vocab = rt.load_chars("data/tiny.txt", spec(("n",), rt.index(65)), src=src, line=1, col=1)
    with open(os.path.join(EXAMPLES, "data", "tiny.txt"), encoding="utf-8") as fh:
        text = fh.read()
    assert text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.\n")
    assert ids.shape == (len(text),) == (9785,) and vocab.size == 56
    assert vocab.decode(ids) == text


def test_the_shipped_files_are_small():
    sizes = {name: os.path.getsize(os.path.join(EXAMPLES, "data", name)) for name in ("digits.npz", "tiny.txt")}
    assert sum(sizes.values()) < 64_000, sizes


def test_csv_whose_header_has_more_columns_than_its_lines(prog):
    with open(data(prog, "h.csv"), "w") as fh:
        fh.write("a,b,c\n1,2\n3,4\n")
    got = message(prog, rt.load_csv, "data/h.csv", spec(("n", "f")), header=True)
    assert got == "data/h.csv: the first line has 3 columns, the lines below it 2"
