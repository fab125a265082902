"""Warnings about bugs whose shapes are legal (W04xx-W09xx).

A pass over a function body after it has been typed: it reads the types and
references the body check recorded and never changes them. What it knows that
torch does not: every dim has a name (generic batch dims versus named class
dims), which values are probabilities (the `Prob` refinement), which locals
are computed from the differentiated model, and where a causal mask came from.

Two kinds of result: warnings that stand on their own, and warnings that only
make sense in a function given to `value_and_grad` (a target that reads the
model trains through itself; a loss computed with `Eval`). The second kind is
kept apart in the body's result and reported by the analysis only for the
functions a `value_and_grad` of the same file differentiates.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..builtins import BUILTINS
from ..diagnostics import Fix, LocalDiagnostic, LocalRelated, TextEdit

if TYPE_CHECKING:
    from .core import BodyChecker

_SOFTMAXES = {"softmax": "x", "log_softmax": "x", "cross_entropy": "logits", "nll": "logp"}
# Losses whose second argument is a target the prediction is pulled towards.
_TARGET_LOSSES = {"mse": "target", "smooth_l1": "target", "huber": "target"}
_SYMMETRIC = frozenset({"mse", "maximum", "minimum"})  # swapping their arguments changes nothing
_EVALUATION = re.compile(r"^(eval|evaluate|test|valid|validate|validation|predict|infer|inference|generate|sample)")
# locals named as log-probabilities (`log_prob`, `logp`, `log_pi`): a method's
# log_softmax is not seen through the call
_LOGPROB_NAME = re.compile(r"(^|_)(log_?probs?|logp|log_pi|log_likelihood)($|_)")
# dim constants that name a batch as generic dims do (`dim B = 64`)
_BATCH_NAMES = frozenset({"B", "N", "BS", "BSZ", "BATCH", "batch", "bsz", "bs"})
_NAME = re.compile(r"[A-Za-z_][\w.]*")
# torch's names for masks that are True where attending is NOT allowed
_BLOCKING_PARAMS = frozenset({"attn_mask", "tgt_mask", "memory_mask", "src_mask", "causal"})


@dataclass(frozen=True)
class Flow:
    """What the pass knows about a value: it reads the differentiated model
    (outside stop_grad), it is log-probabilities, it is probabilities, and
    where it came from (the expression that first made it so)."""

    model: A.Node | None = None
    logprob: bool = False
    prob: bool = False


@dataclass(frozen=True)
class Mask:
    """A triangle of a square: `tril(.., diagonal=k)` keeps j - i <= k,
    `triu` keeps j - i >= k; `flipped` when the value is its complement."""

    tri: str
    k: int
    flipped: bool
    origin: A.Call

    def flip(self) -> Mask:
        return Mask(self.tri, self.k, not self.flipped, self.origin)

    def allowed(self, blocked: bool) -> tuple[str, int]:
        """The allowed positions as one triangle: ("lower", k) is j - i <= k,
        ("upper", k) is j - i >= k."""
        keep = self.flipped == blocked  # the triangle itself is the allowed set
        if self.tri == "tril":
            return ("lower", self.k) if keep else ("upper", self.k + 1)
        return ("upper", self.k) if keep else ("lower", self.k - 1)


class Lints:
    def __init__(self, c: BodyChecker) -> None:
        self.c = c
        self.diags: list[LocalDiagnostic] = []
        self.loss_diags: list[LocalDiagnostic] = []
        self.values: dict[A.Node, A.Expr] = {}  # assignment target -> the value assigned
        self.flows: dict[A.Node, Flow] = {}
        self.busy: set[A.Node] = set()
        self.reported: set[A.Node] = set()  # a weight made once and used twice is reported once
        params = c.fn.params[1:] if c.fn.owner is not None else c.fn.params
        first = params[0] if params else None
        # value_and_grad differentiates its function's first argument
        self.model = first.name if first is not None and isinstance(first.type, T.ModelT) else None

    # -------------------------------------------------------------- entry

    def run(self) -> tuple[list[LocalDiagnostic], list[LocalDiagnostic]]:
        decl = self.c.fn.decl
        assert isinstance(decl, A.FnDecl)
        for stmt in _statements(decl.body):
            if isinstance(stmt, A.Assign):
                for target in stmt.targets:
                    for name in _names(target):
                        self.values[name] = stmt.value
        for node in A.walk(decl):
            if isinstance(node, A.Call):
                self.call(node)
            elif isinstance(node, A.Binary) and node.op == "*":
                self.product(node)
        return self.diags, self.loss_diags

    # -------------------------------------------------------------- calls

    def callee(self, call: A.Call) -> tuple[str, str, list[str]] | None:
        """("builtin" | "fn", name, parameter names) of a call."""
        func = call.func
        ref = self.c.refs.get(func.name if isinstance(func, A.Field) else func)
        if ref is None:
            return None
        if ref.kind == "builtin" and ref.name in BUILTINS:
            return "builtin", ref.name, [p.name for p in BUILTINS[ref.name].params]
        if ref.kind == "fn":
            info = self.c.g.fns.get(ref.name)
            if info is None:
                return None
            names = [p.name for p in info.params]
            if info.owner is not None and isinstance(func, A.Field):
                names = names[1:]  # m.method(a, b): self is the receiver
            return "fn", ref.name, names
        return None

    def call(self, call: A.Call) -> None:
        found = self.callee(call)
        if found is None:
            return
        kind, name, params = found
        bound = _bind(call, params)
        if kind == "builtin":
            if name in _SOFTMAXES:
                self.softmax_position(call, name, bound.get(_SOFTMAXES[name]), bound.get("over"))
            if name == "reshape":
                self.reshape(call, bound.get("x"))
            self.probabilities(call, name, bound)
            if name in _TARGET_LOSSES:
                self.target(call, name, bound.get(params[0]), bound.get(_TARGET_LOSSES[name]))
            if name in ("value_and_grad", "grad"):
                self.differentiated_with_eval(call)
            if name == "where":
                self.where_mask(call, bound)
        else:
            for pname, arg in bound.items():
                if pname in _BLOCKING_PARAMS:
                    self.mask_use(arg, blocked=True, use=call)
            self.modes(call, name)
        self.swapped(call, name, params)

    # -------------------------------------------------------------- W0202, W0203

    def softmax_position(self, call: A.Call, fn: str, x: A.Expr | None, over: A.Expr | None) -> None:
        """softmax(z, over=0) on `[b C]`: a position naming the batch dim."""
        if x is None or over is None:
            return
        position = _position(over)
        t = self.c.types.get(x)
        if position is None or not isinstance(t, T.TensorT) or T.has_rest(t) or not -t.rank <= position < t.rank:
            return
        axis = position % t.rank
        if axis == t.rank - 1:
            return
        d = t.dims[axis]
        last = t.dims[-1]
        if any(T.same_dim(d, e) for e in t.dims[axis + 1 :]):
            self.diags.append(
                C.W0203.at(
                    over.span,
                    fn=fn,
                    over=str(position),
                    operand=str(t),
                    dim=str(d),
                    fix=Fix("Normalise over the last dim: over=-1", (TextEdit(over.span, "-1"),)),
                )
            )
            return
        batch = isinstance(d, T.DimVar) and d.name in self.c.fn.generics
        if not (batch or (isinstance(d, T.DimConst) and d.name.split(".")[-1] in _BATCH_NAMES)):
            return
        named = [e for e in t.dims if isinstance(e, T.DimConst) and e is not d]
        if not named:
            return
        want = last if isinstance(last, T.DimConst) else named[-1]
        self.diags.append(
            C.W0202.at(
                over.span,
                fn=fn,
                over=str(position),
                dim=str(d),
                operand=str(t),
                want=str(want),
                fix=Fix(f"Change to over={want}", (TextEdit(over.span, str(want)),)),
            )
        )

    # -------------------------------------------------------------- W0204

    def reshape(self, call: A.Call, x: A.Expr | None) -> None:
        """reshape that reorders named dims: a transpose written as a reshape.
        Two tests: the names of the factors, in order (`[b T (NH*HD)]` holds b
        T NH HD), and, for a dim standing alone in both shapes (`T` of `[b T
        E]` and of `[b NH T HD]`), the number of elements before it."""
        if x is None:
            return
        src = self.c.types.get(x)
        dst = self.c.types.get(call)
        if not (isinstance(src, T.TensorT) and isinstance(dst, T.TensorT)) or T.has_rest(src):
            return
        shape_arg = call.args[1].value if len(call.args) > 1 else None
        fixable = shape_arg is not None and x.span.end <= shape_arg.span.start
        src_groups = [_factors(d) for d in src.dims]
        dst_groups = [_factors(d) for d in dst.dims]
        fix = None
        if all(g is not None for g in src_groups + dst_groups):
            dst_f = [f for g in dst_groups for f in g or ()]
            # A product written in a param's type (`W: [I (Hd*Heads)]`) is a size,
            # not a layout: what the weight's columns hold is whatever the program
            # reads them as, so `reshape(h @ W, [n Heads Hd])` (GAT's `.view`) is
            # no reorder. Its factors take the target's order.
            free = self._weight_products(x)
            src_groups = [
                _in_order_of(g, dst_f) if g is not None and len(g) > 1 and str(d) in free else g
                for d, g in zip(src.dims, src_groups)
            ]
            src_f = [f for g in src_groups for f in g or ()]
            if src_f != dst_f and sorted(src_f) == sorted(dst_f):
                if fixable:
                    fix = self._reshape_fix(call, x, shape_arg, src_groups, dst_groups, src_f, dst_f)
                order = " ".join(src_f)
                self.diags.append(
                    C.W0204.at(
                        call.span,
                        source=str(src),
                        target=str(dst),
                        dim=_first_moved(src_f, dst_f),
                        order=order,
                        fix=fix,
                    )
                )
                return
        moved = _moved_alone(src.dims, dst.dims)
        if moved is None:
            return
        if fixable:
            assert shape_arg is not None
            fix = _permuted_fix(call, x, shape_arg, src.dims, dst.dims)
        order = " ".join(str(d) for d in src.dims)
        self.diags.append(C.W0204.at(call.span, source=str(src), target=str(dst), dim=moved, order=order, fix=fix))

    def _weight_products(self, x: A.Expr, depth: int = 0) -> set[str]:
        """The product dims (as printed) of the model params that `x` reads,
        through locals assigned once: the dims whose factor order is free."""
        out: set[str] = set()
        if depth > 8:
            return out
        for node in A.walk(x):
            if isinstance(node, A.Field):
                obj = self.c.types.get(node.value)
                model = self.c.g.model(obj) if isinstance(obj, T.ModelT) else None
                f = model.field(node.name.text) if model is not None else None
                if f is not None and f.kind == "param" and isinstance(f.type, T.TensorT):
                    field_type = self.c.types.get(node)
                    dims = field_type.dims if isinstance(field_type, T.TensorT) else f.type.dims
                    out.update(str(d) for d in dims if isinstance(d, T.DimExpr))
            elif isinstance(node, A.Name):
                ref = self.c.refs.get(node)
                if ref is not None and ref.kind == "local" and len(ref.defs) == 1 and ref.defs[0] in self.values:
                    out |= self._weight_products(self.values[ref.defs[0]], depth + 1)
        return out

    def _reshape_fix(self, call, x, shape_arg, src_groups, dst_groups, src_f, dst_f) -> Fix:
        split_src = all(len(g) <= 1 for g in src_groups)
        split_dst = all(len(g) <= 1 for g in dst_groups)
        target = "[" + " ".join(dst_f) + "]"
        edits: list[TextEdit] = []
        if split_src:
            # reshape(x, [..]) -> permute(x, [dst factors]) (then regroup if needed)
            if split_dst:
                edits.append(TextEdit(A.Span(call.span.start, call.func.span.end), "permute"))
                edits.append(TextEdit(shape_arg.span, target))
                title = f"Change to permute(..., {target})"
            else:
                edits.append(TextEdit(A.Span(x.span.start, x.span.start), "permute("))
                edits.append(TextEdit(A.Span(x.span.end, x.span.end), f", {target})"))
                title = f"Permute to {target} first"
        else:
            source_order = "[" + " ".join(src_f) + "]"
            if split_dst:
                edits.append(TextEdit(A.Span(call.span.start, call.span.start), "permute("))
                edits.append(TextEdit(shape_arg.span, source_order))
                edits.append(TextEdit(A.Span(call.span.end, call.span.end), f", {target})"))
                title = f"Reshape to {source_order}, then permute to {target}"
            else:
                edits.append(TextEdit(A.Span(x.span.start, x.span.start), "permute(reshape("))
                edits.append(TextEdit(A.Span(x.span.end, x.span.end), f", {source_order}), {target})"))
                title = f"Split to {source_order} and permute to {target} first"
        return Fix(title, tuple(edits))

    # -------------------------------------------------------------- W0302, W0303

    def probabilities(self, call: A.Call, fn: str, bound: dict[str, A.Expr]) -> None:
        expects = {
            "cross_entropy": ("logits", "logits (it applies log_softmax itself)", "softmax"),
            "binary_cross_entropy_with_logits": ("z", "logits (it applies sigmoid itself)", "sigmoid"),
            "nll": ("logp", "log-probabilities, as log_softmax gives", None),
            "kl_div": ("logp", "log-probabilities, as log_softmax gives", None),
        }
        if fn == "log":
            x = bound.get("x")
            inner = x if isinstance(x, A.Call) else None
            found = self.callee(inner) if inner is not None else None
            if inner is not None and found is not None and found[:2] == ("builtin", "softmax"):
                edits = (
                    TextEdit(A.Span(call.span.start, inner.func.span.end), "log_softmax"),
                    TextEdit(A.Span(inner.span.end, call.span.end), ""),
                )
                self.diags.append(C.W0303.at(call.span, fix=Fix("Change to log_softmax(...)", edits)))
            return
        if fn not in expects:
            return
        pname, want, unwrap = expects[fn]
        arg = bound.get(pname)
        t = self.c.types.get(arg) if arg is not None else None
        if arg is None or not isinstance(t, T.TensorT) or t.elem.refine != "prob":
            return
        source = self._prob_source(arg)
        related = (LocalRelated("the probabilities are made here", source.span),) if source is not arg else ()
        fix = None
        inner = _direct_call(self, arg)
        if inner is not None and inner[1] == unwrap and inner[0].args:
            first = inner[0].args[0]
            fix = Fix(
                f"Pass the logits, not {unwrap}(...)",
                (
                    TextEdit(A.Span(arg.span.start, first.span.start), ""),
                    TextEdit(A.Span(first.span.end, arg.span.end), ""),
                ),
            )
        elif inner is not None and inner[1] == "softmax" and unwrap is None:
            fix = Fix("Change to log_softmax", (TextEdit(inner[0].func.span, "log_softmax"),))
        self.diags.append(
            C.W0302.at(arg.span, fn=fn, param=pname, want=want, found=t.show_elem(), related=related, fix=fix)
        )

    def _prob_source(self, e: A.Expr) -> A.Expr:
        """The softmax or sigmoid call a Prob value came from, through locals."""
        seen: set[A.Node] = set()
        while isinstance(e, A.Name) and e not in seen:
            seen.add(e)
            ref = self.c.refs.get(e)
            if ref is None or ref.kind != "local" or len(ref.defs) != 1 or ref.defs[0] not in self.values:
                break
            e = self.values[ref.defs[0]]
        return e

    # -------------------------------------------------------------- W1102, W1103

    def flow(self, e: A.Node) -> Flow:
        if e in self.flows:
            return self.flows[e]
        if e in self.busy:
            return Flow()
        self.busy.add(e)
        try:
            f = self._flow(e)
        finally:
            self.busy.discard(e)
        self.flows[e] = f
        return f

    def _flow(self, e: A.Node) -> Flow:
        c = self.c
        if isinstance(e, A.Name):
            ref = c.refs.get(e)
            if ref is None:
                return Flow()
            if ref.kind == "param":
                return Flow(model=e) if ref.name == self.model else Flow()
            if ref.kind == "local":
                out = Flow(logprob=_LOGPROB_NAME.search(e.name) is not None)
                for d in ref.defs:
                    if d in self.values:
                        out = _join(out, self.flow(self.values[d]))
                return out
            return Flow()
        if isinstance(e, A.Call):
            found = self.callee(e)
            name = found[1] if found is not None and found[0] == "builtin" else None
            if name == "stop_grad":
                return Flow()
            args = [self.flow(a.value) for a in e.args]
            model = next((f.model for f in args if f.model is not None), None)
            if model is None:  # m(x), m.value(s): a call of the model or its method
                model = self.flow(e.func.value if isinstance(e.func, A.Field) else e.func).model
            if name in ("log_softmax", "nll", "cross_entropy"):  # (minus) log-probabilities
                return Flow(model=model, logprob=True)
            if name in ("softmax", "sigmoid"):
                return Flow(model=model, prob=True)
            if name == "log" and args and args[0].prob:
                return Flow(model=model, logprob=True)
            keeps = name in ("sum", "mean", "gather", "take", "reshape", "squeeze", "unsqueeze")
            return Flow(
                model=model,
                logprob=keeps and bool(args) and args[0].logprob,
                prob=keeps and bool(args) and args[0].prob,
            )
        if isinstance(e, A.Field):
            return Flow(model=self.flow(e.value).model)
        if isinstance(e, A.Index):
            inner = self.flow(e.value)
            return Flow(inner.model or self.flow(e.index).model, inner.logprob, inner.prob)
        if isinstance(e, A.Unary):
            return self.flow(e.operand)
        if isinstance(e, A.Cast):
            return self.flow(e.value)
        if isinstance(e, A.Binary):
            left, right = self.flow(e.left), self.flow(e.right)
            model = left.model or right.model
            if e.op in ("*", "/"):
                lp = (left.logprob and right.model is None) or (right.logprob and left.model is None and e.op == "*")
                return Flow(model, lp)
            return Flow(model)
        model = None
        for child in _children(e):
            model = model or self.flow(child).model
        return Flow(model)

    def target(self, call: A.Call, fn: str, pred: A.Expr | None, target: A.Expr | None) -> None:
        """mse(v, r + gamma * value(m, s2)): the target reads the model."""
        if self.model is None or target is None:
            return
        f = self.flow(target)
        if f.model is None:
            return
        at, related = self._made_at(target, f"the target of {fn}")
        self.loss_diags.append(
            C.W1102.at(
                at.span,
                fn=fn,
                model=self.model,
                related=(*related, LocalRelated(f"{self.model} is read here", f.model.span)),
                fix=_wrap_stop_grad(at),
            )
        )

    def _made_at(self, e: A.Expr, what: str) -> tuple[A.Expr, tuple[LocalRelated, ...]]:
        """Where a value that reads the model is made: the value of a local's
        one assignment (where `stop_grad` belongs), else the expression."""
        if isinstance(e, A.Name):
            ref = self.c.refs.get(e)
            if ref is not None and ref.kind == "local" and len(ref.defs) == 1 and ref.defs[0] in self.values:
                value = self.values[ref.defs[0]]
                if self.flow(value).model is not None and not isinstance(value, A.TupleExpr):
                    return value, (LocalRelated(f"used as {what} here", e.span),)
        return e, ()

    def product(self, e: A.Binary) -> None:
        """(R - value(m, s)) * log_prob: an advantage that reads the model."""
        if self.model is None:
            return
        left, right = self.flow(e.left), self.flow(e.right)
        for lp, other, node in ((left, right, e.right), (right, left, e.left)):
            if lp.logprob and other.model is not None and not other.prob and not other.logprob:
                at, related = self._made_at(node, "a log-probability's weight")
                if at in self.reported:
                    return
                self.reported.add(at)
                self.loss_diags.append(
                    C.W1103.at(
                        at.span,
                        model=self.model,
                        related=(*related, LocalRelated(f"{self.model} is read here", other.model.span)),
                        fix=_wrap_stop_grad(at),
                    )
                )
                return

    # -------------------------------------------------------------- W1104, W0402

    def differentiated_with_eval(self, call: A.Call) -> None:
        """value_and_grad(loss, m, x, Eval): a model trained without dropout."""
        if len(call.args) < 2 or not isinstance(self.c.types.get(call.args[1].value), T.ModelT):
            return
        for a in call.args[2:]:
            if a.keyword is None and _mode(a.value) == "Eval":
                self.diags.append(C.W1104.at(a.value.span, fn=_text(call.args[0].value)))

    def modes(self, call: A.Call, callee: str) -> None:
        """An evaluation function that runs the model in Train mode."""
        own = self.c.fn.name.split(".")[-1]
        for a in call.args:
            mode = _mode(a.value)
            if mode == "Train" and (_EVALUATION.match(own) or _EVALUATION.match(callee.split(".")[-1])):
                where = own if _EVALUATION.match(own) else callee.split(".")[-1]
                self.diags.append(C.W0402.at(a.value.span, fn=where))
            elif mode == "Eval" and self.model is not None and not _EVALUATION.match(own):
                self.loss_diags.append(C.W1104.at(a.value.span, fn=own))

    # -------------------------------------------------------------- W0205

    def where_mask(self, call: A.Call, bound: dict[str, A.Expr]) -> None:
        cond = bound.get("cond")
        a = bound.get("a")
        b = bound.get("b")
        if cond is None or a is None or b is None:
            return
        if _very_negative(a):
            self.mask_use(cond, blocked=True, use=call)
        elif _very_negative(b):
            self.mask_use(cond, blocked=False, use=call)

    def mask_use(self, e: A.Expr, blocked: bool, use: A.Call) -> None:
        m = self.mask(e)
        if m is None:
            return
        side, k = m.allowed(blocked)
        if side == "upper" or k >= 1:
            problem = "lets each position attend to the positions after it (the future)"
        elif k <= -1:
            problem = "blocks each position from itself: the first position attends to nothing (a softmax of NaN)"
        else:
            return
        how = "blocks" if blocked else "keeps"
        made = f"{m.tri}(..., diagonal={m.k})" if m.k else f"{m.tri}(...)"
        if m.flipped:
            made = f"the complement of {made}"
        self.diags.append(
            C.W0205.at(
                e.span,
                how=how,
                made=made,
                problem=problem,
                related=(LocalRelated("the mask is made here", m.origin.span),),
            )
        )

    def mask(self, e: A.Node, depth: int = 0) -> Mask | None:
        if depth > 20:
            return None
        if isinstance(e, A.Name):
            ref = self.c.refs.get(e)
            if ref is None or ref.kind != "local" or len(ref.defs) != 1 or ref.defs[0] not in self.values:
                return None
            return self.mask(self.values[ref.defs[0]], depth + 1)
        if isinstance(e, A.Cast):
            return self.mask(e.value, depth + 1)
        if isinstance(e, A.Not):
            m = self.mask(e.operand, depth + 1)
            return m.flip() if m is not None else None
        if isinstance(e, A.Index):
            return self.mask(e.value, depth + 1)
        if isinstance(e, A.Compare):
            lit = _number(e.right)
            if lit is None:
                return None
            m = self.mask(e.left, depth + 1)
            if m is None:
                return None
            if (e.op == "==" and lit == 0) or (e.op in ("!=", "<") and lit == 1) or (e.op == "<=" and lit == 0):
                return m.flip()
            if (e.op == "==" and lit == 1) or (e.op in ("!=", ">") and lit == 0) or (e.op == ">=" and lit == 1):
                return m
            return None
        if isinstance(e, A.Binary) and e.op == "-" and _number(e.left) == 1:
            m = self.mask(e.right, depth + 1)
            return m.flip() if m is not None else None
        if isinstance(e, A.Call):
            found = self.callee(e)
            if found is None or found[0] != "builtin":
                return None
            if found[1] in ("tril", "triu"):
                bound = _bind(e, found[2])
                k = bound.get("diagonal")
                kv = _number(k) if k is not None else 0
                if kv is None or kv != int(kv):
                    return None
                return Mask(found[1], int(kv), False, e)
            if found[1] in ("reshape", "stop_grad") and e.args:
                return self.mask(e.args[0].value, depth + 1)
        return None

    # -------------------------------------------------------------- W0401

    def swapped(self, call: A.Call, fn: str, params: list[str]) -> None:
        """f(logvar, mu) into f(mu, logvar): two same-typed arguments whose
        names are each other's parameters."""
        if fn in _SYMMETRIC:
            return
        positional = [a for a in call.args if a.keyword is None]
        names = [_arg_name(a.value) for a in positional]
        for i, a_i in enumerate(names):
            if a_i is None or i >= len(params) or _matches(a_i, params[i]):
                continue
            for j in range(i + 1, min(len(names), len(params))):
                a_j = names[j]
                if a_j is None or _matches(a_j, params[j]):
                    continue
                if not (_matches(a_i, params[j]) and _matches(a_j, params[i])):
                    continue
                ti = self.c.types.get(positional[i].value)
                tj = self.c.types.get(positional[j].value)
                if ti is None or ti != tj or T.is_unknown(ti):
                    continue
                x, y = positional[i].value, positional[j].value
                fix = Fix(
                    f"Swap {a_i} and {a_j}",
                    (TextEdit(x.span, _text(y)), TextEdit(y.span, _text(x))),
                )
                self.diags.append(
                    C.W0401.at(
                        A.Span(x.span.start, y.span.end),
                        fn=fn.split(".")[-1],
                        first=_text(x),
                        second=_text(y),
                        p=params[i],
                        q=params[j],
                        fix=fix,
                    )
                )
                return


