"""The embeddings and normalisation layers of nn against torch.nn (LayerNorm,
RMSNorm, BatchNorm1d, BatchNorm2d, Dropout, Dropout2d), and the built-ins
they stand on: layer_norm and rms_norm with eps=."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from nn_library import LIBRARY
from norm_support import Config, module_source, randomise, torch_loss_and_grads
from parity import close, copy_into, load

from quiver import runtime as rt
from quiver.checker import check_text
from quiver.checker.workspace import check_example

# --- layer_norm and rms_norm take eps= ---------------------------------------------

EPS_SRC = """
dim T = 3
dim E = 5

fn ln(x: [T E]) -> [T E]:
    return layer_norm(x, over=E, eps=0.5)

fn ln_first(x: [T E]) -> [T E]:
    return layer_norm(x, over=T, eps=1e-3)

fn rms(x: [T E]) -> [T E]:
    return rms_norm(x, over=E, eps=0.25)

fn rms_default(x: [T E]) -> [T E]:
    return rms_norm(x, over=-1)
"""


def test_layer_norm_and_rms_norm_take_eps(tmp_path) -> None:
    mod = load(EPS_SRC, tmp_path)
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    close(mod.ln(x), F.layer_norm(x, (5,), eps=0.5), "layer_norm eps=0.5")
    close(mod.ln_first(x), F.layer_norm(x.T, (3,), eps=1e-3).T, "layer_norm over T")
    close(mod.rms(x), F.rms_norm(x, (5,), eps=0.25), "rms_norm eps=0.25")
    close(mod.rms_default(x), F.rms_norm(x, (5,)), "rms_norm without eps")


def test_eps_must_be_a_positive_number() -> None:
    source = EPS_SRC + (
        "\nfn bad(x: [T E]) -> [T E]:\n"
        "    return layer_norm(x, over=E, eps=-1.0) + rms_norm(x, over=E, eps=0) + rms_norm(x, over=E, eps=True)\n"
    )
    diags = [(d.code, d.message) for d in check_text(source).diagnostics]
    assert [c for c, _ in diags] == ["E0301", "E0301", "E0301"], diags
    assert "eps of layer_norm" in diags[0][1] and "-1.0" in diags[0][1]
    assert "eps of rms_norm" in diags[1][1]


# --- models of options only (nn.Dropout's shape): methods and init ------------------

OPTIONS_SRC = """
dim N = 4

model Keep[p: Float = 0.5, dtype: DType = f32]:
    fn forward(self, x: [N] dtype) -> [N] dtype:
        return x * p

fn scaled(k: Keep[p=0.25], x: [N]) -> [N]:
    return k(x)

fn scaled64(k: Keep[p=0.25, dtype=f64], x: [N] f64) -> [N] f64:
    return k(x)
"""


def test_a_method_of_a_model_of_options_only_takes_every_instance(tmp_path) -> None:
    # `self` of Keep.forward is any Keep, whatever its options (it was the
    # default instance's class only, so Keep[p=0.25] failed its check)
    mod = load(OPTIONS_SRC, tmp_path)
    k = mod.Keep.of(p=0.25).init(seed=0)
    close(mod.scaled(k, torch.ones(4)), torch.full((4,), 0.25), "Keep[p=0.25]")
    k64 = mod.Keep.of(p=0.25, dtype=torch.float64).init(seed=0)
    close(mod.scaled64(k64, torch.ones(4, dtype=torch.float64)), torch.full((4,), 0.25, dtype=torch.float64), "f64")


def test_a_model_whose_dims_all_have_defaults_is_made_with_them(tmp_path) -> None:
    # Keep.init(seed=0) is Keep with its defaults, as torch's nn.Dropout() is;
    # the E0910 that asked for `Keep[].init(...)` (not Quiver) is gone
    source = OPTIONS_SRC + (
        "\nfn made(x: [N]) -> [N]:\n    half = Keep.init(seed=1)\n    return scaled(Keep[p=0.25].init(seed=0), x) + half(x)\n"
    )
    assert [(d.code, d.message) for d in check_text(source).diagnostics] == []
    mod = load(source, tmp_path)
    close(mod.made(torch.ones(4)), torch.full((4,), 0.75), "Keep[p=0.25] and Keep")
    # a model with a dim that has no default still needs it
    wrong = "model Lin[I, O = 2]:\n    param w: [I O] = zeros\n\nfn f():\n    l = Lin.init(seed=0)\n"
    diags = [(d.code, d.message) for d in check_text(wrong).diagnostics]
    assert [c for c, _ in diags] == ["E0910"] and "Lin[I, O].init(...)" in diags[0][1], diags


# --- the layers against torch ------------------------------------------------------

HEADER = """
import nn

