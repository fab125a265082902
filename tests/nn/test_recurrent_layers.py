"""The recurrent layers against torch: nn.LSTMCell, nn.GRUCell and nn.RNNCell
against torch.nn.LSTMCell / GRUCell / RNNCell, and nn.LSTM, nn.GRU and nn.RNN
(stacked, with and without biases, dropout between layers) against
torch.nn.LSTM / GRU / RNN: forward values, final states, the gradients of
every param (Quiver's own grad) and of the inputs and initial states (torch's
autograd through the compiled forward), in f32 and f64, under Eval and Train;
batch_first; the default initialisation's distribution; and the checker's
diagnostics for a layer applied to the wrong sizes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch
from nn_library import LIBRARY
from parity import close, copy_into, load
from recurrent_support import (
    PARAMS,
    copy_cell,
    copy_stack,
    dropout_masks,
    layered,
    quiver_grad_of,
    run_layered,
    stack_names,
)

from quiver import runtime as rt
from quiver.checker.workspace import check_example

I, H, T, N = 3, 5, 4, 2  # noqa: E741 (the dims of the Quiver source)


@dataclass(frozen=True)
class Stack:
    """One configuration of a stacked layer, as the Quiver type and as the
    torch constructor's arguments."""

    name: str
    kind: str  # LSTM, GRU or RNN
    num_layers: int
    bias: bool = True
    dropout: float = 0.0

    @property
    def qtype(self) -> str:
        extra = ""
        if self.num_layers != 1:
            extra += f", num_layers={self.num_layers}"
        if not self.bias:
            extra += ", bias=False"
        if self.dropout:
            extra += f", dropout={self.dropout}"
        return f"nn.{self.kind}[I, H{extra}{{o}}]"

    @property
    def lstm(self) -> bool:
        return self.kind == "LSTM"

    def torch_module(self, dt, batch_first: bool = False, in_size: int = I) -> torch.nn.Module:
        L, bias, p = self.num_layers, self.bias, self.dropout
        if self.kind == "LSTM":
            return torch.nn.LSTM(in_size, H, L, bias=bias, dropout=p, batch_first=batch_first, dtype=dt)
        if self.kind == "GRU":
            return torch.nn.GRU(in_size, H, L, bias=bias, dropout=p, batch_first=batch_first, dtype=dt)
        return torch.nn.RNN(in_size, H, L, bias=bias, dropout=p, batch_first=batch_first, dtype=dt)


STACKS = [
    Stack(f"{kind.lower()}{n}", kind, n, bias, p)
    for kind in ("LSTM", "GRU", "RNN")
    for n, bias, p in ((1, True, 0.0), (2, True, 0.5), (3, False, 0.0))
]
CELLS = {"LSTMCell": 4, "GRUCell": 3, "RNNCell": 1}


def _stack_source(s: Stack) -> str:
    L, q, n = s.num_layers, s.qtype, s.name
    if s.lstm:
        state_params = f"h0: [{L} n H]{{f}}, c0: [{L} n H]{{f}}"
        state, state_t = "(h0, c0)", f"([{L} n H]{{f}}, [{L} n H]{{f}})"
        weights = f"wh: [{L} n H]{{f}}, wc: [{L} n H]{{f}}"
        final, use, given = "(h, c)", "sum(h * wh) + sum(c * wc)", "h0, c0, wy, wh, wc"
    else:
        state_params, state, state_t = f"h0: [{L} n H]{{f}}", "h0", f"[{L} n H]{{f}}"
        weights, final, use, given = f"wh: [{L} n H]{{f}}", "h", "sum(h * wh)", "h0, wy, wh"
    return f"""
fn make_{n}(seed: Int) -> {q}:
    return {q}.init(seed=seed)

fn run_{n}(l: {q}, x: [t n I]{{f}}, {state_params}, mode: Mode) -> ([t n H]{{f}}, {state_t}):
    return l(x, {state}, mode)

fn run_bf_{n}(l: {q}, x: [n t I]{{f}}, {state_params}, mode: Mode) -> ([n t H]{{f}}, {state_t}):
    return l.batch_first(x, {state}, mode)

fn loss_{n}(l: {q}, x: [t n I]{{f}}, {state_params}, wy: [t n H]{{f}}, {weights}, mode: Mode) -> []{{f}}:
    y, {final} = l(x, {state}, mode)
    return sum(y * wy) + {use}

fn grads_{n}(l: {q}, x: [t n I]{{f}}, {state_params}, wy: [t n H]{{f}}, {weights}, mode: Mode) -> Grad[{q}]:
    return grad(loss_{n}, l, x, {given}, mode)
"""


