"""Members whose presence or shape the checker knows from dims and options
(issue 39), compiled and run: torchvision's BasicBlock as one model whose
`downsample` (a list of two sub-models, torch's nn.Sequential, so its keys are
torchvision's `downsample.0.weight`) exists exactly when `stride != 1 or Ci !=
Co`, used with and without it in a small two-stage ResNet, with
`zero_init_residual` as a walk over the blocks, against the same network written with
torch.nn as torchvision writes it (forward, two SGD steps, the BatchNorm
running statistics, `zero_init_residual`); and a graph attention layer whose
`concat` option changes its members' shapes, as one model, against a torch
reference of pytorch/examples' GraphAttentionLayer."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import quiver

RESNET = """\
import nn

dim C0 = 3
dim C1 = 4
dim C2 = 8
dim NC = 5

# torchvision's BasicBlock: the skip is downsampled exactly when the stride
# or the channel count changes
model BasicBlock[Ci, Co, stride = 1]:
    param conv1: nn.Conv2d[Ci, Co, 3, stride=stride, padding=1, bias=False]
    param bn1: nn.BatchNorm2d[Co]
    param conv2: nn.Conv2d[Co, Co, 3, padding=1, bias=False]
    param bn2: nn.BatchNorm2d[Co]
    param downsample: (nn.Conv2d[Ci, Co, 1, stride=stride, bias=False], nn.BatchNorm2d[Co]) if stride != 1 or Ci != Co

    fn forward(self, x: [b Ci h w], mode: Mode) -> [b Co ((h-1)/stride+1) ((w-1)/stride+1)]:
        out = relu(self.bn1(self.conv1(x), mode))
        out = self.bn2(self.conv2(out), mode)
        if stride != 1 or Ci != Co:
            identity = self.downsample(x, mode)
        else:
            identity = x as [b Co ((h-1)/stride+1) ((w-1)/stride+1)]
        return relu(out + identity)

model ResNet:
    param conv1: nn.Conv2d[C0, C1, 3, padding=1, bias=False]
    param bn1: nn.BatchNorm2d[C1]
    param layer1: BasicBlock[C1, C1]
    param layer2: BasicBlock[C1, C2, stride=2]
    param fc: nn.Linear[C2, NC]

    fn forward(self, x: [b C0 h w], mode: Mode) -> [b NC]:
        out = relu(self.bn1(self.conv1(x), mode))
        out = self.layer2(self.layer1(out, mode), mode)
        return self.fc(mean(out, over=(2, 3)))

# torchvision's zero_init_residual: each block's last BatchNorm starts at
# zero, so each block starts as its skip (`for m in self.modules(): if
# isinstance(m, BasicBlock): nn.init.constant_(m.bn2.weight, 0)`)
fn zero_init_residual(mut m: ResNet):
    for block in modules(m, BasicBlock, seed=0):
        block.bn2.weight.init(zeros)

fn make(seed: Int, zero_init: Bool) -> ResNet:
    m = ResNet.init(seed=seed)
    if zero_init:
        zero_init_residual(m)
    return m

fn logits(m: ResNet, x: [b C0 h w]) -> [b NC]:
    return m(x, Eval)

fn loss(m: ResNet, x: [b C0 h w], y: [b] Index[NC]) -> [] NonNeg:
    return cross_entropy(m(x, Train(seed=0)), y, over=NC)

fn make_sgd(m: ResNet) -> SGD[ResNet]:
    return SGD(m, lr=0.1, momentum=0.9)

fn sgd_step(mut m: ResNet, mut opt: SGD[ResNet], x: [b C0 h w], y: [b] Index[NC]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l
"""


class _BasicBlock(nn.Module):
    """torchvision.models.resnet.BasicBlock, as torchvision writes it."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class _ResNet(nn.Module):
    """torchvision's ResNet._make_layer, two stages of one block each."""

    def __init__(self, zero_init_residual: bool = False) -> None:
        super().__init__()
        self.inplanes = 4
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.layer1 = self._make_layer(4, 1)
        self.layer2 = self._make_layer(8, 2)
        self.fc = nn.Linear(8, 5)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, _BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, planes: int, stride: int) -> nn.Module:
        downsample = None
        if stride != 1 or self.inplanes != planes * _BasicBlock.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                nn.BatchNorm2d(planes),
            )
        block = _BasicBlock(self.inplanes, planes, stride, downsample)
        self.inplanes = planes
        return block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def _mirror(m, zero_init_residual: bool = False) -> _ResNet:
    """The torch network with the Quiver model's params and buffers (nn.Linear
    keeps its weight [I O], transposed from torch's)."""
    ref = _ResNet(zero_init_residual)
    state = {k: v.detach().clone() for k, v in m.state_dict().items()}
    state["fc.weight"] = state["fc.weight"].t().contiguous()
    ref.load_state_dict(state)
    return ref


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    path = tmp_path_factory.mktemp("resnet") / "resnet.qv"
    path.write_text(RESNET, encoding="utf-8")
    return quiver.load(str(path))


