"""Calls: pipes, argument binding, user functions, model methods, and the
argument readers that built-in rules share (tensor, dim and shape arguments)."""

from __future__ import annotations

import dataclasses

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..builtins import BUILTINS, MODEL_METHODS, Builtin, walks
from ..builtins import args as readers
from ..builtins.distributions import distribution_method
from ..builtins.registry import RULES
from ..declarations import FnInfo, ParamInfo, suggest
from ..diagnostics import Fix, LocalDiagnostic, LocalRelated, SymbolRef, TextEdit
from ..model_lists import is_model_list
from ..names import dim_default_text, dim_default_value
from ..results import DimCheck, Ref
from ..traits import unmet
from ..type_pairs import show_pair
from ..type_params import bound_of, method_names
from . import size_hints
from .engine_api import EngineBase
from .env import CallArg, Env
from .features.checkpoints import checkpoint_hint, checkpoint_method
from .features.optimizers import optimizer_method
from .features.schedules import schedule_method
from .text import expr_text, plural, takes_dims


class CallRules(EngineBase):
    def pipe(self, e: A.Pipe, env: Env) -> T.Type:
        target = e.target
        if isinstance(target, A.Call):
            return self.call(e, target.func, target.args, env, e.left, target)
        if isinstance(target, (A.Name, A.Field)):
            return self.call(e, target, (), env, e.left, None)
        self.value(e.left, env)
        self.diags.append(
            C.E0409.at(
                target.span,
                callee=expr_text(target),
                reason=C.E0409.say("pipe_target"),
            )
        )
        return T.UNKNOWN

    def call(
        self,
        node: A.Node,
        func: A.Expr,
        args: tuple[A.Arg, ...],
        env: Env,
        piped: A.Expr | None,
        inner_call: A.Call | None = None,
    ) -> T.Type:
        call_args: list[CallArg] = []
        if piped is not None:
            call_args.append(CallArg(piped, None, piped.span))
        for a in args:
            call_args.append(CallArg(a.value, a.keyword.text if a.keyword else None, a.span, a))
        paren = node.paren_span if isinstance(node, A.Call) else (inner_call.paren_span if inner_call else node.span)
        # A model method: Mlp.init(seed=0)
        if isinstance(func, A.Field):
            recv = self.expr(func.value, env)
            if isinstance(recv, T.ModelClassT):
                self.types[func] = recv
                return self.model_method(node, recv, func, call_args, env, paren)
            if isinstance(recv, T.ModuleT):  # layers.forward(m, x)
                ftype = self.field_access(func, env)
                self.types[func] = ftype
                return self._call_global(node, func, ftype, call_args, env, paren)
            if func.name.text == "init" and walks.is_init_of(recv, call_args):  # p.init(...) in a walk
                return walks.init_method(self, func, recv, call_args, env)
            if isinstance(recv, T.UnknownT):
                self._eval_args(call_args, env)
                return T.UNKNOWN
            if isinstance(recv, T.OptimT):
                self.types[func] = recv
                return optimizer_method(self, node, recv, func, call_args, env, paren)
            if isinstance(recv, T.ScheduleT):
                self.types[func] = recv
                return schedule_method(self, node, recv, func, call_args, env, paren)
            if isinstance(recv, T.DistT):  # d.log_prob(a), d.sample(seed=s)
                self.types[func] = recv
                return distribution_method(self, node, recv, func, call_args, env, paren)
            if recv == T.STR and (told := walks.str_method(self, func, call_args, env)) is not None:
                return told  # name.endswith("bias")
            if isinstance(recv, T.ModelT):
                method = func.name.text
                self.global_kind(recv.name)
                model = self.g.model(recv)
                found = model.method(method) if model is not None else None
                if found is not None and (info := self.g.fns.get(found.name)) is not None:
                    self.refs[func.name] = Ref("fn", info.name)
                    self.types[func] = T.FnRefT(info.name)
                    return self.method_call(node, func.value, info, call_args, env, paren)
                if (
                    recv.bound and model is not None and method not in ("save", "load")
                ):  # `m.name(x)` of `m: M`: only its traits' methods
                    self.diags.append(_not_in_traits(recv, model, method, func.name.span))
                    self._eval_args(call_args, env)
                    return T.UNKNOWN
                field = model.field(method) if model is not None else None
                if field is not None and isinstance(field.type, T.UnknownT):  # its type has an error already
                    self._eval_args(call_args, env)
                    return T.UNKNOWN
                if field is not None and isinstance(field.type, T.ModelT):
                    # m.fc1(x): a sub-model called, its `forward`
                    ftype = self.field_access(func, env)
                    self.types[func] = ftype
                    return self.call_model_value(node, func, ftype, call_args, env, paren)
                if field is not None and is_model_list(field.type):
                    # m.main(x): a list of sub-models called, as torch's nn.Sequential
                    ftype = self.field_access(func, env)
                    self.types[func] = ftype
                    if isinstance(ftype, T.TupleT):
                        return self.call_chain(node, func, ftype, call_args, env)
                    self._eval_args(call_args, env)
                    return T.UNKNOWN
                kind = self.global_kind(method)
                if field is not None and isinstance(field.type, T.StackT):
                    reason = C.E0409.say("a_stack", stack=str(field.type), written=expr_text(func))
                elif field is not None:
                    reason = C.E0409.say("a_field", kind=field.kind, model=str(recv))
                elif kind is None and method in ("save", "load"):  # m.save(path): save(path, m)
                    self.diags.append(checkpoint_method(node, func, method, call_args))
                    self._eval_args(call_args, env)
                    return T.UNKNOWN
                elif model is not None and model.partial:  # it may be a method that did not parse (said there)
                    reason = None
                elif kind in ("fn", "extern") or (kind is None and method in BUILTINS):
                    reason = C.E0409.say(
                        "model_method_call", method=method, model=f"model {recv}", value=expr_text(func.value)
                    )
                else:  # no function of that name to suggest either
                    methods = method_names(model) if model is not None else "no method"
                    reason = C.E0409.say("no_such_function", method=method, model=f"model {recv}", methods=methods)
                if reason is not None:
                    self.diags.append(C.E0409.at(func.span, callee=expr_text(func), reason=reason))
            else:
                self.field_access(func, env)
            self._eval_args(call_args, env)
            return T.UNKNOWN
        if not isinstance(func, A.Name):
            ftype = self.value(func, env)
            if isinstance(ftype, T.ModelT):  # m.blocks[i](x): one model of a stack, its `forward`
                return self.call_model_value(node, func, ftype, call_args, env, paren)
            if isinstance(ftype, T.UnknownT):
                self._eval_args(call_args, env)
                return T.UNKNOWN
            self.diags.append(C.E0409.at(func.span, callee=expr_text(func), reason=C.E0409.say("not_callable")))
            self._eval_args(call_args, env)
            return T.UNKNOWN
        var = env.vars.get(func.name)
        if var is not None:
            self.name(func, env)
            if isinstance(var.type, T.ModelT):  # layer(x): its `forward`
                return self.call_model_value(node, func, var.type, call_args, env, paren)
            if not isinstance(var.type, T.UnknownT):
                self.diags.append(
                    C.E0409.at(
                        func.span,
                        callee=f"'{func.name}'",
                        reason=C.E0409.say("not_a_function", what=T.describe(var.type)),
                    )
                )
            self._eval_args(call_args, env)
            return T.UNKNOWN
        if func.name in self.model_options and (self.global_kind(func.name) is not None or func.name in BUILTINS):
            # An option is a value and never called: in a layer with a
            # `dropout: Float` option (torch's argument), `dropout(x, dropout,
            # mode)` calls the built-in.
            ftype = self.global_name(func, env)
            self.types[func] = ftype
        else:
            ftype = self.expr(func, env)
        return self._call_global(node, func, ftype, call_args, env, paren)

    def _call_global(
        self,
        node: A.Node,
        func: A.Name | A.Field,
        ftype: T.Type,
        call_args: list[CallArg],
        env: Env,
        paren: A.Span,
    ) -> T.Type:
        """A call of a global name (`f`, `layers.f`) whose type is `ftype`."""
        if isinstance(ftype, T.FnRefT):
            info = self.g.fns.get(ftype.name)
            if info is None:
                self._eval_args(call_args, env)
                return T.UNKNOWN
            return self.user_call(node, info, call_args, env, paren)
        if isinstance(ftype, T.BuiltinRefT):
            return self.builtin_call(node, BUILTINS[ftype.name], call_args, env, paren)
        if isinstance(ftype, T.ModelClassT):
            written = expr_text(func)
            self.diags.append(C.E0409.at(func.span, callee=written, reason=C.E0409.say("a_model", written=written)))
        elif isinstance(ftype, (T.ModuleT, T.NumberT)):
            self.diags.append(
                C.E0409.at(
                    func.span, callee=expr_text(func), reason=C.E0409.say("not_a_function", what=T.describe(ftype))
                )
            )
        elif isinstance(ftype, T.ModeT):
            self.diags.append(C.E0409.at(func.span, callee="Eval", reason=C.E0409.say("a_mode")))
        self._eval_args(call_args, env)
        return T.UNKNOWN

    def immutable_source(self, node: A.Expr, env: Env):
        """The parameter, not `mut`, that a model or optimizer value comes from
        (`m`, `m.enc`, `m.blocks[i]`, or a local bound to a part of it): what
        may not be passed where it would change (E0502); None when it may."""
        root = node
        while isinstance(root, (A.Field, A.Index)):  # m.enc, m.blocks[i]: the model m
            root = root.value
        var = env.vars.get(root.name) if isinstance(root, A.Name) else None
        src = var.param if var is not None else None
        if src is None and var is not None and var.origin is not None:
            root_name = var.origin.partition(".")[0]
            src = next((q for q in self.fn.params if q.name == root_name), None)
        return src if src is not None and not src.mut else None

    def make_mut_fix(self, param) -> Fix:
        """Make a parameter `mut` (the fix of E0502)."""
        at = param.decl.span.start
        return Fix(f"Make '{param.name}' mut", (TextEdit(A.Span(at, at), "mut "),))

    def _eval_args(self, args: list[CallArg], env: Env) -> None:
        for a in args:
            if isinstance(a.node, A.TensorType):
                continue
            self.expr(a.node, env)

    def bind_args(
        self,
        name: str,
        params: list[tuple[str, bool, bool]],
        args: list[CallArg],
        paren: A.Span,
        variadic: bool = False,
    ) -> tuple[dict[str, CallArg], list[CallArg]] | None:
        """Match arguments to parameters (name, required, keyword_only), as
        Python does. Reports E0401/E0402/E0403/E0404/E0405; None on failure."""
        bound: dict[str, CallArg] = {}
        extra: list[CallArg] = []
        positional = [p for p in params if not p[2]]
        pos_i = 0
        seen_keyword = False
        ok = True
        for a in args:
            if a.keyword is None:
                if seen_keyword:
                    self.diags.append(C.E0405.at(a.span))
                    return None
                if pos_i < len(positional):
                    bound[positional[pos_i][0]] = a
                    pos_i += 1
                elif variadic:
                    extra.append(a)
                else:
                    count = len(positional)
                    self.diags.append(
                        C.E0401.at(
                            a.span,
                            name=name,
                            expected=plural(count, "positional argument"),
                            found=str(len([x for x in args if x.keyword is None])),
                        )
                    )
                    return None
            else:
                seen_keyword = True
                names = [p[0] for p in params]
                if a.keyword not in names:
                    self.diags.append(
                        C.E0402.at(
                            a.arg.keyword.span if a.arg and a.arg.keyword else a.span,
                            name=a.keyword,
                            fn=name,
                            hint=suggest(a.keyword, names),
                        )
                    )
                    ok = False
                    continue
                if a.keyword in bound:
                    self.diags.append(C.E0404.at(a.span, name=a.keyword, fn=name))
                    ok = False
                    continue
                bound[a.keyword] = a
        if not ok:
            return None
        missing = [p for p in params if p[1] and p[0] not in bound]
        if missing:
            p = missing[0]
            if p[2]:
                self.diags.append(C.E0403.at(paren, name=name, param=f"{p[0]}="))
            else:
                count = len([x for x in params if x[1] and not x[2]])
                given = len([x for x in args if x.keyword is None])
                self.diags.append(
                    C.E0401.at(paren, name=name, expected=plural(count, "positional argument"), found=str(given))
                )
            return None
        return bound, extra

    def user_call(self, node: A.Node, info: FnInfo, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
        params = [(p.name, not p.optional, False) for p in info.params]
        matched = self.bind_args(info.name, params, args, paren)
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        # a parameter with a default that the call leaves out takes its default
        return self.check_call_args(info, [(p, bound[p.name]) for p in info.params if p.name in bound], env, node)

    def check_call_args(
        self,
        info: FnInfo,
        pairs: list[tuple[ParamInfo, CallArg]],
        env: Env,
        node: A.Node,
        first_index: int = 0,
    ) -> T.Type:
        return self.checked_call(info, pairs, env, node, first_index)[0]

    def checked_call(
        self,
        info: FnInfo,
        pairs: list[tuple[ParamInfo, CallArg]],
        env: Env,
        node: A.Node,
        first_index: int = 0,
    ) -> tuple[T.Type, bool]:
        """The arguments of a call of `info` checked against its parameters:
        the call's result type and whether every argument fit. The result is
        the declared return type with the bindings made and `?` for a generic
        dim that was not bound: never the callee's own generic names. After
        a failure, the declared type when the arguments before it bound all
        its dims, else unknown (one mistake, one diagnostic)."""
        bindings = S.Bindings(info.generics)
        bindings.generics.update(n for n, _ in info.type_params)
        if info.owner is None and info.owner_options:  # the options the fn is generic over
            bindings.option_generics = {k for k, _ in info.owner_options}
        ok = True
        typed: list[tuple[ParamInfo, CallArg, T.Type]] = []
        for index, (p, a) in enumerate(pairs, start=first_index):
            if isinstance(p.type, T.OptionalT) and isinstance(a.node, A.Name):
                t = self.expr(a.node, env)  # an optional value passed on to an optional parameter, as it is
            else:
                t = self.value(a.node, env)
            if isinstance(t, T.ListT):  # a list stays in the fn that builds it
                listed = expr_text(a.node)
                self.diags.append(
                    C.E0964.at(a.node.span, name=listed, use=C.E0964.say("argument", fn=info.name, name=listed))
                )
                t = T.UNKNOWN
            typed.append((p, a, t))
            origin = self.origin_of(a.node, env)
            if origin is not None:
                if info.extern:
                    self.path_fact("escape", origin, f"passed to extern fn {info.name}", a.node.span)
                else:
                    self.path_fact("call", origin, info.name, a.node.span, index)
            before = (dict(bindings.bound), bindings.rest)
            if p.name in bindings.generics and p.type == T.INT and p.name not in bindings.bound:
                # an Int parameter that sizes the callee's types (`-> [size size]`): its value here
                size = self.size_of_int(a.node, env, node, p.name)
                bindings.bound[p.name] = S.Binding(size, p.name, a.node.span)
            problem = self.unmet_bound(info, p, t, bindings, a.node.span)
            if problem is not None:  # the model given for `M` lacks what M's traits require
                ok = False
                self.diags.append(problem)
                bindings.bound, bindings.rest = before
                continue
            mismatch = S.match(p.type, t, bindings, p.name, a.node.span)
            if mismatch is not None:
                if mismatch.kind == "binding" and mismatch.earlier is not None and mismatch.earlier.where == "self":
                    # a layer applied to the wrong size: its dims are the layer's,
                    # known from it, not generic dims of the caller's choosing
                    mismatch = S.Mismatch("shape", bindings.subst(mismatch.expected), mismatch.found)
                elif mismatch.kind == "shape" and S.self_sized(mismatch.expected, bindings):
                    mismatch = S.Mismatch("shape", bindings.subst(mismatch.expected), mismatch.found)
                if mismatch.kind == "binding":  # in the caller's dims, not the callee's names
                    mismatch = dataclasses.replace(
                        mismatch, expected=S.as_bound(mismatch.expected, mismatch.found, bindings)
                    )
                if mismatch.kind in ("refine", "index", "dtype"):
                    # The shape matched: show it bound (`[5] NonNeg`, not `[n] NonNeg`), so the
                    # message differs only where the types do.
                    mismatch = S.Mismatch(mismatch.kind, bindings.subst(mismatch.expected), mismatch.found)
                ok = False
                self.report_mismatch(
                    mismatch,
                    a.node.span,
                    f"argument '{p.name}' of {info.name}: ",
                    SymbolRef(("param", info.name, p.name)),
                )
                # what the argument that does not fit bound is not to be trusted:
                # the arguments after it bind afresh (one mistake, one diagnostic)
                bindings.bound, bindings.rest = before
                continue
            if p.mut and isinstance(t, (T.ModelT, T.OptimT, T.ScheduleT)):
                src_param = self.immutable_source(a.node, env)
                if src_param is not None:
                    self.diags.append(
                        C.E0502.at(
                            a.node.span,
                            name=src_param.name,
                            fn=info.name,
                            param=p.name,
                            fix=self.make_mut_fix(src_param),
                            related=(
                                LocalRelated(f"'{p.name}' is mut here", symbol=SymbolRef(("param", info.name, p.name))),
                            ),
                        )
                    )
        if ok:
            for p, a, t in typed:
                self.note_dims(a.node, bindings.result(p.type), t, f"{info.name}(): ", f"argument '{p.name}'")
        fresh = self.extern_sizes(info, bindings, node) if info.extern and ok else set()
        result = bindings.result(info.ret)
        if not ok and result != bindings.subst(info.ret):
            # a dim of the result was to be bound by an argument that did not
            # fit: the result is unknown, silent downstream, rather than `?`
            # dims that later meet a rank or a size (one mistake, one diagnostic)
            return T.UNKNOWN, ok
        if fresh:
            self.record_binds(node, result, fresh)
        if ok:
            size_hints.record_layer(self, node, info, typed, result)  # nn.Conv2d's padding
        bad = _nonpositive_dim(info.ret, result) if ok else None
        if bad is not None:  # a layer's kernel larger than the input it is applied to
            expr, value = bad
            reason = C.E0212.say("not_positive_in_result", fn=info.name, value=str(value))
            self.diags.append(C.E0212.at(node.span, expr=expr, reason=reason))
            return T.UNKNOWN, ok
        return result, ok

    def unmet_bound(
        self, info: FnInfo, p: ParamInfo, given: T.Type, bindings: S.Bindings, span: A.Span
    ) -> LocalDiagnostic | None:
        """At the first argument that binds a type parameter of `info`
        (`m: M`, `opt: AdamW[M]`), whether the model given has its traits'
        methods (E0920, E0921)."""
        bound = bound_of(p.type)
        if not bound:
            return None
        name = p.type.name if isinstance(p.type, T.ModelT) else p.type.model  # type: ignore[union-attr]
        if name not in dict(info.type_params) or name in bindings.models:
            return None
        for trait in bound:  # what the model must have: a dependency of this body
            self.global_kind(trait)
        return unmet(self.g, bound, given, name, span)

    def note_dims(self, node: A.Expr, expected: T.Type, found: T.Type, prefix: str, subject: str) -> None:
        """A value of type `found` meets `expected`, which it fits: where
        `found` has a dim known only at run time (`?`) and `expected` a known
        one, the compiler checks that dim there at run time (docs/language.md,
        "Dims known only at run time"); the message names the value as
        `{prefix}{subject}` (`win(): result`)."""
        if isinstance(expected, T.TupleT) and isinstance(found, T.TupleT) and isinstance(node, A.TupleExpr):
            for i, (e, f, n) in enumerate(zip(expected.items, found.items, node.items)):
                self.note_dims(n, e, f, prefix, f"element {i} of {subject}")
            return
        dims = S.unknown_meets(expected, found)
        if dims is not None:
            self.add_dim_check(node, DimCheck(prefix + subject, str(expected), dims))

    def add_dim_check(self, node: A.Expr, check: DimCheck) -> None:
        if check.count is None:  # the sizes a run-time check can read here
            dims = tuple(self.checkable(d) for d in check.dims)
            if all(d is None for d in dims):
                return
            check = dataclasses.replace(check, dims=dims)
        checks = self.dim_checks.get(node, ())
        if check not in checks:
            self.dim_checks[node] = (*checks, check)

    def report_mismatch(self, m: S.Mismatch, span: A.Span, context: str, symbol: SymbolRef | None = None) -> None:
        related = (LocalRelated("declared here", symbol=symbol),) if symbol is not None else ()
        self._report_mismatch(m, span, context, related)

    def _report_mismatch(self, m: S.Mismatch, span: A.Span, context: str, related: tuple) -> None:
        expected, found = show_pair(m.expected, m.found)
        found += T.run_apart_note(m.expected, m.found)
        if m.kind == "binding":
            assert m.earlier is not None
            rel = (LocalRelated(f"{m.earlier.dim} comes from this argument", span=m.earlier.span), *related)
            self.diags.append(
                C.E0205.at(
                    span,
                    context=context,
                    expected=expected,
                    found=found,
                    first=str(m.earlier.dim),
                    where=m.earlier.where,
                    now=str(m.now),
                    related=rel,
                )
            )
        elif m.kind == "shape":
            made, rel, fix = size_hints.explain(self, m.expected, m.found, span)  # by a conv's padding
            self.diags.append(
                C.E0201.at(span, context=context, expected=expected, found=found + made, related=related + rel, fix=fix)
            )
        elif m.kind == "dtype":
            found += _refined_f32_note(m.expected, m.found)
            self.diags.append(C.E0302.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "refine":
            self.diags.append(C.E0304.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "index":
            self.diags.append(C.E0305.at(span, context=context, expected=expected, found=found, related=related))
        elif m.kind == "model":
            self.diags.append(C.E0904.at(span, context=context, expected=str(m.expected), found=T.describe(m.found)))
        else:
            self.diags.append(
                C.E0301.at(
                    span, context=context, expected=T.describe(m.expected), found=T.describe(m.found), related=related
                )
            )

    def check_assignable(
        self, expected: T.Type, found: T.Type, span: A.Span, context: str, related: tuple = ()
    ) -> bool:
        """Report `found` where `expected` is declared unless it fits; whether it does."""
        m = S.assignable(expected, found)
        if m is not None:
            self._report_mismatch(m, span, context, related)
        return m is None

    def method_call(
        self,
        node: A.Node,
        recv: A.Expr,
        info: FnInfo,
        args: list[CallArg],
        env: Env,
        paren: A.Span,
    ) -> T.Type:
        """`recv.name(args)`: the method `info` with `recv` as its `self`."""
        rest = info.params[1:]
        matched = self.bind_args(info.name, [(p.name, not p.optional, False) for p in rest], args, paren)
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        pairs = [(info.params[0], CallArg(recv, None, recv.span))] + [
            (p, bound[p.name]) for p in rest if p.name in bound
        ]
        return self.check_call_args(info, pairs, env, node)

    def call_model_value(
        self,
        node: A.Node,
        func: A.Expr,
        recv: T.Type,
        args: list[CallArg],
        env: Env,
        paren: A.Span,
    ) -> T.Type:
        """`layer(x)` for a model value: its method `forward`."""
        assert isinstance(recv, T.ModelT)
        self.global_kind(recv.name)  # what it runs is the model's: a dependency of this body
        model = self.g.model(recv)
        found = model.method("forward") if model is not None else None
        info = self.g.fns.get(found.name) if found is not None else None
        if info is None:
            if model is not None and recv.bound:  # `m(x)` of `m: M` whose traits declare no forward
                self.diags.append(_not_in_traits(recv, model, "forward", func.span))
            elif model is not None and not model.partial:  # (a forward that did not parse: said there)
                reason = C.E0409.say("no_forward", model=str(recv))
                self.diags.append(C.E0409.at(func.span, callee=expr_text(func), reason=reason))
            self._eval_args(args, env)
            return T.UNKNOWN
        return self.method_call(node, func, info, args, env, paren)

    def model_method(
        self,
        node: A.Node,
        recv: T.ModelClassT,
        func: A.Field,
        args: list[CallArg],
        env: Env,
        paren: A.Span,
    ) -> T.Type:
        method = MODEL_METHODS.get(func.name.text)
        if method is None:
            hint = checkpoint_hint(func.name.text, recv.name) or suggest(func.name.text, MODEL_METHODS)
            self.diags.append(C.E0905.at(func.name.span, name=func.name.text, model=recv.name, hint=hint))
            self._eval_args(args, env)
            return T.UNKNOWN
        self.refs[func.name] = Ref("builtin", f"{recv.name}.{func.name.text}", recv.name)
        sig = self.g.names.model_sigs.get(recv.name)
        if not recv.applied and sig is not None and len(sig.defaults) == len(sig.dims) and not sig.models:
            # every dim has a default (a model of options only, nn.Dropout): made
            # with its defaults, as torch's nn.Dropout() is
            # the Bool options (their defaults) count 1 or 0 where a default reads them
            values: dict[str, int] = {k: int(v) for k, v in sig.options if isinstance(v, bool)}
            for d, v in sig.defaults:  # `stride = K`, `P = K // 2`: of the dims before it
                value = dim_default_value(v, values)  # names.model_sig keeps only earlier dims
                if value is None or value < 0:  # `P = K - 3` with K = 2: no instance
                    found = "a division by zero" if value is None else str(value)
                    text = dim_default_text(v)
                    problem = C.E0910.say("default_not_a_size", dim=d, default=text, found=found)
                    self.diags.append(C.E0910.at(func.value.span, model=recv.name, problem=problem))
                    self._eval_args(args, env)
                    return T.UNKNOWN
                values[d] = value
            recv = T.ModelClassT(recv.name, tuple(T.DimLit(values[d]) for d in sig.dims))
            self.types[func] = recv
        if not recv.applied and sig is not None and sig.models:  # `ResNet.init`: which block?
            wanted = ", ".join(n for n, _ in sig.models)
            written = expr_text(func.value)
            problem = C.E0946.say("models_missing", model=written, wanted=wanted, count=0)
            self.diags.append(C.E0946.at(func.value.span, problem=problem))
            self._eval_args(args, env)
            return T.UNKNOWN
        if not recv.applied:
            dims = sig.dims if sig is not None else ()
            written = expr_text(func.value)
            self.diags.append(
                C.E0910.at(
                    func.value.span,
                    model=written,
                    problem=C.E0910.say(
                        "method_dims",
                        takes=takes_dims(dims),
                        written=written,
                        dims=", ".join(dims),
                        method=func.name.text,
                    ),
                )
            )
            self._eval_args(args, env)
            return T.UNKNOWN
        matched = self.bind_args(
            f"{recv.name}.init", [(p.name, p.required, p.keyword_only) for p in method.params], args, paren
        )
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        self.expect_number(bound["seed"], env, "Int", "seed")
        return T.ModelT(recv.name, recv.dims, recv.options)

    # The argument readers are checker/builtins/args.py's; these methods are
    # for the engine and the rules not yet moved to a family module.

    def expect_number(self, a: CallArg, env: Env, kind: str, what: str) -> bool:
        return readers.expect_number(self, a, env, kind, what)

    # -- builtins

    def builtin_call(self, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
        rule = RULES[b.rule]  # every spec has its rule (tests/checker/test_builtins.py)
        if rule.raw:
            return rule.check(self, node, b, args, env, paren)
        if any(a.keyword is None and _list_of_tensors(a.node, env) for a in args):
            # torch's list of tensors (`concat([a, b], over=D)`, `stack([a, b])`):
            # the list is no value, and its own E0301 says what to write; the
            # arguments are not counted against the parameters as well
            self._eval_args(args, env)
            return T.UNKNOWN
        params = [(p.name, p.required, p.keyword_only) for p in b.params]
        matched = self.bind_args(b.name, params, args, paren, b.variadic)
        if matched is None:
            self._eval_args(args, env)
            return T.UNKNOWN
        bound, _ = matched
        outer, self.builtin_now = self.builtin_now, b.name
        try:
            return rule.check(self, node, b, bound, env)
        finally:
            self.builtin_now = outer

    def tensor_arg(
        self,
        a: CallArg,
        env: Env,
        fn: str,
        pname: str,
        float_only: bool = True,
        typed: T.Type | None = None,
    ) -> T.TensorT | None:
        return readers.tensor_arg(self, a, env, fn, pname, float_only, typed)

    def dim_arg(
        self,
        a: CallArg,
        env: Env,
        operand: T.TensorT,
        fn: str,
        operand_arg: CallArg | None = None,
        pname: str = "x",
    ) -> int | None:
        return readers.dim_arg(self, a, env, operand, fn, operand_arg, pname)

    def named_over(self, t: T.TensorT, axis: int, a: CallArg) -> T.TensorT:
        return readers.named_over(self, t, axis, a)

    def shape_arg(self, a: CallArg, fn: str) -> T.TensorT | None:
        return readers.shape_arg(self, a, fn)


def _refined_f32_note(expected: T.Type, found: T.Type) -> str:
    """`expected [] NonNeg, found [] f64`: NonNeg and Prob are refinements of
    f32 only, which the message says, with the type to declare instead."""
    if not (isinstance(expected, T.TensorT) and isinstance(found, T.TensorT)):
        return ""
    e, f = expected.elem, found.elem
    if e.refine is None or e.dtype != "f32" or not f.is_float or f.dtype == "f32":
        return ""
    word = "NonNeg" if e.refine == "nonneg" else "Prob"
    article = "an" if f.dtype.startswith("f") else "a"
    plain = T.TensorT(found.dims, T.Elem(f.dtype))
    return f" ({word} is a refinement of f32; declare {article} {f.dtype} value as {plain})"


def _nonpositive_dim(declared: T.Type, result: T.Type) -> tuple[str, int] | None:
    """A dim of a call's result that the bindings made a number below 1
    (`((h-K)/stride+1)` of a layer whose kernel is larger than its input):
    the dim as the callee wrote it, and its value."""
    if isinstance(declared, T.TupleT) and isinstance(result, T.TupleT):
        for d, r in zip(declared.items, result.items):
            if (bad := _nonpositive_dim(d, r)) is not None:
                return bad
        return None
    if not isinstance(declared, T.TensorT) or not isinstance(result, T.TensorT):
        return None
    same = len(declared.dims) == len(result.dims)  # not after a `..` that stood for other dims
    for i, r in enumerate(result.dims):
        if isinstance(r, T.DimLit) and r.value < 1:
            d = declared.dims[i] if same else r
            return (d.text if isinstance(d, T.DimExpr) else str(d)), r.value
    return None


def _list_of_tensors(node: A.Node, env: Env) -> bool:
    """`[a, b]` of local tensors, as torch's functions take them: a list that
    is no value in Quiver (the literal's rule reports it, once, at the list)."""
    if not isinstance(node, A.NameList) or not node.items:
        return False
    found = [env.vars.get(n.name) for n in node.items]
    return all(v is not None for v in found) and any(isinstance(v.type, T.TensorT) for v in found if v is not None)


def _not_in_traits(recv: T.ModelT, model, method: str, span: A.Span):
    """E0922 for `m.name(x)` (or `m(x)`, `forward`) of `m: M` whose traits
    declare no such method: the methods they declare, or that they declare
    none (`trait Module: pass`)."""
    known = (
        C.E0922.say("no_method", method=method, methods=method_names(model))
        if model.methods
        else C.E0922.say("no_method_none", method=method)
    )
    return C.E0922.at(span, name=method, param=recv.name, traits=" + ".join(recv.bound), known=known)
