"""nn.MultiheadAttention, nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer against torch.nn.MultiheadAttention(,
torch.nn.TransformerEncoderLayer(, torch.nn.TransformerDecoderLayer(: the
same configuration, the Quiver layer's params copied in under torch's
state_dict keys (2-D weights transposed); forward values, the gradients of
every param (through Quiver's own grad) and of every input (torch's autograd
through the compiled forward), in f32 and f64, in Train and Eval; self- and
cross-attention, Bool attention and key-padding masks, causal masking, the
attention weights, both layouts (torch's default sequence first and
batch_first=True), post- and pre-norm, relu and gelu, without biases; under
Train with dropout, exactly torch's values when torch's dropout draws from
the same stream; the default initialisation's distribution; and a wrong
size is one diagnostic naming both dims."""

from __future__ import annotations

import contextlib
import math
import textwrap

import pytest
import torch
from attention_support import (
    NH,
    Config,
    E,
    inputs,
    program,
    quiver_args,
    torch_call,
    torch_drawing_as_quiver,
    torch_layer,
)
from nn_library import LIBRARY
from parity import close, field, load

from quiver import runtime as rt
from quiver.checker.workspace import check_example

# torch warns when a float attention mask meets a Bool key padding mask (and merges them, as Quiver does)
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")

ALL_MHA = ("forward", "self", "masked", "with_weights", "batch_first", "batch_first_masked", "batch_first_with_weights")
ALL_LAYER = ("forward", "masked", "batch_first", "batch_first_masked")
# float (additive) attention masks, as torch.nn.Transformer.generate_square_subsequent_mask makes
FLOAT_MHA = ("masked_float", "with_weights_float", "batch_first_masked_float", "batch_first_with_weights_float")
FLOAT_LAYER = ("masked_float", "batch_first_masked_float")
# every mask float, the key padding masks too (0, and -inf at padding, as torch adds them)
PAD_MHA = tuple(f"{form}_padding" for form in FLOAT_MHA)
PAD_LAYER = tuple(f"{form}_padding" for form in FLOAT_LAYER)

CONFIGS = (
    Config("mha", "mha", "nn.MultiheadAttention[E, NH]", {}, ALL_MHA + FLOAT_MHA + PAD_MHA),
    Config("mha_plain", "mha", "nn.MultiheadAttention[E, NH, bias=False]", {"bias": False}, ("forward", "masked")),
    Config(
        "mha_drop", "mha", "nn.MultiheadAttention[E, NH, dropout=0.3]", {"dropout": 0.3}, ALL_MHA + FLOAT_MHA + PAD_MHA
    ),
    Config(
        "enc",
        "enc",
        "nn.TransformerEncoderLayer[E, NH, F, dropout=0.0]",
        {"dropout": 0.0},
        ALL_LAYER + FLOAT_LAYER + PAD_LAYER,
    ),
    Config(
        "enc_pre",
        "enc",
        "nn.TransformerEncoderLayer[E, NH, F, dropout=0.0, norm_first=True, gelu=True]",
        {"dropout": 0.0, "norm_first": True, "activation": "gelu"},
        ("forward", "batch_first_masked"),
    ),
    Config(
        "enc_plain",
        "enc",
        "nn.TransformerEncoderLayer[E, NH, F, dropout=0.0, bias=False, layer_norm_eps=0.001]",
        {"dropout": 0.0, "bias": False, "layer_norm_eps": 1e-3},
        ("forward", "masked"),
    ),
    Config("enc_drop", "enc", "nn.TransformerEncoderLayer[E, NH, F]", {}, ALL_LAYER + FLOAT_LAYER + PAD_LAYER),
    Config(
        "dec",
        "dec",
        "nn.TransformerDecoderLayer[E, NH, F, dropout=0.0]",
        {"dropout": 0.0},
        ALL_LAYER + FLOAT_LAYER + PAD_LAYER,
    ),
    Config(
        "dec_pre",
        "dec",
        "nn.TransformerDecoderLayer[E, NH, F, dropout=0.0, norm_first=True, gelu=True]",
        {"dropout": 0.0, "norm_first": True, "activation": "gelu"},
        ("forward", "batch_first_masked"),
    ),
    Config(
        "dec_plain",
        "dec",
        "nn.TransformerDecoderLayer[E, NH, F, dropout=0.0, bias=False, layer_norm_eps=0.001]",
        {"dropout": 0.0, "bias": False, "layer_norm_eps": 1e-3},
        ("forward", "masked"),
    ),
    Config(
        "dec_drop",
        "dec",
        "nn.TransformerDecoderLayer[E, NH, F, dropout=0.25]",
        {"dropout": 0.25},
        ALL_LAYER + FLOAT_LAYER + PAD_LAYER,
    ),
)
BY_NAME = {c.name: c for c in CONFIGS}
# every configuration and form whose values do not depend on the mode's draws
EXACT = [(c.name, form) for c in CONFIGS if c.dropout == 0.0 for form in c.forms]
DROPPED = [(c.name, form) for c in CONFIGS if c.dropout > 0.0 for form in c.forms]

