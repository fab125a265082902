"""Three small forms of issue 39, compiled and run against torch:

- one `weights_init[M: nn.Module]` for a DCGAN generator, a discriminator and
  a net of both convolution kinds, as pytorch/examples'
  `netG.apply(weights_init)` and `netD.apply(weights_init)`. "Equal" is exact
  equality with torch making the same draws: a walk is one
  `torch.Generator().manual_seed(seed)` (tests/test_walks_run.py), so the
  by-kind `weights_init` is torch's `apply` with one generator per walk, and
  the one-walk `weights_init_one` is torch's `apply(weights_init)` exactly,
  with one generator for the whole net, in module order. `num_params`, save
  and load through the same generic functions;
- a list of one sub-model, `param layers: (nn.Linear[4, 8],)`, called as
  torch's `nn.Sequential(nn.Linear(4, 8))` (values, gradients, state_dict
  keys), looped over and indexed;
- `nn.Sigmoid`'s Prob fed straight to `binary_cross_entropy`, as
  `nn.BCELoss()(nn.Sigmoid()(x), y)`, in f32 and f64.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import quiver
from quiver import runtime as rt

SRC = """\
import nn

dim NZ = 4
dim C = 3

trait Module:
    pass

model Gen:
    param main: (
        nn.ConvTranspose2d[NZ, 4, 4, 1, 0, bias=False], nn.BatchNorm2d[4], nn.ReLU[inplace=True],
        nn.ConvTranspose2d[4, C, 4, 2, 1, bias=False], nn.Tanh)

    fn forward(self, z: [b NZ 1 1], mode: Mode) -> [b C 8 8]:
        return self.main(z, mode)

model Disc:
    param main: (
        nn.Conv2d[C, 4, 4, 2, 1, bias=False], nn.LeakyReLU[negative_slope=0.2],
        nn.Conv2d[4, 8, 4, 2, 1, bias=False], nn.BatchNorm2d[8], nn.LeakyReLU[negative_slope=0.2],
        nn.Conv2d[8, 1, 2, 1, 0, bias=False], nn.Sigmoid)

    fn forward(self, x: [b C 8 8], mode: Mode) -> [b] Prob:
        return reshape(self.main(x, mode), [b])

model Mixed:
    param enc: nn.Conv2d[C, 2, 3]
    param bn: nn.BatchNorm2d[2]
    param dec: nn.ConvTranspose2d[2, C, 3]

model One:
    param layers: (nn.Linear[4, 8],)

    fn forward(self, x: [b 4]) -> [b 8]:
        return self.layers(x)

    fn looped(self, x: [b 4]) -> [b 8]:
        h = zeros([b 8])
        for layer in self.layers:
            h = h + layer(x)
        return h

    fn first(self, x: [b 4]) -> [b 8]:
        return self.layers[0](x)

# DCGAN's weights_init, walked by kind: conv weights N(0, 0.02) (a
# generator per walk), batch norm weights N(1, 0.02)
fn weights_init[M: nn.Module](mut m: M, seed: Int):
    for conv in modules(m, nn.Conv2d, seed=seed):
        conv.weight.init(normal(0.0, 0.02))
    for conv in modules(m, nn.ConvTranspose2d, seed=seed):
        conv.weight.init(normal(0.0, 0.02))
    for name, p in named_params(m, seed=seed + 1):
        if name.endswith(".weight") and ndim(p) == 1:
            p.init(normal(1.0, 0.02))

# the same in one walk, one generator in module order: torch's apply
fn weights_init_one[M: Module](mut m: M, seed: Int):
    for name, p in named_params(m, seed=seed):
        if ndim(p) == 4:
            p.init(normal(0.0, 0.02))
        elif name.endswith(".weight"):
            p.init(normal(1.0, 0.02))

fn count[M: Module](m: M) -> Int:
    return num_params(m)

fn copy[M: Module](m: M, mut into: M, path: Str):
    save(path, m)
    load(path, into)

fn gan_loss(d: Disc, g: Gen, z: [b NZ 1 1]) -> [] NonNeg:
    return binary_cross_entropy(d(g(z, Eval), Eval), ones([b]))

fn one_loss(m: One, x: [b 4]) -> [] Float:
    return sum(m(x) ** 2)

fn one_grad(m: One, x: [b 4]) -> Grad[One]:
    return grad(one_loss, m, x)

fn bce_of_sigmoid(x: [b], y: [b]) -> [] NonNeg:
    return binary_cross_entropy(nn.Sigmoid.init(seed=0)(x), y)

fn sigmoid64(x: [b] f64) -> [b] f64:
    return nn.Sigmoid[dtype=f64].init(seed=0)(x)
