"""Models that take dims and options, compiled and run (issue 23): a small
MLP of nn.Linear layers, a stack of a generic block with a Float option and
one with a member under a Bool option, whose methods call methods; its values
and gradients (wrt=, per example with batch=, forward mode with jvp) against
the same computation in torch, SGD and Adam steps against torch.optim on the
same params, save/load of instances, and the Python side of a generic model
(`Block.of(...)`, `Block[...]`) with its errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt

SRC = """\
import nn

dim D = 5
dim H = 6
dim C = 3
dim L = 2

model Block[E, scale: Float = 1.0, gated: Bool = False]:
    param fc: nn.Linear[E, E]
    param gate: [E] = uniform(0.5, 1.5) if gated

    fn forward(self, x: [.. E]) -> [.. E]:
        h = tanh(self.fc(x)) * scale
        if gated:
            h = h * self.gate
        return x + h

    fn twice(self, x: [.. E]) -> [.. E]:
        return self.forward(self(x))

model Mlp:
    param fc1: nn.Linear[D, H]
    param blocks: [L] Block[H, scale=0.5]
    param gated: Block[H, gated=True]
    param fc2: nn.Linear[H, C, bias=False]

    fn forward(self, x: [.. D]) -> [.. C]:
        h = relu(self.fc1(x))
        for blk in self.blocks:
            h = blk(h)
        h = self.gated.twice(h)
        return self.fc2(h)

fn make(seed: Int) -> Mlp:
    return Mlp.init(seed=seed)

fn logits(m: Mlp, x: [b D]) -> [b C]:
    return m(x)

fn by_index(m: Mlp, x: [b H]) -> [b H]:
    h = x
    for i in range(L):
        h = m.blocks[i](h)
    return h

fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=C)

fn grads(m: Mlp, x: [b D], y: [b] Index[C]) -> Grad[Mlp]:
    return grad(loss, m, x, y)

fn head_grads(m: Mlp, x: [b D], y: [b] Index[C]) -> Grad[Mlp, wrt=[fc2, gated]]:
    l, g = value_and_grad(loss, m, x, y, wrt=[fc2, gated])
    return g

fn apply(l: nn.Linear[i, o], x: [b i]) -> [b o]:
    return l(x)

fn block_loss(k: Block[H, gated=True], x: [b H]) -> [] Float:
    return sum(k.twice(x))

fn block_grads(k: Block[H, gated=True], x: [b H]) -> Grad[Block[H, gated=True]]:
    return grad(block_loss, k, x)

fn make_sgd(m: Mlp) -> SGD[Mlp]:
    return SGD(m, lr=0.1, momentum=0.9, weight_decay=0.01)

fn make_adam(m: Mlp) -> Adam[Mlp]:
    return Adam(m, lr=0.01, betas=(0.8, 0.99))

