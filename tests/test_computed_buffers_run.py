"""Computed and non-persistent buffers (issue 39), compiled and run: each
buffer as the public PyTorch program computes it in `__init__` (a causal
mask; llama2.c's rotary `inv_freq`; pytorch/examples' word_language_model
`PositionalEncoding`; a DDPM linear beta schedule with `alphas_cumprod`),
computed once by `init` for generic instances too; `persistent=False`
buffers left out of `state_dict`, `save` and `to_module(m).state_dict()`
exactly as torch leaves them out of its twin module's `state_dict()`, and
computed again by `load`."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from torch import nn

import quiver
from quiver import runtime as rt

SRC = """\
const NEG_LOG_BASE = -9.210340371976184

model Causal[T]:
    buffer mask: [T T] Bool = tril(ones([T T] Bool)), persistent=False

model Rotary[D, theta: Float = 10000.0]:
    buffer inv_freq: [(D/2)] = 1.0 / theta ** (2.0 * (arange((D / 2)) as f32) / (D as Float))

model PositionalEncoding[L, D]:
    param scale: [D] = normal(0.0, 1.0)
    buffer pe: [L 1 D] = reshape(
        permute(
            stack(
                sin(reshape(arange(L) as f32, [L 1]) * exp(2.0 * (arange((D / 2)) as f32) * (NEG_LOG_BASE / (D as Float)))),
                cos(reshape(arange(L) as f32, [L 1]) * exp(2.0 * (arange((D / 2)) as f32) * (NEG_LOG_BASE / (D as Float))))
            ),
            [L (D/2) 2]
        ),
        [L 1 D]
    ), persistent=False
    param after: [D] = normal(0.0, 1.0)

    fn forward(self, x: [S b D]) -> [S b D]:
        return x + self.pe[:S]

model Schedule[N, beta_start: Float = 0.0001, beta_end: Float = 0.02]:
    buffer betas: [N] = linspace(beta_start, beta_end, N)
    buffer alphas_cumprod: [N] = cumprod(1.0 - linspace(beta_start, beta_end, N), over=N)

model Attention[T, E]:
    param w: [E E] = xavier
    buffer mask: [T T] Bool = tril(ones([T T] Bool)), persistent=False
    buffer seen: [] i64 = 0

model Net:
    param attn: Attention[4, 6]
    param rot: Rotary[6]
    buffer steps: [] i64 = 0

model Plain:
    param scale: [6] = normal(0.0, 1.0)
    param after: [6] = normal(0.0, 1.0)

model Masked[T, causal: Bool = True, fill: Float = -1e9]:
    buffer mask: [T T] Bool = tril(ones([T T] Bool)), persistent=False if causal
    buffer floor: [T] = ones([T]) * fill

model Typed[D, dtype: DType = f32]:
    buffer pos: [D] dtype = tril(ones([D D] dtype)) @ ones([D] dtype), persistent=False

fn make_net(seed: Int) -> Net:
    return Net.init(seed=seed)

fn save_net(path: Str, net: Net):
    save(path, net)

fn check_load(path: Str) -> Net:
    net = Net.init(seed=3)
    load(path, net)
    return net
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("computed") / "computed.qv"
    path.write_text(SRC, encoding="utf-8")
    return quiver.load(str(path))


def test_causal_mask(prog) -> None:
    m = prog.Causal[5].init(seed=0)
    assert torch.equal(m.mask, torch.tril(torch.ones(5, 5, dtype=torch.bool)))


def test_rotary_inv_freq_as_llama_computes_it(prog) -> None:
    for dim, theta in ((8, 10000.0), (64, 10000.0), (16, 500000.0)):
        m = prog.Rotary.of(dim, theta=theta).init(seed=0)
        # llama2.c model.py precompute_freqs_cis
        want = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        assert m.inv_freq.dtype == torch.float32
        assert torch.equal(m.inv_freq, want), (dim, theta)


class TorchPositionalEncoding(nn.Module):
    """pytorch/examples word_language_model/model.py (dropout left out)."""

    def __init__(self, d_model, max_len=5000):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe, persistent=False)
        self.scale = nn.Parameter(torch.zeros(d_model))
        self.after = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return x + self.pe[: x.size(0), :]