def _cell_source(kind: str, bias: bool) -> str:
    q = f"nn.{kind}[I, H{'' if bias else ', bias=False'}{{o}}]"
    n = kind.lower() + ("" if bias else "_plain")
    if kind == "LSTMCell":
        return f"""
fn make_{n}(seed: Int) -> {q}:
    return {q}.init(seed=seed)

fn run_{n}(cell: {q}, x: [n I]{{f}}, h: [n H]{{f}}, c: [n H]{{f}}) -> ([n H]{{f}}, [n H]{{f}}):
    return cell(x, (h, c))

fn loss_{n}(cell: {q}, x: [n I]{{f}}, h: [n H]{{f}}, c: [n H]{{f}}, wh: [n H]{{f}}, wc: [n H]{{f}}) -> []{{f}}:
    h2, c2 = cell(x, (h, c))
    return sum(h2 * wh) + sum(c2 * wc)

fn grads_{n}(cell: {q}, x: [n I]{{f}}, h: [n H]{{f}}, c: [n H]{{f}}, wh: [n H]{{f}}, wc: [n H]{{f}}) -> Grad[{q}]:
    return grad(loss_{n}, cell, x, h, c, wh, wc)

fn seq_{n}(cell: {q}, xs: [t n I]{{f}}, h: [n H]{{f}}, c: [n H]{{f}}) -> ([t n H]{{f}}, ([n H]{{f}}, [n H]{{f}})):
    return cell.sequence(xs, (h, c))
"""
    return f"""
fn make_{n}(seed: Int) -> {q}:
    return {q}.init(seed=seed)

fn run_{n}(cell: {q}, x: [n I]{{f}}, h: [n H]{{f}}) -> [n H]{{f}}:
    return cell(x, h)

fn loss_{n}(cell: {q}, x: [n I]{{f}}, h: [n H]{{f}}, wh: [n H]{{f}}) -> []{{f}}:
    return sum(cell(x, h) * wh)

fn grads_{n}(cell: {q}, x: [n I]{{f}}, h: [n H]{{f}}, wh: [n H]{{f}}) -> Grad[{q}]:
    return grad(loss_{n}, cell, x, h, wh)

fn seq_{n}(cell: {q}, xs: [t n I]{{f}}, h: [n H]{{f}}) -> [t n H]{{f}}:
    return cell.sequence(xs, h)
"""


BIDIRECTIONAL = """
fn bidirectional(f: nn.LSTM[I, H{o}], r: nn.LSTM[I, H{o}], x: [t n I]{f}, h0: [2 n H]{f}, c0: [2 n H]{f}) -> [t n (2*H)]{f}:
    y, (hf, cf) = f(x, (h0[0:1], c0[0:1]), Eval)
    yr, (hr, cr) = r(flip(x, over=t), (h0[1:2], c0[1:2]), Eval)
    return concat(y, flip(yr, over=t), over=-1)
"""

WIDE = """
fn wide_lstm(seed: Int) -> nn.LSTM[8, 100, num_layers=2{o}]:
    return nn.LSTM[8, 100, num_layers=2{o}].init(seed=seed)

fn wide_gru(seed: Int) -> nn.GRU[8, 100, num_layers=2{o}]:
    return nn.GRU[8, 100, num_layers=2{o}].init(seed=seed)

fn wide_rnn(seed: Int) -> nn.RNN[8, 100, num_layers=2{o}]:
    return nn.RNN[8, 100, num_layers=2{o}].init(seed=seed)
"""

