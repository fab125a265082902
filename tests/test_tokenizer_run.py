"""`load_tokenizer(path, V)` at run time: a BPE tokenizer trained here with the
`tokenizers` library on a small text (standing in for GPT-2's, which no test
may download) and saved as `tokenizer.json`; Quiver's `encode`/`decode` give
exactly the library's ids and text, V is checked against the vocabulary size
with the `.qv` line, and without `tokenizers` the error is the install hint."""

from __future__ import annotations

import builtins
import textwrap
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

import quiver
from quiver.cli import main as quiver_main

TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "A tensor language checks the shapes of its programs before they run.",
    "Quiver compiles to Python and runs on torch; tokens are ids of a vocabulary.",
] * 10

SAMPLES = ["the lazy fox", "Quiver checks shapes!", "unseen wörds 123"]


def train(folder: Path) -> tuple[Tokenizer, Path]:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(TEXT, trainer)
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return tok, path


def run(folder: Path, capsys, vocab: int, body: str) -> tuple[int, str, str]:
    path = folder / "prog.qv"
    head = f"dim V = {vocab}\ndim E = 8\n\nmodel Emb:\n    param wte: [V E] = normal(0.0, 0.02)\n\n"
    path.write_text(head + "fn main():\n" + textwrap.indent(textwrap.dedent(body), "    "))
    code = quiver_main(["run", str(path), "--no-warnings"])
    out, err = capsys.readouterr()
    return code, out, err


def test_encode_and_decode_are_the_libraries(tmp_path, capsys):
    tok, _ = train(tmp_path)
    size = tok.get_vocab_size()
    lines = "\n".join(
        f'ids = encode(tok, "{s}")\nprint(ids)\nprint(decode(tok, ids))\nprint(sum(m.wte[ids, :]) * 0.0)'
        for s in SAMPLES
    )
    code, out, err = run(
        tmp_path, capsys, size, 'tok = load_tokenizer("tokenizer.json", V)\nm = Emb.init(seed=0)\n' + lines
    )
    assert code == 0, err
    got = out.splitlines()
    for i, s in enumerate(SAMPLES):
        want = tok.encode(s).ids
        assert [int(x) for x in got[3 * i].strip("[]").split(",")] == want
        assert got[3 * i + 1] == tok.decode(want) == s


def test_python_api_gives_the_same_ids(tmp_path):
    tok, path = train(tmp_path)
    mine = quiver.load_tokenizer(str(path), tok.get_vocab_size())
    for s in SAMPLES:
        ids = mine.encode(s)
        assert ids.dtype == torch.int64
        assert ids.tolist() == tok.encode(s).ids
        assert mine.decode(ids) == tok.decode(tok.encode(s).ids)
    assert mine.size == len(mine) == tok.get_vocab_size()
    assert str(mine) == repr(mine) == f"Tokenizer({path}, {tok.get_vocab_size()} tokens)"


def test_a_fn_takes_it_as_a_vocab_and_print_shows_it(tmp_path, capsys):
    tok, _ = train(tmp_path)
    size = tok.get_vocab_size()
    path = tmp_path / "prog.qv"
    path.write_text(
        f'dim V = {size}\n\nfn show(tok: Vocab[V]) -> Str:\n    return decode(tok, encode(tok, "the dog"))\n\n'
        'fn main():\n    tok = load_tokenizer("tokenizer.json", V)\n    print(show(tok))\n    print(tok)\n'
    )
    code = quiver_main(["run", str(path), "--no-warnings"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.splitlines() == ["the dog", f"Tokenizer(tokenizer.json, {size} tokens)"]


def test_the_size_is_checked_with_the_line(tmp_path, capsys):
    tok, _ = train(tmp_path)
    size = tok.get_vocab_size()
    code, _, err = run(tmp_path, capsys, size + 1, 'x = 1\ntok = load_tokenizer("tokenizer.json", V)\n')
    assert code != 0
    assert (
        f"prog.qv:9:11: error: tokenizer.json has a vocabulary of {size} tokens (added tokens included), "
        f"but the program reads it as Vocab[{size + 1}]"
    ) in err


def test_an_id_out_of_the_vocabulary(tmp_path):
    tok, path = train(tmp_path)
    mine = quiver.load_tokenizer(str(path))
    with pytest.raises(quiver.runtime.CheckError, match="is not in the tokenizer"):
        mine.decode([mine.size])


def test_not_a_tokenizer_file(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{}")
    with pytest.raises(quiver.runtime.CheckError, match="not a tokenizer.json"):
        quiver.load_tokenizer(str(path))


def test_without_tokenizers_the_install_hint(tmp_path, monkeypatch):
    _, path = train(tmp_path)
    real = builtins.__import__

    def no_tokenizers(name, *args, **kwargs):
        if name == "tokenizers" or name.startswith("tokenizers."):
            raise ImportError("No module named 'tokenizers'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tokenizers)
    with pytest.raises(ImportError) as e:
        quiver.load_tokenizer(str(path))
    assert str(e.value) == "load_tokenizer needs the tokenizers library: pip install 'quiver-lang[hf]'"


def test_without_tokenizers_a_program_stops_at_its_line(tmp_path, capsys, monkeypatch):
    train(tmp_path)
    real = builtins.__import__

    def no_tokenizers(name, *args, **kwargs):
        if name == "tokenizers":
            raise ImportError("No module named 'tokenizers'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tokenizers)
    code, _, err = run(tmp_path, capsys, 320, 'tok = load_tokenizer("tokenizer.json", V)\n')
    assert code != 0
    assert err.strip().endswith(
        "prog.qv:8:11: error: load_tokenizer needs the tokenizers library: pip install 'quiver-lang[hf]'"
    )
