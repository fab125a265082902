"""rt.randperm and rt.batches (runtime/_batches.py)."""

from __future__ import annotations

import pytest
import torch

from quiver import runtime as rt


def torch_perm(n, seed):
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(("n", "seed"), [(0, 0), (1, 5), (10, 0), (10, 1), (1797, 3), (100_000, 2**63 + 7), (7, -1)])
def test_randperm_is_torchs(n, seed):
    got = rt.randperm(n, seed)
    assert got.dtype is torch.int64 and got.shape == (n,)
    assert torch.equal(got, torch_perm(n, seed))
    assert sorted(got.tolist()) == list(range(n))


def test_randperm_refuses_what_is_not_a_count_or_a_seed():
    src = rt.SourceFile("/abs/prog.qv")
    with pytest.raises(rt.CheckError) as info:
        rt.randperm(-1, 0, src=src, line=3, col=5)
    assert str(info.value) == "prog.qv:3: randperm(): n must be an Int >= 0, found Int -1"
    assert info.value.loc == rt.Loc("/abs/prog.qv", 3, 5)
    with pytest.raises(rt.CheckError, match=r"randperm\(\): seed 36893488147419103232 does not fit in 64 bits"):
        rt.randperm(3, 2**65)
    with pytest.raises(rt.CheckError, match=r"the seed must be an Int, found Float 1.5"):
        rt.randperm(3, 1.5)


def rows(n, *rest):
    """A [n ...] f32 tensor whose row i is all i, and its labels i % 10."""
    x = torch.arange(n, dtype=torch.float32).reshape(n, *([1] * len(rest))).expand(n, *rest).contiguous()
    return x, torch.arange(n) % 10


