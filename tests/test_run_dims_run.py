"""Issue 25, at run time: named dims known only at run time compile to the
sizes they stand for and are checked where they meet a known dim, with a
CheckError at that `.qv` line naming the sizes; examples/mnist_like.qv, which
reads its data from a file and trains over batches, trains exactly as the
same loop written in PyTorch.

The static halves are in tests/checker/test_run_dims.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt
from quiver.runtime import CheckError

ROOT = Path(__file__).resolve().parent.parent


def load(tmp_path, src: str, name: str = "prog.qv"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(src).lstrip("\n"), encoding="utf-8")
    return quiver.load(str(path))


def test_an_int_is_a_size(tmp_path) -> None:
    mod = load(
        tmp_path,
        """
        dim D = 3

        fn causal(size: Int) -> [size size] Bool:
            return tril(ones([size size] Bool))

        fn made(n: Int) -> [n D]:
            return zeros([n D]) + reshape(arange(n) as f32, [n 1])

        fn perm(n: Int) -> [n] i64:
            return randperm(n, seed=5) as i64
        """,
    )
    assert torch.equal(mod.causal(4), torch.tril(torch.ones(4, 4, dtype=torch.bool)))
    assert torch.equal(mod.made(2), torch.tensor([[0.0, 0, 0], [1, 1, 1]]))
    assert torch.equal(mod.perm(6), torch.randperm(6, generator=torch.Generator().manual_seed(5)))


def test_an_int_parameter_that_sizes_a_tensor_is_checked_at_entry(tmp_path) -> None:
    mod = load(
        tmp_path,
        """
        fn rows(n: Int, x: [n 2]) -> [n]:
            return sum(x, over=-1)
        """,
    )
    assert torch.equal(mod.rows(2, torch.ones(2, 2)), torch.tensor([2.0, 2.0]))
    with pytest.raises(CheckError) as e:
        mod.rows(3, torch.ones(2, 2))
    assert str(e.value).endswith(
        "prog.qv:1: rows(): dim n is 3 in argument 'n' but 2 in argument 'x' (expected [n 2] f32, found [2 2] f32)"
    )


def test_a_cast_names_a_run_time_size_and_a_second_cast_of_that_name_is_checked(tmp_path) -> None:
    mod = load(
        tmp_path,
        """
        dim T = 4

        fn pair(seq: [T b], a: Int, c: Int, d: Int) -> [b]:
            w = seq[a:c] as [k b]
            v = seq[a:d] as [k b]
            return sum(w + v, over=0)
        """,
    )
    seq = torch.arange(8.0).reshape(4, 2)
    assert torch.equal(mod.pair(seq, 1, 3, 3), (seq[1:3] * 2).sum(0))
    with pytest.raises(CheckError) as e:
        mod.pair(seq, 1, 3, 4)
    message = str(e.value)
    assert message.endswith("prog.qv:5: cast: value expected [k b] = [2 2], found [3 2]")


def test_a_run_time_size_returned_as_a_constant_fails_at_the_return(tmp_path) -> None:
    mod = load(
        tmp_path,
        """
        dim T = 3

        fn first(seq: [b 2], n: Int) -> [T 2]:
            return zeros([n 2]) + seq[0]
        """,
    )
    assert mod.first(torch.ones(5, 2), 3).shape == (3, 2)
    with pytest.raises(CheckError) as e:
        mod.first(torch.ones(5, 2), 4)
    assert str(e.value).endswith("prog.qv:4: first(): result expected [T 2] = [3 2], found [4 2]")


def test_a_reader_and_its_batches_in_a_loop(tmp_path) -> None:
    import numpy as np

    np.savez(tmp_path / "d.npz", x=np.arange(30, dtype=np.float32).reshape(10, 3), y=np.arange(10) % 4)
    mod = load(
        tmp_path,
        """
        dim D = 3
        dim C = 4

        fn walk(seed: Int) -> ([], [], Int):
            x = load_npz("d.npz", "x", [n D])
            y = load_npz("d.npz", "y", [n] Index[C])
            rows = 0.0
            labels = 0.0
            count = 0
            for xb, yb in batches(x, y, size=4, shuffle=seed):
                rows = rows + sum(xb * 0.0 + 1.0) / 3.0
                labels = labels + sum(yb as f32)
                count = count + 1
            return rows, labels, count
        """,
    )
    rows, labels, count = mod.walk(7)
    assert (rows.item(), labels.item(), count) == (10.0, float(sum(i % 4 for i in range(10))), 3)


def test_mnist_like_trains_as_the_same_loop_in_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "mnist_like.qv"))
    data = ROOT / "examples" / "data" / "digits.npz"
    x = rt.load_npz(str(data), "x", rt.TensorArg("x", ("n", 64), rt.f32)) / 16.0
    y = rt.load_npz(str(data), "y", rt.TensorArg("y", ("n",), rt.index(10)))
    train_x, train_y = x[:-297], y[:-297]
    m = mod.Mlp.init(seed=0)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    opt = rt.Adam(m, lr=0.001)
    params = {
        "w1": state["fc1.weight"].t().clone().requires_grad_(True),
        "b1": state["fc1.bias"].clone().requires_grad_(True),
        "w2": state["fc2.weight"].t().clone().requires_grad_(True),
        "b2": state["fc2.bias"].clone().requires_grad_(True),
    }
    ref = torch.optim.Adam(params.values(), lr=0.001)
    for epoch in range(2):
        ours = mod.train_epoch(m, opt, train_x, train_y, epoch)
        perm = torch.randperm(train_x.shape[0], generator=torch.Generator().manual_seed(epoch))
        losses = []
        for i in range(0, train_x.shape[0], 64):
            idx = perm[i : i + 64]
            xb, yb = train_x.index_select(0, idx), train_y.index_select(0, idx)
            logits = F.linear(F.relu(F.linear(xb, params["w1"], params["b1"])), params["w2"], params["b2"])
            loss = F.cross_entropy(logits, yb)
            ref.zero_grad()
            loss.backward()
            ref.step()
            losses.append(loss.detach())
        torch.testing.assert_close(ours, torch.stack(losses).mean(), rtol=1e-5, atol=1e-6)
        now = m.state_dict()
        torch.testing.assert_close(now["fc1.weight"], params["w1"].detach().t(), rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(now["fc2.bias"], params["b2"].detach(), rtol=1e-4, atol=1e-6)


def test_load_csv_picks_columns_by_position_or_name(tmp_path) -> None:
    (tmp_path / "t.csv").write_text("x,y,z\n1,2,3\n4,5,6\n", encoding="utf-8")
    mod = load(
        tmp_path,
        """
        fn picked() -> ([2], [], []):
            a = load_csv("t.csv", [n 2], header=True, columns=[0, 2])
            b = load_csv("t.csv", [n], header=True, columns="y")
            return sum(a, over=0), sum(b), a[1, 1]
        """,
    )
    a, b, corner = mod.picked()
    assert a.tolist() == [5.0, 9.0] and b.item() == 7.0 and corner.item() == 6.0


def test_a_vocabulary_is_passed_to_a_fn_and_checked_at_entry(tmp_path) -> None:
    (tmp_path / "t.txt").write_text("hello world", encoding="utf-8")
    mod = load(
        tmp_path,
        """
        dim V = 16

        fn show(vocab: Vocab[V], ids: [n] Index[V]) -> Str:
            return decode(vocab, ids)

        fn first(k: Int) -> Str:
            ids, vocab = load_chars("t.txt", [n] Index[V])
            return show(vocab, ids[:k])
        """,
    )
    assert mod.first(5) == "hello"
    with pytest.raises(CheckError) as e:
        mod.show("not a vocabulary", torch.zeros(3, dtype=torch.int64))
    assert "show(): argument 'vocab' expected Vocab[16]" in str(e.value)


def test_sizes_from_ints_and_reads_in_arithmetic_and_labels(tmp_path) -> None:
    import numpy as np

    np.save(tmp_path / "a.npy", np.arange(24, dtype=np.float32).reshape(6, 4))
    mod = load(
        tmp_path,
        """
        dim D = 4

        fn picks(k: Int) -> ([], Int, Int):
            n = k + 1
            y = randint([3] Index[n], seed=1)
            x = load_npy("a.npy", [m D])
            rows = x[randint([5] Index[m], seed=2)]
            return sum(rows), n, sum(arange(m - 1) as i64) as Int + sum(eye(n + 1)) as Int + sum(y as i64) as Int * 0
        """,
    )
    total, n, sizes = mod.picks(4)
    rows = torch.randint(0, 6, (5,), generator=torch.Generator().manual_seed(2))
    assert n == 5 and sizes == sum(range(5)) + 6
    assert total.item() == torch.arange(24.0).reshape(6, 4)[rows].sum().item()


def test_a_second_text_read_with_the_same_size_is_checked(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("hello world", encoding="utf-8")
    (tmp_path / "b.txt").write_text("hello", encoding="utf-8")
    mod = load(
        tmp_path,
        """
        dim V = 16

        fn both(second: Str) -> Str:
            a, v1 = load_chars("a.txt", [n] Index[V])
            b, v2 = load_chars(second, [n] Index[V])
            return decode(v2, b)
        """,
    )
    assert mod.both("a.txt") == "hello world"
    with pytest.raises(CheckError) as e:
        mod.both("b.txt")
    assert str(e.value).endswith("prog.qv:5: b.txt: expected [n] = [11], found [5]")
