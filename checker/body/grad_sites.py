"""`value_and_grad` sites: the function, the model, E0411 and the facts the
read analysis needs."""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
# (the methods of these parts annotate self with BodyChecker, the class they
# are composed into, so each part sees the whole checker; pyright calls that
# a general type issue.)
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from ..declarations import FnInfo
from ..diagnostics import LocalRelated, SymbolRef
from ..results import GradSite, ReadFact
from .builtin_rules import rule
from .env import CallArg, Env

if TYPE_CHECKING:
    from .core import BodyChecker


class GradRules:
    @rule("value_and_grad", raw=True)
    def value_and_grad(
        self: BodyChecker, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span
    ) -> T.Type:
        misused = node not in self.vag_bound
        if misused:
            # Returned, passed on, put in a tuple, piped...: its two results
            # are only ever bound to two names.
            self.vag_bound.add(node)
            self.diags.append(C.E0411.at(node.span, found="used as a value"))
        result = self._value_and_grad(node, args, env, paren)
        return T.UNKNOWN if misused else result

    @rule("grad", raw=True)
    def grad(self: BodyChecker, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
        """`grad(f, m, args...)`: value_and_grad's gradient alone (its result
        may be used as any value: no E0411)."""
        result = self._value_and_grad(node, args, env, paren, "grad")
        return result.items[1] if isinstance(result, T.TupleT) else T.UNKNOWN

    def _value_and_grad(
        self: BodyChecker, node: A.Node, args: list[CallArg], env: Env, paren: A.Span, fn_name: str = "value_and_grad"
    ) -> T.Type:
        positional = [a for a in args if a.keyword is None]
        if len(positional) < 2 or any(a.keyword is not None for a in args[:2]):
            self.diags.append(
                C.E0401.at(
                    paren,
                    name=fn_name,
                    expected="at least 2 positional arguments (f, m)",
                    found=str(len(positional)),
                )
            )
            self._eval_args(args, env)
            return T.UNKNOWN
        f_arg, m_arg = args[0], args[1]
        rest = args[2:]
        info = self.vag_function(f_arg, env)
        if info is None:
            for a in args[1:]:
                self.value(a.node, env)
            return T.UNKNOWN
        # as a call f(m, args...)
        params = [(p.name, True, False) for p in info.params[1:]]
        matched = self.bind_args(info.name, params, rest, paren)
        if matched is None:
            for a in args[1:]:
                self.value(a.node, env)
            return T.UNKNOWN
        bound, _ = matched
        m_type = self.value(m_arg.node, env)
        first = info.params[0]
        assert isinstance(first.type, T.ModelT)
        model_ok = True
        if isinstance(m_type, T.UnknownT):
            model_ok = False
        elif not (isinstance(m_type, T.ModelT) and m_type.name == first.type.name):
            self.diags.append(
                C.E0904.at(
                    m_arg.node.span,
                    context=f"the model of {info.name}'s first parameter: ",
                    expected=first.type.name,
                    found=T.describe(m_type),
                )
            )
            model_ok = False
        origin = self.origin_of(m_arg.node, env)
        if origin is not None:
            self.fact(ReadFact("call", origin, info.name, m_arg.node.span, 0))
        pairs = [(p, bound[p.name]) for p in info.params[1:]]
        ret = self.check_call_args(info, pairs, env, node, first_index=1)
        # f must return a [] of floats
        declared = info.ret
        bad_ret = not (isinstance(declared, T.TensorT) and declared.rank == 0 and declared.elem.is_float)
        if bad_ret and not isinstance(declared, T.UnknownT):
            self.diags.append(
                C.E1106.at(
                    f_arg.node.span,
                    name=info.name,
                    found=str(declared) if info.declared_ret else "nothing",
                    related=(
                        (LocalRelated("return type declared here", symbol=SymbolRef(("ret", info.name))),)
                        if info.declared_ret
                        else ()
                    ),
                )
            )
            return T.UNKNOWN
        if not model_ok or isinstance(ret, T.UnknownT):
            return T.TupleT((declared if not bad_ret else T.UNKNOWN, T.GradT(first.type.name)))
        assert isinstance(f_arg.node, A.Name)
        self.sites[node] = GradSite(node, f_arg.node.span, info.name, first.type.name)  # type: ignore[index]
        return T.TupleT((ret, T.GradT(first.type.name)))

    def vag_function(self: BodyChecker, f_arg: CallArg, env: Env) -> FnInfo | None:
        """The fn named by value_and_grad's first argument, or None after E1105."""
        e = f_arg.node
        what = None
        if not isinstance(e, A.Name) or e.name in env.vars:
            if not isinstance(e, A.Name):
                self.value(e, env)
            else:
                self.name(e, env)
            t = self.types.get(e)
            if isinstance(t, T.UnknownT):
                return None
            what = "a value" if not isinstance(e, A.Name) else f"'{e.name}' is a local value"
        else:
            t = self.expr(e, env)
            if isinstance(t, T.UnknownT):
                return None
            if isinstance(t, T.FnRefT) and t.extern:
                what = f"'{e.name}' is an extern fn"
            elif isinstance(t, T.BuiltinRefT):
                what = f"'{e.name}' is a built-in"
            elif not isinstance(t, T.FnRefT):
                what = f"'{e.name}' is {T.describe(t)}"
        if what is not None:
            self.diags.append(C.E1105.at(e.span, problem=f"f must be the name of a fn; {what}"))
            return None
        assert isinstance(e, A.Name)
        info = self.g.fns.get(e.name)
        if info is None:
            return None
        if not info.params or not isinstance(info.params[0].type, T.ModelT):
            first = info.params[0].type if info.params else None
            if isinstance(first, T.UnknownT):
                return None
            problem = f"the first parameter of {info.name} must be a model" + (
                f", found {T.describe(first)}" if first is not None else "; it has no parameters"
            )
            self.diags.append(
                C.E1105.at(
                    e.span,
                    problem=problem,
                    related=(LocalRelated(f"{info.name} is declared here", symbol=SymbolRef(("fn", info.name))),),
                )
            )
            return None
        muts = [p for p in info.params if p.mut]
        if muts:
            self.diags.append(
                C.E1105.at(
                    e.span,
                    problem=f"{info.name} has a mut parameter '{muts[0].name}'",
                    related=(
                        LocalRelated(
                            "mut parameter declared here", symbol=SymbolRef(("param", info.name, muts[0].name))
                        ),
                    ),
                )
            )
            return None
        return info


def grad_field_type(t: T.Type) -> T.Type:
    """The type of a gradient's field for a param of type `t`."""
    if isinstance(t, T.TensorT):
        return T.TensorT(t.dims, t.elem.plain())
    return t


def is_vag(e: A.Expr) -> bool:
    return isinstance(e, A.Call) and isinstance(e.func, A.Name) and e.func.name == "value_and_grad"
