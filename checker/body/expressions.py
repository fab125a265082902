"""Expressions: names, operators with broadcasting and refinements, field
access, indexing, casts and types written in a body."""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
# (the methods of these parts annotate self with BodyChecker, the class they
# are composed into, so each part sees the whole checker; pyright calls that
# a general type issue.)
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import shapes as S
from .. import types as T
from ..builtins import BUILTINS, CONSTANTS
from ..declarations import ALL_NAMES, NUMBER_TYPES, TypeContext, dotted_text, suggest, type_text
from ..diagnostics import LocalRelated, SymbolRef
from ..results import ReadFact, Ref
from .env import Env, Var
from .text import expr_text

if TYPE_CHECKING:
    from .core import BodyChecker


class ExpressionRules:
    # -------------------------------------------------------------- expressions

    def value(self: BodyChecker, e: A.Expr, env: Env) -> T.Type:
        """An expression whose result is used as a value."""
        return self.as_value(e, self.expr(e, env))

    def as_value(self: BodyChecker, e: A.Expr, t: T.Type) -> T.Type:
        """`t`, the type of `e`, used as a value: a function, a model or a
        module by itself is not one (E0110)."""
        if isinstance(t, (T.FnRefT, T.BuiltinRefT, T.ModelClassT, T.ModuleT)):
            if isinstance(t, T.FnRefT):
                kind = "a function"
            elif isinstance(t, T.BuiltinRefT):
                kind = "a built-in function"
            elif isinstance(t, T.ModuleT):
                kind = "a module"
            else:
                kind = "a model"
            hint = ""
            if isinstance(t, T.ModelClassT):
                hint = f"; create one with {t.name}.init(seed=0)"
            self.diags.append(C.E0110.at(e.span, name=expr_text(e), kind=kind, use=f"a value{hint}"))
            return T.UNKNOWN
        if isinstance(t, T.UnitT):
            self.diags.append(C.E0406.at(e.span, what=expr_text(e)))
            return T.UNKNOWN
        if isinstance(t, T.RangeT):
            self.diags.append(C.E0414.at(e.span, found="range(...) outside a for loop"))
            return T.UNKNOWN
        return t

    def expr(self: BodyChecker, e: A.Expr, env: Env) -> T.Type:
        t = self._expr(e, env)
        self.types[e] = t
        return t

    def _expr(self: BodyChecker, e: A.Expr, env: Env) -> T.Type:
        if isinstance(e, A.Name):
            return self.name(e, env)
        if isinstance(e, A.IntLit):
            return T.NumberT("Int", e.value >= 0)
        if isinstance(e, A.FloatLit):
            return T.NumberT("Float", e.value >= 0)
        if isinstance(e, A.StrLit):
            return T.STR
        if isinstance(e, A.BoolLit):
            return T.BOOL_N
        if isinstance(e, A.TupleExpr):
            items = []
            for x in e.items:
                items.append(self.value(x, env))
                self.escape_if_model(x, env, "put in a tuple")
            return T.TupleT(tuple(items))
        if isinstance(e, A.Unary):
            return self.unary(e, env)
        if isinstance(e, A.Binary):
            lt = self.value(e.left, env)
            rt = self.value(e.right, env)
            return self.binary_types(e.op, lt, rt, e.left, e.right, e.op_span, e)
        if isinstance(e, A.Compare):
            return self.compare(e, env)
        if isinstance(e, A.BoolOp):
            for side in (e.left, e.right):
                self.boolean(side, env, e.op)
            return T.BOOL_N
        if isinstance(e, A.Not):
            self.boolean(e.operand, env, "not")
            return T.BOOL_N
        if isinstance(e, A.Call):
            return self.call(e, e.func, e.args, env, None)
        if isinstance(e, A.Pipe):
            return self.pipe(e, env)
        if isinstance(e, A.Field):
            return self.field_access(e, env)
        if isinstance(e, A.Index):
            return self.index(e, env)
        if isinstance(e, A.Cast):
            return self.cast(e, env)
        if isinstance(e, A.TensorLit):
            return self.tensor_lit(e)
        if isinstance(e, A.NameList):
            return self.name_list_lit(e, env)
        if isinstance(e, A.TensorType):
            self.diags.append(
                C.E0301.at(
                    e.span,
                    context="",
                    expected="a value",
                    found=f"the shape {expr_text(e)} (shapes are arguments of randn, zeros, ...)",
                )
            )
            return T.UNKNOWN
        return T.UNKNOWN  # pragma: no cover

    def name(self: BodyChecker, e: A.Name, env: Env) -> T.Type:
        var = env.vars.get(e.name)
        if var is not None and var.phantom:
            return T.UNKNOWN
        if var is not None:
            if var.param is not None and var.defs == frozenset({var.param.decl}):
                self.refs[e] = Ref("param", e.name, self.fn.name, (var.param.decl,))
            else:
                self.refs[e] = Ref("local", e.name, self.fn.name, tuple(sorted(var.defs, key=lambda d: d.span.start)))
            self.used.update(var.defs)
            if var.maybe_unbound and ("var", e.name) not in self.reported_once and not self.partial:
                self.reported_once.add(("var", e.name))
                first = min(var.defs, key=lambda d: d.span.start, default=None)
                related = (LocalRelated(f"'{e.name}' is assigned here", span=first.span),) if first is not None else ()
                self.diags.append(C.E0103.at(e.span, name=e.name, related=related))
            return var.type
        if e.name in self.fn.generics:
            self.refs[e] = Ref("generic", e.name, self.fn.name)
            return T.NumberT("Int", True)
        if e.name in self.model_options:  # `bias` in a method of Linear[I, O, bias: Bool = True]
            self.refs[e] = Ref("option", e.name, self.fn.owner)
            default = self.model_options[e.name]
            if isinstance(default, str):  # a DType option: an element type, as in `zeros([b H] dtype)`
                self.diags.append(
                    C.E0110.at(e.span, name=e.name, kind="an element type (a DType option)", use="a value")
                )
                return T.UNKNOWN
            return T.BOOL_N if isinstance(default, bool) else T.NumberT("Float")
        return self.global_name(e, env)

    def global_name(self: BodyChecker, e: A.Name, env: Env) -> T.Type:
        """A name that is no local, generic dim or option: a global, a
        constant or a built-in (E0101 when it is none)."""
        kind = self.global_kind(e.name)
        if kind is not None:
            return self.global_value(e, e.name, kind)
        if e.name in CONSTANTS:
            self.refs[e] = Ref("builtin", e.name)
            return T.MODE if e.name == "Eval" else T.NumberT("Float", True)  # inf, pi
        if e.name in BUILTINS:
            self.refs[e] = Ref("builtin", e.name)
            return T.BuiltinRefT(e.name)
        if e.name in self.recovered:
            return T.UNKNOWN
        candidates = self.all_names(env)
        hint = suggest(e.name, candidates)
        self.diags.append(C.E0101.at(e.span, name=e.name, hint=hint))
        # The variable the typo meant is not "unused" (one mistake, one diagnostic).
        for name in env.vars:
            if hint == suggest(e.name, [name]) and hint:
                self.used.update(env.vars[name].defs)
        # Define it from here on, so one typo gives one diagnostic.
        env.vars[e.name] = Var(T.UNKNOWN, frozenset(), phantom=True)
        return T.UNKNOWN

    def global_value(self: BodyChecker, node: A.Node, written: str, kind: str) -> T.Type:
        """The value of a global name as written (`f`, `Mlp`, `layers.H`):
        types and refs carry its qualified name (`layers.H`)."""
        name = self.g.names.canonical(written)
        if kind == "dim":
            self.refs[node] = Ref("dim", name)
            return T.NumberT("Int", True)
        if kind in ("fn", "extern"):
            self.refs[node] = Ref(kind, name)
            return T.FnRefT(name, kind == "extern")
        if kind == "model":
            self.refs[node] = Ref("model", name)
            return T.ModelClassT(name, applied=name not in self.g.names.model_sigs)
        if kind in ("module", "package"):
            self.refs[node] = Ref("module", written)
            return T.ModuleT(written)
        return T.UNKNOWN  # a broken item or import: its errors are reported there

    def module_member(self: BodyChecker, e: A.Field, module: T.ModuleT) -> T.Type:
        """`layers.forward`, `nn.layers`: a name through an imported module."""
        member = e.name.text
        written = f"{module.name}.{member}"
        kind = self.written_kind(written)
        if kind is not None:
            return self.global_value(e.name, written, kind)
        names = self.g.names
        qual = names.modules.get(module.name)
        if member.startswith("_") and qual is not None and f"{qual}.{member}" in names.imported:
            self.diags.append(C.E0116.at(e.name.span, name=member, module=module.name))
            return T.UNKNOWN
        prefix = module.name + "."
        members = [n[len(prefix) :] for n in names.kinds if n.startswith(prefix)]
        self.global_kind(ALL_NAMES)
        self.diags.append(C.E0115.at(e.name.span, module=module.name, name=member, hint=suggest(member, members)))
        return T.UNKNOWN

    def origin_of(self: BodyChecker, e: A.Expr, env: Env) -> str | None:
        """The model parameter an expression is (`m`), or a sub-model of
        it, as a path (`m.enc`; `m.blocks` for any block of a stack)."""
        if isinstance(e, A.Name):
            var = env.vars.get(e.name)
            if var is not None:
                return var.origin
            return None
        if isinstance(e, A.Field) and isinstance(self.types.get(e.name), (T.ModelT, T.StackT)):
            base = self.origin_of(e.value, env)
            return f"{base}.{e.name.text}" if base is not None else None
        if isinstance(e, A.Index) and isinstance(self.types.get(e.value), T.StackT):
            return self.origin_of(e.value, env)
        return None

    def path_fact(self: BodyChecker, kind: str, origin: str, target: str, span: A.Span, index: int = 0) -> None:
        """A read fact of a model parameter given by a path origin (`m.enc`):
        the fact is the parameter's, with the sub-model path as a prefix."""
        param, _, prefix = origin.partition(".")
        if kind == "field":
            self.fact(ReadFact("field", param, f"{prefix}.{target}" if prefix else target, span))
        else:
            self.fact(ReadFact(kind, param, target, span, index, f"{prefix}." if prefix else ""))  # type: ignore[arg-type]

    def fact(self: BodyChecker, f: ReadFact) -> None:
        """Record a use of a model parameter; nothing under stop_grad(...)
        is differentiated, so reads there (direct or through calls) do not count."""
        if self.stop_grad_depth == 0:
            self.facts.add(f)
        elif f.kind in ("field", "call"):
            kind = "sg_field" if f.kind == "field" else "sg_call"
            self.facts.add(ReadFact(kind, f.param, f.target, f.span, f.index, f.prefix))

    def escape_if_model(self: BodyChecker, e: A.Expr, env: Env, why: str) -> None:
        origin = self.origin_of(e, env)
        if origin is not None:
            self.path_fact("escape", origin, why, e.span)

    # -- operators

    def unary(self: BodyChecker, e: A.Unary, env: Env) -> T.Type:
        t = self.value(e.operand, env)
        if isinstance(t, T.UnknownT):
            return t
        if e.op == "~":  # not, elementwise, of a Bool tensor (or a Bool)
            if (isinstance(t, T.TensorT) and t.elem.is_bool) or t == T.BOOL_N:
                return t
            self.diags.append(
                C.E0306.at(
                    e.span, op="'~'", left=T.describe(t), right="", detail="; ~ is elementwise not, of Bool values"
                )
            )
            return T.UNKNOWN
        if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
            return T.NumberT(t.kind, t.nonneg and e.op == "+")
        if isinstance(t, T.TensorT) and not t.elem.is_bool:
            if e.op == "+":
                return t
            elem = t.elem.plain() if t.elem.index is None else T.Elem(t.elem.dtype)
            return T.TensorT(t.dims, elem)
        if isinstance(t, T.GradT) or T.is_example_grads(t):
            return t
        self.diags.append(C.E0306.at(e.span, op=f"unary '{e.op}'", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN

    def bool_elementwise(self: BodyChecker, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
        """`a & b`, `a | b`: elementwise and, or of Bool tensors (broadcast),
        or of Bools (`and`/`or` are for conditions)."""

        def boolean(t: T.Type) -> bool:
            return (isinstance(t, T.TensorT) and t.elem.is_bool) or t == T.BOOL_N

        if not (boolean(lt) and boolean(rt)):
            word = "and" if op == "&" else "or"
            self.diags.append(
                C.E0306.at(
                    node.span,
                    op=f"'{op}'",
                    left=T.describe(lt),
                    right=" and " + T.describe(rt),
                    detail=f"; {op} is elementwise {word} of Bool values (compare first: (x > 0) {op} (y > 0))",
                )
            )
            return T.UNKNOWN
        if isinstance(lt, T.NumberT) and isinstance(rt, T.NumberT):
            return T.BOOL_N
        ld = lt.dims if isinstance(lt, T.TensorT) else ()
        rd = rt.dims if isinstance(rt, T.TensorT) else ()
        dims = S.broadcast(ld, rd)
        if isinstance(dims, S.DimClash):
            self.diags.append(
                C.E0202.at(node.span, op=op, left=str(lt), right=str(rt), a=str(dims.left), b=str(dims.right))
            )
            return T.UNKNOWN
        return T.TensorT(dims, T.BOOL)

    def binary_types(
        self: BodyChecker, op: str, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span, node: A.Node
    ) -> T.Type:
        if isinstance(lt, T.UnknownT) or isinstance(rt, T.UnknownT):
            return T.UNKNOWN
        if T.is_example_grads(lt) or T.is_example_grads(rt):
            return self.example_grad_arith(op, lt, rt, node)
        if isinstance(lt, T.GradT) or isinstance(rt, T.GradT):
            return self.grad_arith(op, lt, rt, node)
        if op == "@":
            return self.matmul(lt, rt, left, right, op_span, node)
        if op in ("&", "|"):
            return self.bool_elementwise(op, lt, rt, node)
        if isinstance(lt, T.NumberT) and isinstance(rt, T.NumberT):
            return self.number_arith(op, lt, rt, node, right)
        lt_ok = isinstance(lt, (T.TensorT, T.NumberT))
        rt_ok = isinstance(rt, (T.TensorT, T.NumberT))
        if not (lt_ok and rt_ok):
            self.diags.append(
                C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt), detail="")
            )
            return T.UNKNOWN
        # tensor with tensor or number
        elem_l = lt.elem if isinstance(lt, T.TensorT) else None
        elem_r = rt.elem if isinstance(rt, T.TensorT) else None
        for el, side in ((elem_l, lt), (elem_r, rt)):
            if el is not None and el.is_bool:
                self.diags.append(
                    C.E0306.at(
                        node.span,
                        op=f"'{op}'",
                        left=T.describe(lt),
                        right=" and " + T.describe(rt),
                        detail="; Bool tensors take no arithmetic",
                    )
                )
                return T.UNKNOWN
            if isinstance(side, T.NumberT) and side.kind not in ("Int", "Float"):
                self.diags.append(
                    C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt), detail="")
                )
                return T.UNKNOWN
        if elem_l is not None and elem_r is not None and elem_l.dtype != elem_r.dtype:
            self.diags.append(
                C.E0302.at(
                    node.span,
                    context=f"'{op}' needs one element type on both sides: ",
                    expected=lt.show_elem(),
                    found=rt.show_elem(),
                )
            )
            return T.UNKNOWN
        tensor_elem = elem_l or elem_r
        assert tensor_elem is not None
        number = lt if isinstance(lt, T.NumberT) else rt if isinstance(rt, T.NumberT) else None
        if number is not None and number.kind == "Float" and not tensor_elem.is_float:
            tensor = lt if isinstance(lt, T.TensorT) else rt
            context = f"'{op}' of an integer tensor and a Float: "
            if op == "**" and isinstance(tensor, T.TensorT):  # torch would promote; Quiver casts explicitly
                side = left if tensor is lt else right
                text = expr_text(side) if isinstance(side, (A.Name, A.Field)) else "(...)"
                cast = f"{text} as {T.TensorT(tensor.dims, T.F32)} f32"
                context = f"'**' of an integer tensor and a Float; cast the tensor to a float type first: `{cast}`: "
            self.diags.append(
                C.E0302.at(
                    node.span,
                    context=context,
                    expected=tensor.show_elem(),
                    found="Float",
                )
            )
            return T.UNKNOWN
        ld = lt.dims if isinstance(lt, T.TensorT) else ()
        rd = rt.dims if isinstance(rt, T.TensorT) else ()
        dims = S.broadcast(ld, rd)
        if isinstance(dims, S.DimClash):
            self.diags.append(
                C.E0202.at(node.span, op=op, left=str(lt), right=str(rt), a=str(dims.left), b=str(dims.right))
            )
            return T.UNKNOWN
        self.broadcast_warnings(node, op, lt, rt, dims)
        if op == "/" and tensor_elem.is_int:
            self.diags.append(
                C.E0310.at(
                    node.span, what=f"'/' on {T.describe(lt if elem_l else rt)}", hint="; cast to a float type first"
                )
            )
            return T.UNKNOWN
        refine = refine_arith(op, lt, rt, right)
        if op == "*" and refine is None and A.same_path(left, right):
            refine = "nonneg"  # x * x
        elem = T.Elem(tensor_elem.dtype, refine if tensor_elem.is_float else None)
        return T.TensorT(dims, elem)

    def number_arith(self: BodyChecker, op: str, lt: T.NumberT, rt: T.NumberT, node: A.Node, right: A.Expr) -> T.Type:
        if lt.kind not in ("Int", "Float") or rt.kind not in ("Int", "Float"):
            if op == "+" and lt.kind == rt.kind == "Str":
                return T.STR
            self.diags.append(
                C.E0306.at(node.span, op=f"'{op}'", left=T.describe(lt), right=" and " + T.describe(rt), detail="")
            )
            return T.UNKNOWN
        kind = "Float" if "Float" in (lt.kind, rt.kind) or op == "/" else "Int"
        nonneg = refine_arith(op, lt, rt, right) is not None
        return T.NumberT(kind, nonneg)

    def matmul(
        self: BodyChecker, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span, node: A.Node
    ) -> T.Type:
        if not isinstance(lt, T.TensorT) or not isinstance(rt, T.TensorT):
            self.diags.append(
                C.E0306.at(
                    node.span,
                    op="'@'",
                    left=T.describe(lt),
                    right=" and " + T.describe(rt),
                    detail="; @ multiplies two tensors",
                )
            )
            return T.UNKNOWN
        if not lt.elem.is_float or not rt.elem.is_float:
            bad = lt if not lt.elem.is_float else rt
            self.diags.append(C.E0310.at(node.span, what=f"'@' on {T.describe(bad)}", hint=""))
            return T.UNKNOWN
        if lt.elem.dtype != rt.elem.dtype:
            self.diags.append(
                C.E0302.at(
                    node.span,
                    context="'@' needs one element type on both sides: ",
                    expected=lt.show_elem(),
                    found=rt.show_elem(),
                )
            )
            return T.UNKNOWN
        dims = S.matmul(lt.dims, rt.dims)
        if dims == "scalar":
            self.diags.append(
                C.E0210.at(node.span, operation="'@'", needed="tensors of rank 1 or more", found=f"{lt} @ {rt}")
            )
            return T.UNKNOWN
        if isinstance(dims, S.DimClash):
            self.diags.append(C.E0203.at(node.span, left=str(lt), right=str(rt), a=str(dims.left), b=str(dims.right)))
            return T.UNKNOWN
        refine = "nonneg" if lt.elem.nonneg and rt.elem.nonneg else None
        return T.TensorT(dims, T.Elem(lt.elem.dtype, refine))  # type: ignore[arg-type]

    def example_grad_arith(self: BodyChecker, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
        """Per-example gradients `[b] Grad[M]`: + and - of two alike, and * or
        / by a number, a [] or a [b] (one factor per example)."""
        if op in ("+", "-") and T.is_example_grads(lt) and T.is_example_grads(rt):
            if lt != rt:
                self.diags.append(
                    C.E0904.at(node.span, context=f"'{op}' of gradients: ", expected=str(lt), found=str(rt))
                )
                return T.UNKNOWN
            return lt
        grads = lt if T.is_example_grads(lt) else rt
        other = rt if grads is lt else lt
        assert isinstance(grads, T.StackT)

        def scale(t: T.Type) -> bool:
            if isinstance(t, T.NumberT):
                return t.kind in ("Int", "Float")
            if isinstance(t, T.TensorT) and t.elem.is_float:
                return t.rank == 0 or (t.rank == 1 and T.dims_equal(t.dims[0], grads.dim))
            return False

        if (op == "*" and scale(other)) or (op == "/" and grads is lt and scale(other)):
            return grads
        self.diags.append(C.E1108.at(node.span, operation=f"{T.describe(lt)} {op} {T.describe(rt)}"))
        return T.UNKNOWN

    def grad_arith(self: BodyChecker, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
        if op in ("+", "-") and isinstance(lt, T.GradT) and isinstance(rt, T.GradT):
            if lt != rt:
                self.diags.append(
                    C.E0904.at(node.span, context=f"'{op}' of gradients: ", expected=str(lt), found=str(rt))
                )
                return T.UNKNOWN
            return lt
        scale = lambda t: (
            (isinstance(t, T.NumberT) and t.kind in ("Int", "Float"))
            or (isinstance(t, T.TensorT) and t.rank == 0 and not t.elem.is_bool)
        )
        if op == "*" and ((isinstance(lt, T.GradT) and scale(rt)) or (isinstance(rt, T.GradT) and scale(lt))):
            return lt if isinstance(lt, T.GradT) else rt
        if op == "/" and isinstance(lt, T.GradT) and scale(rt):
            return lt
        self.diags.append(C.E1108.at(node.span, operation=f"{T.describe(lt)} {op} {T.describe(rt)}"))
        return T.UNKNOWN

    def compare(self: BodyChecker, e: A.Compare, env: Env) -> T.Type:
        lt = self.value(e.left, env)
        rt = self.value(e.right, env)
        if isinstance(lt, T.UnknownT) or isinstance(rt, T.UnknownT):
            return T.UNKNOWN
        if isinstance(lt, T.GradT) or isinstance(rt, T.GradT):
            self.diags.append(C.E1108.at(e.span, operation=f"{T.describe(lt)} {e.op} {T.describe(rt)}"))
            return T.UNKNOWN
        if isinstance(lt, T.NumberT) and isinstance(rt, T.NumberT):
            numeric = {"Int", "Float"}
            if (lt.kind in numeric and rt.kind in numeric) or (lt.kind == rt.kind and e.op in ("==", "!=")):
                return T.BOOL_N
        elif isinstance(lt, (T.TensorT, T.NumberT)) and isinstance(rt, (T.TensorT, T.NumberT)):
            ld = lt.dims if isinstance(lt, T.TensorT) else ()
            rd = rt.dims if isinstance(rt, T.TensorT) else ()
            if any(isinstance(x, T.NumberT) and x.kind not in ("Int", "Float") for x in (lt, rt)):
                pass
            else:
                dims = S.broadcast(ld, rd)
                if isinstance(dims, S.DimClash):
                    self.diags.append(
                        C.E0202.at(e.span, op=e.op, left=str(lt), right=str(rt), a=str(dims.left), b=str(dims.right))
                    )
                    return T.UNKNOWN
                self.broadcast_warnings(e, e.op, lt, rt, dims)
                el = lt.elem if isinstance(lt, T.TensorT) else None
                er = rt.elem if isinstance(rt, T.TensorT) else None
                if el is not None and er is not None and el.dtype != er.dtype:
                    self.diags.append(
                        C.E0302.at(
                            e.span,
                            context=f"'{e.op}' needs one element type on both sides: ",
                            expected=lt.show_elem(),
                            found=rt.show_elem(),
                        )
                    )
                    return T.UNKNOWN
                return T.TensorT(dims, T.BOOL)
        self.diags.append(
            C.E0306.at(e.span, op=f"'{e.op}'", left=T.describe(lt), right=" and " + T.describe(rt), detail="")
        )
        return T.UNKNOWN

    def boolean(self: BodyChecker, e: A.Expr, env: Env, op: str) -> None:
        t = self.value(e, env)
        if isinstance(t, T.UnknownT):
            return
        if isinstance(t, T.NumberT) and t.kind == "Bool":
            return
        if isinstance(t, T.TensorT) and t.rank == 0 and t.elem.is_bool:
            return
        self.diags.append(
            C.E0306.at(
                e.span,
                op=f"'{op}'",
                left=T.describe(t),
                right="",
                detail="; it needs Bool values (use where() for elementwise choices)",
            )
        )

    # -- fields, indexing, casts

    def field_access(self: BodyChecker, e: A.Field, env: Env) -> T.Type:
        obj = self.expr(e.value, env)
        name = e.name.text
        if isinstance(obj, T.UnknownT):
            return T.UNKNOWN
        if isinstance(obj, T.ModuleT):
            return self.module_member(e, obj)
        if isinstance(obj, T.ModelT):
            self.global_kind(obj.name)
            model = self.g.model(obj)
            if model is None:
                return T.UNKNOWN
            f = model.field(name)
            if f is None:
                absent = model.generic.field(name) if model.generic is not None else None
                if absent is not None and absent.when is not None:
                    cond = " and ".join(f"{opt}={value}" for opt, value in absent.when)
                    self.diags.append(C.E0914.at(e.name.span, owner=str(obj), name=name, cond=cond))
                elif not model.partial:
                    self.diags.append(
                        C.E0107.at(
                            e.name.span,
                            name=name,
                            owner=f"model {obj}",
                            hint=suggest(name, [x.name for x in model.fields]),
                        )
                    )
                return T.UNKNOWN
            if f.when is not None and not all(self.known_option(*w) for w in f.when):
                cond = " and ".join(f"{opt}={value}" for opt, value in f.when)
                # `if bias:`; for `if a and b`, one test inside the other
                test = ", inside it ".join(f"`if {'' if value else 'not '}{opt}:`" for opt, value in f.when)
                self.diags.append(
                    C.E0914.at(
                        e.name.span,
                        owner=f"{obj} (self, any instance)",
                        name=name,
                        cond=f"{cond}; read it under {test}",
                    )
                )
                return T.UNKNOWN
            self.refs[e.name] = Ref("field", name, obj.name)
            self.types[e.name] = f.type
            origin = self.origin_of(e.value, env)
            if origin is not None and f.kind == "param" and isinstance(f.type, T.TensorT):
                self.path_fact("field", origin, name, e.span)
            return f.type
        if isinstance(obj, T.OptimT):
            return self.optimizer_field(e, obj)
        if isinstance(obj, T.GradT):
            self.global_kind(obj.model)
            model = self.g.model(obj)
            if model is None:
                return T.UNKNOWN
            f = model.field(name)
            if f is not None and f.kind == "param" and obj.wrt is not None and name not in obj.wrt:
                self.diags.append(
                    C.E1110.at(
                        e.name.span,
                        name=name,
                        type=str(obj),
                        related=(
                            LocalRelated(
                                f"{name} is a param of {obj.model}", symbol=SymbolRef(("member", obj.model, name))
                            ),
                        ),
                    )
                )
                return T.UNKNOWN
            if f is not None and f.kind == "buffer":
                self.diags.append(
                    C.E0901.at(
                        e.name.span,
                        name=name,
                        model=obj.model,
                        related=(
                            LocalRelated(
                                f"{name} is a buffer of {obj.model}", symbol=SymbolRef(("member", obj.model, name))
                            ),
                        ),
                    )
                )
                return T.UNKNOWN
            if f is None:
                absent = model.generic.field(name) if model.generic is not None else None
                if absent is not None and absent.when is not None and absent.kind == "param":
                    # Grad[Linear[D, H, bias=False]].bias: the instance has no such param
                    cond = " and ".join(f"{opt}={value}" for opt, value in absent.when)
                    self.diags.append(C.E0914.at(e.name.span, owner=str(obj), name=name, cond=cond))
                elif not model.partial:
                    self.diags.append(
                        C.E0107.at(
                            e.name.span,
                            name=name,
                            owner=str(T.grad_of(obj.of)),
                            hint=suggest(name, [x.name for x in model.params]),
                        )
                    )
                return T.UNKNOWN
            self.refs[e.name] = Ref("gradfield", name, obj.model)
            # A gradient has the param's shape and dtype, but no refinement:
            # the gradient of a NonNeg param can be negative. A sub-model's
            # field is its gradient; a stack's, a stack of gradients.
            t = T.grad_field_type(f.type)
            self.types[e.name] = t
            return t
        if isinstance(obj, T.ModelClassT):
            self.diags.append(
                C.E0110.at(
                    e.span,
                    name=expr_text(e),
                    kind="a model method",
                    use=f"a value; call it, as in {obj.name}.init(seed=0)",
                )
            )
            return T.UNKNOWN
        hint = tensor_method_hint(name, expr_text(e.value)) if isinstance(obj, T.TensorT) else ""
        self.diags.append(C.E0107.at(e.name.span, name=name, owner=T.describe(obj), hint=hint))
        return T.UNKNOWN

    def index(self: BodyChecker, e: A.Index, env: Env) -> T.Type:
        """`x[i]` drops the first dim; `x[labels]` with labels `[..] Index[V]`
        gathers along a first dim V (an embedding); `x[i:j]` keeps (j-i) of it."""
        t = self.expr(e.value, env)
        if isinstance(t, T.ModelClassT):
            return self.model_class_args(e, t)
        t = self.as_value(e.value, t)
        if isinstance(e.index, A.Subscripts):
            for item in e.index.items:
                if isinstance(item, A.Slice):
                    for bound in (item.start, item.end):
                        if bound is not None:
                            self.value(bound, env)
                elif isinstance(item, A.Arg):
                    self.value(item.value, env)
                else:
                    self.value(item, env)
            if not isinstance(t, T.UnknownT):
                self.diags.append(C.E0215.at(e.index.span, what=f"{expr_text(e.value)}[{expr_text(e.index)}]"))
            return T.UNKNOWN
        if isinstance(e.index, A.Slice):
            return self.slice(e, e.index, t, env)
        i = self.value(e.index, env)
        if isinstance(i, T.TensorT) and not isinstance(t, T.UnknownT):
            return self.gather(e, t, i)
        if isinstance(i, T.NumberT) and i.kind != "Int":
            self.diags.append(C.E0301.at(e.index.span, context="index: ", expected="Int", found=T.describe(i)))
            return T.UNKNOWN
        if not isinstance(i, (T.NumberT, T.UnknownT)):
            self.diags.append(C.E0301.at(e.index.span, context="index: ", expected="Int", found=T.describe(i)))
            return T.UNKNOWN
        if isinstance(t, T.UnknownT):
            return t
        if isinstance(t, T.StackT) and not t.per_example:
            return t.item
        if isinstance(t, T.TensorT):
            if t.rank == 0:
                self.diags.append(C.E0210.at(e.span, operation="indexing", needed="1 dim or more", found=str(t)))
                return T.UNKNOWN
            return T.TensorT(t.dims[1:], t.elem)
        self.diags.append(C.E0306.at(e.span, op="indexing", left=T.describe(t), right="", detail=""))
        return T.UNKNOWN

    def model_class_args(self: BodyChecker, e: A.Index, t: T.ModelClassT) -> T.Type:
        """`Linear[D, H, bias=False]` in an expression: the model with those
        dims and options (checked as in a type), ready for `.init(seed=...)`."""
        items = e.index.items if isinstance(e.index, A.Subscripts) else (e.index,)
        args: list[A.TypeArg] = []
        options: list[A.TypeOption] = []
        for item in items:
            if isinstance(item, A.Arg) and item.keyword is not None:
                value = item.value.value if isinstance(item.value, A.BoolLit) else None
                number = item.value.value if isinstance(item.value, A.FloatLit) else None
                dim = _plain_dim(item.value) if value is None and number is None else None
                options.append(A.TypeOption(item.span, item.keyword, (), value, dim, number))
                continue
            arg = _dim_node(item) if not isinstance(item, (A.Slice, A.Arg)) else None
            if arg is None:
                self.diags.append(
                    C.E0910.at(
                        item.span,
                        model=t.name,
                        problem="takes dims here (a name, a number or (dim arithmetic)), "
                        f"found {expr_text(item) if not isinstance(item, A.Slice) else 'a slice'}",
                    )
                )
                return T.UNKNOWN
            args.append(arg)
        if t.dims or t.options:
            self.diags.append(C.E0910.at(e.index.span, model=str(t)[6:], problem="has its dims already"))
            return T.UNKNOWN
        ctx = self.type_context()
        name_node = A.Ident(e.value.span, dotted_text(e.value) or expr_text(e.value))  # `nn.Linear` as written
        model = ctx.model(name_node, tuple(args), tuple(options), e.span)
        self._take(ctx)
        if not isinstance(model, T.ModelT):
            return T.UNKNOWN
        return T.ModelClassT(model.name, model.dims, model.options)

    def broadcast_warnings(self: BodyChecker, node: A.Node, op: str, lt: T.Type, rt: T.Type, dims: tuple) -> None:
        """Two silent bugs of broadcasting: a column against a vector making an
        outer product (`[b 1] - [b]` is `[b b]`), and labels of different dims
        compared or mixed (`Index[C] == Index[K]`)."""
        if not (isinstance(lt, T.TensorT) and isinstance(rt, T.TensorT)):
            return
        el, er = lt.elem.index, rt.elem.index
        if el is not None and er is not None and not T.dims_equal(el, er):
            self.diags.append(C.W0301.at(node.span, op=op, left=str(lt), right=str(rt)))
        if lt.rank == rt.rank:
            return
        repeated = _repeated(dims)
        if repeated is not None and _repeated(lt.dims) is None and _repeated(rt.dims) is None:
            result = T.TensorT(dims, lt.elem)
            self.diags.append(
                C.W0201.at(node.span, op=op, left=str(lt), right=str(rt), result=str(result), dim=str(repeated))
            )

    def tensor_lit(self: BodyChecker, e: A.TensorLit) -> T.Type:
        """`[1.0, -2.0]` is `[2]`, `[[1.0, 0.0], [0.0, 1.0]]` is `[2 2]`: Float
        when a value is written with a decimal point, else i64; rows nested in
        one literal all have the same shape."""
        shape = self.literal_shape(e)
        if shape is None:
            return T.UNKNOWN
        floats = any(isinstance(n, A.FloatLit) for n in A.walk(e))
        return T.TensorT(tuple(T.DimLit(n) for n in shape), T.F32 if floats else T.I64)

    def name_list_lit(self: BodyChecker, e: A.NameList, env: Env) -> T.Type:
        """`[x, y]` of plain numbers is a `[2]` tensor: Float when one of them
        is a Float, else i64, as a literal of the numbers themselves."""
        kinds: list[str] = []
        for n in e.items:
            t = self.value(n, env)
            if isinstance(t, T.UnknownT):
                kinds.append("?")
            elif isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
                kinds.append(t.kind)
            else:
                if isinstance(t, T.TensorT):
                    found = f"{T.describe(t)} (stack(...) joins tensors into one)"
                else:
                    found = T.describe(t)
                self.diags.append(
                    C.E0301.at(n.span, context="item of a tensor literal: ", expected="a number", found=found)
                )
                kinds.append("?")
        if "?" in kinds:
            return T.UNKNOWN
        return T.TensorT((T.DimLit(len(kinds)),), T.F32 if "Float" in kinds else T.I64)

    def literal_shape(self: BodyChecker, e: A.Expr) -> tuple[int, ...] | None:
        if not isinstance(e, A.TensorLit):
            self.types[e] = T.NumberT(
                "Float" if isinstance(e, A.FloatLit) or isinstance(getattr(e, "operand", None), A.FloatLit) else "Int"
            )
            return ()
        found_shapes = [self.literal_shape(item) for item in e.items]
        shapes = [s for s in found_shapes if s is not None]
        if len(shapes) != len(found_shapes):
            return None
        first = shapes[0]
        for item, s in zip(e.items, shapes):
            if s != first:
                want = "a number" if first == () else f"a row of shape [{' '.join(map(str, first))}]"
                found = "a number" if s == () else f"a row of shape [{' '.join(map(str, s))}]"
                reason = f"every item is {want}; this is {found}"
                self.diags.append(C.E0214.at(item.span, operation="tensor literal", reason=reason))
                return None
        assert first is not None
        return (len(e.items), *first)

    def gather(self: BodyChecker, e: A.Index, t: T.Type, labels: T.TensorT) -> T.Type:
        """`m.emb[tokens]`: `[V E]` indexed by `[b T] Index[V]` is `[b T E]`."""
        if not isinstance(t, T.TensorT) or t.rank == 0:
            self.diags.append(C.E0210.at(e.span, operation="indexing", needed="1 dim or more", found=T.describe(t)))
            return T.UNKNOWN
        first = t.dims[0]
        want = T.TensorT(labels.dims, T.index_of(first))
        if labels.elem.index is None or not T.dims_equal(labels.elem.index, first):
            what = f"index into {expr_text(e.value)} ({t}) by labels of its first dim {first}: "
            self.diags.append(C.E0305.at(e.index.span, context=what, expected=str(want), found=str(labels)))
            return T.UNKNOWN
        return T.TensorT(labels.dims + t.dims[1:], t.elem)

    def slice(self: BodyChecker, e: A.Index, s: A.Slice, t: T.Type, env: Env) -> T.Type:
        """`x[i:j]`: the first dim becomes (j-i); bounds are Ints, and when
        they are literals or dims the size is known (negative: from the end)."""
        bounds = []
        for b in (s.start, s.end):
            if b is not None:
                bt = self.value(b, env)
                if not isinstance(bt, T.UnknownT) and not (isinstance(bt, T.NumberT) and bt.kind == "Int"):
                    self.diags.append(C.E0301.at(b.span, context="slice bound: ", expected="Int", found=T.describe(bt)))
                    return T.UNKNOWN
            bounds.append(b)
        if isinstance(t, T.UnknownT):
            return t
        if not isinstance(t, T.TensorT):
            self.diags.append(C.E0306.at(e.span, op="slicing", left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        if t.rank == 0:
            self.diags.append(C.E0210.at(e.span, operation="slicing", needed="1 dim or more", found=str(t)))
            return T.UNKNOWN
        n = T.dim_poly(t.dims[0])
        start = self.slice_bound(s.start, n, DX.const(0))
        end = self.slice_bound(s.end, n, n)
        if start is None or end is None or n is None:
            return T.TensorT((T.DimUnknown(),) + t.dims[1:], t.elem)
        size = DX.sub(end, start)
        value, whole = DX.value(size), DX.value(n)
        lo, hi = DX.value(start), DX.value(end)
        problem = None
        if value is not None and value <= 0:
            problem = f"it keeps {value} of {t.dims[0]}"
        elif whole is not None and ((lo is not None and lo > whole) or (hi is not None and hi > whole)):
            problem = f"it reaches past the end of {t.dims[0]}"
        if problem is not None:
            self.diags.append(C.E0213.at(s.span, dim=str(t.dims[0]), reason=problem))
            return T.UNKNOWN
        return T.TensorT((T.dim_of_poly(size),) + t.dims[1:], t.elem)

    def slice_bound(self: BodyChecker, b: A.Expr | None, n: DX.Poly | None, default: DX.Poly | None) -> DX.Poly | None:
        """A slice bound as a dim normal form: a generic dim, or a literal, a
        dim constant or arithmetic of them (negative counts from the end, as
        in Python); None when its value is only known at run time."""
        if b is None:
            return default
        if isinstance(b, A.IntLit):
            return DX.const(b.value)
        if isinstance(b, A.Unary) and b.op == "-" and isinstance(b.operand, A.IntLit):
            return DX.sub(n, DX.const(b.operand.value)) if n is not None else None
        if isinstance(b, A.Name) and b.name in self.fn.generics:
            return DX.var(b.name)
        value = self.int_value(b)
        if value is None:
            return None
        if value < 0:  # from the end, as in Python: x[T-10:] with T = 8 is x[-2:]
            return DX.sub(n, DX.const(-value)) if n is not None else None
        return DX.const(value)

    def int_value(self: BodyChecker, e: A.Expr) -> int | None:
        """The value of an Int expression of integer literals and dim
        constants joined by + - * (`T - 1`); None when it is known only at
        run time."""
        if isinstance(e, A.IntLit):
            return e.value
        if isinstance(e, A.Unary) and e.op in ("-", "+"):
            v = self.int_value(e.operand)
            return None if v is None else -v if e.op == "-" else v
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
            left, right = self.int_value(e.left), self.int_value(e.right)
            if left is None or right is None:
                return None
            return left + right if e.op == "+" else left - right if e.op == "-" else left * right
        const = self.dim_constant(e)
        return self.g.names.dim_values.get(const[1]) if const is not None else None

    def cast(self: BodyChecker, e: A.Cast, env: Env) -> T.Type:
        src = self.value(e.value, env)
        target_expr = e.type
        if isinstance(target_expr, A.NamedType) and target_expr.name.text == "Grad":
            self.diags.append(
                C.E0303.at(e.type.span, type=type_text(e.type), reason="a value cannot be cast to a gradient type")
            )
            return T.UNKNOWN
        # `x as f64`, `y as Index[C]`: an element type alone keeps the shape.
        elem_only = isinstance(target_expr, A.NamedType) and (
            (target_expr.name.text in T.ELEM_TYPES and target_expr.name.text not in NUMBER_TYPES)
            or target_expr.name.text == "Index"
        )
        ctx = self.type_context()
        if elem_only:
            assert isinstance(target_expr, A.NamedType)
            elem_node = A.ElemType(target_expr.span, target_expr.name, target_expr.args, target_expr.options)
            elem = ctx.elem(elem_node)
            self._take(ctx)
            if elem is None or isinstance(src, T.UnknownT):
                return T.UNKNOWN
            if not isinstance(src, T.TensorT):
                self.diags.append(
                    C.E0308.at(
                        e.span, source=T.describe(src), target=str(elem), why="; an element type alone casts a tensor"
                    )
                )
                return T.UNKNOWN
            if target_expr.name.text in ("NonNeg", "Prob") and src.elem.is_float:
                # A refinement alone keeps the element type: `x as NonNeg` on f64 stays f64.
                elem = T.Elem(src.elem.dtype, elem.refine)
            target: T.Type = T.TensorT(src.dims, elem)
        else:
            target = ctx.resolve(target_expr)
            self._take(ctx)
        self.types[e.type] = target
        if isinstance(src, T.UnknownT) or isinstance(target, T.UnknownT):
            return target
        why = cast_problem(src, target)
        if why is not None:
            self.diags.append(C.E0308.at(e.span, source=T.describe(src), target=str(target), why=why))
            return T.UNKNOWN
        self.note_dims(e, target, src, "cast: ", "value")  # `x[i:j] as [T b]` names a run-time dim
        return target

    def type_context(self: BodyChecker) -> TypeContext:
        """For types written in the body (casts, shapes, over= dims)."""
        elems = tuple(k for k, v in self.model_options.items() if isinstance(v, str))
        return TypeContext(self.g.names, "body", list(self.fn.generics), silent=self.fn.unbound, elem_vars=elems)

    def _take(self: BodyChecker, ctx: TypeContext) -> None:
        """Take a type context's diagnostics, and the global names it looked
        up as dependencies of this body."""
        self.diags.extend(ctx.diagnostics)
        ctx.diagnostics.clear()
        for name in ctx.lookups:
            self.deps[name] = self.g.fingerprint(name)
        ctx.lookups.clear()

    # -- calls


# Tensor methods of torch that users reach for, and what Quiver writes instead.
_TENSOR_METHODS = {
    "masked_fill": "where(mask, value, {x})",
    "view": "reshape({x}, [...])",
    "unsqueeze": "reshape({x}, [...])",
    "squeeze": "reshape({x}, [...])",
    "flatten": "reshape({x}, [...])",
    "t": "transpose({x})",
    "T": "transpose({x})",
    "mT": "transpose({x})",
    "detach": "stop_grad({x})",
    "float": "{x} as f32",
    "double": "{x} as f64",
    "long": "{x} as i64",
    "to": "{x} as f64 (a cast)",
    "item": "{x} as Float",
    "clip": "clamp({x}, min=..., max=...)",
}


def tensor_method_hint(name: str, x: str) -> str:
    """`e.masked_fill(...)`: a tensor has no methods; the built-in to use."""
    x = x if x != "this expression" else "x"
    if name in _TENSOR_METHODS:
        return f"; a tensor has no methods: write {_TENSOR_METHODS[name].format(x=x)}"
    if name in BUILTINS and name not in CONSTANTS:
        return f"; a tensor has no methods: write {name}({x}, ...)"
    return ""


def refine_arith(op: str, lt: T.Type, rt: T.Type, right: A.Expr) -> str | None:
    def nonneg(t: T.Type) -> bool:
        if isinstance(t, T.NumberT):
            return t.nonneg
        return isinstance(t, T.TensorT) and t.elem.nonneg

    def prob(t: T.Type) -> bool:
        return isinstance(t, T.TensorT) and t.elem.refine == "prob"

    if op == "*" and prob(lt) and prob(rt):
        return "prob"
    if op in ("+", "*", "/") and nonneg(lt) and nonneg(rt):
        return "nonneg"
    # x ** 2 (any even integer literal) is never negative.
    if op == "**" and (nonneg(lt) or (isinstance(right, A.IntLit) and right.value % 2 == 0)):
        return "nonneg"
    return None


def cast_problem(src: T.Type, target: T.Type) -> str | None:
    if isinstance(target, (T.ModelT, T.ModeT, T.TupleT)) or isinstance(src, (T.ModelT, T.GradT, T.ModeT, T.TupleT)):
        return "; only tensors and numbers can be cast"
    if isinstance(src, T.TensorT) and isinstance(target, T.TensorT):
        if src.rank != target.rank or not all(T.dims_equal(a, b) for a, b in zip(src.dims, target.dims)):
            return "; a cast cannot change the shape"
        if target.elem.index is not None and not (src.elem.is_int):
            return "; only integer tensors can be cast to an Index"
        if target.elem.refine is not None and not src.elem.is_float:
            return "; only float tensors can be refined"
        return None
    if isinstance(src, T.TensorT) and isinstance(target, T.NumberT):
        if src.rank != 0:
            return "; only a [] tensor converts to a number"
        return None if target.kind in ("Int", "Float", "Bool") else "; a tensor does not convert to a string"
    if isinstance(src, T.NumberT) and isinstance(target, T.TensorT):
        if target.rank != 0:
            return "; a number converts only to a [] tensor"
        return None if src.kind in ("Int", "Float", "Bool") else "; a string does not convert to a tensor"
    if isinstance(src, T.NumberT) and isinstance(target, T.NumberT):
        if "Str" in (src.kind, target.kind) and src.kind != target.kind:
            return "; strings do not convert"
        return None
    return "; these types do not convert"


def _repeated(dims: tuple) -> T.Dim | None:
    """A dim that appears twice in a shape (unknown dims aside)."""
    known = [d for d in dims if not isinstance(d, T.DimUnknown) and not T.is_one(d)]
    for i, d in enumerate(known):
        if any(T.dims_equal(d, other) for other in known[i + 1 :]):
            return d
    return None


def _dim_node(e: A.Expr) -> A.TypeArg | None:
    """A dim written as an expression (`D`, `784`, `2*E`, `layers.H`), as a
    type would hold it; None for anything else."""
    if isinstance(e, A.IntLit):
        return A.DimInt(e.span, e.value)
    written = dotted_text(e)
    if written is not None:
        return A.NamedType(e.span, A.Ident(e.span, written))
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
        left, right = _plain_dim(e.left), _plain_dim(e.right)
        if left is not None and right is not None:
            return A.DimBinary(e.span, e.op, left, right)
    return None


def _plain_dim(e: A.Expr) -> A.Dim | None:
    d = _dim_node(e)
    if isinstance(d, A.NamedType):
        return A.DimName(d.span, d.name.text)
    return d if isinstance(d, (A.DimInt, A.DimBinary)) else None
