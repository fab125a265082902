"""Hover: the type under the cursor with inferred shapes, a gradient's fields, a function's param reads."""

from __future__ import annotations

from .. import ast as A
from .. import member_conditions as MC
from .. import types as T
from ..analysis import Analysis
from ..builtins import BUILTINS, CONSTANTS, MODEL_METHODS
from ..builtins.distributions import METHODS as DIST_METHODS
from ..consts import show as show_const
from ..declarations import (
    FnInfo,
    ModelInfo,
)
from ..initializers import INITIALIZERS, initializer_name
from ..items import ItemSlot
from ..optim_fields import optimizer_fields, schedule_fields
from ..reads import ParamReads, Step, param_reads
from ..type_params import bound_of, method_names
from ..typectx import TypeContext
from . import models as MD
from .results import Hover
from .symbols import _abs, _body_of, _fn_of, _Occ, _occ_at, _slot_at


def hover(analysis: Analysis, offset: int) -> Hover | None:
    if not 0 <= offset <= len(analysis.text):
        return None
    found = _occ_at(analysis, offset)
    if found is not None:
        slot, occ = found
        text = _describe(analysis, slot, occ)
        if text is not None:
            return Hover(_abs(slot, occ.span), text)
    return _initializer_hover(analysis, offset) or _expression_hover(analysis, offset)


def _initializer_hover(analysis: Analysis, offset: int) -> Hover | None:
    """`kaiming_uniform` of `param w: [D H] = kaiming_uniform(a=sqrt(5.0))`:
    the initializer's signature and doc (checker/initializers.py)."""
    for probe in (offset, offset - 1):
        slot = _slot_at(analysis, probe) if probe >= 0 else None
        if slot is None or not isinstance(slot.item, A.ModelDecl):
            continue
        rel = probe - slot.start
        for m in slot.item.members:
            name = initializer_name(m.init)
            init = INITIALIZERS.get(name.name) if name is not None else None
            if name is not None and init is not None and name.span.start <= rel < name.span.end:
                return Hover(_abs(slot, name.span), _code(init.signature) + f"\n\n{init.doc}")
    return None


def _describe_module(analysis: Analysis, written: str) -> str:
    """`import layers`: the module's file and what it exports."""
    g = analysis.globals
    qual = g.names.modules.get(written)
    ex = next((m for m in analysis.modules if m.qual == qual), None)
    if ex is None:
        return _code(f"package {written}")
    groups: dict[str, list[str]] = {}
    for name, kind in ex.own.items():
        if not name.startswith("_"):
            groups.setdefault(kind, []).append(name)
    words = {"dim": "dims", "const": "constants", "model": "models", "fn": "fns", "extern": "extern fns"}
    lines = [f"{words.get(k, k)}: {', '.join(sorted(v))}" for k, v in groups.items()]
    text = _code(f"module {written}") + f"\n\n`{ex.path}`"
    return text + "".join(f"\n\n{line}" for line in lines)


def _code(text: str) -> str:
    return f"```quiver\n{text}\n```"