# ------------------------------------------------------------------ helpers


def _statements(body: tuple[A.Stmt, ...]) -> Iterator[A.Stmt]:
    for s in body:
        yield s
        if isinstance(s, A.If):
            for br in s.branches:
                yield from _statements(br.body)
            if s.orelse:
                yield from _statements(s.orelse)
        elif isinstance(s, (A.For, A.While)):
            yield from _statements(s.body)


def _names(target: A.Node) -> Iterator[A.Node]:
    if isinstance(target, A.Name):
        yield target
    elif isinstance(target, (A.TupleExpr, A.NameList)):
        for x in target.items:
            yield from _names(x)


def _children(e: A.Node) -> Iterator[A.Node]:
    for node in A.walk(e):
        if node is not e and isinstance(node, (A.Name, A.Call, A.Field)):
            yield node


def _join(a: Flow, b: Flow) -> Flow:
    return Flow(a.model or b.model, a.logprob or b.logprob, a.prob or b.prob)


def _bind(call: A.Call, params: list[str]) -> dict[str, A.Expr]:
    out: dict[str, A.Expr] = {}
    i = 0
    for a in call.args:
        if a.keyword is not None:
            out[a.keyword.text] = a.value
        else:
            if i < len(params):
                out.setdefault(params[i], a.value)
            i += 1
    return out


