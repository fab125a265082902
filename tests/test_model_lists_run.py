"""Lists of sub-models (`param layers: (Layer[784, 500], Layer[500, 500])`,
torch's nn.ModuleList), compiled and run: pytorch/examples' forward-forward
`Net([784, 500, 500])` with ONE list and one loop in its goodness and train
functions, against the same computation in torch (values, gradients, each
layer's own Adam); Grad[Net], an optimizer over the whole net, state_dict
keys, save/load, indexing by a literal and from Python."""

from __future__ import annotations

import torch

import quiver

FF = """\
dim D = 784
dim H = 500

# pytorch/examples' forward-forward Layer: an nn.Linear whose input is
# normalised first, with a ReLU
model Layer[I, O]:
    param weight: [O I] = uniform(-0.03, 0.03)
    param bias: [O] = uniform(-0.03, 0.03)

    fn forward(self, x: [b I]) -> [b O]:
        x_direction = x / (norm(x, over=I, keep=True) + 1e-4)
        return relu(x_direction @ transpose(self.weight) + self.bias)

model Net:
    param layers: (Layer[D, H], Layer[H, H])

    # Net.predict's inner loop: the goodness of x, summed over the layers
    fn goodness(self, x: [b D]) -> [b]:
        h = x
        total = zeros([b])
        for layer in self.layers:
            h = layer(h)
            total = total + mean(h ** 2, over=1)
        return total

fn layer_loss(l: Layer[i, o], x_pos: [b i], x_neg: [b i], threshold: Float) -> [] Float:
    g_pos = mean(l(x_pos) ** 2, over=o)
    g_neg = mean(l(x_neg) ** 2, over=o)
    return (sum(log(1.0 + exp(threshold - g_pos))) + sum(log(1.0 + exp(g_neg - threshold)))) / (2.0 * b)

# Net.train: each layer trained in turn with its own Adam, on what the
# layers before it made of the positive and negative data
fn train(mut net: Net, x_pos: [b D], x_neg: [b D], epochs: Int, lr: Float, threshold: Float) -> [] Float:
    h_pos = x_pos
    h_neg = x_neg
    last = zeros([])
    for layer in net.layers:
        opt = Adam(layer, lr=lr)
        for i in range(epochs):
            l, g = value_and_grad(layer_loss, layer, h_pos, h_neg, threshold)
            opt.step(layer, g)
            last = l
        h_pos = stop_grad(layer(h_pos))
        h_neg = stop_grad(layer(h_neg))
    return last

fn total_goodness(net: Net, x: [b D]) -> [] Float:
    return sum(net.goodness(x))

fn net_grads(net: Net, x: [b D]) -> Grad[Net]:
    return grad(total_goodness, net, x)

fn first_weight_grad(net: Net, x: [b D]) -> [H D]:
    g = grad(total_goodness, net, x)
    return g.layers[0].weight

fn sgd_step(mut net: Net, x: [b D]) -> [] Float:
    l, g = value_and_grad(total_goodness, net, x)
    opt = SGD(net, lr=0.1)
    opt.step(net, g)
    return l

fn second(net: Net, x: [b H]) -> [b H]:
    return net.layers[1](x)
"""