SRC = (
    "import nn\n\ndim I = 3\ndim H = 5\n"
    + "".join(_stack_source(s) for s in STACKS)
    + "".join(_cell_source(k, b) for k in CELLS for b in (True, False))
    + BIDIRECTIONAL
    + WIDE
)


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    # {f}: the element type after a shape, {o}: the layer's dtype option
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SRC.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("recurrent")), dt


def _randn(gen, dt, *shape) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=dt)


# ---------------------------------------------------------------- cells


def _torch_cell(kind: str, bias: bool, dt) -> torch.nn.Module:
    if kind == "LSTMCell":
        return torch.nn.LSTMCell(I, H, bias=bias, dtype=dt)
    if kind == "GRUCell":
        return torch.nn.GRUCell(I, H, bias=bias, dtype=dt)
    return torch.nn.RNNCell(I, H, bias=bias, dtype=dt)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("kind", list(CELLS))
def test_cells_match_torch(env, kind: str, bias: bool) -> None:
    mod, dt = env
    n = kind.lower() + ("" if bias else "_plain")
    cell = getattr(mod, f"make_{n}")(3)
    assert sorted(cell.state_dict()) == sorted(PARAMS if bias else PARAMS[:2])
    ref = _torch_cell(kind, bias, dt)
    copy_cell(ref, cell)
    gen = torch.Generator().manual_seed(1)
    x, h, c = _randn(gen, dt, N, I), _randn(gen, dt, N, H), _randn(gen, dt, N, H)
    wh, wc = _randn(gen, dt, N, H), _randn(gen, dt, N, H)
    lstm = kind == "LSTMCell"
    state = (h, c) if lstm else (h,)
    weights = (wh, wc) if lstm else (wh,)

    def torch_loss(out) -> torch.Tensor:
        outs = out if lstm else (out,)
        return sum(((o * w).sum() for o, w in zip(outs, weights)), torch.zeros((), dtype=dt))

    # forward
    got = getattr(mod, f"run_{n}")(cell, x, *state)
    want = ref(x, (h, c)) if lstm else ref(x, h)
    for g, w, what in zip(got if lstm else (got,), want if lstm else (want,), ("h", "c")):
        close(g, w.detach(), f"{kind} forward {what}")
    # the params' gradients: Quiver's grad against torch's backward
    inputs = [t.clone().requires_grad_(True) for t in (x, *state)]
    out = ref(inputs[0], tuple(inputs[1:])) if lstm else ref(*inputs)
    torch_loss(out).backward()
    g = getattr(mod, f"grads_{n}")(cell, x, *state, *weights)
    for name, p in ref.named_parameters():
        assert p.grad is not None
        close(quiver_grad_of(g, name, {}), p.grad, f"{kind} grad of {name}")
    # the inputs' gradients: torch's autograd through the compiled forward
    qin = [t.clone().requires_grad_(True) for t in (x, *state)]
    torch_loss(getattr(mod, f"run_{n}")(cell, *qin)).backward()
    for q, r, what in zip(qin, inputs, ("x", "h", "c")):
        assert q.grad is not None and r.grad is not None
        close(q.grad, r.grad, f"{kind} grad of {what}")


@pytest.mark.parametrize("kind", list(CELLS))
def test_a_cell_over_a_sequence_is_one_torch_layer(env, kind: str) -> None:
    mod, dt = env
    n = kind.lower()
    cell = getattr(mod, f"make_{n}")(4)
    stack = Stack(n, kind.removesuffix("Cell"), 1).torch_module(dt)
    copy_stack(stack, cell_as_stack(cell), 1)
    gen = torch.Generator().manual_seed(2)
    xs, h, c = _randn(gen, dt, T, N, I), _randn(gen, dt, N, H), _randn(gen, dt, N, H)
    if kind == "LSTMCell":
        ys, (hn, cn) = getattr(mod, f"seq_{n}")(cell, xs, h, c)
        want, (hw, cw) = stack(xs, (h[None], c[None]))
        close(cn, cw[0].detach(), "final c")
    else:
        ys = getattr(mod, f"seq_{n}")(cell, xs, h)
        want, hw = stack(xs, h[None])
        hn = ys[-1]
    close(ys, want.detach(), f"{kind} over a sequence")
    close(hn, hw[0].detach(), "final h")


