"""Reading data files into tensors whose leading sizes come from the file.

Compiled code calls a reader with the file's path, the tensor type the program
expects (a *spec*: an :class:`~quiver.runtime.TensorArg`, whose int dims are
checked and whose named dims are known only at run time, read from the file),
the sizes that dims bound before the read must have (``sizes=``: a run-time
dim an earlier file gave, a generic dim, a ``DimExpr``; None where the spec
says all) and the ``.qv`` position of the call (``src=_src, line=L, col=C``,
the convention of ``rt.expect_dims``)::

    x = rt.load_npz("data/digits.npz", "x", _data_x, src=_src, line=4, col=9)
    # with _data_x = rt.TensorArg("x", ("n", 64), rt.f32) at module level

A relative path is read from the folder of the ``.qv`` file (``src.path``);
without ``src``, from the current folder. Every failure is a
:class:`CheckError` at the call's position that names the file and says what
was wrong: ``data/digits.npz['x']: expected [n 64], found [1797 63]``.

The element type rules (docs/runtime.md, "Data"): float data converts to a
requested float type; integer (and bool) data to a requested float or
integer type, with its values checked to fit (``i32``, ``Index[C]`` in
``0..C-1``); float data is never read as an integer or ``Index``; ``Bool``
reads bool data or integers that are all 0 or 1. The result is made on the
current device, like every tensor a program creates.

The checks of a reader always run: they are part of reading a file the
program did not write, not of ``rt.checks``.
"""

from __future__ import annotations

import csv
import math
import os
import stat
import warnings
import zipfile

import numpy as np
import torch

from . import _device
from ._elems import Elem, dims_text, tensor_text
from ._errors import CheckError, QuiverError
from ._specs import ArgSpec, DimExpr, TensorArg, describe

__all__ = ["Vocab", "decode", "encode", "load_chars", "load_csv", "load_npy", "load_npz", "load_safetensors"]


# --- specs, paths, locations ------------------------------------------------------


def _loc(src, line, col):
    return src.loc(line, col) if src is not None else None


def _spec_parts(spec, reader: str) -> tuple[tuple, Elem]:
    """The dims (ints and names) and element type of a reader's spec."""
    if not isinstance(spec, TensorArg):
        raise TypeError(f"{reader}: the spec must be an rt.TensorArg, found {spec!r}")
    if spec._var is not None:
        raise TypeError(f"{reader}: a spec's element type must be known (found the option {spec._var})")
    for d in spec.dims:
        if d == "..":
            raise TypeError(f"{reader}: a spec's dims are ints, names or DimExprs, found {d}")
    return spec.dims, spec.elem


def resolve_path(path, src) -> str:
    """``path`` as the program means it: relative to the ``.qv`` file's folder
    (``src.path``), or to the current folder without ``src``."""
    path = os.fspath(path)
    if not isinstance(path, str):
        path = os.fsdecode(path)
    if os.path.isabs(path):
        return path
    base = os.path.dirname(os.path.abspath(src.path)) if src is not None else os.getcwd()
    return os.path.join(base, path)


_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _regular_file(shown: str, full: str, loc, error: type[QuiverError] = CheckError) -> None:
    """``error`` (CheckError) unless ``full`` is a regular file that can be opened for reading."""
    try:
        mode = os.stat(full).st_mode
    except (FileNotFoundError, NotADirectoryError):
        where = "" if full == shown else f" (looked for {full})"
        raise error(f"{shown}: no such file{where}", loc) from None
    except OSError as e:
        raise error(f"{shown}: cannot read it: {e.strerror or e}", loc) from None
    if not stat.S_ISREG(mode):
        what = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
        raise error(f"{shown}: not a regular file ({what})", loc)
    try:
        with open(full, "rb"):
            pass
    except OSError as e:
        raise error(f"{shown}: cannot read it: {e.strerror or e}", loc) from None


def _names(keys) -> str:
    keys = list(keys)
    return ", ".join(repr(k) for k in keys) if keys else "none"


# --- shapes and element types --------------------------------------------------------


