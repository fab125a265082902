"""What the tests of the attention and transformer layers share: a Quiver
program with, for each layer configuration and each way of applying it
(`forward`, `masked`, `with_weights`, their `batch_first` forms), a function
that applies it, one that takes the loss sum(out * w), and one that takes
that loss's gradient with Quiver's own `grad`; the torch module of the same
configuration with the Quiver layer's params copied in (the names are
torch's state_dict keys, every 2-D weight transposed); inputs and masks; and
the torch call of each form."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from quiver import runtime as rt

E, NH, F, L, S, B = 8, 2, 16, 3, 5, 2
DIMS = f"dim E = {E}\ndim NH = {NH}\ndim F = {F}\ndim L = {L}\ndim S = {S}\ndim B = {B}\n"


@dataclass(frozen=True)
class Config:
    """One layer configuration: its Quiver type (without the dtype option)
    and torch's constructor arguments."""

    name: str
    kind: str  # "mha" | "enc" | "dec"
    quiver: str  # `nn.TransformerEncoderLayer[E, NH, F, dropout=0.0]`
    torch_kwargs: dict = field(default_factory=dict)
    forms: tuple[str, ...] = ()

    def type(self, dt: torch.dtype) -> str:
        return self.quiver if dt == torch.float32 else self.quiver[:-1] + ", dtype=f64]"

    @property
    def dropout(self) -> float:
        return float(self.torch_kwargs.get("dropout", 0.0 if self.kind == "mha" else 0.1))