def _images(n: int = 6):
    gen = torch.Generator().manual_seed(3)
    return torch.randn(n, 3, 8, 8, generator=gen), torch.randint(0, 5, (n,), generator=gen)


def test_the_blocks_have_a_downsample_exactly_when_torchvision_makes_one(resnet) -> None:
    m = resnet.make(0, False)
    assert not hasattr(m.layer1, "downsample")
    # torch's nn.Sequential(conv1x1, BatchNorm2d), as a list of two sub-models
    assert [type(d)._qv_name for d in m.layer2.downsample] == [
        "nn.Conv2d[4, 8, 1, 2, 0, 1, 1, bias=False]",
        "nn.BatchNorm2d[8]",
    ]
    keys = set(m.state_dict())
    assert keys == set(_ResNet().state_dict())  # (torch orders a module's buffers among its params)
    assert not any(k.startswith("layer1.downsample") for k in keys)
    assert {k for k in keys if k.startswith("layer2.downsample")} == {
        "layer2.downsample.0.weight",
        "layer2.downsample.1.weight",
        "layer2.downsample.1.bias",
        "layer2.downsample.1.running_mean",
        "layer2.downsample.1.running_var",
        "layer2.downsample.1.num_batches_tracked",
    }


@pytest.mark.parametrize("zero_init", [False, True])
def test_forward_and_two_sgd_steps_equal_torchvision(resnet, zero_init) -> None:
    m = resnet.make(1, zero_init)
    if zero_init:
        assert torch.equal(m.layer1.bn2.weight, torch.zeros(4)) and torch.equal(m.layer2.bn2.weight, torch.zeros(8))
    ref = _mirror(m)
    if zero_init:  # torchvision's own zero_init_residual gives the same start
        start = _ResNet(zero_init_residual=True)
        assert torch.equal(start.layer1.bn2.weight, torch.zeros(4))
        assert torch.equal(start.layer2.bn2.weight, torch.zeros(8))
    x, y = _images()
    ref.eval()
    torch.testing.assert_close(resnet.logits(m, x), ref(x).detach(), rtol=1e-5, atol=1e-5)
    ref.train()
    opt = resnet.make_sgd(m)
    torch_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        ours = resnet.sgd_step(m, opt, x, y)
        torch_opt.zero_grad()
        theirs = F.cross_entropy(ref(x), y)
        theirs.backward()
        torch_opt.step()
        torch.testing.assert_close(ours, theirs.detach(), rtol=1e-5, atol=1e-5)
    theirs_state = ref.state_dict()
    for key, value in m.state_dict().items():
        want = theirs_state[key]
        want = want.t() if key == "fc.weight" else want
        torch.testing.assert_close(value, want, rtol=1e-4, atol=1e-5, msg=key)


GAT = """\
dim N = 9  # nodes
dim F = 6
dim NH = 3
dim HID = 12
dim C = 4

# pytorch/examples' GraphAttentionLayer: with concat, the NH heads of OUT/NH
# features each are concatenated into OUT; without, NH heads of OUT features
# are averaged. Its weight and attention vectors change shape with concat.
model GraphAttentionLayer[I, OUT, K, concat: Bool = True]:
    param W: [I OUT] = xavier if concat
    param W: [I (K*OUT)] = xavier if not concat
    param a_src: [K (OUT/K) 1] = xavier if concat
    param a_src: [K OUT 1] = xavier if not concat
    param a_dst: [K (OUT/K) 1] = xavier if concat
    param a_dst: [K OUT 1] = xavier if not concat

    fn forward(self, h: [n I], adj: [n n]) -> [n OUT]:
        if concat:
            g = permute(reshape(h @ self.W, [n K (OUT/K)]), [K n (OUT/K)])
            e = leaky_relu(g @ self.a_src + transpose(g @ self.a_dst), 0.2)
            attention = softmax(where(adj > 0.0, e, -9e16), over=-1)
            return reshape(permute(attention @ g, [n K (OUT/K)]), [n OUT])
        g = permute(reshape(h @ self.W, [n K OUT]), [K n OUT])
        e = leaky_relu(g @ self.a_src + transpose(g @ self.a_dst), 0.2)
        attention = softmax(where(adj > 0.0, e, -9e16), over=-1)
        return mean(attention @ g, over=0)

model GAT:
    param gat1: GraphAttentionLayer[F, HID, NH]
    param gat2: GraphAttentionLayer[HID, C, 1, concat=False]

    fn forward(self, x: [n F], adj: [n n]) -> [n C]:
        return log_softmax(self.gat2(elu(self.gat1(x, adj)), adj), over=C)

fn loss(m: GAT, x: [n F], adj: [n n], labels: [n] Index[C]) -> [] NonNeg:
    return nll(m(x, adj), labels, over=C)

fn make(seed: Int) -> GAT:
    return GAT.init(seed=seed)

fn make_sgd(m: GAT) -> SGD[GAT]:
    return SGD(m, lr=0.05)

fn sgd_step(mut m: GAT, mut opt: SGD[GAT], x: [n F], adj: [n n], labels: [n] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, adj, labels)
    opt.step(m, g)
    return l
"""


