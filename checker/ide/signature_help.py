"""Signature help, from the text around the cursor (it works on broken code)."""

from __future__ import annotations

import re

from .. import types as T
from ..analysis import Analysis
from ..builtins import BUILTINS, MODEL_METHODS
from ..declarations import (
    FnInfo,
)
from .completion import _IDENT
from .results import Signature, SignatureHelp


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
    sigs = _signatures_for(analysis, callee, args)
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
        m = re.search(rf"({_IDENT}(?:\s*\.\s*{_IDENT})?)\s*$", text[:pos])
        if m is None:
            return None
        callee = re.sub(r"\s+", "", m.group(1))
        before = text[: m.start()].rstrip()
        piped = before.endswith("|>")
        return callee, piped, _split_args(text[pos + 1 :])
    return None


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


def _signatures_for(analysis: Analysis, callee: str, args: list[str]) -> list[Signature]:
    g = analysis.globals
    if "." in callee:
        model, _, method = callee.partition(".")
        m = MODEL_METHODS.get(method)
        if model in g.models and m is not None:
            label = m.signature.replace("M.", f"{model}.").replace("-> M", f"-> {model}")
            return [_builtin_signature(label, m.doc)]
        return []
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
    info = g.fns.get(callee)
    if info is not None:
        return [_fn_signature(info)]
    b = BUILTINS.get(callee)
    if b is not None:
        return [_builtin_signature(label, b.doc) for label in b.signature.split(" / ")]
    return []


def _fn_signature(info: FnInfo) -> Signature:
    parts = [("mut " if p.mut else "") + f"{p.name}: {p.type}" for p in info.params]
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
    return _assemble("value_and_grad(", parts, f") -> ({info.ret}, Grad[{first.type.name}])", doc)


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
