"""What the editor shows of a model type: its header, an instance's fields
and methods with the instance's dims put in (`Linear[D, H]` has `weight: [D
H]` and `forward(x: [.. D]) -> [.. H]`), and the type of a receiver written
as text (`self.fc1`, `m.blocks[0]`), which completion and signature help
read on code that does not parse yet. Hover, completion and signature help
share these."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import member_conditions as MC
from .. import shapes as S
from .. import types as T
from ..declarations import FieldInfo, FnInfo, Globals, ModelInfo
from ..model_decl import instance_bindings


@dataclass(frozen=True, slots=True)
class Method:
    """One method of a model as an instance sees it."""

    name: str  # `forward`
    info: FnInfo
    params: tuple[str, ...]  # `x: [.. D]`, without self
    ret: str | None  # `[.. H]`; None when it returns nothing

    def signature(self, head: str | None = None) -> str:
        """`fn forward(x: [.. D]) -> [.. H]`; `head` instead of `fn forward`."""
        text = f"{head if head is not None else 'fn ' + self.name}({', '.join(self.params)})"
        return text + (f" -> {self.ret}" if self.ret is not None else "")


def condition(f: FieldInfo) -> str:
    """` if bias` after a member that exists only under an option (`` when always)."""
    if f.when is None:
        return ""
    return " if " + MC.text(f.when)


def header(model: ModelInfo) -> str:
    """`model Linear[I, O, bias: Bool = True]` as declared (`on cuda` too)."""
    parts = []
    defaults = dict(model.defaults)
    for d in model.dims:
        parts.append(f"{d} = {defaults[d]}" if d in defaults else d)
    for name, default in model.options:
        word = "Bool" if isinstance(default, bool) else "DType" if isinstance(default, str) else "Float"
        parts.append(f"{name}: {word} = {default}")
    text = f"model {model.name}" + (f"[{', '.join(parts)}]" if parts else "")
    return text + (f" on {model.device}" if model.device != "cpu" else "")


def _bindings(decl: ModelInfo, t: T.ModelT | None) -> S.Bindings:
    if t is not None and len(t.dims) == len(decl.dims):
        return instance_bindings(decl, t)
    return S.Bindings(decl.dims)


def methods(g: Globals, decl: ModelInfo, t: T.ModelT | None = None) -> list[Method]:
    """The methods of a model, with the dims of instance `t` put in (none:
    as declared, the model's own dims)."""
    b = _bindings(decl, t)
    out = []
    for info in decl.methods:
        rest = info.params[1:] if info.params and info.params[0].name == "self" else info.params
        params = tuple(("mut " if p.mut else "") + f"{p.name}: {b.subst(p.type)}" for p in rest)
        ret = str(b.subst(info.ret)) if info.declared_ret else None
        out.append(Method(info.name.rpartition(".")[2], info, params, ret))
    return out


def method(g: Globals, t: T.ModelT, name: str) -> Method | None:
    if t.bound and t.dims:  # `B[4, 8]` of a model parameter: its trait's methods in those dims
        decl = g.models.get(t.bound[0])
    else:
        decl = g.model(t) if t.bound else g.models.get(t.name)  # of `m: M`: its traits' methods
    if decl is None:
        return None
    return next((m for m in methods(g, decl, t) if m.name == name), None)


def describe(g: Globals, t: T.ModelT | None, decl: ModelInfo) -> str:
    """The lines of a model's hover: its header (of instance `t`: its type),
    its fields (the instance's, with their types) and its methods."""
    if t is None or not decl.takes or t.generic:
        lines = [header(decl)]
        for f in decl.fields:
            cond = condition(f)
            lines.append(f"    {f.kind} {f.name}: {f.type}{cond}")
        lines += [f"    {m.signature()}" for m in methods(g, decl)]
        return "\n".join(lines)
    inst = g.model(t) or decl
    head = f"model {t}" + (f" on {decl.device}" if decl.device != "cpu" else "")
    lines = [head] + [f"    {f.kind} {f.name}: {f.type}" for f in inst.fields]
    lines += [f"    {m.signature()}" for m in methods(g, decl, t)]
    return "\n".join(lines)


# ------------------------------------------------------------ receivers as text

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_SEGMENT = re.compile(rf"\s*({_IDENT})\s*((?:\[[^\[\]]*\]\s*)*)")


def segments(text: str) -> list[tuple[str, int]] | None:
    """`self.fc1`, `m.blocks[i]`: each name with how many `[...]` follow it;
    None when the text is not such a chain."""
    out = []
    for part in text.split("."):
        m = _SEGMENT.fullmatch(part)
        if m is None:
            return None
        out.append((m.group(1), m.group(2).count("[")))
    return out


def field_type(g: Globals, owner: T.Type, name: str) -> T.Type | None:
    """The type of field `name` read of a value of type `owner` (a model's
    field, with an instance's dims; a gradient's)."""
    if isinstance(owner, T.ModelT):
        info = g.model(owner)
        f = info.field(name) if info is not None else None
        return f.type if f is not None else None
    if isinstance(owner, T.GradT):
        info = g.model(owner)
        f = info.field(name) if info is not None else None
        if f is None or f.kind != "param" or (owner.wrt is not None and name not in owner.wrt):
            return None
        return T.grad_field_type(f.type)
    return None


def chain_type(g: Globals, start: T.Type | None, rest: list[tuple[str, int]], first_index: int = 0) -> T.Type | None:
    """The type of `start` read through the fields and indexes of `rest`
    (`first_index`: the `[...]` right after the start)."""
    t = _indexed(start, first_index)
    for name, index in rest:
        if t is None:
            return None
        t = _indexed(field_type(g, t, name), index)
    return t


def _indexed(t: T.Type | None, count: int) -> T.Type | None:
    for _ in range(count):
        if isinstance(t, T.StackT):
            t = t.item
        elif isinstance(t, T.TensorT) and t.dims and not T.has_rest(t):
            t = T.TensorT(t.dims[1:], t.elem)
        else:
            return None
    return t