def test_sinusoidal_positional_encoding(prog) -> None:
    m = prog.PositionalEncoding[50, 16].init(seed=0)
    twin = TorchPositionalEncoding(16, max_len=50)
    assert m.pe.shape == twin.pe.shape == (50, 1, 16)
    assert torch.equal(m.pe, twin.pe)  # bit for bit (so is [5000 1 512], word_language_model's size)
    x = torch.randn(7, 3, 16, generator=torch.Generator().manual_seed(1))
    assert torch.equal(m(x), twin(x))
    # non-persistent: state_dict keys are the torch twin's
    assert list(m.state_dict()) == list(twin.state_dict()) == ["scale", "after"]


def test_ddpm_linear_schedule(prog) -> None:
    for steps in (10, 1000):
        m = prog.Schedule[steps].init(seed=0)
        betas = torch.linspace(1e-4, 0.02, steps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        assert torch.equal(m.betas, betas)  # bit for bit: torch's linspace and cumprod
        assert torch.equal(m.alphas_cumprod, alphas_cumprod)


def test_a_computed_buffer_draws_nothing(prog) -> None:
    """The params after a computed buffer get the values they would get
    without it: computing it uses no random draws."""
    m, plain = prog.PositionalEncoding[4, 6].init(seed=7), prog.Plain.init(seed=7)
    assert torch.equal(m.scale, plain.scale) and torch.equal(m.after, plain.after)


class TorchAttention(nn.Module):
    def __init__(self, T, E):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(E, E))
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)), persistent=False)
        self.register_buffer("seen", torch.zeros((), dtype=torch.int64))


class TorchRotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000.0 ** (torch.arange(0, dim, 2).float() / dim)))


class TorchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = TorchAttention(4, 6)
        self.rot = TorchRotary(6)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))


def test_state_dict_leaves_non_persistent_buffers_out(prog) -> None:
    net = prog.make_net(0)
    twin = TorchNet()
    assert sorted(net.state_dict()) == sorted(twin.state_dict()) == ["attn.seen", "attn.w", "rot.inv_freq", "steps"]
    module = quiver.to_module(net)
    assert sorted(module.state_dict()) == sorted(twin.state_dict())
    assert sorted(n for n, _ in module.named_buffers()) == sorted(n for n, _ in twin.named_buffers())
    # the torch twin's state_dict loads into the module, and back
    module.load_state_dict(twin.state_dict())
    assert torch.equal(net.attn.w, torch.zeros(6, 6))
    twin.load_state_dict(module.state_dict())
    assert torch.equal(net.attn.mask, torch.tril(torch.ones(4, 4, dtype=torch.bool)))
    # a copy of the module computes the buffer its state does not hold
    twin_copy = copy.deepcopy(module)
    assert sorted(n for n, _ in twin_copy.named_buffers()) == sorted(n for n, _ in twin.named_buffers())
    assert torch.equal(twin_copy.model.attn.mask, net.attn.mask)


def test_save_and_load_compute_it_again(prog, tmp_path) -> None:
    net = prog.make_net(0)
    net.attn.seen = 5
    path = tmp_path / "net.pt"
    prog.save_net(str(path), net)
    fields = torch.load(path, weights_only=True)
    assert "attn.mask" not in fields and "attn.seen" in fields
    # a checkpoint without the buffer loads, in place and as a new model
    back = prog.check_load(str(path))
    assert int(back.attn.seen) == 5 and torch.equal(back.attn.w, net.attn.w)
    assert torch.equal(back.attn.mask, net.attn.mask)
    path2 = tmp_path / "net2.pt"
    net.save(str(path2))
    again = prog.Net.load(str(path2))
    assert torch.equal(again.attn.mask, net.attn.mask) and torch.equal(again.rot.inv_freq, net.rot.inv_freq)
    assert "attn.mask" in repr(again)  # shown, though not saved


def test_dtype_option(prog) -> None:
    m = prog.Typed.of(5, dtype=rt.f64).init(seed=0)
    assert m.pos.dtype == torch.float64 and torch.equal(m.pos, torch.arange(1, 6, dtype=torch.float64))
    assert prog.Typed[3].init(seed=0).pos.dtype == torch.float32


def test_under_a_condition_and_with_options(prog) -> None:
    m = prog.Masked[3].init(seed=0)
    assert torch.equal(m.mask, torch.tril(torch.ones(3, 3, dtype=torch.bool)))
    assert list(m.state_dict()) == ["floor"] and torch.equal(m.floor, torch.full((3,), -1e9))
    plain = prog.Masked.of(3, causal=False, fill=2.0).init(seed=0)
    assert not hasattr(plain, "mask") and torch.equal(plain.floor, torch.full((3,), 2.0))
