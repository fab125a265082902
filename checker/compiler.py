"""The compiler: a checked program to readable Python on the torch runtime.

`compile_program(analysis, path)` takes the analysis of a program with no
errors and returns Python source that imports only `quiver.runtime` (as `rt`),
plus a map from each generated line to the `.qv` line and column it came from.
The runtime uses that map to report every failure at its `.qv` location.

The generated code mirrors the program: a dim is a module constant, a model a
`rt.Model` subclass, a fn a Python function that checks its arguments at entry
(`rt.checks.enabled` switches that off), an extern fn an `rt.extern` callable.
Built-ins become `rt.<name>` calls with their `over=` dims resolved to axes at
compile time, so nothing about dims is looked up while the program runs.
Everything here is static: the analysis already knows every type.
"""

from __future__ import annotations

import builtins
import keyword
from dataclasses import dataclass

from . import ast as A
from . import dimexpr as DX
from . import types as T
from .analysis import Analysis
from .builtins import BUILTINS, CONSTANTS, Builtin, Lowering, ParamKind
from .declarations import FnInfo, ModelInfo, dotted_text, sub_model
from .deep import deep
from .model_decl import INITIALIZERS
from .results import BodyResult, DimCheck

# Initializers whose runtime functions take their first arguments by position.
_POSITIONAL_INITS = ("normal", "uniform", "trunc_normal")

# Names the generated code uses itself, or that Python gives a meaning.
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | {"rt", "torch"}


# The built-ins whose argument is a dim (arange(n), eye(n), one_hot(y, over=C)):
# dim arithmetic there compiles to the dim's size, which their result's last dim holds.
_DIM_ARGS = {"arange": "n", "eye": "n", "one_hot": "over"}


class CompileError(Exception):
    """The program has errors (compile only checked programs)."""


@dataclass(frozen=True)
class CompiledModule:
    source: str
    line_map: dict[int, tuple[int, int]]  # python line (1-based) -> (qv line, qv col), 1-based


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


def fn_ref(name: str, owner: str | None) -> str:
    """A function as compiled code calls it: `forward`, `layers.forward`
    (through its module's variable), a method `_qv_m_Linear__forward` or
    `_qv_mod_nn._qv_m_Linear__forward`."""
    if owner is None:
        return py_name(name)
    qual = owner.rpartition(".")[0]
    ident = fn_ident(name, owner)
    return f"{module_var(qual)}.{ident}" if qual else ident


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


def option_py(v: bool | float | str | T.OptionRef, where: str = "method") -> str:
    """A model option's value as Python: a Bool or a Float as itself, a
    DType as the runtime's element spec (`rt.f64`; the enclosing model's
    own, `dtype=dtype`, as elem_expr finds it); the enclosing model's own
    Bool or Float option (`bias=bias`) as its factory's argument or, in a
    method, the instance's."""
    if isinstance(v, T.OptionRef):
        return py_name(v.name) if where == "factory" else f"self._qv_opt_{v.name}"
    if isinstance(v, str):
        return elem_expr(T.Elem(v), where)
    return repr(v)


class _Writer:
    def __init__(self, lines) -> None:
        self.out: list[str] = []
        self.map: dict[int, tuple[int, int]] = {}
        self.lines = lines  # the document's LineIndex

    def emit(self, indent: int, text: str, offset: int | None = None) -> None:
        self.out.append("    " * indent + text)
        if offset is not None:
            p = self.lines.position(offset)
            self.map[len(self.out)] = (p.line + 1, p.column + 1)


# Python's precedence of Quiver's binary operators (higher binds tighter).
_PREC = {"or": 7, "and": 8, "|": 10, "&": 10.5, "+": 11, "-": 11, "*": 12, "/": 12, "%": 12, "@": 12, "**": 14}
# Python's parser allows 200 nested parentheses; calls and casts nest them.
_MAX_PY_NESTING = 150