class _GraphAttentionLayer(nn.Module):
    """pytorch/examples gat/main.py's layer (dropout left out), its
    attention vector `a` [K 2*hidden 1] split into its two halves."""

    def __init__(self, in_features: int, out_features: int, n_heads: int, concat: bool) -> None:
        super().__init__()
        self.n_heads, self.concat, self.out_features = n_heads, concat, out_features
        self.n_hidden = out_features // n_heads if concat else out_features
        self.W = nn.Parameter(torch.empty(in_features, self.n_hidden * n_heads))
        self.a_src = nn.Parameter(torch.empty(n_heads, self.n_hidden, 1))
        self.a_dst = nn.Parameter(torch.empty(n_heads, self.n_hidden, 1))

    def forward(self, h: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        n = h.shape[0]
        g = (h @ self.W).view(n, self.n_heads, self.n_hidden).permute(1, 0, 2)
        e = F.leaky_relu(g @ self.a_src + (g @ self.a_dst).mT, 0.2)
        attention = F.softmax(torch.where(adj > 0, e, torch.full_like(e, -9e16)), dim=-1)
        out = attention @ g
        if self.concat:
            return out.permute(1, 0, 2).contiguous().view(n, self.out_features)
        return out.mean(dim=0)


@pytest.fixture(scope="module")
def gat(tmp_path_factory):
    path = tmp_path_factory.mktemp("gat") / "gat.qv"
    path.write_text(GAT, encoding="utf-8")
    return quiver.load(str(path))


def test_each_layer_has_the_members_of_its_concat(gat) -> None:
    m = gat.make(0)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes == {
        "gat1.W": (6, 12),
        "gat1.a_src": (3, 4, 1),
        "gat1.a_dst": (3, 4, 1),
        "gat2.W": (12, 4),
        "gat2.a_src": (1, 4, 1),
        "gat2.a_dst": (1, 4, 1),
    }


def test_the_gat_equals_torch_step_by_step(gat) -> None:
    m = gat.make(2)
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(9, 6, generator=gen)
    a = torch.rand(9, 9, generator=gen) < 0.3
    adj = (a | a.T | torch.eye(9, dtype=torch.bool)).float()
    labels = torch.randint(0, 4, (9,), generator=gen)
    layers = {"gat1": _GraphAttentionLayer(6, 12, 3, True), "gat2": _GraphAttentionLayer(12, 4, 1, False)}
    for name, layer in layers.items():
        layer.load_state_dict({k.split(".", 1)[1]: v for k, v in m.state_dict().items() if k.startswith(name + ".")})
    params = [p for layer in layers.values() for p in layer.parameters()]
    opt = gat.make_sgd(m)
    torch_opt = torch.optim.SGD(params, lr=0.05)
    for _ in range(2):
        ours = gat.sgd_step(m, opt, x, adj, labels)
        torch_opt.zero_grad()
        out = F.log_softmax(layers["gat2"](F.elu(layers["gat1"](x, adj)), adj), dim=1)
        theirs = F.nll_loss(out, labels)
        theirs.backward()
        torch_opt.step()
        torch.testing.assert_close(ours, theirs.detach(), rtol=1e-5, atol=1e-6)
    for name, layer in layers.items():
        for k, v in layer.state_dict().items():
            torch.testing.assert_close(_field(m, f"{name}.{k}"), v, rtol=1e-5, atol=1e-6)


def _field(m, path: str):
    for part in path.split("."):
        m = getattr(m, part)
    return m
