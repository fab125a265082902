"""Completion: fields after `m.` / `g.`, dims after `over=`, types, and names in scope."""

from __future__ import annotations

import re

from .. import ast as A
from .. import types as T
from ..analysis import Analysis
from ..builtins import BUILTINS, CONSTANTS, MODEL_METHODS
from ..builtins.distributions import METHODS as DIST_METHODS
from ..builtins.distributions import distribution_fields
from ..consts import show as show_const
from ..declarations import (
    ELEM_TYPES,
    NUMBER_TYPES,
    FnInfo,
)
from ..initializers import INITIALIZERS
from ..items import ItemSlot
from ..lexical import STATEMENT_KEYWORDS
from ..optim_fields import optimizer_fields, schedule_fields
from . import models as MD
from .results import TOP_KEYWORDS, Completion
from .symbols import _fn_of, _slot_at

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# the receiver: a name, or a chain of fields and indexes (`self.fc1`, `m.blocks[0]`, `nn.Linear[D, H]`)
_AFTER_DOT = re.compile(
    rf"((?:{_IDENT}\s*(?:\[[^\[\]\n]*\]\s*)*\.\s*)*{_IDENT}\s*(?:\[[^\[\]\n]*\]\s*)*)\.\s*({_IDENT})?$"
)
_AFTER_OVER = re.compile(rf"\bover\s*=\s*({_IDENT})?$")
_WORD_BEFORE = re.compile(rf"({_IDENT})?$")


def completions(analysis: Analysis, offset: int) -> list[Completion]:
    offset = max(0, min(offset, len(analysis.text)))
    pos = analysis.lines.position(offset)
    line_start = offset - pos.column
    prefix = analysis.text[line_start:offset]
    if _in_comment_or_string(prefix):
        return []
    slot = _slot_at(analysis, offset)
    fn = _fn_of(analysis, slot.item, offset - slot.start) if slot is not None and prefix[:1].isspace() else None
    m = _AFTER_DOT.search(prefix)
    if m is not None:
        return _member_completions(analysis, slot, fn, m.group(1)) if slot is not None else []
    if prefix and not prefix[0].isspace():
        # A line at column 0 starts an item, or is an item's header.
        stripped = prefix.lstrip()
        if re.fullmatch(_WORD_BEFORE.pattern, stripped):
            return [Completion(k, "keyword", sort_text="0" + k) for k in TOP_KEYWORDS]
        header_fn = _fn_of(analysis, slot.item) if slot is not None else None
        return _type_completions(analysis, prefix, header_fn)
    if _AFTER_OVER.search(prefix):
        return _dim_completions(analysis, fn)
    if slot is not None and isinstance(slot.item, A.ModelDecl):
        if re.match(r"\s*(param|buffer)\s+\w+\s*:[^=#]*=\s*\w*$", prefix):
            # a field's initializer: `param w: [D H] = kai`
            return [
                Completion(i.name, "builtin", i.signature, i.doc, sort_text="3" + i.name) for i in INITIALIZERS.values()
            ]
        if re.match(r"\s*(param|buffer)\s+\w+\s*:", prefix):
            return _type_completions(analysis, prefix, None)
        if re.fullmatch(r"\s*\w*", prefix):
            return [Completion(k, "keyword", sort_text="0" + k) for k in ("param", "buffer")]
        return []
    return _scope_completions(analysis, slot, fn)


def _in_comment_or_string(prefix: str) -> bool:
    """Whether the end of `prefix` (a line up to the cursor) is in a comment
    or a string; the braces of an f-string's field are code."""
    quote = None
    fstring = field = False
    i = 0
    while i < len(prefix):
        ch = prefix[i]
        if quote is not None:
            if field:
                if ch == "}":
                    field = False
                elif ch == quote:  # the field is not closed: the string ends anyway
                    quote, field = None, False
            elif ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
            elif fstring and ch == "{":
                if prefix[i + 1 : i + 2] == "{":
                    i += 1
                else:
                    field = True
        elif ch in "\"'":
            quote = ch
            fstring = (
                i > 0 and prefix[i - 1] == "f" and (i < 2 or not (prefix[i - 2].isalnum() or prefix[i - 2] == "_"))
            )
        elif ch == "#":
            return True
        i += 1
    return quote is not None and not field


def _var_type(analysis: Analysis, slot: ItemSlot | None, fn: FnInfo | None, name: str) -> T.Type | None:
    if fn is not None:
        body = analysis.bodies.get(fn.decl)
        if body is not None and name in body.locals:
            return body.locals[name]
        for p in fn.params:
            if p.name == name:
                return p.type
    return None


