"""The checkpoint protocol on hand-written "compiled" code: `_qv_state_dict`
/ `_qv_load_state_dict` of models and optimizers, `rt.save_checkpoint` /
`rt.load_checkpoint` with any object that has the two methods, and loading in
place (the tensors, and Adam's cached lists of them, stay the same objects)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from quiver import runtime as rt

FIELDS = (
    rt.Field("w", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),
    rt.Field("b", (2,), rt.f32, rt.init.normal(0.0, 1.0)),
)


class Lin(rt.Model):
    _qv_name = "Lin"
    _qv_params = FIELDS
    _qv_buffers = (rt.Field("n", (), rt.i64, rt.init.fill(0)),)


def loss(m, x):
    return rt.sum(x @ m.w + m.b) ** 2


def stepped(opt, m, k: int) -> None:
    for i in range(k):
        opt.step(m, rt.value_and_grad(loss, m, torch.full((4, 3), float(i + 1)))[1])


class Counter:
    """A stand-in for another stateful runtime object (a learning-rate schedule)."""

    def __init__(self) -> None:
        self.count = 0

    def _qv_state_dict(self) -> dict:
        return {"count": self.count}

    def _qv_load_state_dict(self, d, where) -> None:
        if not isinstance(d, dict) or "count" not in d:
            raise ValueError(f"{where} holds no Counter")
        self.count = d["count"]


def test_a_model_loads_in_place() -> None:
    a, b = Lin.init(seed=0), Lin.init(seed=1)
    w = b.w
    b._qv_load_state_dict(a._qv_state_dict(), "here")
    assert b.w is w and torch.equal(b.w, a.w) and torch.equal(b.b, a.b)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: rt.SGD(m, lr=0.1, momentum=0.9),
        lambda m: rt.Adam(m, lr=0.1),
        lambda m: rt.AdamW(m, lr=0.1, amsgrad=True),
    ],
)
def test_an_optimizer_round_trip_goes_on_identically(tmp_path: Path, make) -> None:
    m1 = Lin.init(seed=0)
    o1 = make(m1)
    stepped(o1, m1, 3)
    o1.lr = 0.05
    rt.save_checkpoint(tmp_path / "c.pt", None, {"m": m1, "o": o1, "k": 3})
    m2 = Lin.init(seed=5)
    o2 = make(m2)
    cached = [t for lists in getattr(o2, "_qv_full", ())[:4] for t in lists]
    k = rt.load_checkpoint(tmp_path / "c.pt", None, {"m": m2, "o": o2, "k": 0})
    assert k == 3 and o2.steps == 3 and o2.lr == 0.05
    if cached:  # Adam's lists are the tensors it holds, loaded in place
        assert all(a is b for a, b in zip(cached, [t for lists in o2._qv_full[:4] for t in lists]))
    stepped(o1, m1, 2)
    stepped(o2, m2, 2)
    assert torch.equal(m1.w, m2.w) and torch.equal(m1.b, m2.b)


def test_sgd_state_that_is_not_there_yet_is_none(tmp_path: Path) -> None:
    m = Lin.init(seed=0)
    o = rt.SGD(m, lr=0.1, momentum=0.9)
    d = o._qv_state_dict()
    assert d["state"] == {"bufs": {"w": None, "b": None}}
    stepped(o, m, 1)
    o2 = rt.SGD(Lin.init(seed=0), lr=0.1, momentum=0.9)
    o2._qv_load_state_dict(o._qv_state_dict(), "here")
    assert torch.equal(o2._qv_bufs[0], o._qv_bufs[0]) and o2._qv_bufs[0] is not o._qv_bufs[0]


def test_any_object_with_the_protocol_is_saved_and_loaded(tmp_path: Path) -> None:
    c = Counter()
    c.count = 7
    rt.save_checkpoint(tmp_path / "c.pt", None, {"sched": c})
    assert torch.load(tmp_path / "c.pt", weights_only=True) == {"sched": {"count": 7}}
    c2 = Counter()
    assert rt.load_checkpoint(tmp_path / "c.pt", None, {"sched": c2}) is None and c2.count == 7
    rt.save_checkpoint(tmp_path / "n.pt", None, {"other": 1})
    with pytest.raises(rt.CheckpointError, match="has no entry 'sched'"):
        rt.load_checkpoint(tmp_path / "n.pt", None, {"sched": c2})


def test_a_value_that_cannot_be_saved(tmp_path: Path) -> None:
    with pytest.raises(rt.CheckpointError, match="'x' is a tensor, which cannot be saved"):
        rt.save_checkpoint(tmp_path / "c.pt", None, {"x": torch.zeros(2)})
    assert not (tmp_path / "c.pt").exists() and list(tmp_path.iterdir()) == []


def test_not_a_torch_file(tmp_path: Path) -> None:
    (tmp_path / "c.pt").write_text("hello")
    with pytest.raises(rt.CheckpointError, match="c.pt: not a checkpoint torch can read"):
        rt.load_checkpoint(str(tmp_path / "c.pt"), Lin.init(seed=0), None)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_checkpoint_moves_between_devices(tmp_path: Path) -> None:
    class OnCuda(rt.Model):
        _qv_name = "Lin"
        _qv_device = "cuda"
        _qv_params = FIELDS
        _qv_buffers = (rt.Field("n", (), rt.i64, rt.init.fill(0)),)

    m = OnCuda.init(seed=0)
    o = rt.SGD(m, lr=0.1, momentum=0.9)
    for i in range(2):
        o.step(m, rt.value_and_grad(loss, m, torch.full((4, 3), float(i + 1), device="cuda"))[1])
    rt.save_checkpoint(tmp_path / "c.pt", None, {"m": m, "o": o})
    # the file holds CPU tensors: it opens without map_location on any machine
    raw = torch.load(tmp_path / "c.pt", weights_only=True)
    assert raw["m"]["w"].device.type == "cpu" and raw["o"]["state"]["bufs"]["w"].device.type == "cpu"
    cpu = Lin.init(seed=3)
    rt.load_checkpoint(tmp_path / "c.pt", None, {"m": cpu})
    assert torch.equal(cpu.w, m.w.cpu())
    m2 = OnCuda.init(seed=3)
    o2 = rt.SGD(m2, lr=0.1, momentum=0.9)
    rt.load_checkpoint(tmp_path / "c.pt", None, {"m": m2, "o": o2})
    assert m2.w.device.type == "cuda" and o2._qv_bufs[0].device.type == "cuda"
    assert torch.equal(o2._qv_bufs[0], o._qv_bufs[0])


class Scaled(rt.Model):
    _qv_name = "Scaled"
    _qv_params = (rt.Field("s", (2,), rt.nonneg, rt.init.fill(1.0)),)


def test_a_refined_field_is_checked_on_loading(tmp_path: Path) -> None:
    torch.save({"s": torch.tensor([1.0, -2.0])}, tmp_path / "s.pt")
    m = Scaled.init(seed=0)
    with pytest.raises(rt.CheckpointError, match=r"s.pt: s does not fit Scaled.s \(\[2\] NonNeg\): .*below 0"):
        rt.load_checkpoint(str(tmp_path / "s.pt"), m, None)
    assert torch.equal(m.s, torch.ones(2))  # unchanged


def test_a_missing_entry_or_a_wrong_number_changes_nothing(tmp_path: Path) -> None:
    a = Lin.init(seed=0)
    rt.save_checkpoint(tmp_path / "c.pt", None, {"m": a, "step": 3})
    b = Lin.init(seed=1)
    before = b.w.clone()
    with pytest.raises(rt.CheckpointError, match="has no entry 'epoch'"):
        rt.load_checkpoint(tmp_path / "c.pt", None, {"m": b, "epoch": 0})
    with pytest.raises(rt.CheckpointError, match="entry 'step' is Int 3, expected Bool"):
        rt.load_checkpoint(tmp_path / "c.pt", None, {"m": b, "step": True})
    assert torch.equal(b.w, before)


def test_a_long_list_of_keys_is_cut(tmp_path: Path) -> None:
    torch.save({f"layer{i}.weight": torch.zeros(1) for i in range(40)}, tmp_path / "big.pt")
    with pytest.raises(rt.CheckpointError, match=r"layer11.weight, \.\.\. \(40 in all\)"):
        rt.load_checkpoint(tmp_path / "big.pt", None, {"m": Lin.init(seed=0), "k": 1})


def test_a_checkpoint_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path) -> None:
    """A FIFO in the (untrusted) folder would block torch.load for ever."""
    import os

    from quiver.runtime import _checkpoint

    fifo = tmp_path / "ckpt.pt"
    os.mkfifo(fifo)
    with pytest.raises(_checkpoint.CheckpointError, match="not a regular file"):
        _checkpoint._read("ckpt.pt", str(fifo), None)


def test_a_saved_checkpoint_has_the_permissions_of_a_new_file(tmp_path) -> None:
    import os
    import stat

    from quiver.runtime import _checkpoint

    umask = os.umask(0o022)
    try:
        _checkpoint.save_checkpoint(str(tmp_path / "n.pt"), None, {"step": 3})
        assert stat.S_IMODE(os.stat(tmp_path / "n.pt").st_mode) == 0o644
        os.chmod(tmp_path / "n.pt", 0o600)
        _checkpoint.save_checkpoint(str(tmp_path / "n.pt"), None, {"step": 4})  # a save keeps the file's mode
        assert stat.S_IMODE(os.stat(tmp_path / "n.pt").st_mode) == 0o600
    finally:
        os.umask(umask)