def _check_shape(shape: tuple, dims: tuple, label: str, loc, sizes: tuple | None = None) -> None:
    """CheckError unless ``shape`` has the spec's rank, its static sizes, and one
    size for each name that the spec writes more than once. ``sizes`` (from the
    compiled code: one entry per dim, None where the spec says all) holds the
    sizes that dims bound before the read must have: a run-time dim read from
    an earlier file, a generic dim, a DimExpr of generic dims. Without it a
    DimExpr is not checked here."""
    if len(shape) == len(dims):
        bound: dict[str, int] = {}
        for d, n in zip(dims, shape):
            if isinstance(d, int):
                if d != n:
                    break
            elif isinstance(d, DimExpr):
                continue
            elif bound.setdefault(d, n) != n:
                raise CheckError(
                    f"{label}: expected {dims_text(dims)}, found {dims_text(shape)} (dim {d} is both {bound[d]} and {n})",
                    loc,
                )
        else:
            if sizes is None or all(s is None or s == n for s, n in zip(sizes, shape)):
                return
            # the message starts with the file, as every reader's does
            want = " ".join(str(n if s is None else s) for s, n in zip(sizes, shape))
            raise CheckError(f"{label}: expected {dims_text(dims)} = [{want}], found {dims_text(shape)}", loc)
    raise CheckError(f"{label}: expected {dims_text(dims)}, found {dims_text(shape)}", loc)


def _data_type_name(dtype) -> str:
    """How a file's element type is shown: numpy's and torch's common names."""
    if isinstance(dtype, torch.dtype):
        return str(dtype).replace("torch.", "")
    return dtype.name if dtype.kind in "biufc" else str(dtype)


def _from_numpy(arr: np.ndarray, dims: tuple, elem: Elem, label: str, loc) -> torch.Tensor:
    """A numpy array as a torch tensor of a kind torch has, its values unchanged."""
    expect = f"{dims_text(dims)} {elem.name}" if dims else elem.name
    dt = arr.dtype
    if dt.kind not in "biuf":
        what = "complex numbers" if dt.kind == "c" else "not numbers"
        raise CheckError(f"{label}: expected {expect}, found {_data_type_name(dt)} data ({what})", loc)
    if not dt.isnative:
        arr = arr.astype(dt.newbyteorder("="))
    if dt.kind == "u" and dt.itemsize > 1:  # torch's uint16..uint64 have few ops: read as int64
        if dt.itemsize == 8 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise CheckError(
                f"{label}: expected {expect}, found uint64 values above the int64 range (max {int(arr.max())})", loc
            )
        arr = arr.astype(np.int64)
    elif dt.kind == "f" and dt.itemsize > 8:  # long double: torch has no such type
        arr = arr.astype(np.float64)
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a [] array [1])
        arr = arr.copy(order="C")
    return torch.from_numpy(arr)


_WIDE_UNSIGNED = {torch.uint16, torch.uint32, torch.uint64}


def convert(t: torch.Tensor, elem: Elem, label: str, loc, dims: tuple = ()) -> torch.Tensor:
    """``t`` (the file's values, on the CPU) in ``elem``'s dtype, by the rules
    of the module's docstring; CheckError where they refuse it."""
    expect = f"{dims_text(dims)} {elem.name}" if dims else elem.name
    found = _data_type_name(t.dtype)
    if t.is_complex():
        raise CheckError(f"{label}: expected {expect}, found {found} data (complex numbers)", loc)
    if t.dtype in _WIDE_UNSIGNED:
        t = t.to(torch.int64)
    is_float = t.is_floating_point()
    if elem.kind == "float":
        out = t.to(elem.dtype)
    elif is_float:
        what = "integer" if elem.kind == "int" else "Bool"
        raise CheckError(
            f"{label}: expected {expect}, found {found} data (float data is not read as {what} values)", loc
        )
    elif elem.kind == "int":
        if elem.dtype is not torch.int64 and t.dtype is not torch.bool and t.numel():
            info = torch.iinfo(elem.dtype)
            lo, hi = (int(v) for v in torch.aminmax(t))
            if lo < info.min or hi > info.max:
                raise CheckError(
                    f"{label}: expected {expect}, found {found} values outside the range of {elem.name} "
                    f"(min {lo}, max {hi})",
                    loc,
                )
        out = t.to(elem.dtype)
    else:  # Bool: bool data, or integers that are all 0 or 1
        if t.dtype is torch.bool:
            out = t
        else:
            if t.numel():
                lo, hi = (int(v) for v in torch.aminmax(t))
                if lo < 0 or hi > 1:
                    raise CheckError(
                        f"{label}: expected {expect}, found {found} values other than 0 and 1 (min {lo}, max {hi})",
                        loc,
                    )
            out = t != 0
    if elem.refinement is not None:
        problem = elem._problem(out)
        if problem is not None:
            raise CheckError(f"{label}: expected {expect}, found {problem}", loc)
    return out