def _describe(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    g = analysis.globals
    sym = occ.sym
    if sym.kind == "var":
        return _describe_var(analysis, slot, occ)
    if sym.kind == "dim":
        info = g.dims.get(sym.name)
        value = info.value if info is not None else None
        return _code(f"dim {sym.name} = {value if value is not None else '?'}")
    if sym.kind == "const":
        value = g.names.const_values.get(sym.name)
        if not isinstance(value, tuple):
            return _code(f"const {sym.name}")
        return _code(f"const {sym.name}: {value[0]} = {show_const(*value)}")
    if sym.kind == "generic":
        return _code(f"(generic dim) {sym.name}") + f"\n\nBound to a size at each call of `{sym.scope}`."
    if sym.kind == "model":
        model = g.models.get(sym.name)
        if model is None:
            return None
        text = MD.describe(g, _applied_at(analysis, slot, occ), model)
        if model.trait:  # the methods a model given for a type parameter it bounds must have
            return _code("trait" + text.removeprefix("model"))
        return _code(text) + _declared_as(model, occ)
    if sym.kind == "member":
        text = _describe_member(analysis, slot, occ)
        return text + _layer_call(analysis, slot, occ) if text is not None else None
    if sym.kind == "fn":
        info = g.fns.get(sym.name)
        if info is None:
            return None
        text = _describe_method_call(analysis, slot, occ, info) or describe_fn(analysis, info)
        return text + _generic_call(analysis, slot, occ, info)
    if sym.kind == "builtin":
        return _describe_builtin(analysis, slot, occ)
    if sym.kind == "module":
        return _describe_module(analysis, sym.name)
    if sym.kind == "option":
        return _describe_option(analysis, sym.scope or "", sym.name)
    if sym.kind == "alias":  # what it stands for
        sig = g.names.alias_sigs.get(sym.name)
        if sig is None or sig.broken:
            return _code(f"type {sym.name}")
        params = f"[{', '.join(sig.params)}]" if sig.params else ""
        return _code(f"type {sym.name}{params} = {sig.type}")
    if sym.kind == "method":
        if sym.name in DIST_METHODS and BUILTINS.get(sym.scope or "") is not None:  # d.log_prob of a Categorical d
            sig, doc = DIST_METHODS[sym.name]
            return _code(sig.replace("d.", f"{sym.scope}.", 1)) + f"\n\n{doc}"
        m = MODEL_METHODS.get(sym.name)
        if m is None:
            return None
        return _code(m.signature.replace("M.", f"{sym.scope}.").replace("-> M", f"-> {sym.scope}")) + f"\n\n{m.doc}"
    return None


def _describe_option(analysis: Analysis, model_name: str, name: str) -> str | None:
    """An option of a model: its type and default, and what it decides; in
    a fn generic over options (`m: Net[E, flash=fl]`), the value it binds."""
    fn = analysis.globals.fns.get(model_name)
    if fn is not None and fn.owner is None and name in dict(fn.owner_options):
        word = "Bool" if isinstance(dict(fn.owner_options)[name], bool) else "Float"
        text = _code(f"(option value) {name}: {word}")
        return text + f"\n\nBound at each call of `{fn.name}` to the option of the model given."
    model = analysis.globals.models.get(model_name)
    default = dict(model.options).get(name) if model is not None else None
    if model is None or default is None:
        return None
    word = "Bool" if isinstance(default, bool) else "DType" if isinstance(default, str) else "Float"
    text = _code(f"(option) {model.name}.{name}: {word} = {default}")
    # (a member declared under `if concat` and `if not concat` once)
    under = list(dict.fromkeys(f.name for f in model.fields if f.when is not None and name in MC.options_named(f.when)))
    what = f"given by name, as in `{model.name}[..., {name}={not default if isinstance(default, bool) else default}]`"
    text += f"\n\nAn option of `{MD.header(model)[6:]}`, {what}; part of the instance's type."
    if under:
        text += f" The members under it: {', '.join(under)}."
    return text


def _describe_var(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    fn = _fn_of(analysis, slot.item, occ.span.start)
    body = _body_of(analysis, slot.item, occ.span.start)
    ty = body.types.get(occ.node) if body is not None else None
    param = None
    if fn is not None:
        param = next((p for p in fn.params if p.name == occ.sym.name), None)
    ref = body.refs.get(occ.node) if body is not None else None
    is_param = param is not None and (ref is None or ref.kind == "param")
    if ty is None and is_param:
        ty = param.type  # type: ignore[union-attr]
    if ty is None:
        return None
    what = "param" if is_param else "local"
    mut = "mut " if is_param and param is not None and param.mut else ""
    text = _code(f"({what}) {mut}{occ.sym.name}: {ty}") + _type_param_note(analysis, ty)
    runs = _run_dims(analysis, slot, body, ty) if body is not None else ""
    return text + runs + _type_details(analysis, ty) + _layer_call(analysis, slot, occ)


# -- models with dims: instances, layer calls, methods


def _applied_at(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> T.ModelT | None:
    """The instance a model's name is written as at `occ` (`Linear` of
    `Linear[D, H]` in a type, or of `Linear[D, H].init` in a body), None
    where it is written without dims."""
    node = occ.node
    item = slot.item
    body = _body_of(analysis, item, occ.span.start)
    if body is not None:
        for n in A.walk(analysis.function_at(item, occ.span.start)[0]):  # type: ignore[index]
            if isinstance(n, A.Index) and _names_node(n.value, node):
                t = body.types.get(n)
                if isinstance(t, T.ModelClassT) and (t.dims or t.options):
                    return T.ModelT(t.name, t.dims, t.options)
    typed = _typed_node(analysis, slot, node)
    if typed is None:
        return None
    found, where, generics = typed
    if not (found.args or found.options):
        return None
    ctx = TypeContext(analysis.globals.names, where, list(generics))
    t = ctx.model(found.name, found.args, found.options, found.span)
    return t if isinstance(t, T.ModelT) else None


def _names_node(e: A.Node, node: A.Node) -> bool:
    """`e` is the written name `node` (`Linear`, or `nn.Linear` whose ref is on `Linear`)."""
    return e is node or (isinstance(e, A.Field) and e.name is node)


def _typed_node(
    analysis: Analysis, slot: ItemSlot, name: A.Node
) -> tuple[A.NamedType | A.ElemType, str, tuple[str, ...]] | None:
    """The written type whose model name is `name`, how its dims are read
    (a model's member: its own dims; a signature; a body) and the generic
    dims known there."""
    item = slot.item
    if item is None:
        return None
    for n in A.walk(item):
        if isinstance(n, (A.NamedType, A.ElemType)) and n.name is name:
            break
    else:
        return None
    if isinstance(item, A.TypeAlias):  # `type Lin[i, o] = Linear[i, o, bias=False]`: its own dims
        return n, "alias", tuple(p.text for p in item.params)
    if isinstance(item, A.ModelDecl):
        model = analysis.globals.models.get(item.name.text)
        dims = model.dims if model is not None else ()
        found = analysis.function_at(item, name.span.start)
        if found is None:
            return n, "model", dims
        item, info = found
    else:
        info = _fn_of(analysis, item)
        dims = ()
    assert isinstance(item, (A.FnDecl, A.ExternDecl))
    generics = (*dims, *(info.generics if info is not None else ()))
    in_signature = any(
        p.type is not None and p.type.span.start <= name.span.start < p.type.span.end for p in item.params
    ) or (item.ret is not None and item.ret.span.start <= name.span.start < item.ret.span.end)
    return n, "signature" if in_signature else "body", generics


def _declared_as(model: ModelInfo, occ: _Occ) -> str:
    if occ.is_def or not model.takes:
        return ""
    return f"\n\nDeclared `{MD.header(model)}`."


def _type_param_note(analysis: Analysis, ty: T.Type) -> str:
    """Below `m: M` (`fn f[M: CharModel]`): what M stands for."""
    bound = bound_of(ty)
    if not bound:
        return ""
    name = ty.name if isinstance(ty, T.ModelT) else ty.model  # type: ignore[union-attr]
    model = analysis.globals.model(T.ModelT(name, bound=bound))
    if model is not None and not model.methods:  # `trait Module: pass`
        return f"\n\n`{name}: {' + '.join(bound)}`: any model (its traits declare no methods)."
    methods = method_names(model) if model is not None else "no method"
    return f"\n\n`{name}: {' + '.join(bound)}`: any model with the methods of its traits ({methods})."


def _generic_call(analysis: Analysis, slot: ItemSlot, occ: _Occ, info: FnInfo) -> str:
    """Below a call of a function generic over models: the models its type
    parameters stand for there (`M = Bigram`)."""
    if not info.type_params or occ.is_def:
        return ""
    body = _body_of(analysis, slot.item, occ.span.start)
    item = analysis.function_at(slot.item, occ.span.start)[0]  # type: ignore[index]
    call = next(
        (n for n in A.walk(item) if isinstance(n, A.Call) and (n.func is occ.node or _names_node(n.func, occ.node))),
        None,
    )
    if body is None or call is None:
        return ""
    chosen: dict[str, str] = {}
    for p, a in zip(info.params, call.args):
        bound = bound_of(p.type)
        given = body.types.get(a.value)
        if bound and a.keyword is None and isinstance(given, (T.ModelT, T.GradT, T.OptimT)):
            name = p.type.name if isinstance(p.type, T.ModelT) else p.type.model  # type: ignore[union-attr]
            chosen.setdefault(name, str(given.of if not isinstance(given, T.ModelT) else given))
    if not chosen:
        return ""
    return "\n\nHere " + ", ".join(f"`{n} = {m}`" for n, m in chosen.items()) + "."


def _callee_of(item: A.Node | None, node: A.Node) -> A.Node | None:
    """The callee expression `node` names when it is called (`self.fc1` of
    `self.fc1(x)`, `fc` of `fc(x)` or of `x |> fc`)."""
    for n in A.walk(item) if item is not None else ():
        func = n.func if isinstance(n, A.Call) else n.target if isinstance(n, A.Pipe) else None
        if isinstance(func, A.Call):
            func = func.func
        if func is node or (isinstance(func, A.Field) and func.name is node):
            return func
    return None


def _layer_call(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str:
    """Below a layer that is called (`self.fc1(x)`): the `forward` it runs,
    with the layer's dims put in."""
    body = _body_of(analysis, slot.item, occ.span.start)
    if body is None:
        return ""
    func = _callee_of(analysis.function_at(slot.item, occ.span.start)[0], occ.node)  # type: ignore[index]
    t = body.types.get(func) if func is not None else None
    if not isinstance(t, T.ModelT):
        return ""
    m = MD.method(analysis.globals, t, "forward")
    if m is None:
        return ""
    return f"\n\nCalling it runs `forward` of `{t}`:\n\n" + _code(m.signature())


def _describe_method_call(analysis: Analysis, slot: ItemSlot, occ: _Occ, info: FnInfo) -> str | None:
    """A method called on a model (`l.forward` of `l.forward(x)`): its
    signature with the dims of that model."""
    if info.owner is None or occ.is_def:
        return None
    body = _body_of(analysis, slot.item, occ.span.start)
    owner_node = _owner_of(occ.node, slot.item)
    recv = body.types.get(owner_node) if body is not None and owner_node is not None else None
    if not isinstance(recv, T.ModelT):
        return None
    m = MD.method(analysis.globals, recv, info.name.rpartition(".")[2])
    if m is None:
        return None
    text = _code(m.signature(f"fn {recv}.{m.name}"))
    model = analysis.globals.models.get(recv.name)
    if model is not None and model.takes and not recv.generic:
        text += f"\n\nMethod of `{MD.header(model)[6:]}`, declared `{info.signature()}`."
    for pr in _reads_of(analysis, info):
        text += "\n\n" + _reads_markdown(analysis, pr)
    return text


def _type_details(analysis: Analysis, ty: T.Type) -> str:
    """What a hover adds below a type: a gradient's fields, an optimizer's
    hyper-parameters and state."""
    if isinstance(ty, T.GradT):
        return "\n\n" + _grad_fields(analysis, ty)
    if T.is_example_grads(ty):
        assert isinstance(ty, T.StackT) and isinstance(ty.item, T.GradT)
        return f"\n\nOne gradient per example (each field has a leading dim {ty.dim}):\n\n" + _grad_fields(
            analysis, ty.item, ty.dim
        )
    if isinstance(ty, T.OptimT):
        lines = "\n".join(f"{n}: {t}  # {what}" for n, t, what in optimizer_fields(ty))
        step = (
            "`opt.step(m, f, args...)` evaluates f as often as L-BFGS needs and updates m and the state"
            if (ty.kind == "LBFGS")
            else "`opt.step(m, g)` updates m and the state"
        )
        text = f"\n\n`{ty.kind}` optimizer of `{ty.of}`; {step}:\n\n" + _code(lines)
        if ty.groups:
            groups = "\n".join(f"group {k + 1}: {g}" for k, g in enumerate(ty.groups))
            text += "\n\nParam groups (group 0: the params no group selects, with the values above):\n\n" + _code(
                groups
            )
        return text
    if isinstance(ty, T.ScheduleT):
        lines = "\n".join(f"{n}: {t}  # {what}" for n, t, what in schedule_fields(ty))
        return (
            f"\n\n`{ty.kind}` learning-rate schedule, as torch.optim.lr_scheduler; "
            "`sched.step(opt)` advances it and sets opt.lr:\n\n" + _code(lines)
        )
    return ""


def _grad_fields(analysis: Analysis, ty: T.GradT, batch: T.Dim | None = None) -> str:
    model_name = str(ty.of)
    model = analysis.globals.model(ty)
    if model is None:
        return ""
    params = [p for p in model.params if ty.wrt is None or p.name in ty.wrt]
    if not params:
        return f"`{model_name}` has no params."

    def field_type(p) -> str:
        t = T.grad_field_type(p.type)
        if batch is not None and isinstance(t, T.TensorT):
            return str(T.TensorT((batch, *t.dims), t.elem))
        return f"[{batch}] {t}" if batch is not None else str(t)

    lines = "\n".join(f"{p.name}: {field_type(p)}" for p in params)
    if ty.wrt is not None:
        others = [p.name for p in model.params if p.name not in ty.wrt]
        head = f"Fields (the params of `{model_name}` selected with wrt; not differentiated: {', '.join(others)}):"
    else:
        head = f"Fields (one per param of `{model_name}`; buffers have no gradient):"
    return head + "\n\n" + _code(lines)


def _describe_member(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    model = analysis.globals.models.get(occ.sym.scope or "")
    if model is None:
        return None
    f = model.field(occ.sym.name)
    if f is None:
        return None
    body = _body_of(analysis, slot.item, occ.span.start)
    ref = body.refs.get(occ.node) if body is not None else None
    if ref is not None and ref.kind == "gradfield":
        owner_node = _owner_of(occ.node, slot.item)
        owner = body.types.get(owner_node) if body is not None and owner_node is not None else None
        shown = owner if isinstance(owner, T.GradT) else f"Grad[{model.name}]"
        of = owner.of if isinstance(owner, T.GradT) else model.name
        used = body.types.get(occ.node) if body is not None else None
        return (
            _code(f"(gradient) {shown}.{f.name}: {used if used is not None else T.grad_field_type(f.type)}")
            + f"\n\nThe gradient with respect to param `{f.name}` of `{of}`."
        )
    used = body.types.get(occ.node) if body is not None else None
    same = [g for g in model.fields if g.name == f.name]
    if len(same) > 1:  # declared under `if concat` and `if not concat`: the one declared or read here
        f = next((g for g in same if g.decl.name is occ.node or (used is not None and g.type == used)), f)
    if used is not None and not T.is_unknown(used) and used != f.type:  # of an instance: its dims
        owner_node = _owner_of(occ.node, slot.item)
        owner = body.types.get(owner_node) if body is not None and owner_node is not None else None
        shown = owner if isinstance(owner, T.ModelT) else model.name
        return _code(f"{f.kind} {shown}.{f.name}: {used}") + f"\n\nDeclared `{f.name}: {f.type}` in `{model.name}`."
    cond = MD.condition(f)
    return _code(f"{f.kind} {model.name}.{f.name}: {f.type}{cond}")


def _describe_builtin(analysis: Analysis, slot: ItemSlot, occ: _Occ) -> str | None:
    name = occ.sym.name
    if name in CONSTANTS:
        sig, _, doc = CONSTANTS[name].partition(" — ")
        return _code(sig) + (f"\n\n{doc[:1].upper()}{doc[1:]}" if doc else "")
    b = BUILTINS.get(name)
    if b is None:
        return None
    text = _code(b.signature) + f"\n\n{b.doc}"
    if name == "value_and_grad":
        site = _site_of_name(analysis, slot, occ.node)
        if site is not None:
            text += "\n\n" + _site_summary(analysis, site.f_name)
    return text


def _owner_of(name: A.Node, item: A.Node | None) -> A.Node | None:
    """The value a field is read of (`m.fc1` of `m.fc1.weight`'s `weight`)."""
    for node in A.walk(item) if item is not None else ():
        if isinstance(node, A.Field) and node.name is name:
            return node.value
    return None


def _site_of_name(analysis: Analysis, slot: ItemSlot, node: A.Node):
    body = _body_of(analysis, slot.item, node.span.start)
    if body is None:
        return None
    for site in body.sites:
        if isinstance(site.call, A.Call) and site.call.func is node:
            return site
    return None


def _site_summary(analysis: Analysis, f_name: str) -> str:
    info = analysis.globals.fns.get(f_name)
    if info is None or not info.params:
        return ""
    reads = _reads_of(analysis, info)
    if not reads:
        return ""
    pr = reads[0]
    return f"Differentiates `{f_name}` with respect to `{pr.param}: {pr.model}`: {pr.describe()}."


def _reads_of(analysis: Analysis, info: FnInfo) -> list[ParamReads]:
    if info.extern or analysis.globals.fns.get(info.name) is not info:
        return []
    return param_reads(analysis.reads, info, analysis.globals)


def describe_fn(analysis: Analysis, info: FnInfo) -> str:
    """A function's signature and, for each model parameter, the params it reads."""
    text = _code(info.signature())
    for pr in _reads_of(analysis, info):
        text += "\n\n" + _reads_markdown(analysis, pr)
    return text


def _reads_markdown(analysis: Analysis, pr: ParamReads) -> str:
    out = f"**Param reads** of `{pr.param}: {pr.model}`: {pr.describe()}"
    chains = []
    if pr.everything is not None:
        chains.append(("every param", pr.everything))
    for name, chain in pr.read:
        if len(chain) > 1:
            chains.append((name, chain))
    for name, chain in chains:
        out += f"\n- `{name}`: " + " → ".join(_step_text(analysis, s) for s in chain)
    return out


def _step_text(analysis: Analysis, step: Step) -> str:
    line = _step_line(analysis, step)
    where = f" (line {line})" if line is not None else ""
    return f"`{step.text}` in `{step.fn}`{where}"


def _step_line(analysis: Analysis, step: Step) -> int | None:
    info = analysis.globals.fns.get(step.fn)
    if info is None:
        return None
    owner = analysis.globals.models.get(info.owner) if info.owner is not None else None
    slot = analysis.slot_of_item.get(owner.decl if owner is not None else info.decl)
    if slot is None:
        return None
    return analysis.lines.position(slot.start + step.span.start).line + 1


def param_reads_report(analysis: Analysis, fn_name: str) -> str:
    """Plain text of what a function reads, with every witness chain (for a
    message window)."""
    info = analysis.globals.fns.get(fn_name)
    if info is None:
        return f"No function named {fn_name}."
    reads = _reads_of(analysis, info)
    if not reads:
        return f"{fn_name} takes no model."
    lines = []
    for pr in reads:
        lines.append(f"{fn_name}({pr.param}: {pr.model}) {pr.describe()}")
        for name, chain in pr.read:
            lines.append(f"  {name}: " + " -> ".join(_step_text(analysis, s).replace("`", "") for s in chain))
        if pr.everything is not None:
            lines.append(
                "  every param: " + " -> ".join(_step_text(analysis, s).replace("`", "") for s in pr.everything)
            )
    return "\n".join(lines)


# -- expressions


def _expression_hover(analysis: Analysis, offset: int) -> Hover | None:
    slot = _slot_at(analysis, offset)
    if slot is None:
        return None
    rel = offset - slot.start
    found = analysis.function_at(slot.item, rel)
    if found is None:
        return None
    body = analysis.bodies.get(found[0])
    if body is None:
        return None
    best: A.Node | None = None
    for node in _path_to(found[0], rel):
        if node in body.types and not isinstance(node, A.Ident):
            best = node
    if best is None:
        return None
    ty = body.types[best]
    if isinstance(ty, (T.UnknownT, T.FnRefT, T.BuiltinRefT, T.ModelClassT, T.RangeT, T.UnitT)):
        return None
    ref = body.refs.get(best)
    if ref is not None and ref.kind == "size":  # a run-time dim's name used as its size
        dim = T.TensorT((T.DimRun(ref.name),))
        text = _code(f"(size) {T.shown_name(ref.name)}: Int") + _run_dims(analysis, slot, body, dim)
        return Hover(_abs(slot, best.span), text)
    text = _code(str(ty)) + _run_dims(analysis, slot, body, ty) + _type_details(analysis, ty)
    return Hover(_abs(slot, best.span), text)


def _run_dims(analysis: Analysis, slot: ItemSlot, body, ty: T.Type) -> str:
    """Below a type: where each of its dims known only at run time comes
    from (`n`: from load_npz at line 4)."""
    dims: list[T.Dim] = []
    for t in ty.items if isinstance(ty, T.TupleT) else (ty,):
        if isinstance(t, T.TensorT):
            dims.extend(t.dims)
            if t.elem.index is not None:
                dims.append(t.elem.index)
        elif isinstance(t, T.VocabT):
            dims.append(t.index)
    lines, seen = [], set()
    for d in dims:
        for key in sorted(T.run_keys(d)):
            origin = body.run_dims.get(key)
            if key in seen or origin is None:
                continue
            seen.add(key)
            line = analysis.lines.position(slot.start + origin.span.start).line + 1
            lines.append(f"`{T.shown_name(key)}`: a size known only at run time, from {origin.what} (line {line})")
        if isinstance(d, T.DimUnknown) and "?" not in seen:
            seen.add("?")
            lines.append("`?`: a size known only at run time (name it with a cast, `... as [k ..]`)")
    return "".join("\n\n" + x for x in lines)


def _path_to(root: A.Node, rel: int) -> list[A.Node]:
    """The nodes whose span holds `rel`, outermost first."""
    path = []
    node: A.Node | None = root
    while node is not None:
        path.append(node)
        nxt = None
        for child in node.children():
            if child.span.start <= rel < child.span.end:
                nxt = child
                break
        node = nxt
    return path