def _position(e: A.Expr) -> int | None:
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.IntLit):
        return -e.operand.value
    return None


def _number(e: A.Node | None) -> float | None:
    if isinstance(e, A.BoolLit):
        return float(e.value)
    if isinstance(e, (A.IntLit, A.FloatLit)):
        return float(e.value)
    if isinstance(e, A.Unary) and isinstance(e.operand, (A.IntLit, A.FloatLit)):
        return -float(e.operand.value) if e.op == "-" else float(e.operand.value)
    return None


def _very_negative(e: A.Node) -> bool:
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.Name) and e.operand.name == "inf":
        return True
    v = _number(e)
    return v is not None and v <= -1e4


def _in_order_of(group: tuple[str, ...], order: list[str]) -> tuple[str, ...]:
    """A product's factors in the order they appear in `order` (when each does)."""
    if not all(f in order for f in group):
        return group
    return tuple(sorted(group, key=order.index))


def _factors(d: T.Dim) -> tuple[str, ...] | None:
    """The named factors of a dim (`(NH*HD)` is NH, HD); () for 1; None when
    the dim is not a product of names."""
    if isinstance(d, (T.DimConst, T.DimVar)):
        return (d.name,)
    if isinstance(d, T.DimLit):
        return () if d.value == 1 else None
    if isinstance(d, T.DimExpr):
        return _text_factors(d.text.replace(" ", ""))
    return None


