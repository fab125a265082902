"""What docs/runtime.md says of non-persistent buffers at load and of a walk
left early, each compiled and run:

- `load(path, m)`, strict (the default), of a checkpoint of a model with a
  `persistent=False` buffer loads: the file does not hold the buffer and the
  load does not ask for it; the model keeps its own (`load_state_dict` too).
- a file that holds such a buffer (written while it was persistent) is
  refused by a strict load, as torch's strict `load_state_dict` refuses an
  unexpected key, and by `M.load(path)`; `strict=False` ignores it.
- `M.load(path)` computes such a buffer again as `init` does: an
  expression of the dims gives `init`'s value, and a random initialiser the
  numbers `M.init(seed=0)` draws for it, each buffer its own (they were all
  drawn from one fresh generator seeded with 0, so two such buffers of one
  shape, or one in each block of a stack, came back equal).
- a walk left by `break`, by `return` or by an exception (kept alive) leaves
  nothing registered: `p.init` of its params fails afterwards, and a walk
  nested in another gives the outer one its params back.
"""

from __future__ import annotations

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.runtime import _walks

BEFORE = """\
model Block:
    param v: [2] = normal(0.0, 1.0)

model Net:
    param w: [3] = normal(0.0, 1.0)
    buffer mask: [3 3] Bool = tril(ones([3 3] Bool))
    param blocks: [2] Block

fn make(seed: Int) -> Net:
    return Net.init(seed=seed)

fn keep(path: Str, m: Net):
    save(path, m)
"""

NOW = """\
model Block:
    param v: [2] = normal(0.0, 1.0)
    buffer noise: [4] = normal(0.0, 1.0), persistent=False

model Net:
    param w: [3] = normal(0.0, 1.0)
    buffer mask: [3 3] Bool = tril(ones([3 3] Bool)), persistent=False
    buffer noise: [4] = normal(0.0, 1.0), persistent=False
    buffer noise2: [4] = normal(0.0, 1.0), persistent=False
    param blocks: [2] Block

fn make(seed: Int) -> Net:
    return Net.init(seed=seed)

fn keep(path: Str, m: Net):
    save(path, m)

fn strict_load(path: Str, mut m: Net):
    load(path, m)

fn loose_load(path: Str, mut m: Net):
    load(path, m, strict=False)

fn first_only(mut m: Net):
    for name, p in named_params(m, seed=0):
        p.init(1.0)
        break

fn returns(mut m: Net) -> Int:
    for name, p in named_params(m, seed=0):
        p.init(2.0)
        return 1
    return 0

fn fails(mut m: Net, x: [3], k: Int):
    for name, p in named_params(m, seed=0):
        p.init(3.0)
        y = x[k]

fn nested(mut m: Net):
    for name, p in named_params(m, seed=0):
        for inner, q in named_params(m, seed=1):
            q.init(4.0)
            break
        p.init(5.0)
"""


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    root = tmp_path_factory.mktemp("unsaved")
    (root / "before").mkdir()
    (root / "before" / "net.qv").write_text(BEFORE)
    (root / "now.qv").write_text(NOW)
    return root, quiver.load(str(root / "before" / "net.qv")), quiver.load(str(root / "now.qv"))


def _same_state(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return list(sa) == list(sb) and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_a_strict_load_of_its_own_checkpoint_keeps_the_models_buffers(progs) -> None:
    root, _, now = progs
    saved = now.make(0)
    now.keep(str(root / "now.pt"), saved)
    assert list(torch.load(root / "now.pt", weights_only=True)) == ["w", "blocks.0.v", "blocks.1.v"]
    m = now.make(7)
    m.noise = torch.full((4,), 9.0)  # the model's own: load leaves it
    now.strict_load(str(root / "now.pt"), m)
    assert _same_state(m, saved)
    assert torch.equal(m.noise, torch.full((4,), 9.0)) and torch.equal(m.mask, saved.mask)
    m.load_state_dict(now.make(3).state_dict())
    assert torch.equal(m.noise, torch.full((4,), 9.0))


def test_a_file_that_holds_the_buffer_is_refused_unless_not_strict(progs) -> None:
    root, before, now = progs
    old = before.make(0)
    before.keep(str(root / "old.pt"), old)
    m = now.make(7)
    with pytest.raises(rt.CheckpointError) as info:
        now.strict_load(str(root / "old.pt"), m)
    assert str(info.value) == f"now.qv:19: {root / 'old.pt'} does not fit Net: it has fields Net does not: mask"
    old.save(str(root / "old_model.pt"))
    with pytest.raises(rt.ModelError) as info:
        now.Net.load(str(root / "old_model.pt"))
    assert str(info.value) == "state does not fit Net: unknown mask"
    # not strict: the mask of the file is ignored, the params loaded
    now.loose_load(str(root / "old.pt"), m)
    assert torch.equal(m.w, old.w) and all(torch.equal(b.v, o.v) for b, o in zip(m.blocks, old.blocks))
    assert torch.equal(m.mask, old.mask)


def test_a_model_loaded_from_a_file_computes_and_draws_its_unsaved_buffers_as_init_seed_0(progs) -> None:
    root, _, now = progs
    for seed in (0, 5):
        saved = now.make(seed)
        saved.save(str(root / f"m{seed}.pt"))
        back = now.Net.load(str(root / f"m{seed}.pt"))
        assert _same_state(back, saved)
        assert torch.equal(back.mask, torch.tril(torch.ones(3, 3, dtype=torch.bool)))
        zero = now.make(0)
        drawn = [back.noise, back.noise2, back.blocks[0].noise, back.blocks[1].noise]
        assert all(torch.equal(a, b) for a, b in zip(drawn, [zero.noise, zero.noise2, *(b.noise for b in zero.blocks)]))
        # each its own numbers
        assert len({tuple(t.tolist()) for t in drawn}) == 4
    # the file holds no seed: a model made with another one gets seed 0's
    assert not torch.equal(now.make(5).noise, now.Net.load(str(root / "m5.pt")).noise)


def test_a_walk_left_by_break_return_or_an_exception_leaves_nothing_registered(progs) -> None:
    _, _, now = progs
    m = now.make(0)
    now.first_only(m)
    assert torch.equal(m.w, torch.ones(3)) and not torch.equal(m.blocks[0].v, torch.ones(2))
    assert not _walks._ACTIVE and not _walks._LIVE
    assert now.returns(m) == 1 and torch.equal(m.w, torch.full((3,), 2.0))
    assert not _walks._ACTIVE and not _walks._LIVE
    kept = []
    try:
        now.fails(m, torch.zeros(3), 5)
    except IndexError as exc:
        kept.append(exc)  # its traceback, and the walk's frame, still alive
    assert kept and torch.equal(m.w, torch.full((3,), 3.0))
    assert not _walks._ACTIVE and not _walks._LIVE
    with pytest.raises(rt.ModelError, match="running walk"):
        rt.init_param(m.w, 0.5)


def test_a_walk_nested_and_left_early_gives_the_outer_walk_its_params_back(progs) -> None:
    _, _, now = progs
    m = now.make(0)
    now.nested(m)
    # each round: the inner walk sets w (its first param) to 4 and breaks,
    # then the outer one sets its own param to 5: w last got 4, the others 5
    assert torch.equal(m.w, torch.full((3,), 4.0))
    assert all(torch.equal(b.v, torch.full((2,), 5.0)) for b in m.blocks)
    assert not _walks._ACTIVE and not _walks._LIVE