dim N = 6
dim T = 3
dim E = 5
dim C = 4
dim L = 7
dim H = 3
dim W = 2
"""

NORMS = [
    Config("ln", "nn.LayerNorm[E{o}]", "[N T E]{f}", "l(x)", lambda dt: torch.nn.LayerNorm(5, dtype=dt)),
    Config("ln_vec", "nn.LayerNorm[E{o}]", "[E]{f}", "l(x)", lambda dt: torch.nn.LayerNorm(5, dtype=dt)),
    Config(
        "ln_eps",
        "nn.LayerNorm[E, eps=0.001{o}]",
        "[N E]{f}",
        "l(x)",
        lambda dt: torch.nn.LayerNorm(5, eps=1e-3, dtype=dt),
    ),
    Config(
        "ln_nobias",
        "nn.LayerNorm[E, bias=False{o}]",
        "[N T E]{f}",
        "l(x)",
        lambda dt: torch.nn.LayerNorm(5, bias=False, dtype=dt),
    ),
    Config(
        "ln_plain",
        "nn.LayerNorm[E, elementwise_affine=False{o}]",
        "[N T E]{f}",
        "l(x)",
        lambda dt: torch.nn.LayerNorm(5, elementwise_affine=False, dtype=dt),
        params=False,
    ),
    Config("rms", "nn.RMSNorm[E{o}]", "[N T E]{f}", "l(x)", lambda dt: torch.nn.RMSNorm(5, dtype=dt)),
    Config(
        "rms_eps", "nn.RMSNorm[E, eps=1e-6{o}]", "[N E]{f}", "l(x)", lambda dt: torch.nn.RMSNorm(5, eps=1e-6, dtype=dt)
    ),
    Config(
        "rms_plain",
        "nn.RMSNorm[E, elementwise_affine=False{o}]",
        "[N T E]{f}",
        "l(x)",
        lambda dt: torch.nn.RMSNorm(5, elementwise_affine=False, dtype=dt),
        params=False,
    ),
]

BATCH_NORMS = [
    Config("bn1", "nn.BatchNorm1d[C{o}]", "[N C]{f}", "l(x, mode)", lambda dt: torch.nn.BatchNorm1d(4, dtype=dt)),
    Config(
        "bn1_seq", "nn.BatchNorm1d[C{o}]", "[N C L]{f}", "l.seq(x, mode)", lambda dt: torch.nn.BatchNorm1d(4, dtype=dt)
    ),
    Config(
        "bn1_opts",
        "nn.BatchNorm1d[C, eps=0.001, momentum=0.3{o}]",
        "[N C]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm1d(4, eps=1e-3, momentum=0.3, dtype=dt),
    ),
    Config(  # the docs' example
        "bn1_half",
        "nn.BatchNorm1d[C, momentum=0.5{o}]",
        "[N C]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm1d(4, momentum=0.5, dtype=dt),
    ),
    Config(
        "bn1_noaffine",
        "nn.BatchNorm1d[C, affine=False{o}]",
        "[N C L]{f}",
        "l.seq(x, mode)",
        lambda dt: torch.nn.BatchNorm1d(4, affine=False, dtype=dt),
        params=False,
    ),
    Config(
        "bn1_nostats",
        "nn.BatchNorm1d[C, track_running_stats=False{o}]",
        "[N C]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm1d(4, track_running_stats=False, dtype=dt),
    ),
    Config(
        "bn1_seq_nostats",
        "nn.BatchNorm1d[C, track_running_stats=False{o}]",
        "[N C L]{f}",
        "l.seq(x, mode)",
        lambda dt: torch.nn.BatchNorm1d(4, track_running_stats=False, dtype=dt),
    ),
    Config("bn2", "nn.BatchNorm2d[C{o}]", "[N C H W]{f}", "l(x, mode)", lambda dt: torch.nn.BatchNorm2d(4, dtype=dt)),
    Config(
        "bn2_opts",
        "nn.BatchNorm2d[C, eps=0.001, momentum=0.05{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm2d(4, eps=1e-3, momentum=0.05, dtype=dt),
    ),
    Config(
        "bn2_noaffine",
        "nn.BatchNorm2d[C, affine=False{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm2d(4, affine=False, dtype=dt),
        params=False,
    ),
    Config(
        "bn2_nostats",
        "nn.BatchNorm2d[C, track_running_stats=False{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm2d(4, track_running_stats=False, dtype=dt),
    ),
    Config(
        "bn2_bare",
        "nn.BatchNorm2d[C, affine=False, track_running_stats=False{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.BatchNorm2d(4, affine=False, track_running_stats=False, dtype=dt),
        params=False,
    ),
]

# torch's dropouts have no dtype (nor params): the lambda ignores it
DROPOUTS = [
    Config("drop", "nn.Dropout[p=0.3{o}]", "[N T E]{f}", "l(x, mode)", lambda dt: torch.nn.Dropout(0.3), params=False),
    Config("drop_default", "nn.Dropout[{o0}]", "[N E]{f}", "l(x, mode)", lambda dt: torch.nn.Dropout(), params=False),
    Config(
        "drop_zero", "nn.Dropout[p=0.0{o}]", "[N E]{f}", "l(x, mode)", lambda dt: torch.nn.Dropout(p=0.0), params=False
    ),
    Config(
        "drop2d",
        "nn.Dropout2d[p=0.25{o}]",
        "[N C H W]{f}",
        "l(x, mode)",
        lambda dt: torch.nn.Dropout2d(0.25),
        params=False,
    ),
]

SHAPES = {
    "[N T E]{f}": (6, 3, 5),
    "[E]{f}": (5,),
    "[N E]{f}": (6, 5),
    "[N C]{f}": (6, 4),
    "[N C L]{f}": (6, 4, 7),
    "[N C H W]{f}": (6, 4, 3, 2),
}
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(scope="module", params=DTYPES, ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    text = module_source(HEADER, NORMS + BATCH_NORMS + DROPOUTS, dt)
    # nn.Dropout[{o0}]: the defaults (nn.Dropout in f32, nn.Dropout[dtype=f64])
    text = text.replace("nn.Dropout[{o0}]", "nn.Dropout" if dt == torch.float32 else "nn.Dropout[dtype=f64]")
    return load(text, tmp_path_factory.mktemp("norm")), dt


def _inputs(c: Config, dt: torch.dtype, seed: int, scale: float = 1.0):
    gen = torch.Generator().manual_seed(seed)
    shape = SHAPES[c.x]
    x = torch.randn(shape, generator=gen, dtype=dt) * 2.0 * scale + 0.5 * scale
    w = torch.randn(shape, generator=gen, dtype=dt)
    return x, w


def _param_names(layer) -> tuple[str, ...]:
    return tuple(n for n in ("weight", "bias") if n in layer.state_dict())


@pytest.mark.parametrize("c", NORMS, ids=[c.key for c in NORMS])
def test_layer_and_rms_norm_match_torch(env, c: Config) -> None:
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(0)
    ref = c.torch_module(dt)
    assert set(layer.state_dict()) == set(ref.state_dict()), "the members are torch's"
    randomise(layer, _param_names(layer), 1)
    copy_into(ref, layer)
    x, w = _inputs(c, dt, 2)
    apply = getattr(mod, f"{c.key}_apply")
    close(apply(layer, x), ref(x), "forward")
    want, grads, xgrad = torch_loss_and_grads(ref, x, w)
    if c.params:
        v, g = getattr(mod, f"{c.key}_step")(layer, x, w)
        close(v, want, "loss")
        for name in _param_names(layer):
            close(getattr(g, name), grads[name], f"grad of {name}")
    # the input's gradient, by torch's autograd through the compiled forward
    xq = x.clone().requires_grad_(True)
    (apply(layer, xq) * w).sum().backward()
    assert xq.grad is not None
    close(xq.grad, xgrad, "grad of x")


@pytest.mark.parametrize("key", ["rms", "rms_plain"])
def test_rms_norms_default_eps_is_the_machine_epsilon(env, key: str) -> None:
    # values so small that mean(x * x) is below eps: the result shows which eps it was
    mod, dt = env
    c = next(c for c in NORMS if c.key == key)
    layer = getattr(mod, f"{key}_make")(0)
    x, _ = _inputs(c, dt, 3, scale=1e-5 if dt == torch.float32 else 1e-9)
    ref = c.torch_module(dt)
    got = getattr(mod, f"{key}_apply")(layer, x)
    close(got, ref(x), "RMSNorm, eps=None")
    eps = torch.finfo(dt).eps
    close(got, x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps), "x / sqrt(mean(x*x) + finfo.eps)")
    assert not torch.allclose(got, F.rms_norm(x, (5,), eps=1e-6)), "another eps gives other numbers"


def _same(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """close() for floats; an integer buffer (num_batches_tracked) exactly."""
    if want.is_floating_point():
        close(got, want, what)
    else:
        assert got.dtype == want.dtype and torch.equal(got, want), f"{what}: {got} != {want}"


def _bn_state(layer) -> dict[str, torch.Tensor]:
    return {k: v for k, v in layer.state_dict().items() if k in ("running_mean", "running_var", "num_batches_tracked")}


@pytest.mark.parametrize("c", BATCH_NORMS, ids=[c.key for c in BATCH_NORMS])
def test_batch_norm_step_by_step_in_train_then_eval(env, c: Config) -> None:
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(0)
    ref = c.torch_module(dt)
    assert set(layer.state_dict()) == set(ref.state_dict()), "the members are torch's"
    randomise(layer, _param_names(layer), 1)
    copy_into(ref, layer)
    apply = getattr(mod, f"{c.key}_apply")
    for step in range(4):
        # Train inside value_and_grad: the batch's statistics, the running ones updated in place
        x, w = _inputs(c, dt, 10 + step, scale=1.0 + step)
        ref.train()
        want, grads, xgrad = torch_loss_and_grads(ref, x, w)
        if c.params:
            v, g = getattr(mod, f"{c.key}_step")(layer, x, w, rt.Train(seed=step))
            close(v, want, f"loss, step {step}")
            for name in _param_names(layer):
                close(getattr(g, name), grads[name], f"grad of {name}, step {step}")
        else:
            close(getattr(mod, f"{c.key}_loss")(layer, x, w, rt.Train(seed=step)), want, f"loss, step {step}")
        for k, t in _bn_state(layer).items():
            assert t.dtype == ref.state_dict()[k].dtype, k
            _same(t, ref.state_dict()[k], f"{k} after step {step}")
        if "num_batches_tracked" in ref.state_dict():
            assert int(layer.num_batches_tracked) == step + 1 == int(ref.num_batches_tracked)
    # a Train call outside any gradient updates them too; the input's gradient
    # by torch's autograd through the compiled forward (one more update on each side)
    x, w = _inputs(c, dt, 20, scale=0.5)
    _, _, xgrad = torch_loss_and_grads(ref, x, w)
    xq = x.clone().requires_grad_(True)
    (apply(layer, xq, rt.Train(seed=9)) * w).sum().backward()
    assert xq.grad is not None
    close(xq.grad, xgrad, "grad of x in Train")
    for k, t in _bn_state(layer).items():
        _same(t, ref.state_dict()[k], f"{k} after a Train call")
    # Eval: the running statistics (or, without them, the batch's), and no change
    ref.eval()
    before = _bn_state(layer)
    x, w = _inputs(c, dt, 21)
    close(apply(layer, x, rt.Eval), ref(x), "forward in Eval")
    want, grads, xgrad = torch_loss_and_grads(ref, x, w)
    if c.params:
        v, g = getattr(mod, f"{c.key}_step")(layer, x, w, rt.Eval)
        close(v, want, "loss in Eval")
        for name in _param_names(layer):
            close(getattr(g, name), grads[name], f"grad of {name} in Eval")
    xq = x.clone().requires_grad_(True)
    (apply(layer, xq, rt.Eval) * w).sum().backward()
    assert xq.grad is not None
    close(xq.grad, xgrad, "grad of x in Eval")
    for k, t in _bn_state(layer).items():
        assert torch.equal(t, before[k]), f"{k} changed in Eval"
        _same(t, ref.state_dict()[k], f"{k} after Eval")


def test_batch_norm_without_running_stats_has_no_buffers(env) -> None:
    mod, _ = env
    for key in ("bn1_nostats", "bn2_nostats", "bn2_bare"):
        layer = getattr(mod, f"{key}_make")(0)
        assert _bn_state(layer) == {}, key


def _fresh_state(c: Config, dt: torch.dtype) -> dict[str, torch.Tensor]:
    return c.torch_module(dt).state_dict()


@pytest.mark.parametrize("c", NORMS + BATCH_NORMS, ids=[c.key for c in NORMS + BATCH_NORMS])
def test_default_initialisation_is_torchs(env, c: Config) -> None:
    # weight ones, bias zeros, running_mean zeros, running_var ones,
    # num_batches_tracked 0 (an i64): exactly torch's constants, in the layer's dtype
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(7)
    want = _fresh_state(c, dt)
    got = layer.state_dict()
    assert set(got) == set(want)
    for k, t in want.items():
        assert got[k].dtype == t.dtype and torch.equal(got[k], t), k


# --- dropout -------------------------------------------------------------------------


@pytest.mark.parametrize("c", DROPOUTS, ids=[c.key for c in DROPOUTS])
def test_dropout_in_train_is_torchs_under_the_same_seed(env, c: Config) -> None:
    # Train(seed=s) draws its mask from a generator seeded with s, with torch's
    # own algorithm: the same numbers as torch.manual_seed(s); torch.nn.Dropout(p)
    mod, dt = env
    layer = getattr(mod, f"{c.key}_make")(0)
    apply = getattr(mod, f"{c.key}_apply")
    ref = c.torch_module(dt)
    ref.train()
    for seed in (0, 5):
        x, w = _inputs(c, dt, seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            xr = x.clone().requires_grad_(True)
            want = ref(xr)
        (want * w).sum().backward()
        xq = x.clone().requires_grad_(True)
        got = apply(layer, xq, rt.Train(seed=seed))
        assert got.dtype == dt and torch.equal(got, want), f"seed {seed}"
        (got * w).sum().backward()
        assert xq.grad is not None and xr.grad is not None
        assert torch.equal(xq.grad, xr.grad), f"grad of x, seed {seed}"
    # Eval is the input itself, with its gradient
    ref.eval()
    x, w = _inputs(c, dt, 3)
    close(apply(layer, x, rt.Eval), ref(x), "Eval")
    xq = x.clone().requires_grad_(True)
    (apply(layer, xq, rt.Eval) * w).sum().backward()
    assert xq.grad is not None
    close(xq.grad, w, "grad of x in Eval")


def test_dropout_statistics_under_train(env) -> None:
    # over many values: the share dropped is p, the kept ones are x / (1 - p);
    # the default p is torch's 0.5; one mode value continues its stream
    mod, dt = env
    for key, p in (("drop", 0.3), ("drop_default", 0.5)):
        c = next(c for c in DROPOUTS if c.key == key)
        layer = getattr(mod, f"{key}_make")(0)
        apply = getattr(mod, f"{key}_apply")
        mode = rt.Train(seed=11)
        outs = [apply(layer, torch.ones(SHAPES[c.x], dtype=dt), mode) for _ in range(200)]
        y = torch.stack(outs)
        dropped = (y == 0).double().mean().item()
        assert abs(dropped - p) < 0.02, (key, dropped)
        kept = y[y != 0]
        close(kept, torch.full_like(kept, 1 / (1 - p)), f"{key}: kept values")
        assert not torch.equal(outs[0], outs[1]), "two calls with one mode draw two masks"
        assert torch.equal(apply(layer, torch.ones(SHAPES[c.x], dtype=dt), rt.Train(seed=11)), outs[0])


def test_dropout_with_p_zero_is_the_identity_in_train(env) -> None:
    mod, dt = env
    x, _ = _inputs(DROPOUTS[2], dt, 0)
    close(mod.drop_zero_apply(mod.drop_zero_make(0), x, rt.Train(seed=1)), x, "p=0")


def test_dropout2d_zeroes_whole_channels(env) -> None:
    mod, dt = env
    layer = mod.drop2d_make(0)
    y = mod.drop2d_apply(layer, torch.ones(6, 4, 3, 2, dtype=dt), rt.Train(seed=4))
    planes = y.flatten(2)
    assert torch.all((planes == 0).all(-1) | (planes == 1 / 0.75).all(-1)), "each channel zeroed or kept whole"


# --- members under several options (LayerNorm's bias: if elementwise_affine and bias) --

FLAGS_SRC = """
dim D = 3