# Layer sizes for the distribution of the default initialisation
WIDE = """
import nn

fn mha(seed: Int) -> nn.MultiheadAttention[256, 4]:
    return nn.MultiheadAttention[256, 4].init(seed=seed)

fn encoder(seed: Int) -> nn.TransformerEncoderLayer[64, 4, 256]:
    return nn.TransformerEncoderLayer[64, 4, 256].init(seed=seed)

fn decoder(seed: Int) -> nn.TransformerDecoderLayer[64, 4]:
    return nn.TransformerDecoderLayer[64, 4].init(seed=seed)
"""


@pytest.fixture(autouse=True, scope="module")
def _no_fast_path():
    # torch's fused inference path computes otherwise; compare with its math
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.mha.set_fastpath_enabled(before)


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    return load(program(CONFIGS, dt), tmp_path_factory.mktemp("attention")), dt


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    return load(WIDE, tmp_path_factory.mktemp("attention_init"))


def _weights(outs: tuple[torch.Tensor, ...], seed: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in outs]


def _compare(mod, dt, name: str, form: str, quiver_mode, torch_train: bool, drawing_seed: int | None = None) -> None:
    """Forward values, the params' gradients and the inputs' gradients of
    one configuration and form against torch's."""
    c = BY_NAME[name]
    layer = getattr(mod, f"make_{name}")(7)
    ref = torch_layer(c, layer, dt, batch_first=form.startswith("batch_first"))
    ref.train(torch_train)
    x = inputs(c, form, dt, seed=3)
    fresh = (lambda: rt.Train(seed=drawing_seed)) if drawing_seed is not None else (lambda: quiver_mode)
    # torch: values, and the gradients of its params and inputs
    xr = {k: v.clone().requires_grad_(v.dtype != torch.bool) for k, v in x.items()}
    with torch_drawing_as_quiver(drawing_seed) if drawing_seed is not None else contextlib.nullcontext():
        want = torch_call(c, form, ref, xr)
    ws = _weights(want, seed=5)
    sum((o * w).sum() for o, w in zip(want, ws)).backward()
    # Quiver: values through the compiled forward, the inputs' gradients by torch's autograd through it
    xq = {k: v.clone().requires_grad_(v.dtype != torch.bool) for k, v in x.items()}
    got = getattr(mod, f"{name}_{form}")(layer, *quiver_args(c, form, xq), fresh())
    got = got if isinstance(got, tuple) else (got,)
    for i, (g, w) in enumerate(zip(got, want)):
        close(g, w.detach(), f"{name}.{form} output {i}")
    sum((o * w).sum() for o, w in zip(got, ws)).backward()
    for k in x:
        if x[k].dtype != torch.bool:
            close(xq[k].grad, xr[k].grad, f"{name}.{form}: grad of {k}")
    # the params' gradients by Quiver's grad
    g = getattr(mod, f"grads_{name}_{form}")(layer, *quiver_args(c, form, x), fresh(), *ws)
    for key, p in ref.named_parameters():
        assert p.grad is not None, key
        want_g = p.grad.T if p.dim() == 2 else p.grad
        close(field(g, key), want_g, f"{name}.{form}: grad of {key}")


@pytest.mark.parametrize("name, form", EXACT, ids=[f"{n}-{f}" for n, f in EXACT])
def test_values_and_gradients_match_torch_in_eval(env, name: str, form: str) -> None:
    mod, dt = env
    _compare(mod, dt, name, form, rt.Eval, torch_train=False)


@pytest.mark.parametrize("name, form", EXACT, ids=[f"{n}-{f}" for n, f in EXACT])
def test_values_and_gradients_match_torch_in_train_without_dropout(env, name: str, form: str) -> None:
    mod, dt = env
    _compare(mod, dt, name, form, rt.Train(seed=1), torch_train=True)


