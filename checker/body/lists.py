"""Lists built in a body (makemore's `hiddens.append(h)`, then
`torch.stack(hiddens, 1)`): `hs = []`, `hs.append(h)`, `hs += [h]`,
`hs + [h]`, and the length the checker knows after a loop (one append per
round of `for t in range(T)` gives `T`); loops over tuples, checked once per
element (`for y in (a, c):`, `zip`, `enumerate`). docs/language.md, "Lists"
and "Loops over tuples"."""

from __future__ import annotations

import dataclasses

from .. import ast as A
from .. import catalog as C
from .. import dimexpr as DX
from .. import types as T
from ..results import Ref
from .engine_api import EngineBase
from .env import Env, Loop, Var
from .text import expr_text

# The loops over tuples: `zip(ps, qs)` and `enumerate(ps)` in a `for` head.
TUPLE_WALKS = ("zip", "enumerate")


def list_literal_names(e: A.Expr, env: Env) -> tuple[str, ...] | None:
    """The names of a list literal written as a shape in a value's place
    (`[]`, `[h]`, `h` a variable of the body), else None."""
    if not isinstance(e, A.TensorType) or e.elem is not None or e.rest or len(e.dims) > 1:
        return None
    if not e.dims:
        return ()
    d = e.dims[0]
    if isinstance(d, A.DimName) and d.name in env.vars and not env.vars[d.name].phantom:
        return (d.name,)
    return None


def append_call(e: A.Expr) -> A.Call | None:
    """`hs.append(h)` (any method of a name), else None."""
    if isinstance(e, A.Call) and isinstance(e.func, A.Field) and isinstance(e.func.value, A.Name):
        return e
    return None


def _element_ok(t: T.Type) -> bool:
    if isinstance(t, (T.TensorT, T.NumberT, T.UnknownT)):
        return True
    return isinstance(t, T.TupleT) and all(_element_ok(x) for x in t.items)


def same_element(a: T.Type, b: T.Type) -> bool:
    """Two elements of one list: the same shape (dims that agree) and dtype."""
    if a == b or isinstance(a, T.UnknownT) or isinstance(b, T.UnknownT):
        return True
    if isinstance(a, T.TensorT) and isinstance(b, T.TensorT):
        return (
            a.rank == b.rank
            and a.elem.dtype == b.elem.dtype
            and all(T.dims_equal(x, y) for x, y in zip(a.dims, b.dims))
        )
    if isinstance(a, T.NumberT) and isinstance(b, T.NumberT):
        return a.kind == b.kind
    if isinstance(a, T.TupleT) and isinstance(b, T.TupleT):
        return len(a.items) == len(b.items) and all(same_element(x, y) for x, y in zip(a.items, b.items))
    return False


def _plus(length: T.Dim | None, n: T.Dim | None) -> T.Dim | None:
    if length is None or n is None:
        return None
    p, q = T.dim_poly(length), T.dim_poly(n)
    if p is None or q is None:
        return None
    return T.dim_of_poly(DX.add(p, q))


def appends_to(s: A.Stmt, name: str) -> bool:
    """Whether a statement (or one inside it) is `name.append(...)`."""
    for n in A.walk(s):
        if isinstance(n, A.ExprStmt):
            call = append_call(n.expr)
            if call is not None and call.func.value.name == name:  # type: ignore[union-attr]
                return True
    return False


def changes_list(s: A.Stmt, name: str) -> bool:
    """Whether a statement (or one inside it) appends to or assigns `name`."""
    for n in A.walk(s):
        if isinstance(n, A.ExprStmt):
            call = append_call(n.expr)
            if call is not None and isinstance(call.func, A.Field) and call.func.value.name == name:  # type: ignore[union-attr]
                return True
        elif (
            isinstance(n, A.AugAssign)
            and isinstance(n.target, A.Name)
            and n.target.name == name
            or isinstance(n, A.Assign)
            and any(isinstance(t, A.Name) and t.name == name for t in n.targets)
        ):
            return True
    return False


def _jumps(stmts: tuple[A.Stmt, ...]) -> bool:
    """A `break` or `continue` of this loop (not of a loop inside it)."""
    for s in stmts:
        if isinstance(s, (A.Break, A.Continue)):
            return True
        if isinstance(s, A.If) and (
            any(_jumps(b.body) for b in s.branches) or (s.orelse is not None and _jumps(s.orelse))
        ):
            return True
    return False