# The inputs of each form: (name, shape as Quiver writes it, Bool?)
_Q, _K, _V = ("query", "[L B E]", False), ("key", "[S B E]", False), ("value", "[S B E]", False)
_QB, _KB, _VB = ("query", "[B L E]", False), ("key", "[B S E]", False), ("value", "[B S E]", False)
_KP, _AM = ("key_padding_mask", "[B S]", True), ("attn_mask", "[L S]", True)
_AMF = ("attn_mask", "[L S]", False)  # a float (additive) mask
_KPF = ("key_padding_mask", "[B S]", False)  # a float key padding mask: 0, and -inf at padding
_SRC_MASKS = (("src_mask", "[S S]", True), ("src_key_padding_mask", "[B S]", True))
_DEC_MASKS = (
    ("tgt_mask", "[L L]", True),
    ("memory_mask", "[L S]", True),
    ("tgt_key_padding_mask", "[B L]", True),
    ("memory_key_padding_mask", "[B S]", True),
)
# the ..._float forms: the attention masks float, the key padding masks Bool
_SRC_FMASKS = (("src_mask", "[S S]", False), _SRC_MASKS[1])
_DEC_FMASKS = (("tgt_mask", "[L L]", False), ("memory_mask", "[L S]", False), *_DEC_MASKS[2:])
# the ..._float_padding forms: every mask float, the key padding masks too
_SRC_PMASKS = (("src_mask", "[S S]", False), ("src_key_padding_mask", "[B S]", False))
_DEC_PMASKS = (*_DEC_FMASKS[:2], ("tgt_key_padding_mask", "[B L]", False), ("memory_key_padding_mask", "[B S]", False))
# form -> (inputs, the method's name ("" for a call of the layer), outputs)
FORMS: dict[str, dict[str, tuple[tuple[tuple[str, str, bool], ...], str, tuple[str, ...]]]] = {
    "mha": {
        "forward": ((_Q, _K, _V), "", ("[L B E]",)),
        "self": ((_Q,), "", ("[L B E]",)),
        "masked": ((_Q, _K, _V, _KP, _AM), "masked", ("[L B E]",)),
        "with_weights": ((_Q, _K, _V, _KP, _AM), "with_weights", ("[L B E]", "[B L S]")),
        "batch_first": ((_QB, _KB, _VB), "batch_first", ("[B L E]",)),
        "batch_first_masked": ((_QB, _KB, _VB, _KP, _AM), "batch_first_masked", ("[B L E]",)),
        "batch_first_with_weights": ((_QB, _KB, _VB, _KP, _AM), "batch_first_with_weights", ("[B L E]", "[B L S]")),
        "masked_float": ((_Q, _K, _V, _KP, _AMF), "masked_float", ("[L B E]",)),
        "with_weights_float": ((_Q, _K, _V, _KP, _AMF), "with_weights_float", ("[L B E]", "[B L S]")),
        "batch_first_masked_float": ((_QB, _KB, _VB, _KP, _AMF), "batch_first_masked_float", ("[B L E]",)),
        "batch_first_with_weights_float": (
            (_QB, _KB, _VB, _KP, _AMF),
            "batch_first_with_weights_float",
            ("[B L E]", "[B L S]"),
        ),
        "masked_float_padding": ((_Q, _K, _V, _KPF, _AMF), "masked_float_padding", ("[L B E]",)),
        "with_weights_float_padding": ((_Q, _K, _V, _KPF, _AMF), "with_weights_float_padding", ("[L B E]", "[B L S]")),
        "batch_first_masked_float_padding": (
            (_QB, _KB, _VB, _KPF, _AMF),
            "batch_first_masked_float_padding",
            ("[B L E]",),
        ),
        "batch_first_with_weights_float_padding": (
            (_QB, _KB, _VB, _KPF, _AMF),
            "batch_first_with_weights_float_padding",
            ("[B L E]", "[B L S]"),
        ),
    },
    "enc": {
        "forward": ((("src", "[S B E]", False),), "", ("[S B E]",)),
        "masked": ((("src", "[S B E]", False), *_SRC_MASKS), "masked", ("[S B E]",)),
        "batch_first": ((("src", "[B S E]", False),), "batch_first", ("[B S E]",)),
        "batch_first_masked": ((("src", "[B S E]", False), *_SRC_MASKS), "batch_first_masked", ("[B S E]",)),
        "masked_float": ((("src", "[S B E]", False), *_SRC_FMASKS), "masked_float", ("[S B E]",)),
        "batch_first_masked_float": (
            (("src", "[B S E]", False), *_SRC_FMASKS),
            "batch_first_masked_float",
            ("[B S E]",),
        ),
        "masked_float_padding": ((("src", "[S B E]", False), *_SRC_PMASKS), "masked_float_padding", ("[S B E]",)),
        "batch_first_masked_float_padding": (
            (("src", "[B S E]", False), *_SRC_PMASKS),
            "batch_first_masked_float_padding",
            ("[B S E]",),
        ),
    },
    "dec": {
        "forward": ((("tgt", "[L B E]", False), ("memory", "[S B E]", False)), "", ("[L B E]",)),
        "masked": ((("tgt", "[L B E]", False), ("memory", "[S B E]", False), *_DEC_MASKS), "masked", ("[L B E]",)),
        "batch_first": ((("tgt", "[B L E]", False), ("memory", "[B S E]", False)), "batch_first", ("[B L E]",)),
        "batch_first_masked": (
            (("tgt", "[B L E]", False), ("memory", "[B S E]", False), *_DEC_MASKS),
            "batch_first_masked",
            ("[B L E]",),
        ),
        "masked_float": (
            (("tgt", "[L B E]", False), ("memory", "[S B E]", False), *_DEC_FMASKS),
            "masked_float",
            ("[L B E]",),
        ),
        "batch_first_masked_float": (
            (("tgt", "[B L E]", False), ("memory", "[B S E]", False), *_DEC_FMASKS),
            "batch_first_masked_float",
            ("[B L E]",),
        ),
        "masked_float_padding": (
            (("tgt", "[L B E]", False), ("memory", "[S B E]", False), *_DEC_PMASKS),
            "masked_float_padding",
            ("[L B E]",),
        ),
        "batch_first_masked_float_padding": (
            (("tgt", "[B L E]", False), ("memory", "[B S E]", False), *_DEC_PMASKS),
            "batch_first_masked_float_padding",
            ("[B L E]",),
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
            inputs, method, outs = FORMS[c.kind][form]
            params = ", ".join(f"{n}: {s}{' Bool' if b else f}" for n, s, b in inputs)
            args = ", ".join(n for n, _, _ in inputs)
            if form == "self":
                args = "query, query, query"
            call = f"m.{method}({args}, mode)" if method else f"m({args}, mode)"
            result = ", ".join(f"{s}{f}" for s in outs)
            result = f"({result})" if len(outs) > 1 else result
            ws = ", ".join(f"w{i}: {s}{f}" for i, s in enumerate(outs))
            name = f"{c.name}_{form}"
            out.append(f"fn {name}(m: {t}, {params}, mode: Mode) -> {result}:\n    return {call}\n")
            if len(outs) == 1:
                body = f"    return sum({call} * w0)\n"
            else:
                body = f"    o, a = {call}\n    return sum(o * w0) + sum(a * w1)\n"
            out.append(f"fn loss_{name}(m: {t}, {params}, mode: Mode, {ws}) -> []{f}:\n{body}")
            wnames = ", ".join(f"w{i}" for i in range(len(outs)))
            out.append(
                f"fn grads_{name}(m: {t}, {params}, mode: Mode, {ws}) -> Grad[{t}]:\n"
                f"    return grad(loss_{name}, m, {args if form != 'self' else 'query'}, mode, {wnames})\n"
            )
    return "\n".join(out)


_TORCH = {
    "mha": torch.nn.MultiheadAttention,
    "enc": torch.nn.TransformerEncoderLayer,
    "dec": torch.nn.TransformerDecoderLayer,
}
_SIZES = {"mha": (E, NH), "enc": (E, NH, F), "dec": (E, NH, F)}


def torch_layer(c: Config, layer, dt: torch.dtype, batch_first: bool) -> torch.nn.Module:
    """torch's module of the configuration, with the Quiver layer's params
    copied in: the same state_dict keys, every 2-D weight transposed."""
    from parity import copy_into

    kwargs = dict(c.torch_kwargs)
    if c.kind == "mha" and "dropout" not in kwargs:
        kwargs["dropout"] = 0.0
    ref = _TORCH[c.kind](*_SIZES[c.kind], **kwargs, batch_first=batch_first, dtype=dt)
    copy_into(ref, layer, layouts={k: _transpose for k, v in ref.state_dict().items() if v.dim() == 2})
    return ref


def _transpose(w: torch.Tensor) -> torch.Tensor:
    return w.T


_SHAPE = {"L": L, "S": S, "B": B, "E": E}


def inputs(c: Config, form: str, dt: torch.dtype, seed: int = 0) -> dict[str, torch.Tensor]:
    return draw_inputs(FORMS[c.kind][form][0], dt, seed)


def draw_inputs(specs, dt: torch.dtype, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random inputs of a form's `(name, shape, is_bool)` specs (here and in
    stack_support), and masks that leave every query a key: the causal
    triangle, two entries of the memory mask, the last positions of the
    second sequence as padding."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, shape, is_bool in specs:
        sizes = [_SHAPE[d] for d in shape.strip("[]").split()]
        if not is_bool and name.endswith("mask"):
            # a float (additive) mask: a bias, and -inf where the Bool one says True
            bias = 0.5 * torch.randn(*sizes, generator=gen, dtype=dt)
            out[name] = bias.masked_fill(draw_inputs([(name, shape, True)], dt)[name], -torch.inf)
        elif not is_bool:
            out[name] = torch.randn(*sizes, generator=gen, dtype=dt)
        elif name in ("attn_mask", "src_mask", "tgt_mask"):
            out[name] = torch.ones(*sizes, dtype=torch.bool).triu(diagonal=1)  # True: not allowed
        elif name == "memory_mask":
            m = torch.zeros(*sizes, dtype=torch.bool)
            m[1, 0] = m[2, 3] = True
            out[name] = m
        else:  # a key padding mask: the last positions of the second sequence
            m = torch.zeros(*sizes, dtype=torch.bool)
            m[1, -2:] = True
            out[name] = m
    return out


def torch_call(c: Config, form: str, ref: torch.nn.Module, x: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """torch's outputs of a form (its attention output; and the weights
    averaged over heads for with_weights)."""
    if c.kind == "mha":
        q = x["query"]
        k, v = (q, q) if form == "self" else (x["key"], x["value"])
        masks = {"key_padding_mask": x["key_padding_mask"], "attn_mask": x["attn_mask"]} if "masked" in form else {}
        if "with_weights" in form:
            o, w = ref(q, k, v, key_padding_mask=x["key_padding_mask"], attn_mask=x["attn_mask"])
            return o, w
        return (ref(q, k, v, need_weights=False, **masks)[0],)
    if c.kind == "enc":
        masks = {k: x[k] for k in ("src_mask", "src_key_padding_mask") if k in x}
        return (ref(x["src"], **masks),)
    masks = {k: x[k] for k in ("tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask") if k in x}
    return (ref(x["tgt"], x["memory"], **masks),)


def quiver_args(c: Config, form: str, x: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    return [x[n] for n, _, _ in FORMS[c.kind][form][0]]


@contextlib.contextmanager
def torch_drawing_as_quiver(seed: int) -> Iterator[None]:
    """torch's dropout (F.dropout, which nn.Dropout calls) and the dropout
    of its attention (F.scaled_dot_product_attention, which
    MultiheadAttention calls) drawing from the stream of `Train(seed=seed)`
    as Quiver's runtime draws, so a torch module under train() drops what a
    Quiver layer under `Train(seed=seed)` drops. The attention itself is the
    runtime's, which computes torch's reference formula when it drops."""
    mode = rt.Train(seed=seed)
    functional = torch.nn.functional
    saved = functional.dropout, functional.scaled_dot_product_attention

    def dropout(x, p=0.5, training=True, inplace=False):
        return rt.dropout(x, p, mode) if training else x

    def attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        return rt.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, dropout_p, scale, mode)

    functional.dropout, functional.scaled_dot_product_attention = dropout, attention
    try:
        yield
    finally:
        functional.dropout, functional.scaled_dot_product_attention = saved