def _finish(t: torch.Tensor) -> torch.Tensor:
    """The result on the current device."""
    device = _device._state.current
    return t if device.type == "cpu" else t.to(device)


# --- .npy and .npz ------------------------------------------------------------------


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a member first, or an empty archive


def _npy_shortfall(fh, size: int) -> str | None:
    """Why the ``.npy`` data at ``fh`` (positioned at its magic, ``size`` bytes
    from there on) cannot hold what its header says, or None. Checked before
    numpy reads it, since numpy allocates the whole array first: a header
    claiming 10**12 rows would end in a MemoryError that names no file."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(fh)
        read_header = getattr(npy, "_read_array_header", None)
        if read_header is not None:
            shape, _, dtype = read_header(fh, version)
        elif version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(fh)
        else:
            shape, _, dtype = npy.read_array_header_2_0(fh)
    except Exception:  # a broken header: numpy's own message says what is wrong
        return None
    if dtype.hasobject:
        return None  # pickled objects: refused by np.load with its own message
    need = math.prod(shape) * dtype.itemsize
    have = size - fh.tell()
    if need <= have:
        return None
    return (
        f"its header says an array of shape {tuple(shape)} and element type {dtype}, {need} bytes, "
        f"but the file holds {max(have, 0)} bytes of data"
    )


def _npz_member_shortfall(data, key: str) -> str | None:
    """`_npy_shortfall` of the member ``key`` of an open ``np.load`` archive."""
    zf = getattr(data, "zip", None)
    name = key if key in getattr(data, "_files", ()) and key.endswith(".npy") else f"{key}.npy"
    if zf is None:
        return None
    try:
        info = zf.getinfo(name)
        with zf.open(info) as member:
            if member.read(6) != _NPY_MAGIC:
                return None
            member.seek(0)
            return _npy_shortfall(member, info.file_size)
    except (KeyError, OSError, ValueError, zipfile.BadZipFile):
        return None


def _np_load(shown: str, full: str, kind: str, loc):
    try:
        with open(full, "rb") as fh:
            head = fh.read(6)
            short = None
            if head.startswith(_NPY_MAGIC):
                fh.seek(0)
                short = _npy_shortfall(fh, os.fstat(fh.fileno()).st_size)
    except OSError as e:
        raise CheckError(f"{shown}: cannot read it: {e.strerror or e}", loc) from None
    if not head.startswith(_NPY_MAGIC) and not head.startswith(_ZIP_MAGIC):
        what = "an .npy file" if kind == ".npy" else "a zip archive"
        raise CheckError(f"{shown}: not a valid {kind} file (it does not start as {what} does)", loc)
    if short is not None:
        raise CheckError(f"{shown}: not a valid {kind} file ({short})", loc)
    try:
        return np.load(full, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        reason = str(e) or type(e).__name__
        if "allow_pickle" in reason:
            reason = "it holds Python objects (pickled), which are not read"
        raise CheckError(f"{shown}: not a valid {kind} file ({reason})", loc) from None


def load_npy(path, spec, *, sizes=None, src=None, line=0, col=0) -> torch.Tensor:
    """The array of a ``.npy`` file (``np.save``), as ``spec`` says."""
    dims, elem = _spec_parts(spec, "load_npy")
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    full = resolve_path(path, src)
    _regular_file(shown, full, loc)
    data = _np_load(shown, full, ".npy", loc)
    if not isinstance(data, np.ndarray):
        data.close()
        raise CheckError(f"{shown}: an .npz archive of several arrays, not an .npy file: read it with load_npz", loc)
    _check_shape(tuple(data.shape), dims, shown, loc, sizes)
    return _finish(convert(_from_numpy(data, dims, elem, shown, loc), elem, shown, loc, dims))


def load_npz(path, key, spec, *, sizes=None, src=None, line=0, col=0) -> torch.Tensor:
    """The array ``key`` of a ``.npz`` archive (``np.savez``, ``np.savez_compressed``)."""
    dims, elem = _spec_parts(spec, "load_npz")
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    full = resolve_path(path, src)
    _regular_file(shown, full, loc)
    data = _np_load(shown, full, ".npz", loc)
    if isinstance(data, np.ndarray):
        raise CheckError(f"{shown}: an .npy file of one array, not an .npz archive: read it with load_npy", loc)
    with data:
        if key not in data.files:
            raise CheckError(f"{shown} has no array {key!r} (its arrays: {_names(data.files)})", loc)
        label = f"{shown}[{key!r}]"
        short = _npz_member_shortfall(data, key)
        if short is not None:
            raise CheckError(f"{label}: cannot be read ({short})", loc)
        try:
            arr = data[key]
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
            reason = str(e) or type(e).__name__
            if "allow_pickle" in reason:
                reason = "it holds Python objects (pickled), which are not read"
            raise CheckError(f"{label}: cannot be read ({reason})", loc) from None
    _check_shape(tuple(arr.shape), dims, label, loc, sizes)
    return _finish(convert(_from_numpy(arr, dims, elem, label, loc), elem, label, loc, dims))


# --- safetensors -------------------------------------------------------------------


def load_safetensors(path, key, spec, *, sizes=None, src=None, line=0, col=0) -> torch.Tensor:
    """The tensor ``key`` of a ``.safetensors`` file."""
    from safetensors import SafetensorError, safe_open

    dims, elem = _spec_parts(spec, "load_safetensors")
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    full = resolve_path(path, src)
    _regular_file(shown, full, loc)
    t = None
    try:
        with safe_open(full, framework="pt") as f:
            keys = list(f.keys())
            if key in keys:
                t = f.get_tensor(key)
    except (SafetensorError, OSError, ValueError) as e:
        reason = str(e) or type(e).__name__
        raise CheckError(f"{shown}: not a valid .safetensors file ({reason})", loc) from None
    if t is None:
        raise CheckError(f"{shown} has no tensor {key!r} (its tensors: {_names(keys)})", loc)
    label = f"{shown}[{key!r}]"
    _check_shape(tuple(t.shape), dims, label, loc, sizes)
    return _finish(convert(t, elem, label, loc, dims))


# --- CSV ------------------------------------------------------------------------------


def _column_list(columns) -> list | None:
    if columns is None:
        return None
    if isinstance(columns, (int, str)):  # (a Bool is refused as a column, later)
        return [columns]
    if isinstance(columns, torch.Tensor):  # columns=[0, 2] written in Quiver: a tensor of Ints
        return columns.tolist()
    return list(columns)


def _csv_rows(full: str, delimiter: str):
    """(line number, fields) of each non-empty row of the file."""
    with open(full, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter, quotechar='"')
        for row in reader:
            if row and any(cell.strip() for cell in row):
                yield reader.line_num, row


def _cell_problem(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return True
    return False


def _csv_failure(shown, full, delimiter, header, selected, ncols, reason, loc) -> CheckError:
    """Why numpy could not read the file, said at the line and column at fault."""
    rows = _csv_rows(full, delimiter)
    if header:
        next(rows, None)
    for number, row in rows:
        if len(row) != ncols:
            return CheckError(f"{shown}: line {number} has {len(row)} columns, the first line {ncols}", loc)
        for c in selected:
            if _cell_problem(row[c]):
                return CheckError(f"{shown}: line {number}, column {c + 1}: {row[c]!r} is not a number", loc)
    return CheckError(f"{shown}: cannot be read as CSV ({reason})", loc)


def load_csv(
    path, spec, *, header=False, delimiter=",", columns=None, sizes=None, src=None, line=0, col=0
) -> torch.Tensor:
    """Numeric columns of a CSV file as a ``[n F]`` tensor, or one column as ``[n]``.

    ``header``: the first line names the columns (and is not data).
    ``columns``: which columns to read, in order: positions from 0, or names
    when there is a header; one position or name alone is a list of one. By
    default every column. A ``[n]`` spec reads exactly one column. Blank
    lines are skipped; fields may be quoted with ``"``."""
    dims, elem = _spec_parts(spec, "load_csv")
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    if len(dims) not in (1, 2):
        raise CheckError(f"{shown}: load_csv reads [n] or [n F] tensors, not {dims_text(dims)}", loc)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise CheckError(f"{shown}: the delimiter must be one character, found {delimiter!r}", loc)
    full = resolve_path(path, src)
    _regular_file(shown, full, loc)
    try:
        first = next(_csv_rows(full, delimiter), None)
    except UnicodeDecodeError as e:
        raise CheckError(f"{shown}: not UTF-8 text ({e.reason} at byte {e.start})", loc) from None
    except (csv.Error, OSError) as e:
        raise CheckError(f"{shown}: cannot be read as CSV ({e})", loc) from None
    names = [n.strip() for n in first[1]] if header and first is not None else None
    ncols = len(first[1]) if first is not None else 0
    wanted = _column_list(columns)
    if wanted is None:
        selected = list(range(ncols))
    else:
        selected = []
        for c in wanted:
            if isinstance(c, str):
                if names is None:
                    raise CheckError(f"{shown}: columns names {c!r}, but the file has no header (header=False)", loc)
                if c not in names:
                    raise CheckError(f"{shown} has no column {c!r} (its columns: {_names(names)})", loc)
                selected.append(names.index(c))
            elif isinstance(c, int) and not isinstance(c, bool) and 0 <= c < max(ncols, 1) and first is not None:
                selected.append(c)
            else:
                raise CheckError(f"{shown}: no column {c!r} (it has {ncols}, numbered from 0)", loc)
    if len(dims) == 1 and len(selected) != 1:
        raise CheckError(
            f"{shown}: a {dims_text(dims)} tensor reads one column, and {len(selected)} are chosen"
            f" (the file has {ncols}: choose one with columns=)",
            loc,
        )
    label = shown if wanted is None else f"{shown} (columns {_names(wanted)})"
    data = _csv_numbers(shown, full, delimiter, header, selected, ncols, elem, loc)
    if len(dims) == 1:
        data = data[:, 0]
    _check_shape(tuple(data.shape), dims, label, loc, sizes)
    return _finish(convert(torch.from_numpy(data), elem, label, loc, dims))


