"""Write the small data files the examples read, under examples/data/.

    .venv/bin/python scripts/make_datasets.py [--shakespeare input.txt]

- ``digits.npz``: the 8x8 handwritten digits that scikit-learn ships
  (``sklearn/datasets/data/digits.csv.gz``: 1797 rows of 64 pixels in 0..16 and
  a label): ``x`` uint8 ``[1797 64]``, ``y`` int64 ``[1797]`` in 0..9. scikit-learn
  is needed only to run this script (``.venv/bin/python -m pip install
  scikit-learn``); it is not a dependency of Quiver.
- ``tiny.txt``: the first lines of "tiny shakespeare" (public domain; the copy
  in the karpathy/char-rnn repository, data/tinyshakespeare/input.txt), up to
  the last speech that ends within 10,000 bytes. Written only when
  ``--shakespeare`` gives that file.

The archive is written byte for byte the same on every run (fixed timestamps
and order), so running the script again changes nothing.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import io
import os
import sys
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "examples", "data")
TEXT_BYTES = 10_000


def sklearn_digits_csv() -> str:
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("scikit-learn is not installed: .venv/bin/python -m pip install scikit-learn")
    return os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data", "digits.csv.gz")


def read_digits(path: str) -> tuple[np.ndarray, np.ndarray]:
    with gzip.open(path, "rt") as fh:
        table = np.loadtxt(fh, delimiter=",", dtype=np.int64)
    x, y = table[:, :-1], table[:, -1]
    assert x.shape == (1797, 64) and x.min() >= 0 and x.max() <= 16, x.shape
    assert y.min() == 0 and y.max() == 9
    return x.astype(np.uint8), y.astype(np.int64)


def write_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """np.savez_compressed, with fixed timestamps: the same bytes on every run."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue(), compresslevel=9)


def first_speeches(text: str, limit: int = TEXT_BYTES) -> str:
    """The text up to the last blank line (the end of a speech) within ``limit`` bytes."""
    head = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    end = head.rfind("\n\n")
    assert end > 0, "no speech ends within the limit"
    return head[: end + 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shakespeare", help="tiny shakespeare's input.txt, to write tiny.txt from")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)

    x, y = read_digits(sklearn_digits_csv())
    path = os.path.join(OUT, "digits.npz")
    write_npz(path, {"x": x, "y": y})
    print(f"{os.path.relpath(path, ROOT)}: x {x.shape} {x.dtype}, y {y.shape} {y.dtype}, {os.path.getsize(path)} bytes")

    if args.shakespeare:
        with open(args.shakespeare, encoding="utf-8") as fh:
            text = first_speeches(fh.read())
        path = os.path.join(OUT, "tiny.txt")
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        print(f"{os.path.relpath(path, ROOT)}: {len(text)} characters, {len(set(text))} distinct")


if __name__ == "__main__":
    main()
