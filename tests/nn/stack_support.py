"""What the tests of nn.TransformerEncoder, nn.TransformerDecoder and
nn.Transformer share: a Quiver program with, for each configuration and each
way of applying it (`forward`, `masked` and their `batch_first` forms), a
function that applies it, one that takes the loss sum(out * w), and one that
takes that loss's gradient with Quiver's own `grad`; inputs and masks; the
Quiver arguments and torch's call of each form. The torch modules are built
by the test (test_transformer_stacks.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from attention_support import DIMS, draw_inputs  # the same sizes and inputs


@dataclass(frozen=True)
class Config:
    """One configuration: its Quiver type (without the dtype option), the
    torch layer's constructor arguments and the stack's (`num_layers`,
    `norm`; for the transformer `num_encoder_layers`, ...)."""

    name: str
    kind: str  # "enc" | "dec" | "tr"
    quiver: str  # `nn.TransformerEncoder[E, NH, 2, F, dropout=0.0]`
    layer_kwargs: dict = field(default_factory=dict)
    stack_kwargs: dict = field(default_factory=dict)
    forms: tuple[str, ...] = ("forward", "masked", "batch_first", "batch_first_masked")

    def type(self, dt: torch.dtype) -> str:
        return self.quiver if dt == torch.float32 else self.quiver[:-1] + ", dtype=f64]"

    @property
    def dropout(self) -> float:
        return float(self.layer_kwargs.get("dropout", 0.1))


_SRC, _SRCB = ("src", "[S B E]", False), ("src", "[B S E]", False)
_TGT, _TGTB = ("tgt", "[L B E]", False), ("tgt", "[B L E]", False)
_MEM, _MEMB = ("memory", "[S B E]", False), ("memory", "[B S E]", False)
_SRC_MASK, _SRC_PAD = ("src_mask", "[S S]", True), ("src_key_padding_mask", "[B S]", True)
_TGT_MASK, _MEM_MASK = ("tgt_mask", "[L L]", True), ("memory_mask", "[L S]", True)
_TGT_PAD, _MEM_PAD = ("tgt_key_padding_mask", "[B L]", True), ("memory_key_padding_mask", "[B S]", True)
_DEC_MASKS = (_TGT_MASK, _MEM_MASK, _TGT_PAD, _MEM_PAD)
_TR_MASKS = (_SRC_MASK, _TGT_MASK, _MEM_MASK, _SRC_PAD, _TGT_PAD, _MEM_PAD)
# the ..._float forms: the attention masks float (additive), the padding masks Bool
_SRC_FMASK, _TGT_FMASK, _MEM_FMASK = (
    ("src_mask", "[S S]", False),
    ("tgt_mask", "[L L]", False),
    ("memory_mask", "[L S]", False),
)
_DEC_FMASKS = (_TGT_FMASK, _MEM_FMASK, _TGT_PAD, _MEM_PAD)
_TR_FMASKS = (_SRC_FMASK, _TGT_FMASK, _MEM_FMASK, _SRC_PAD, _TGT_PAD, _MEM_PAD)
# the ..._float_padding forms: every mask float, the padding masks too
_SRC_FPAD, _TGT_FPAD, _MEM_FPAD = (
    ("src_key_padding_mask", "[B S]", False),
    ("tgt_key_padding_mask", "[B L]", False),
    ("memory_key_padding_mask", "[B S]", False),
)
_DEC_PMASKS = (_TGT_FMASK, _MEM_FMASK, _TGT_FPAD, _MEM_FPAD)
_TR_PMASKS = (_SRC_FMASK, _TGT_FMASK, _MEM_FMASK, _SRC_FPAD, _TGT_FPAD, _MEM_FPAD)
# kind -> form -> (inputs, the method's name ("" for a call of the model), output)
FORMS: dict[str, dict[str, tuple[tuple[tuple[str, str, bool], ...], str, str]]] = {
    "enc": {
        "forward": ((_SRC,), "", "[S B E]"),
        "masked": ((_SRC, _SRC_MASK, _SRC_PAD), "masked", "[S B E]"),
        "batch_first": ((_SRCB,), "batch_first", "[B S E]"),
        "batch_first_masked": ((_SRCB, _SRC_MASK, _SRC_PAD), "batch_first_masked", "[B S E]"),
        "masked_float": ((_SRC, _SRC_FMASK, _SRC_PAD), "masked_float", "[S B E]"),
        "batch_first_masked_float": ((_SRCB, _SRC_FMASK, _SRC_PAD), "batch_first_masked_float", "[B S E]"),
        "masked_float_padding": ((_SRC, _SRC_FMASK, _SRC_FPAD), "masked_float_padding", "[S B E]"),
        "batch_first_masked_float_padding": (
            (_SRCB, _SRC_FMASK, _SRC_FPAD),
            "batch_first_masked_float_padding",
            "[B S E]",
        ),
    },
    "dec": {
        "forward": ((_TGT, _MEM), "", "[L B E]"),
        "masked": ((_TGT, _MEM, *_DEC_MASKS), "masked", "[L B E]"),
        "batch_first": ((_TGTB, _MEMB), "batch_first", "[B L E]"),
        "batch_first_masked": ((_TGTB, _MEMB, *_DEC_MASKS), "batch_first_masked", "[B L E]"),
        "masked_float": ((_TGT, _MEM, *_DEC_FMASKS), "masked_float", "[L B E]"),
        "batch_first_masked_float": ((_TGTB, _MEMB, *_DEC_FMASKS), "batch_first_masked_float", "[B L E]"),
        "masked_float_padding": ((_TGT, _MEM, *_DEC_PMASKS), "masked_float_padding", "[L B E]"),
        "batch_first_masked_float_padding": (
            (_TGTB, _MEMB, *_DEC_PMASKS),
            "batch_first_masked_float_padding",
            "[B L E]",
        ),
    },
    "tr": {
        "forward": ((_SRC, _TGT), "", "[L B E]"),
        "masked": ((_SRC, _TGT, *_TR_MASKS), "masked", "[L B E]"),
        "batch_first": ((_SRCB, _TGTB), "batch_first", "[B L E]"),
        "batch_first_masked": ((_SRCB, _TGTB, *_TR_MASKS), "batch_first_masked", "[B L E]"),
        "masked_float": ((_SRC, _TGT, *_TR_FMASKS), "masked_float", "[L B E]"),
        "batch_first_masked_float": ((_SRCB, _TGTB, *_TR_FMASKS), "batch_first_masked_float", "[B L E]"),
        "masked_float_padding": ((_SRC, _TGT, *_TR_PMASKS), "masked_float_padding", "[L B E]"),
        "batch_first_masked_float_padding": (
            (_SRCB, _TGTB, *_TR_PMASKS),
            "batch_first_masked_float_padding",
            "[B L E]",
        ),
    },
}


def program(configs: tuple[Config, ...], dt: torch.dtype) -> str:
    """The Quiver program: `make_<c>`, and for each form `<c>_<form>`,
    `loss_<c>_<form>` and `grads_<c>_<form>`."""
    f = "" if dt == torch.float32 else " f64"
    out = ["import nn\n", DIMS]
    for c in configs:
        t = c.type(dt)
        out.append(f"fn make_{c.name}(seed: Int) -> {t}:\n    return {t}.init(seed=seed)\n")
        for form in c.forms:
            ins, method, result = FORMS[c.kind][form]
            params = ", ".join(f"{n}: {s}{' Bool' if b else f}" for n, s, b in ins)
            args = ", ".join(n for n, _, _ in ins)
            call = f"m.{method}({args}, mode)" if method else f"m({args}, mode)"
            name = f"{c.name}_{form}"
            out.append(f"fn {name}(m: {t}, {params}, mode: Mode) -> {result}{f}:\n    return {call}\n")
            out.append(
                f"fn loss_{name}(m: {t}, {params}, mode: Mode, w: {result}{f}) -> []{f}:\n    return sum({call} * w)\n"
            )
            out.append(
                f"fn grads_{name}(m: {t}, {params}, mode: Mode, w: {result}{f}) -> Grad[{t}]:\n"
                f"    return grad(loss_{name}, m, {args}, mode, w)\n"
            )
    return "\n".join(out)


def inputs(c: Config, form: str, dt: torch.dtype, seed: int = 0) -> dict[str, torch.Tensor]:
    return draw_inputs(FORMS[c.kind][form][0], dt, seed)


def quiver_args(c: Config, form: str, x: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    return [x[n] for n, _, _ in FORMS[c.kind][form][0]]


def torch_call(c: Config, ref: torch.nn.Module, x: dict[str, torch.Tensor]) -> torch.Tensor:
    """torch's output of a form: the inputs positionally, the masks by their
    torch names (the encoder's src_mask is its `mask`)."""
    if c.kind == "enc":
        masks = {"mask": x["src_mask"], "src_key_padding_mask": x["src_key_padding_mask"]} if "src_mask" in x else {}
        return ref(x["src"], **masks)
    masks = {k: v for k, v in x.items() if k.endswith("mask")}
    if c.kind == "dec":
        return ref(x["tgt"], x["memory"], **masks)
    return ref(x["src"], x["tgt"], **masks)
