"""Operators: unary, arithmetic with broadcasting and refinements, matmul,
the arithmetic of gradients, comparisons, `and`/`or`, and the warnings of
silent broadcasts."""

from __future__ import annotations

import dataclasses

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..diagnostics import LocalDiagnostic
from ..type_pairs import distinct
from .engine_api import EngineBase
from .env import Env
from .text import expr_text


class OperatorRules(EngineBase):
    # -- operators

    def unary(self, e: A.Unary, env: Env) -> T.Type:
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

    def bool_elementwise(self, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
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
            self.diags.append(broadcast_clash(node.span, op, lt, rt, dims))
            return T.UNKNOWN
        return T.TensorT(dims, T.BOOL)

    def binary_types(
        self, op: str, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span, node: A.Node
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
            self.diags.append(broadcast_clash(node.span, op, lt, rt, dims))
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

    def number_arith(self, op: str, lt: T.NumberT, rt: T.NumberT, node: A.Node, right: A.Expr) -> T.Type:
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

    def matmul(self, lt: T.Type, rt: T.Type, left: A.Expr, right: A.Expr, op_span: A.Span, node: A.Node) -> T.Type:
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
            a, b = distinct(dims.left, dims.right)
            self.diags.append(
                C.E0203.at(
                    node.span,
                    left=lt,
                    right=rt,
                    a=a,
                    b=b + T.run_apart_note((dims.left,), (dims.right,)),
                )
            )
            return T.UNKNOWN
        refine = "nonneg" if lt.elem.nonneg and rt.elem.nonneg else None
        return T.TensorT(dims, T.Elem(lt.elem.dtype, refine))  # type: ignore[arg-type]

    def example_grad_arith(self, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
        """Per-example gradients `[b] Grad[M]`: + and - of two alike, and * or
        / by a number, a [] or a [b] (one factor per example)."""
        if op in ("+", "-") and T.is_example_grads(lt) and T.is_example_grads(rt):
            if lt != rt:
                self.diags.append(C.E0904.at(node.span, context=f"'{op}' of gradients: ", expected=lt, found=rt))
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

    def grad_arith(self, op: str, lt: T.Type, rt: T.Type, node: A.Node) -> T.Type:
        if op in ("+", "-") and isinstance(lt, T.GradT) and isinstance(rt, T.GradT):
            if lt != rt:
                self.diags.append(C.E0904.at(node.span, context=f"'{op}' of gradients: ", expected=lt, found=rt))
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

    def compare(self, e: A.Compare, env: Env) -> T.Type:
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
                    self.diags.append(broadcast_clash(e.span, e.op, lt, rt, dims))
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

    def boolean(self, e: A.Expr, env: Env, op: str) -> None:
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

    # -- broadcasting

    def broadcast_warnings(self, node: A.Node, op: str, lt: T.Type, rt: T.Type, dims: tuple) -> None:
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


def _repeated(dims: tuple) -> T.Dim | None:
    """A dim that appears twice in a shape (unknown dims aside)."""
    known = [d for d in dims if not isinstance(d, T.DimUnknown) and not T.is_one(d)]
    for i, d in enumerate(known):
        if any(T.same_dim(d, other) for other in known[i + 1 :]):
            return d
    return None


def broadcast_clash(span: A.Span, op: str, lt: T.Type, rt: T.Type, dims: S.DimClash) -> LocalDiagnostic:
    """E0202, saying so when the two dims are run-time dims bound apart."""
    a, b = distinct(dims.left, dims.right)
    d = C.E0202.at(span, op=op, left=lt, right=rt, a=a, b=b)
    note = T.run_apart_note((dims.left,), (dims.right,))
    return dataclasses.replace(d, message=d.message + note) if note else d
