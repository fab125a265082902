"""``load_tokenizer(path, V)``: a Hugging Face ``tokenizer.json`` as a
``Vocab[V]``, so that ``encode`` and ``decode`` (runtime/_data.py) take it as
they take the characters of ``load_chars``.

The file is the ``tokenizers`` library's format, which Hugging Face model
folders carry; ``tokenizers`` is imported only here, when a file is read
(the ``[hf]`` extra: ``pip install 'quiver-lang[hf]'``). Its vocabulary
size, added tokens included, must be ``V``, the model's embedding size.
"""

from __future__ import annotations

import os

import torch

from . import _device
from ._data import Vocab, _regular_file, resolve_path
from ._errors import CheckError, QuiverError

HF_HINT = "pip install 'quiver-lang[hf]'"


class MissingExtraError(QuiverError, ImportError):
    """A library of an optional extra is not installed: the one-line install hint."""


def _tokenizers(loc=None):
    """The ``tokenizers`` module, or the one-line install hint (at the ``.qv`` line)."""
    try:
        import tokenizers
    except ImportError:
        raise MissingExtraError(f"load_tokenizer needs the tokenizers library: {HF_HINT}", loc) from None
    return tokenizers


class Tokenizer(Vocab):
    """A ``tokenizers.Tokenizer`` seen as a vocabulary: ``encode`` gives its ids
    (special tokens as the tokenizer's post-processor adds them), ``decode``
    its text (special tokens skipped, as ``Tokenizer.decode`` does)."""

    __slots__ = ("tokenizer", "_size")

    def __init__(self, tokenizer, source: str | None = None):  # (not Vocab's: no characters)
        self.tokenizer = tokenizer
        self._size = int(tokenizer.get_vocab_size(with_added_tokens=True))
        self.chars = ""
        self._ids = {}
        self.source = source

    @property
    def size(self) -> int:
        return self._size

    def __len__(self) -> int:
        return self._size

    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def _whose(self) -> str:
        src = f" of {self.source}" if self.source else ""
        return f"the tokenizer{src} ({self._size} tokens)"

    def encode(self, text: str) -> torch.Tensor:
        if not isinstance(text, str):
            raise CheckError(f"encode(): expected a Str, found a Python {type(text).__name__}")
        ids = self.tokenizer.encode(text).ids
        return torch.tensor(ids, dtype=torch.int64, device=_device._state.current)

    def decode(self, ids) -> str:
        if isinstance(ids, torch.Tensor):
            if ids.is_floating_point() or ids.is_complex() or ids.dim() > 1:
                raise CheckError(f"decode(): expected [n] integer ids, found a {ids.dim()}-D {ids.dtype} tensor")
            values = ids.detach().reshape(-1).tolist()
        elif isinstance(ids, int):
            values = [ids]
        else:
            values = list(ids)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < self._size:
                raise CheckError(f"decode(): id {v!r} is not in {self._whose()}: ids are 0..{self._size - 1}")
        return self.tokenizer.decode(values)

    def __repr__(self) -> str:
        return f"Tokenizer({self.source or '?'}, {self._size} tokens)"

    __str__ = __repr__


def load_tokenizer(path, size=None, *, src=None, line=0, col=0) -> Tokenizer:
    """The tokenizer of a ``tokenizer.json`` file; ``size`` (the ``V`` of
    ``Vocab[V]``), when given, must be its vocabulary size."""
    loc = src.loc(line, col) if src is not None else None
    shown = os.fspath(path)
    full = resolve_path(path, src)
    _regular_file(shown, full, loc)
    tk = _tokenizers(loc)
    try:
        tok = tk.Tokenizer.from_file(full)
    except Exception as e:  # the library's words: not JSON, not a tokenizer
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckError(f"{shown}: not a tokenizer.json the tokenizers library reads ({first})", loc) from None
    out = Tokenizer(tok, shown)
    if size is not None and out.size != size:
        raise CheckError(
            f"{shown} has a vocabulary of {out.size} tokens (added tokens included), "
            f"but the program reads it as Vocab[{size}]",
            loc,
        )
    return out


__all__ = ["HF_HINT", "MissingExtraError", "Tokenizer", "load_tokenizer"]
