"""What a built-in is: its parameters, how a call is read, typed and compiled.

A `Builtin` is data; its typing rule is the function that the family module
declaring it decorates with `registry.builtin(spec, ...)`, so a built-in's
spec and its rule stand together (checker/builtins/<family>.py).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ParamKind(enum.Enum):
    """How a built-in reads one argument."""

    VALUE = "value"  # an expression
    DIM = "dim"  # a dim name or axis position: over=C, over=-1; compiles to the axis the checker resolved
    SHAPE = "shape"  # a shape literal: [64 D] f64; compiles to the sizes
    AXES = "axes"  # a shape literal naming the operand's dims; compiles to their positions
    FN = "fn"  # a function name: value_and_grad's f


class Lowering(enum.Enum):
    """How a call to a built-in becomes Python."""

    # rt.<runtime>(...): value parameters in order (keyword-only ones as
    # name=value), a dim parameter as its axis, extra arguments appended.
    CALL = "call"
    # rt.<runtime>(shape, dtype=..., seed=...): a creation function whose
    # first argument is a shape; its element type becomes dtype=.
    SHAPE = "shape"
    # rt.<runtime>(shape, n, seed=...): the same for a shape of Index[n].
    SHAPE_INDEX = "shape-index"
    # rt.<runtime>(_src, line, col, values..., sizes, elem spec, name=value):
    # a reader of a file, checked against its shape where the call is.
    READER = "reader"
    # rt.<runtime>(f, ...): a gradient form whose function is passed on
    # (value_and_grad, grad, jvp: wrt=, batch=, the aux outputs).
    GRADIENT = "gradient"
    # rt.<runtime>(_src, ...): a checkpoint, read or written against the model.
    CHECKPOINT = "checkpoint"
    # A call as CALL, but a step with named values (`log(step, loss=l)`) is
    # rt.log_metrics(step, {name: value}, _src).
    METRICS = "metrics"
    # rt.<runtime>(values..., name=value, src=_src, line=.., col=..): load_weights
    # and load_tokenizer; a dtype= written as an element type's name is its Str.
    WEIGHTS = "weights"


@dataclass(frozen=True)
class BParam:
    name: str
    kind: ParamKind = ParamKind.VALUE
    required: bool = True
    keyword_only: bool = False


@dataclass(frozen=True, kw_only=True)
class Builtin:
    name: str
    params: tuple[BParam, ...]
    signature: str  # shown by hover, completion and signature help (" / " separates overloads)
    doc: str  # one line, markdown
    example: str  # a statement using it; checked clean by the tests in a body with x: [b D], y, m, mode
    group: str  # the table of docs/language.md it is listed in
    runtime: str | None  # the rt function it compiles to; None: Python's own function of that name
    rule: str = ""  # its typing rule: a key of registry.RULES (registry.builtin sets it)
    lowering: Lowering = Lowering.CALL
    refine: str | None = None  # for the elementwise rule: "nonneg" or "prob"
    ints: bool = False  # for the elementwise rule: integer tensors are accepted too
    variadic: bool = False  # extra positional arguments allowed (print, value_and_grad)
    # name=value arguments besides its parameters, compiled as one dict after
    # the others (rearrange's sizes: p1=16 is {"p1": 16})
    extra_keywords: bool = False
    note: str = ""  # more for the docs table (links to diagnostics)
    # The rt function a call compiles to when its argument is a plain number
    # (known statically): sqrt(32.0) is rt.sqrt_of_number(32.0), a Python float.
    number_runtime: str | None = None
    # Facts the engine, the lints and the compiler read (once side tables):
    rest_ok: bool = False  # accepts an operand written with a rest of dims, [.. d]
    role: str | None = None  # "prob" / "logprob" (makes probabilities), "loss" (a loss)
    target_param: str | None = None  # a loss's parameter that takes the labels or targets
    symmetric: bool = False  # its two tensor arguments may be swapped (lints: swapped arguments)
    # Parameters that take a dim as a value (arange(n), one_hot(y, over=C)):
    # dim arithmetic there compiles to the dim's size.
    dim_args: tuple[str, ...] = ()
    # The rt function a call compiles to when it is about gradients:
    # zeros(Grad[M]), randn(Grad[M], seed=s) (the result a Grad), mean/sum
    # over the examples of per-example gradients ([b] Grad[M]).
    grad_runtime: str | None = None

    @property
    def overloads(self) -> list[str]:
        """The signatures " / " separates, a `/` inside parentheses (a default
        such as `1.0 / 3`) left alone."""
        out, depth, start = [], 0, 0
        sig = self.signature
        for i, ch in enumerate(sig):
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if depth == 0 and sig.startswith(" / ", i):
                out.append(sig[start:i])
                start = i + 3
        out.append(sig[start:])
        return out


X = BParam("x")
OVER = BParam("over", ParamKind.DIM, True, True)
OVER_OPT = BParam("over", ParamKind.DIM, False, True)
SEED = BParam("seed", keyword_only=True)
KEEP = BParam("keep", required=False, keyword_only=True)  # keep=True: the reduced dim stays, of size 1
EPS = BParam("eps", required=False, keyword_only=True)  # layer_norm, rms_norm: added to the variance
SHAPE = BParam("shape", ParamKind.SHAPE)
PATH = BParam("path")