@pytest.mark.parametrize("name, form", DROPPED, ids=[f"{n}-{f}" for n, f in DROPPED])
def test_with_dropout_eval_is_torchs_eval(env, name: str, form: str) -> None:
    mod, dt = env
    _compare(mod, dt, name, form, rt.Eval, torch_train=False)


@pytest.mark.parametrize("name, form", DROPPED, ids=[f"{n}-{f}" for n, f in DROPPED])
def test_with_dropout_train_is_torchs_train_on_the_same_draws(env, name: str, form: str) -> None:
    # torch's dropouts draw from the stream of Train(seed=11) as Quiver's
    # do: the values and gradients are torch's exactly when the layer draws
    # in torch's order (attention, dropout1, ..., the feed-forward's two)
    mod, dt = env
    _compare(mod, dt, name, form, None, torch_train=True, drawing_seed=11)
    # and something was dropped
    c = BY_NAME[name]
    layer = getattr(mod, f"make_{name}")(7)
    args = quiver_args(c, form, inputs(c, form, dt, seed=3))
    run = getattr(mod, f"{name}_{form}")
    train, evaluated = run(layer, *args, rt.Train(seed=11)), run(layer, *args, rt.Eval)
    assert not torch.equal(
        train[0] if isinstance(train, tuple) else train, evaluated[0] if isinstance(evaluated, tuple) else evaluated
    )


def test_train_with_dropout_drops_and_is_reproducible(env) -> None:
    mod, dt = env
    c = BY_NAME["enc_drop"]
    layer = mod.make_enc_drop(0)
    x = inputs(c, "forward", dt)["src"]
    a = mod.enc_drop_forward(layer, x, rt.Train(seed=1))
    assert torch.equal(a, mod.enc_drop_forward(layer, x, rt.Train(seed=1)))
    assert not torch.equal(a, mod.enc_drop_forward(layer, x, rt.Train(seed=2)))
    assert not torch.equal(a, mod.enc_drop_forward(layer, x, rt.Eval))


def test_the_attention_weights_under_dropout_are_unbiased(env) -> None:
    # with_weights gives the weights after dropout, as torch does: each
    # head's zeroed with p = 0.3 or scaled by 1/0.7, so over n seeds their
    # mean is the Eval weights (which sum to 1 over the keys), within 5 of
    # its standard deviations (at most 1/NH * sqrt(NH * 0.3/0.7) / sqrt(n));
    # the first query sees only the first key (causal), with weight 1 in
    # both heads: after dropout 0, 0.5/0.7 or 1/0.7, with chances 0.3**2,
    # 2 * 0.3 * 0.7 and 0.7**2
    mod, dt = env
    c = BY_NAME["mha_drop"]
    layer = mod.make_mha_drop(0)
    args = quiver_args(c, "with_weights", inputs(c, "with_weights", dt))
    _, kept = mod.mha_drop_with_weights(layer, *args, rt.Eval)
    torch.testing.assert_close(kept.sum(-1), torch.ones(kept.shape[:-1], dtype=dt))
    draws = torch.stack([mod.mha_drop_with_weights(layer, *args, rt.Train(seed=s))[1] for s in range(400)])
    assert not torch.equal(draws[0], kept)
    assert (draws.mean(0) - kept).abs().max() < 5 * math.sqrt(2 * 0.3 / 0.7) / 2 / math.sqrt(400)
    first = draws[:, :, 0, 0].flatten()
    for value, chance in ((0.0, 0.09), (0.5 / 0.7, 0.42), (1 / 0.7, 0.49)):
        share = (first - value).abs().lt(1e-4).double().mean()
        assert abs(share - chance) < 0.06, (value, share)


def test_torchs_float_causal_mask_is_the_bool_triangle(env) -> None:
    # torch's generate_square_subsequent_mask (0 and -inf, with the
    # is_causal hint) gives what triu(ones([S S] Bool), diagonal=1) gives
    mod, dt = env
    c = BY_NAME["enc"]
    layer = mod.make_enc(0)
    ref = torch_layer(c, layer, dt, batch_first=False).eval()
    x = inputs(c, "masked", dt)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(x["src"].shape[0], dtype=dt)
    want = ref(x["src"], src_mask=causal, is_causal=True)
    no_padding = torch.zeros_like(x["src_key_padding_mask"])
    close(mod.enc_masked(layer, x["src"], x["src_mask"], no_padding, rt.Eval), want.detach(), "causal")