class cell_as_stack:
    """A cell seen as the first layer of a stack (for copy_stack)."""

    def __init__(self, cell) -> None:
        self.first = cell


# ---------------------------------------------------------------- stacks


def _stack_data(s: Stack, dt, seed: int = 0, batch_first: bool = False):
    gen = torch.Generator().manual_seed(seed)
    L = s.num_layers
    x = _randn(gen, dt, N, T, I) if batch_first else _randn(gen, dt, T, N, I)
    state = (_randn(gen, dt, L, N, H), _randn(gen, dt, L, N, H)) if s.lstm else (_randn(gen, dt, L, N, H),)
    wy = _randn(gen, dt, T, N, H)
    weights = (wy, _randn(gen, dt, L, N, H), _randn(gen, dt, L, N, H)) if s.lstm else (wy, _randn(gen, dt, L, N, H))
    return x, state, weights


def _as_torch_state(s: Stack, state):
    return tuple(state) if s.lstm else state[0]


def _flat(s: Stack, out):
    """(output, h_n[, c_n]) of either's result."""
    y, last = out
    return (y, *last) if s.lstm else (y, last)


def _loss(s: Stack, out, weights) -> torch.Tensor:
    return sum(((o * w).sum() for o, w in zip(_flat(s, out), weights)), torch.zeros((), dtype=weights[0].dtype))


def _check_stack(s: Stack, mod, dt, layer, ref, run_torch, mode, what: str) -> None:
    """Forward, final states, the params' and the inputs' gradients of the
    Quiver layer under `mode` against `run_torch(x, state)` (a torch module
    with the same params, or the layered reference), for one set of data."""
    x, state, weights = _stack_data(s, dt)
    run = getattr(mod, f"run_{s.name}")
    got = run(layer, x, *state, mode() if callable(mode) else mode)
    want = run_torch(x, _as_torch_state(s, state))
    for g, w, part in zip(_flat(s, got), _flat(s, want), ("output", "h_n", "c_n")):
        close(g, w.detach(), f"{what}: {part}")
    # the params' gradients: Quiver's grad against torch's backward
    xr = x.clone().requires_grad_(True)
    sr = [t.clone().requires_grad_(True) for t in state]
    ref.zero_grad()
    _loss(s, run_torch(xr, _as_torch_state(s, sr)), weights).backward()
    g = getattr(mod, f"grads_{s.name}")(layer, x, *state, *weights, mode() if callable(mode) else mode)
    names = stack_names(s.num_layers, s.bias)
    for name, p in ref.named_parameters():
        assert p.grad is not None, name
        close(quiver_grad_of(g, name, names), p.grad, f"{what}: grad of {name}")
    # the input's and the initial state's gradients: torch's autograd through the compiled forward
    xq = x.clone().requires_grad_(True)
    sq = [t.clone().requires_grad_(True) for t in state]
    _loss(s, run(layer, xq, *sq, mode() if callable(mode) else mode), weights).backward()
    for q, r, part in zip([xq, *sq], [xr, *sr], ("x", "h0", "c0")):
        assert q.grad is not None and r.grad is not None
        close(q.grad, r.grad, f"{what}: grad of {part}")


@pytest.mark.parametrize("s", STACKS, ids=[s.name for s in STACKS])
def test_stacks_match_torch_in_eval(env, s: Stack) -> None:
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(5)
    expected = [f"{p}_l{k}" for k in range(s.num_layers) for p in (PARAMS if s.bias else PARAMS[:2])]
    assert sorted(layer.state_dict()) == sorted(stack_names(s.num_layers, s.bias)[e] for e in expected)
    ref = s.torch_module(dt)
    copy_stack(ref, layer, s.num_layers, s.bias)
    assert sorted(n for n, _ in ref.named_parameters()) == sorted(expected)
    ref.eval()
    _check_stack(s, mod, dt, layer, ref, ref, rt.Eval, f"{s.name} in Eval")