fn sgd_step(mut m: Mlp, mut opt: SGD[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn adam_step(mut m: Mlp, mut opt: Adam[Mlp], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

fn one(m: Mlp, x: [D], y: [] Index[C]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=C)

fn per_example(m: Mlp, x: [b D], y: [b] Index[C]) -> [b] NonNeg:
    ls, gs = value_and_grad(one, m, x, y, batch=b)
    return ls * 0.0 + norm(gs)

fn directional(m: Mlp, t: Grad[Mlp], x: [b D]) -> [b C]:
    y, dy = jvp(logits, m, t, x)
    return dy

fn plain_sgd(mut m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    m -= 0.1 * g
    return l
"""

PARAMS = (
    "fc1.weight",
    "fc1.bias",
    "blocks.0.fc.weight",
    "blocks.0.fc.bias",
    "blocks.1.fc.weight",
    "blocks.1.fc.bias",
    "gated.fc.weight",
    "gated.fc.bias",
    "gated.gate",
    "fc2.weight",
)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("generic") / "generic.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


def _data(n: int = 7):
    gen = torch.Generator().manual_seed(11)
    return torch.randn(n, 5, generator=gen), torch.randint(0, 3, (n,), generator=gen)


def _field(value, path: str):
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part)
    return value


def _torch_params(m) -> dict[str, torch.Tensor]:
    return {p: _field(m, p).detach().clone().requires_grad_(True) for p in PARAMS}


def _block(p: dict, prefix: str, h: torch.Tensor, scale: float = 1.0, gated: bool = False) -> torch.Tensor:
    out = torch.tanh(h @ p[f"{prefix}.fc.weight"] + p[f"{prefix}.fc.bias"]) * scale
    if gated:
        out = out * p[f"{prefix}.gate"]
    return h + out


def _ref_logits(p: dict, x: torch.Tensor) -> torch.Tensor:
    """Mlp.forward, written with torch: Linear keeps its weight as x @ w reads it."""
    h = torch.relu(x @ p["fc1.weight"] + p["fc1.bias"])
    for k in range(2):
        h = _block(p, f"blocks.{k}", h, scale=0.5)
    h = _block(p, "gated", _block(p, "gated", h, gated=True), gated=True)
    return h @ p["fc2.weight"]


def test_the_instances_have_their_members(mod) -> None:
    m = mod.make(0)
    assert tuple(m.state_dict()) == PARAMS
    assert type(m.blocks[0])._qv_name == "Block[6, scale=0.5]"
    assert type(m.gated)._qv_name == "Block[6, gated=True]"
    assert type(m.fc2)._qv_name == "nn.Linear[6, 3, bias=False]"  # as the checker names it
    # a member under an option exists only in the instances that have it
    assert m.gated.gate.shape == (6,) and not hasattr(m.blocks[0], "gate") and not hasattr(m.fc2, "bias")
    assert bool(((m.gated.gate >= 0.5) & (m.gated.gate < 1.5)).all())
    # init is deterministic, and each instance is drawn from the one generator
    again = mod.make(0)
    assert all(torch.equal(_field(m, p), _field(again, p)) for p in PARAMS)
    assert not torch.equal(m.blocks[0].fc.weight, m.blocks[1].fc.weight)


def test_values_equal_torch(mod) -> None:
    m = mod.make(1)
    x, y = _data()
    p = _torch_params(m)
    want = _ref_logits(p, x)
    torch.testing.assert_close(mod.logits(m, x), want, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(mod.loss(m, x, y), F.cross_entropy(want, y), rtol=1e-5, atol=1e-6)
    # a layer called from Python is its forward; a method calls a method
    h = torch.randn(4, 6)
    torch.testing.assert_close(m.gated.twice(h), _block(p, "gated", _block(p, "gated", h, gated=True), gated=True))
    torch.testing.assert_close(mod.by_index(m, h), _block(p, "blocks.1", _block(p, "blocks.0", h, 0.5), 0.5))
    # [.. E]: a forward of any rank
    torch.testing.assert_close(m.blocks[0].forward(h[None]), _block(p, "blocks.0", h, 0.5)[None])
    torch.testing.assert_close(mod.apply(m.fc1, x), x @ m.fc1.weight + m.fc1.bias)


def test_gradients_equal_torch(mod) -> None:
    m = mod.make(2)
    x, y = _data()
    g = mod.grads(m, x, y)
    p = _torch_params(m)
    F.cross_entropy(_ref_logits(p, x), y).backward()
    for path in PARAMS:
        ref = p[path].grad
        assert ref is not None
        torch.testing.assert_close(_field(g, path), ref, rtol=1e-5, atol=1e-6, msg=lambda s, path=path: f"{path}: {s}")
    # wrt= keeps the selected sub-models only, each with its own params
    h = mod.head_grads(m, x, y)
    assert list(h.keys()) == ["gated", "fc2"]
    torch.testing.assert_close(h.gated.gate, p["gated.gate"].grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h.fc2.weight, p["fc2.weight"].grad, rtol=1e-5, atol=1e-6)


def test_the_gradient_of_an_instance_alone(mod) -> None:
    k = mod.Block.of(6, gated=True).init(seed=3)
    x = torch.randn(4, 6)
    g = mod.block_grads(k, x)
    assert list(g.keys()) == ["fc", "gate"]
    p = {n: _field(k, n).detach().clone().requires_grad_(True) for n in ("fc.weight", "fc.bias", "gate")}
    q = {f"k.{n}": t for n, t in p.items()}
    _block(q, "k", _block(q, "k", x, gated=True), gated=True).sum().backward()
    for n in p:
        torch.testing.assert_close(_field(g, n), p[n].grad, rtol=1e-5, atol=1e-6)


def test_per_example_gradients_and_jvp_equal_torch(mod) -> None:
    m = mod.make(8)
    x, y = _data(4)
    norms = []
    for i in range(4):  # one example at a time, in torch
        p = _torch_params(m)
        F.cross_entropy(_ref_logits(p, x[i : i + 1]), y[i : i + 1]).backward()
        norms.append(torch.sqrt(sum((t.grad**2).sum() for t in p.values())))
    torch.testing.assert_close(mod.per_example(m, x, y), torch.stack(norms), rtol=1e-5, atol=1e-6)
    # forward mode along the gradient of the loss, against torch.autograd.functional.jvp
    g = mod.grads(m, x, y)
    p = {k: v.detach() for k, v in _torch_params(m).items()}
    tangent = {k: _field(g, k) for k in PARAMS}
    _, want = torch.autograd.functional.jvp(
        lambda *q: _ref_logits(dict(zip(PARAMS, q)), x), tuple(p[k] for k in PARAMS), tuple(tangent[k] for k in PARAMS)
    )
    torch.testing.assert_close(mod.directional(m, g, x), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("make", "step", "torch_opt"),
    [
        ("make_sgd", "sgd_step", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01)),
        ("make_adam", "adam_step", lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99))),
    ],
)
def test_optimizer_steps_equal_torch_optim(mod, make, step, torch_opt) -> None:
    m = mod.make(4)
    x, y = _data(16)
    p = _torch_params(m)
    opt = getattr(mod, make)(m)
    ref = torch_opt(list(p.values()))
    for _ in range(20):
        ours = getattr(mod, step)(m, opt, x, y)
        ref.zero_grad()
        theirs = F.cross_entropy(_ref_logits(p, x), y)
        theirs.backward()
        ref.step()
        torch.testing.assert_close(ours, theirs.detach(), rtol=1e-5, atol=1e-6)
    for path in PARAMS:
        torch.testing.assert_close(_field(m, path), p[path].detach(), rtol=1e-5, atol=1e-6)
    assert opt.steps == 20


def test_a_plain_step_through_the_stack(mod) -> None:
    m = mod.make(5)
    x, y = _data()
    p = _torch_params(m)
    mod.plain_sgd(m, x, y)
    F.cross_entropy(_ref_logits(p, x), y).backward()
    for path in PARAMS:
        torch.testing.assert_close(_field(m, path), (p[path] - 0.1 * p[path].grad).detach(), rtol=1e-5, atol=1e-6)


def test_save_and_load_round_trip(mod, tmp_path) -> None:
    m = mod.make(6)
    path = tmp_path / "mlp.pt"
    m.save(path)
    back = mod.Mlp.load(path)
    assert all(torch.equal(_field(m, p), _field(back, p)) for p in PARAMS)
    x, _ = _data()
    assert torch.equal(mod.logits(back, x), mod.logits(m, x))
    # an instance alone, loaded as the same instance only
    k = mod.Block.of(6, gated=True).init(seed=7)
    kpath = tmp_path / "block.pt"
    k.save(kpath)
    again = mod.Block.of(6, gated=True).load(kpath)
    assert type(again) is type(k) and torch.equal(again.gate, k.gate) and torch.equal(again.fc.weight, k.fc.weight)
    with pytest.raises(rt.ModelError, match=r"cannot load Block\[6\]: .* holds a Block\[6, gated=True\]"):
        mod.Block.of(6).load(kpath)
    with pytest.raises(rt.ModelError, match=r"cannot load Block\[7, gated=True\]: .* holds a Block\[6, gated=True\]"):
        mod.Block.of(7, gated=True).load(kpath)
    # a layer of the model, through its class
    lpath = tmp_path / "fc1.pt"
    m.fc1.save(lpath)
    assert torch.equal(type(m.fc1).load(lpath).weight, m.fc1.weight)


def test_the_class_of_an_instance_from_python(mod) -> None:
    Block = mod.Block
    assert (
        isinstance(Block, rt.GenericModel)
        and repr(Block) == "<model Block[E, scale: Float = 1.0, gated: Bool = False]>"
    )
    one = Block.of(6)
    assert Block.of(6) is one and Block[6] is one and Block.of(6, scale=1.0) is one  # the defaults: one class
    assert Block.of(6, scale=2) is Block.of(6, scale=2.0)
    assert [c._qv_name for c in (one, Block.of(6, scale=2), Block.of(6, gated=True))] == [
        "Block[6]",
        "Block[6, scale=2.0]",
        "Block[6, gated=True]",
    ]
    assert one._qv_dims == (6,) and one._qv_options == {"scale": 1.0, "gated": False}
    assert Block.of(6, gated=True)._qv_opt_gated is True
    # the instance made in Python is the one the compiled code takes
    k = Block.of(6, gated=True).init(seed=0)
    assert mod.block_loss(k, torch.ones(2, 6)).shape == ()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda B: B.of(), "model Block needs its dim E (E)"),
        (lambda B: B.of(6, 7), "model Block takes 1 dim (E), found 2"),
        (lambda B: B[6, 7], "model Block takes 1 dim (E), found 2"),
        (lambda B: B.of(-1), "model Block: dim E must be an Int >= 0, found -1"),
        (lambda B: B.of(True), "model Block: dim E must be an Int >= 0, found True"),
        (lambda B: B.of(6.0), "model Block: dim E must be an Int >= 0, found 6.0"),
        (lambda B: B.of(6, nope=True), "model Block has no option 'nope' (it takes by name: scale, gated)"),
        (lambda B: B.of(6, gated=1), "model Block: option gated must be True or False, found 1"),
        (lambda B: B.of(6, scale="x"), "model Block: option scale must be a number, found 'x'"),
        (lambda B: B.of(6, scale=True), "model Block: option scale must be a number, found True"),
        (
            lambda B: B.init(seed=0),
            "model Block takes dims (E) and options (scale, gated): "
            "create one with Block[E].init(seed=...) or Block.of(E, scale=...).init(seed=...)",
        ),
    ],
)
def test_python_side_errors_of_a_generic_model(mod, make, message) -> None:
    with pytest.raises(rt.ModelError) as info:
        make(mod.Block)
    assert str(info.value) == message


def test_a_wrong_instance_given_from_python_is_a_check_error(mod) -> None:
    m = mod.make(0)
    with pytest.raises(rt.CheckError, match=r"logits\(\): argument 'm' expected model Mlp, found model Block\[6\]"):
        mod.logits(mod.Block.of(6).init(seed=0), torch.randn(2, 5))
    with pytest.raises(
        rt.CheckError,
        match=r"block_loss\(\): argument 'k' expected model Block\[6, gated=True\], found model Block\[6\]",
    ):
        mod.block_loss(mod.Block.of(6).init(seed=0), torch.randn(2, 6))
    with pytest.raises(rt.CheckError, match=r"apply\(\): dim i is 5 in argument 'l' but 4 in argument 'x'"):
        mod.apply(m.fc1, torch.randn(2, 4))


def test_a_model_is_called_from_python_as_its_forward(tmp_path, mod) -> None:
    # m(x) from Python runs the compiled forward, as the compiled m(x) does;
    # a model without one says so
    m = mod.make(0)
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(1))
    assert torch.equal(m(x), mod.logits(m, x))
    path = tmp_path / "plain.qv"
    path.write_text("model Bare:\n    param w: [2] = zeros\n\nfn make() -> Bare:\n    return Bare.init(seed=0)\n")
    with pytest.raises(rt.ModelError, match="model Bare has no method forward, so it cannot be called"):
        quiver.load(str(path)).make()(torch.zeros(2))


LOOPS = """\
import nn

dim D = 4

model Net:
    param encoder_layers: [2] nn.Linear[D, D]
    param decoder_layers: [3] nn.LayerNorm[D]

    fn forward(self, x: [b D]) -> [b D]:
        for layer in self.encoder_layers:
            x = relu(layer(x))
        for layer in self.decoder_layers:
            x = layer(x) + x
        layer = 0.5
        return x * layer
"""


def test_one_loop_variable_over_two_stacks_of_other_layers(tmp_path) -> None:
    # issue 36: the second loop of `layer` was E0311 (a loop variable is bound
    # inside its loop only); the compiled loops compute torch's
    path = tmp_path / "loops.qv"
    path.write_text(LOOPS, encoding="utf-8")
    m = quiver.load(str(path)).Net.init(seed=0)
    x = torch.randn(3, 4)
    want = x
    for i in range(2):
        want = F.relu(want @ m.encoder_layers[i].weight + m.encoder_layers[i].bias)
    for i in range(3):
        norm = m.decoder_layers[i]
        want = F.layer_norm(want, (4,), norm.weight, norm.bias) + want
    torch.testing.assert_close(m(x), want * 0.5)