model Norm[E, affine: Bool = True, bias: Bool = True, frozen: Bool = False]:
    param weight: [E] = ones if affine
    param bias: [E] = zeros if affine and bias
    buffer scale: [E] = ones if not frozen and affine

    fn forward(self, x: [E]) -> [E]:
        if affine:
            x = x * self.weight
            if bias:
                x = x + self.bias
        return x

fn made(seed: Int) -> (Norm[D], Norm[D, affine=False], Norm[D, bias=False], Norm[D, frozen=True]):
    return Norm[D].init(seed=seed), Norm[D, affine=False].init(seed=seed), Norm[D, bias=False].init(seed=seed), Norm[D, frozen=True].init(seed=seed)
"""


def test_a_member_may_exist_under_several_options(tmp_path) -> None:
    assert [(d.code, d.message) for d in check_text(FLAGS_SRC).diagnostics] == []
    full, plain, nobias, frozen = load(FLAGS_SRC, tmp_path).made(0)
    assert list(full.state_dict()) == ["weight", "bias", "scale"]
    assert list(plain.state_dict()) == []  # bias=True, but not affine: no bias, as torch's LayerNorm
    assert list(nobias.state_dict()) == ["weight", "scale"]
    assert list(frozen.state_dict()) == ["weight", "bias"]


def test_both_parsers_read_several_flags_alike() -> None:
    from quiver.checker import ast as A
    from quiver.checker import fast_parser
    from quiver.checker.parser import parse_item

    item = FLAGS_SRC[FLAGS_SRC.index("model Norm") : FLAGS_SRC.index("fn made")].rstrip() + "\n"  # the model
    ref = parse_item(item, fast=False)
    assert ref.diagnostics == () and ref.item is not None
    fast = fast_parser.parse(item)
    assert fast is not None and A.dump(fast) == A.dump(ref.item)
    assert isinstance(fast, A.ModelDecl)
    cond = fast.members[2].cond  # a Boolean expression (issue 39: dims may be compared too)
    assert isinstance(cond, A.BoolOp) and cond.op == "and"
    assert isinstance(cond.left, A.Not) and isinstance(cond.left.operand, A.Name)
    assert (cond.left.operand.name, isinstance(cond.right, A.Name) and cond.right.name) == ("frozen", "affine")
    assert item[cond.span.start : cond.span.end] == "not frozen and affine"
    assert item[cond.right.span.start : cond.right.span.end] == "affine"


def test_a_member_under_several_options_is_read_where_each_is_known() -> None:
    source = FLAGS_SRC + (
        "\nfn outside(n: Norm[D, affine=False], x: [D]) -> [D]:\n    return x + n.bias\n"
        "\nmodel Half[E, affine: Bool = True, bias: Bool = True]:\n"
        "    param bias: [E] = zeros if affine and bias\n\n"
        "    fn forward(self, x: [E]) -> [E]:\n        if bias:\n            return x + self.bias\n        return x\n"
        "\nmodel Typo[E, affine: Bool = True]:\n    param bias: [E] = zeros if affine and bais\n"
    )
    diags = [(d.code, d.message) for d in check_text(source).diagnostics]
    assert [c for c, _ in diags] == ["E0914", "E0914", "E0913"], diags
    assert "it exists only when affine=True and bias=True" in diags[0][1]
    assert "read it under `if affine:`, inside it `if bias:`" in diags[1][1]
    assert "'bais' is not an option of Typo" in diags[2][1]


# --- the checker: a layer applied to the wrong size -----------------------------------

WRONG = {
    "LayerNorm": ("fn f(l: nn.LayerNorm[E], x: [N C]):\n    print(l(x))\n", "expected [N E], found [N C]"),
    "RMSNorm": ("fn f(l: nn.RMSNorm[E], x: [N T C]):\n    print(l(x))\n", "expected [N T E], found [N T C]"),
    "BatchNorm1d": (
        "fn f(l: nn.BatchNorm1d[C], x: [N E], mode: Mode):\n    print(l(x, mode))\n",
        "nn.BatchNorm1d.forward: expected [N C], found [N E]",
    ),
    "BatchNorm1d.seq": (
        "fn f(l: nn.BatchNorm1d[C], x: [N E L], mode: Mode):\n    print(l.seq(x, mode))\n",
        "nn.BatchNorm1d.seq: expected [N C L], found [N E L]",
    ),
    "BatchNorm2d": (
        "fn f(l: nn.BatchNorm2d[C], x: [N E H W], mode: Mode):\n    print(l(x, mode))\n",
        "nn.BatchNorm2d.forward: expected [N C h w], found [N E H W]",
    ),
    "Dropout": (
        "fn f(l: nn.Dropout[p=0.1], x: [N E] f64, mode: Mode):\n    print(l(x, mode))\n",
        "nn.Dropout.forward: expected [N E] Float, found [N E] f64",
    ),
    "Dropout2d": ("fn f(l: nn.Dropout2d, x: [N E], mode: Mode):\n    print(l(x, mode))\n", "found [N E] Float"),
}


@pytest.mark.parametrize("layer", list(WRONG))
def test_a_layer_applied_to_the_wrong_size_is_one_diagnostic(layer: str) -> None:
    body, words = WRONG[layer]
    diags = [(d.code, d.message) for d in check_example(HEADER + "\n" + body, LIBRARY).diagnostics]
    assert len(diags) == 1, diags
    code, message = diags[0]
    assert code == ("E0302" if layer == "Dropout" else "E0201"), diags
    assert f"argument 'x' of nn.{layer.split('.')[0]}" in message and words in message, message