def _text_factors(text: str) -> tuple[str, ...] | None:
    """The factors of a product as written, in its order: `(PH*PW*C)` is PH,
    PW, C; a factor that is not a name, such as `(H/PH)`, is one factor, its
    text; None when a factor is a number other than 1."""
    pieces = A.top_level(A.unwrapped(text), "*")
    if len(pieces) == 1:
        piece = pieces[0]
        if _NAME.fullmatch(piece):
            return (piece,)
        if piece.isdigit():
            return () if piece == "1" else None
        return (f"({piece})",)  # a sum or a division: one factor
    out: list[str] = []
    for piece in pieces:
        inner = _text_factors(piece)
        if inner is None:
            return None
        out.extend(inner)
    return tuple(out)


def _alone(d: T.Dim) -> bool:
    return isinstance(d, (T.DimConst, T.DimVar)) and T.dim_value(d) != 1


def _product(dims: tuple[T.Dim, ...]) -> DX.Poly | None:
    out = DX.const(1)
    for d in dims:
        p = T.dim_poly(d)
        if p is None:
            return None
        out = DX.mul(out, p)
    return out


def _moved_alone(src: tuple[T.Dim, ...], dst: tuple[T.Dim, ...]) -> str | None:
    """A named dim once in each shape with a different number of elements
    before it: reshape left its data elsewhere."""
    for i, d in enumerate(src):
        if not _alone(d) or sum(T.same_dim(d, e) and _alone(e) for e in src) != 1:
            continue
        hits = [j for j, e in enumerate(dst) if _alone(e) and T.same_dim(d, e)]
        if len(hits) != 1:
            continue
        before_src, before_dst = _product(src[:i]), _product(dst[: hits[0]])
        if before_src is not None and before_dst is not None and before_src != before_dst:
            return str(d)
    return None