class TorchLayer(torch.nn.Linear):
    """pytorch/examples mnist_forward_forward/main.py's Layer (its train, without tqdm)."""

    def __init__(self, i, o, lr, threshold, epochs):
        super().__init__(i, o)
        self.relu = torch.nn.ReLU()
        self.opt = torch.optim.Adam(self.parameters(), lr=lr)
        self.threshold = threshold
        self.num_epochs = epochs
        self.losses = []

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train_layer(self, x_pos, x_neg):
        for _ in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log(1 + torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.losses.append(loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class TorchNet(torch.nn.Module):
    def __init__(self, dims, lr, threshold, epochs):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            TorchLayer(dims[d], dims[d + 1], lr, threshold, epochs) for d in range(len(dims) - 1)
        )

    def goodness(self, x):
        h = x
        goodness = []
        for layer in self.layers:
            h = layer(h)
            goodness += [h.pow(2).mean(1)]
        return sum(goodness)

    def train_net(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for layer in self.layers:
            h_pos, h_neg = layer.train_layer(h_pos, h_neg)


def _setup(tmp_path, lr=0.03, threshold=2.0, epochs=3):
    path = tmp_path / "ff.qv"
    path.write_text(FF, encoding="utf-8")
    q = quiver.load(str(path))
    net = q.Net.init(seed=0)
    ref = TorchNet([784, 500, 500], lr, threshold, epochs)
    with torch.no_grad():
        for k, layer in enumerate(ref.layers):
            layer.weight.copy_(net.layers[k].weight)
            layer.bias.copy_(net.layers[k].bias)
    gen = torch.Generator().manual_seed(3)
    x_pos = torch.rand(16, 784, generator=gen)
    x_neg = torch.rand(16, 784, generator=gen)
    return q, net, ref, x_pos, x_neg


def test_state_dict_keys_are_torch_module_lists(tmp_path):
    q, net, ref, _, _ = _setup(tmp_path)
    assert list(net.state_dict()) == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]
    assert list(net.state_dict()) == list(ref.state_dict())
    assert net.layers[0].weight.shape == (500, 784) and net.layers[1].weight.shape == (500, 500)
    # the elements are initialised in order, from one generator
    assert not torch.equal(net.layers[0].weight[:, :500], net.layers[1].weight)
    # load a torch state_dict, save and load back
    net.load_state_dict({k: v.detach() for k, v in ref.state_dict().items()})
    net.save(tmp_path / "net.pt")
    back = q.Net.load(tmp_path / "net.pt")
    for k, v in back.state_dict().items():
        assert torch.equal(v, ref.state_dict()[k])


def test_goodness_and_gradients_equal_torch(tmp_path):
    q, net, ref, x_pos, _ = _setup(tmp_path)
    torch.testing.assert_close(net.goodness(x_pos), ref.goodness(x_pos), rtol=0, atol=1e-6)
    total = ref.goodness(x_pos).sum()
    total.backward()
    g = q.net_grads(net, x_pos)
    for k, layer in enumerate(ref.layers):
        torch.testing.assert_close(g.layers[k].weight, layer.weight.grad, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(g.layers[k].bias, layer.bias.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(q.first_weight_grad(net, x_pos), ref.layers[0].weight.grad, rtol=1e-5, atol=1e-6)
    h = torch.rand(4, 500)
    torch.testing.assert_close(q.second(net, h), ref.layers[1](h), rtol=0, atol=1e-6)


def test_train_equals_torch_layer_by_layer(tmp_path):
    q, net, ref, x_pos, x_neg = _setup(tmp_path)
    last = q.train(net, x_pos, x_neg, 3, 0.03, 2.0)
    ref.train_net(x_pos, x_neg)
    assert abs(float(last) - ref.layers[1].losses[-1]) < 1e-6
    for k, layer in enumerate(ref.layers):
        torch.testing.assert_close(net.layers[k].weight, layer.weight.detach(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(net.layers[k].bias, layer.bias.detach(), rtol=1e-5, atol=1e-6)


def test_an_optimizer_over_the_whole_net(tmp_path):
    q, net, ref, x_pos, _ = _setup(tmp_path)
    q.sgd_step(net, x_pos)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    ref.goodness(x_pos).sum().backward()
    opt.step()
    for k, layer in enumerate(ref.layers):
        torch.testing.assert_close(net.layers[k].weight, layer.weight.detach(), rtol=1e-5, atol=1e-6)


LISTS = """\
import nn

model Net:
    param layers: (nn.Linear[4, 8], nn.Tanh, nn.Linear[8, 2])

    fn forward(self, x: [b 4]) -> [b 2]:
        for layer in self.layers:
            x = layer(x)
        return x

    fn by_index(self, x: [b 4]) -> [b 2]:
        return self.layers[-1](self.layers[1](self.layers[0](x)))

fn copy(mut net: Net, other: Net):
    net.layers = other.layers
"""


def test_a_loop_over_models_of_different_kinds_runs_each_ones_forward(tmp_path):
    path = tmp_path / "lists.qv"
    path.write_text(LISTS, encoding="utf-8")
    q = quiver.load(str(path))
    net = q.Net.init(seed=0)
    other = q.Net.init(seed=1)
    x = torch.randn(3, 4)
    want = torch.tanh(x @ net.layers[0].weight + net.layers[0].bias) @ net.layers[2].weight + net.layers[2].bias
    torch.testing.assert_close(net(x), want, rtol=0, atol=1e-6)
    torch.testing.assert_close(net.by_index(x), want, rtol=0, atol=1e-6)
    assert list(net.state_dict()) == ["layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"]
    q.copy(net, other)
    torch.testing.assert_close(net(x), other(x), rtol=0, atol=0)
    assert net.layers[0].weight is not other.layers[0].weight


def test_to_module_has_torch_module_list_keys(tmp_path):
    q, net, ref, x_pos, _ = _setup(tmp_path)
    module = quiver.to_module(net, q.Net.goodness)
    assert list(module.state_dict()) == list(ref.state_dict())
    torch.testing.assert_close(module(x_pos), ref.goodness(x_pos), rtol=0, atol=1e-6)
