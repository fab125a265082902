"""Signature help, from the text around the cursor (it works on broken code)."""

from __future__ import annotations

import re

from .. import types as T
from ..analysis import Analysis
from ..builtins import BUILTINS, MODEL_METHODS
from ..consts import show as show_const
from ..declarations import (
    FnInfo,
)
from . import models as MD
from .completion import _IDENT
from .results import Signature, SignatureHelp
from .symbols import _fn_of


def signature_help(analysis: Analysis, offset: int) -> SignatureHelp | None:
    offset = max(0, min(offset, len(analysis.text)))
    slot = analysis.parsed.slot_at(offset)
    if slot is None:
        return None
    text = analysis.text[slot.start : offset]
    call = _open_call(text)
    if call is None:
        return None
    callee, piped, args = call
    fn = _fn_of(analysis, slot.item, offset - slot.start) if slot.item is not None else None
    sigs = _signatures_for(analysis, callee, args, fn)
    if not sigs:
        return None
    index = len(args) - 1 + (1 if piped else 0)
    current = args[-1].lstrip()
    kw = re.match(rf"({_IDENT})\s*=(?!=)", current)
    chosen = 0
    if len(sigs) > 1:  # range(stop) / range(start, stop, step)
        chosen = 0 if index == 0 and len(args) == 1 else min(1, len(sigs) - 1)
    sig = sigs[chosen]
    names = [_param_name(sig.label[s:e]) for s, e in sig.parameters]
    active: int | None = index
    if kw is not None:
        active = names.index(kw.group(1)) if kw.group(1) in names else None
    elif callee == "print":  # print(values..., all_ranks=False): every positional argument is a value
        active = 0
    elif index >= len(sig.parameters):
        variadic = sig.parameters and sig.label[sig.parameters[-1][0] : sig.parameters[-1][1]].endswith("...")
        active = len(sig.parameters) - 1 if variadic else None
    return SignatureHelp(tuple(sigs), chosen, active)


def _param_name(label: str) -> str:
    m = re.match(rf"(?:mut\s+)?({_IDENT})", label)
    return m.group(1) if m else label


def _open_call(text: str) -> tuple[str, bool, list[str]] | None:
    """The innermost call left open at the end of `text`: (callee, piped,
    argument texts so far). Strings and comments are skipped."""
    stack: list[int] = []  # positions of open brackets
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] not in "\r\n":
                j += 1
            if j >= n:
                return None  # inside a string
            i = j + 1
            continue
        if ch in "([":
            stack.append(i)
        elif ch in ")]" and stack:
            stack.pop()
        i += 1
    for pos in reversed(stack):
        if text[pos] != "(":
            continue
        m = _CALLEE.search(text[:pos])
        if m is None:
            return None
        callee = re.sub(r"\s*,\s*", ", ", re.sub(r"\s*([.\[\]])\s*", r"\1", m.group(1)))
        before = text[: m.start()].rstrip()
        piped = before.endswith("|>")
        return callee, piped, _split_args(text[pos + 1 :])
    return None


# what is called: a name, or a chain of fields and indexes (`layers.f`,
# `self.fc1`, `m.blocks[i]`, `nn.Linear[D, H].init`)
_CALLEE = re.compile(rf"((?:{_IDENT}\s*(?:\[[^\[\]\n]*\]\s*)*\.\s*)*{_IDENT}(?:\s*\[[^\[\]\n]*\])*)\s*$")


def _split_args(text: str) -> list[str]:
    args = []
    depth = 0
    current = []
    quote = None
    for ch in text:
        if quote is not None:
            current.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(current))
            current = []
            continue
        current.append(ch)
    args.append("".join(current))
    return args


