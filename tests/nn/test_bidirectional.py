"""Bidirectional recurrent stacks against torch: nn.LSTM, nn.GRU and nn.RNN
with bidirectional=True (num_directions, a dim whose default reads the
option, then 2) against torch.nn.LSTM / GRU / RNN(bidirectional=True),
one and two layers, with and without biases: the output [T b (2*H)], the
final states [(num_layers*2) b H] in torch's order, the gradients of every
param (torch's `_reverse` params included), of the input and of the initial
states, in f32 and f64, under Eval and Train (dropout between the layers
against torch's single bidirectional layers with the runtime's masks), and
batch_first; the state_dict's names; the checker's message for a state of
one direction given to a bidirectional layer."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from nn_library import LIBRARY
from parity import close, copy_into, load
from recurrent_support import PARAMS, copy_stack, dropout_masks, layer_path, quiver_grad_of, reverse_path, stack_names

from quiver import runtime as rt
from quiver.checker.workspace import check_example

I, H, T, N = 3, 5, 4, 2  # noqa: E741 (the dims of the Quiver source)


@dataclass(frozen=True)
class Bi:
    """A bidirectional stack: its Quiver type and torch constructor."""

    name: str
    kind: str
    num_layers: int
    bias: bool = True
    dropout: float = 0.0

    @property
    def lstm(self) -> bool:
        return self.kind == "LSTM"

    @property
    def qtype(self) -> str:
        extra = f", num_layers={self.num_layers}, bidirectional=True"
        if not self.bias:
            extra += ", bias=False"
        if self.dropout:
            extra += f", dropout={self.dropout}"
        return f"nn.{self.kind}[I, H{extra}{{o}}]"

    def torch_module(self, dt, batch_first: bool = False, layers: int | None = None, in_size: int = I):
        cls = getattr(torch.nn, self.kind)
        L = self.num_layers if layers is None else layers
        p = self.dropout if layers is None else 0.0
        return cls(in_size, H, L, bias=self.bias, dropout=p, batch_first=batch_first, bidirectional=True, dtype=dt)


STACKS = [
    Bi(f"{kind.lower()}{n}{'' if bias else '_plain'}{'_drop' if p else ''}", kind, n, bias, p)
    for kind in ("LSTM", "GRU", "RNN")
    for n, bias, p in ((1, True, 0.0), (2, True, 0.0), (2, False, 0.0), (2, True, 0.5))
]


def _source(s: Bi) -> str:
    L2, q, n = 2 * s.num_layers, s.qtype, s.name
    if s.lstm:
        params = f"h0: [{L2} n H]{{f}}, c0: [{L2} n H]{{f}}"
        state, state_t = "(h0, c0)", f"([{L2} n H]{{f}}, [{L2} n H]{{f}})"
        weights = f"wh: [{L2} n H]{{f}}, wc: [{L2} n H]{{f}}"
        final, use, given = "(h, c)", "sum(h * wh) + sum(c * wc)", "h0, c0, wy, wh, wc"
    else:
        params, state, state_t = f"h0: [{L2} n H]{{f}}", "h0", f"[{L2} n H]{{f}}"
        weights, final, use, given = f"wh: [{L2} n H]{{f}}", "h", "sum(h * wh)", "h0, wy, wh"
    return f"""
fn make_{n}(seed: Int) -> {q}:
    return {q}.init(seed=seed)

fn run_{n}(l: {q}, x: [t n I]{{f}}, {params}, mode: Mode) -> ([t n (2*H)]{{f}}, {state_t}):
    return l(x, {state}, mode)

fn run_bf_{n}(l: {q}, x: [n t I]{{f}}, {params}, mode: Mode) -> ([n t (2*H)]{{f}}, {state_t}):
    return l.batch_first(x, {state}, mode)

fn loss_{n}(l: {q}, x: [t n I]{{f}}, {params}, wy: [t n (2*H)]{{f}}, {weights}, mode: Mode) -> []{{f}}:
    y, {final} = l(x, {state}, mode)
    return sum(y * wy) + {use}

fn grads_{n}(l: {q}, x: [t n I]{{f}}, {params}, wy: [t n (2*H)]{{f}}, {weights}, mode: Mode) -> Grad[{q}]:
    return grad(loss_{n}, l, x, {given}, mode)