class _FnCompiler:
    """The body of one function."""

    def __init__(self, c: Compiler, fn: FnInfo, body: BodyResult, base: int, result_check: str | None = None) -> None:
        self.c = c
        self.fn = fn
        self.body = body
        self.base = base  # absolute offset of the item
        self._depth = 0  # expressions being written, one inside the other
        self.result_check = result_check  # the rt.ResultCheck of the fn's result, if it has one
        self.generic_sizes: set[str] = set()  # generic dims the body has as locals (read from arguments)

    def at(self, node: A.Node) -> int:
        return node.span.start + self.base

    # -- statements

    def block(self, stmts, indent: int) -> None:
        if not stmts:
            self.c.w.emit(indent, "pass")
        for s in stmts:
            self.stmt(s, indent)

    def stmt(self, s: A.Stmt, indent: int) -> None:
        w = self.c.w
        at = self.at(s)
        if isinstance(s, A.Assign):
            update = self.field_update(s.targets[0], s.value) if len(s.targets) == 1 else None
            if update is not None:
                w.emit(indent, update, at)
                return
            targets = ", ".join(self.target(t) for t in s.targets)
            w.emit(indent, f"{targets} = {self.expr(s.value)}", at)
        elif isinstance(s, A.AugAssign) and isinstance(self.type_of(s.target), T.ModelT):
            w.emit(indent, self.model_update(s), at)
        elif isinstance(s, A.AugAssign):
            update = self.field_update(s.target, None, s.op, s.value)
            if update is not None:
                w.emit(indent, update, at)
                return
            # Never in place: `x += e` must not change a tensor `x` shares.
            target = self.target(s.target)
            w.emit(indent, f"{target} = {self.expr(s.target)} {s.op} {self.expr(s.value, 12)}", at)
        elif isinstance(s, A.ExprStmt):
            w.emit(indent, self.expr(s.expr), at)
        elif isinstance(s, A.Return):
            if not s.values:
                w.emit(indent, "return", at)
            elif self.result_check is None:
                w.emit(indent, "return " + ", ".join(self.expr(v) for v in s.values), at)
            else:  # the refined values of the result are checked where checks are on
                p = self.c.a.lines.position(at)
                w.emit(indent, "_ret_value = " + ", ".join(self.expr(v) for v in s.values), at)
                w.emit(indent, "if rt.checks.enabled:", at)
                w.emit(indent + 1, f"{self.result_check}.check(_ret_value, {p.line + 1}, {p.column + 1})", at)
                w.emit(indent, "return _ret_value", at)
        elif isinstance(s, A.If):
            for i, b in enumerate(s.branches):
                w.emit(indent, f"{'if' if i == 0 else 'elif'} {self.cond(b.cond)}:", self.at(b))
                self.block(b.body, indent + 1)
            if s.orelse is not None:
                w.emit(indent, "else:")
                self.block(s.orelse, indent + 1)
        elif isinstance(s, A.For):
            w.emit(indent, f"for {py_name(s.var.text)} in {self.expr(s.iter)}:", at)
            self.block(s.body, indent + 1)
        elif isinstance(s, A.While):
            w.emit(indent, f"while {self.cond(s.cond)}:", at)
            self.block(s.body, indent + 1)
        elif isinstance(s, A.Break):
            w.emit(indent, "break", at)
        elif isinstance(s, A.Continue):
            w.emit(indent, "continue", at)
        else:
            w.emit(indent, "pass", at)

    def field_update(
        self, target: A.Expr, value: A.Expr | None, op: str | None = None, operand: A.Expr | None = None
    ) -> str | None:
        """`m.f = m.f - lr * e` (and `+`, and `m.f -= e`) as one fused in-place
        update, `rt.field_add(m, "f", e, -lr)`: the optimizer step of every
        training loop, which would otherwise build two temporaries and copy."""
        if not self.c.fuse_updates or not isinstance(target, A.Field) or keyword.iskeyword(target.name.text):
            return None
        if not isinstance(self.type_of(target.value), T.ModelT):
            return None  # an optimizer's lr is a plain attribute
        if value is not None:
            if not (isinstance(value, A.Binary) and value.op in ("+", "-") and A.same_path(value.left, target)):
                return None
            op, operand = value.op, value.right
        if op not in ("+", "-") or operand is None:
            return None
        sign = "-" if op == "-" else ""
        alpha = f"{sign}1" if sign else None
        e = operand
        if isinstance(operand, A.Binary) and operand.op == "*":
            if self._is_number(operand.left):
                alpha, e = f"{sign}{self.expr(operand.left, 13)}", operand.right
            elif self._is_number(operand.right):
                alpha, e = f"{sign}{self.expr(operand.right, 13)}", operand.left
        obj = self.expr(target.value, 16)
        tail = f", {alpha}" if alpha is not None else ""
        return f"rt.field_add({obj}, {target.name.text!r}, {self.expr(e)}{tail})"

    def model_update(self, s: A.AugAssign) -> str:
        """`m -= lr * g` → `rt.model_update(m, g, -lr)`: one fused step; a
        number scaling the gradient becomes the step's alpha."""
        value, scale = s.value, None
        if isinstance(value, A.Binary) and value.op == "*":
            if self._is_number(value.left):
                value, scale = value.right, value.left
            elif self._is_number(value.right):
                value, scale = value.left, value.right
        if scale is None:
            alpha = "1" if s.op == "+" else "-1"
        else:
            alpha = self.expr(scale, 12) if s.op == "+" else f"-{self.expr(scale, 13)}"
        return f"rt.model_update({self.expr(s.target)}, {self.expr(value)}, {alpha})"

    def _is_number(self, e: A.Expr) -> bool:
        t = self.type_of(e)
        return isinstance(t, T.NumberT) and t.kind in ("Int", "Float")

    def target(self, t: A.Expr) -> str:
        if isinstance(t, A.Name):
            return py_name(t.name)
        if isinstance(t, A.TupleExpr):  # (l, acc), g = ...
            return "(" + ", ".join(self.target(x) for x in t.items) + ")"
        assert isinstance(t, A.Field)
        if keyword.iskeyword(t.name.text):
            raise CompileError(f"cannot assign field '{t.name.text}': rename it (a Python keyword)")
        return attr(self.expr(t.value, 16), t.name.text)

    def cond(self, e: A.Expr) -> str:
        return self.expr(e)

    # -- expressions (precedence as Python's: higher binds tighter)

    def expr(self, e: A.Expr, outer: int = 0) -> str:
        self._depth += 1
        try:
            if self._depth > _MAX_PY_NESTING:
                # Python's parser refuses deeper code (casts and pipes become calls).
                raise CompileError(
                    f"an expression nests more than {_MAX_PY_NESTING} levels deep in the generated Python;"
                    " name some of its intermediate values"
                )
            text, prec = self._expr(e)
            for check in self.body.dim_checks.get(e, ()):
                text, prec = self.dim_check(e, check, text), 16
        finally:
            self._depth -= 1
        return f"({text})" if prec < outer else text

    def dim_check(self, e: A.Expr, check: DimCheck, value: str) -> str:
        """`value` checked at run time where a dim known only then (`?`)
        meets a known one (docs/language.md, "Dims known only at run time")."""
        p = self.c.a.lines.position(self.at(e))
        where = f"_src, {p.line + 1}, {p.column + 1}, {check.what!r}, {check.declared!r}"
        if check.count is not None:
            return f"rt.expect_count({value}, {self.sizes(check.count)}, {where})"
        return f"rt.expect_dims({value}, {self.sizes(check.dims)}, {where})"

    def sizes(self, dims: tuple[T.Dim | None, ...]) -> str:
        """Sizes as a Python tuple: ints, the function's generic dims (read
        from its arguments at entry) and dim expressions of them; None where
        nothing is checked or the size cannot be read."""
        out = []
        for d in dims:
            v = T.dim_value(d) if d is not None else None
            if v is not None:
                out.append(str(v))
            elif isinstance(d, T.DimVar) and d.name in self.generic_sizes:
                out.append(py_name(d.name))
            elif isinstance(d, T.DimExpr) and DX.generics(d.poly) <= self.generic_sizes:
                out.append(DX.python(d.poly, py_name))
            else:
                out.append("None")
        return "(" + ", ".join(out) + ("," if len(out) == 1 else "") + ")"

    def _chain(self, e: A.Binary | A.BoolOp, prec: int) -> str:
        """A left-nested chain of operators of one precedence, `a + b - c`,
        written flat without recursion: any number of terms costs linear time."""
        links: list[A.Binary | A.BoolOp] = []
        node: A.Expr = e
        while isinstance(node, (A.Binary, A.BoolOp)) and node.op != "**" and _PREC[node.op] == prec:
            links.append(node)
            node = node.left
        parts = [self.expr(node, prec)]
        for link in reversed(links):
            parts += (" ", link.op, " ", self.expr(link.right, prec + 1))
        return "".join(parts)

    def _expr(self, e: A.Expr) -> tuple[str, int]:
        if isinstance(e, A.Name):
            return self.name(e), 20
        if isinstance(e, A.IntLit):
            return repr(e.value), 20
        if isinstance(e, A.FloatLit):
            return repr(e.value), 20
        if isinstance(e, A.StrLit):
            return repr(e.value), 20
        if isinstance(e, A.BoolLit):
            return repr(e.value), 20
        if isinstance(e, A.TupleExpr):
            return "(" + ", ".join(self.expr(x) for x in e.items) + ("," if len(e.items) == 1 else "") + ")", 20
        if isinstance(e, A.Unary):
            return f"{e.op}{self.expr(e.operand, 13)}", 13
        if isinstance(e, A.Binary):
            if e.op == "**":
                return f"{self.expr(e.left, 15)} ** {self.expr(e.right, 13)}", 14
            prec = _PREC[e.op]
            return self._chain(e, prec), prec
        if isinstance(e, A.Compare):
            return f"{self.expr(e.left, 11)} {e.op} {self.expr(e.right, 11)}", 9
        if isinstance(e, A.BoolOp):
            prec = _PREC[e.op]
            return self._chain(e, prec), prec
        if isinstance(e, A.Not):
            return f"not {self.expr(e.operand, 9)}", 9
        if isinstance(e, A.Field):
            qualified = self.global_of(e)
            if qualified is not None:
                return qualified, 20
            return attr(self.expr(e.value, 16), e.name.text), 16
        if isinstance(e, A.Index):
            t = self.type_of(e)
            if isinstance(t, T.ModelClassT):  # Linear[D, H]: the class of that instance
                return self.c.model_class(t.name, t.dims, t.options), 16
            if isinstance(e.index, A.Slice):
                start = self.expr(e.index.start) if e.index.start is not None else ""
                end = self.expr(e.index.end) if e.index.end is not None else ""
                return f"{self.expr(e.value, 16)}[{start}:{end}]", 16
            assert not isinstance(e.index, A.Subscripts)  # the checker allows several only for a model's dims
            return f"{self.expr(e.value, 16)}[{self.expr(e.index)}]", 16
        if isinstance(e, A.Cast):
            return self.cast(e), 16
        if isinstance(e, A.Call):
            return self.call(e, e.func, [(a.keyword.text if a.keyword else None, a.value) for a in e.args]), 16
        if isinstance(e, A.Pipe):
            target = e.target
            if isinstance(target, A.Call):
                args = [(None, e.left)] + [(a.keyword.text if a.keyword else None, a.value) for a in target.args]
                return self.call(e, target.func, args), 16
            return self.call(e, target, [(None, e.left)]), 16
        if isinstance(e, A.TensorType):
            return self.shape(e), 20
        if isinstance(e, (A.TensorLit, A.NameList)):
            t = self.type_of(e)
            assert isinstance(t, T.TensorT)
            return f"rt.tensor({self.literal_values(e)}, {elem_expr(t.elem)})", 16
        raise CompileError(f"cannot compile {type(e).__name__}")  # pragma: no cover

    def literal_values(self, e: A.TensorLit | A.NameList) -> str:
        """A tensor literal as nested Python lists: of numbers, or of the
        names of plain numbers (`[x, y]`)."""
        if isinstance(e, A.NameList):
            return "[" + ", ".join(self.name(n) for n in e.items) + "]"
        return _literal_values(e)

    def name(self, e: A.Name) -> str:
        ref = self.body.refs.get(e)
        if ref is not None and ref.kind == "builtin" and e.name in CONSTANTS:
            return f"rt.{e.name}"  # rt.Eval, rt.inf, rt.pi
        if ref is not None and ref.kind == "option":  # `bias` in a method: the instance's option
            return f"self._qv_opt_{e.name}"
        if ref is not None and ref.kind in ("dim", "fn", "extern", "model"):
            return py_name(ref.name)  # an imported name (`fwd`) as the qualified one
        return py_name(e.name)

    def method_of(self, func: A.Expr) -> tuple[FnInfo, A.Expr] | None:
        """The method a call's callee names, and its receiver: `l.step` (typed
        as the method), or a model value `l` itself (its `forward`)."""
        t = self.type_of(func)
        g = self.c.a.globals
        if isinstance(t, T.FnRefT) and isinstance(func, A.Field):
            info = g.fns.get(t.name)
            if info is not None and info.owner is not None:
                return info, func.value
        if isinstance(t, T.ModelT):
            model = g.model(t)
            found = model.method("forward") if model is not None else None
            info = g.fns.get(found.name) if found is not None else None
            if info is not None:
                return info, func
        return None

    def global_of(self, e: A.Expr) -> str | None:
        """`layers.forward` (a name through a module) as compiled, else None."""
        if isinstance(e, A.Field) and isinstance(self.type_of(e.value), T.ModuleT):
            ref = self.body.refs.get(e.name)
            return py_name(ref.name) if ref is not None else None
        return None

    def type_of(self, e: A.Node) -> T.Type:
        return self.body.types.get(e, T.UNKNOWN)

    def cast(self, e: A.Cast) -> str:
        src = self.type_of(e.value)
        target = self.type_of(e)
        if isinstance(target, T.TensorT) and isinstance(e.value, (A.TensorLit, A.NameList)):
            # made in the target's dtype at once: `[0.8, 0.1] as [2] f64` is exact, not rounded through f32
            return f"rt.cast({self.literal_values(e.value)}, {elem_expr(target.elem)})"
        value = self.expr(e.value)
        if isinstance(target, T.NumberT):
            conv = {"Int": "int", "Float": "float", "Bool": "bool"}.get(target.kind, "str")
            if isinstance(src, T.TensorT):
                return f"{conv}(rt.item({value}))"
            return f"{conv}({value})"
        assert isinstance(target, T.TensorT)
        return f"rt.cast({value}, {elem_expr(target.elem)})"

    def shape(self, t: A.TensorType) -> str:
        resolved = self.type_of(t)
        dims = []
        for i, d in enumerate(t.dims):
            if isinstance(d, A.DimInt):
                dims.append(str(d.value))
            elif isinstance(d, A.DimName):
                dims.append(py_name(d.name))
            else:  # dim arithmetic: its value, or Python computing it from generic dims
                assert isinstance(resolved, T.TensorT)
                dims.append(self.dim_value(resolved.dims[i]))
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def call(self, node: A.Node, func: A.Expr, args: list[tuple[str | None, A.Expr]]) -> str:
        method = self.method_of(func)
        if method is not None:  # l.forward(x), l(x): the method's function, with l as self
            info, recv = method
            rendered = ", ".join(
                [self.expr(recv)] + [f"{py_name(k)}={self.expr(v)}" if k else self.expr(v) for k, v in args]
            )
            return f"{fn_ref(info.name, info.owner)}({rendered})"
        qualified = self.global_of(func)
        if qualified is not None:  # layers.forward(m, x)
            rendered = ", ".join(f"{py_name(k)}={self.expr(v)}" if k else self.expr(v) for k, v in args)
            return f"{qualified}({rendered})"
        if isinstance(func, A.Field):  # Mlp.init(seed=...), opt.step(m, g)
            rendered = ", ".join(f"{k}={self.expr(v)}" if k else self.expr(v) for k, v in args)
            made = self.type_of(func)
            if isinstance(made, T.ModelClassT) and not isinstance(func.value, A.Index):
                # nn.Dropout.init(seed=0), a model that takes only dims with defaults: that instance's class
                info = self.c.a.globals.models.get(made.name)
                if info is not None and info.takes:
                    return f"{self.c.model_class(made.name, made.dims, made.options)}.{func.name.text}({rendered})"
            return f"{self.expr(func.value, 16)}.{func.name.text}({rendered})"
        assert isinstance(func, A.Name)
        ref = self.body.refs.get(func)
        if ref is not None and ref.kind == "builtin":
            return self.builtin(node, func.name, args)
        rendered = ", ".join(f"{py_name(k)}={self.expr(v)}" if k else self.expr(v) for k, v in args)
        return f"{self.name(func)}({rendered})"

    def builtin(self, node: A.Node, name: str, args: list[tuple[str | None, A.Expr]]) -> str:
        """A call to a built-in, lowered as its spec says (checker/builtins.py)."""
        b = BUILTINS[name]
        if name in ("value_and_grad", "grad", "jvp"):
            return self.gradient_call(node, name, args)
        result = self.type_of(node)
        if name in ("zeros", "randn") and isinstance(result, T.GradT):  # zeros(Grad[M]), randn(Grad[M], seed=s)
            model = self.c.model_class(result.model, result.dims, result.options)
            seed = next((self.expr(v) for k, v in args if k == "seed"), None)
            return f"rt.zeros_grad({model})" if name == "zeros" else f"rt.randn_grad({model}, seed={seed})"
        if name in ("mean", "sum") and args and T.is_example_grads(self.type_of(args[0][1])):
            return f"rt.{name}_grad({self.expr(args[0][1])})"  # over the examples of [b] Grad[M]
        func = f"rt.{b.runtime}" if b.runtime is not None else name
        positional = [v for k, v in args if k is None]
        if b.number_runtime is not None and positional and isinstance(self.type_of(positional[0]), T.NumberT):
            func = f"rt.{b.number_runtime}"  # decided here, so the tensor path is torch's function itself
        keywords = {k: v for k, v in args if k is not None}
        if b.lowering is not Lowering.CALL:
            return f"{func}({self.creation_args(b, positional, keywords)})"
        # Parameters in order: keyword-only ones as name=value, a dim as the
        # axis the checker resolved; extra (variadic) arguments at the end.
        values: list[str] = []
        named: list[str] = []
        for i, p in enumerate(b.params):
            if p.kind is ParamKind.DIM:
                if p.name in keywords or not p.required:
                    values.append(repr(self.body.axes.get(node)))
                continue
            v = keywords.get(p.name, positional[i] if i < len(positional) and not p.keyword_only else None)
            if v is None:
                continue
            if p.kind is ParamKind.AXES:  # the positions the checker worked out
                rendered = repr(self.body.axes.get(node))
            elif p.kind is ParamKind.SHAPE:
                assert isinstance(v, A.TensorType)
                rendered = self.shape(v)
            elif isinstance(v, A.Binary) and _DIM_ARGS.get(name) == p.name and isinstance(result, T.TensorT):
                rendered = self.dim_value(result.dims[-1])  # dim arithmetic, `/` floored: arange((T/2))
            else:
                rendered = self.expr(v)
            if p.keyword_only:
                named.append(f"{p.name}={rendered}")
            else:
                values.append(rendered)
        if b.variadic:  # extra arguments, before the keyword ones (print's all_ranks=)
            values.extend(self.expr(v) for v in positional[len([p for p in b.params if not p.keyword_only]) :])
        return f"{func}(" + ", ".join(values + named) + ")"

    def gradient_call(self, node: A.Node, name: str, args: list[tuple[str | None, A.Expr]]) -> str:
        """`rt.value_and_grad(f, m, args..., wrt=(...), batch=(...), aux=True)`
        (also grad; jvp takes the tangent after m): f's arguments in the order
        of its parameters, then the options the checker resolved."""
        positional = [v for k, v in args if k is None]
        keywords = {k: v for k, v in args if k is not None}
        lead = 3 if name == "jvp" else 2
        f_type = self.type_of(positional[0])
        assert isinstance(f_type, T.FnRefT)
        info = self.c.a.globals.fns[f_type.name]
        parts = [self.expr(v) for v in positional[:lead]]
        rest = positional[lead:]
        for p in info.params[1 + len(rest) :]:
            if p.name in keywords:
                rest.append(keywords[p.name])
        parts.extend(self.expr(v) for v in rest)
        if name != "jvp":
            wrt = keywords.get("wrt")
            if isinstance(wrt, A.NameList):
                model = info.params[0].type
                assert isinstance(model, T.ModelT)
                order = self.c.wrt_order(model.name, tuple(n.name for n in wrt.items))
                parts.append(f"wrt={order!r}")
            if "batch" in keywords:
                in_dims = self.body.axes.get(node)
                assert isinstance(in_dims, tuple)
                parts.append("batch=(" + "".join("0, " if d else "None, " for d in in_dims).rstrip(" ") + ")")
            if isinstance(info.ret, T.TupleT):
                parts.append("aux=True")
        return f"rt.{name}(" + ", ".join(parts) + ")"

    def creation_args(self, b: Builtin, positional: list[A.Expr], keywords: dict[str, A.Expr]) -> str:
        """The shape, then its element type (dtype=, or the size of an Index), then the other arguments by
        name (full's value=, seed=)."""
        shape_node = keywords.get("shape", positional[0] if positional else None)
        assert isinstance(shape_node, A.TensorType)
        t = self.type_of(shape_node)
        assert isinstance(t, T.TensorT)
        parts = [self.shape(shape_node)]
        if b.lowering is Lowering.SHAPE_INDEX:
            assert t.elem.index is not None
            parts.append(self.dim_value(t.elem.index))
        else:
            parts.append(f"dtype={elem_expr(t.elem)}")
        for i, p in enumerate(b.params[1:], start=1):  # full's value, seed=: by name
            v = keywords.get(p.name, positional[i] if i < len(positional) and not p.keyword_only else None)
            if v is not None:
                parts.append(f"{p.name}={self.expr(v)}")
        return ", ".join(parts)

    def dim_value(self, d: T.Dim) -> str:
        return dim_py(d)