class ListRules(EngineBase):
    def list_var(self, call: A.Call, env: Env) -> T.Type | None:
        """The type of the variable whose method `call` calls (`hs` of `hs.append(h)`)."""
        assert isinstance(call.func, A.Field) and isinstance(call.func.value, A.Name)
        var = env.vars.get(call.func.value.name)
        return var.type if var is not None else None

    # -------------------------------------------------------------- values

    def list_literal(self, e: A.TensorType, names: tuple[str, ...], env: Env) -> T.Type:
        """`[]` (nothing in it yet) or `[h]`."""
        if not names:
            return T.ListT(None, T.DimLit(0))
        d = e.dims[0]
        t = self.value(A.Name(d.span, names[0]), env)  # the variable read as any name is (E0103 when unbound)
        if isinstance(t, T.ListT):
            self.diags.append(C.E0964.at(e.span, name=names[0], use=C.E0964.say("element", found=T.describe(t))))
            return T.UNKNOWN
        if not _element_ok(t):
            self.diags.append(C.E0964.at(e.span, name=names[0], use=C.E0964.say("element", found=T.describe(t))))
            return T.UNKNOWN
        return T.ListT(t, T.DimLit(1))

    def list_plus(self, cur: T.ListT, more: T.Type, name: str, node: A.Node, what: str) -> T.Type:
        """`cur` with the elements of `more` after its own (`hs + [h]`, `hs += [h]`)."""
        if isinstance(more, T.UnknownT):
            return T.ListT(cur.item, None)
        if not isinstance(more, T.ListT):
            self.diags.append(
                C.E0965.at(node.span, name=name, method="+", problem=C.E0965.say("plus", found=T.describe(more)))
            )
            return T.UNKNOWN
        item = cur.item
        if more.item is not None:
            if item is None:
                item = more.item
            elif not same_element(item, more.item):
                self.diags.append(C.E0961.at(node.span, name=name, what=what, found=more.item, first=item))
        why = cur.why or more.why
        length = _plus(cur.length, more.length)
        return T.ListT(item, length, why if length is None else "")

    def list_method(self, e: A.Call, env: Env, statement: bool) -> Env:
        """`hs.append(h)`: the list one element longer (a statement of its own)."""
        func = e.func
        assert isinstance(func, A.Field) and isinstance(func.value, A.Name)
        name = func.value.name
        cur = self.expr(func.value, env)
        assert isinstance(cur, T.ListT)
        method = func.name.text
        values = [self.value(a.value, env) for a in e.args]
        self.types[e] = T.UNIT
        if method != "append":
            self.diags.append(
                C.E0965.at(func.name.span, name=name, method=method, problem=C.E0965.say("unknown", method=method))
            )
            return self.rebind_list(name, T.UNKNOWN, env) if statement else env  # its uses are not wrong on top
        if len(e.args) != 1 or e.args[0].keyword is not None:
            self.diags.append(
                C.E0965.at(e.paren_span, name=name, method=method, problem=C.E0965.say("args", count=len(e.args)))
            )
            return self.rebind_list(name, T.UNKNOWN, env) if statement else env
        if not statement:
            self.diags.append(C.E0965.at(e.span, name=name, method=method, problem=C.E0965.say("value")))
            return env
        t = values[0]
        arg = e.args[0].value
        if not _element_ok(t):
            self.diags.append(C.E0964.at(arg.span, name=name, use=C.E0964.say("element", found=T.describe(t))))
            return self.rebind_list(name, T.UNKNOWN, env)
        new = self.list_plus(cur, T.ListT(t, T.DimLit(1)), name, arg, f"the element appended here, {expr_text(arg)},")
        return self.rebind_list(name, new, env)

    def rebind_list(self, name: str, new: T.Type, env: Env) -> Env:
        env = env.copy()
        var = env.vars[name]
        env.vars[name] = dataclasses.replace(var, type=new)
        self.locals[name] = new
        return env

    def list_aug(self, s: A.AugAssign, env: Env, cur: T.ListT) -> Env:
        """`hs += [h]`: the elements of the list on the right appended."""
        assert isinstance(s.target, A.Name)
        name = s.target.name
        more = self.value(s.value, env)
        if s.op != "+":
            self.diags.append(
                C.E0965.at(s.op_span, name=name, method=f"{s.op}=", problem=C.E0965.say("unknown", method=f"{s.op}="))
            )
            return env
        new = self.list_plus(cur, more, name, s.value, f"what += appends, {expr_text(s.value)},")
        return self.rebind_list(name, new, env)

    # -------------------------------------------------------------- loops

    def range_rounds(self, it: A.Expr, env: Env) -> DX.Poly | None:
        """The number of rounds of `for i in range(n)` (or `range(a, n)`) of dims or numbers."""
        if not (isinstance(it, A.Call) and isinstance(it.func, A.Name) and it.func.name == "range"):
            return None
        if not 1 <= len(it.args) <= 2 or any(a.keyword is not None for a in it.args):
            return None
        stop = self.rounds_bound(it.args[-1].value, env)
        if len(it.args) == 1 or stop is None:
            return stop
        start = self.rounds_bound(it.args[0].value, env)  # range(start, stop): stop - start rounds
        return DX.sub(stop, start) if start is not None else None

    def rounds_bound(self, e: A.Expr, env: Env) -> DX.Poly | None:
        """A bound of a `range` as a dim: what `test_dim` reads, or an `Int`
        variable (`range(future)`): an Int parameter that sizes the fn's types
        is that dim, any other the size it holds where the loop starts, a
        dim known only at run time (docs: "Dims known only at run time")."""
        if isinstance(e, A.Name) and e.name in env.vars:
            var = env.vars[e.name]
            if not (isinstance(var.type, T.NumberT) and var.type.kind == "Int") or var.phantom:
                return None
            if e.name in self.fn.generics:
                return DX.var(e.name)
            return T.dim_poly(self.int_dim(e.name, var))
        return self.test_dim(e, env)

    def appends_in(self, stmts: tuple[A.Stmt, ...], name: str, env: Env) -> tuple[DX.Poly | None, str]:
        """How many elements one run of `stmts` appends to `name`, or None and
        why that is not known (a variant of E0963)."""
        total = DX.const(0)
        if _jumps(stmts) and any(changes_list(s, name) for s in stmts):
            return None, "jumps"
        for s in stmts:
            if isinstance(s, A.ExprStmt):
                call = append_call(s.expr)
                if call is not None and call.func.value.name == name:  # type: ignore[union-attr]
                    total = DX.add(total, DX.const(1))
            elif isinstance(s, A.AugAssign) and isinstance(s.target, A.Name) and s.target.name == name:
                more = self.types.get(s.value)
                n = T.dim_poly(more.length) if isinstance(more, T.ListT) and more.length is not None else None
                if n is None:
                    return None, "rebound"
                total = DX.add(total, n)
            elif isinstance(s, A.Assign):
                if changes_list(s, name):
                    return None, "rebound"
            elif isinstance(s, A.If):
                if changes_list(s, name):
                    return None, "conditional"
            elif isinstance(s, A.While):
                if changes_list(s, name):
                    return None, "while"
            elif isinstance(s, A.For) and changes_list(s, name):
                rounds = self.range_rounds(s.iter, env)
                if rounds is None:
                    return None, "range"
                inner, why = self.appends_in(s.body, name, env)
                if inner is None:
                    return None, why
                total = DX.add(total, DX.mul(rounds, inner))
        return total, ""

    def settle_lists(self, s: A.For | A.While, entry: Env, out: Env) -> None:
        """After a loop: the length of each list it appended to, where every
        append is made once per round of `for i in range(n)`; else the length
        stays unknown, with the reason."""
        for name, v in list(out.vars.items()):
            t = v.type
            before = entry.vars.get(name)
            if not isinstance(t, T.ListT) or t.length is not None or before is None:
                continue
            if not isinstance(before.type, T.ListT) or before.type.length is None:
                continue
            start = T.dim_poly(before.type.length)
            if isinstance(s, A.While):
                why = "while"
                count = None
            else:
                rounds = self.range_rounds(s.iter, entry)
                count, why = self.appends_in(s.body, name, entry)
                if count is not None and rounds is None:
                    count, why = None, "range"
                elif count is not None and rounds is not None:
                    count = DX.mul(rounds, count)
            if count is None or start is None or v.defs != before.defs:
                new = T.ListT(t.item, None, why or t.why or "rebound")
            else:
                new = T.ListT(t.item, T.dim_of_poly(DX.add(start, count)))
            out.vars[name] = dataclasses.replace(v, type=new)
            self.locals[name] = new

    def for_tuple(self, s: A.For, env: Env, items: tuple[T.Type, ...]) -> Env:
        """`for y in (a, c):`, `for p, q in zip(ps, qs):`: the body checked
        once per element, in order, the names of that element's type."""
        fresh = [v.text for v in s.targets if v.text not in env.vars or env.vars[v.text].loop_only]
        if any(n in env.vars for n in fresh):
            env = env.copy()
            for n in fresh:
                env.vars.pop(n, None)
        state = env
        exits: list[Env] = []
        seen: set[tuple[str, int, int, str]] = set()
        n = len(s.targets)
        for item in items:
            mark = len(self.diags)
            parts: tuple[T.Type, ...] = (item,)
            if n > 1:
                if isinstance(item, T.TupleT) and len(item.items) == n:
                    parts = item.items
                else:
                    span = A.Span(s.targets[0].span.start, s.targets[-1].span.end)
                    if not isinstance(item, T.UnknownT):
                        self.diags.append(C.E0410.at(span, count=n, found=T.describe(item)))
                    parts = (T.UNKNOWN,) * n
            loop = Loop()
            self.loops.append(loop)
            st = state.copy()
            st.dead = False
            for name, v in st.vars.items():
                if name not in env.vars and not v.loop_only:
                    st.vars[name] = dataclasses.replace(v, maybe_unbound=True, loop_only=True)
            for var, t in zip(s.targets, parts):
                st.vars[var.text] = Var(t, frozenset({var}))
                self.types[var] = t
                self.refs[var] = Ref("local", var.text, self.fn.name, (var,))
                self.locals[var.text] = t
            end = self.block(s.body, st)
            self.loops.pop()
            exits.extend(loop.breaks)
            state = self.join(st, [end, *loop.continues], s) if loop.continues else end
            kept = []
            for d in self.diags[mark:]:
                key = (d.code, d.span.start, d.span.end, d.message)
                if key not in seen:
                    seen.add(key)
                    kept.append(d)
            self.diags[mark:] = kept
        out = self.join(env, [state, *exits], s) if exits else state
        if not items:
            out = env
        for name in fresh:
            v = out.vars.get(name)
            if v is not None and not v.phantom:
                out.vars[name] = dataclasses.replace(v, maybe_unbound=True, loop_only=True)
        return out

    def tuple_walk(self, it: A.Call, env: Env) -> tuple[T.Type, ...] | T.Type | None:
        """`zip(ps, qs)` / `enumerate(ps)` in a `for` head: the items of a
        tuple walk (a tuple of each round's items), an iterable of a list's
        (T.IterT), or None after an error."""
        assert isinstance(it.func, A.Name)
        fn = it.func.name
        types = [self.value(a.value, env) for a in it.args]
        what = f"{fn}(...)"
        if (
            (fn == "enumerate" and len(it.args) != 1)
            or (fn == "zip" and len(it.args) < 2)
            or any(a.keyword is not None for a in it.args)
        ):
            self.diags.append(C.E0966.at(it.paren_span, what=what, problem=C.E0966.say("args", count=len(it.args))))
            return None
        if any(T.is_unknown(t) for t in types):
            return None
        if all(isinstance(t, T.ListT) for t in types):
            lists = [t for t in types if isinstance(t, T.ListT)]
            for a, t in zip(it.args, lists):
                if t.item is None:
                    self.diags.append(C.E0962.at(a.value.span, name=expr_text(a.value), use=f"{fn} in a for loop"))
                    return None
            items = [t.item for t in lists if t.item is not None]
            if fn == "enumerate":
                return T.IterT(T.TupleT((T.INT, items[0])))
            return T.IterT(T.TupleT(tuple(items)))
        for i, (a, t) in enumerate(zip(it.args, types)):
            if not isinstance(t, T.TupleT):
                self.diags.append(
                    C.E0966.at(a.value.span, what=what, problem=C.E0966.say("not_tuple", index=i, found=T.describe(t)))
                )
                return None
        tuples = [t for t in types if isinstance(t, T.TupleT)]
        if fn == "enumerate":
            return tuple(T.TupleT((T.INT, x)) for x in tuples[0].items)
        counts = [len(t.items) for t in tuples]
        if len(set(counts)) > 1:
            shown = " and ".join(str(c) for c in counts)
            self.diags.append(C.E0966.at(it.span, what=what, problem=C.E0966.say("lengths", counts=shown)))
            return None
        return tuple(T.TupleT(tuple(t.items[k] for t in tuples)) for k in range(counts[0]))
