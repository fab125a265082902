"""The diagnostics of computed and non-persistent buffers (`buffer inv_freq:
[(D/2)] = 1.0 / theta ** ...`, `, persistent=False`), registered in the one
catalog, `catalog_code.CODES`: checker/catalog.py imports this module at its
end, so they come after its own codes."""

from __future__ import annotations

from .catalog_code import _code

E0928 = _code(
    "E0928",
    "computed buffer has another type",
    "buffer {name} is declared {expected}, but its initializer computes {found}",
    """
    A buffer's initializer may be an expression of the model's dims, options
    and constants (`tril(ones([T T] Bool))`, `1.0 / theta ** (...)`),
    computed once by `init`. Its type must be the buffer's declared type:
    the same dims and the same element type. Cast the element type (`x as
    f64`), or fix the declared type.
    """,
    """
    model Causal[T]:
        buffer mask: [T T] = tril(ones([T T] Bool))
    """,
    """
    model Causal[T]:
        buffer mask: [T T] Bool = tril(ones([T T] Bool))
    """,
)

E0929 = _code(
    "E0929",
    "invalid member keyword",
    "{problem}",
    """
    A buffer may be followed by `, persistent=False` (after its
    initializer), as torch's `register_buffer(name, t, persistent=False)`:
    it is left out of `save`, checkpoints and `state_dict`, and `init` and
    `load` compute it again. So it needs an initializer. `persistent=` takes
    `True` or `False`; it is the only keyword a member takes, and a param is
    always saved.
    """,
    """
    model Causal[T]:
        buffer mask: [T T] Bool, persistent=False
    """,
    """
    model Causal[T]:
        buffer mask: [T T] Bool = tril(ones([T T] Bool)), persistent=False
    """,
    variants={
        "needs_init": "buffer {name} is persistent=False, so init and load compute it: it needs an initializer",
        "param": "param {name} cannot be persistent=False: params are always saved (use a buffer)",
        "unknown": "a member takes no keyword {key}= (the one keyword is persistent=)",
        "twice": "{key}= is given twice",
        "not_bool": "persistent= takes True or False, found {found}",
    },
)

E0930 = _code(
    "E0930",
    "computed buffer reads the model",
    "buffer {name}'s initializer cannot read {what}: it is computed by init from the model's dims and options",
    """
    A buffer's initializer is computed once, by `init`, before the model
    exists: it may use the model's dims, its Bool and Float options,
    constants and built-in functions, but not `self` (its params, buffers or
    methods). Compute a value that depends on the params in a method.
    """,
    """
    model Scaled[D]:
        param w: [D] = ones
        buffer w0: [D] = self.w * 2.0
    """,
    """
    model Scaled[D]:
        param w: [D] = ones
        buffer w0: [D] = ones([D]) * 2.0
    """,
)