def test_torchs_float_causal_mask_itself_is_taken_by_masked_float(env) -> None:
    # the float mask torch's generate_square_subsequent_mask makes, passed as
    # it is to masked_float, and the same as the Bool triangle to masked
    mod, dt = env
    c = BY_NAME["enc"]
    layer = mod.make_enc(0)
    ref = torch_layer(c, layer, dt, batch_first=False).eval()
    x = inputs(c, "masked", dt)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(x["src"].shape[0], dtype=dt)
    pad = x["src_key_padding_mask"]
    want = ref(x["src"], src_mask=causal, src_key_padding_mask=pad)
    got = mod.enc_masked_float(layer, x["src"], causal, pad, rt.Eval)
    close(got, want.detach(), "float causal")
    close(got, mod.enc_masked(layer, x["src"], x["src_mask"], pad, rt.Eval), "as the Bool mask")


def test_a_bool_mask_where_a_float_one_is_taken_is_one_diagnostic() -> None:
    src = (
        "import nn\n\ndim T = 4\n\n"
        "fn f(m: nn.TransformerEncoderLayer[8, 2, 16], x: [T 3 8], pad: [3 T] Bool) -> [T 3 8]:\n"
        "    return m.masked_float(x, nn.generate_square_subsequent_mask(T), pad, Eval)\n"
        "\nfn g(m: nn.MultiheadAttention[8, 2], x: [T 3 8], pad: [3 T] Bool, mask: [T T]) -> [T 3 8]:\n"
        "    return m.masked(x, x, x, pad, mask, Eval)\n"
    )
    found = [(d.code, d.message, src[d.span.start : d.span.end]) for d in check_example(src, LIBRARY).diagnostics]
    assert found == [
        (
            "E0302",
            "argument 'src_mask' of nn.TransformerEncoderLayer.masked_float: expected [T T] Float, found [T T] Bool",
            "nn.generate_square_subsequent_mask(T)",
        ),
        (
            "E0302",
            "argument 'attn_mask' of nn.MultiheadAttention.masked: expected [T T] Bool, found [T T] Float",
            "mask",
        ),
    ]


def test_a_causal_decoder_looks_only_back(env) -> None:
    # with the causal tgt_mask, a later target leaves the outputs before it exactly as they were
    mod, dt = env
    c = BY_NAME["dec"]
    layer = mod.make_dec(0)
    x = inputs(c, "masked", dt)
    args = quiver_args(c, "masked", x)
    y = mod.dec_masked(layer, *args, rt.Eval)
    later = x["tgt"].clone()
    later[-1] = torch.randn(later.shape[1:], dtype=dt)
    y2 = mod.dec_masked(layer, later, *args[1:], rt.Eval)
    assert torch.equal(y2[:-1], y[:-1])
    assert not torch.equal(y2[-1], y[-1])


def test_a_state_dict_has_torchs_keys(env) -> None:
    mod, dt = env
    for c in CONFIGS:
        layer = getattr(mod, f"make_{c.name}")(0)
        ref = torch_layer(c, layer, dt, batch_first=False)
        assert list(layer.state_dict()) == list(ref.state_dict()), c.name


def test_heads_must_divide_the_embedding() -> None:
    # torch.nn.MultiheadAttention(10, 3) refuses to be built; the instance is
    # one E0212 where it is written, nothing at its uses
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        torch.nn.MultiheadAttention(10, 3)
    src = "import nn\n\nfn make() -> nn.MultiheadAttention[10, 3]:\n    return nn.MultiheadAttention[10, 3].init(seed=0)\n"
    src += "\nfn run(m: nn.MultiheadAttention[10, 3], x: [4 2 10]) -> [4 2 10]:\n    return m(x, x, x, Eval)\n"
    message = "dim expression (E/NH): in nn.MultiheadAttention[10, 3] it is 10/3, not a whole number: NH must divide E"
    found = [(d.code, d.message, src[d.span.start : d.span.end]) for d in check_example(src, LIBRARY).diagnostics]
    assert found == [("E0212", message, "nn.MultiheadAttention[10, 3]")] * 3


def _uniform(values: torch.Tensor, bound: float, what: str) -> None:
    values = values.double().flatten()
    # uniform_ draws in float32: a draw may round up past the bound by an ulp
    assert values.abs().max() <= bound * (1 + 1e-6), what
    assert values.abs().max() > 0.98 * bound, what
    assert abs(values.mean()) < 0.05 * bound, what
    assert abs(values.std() - bound / math.sqrt(3)) < 0.05 * bound / math.sqrt(3), what


