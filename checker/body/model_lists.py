"""Lists of sub-models in a body (`param layers: (Layer[784, 500],
Layer[500, 500])`, torch's nn.ModuleList and nn.Sequential): a `for` loop
over one, checked once per element in order; an index, an Int literal for a
list of different types; a call, the elements' `forward` one after the other."""

from __future__ import annotations

import dataclasses

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..model_lists import chain_kind, one_type
from ..results import Ref
from .engine_api import EngineBase
from .env import CallArg, Env, Loop, Var
from .text import expr_text


class ModelListRules(EngineBase):
    def for_models(self, s: A.For, env: Env, t: T.TupleT, origin: str | None) -> Env:
        """`for layer in self.layers:` over a list of sub-models: the body is
        checked once per element, in order, `layer` of that element's type and
        the locals flowing from one element's check to the next (`x =
        layer(x)` takes x from `[b 784]` to `[b 500]`). A mistake found for
        several elements at one place is reported once."""
        var = s.targets[0]
        fresh = var.text not in env.vars or env.vars[var.text].loop_only
        if fresh and var.text in env.vars:
            env = env.copy()
            env.vars.pop(var.text, None)
        lo, hi = s.span.start, s.span.end
        # `for layer in m.layers:` of a mut m: each layer may change (opt.step(layer, g))
        root = env.vars.get(origin.partition(".")[0]) if origin is not None else None
        param = root.param if root is not None and root.param is not None and root.param.mut else None
        state = env
        exits: list[Env] = []
        seen: set[tuple[str, int, int, str]] = set()
        first: dict[A.Node, T.Type] = {}
        differs: set[A.Node] = set()
        for k, item in enumerate(t.items):
            mark = len(self.diags)
            loop = Loop()
            self.loops.append(loop)
            st = state.copy()
            st.dead = False
            for name, v in st.vars.items():
                if name not in env.vars and not v.loop_only:
                    # bound by an earlier element's pass: the next binds it afresh, of its own type
                    st.vars[name] = dataclasses.replace(v, maybe_unbound=True, loop_only=True)
            where = f"{origin}.{k}" if origin is not None else None
            st.vars[var.text] = Var(item, frozenset({var}), origin=where, param=param)
            self.types[var] = item
            self.refs[var] = Ref("local", var.text, self.fn.name, (var,))
            self.locals[var.text] = item
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
            for node, nt in self.types.items():  # what a use of `layer` calls, per element
                if lo <= node.span.start < hi and isinstance(nt, (T.ModelT, T.FnRefT)):
                    before = first.setdefault(node, nt)
                    if _runs(before) != _runs(nt):
                        differs.add(node)
        for node in differs:
            # elements of different models: `layer(x)` runs each one's own forward
            # (a Python call through the model), not the last element's method
            self.types[node] = t if isinstance(self.types[node], T.ModelT) else T.UNKNOWN
        out = self.join(env, [state, *exits], s) if exits else state
        if fresh:
            v = out.vars.get(var.text)
            if v is not None and not v.phantom:
                out.vars[var.text] = dataclasses.replace(v, maybe_unbound=True, loop_only=True)
        return out

    def index_models(self, e: A.Index, t: T.TupleT, env: Env) -> T.Type:
        """`self.layers[1]`: that element; an index known only at run time
        reads a list of one type as a stack (E0940 for different types)."""
        index = e.index
        assert not isinstance(index, (A.Slice, A.Subscripts))  # (IndexingRules.index took those)
        k = self.int_value(index)
        if k is None:
            if one_type(t):
                return t.items[0]
            self.diags.append(
                C.E0940.at(
                    index.span,
                    member=expr_text(e.value),
                    types=", ".join(str(x) for x in t.items),
                    last=len(t.items) - 1,
                )
            )
            return T.UNKNOWN
        if not self._index_in_range(index, T.DimLit(len(t.items))):
            return T.UNKNOWN
        return t.items[k]  # (-1: the last, as Python's)

    def call_chain(self, node: A.Node, func: A.Expr, t: T.TupleT, args: list[CallArg], env: Env) -> T.Type:
        """`self.main(x)`, `self.main(x, mode)`: each element's `forward` on
        what the one before gave, as torch's nn.Sequential (E0939 at the first
        element that does not take it)."""
        member = expr_text(func)
        shape_ok = 1 <= len(args) <= 2 and args[0].keyword is None
        if len(args) == 2 and args[1].keyword not in (None, "mode"):
            shape_ok = False
        if not shape_ok:
            problem = C.E0939.say("call_args", member=member)
            self.diags.append(C.E0939.at(func.span, member=member, problem=problem))
            self._eval_args(args, env)
            return T.UNKNOWN
        cur = self.value(args[0].node, env)
        mode: T.Type | None = None
        if len(args) == 2:
            mode = self.value(args[1].node, env)
            if not isinstance(mode, (T.ModeT, T.UnknownT)):
                self.diags.append(
                    C.E0301.at(args[1].span, context=f"{member}: ", expected="Mode", found=T.describe(mode))
                )
                return T.UNKNOWN
        origin = self.origin_of(func, env)
        previous = ""
        for k, item in enumerate(t.items):
            assert isinstance(item, T.ModelT)
            self.global_kind(item.name)
            model = self.g.model(item)
            found = model.method("forward") if model is not None else None
            info = self.g.fns.get(found.name) if found is not None else None
            kind = chain_kind(info.params[1:]) if info is not None else None
            if kind is None or (kind == "mode" and mode is None):
                if kind is None:
                    problem = C.E0939.say("no_forward", index=k, layer=str(item))
                else:
                    problem = C.E0939.say("needs_mode", index=k, layer=str(item), member=member)
                self.diags.append(C.E0939.at(func.span, member=member, problem=problem))
                return T.UNKNOWN
            assert info is not None
            if origin is not None:
                self.path_fact("call", f"{origin}.{k}", info.name, func.span, 0)
            if isinstance(cur, T.UnknownT):
                return T.UNKNOWN
            bindings = S.Bindings(info.generics)
            S.match(info.params[0].type, item, bindings, "self", func.span)
            x = info.params[1]
            if S.match(x.type, cur, bindings, x.name, func.span) is not None:
                expected = str(bindings.subst(x.type))
                if k == 0:
                    problem = C.E0939.say("first", layer=str(item), expected=expected, found=str(cur))
                    self.diags.append(C.E0939.at(args[0].span, member=member, problem=problem))
                else:
                    problem = C.E0939.say(
                        "mismatch",
                        index=k,
                        layer=str(item),
                        expected=expected,
                        before=k - 1,
                        previous=previous,
                        found=str(cur),
                    )
                    self.diags.append(C.E0939.at(func.span, member=member, problem=problem))
                return T.UNKNOWN
            cur = bindings.result(info.ret)
            previous = str(item)
        self.types[node] = cur
        return cur


def _runs(t: T.Type) -> str:
    """What a call of a value of this type runs: its model's forward, or the named method."""
    return t.name if isinstance(t, (T.ModelT, T.FnRefT)) else ""