def test_in_order_the_batches_are_slices_and_the_last_is_short():
    x, y = rows(10, 3)
    b = rt.batches(x, y, size=4)
    assert len(b) == 3
    got = list(b)
    assert [tuple(t.shape for t in batch) for batch in got] == [((4, 3), (4,)), ((4, 3), (4,)), ((2, 3), (2,))]
    assert [xb[:, 0].tolist() for xb, _ in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [yb.tolist() for _, yb in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert got[0][0].data_ptr() == x.data_ptr()  # a view, not a copy


def test_drop_last_leaves_out_the_short_batch():
    x, y = rows(10, 2)
    b = rt.batches(x, y, size=4, drop_last=True)
    assert len(b) == 2
    assert [yb.tolist() for _, yb in b] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(rt.batches(x, size=5, drop_last=True)) == 2 and len(rt.batches(x, size=11, drop_last=True)) == 0
    assert len(rt.batches(x, size=11)) == 1


def test_shuffled_batches_cover_every_row_once_in_randperms_order():
    n, size, seed = 103, 16, 42
    x, y = rows(n, 5)
    b = rt.batches(x, y, size=size, shuffle=seed)
    got = list(b)
    assert len(got) == len(b) == 7
    assert [len(yb) for _, yb in got] == [16] * 6 + [7]
    order = torch.cat([xb[:, 0] for xb, _ in got]).long()
    assert torch.equal(order, torch_perm(n, seed))
    assert sorted(order.tolist()) == list(range(n))
    for xb, yb in got:  # the rows of one batch belong together
        assert torch.equal(yb, xb[:, 0].long() % 10)
        assert torch.equal(xb, xb[:, :1].expand_as(xb))
    # a second pass over the same batches: the same order
    again = torch.cat([xb[:, 0] for xb, _ in b]).long()
    assert torch.equal(again, order)


def test_shuffled_with_drop_last_leaves_out_the_last_rows_of_the_permutation():
    x, _ = rows(10)
    got = [xb.long().tolist() for xb in rt.batches(x, size=3, shuffle=7, drop_last=True)]
    assert sum(got, []) == torch_perm(10, 7)[:9].tolist()


def test_two_seeds_give_two_orders():
    x, y = rows(64, 2)
    first = [yb for _, yb in rt.batches(x, x[:, 0], size=8, shuffle=0)]
    second = [yb for _, yb in rt.batches(x, x[:, 0], size=8, shuffle=1)]
    assert not all(torch.equal(a, b) for a, b in zip(first, second))
    assert sorted(torch.cat(first).tolist()) == sorted(torch.cat(second).tolist()) == list(range(64))


def test_one_input_gives_its_batches_as_tensors():
    x, _ = rows(5)
    got = list(rt.batches(x, size=2, shuffle=3))
    assert all(isinstance(batch, torch.Tensor) for batch in got)
    assert [b.shape[0] for b in got] == [2, 2, 1]


def test_an_empty_input_has_no_batches():
    b = rt.batches(torch.zeros(0, 4), torch.zeros(0, dtype=torch.int64), size=8, shuffle=1)
    assert len(b) == 0 and list(b) == []


def test_shuffled_batches_index_once_per_input(monkeypatch):
    """One index_select per tensor per batch, nothing per row."""
    x, y = rows(1000, 4)
    calls = []
    real = torch.Tensor.index_select

    def counting(self, dim, index):
        calls.append(len(index))
        return real(self, dim, index)

    monkeypatch.setattr(torch.Tensor, "index_select", counting)
    got = list(rt.batches(x, y, size=100, shuffle=5))
    assert len(got) == 10 and calls == [100] * 20


def test_the_batches_of_a_tensor_that_takes_part_in_autograd_keep_their_graph():
    w = torch.ones(6, 2, requires_grad=True)
    xb = next(iter(rt.batches(w * 2, size=4, shuffle=1)))
    xb.sum().backward()
    assert w.grad is not None and w.grad.sum().item() == 16.0


def test_the_repr():
    x, y = rows(10, 3)
    assert repr(rt.batches(x, y, size=4, shuffle=2)) == "Batches([10 3] f32, [10] i64; size=4, shuffle=2: 3 batches)"
    assert repr(rt.batches(x, size=4, drop_last=True)) == "Batches([10 3] f32; size=4, in order, drop_last: 2 batches)"


def at(line=12, col=17):
    return {"src": rt.SourceFile("/abs/train.qv"), "line": line, "col": col}


@pytest.mark.parametrize(
    ("args", "kwargs", "why"),
    [
        (
            (torch.zeros(10, 3), torch.zeros(9)),
            {"size": 4},
            "batches(): the inputs' first dims differ (input 1 is [10 3] f32, input 2 is [9] f32)",
        ),
        ((), {"size": 4}, "batches(): no tensors to batch"),
        ((torch.zeros(3), 5), {"size": 4}, "batches(): input 2 is Int 5, not a tensor"),
        ((torch.tensor(1.0),), {"size": 4}, "batches(): input 1 is [] f32, which has no first dim to batch over"),
        ((torch.zeros(3),), {"size": 0}, "batches(): size must be an Int >= 1, found Int 0"),
        ((torch.zeros(3),), {"size": 2.0}, "batches(): size must be an Int >= 1, found Float 2.0"),
        (
            (torch.zeros(3),),
            {"size": 2, "shuffle": True},
            "batches(): shuffle is a seed (an Int, such as the epoch) or none, found Bool True",
        ),
        (
            (torch.zeros(3),),
            {"size": 2, "shuffle": 2**64},
            "batches(): shuffle seed 18446744073709551616 does not fit in 64 bits (seeds are Ints in -2**63 .. 2**64-1)",
        ),
        ((torch.zeros(3),), {"size": 2, "drop_last": 1}, "batches(): drop_last must be a Bool, found Int 1"),
    ],
)
def test_refusals_at_the_qv_line(args, kwargs, why):
    with pytest.raises(rt.CheckError) as info:
        rt.batches(*args, **kwargs, **at())
    assert info.value.detail == why
    assert info.value.loc == rt.Loc("/abs/train.qv", 12, 17) and str(info.value) == f"train.qv:12: {why}"


def test_a_training_loop_over_the_shipped_digits():
    """The loop the language will write: load, batch with a seed per epoch, train."""
    import os

    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
    src = rt.SourceFile(os.path.join(examples, "digits.qv"))
    x = rt.load_npz("data/digits.npz", "x", rt.TensorArg("x", ("n", 64), rt.f32), src=src, line=1, col=1) / 16
    y = rt.load_npz("data/digits.npz", "y", rt.TensorArg("y", ("n",), rt.index(10)), src=src, line=2, col=1)
    w = torch.zeros(64, 10, requires_grad=True)
    losses = []
    for epoch in range(3):
        labels = []
        for xb, yb in rt.batches(x, y, size=128, shuffle=epoch):
            loss = torch.nn.functional.cross_entropy(xb @ w, yb)
            (g,) = torch.autograd.grad(loss, w)
            with torch.no_grad():
                w -= 0.5 * g
            losses.append(loss.item())
            labels.append(yb)
        # every row once per epoch: the labels of the epoch are y's, in another order
        assert torch.equal(torch.bincount(torch.cat(labels)), torch.bincount(y))
    assert len(losses) == 3 * 15  # 1797 rows: 14 full batches and one of 5
    accuracy = ((x @ w).argmax(1) == y).float().mean().item()
    assert losses[-1] < losses[0] and accuracy > 0.8
