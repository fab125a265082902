"""The compiler of one function body (`_FnCompiler`): statements, field and
model updates, expressions with Python's precedence, calls of functions,
methods and built-ins (their `over=` dims resolved to axes), gradient calls."""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING

from . import ast as A
from . import dimexpr as DX
from . import types as T
from .body.features.checkpoints import OPTIONS as CHECKPOINT_OPTIONS
from .builtins import BUILTINS, CONSTANTS, Builtin, Lowering, ParamKind
from .builtins.metrics import is_metrics_call
from .builtins.walks import initializer_text
from .compile_names import CompileError, _literal_values, attr, dim_py, elem_expr, fn_ref, py_name, unchecked_ident
from .declarations import FnInfo
from .results import BodyResult, DimCheck

if TYPE_CHECKING:
    from .compiler import Compiler


# Python's precedence of Quiver's binary operators (higher binds tighter).
_PREC = {
    "or": 7,
    "and": 8,
    "|": 10,
    "&": 10.5,
    "+": 11,
    "-": 11,
    "*": 12,
    "/": 12,
    "//": 12,
    "%": 12,
    "@": 12,
    "**": 14,
}
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
        self._loops = 0  # loops around the statement being written
        self.result_check = result_check  # the rt.ResultCheck of the fn's result, if it has one
        self.generic_sizes: set[str] = set()  # generic dims the body has as locals (read from arguments)
        # an option of a model type in the body (`Net[E, flash=fl]`): a method
        # reads the instance's (`self._qv_opt_flash`); a fn generic over it, its local
        self.option_where = "factory" if fn.owner is None else "method"
        # run-time dims whose sizes the values that bind them record in `_qd`
        self.bound_run_keys = {k for binds in body.run_binds.values() for k, _, _ in binds}
        # each key's name in `_qd`: the dim's name, numbered in the order they are
        # bound (a key holds an offset, which a change of layout alone would move)
        self.run_slot: dict[str, str] = {}
        for key in sorted(self.bound_run_keys, key=lambda k: T.DimRun(k).at):
            name = T.shown_name(key)
            taken = sum(1 for v in self.run_slot.values() if v.split("#")[0] == name)
            self.run_slot[key] = f"{name}#{taken + 1}" if taken else name

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
        if isinstance(s, A.Assign) and isinstance(s.targets[0], A.Index):
            w.emit(indent, self.index_set(s.targets[0], self.expr(s.value)), at)
        elif isinstance(s, A.AugAssign) and isinstance(s.target, A.Index):
            value = f"{self.expr(s.target)} {s.op} {self.expr(s.value, 12)}"
            w.emit(indent, self.index_set(s.target, value), at)
        elif isinstance(s, A.Assign):
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
            names = ", ".join(py_name(t.text) for t in s.targets)
            sequence = self.expr(s.iter)
            if self._shows_progress(s):  # main's outermost loops: `quiver run`'s progress line
                sequence = f"rt.progress({sequence}, {s.targets[0].text!r})"
            w.emit(indent, f"for {names} in {sequence}:", at)
            self._loops += 1
            self.block(s.body, indent + 1)
            self._loops -= 1
        elif isinstance(s, A.While):
            w.emit(indent, f"while {self.cond(s.cond)}:", at)
            self._loops += 1
            self.block(s.body, indent + 1)
            self._loops -= 1
        elif isinstance(s, A.Break):
            w.emit(indent, "break", at)
        elif isinstance(s, A.Continue):
            w.emit(indent, "continue", at)
        else:
            w.emit(indent, "pass", at)

    def _shows_progress(self, s: A.For) -> bool:
        """Whether a loop gets `quiver run`'s progress line (rt.progress): a
        loop of `main` over range(...) or batches(...) that no other loop holds,
        the one a long run spends its time in. The runtime shows it only when
        the loop runs long, and never outside `quiver run`."""
        if self.fn.name != "main" or self.fn.owner is not None or self._loops:
            return False
        it = s.iter
        if not (isinstance(it, A.Call) and isinstance(it.func, A.Name) and it.func.name in ("range", "batches")):
            return False
        ref = self.body.refs.get(it.func)
        return ref is not None and ref.kind == "builtin"

    def index_set(self, target: A.Index, value: str) -> str:
        """`x[i] = e` on a local: `x = rt.index_set(x, rt.at[i], e)`, a new
        tensor (clone on write: Quiver values are values, and a tensor saved
        for backward must not change); `m.buf[t] = e` on a model's field:
        `rt.field_index_set(m, "buf", rt.at[t], e)`, in place."""
        key = f"rt.at[{self.subscripts(target.index)}]"
        base = target.value
        if isinstance(base, A.Field):
            return f"rt.field_index_set({self.expr(base.value, 16)}, {base.name.text!r}, {key}, {value})"
        return f"{self.target(base)} = rt.index_set({self.expr(base)}, {key}, {value})"

    def subscripts(self, index: A.Expr | A.Slice | A.Subscripts) -> str:
        """What Python's brackets hold for a Quiver subscript: torch takes
        the same ints, slices, `...` and index tensors."""
        items = index.items if isinstance(index, A.Subscripts) else (index,)
        out = []
        for item in items:
            if isinstance(item, A.Slice):
                start = self.expr(item.start) if item.start is not None else ""
                end = self.expr(item.end) if item.end is not None else ""
                step = f":{self.expr(item.step)}" if item.step is not None else ""
                out.append(f"{start}:{end}{step}")
            elif isinstance(item, A.EllipsisItem):
                out.append("...")
            else:
                assert not isinstance(item, A.Arg)  # an option is only in a model's type
                out.append(self.expr(item))
        return ", ".join(out) + ("," if len(items) == 1 and isinstance(index, A.Subscripts) else "")

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
                if not check.reader:  # a reader's are its sizes= (reader_args)
                    text, prec = self.dim_check(e, check, text), 16
            binds = self.body.run_binds.get(e)
            if binds:  # the value gives the sizes of the run-time dims it binds
                slots = tuple((self.run_slot[k], item, axis) for k, item, axis in binds)
                text, prec = f"rt.bind_dims(_qd, {text}, {slots!r})", 16
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
        item = "" if check.item is None else f", item={check.item}"
        return f"rt.expect_dims({value}, {self.sizes(check.dims)}, {where}{item})"

    def run_size(self, d: T.DimRun) -> str:
        """Python for the size of a named run-time dim: the Int it was made
        from, or what the value that bound it recorded (None where no value
        of this run bound it yet: nothing is checked then)."""
        origin = self.body.run_dims.get(d.key)
        if origin is not None and origin.var is not None:
            return py_name(origin.var)
        if d.key in self.bound_run_keys:
            return f"_qd.get({self.run_slot[d.key]!r})"
        return "None"

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
            elif isinstance(d, T.DimRun):
                out.append(self.run_size(d))
            elif isinstance(d, T.DimExpr) and DX.generics(d.poly) <= self.generic_sizes:
                out.append(DX.python(d.poly, py_name))
            elif (
                isinstance(d, T.DimExpr)
                and {g for g in DX.generics(d.poly) if T.RUN_MARK not in g} <= self.generic_sizes
            ):
                out.append(self.dim_value(d))  # arithmetic of run-time dims: `(8*r)` of an Int r
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
        if isinstance(e, A.FString):
            return self.fstring(e), 16
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
                return self.c.model_class(t.name, t.dims, t.options, self.option_where, self.dim_value), 16
            return f"{self.expr(e.value, 16)}[{self.subscripts(e.index)}]", 16
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
            if isinstance(self.type_of(e), T.ListT):  # `[]`, `[h]`: a Python list
                return "[" + ", ".join(py_name(d.name) for d in e.dims if isinstance(d, A.DimName)) + "]", 20
            return self.shape(e), 20
        if isinstance(e, (A.TensorLit, A.NameList)):
            t = self.type_of(e)
            assert isinstance(t, T.TensorT)
            return f"rt.tensor({self.literal_values(e)}, {elem_expr(t.elem)})", 16
        raise CompileError(f"cannot compile {type(e).__name__}")  # pragma: no cover

    def fstring(self, e: A.FString) -> str:
        """`f"loss {l:.4f}"` as `rt.fstring("loss ", rt.f_format(l, ".4f"))` (runtime/_format.py)."""
        parts = []
        for p in e.parts:
            if isinstance(p, A.StrLit):
                parts.append(repr(p.value))
                continue
            value = self.expr(p.value)
            if p.conversion == "t":
                hint = type_hint(self.type_of(p.value))
                value = f"rt.f_type({value})" if hint is None else f"rt.f_type({value}, {hint!r})"
                parts.append(f"format({value}, {p.spec!r})" if p.spec else value)
            elif p.spec:
                parts.append(f"rt.f_format({value}, {p.spec!r})")
            else:
                parts.append(f"rt.f_show({value})")
        return f"rt.fstring({', '.join(parts)})"

    def literal_values(self, e: A.TensorLit | A.NameList) -> str:
        """A tensor literal as nested Python lists: of numbers, or of the
        names of plain numbers (`[x, y]`)."""
        if isinstance(e, A.NameList):
            return "[" + ", ".join(self.name(n) for n in e.items) + "]"
        return _literal_values(e)

    def name(self, e: A.Name) -> str:
        if e.name == "None" and isinstance(self.type_of(e), T.NoneT):
            return "None"  # an optional parameter's None (`top_k is None`)
        ref = self.body.refs.get(e)
        if ref is not None and ref.kind == "builtin" and e.name in CONSTANTS:
            return f"rt.{e.name}"  # rt.Eval, rt.inf, rt.pi
        if ref is not None and ref.kind == "option" and self.fn.owner is not None:  # `bias` in a method
            return f"self._qv_opt_{e.name}"
        if ref is not None and ref.kind == "size":  # a run-time dim's size: `randperm(n, seed=0)`
            return self.run_size(T.DimRun(ref.name))
        if ref is not None and ref.kind in ("dim", "const", "fn", "extern", "model"):
            return py_name(ref.name)  # an imported name (`fwd`) as the qualified one
        return py_name(e.name)

    def trait_args(self, info: FnInfo, args: list[tuple[str | None, A.Expr]]) -> list[str]:
        """The arguments of a trait's method called on `m: M`, positional in
        the trait's order (the model's method may name its parameters
        otherwise); after a left-out parameter (its default), by keyword."""
        given = [v for k, v in args if k is None]
        named = {k: v for k, v in args if k is not None}
        out: list[str] = []
        for i, p in enumerate(info.params[1:]):
            v = given[i] if i < len(given) else named.pop(p.name, None)
            if v is None:
                break
            out.append(self.expr(v))
        return out + [f"{py_name(k)}={self.expr(v)}" for k, v in named.items()]

    def type_param_class(self, name: str) -> str:
        """The model class a type parameter (`M` of `fn f[M: CharModel]`)
        stands for in this call: that of the first parameter of type M,
        Grad[M] or an optimizer of M (the checker binds M from it)."""
        for p in self.fn.params:
            t = p.type
            if isinstance(t, T.ModelT) and t.bound and t.name == name:
                return f"type({py_name(p.name)})"
            if isinstance(t, T.GradT) and t.bound and t.model == name:
                return f"{py_name(p.name)}._qv_model"
            if isinstance(t, T.OptimT) and t.bound and t.model == name:
                return f"{py_name(p.name)}._qv_cls"
        raise CompileError(f"type parameter {name} has no parameter of its type")  # pragma: no cover

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
                run = resolved.dims[i] if isinstance(resolved, T.TensorT) and i < resolved.rank else None
                if isinstance(run, T.DimRun) and run.key in self.bound_run_keys:
                    dims.append(f"_qd[{self.run_slot[run.key]!r}]")  # bound by a reader or a cast of this body
                else:
                    dims.append(py_name(d.name))
            else:  # dim arithmetic: its value, or Python computing it from generic dims
                assert isinstance(resolved, T.TensorT)
                dims.append(self.dim_value(resolved.dims[i]))
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"

    def call(self, node: A.Node, func: A.Expr, args: list[tuple[str | None, A.Expr]]) -> str:
        method = self.method_of(func)
        if method is not None:  # l.forward(x), l(x): the method's function, with l as self
            info, recv = method
            owner = self.c.a.globals.models.get(info.owner or "")
            if owner is not None and owner.trait:  # m.forward(x) of m: M: the model's own method, checked
                rendered = ", ".join(self.trait_args(info, args))
                short = info.name.rpartition(".")[2]
                return f"{self.expr(recv, 16)}.{short}({rendered})"
            rendered = ", ".join(
                [self.expr(recv)] + [f"{py_name(k)}={self.expr(v)}" if k else self.expr(v) for k, v in args]
            )
            return f"{fn_ref(info.name, info.owner, unchecked=bool(info.params))}({rendered})"
        qualified = self.global_of(func)
        if qualified is not None:  # layers.forward(m, x)
            rendered = ", ".join(f"{py_name(k)}={self.expr(v)}" if k else self.expr(v) for k, v in args)
            return f"{qualified}({rendered})"
        if isinstance(func, A.Field) and func.name.text == "init" and isinstance(self.type_of(func.value), T.TensorT):
            # p.init(normal(0.0, 0.02)): a walked param, in place (checker/builtins/walks.py)
            return f"rt.init_param({self.expr(func.value)}, {initializer_text(args[0][1], self.expr)})"
        if isinstance(func, A.Field):  # Mlp.init(seed=...), opt.step(m, g)
            rendered = ", ".join(f"{k}={self.expr(v)}" if k else self.expr(v) for k, v in args)
            made = self.type_of(func)
            if isinstance(made, T.ModelClassT) and not isinstance(func.value, A.Index):
                # nn.Dropout.init(seed=0), a model that takes only dims with defaults: that instance's class
                info = self.c.a.globals.models.get(made.name)
                if info is not None and info.takes:
                    return f"{self.c.model_class(made.name, made.dims, made.options, self.option_where, self.dim_value)}.{func.name.text}({rendered})"
            return f"{self.expr(func.value, 16)}.{func.name.text}({rendered})"
        assert isinstance(func, A.Name)
        ref = self.body.refs.get(func)
        if ref is None and func.name in ("zip", "enumerate"):  # a `for` over tuples or lists: Python's own
            return f"{func.name}({', '.join(self.expr(v) for _, v in args)})"
        if ref is not None and ref.kind == "builtin":
            return self.builtin(node, func.name, args)
        rendered = ", ".join(f"{py_name(k)}={self.expr(v)}" if k else self.expr(v) for k, v in args)
        if ref is not None and ref.kind == "fn" and "." not in ref.name:
            info = self.c.a.globals.fns.get(ref.name)
            if info is not None and info.params and not info.extern and info.owner is None:
                # a fn of this module: its body, the arguments proved by the checker
                return f"{unchecked_ident(py_name(ref.name))}({rendered})"
        return f"{self.name(func)}({rendered})"

    def builtin(self, node: A.Node, name: str, args: list[tuple[str | None, A.Expr]]) -> str:
        """A call to a built-in, lowered as its spec says (checker/builtins/)."""
        b = BUILTINS[name]
        if b.lowering is Lowering.GRADIENT:
            return self.gradient_call(node, name, args)
        if b.lowering is Lowering.METRICS and is_metrics_call(args):
            # log(step, loss=l): the metrics, by name (a dict: a metric may be called `step`)
            metrics = ", ".join(f"{k!r}: {self.expr(v)}" for k, v in args if k is not None)
            return f"rt.log_metrics({self.expr(args[0][1])}, {{{metrics}}}, _src)"
        if b.lowering is Lowering.CHECKPOINT:
            return self.checkpoint_call(node, b.runtime, args)
        if b.lowering is Lowering.WEIGHTS:
            return self.weights_call(node, b.runtime, args)
        result = self.type_of(node)
        if b.grad_runtime is not None and args and T.is_example_grads(self.type_of(args[0][1])):
            return f"rt.{b.grad_runtime}({self.expr(args[0][1])})"  # mean/sum over the examples of [b] Grad[M]
        if b.grad_runtime is not None and isinstance(result, T.GradT):  # zeros(Grad[M]), randn(Grad[M], seed=s)
            model = (
                self.type_param_class(result.model)
                if result.bound
                else self.c.model_class(result.model, result.dims, result.options, self.option_where, self.dim_value)
            )
            seed = [f"seed={self.expr(v)}" for k, v in args if k == "seed"]
            return f"rt.{b.grad_runtime}(" + ", ".join([model, *seed]) + ")"
        func = f"rt.{b.runtime}" if b.runtime is not None else name
        positional = [v for k, v in args if k is None]
        if b.number_runtime is not None and positional and isinstance(self.type_of(positional[0]), T.NumberT):
            func = f"rt.{b.number_runtime}"  # decided here, so the tensor path is torch's function itself
            if b.variadic:  # max(a, b, ...) of numbers: every argument, as Python's
                return f"{func}(" + ", ".join(self.expr(v) for v in positional) + ")"
        keywords = {k: v for k, v in args if k is not None}
        if b.lowering is Lowering.READER:
            return f"{func}({self.reader_args(node, b, positional, keywords)})"
        if b.lowering in (Lowering.SHAPE, Lowering.SHAPE_INDEX):
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
            elif (
                isinstance(v, A.Binary)
                and p.name in b.dim_args
                and isinstance(result, T.TensorT)
                and not (name == "arange" and len(args) > 1)  # arange(start, stop): + - * only, as Python's
            ):
                # a dim argument (arange(n), one_hot(y, over=C)) written as dim arithmetic, `/` floored
                # (arange((T/2))): the dim's size, which the result's last dim holds
                rendered = self.dim_value(result.dims[-1])
            else:
                rendered = self.expr(v)
            if p.keyword_only:
                named.append(f"{p.name}={rendered}")
            else:
                values.append(rendered)
        if b.variadic:  # extra arguments, before the keyword ones (print's all_ranks=)
            values.extend(self.expr(v) for v in positional[len([p for p in b.params if not p.keyword_only]) :])
        if b.extra_keywords:  # rearrange's sizes, by name
            sizes = [f"{k!r}: {self.expr(v)}" for k, v in args if k is not None and k not in {p.name for p in b.params}]
            values.append("{" + ", ".join(sizes) + "}")
        return f"{func}(" + ", ".join(values + named) + ")"

    def weights_call(self, node: A.Node, runtime: str | None, args: list[tuple[str | None, A.Expr]]) -> str:
        """`rt.load_weights(m, path, prefix=.., ..., src=_src, line=.., col=..)` and
        `rt.load_tokenizer(path, V, ...)`: the arguments as written, `dtype=f32` as
        the Str "f32", and the `.qv` position of the call."""
        parts = []
        for k, v in args:
            text = repr(v.name) if k == "dtype" and isinstance(v, A.Name) else self.expr(v)
            parts.append(f"{k}={text}" if k else text)
        at = self.c.a.lines.position(self.at(node))
        return f"rt.{runtime}(" + ", ".join([*parts, f"src=_src, line={at.line + 1}, col={at.column + 1}"]) + ")"

    def checkpoint_call(self, node: A.Node, runtime: str | None, args: list[tuple[str | None, A.Expr]]) -> str:
        """`rt.save_checkpoint(path, value, entries, ...)` / `rt.load_checkpoint(...)`:
        the one positional value or None, the keyword values as a dict or
        None, load's options, and the `.qv` position of the call."""
        positional = [self.expr(v) for k, v in args if k is None]
        options = [f"{k}={self.expr(v)}" for k, v in args if k in CHECKPOINT_OPTIONS]
        entries = [f"{k!r}: {self.expr(v)}" for k, v in args if k is not None and k not in CHECKPOINT_OPTIONS]
        value = positional[1] if len(positional) > 1 else "None"
        mapping = "{" + ", ".join(entries) + "}" if entries else "None"
        at = self.c.a.lines.position(self.at(node))
        where = f"src=_src, line={at.line + 1}, col={at.column + 1}"
        return f"rt.{runtime}(" + ", ".join([positional[0], value, mapping, *options, where]) + ")"

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
        if isinstance(positional[0], A.Name) and not info.extern and info.owner is None and "." not in info.name:
            parts[0] = unchecked_ident(py_name(info.name))  # its arguments are proved here
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

    def reader_args(self, node: A.Node, b: Builtin, positional: list[A.Expr], keywords: dict[str, A.Expr]) -> str:
        """A reader's arguments: its values in order, the shape as the spec
        the file is checked against (dims known only at run time by name:
        the checker added a check of those bound before), then the options
        and the `.qv` position of the call."""
        values: list[str] = []
        named: list[str] = []
        for i, p in enumerate(b.params):
            v = keywords.get(p.name, positional[i] if i < len(positional) and not p.keyword_only else None)
            if v is None:
                continue
            if p.kind is ParamKind.SHAPE:
                t = self.type_of(v)
                assert isinstance(t, T.TensorT)
                rendered = self.c.spec(b.name, t, "None")
            else:
                rendered = self.expr(v)
            (named if p.keyword_only else values).append(f"{p.name}={rendered}" if p.keyword_only else rendered)
        if b.variadic:  # batches(x, y, ...): the tensors, before the options
            values.extend(self.expr(v) for v in positional[len([p for p in b.params if not p.keyword_only]) :])
        for check in self.body.dim_checks.get(node, ()):
            if check.reader:  # dims bound before: checked by the reader, whose message names the file
                named.append(f"sizes={self.sizes(check.dims)}")
        at = self.c.a.lines.position(self.at(node))
        named.append(f"src=_src, line={at.line + 1}, col={at.column + 1}")
        return ", ".join(values + named)

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
        """A dim's size in Python, a run-time dim's (or arithmetic of one) included."""
        if isinstance(d, T.DimRun):
            return self.run_size(d)
        if isinstance(d, T.DimExpr) and T.run_keys(d):
            name = lambda k: f"({self.run_size(T.DimRun(k))})" if T.RUN_MARK in k else py_name(k)
            return DX.python(d.poly, name)
        return dim_py(d)


def type_hint(t: T.Type) -> str | tuple | None:
    """What `{x!t}` shows of a value's type that the value itself does not
    say (runtime/_format.f_type): a tensor's element type as written
    (`Index[C]`, `NonNeg`), a model's or gradient's type, per item of a
    tuple; None where the value says it all (a number) or it is not known
    statically (an element type chosen by a model's option)."""
    if isinstance(t, T.TensorT):
        if t.elem.var is not None:
            return None
        index = t.elem.index
        return f"Index[{index.text}]" if isinstance(index, T.DimExpr) else str(t.elem)
    if isinstance(t, T.TupleT):
        hints = tuple(type_hint(i) for i in t.items)
        return hints if any(h is not None for h in hints) else None
    if isinstance(t, (T.ModelT, T.GradT)):
        return str(t)
    return None
