"""The layers of issue 40 against torch.nn: Identity, Unflatten, GroupNorm,
InstanceNorm1d and InstanceNorm2d (with and without running statistics),
values and gradients in f32 and f64; the checker's errors for their misuse."""

from __future__ import annotations

import pytest
import torch
from nn_library import LIBRARY
from norm_support import Config, module_source, randomise, torch_loss_and_grads
from parity import close, copy_into, load

from quiver import runtime as rt
from quiver.checker.workspace import check_example

HEADER = """
import nn

dim N = 6
dim T = 3
dim E = 5
dim C = 4
dim L = 7
dim H = 3
dim W = 5
"""

# layers whose forward takes no mode
PLAIN = [
    Config("gn", "nn.GroupNorm[2, C{o}]", "[N C H W]{f}", "l(x)", lambda dt: torch.nn.GroupNorm(2, 4, dtype=dt)),
    Config("gn_seq", "nn.GroupNorm[2, C{o}]", "[N C L]{f}", "l.seq(x)", lambda dt: torch.nn.GroupNorm(2, 4, dtype=dt)),
    Config("gn_one", "nn.GroupNorm[1, C{o}]", "[N C H W]{f}", "l(x)", lambda dt: torch.nn.GroupNorm(1, 4, dtype=dt)),
    Config(
        "gn_plain",
        "nn.GroupNorm[4, C, eps=0.001, affine=False{o}]",
        "[N C H W]{f}",
        "l(x)",
        lambda dt: torch.nn.GroupNorm(4, 4, eps=1e-3, affine=False, dtype=dt),
        params=False,
    ),
    Config("ident", "nn.Identity[{o0}]", "[N T E]{f}", "l(x)", lambda dt: torch.nn.Identity(), params=False),
]

# instance norms: forward(x, mode)
INSTANCE = [
    Config(
        "in1",
        "nn.InstanceNorm1d[C{o}]",
        "[N C L]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.InstanceNorm1d(4, dtype=dt),
        params=False,
    ),
    Config(
        "in1_affine",
        "nn.InstanceNorm1d[C, affine=True, eps=0.001{o}]",
        "[N C L]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.InstanceNorm1d(4, affine=True, eps=1e-3, dtype=dt),
    ),
    Config(
        "in1_track",
        "nn.InstanceNorm1d[C, track_running_stats=True{o}]",
        "[N C L]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.InstanceNorm1d(4, track_running_stats=True, dtype=dt),
        params=False,
    ),
    Config(
        "in2",
        "nn.InstanceNorm2d[C{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.InstanceNorm2d(4, dtype=dt),
        params=False,
    ),
    Config(
        "in2_affine",
        "nn.InstanceNorm2d[C, affine=True{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.InstanceNorm2d(4, affine=True, dtype=dt),
    ),
    Config(
        "in2_track",
        "nn.InstanceNorm2d[C, momentum=0.3, affine=True, track_running_stats=True{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.InstanceNorm2d(4, momentum=0.3, affine=True, track_running_stats=True, dtype=dt),
    ),
]

UNFLATTEN = """
fn unflatten(x: [N 60]{f}) -> [N C 3 5]{f}:
    return nn.Unflatten[C, 3, 5{o}].init(seed=0)(x)
"""

