"""Models built from model types (issue 39), compiled and run: torchvision's
ResNet as one network generic over its block, `model ResNet[B: ResBlock, E =
1]`, instantiated as ResNet-18 (`ResNet[BasicBlock]`: [2, 2, 2, 2] basic
blocks) and as a bottleneck network (`ResNet[Bottleneck, 4]`: [2, 2, 2, 2]
bottleneck blocks of expansion 4), each block's `downsample` present exactly
when torchvision makes one, one `zero_init_residual` for both (a walk by block
kind), and one train step and one evaluation generic over a trait. Each is
compared with the same network written with torch.nn as torchvision writes
it: state dict keys, logits in eval mode, the losses of two SGD-momentum
steps in train mode, and every param and BatchNorm running statistic after
the first."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from test_member_conditions_run import _BasicBlock  # torchvision's BasicBlock, as torchvision writes it
from torch import nn

import quiver

RESNET = """\
import nn

dim C0 = 3
dim NC = 10

# What ResNet needs of a block: torchvision's block(inplanes, planes * expansion, stride)
trait ResBlock[Ci, Co, stride = 1]:
    fn forward(self, x: [b Ci h w], mode: Mode) -> [b Co ((h-1)/stride+1) ((w-1)/stride+1)]

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

# torchvision's Bottleneck: Co is planes * 4, the width Co/4
model Bottleneck[Ci, Co, stride = 1]:
    param conv1: nn.Conv2d[Ci, (Co/4), 1, bias=False]
    param bn1: nn.BatchNorm2d[(Co/4)]
    param conv2: nn.Conv2d[(Co/4), (Co/4), 3, stride=stride, padding=1, bias=False]
    param bn2: nn.BatchNorm2d[(Co/4)]
    param conv3: nn.Conv2d[(Co/4), Co, 1, bias=False]
    param bn3: nn.BatchNorm2d[Co]
    param downsample: (nn.Conv2d[Ci, Co, 1, stride=stride, bias=False], nn.BatchNorm2d[Co]) if stride != 1 or Ci != Co

    fn forward(self, x: [b Ci h w], mode: Mode) -> [b Co ((h-1)/stride+1) ((w-1)/stride+1)]:
        out = relu(self.bn1(self.conv1(x), mode))
        out = relu(self.bn2(self.conv2(out), mode))
        out = self.bn3(self.conv3(out), mode)
        if stride != 1 or Ci != Co:
            identity = self.downsample(x, mode)
        else:
            identity = x as [b Co ((h-1)/stride+1) ((w-1)/stride+1)]
        return relu(out + identity)

# torchvision's ResNet(block, [2, 2, 2, 2]); E is block.expansion
model ResNet[B: ResBlock, E = 1]:
    param conv1: nn.Conv2d[C0, 64, 7, stride=2, padding=3, bias=False]
    param bn1: nn.BatchNorm2d[64]
    param maxpool: nn.MaxPool2d[3, stride=2, padding=1]
    param layer1: (B[64, (64*E)], B[(64*E), (64*E)])
    param layer2: (B[(64*E), (128*E), stride=2], B[(128*E), (128*E)])
    param layer3: (B[(128*E), (256*E), stride=2], B[(256*E), (256*E)])
    param layer4: (B[(256*E), (512*E), stride=2], B[(512*E), (512*E)])
    param fc: nn.Linear[(512*E), NC]

    fn forward(self, x: [b C0 h w], mode: Mode) -> [b NC]:
        y = self.maxpool(relu(self.bn1(self.conv1(x), mode)))
        y = self.layer4(self.layer3(self.layer2(self.layer1(y, mode), mode), mode), mode)
        return self.fc(mean(y, over=(2, 3)))

type ResNet18 = ResNet[BasicBlock]
type ResNet26 = ResNet[Bottleneck, 4]

# What training needs of a network: written once for both
trait Classifier:
    fn forward(self, x: [b C0 h w], mode: Mode) -> [b NC]

# torchvision's zero_init_residual: each block's last BatchNorm starts at zero
fn zero_init_residual[M: Classifier](mut m: M):
    for block in modules(m, BasicBlock, seed=0):
        block.bn2.weight.init(zeros)
    for block in modules(m, Bottleneck, seed=0):
        block.bn3.weight.init(zeros)

