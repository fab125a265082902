"""What a model family (`rt.GenericModel`) says to a Python caller: its repr
and the messages of a mistake made in Python (docs/runtime.md, "Using a
program from Python")."""

from __future__ import annotations

import difflib

from ._elems import Elem


def family_repr(family) -> str:
    """`<model Linear[I, O, bias: Bool = True, dtype: DType = f32]>`: what it takes, as declared."""
    parts = []
    for n in family._qv_dim_names:
        default = family._qv_dim_defaults.get(n)
        parts.append(n if default is None else f"{n} = {default}")
    for k, v in family._qv_option_defaults.items():
        kind = "Bool" if isinstance(v, bool) else "DType" if isinstance(v, Elem) else "Float"
        parts.append(f"{k}: {kind} = {v.name if isinstance(v, Elem) else v}")
    return f"<model {family._qv_name}[{', '.join(parts)}]>"


def no_option(family, name: str) -> str:
    """An option the family does not take: the closest it does, else all of
    them (dims with defaults included: they are given by name too)."""
    known = list(family._qv_option_defaults)
    dims = [n for n in family._qv_dim_names if n in family._qv_dim_defaults]
    if not known and not dims:
        return f"model {family._qv_name} has no options, found {name}="
    close = difflib.get_close_matches(str(name), known + dims, n=1)
    if close:
        return f"model {family._qv_name} has no option {name!r}; did you mean {close[0]!r}?"
    return f"model {family._qv_name} has no option {name!r} (it takes by name: {', '.join(dims + known)})"


def how_to_make(family) -> str:
    """`model GCN takes dims (FIN, H, C) and options (use_bias, dropout_p): create
    one with GCN[FIN, H, C].init(seed=...) or GCN.of(FIN, H, C, use_bias=...).init(seed=...)`:
    for `GCN.init(...)` and `GCN(...)`, which need the class of an instance."""
    name, dims, options = family._qv_name, ", ".join(family._qv_dim_names), list(family._qv_option_defaults)
    if not options:
        return f"model {name} takes dims ({dims}): create one with {name}[{dims}].init(seed=...)"
    example = ", ".join([*family._qv_dim_names, f"{options[0]}=..."])
    made = f"{name}.of({example}).init(seed=...)"
    if not dims:
        return f"model {name} takes options ({', '.join(options)}): create one with {made}"
    return (
        f"model {name} takes dims ({dims}) and options ({', '.join(options)}): "
        f"create one with {name}[{dims}].init(seed=...) or {made}"
    )


def name_imported(module, qual: str) -> None:
    """Name the models of a loaded module that a program imports as the
    checker names them in the importing file: `nn.Linear[4, 1]`, not
    `Linear[4, 1]` (the module's qualified name, `pkg.lib.Mlp`, as the
    checker writes it after `import pkg.lib` or `from pkg.lib import Mlp`).
    A program's own models keep their bare names, as the checker shows them.
    The loader calls it for each module it loads as an import; a module is one
    Python module for every program that loads it, so once imported its models
    keep the qualified name."""
    from ._model import GenericModel, Model

    space = module.__dict__
    old = space.get("__quiver_qual__")
    if old == qual:
        return
    space["__quiver_qual__"] = qual
    strip = 0 if old is None else len(old) + 1

    def renamed(name: str) -> str:
        return f"{qual}.{name[strip:]}"

    for value in list(space.values()):
        if isinstance(value, GenericModel) and getattr(value._make, "__module__", None) == module.__name__:
            value._qv_name = renamed(value._qv_name)
            value._qv_prefix = f"{qual}."
            for cls in value._classes.values():
                cls._qv_name = renamed(cls._qv_name)
        elif (
            isinstance(value, type)
            and issubclass(value, Model)
            and value.__module__ == module.__name__
            and "_qv_name" in value.__dict__
        ):
            value._qv_file_name = value.__dict__.get("_qv_file_name", value._qv_name)
            value._qv_name = renamed(value._qv_name)


def applied_name(name: str, dims, options: dict, defaults: dict, models=()) -> str:
    """`Linear[784, 128, bias=False]`, `ResNet[BasicBlock, 1]`: a class of a
    family, as messages name it (the models given for its model parameters
    first, each as its family's name)."""
    parts = [m._qv_name for m in models] + [str(d) for d in dims]
    parts += [f"{k}={v}" for k, v in options.items() if defaults.get(k) != v]
    return f"{name}[{', '.join(parts)}]"


def file_name(cls) -> str:
    """The model's name in a file ``save`` writes: without the module an
    import names it with (``Linear[4, 1]``, not ``nn.Linear[4, 1]``), so a
    file reads back whether the module was loaded on its own or imported."""
    return cls.__dict__.get("_qv_file_name", cls._qv_name)