def _csv_numbers(shown, full, delimiter, header, selected, ncols, elem, loc) -> np.ndarray:
    """The chosen columns as int64 when every value is an integer, else float64."""
    if not selected:
        return np.zeros((0, 0), dtype=np.int64)
    options = {
        "delimiter": delimiter,
        "skiprows": 1 if header else 0,
        "comments": None,
        "quotechar": '"',
        # every column: no usecols, so that numpy refuses a line with more of them
        "usecols": None if selected == list(range(ncols)) else selected,
        "ndmin": 2,
        "encoding": "utf-8-sig",
    }
    tries = (np.float64,) if elem.kind == "float" else (np.int64, np.float64)
    for i, dtype in enumerate(tries):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data"
                data = np.loadtxt(full, dtype=dtype, **options)
        except ValueError as e:
            if i + 1 < len(tries) and "could not convert" in str(e):
                continue  # not all integers: read as floats
            raise _csv_failure(shown, full, delimiter, header, selected, ncols, e, loc) from None
        if data.size == 0:
            data = data.reshape(0, len(selected))
        elif data.shape[1] != len(selected):
            raise CheckError(f"{shown}: the first line has {ncols} columns, the lines below it {data.shape[1]}", loc)
        return data
    raise AssertionError("unreachable")


# --- text as characters ------------------------------------------------------------