fn logits[M: Classifier](m: M, x: [b C0 h w]) -> [b NC]:
    return m(x, Eval)

fn loss[M: Classifier](m: M, x: [b C0 h w], y: [b] Index[NC]) -> [] NonNeg:
    return cross_entropy(m(x, Train(seed=0)), y, over=NC)

fn sgd_step[M: Classifier](mut m: M, mut opt: SGD[M], x: [b C0 h w], y: [b] Index[NC]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn resnet18(seed: Int, zero_init: Bool) -> ResNet18:
    m = ResNet18.init(seed=seed)
    if zero_init:
        zero_init_residual(m)
    return m

fn resnet26(seed: Int, zero_init: Bool) -> ResNet26:
    m = ResNet26.init(seed=seed)
    if zero_init:
        zero_init_residual(m)
    return m

fn make_sgd18(m: ResNet18) -> SGD[ResNet18]:
    return SGD(m, lr=0.1, momentum=0.9)

fn make_sgd26(m: ResNet26) -> SGD[ResNet26]:
    return SGD(m, lr=0.1, momentum=0.9)
"""


class _Bottleneck(nn.Module):
    """torchvision.models.resnet.Bottleneck (groups 1, base width 64)."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class _ResNet(nn.Module):
    """torchvision.models.resnet.ResNet(block, [2, 2, 2, 2], num_classes=10)."""

    def __init__(self, block, zero_init_residual: bool = False) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(block, 64, 2)
        self.layer2 = self._make_layer(block, 128, 2, 2)
        self.layer3 = self._make_layer(block, 256, 2, 2)
        self.layer4 = self._make_layer(block, 512, 2, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, 10)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, _Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, _BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


_BLOCKS = {"resnet18": _BasicBlock, "resnet26": _Bottleneck}


def _mirror(m, block) -> _ResNet:
    """The torch network with the Quiver model's params and buffers (nn.Linear
    keeps its weight [I O], transposed from torch's)."""
    ref = _ResNet(block)
    state = {k: v.detach().clone() for k, v in m.state_dict().items()}
    state["fc.weight"] = state["fc.weight"].t().contiguous()
    ref.load_state_dict(state)
    return ref


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("resnet") / "resnet.qv"
    path.write_text(RESNET, encoding="utf-8")
    return quiver.load(str(path))


def _images(n: int = 4):
    gen = torch.Generator().manual_seed(3)
    return torch.randn(n, 3, 32, 32, generator=gen), torch.randint(0, 10, (n,), generator=gen)


@pytest.mark.parametrize("net", ["resnet18", "resnet26"])
def test_one_generic_network_has_torchvisions_keys_for_each_block(prog, net) -> None:
    m = getattr(prog, net)(0, False)
    keys, theirs = list(m.state_dict()), list(_ResNet(_BLOCKS[net]).state_dict())
    assert len(keys) == len(theirs) and set(keys) == set(theirs)  # (torch puts a module's buffers among its params)
    assert type(m)._qv_name == ("ResNet[BasicBlock, 1]" if net == "resnet18" else "ResNet[Bottleneck, 4]")
    assert type(m.layer2[0])._qv_name == ("BasicBlock[64, 128, 2]" if net == "resnet18" else "Bottleneck[256, 512, 2]")
    # torchvision's downsample: in the first block of each stage that changes
    # the stride or the width (for bottlenecks, layer1's too)
    has = [hasattr(getattr(m, f"layer{i}")[0], "downsample") for i in range(1, 5)]
    assert has == ([False, True, True, True] if net == "resnet18" else [True, True, True, True])
    assert not any(hasattr(getattr(m, f"layer{i}")[1], "downsample") for i in range(1, 5))


@pytest.mark.parametrize("zero_init", [False, True])
@pytest.mark.parametrize("net", ["resnet18", "resnet26"])
def test_forward_and_two_sgd_steps_equal_torchvision(prog, net, zero_init) -> None:
    m = getattr(prog, net)(1, zero_init)
    block = _BLOCKS[net]
    if zero_init:  # the same start as torchvision's own zero_init_residual
        start = _ResNet(block, zero_init_residual=True)
        last = "bn2" if block is _BasicBlock else "bn3"
        for i in range(1, 5):
            for j in range(2):
                ours = getattr(getattr(m, f"layer{i}")[j], last).weight
                assert torch.equal(ours, getattr(getattr(start, f"layer{i}")[j], last).weight.detach())
                assert not ours.any()
    ref = _mirror(m, block)
    x, y = _images()
    ref.eval()
    torch.testing.assert_close(prog.logits(m, x), ref(x).detach(), rtol=1e-4, atol=1e-5)
    ref.train()
    opt = prog.make_sgd18(m) if net == "resnet18" else prog.make_sgd26(m)
    torch_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(2):
        ours = prog.sgd_step(m, opt, x, y)
        torch_opt.zero_grad()
        theirs = F.cross_entropy(ref(x), y)
        theirs.backward()
        torch_opt.step()
        torch.testing.assert_close(ours, theirs.detach(), rtol=1e-4, atol=1e-5)
        if step == 0:
            # every param and running statistic after the first step; after
            # the second the deep bottleneck net is chaotic at this batch (BatchNorm
            # over 4 values at layer4's 1x1), torch against itself included
            theirs_state = ref.state_dict()
            for key, value in m.state_dict().items():
                want = theirs_state[key]
                want = want.t() if key == "fc.weight" else want
                torch.testing.assert_close(value, want, rtol=1e-4, atol=1e-5, msg=lambda msg, key=key: f"{key}: {msg}")


def test_a_network_of_each_block_is_made_from_python(prog) -> None:
    """From Python, the network's family takes the block's family first, as
    the program writes `ResNet[Bottleneck, 4]`."""
    cls = prog.ResNet[prog.Bottleneck, 4]
    assert cls is prog.ResNet.of(prog.Bottleneck, 4)
    m = cls.init(seed=1)
    assert torch.equal(m.fc.weight, prog.resnet26(1, False).fc.weight)
    with pytest.raises(quiver.runtime.ModelError, match="B must be a model that takes dims"):
        prog.ResNet.of(4, 1)


RNN = """\
import nn

dim V = 7
dim E = 5
dim H = 6

trait Cell[I, O]:
    fn sequence(self, xs: [t b I], h: [b O]) -> [t b O]

# makemore's RNN: `self.cell = RNNCell(...) if cell_type == 'rnn' else GRUCell(...)`
model Rnn[C: Cell]:
    param wte: nn.Embedding[V, E]
    param cell: C[E, H]
    param head: nn.Linear[H, V]

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        xs = permute(self.wte(idx), [t b E])
        hs = self.cell.sequence(xs, zeros([b H]))
        return self.head(permute(hs, [b t H]))

fn rnn(seed: Int) -> Rnn[nn.RNNCell]:
    return Rnn[nn.RNNCell].init(seed=seed)

fn gru(seed: Int) -> Rnn[nn.GRUCell]:
    return Rnn[nn.GRUCell].init(seed=seed)
"""


@pytest.mark.parametrize("kind", ["rnn", "gru"])
def test_makemores_rnn_takes_its_cell_as_a_model_parameter(tmp_path, kind) -> None:
    path = tmp_path / "rnn.qv"
    path.write_text(RNN, encoding="utf-8")
    prog = quiver.load(str(path))
    m = getattr(prog, kind)(0)
    # (named as the checker names the type: the cell with its module)
    assert type(m)._qv_name == ("Rnn[nn.RNNCell]" if kind == "rnn" else "Rnn[nn.GRUCell]")
    p = dict(m.state_dict())
    cell = torch.nn.RNNCell(5, 6) if kind == "rnn" else torch.nn.GRUCell(5, 6)
    # torch.nn's cell with the model's weights (torch keeps them [H I], Quiver's nn [I H])
    cell.load_state_dict({k[5:]: (v.t() if v.dim() == 2 else v) for k, v in p.items() if k.startswith("cell.")})
    x = torch.randint(0, 7, (3, 4), generator=torch.Generator().manual_seed(1))
    e = F.embedding(x, p["wte.weight"])
    h = torch.zeros(3, 6)
    outs = []
    for i in range(4):
        h = cell(e[:, i], h)
        outs.append(h)
    want = torch.stack(outs, 1) @ p["head.weight"] + p["head.bias"]
    torch.testing.assert_close(m(x), want.detach(), rtol=1e-5, atol=1e-6)