def _member_completions(analysis: Analysis, slot: ItemSlot, fn: FnInfo | None, receiver: str) -> list[Completion]:
    g = analysis.globals
    chain = MD.segments(receiver)
    if chain is None:
        return []
    written = ".".join(n for n, _ in chain)
    (head, head_index), rest = chain[0], chain[1:]
    ty = _var_type(analysis, slot, fn, head)
    if ty is not None:
        ty = MD.chain_type(g, ty, rest, head_index)
    elif g.names.kinds.get(written) in ("module", "package") and not any(i for _, i in chain):
        return _module_completions(analysis, written)
    elif g.names.kinds.get(written) == "model" and chain[-1][1] <= 1:
        # `Linear.` / `nn.Linear[D, H].`: the model's own method
        model = g.models.get(g.names.canonical(written))
        m = MODEL_METHODS["init"]
        label = model.name if model is not None else written
        return [
            Completion("init", "method", m.signature.replace("M.", f"{label}.").replace("-> M", f"-> {label}"), m.doc)
        ]
    if isinstance(ty, T.ModelT):
        return _model_completions(analysis, ty)
    if isinstance(ty, T.GradT):
        model = g.model(ty)
        if model is None:
            return []
        return [
            Completion(
                f.name,
                "field",
                f"{f.name}: {T.grad_field_type(f.type)}",
                f"Gradient of param `{f.name}` of `{ty.of}`.",
                sort_text=f"{i:04d}",
            )
            for i, f in enumerate(p for p in model.params if ty.wrt is None or p.name in ty.wrt)
        ]
    if isinstance(ty, T.OptimT):
        lbfgs = ty.kind == "LBFGS"
        out = [
            Completion(
                "step",
                "method",
                f"opt.step(m: {ty.of}, f, args...)" if lbfgs else f"opt.step(m: {ty.of}, g: Grad[{ty.of}])",
                "Evaluates f(m, args...) as L-BFGS needs and updates m's params; returns the first loss."
                if lbfgs
                else "Updates m's params and the optimizer's state with the gradient g.",
                sort_text="0000",
            )
        ]
        out += [
            Completion(n, "field", f"{n}: {t}", what, sort_text=f"{i + 1:04d}")
            for i, (n, t, what) in enumerate(optimizer_fields(ty))
        ]
        return out
    if isinstance(ty, T.ScheduleT):
        out = [
            Completion(
                "step",
                "method",
                "sched.step(opt)",
                "Advances the schedule one step and sets the optimizer's learning rate.",
                sort_text="0000",
            )
        ]
        out += [
            Completion(n, "field", f"{n}: {t}", what, sort_text=f"{i + 1:04d}")
            for i, (n, t, what) in enumerate(schedule_fields(ty))
        ]
        return out
    if isinstance(ty, T.DistT):  # d.log_prob(a), d.sample(seed=s), ..., then d.probs, ...
        methods = [n for n in DIST_METHODS if n != "rsample" or ty.kind == "Normal"]
        out = [
            Completion(n, "method", DIST_METHODS[n][0], DIST_METHODS[n][1], sort_text=f"{i:04d}")
            for i, n in enumerate(methods)
        ]
        out += [
            Completion(n, "field", f"{n}: {t}", what, sort_text=f"{len(methods) + i:04d}")
            for i, (n, t, what) in enumerate(distribution_fields(ty))
        ]
        return out
    return []


def _model_completions(analysis: Analysis, ty: T.ModelT) -> list[Completion]:
    """The fields a model value has (an instance's, with its dims; not the
    members its options leave out), then its methods."""
    g = analysis.globals
    model, decl = g.model(ty), g.models.get(ty.name)
    if ty.bound and model is not None:  # `m.` of m: M (`fn f[M: CharModel]`): its traits' methods
        doc = f"Method of `{ty.name}: {' + '.join(ty.bound)}`"
        return [
            Completion(
                m.name.rpartition(".")[2],
                "method",
                m.signature().replace(f"fn {m.name}(", f"fn {m.name.rpartition('.')[2]}(", 1),
                doc + ("; calling the model itself runs it." if m.name.endswith(".forward") else "."),
                sort_text=f"{i:04d}",
            )
            for i, m in enumerate(model.methods)
        ]
    if model is None or decl is None:
        return []
    out = []
    for f in model.fields:
        cond = MD.condition(f)
        out.append(Completion(f.name, "field", f"{f.kind} {f.name}: {f.type}{cond}", sort_text=f"{len(out):04d}"))
    for m in MD.methods(g, decl, None if ty.generic else ty):
        doc = f"Method of `{ty}`" + ("; calling the model itself runs it." if m.name == "forward" else ".")
        out.append(Completion(m.name, "method", m.signature(), doc, sort_text=f"{len(out):04d}"))
    return out


def _module_completions(analysis: Analysis, module: str) -> list[Completion]:
    """`layers.`: what the module exports (its public definitions), and the
    modules below a package (`nn.` of `import nn.layers`)."""
    g = analysis.globals
    prefix = module + "."
    out = []
    for written, kind in sorted(g.names.kinds.items()):
        if not written.startswith(prefix) or "." in written[len(prefix) :]:
            continue
        name = written[len(prefix) :]
        out.append(_global_completion(analysis, name, written, kind))
    return out


