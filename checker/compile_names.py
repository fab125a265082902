"""How the compiled Python spells Quiver's names and static values: module
variables, identifiers clear of Python's keywords and built-ins, dims, element
types, options and literal numbers; `CompileError`."""

from __future__ import annotations

import builtins
import keyword

from . import ast as A
from . import dimexpr as DX
from . import types as T

# Names the generated code uses itself, or that Python gives a meaning.
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | {"rt", "torch"}


class CompileError(Exception):
    """The program has errors (compile only checked programs)."""


def module_var(qual: str) -> str:
    """The compiled module's variable holding an imported module (`nn.layers`)."""
    return "_qv_mod_" + qual.replace(".", "__")


def py_name(name: str) -> str:
    """A Quiver identifier as a Python identifier that shadows nothing; a
    qualified name (`layers.Mlp`) as the attribute of its module's variable."""
    if "." in name:
        qual, _, last = name.rpartition(".")
        return f"{module_var(qual)}.{py_name(last)}"
    if name in _RESERVED or name == "_src" or name.startswith(("_sig_", "_ret_")):
        return name + "_q"
    return name


def fn_ident(name: str, owner: str | None) -> str:
    """A function's Python name as it is defined in its own module: the fn's
    own (`forward`), or for a method `_qv_m_Linear__forward`."""
    if owner is None:
        return py_name(name)
    model = owner.rpartition(".")[2]
    return f"_qv_m_{model}__{name.rpartition('.')[2]}"


def fn_ref(name: str, owner: str | None, unchecked: bool = False) -> str:
    """A function as compiled code calls it: `forward`, `layers.forward`
    (through its module's variable), a method `_qv_m_Linear__forward` or
    `_qv_mod_nn._qv_m_Linear__forward`; with `unchecked`, its body without
    the argument checks of a call from Python (a fn with parameters)."""
    if owner is None:
        return unchecked_ident(py_name(name)) if unchecked else py_name(name)
    qual = owner.rpartition(".")[0]
    ident = fn_ident(name, owner)
    ident = unchecked_ident(ident) if unchecked else ident
    return f"{module_var(qual)}.{ident}" if qual else ident


def unchecked_ident(ident: str) -> str:
    """The body of a fn with parameters, which compiled code calls without
    checking its arguments again (the checker proved them)."""
    return f"_qv_u_{ident}"


def dim_py(d: T.Dim) -> str:
    """A dim's size in Python: a number, a generic dim's variable, or Python
    computing it from them."""
    v = T.dim_value(d)
    if v is not None:
        return str(v)
    if isinstance(d, T.DimExpr):
        return DX.python(d.poly, py_name)
    assert isinstance(d, T.DimVar)
    return py_name(d.name)


def attr(obj: str, name: str) -> str:
    """`obj.name`, also when the field's name is a Python keyword."""
    return f"getattr({obj}, {name!r})" if keyword.iskeyword(name) else f"{obj}.{name}"


def elem_expr(e: T.Elem, where: str = "method") -> str:
    """The runtime's element spec of `e`. The element type of a model's
    DType option (`[I O] dtype`) is the instance's: its factory's argument
    (`where="factory"`), `self._qv_opt_dtype` in a method, and in a
    signature bound from `self` at the call (`rt.ElemVar('dtype')`)."""
    if e.var is not None:
        if where == "factory":
            return py_name(e.var)
        if where == "signature":
            return f"rt.ElemVar({e.var!r})"
        return f"self._qv_opt_{e.var}"
    if e.index is not None:
        size = T.dim_value(e.index)
        return f"rt.index({size})" if size is not None else "rt.i64"
    if e.dtype == "f32" and e.refine == "nonneg":
        return "rt.nonneg"
    if e.dtype == "f32" and e.refine == "prob":
        return "rt.prob"
    return "rt." + T.DTYPES[e.dtype][1]


def option_py(v: bool | float | str | T.OptionRef | T.ModelArg, where: str = "method") -> str:
    """A model option's value as Python: a Bool or a Float as itself, a
    DType as the runtime's element spec (`rt.f64`; the enclosing model's
    own, `dtype=dtype`, as elem_expr finds it); the enclosing model's own
    Bool or Float option (`bias=bias`) as its factory's argument or, in a
    method, the instance's."""
    if isinstance(v, T.ModelArg):  # a model given for a model parameter: its family (or the factory's B)
        return py_name(v.name) if where == "factory" or not v.bound else f"self._qv_models[{v.name!r}]"
    if isinstance(v, T.OptionRef):
        return py_name(v.name) if where == "factory" else f"self._qv_opt_{v.name}"
    if isinstance(v, str):
        return elem_expr(T.Elem(v), where)
    return repr(v)


def _literal_values(e: A.Expr) -> str:
    """A tensor literal as nested Python lists of numbers."""
    if isinstance(e, A.TensorLit):
        return "[" + ", ".join(_literal_values(x) for x in e.items) + "]"
    return _number_text(e)


def _number_text(e: A.Expr) -> str:
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return f"{e.op}{e.operand.value!r}"
    if isinstance(e, (A.IntLit, A.FloatLit, A.BoolLit)):
        return repr(e.value)
    raise CompileError("an initializer argument must be a number")  # pragma: no cover