def _closest_order(dims: tuple[T.Dim, ...], other: tuple[T.Dim, ...]) -> tuple[T.Dim, ...] | None:
    """The order of `dims` nearest their own (fewest pairs swapped) that
    `other` reshapes to without moving a dim; None if none (or too many dims)."""
    if len(dims) > 6:
        return None
    best: tuple[int, tuple[T.Dim, ...]] | None = None
    for perm in itertools.permutations(range(len(dims))):
        order = tuple(dims[k] for k in perm)
        if _moved_alone(other, order) is not None or _moved_alone(order, other) is not None:
            continue
        swaps = sum(perm[a] > perm[b] for a in range(len(perm)) for b in range(a + 1, len(perm)))
        if best is None or swaps < best[0]:
            best = (swaps, order)
    return best[1] if best is not None and best[0] > 0 else None


def _shape_text(dims: tuple[T.Dim, ...]) -> str:
    return "[" + " ".join(d.text if isinstance(d, T.DimExpr) else str(d) for d in dims) + "]"


def _permuted_fix(
    call: A.Call, x: A.Expr, shape_arg: A.Expr, src: tuple[T.Dim, ...], dst: tuple[T.Dim, ...]
) -> Fix | None:
    """Split in the source's order, then permute (`permute(reshape(x,
    [b T NH HD]), [b NH T HD])`); or permute the source first, then merge."""
    split = _closest_order(dst, src)
    if split is not None:
        edits = (
            TextEdit(A.Span(call.span.start, call.span.start), "permute("),
            TextEdit(shape_arg.span, _shape_text(split)),
            TextEdit(A.Span(call.span.end, call.span.end), f", {_shape_text(dst)})"),
        )
        return Fix(f"Reshape to {_shape_text(split)}, then permute to {_shape_text(dst)}", edits)
    merge = _closest_order(src, dst)
    if merge is not None:
        edits = (
            TextEdit(A.Span(x.span.start, x.span.start), "permute("),
            TextEdit(A.Span(x.span.end, x.span.end), f", {_shape_text(merge)})"),
        )
        return Fix(f"Permute to {_shape_text(merge)} first", edits)
    return None


