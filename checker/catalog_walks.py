"""The diagnostics of walks over a model: `named_params(m, seed=...)`,
`modules(m, nn.Linear, seed=...)`, `num_params(m)` and `p.init(...)`, an
initializer applied in place to a param a walk gives (registered in the one
catalog, `catalog_code.CODES`: checker/catalog.py imports this module at its
end, so they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0934 = _code(
    "E0934",
    "not a walk over a model",
    "{callee} walks a model: {reason}",
    """
    `named_params(m, seed=s)`, `modules(m, Kind, seed=s)` and `num_params(m)`
    walk the params and sub-models of a model: their first argument is a
    model (a parameter of the function, or a model made in it), and the
    second argument of `modules` is the kind of sub-model to visit, a model's
    name written without dims (`nn.Linear`, `Block`).
    """,
    """
    fn count(x: [4]) -> Int:
        return num_params(x)
    """,
    """
    model Lin:
        param w: [4 2] = zeros

    fn count(m: Lin) -> Int:
        return num_params(m)
    """,
    variants={
        "not_a_model": "its first argument must be a model, found {found}",
        "not_a_kind": "its second argument is a model's name (the kind of sub-model to visit), found {found}",
    },
)

E0935 = _code(
    "E0935",
    "init of something that is not a walked param",
    "{target}.init(...) initialises a param of a walk in place, and {target} is {what}",
    """
    `p.init(INITIALIZER)` writes new values into a param in place, drawn
    from the generator of the walk that gave it: `p` is the variable of
    `for name, p in named_params(m, seed=s)`, or a param of a sub-model a
    walk gives (`layer.weight` in `for layer in modules(m, nn.Linear,
    seed=s)`). A model's field is set by assigning it (`m.w = zeros([4 2])`),
    and a model is initialised as a whole by `M.init(seed=...)`.
    """,
    """
    model Lin:
        param w: [4 2] = zeros

    fn reset(mut m: Lin):
        m.w.init(normal(0.0, 0.02))
    """,
    """
    model Lin:
        param w: [4 2] = zeros

    fn reset(mut m: Lin):
        for name, p in named_params(m, seed=0):
            p.init(normal(0.0, 0.02))
    """,
    variants={
        "a_field": "a field read through the model, not a param a walk gives",
        "a_value": "a value of this function, not a param a walk gives",
    },
)

E0936 = _code(
    "E0936",
    "invalid initializer in a walk",
    "{target}.init(...): {problem}",
    """
    `p.init(...)` takes one initializer of the table of model fields
    (`zeros`, `ones`, `normal(mean, std)`, `uniform(low, high)`, `xavier`,
    `xavier_uniform(gain=1.0)`, `xavier_normal`, `kaiming_uniform`,
    `kaiming_normal`, `orthogonal`, `trunc_normal`) or a number, every value
    set to it. Its numbers are any Float expressions of the function. The
    initializer must suit the param: the random ones need a float param, and
    those computed from the fans (xavier, kaiming, orthogonal) need at least
    2 dims where the param's rank is known. A param of `named_params` has a
    rank known only at run time (`[..]`): guard such initializers with
    `if ndim(p) >= 2:`, as torch's programs guard with `p.dim() > 1`.
    """,
    """
    dim D = 4

    model Layer:
        param weight: [D D] = zeros
        param bias: [D] = zeros

    fn init_weights(mut m: Layer):
        for layer in modules(m, Layer, seed=0):
            layer.bias.init(xavier_uniform())
    """,
    """
    dim D = 4

    model Layer:
        param weight: [D D] = zeros
        param bias: [D] = zeros

    fn init_weights(mut m: Layer):
        for layer in modules(m, Layer, seed=0):
            layer.weight.init(xavier_uniform())
            layer.bias.init(zeros)
    """,
    variants={
        "not_an_initializer": "{name} is not an initializer{hint}",
        "one_initializer": "init takes one initializer, as in p.init(normal(0.0, 0.02))",
        "needs_2d": "{name} needs at least 2 dims, found {type}",
        "needs_float": "{name} needs a float param, found {type}",
        "arguments": "{name} takes {count} at most",
        "no_keyword": "{name} takes no argument {key}=",
        "twice": "{name} takes {key} once",
        "a_word": "{name}'s {key} is one of {choices}",
        "missing": "{name} takes {count} numbers, as in {example}",
    },
)

E0937 = _code(
    "E0937",
    "invalid tie",
    "cannot tie {name}: {reason}",
    """
    `param head: [V E] = tied(wte)` makes `head` the same tensor as the
    param `wte` declared before it in the model (weight tying, torch's
    `self.lm_head.weight = self.wte.weight`); `param dec: Block = tied(enc)`
    makes two sub-models one. The two must have the same type, dims and
    element type included, and both exist always (not under an option).
    """,
    """
    dim V = 8
    dim E = 4

    model Lm:
        param wte: [V E] = normal(0.0, 0.02)
        param head: [E V] = tied(wte)
    """,
    """
    dim V = 8
    dim E = 4

    model Lm:
        param wte: [V E] = normal(0.0, 0.02)
        param head: [V E] = tied(wte)
    """,
    variants={
        "different_types": "{name} is {type}, and {source} is {source_type}",
        "unknown_source": "{source} is not a param declared before it in this model{hint}",
        "not_a_name": "tied(...) takes the name of one param of this model, as in tied(wte)",
        "a_buffer": "a tie makes one param of two; {what} is a buffer",
        "conditional": "a tied param and its source exist always, and {what} exists only under an option",
    },
)