"""


@pytest.fixture(scope="module")
def q(tmp_path_factory):
    path = tmp_path_factory.mktemp("anymodel") / "anymodel.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


def _torch_gen() -> nn.Module:
    m = nn.Module()
    m.main = nn.Sequential(
        nn.ConvTranspose2d(4, 4, 4, 1, 0, bias=False),
        nn.BatchNorm2d(4),
        nn.ReLU(True),
        nn.ConvTranspose2d(4, 3, 4, 2, 1, bias=False),
        nn.Tanh(),
    )
    return m


def _torch_disc() -> nn.Module:
    m = nn.Module()
    m.main = nn.Sequential(
        nn.Conv2d(3, 4, 4, 2, 1, bias=False),
        nn.LeakyReLU(0.2),
        nn.Conv2d(4, 8, 4, 2, 1, bias=False),
        nn.BatchNorm2d(8),
        nn.LeakyReLU(0.2),
        nn.Conv2d(8, 1, 2, 1, 0, bias=False),
        nn.Sigmoid(),
    )
    return m


def _torch_mixed() -> nn.Module:
    m = nn.Module()
    m.enc = nn.Conv2d(3, 2, 3)
    m.bn = nn.BatchNorm2d(2)
    m.dec = nn.ConvTranspose2d(2, 3, 3)
    return m


TWINS = {"Gen": _torch_gen, "Disc": _torch_disc, "Mixed": _torch_mixed}


def _twin(q, kind: str, seed: int):
    ours = getattr(q, kind).init(seed=seed)
    theirs = TWINS[kind]()
    theirs.load_state_dict(ours.state_dict())
    return ours, theirs


def _torch_apply(net: nn.Module, conv: torch.Generator, tconv: torch.Generator, bn: torch.Generator) -> None:
    """pytorch/examples' dcgan weights_init through `net.apply`, each kind
    drawing from its own generator."""

    def weights_init(m: nn.Module) -> None:
        classname = m.__class__.__name__
        if classname == "Conv2d":
            nn.init.normal_(m.weight, 0.0, 0.02, generator=conv)
        elif classname == "ConvTranspose2d":
            nn.init.normal_(m.weight, 0.0, 0.02, generator=tconv)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight, 1.0, 0.02, generator=bn)
            nn.init.zeros_(m.bias)

    with torch.no_grad():
        net.apply(weights_init)


def _same(ours, theirs: nn.Module) -> None:
    mine, ref = ours.state_dict(), theirs.state_dict()
    assert sorted(mine) == sorted(ref)  # (params first, then buffers: torch interleaves them)
    for k, v in ref.items():
        assert torch.equal(mine[k], v), k


@pytest.mark.parametrize("kind", ["Gen", "Disc", "Mixed"])
def test_one_weights_init_by_kind_equals_torch_apply(q, kind) -> None:
    ours, theirs = _twin(q, kind, 0)
    q.weights_init(ours, 10)
    g = [torch.Generator().manual_seed(s) for s in (10, 10, 11)]  # one per walk
    _torch_apply(theirs, *g)
    _same(ours, theirs)
    # DCGAN's statistics took effect
    for k, v in ours.state_dict().items():
        if v.dim() == 4:
            assert abs(v.std().item() - 0.02) < 0.01, k


@pytest.mark.parametrize("kind", ["Gen", "Disc", "Mixed"])
def test_weights_init_in_one_walk_equals_torch_apply_with_one_generator(q, kind) -> None:
    ours, theirs = _twin(q, kind, 3)
    q.weights_init_one(ours, 7)
    g = torch.Generator().manual_seed(7)
    _torch_apply(theirs, g, g, g)
    _same(ours, theirs)


@pytest.mark.parametrize("kind", ["Gen", "Disc", "Mixed", "One"])
def test_num_params_of_any_model_is_torch_count(q, kind) -> None:
    m = getattr(q, kind).init(seed=0)
    theirs = TWINS[kind]() if kind in TWINS else nn.Sequential(nn.Linear(4, 8))
    assert q.count(m) == sum(p.numel() for p in theirs.parameters())


def test_save_and_load_through_any_model(q, tmp_path) -> None:
    d, e = q.Disc.init(seed=0), q.Disc.init(seed=1)
    q.weights_init(d, 5)
    path = str(tmp_path / "d.pt")
    q.copy(d, e, path)
    for k, v in d.state_dict().items():
        assert torch.equal(e.state_dict()[k], v), k
    assert sorted(torch.load(path, weights_only=True)) == sorted(_torch_disc().state_dict())


def test_a_list_of_one_equals_torch_sequential_of_one(q) -> None:
    m = q.One.init(seed=0)
    seq = nn.Sequential(nn.Linear(4, 8))
    ref = nn.Module()
    ref.layers = seq
    assert list(m.state_dict()) == list(ref.state_dict()) == ["layers.0.weight", "layers.0.bias"]
    with torch.no_grad():  # Quiver keeps a Linear's weight [I O], torch its transpose
        seq[0].weight.copy_(m.layers[0].weight.T)
        seq[0].bias.copy_(m.layers[0].bias)
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(1))
    want = seq(x)
    torch.testing.assert_close(m(x), want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(m.looped(x), want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(m.first(x), want, rtol=1e-6, atol=1e-6)
    g = q.one_grad(m, x)
    (seq(x) ** 2).sum().backward()
    torch.testing.assert_close(g.layers[0].weight, seq[0].weight.grad.T, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(g.layers[0].bias, seq[0].bias.grad, rtol=1e-5, atol=1e-6)


def test_sigmoid_layer_gives_a_prob_for_bce_as_torch(q) -> None:
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(6, generator=gen) * 3
    y = torch.rand(6, generator=gen)
    torch.testing.assert_close(q.bce_of_sigmoid(x, y), nn.BCELoss()(nn.Sigmoid()(x), y), rtol=1e-6, atol=1e-7)
    x64 = x.double()
    out = q.sigmoid64(x64)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, nn.Sigmoid()(x64))
    # a DCGAN discriminator's Prob straight into binary_cross_entropy
    d, g = q.Disc.init(seed=0), q.Gen.init(seed=1)
    z = torch.randn(4, 4, 1, 1, generator=gen)
    td, tg = _torch_disc(), _torch_gen()
    td.load_state_dict(d.state_dict())
    tg.load_state_dict(g.state_dict())
    td.eval()
    tg.eval()
    want = nn.BCELoss()(td.main(tg.main(z)).view(-1), torch.ones(4))
    torch.testing.assert_close(q.gan_loss(d, g, z), want, rtol=1e-5, atol=1e-6)


def test_a_generic_walk_refuses_a_value_that_is_not_a_model(q) -> None:
    with pytest.raises(rt.CheckError, match=r"anymodel.qv:\d+: count\(\): argument 'm' expected a model \(M: Module\)"):
        q.count(torch.zeros(3))
