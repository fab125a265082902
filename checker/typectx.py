"""Reading written types: `TypeContext` resolves a type as written in a
signature, a model or a body against the global names (recording each name it
looks up), and the helpers that write types and dims back as text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import ast as A
from . import catalog as C
from . import dimexpr as DX
from . import types as T
from .ast import dim_text
from .ast import written_dim as written_dim  # (re-exported: declarations reads it from here)
from .diagnostics import LocalDiagnostic
from .names import ALL_NAMES, NO_SIG, DimDefault, ModelSig, Names, default_reads, dim_default_text, kind_word, suggest
from .show import _bracket_text, type_text

NUMBER_TYPES = {"Int": T.INT, "Float": T.FLOAT, "Bool": T.BOOL_N, "Str": T.STR}
ELEM_TYPES = T.ELEM_TYPES
# the words that name a type by themselves: never read as a dim given to a model
_TYPE_WORDS = frozenset([*NUMBER_TYPES, *ELEM_TYPES, "Index", "Mode", "Grad", *T.OPTIMIZERS, *T.SCHEDULES])


@dataclass
class TypeContext:
    """How dim names in a type are read: in a signature an unknown name is a
    generic dim; in a model it is an error; in a body it must be a constant or
    one of the function's generic dims."""

    names: Names
    where: str  # "signature" | "model" | "body"
    generics: list[str] = field(default_factory=list)
    diagnostics: list[LocalDiagnostic] = field(default_factory=list)
    silent: tuple[str, ...] = ()  # dim names already reported elsewhere
    # Every global name looked up ("*names*" when the set of all names was
    # used, for a suggestion): a body records them as its dependencies.
    lookups: set[str] = field(default_factory=set)
    # In a model and its methods: its DType options, each an element type
    # (`[I O] dtype`, `Linear[E, F, dtype=dtype]`)
    elem_vars: tuple[str, ...] = ()
    # In a model's members: its Bool and Float options with their defaults,
    # which a sub-model may be given (`Linear[E, F, bias=bias]`)
    option_vars: dict[str, bool | float] = field(default_factory=dict)
    # In a body: how a name that is neither a constant nor a generic dim is
    # read as a dim known only at run time (a named run-time dim of the body,
    # an Int variable, or a new name a cast or a reader's shape binds). It
    # returns None for a name it does not take.
    run_dim: Callable[[str, A.Span], T.Dim | None] | None = None
    # In a generic function's signature and body: its type parameters
    # (`M` of `fn f[M: CharModel]`, checker/type_params.py), each a model
    # type (unknown where its bound is wrong)
    type_params: dict[str, T.Type] = field(default_factory=dict)
    # In a top-level fn's signature: a Bool or Float option given a new name
    # (`Transformer[E, flash=fl]`) binds it, as a new dim name does (the
    # options the fn is generic over, with their defaults' kinds)
    bind_options: bool = False
    bound_options: dict[str, bool | float] = field(default_factory=dict)
    # In a model with model parameters (`model ResNet[B: ResBlock, E]`,
    # checker/model_params.py): each with its traits; `B[C1, C2]` is a
    # sub-model of whatever model an instance gives for B
    ctor_params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The models given for model parameters where this context read them
    # (`ResNet[BasicBlock, 1]`): (model, traits, span, parameter), each
    # checked against its traits once every model is declared
    obligations: list[tuple[str, tuple[str, ...], A.Span, str]] = field(default_factory=list)

    def kind(self, name: str, span: A.Span | None = None) -> str | None:
        """The kind of a name as written (`Mlp`, `layers.Mlp`); with its
        span, a private name of a module (`layers._Hidden`) is reported."""
        if name in self.type_params or name in self.ctor_params:
            return "model"
        self.lookups.add(name)
        kind = self.names.kinds.get(name)
        if kind is None and "." in name:
            module, _, last = name.rpartition(".")
            # what the module names mean decides how an unknown name is reported
            self.lookups.add(module)
            self.lookups.add(name.split(".")[0])
            private = last.startswith("_") and self.names.kinds.get(module) == "module"
            if private and f"{self.names.modules[module]}.{last}" in self.names.imported:
                if span is not None:
                    self.diagnostics.append(C.E0116.at(span, name=last, module=module))
                return "broken-private"
            head = name.split(".")[0]
            if (self.names.kinds.get(head) or "").startswith("broken-"):
                return "broken-module"  # through an import that failed: reported there
        return kind

    def canon(self, name: str) -> str:
        """The qualified name a type holds for a name as written."""
        return self.names.canonical(name)

    def all_of(self, kind: str) -> list[str]:
        self.lookups.add(ALL_NAMES)
        return [n for n, k in self.names.kinds.items() if k == kind]

    def dim(self, d: A.Dim) -> T.Dim:
        if isinstance(d, A.DimBinary):
            return self._dim_binary(d)
        if isinstance(d, A.DimInt):
            if d.value <= 0:
                self.diagnostics.append(C.E0208.at(d.span, value=d.value))
                return T.DimUnknown()
            return T.DimLit(d.value)
        name = d.name
        if name in self.generics:
            # a body's generic dims, a model's own: in its members, bodies and
            # its methods' signatures alike, a model's dim named like a dim
            # constant means the model's dim (E0912 says so once, at the header)
            return T.DimVar(name)
        kind = self.kind(name, d.span)
        if kind == "dim":
            value = self.names.dim_values.get(name)
            return T.DimConst(self.canon(name), value) if value is not None else T.DimUnknown()
        if kind in ("broken-dim", "broken-import", "broken-module", "broken-private"):
            return T.DimUnknown()  # reported where it is defined or imported
        if kind == "const":  # `const BATCH = 32` sizes a type as the number it is
            value = self.names.const_values.get(name)
            if isinstance(value, tuple) and value[0] == "Int":
                if int(value[1]) <= 0:
                    self.diagnostics.append(C.E0208.at(d.span, value=value[1]))
                    return T.DimUnknown()
                return T.DimLit(int(value[1]))
            if value == "":
                return T.DimUnknown()  # a constant without a value: reported at its declaration
        if kind is not None:
            what, why = kind_word(kind), ""
            known = self.names.const_values.get(name) if kind == "const" else None
            if isinstance(known, tuple):
                what = f"a {known[0]} constant"
                decl = self.names.first.get(name)
                if known[0] == "Float" and isinstance(decl, A.ConstDecl) and _divides(decl.value):
                    why = (
                        ": `/` makes a Float, as in a body; for a size, declare it as a dim "
                        f"(`dim {name} = ...`), whose `/` divides integers exactly"
                    )
            self.diagnostics.append(C.E0211.at(d.span, name=name, kind=what, why=why))
            return T.DimUnknown()
        if name in self.bound_options:  # `m: M[flash=fl], x: [fl]`: a Bool or a Float
            self.diagnostics.append(C.E0211.at(d.span, name=name, kind="an option's value", why=""))
            return T.DimUnknown()
        if self.where == "signature" and "." not in name:  # `layers.X` is never generic
            if name not in self.generics:
                self.generics.append(name)
            return T.DimVar(name)
        if name in self.silent:
            return T.DimUnknown()
        if self.run_dim is not None and "." not in name:
            found = self.run_dim(name, d.span)
            if found is not None:
                return found
        dims = self.all_of("dim") + list(self.generics)
        if self.where == "model":
            self.diagnostics.append(C.E0207.at(d.span, name=name, hint=suggest(name, dims)))
        else:
            self.diagnostics.append(C.E0109.at(d.span, name=name, hint=suggest(name, dims)))
        return T.DimUnknown()

    def _default_dim(self, name: str, d: tuple, before: dict[str, T.Dim], span: A.Span, written: str) -> T.Dim | None:
        """The dim a model dim's default computes (`P = K // 2`) from the dims
        given before it: a literal when they have values, else the
        expression; None after E0910 (a division by zero, a size below 0)."""

        by_zero: list[bool] = []

        def poly(x: DimDefault) -> DX.Poly | None:
            if isinstance(x, int):
                return DX.const(x)
            if isinstance(x, str):
                return T.dim_poly(before[x])
            op, a, b = x
            pa, pb = poly(a), poly(b)
            if pa is None or pb is None:
                return None
            if op in ("//", "%") and DX.value(pb) == 0:
                by_zero.append(True)
                return None
            return (
                DX.add(pa, pb)
                if op == "+"
                else DX.sub(pa, pb)
                if op == "-"
                else DX.mul(pa, pb)
                if op == "*"
                else DX.mod(pa, pb)
                if op == "%"
                else DX.div(pa, pb)
            )

        p = poly(d)
        value = DX.value(p) if p is not None else None
        if by_zero or (value is not None and value < 0):
            found = "a division by zero" if by_zero else str(value)
            problem = C.E0910.say("default_not_a_size", dim=name, default=dim_default_text(d), found=found)
            self.diagnostics.append(C.E0910.at(span, model=written, problem=problem))
            return None
        if p is None:
            return T.DimUnknown()

        def text(x: DimDefault) -> str:  # as written with the dims given: `(k//2)` of Conv[ci, co, k]
            if isinstance(x, int):
                return str(x)
            if isinstance(x, str):
                given = before[x]
                return given.text if isinstance(given, T.DimExpr) else str(given)
            return f"({text(x[1])}{x[0]}{text(x[2])})"

        return T.DimLit(value) if value is not None else T.DimExpr(text(d), p)

    def _dim_binary(self, d: A.DimBinary) -> T.Dim:
        left, right = self.dim(d.left), self.dim(d.right)
        text = f"({dim_text(d)})"
        if d.op not in ("+", "-", "*", "/", "//", "%"):
            self.diagnostics.append(C.E0212.at(d.span, expr=text, reason=C.E0212.say("not_arithmetic", op=d.op)))
            return T.DimUnknown()
        pl, pr = T.dim_poly(left), T.dim_poly(right)
        if pl is None or pr is None:
            return T.DimUnknown()
        if d.op == "+":
            p: DX.Poly | None = DX.add(pl, pr)
        elif d.op == "-":
            p = DX.sub(pl, pr)
        elif d.op == "*":
            p = DX.mul(pl, pr)
        elif d.op == "%":  # the remainder, as Python's: (N%4)
            p = DX.mod(pl, pr)
        else:
            p = DX.div(pl, pr)
        if p is None:
            self.diagnostics.append(C.E0212.at(d.span, expr=text, reason=C.E0212.say("division_by_zero")))
            return T.DimUnknown()
        value = DX.value(p)
        if value is not None and value <= 0:
            self.diagnostics.append(C.E0212.at(d.span, expr=text, reason=C.E0212.say("not_positive", value=value)))
            return T.DimUnknown()
        return T.DimExpr(text, p)

    def elem(self, e: A.ElemType | None) -> T.Elem | None:
        if e is None:
            return T.F32
        name = e.name.text
        if name == "Index":
            given = e.args[0] if len(e.args) == 1 and not e.options else None
            if isinstance(given, A.DimInt):  # `Index[9]`: labels 0..8 of a dim written as its size
                dim = self.dim(given)
                return T.index_of(dim) if isinstance(dim, T.DimLit) else None
            if isinstance(given, A.DimBinary):  # `Index[(N + 1)]` of dim constants: the size it comes to
                dim = self.dim(given)
                if isinstance(dim, T.DimUnknown):  # (said where it was computed)
                    return None
                size = T.dim_value(dim)
                if size is not None:
                    return T.index_of(T.DimLit(size))
            if e.arg is None:
                self.diagnostics.append(C.E0309.at(e.span, elem=_index_text(e), reason=_index_problem(e)))
                return None
            dim = self.dim(A.DimName(e.arg.span, e.arg.text))
            return T.index_of(dim)
        if name in self.elem_vars and not e.bracketed:
            return T.elem_var(name)
        if name in ("NonNeg", "Prob") and e.arg is not None and e.arg.text in self.elem_vars:
            # `[..] Prob[dtype]`: the refinement of a model's DType option (nn.Sigmoid's forward)
            return T.with_refine(T.elem_var(e.arg.text), ELEM_TYPES[name].refine)
        elem = ELEM_TYPES.get(name)
        if elem is None:
            self.diagnostics.append(
                C.E0102.at(
                    e.name.span, what="element type", name=name, hint=suggest(name, list(ELEM_TYPES) + ["Index"])
                )
            )
            return None
        if e.bracketed:
            if name in ("NonNeg", "Prob"):
                reason = C.E0309.say("refines_an_option", name=name)
            else:
                reason = C.E0309.say("takes_no_argument", name=name)
            self.diagnostics.append(C.E0309.at(e.span, elem=f"{name}[...]", reason=reason))
            return None
        return elem

    def resolve(self, t: A.TypeExpr | A.OptionalType, member: bool = False) -> T.Type:
        """The type `t` is; `member` for a model member's own type, the one
        place a tuple of one element may be written (a list of one
        sub-model, E0941 elsewhere)."""
        if isinstance(t, A.TensorType):
            stacked = self._stack(t)
            if stacked is not None:
                return stacked
            dims = tuple(self.dim(d) for d in t.dims)
            elem = self.elem(t.elem)
            if t.rest:
                if self.where != "signature":
                    where = {"model": "a model's field", "alias": "a type alias"}.get(self.where, "a fn's body")
                    self.diagnostics.append(C.E0216.at(t.span, type=type_text(t), where=where))
                    return T.UNKNOWN
                dims = (T.REST, *dims)
            if elem is None:
                return T.UNKNOWN
            return T.TensorT(dims, elem)
        if isinstance(t, A.OptionalType):  # `Int | None`: a parameter that may be None
            inner = self.resolve(t.inner)
            return T.UNKNOWN if isinstance(inner, T.UnknownT) else T.OptionalT(inner)
        if isinstance(t, A.TupleType):
            if len(t.items) == 1 and not member:
                self.resolve(t.items[0])  # (its names are used, its own mistakes reported)
                self.diagnostics.append(C.E0941.at(t.span, written=type_text(t), item=type_text(t.items[0])))
                return T.UNKNOWN
            return T.TupleT(tuple(self.resolve(x) for x in t.items))
        assert isinstance(t, A.NamedType)
        name = t.name.text
        if name == "Grad":
            return self._grad(t)
        if name in T.OPTIMIZERS and t.arg is not None and self.kind(name) is None:
            return self._optimizer(t)
        kind = self.kind(name, t.name.span)
        if kind == "model":
            return self.model(t.name, t.args, t.options, t.span)
        if kind == "alias":
            return self.alias(t.name, t.args, t.options, t.span)
        if kind is not None and kind.startswith("broken"):
            return T.UNKNOWN  # reported where it is defined or imported
        if kind == "trait":
            self.diagnostics.append(C.E0924.at(t.name.span, name=name, problem=C.E0924.say("as_type", name=name)))
            return T.UNKNOWN
        if t.option is not None:
            self.diagnostics.append(
                C.E0309.at(
                    t.span, elem=f"{name}[...]", reason=C.E0309.say("takes_no_option", name=name, option=t.option.text)
                )
            )
            return T.UNKNOWN
        if name == "Vocab" and kind is None:  # the vocabulary of load_chars: Vocab[V]
            if t.arg is None:
                reason = C.E0309.say("vocab_needs_dim")
                self.diagnostics.append(C.E0309.at(t.span, elem="Vocab", reason=reason))
                return T.UNKNOWN
            dim = self.dim_arg(t.arg)
            if dim is None:
                reason = C.E0309.say("vocab_takes_dim")
                self.diagnostics.append(C.E0309.at(t.arg.span, elem="Vocab[...]", reason=reason))
                return T.UNKNOWN
            return T.VocabT(dim)
        if t.arg is not None and name != "Index":
            self.diagnostics.append(
                C.E0309.at(t.span, elem=f"{name}[...]", reason=C.E0309.say("takes_no_argument", name=name))
            )
            return T.UNKNOWN
        if name in NUMBER_TYPES:
            return NUMBER_TYPES[name]
        if name == "Mode":
            return T.MODE
        if name in T.SCHEDULES and kind is None:  # StepLR, OneCycleLR, ...
            return T.ScheduleT(name)
        if kind is not None and kind.startswith("broken"):
            return T.UNKNOWN
        if name in ELEM_TYPES or name == "Index":
            written = name if t.arg is None else f"{name}[...]"
            self.diagnostics.append(
                C.E0309.at(t.span, elem=written, reason=C.E0309.say("not_a_type_alone", written=written))
            )
            return T.UNKNOWN
        if kind is not None:
            self.diagnostics.append(C.E0110.at(t.name.span, name=name, kind=kind_word(kind), use="a type"))
            return T.UNKNOWN
        candidates = list(NUMBER_TYPES) + ["Mode", "Grad"] + self.all_of("model")
        self.diagnostics.append(C.E0102.at(t.name.span, what="type", name=name, hint=suggest(name, candidates)))
        return T.UNKNOWN

    def model(
        self, name: A.Ident, args: tuple[A.TypeArg, ...], options: tuple[A.TypeOption, ...], span: A.Span
    ) -> T.ModelT | T.UnknownT:
        """A model's type as written, with the dims and options it is given
        (`Linear[D, H, bias=False]`), checked against its header (E0910, E0911);
        a type parameter (`M`) as it is."""
        if name.text in self.type_params:
            param = self.type_params[name.text]
            if args or options:
                problem = C.E0923.say("type_param_args", param=name.text)
                self.diagnostics.append(C.E0923.at(span, problem=problem))
                return T.UNKNOWN
            return param if isinstance(param, T.ModelT) else T.UNKNOWN
        written = name.text
        bound: tuple[str, ...] = ()
        given_models: list[tuple[str, T.ModelArg]] = []
        if written in self.ctor_params:  # `B[C1, C2]` of a model parameter: its trait's dims
            qual, bound = written, self.ctor_params[written]
            if not bound:
                return T.UNKNOWN  # its bound is reported (E0948)
            sig = self.names.model_sigs.get(bound[0], NO_SIG) if bound else NO_SIG
        else:
            qual = self.canon(written)
            sig = self.names.model_sigs.get(qual, NO_SIG)
            if sig.models:  # `ResNet[BasicBlock, 1]`: the models first
                read = self._model_args(sig, args, written, span)
                if read is None:
                    return T.UNKNOWN
                given_models = read
                args = args[len(sig.models) :]
        dims_of, options_of = sig.dims, sig.options
        by_name = [o for o in options if o.value is None and not o.names and o.name.text in dims_of]
        if len(args) > len(dims_of):
            problem = (
                C.E0910.say("takes_no_dims", written=written)
                if not dims_of
                else C.E0910.say("dims_count", wanted=_dims_wanted(sig), count=len(args))
            )
            self.diagnostics.append(C.E0910.at(span, model=written, problem=problem))
            return T.UNKNOWN
        given_dims: dict[str, A.TypeArg] = dict(zip(dims_of, args))
        for o in by_name:
            key = o.name.text
            if key in given_dims:
                self.diagnostics.append(C.E0910.at(o.span, model=written, problem=C.E0910.say("dim_twice", dim=key)))
                return T.UNKNOWN
            assert o.dim is not None
            given_dims[key] = o.dim
        dim_defaults = dict(sig.defaults)
        missing = [d for d in dims_of if d not in given_dims and d not in dim_defaults]
        if missing:
            if not by_name:
                problem = C.E0910.say("dims_count", wanted=_dims_wanted(sig), count=len(given_dims))
            elif len(missing) == 1:
                problem = C.E0910.say("needs_dim", dim=missing[0])
            else:
                problem = C.E0910.say("needs_dims", dims=", ".join(missing))
            self.diagnostics.append(C.E0910.at(span, model=written, problem=problem))
            return T.UNKNOWN
        dims: list[T.Dim] = []
        flags = {k for k, v in options_of if isinstance(v, bool)}
        deferred: list[int] = []  # defaults that read a Bool option: computed once the options are read
        for param in dims_of:
            a = given_dims.get(param)
            if a is None:
                default = dim_defaults[param]  # a number, a dim before it (`stride = K`), or arithmetic of those
                if default_reads(default) & (flags | {dims_of[i] for i in deferred}):
                    deferred.append(len(dims))
                    dims.append(T.DimUnknown())
                elif isinstance(default, tuple):  # `P = K // 2`: computed from the dims given before it
                    dim = self._default_dim(param, default, dict(zip(dims_of, dims)), span, written)
                    if dim is None:
                        return T.UNKNOWN
                    dims.append(dim)
                else:
                    dims.append(T.DimLit(default) if isinstance(default, int) else dims[dims_of.index(default)])
                continue
            d = self.dim_arg(a)
            if d is None:
                self.diagnostics.append(
                    C.E0910.at(
                        a.span,
                        model=written,
                        problem=C.E0910.say("type_for_dim", param=param, type=type_text(a)),
                    )
                )
                return T.UNKNOWN
            dims.append(d)
        given: dict[str, bool | float | str | T.OptionRef] = {}
        defaults = dict(options_of)
        for o in options:
            if o in by_name:
                continue
            key = o.name.text
            if key in dims_of:
                self.diagnostics.append(
                    C.E0910.at(o.span, model=written, problem=C.E0910.say("dim_as_option", param=key))
                )
                return T.UNKNOWN
            if key not in defaults:
                known = [*defaults, *(d for d in dims_of if d in dim_defaults)]
                if known:
                    hint = suggest(key, known)
                    listed = ", ".join(known)
                    problem = (
                        C.E0911.say("no_such_option_hint", option=key, hint=hint)
                        if hint
                        else C.E0911.say("no_such_option", option=key, listed=listed)
                    )
                else:
                    problem = C.E0911.say("no_options", option=key)
                self.diagnostics.append(C.E0911.at(o.name.span, model=written, problem=problem))
                return T.UNKNOWN
            value = _option_value(o, defaults[key], self.elem_vars, self.option_vars)
            if value is None:
                value = self._const_option(o, defaults[key])
            if value is None:
                value = self._bind_option(o, defaults[key])
            if value is None:
                default = defaults[key]
                found = self._not_generic_over_options(o, key, default)
                if isinstance(default, bool):
                    problem = C.E0911.say("wants_bool", option=key, found=found)
                elif isinstance(default, str):
                    problem = C.E0911.say("wants_dtype", option=key, found=found)
                else:
                    problem = C.E0911.say("wants_number", option=key, found=found)
                self.diagnostics.append(C.E0911.at(o.span, model=written, problem=problem))
                return T.UNKNOWN
            if key in given:
                self.diagnostics.append(
                    C.E0911.at(o.span, model=written, problem=C.E0911.say("option_twice", option=key))
                )
                return T.UNKNOWN
            given[key] = value
        chosen = tuple((k, given[k]) for k, default in options_of if k in given and given[k] != default)
        for i in deferred:  # `num_directions = 1 + bidirectional`: True is 1, False 0
            before = dict(zip(dims_of[:i], dims[:i]))
            for k in flags:
                value = given.get(k, dict(options_of)[k])
                before[k] = T.DimLit(int(value)) if isinstance(value, bool) else T.DimUnknown()
            default = dim_defaults[dims_of[i]]
            if isinstance(default, tuple):
                dim = self._default_dim(dims_of[i], default, before, span, written)
                if dim is None:
                    return T.UNKNOWN
                dims[i] = dim
            elif isinstance(default, str):
                dims[i] = before[default]
        inexact = _inexact_division(sig, dims)
        if inexact is not None:
            text, n, d = inexact
            dividend, divisor = _division_sides(text)
            self.diagnostics.append(
                C.E0212.at(
                    span,
                    expr=text,
                    reason=C.E0212.say(
                        "inexact_in_model",
                        model=written + _bracket_text(args, options),
                        n=n,
                        d=d,
                        divisor=divisor,
                        dividend=dividend,
                    ),
                )
            )
            return T.UNKNOWN
        return T.ModelT(qual, tuple(dims), tuple(given_models) + chosen, bound=bound)

    def _model_args(
        self, sig: ModelSig, args: tuple[A.TypeArg, ...], written: str, span: A.Span
    ) -> list[tuple[str, T.ModelArg]] | None:
        """The models an instance gives for its model parameters (`BasicBlock`
        of `ResNet[BasicBlock, 1]`), each a model that takes dims or the
        enclosing model's own parameter with the traits wanted (E0946); None
        when one is wrong (reported). Whether a model has its traits' methods
        is checked later (checker/model_params.py), from `obligations`."""
        if len(args) < len(sig.models):
            wanted = ", ".join(n for n, _ in sig.models)
            problem = C.E0946.say("models_missing", model=written, wanted=wanted, count=len(args))
            self.diagnostics.append(C.E0946.at(span, problem=problem))
            return None
        out: list[tuple[str, T.ModelArg]] = []
        for (param, traits), a in zip(sig.models, args):
            given = a.name.text if isinstance(a, A.NamedType) and not a.args and not a.options else None
            if given is None and isinstance(a, A.DimName):
                given = a.name
            wanted = tuple(self.canon(t) for t in traits)
            self.lookups.update(wanted)  # what the model given must have: its methods, dependencies here
            if given is not None and given in self.ctor_params:  # passed on: `Stage[B, ...]`
                have = self.ctor_params[given]
                if all(t in have for t in wanted):
                    out.append((param, T.ModelArg(given, have)))
                    continue
                problem = C.E0946.say("bound_not_implied", given=given, param=param, traits=" + ".join(wanted))
                self.diagnostics.append(C.E0946.at(a.span, problem=problem))
                return None
            kind = self.kind(given, a.span) if given is not None else None
            if kind is not None and kind.startswith("broken"):
                return None
            if kind != "model":
                found = type_text(a) if given is None else given
                problem = C.E0946.say("not_a_model", given=found, param=param, model=written)
                self.diagnostics.append(C.E0946.at(a.span, problem=problem))
                return None
            assert given is not None
            qual = self.canon(given)
            self.obligations.append((qual, wanted, a.span, param))
            out.append((param, T.ModelArg(qual)))
        return out

    def alias(
        self, name: A.Ident, args: tuple[A.TypeArg, ...], options: tuple[A.TypeOption, ...], span: A.Span
    ) -> T.Type:
        """A type alias as written (`Gcn`, `Lin[D, H]`): the type it stands
        for, with the dims given in place of its own (E0925); silent when its
        declaration has an error (reported there)."""
        sig = self.names.alias_sigs.get(self.canon(name.text))
        if sig is None or sig.broken:
            return T.UNKNOWN
        written = name.text
        if options:
            problem = C.E0925.say("no_options", option=options[0].name.text)
            self.diagnostics.append(C.E0925.at(options[0].span, name=written, problem=problem))
            return T.UNKNOWN
        if len(args) != len(sig.params):
            if not sig.params:
                problem = C.E0925.say("takes_no_dims", name=written)
            else:
                n = len(sig.params)
                wanted = f"{n} dim{'s' if n != 1 else ''} ({', '.join(sig.params)})"
                problem = C.E0925.say("dims_count", wanted=wanted, count=len(args))
            self.diagnostics.append(C.E0925.at(span, name=written, problem=problem))
            return T.UNKNOWN
        dims: list[T.Dim] = []
        for a in args:
            d = self.dim_arg(a)
            if d is None:
                problem = C.E0925.say("type_for_dim", type=type_text(a))
                self.diagnostics.append(C.E0925.at(a.span, name=written, problem=problem))
                return T.UNKNOWN
            dims.append(d)
        return sig.applied(tuple(dims))

    def _alias_type(self, written: str) -> T.Type | None:
        sig = self.names.alias_sigs.get(self.canon(written))
        return sig.type if sig is not None and not sig.broken else None

    def _model_kind(self, t: A.NamedType) -> str | None:
        """ "model" or "alias" for a model's name or an alias of a model's type
        (`Grad[Gcn]`, `Adam[Gcn]`), else None."""
        kind = self.kind(t.name.text)
        if kind == "model" or kind == "alias" and isinstance(self._alias_type(t.name.text), T.ModelT):
            return kind
        return None

    def _model_of(self, t: A.NamedType) -> T.Type:
        """The model type a model's name or an alias of one stands for."""
        if self.kind(t.name.text) == "alias":
            return self.alias(t.name, t.args, t.options, t.span)
        return self.model(t.name, t.args, t.options, t.span)

    def _const_option(self, o: A.TypeOption, default: bool | float | str) -> bool | float | None:
        """An option given a constant of its kind (`eps=NORM_EPS` after
        `const NORM_EPS = 1e-5`, `bias=USE_BIAS`): its value, as if written."""
        name = o.dim.name if isinstance(o.dim, A.DimName) else None
        if name is None or isinstance(default, str) or self.kind(name) != "const":
            return None
        value = self.names.const_values.get(name)
        if not isinstance(value, tuple):
            return None
        if isinstance(default, bool):
            return value[1] if value[0] == "Bool" and isinstance(value[1], bool) else None
        if value[0] in ("Int", "Float") and isinstance(value[1], (int, float)):
            return float(value[1])
        return None

    def _bind_option(self, o: A.TypeOption, default: bool | float | str) -> T.OptionRef | None:
        """`flash=fl` in a top-level fn's signature, `fl` a new name: the fn is
        generic over that option, `fl` bound at each call from the argument."""
        name = o.dim.name if isinstance(o.dim, A.DimName) else None
        if not self.bind_options or name is None or isinstance(default, str) or "." in name:
            return None
        if name in self.generics or name in self.option_vars or self.kind(name) is not None:
            return None
        self.bound_options[name] = default
        self.option_vars[name] = default
        return T.OptionRef(name, default)

    def _not_generic_over_options(self, o: A.TypeOption, key: str, default: bool | float | str) -> str:
        """Why a name that means nothing here is no option value: in a
        function's signature (`fn f(blk: Block[E, bias=bias])`), no option
        is generic, as a dim may be."""
        name = o.dim.name if isinstance(o.dim, A.DimName) else None
        if name is not None and name in self.bound_options:  # `flash=fl, eps=fl`
            kind = "Bool" if isinstance(self.bound_options[name], bool) else "Float"
            return C.E0911.say("found_option_value", name=name, kind=kind)
        if name is not None and self.kind(name) == "const":
            # a constant of another kind than the option's: say which (`bias=ONE`, an Int)
            value = self.names.const_values.get(name)
            kind = value[0] if isinstance(value, tuple) else None
            word = {"Int": "an Int", "Float": "a Float", "Bool": "a Bool", "Str": "a string"}.get(kind or "")
            return C.E0911.say("found_constant", name=name, kind=word) if word else ""
        if name is None or self.where != "signature" or self.kind(name) is not None:
            return ""
        example = "True" if isinstance(default, bool) else default if isinstance(default, str) else repr(default)
        return C.E0911.say("options_not_generic", name=name, option=key, example=example)

    def dim_arg(self, a: A.TypeArg) -> T.Dim | None:
        """A dim given to a model (`D`, `784`, `(2*E)`), read as a tensor
        type's dims are; None when it is a type rather than a dim."""
        if isinstance(a, A.DimInt) and a.value == 0:
            return T.DimLit(0)  # a model's dim may be 0, as its default may (`padding = 0`)
        if isinstance(a, (A.DimInt, A.DimBinary)):
            return self.dim(a)
        name = a.name if isinstance(a, A.DimName) else a.name.text if isinstance(a, A.NamedType) else None
        if name is None or isinstance(a, A.NamedType) and (a.args or a.options):
            return None
        if name in _TYPE_WORDS and self.kind(name) is None:  # Linear[Float, H]: a type, not a generic dim
            return None
        return self.dim(a if isinstance(a, A.DimName) else A.DimName(a.span, name))

    def _stack(self, t: A.TensorType) -> T.Type | None:
        """`[L] Block` (a stack of sub-models) or `[b] Grad[M]` (one gradient
        per example); None when `t` is a tensor type."""
        e = t.elem
        if e is None:
            return None
        name = e.name.text
        if name == "Grad":
            arg = e.args[0] if len(e.args) == 1 and not e.options else None
            if not isinstance(arg, A.NamedType) or self.kind(arg.name.text, arg.name.span) not in ("model", "alias"):
                return None  # reported as an element type
            if self._model_kind(arg) is None:
                return T.UNKNOWN if self._alias_type(arg.name.text) is None else None
            model = self._model_of(arg)
            if not isinstance(model, T.ModelT):
                return T.UNKNOWN
            inner: T.Type = T.grad_of(model)
            per_example = True
        elif (kind := self.kind(name, e.name.span)) in ("model", "alias"):
            if kind == "alias" and not isinstance(self._alias_type(name), T.ModelT):
                # reported at the alias; an alias of another type is no element type
                return T.UNKNOWN if self._alias_type(name) is None else None
            model = (self.model if kind == "model" else self.alias)(e.name, e.args, e.options, e.span)
            if not isinstance(model, T.ModelT):
                return T.UNKNOWN
            inner = model
            per_example = False
        elif kind is not None and kind.startswith("broken-") and "." in name:
            return T.UNKNOWN  # `[L] layers.Block` through an import that failed
        else:
            return None
        if len(t.dims) != 1:
            self.diagnostics.append(
                C.E0309.at(t.span, elem=str(inner), reason=C.E0309.say("stack_has_one_dim", model=inner))
            )
            return T.UNKNOWN
        dim = self.dim(t.dims[0])
        if isinstance(dim, T.DimUnknown):
            return T.UNKNOWN
        return T.StackT(dim, inner, per_example)

    def _optimizer(self, t: A.NamedType) -> T.Type:
        name = t.name.text
        arg = t.arg
        if isinstance(arg, A.NamedType) and len(t.args) == 1 and t.option is None:
            kind = self.kind(arg.name.text, arg.name.span)
            if kind == "alias" and self._alias_type(arg.name.text) is None:
                return T.UNKNOWN  # reported at the alias
            if self._model_kind(arg) is not None:
                model = self._model_of(arg)
                if not isinstance(model, T.ModelT):
                    return T.UNKNOWN
                return T.OptimT(name, model.name, model.dims, model.options, bound=model.bound)
            if kind is not None and kind.startswith("broken"):
                return T.UNKNOWN
        inner = type_text(arg) if arg is not None else ""
        self.diagnostics.append(
            C.E0303.at(t.span, type=f"{name}[{inner}]", reason=C.E0303.say("optimizer_of_model", name=name))
        )
        return T.UNKNOWN

    def _grad(self, t: A.NamedType) -> T.Type:
        arg = t.arg
        if arg is None:
            self.diagnostics.append(C.E0303.at(t.span, type="Grad", reason=C.E0303.say("grad_needs_model")))
            return T.UNKNOWN
        if t.option is not None and t.option.text != "wrt":
            self.diagnostics.append(
                C.E0303.at(t.option.span, type="Grad[...]", reason=C.E0303.say("grad_option", option=t.option.text))
            )
            return T.UNKNOWN
        if isinstance(arg, A.NamedType) and len(t.args) == 1 and len(t.options) <= 1:
            kind = self.kind(arg.name.text, arg.name.span)
            if kind == "alias" and self._alias_type(arg.name.text) is None:
                return T.UNKNOWN  # reported at the alias
            if self._model_kind(arg) is not None:
                model = self._model_of(arg)
                if not isinstance(model, T.ModelT):
                    return T.UNKNOWN
                if t.option is not None and model.bound and t.names:  # Grad[M, wrt=[w]] of M: its fields are not known
                    first = t.names[0]
                    known = C.E0922.say("grad")
                    traits = " + ".join(model.bound)
                    self.diagnostics.append(
                        C.E0922.at(first.span, name=first.text, param=f"Grad[{model.name}]", traits=traits, known=known)
                    )
                    return T.UNKNOWN
                if t.option is not None:
                    # which names are params of the model is checked where the
                    # model's fields are known (the body, E1109)
                    return T.grad_of(model, tuple(sorted({n.text for n in t.names})))
                return T.grad_of(model)
            if kind is not None and kind.startswith("broken"):
                return T.UNKNOWN
            if (
                kind is None
                and arg.name.text not in NUMBER_TYPES
                and arg.name.text not in ELEM_TYPES
                and arg.name.text != "Mode"
            ):
                models = self.all_of("model")
                self.diagnostics.append(
                    C.E0102.at(arg.name.span, what="model", name=arg.name.text, hint=suggest(arg.name.text, models))
                )
                return T.UNKNOWN
        inner = type_text(arg)
        self.diagnostics.append(
            C.E0303.at(t.span, type=f"Grad[{inner}]", reason=C.E0303.say("not_a_model", type=inner))
        )
        return T.UNKNOWN