SHAPES = {"[N T E]{f}": (6, 3, 5), "[N C L]{f}": (6, 4, 7), "[N C H W]{f}": (6, 4, 3, 5)}
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(scope="module", params=DTYPES, ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    text = module_source(HEADER + UNFLATTEN, PLAIN + INSTANCE, dt)
    text = text.replace("nn.Identity[{o0}]", "nn.Identity" if dt == torch.float32 else "nn.Identity[dtype=f64]")
    return load(text, tmp_path_factory.mktemp("layers40")), dt


def _inputs(c: Config, dt: torch.dtype, seed: int, scale: float = 1.0):
    gen = torch.Generator().manual_seed(seed)
    shape = SHAPES[c.x]
    x = torch.randn(shape, generator=gen, dtype=dt) * 2.0 * scale + 0.5 * scale
    w = torch.randn(shape, generator=gen, dtype=dt)
    return x, w


def _param_names(layer) -> tuple[str, ...]:
    return tuple(n for n in ("weight", "bias") if n in layer.state_dict())


def _stats(layer) -> dict[str, torch.Tensor]:
    keys = ("running_mean", "running_var", "num_batches_tracked")
    return {k: v.clone() for k, v in layer.state_dict().items() if k in keys}


def _compare(mod, c: Config, layer, ref, dt, seed: int, mode, what: str) -> None:
    """forward, loss, the params' and the input's gradients against torch's
    module (in its own train/eval state); the running statistics after."""
    x, w = _inputs(c, dt, seed, scale=1.0 + seed % 3)
    extra = (mode,) if c.mode else ()
    apply = getattr(mod, f"{c.key}_apply")
    want, grads, xgrad = torch_loss_and_grads(ref, x, w)
    if c.params:
        v, g = getattr(mod, f"{c.key}_step")(layer, x, w, *extra)
        close(v, want, f"loss, {what}")
        for name in _param_names(layer):
            close(getattr(g, name), grads[name], f"grad of {name}, {what}")
    else:
        close(getattr(mod, f"{c.key}_loss")(layer, x, w, *extra), want, f"loss, {what}")
    for k, t in _stats(layer).items():
        want_t = ref.state_dict()[k]
        if want_t.is_floating_point():
            close(t, want_t, f"{k}, {what}")
        else:
            assert torch.equal(t, want_t), f"{k}, {what}: {t} != {want_t}"
    # the input's gradient, by torch's autograd through the compiled forward
    # (torch's module steps once more alongside, as the layer does under Train)
    xq = x.clone().requires_grad_(True)
    out = apply(layer, xq, *extra)
    _, _, xgrad = torch_loss_and_grads(ref, x, w)
    (out * w).sum().backward()
    assert xq.grad is not None
    close(xq.grad, xgrad, f"grad of x, {what}")


@pytest.mark.parametrize("c", PLAIN, ids=[c.key for c in PLAIN])
def test_plain_layers_match_torch(env, c: Config) -> None:
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(0)
    ref = c.torch_module(dt)
    assert set(layer.state_dict()) == set(ref.state_dict()), "the members are torch's"
    for k, t in ref.state_dict().items():  # torch's initialisation: ones and zeros
        assert torch.equal(layer.state_dict()[k], t), k
    randomise(layer, _param_names(layer), 1)
    copy_into(ref, layer)
    x, _ = _inputs(c, dt, 2)
    close(getattr(mod, f"{c.key}_apply")(layer, x), ref(x), "forward")
    _compare(mod, c, layer, ref, dt, 3, None, "gradients")


@pytest.mark.parametrize("c", INSTANCE, ids=[c.key for c in INSTANCE])
def test_instance_norms_step_by_step_in_train_then_eval(env, c: Config) -> None:
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(0)
    ref = c.torch_module(dt)
    assert set(layer.state_dict()) == set(ref.state_dict()), "the members are torch's"
    for k, t in ref.state_dict().items():
        assert torch.equal(layer.state_dict()[k], t), k
    randomise(layer, _param_names(layer), 1)
    copy_into(ref, layer)
    apply = getattr(mod, f"{c.key}_apply")
    ref.train()
    for step in range(3):
        x, w = _inputs(c, dt, 10 + step, scale=1.0 + step)
        close(
            apply(layer, x, rt.Eval) if "track" not in c.key else apply(layer, x, rt.Train(seed=step)),
            ref(x),
            f"forward, step {step}",
        )
        _compare(mod, c, layer, ref, dt, 20 + step, rt.Train(seed=step), f"Train step {step}")
    ref.eval()
    before = _stats(layer)
    x, _ = _inputs(c, dt, 30)
    close(apply(layer, x, rt.Eval), ref(x), "forward in Eval")
    _compare(mod, c, layer, ref, dt, 31, rt.Eval, "Eval")
    for k, t in _stats(layer).items():
        assert torch.equal(t, before[k]), f"{k} changed in Eval"
    if "track" in c.key:
        assert int(layer.num_batches_tracked) == 0 == int(ref.num_batches_tracked), "torch never counts them"


def test_unflatten_is_torchs(env) -> None:
    mod, dt = env
    x = torch.randn(6, 60, dtype=dt, requires_grad=True)
    want = torch.nn.Unflatten(1, (4, 3, 5))(x)
    got = mod.unflatten(x)
    close(got, want, "forward")
    w = torch.randn(6, 4, 3, 5, dtype=dt)
    (g,) = torch.autograd.grad((got * w).sum(), x)
    (h,) = torch.autograd.grad((want * w).sum(), x)
    close(g, h, "grad of x")


# --- the checker: each misuse is one diagnostic, at the place it is ------------------------

MISUSE = {
    # G must divide C, as torch's constructor checks: at the layer's type
    "GroupNorm": (
        "fn f(x: [N C H W]) -> [N C H W]:\n    return nn.GroupNorm[3, C].init(seed=0)(x)\n",
        "E0212",
        "nn.GroupNorm[3, C]",
        "dim expression (C/G): in nn.GroupNorm[3, C] it is 4/3, not a whole number: G must divide C",
    ),
    "GroupNorm.seq": (
        "fn f(l: nn.GroupNorm[2, C], x: [N E L]) -> [N E L]:\n    return l.seq(x)\n",
        "E0201",
        "x",
        "argument 'x' of nn.GroupNorm.seq: expected [N C l], found [N E L]",
    ),
    "InstanceNorm2d": (
        "fn f(l: nn.InstanceNorm2d[C], x: [N C L], mode: Mode) -> [N C L]:\n    return l(x, mode)\n",
        "E0201",
        "x",
        "argument 'x' of nn.InstanceNorm2d.forward: expected [b C h w] dtype, found [N C L] Float",
    ),
    # the mode is an argument, as for every norm with running statistics
    "InstanceNorm1d": (
        "fn f(l: nn.InstanceNorm1d[C], x: [N C L]) -> [N C L]:\n    return l(x)\n",
        "E0401",
        "(x)",
        "nn.InstanceNorm1d.forward takes 2 positional arguments, found 1",
    ),
    "Unflatten": (
        "fn f(x: [N 59]) -> [N C 3 5]:\n    return nn.Unflatten[C, 3, 5].init(seed=0)(x)\n",
        "E0201",
        "x",
        "argument 'x' of nn.Unflatten.forward: expected [N (C*3*5)=60], found [N 59]",
    ),
    # a layer's dtype is the element type it takes: f32 unless given
    "Identity": (
        "fn f(x: [N E] f64) -> [N E] f64:\n    return nn.Identity.init(seed=0)(x)\n",
        "E0302",
        "x",
        "argument 'x' of nn.Identity.forward: expected [N E] Float, found [N E] f64",
    ),
    # instance_norm's running statistics without a mode: at the first one given
    "instance_norm": (
        "model S:\n    buffer running_mean: [C] = zeros\n    buffer running_var: [C] = ones\n\n"
        "fn f(m: S, x: [N C L]) -> [N C L]:\n"
        "    return instance_norm(x, running_mean=m.running_mean, running_var=m.running_var)\n",
        "E0950",
        "running_mean=m.running_mean",
        "instance_norm: running_mean= and running_var= without mode=: the running statistics are updated under "
        "Train and used under Eval, so running_mean=, running_var= and mode= come together",
    ),
    "instance_norm.mode": (
        "fn f(x: [N C L], mode: Mode) -> [N C L]:\n    return instance_norm(x, mode=mode)\n",
        "E0950",
        "mode=mode",
        "instance_norm: mode= needs running_mean= and running_var=: without running statistics each example's own "
        "statistics are used in every mode",
    ),
    "instance_norm.rank": (
        "fn f(x: [N C]) -> [N C]:\n    return instance_norm(x)\n",
        "E0210",
        "x",
        "instance_norm needs 3 dims or more ([b C ..], a batch, C and the dims normalised over), found [N C]",
    ),
}


@pytest.mark.parametrize("case", list(MISUSE))
def test_a_misuse_is_one_diagnostic_at_its_place(case: str) -> None:
    body, code, underlined, words = MISUSE[case]
    analysis = check_example(HEADER + "\n" + body, LIBRARY)
    text = analysis.text
    diags = [(d.code, d.message, text[d.span.start : d.span.end]) for d in analysis.diagnostics if d.code != "W0103"]
    assert len(diags) == 1, diags
    got_code, message, span = diags[0]
    assert got_code == code, diags
    if underlined:
        assert span == underlined, diags
    assert message == words, message


PER_EXAMPLE = """
import nn

dim C = 3
dim L = 5

fn make() -> nn.InstanceNorm1d[C, affine=True, track_running_stats=True]:
    return nn.InstanceNorm1d[C, affine=True, track_running_stats=True].init(seed=0)

fn loss(n: nn.InstanceNorm1d[C, affine=True, track_running_stats=True], x: [t C L], mode: Mode) -> []:
    h = n(x, mode)
    return mean(h * h * h)

fn per(n: nn.InstanceNorm1d[C, affine=True, track_running_stats=True], x: [b t C L], mode: Mode) -> [b]:
    ls, _ = value_and_grad(loss, n, x, mode, batch=b)
    return ls
"""


def test_tracked_instance_norm_in_per_example_gradients_needs_eval(tmp_path) -> None:
    # as batch_norm's: the running statistics cannot be updated one example
    # at a time; under Eval they are read, and stay as they are
    mod = load(PER_EXAMPLE, tmp_path)
    n = mod.make()
    x = torch.randn(4, 2, 3, 5, generator=torch.Generator().manual_seed(0))
    with pytest.raises(rt.QuiverError, match=r"cannot update its running statistics inside per-example gradients"):
        mod.per(n, x, rt.Train(seed=0))
    want = torch.stack([mod.loss(n, x[i], rt.Eval) for i in range(4)])
    torch.testing.assert_close(mod.per(n, x, rt.Eval), want)
    assert torch.equal(n.running_mean, torch.zeros(3))