@pytest.mark.parametrize("s", [s for s in STACKS if s.dropout == 0.0], ids=lambda s: s.name)
def test_without_dropout_train_is_torchs_train(env, s: Stack) -> None:
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(6)
    ref = s.torch_module(dt)
    copy_stack(ref, layer, s.num_layers, s.bias)
    ref.train()
    _check_stack(s, mod, dt, layer, ref, ref, lambda: rt.Train(seed=3), f"{s.name} in Train")


@pytest.mark.parametrize("s", [s for s in STACKS if s.dropout > 0.0], ids=lambda s: s.name)
def test_dropout_between_layers_under_train(env, s: Stack) -> None:
    # torch's own module draws its masks from the global generator, so the
    # reference is torch's single layers with the runtime's masks in between:
    # the output of every layer but the last, dropped with probability p.
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(7)
    mods = layered(
        lambda k: Stack(s.name, s.kind, 1, s.bias).torch_module(dt, in_size=I if k == 0 else H), layer, s.num_layers
    )
    masks = dropout_masks(11, s.num_layers - 1, (T, N, H), s.dropout, dt)
    assert any((m == 0).any() for m in masks) and any((m != 0).any() for m in masks)

    class Layered(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mods = torch.nn.ModuleList(mods)

        def forward(self, x, state):
            return run_layered(self.mods, masks, x, state)

        def named_parameters(self, *args, **kwargs):  # torch's stacked names
            for k, m in enumerate(self.mods):
                for name, p in m.named_parameters():
                    yield name.replace("_l0", f"_l{k}"), p

    ref = Layered()
    _check_stack(s, mod, dt, layer, ref, ref, lambda: rt.Train(seed=11), f"{s.name} in Train, dropout")
    # and the same layer differs in Eval (no dropout), where it is torch's module
    x, state, _ = _stack_data(s, dt)
    run = getattr(mod, f"run_{s.name}")
    assert not torch.equal(run(layer, x, *state, rt.Eval)[0], run(layer, x, *state, rt.Train(seed=11))[0])
    torch.testing.assert_close(
        run(layer, x, *state, rt.Train(seed=11))[0], run(layer, x, *state, rt.Train(seed=11))[0], rtol=0, atol=0
    )


@pytest.mark.parametrize("s", STACKS, ids=[s.name for s in STACKS])
def test_batch_first(env, s: Stack) -> None:
    mod, dt = env
    layer = getattr(mod, f"make_{s.name}")(8)
    ref = s.torch_module(dt, batch_first=True)
    copy_stack(ref, layer, s.num_layers, s.bias)
    ref.eval()
    x, state, _ = _stack_data(s, dt, seed=4, batch_first=True)
    got = getattr(mod, f"run_bf_{s.name}")(layer, x, *state, rt.Eval)
    want = ref(x, _as_torch_state(s, state))
    assert got[0].shape == (N, T, H)
    for g, w, part in zip(_flat(s, got), _flat(s, want), ("output", "h_n", "c_n")):
        close(g, w.detach(), f"{s.name} batch_first: {part}")
    # the input's gradient too
    xq, xr = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    getattr(mod, f"run_bf_{s.name}")(layer, xq, *state, rt.Eval)[0].sum().backward()
    ref(xr, _as_torch_state(s, state))[0].sum().backward()
    assert xq.grad is not None and xr.grad is not None
    close(xq.grad, xr.grad, f"{s.name} batch_first: grad of x")


def test_a_zero_state_is_torchs_default(env) -> None:
    # torch's lstm(x) starts from zeros; in Quiver the zeros are written
    mod, dt = env
    for s in (STACKS[1], STACKS[4]):  # lstm2, gru2
        layer = getattr(mod, f"make_{s.name}")(9)
        ref = s.torch_module(dt)
        copy_stack(ref, layer, s.num_layers, s.bias)
        ref.eval()
        x, state, _ = _stack_data(s, dt)
        zeros = [torch.zeros_like(t) for t in state]
        got = getattr(mod, f"run_{s.name}")(layer, x, *zeros, rt.Eval)
        for g, w, part in zip(_flat(s, got), _flat(s, ref(x)), ("output", "h_n", "c_n")):
            close(g, w.detach(), f"{s.name} from zeros: {part}")


def test_a_bidirectional_lstm_is_two_layers_one_over_the_flipped_sequence(env) -> None:
    # two one-direction layers, the second over the flipped sequence, are torch's bidirectional=True
    mod, dt = env
    fwd, back = mod.make_lstm1(10), mod.make_lstm1(11)
    ref = torch.nn.LSTM(I, H, bidirectional=True, dtype=dt)
    names = stack_names(1)
    names |= {f"{k}_reverse": v.replace("first", "back.first") for k, v in names.items()}
    names = {k: v if v.startswith("back.") else f"fwd.{v}" for k, v in names.items()}

    class Both:
        def __init__(self) -> None:
            self.fwd, self.back = fwd, back

    copy_into(ref, Both(), names, {k: (lambda w: w.T) for k in names if "weight" in k})
    x, (h0, c0), _ = _stack_data(STACKS[1], dt)  # two states: forward and backward
    want, _ = ref(x, (h0, c0))
    close(mod.bidirectional(fwd, back, x, h0, c0), want.detach(), "bidirectional output")


# ---------------------------------------------------------------- initialisation


def _is_uniform(values: torch.Tensor, bound: float, what: str) -> None:
    """`values` look like draws of U(-bound, bound): inside the bounds and
    reaching near them, with that mean and standard deviation (to five of
    their standard errors for this many draws; the seeds are fixed)."""
    values = values.double()
    n, std = values.numel(), bound / math.sqrt(3)
    assert values.abs().max() <= bound * (1 + 1e-6), what  # a float32 draw may round up by an ulp
    assert values.abs().max() > 0.97 * bound, what
    assert abs(values.mean()) < 5 * std / math.sqrt(n), what
    assert abs(values.std() - std) < 5 * 0.45 * std / math.sqrt(n), what


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_default_initialisation_is_torchs_distribution(env, kind: str) -> None:
    # torch: every weight and bias U(-1/sqrt(H), 1/sqrt(H)), whatever the
    # layer's input size; over a wide layer the bounds, mean and standard
    # deviation are those of that uniform.
    mod, dt = env
    bound = 1 / math.sqrt(100)
    make = getattr(mod, f"wide_{kind}")
    per_name: dict[str, list[torch.Tensor]] = {}
    for seed in range(3):
        layer = make(seed)
        for name, value in layer.state_dict().items():
            assert value.dtype == dt, name
            per_name.setdefault(name, []).append(value.flatten())
    assert len(per_name) == 8  # two layers of weight_ih, weight_hh, bias_ih, bias_hh
    for name, parts in per_name.items():
        _is_uniform(torch.cat(parts), bound, f"{kind} {name}")
    a, b = make(0).state_dict(), make(1).state_dict()
    assert not torch.equal(a["first.weight_ih"], b["first.weight_ih"])
    assert torch.equal(a["rest.0.weight_hh"], make(0).state_dict()["rest.0.weight_hh"])


def test_the_cells_initialisation_is_torchs_distribution(env) -> None:
    mod, dt = env
    for kind in CELLS:
        for name in PARAMS:
            values = [getattr(getattr(mod, f"make_{kind.lower()}")(seed), name).flatten() for seed in range(40)]
            assert values[0].dtype == dt
            _is_uniform(torch.cat(values), 1 / math.sqrt(H), f"{kind} {name}")


# ---------------------------------------------------------------- the checker


def _diagnostics(body: str) -> list[tuple[str, str]]:
    src = "import nn\n\ndim I = 3\ndim D = 4\ndim H = 5\n\n" + body
    analysis = check_example(src, LIBRARY)
    assert not analysis.internal_errors
    return [(d.code, d.message) for d in analysis.diagnostics]


WRONG = {
    "LSTMCell": (
        "fn f(cell: nn.LSTMCell[I, H], x: [b D], h: [b H], c: [b H]) -> ([b H], [b H]):\n    return cell(x, (h, c))\n",
        "argument 'x' of nn.LSTMCell.forward: expected [b I], found [b D]",
    ),
    "LSTMCell state": (
        "fn f(cell: nn.LSTMCell[I, H], x: [b I], h: [b D], c: [b D]) -> ([b H], [b H]):\n    return cell(x, (h, c))\n",
        "argument 'state' of nn.LSTMCell.forward: expected ([b H], [b H]), found ([b D], [b D])",
    ),
    "GRUCell": (
        "fn f(cell: nn.GRUCell[I, H], x: [b I], h: [b D]) -> [b H]:\n    return cell(x, h)\n",
        "argument 'h' of nn.GRUCell.forward: expected [b H], found [b D]",
    ),
    "RNNCell": (
        "fn f(cell: nn.RNNCell[I, H], x: [b D], h: [b H]) -> [b H]:\n    return cell(x, h)\n",
        "argument 'x' of nn.RNNCell.forward: expected [b I], found [b D]",
    ),
    "LSTM": (
        "fn f(l: nn.LSTM[I, H], x: [t b D], h0: [1 b H], c0: [1 b H]) -> [t b H]:\n"
        "    y, (h, c) = l(x, (h0, c0), Eval)\n    return y\n",
        "argument 'x' of nn.LSTM.forward: expected [t b I], found [t b D]",
    ),
    "LSTM layers": (
        "fn f(l: nn.LSTM[I, H, num_layers=2], x: [t b I], h0: [1 b H], c0: [1 b H]) -> [t b H]:\n"
        "    y, (h, c) = l(x, (h0, c0), Eval)\n    return y\n",
        "argument 'state' of nn.LSTM.forward: expected ([2 b H], [2 b H]), found ([1 b H], [1 b H])",
    ),
    "LSTM batch": (
        "fn f(l: nn.LSTM[I, H], x: [t b I], h0: [1 n H], c0: [1 n H]) -> [t b H]:\n"
        "    y, (h, c) = l(x, (h0, c0), Eval)\n    return y\n",
        "argument 'state' of nn.LSTM.forward: expected ([1 b H], [1 b H]), found ([1 n H], [1 n H]) "
        "(b from argument 'x', not n)",
    ),
    "GRU": (
        "fn f(l: nn.GRU[I, H], x: [t b I], h0: [1 b D]) -> [t b H]:\n    y, h = l(x, h0, Eval)\n    return y\n",
        "argument 'h0' of nn.GRU.forward: expected [1 b H], found [1 b D]",
    ),
    "RNN": (
        "fn f(l: nn.RNN[I, H], x: [b t D], h0: [1 b H]) -> [b t H]:\n"
        "    y, h = l.batch_first(x, h0, Eval)\n    return y\n",
        "argument 'x' of nn.RNN.batch_first: expected [b t I], found [b t D]",
    ),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_a_layer_applied_to_the_wrong_size_is_one_diagnostic_naming_both_dims(case: str) -> None:
    # reported at the argument, in the caller's dims: what the layer expects
    # (its I or H as the caller names it) and what it was given (D)
    body, message = WRONG[case]
    assert _diagnostics(body) == [("E0205" if "from argument" in message else "E0201", message)]


def test_the_layers_check_clean_where_the_sizes_fit() -> None:
    body = (
        "fn f(l: nn.LSTM[I, H, num_layers=2, dropout=0.1], x: [t b I], h0: [2 b H], c0: [2 b H], mode: Mode) -> [t b H]:\n"
        "    y, (h, c) = l(x, (h0, c0), mode)\n    return y\n\n"
        "fn g(l: nn.GRU[I, H, bias=False, dtype=f64], x: [b t I] f64) -> ([b t H] f64, [1 b H] f64):\n"
        "    return l.batch_first(x, zeros([1 b H] f64), Eval)\n"
    )
    assert _diagnostics(body) == []
