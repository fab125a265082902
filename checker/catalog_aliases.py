"""The diagnostics of type aliases (`type Gcn = GCN[FIN, H, C, use_bias=False]`)
and of functions generic over a model's options (`m: Transformer[E,
flash=fl]`), registered in the one catalog (`catalog_code.CODES`):
checker/catalog.py imports this module at its end."""

from __future__ import annotations

from .catalog_code import _code

E0925 = _code(
    "E0925",
    "type alias given the wrong dims",
    "type alias {name} {problem}",
    """
    A type alias (`type Gcn = GCN[FIN, H, C, use_bias=False]`) names a type
    once, to be written by its name wherever a type is. An alias that takes
    dims (`type Lin[i, o] = Linear[i, o, bias=False]`) is given exactly those
    dims where it is used (`Lin[D, H]`), by position; one that takes none is
    written alone. Its options were chosen where it is declared: to choose
    others, declare another alias or write the model's type.
    """,
    """
    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias

    type Lin[i, o] = Linear[i, o, bias=False]

    fn f(l: Lin[4]) -> [4]:
        return zeros([4])
    """,
    """
    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias

    type Lin[i, o] = Linear[i, o, bias=False]

    fn f(l: Lin[4, 4]) -> [4]:
        return zeros([4])
    """,
    variants={
        "dims_count": "takes {wanted}, found {count}",
        "takes_no_dims": "takes no dims, found {name}[...]",
        "no_options": "takes no options (they were chosen where it is declared), found {option}=",
        "param_twice": "names its dim {dim} twice",
        "type_for_dim": "takes dims (a name, a number or (dim arithmetic)), found the type {type}",
    },
)

E0926 = _code(
    "E0926",
    "type alias defined through itself",
    "type alias {name} is defined through itself ({cycle})",
    """
    A type alias stands for the type it names, which may name other aliases;
    an alias that names itself, directly or through others, stands for no
    type. Name a model or a tensor type somewhere along the chain.
    """,
    """
    type A = B
    type B = A
    """,
    """
    dim D = 4

    type A = B
    type B = [D] f32
    """,
)

E0927 = _code(
    "E0927",
    "option of a generic fn bound by no model parameter",
    "option value '{name}' is bound by no parameter of the fn's model type",
    """
    A function may be generic over a model's Bool and Float options as it is
    over dims: `fn loss(m: Transformer[E, flash=fl], ...)` binds `fl` to the
    option of the model given at each call, and in the body `fl` is a value
    (`if fl:` reads the members that exist only with that option). Its value
    comes from the model itself at run time, so a parameter whose type is
    that model must bind it; a gradient, an optimizer or the return type
    alone cannot.
    """,
    """
    dim D = 4

    model Net[I, flash: Bool = False]:
        param w: [I] = zeros

    fn f(g: Grad[Net[D, flash=fl]]) -> [D]:
        return g.w
    """,
    """
    dim D = 4

    model Net[I, flash: Bool = False]:
        param w: [I] = zeros

    fn f(m: Net[D, flash=fl], g: Grad[Net[D, flash=fl]]) -> [D]:
        return g.w
    """,
)