def test_multihead_attention_is_initialised_as_torch(wide) -> None:
    # in_proj_weight xavier_uniform (fans 256 and 768, as torch's [3E E]);
    # in_proj_bias and out_proj.bias zero; out_proj.weight as Linear's
    for seed in range(2):
        m = wide.mha(seed)
        torch.manual_seed(seed)
        ref = torch.nn.MultiheadAttention(256, 4)
        for layer, what in ((m, "quiver"), (ref, "torch")):
            _uniform(layer.in_proj_weight, math.sqrt(6 / (256 + 768)), f"{what} in_proj_weight")
            _uniform(layer.out_proj.weight, 1 / math.sqrt(256), f"{what} out_proj.weight")
            assert torch.equal(layer.in_proj_bias, torch.zeros(768)), what
            assert torch.equal(layer.out_proj.bias, torch.zeros(256)), what
    assert not torch.equal(wide.mha(0).in_proj_weight, wide.mha(1).in_proj_weight)
    assert torch.equal(wide.mha(2).in_proj_weight, wide.mha(2).in_proj_weight)


@pytest.mark.parametrize("which", ["encoder", "decoder"])
def test_transformer_layers_are_initialised_as_torch(wide, which: str) -> None:
    # each sub-layer as torch's: attention as above, linear1 and linear2 as
    # Linear's (U(+-1/sqrt(fan_in)), weight and bias), norms ones and zeros;
    # F = 2048 when left out, torch's dim_feedforward
    layer = getattr(wide, which)(0)
    f = 256 if which == "encoder" else 2048
    cls = torch.nn.TransformerEncoderLayer if which == "encoder" else torch.nn.TransformerDecoderLayer
    ref = cls(64, 4, f)
    attns = ("self_attn",) if which == "encoder" else ("self_attn", "multihead_attn")
    norms = ("norm1", "norm2") if which == "encoder" else ("norm1", "norm2", "norm3")
    assert tuple(layer.linear1.weight.shape) == (64, f)
    for m, what in ((layer, "quiver"), (ref, "torch")):
        _uniform(m.linear1.weight, 1 / math.sqrt(64), f"{what} linear1.weight")
        _uniform(m.linear2.weight, 1 / math.sqrt(f), f"{what} linear2.weight")
        assert m.linear1.bias.abs().max() <= 1 / math.sqrt(64) * (1 + 1e-6)
        assert m.linear2.bias.abs().max() <= 1 / math.sqrt(f) * (1 + 1e-6)
        for a in attns:
            _uniform(field(m, f"{a}.in_proj_weight"), math.sqrt(6 / (64 + 192)), f"{what} {a}.in_proj_weight")
            assert torch.equal(field(m, f"{a}.out_proj.bias"), torch.zeros(64))
        for n in norms:
            assert torch.equal(field(m, f"{n}.weight"), torch.ones(64)), (what, n)
            assert torch.equal(field(m, f"{n}.bias"), torch.zeros(64)), (what, n)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "fn f(m: nn.MultiheadAttention[E, NH], q: [T b D], k: [S b E]) -> [T b E]:\n    return m(q, k, k, Eval)\n",
            "argument 'query' of nn.MultiheadAttention.forward: expected [T b E], found [T b D]",
        ),
        (
            "fn f(m: nn.MultiheadAttention[E, NH], x: [T b E], pad: [b T] Bool, mask: [T D] Bool) -> [T b E]:\n"
            "    return m.masked(x, x, x, pad, mask, Eval)\n",
            "argument 'attn_mask' of nn.MultiheadAttention.masked: expected [T T] Bool, found [T D] Bool "
            "(T from argument 'key', not D)",
        ),
        (
            "fn f(m: nn.TransformerEncoderLayer[E, NH, 16], x: [b T D]) -> [b T E]:\n"
            "    return m.batch_first(x, Eval)\n",
            "argument 'src' of nn.TransformerEncoderLayer.batch_first: expected [b T E], found [b T D]",
        ),
        (
            "fn f(m: nn.TransformerDecoderLayer[E, NH, 16], x: [T b E], mem: [S b D]) -> [T b E]:\n"
            "    return m(x, mem, Eval)\n",
            "argument 'memory' of nn.TransformerDecoderLayer.forward: expected [S b E], found [S b D]",
        ),
    ],
)
def test_a_wrong_size_is_one_diagnostic_naming_both_dims(body: str, message: str) -> None:
    src = f"import nn\n\ndim E = {E}\ndim D = 6\ndim NH = {NH}\n\n" + textwrap.dedent(body)
    got = [(d.code, d.message) for d in check_example(src, LIBRARY).diagnostics]
    assert len(got) == 1 and got[0][1] == message, got
