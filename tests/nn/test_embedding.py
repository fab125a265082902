"""nn.Embedding against torch.nn.Embedding: the rows that labels of any rank
pick (f32 and f64), the weight's gradient through Quiver's own grad (labels
repeated, so rows add up) against torch's embedding backward; the default
initialisation N(0, 1) over many values; padding_idx (the start's zero row,
the rows and the gradient that never reaches the padding row) and padding
written as a mask against torch's padding_idx; and the diagnostic for labels
of another dim."""

from __future__ import annotations

import pytest
import torch
from nn_library import LIBRARY
from parity import close, copy_into, load

from quiver.checker.workspace import check_example

SRC = """
import nn

dim N = 4
dim T = 6
dim V = 11
dim E = 5
dim P = 7

fn make(seed: Int) -> nn.Embedding[V, E{o}]:
    return nn.Embedding[V, E{o}].init(seed=seed)

fn make_wide(seed: Int) -> nn.Embedding[2000, 64{o}]:
    return nn.Embedding[2000, 64{o}].init(seed=seed)

fn rows(l: nn.Embedding[V, E{o}], x: [N T] Index[V]) -> [N T E]{f}:
    return l(x)

fn rows_vector(l: nn.Embedding[V, E{o}], x: [T] Index[V]) -> [T E]{f}:
    return l(x)

fn row(l: nn.Embedding[V, E{o}], x: [] Index[V]) -> [E]{f}:
    return l(x)

fn loss(l: nn.Embedding[V, E{o}], x: [N T] Index[V], w: [N T E]{f}) -> []{f}:
    return sum(l(x) * w)

fn grads(l: nn.Embedding[V, E{o}], x: [N T] Index[V], w: [N T E]{f}) -> Grad[nn.Embedding[V, E{o}]]:
    return grad(loss, l, x, w)

# torch's padding_idx=0, written as a mask: the padding positions give zeros
# and send no gradient to row 0
fn padded(l: nn.Embedding[V, E{o}], x: [N T] Index[V]) -> [N T E]{f}:
    keep = reshape(x != 0, [N T 1])
    return where(keep, l(x), 0.0)

fn padded_loss(l: nn.Embedding[V, E{o}], x: [N T] Index[V], w: [N T E]{f}) -> []{f}:
    return sum(padded(l, x) * w)

fn padded_grads(l: nn.Embedding[V, E{o}], x: [N T] Index[V], w: [N T E]{f}) -> Grad[nn.Embedding[V, E{o}]]:
    return grad(padded_loss, l, x, w)

# torch's padding_idx itself: nn.Embedding[V, E, padding_idx=P]
fn make_pad(seed: Int) -> nn.Embedding[V, E, padding_idx=P{o}]:
    return nn.Embedding[V, E, padding_idx=P{o}].init(seed=seed)

fn pad_rows(l: nn.Embedding[V, E, padding_idx=P{o}], x: [N T] Index[V]) -> [N T E]{f}:
    return l(x)

fn pad_loss(l: nn.Embedding[V, E, padding_idx=P{o}], x: [N T] Index[V], w: [N T E]{f}) -> []{f}:
    return sum(l(x) * w)

fn pad_grads(l: nn.Embedding[V, E, padding_idx=P{o}], x: [N T] Index[V], w: [N T E]{f}) -> Grad[nn.Embedding[V, E, padding_idx=P{o}]]:
    return grad(pad_loss, l, x, w)

fn make_wide_pad(seed: Int) -> nn.Embedding[2000, 64, padding_idx=0{o}]:
    return nn.Embedding[2000, 64, padding_idx=0{o}].init(seed=seed)
"""


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SRC.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("embedding")), dt


def _labels(seed: int) -> torch.Tensor:
    # labels with repeats (and 0, the padding label below, several times)
    x = torch.randint(0, 11, (4, 6), generator=torch.Generator().manual_seed(seed))
    x[0, :3] = 0
    x[1, 0] = x[2, 5] = 7
    return x


def test_rows_and_gradients_match_torch(env) -> None:
    mod, dt = env
    layer = mod.make(3)
    assert layer.weight.shape == (11, 5) and layer.weight.dtype == dt
    ref = torch.nn.Embedding(11, 5, dtype=dt)
    copy_into(ref, layer)  # the same layout: [V E], torch's [num_embeddings, embedding_dim]
    x = _labels(0)
    w = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(1), dtype=dt)
    assert torch.equal(mod.rows(layer, x), ref(x))
    assert torch.equal(mod.rows_vector(layer, x[1]), ref(x[1]))
    assert torch.equal(mod.row(layer, x[1, 0]), ref(x[1, 0]))
    close(mod.loss(layer, x, w), (ref(x) * w).sum().detach(), "loss")
    (ref(x) * w).sum().backward()
    assert ref.weight.grad is not None
    close(mod.grads(layer, x, w).weight, ref.weight.grad, "grad of weight")


