"""examples/gpt.qv writes text as nanoGPT's `generate` does, token for token.

The example's `generate` (a sequence that grows by `concat`, cropped to the
block size before each forward, the last position's scores divided by a
temperature, cut to the top k, a draw by `multinomial(seed=seed + i)`) and
`generate_greedy` (argmax) are checked against the same loop written in
PyTorch on the torch.nn twin of the model (tests/test_examples_parity.py's
`_Gpt`, started from the example's params): torch.cat, `idx[:, -T:]`,
torch.topk and `-inf`, torch.multinomial with a generator seeded as
quiver.runtime's `multinomial` seeds it (a fresh `torch.Generator` on the
probabilities' device, `manual_seed(seed + i)` for draw i). The generated
sequences are longer than the block size, so the crop is exercised, and start
shorter than it, so the model reads fewer than T characters at first.

Last, the example's own `main` (with fewer training steps) prints the text
that the torch loop's tokens decode to with the vocabulary of
examples/data/tiny.txt.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from test_examples_parity import GPT_KEPT, _copy_in, _Gpt, gpt_text

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gpt.qv"
TRAIN_STEPS = 40  # enough for the scores to lean towards the text's characters
NEW = 64  # tokens generated in each comparison (the block size is 32)
PROMPT = "First Citizen:\n"  # the prompt examples/gpt.qv's main writes from


def _train(mod, text: torch.Tensor, steps: int):
    """A Gpt trained as examples/gpt.qv's main trains it, for `steps` steps."""
    m = mod.Gpt.init(seed=0)
    opt = rt.AdamW(m, lr=0.003, weight_decay=0.01)
    for step in range(steps):
        mod.train_step(m, opt, *mod.batch(text, step))
    return m


def _twin(m) -> _Gpt:
    twin = _Gpt()
    _copy_in(twin, m.state_dict(), {n: n for n in twin.state_dict()}, GPT_KEPT)
    return twin.eval()


@torch.no_grad()
def torch_generate(
    twin: _Gpt,
    idx: torch.Tensor,
    steps: int,
    block: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int | None = None,
) -> torch.Tensor:
    """nanoGPT's GPT.generate; seed=None: greedy (argmax of the scores)."""
    for i in range(steps):
        idx_cond = idx if idx.size(1) <= block else idx[:, -block:]
        logits = twin(idx_cond)[:, -1, :]
        if seed is None:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            gen = torch.Generator(device=probs.device).manual_seed(seed + i)
            idx_next = torch.multinomial(probs, num_samples=1, generator=gen)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


@pytest.fixture(scope="module")
def trained():
    mod = quiver.load(str(EXAMPLE))
    text, vocab = gpt_text(mod)
    m = _train(mod, text, TRAIN_STEPS)
    return mod, text, vocab, m, _twin(m)


def _prompts(vocab: rt.Vocab, text: torch.Tensor) -> torch.Tensor:
    """Two prompts of 15 characters: the one main writes from, and 15 characters of the text."""
    first = vocab.encode(PROMPT)
    return torch.stack([first, text[1000 : 1000 + len(first)]])


def test_the_twin_reads_any_length_up_to_the_block_size(trained) -> None:
    mod, text, vocab, m, twin = trained
    for t in (1, 7, mod.T):
        tokens = text[:t].reshape(1, t)
        torch.testing.assert_close(m(tokens), twin(tokens), rtol=1e-5, atol=1e-5)
    # longer than the block size: an error (the cast of the positions), as nanoGPT's assert
    with rt.checks(True), pytest.raises(rt.CheckError, match="outside 0..31"):
        m(text[: mod.T + 1].reshape(1, -1))


def test_greedy_generation_equals_the_torch_loop(trained) -> None:
    mod, text, vocab, m, twin = trained
    idx = _prompts(vocab, text)
    ours = mod.generate_greedy(m, idx, NEW)
    theirs = torch_generate(twin, idx, NEW, mod.T)
    assert tuple(ours.shape) == (2, 15 + NEW) and torch.equal(ours[:, :15], idx)
    assert ours.tolist() == theirs.tolist()
    assert len(set(ours[0, 15:].tolist())) > 5  # it writes, not one character again and again


@pytest.mark.parametrize("temperature, k, seed", [(0.8, 10, 1), (1.0, 0, 7), (1.5, 3, 123)])
def test_sampled_generation_equals_the_torch_loop(trained, temperature: float, k: int, seed: int) -> None:
    mod, text, vocab, m, twin = trained
    idx = _prompts(vocab, text)
    ours = mod.generate(m, idx, NEW, temperature, k, seed)
    theirs = torch_generate(twin, idx, NEW, mod.T, temperature, k or None, seed)
    assert tuple(ours.shape) == (2, 15 + NEW)
    assert ours.tolist() == theirs.tolist()
    # the draws are seeded: another seed writes something else
    assert not torch.equal(mod.generate(m, idx, NEW, temperature, k, seed + 1), ours)


def test_main_prints_the_torch_loops_text(tmp_path: Path, capsys) -> None:
    """examples/gpt.qv's main, with TRAIN_STEPS training steps instead of its
    STEPS (a copy of the two files and the text), prints what the torch loop
    writes from the same model, decoded with the file's vocabulary."""
    source = EXAMPLE.read_text(encoding="utf-8")
    steps_line = next(line for line in source.splitlines() if line.startswith("dim STEPS = "))
    (tmp_path / "gpt.qv").write_text(source.replace(steps_line, f"dim STEPS = {TRAIN_STEPS}"), encoding="utf-8")
    shutil.copy(ROOT / "examples" / "gpt_model.qv", tmp_path / "gpt_model.qv")
    (tmp_path / "data").mkdir()
    shutil.copy(ROOT / "examples" / "data" / "tiny.txt", tmp_path / "data" / "tiny.txt")
    short = quiver.load(str(tmp_path / "gpt.qv"))
    capsys.readouterr()
    short.main()
    printed = capsys.readouterr().out
    # the same model, trained here, and nanoGPT's loop with main's settings
    text, vocab = gpt_text(short)
    twin = _twin(_train(short, text, TRAIN_STEPS))
    idx = vocab.encode(PROMPT).reshape(1, -1)
    tokens = torch_generate(twin, idx, short.G, short.T, temperature=0.8, top_k=10, seed=1)
    written = vocab.decode(tokens[0])
    assert written.startswith(PROMPT) and len(written) == len(PROMPT) + short.G
    assert printed.splitlines()[0] == repr(vocab) == str(vocab)
    head, _, tail = printed.partition("loss on another batch ")
    assert "step 0 loss " in head
    assert tail.split("\n", 1)[1] == written + "\n"
