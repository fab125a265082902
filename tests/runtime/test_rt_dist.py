"""Data-parallel gradients in one process: a stand-in for the other rank.

The process group is faked (`_dist._current` says "rank 0 of 2") and
`torch.distributed.all_reduce` is replaced by a function that adds what the
other rank would contribute: its buffer, recorded by running the same call
on the other half of the batch. So the averaging, the single all-reduce per
call and the calls that must not reduce are tested without processes;
tests/test_dist_run.py runs real workers.
"""

from __future__ import annotations

import io

import pytest
import torch
import torch.distributed as dist
import torch.nn.functional as F

from quiver import runtime as rt
from quiver.runtime import _dist

FIELDS = (
    rt.Field("w", (3, 4), rt.f32, rt.init.normal(0.0, 1.0)),
    rt.Field("b", (4,), rt.f32, rt.init.normal(0.0, 1.0)),
    rt.Field("s", (), rt.f64, rt.init.normal(0.0, 1.0)),
    rt.Field("count", (2,), rt.i64, rt.init.fill(3)),
)


class Net(rt.Model):
    _qv_name = "Net"
    _qv_params = FIELDS


def loss(m, x, y):
    return F.cross_entropy(x @ m.w + m.b, y) + (m.s * m.s).float()


def loss_aux(m, x, y):
    logits = x @ m.w + m.b
    return F.cross_entropy(logits, y) + (m.s * m.s).float(), logits.sum()


class FakeGroup:
    """Rank ``rank`` of a group of two, whose other rank's buffer is ``other``."""

    def __init__(self, monkeypatch, rank: int = 0):
        state = _dist._State()
        state.size, state.rank, state.group_id = 2, rank, object()
        monkeypatch.setattr(_dist, "_current", lambda: state)
        monkeypatch.setattr(dist, "all_reduce", self.all_reduce)
        self.other: torch.Tensor | None = None
        self.calls: list[torch.Tensor] = []

    def all_reduce(self, flat, op=None):
        assert op == dist.ReduceOp.SUM
        self.calls.append(flat.clone())
        if self.other is not None:
            flat.add_(self.other)
        else:  # recording: as if the other rank sent the same buffer
            flat.mul_(2)


def data():
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 4, (8,), generator=torch.Generator().manual_seed(2))
    return x, y


def averaged(monkeypatch, call):
    """``call(x, y)`` on the first half, the other rank having run it on the second."""
    x, y = data()
    group = FakeGroup(monkeypatch)
    call(x[4:], y[4:])
    group.other = group.calls[-1]
    group.calls.clear()
    return call(x[:4], y[:4]), group


def test_outside_a_group_rank_is_0_and_world_size_1():
    assert (rt.rank(), rt.world_size()) == (0, 1)
    assert not dist.is_initialized()


def test_gradient_and_value_are_averaged_with_one_all_reduce(monkeypatch):
    m = Net.init(seed=0)
    x, y = data()
    full_value, full = rt.value_and_grad(loss, m, x, y)  # not distributed: the reference
    (value, g), group = averaged(monkeypatch, lambda a, b: rt.value_and_grad(loss, m, a, b))
    assert len(group.calls) == 1  # one buffer for every leaf and the value
    buf = group.calls[0]
    assert buf.dtype == torch.float64  # the widest dtype among them (s is f64)
    assert buf.numel() == 3 * 4 + 4 + 1 + 1  # w, b, s and the value; not the integer leaf
    for name in ("w", "b", "s"):
        assert g[name].dtype == full[name].dtype
        torch.testing.assert_close(g[name], full[name], rtol=0, atol=1e-6)
    assert torch.equal(g.count, torch.zeros(2, dtype=torch.int64))
    torch.testing.assert_close(value, full_value, rtol=0, atol=1e-6)
    # and against torch's own numbers on the whole batch
    w = m.w.detach().clone().requires_grad_(True)
    b = m.b.detach().clone().requires_grad_(True)
    F.cross_entropy(x @ w + b, y).backward()
    assert w.grad is not None and b.grad is not None
    torch.testing.assert_close(g.w, w.grad, rtol=0, atol=1e-6)
    torch.testing.assert_close(g.b, b.grad, rtol=0, atol=1e-6)


