"""The initializers of model fields (`param w: [D H] = kaiming_uniform(a=sqrt(5.0))`):
the one table that the checker (checker/model_decl.py), the compiler
(checker/compiler.py), hover, completion, the TextMate grammar's list and the
docs table of docs/language.md ("Models") read. checker/builtins re-exports
it; it lives here, beside optim_tables.py, because the declarations read it
and the built-ins' package imports the body checker, which imports them.

An initializer is not a function of a body: it says what `M.init(seed=...)`
puts in a field. Each parameter is a number (an expression of numbers and
dims) or one of a few words; a field's shape decides the fans (runtime/init.py,
torch's rules).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ast as A

_NONLINEARITIES = ("linear", "relu", "leaky_relu", "tanh", "sigmoid", "selu", "conv2d")


@dataclass(frozen=True, kw_only=True)
class InitParam:
    name: str
    default: object = None  # None: required
    words: tuple[str, ...] = ()  # the words it may be; () for a number


@dataclass(frozen=True, kw_only=True)
class Initializer:
    name: str
    params: tuple[InitParam, ...] = ()
    signature: str  # shown by hover and completion
    doc: str  # one line, markdown
    example: str  # as written in a field: what E0903 suggests
    needs_2d: bool = False  # its fans need at least 2 dims
    floats: bool = True  # only for float fields (zeros and ones suit any)


def _gain(name: str, doc: str) -> Initializer:
    return Initializer(
        name=name,
        params=(InitParam(name="gain", default=1.0),),
        signature=f"{name}(gain=1.0)",
        doc=doc,
        example=f"{name}(gain=1.0)",
        needs_2d=True,
    )


def _kaiming(name: str, doc: str) -> Initializer:
    return Initializer(
        name=name,
        params=(
            InitParam(name="a", default=0.0),
            InitParam(name="mode", default="fan_in", words=("fan_in", "fan_out")),
            InitParam(name="nonlinearity", default="leaky_relu", words=_NONLINEARITIES),
        ),
        signature=f'{name}(a=0.0, mode="fan_in", nonlinearity="leaky_relu")',
        doc=doc,
        example=f"{name}(a=sqrt(5.0))",
        needs_2d=True,
    )


_TABLE = (
    Initializer(name="zeros", signature="zeros", doc="Every value 0.", example="zeros", floats=False),
    Initializer(name="ones", signature="ones", doc="Every value 1.", example="ones", floats=False),
    Initializer(
        name="normal",
        params=(InitParam(name="mean"), InitParam(name="std"), InitParam(name="padding_idx", default=-1)),
        signature="normal(mean, std, padding_idx=-1)",
        doc="Independent normal draws; float fields only. With `padding_idx=i` (0 <= i < the first dim) row i "
        "is then zeros, as torch's `nn.Embedding(padding_idx=i)` starts.",
        example="normal(0.0, 0.02)",
    ),
    Initializer(
        name="uniform",
        params=(InitParam(name="low"), InitParam(name="high")),
        signature="uniform(low, high)",
        doc="Independent uniform draws in [low, high); float fields only.",
        example="uniform(-0.1, 0.1)",
    ),
    Initializer(
        name="xavier",
        signature="xavier",
        doc="Glorot uniform: bound `sqrt(6 / (fan_in + fan_out))`, as xavier_uniform(gain=1.0).",
        example="xavier",
        needs_2d=True,
    ),
    _gain(
        "xavier_uniform", "Glorot uniform: bound `gain * sqrt(6 / (fan_in + fan_out))`, as torch's `xavier_uniform_`."
    ),
    _gain("xavier_normal", "Glorot normal: std `gain * sqrt(2 / (fan_in + fan_out))`, as torch's `xavier_normal_`."),
    _kaiming(
        "kaiming_uniform",
        "He uniform: std `gain(nonlinearity, a) / sqrt(fan)`, as torch's `kaiming_uniform_`; `mode` is "
        '`"fan_in"` or `"fan_out"`. `a=sqrt(5.0)` is what torch\'s layers use for their weights.',
    ),
    _kaiming(
        "kaiming_normal",
        "He normal: std `gain(nonlinearity, a) / sqrt(fan)`, as torch's `kaiming_normal_`; `mode` is "
        '`"fan_in"` or `"fan_out"`.',
    ),
    _gain(
        "orthogonal", "A (semi-)orthogonal matrix times `gain`, the trailing dims flattened (torch's `orthogonal_`)."
    ),
    Initializer(
        name="trunc_normal",
        params=(
            InitParam(name="mean", default=0.0),
            InitParam(name="std", default=1.0),
            InitParam(name="a", default=-2.0),
            InitParam(name="b", default=2.0),
        ),
        signature="trunc_normal(mean=0.0, std=1.0, a=-2.0, b=2.0)",
        doc="Normal draws kept inside [a, b] (torch's `trunc_normal_`).",
        example="trunc_normal(0.0, 0.02)",
    ),
)

# name -> initializer, in the order of the docs table
INITIALIZERS: dict[str, Initializer] = {i.name: i for i in _TABLE}


def docs_table() -> str:
    """The table of docs/language.md ("Models"): a number, then each initializer."""
    rows = [
        "| Initializer | Meaning |",
        "| --- | --- |",
        "| a number, such as `0`, `1.0`, `-0.5`, `True` | every value set to it (a Float only for float fields, "
        "`True`/`False` only for Bool fields) |",
    ]
    rows += [f"| `{i.signature}` | {i.doc} |" for i in INITIALIZERS.values()]
    return "\n".join(rows) + "\n"


def initializer_name(init: A.Expr | None) -> A.Name | None:
    """The name an initializer is written with (`kaiming_uniform` of
    `kaiming_uniform(a=sqrt(5.0))`, `zeros`); None for a number or anything else."""
    if isinstance(init, A.Call) and isinstance(init.func, A.Name):
        return init.func
    return init if isinstance(init, A.Name) else None