def _signatures_for(analysis: Analysis, callee: str, args: list[str], fn: FnInfo | None) -> list[Signature]:
    g = analysis.globals
    chain = MD.segments(callee)
    if chain is None:
        return []
    plain = ".".join(n for n, _ in chain)
    if len(chain) > 1 and not any(i for _, i in chain[:-2]) and not chain[-1][1]:
        # Mlp.init, nn.Linear[D, H].init
        model_text = callee.rpartition(".")[0]
        m = MODEL_METHODS.get(chain[-1][0])
        if m is not None and g.names.kinds.get(plain.rpartition(".")[0]) == "model":
            label = m.signature.replace("M.", f"{model_text}.").replace("-> M", f"-> {model_text}")
            return [_builtin_signature(label, m.doc)]
    if callee == "value_and_grad":
        f = args[0].strip() if args else ""
        info = g.fns.get(f)
        if (
            len(args) > 1
            and info is not None
            and not info.extern
            and info.params
            and isinstance(info.params[0].type, T.ModelT)
        ):
            return [_vag_signature(info)]
        return [_builtin_signature(BUILTINS[callee].signature, BUILTINS[callee].doc)]
    recv = _receiver(analysis, chain, fn)
    if recv is not None:
        return recv
    if any(i for _, i in chain):
        return []
    if g.names.kinds.get(plain) in ("fn", "extern"):
        info = g.fns.get(g.names.canonical(plain))
        if info is not None:
            return [_fn_signature(info)]
    b = BUILTINS.get(callee)
    if b is not None:
        return [_builtin_signature(label, b.doc) for label in b.overloads]
    return []


def _receiver(analysis: Analysis, chain: list[tuple[str, int]], fn: FnInfo | None) -> list[Signature] | None:
    """A call on a model value: `fc(`, `self.fc1(` (its `forward`) or
    `l.forward(` (a method), with the dims of that model; None when the
    chain does not start at a local or a parameter."""
    g = analysis.globals
    (head, head_index), rest = chain[0], chain[1:]
    start = _local_type(analysis, fn, head)
    if start is None:
        return None
    whole = MD.chain_type(g, start, rest, head_index)
    written = ".".join(n + "[...]" * i for n, i in chain)
    if isinstance(whole, T.ModelT):
        m = MD.method(g, whole, "forward")
        if m is None:
            return []
        doc = f"Calling `{written}` (`{whole}`) runs its `forward`."
        return [_method_signature(whole, m, doc)]
    if rest and not rest[-1][1]:
        owner = MD.chain_type(g, start, rest[:-1], head_index)
        if isinstance(owner, T.ModelT):
            m = MD.method(g, owner, rest[-1][0])
            if m is not None:
                return [_method_signature(owner, m, f"Method `{m.name}` of `{owner}`.")]
    return []


def _local_type(analysis: Analysis, fn: FnInfo | None, name: str) -> T.Type | None:
    if fn is None:
        return None
    body = analysis.bodies.get(fn.decl)
    if body is not None and name in body.locals:
        return body.locals[name]
    return next((p.type for p in fn.params if p.name == name), None)


def _method_signature(t: T.ModelT, m: MD.Method, doc: str) -> Signature:
    tail = ")" + (f" -> {m.ret}" if m.ret is not None else "")
    return _assemble(f"{t}.{m.name}(", list(m.params), tail, doc)


def _fn_signature(info: FnInfo) -> Signature:
    parts = [
        ("mut " if p.mut else "")
        + f"{p.name}: {p.type}"
        + (f" = {show_const(*p.default)}" if p.default is not None else "")
        for p in info.params
    ]
    head = f"{info.name}("
    return _assemble(head, parts, ")" + (f" -> {info.ret}" if info.declared_ret else ""), "")


def _vag_signature(info: FnInfo) -> Signature:
    first = info.params[0]
    assert isinstance(first.type, T.ModelT)
    parts = [info.name, f"{first.name}: {first.type}"] + [f"{p.name}: {p.type}" for p in info.params[1:]]
    doc = (
        f"Calls `{info.name}` and returns its value and its gradient with respect to the params of "
        f"`{first.name}: {first.type}`."
    )
    return _assemble("value_and_grad(", parts, f") -> ({info.ret}, Grad[{first.type}])", doc)


def _assemble(head: str, parts: list[str], tail: str, doc: str) -> Signature:
    label = head
    spans = []
    for i, p in enumerate(parts):
        if i:
            label += ", "
        spans.append((len(label), len(label) + len(p)))
        label += p
    return Signature(label + tail, tuple(spans), doc)


def _builtin_signature(label: str, doc: str) -> Signature:
    open_ = label.find("(")
    if open_ < 0:
        return Signature(label, (), doc)
    depth = 0
    spans = []
    start = open_ + 1
    end = len(label)
    for i in range(open_, len(label)):
        ch = label[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                end = i
                break
        elif ch == "," and depth == 1:
            spans.append((start, i))
            start = i + 1
    spans.append((start, end))
    spans = [(s + (len(label[s:e]) - len(label[s:e].lstrip())), e) for s, e in spans if label[s:e].strip()]
    return Signature(label, tuple(spans), doc)