def _char_text(chars: str, limit: int = 80) -> str:
    shown = repr(chars[:limit])
    return shown if len(chars) <= limit else shown + " ..."


class Vocab:
    """The characters of a text, sorted: character ``chars[i]`` has id ``i``."""

    __slots__ = ("chars", "_ids", "source")

    def __init__(self, chars, source: str | None = None):
        chars = "".join(chars)
        if list(chars) != sorted(set(chars)):
            raise ValueError("a Vocab's characters are distinct and sorted")
        self.chars = chars
        self._ids = {c: i for i, c in enumerate(chars)}
        self.source = source

    @property
    def size(self) -> int:
        return len(self.chars)

    def __len__(self) -> int:
        return len(self.chars)

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and other.chars == self.chars

    def __hash__(self) -> int:
        return hash(self.chars)

    def _whose(self) -> str:
        src = f" of {self.source}" if self.source else ""
        return f"the vocabulary{src} ({self.size} characters)"

    def encode(self, text: str) -> torch.Tensor:
        """The ids of ``text``'s characters, ``[len(text)]`` int64 on the current device."""
        if not isinstance(text, str):
            raise CheckError(f"encode(): expected a Str, found a Python {type(text).__name__}")
        ids = self._ids
        try:
            out = [ids[c] for c in text]
        except KeyError as e:
            c = e.args[0]
            raise CheckError(f"encode(): character {c!r} (U+{ord(c):04X}) is not in {self._whose()}") from None
        return torch.tensor(out, dtype=torch.int64, device=_device._state.current)

    def decode(self, ids) -> str:
        """The text of ids: a ``[n]`` or ``[]`` integer tensor, an Int or a list of Ints."""
        if isinstance(ids, torch.Tensor):
            if ids.is_floating_point() or ids.is_complex() or ids.dim() > 1:
                raise CheckError(f"decode(): expected [n] integer ids, found {tensor_text(ids)}")
            values = ids.detach().reshape(-1).tolist()
        elif isinstance(ids, int):  # (a Bool is refused as an id, below)
            values = [ids]
        else:
            values = list(ids)
        chars = self.chars
        out = []
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < len(chars):
                raise CheckError(f"decode(): id {v!r} is not in {self._whose()}: ids are 0..{len(chars) - 1}")
            out.append(chars[v])
        return "".join(out)

    def __repr__(self) -> str:
        return f"Vocab({self.size} characters: {_char_text(self.chars)})"

    __str__ = __repr__


