"""The embeddings and normalisation layers of nn against torch.nn (LayerNorm,
RMSNorm, BatchNorm1d, BatchNorm2d, Dropout, Dropout2d), and the built-ins
they stand on: layer_norm and rms_norm with eps=."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from parity import close, load

from quiver.checker import check_text

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
    cond = fast.members[2].cond
    assert cond is not None
    assert [(f.name.text, f.negated) for f in cond.flags] == [("frozen", True), ("affine", False)]
    assert item[cond.span.start : cond.span.end] == "if not frozen and affine"
    assert [item[f.span.start : f.span.end] for f in cond.also] == ["affine"]


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
