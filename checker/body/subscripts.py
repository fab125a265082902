"""Subscripts on any dim, as torch takes them: `x[:, i:j]`, `x[i, j]`,
`x[..., -1]`, `x[:, ::2]`, labels at any position (`logp[arange(b), y]`),
and index assignment (`x[:, :10] = 0.0`, `m.buf[t] = v`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import shapes as S
from .. import types as T
from .engine_api import EngineBase
from .env import Env
from .text import cast_binding_note, expr_text


@dataclass(slots=True)
class _Item:
    """One subscript, typed: what it is and what it holds."""

    node: A.Expr | A.Slice | A.EllipsisItem
    kind: str  # "int", "slice", "labels", "all" (`...`)
    labels: T.TensorT | None = None


class SubscriptRules(EngineBase):
    def subscripts(self, e: A.Index, t: T.Type, env: Env) -> T.Type:
        """`x[a, b:c, ..., labels]`: each subscript takes one dim (`...` the
        dims no other takes, and dims after the last subscript are kept).
        An Int drops its dim, a slice gives it its size, labels `Index[d]` of
        the dim d gather along it (torch's advanced indexing: several label
        tensors broadcast together, and their dims stand where the labels are
        when they are next to each other, else in front)."""
        raw = e.index.items if isinstance(e.index, A.Subscripts) else (e.index,)
        items: list[_Item] = []
        failed = False
        ellipsis: A.EllipsisItem | None = None
        for node in raw:
            if isinstance(node, A.EllipsisItem):
                if ellipsis is not None and not failed:
                    self.diags.append(
                        C.E0215.at(node.span, what=self._sub_text(e), problem=C.E0215.say("ellipsis_twice"))
                    )
                    failed = True
                ellipsis = ellipsis or node
                items.append(_Item(node, "all"))
            elif isinstance(node, A.Arg):
                self.value(node.value, env)
                if not failed and not isinstance(t, T.UnknownT):
                    problem = C.E0215.say("option")
                    self.diags.append(C.E0215.at(node.span, what=self._sub_text(e), problem=problem))
                failed = True
            elif isinstance(node, A.Slice):
                failed = not self._slice_parts(node, env) or failed
                items.append(_Item(node, "slice"))
            else:
                it = self.value(node, env)
                if isinstance(it, T.TensorT):
                    items.append(_Item(node, "labels", it))
                elif isinstance(it, T.UnknownT) or (isinstance(it, T.NumberT) and it.kind == "Int"):
                    items.append(_Item(node, "int"))
                else:
                    self.diags.append(C.E0301.at(node.span, context="index: ", expected="Int", found=T.describe(it)))
                    failed = True
        if failed or isinstance(t, T.UnknownT):
            return T.UNKNOWN
        only_slices = all(i.kind == "slice" for i in items)
        op = "slicing" if only_slices else "indexing"
        if not isinstance(t, T.TensorT):
            self.diags.append(C.E0306.at(e.span, op=op, left=T.describe(t), right="", detail=""))
            return T.UNKNOWN
        taking = [i for i in items if i.kind != "all"]
        if len(taking) > t.rank:
            extra = taking[t.rank]
            span = e.span if len(raw) == 1 else extra.node.span
            needed = f"{len(taking)} dim{'s' if len(taking) != 1 else ''} or more"
            if len(raw) == 1:
                needed = "1 dim or more"
            else:
                op = f"{op} {self._sub_text(e)}"
            self.diags.append(C.E0210.at(span, operation=op, needed=needed, found=str(t)))
            return T.UNKNOWN
        # each subscript's dim: from the left up to `...`, from the right after it
        at: list[int] = []
        if ellipsis is not None:
            split = next(k for k, i in enumerate(items) if i.kind == "all")
            before = [i for i in items[:split] if i.kind != "all"]
            after = [i for i in items[split + 1 :] if i.kind != "all"]
            covered = t.rank - len(before) - len(after)
            for k in range(len(items)):
                if k < split:
                    at.append(k)
                elif k == split:
                    at.append(-1)
                else:
                    at.append(k - 1 + covered)
        else:
            at = list(range(len(items)))
        # what each dim becomes: None (dropped), a dim, or the labels' place
        out: list[tuple[str, T.Dim | None]] = [("keep", d) for d in t.dims]
        label_dims: list[tuple[T.Dim, ...]] = []
        label_items: list[_Item] = []
        for i, k in zip(items, at):
            if i.kind == "all":
                continue
            d = t.dims[k]
            if i.kind == "int":
                if not self._index_in_range(cast(A.Expr, i.node), d):
                    return T.UNKNOWN
                out[k] = ("drop", None)
            elif i.kind == "slice":
                assert isinstance(i.node, A.Slice)
                size = self._slice_size(i.node, d)
                if size is None:
                    return T.UNKNOWN
                out[k] = ("keep", size)
            else:
                assert i.labels is not None
                labels = i.labels
                if labels.elem.index is None or not T.dims_equal(labels.elem.index, d):
                    want = T.TensorT(labels.dims, T.index_of(d))
                    what = f"index into {expr_text(e.value)} ({t}) by labels of its dim {d}: "
                    if len(raw) == 1:
                        what = f"index into {expr_text(e.value)} ({t}) by labels of its first dim {d}: "
                    self.diags.append(C.E0305.at(i.node.span, context=what, expected=str(want), found=str(labels)))
                    return T.UNKNOWN
                out[k] = ("labels", None)
                label_dims.append(labels.dims)
                label_items.append(i)
        if not label_dims:
            return T.TensorT(tuple(d for kind, d in out if kind == "keep" and d is not None), t.elem)
        gathered: tuple[T.Dim, ...] = label_dims[0]
        for more, i in zip(label_dims[1:], label_items[1:]):
            b = S.broadcast(gathered, more)
            if isinstance(b, S.DimClash):
                shown = " and ".join(str(T.TensorT(x)) for x in label_dims)
                problem = C.E0215.say("labels_broadcast", shown=shown, left=str(b.left), right=str(b.right))
                self.diags.append(C.E0215.at(i.node.span, what=self._sub_text(e), problem=problem))
                return T.UNKNOWN
            gathered = b
        # torch drops the Int subscripts first: the labels are next to each
        # other when no slice or kept dim stands between them
        rest = [kind for kind, _ in out if kind != "drop"]
        places = [k for k, kind in enumerate(rest) if kind == "labels"]
        together = places[-1] - places[0] + 1 == len(places)
        dims: list[T.Dim] = []
        placed = False
        if not together:
            dims.extend(gathered)
            placed = True
        for kind, d in out:
            if kind == "keep" and d is not None:
                dims.append(d)
            elif kind == "labels" and not placed:
                dims.extend(gathered)
                placed = True
        return T.TensorT(tuple(dims), t.elem)

    def _sub_text(self, e: A.Index) -> str:
        return f"{expr_text(e.value)}[{expr_text(e.index)}]"

    def _slice_parts(self, s: A.Slice, env: Env) -> bool:
        """The bounds and step of a slice are Ints (E0301); a step written as
        a number is 1 or more (E0218); whether they are."""
        ok = True
        for b, what in ((s.start, "slice bound: "), (s.end, "slice bound: "), (s.step, "slice step: ")):
            if b is None:
                continue
            bt = self.value(b, env)
            if not isinstance(bt, T.UnknownT) and not (isinstance(bt, T.NumberT) and bt.kind == "Int"):
                if ok:
                    found = T.describe(bt) + cast_binding_note(b, "Int")
                    self.diags.append(C.E0301.at(b.span, context=what, expected="Int", found=found))
                ok = False
        if ok and s.step is not None:
            step = self.int_value(s.step)
            if step is not None and step < 1:
                self.diags.append(C.E0218.at(s.step.span, step=str(step)))
                ok = False
        return ok

    def _slice_size(self, s: A.Slice, d: T.Dim) -> T.Dim | None:
        """The size of `d` sliced by `s`: known when the bounds (and the step)
        are, `?` when one is known only at run time; None after E0213."""
        n = T.dim_poly(d)
        start = self.slice_bound(s.start, n, DX.const(0))
        end = self.slice_bound(s.end, n, n)
        step = 1 if s.step is None else self.int_value(s.step)
        if start is None or end is None or n is None or step is None:
            return T.DimUnknown()
        span = DX.sub(end, start)
        value, whole = DX.value(span), DX.value(n)
        lo, hi = DX.value(start), DX.value(end)
        problem = None
        if value is not None and value <= 0:
            problem = C.E0213.say("keeps_none", value=str(value), dim=str(d))
        elif whole is not None and ((lo is not None and lo > whole) or (hi is not None and hi > whole)):
            problem = C.E0213.say("past_end", dim=str(d))
        elif lo is not None and lo < 0:
            problem = C.E0213.say("before_start", count=str(-lo), dim=str(d))
        if problem is not None:
            self.diags.append(C.E0213.at(s.span, dim=str(d), reason=problem))
            return None
        if T.is_run(d) and span != n and not T.run_keys(T.dim_of_poly(span)):
            # a fixed count cut from a size known only at run time (`x[-K:]` of
            # `[n D]`): torch keeps fewer when n is smaller, so it is not known
            return T.DimUnknown()
        if step == 1:
            return d if span == n else T.dim_of_poly(span)  # `:` keeps the dim as it is named
        size = DX.div(DX.add(span, DX.const(step - 1)), DX.const(step))  # ceil(span / step)
        assert size is not None  # step >= 1
        if DX.value(size) is not None:
            return T.dim_of_poly(size)
        text = DX.render(size, T.shown_name)
        return T.dim_of_poly(size, text if _wrapped(text) else f"({text})")

    def _index_in_range(self, node: A.Expr, d: T.Dim) -> bool:
        """An index known statically lies in its dim when the dim's size is
        known (E0217): `-n <= i < n`."""
        n = T.dim_value(d)
        i = self.int_value(node)
        if n is None or i is None or -n <= i < n:
            return True
        reason = C.E0217.say("entries", n=str(n), last=str(n - 1))
        dim = str(d) if str(d) != str(n) else f"a dim of {n}"
        self.diags.append(C.E0217.at(node.span, index=str(i), dim=dim, reason=reason))
        return False

    # ------------------------------------------------------------ assignment

    def assign_index(
        self,
        target: A.Index,
        t: T.Type,
        value: A.Expr,
        env: Env,
        part: T.Type | None = None,
        op: str = "",
    ) -> None:
        """`x[i] = e` (a local: the variable now holds a copy with that part
        replaced) and `m.buf[t] = e` (a model's field, in place, through a
        mut parameter). The value broadcasts to the indexed part (E0219) and
        has its element type (E0302); `part` is the indexed part's type when
        the caller has typed it (`x[i] += e`)."""
        if part is None:
            part = self.expr(target, env)
        base = target.value
        base_t = self.types.get(base, T.UNKNOWN)
        if not isinstance(base_t, T.TensorT):
            if not T.is_unknown(part) and not T.is_unknown(base_t):
                self.diags.append(
                    C.E0306.at(target.span, op="index assignment", left=T.describe(base_t), right="", detail="")
                )
            return
        var = None
        if isinstance(base, A.Name):
            var = env.vars.get(base.name)
            if var is not None and var.param is not None and var.param.mut:
                self.diags.append(C.E0504.at(base.span, name=base.name))
                return
        elif isinstance(base, A.Field):
            obj_t = self.types.get(base.value, T.UNKNOWN)
            if isinstance(obj_t, T.GradT):
                self.diags.append(C.E0505.at(base.span, model=obj_t.model))
                return
            if isinstance(obj_t, T.ModelT):
                root = base.value
                while isinstance(root, (A.Field, A.Index)):
                    root = root.value
                root_var = env.vars.get(root.name) if isinstance(root, A.Name) else None
                if not self.require_mut(base, root, root_var):
                    return
        if T.is_unknown(part) or T.is_unknown(t) or T.is_unknown(base_t):
            return
        what = f"{expr_text(target)} {op}= ...: "
        if not isinstance(part, T.TensorT):
            return
        weakened: T.Elem | None = None
        if isinstance(t, T.NumberT) and t.kind in ("Int", "Float", "Bool"):
            elem = part.elem
            fits = (t.kind == "Int" and (elem.is_int or elem.is_float)) or (t.kind == "Float" and elem.is_float)
            fits = fits or (t.kind == "Bool" and elem.is_bool)
            if not fits:
                self.diags.append(C.E0302.at(value.span, context=what, expected=str(elem), found=f"number {t.kind}"))
                return
            if elem.index is not None or elem.refine == "prob" or (elem.refine == "nonneg" and not t.nonneg):
                weakened = T.Elem(elem.dtype)
        elif isinstance(t, T.TensorT):
            if t.elem.dtype != part.elem.dtype:
                self.diags.append(C.E0302.at(value.span, context=what, expected=str(part.elem), found=str(t.elem)))
                return
            if not T.elem_assignable(t.elem, part.elem):
                weakened = T.Elem(part.elem.dtype)
            if not _broadcasts_to(t.dims, part.dims):
                self.diags.append(
                    C.E0219.at(value.span, target=f"{expr_text(target)} {op}", found=str(t), part=str(part))
                )
                return
        else:
            self.diags.append(
                C.E0301.at(value.span, context=what, expected="a tensor or a number", found=T.describe(t))
            )
            return
        if weakened is None:
            return
        if isinstance(base, A.Name) and var is not None:
            # a local loses the refinement its new entries do not keep
            new = T.TensorT(base_t.dims, weakened)
            env.vars[base.name] = dataclasses.replace(var, type=new)
            self.locals[base.name] = new
            return
        found = T.describe(t) if isinstance(t, T.NumberT) else t.show_elem()
        self.diags.append(C.E0304.at(value.span, context=what, expected=part.show_elem(), found=found))


def _wrapped(text: str) -> bool:
    """`((t+1)/2)`: one pair of parentheses around the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for k, c in enumerate(text):
        depth += 1 if c == "(" else -1 if c == ")" else 0
        if depth == 0 and k < len(text) - 1:
            return False
    return True


def _broadcasts_to(value: tuple[T.Dim, ...], part: tuple[T.Dim, ...]) -> bool:
    """A value of dims `value` fills a part of dims `part`: as many dims or
    fewer, each the part's (aligned from the right) or 1."""
    if len(value) > len(part):
        return False
    return all(T.dims_equal(v, p) or T.is_one(v) for v, p in zip(reversed(value), reversed(part)))