def _first_moved(src: list[str], dst: list[str]) -> str:
    for a, b in zip(src, dst, strict=True):
        if a != b:
            return b
    return dst[0]


def _direct_call(lints: Lints, e: A.Expr) -> tuple[A.Call, str] | None:
    if not isinstance(e, A.Call):
        return None
    found = lints.callee(e)
    if found is None or found[0] != "builtin":
        return None
    return e, found[1]


def _mode(e: A.Expr) -> str | None:
    if isinstance(e, A.Name) and e.name in ("Eval", "Train"):
        return e.name
    if isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.name == "Train":
        return "Train"
    return None


def _arg_name(e: A.Expr) -> str | None:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        return e.name.text
    return None


def _matches(arg: str, param: str) -> bool:
    if len(param) < 2:  # f(q, p) into f(p, q): one-letter names are often swapped on purpose
        return False
    return arg == param or arg.endswith("_" + param) or arg.startswith(param + "_")


def _text(e: A.Node) -> str:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Field):
        return f"{_text(e.value)}.{e.name.text}"
    return "this"


def _wrap_stop_grad(e: A.Expr) -> Fix:
    return Fix(
        "Wrap in stop_grad(...)",
        (TextEdit(A.Span(e.span.start, e.span.start), "stop_grad("), TextEdit(A.Span(e.span.end, e.span.end), ")")),
    )


def lint_body(c: BodyChecker) -> tuple[list[LocalDiagnostic], list[LocalDiagnostic]]:
    return Lints(c).run()
