"""The diagnostics of parameter defaults, `main`'s command-line parameters,
constants and f-strings (registered in the one catalog, `catalog_code.CODES`:
checker/catalog.py imports this module at its end, so they come after its
own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0013 = _code(
    "E0013",
    "malformed f-string",
    "f-string: {problem}",
    """
    An f-string (`f"loss {l:.4f}"`) holds text and fields in braces. A field
    is an expression, optionally followed by `!t` (the value's type) and by
    `:` and a format spec of Python's mini-language (`.4f`, `>8`, `,d`,
    `.2e`). A brace that is not part of a field is written twice (`{{`,
    `}}`). Inside the braces, use the other kind of quote than the string's.
    """,
    """
    fn main():
        loss = 0.25
        print(f"loss {loss:.4q}")
    """,
    """
    fn main():
        loss = 0.25
        print(f"loss {loss:.4f}")
    """,
)

E0118 = _code(
    "E0118",
    "invalid constant",
    "constant '{name}': {problem}",
    """
    A constant (`const LR = 3e-4`, `const STEPS: Int = 100`) is an Int, a
    Float, a Bool or a Str, known when the file is checked: its value is a
    literal, the name of another constant or of a dim, or arithmetic of those
    (`+ - * / % **`, `and`, `or`, `not`). A written type must be the value's
    (an Int value may be written Float). A function's result or a tensor is
    not a constant: compute it in `main`.
    """,
    """
    const STEPS: Int = 2.5
    """,
    """
    const STEPS: Int = 3
    """,
    variants={
        "not_a_constant_type": "a constant is an Int, Float, Bool or Str, not {type}",
        "written_another_kind": "it is written {written}, and its value is {kind} {value}",
        "defined_by_itself": "'{name}' is defined by itself",
        "defined_through_itself": "it is defined through itself ({chain})",
    },
)

E0312 = _code(
    "E0312",
    "format spec does not fit the value",
    "'{spec}' cannot format {type}: {reason}",
    """
    The format spec of an f-string field (after the `:`) must fit the
    field's value, as Python's `format` would take it: `d`, `x`, `b`, `o`
    and `c` are for an Int, `e`, `f`, `g` and `%` for a number, `s` for a Str.
    A `[]` tensor formats as its number; a tensor with dims takes no spec
    (print it as it is, or its type with `!t`).
    """,
    """
    fn main():
        x = zeros([4 8])
        print(f"{x:.4f}")
    """,
    """
    fn main():
        x = zeros([4 8])
        print(f"{mean(x):.4f} {x!t}")
    """,
)

E0416 = _code(
    "E0416",
    "default of the wrong type",
    "the default of '{name}' is {found}, and '{name}' is {expected}",
    """
    A parameter's default (`lr: Float = 3e-4`) must be a value of the
    parameter's type, as an argument would have to be: an Int default fits
    an Int or a Float parameter.
    """,
    """
    fn scale(x: Float, times: Int = 0.5) -> Float:
        return x * times
    """,
    """
    fn scale(x: Float, times: Float = 0.5) -> Float:
        return x * times
    """,
)

E0417 = _code(
    "E0417",
    "invalid default",
    "parameter '{name}': {problem}",
    """
    A default is a constant: a literal, a constant's or dim's name, or
    arithmetic of those, for an Int, Float, Bool or Str parameter. Parameters
    with defaults come after those without, so that a call can leave them
    out; a call gives them by position or by name (`train(lr=0.1)`).
    """,
    """
    fn scale(x: Float = 1.0, times: Float) -> Float:
        return x * times
    """,
    """
    fn scale(times: Float, x: Float = 1.0) -> Float:
        return x * times
    """,
    variants={
        "after_a_default": (
            "it has no default and '{before}' before it has one: "
            "give it a default, or move it before the parameters that have one"
        ),
        "not_a_constant_type": "only an Int, Float, Bool or Str parameter has a default, and it is {type}",
    },
)

W0403 = _code(
    "W0403",
    "main cannot take this parameter from the command line",
    "main cannot take '{name}: {type}' from the command line: `quiver run` passes only Int, Float, Bool and Str",
    """
    `quiver run FILE --name value` passes the parameters of `main` from the
    command line, and a command line holds numbers, flags and text: an Int,
    a Float, a Bool or a Str. A main with another kind of parameter can be
    called from other code but not run; read a tensor from a file inside
    main instead (`load_npy(path)` with a Str parameter `path`).
    """,
    """
    fn main(x: [4]):
        print(x)
    """,
    """
    fn main(scale: Float = 1.0):
        print(ones([4]) * scale)
    """,
    warning=True,
)