class Compiler:
    def __init__(self, analysis: Analysis, path: str, fuse_updates: bool = True) -> None:
        self.a = analysis
        self.path = path
        self.fuse_updates = fuse_updates
        self.w = _Writer(analysis.lines)

    def loc(self, offset: int) -> str:
        p = self.a.lines.position(offset)
        return f"_src.loc({p.line + 1}, {p.column + 1})"

    def base(self, item: A.Node) -> int:
        """The offset of an item (a method's: its model's, which holds it)."""
        slot = self.a.slot_of_item.get(item)
        if slot is None:
            for model in self.a.globals.models.values():
                if any(m.decl is item for m in model.methods) and model.decl in self.a.slot_of_item:
                    slot = self.a.slot_of_item[model.decl]
                    break
        assert slot is not None
        return slot.start

    def run(self) -> CompiledModule:
        w = self.w
        w.emit(0, f"# Compiled by Quiver from {self.path}. Do not edit: edit the .qv file.")
        w.emit(0, "from quiver import runtime as rt")
        w.emit(0, "")
        w.emit(0, f"_src = rt.SourceFile({self.path!r})")
        g = self.a.globals
        # Every module whose definitions this one's types or code can name
        # (its imports' own imports included), handed over by the loader.
        quals = sorted({q.rpartition(".")[0] for q in g.names.imported})
        for qual in quals:
            w.emit(0, f"{module_var(qual)} = rt.imported({qual!r})")
        # What `from m import x as y` binds, for Python users of the module
        # (Quiver code names the definition itself).
        for written, q in sorted(g.names.aliases.items()):
            if "." not in written and "." in q:
                w.emit(0, f"{py_name(written)} = {py_name(q)}")
        items = [s.item for s in self.a.parsed.slots if s.item is not None]
        for item in items:
            if isinstance(item, A.DimDecl) and item.name.text in g.dims and g.names.first[item.name.text] is item:
                w.emit(0, "")
                w.emit(0, f"{py_name(item.name.text)} = {g.dims[item.name.text].value}", self.base(item))
        done: set[str] = set()
        for item in items:
            if isinstance(item, A.ModelDecl) and g.names.first.get(item.name.text) is item:
                self.model_and_parts(g.models[item.name.text], done)
        for item in items:
            if isinstance(item, (A.FnDecl, A.ExternDecl)) and g.names.first.get(item.name.text) is item:
                info = g.fns[item.name.text]
                if info.extern:
                    self.extern(info)
                else:
                    self.function(info)
            elif isinstance(item, A.ModelDecl) and g.names.first.get(item.name.text) is item:
                model = g.models[item.name.text]
                for m in model.methods:
                    self.function(g.fns.get(m.name, m))
                if model.methods:
                    w.emit(0, "")
                    pairs = ", ".join(f"{m.name.rpartition('.')[2]}={fn_ident(m.name, m.owner)}" for m in model.methods)
                    w.emit(0, f"rt.add_methods({py_name(model.name)}, {pairs})", self.base(item))
        w.emit(0, "")
        w.emit(0, "_src.set_line_map(" + repr(dict(sorted(w.map.items()))) + ")")
        return CompiledModule("\n".join(w.out) + "\n", dict(w.map))

    def model_and_parts(self, m: ModelInfo, done: set[str]) -> None:
        """A model class after the classes of its sub-models (the checker
        rules out cycles: E0909)."""
        if m.name in done:
            return
        done.add(m.name)
        for f in m.params:
            sub = sub_model(f.type)
            # (a model of another module is compiled with that module)
            if sub is not None and sub.name in self.a.globals.models and sub.name in self.a.globals.names.first:
                self.model_and_parts(self.a.globals.models[sub.name], done)
        self.model(m)

    def model_class(self, name: str, dims: tuple[T.Dim, ...], options: T.Options, where: str = "method") -> str:
        """A model's class: `Mlp`, or of an instance `Linear.of(784, 128, bias=False)`."""
        info = self.a.globals.models.get(name)
        if info is None or not info.takes:
            return py_name(name)
        args = [dim_py(d) for d in dims] + [f"{k}={option_py(v, where)}" for k, v in options]
        return f"{py_name(name)}.of({', '.join(args)})"

    def model(self, m: ModelInfo) -> None:
        """A model's class; for a model that takes dims and options, the
        factory that makes the class of each instance (`rt.GenericModel`)."""
        w = self.w
        base = self.base(m.decl)
        w.emit(0, "")
        w.emit(0, "")
        level = 0
        if m.takes:
            params = ", ".join([py_name(d) for d in m.dims] + [py_name(o) for o, _ in m.options])
            w.emit(0, f"def _qv_make_{m.name}({params}):", base)
            level = 1
        w.emit(level, f"class {py_name(m.name)}(rt.Model):", base)
        if m.takes:
            dims = "(" + "".join(f"{py_name(d)}, " for d in m.dims) + ")"
            chosen = "{" + ", ".join(f"{o!r}: {py_name(o)}" for o, _ in m.options) + "}"
            defaults = "{" + ", ".join(f"{o!r}: {option_py(v)}" for o, v in m.options) + "}"
            w.emit(level + 1, f"_qv_name = rt.applied_name({m.name!r}, {dims}, {chosen}, {defaults})")
        else:
            w.emit(level + 1, f"_qv_name = {m.name!r}")
        w.emit(level + 1, f"_qv_device = {m.device!r}")
        for kind in ("param", "buffer"):
            fields = [f for f in m.fields if f.kind == kind]
            conditional = any(f.when is not None for f in fields)
            if not fields:
                w.emit(level + 1, f"_qv_{kind}s = ()")
                continue
            w.emit(level + 1, f"_qv_{kind}s = tuple(f for f in (" if conditional else f"_qv_{kind}s = (")
            for f in fields:
                when = ""
                if f.when is not None:
                    test = " and ".join(f"{'' if value else 'not '}{py_name(opt)}" for opt, value in f.when)
                    when = f" if {test} else None"
                sub = sub_model(f.type)
                if sub is not None:
                    count = dim_py(f.type.dim) if isinstance(f.type, T.StackT) else None
                    cls = self.model_class(sub.name, sub.dims, sub.options, "factory")
                    w.emit(
                        level + 2,
                        f"rt.SubModel({f.name!r}, {cls}, {count}, {self.loc(base + f.decl.span.start)}){when},",
                        base + f.decl.span.start,
                    )
                    continue
                assert isinstance(f.type, T.TensorT)
                shape = "(" + ", ".join(dim_py(d) for d in f.type.dims) + ("," if f.type.rank == 1 else "") + ")"
                init = self.initializer(f.decl.init)
                w.emit(
                    level + 2,
                    f"rt.Field({f.name!r}, {shape}, {elem_expr(f.type.elem, 'factory')}, {init}, "
                    f"{self.loc(base + f.decl.span.start)}){when},",
                    base + f.decl.span.start,
                )
            w.emit(level + 1, ") if f is not None)" if conditional else ")")
        if m.takes:
            w.emit(1, f"return {py_name(m.name)}")
            w.emit(0, "")
            w.emit(0, "")
            w.emit(
                0,
                f"{py_name(m.name)} = rt.GenericModel({m.name!r}, _qv_make_{m.name}, {m.dims!r}, "
                + "("
                + "".join(f"({o!r}, {option_py(v)}), " for o, v in m.options)
                + ")"
                + (f", defaults={m.defaults!r})" if m.defaults else ")"),
                base,
            )

    def initializer(self, init: A.Expr | None) -> str:
        """A field's initializer: `rt.init.zeros`, `rt.init.normal(0.0, 0.02)`,
        `rt.init.uniform(-1.0 / rt.sqrt_of_number(I), ...)` (in a model's
        factory, its dims are the factory's arguments)."""
        if init is None:
            return "rt.init.zeros"
        name = init.name if isinstance(init, A.Name) else None
        args: tuple[A.Arg, ...] = ()
        if isinstance(init, A.Call) and isinstance(init.func, A.Name):
            name, args = init.func.name, init.args
        if name is None:
            return f"rt.init.fill({_number_text(init)})"
        params = [p for p, _, _ in INITIALIZERS.get(name, ())]
        rendered = []
        for i, a in enumerate(args):
            key = a.keyword.text if a.keyword is not None else params[i]
            value = repr(a.value.value) if isinstance(a.value, A.StrLit) else self.init_number(a.value)
            rendered.append(f"{key}={value}" if a.keyword is not None or name not in _POSITIONAL_INITS else value)
        if name in ("xavier_uniform", "xavier_normal"):
            kind = name.rpartition("_")[2]
            return f"rt.init.glorot({kind!r}, {', '.join(rendered)})" if rendered else f"rt.init.glorot_{kind}"
        if name in ("zeros", "ones", "xavier"):
            return f"rt.init.{name}"
        return f"rt.init.{name}({', '.join(rendered)})"

    def init_number(self, e: A.Expr) -> str:
        """A number of an initializer as Python: literals, dims, + - * / **, sqrt/exp/log."""
        if isinstance(e, (A.IntLit, A.FloatLit)):
            return repr(e.value)
        if isinstance(e, A.Unary):
            return f"({e.op}{self.init_number(e.operand)})"
        if isinstance(e, A.Name):
            value = self.a.globals.names.dim_values.get(e.name)
            return str(value) if value is not None else py_name(e.name)
        if isinstance(e, A.Field):
            written = dotted_text(e)
            value = self.a.globals.names.dim_values.get(written) if written is not None else None
            if value is None:
                raise CompileError(f"an initializer's dim {written} has no value")
            return str(value)
        if isinstance(e, A.Binary):
            return f"({self.init_number(e.left)} {e.op} {self.init_number(e.right)})"
        if isinstance(e, A.Call) and isinstance(e.func, A.Name):
            return f"rt.{e.func.name}_of_number({self.init_number(e.args[0].value)})"
        raise CompileError("an initializer's argument must be a number")  # pragma: no cover

    def spec(self, name: str, t: T.Type, loc: str) -> str:
        if isinstance(t, T.TensorT):
            dims = []
            for d in t.dims:
                v = T.dim_value(d)
                if v is not None:
                    dims.append(str(v))
                elif isinstance(d, T.DimExpr):  # checked at run time once its generic dims are bound
                    names = DX.generics(d.poly)
                    linear = DX.linear(d.poly, next(iter(names))) if len(names) == 1 else None
                    solve = (next(iter(names)), *linear) if linear is not None else None
                    dims.append(f"rt.DimExpr({d.text!r}, {DX.tree(d.poly)!r}, {solve!r})")
                else:
                    dims.append(repr(str(d)))
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            return f"rt.TensorArg({name!r}, {shape}, {elem_expr(t.elem, 'signature')}, {loc})"
        if isinstance(t, T.NumberT):
            kind = {"Int": "int", "Float": "float", "Bool": "bool", "Str": "str"}[t.kind]
            return f"rt.NumberArg({name!r}, {kind}, {loc})"
        if isinstance(t, T.ModelT):
            info = self.a.globals.models.get(t.name)
            generic_self = t.generic and info is not None and info.takes  # `self` of a model of options only
            if (self._fixed(t.dims) or not t.dims) and not generic_self:
                return f"rt.ModelArg({name!r}, {self.model_class(t.name, t.dims, t.options)}, {loc})"
            # an instance with generic dims: the family, its dims bound from the argument
            dims = (
                "("
                + "".join(f"{T.dim_value(d)!r}, " if T.dim_value(d) is not None else f"{str(d)!r}, " for d in t.dims)
                + ")"
            )
            options = "None" if t.generic else "{" + ", ".join(f"{k!r}: {option_py(v)}" for k, v in t.options) + "}"
            return f"rt.ModelArg({name!r}, {py_name(t.name)}, {loc}, dims={dims}, options={options})"
        if isinstance(t, T.GradT):
            wrt = "" if t.wrt is None else f", wrt={self.wrt_order(t.model, t.wrt)!r}"
            return f"rt.GradArg({name!r}, {self.fixed_class(t.of, name)}, {loc}{wrt})"
        if isinstance(t, T.StackT) and isinstance(t.item, T.GradT):
            g = t.item
            wrt = "" if g.wrt is None else f", wrt={self.wrt_order(g.model, g.wrt)!r}"
            return f"rt.GradArg({name!r}, {self.fixed_class(g.of, name)}, {loc}{wrt}, batch=True)"
        if isinstance(t, T.OptimT):
            return f"rt.OptimArg({name!r}, rt.{t.kind}, {self.fixed_class(t.of, name)}, {loc})"
        if isinstance(t, T.ModeT):
            return f"rt.ModeArg({name!r}, {loc})"
        if isinstance(t, T.TupleT):
            items = ", ".join(self.spec(f"{name}[{i}]", x, loc) for i, x in enumerate(t.items))
            return f"rt.TupleArg({name!r}, ({items}{',' if len(t.items) == 1 else ''}), {loc})"
        raise CompileError(f"no runtime check for {t}")  # pragma: no cover

    @staticmethod
    def _fixed(dims: tuple[T.Dim, ...]) -> bool:
        return all(T.dim_value(d) is not None for d in dims)

    def fixed_class(self, t: T.ModelT, what: str) -> str:
        """The class of a gradient's or an optimizer's model: its dims known."""
        if not self._fixed(t.dims):
            raise CompileError(
                f"{what}: a gradient or an optimizer of {t}, whose dims are generic, cannot be a parameter yet; "
                "give the model's dims"
            )
        return self.model_class(t.name, t.dims, t.options)

    def wrt_order(self, model: str, wrt: tuple[str, ...]) -> tuple[str, ...]:
        """A selection in the model's declaration order, as the runtime takes it."""
        info = self.a.globals.models.get(model)
        if info is None:
            return wrt
        return tuple(f.name for f in info.params if f.name in wrt)

    def signature(self, fn: FnInfo) -> str:
        base = self.base(fn.decl)
        specs = [self.spec(p.name, p.type, self.loc(base + p.decl.span.start)) for p in fn.params]
        inner = ", ".join(specs) + ("," if len(specs) == 1 else "")
        return f"rt.Signature(_src, {fn.name!r}, {self.loc(base + fn.decl.span.start)}, ({inner}))"

    def extern(self, fn: FnInfo) -> None:
        base = self.base(fn.decl)
        returns = self.spec("result", fn.ret, self.loc(base + fn.decl.span.start)) if fn.declared_ret else "None"
        self.w.emit(0, "")
        self.w.emit(
            0,
            f"{py_name(fn.name)} = rt.extern(_src, {fn.target!r}, {self.signature(fn)}, {returns}, "
            f"{self.loc(base + fn.decl.span.start)})",
            base,
        )

    def function(self, fn: FnInfo) -> None:
        w = self.w
        decl = fn.decl
        assert isinstance(decl, A.FnDecl)
        base = self.base(decl)
        body = self.a.bodies.get(decl)
        if body is None:
            raise CompileError(f"{fn.name} was not checked")
        ident = fn_ident(fn.name, fn.owner)
        sig = f"_sig_{ident}"
        w.emit(0, "")
        w.emit(0, "")
        if fn.params:
            w.emit(0, f"{sig} = {self.signature(fn)}")
            w.emit(0, "")
            w.emit(0, "")
        result_check = None
        if fn.declared_ret and _refined(fn.ret):
            assert decl.ret is not None
            result_check = f"_ret_{ident}"
            spec = self.spec("result", fn.ret, self.loc(base + decl.ret.span.start))
            w.emit(0, f"{result_check} = rt.ResultCheck(_src, {fn.name!r}, {spec})")
            w.emit(0, "")
            w.emit(0, "")
        params = ", ".join(py_name(p.name) for p in fn.params)
        at = base + decl.span.start  # (a method's offset in its model)
        w.emit(0, f"def {ident}({params}):", at)
        if fn.params:
            w.emit(1, "if rt.checks.enabled:", at)
            w.emit(2, f"{sig}.check({params})", at)
        # Generic dims the body uses as values, or as sizes of its run-time dim
        # checks, get their size from the arguments.
        used = {r.name for r in body.refs.values() if r.kind == "generic"}
        for checks in body.dim_checks.values():
            for check in checks:
                for d in (*check.dims, *(check.count or ())):
                    if d is not None and T.dim_value(d) is None:
                        used |= DX.generics(T.dim_poly(d) or DX.ZERO)
        compiler = _FnCompiler(self, fn, body, base, result_check)
        for g in fn.generics:
            if g not in used:
                continue
            source = _dim_source(fn, g)
            if source is not None:
                w.emit(1, f"{py_name(g)} = {source}", at)
                compiler.generic_sizes.add(g)
        compiler.block(decl.body, 1)