def test_padding_as_a_mask_is_torchs_padding_idx(env) -> None:
    # torch.nn.Embedding(V, E, padding_idx=0) starts row 0 at zeros and gives
    # it no gradient; the mask gives zeros there and no gradient to row 0
    mod, dt = env
    layer = mod.make(4)
    ref = torch.nn.Embedding(11, 5, padding_idx=0, dtype=dt)
    copy_into(ref, layer)
    with torch.no_grad():
        ref.weight[0] = 0.0  # what torch's constructor does
    x = _labels(2)
    w = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(3), dtype=dt)
    assert torch.equal(mod.padded(layer, x), ref(x))
    (ref(x) * w).sum().backward()
    assert ref.weight.grad is not None
    g = mod.padded_grads(layer, x, w)
    assert torch.equal(g.weight[0], torch.zeros(5, dtype=dt)) and torch.equal(ref.weight.grad[0], g.weight[0])
    close(g.weight, ref.weight.grad, "grad of weight with padding")


def test_padding_idx_is_torchs(env) -> None:
    # torch.nn.Embedding(V, E, padding_idx=7): row 7 starts at zeros (the
    # other rows drawn as without it), the padding positions read row 7, and
    # row 7 gets no gradient, whatever it holds
    mod, dt = env
    layer = mod.make_pad(4)
    assert torch.equal(layer.weight[7], torch.zeros(5, dtype=dt))
    plain = mod.make(4).weight
    assert torch.equal(layer.weight[:7], plain[:7]) and torch.equal(layer.weight[8:], plain[8:])
    ref = torch.nn.Embedding(11, 5, padding_idx=7, dtype=dt)
    assert torch.equal(ref.weight[7], torch.zeros(5, dtype=dt))
    x = _labels(5)
    x[3, 2:] = 7
    w = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(6), dtype=dt)
    for filled in (False, True):
        if filled:  # a padding row set by hand is read, and still not trained (torch's too)
            with torch.no_grad():
                layer.weight[7] = 0.5
        copy_into(ref, layer)
        ref.weight.grad = None
        assert torch.equal(mod.pad_rows(layer, x), ref(x))
        close(mod.pad_loss(layer, x, w), (ref(x) * w).sum().detach(), "loss")
        (ref(x) * w).sum().backward()
        assert ref.weight.grad is not None
        g = mod.pad_grads(layer, x, w)
        assert torch.equal(g.weight[7], torch.zeros(5, dtype=dt))
        close(g.weight, ref.weight.grad, f"grad of weight with padding_idx, filled={filled}")


def test_padding_idx_leaves_the_rest_of_the_start_normal(env) -> None:
    mod, _ = env
    w = mod.make_wide_pad(0).weight.double()
    assert torch.equal(w[0], torch.zeros(64, dtype=w.dtype))
    assert abs(w[1:].std().item() - 1.0) < 0.01


def test_default_initialisation_is_torchs_normal(env) -> None:
    # torch: weight ~ N(0, 1); over 2000 x 64 values the mean, the standard
    # deviation and the share within one standard deviation are that normal's
    mod, dt = env
    w = mod.make_wide(0).weight.double()
    assert abs(w.mean().item()) < 0.01
    assert abs(w.std().item() - 1.0) < 0.01
    assert abs((w.abs() < 1.0).double().mean().item() - 0.6827) < 0.01
    assert w.abs().max() > 3.5  # not a uniform or a truncated normal
    ref = torch.nn.Embedding(2000, 64, dtype=dt).weight.detach().double()
    assert abs(w.std().item() - ref.std().item()) < 0.01
    assert not torch.equal(mod.make(0).weight, mod.make(1).weight)
    assert torch.equal(mod.make(2).weight, mod.make(2).weight)


def test_labels_of_another_dim_are_an_error() -> None:
    source = """
import nn

dim V = 11
dim E = 5
dim C = 3

fn wrong(l: nn.Embedding[V, E], y: [4] Index[C]) -> [4 E]:
    return l(y)
"""
    diags = [(d.code, d.message) for d in check_example(source, LIBRARY).diagnostics]
    assert diags == [
        ("E0305", "argument 'x' of nn.Embedding.forward: expected [4] Index[V], found [4] Index[C]"),
    ], diags


ROW = """
dim V = 5

model Table:
    param w: [V 3] = normal(0.0, 1.0, padding_idx=V - 2)

fn make(seed: Int) -> Table:
    return Table.init(seed=seed)
"""


def test_normals_padding_idx_zeroes_one_row_of_any_model(tmp_path) -> None:
    # the initializer nn.Embedding uses, in a model of one's own: row V-2 zeros,
    # the other rows the draws of normal(0.0, 1.0) without it
    w = load(ROW, tmp_path).make(0).w
    plain = load(ROW.replace(", padding_idx=V - 2", ""), tmp_path, "plain.qv").make(0).w
    assert torch.equal(w[3], torch.zeros(3))
    assert torch.equal(w[:3], plain[:3]) and torch.equal(w[4], plain[4])


@pytest.mark.parametrize("written, shown", [("-1", "-1"), ("1.5", "1.5")])
def test_a_padding_idx_that_is_no_row_is_one_diagnostic(written: str, shown: str) -> None:
    # torch's negative padding_idx counts from the end; here the row is written as it is
    src = f"dim V = 5\n\nmodel T:\n    param w: [V 3] = normal(0.0, 1.0, padding_idx={written})\n"
    found = [(d.code, d.message, src[d.span.start : d.span.end]) for d in check_example(src, LIBRARY).diagnostics]
    message = f"invalid initializer: normal's padding_idx is the row to zero, a whole number 0 or more, found {shown}"
    assert found == [("E0903", message, f"normal(0.0, 1.0, padding_idx={written})")], found