def _global_completion(analysis: Analysis, label: str, written: str, kind: str) -> Completion:
    """A completion for a global name as the file writes it (`H`, `layers.H`)."""
    g = analysis.globals
    if kind == "dim" and written in g.dims:
        value = g.dims[written].value
        return Completion(
            label, "dim", f"dim {g.dims[written].name} = {value if value is not None else '?'}", sort_text="1" + label
        )
    if kind == "const":
        value = g.names.const_values.get(written)
        detail = (
            f"const {written}: {value[0]} = {show_const(*value)}" if isinstance(value, tuple) else f"const {written}"
        )
        return Completion(label, "constant", detail, sort_text="1" + label)
    if kind == "model" and written in g.models:
        return Completion(label, "model", f"model {g.models[written].name}", sort_text="2" + label)
    if kind in ("fn", "extern") and written in g.fns:
        info = g.fns[written]
        return Completion(label, "extern" if info.extern else "fn", info.signature(), sort_text="2" + label)
    return Completion(label, "module", f"module {written}", sort_text="2" + label)


def _dim_completions(analysis: Analysis, fn: FnInfo | None) -> list[Completion]:
    out = []
    if fn is not None:
        out += [Completion(d, "generic", f"generic dim of {fn.name}", sort_text="0" + d) for d in fn.generics]
    for name, info in _own_then_imported(analysis.globals.dims):
        out.append(
            Completion(
                name, "dim", f"dim {name} = {info.value if info.value is not None else '?'}", sort_text="1" + name
            )
        )
    return out


def _type_completions(analysis: Analysis, prefix: str, fn: FnInfo | None) -> list[Completion]:
    depth = prefix.count("[") - prefix.count("]")
    if depth > 0:
        # Inside a shape: dims (generic ones are new names, so only those already used).
        out = _dim_completions(analysis, fn)
        if re.search(r"Index\s*\[\s*\w*$", prefix):
            return out
        return out
    if re.search(r"\]\s*\w*$", prefix):
        return [Completion(n, "type", "element type", sort_text="0" + n) for n in list(ELEM_TYPES) + ["Index"]]
    if not re.search(r"(:|->|\[|,)\s*\w*$", prefix):
        return []
    out = [Completion(n, "type", "number type", sort_text="1" + n) for n in NUMBER_TYPES]
    out.append(Completion("Mode", "type", "Train(seed=...) or Eval", sort_text="1Mode"))
    out.append(Completion("Grad", "type", "Grad[M]: the gradient of a model M", sort_text="1Grad"))
    out += [Completion(n, "model", "model", sort_text="0" + n) for n, _ in _own_then_imported(analysis.globals.models)]
    return out


def _own_then_imported(table: dict) -> list:
    """A global table's entries: the file's own in the order it declares
    them, then the imported ones (`layers.H`) by name. A module's table is
    reused while its names stay the same, whatever their order, so its order
    is not one a fresh analysis would give."""
    own = [(k, v) for k, v in table.items() if "." not in k]
    return own + sorted((kv for kv in table.items() if "." in kv[0]), key=lambda kv: kv[0])


def _scope_completions(analysis: Analysis, slot: ItemSlot | None, fn: FnInfo | None) -> list[Completion]:
    g = analysis.globals
    out: list[Completion] = []
    seen: set[str] = set()

    def add(c: Completion) -> None:
        if c.label not in seen:
            seen.add(c.label)
            out.append(c)

    if fn is not None:
        body = analysis.bodies.get(fn.decl)
        for p in fn.params:
            add(Completion(p.name, "param", f"{'mut ' if p.mut else ''}{p.name}: {p.type}", sort_text="0" + p.name))
        if body is not None:
            for name, ty in body.locals.items():
                add(Completion(name, "variable", f"{name}: {ty}", sort_text="0" + name))
        for d in fn.generics:
            add(Completion(d, "generic", f"generic dim of {fn.name}", sort_text="1" + d))
    # What the file can write by itself: its definitions, the names its
    # imports bind and its modules (not `layers.H`: that comes after `layers.`)
    for name, kind in g.names.kinds.items():
        if "." not in name and not kind.startswith("broken"):
            add(_global_completion(analysis, name, name, kind))
    for name, b in BUILTINS.items():
        add(Completion(name, "builtin", b.signature, b.doc, sort_text="3" + name))
    for name, doc in CONSTANTS.items():
        sig, _, rest = doc.partition(" — ")
        add(Completion(name, "constant", sig, rest, sort_text="3" + name))
    for k in STATEMENT_KEYWORDS:
        add(Completion(k, "keyword", sort_text="4" + k))
    return out