def _refined(t: T.Type) -> bool:
    """Whether a type has values the runtime checks: a tensor of a refined
    element type (Index[C] with C known, NonNeg, Prob), alone or in a tuple."""
    if isinstance(t, T.TensorT):
        e = elem_expr(t.elem)
        return e in ("rt.nonneg", "rt.prob") or e.startswith("rt.index(")
    if isinstance(t, T.TupleT):
        return any(_refined(x) for x in t.items)
    return False


def _dim_source(fn: FnInfo, g: str) -> str | None:
    """Python reading generic dim `g`'s size from an argument: `x.shape[1]`,
    or `(x.shape[1] - 1) // 2` from a dim written `(2*g+1)`; a model's dim
    from an instance given (`self._qv_dims[0]` in a method of Linear[I, O])."""
    for p in fn.params:
        if isinstance(p.type, T.ModelT):
            for i, d in enumerate(p.type.dims):
                if isinstance(d, T.DimVar) and d.name == g:
                    return f"{py_name(p.name)}._qv_dims[{i}]"
    for p in fn.params:
        if isinstance(p.type, T.TensorT):
            for i, d in enumerate(p.type.dims):
                if isinstance(d, T.DimVar) and d.name == g:
                    return f"{py_name(p.name)}.shape[{_position(p.type, i)}]"
    for p in fn.params:
        if isinstance(p.type, T.TensorT):
            for i, d in enumerate(p.type.dims):
                linear = DX.linear(d.poly, g) if isinstance(d, T.DimExpr) else None
                if linear is not None:
                    c, k = linear
                    return f"({py_name(p.name)}.shape[{_position(p.type, i)}] - {k}) // {c}"
    return None


def _position(t: T.TensorT, i: int) -> int:
    """Dim i of a tensor type as Python indexes its shape: after `[.. ` from the end."""
    return i - t.rank if T.has_rest(t) else i


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


def compile_program(analysis: Analysis, path: str, fuse_updates: bool = True) -> CompiledModule:
    """Python source for a program that checked without errors. With
    `fuse_updates=False` field updates stay plain assignments (for measuring
    what the fused `rt.field_add` saves)."""
    if analysis.errors:
        raise CompileError(f"{path} has {len(analysis.errors)} error(s); check it with qlint")
    # A flat chain of any length is written without recursion, but the passes
    # that lead to it may recurse along it.
    return deep(lambda: Compiler(analysis, path, fuse_updates).run())