def decode(vocab: Vocab, ids) -> str:
    """``decode(vocab, ids)``: the built-in's spelling of ``vocab.decode(ids)``."""
    if not isinstance(vocab, Vocab):
        raise CheckError(f"decode(): expected a Vocab (from load_chars), found a Python {type(vocab).__name__}")
    return vocab.decode(ids)


def encode(vocab: Vocab, text: str) -> torch.Tensor:
    """``encode(vocab, text)``: the built-in's spelling of ``vocab.encode(text)``."""
    if not isinstance(vocab, Vocab):
        raise CheckError(f"encode(): expected a Vocab (from load_chars), found a Python {type(vocab).__name__}")
    return vocab.encode(text)


def load_chars(path, spec, *, sizes=None, src=None, line=0, col=0) -> tuple[torch.Tensor, Vocab]:
    """A UTF-8 text as character ids (``[n] Index[V]``, int64) and its :class:`Vocab`:
    the sorted set of its characters, which must fit in ``V``."""
    dims, elem = _spec_parts(spec, "load_chars")
    loc = _loc(src, line, col)
    shown = os.fspath(path)
    if len(dims) != 1 or elem.kind != "int":
        raise CheckError(
            f"{shown}: load_chars reads [n] Index[V] character ids, not {dims_text(dims)} {elem.name}", loc
        )
    full = resolve_path(path, src)
    _regular_file(shown, full, loc)
    try:
        with open(full, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise CheckError(f"{shown}: cannot read it: {e.strerror or e}", loc) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CheckError(f"{shown}: not UTF-8 text ({e.reason} at byte {e.start})", loc) from None
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    uniq, inverse = np.unique(codes, return_inverse=True)
    _check_shape((len(codes),), dims, shown, loc, sizes)
    if elem.size is not None and len(uniq) > elem.size:
        raise CheckError(
            f"{shown}: expected {dims_text(dims)} {elem.name}, found {len(uniq)} distinct characters,"
            f" more than {elem.name} holds",
            loc,
        )
    vocab = Vocab("".join(map(chr, uniq.tolist())), shown)
    ids = torch.from_numpy(inverse.reshape(-1).astype(np.int64))
    return _finish(ids.to(elem.dtype)), vocab


class VocabArg(ArgSpec):
    """A `Vocab[V]` parameter: a vocabulary of at most V characters."""

    __slots__ = ("size",)

    def __init__(self, name, size, loc=None):
        super().__init__(name, loc)
        self.size = size  # an int, or the name of a dim bound elsewhere

    def type_text(self) -> str:
        return f"Vocab[{self.size}]"

    def _check(self, a, env, sig):
        if not isinstance(a, Vocab):
            self._fail(sig, describe(a))
        elif isinstance(self.size, int) and a.size > self.size:
            self._fail(sig, f"a vocabulary of {a.size} characters")
