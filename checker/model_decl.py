"""A model's declaration: its device, its members (params, buffers,
sub-models) and their types, and the initializers of its fields."""

from __future__ import annotations

from . import ast as A
from . import catalog as C
from . import types as T
from .diagnostics import LocalRelated
from .infos import Declared, FieldInfo, ModelInfo
from .names import Names, suggest
from .typectx import TypeContext

DEVICES = ("cpu", "cuda", "mps")
# Names every compiled model has as methods (see runtime/_model.py); a field
# with one of them would hide it from Python users.
RESERVED_FIELDS = frozenset({"init", "save", "load", "state_dict", "load_state_dict", "keys", "values", "items"})
_INITS = {"zeros": 0, "ones": 0, "normal": 2, "uniform": 2, "xavier": 0}


def declare_model(item: A.ModelDecl, names: Names, partial: bool = False) -> Declared:
    ctx = TypeContext(names, "model")
    fields: list[FieldInfo] = []
    seen: dict[str, A.Member] = {}
    device = "cpu"
    if item.device is not None:
        device = item.device.name
        base = device.split(":", 1)[0]
        ok = base in DEVICES and (":" not in device or device.split(":", 1)[1].isdigit())
        if not ok:
            ctx.diagnostics.append(C.E0906.at(item.device.span, device=device))
            device = "cpu"
    for m in item.members:
        if m.name.text in RESERVED_FIELDS or m.name.text.startswith("_"):
            ctx.diagnostics.append(C.E0908.at(m.name.span, name=m.name.text))
            continue
        if m.name.text in seen:
            ctx.diagnostics.append(
                C.E0106.at(
                    m.name.span,
                    name=m.name.text,
                    model=item.name.text,
                    related=(LocalRelated("first declared here", span=seen[m.name.text].name.span),),
                )
            )
            continue
        seen[m.name.text] = m
        before = len(ctx.diagnostics)
        ty = ctx.resolve(m.type)
        sub_model = isinstance(ty, T.ModelT) or (isinstance(ty, T.StackT) and isinstance(ty.item, T.ModelT))
        if sub_model and m.kind == "buffer":
            ctx.diagnostics.append(C.E0907.at(m.type.span, kind=m.kind, found=str(ty)))
            ty = T.UNKNOWN
        elif sub_model and m.init is not None:
            assert m.init is not None
            ctx.diagnostics.append(
                C.E0903.at(m.init.span, what=f"sub-model {m.name.text} is initialised by its own model's fields")
            )
        elif len(ctx.diagnostics) == before and not isinstance(ty, T.TensorT) and not sub_model:
            ctx.diagnostics.append(C.E0907.at(m.type.span, kind=m.kind, found=str(ty)))
            ty = T.UNKNOWN
        if isinstance(ty, T.TensorT) and m.kind == "param" and not ty.elem.is_float:
            ctx.diagnostics.append(C.E0902.at(m.type.span, name=m.name.text, found=str(ty)))
        if m.init is not None and isinstance(ty, T.TensorT):
            _check_init(m, ty, ctx)
        fields.append(FieldInfo(m.name.text, m.kind, ty, m))
    return Declared(
        ModelInfo(item.name.text, device, tuple(fields), item, partial), tuple(ctx.diagnostics), frozenset(ctx.lookups)
    )