def _option_value(
    o: A.TypeOption,
    default: bool | float | str,
    elem_vars: tuple[str, ...],
    option_vars: dict[str, bool | float] | None = None,
) -> bool | float | str | T.OptionRef | None:
    """What `bias=False`, `eps=1e-6` or `dtype=f64` gives an option whose
    default is `default` (None when it is the wrong kind of value); in a
    model's members, `bias=bias` gives the enclosing model's own option of
    that kind (`option_vars`)."""
    written = o.dim.name if isinstance(o.dim, A.DimName) else None
    if written is not None and option_vars and written in option_vars and not isinstance(default, str):
        outer = option_vars[written]
        if isinstance(outer, bool) == isinstance(default, bool):
            return T.OptionRef(written, default)
        return None
    if isinstance(default, bool):
        return o.value
    if isinstance(default, str):  # a DType: f64, or the enclosing model's own (`dtype=dtype`)
        written = o.dim.name if isinstance(o.dim, A.DimName) else None
        if written in elem_vars:
            return "~" + written
        if written == "Float":
            return "f32"
        return written if written in T.DTYPE_CHOICES else None
    if o.number is not None:
        return o.number
    if isinstance(o.dim, A.DimInt):
        return float(o.dim.value)
    return None


def _inexact_division(sig: ModelSig, dims: list[T.Dim]) -> tuple[str, int, int] | None:
    """The first of a model's own divisions (`(E/NH)`) that the instance's
    dims leave a remainder in, with its numbers."""
    env = {name: p for name, d in zip(sig.dims, dims) if (p := T.dim_poly(d)) is not None}
    for text, num, den in sig.divisions:
        a, b = DX.substitute(num, env), DX.substitute(den, env)
        n, d = (DX.value(a) if a is not None else None), (DX.value(b) if b is not None else None)
        if n is not None and d and n % d:
            return text, n, d
    return None