"""


SRC = "import nn\n\ndim I = 3\ndim H = 5\n" + "".join(_source(s) for s in STACKS)


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SRC.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("bidirectional")), dt


def _data(s: Bi, dt, seed: int = 0, batch_first: bool = False):
    gen = torch.Generator().manual_seed(seed)
    L2 = 2 * s.num_layers

    def r(*shape):
        return torch.randn(*shape, generator=gen, dtype=dt)

    x = r(N, T, I) if batch_first else r(T, N, I)
    state = (r(L2, N, H), r(L2, N, H)) if s.lstm else (r(L2, N, H),)
    weights = (r(T, N, 2 * H), *(r(L2, N, H) for _ in state))
    return x, state, weights


def _torch_state(s: Bi, state):
    return tuple(state) if s.lstm else state[0]


def _flat(s: Bi, out):
    y, last = out
    return (y, *last) if s.lstm else (y, last)


def _loss(s: Bi, out, weights) -> torch.Tensor:
    return sum(((o * w).sum() for o, w in zip(_flat(s, out), weights)), torch.zeros((), dtype=weights[0].dtype))


def _check(s: Bi, mod, dt, layer, ref, mode, what: str) -> None:
    """Values, final states, param gradients (Quiver's grad) and input and
    state gradients (torch's autograd through the compiled forward)."""
    x, state, weights = _data(s, dt)
    m = mode() if callable(mode) else mode
    got = getattr(mod, f"run_{s.name}")(layer, x, *state, m)
    want = ref(x, _torch_state(s, state))
    for g, w, part in zip(_flat(s, got), _flat(s, want), ("output", "h_n", "c_n")):
        close(g, w.detach(), f"{what}: {part}")
    xr = x.clone().requires_grad_(True)
    sr = [t.clone().requires_grad_(True) for t in state]
    ref.zero_grad()
    _loss(s, ref(xr, _torch_state(s, sr)), weights).backward()
    m = mode() if callable(mode) else mode
    g = getattr(mod, f"grads_{s.name}")(layer, x, *state, *weights, m)
    names = stack_names(s.num_layers, s.bias, 2)
    count = 0
    for name, p in ref.named_parameters():
        assert p.grad is not None, name
        close(quiver_grad_of(g, name, names), p.grad, f"{what}: grad of {name}")
        count += 1
    assert count == len(names)
    xq = x.clone().requires_grad_(True)
    sq = [t.clone().requires_grad_(True) for t in state]
    m = mode() if callable(mode) else mode
    _loss(s, getattr(mod, f"run_{s.name}")(layer, xq, *sq, m), weights).backward()
    for q, r, part in zip([xq, *sq], [xr, *sr], ("x", "h0", "c0")):
        assert q.grad is not None and r.grad is not None
        close(q.grad, r.grad, f"{what}: grad of {part}")


@pytest.mark.parametrize("s", [s for s in STACKS if not s.dropout], ids=lambda s: s.name)
def test_bidirectional_stacks_match_torch(env, s: Bi) -> None:
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(5)
    names = stack_names(s.num_layers, s.bias, 2)
    ref = s.torch_module(dt)
    # torch's params, every one of them, and the Quiver layer's state_dict, name for name
    assert sorted(n for n, _ in ref.named_parameters()) == sorted(names)
    assert sorted(layer.state_dict()) == sorted(names.values())
    copy_stack(ref, layer, s.num_layers, s.bias, 2)
    ref.eval()
    _check(s, mod, dt, layer, ref, rt.Eval, f"{s.name} in Eval")
    ref.train()  # without dropout, Train is the same computation
    _check(s, mod, dt, layer, ref, lambda: rt.Train(seed=3), f"{s.name} in Train")


@pytest.mark.parametrize("s", [s for s in STACKS if s.dropout], ids=lambda s: s.name)
def test_dropout_between_bidirectional_layers(env, s: Bi) -> None:
    # torch drops the joined output of both directions of each layer but the
    # last; its module draws from the global generator, so the reference is
    # torch's single bidirectional layers with the runtime's masks between
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(7)
    mods = []
    for k in range(s.num_layers):
        ref = s.torch_module(dt, layers=1, in_size=I if k == 0 else 2 * H)
        names = {}
        for p in PARAMS:
            names[f"{p}_l0"] = f"{layer_path(k)}.{p}"
            names[f"{p}_l0_reverse"] = f"{reverse_path(k)}.{p}"
        copy_into(ref, layer, names, {n: (lambda w: w.T) for n in names if "weight" in n})
        mods.append(ref)
    masks = dropout_masks(11, s.num_layers - 1, (T, N, 2 * H), s.dropout, dt)
    assert all((m == 0).any() and (m != 0).any() for m in masks)

    class Layered(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mods = torch.nn.ModuleList(mods)

        def forward(self, x, state):
            y, hs, cs = x, [], []
            for k, m in enumerate(self.mods):
                if k > 0:
                    y = y * masks[k - 1]
                if s.lstm:
                    y, (h, c) = m(y, (state[0][2 * k : 2 * k + 2], state[1][2 * k : 2 * k + 2]))
                    cs.append(c)
                else:
                    y, h = m(y, state[2 * k : 2 * k + 2])
                hs.append(h)
            return (y, (torch.cat(hs), torch.cat(cs))) if s.lstm else (y, torch.cat(hs))

        def named_parameters(self, *args, **kwargs):  # torch's stacked names
            for k, m in enumerate(self.mods):
                for name, p in m.named_parameters():
                    yield name.replace("_l0", f"_l{k}"), p

    _check(s, mod, dt, layer, Layered(), lambda: rt.Train(seed=11), f"{s.name} in Train, dropout")
    ref = s.torch_module(dt)
    copy_stack(ref, layer, s.num_layers, s.bias, 2)
    ref.eval()
    _check(s, mod, dt, layer, ref, rt.Eval, f"{s.name} in Eval")


@pytest.mark.parametrize(
    "s", [s for s in STACKS if s.num_layers == 2 and s.bias and not s.dropout], ids=lambda s: s.name
)
def test_bidirectional_batch_first(env, s: Bi) -> None:
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(8)
    ref = s.torch_module(dt, batch_first=True)
    copy_stack(ref, layer, s.num_layers, s.bias, 2)
    ref.eval()
    x, state, _ = _data(s, dt, seed=4, batch_first=True)
    got = getattr(mod, f"run_bf_{s.name}")(layer, x, *state, rt.Eval)
    want = ref(x, _torch_state(s, state))
    assert got[0].shape == (N, T, 2 * H)
    for g, w, part in zip(_flat(s, got), _flat(s, want), ("output", "h_n", "c_n")):
        close(g, w.detach(), f"{s.name} batch_first: {part}")
    xq, xr = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    getattr(mod, f"run_bf_{s.name}")(layer, xq, *state, rt.Eval)[0].sum().backward()
    ref(xr, _torch_state(s, state))[0].sum().backward()
    assert xq.grad is not None and xr.grad is not None
    close(xq.grad, xr.grad, f"{s.name} batch_first: grad of x")


def _diagnostics(body: str) -> list[tuple[str, str, str]]:
    """(code, message, the text the diagnostic's range covers)."""
    src = "import nn\n\ndim I = 3\ndim H = 5\n\n" + body
    analysis = check_example(src, LIBRARY)
    assert not analysis.internal_errors
    return [(d.code, d.message, src[d.span.start : d.span.end]) for d in analysis.diagnostics]


def test_a_state_of_one_direction_is_one_error_in_the_layers_numbers() -> None:
    body = (
        "fn f(l: nn.GRU[I, H, num_layers=2, bidirectional=True], x: [t b I], h0: [2 b H]) -> [t b (2*H)]:\n"
        "    y, h = l(x, h0, Eval)\n    return y\n"
    )
    assert _diagnostics(body) == [("E0201", "argument 'h0' of nn.GRU.forward: expected [4 b H], found [2 b H]", "h0")]


def test_the_output_of_a_bidirectional_layer_is_twice_as_wide() -> None:
    body = (
        "fn f(l: nn.LSTM[I, H, bidirectional=True], x: [t b I], h0: [2 b H], c0: [2 b H]) -> [t b H]:\n"
        "    y, (h, c) = l(x, (h0, c0), Eval)\n    return y\n"
    )
    assert _diagnostics(body) == [("E0201", "return value: expected [t b H=5], found [t b (2*H)=10]", "y")]


def test_a_second_layer_takes_both_directions() -> None:
    body = (
        "fn f(l: nn.RNN[I, H, num_layers=3, bidirectional=True], x: [t b I], h0: [6 b H]) -> [t b (2*H)]:\n"
        "    y, h = l(x, h0, Eval)\n    return y\n\n"
        "fn g(l: nn.RNN[I, H, num_layers=3, bidirectional=True]) -> nn.RNNCell[(2*H), H]:\n"
        "    return l.rest_reverse[1]\n\n"
        # the dim the option sets: written out, the same sizes (another type: the option differs)
        "fn k(l: nn.RNN[I, H, num_layers=3, num_directions=2], x: [t b I], h0: [6 b H]) -> [t b (2*H)]:\n"
        "    y, h = l(x, h0, Eval)\n    return y\n"
    )
    assert _diagnostics(body) == []


def test_the_type_of_a_bidirectional_layer_shows_its_directions() -> None:
    body = "fn f(l: nn.GRU[I, H, bidirectional=True]) -> nn.GRU[I, H]:\n    return l\n"
    [(code, message, where)] = _diagnostics(body)
    assert (code, where) == ("E0904", "l")
    assert message == "return value: expected nn.GRU[I, H, 1, 1], found model nn.GRU[I, H, 1, 2, bidirectional=True]"


def test_an_instance_from_python_takes_the_option_too(env) -> None:
    # GRU.of(..., bidirectional=True) computes num_directions = 2 as the checker does
    mod, dt = env
    layer = mod.nn.GRU.of(I, H, bidirectional=True, dtype=dt).init(seed=0)
    assert sorted(layer.state_dict()) == sorted(stack_names(1, True, 2).values())
    assert layer.first_reverse[0].weight_ih.dtype == dt
    plain = mod.nn.GRU.of(I, H, dtype=dt).init(seed=0)
    assert sorted(plain.state_dict()) == sorted(stack_names(1).values())
