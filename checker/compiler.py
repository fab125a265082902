"""The compiler: a checked program to readable Python on the torch runtime.

`compile_program(analysis, path)` takes the analysis of a program with no
errors and returns Python source that imports only `quiver.runtime` (as `rt`),
plus a map from each generated line to the `.qv` line and column it came from.
The runtime uses that map to report every failure at its `.qv` location.

The generated code mirrors the program: a dim is a module constant, a model a
`rt.Model` subclass, a fn a Python function that checks its arguments at entry
(`rt.checks.enabled` switches that off), an extern fn an `rt.extern` callable.
Built-ins become `rt.<name>` calls with their `over=` dims resolved to axes at
compile time, so nothing about dims is looked up while the program runs.
Everything here is static: the analysis already knows every type.

This module writes the module, its models and the functions' signatures;
function bodies are in compile_body.py, names and static values in
compile_names.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ast as A
from . import dimexpr as DX
from . import member_conditions as MC
from . import types as T
from .analysis import Analysis
from .compile_body import _FnCompiler
from .compile_names import (
    CompileError,
    _number_text,
    attr,
    dim_py,
    elem_expr,
    fn_ident,
    module_var,
    option_py,
    py_name,
    unchecked_ident,
)
from .consts import python_literal
from .declarations import FieldInfo, FnInfo, ModelInfo, dotted_text, sub_model, sub_models
from .deep import deep
from .initializers import INITIALIZERS
from .model_lists import chain_kind
from .ties import is_tie, tie_pairs

# Initializers whose runtime functions take their first arguments by position.
_POSITIONAL_INITS = ("normal", "uniform", "trunc_normal")


@dataclass(frozen=True)
class CompiledModule:
    source: str
    line_map: dict[int, tuple[int, int]]  # python line (1-based) -> (qv line, qv col), 1-based


class _Writer:
    def __init__(self, lines) -> None:
        self.out: list[str] = []
        self.map: dict[int, tuple[int, int]] = {}
        self.lines = lines  # the document's LineIndex

    def emit(self, indent: int, text: str, offset: int | None = None) -> None:
        self.out.append("    " * indent + text)
        if offset is not None:
            p = self.lines.position(offset)
            self.map[len(self.out)] = (p.line + 1, p.column + 1)


class Compiler:
    def __init__(self, analysis: Analysis, path: str, fuse_updates: bool = True) -> None:
        self.a = analysis
        self.path = path
        self.fuse_updates = fuse_updates
        self.w = _Writer(analysis.lines)

    def loc(self, offset: int) -> str:
        p = self.a.lines.position(offset)
        return f"_src.loc({p.line + 1}, {p.column + 1})"

    def base(self, item: A.Node) -> int:
        """The offset of an item (a method's: its model's, which holds it)."""
        slot = self.a.slot_of_item.get(item)
        if slot is None:
            for model in self.a.globals.models.values():
                if any(m.decl is item for m in model.methods + model.computed) and model.decl in self.a.slot_of_item:
                    slot = self.a.slot_of_item[model.decl]
                    break
        assert slot is not None
        return slot.start

    def run(self) -> CompiledModule:
        w = self.w
        w.emit(0, f"# Compiled by Quiver from {self.path}. Do not edit: edit the .qv file.")
        w.emit(0, "from quiver import runtime as rt")
        w.emit(0, "")
        w.emit(0, f"_src = rt.SourceFile({self.path!r})")
        g = self.a.globals
        # Every module whose definitions this one's types or code can name
        # (its imports' own imports included), handed over by the loader.
        quals = sorted({q.rpartition(".")[0] for q in g.names.imported})
        for qual in quals:
            w.emit(0, f"{module_var(qual)} = rt.imported({qual!r})")
        # What `from m import x as y` binds, for Python users of the module
        # (Quiver code names the definition itself).
        for written, q in sorted(g.names.aliases.items()):
            if g.names.kinds.get(written) == "alias" and _class_alias(g.names.alias_sigs.get(q)) is None:
                continue  # a type alias of no model instance: a type only, nothing at run time
            if "." not in written and "." in q and g.names.kind(q) != "trait":  # (a trait is nothing at run time)
                w.emit(0, f"{py_name(written)} = {py_name(q)}")
        items = [s.item for s in self.a.parsed.slots if s.item is not None]
        for item in items:
            if isinstance(item, A.DimDecl) and item.name.text in g.dims and g.names.first[item.name.text] is item:
                w.emit(0, "")
                w.emit(0, f"{py_name(item.name.text)} = {g.dims[item.name.text].value}", self.base(item))
            elif isinstance(item, A.ConstDecl) and g.names.first.get(item.name.text) is item:
                value = g.names.const_values.get(item.name.text)
                if isinstance(value, tuple):
                    w.emit(0, "")
                    w.emit(0, f"{py_name(item.name.text)} = {python_literal(*value)}", self.base(item))
        done: set[str] = set()
        for item in items:
            if isinstance(item, A.ModelDecl) and g.names.first.get(item.name.text) is item:
                self.model_and_parts(g.models[item.name.text], done)
        for item in items:  # an alias of a model instance's type: that instance's class, for Python
            if not isinstance(item, A.TypeAlias) or g.names.first.get(item.name.text) is not item:
                continue
            made = _class_alias(g.names.alias_sigs.get(item.name.text))
            if made is not None:
                w.emit(0, "")
                w.emit(0, f"{py_name(item.name.text)} = {self.model_class(made.name, made.dims, made.options)}")
        for item in items:
            if isinstance(item, (A.FnDecl, A.ExternDecl)) and g.names.first.get(item.name.text) is item:
                info = g.fns[item.name.text]
                if info.extern:
                    self.extern(info)
                else:
                    self.function(info)
            elif isinstance(item, A.ModelDecl) and g.names.first.get(item.name.text) is item:
                model = g.models[item.name.text]
                for m in model.computed:  # the functions of its computed buffers, which init calls
                    self.function(m)
                for m in model.methods:
                    self.function(g.fns.get(m.name, m))
                if model.methods:
                    w.emit(0, "")
                    pairs = ", ".join(f"{m.name.rpartition('.')[2]}={fn_ident(m.name, m.owner)}" for m in model.methods)
                    w.emit(0, f"rt.add_methods({py_name(model.name)}, {pairs})", self.base(item))
        w.emit(0, "")
        w.emit(0, "_src.set_line_map(" + repr(dict(sorted(w.map.items()))) + ")")
        return CompiledModule("\n".join(w.out) + "\n", dict(w.map))

    def model_and_parts(self, m: ModelInfo, done: set[str]) -> None:
        """A model class after the classes of its sub-models (the checker
        rules out cycles: E0909)."""
        if m.name in done:
            return
        done.add(m.name)
        for f in m.params:
            # (a model of another module is compiled with that module)
            for sub in sub_models(f.type):
                if sub.name in self.a.globals.models and sub.name in self.a.globals.names.first:
                    self.model_and_parts(self.a.globals.models[sub.name], done)
        self.model(m)

    def model_class(
        self, name: str, dims: tuple[T.Dim, ...], options: T.Options, where: str = "method", size=dim_py
    ) -> str:
        """A model's class: `Mlp`, or of an instance `Linear.of(784, 128,
        bias=False)`, `ResNet.of(BasicBlock, 1)`; in a factory, `B.of(64, 64, 1)`
        of a model parameter B (no model of that name: the factory's argument)."""
        info = self.a.globals.models.get(name)
        takes = info.takes if info is not None else bool(dims or options)
        if not takes:
            return py_name(name)
        args = [option_py(v, where) for _, v in options if isinstance(v, T.ModelArg)]  # `ResNet.of(BasicBlock, 1)`
        args += [size(d) for d in dims]  # in a body, `Net[r]` of an Int r: r's value (`size`)
        args += [f"{k}={option_py(v, where)}" for k, v in options if not isinstance(v, T.ModelArg)]
        return f"{py_name(name)}.of({', '.join(args)})"

    def model(self, m: ModelInfo) -> None:
        """A model's class; for a model that takes dims and options, the
        factory that makes the class of each instance (`rt.GenericModel`)."""
        w = self.w
        base = self.base(m.decl)
        w.emit(0, "")
        w.emit(0, "")
        level = 0
        if m.takes:
            params = ", ".join(
                [py_name(p) for p, _ in m.model_params]
                + [py_name(d) for d in m.dims]
                + [py_name(o) for o, _ in m.options]
            )
            w.emit(0, f"def _qv_make_{m.name}({params}):", base)
            level = 1
        w.emit(level, f"class {py_name(m.name)}(rt.Model):", base)
        if m.takes:
            dims = "(" + "".join(f"{py_name(d)}, " for d in m.dims) + ")"
            chosen = "{" + ", ".join(f"{o!r}: {py_name(o)}" for o, _ in m.options) + "}"
            defaults = "{" + ", ".join(f"{o!r}: {option_py(v)}" for o, v in m.options) + "}"
            models = "".join(f", ({py_name(p)}, )" for p, _ in m.model_params[:1])
            if len(m.model_params) > 1:
                models = ", (" + "".join(f"{py_name(p)}, " for p, _ in m.model_params) + ")"
            w.emit(level + 1, f"_qv_name = rt.applied_name({m.name!r}, {dims}, {chosen}, {defaults}{models})")
        else:
            w.emit(level + 1, f"_qv_name = {m.name!r}")
        w.emit(level + 1, f"_qv_device = {m.device!r}")
        for kind in ("param", "buffer"):
            fields = [f for f in m.fields if f.kind == kind]
            conditional = any(f.when is not None for f in fields)
            if not fields:
                w.emit(level + 1, f"_qv_{kind}s = ()")
                continue
            w.emit(level + 1, f"_qv_{kind}s = tuple(f for f in (" if conditional else f"_qv_{kind}s = (")
            for f in fields:
                when = ""
                if f.when is not None:
                    # a Python expression of the factory's dims and options
                    when = f" if {MC.python(f.when, py_name)} else None"
                if isinstance(f.type, T.TupleT):  # a list of sub-models (nn.ModuleList)
                    w.emit(level + 2, f"{self.model_list(f, base)}{when},", base + f.decl.span.start)
                    continue
                sub = sub_model(f.type)
                if sub is not None:
                    count = dim_py(f.type.dim) if isinstance(f.type, T.StackT) else None
                    cls = self.model_class(sub.name, sub.dims, sub.options, "factory")
                    w.emit(
                        level + 2,
                        f"rt.SubModel({f.name!r}, {cls}, {count}, {self.loc(base + f.decl.span.start)}){when},",
                        base + f.decl.span.start,
                    )
                    continue
                assert isinstance(f.type, T.TensorT)
                shape = "(" + ", ".join(dim_py(d) for d in f.type.dims) + ("," if f.type.rank == 1 else "") + ")"
                init = (
                    "rt.init.zeros" if is_tie(f.decl.init) else self.buffer_init(m, f) or self.initializer(f.decl.init)
                )
                keep = "" if f.persistent else ", persistent=False"
                w.emit(
                    level + 2,
                    f"rt.Field({f.name!r}, {shape}, {elem_expr(f.type.elem, 'factory')}, {init}, "
                    f"{self.loc(base + f.decl.span.start)}{keep}){when},",
                    base + f.decl.span.start,
                )
            w.emit(level + 1, ") if f is not None)" if conditional else ")")
        ties = tie_pairs(m.fields)
        if ties:  # `param head: [V E] = tied(wte)`: one tensor in two places (runtime/_model.py)
            w.emit(level + 1, f"_qv_ties = {ties!r}")
        if m.takes:
            w.emit(1, f"return {py_name(m.name)}")
            w.emit(0, "")
            w.emit(0, "")
            w.emit(
                0,
                f"{py_name(m.name)} = rt.GenericModel({m.name!r}, _qv_make_{m.name}, {m.dims!r}, "
                + "("
                + "".join(f"({o!r}, {option_py(v)}), " for o, v in m.options)
                + ")"
                + (f", defaults={m.defaults!r}" if m.defaults else "")
                + (f", models={tuple(p for p, _ in m.model_params)!r})" if m.model_params else ")"),
                base,
            )

    def buffer_init(self, m: ModelInfo, f: FieldInfo) -> str | None:
        """A computed buffer's initializer: its function, called by `init`
        with the model's class (whose dims and options it reads), or None."""
        fn = next((c for c in m.computed if isinstance(c.decl, A.ComputedBuffer) and c.decl.buffer == f.name), None)
        if fn is None:
            return None
        body = unchecked_ident(fn_ident(fn.name, fn.owner))
        return f"rt.init.computed(lambda cls: {body}(cls))"

    def model_list(self, f: FieldInfo, base: int) -> str:
        """`rt.SubModel('layers', (A, B), 2, loc, modes=(False, True))`: the
        element classes, and which elements' forward takes the Mode of a
        chained call (`self.main(x, mode)`)."""
        models = sub_models(f.type)
        classes = "".join(self.model_class(t.name, t.dims, t.options, "factory") + ", " for t in models)
        modes = []
        for t in models:
            info = self.a.globals.model(t)
            found = info.method("forward") if info is not None else None
            fn = self.a.globals.fns.get(found.name) if found is not None else None
            modes.append(fn is not None and chain_kind(fn.params[1:]) == "mode")
        where = self.loc(base + f.decl.span.start)
        return f"rt.SubModel({f.name!r}, ({classes}), {len(models)}, {where}, modes={tuple(modes)!r})"

    def initializer(self, init: A.Expr | None) -> str:
        """A field's initializer: `rt.init.zeros`, `rt.init.normal(0.0, 0.02)`,
        `rt.init.uniform(-1.0 / rt.sqrt_of_number(I), ...)` (in a model's
        factory, its dims are the factory's arguments)."""
        if init is None:
            return "rt.init.zeros"
        name = init.name if isinstance(init, A.Name) else None
        args: tuple[A.Arg, ...] = ()
        if isinstance(init, A.Call) and isinstance(init.func, A.Name):
            name, args = init.func.name, init.args
        if name is None:
            return f"rt.init.fill({_number_text(init)})"
        params = [p.name for p in INITIALIZERS[name].params] if name in INITIALIZERS else []
        rendered = []
        for i, a in enumerate(args):
            key = a.keyword.text if a.keyword is not None else params[i]
            value = repr(a.value.value) if isinstance(a.value, A.StrLit) else self.init_number(a.value)
            rendered.append(f"{key}={value}" if a.keyword is not None or name not in _POSITIONAL_INITS else value)
        if name in ("xavier_uniform", "xavier_normal"):
            kind = name.rpartition("_")[2]
            return f"rt.init.glorot({kind!r}, {', '.join(rendered)})" if rendered else f"rt.init.glorot_{kind}"
        if name in ("zeros", "ones", "xavier"):
            return f"rt.init.{name}"
        return f"rt.init.{name}({', '.join(rendered)})"

    def init_number(self, e: A.Expr) -> str:
        """A number of an initializer as Python: literals, dims, + - * / **, sqrt/exp/log."""
        if isinstance(e, (A.IntLit, A.FloatLit)):
            return repr(e.value)
        if isinstance(e, A.Unary):
            return f"({e.op}{self.init_number(e.operand)})"
        if isinstance(e, A.Name):
            value = self.a.globals.names.dim_values.get(e.name)
            return str(value) if value is not None else py_name(e.name)
        if isinstance(e, A.Field):
            written = dotted_text(e)
            value = self.a.globals.names.dim_values.get(written) if written is not None else None
            if value is None:
                raise CompileError(f"an initializer's dim {written} has no value")
            return str(value)
        if isinstance(e, A.Binary):
            return f"({self.init_number(e.left)} {e.op} {self.init_number(e.right)})"
        if isinstance(e, A.Call) and isinstance(e.func, A.Name):
            return f"rt.{e.func.name}_of_number({self.init_number(e.args[0].value)})"
        raise CompileError("an initializer's argument must be a number")  # pragma: no cover

    def spec(self, name: str, t: T.Type, loc: str, sizes: bool = False) -> str:
        if isinstance(t, T.TensorT):
            dims = [_dim_spec(d) for d in t.dims]
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            return f"rt.TensorArg({name!r}, {shape}, {elem_expr(t.elem, 'signature')}, {loc})"
        if isinstance(t, T.NumberT):
            kind = {"Int": "int", "Float": "float", "Bool": "bool", "Str": "str"}[t.kind]
            if sizes:  # an Int parameter that sizes the other parameters' types
                return f"rt.NumberArg({name!r}, {kind}, {loc}, size=True)"
            return f"rt.NumberArg({name!r}, {kind}, {loc})"
        if isinstance(t, (T.ModelT, T.GradT, T.OptimT)) and t.bound:  # `m: M` of `fn f[M: CharModel]`
            param = t.name if isinstance(t, T.ModelT) else t.model
            what = "'model'" if isinstance(t, T.ModelT) else "'grad'" if isinstance(t, T.GradT) else f"rt.{t.kind}"
            return f"rt.TypeParamArg({name!r}, {param!r}, {' + '.join(t.bound)!r}, {loc}, {what})"
        if isinstance(t, T.StackT) and isinstance(t.item, T.GradT) and t.item.bound:  # [b] Grad[M]
            return f"rt.TypeParamArg({name!r}, {t.item.model!r}, {' + '.join(t.item.bound)!r}, {loc}, 'grad')"
        if isinstance(t, T.ModelT):
            info = self.a.globals.models.get(t.name)
            generic_self = t.generic and info is not None and info.takes  # `self` of a model of options only
            if (self._fixed(t.dims) or not t.dims) and not generic_self and not _option_refs(t):
                return f"rt.ModelArg({name!r}, {self.model_class(t.name, t.dims, t.options)}, {loc})"
            return f"rt.ModelArg({name!r}, {py_name(t.name)}, {loc}{self.family_args(t)})"
        if isinstance(t, T.GradT):
            wrt = "" if t.wrt is None else f", wrt={self.wrt_order(t.model, t.wrt)!r}"
            cls, family = self.model_of(t.of)
            return f"rt.GradArg({name!r}, {cls}, {loc}{wrt}{family})"
        if isinstance(t, T.StackT) and isinstance(t.item, T.GradT):
            g = t.item
            wrt = "" if g.wrt is None else f", wrt={self.wrt_order(g.model, g.wrt)!r}"
            cls, family = self.model_of(g.of)
            return f"rt.GradArg({name!r}, {cls}, {loc}{wrt}, batch=True{family})"
        if isinstance(t, T.OptimT):
            cls, family = self.model_of(t.of)
            return f"rt.OptimArg({name!r}, rt.{t.kind}, {cls}, {loc}{family})"
        if isinstance(t, T.ModeT):
            return f"rt.ModeArg({name!r}, {loc})"
        if isinstance(t, T.ScheduleT):
            return f"rt.ScheduleArg({name!r}, rt.{t.kind}, {loc})"
        if isinstance(t, T.VocabT):
            size = T.dim_value(t.index)
            return f"rt.VocabArg({name!r}, {size if size is not None else repr(str(t.index))}, {loc})"
        if isinstance(t, T.OptionalT):  # `x: A | None`: None, or what A's spec checks
            return f"rt.OptionalArg({name!r}, {self.spec(name, t.inner, loc)}, {loc})"
        if isinstance(t, T.TupleT):
            items = ", ".join(self.spec(f"{name}[{i}]", x, loc) for i, x in enumerate(t.items))
            return f"rt.TupleArg({name!r}, ({items}{',' if len(t.items) == 1 else ''}), {loc})"
        raise CompileError(f"no runtime check for {t}")  # pragma: no cover

    @staticmethod
    def _fixed(dims: tuple[T.Dim, ...]) -> bool:
        return all(T.dim_value(d) is not None for d in dims)

    def family_args(self, t: T.ModelT) -> str:
        """The `dims=` and `options=` of a spec whose model is an instance
        with generic dims (`Linear[i, o]`): the family's instance, its dims
        bound from the argument."""
        dims = "(" + "".join(f"{_dim_spec(d)}, " for d in t.dims) + ")"
        # an option the fn is generic over (`flash=fl`) takes any value here
        chosen = [(k, v) for k, v in t.options if not isinstance(v, T.OptionRef)]
        options = "None" if t.generic else "{" + ", ".join(f"{k!r}: {option_py(v)}" for k, v in chosen) + "}"
        return f", dims={dims}, options={options}"

    def model_of(self, t: T.ModelT) -> tuple[str, str]:
        """The model of a gradient's or an optimizer's spec: its class where
        its dims are known; else the family, with the `dims=` and `options=`
        its instance is checked against."""
        if self._fixed(t.dims) and not _option_refs(t):
            return self.model_class(t.name, t.dims, t.options), ""
        return py_name(t.name), self.family_args(t)

    def wrt_order(self, model: str, wrt: tuple[str, ...]) -> tuple[str, ...]:
        """A selection in the model's declaration order, as the runtime takes it."""
        info = self.a.globals.models.get(model)
        if info is None:
            return wrt
        return tuple(f.name for f in info.params if f.name in wrt)

    def signature(self, fn: FnInfo) -> str:
        base = self.base(fn.decl)
        specs = [
            self.spec(p.name, p.type, self.loc(base + p.decl.span.start), p.type == T.INT and p.name in fn.generics)
            for p in fn.params
        ]
        inner = ", ".join(specs) + ("," if len(specs) == 1 else "")
        return f"rt.Signature(_src, {fn.name!r}, {self.loc(base + fn.decl.span.start)}, ({inner}))"

    def extern(self, fn: FnInfo) -> None:
        base = self.base(fn.decl)
        returns = self.spec("result", fn.ret, self.loc(base + fn.decl.span.start)) if fn.declared_ret else "None"
        self.w.emit(0, "")
        self.w.emit(
            0,
            f"{py_name(fn.name)} = rt.extern(_src, {fn.target!r}, {self.signature(fn)}, {returns}, "
            f"{self.loc(base + fn.decl.span.start)})",
            base,
        )

    def function(self, fn: FnInfo) -> None:
        w = self.w
        decl = fn.decl
        assert isinstance(decl, A.FnDecl)
        base = self.base(decl)
        body = self.a.bodies.get(decl)
        if body is None:
            raise CompileError(f"{fn.name} was not checked")
        ident = fn_ident(fn.name, fn.owner)
        sig = f"_sig_{ident}"
        w.emit(0, "")
        w.emit(0, "")
        if fn.params:
            w.emit(0, f"{sig} = {self.signature(fn)}")
            w.emit(0, "")
            w.emit(0, "")
        result_check = None
        if fn.declared_ret and _refined(fn.ret):
            assert decl.ret is not None
            result_check = f"_ret_{ident}"
            spec = self.spec("result", fn.ret, self.loc(base + decl.ret.span.start))
            w.emit(0, f"{result_check} = rt.ResultCheck(_src, {fn.name!r}, {spec})")
            w.emit(0, "")
            w.emit(0, "")
        params = ", ".join(py_name(p.name) for p in fn.params)
        # a parameter with a default: its value, for calls that leave it out
        defined = ", ".join(
            py_name(p.name) + (f"={python_literal(*p.default)}" if p.default is not None else "") for p in fn.params
        )
        at = base + decl.span.start  # (a method's offset in its model)
        # A fn with parameters is two Python functions: its body, which calls
        # from compiled code use (the checker proved their arguments), and the
        # entry of its own name, which checks the arguments of a call from
        # Python first (docs/runtime.md, "What runs where").
        body_ident = unchecked_ident(ident) if fn.params else ident
        w.emit(0, f"def {body_ident}({defined}):", at)
        # Generic dims the body names (as values, or in types such as
        # `Linear[i, o].init(...)` and `zeros([b o])`), or that size its
        # run-time dim checks, get their size from the arguments.
        used = _written_names(decl.body)
        for checks in body.dim_checks.values():
            for check in checks:
                for d in (*check.dims, *(check.count or ())):
                    if d is not None and T.dim_value(d) is None:
                        used |= DX.generics(T.dim_poly(d) or DX.ZERO)
        compiler = _FnCompiler(self, fn, body, base, result_check)
        for g in fn.generics:
            if g not in used:
                continue
            if any(p.name == g and p.type == T.INT for p in fn.params):
                compiler.generic_sizes.add(g)  # an Int parameter that sizes the types
                continue
            source = _dim_source(fn, g)
            if source is not None:
                w.emit(1, f"{py_name(g)} = {source}", at)
                compiler.generic_sizes.add(g)
        if fn.owner is None:  # the options it is generic over, from the model that binds each
            for name, _ in fn.owner_options:
                source = _option_source(fn, name)
                if source is not None:
                    w.emit(1, f"{py_name(name)} = {source}", at)
        if body.run_binds:  # the sizes of the run-time dims the body's values bind
            w.emit(1, "_qd = {}", at)
        compiler.block(decl.body, 1)
        if fn.params:
            w.emit(0, "")
            # tracebacks, profilers and debuggers name the body as the fn
            w.emit(
                0, f"{body_ident}.__code__ = {body_ident}.__code__.replace(co_name={ident!r}, co_qualname={ident!r})"
            )
            w.emit(0, f"{body_ident}.__name__ = {body_ident}.__qualname__ = {ident!r}")
            w.emit(0, "")
            w.emit(0, "")
            w.emit(0, f"def {ident}({defined}):", at)
            w.emit(1, "if rt.checks.enabled:", at)
            w.emit(2, f"{sig}.check({params})", at)
            w.emit(1, f"return {body_ident}({params})")  # not a line of the program: no .qv location


def _class_alias(sig) -> T.ModelT | None:
    """The model instance a type alias that takes no dims stands for (`type
    Gcn = GCN[FIN, H, C, use_bias=False]`), whose class the module defines."""
    if sig is None or sig.broken or sig.params or not isinstance(sig.type, T.ModelT):
        return None
    return sig.type


def _option_refs(t: T.ModelT) -> bool:
    """Whether a model type of a fn's signature has an option the fn is generic over."""
    return any(isinstance(v, T.OptionRef) for _, v in t.options)


def _option_source(fn: FnInfo, name: str) -> str | None:
    """Where an option a fn is generic over (`flash=fl`) is read at run
    time: the instance's option, of the first parameter that binds it."""
    for p in fn.params:
        t = p.type
        if isinstance(t, T.ModelT):
            for k, v in t.options:
                if isinstance(v, T.OptionRef) and v.name == name:
                    return attr(py_name(p.name), f"_qv_opt_{k}")
    return None


def _refined(t: T.Type) -> bool:
    """Whether a type has values the runtime checks: a tensor of a refined
    element type (Index[C] with C known, NonNeg, Prob), alone or in a tuple."""
    if isinstance(t, T.TensorT):
        e = elem_expr(t.elem)
        return e in ("rt.nonneg", "rt.prob") or e.startswith("rt.index(")
    if isinstance(t, T.TupleT):
        return any(_refined(x) for x in t.items)
    return False


def _dim_spec(d: T.Dim) -> str:
    """A dim of an argument's spec: its size, a generic dim's name, or an
    `rt.DimExpr` checked at run time once its generic dims are bound (one
    written `c*name+k` binds name)."""
    v = T.dim_value(d)
    if v is not None:
        return str(v)
    if isinstance(d, T.DimExpr):
        names = DX.generics(d.poly)
        linear = DX.linear(d.poly, next(iter(names))) if len(names) == 1 else None
        solve = (next(iter(names)), *linear) if linear is not None else None
        return f"rt.DimExpr({d.text!r}, {DX.tree(d.poly)!r}, {solve!r})"
    return repr(str(d))


def _written_names(stmts) -> set[str]:
    """Every name a body writes, as a value or in a type (`i` of `Linear[i, o]`)."""
    out: set[str] = set()
    for s in stmts:
        for n in A.walk(s):
            if isinstance(n, (A.Name, A.DimName)):
                out.add(n.name)
    return out


def _sized(fn: FnInfo) -> list[tuple[str, T.TensorT | T.ModelT]]:
    """The values of a fn's arguments that have sizes, as Python reads them:
    tensors (`x`, `t[0]` of a tuple) and model instances (`l`, the model of a
    gradient `g._qv_model` or of an optimizer `opt._qv_cls`)."""
    out: list[tuple[str, T.TensorT | T.ModelT]] = []

    def add(py: str, t: T.Type) -> None:
        if isinstance(t, T.StackT) and isinstance(t.item, T.GradT):
            t = t.item
        if isinstance(t, T.GradT):
            py, t = f"{py}._qv_model", t.of
        elif isinstance(t, T.OptimT):
            py, t = f"{py}._qv_cls", t.of
        if isinstance(t, (T.TensorT, T.ModelT)):
            out.append((py, t))
        elif isinstance(t, T.TupleT):
            for k, item in enumerate(t.items):
                add(f"{py}[{k}]", item)

    for p in fn.params:
        add(py_name(p.name), p.type)
    return out


def _dim_source(fn: FnInfo, g: str) -> str | None:
    """Python reading generic dim `g`'s size from an argument: `x.shape[1]`,
    or `(x.shape[1] - 1) // 2` from a dim written `(2*g+1)`; a model's dim
    from an instance given (`self._qv_dims[0]` in a method of Linear[I, O]),
    models first."""
    sized = sorted(_sized(fn), key=lambda s: not isinstance(s[1], T.ModelT))
    for py, t in sized:
        for i, d in enumerate(t.dims):
            if isinstance(d, T.DimVar) and d.name == g:
                return f"{py}._qv_dims[{i}]" if isinstance(t, T.ModelT) else f"{py}.shape[{_position(t, i)}]"
    for py, t in sized:
        for i, d in enumerate(t.dims):
            linear = DX.linear(d.poly, g) if isinstance(d, T.DimExpr) else None
            if linear is not None:
                c, k = linear
                size = f"{py}._qv_dims[{i}]" if isinstance(t, T.ModelT) else f"{py}.shape[{_position(t, i)}]"
                return f"({size} - {k}) // {c}"
    return None


def _position(t: T.TensorT, i: int) -> int:
    """Dim i of a tensor type as Python indexes its shape: after `[.. ` from the end."""
    return i - t.rank if T.has_rest(t) else i


def compile_program(analysis: Analysis, path: str, fuse_updates: bool = True) -> CompiledModule:
    """Python source for a program that checked without errors. With
    `fuse_updates=False` field updates stay plain assignments (for measuring
    what the fused `rt.field_add` saves)."""
    if analysis.errors:
        raise CompileError(f"{path} has {len(analysis.errors)} error(s); check it with qlint")
    # A flat chain of any length is written without recursion, but the passes
    # that lead to it may recurse along it.
    return deep(lambda: Compiler(analysis, path, fuse_updates).run())