def _division_sides(text: str) -> tuple[str, str]:
    """`Ci` and `M*G` of `(Ci/(M*G))`: split at its last `/` outside
    parentheses (the division's own), each side without its parentheses."""
    pieces = A.top_level(A.unwrapped(text), "/")
    return A.unwrapped("/".join(pieces[:-1])), A.unwrapped(pieces[-1])


def _dims_wanted(sig: ModelSig) -> str:
    """`3 dims (I, O, K)`, `3 to 5 dims (Ci, Co, K, stride, padding)`."""
    n, least = len(sig.dims), len(sig.dims) - len(sig.defaults)
    count = f"{least} to {n}" if least != n else str(n)
    return f"{count} dim{'s' if n != 1 else ''} ({', '.join(sig.dims)})"


def _divides(e: A.Expr) -> bool:
    """Whether a constant's expression divides with `/` (which makes a Float)."""
    return any(isinstance(n, A.Binary) and n.op == "/" for n in A.walk(e))


def _index_text(e: A.ElemType) -> str:
    if len(e.args) == 1 and not e.options and isinstance(e.args[0], A.DimBinary):
        return f"Index[({dim_text(e.args[0])})]"
    return "Index[...]" if e.bracketed else "Index"


def _index_problem(e: A.ElemType) -> str:
    """What is wrong with the brackets of an `Index` that is not `Index[C]` or `Index[9]`."""
    if not e.bracketed:
        return C.E0309.say("index_needs_dim")
    if len(e.args) == 1 and not e.options and isinstance(e.args[0], A.DimBinary):
        return C.E0309.say("index_dim_arithmetic", dims=dim_text(e.args[0]))
    return C.E0309.say("index_takes_one_dim")
