"""Expressions: names, field access, literals, casts and types written in a
body; the dispatch to operators (operators.py) and indexing (indexing.py)."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import member_conditions as MC
from .. import types as T
from ..builtins import BUILTINS, CONSTANTS
from ..builtins.distributions import distribution_field
from ..declarations import ALL_NAMES, NUMBER_TYPES, TypeContext, suggest, type_text
from ..diagnostics import LocalRelated, SymbolRef
from ..results import ReadFact, Ref
from ..traits import unmet_obligations
from ..type_params import method_names, param_types
from .engine_api import EngineBase
from .env import Env, Var
from .features.optimizers import optimizer_field
from .features.schedules import schedule_field
from .fstring_rules import spec_problem
from .fstring_rules import type_text as spec_type_text
from .lists import append_call, list_literal_names
from .text import expr_text


class ExpressionRules(EngineBase):
    # -------------------------------------------------------------- expressions

    def value(self, e: A.Expr, env: Env) -> T.Type:
        """An expression whose result is used as a value."""
        return self.as_value(e, self.expr(e, env))

    def as_value(self, e: A.Expr, t: T.Type) -> T.Type:
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
        if isinstance(t, T.OptionalT):  # `top_k: Int | None` used before a test rules None out
            name = expr_text(e)
            problem = C.E0968.say("unnarrowed", name=name)
            self.diags.append(C.E0968.at(e.span, name=name, type=str(t), problem=problem))
            return t.inner
        return t

    def expr(self, e: A.Expr, env: Env) -> T.Type:
        t = self._expr(e, env)
        self.types[e] = t
        return t

    def _expr(self, e: A.Expr, env: Env) -> T.Type:
        if isinstance(e, A.Name):
            if e.name == "None" and "None" not in env.vars:
                return T.NONE
            return self.name(e, env)
        if isinstance(e, A.IntLit):
            return T.NumberT("Int", e.value >= 0)
        if isinstance(e, A.FloatLit):
            return T.NumberT("Float", e.value >= 0)
        if isinstance(e, A.StrLit):
            return T.STR
        if isinstance(e, A.FString):
            for part in e.parts:
                if isinstance(part, A.FormatField):
                    t = self.value(part.value, env)
                    why = spec_problem(t, part.spec, part.conversion)
                    if why is not None:
                        self.diags.append(
                            C.E0312.at(part.spec_span, spec=part.spec, type=spec_type_text(t), reason=why)
                        )
            return T.STR
        if isinstance(e, A.BoolLit):
            return T.BOOL_N
        if isinstance(e, A.TupleExpr):
            items = []
            for x in e.items:
                items.append(self.value(x, env))
                self.escape_if_model(x, env, "put in a tuple")
                if isinstance(items[-1], T.ListT):
                    self.diags.append(C.E0964.at(x.span, name=expr_text(x), use=C.E0964.say("tuple")))
                    items[-1] = T.UNKNOWN
            return T.TupleT(tuple(items))
        if isinstance(e, A.Unary):
            return self.unary(e, env)
        if isinstance(e, A.Binary):
            lt = self.value(e.left, env)
            rt = self.value(e.right, env)
            if isinstance(lt, T.ListT) and e.op == "+":  # hs + [h]: a new list
                return self.list_plus(lt, rt, expr_text(e.left), e.right, f"{expr_text(e.right)}")
            if isinstance(lt, T.ListT) or isinstance(rt, T.ListT):
                side = e.left if isinstance(lt, T.ListT) else e.right
                other = rt if isinstance(lt, T.ListT) else lt
                self.diags.append(
                    C.E0965.at(
                        e.op_span,
                        name=expr_text(side),
                        method=e.op,
                        problem=C.E0965.say("plus", found=T.describe(other)),
                    )
                )
                return T.UNKNOWN
            return self.binary_types(e.op, lt, rt, e.left, e.right, e.op_span, e)
        if isinstance(e, A.Compare):
            if e.op in ("is", "is not"):  # top_k is None, top_k is not None
                t = self.expr(e.left, env)
                self.expr(e.right, env)
                if not isinstance(t, (T.OptionalT, T.NoneT, T.UnknownT)):
                    name = expr_text(e.left)
                    result = "False" if e.op == "is" else "True"
                    problem = C.E0968.say("never", op=e.op, result=result)
                    self.diags.append(C.E0968.at(e.span, name=name, type=str(t), problem=problem))
                return T.BOOL_N
            return self.compare(e, env)
        if isinstance(e, A.BoolOp):
            for side in (e.left, e.right):
                self.boolean(side, env, e.op)
            return T.BOOL_N
        if isinstance(e, A.Not):
            self.boolean(e.operand, env, "not")
            return T.BOOL_N
        if isinstance(e, A.Call):
            call = append_call(e)
            if call is not None and isinstance(self.list_var(call, env), T.ListT):
                self.list_method(call, env, statement=False)
                return T.UNKNOWN
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
            names = list_literal_names(e, env)
            if names is not None:  # `[]`, `[h]`: a list
                return self.list_literal(e, names, env)
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

    def name(self, e: A.Name, env: Env) -> T.Type:
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
                said = "is bound only inside this loop" if var.loop_only else "is assigned here"
                related = (LocalRelated(f"'{e.name}' {said}", span=first.span),) if first is not None else ()
                self.diags.append(C.E0103.at(e.span, name=e.name, related=related))
            return var.type
        if e.name in self.fn.generics:
            self.refs[e] = Ref("generic", e.name, self.fn.name)
            return T.NumberT("Int", True)
        if e.name in self.run_dims and self.global_kind(e.name) is None:
            # a size known only at run time, as a number: `randperm(n, seed=0)`, `range(n)`
            self.refs[e] = Ref("size", self.run_dims[e.name].key, self.fn.name)
            return T.NumberT("Int", True)
        if e.name in self.model_options:  # `bias` in a method of Linear[I, O, bias: Bool = True]
            # (of a top-level fn generic over it, `flash=fl`: the fn's)
            self.refs[e] = Ref("option", e.name, self.fn.owner if self.fn.owner is not None else self.fn.name)
            default = self.model_options[e.name]
            if isinstance(default, str):  # a DType option: an element type, as in `zeros([b H] dtype)`
                self.diags.append(
                    C.E0110.at(e.span, name=e.name, kind="an element type (a DType option)", use="a value")
                )
                return T.UNKNOWN
            return T.BOOL_N if isinstance(default, bool) else T.NumberT("Float")
        return self.global_name(e, env)

    def global_name(self, e: A.Name, env: Env) -> T.Type:
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

    def global_value(self, node: A.Node, written: str, kind: str) -> T.Type:
        """The value of a global name as written (`f`, `Mlp`, `layers.H`):
        types and refs carry its qualified name (`layers.H`)."""
        name = self.g.names.canonical(written)
        if kind == "dim":
            self.refs[node] = Ref("dim", name)
            return T.NumberT("Int", True)
        if kind == "const":
            self.refs[node] = Ref("const", name)
            value = self.g.names.const_values.get(written)
            if not isinstance(value, tuple):
                return T.UNKNOWN  # its declaration says why it has none
            v = value[1]
            return T.NumberT(value[0], value[0] in ("Int", "Float") and v >= 0)  # type: ignore[operator]
        if kind in ("fn", "extern"):
            self.refs[node] = Ref(kind, name)
            return T.FnRefT(name, kind == "extern")
        if kind == "model":
            self.refs[node] = Ref("model", name)
            return T.ModelClassT(name, applied=name not in self.g.names.model_sigs)
        if kind in ("module", "package"):
            self.refs[node] = Ref("module", written)
            return T.ModuleT(written)
        if kind == "trait":
            self.refs[node] = Ref("model", name)
            shown = written.rpartition(".")[2] if isinstance(node, A.Ident) else written
            self.diags.append(C.E0924.at(node.span, name=shown, problem=C.E0924.say("as_value")))
            return T.UNKNOWN
        if kind == "alias":
            return self.alias_value(node, written, name)
        return T.UNKNOWN  # a broken item or import: its errors are reported there

    def alias_value(self, node: A.Node, written: str, name: str) -> T.Type:
        """A type alias as a value: one of a model's type that takes no dims
        is that model instance's class (`Gcn.init(seed=0)`); any other alias
        is a type only."""
        sig = self.g.names.alias_sigs.get(name)
        if sig is None or sig.broken:
            return T.UNKNOWN  # reported at the alias
        t = sig.type
        if isinstance(t, T.ModelT) and not sig.params:
            self.global_kind(t.name)  # (the body depends on the model too, as if it were written)
            self.refs[node] = Ref("model", t.name)
            return T.ModelClassT(
                t.name, t.dims, t.options, applied=bool(t.dims or t.options) or t.name not in self.g.names.model_sigs
            )
        self.diags.append(C.E0110.at(node.span, name=written, kind="a type alias", use="a value"))
        return T.UNKNOWN

    def module_member(self, e: A.Field, module: T.ModuleT) -> T.Type:
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

    def origin_of(self, e: A.Expr, env: Env) -> str | None:
        """The model parameter an expression is (`m`), or a sub-model of
        it, as a path (`m.enc`; `m.blocks` for any block of a stack)."""
        if isinstance(e, A.Name):
            var = env.vars.get(e.name)
            if var is not None:
                return var.origin
            return None
        if isinstance(e, A.Field) and isinstance(self.types.get(e.name), (T.ModelT, T.StackT, T.TupleT)):
            base = self.origin_of(e.value, env)
            return f"{base}.{e.name.text}" if base is not None else None
        if isinstance(e, A.Index) and isinstance(self.types.get(e.value), T.StackT):
            return self.origin_of(e.value, env)
        if isinstance(e, A.Index) and isinstance(self.types.get(e.value), T.TupleT):
            base = self.origin_of(e.value, env)  # m.layers.1: that element's params
            k = self.int_value(e.index) if not isinstance(e.index, (A.Slice, A.Subscripts)) else None
            return None if base is None else base if k is None else f"{base}.{k}"
        return None

    def path_fact(self, kind: str, origin: str, target: str, span: A.Span, index: int = 0) -> None:
        """A read fact of a model parameter given by a path origin (`m.enc`):
        the fact is the parameter's, with the sub-model path as a prefix."""
        param, _, prefix = origin.partition(".")
        if kind == "field":
            self.fact(ReadFact("field", param, f"{prefix}.{target}" if prefix else target, span))
        else:
            self.fact(ReadFact(kind, param, target, span, index, f"{prefix}." if prefix else ""))  # type: ignore[arg-type]

    def fact(self, f: ReadFact) -> None:
        """Record a use of a model parameter; nothing under stop_grad(...)
        is differentiated, so reads there (direct or through calls) do not count."""
        if self.stop_grad_depth == 0:
            self.facts.add(f)
        elif f.kind in ("field", "call"):
            kind = "sg_field" if f.kind == "field" else "sg_call"
            self.facts.add(ReadFact(kind, f.param, f.target, f.span, f.index, f.prefix))

    def escape_if_model(self, e: A.Expr, env: Env, why: str) -> None:
        origin = self.origin_of(e, env)
        if origin is not None:
            self.path_fact("escape", origin, why, e.span)

    # -- fields, literals, casts

    def field_access(self, e: A.Field, env: Env) -> T.Type:
        obj = self.expr(e.value, env)
        name = e.name.text
        if isinstance(obj, T.UnknownT):
            return T.UNKNOWN
        if isinstance(obj, T.ModuleT):
            return self.module_member(e, obj)
        if isinstance(obj, (T.ModelT, T.GradT)) and obj.bound:  # `m.w` of `m: M`: only its traits' methods
            model = self.g.model(obj)
            if model is not None:
                param = obj.name if isinstance(obj, T.ModelT) else str(obj)
                traits = " + ".join(obj.bound)
                if not isinstance(obj, T.ModelT):
                    known = C.E0922.say("grad")
                elif model.methods:
                    known = C.E0922.say("methods", methods=method_names(model))
                else:  # `trait Module: pass`
                    known = C.E0922.say("none_known")
                self.diags.append(C.E0922.at(e.name.span, name=name, param=param, traits=traits, known=known))
            return T.UNKNOWN
        if isinstance(obj, T.ModelT):
            self.global_kind(obj.name)
            model = self.g.model(obj)
            if model is None:
                return T.UNKNOWN
            f = model.field(name)
            if f is None:
                absent = model.generic.field(name) if model.generic is not None else None
                if absent is not None and absent.when is not None:
                    cond = MC.text(absent.when, flags=True)
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
            if f.when is not None:
                # the declaration of `name` whose condition the `if`s around prove
                f = next((g for g in model.fields if g.name == name and self.proves(g.when)), f)
            if f.when is not None and not self.proves(f.when):
                cond = MC.text(f.when, flags=True)
                # `self` of the model's own method, or a model a walk by kind
                # gives (`for l in modules(m, nn.Linear, seed=0)`: any instance)
                own = obj.generic and self.fn.owner == obj.name
                hint = (
                    C.E0914.say("in_method", cond=cond, test=MC.under_test(f.when))
                    if own or not obj.generic
                    else C.E0914.say("in_walk", cond=cond, name=name)
                )
                self.diags.append(
                    C.E0914.at(
                        e.name.span,
                        owner=f"{obj} (self, any instance)" if own else str(obj),
                        name=name,
                        cond=hint,
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
            return optimizer_field(self, e, obj)
        if isinstance(obj, T.ScheduleT):
            return schedule_field(self, e, obj)
        if isinstance(obj, T.DistT):  # d.probs, d.loc
            return distribution_field(self, e, obj)
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
                    cond = MC.text(absent.when, flags=True)
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
            if f.when is not None:  # Grad[Block[i, o]].skip: under the condition the instance leaves
                f = next((g for g in model.fields if g.name == name and self.proves(g.when)), f)
                if f.when is not None and not self.proves(f.when):
                    cond = f"{MC.text(f.when, flags=True)}; read it under {MC.under_test(f.when)}"
                    self.diags.append(C.E0914.at(e.name.span, owner=str(obj), name=name, cond=cond))
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

    def tensor_lit(self, e: A.TensorLit) -> T.Type:
        """`[1.0, -2.0]` is `[2]`, `[[1.0, 0.0], [0.0, 1.0]]` is `[2 2]`: Float
        when a value is written with a decimal point, else i64; rows nested in
        one literal all have the same shape."""
        shape = self.literal_shape(e)
        if shape is None:
            return T.UNKNOWN
        floats = any(isinstance(n, A.FloatLit) for n in A.walk(e))
        return T.TensorT(tuple(T.DimLit(n) for n in shape), T.F32 if floats else T.I64)

    def name_list_lit(self, e: A.NameList, env: Env) -> T.Type:
        """`[x, y]` of plain numbers is a `[2]` tensor: Float when one of them
        is a Float, else i64, as a literal of the numbers themselves."""
        kinds: list[str] = []
        tensors: list[tuple[A.Name, T.TensorT]] = []
        for n in e.items:
            t = self.value(n, env)
            if isinstance(t, T.UnknownT):
                kinds.append("?")
            elif isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
                kinds.append(t.kind)
            elif isinstance(t, T.TensorT):
                tensors.append((n, t))
                kinds.append("?")
            else:
                self.diags.append(
                    C.E0301.at(n.span, context="item of a tensor literal: ", expected="a number", found=T.describe(t))
                )
                kinds.append("?")
        if tensors:
            # torch's list of tensors (`torch.stack([a, b])`): one mistake, said once, at the list
            n, t = tensors[0]
            names = ", ".join(i.name for i in e.items)
            found = (
                f"{n.name}, {T.describe(t)} (a list of tensors is not a value: stack({names}) "
                f"joins them along a new dim, concat(a, b, over=D) along one of theirs)"
            )
            self.diags.append(C.E0301.at(e.span, context="tensor literal: ", expected="numbers", found=found))
        if "?" in kinds:
            return T.UNKNOWN
        return T.TensorT((T.DimLit(len(kinds)),), T.F32 if "Float" in kinds else T.I64)

    def literal_shape(self, e: A.Expr) -> tuple[int, ...] | None:
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
                reason = C.E0214.say("literal_rows", want=want, found=found)
                self.diags.append(C.E0214.at(item.span, operation="tensor literal", reason=reason))
                return None
        assert first is not None
        return (len(e.items), *first)

    def proven_dims(self, src: T.TensorT, target: T.TensorT) -> T.TensorT:
        """`x as [n Co]` of an `x: [n Ci]` where the `if`s around prove `Ci ==
        Co` (under `if not (stride != 1 or Ci != Co):`, or its `else`): the
        dims they prove equal are the target's."""
        if src.rank != target.rank:
            return src
        dims = []
        for a, b in zip(src.dims, target.dims):
            pa, pb = T.dim_poly(a), T.dim_poly(b)
            same = pa is not None and pb is not None and self.proves(MC.Cmp("==", pa, pb))
            dims.append(b if same else a)
        return T.TensorT(tuple(dims), src.elem)

    def cast(self, e: A.Cast, env: Env) -> T.Type:
        src = self.value(e.value, env)
        target_expr = e.type
        if isinstance(target_expr, A.NamedType) and target_expr.name.text == "Grad":
            self.diags.append(C.E0303.at(e.type.span, type=type_text(e.type), reason=C.E0303.say("cast_to_grad")))
            return T.UNKNOWN
        # `x as f64`, `y as Index[C]`: an element type alone keeps the shape.
        elem_only = isinstance(target_expr, A.NamedType) and (
            (target_expr.name.text in T.ELEM_TYPES and target_expr.name.text not in NUMBER_TYPES)
            or target_expr.name.text == "Index"
        )
        ctx = self.type_context()
        bound: set[str] = set()
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
            with self.binding(e, "a cast"):  # `x[a:b] as [k D]` names a run-time dim k
                target = ctx.resolve(target_expr)
                bound = set(self.bound_keys())
            self._take(ctx)
        self.types[e.type] = target
        if isinstance(src, T.UnknownT) or isinstance(target, T.UnknownT):
            return target
        if bound and isinstance(target, T.TensorT) and isinstance(src, T.TensorT) and src.rank == target.rank:
            self.record_binds(e, target, bound)
            # the new names take the value's dims as they are: nothing to check there
            src = T.TensorT(
                tuple(t if isinstance(t, T.DimRun) and t.key in bound else d for d, t in zip(src.dims, target.dims)),
                src.elem,
            )
        if isinstance(src, T.TensorT) and isinstance(target, T.TensorT) and self.known_facts:
            src = self.proven_dims(src, target)
        why = cast_problem(src, target)
        if why is not None:
            self.diags.append(C.E0308.at(e.span, source=T.describe(src), target=str(target), why=why))
            return T.UNKNOWN
        self.note_dims(e, target, src, "cast: ", "value")  # `x[i:j] as [T b]` checks a run-time dim
        return target

    def type_context(self, ints: bool = True) -> TypeContext:
        """For types written in the body (casts, shapes, over= dims); with
        `ints`, an Int variable is a size (`zeros([n D])`)."""
        elems = tuple(k for k, v in self.model_options.items() if isinstance(v, str))
        # a top-level fn's options (`flash=fl`) are given on as a model's own are
        generic: dict[str, bool | float] = {}
        if self.fn.owner is None:  # (a top-level fn's: Bool and Float only)
            generic = {k: v for k, v in self.fn.owner_options if not isinstance(v, str)}
        return TypeContext(
            self.g.names,
            "body",
            list(self.fn.generics),
            silent=self.fn.unbound,
            elem_vars=elems,
            option_vars=generic,
            run_dim=self.lookup_run_dim if ints else self.lookup_named_run_dim,
            type_params=param_types(self.fn.type_params),
        )

    def _take(self, ctx: TypeContext) -> None:
        """Take a type context's diagnostics, and the global names it looked
        up as dependencies of this body."""
        self.diags.extend(ctx.diagnostics)
        ctx.diagnostics.clear()
        if ctx.obligations:  # `ResNet[BasicBlock, 1]` written here: BasicBlock has ResBlock's dims and methods
            new = tuple(o for o in ctx.obligations if o not in self.obligations_checked)
            self.obligations_checked.update(new)
            self.diags.extend(unmet_obligations(self.g, new))
            ctx.obligations.clear()
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


# torch's ways to read a size (`x.shape[0]`, `x.size(1)`), which a type's dims name
_TENSOR_SIZES = frozenset({"shape", "size", "dim"})


def tensor_method_hint(name: str, x: str) -> str:
    """`e.masked_fill(...)`: a tensor has no methods; the built-in to use."""
    x = x if x != "this expression" else "x"
    if name in _TENSOR_SIZES:
        return (
            "; its sizes are the dims of its type: name them where it is declared (as in [b n]) "
            "and use n, an Int where a number is wanted"
        )
    if name in _TENSOR_METHODS:
        return f"; a tensor has no methods: write {_TENSOR_METHODS[name].format(x=x)}"
    if name in BUILTINS and name not in CONSTANTS:
        return f"; a tensor has no methods: write {name}({x}, ...)"
    return ""


def cast_problem(src: T.Type, target: T.Type) -> str | None:
    if isinstance(target, (T.ModelT, T.ModeT, T.TupleT)) or isinstance(src, (T.ModelT, T.GradT, T.ModeT, T.TupleT)):
        return "; only tensors and numbers can be cast"
    if isinstance(src, T.TensorT) and isinstance(target, T.TensorT):
        # two run-time dims may be said to agree with a cast, checked at run time
        if src.rank != target.rank or not all(
            T.dims_equal(a, b) or (T.is_run(a) and T.is_run(b)) for a, b in zip(src.dims, target.dims)
        ):
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