def test_grad_selection_and_aux_reduce_once_and_keep_aux_local(monkeypatch):
    m = Net.init(seed=0)
    x, y = data()
    (full_value, full_aux), full = rt.value_and_grad(loss_aux, m, x, y, wrt=("w",), aux=True)
    ((value, aux), g), group = averaged(
        monkeypatch, lambda a, b: rt.value_and_grad(loss_aux, m, a, b, wrt=("w",), aux=True)
    )
    assert len(group.calls) == 1 and group.calls[0].numel() == 12 + 1
    torch.testing.assert_close(g.w, full.w, rtol=0, atol=1e-6)
    torch.testing.assert_close(value, full_value, rtol=0, atol=1e-6)
    # the aux output is this rank's own
    torch.testing.assert_close(aux, (x[:4] @ m.w + m.b).sum())
    monkeypatch.undo()
    full_b = rt.grad(loss, m, x, y, wrt=("b",)).b
    g2, group2 = averaged(monkeypatch, lambda a, b: rt.grad(loss, m, a, b, wrt=("b",)))
    assert len(group2.calls) == 1
    torch.testing.assert_close(g2.b, full_b, rtol=0, atol=1e-6)


def test_nested_calls_reduce_only_at_the_outermost(monkeypatch):
    m = Net.init(seed=0)

    def penalty(m, x, y):
        _, inner = rt.value_and_grad(loss, m, x, y)
        return loss(m, x, y) + rt.norm(inner) ** 2

    group = FakeGroup(monkeypatch)
    x, y = data()
    rt.value_and_grad(penalty, m, x, y)
    assert len(group.calls) == 1


@pytest.mark.parametrize("how", ["mean", "sum"])
def test_combining_per_example_gradients_takes_every_ranks_examples(monkeypatch, how):
    """DP-SGD's mean(clipped gs, over=n): the mean of the ranks' means (the sum of sums)."""
    m = Net.init(seed=0)
    x, y = data()
    combine = rt.mean_grad if how == "mean" else rt.sum_grad
    full = combine(rt.value_and_grad(loss, m, x, y, batch=(0, 0))[1])
    g, group = averaged(monkeypatch, lambda a, b: combine(rt.value_and_grad(loss, m, a, b, batch=(0, 0))[1]))
    assert len(group.calls) == 1 and group.calls[0].numel() == 12 + 4 + 1  # w, b, s; no value
    for name in ("w", "b", "s"):
        torch.testing.assert_close(g[name], full[name], rtol=0, atol=1e-6)
    assert torch.equal(g.count, torch.zeros(2, dtype=torch.int64))


def test_per_example_gradients_and_jvp_do_not_reduce(monkeypatch):
    m = Net.init(seed=0)
    x, y = data()
    before = rt.value_and_grad(loss, m, x, y, batch=(0, 0))
    group = FakeGroup(monkeypatch)
    values, gs = rt.value_and_grad(loss, m, x, y, batch=(0, 0))
    torch.testing.assert_close(values, before[0])
    torch.testing.assert_close(gs.w, before[1].w)
    rt.jvp(loss, m, rt.zeros_grad(Net), x, y)
    assert group.calls == []


def test_print_is_rank_0s_unless_all_ranks(monkeypatch):
    out = io.StringIO()
    FakeGroup(monkeypatch, rank=1)
    rt.print("loss", 1.5, file=out)
    assert out.getvalue() == ""
    rt.print("loss", 1.5, file=out, all_ranks=True)
    assert out.getvalue() == "[rank 1] loss 1.5\n"
    FakeGroup(monkeypatch, rank=0)
    rt.print("loss", 1.5, file=out)
    assert out.getvalue().endswith("\nloss 1.5\n")


def test_print_outside_a_group_has_no_prefix():
    out = io.StringIO()
    rt.print("a", file=out, all_ranks=True)
    assert out.getvalue() == "a\n"


def test_same_seed_same_params_on_every_rank():
    # what makes the ranks start alike: init draws from its own generator, on the CPU
    torch.manual_seed(123)
    a = Net.init(seed=7)
    torch.manual_seed(456)
    b = Net.init(seed=7)
    for k, v in a.state_dict().items():
        assert torch.equal(v, b.state_dict()[k])


@pytest.mark.parametrize(
    "message, comm",
    [
        ("[../gloo/transport/tcp/pair.cc:537] Read error [127.0.0.1]:1: Connection reset by peer.", True),
        ("Connection closed by peer [127.0.0.1]:29500", True),
        ("index 100 is out of bounds for dimension 0 with size 8", False),
    ],
)
def test_a_failure_of_the_group_is_told_from_the_programs(message, comm):
    assert _dist.is_comm_error(RuntimeError(message)) is comm
    assert not _dist.is_comm_error(IndexError(message))


def test_a_worker_on_cuda_takes_the_gpu_of_its_local_rank(monkeypatch):
    chosen = []
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    _dist.use_local_gpu()
    assert chosen == [1]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(RuntimeError, match=r"2 workers on this machine but 1 CUDA device\(s\): NCCL needs a GPU"):
        _dist.use_local_gpu()