def _an(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" or word[:1] in "fi" and word[1:2].isdigit() else "a ") + word


def _literal_value(e: A.Expr) -> float | bool | None:
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -e.operand.value if e.op == "-" else e.operand.value
    if isinstance(e, (A.IntLit, A.FloatLit, A.BoolLit)):
        return e.value
    return None


def _check_init(m: A.Member, ty: T.TensorT, ctx: TypeContext) -> None:
    """An initializer must suit the field's element type, refinement included:
    a NonNeg param cannot start negative, an Index[C] buffer must index C."""
    init = m.init
    assert init is not None
    elem = ty.elem
    field = f"{_an(str(elem))} {m.kind}"
    bad = lambda what: ctx.diagnostics.append(C.E0903.at(init.span, what=what))
    value = _literal_value(init)
    if value is not None:
        if isinstance(init, A.BoolLit) != elem.is_bool:
            kind = "Bool" if isinstance(init, A.BoolLit) else "number"
            bad(f"{_an(kind)} fill value for {field}" + ("; use True or False" if elem.is_bool else ""))
        elif isinstance(init, A.FloatLit) or (isinstance(init, A.Unary) and isinstance(init.operand, A.FloatLit)):
            if not elem.is_float:
                bad(f"a Float fill value for {field}")
            else:
                _check_range(value, value, elem, field, bad)
        elif not elem.is_bool:
            _check_range(value, value, elem, field, bad)
        return
    name = None
    args: tuple[A.Arg, ...] = ()
    if isinstance(init, A.Name):
        name = init.name
    elif isinstance(init, A.Call) and isinstance(init.func, A.Name):
        name = init.func.name
        args = init.args
    if name not in _INITS:
        shown = name if name is not None else "this expression"
        bad(f"{shown} is not an initializer{suggest(name or '', _INITS)}")
        return
    want = _INITS[name]
    example = {"normal": "normal(0.0, 0.02)", "uniform": "uniform(-0.1, 0.1)"}.get(name, name)
    if name in ("normal", "uniform", "xavier") and not elem.is_float:
        bad(f"{name} needs a float {m.kind}, found {elem}")
        return
    if name == "xavier" and ty.rank < 2:
        bad(f"xavier needs at least 2 dims, found {ty}")
        return
    if isinstance(init, A.Name) and want:
        bad(f"{name} takes {want} literal numbers, as in {example}")
        return
    values = [_literal_value(a.value) if a.keyword is None else None for a in args]
    if len(args) == want and all(a.keyword is None for a in args):
        computed = next((a.value for a, v in zip(args, values) if v is None), None)
        if computed is not None:  # `normal(0.0, 0.02 / sqrt(2 * L))`
            what = f"{name} takes {want} literal numbers, as in {example}; an initializer cannot compute one yet"
            ctx.diagnostics.append(C.E0903.at(computed.span, what=what))
            return
    if len(args) != want or any(v is None or isinstance(v, bool) for v in values):
        bad(f"{name} takes {want} literal numbers, as in {example}")
        return
    if name == "zeros":
        _check_range(0, 0, elem, field, bad)
    elif name == "ones":
        _check_range(1, 1, elem, field, bad)
    elif name == "normal":
        if values[1] < 0:  # type: ignore[operator]
            bad("normal's standard deviation must not be negative")
        elif elem.refine is not None:
            bad(f"normal can draw any real value, which does not suit {field}; use uniform")
    elif name == "uniform":
        lo, hi = values
        if lo > hi:  # type: ignore[operator]
            bad(f"uniform({lo}, {hi}) has its bounds the wrong way round")
        else:
            _check_range(lo, hi, elem, field, bad)  # type: ignore[arg-type]
    elif name == "xavier" and elem.refine is not None:
        bad(f"xavier draws negative values, which do not suit {field}")


def _check_range(lo: float, hi: float, elem: T.Elem, field: str, bad) -> None:
    if elem.index is not None:
        size = T.dim_value(elem.index)
        if lo != int(lo) or lo < 0 or (size is not None and hi >= size):
            bad(f"{_fmt(lo, hi)} is not a valid value for {field} (0 to {size - 1 if size else '?'})")
    elif elem.refine == "nonneg" and lo < 0:
        bad(f"{_fmt(lo, hi)} is negative, which does not suit {field}")
    elif elem.refine == "prob" and (lo < 0 or hi > 1):
        bad(f"{_fmt(lo, hi)} is outside [0, 1], which does not suit {field}")


def _fmt(lo: float, hi: float) -> str:
    return str(lo) if lo == hi else f"[{lo}, {hi}]"
