"""The built-in functions: one declarative spec per built-in.

A `Builtin` holds everything the tools know about one built-in: its parameters
(how each argument is read, which are keyword-only or optional), the
signature and one-line doc that hover, completion and signature help show, an
example, the typing rule that checks a call (by name, in
checker/body/builtin_rules.py; shared by built-ins of one family), the
refinement an elementwise rule gives its result, and how a call compiles: the
`rt` function it becomes and how its arguments map to that function.

From this table come: argument matching, hover, completion and signature help
(checker/), the compiled call (checker/compiler.py), the built-in tables of
docs/language.md and the TextMate grammar's list of built-ins
(`scripts/gen-builtins` writes both; tests check they are in sync), and the
tests that every spec has a typing rule and a runtime function that `rt`
exports. Adding a built-in: its spec here, its rule (often an existing one),
its runtime op in runtime/_ops.py (listed in its __all__, which rt
re-exports), its tests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .types import GROUP_OVERRIDABLE as T_OVERRIDABLE
from .types import GROUPED_OPTIMIZERS as T_GROUPED
from .types import OPTIMIZERS as T_OPTIMIZERS
from .types import SCHEDULES as T_SCHEDULES


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


@dataclass(frozen=True)
class BParam:
    name: str
    kind: ParamKind = ParamKind.VALUE
    required: bool = True
    keyword_only: bool = False


@dataclass(frozen=True)
class Builtin:
    name: str
    params: tuple[BParam, ...]
    signature: str  # shown by hover, completion and signature help (" / " separates overloads)
    doc: str  # one line, markdown
    example: str  # a statement using it; checked clean by the tests in a body with x: [b D], y, m, mode
    group: str  # the table of docs/language.md it is listed in
    rule: str  # its typing rule: a key of checker/body/builtin_rules.RULES
    runtime: str | None  # the rt function it compiles to; None: Python's own function of that name
    lowering: Lowering = Lowering.CALL
    refine: str | None = None  # for the elementwise rule: "nonneg" or "prob"
    ints: bool = False  # for the elementwise rule: integer tensors are accepted too
    variadic: bool = False  # extra positional arguments allowed (print, value_and_grad)
    note: str = ""  # more for the docs table (links to diagnostics)
    # The rt function a call compiles to when its argument is a plain number
    # (known statically): sqrt(32.0) is rt.sqrt_of_number(32.0), a Python float.
    number_runtime: str | None = None

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

# The docs tables, in order: group key -> heading.
GROUPS = {
    "elementwise": "Elementwise",
    "along": "Along a dim",
    "losses": "Losses",
    "tensor": "Other tensor functions",
    "shape": "Shape operations",
    "conv": "Convolutions and pools",
    "layers": "Layer operations",
    "create": "Creating tensors",
    "data": "Reading data",
    "other": "Other built-ins",
}


def _elementwise(
    name: str, result: str, doc: str, refine: str | None = None, ints: bool = False, runtime: str | None = None
) -> Builtin:
    arg = "[..]" if ints else "[..] Float"
    return Builtin(
        name,
        (X,),
        f"{name}(x: {arg}) -> [..] {result}",
        doc,
        f"h = {name}(x)",
        "elementwise",
        "elementwise",
        runtime or name,
        refine=refine,
        ints=ints,
    )


def _math(name: str, result: str, doc: str, refine: str | None = None) -> Builtin:
    """An elementwise function that also takes a plain number (sqrt(32.0) is a Float)."""
    b = _elementwise(name, result, doc, refine)
    number = f"{name}(x: Float) -> Float"
    rule = "elementwise_or_number"
    return Builtin(
        name,
        b.params,
        f"{b.signature} / {number}",
        doc,
        b.example,
        b.group,
        rule,
        name,
        refine=refine,
        number_runtime=f"{name}_of_number",
    )


_BUILTINS = [
    _elementwise("relu", "NonNeg", "max(x, 0), elementwise.", "nonneg"),
    _elementwise("tanh", "Float", "Hyperbolic tangent, elementwise."),
    _elementwise("sigmoid", "Prob", "1 / (1 + exp(-x)), elementwise.", "prob"),
    _math("exp", "NonNeg", "e to the power x, elementwise; of a number, a number.", "nonneg"),
    # log(x): the logarithm; log(step, loss=l, ...): metrics (checker/body/metrics_rules.py)
    Builtin(
        "log",
        (X,),
        "log(x: [..] Float) -> [..] Float / log(x: Float) -> Float / log(step: Int, name=value, ...)",
        "Natural logarithm, elementwise; of a number, a number. With names, `log(step, loss=l)` records "
        "metrics: see [Logging metrics](#logging-metrics).",
        "h = log(x)",
        "elementwise",
        "log",
        "log",
        number_runtime="log_of_number",
    ),
    _elementwise("log1p", "Float", "log(1 + x), elementwise; accurate for x near 0."),
    _elementwise("softplus", "NonNeg", "log(1 + exp(x)), elementwise: a smooth relu.", "nonneg"),
    _math("sqrt", "NonNeg", "Square root, elementwise; of a number, a number: sqrt(32.0) is a Float.", "nonneg"),
    _elementwise("gelu", "Float", "x * Phi(x) (Phi the standard normal CDF), elementwise: the exact GELU."),
    _elementwise("silu", "Float", "x * sigmoid(x), elementwise (also called swish)."),
    Builtin(
        "leaky_relu",
        (X, BParam("negative_slope", required=False)),
        "leaky_relu(x: [..] Float, negative_slope=0.01) -> [..] Float",
        "x where x >= 0, negative_slope * x elsewhere, elementwise (torch's leaky_relu).",
        "h = leaky_relu(x, 0.2)",
        "elementwise",
        "activation",
        "leaky_relu",
        note="Not NonNeg: negative for negative x ([E0304](diagnostics.md#e0304)).",
    ),
    Builtin(
        "elu",
        (X, BParam("alpha", required=False)),
        "elu(x: [..] Float, alpha=1.0) -> [..] Float",
        "x where x > 0, alpha * (exp(x) - 1) elsewhere, elementwise (torch's elu).",
        "h = elu(x)",
        "elementwise",
        "activation",
        "elu",
    ),
    _math("sin", "Float", "Sine (radians), elementwise; of a number, a number."),
    _math("cos", "Float", "Cosine (radians), elementwise; of a number, a number."),
    _elementwise(
        "abs", "NonNeg", "Absolute value, elementwise; on integer tensors, an integer tensor.", "nonneg", ints=True
    ),
    Builtin(
        "clamp",
        (X, BParam("min", required=False, keyword_only=True), BParam("max", required=False, keyword_only=True)),
        "clamp(x: [..], min=a, max=b) -> [..]",
        "x limited to [a, b], elementwise; min= or max= may be left out, not both.",
        "h = clamp(x, min=0.0, max=1.0)",
        "elementwise",
        "clamp",
        "clamp",
        note="A literal min >= 0 gives NonNeg, and with a literal max <= 1 Prob; a literal min above a literal max "
        "is an error ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        "maximum",
        (BParam("a"), BParam("b")),
        "maximum(a: [..], b: [..]) -> [..]",
        "The larger of a and b, elementwise; they broadcast as in a + b, and one may be a number.",
        "h = maximum(x, 0.5 * x)",
        "elementwise",
        "maximum",
        "maximum",
    ),
    Builtin(
        "minimum",
        (BParam("a"), BParam("b")),
        "minimum(a: [..], b: [..]) -> [..]",
        "The smaller of a and b, elementwise; they broadcast as in a + b, and one may be a number.",
        "h = minimum(x, 1.0)",
        "elementwise",
        "maximum",
        "minimum",
    ),
    Builtin(
        "softmax",
        (X, OVER),
        "softmax(x: [..] Float, over=d) -> [..] Prob",
        "Normalised exponentials along dim d; each slice sums to 1.",
        "p = softmax(x, over=D)",
        "along",
        "softmax",
        "softmax",
        refine="prob",
    ),
    Builtin(
        "log_softmax",
        (X, OVER),
        "log_softmax(x: [..] Float, over=d) -> [..] Float",
        "log(softmax(x, over=d)), computed stably.",
        "lp = log_softmax(x, over=D)",
        "along",
        "softmax",
        "log_softmax",
    ),
    Builtin(
        "linear",
        (X, BParam("weight"), BParam("bias", required=False)),
        "linear(x: [.. I] Float, weight: [I O], bias: [O]) -> [.. O]",
        "x @ weight + bias in one kernel (torch's F.linear with the weight kept as x @ weight reads it, as "
        "nn.Linear keeps it); bias is optional.",
        "h = linear(x, ones([D 3]), zeros([3]))",
        "layers",
        "linear",
        "linear",
        note="The inner dims differ: [E0203](diagnostics.md#e0203).",
    ),
    Builtin(
        "layer_norm",
        (
            X,
            OVER,
            EPS,
            BParam("weight", required=False, keyword_only=True),
            BParam("bias", required=False, keyword_only=True),
        ),
        "layer_norm(x: [..] Float, over=d, eps=1e-5, weight=w, bias=b) -> [..] Float",
        "(x - mean) / sqrt(variance + eps) along dim d (biased variance, as torch's layer_norm, eps 1e-5 unless "
        "given), then * weight + bias, both [d] and optional (applied in the same kernel, as torch's).",
        "h = layer_norm(x, over=D)",
        "along",
        "normalize",
        "layer_norm",
    ),
    Builtin(
        "rms_norm",
        (X, OVER, EPS),
        "rms_norm(x: [..] Float, over=d, eps=e) -> [..] Float",
        "x / sqrt(mean(x * x) + eps) along dim d, eps the element type's machine epsilon unless given (as torch's "
        "rms_norm with eps=None); no weights.",
        "h = rms_norm(x, over=-1)",
        "along",
        "normalize",
        "rms_norm",
    ),
    Builtin(
        "sum",
        (X, OVER_OPT, KEEP),
        "sum(x: [..], over=d, keep=False) -> [..]",
        "Sum along dim d, or dims over=(d1, d2) (the result loses them; with keep=True each becomes 1), or of every "
        "value when over= is left out.",
        "s = sum(x, over=D)",
        "along",
        "reduce",
        "sum",
    ),
    Builtin(
        "mean",
        (X, OVER_OPT, KEEP),
        "mean(x: [..] Float, over=d, keep=False) -> [..]",
        "Mean along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of every value.",
        "s = mean(x)",
        "along",
        "reduce",
        "mean",
    ),
    Builtin(
        "max",
        (X, OVER_OPT, KEEP),
        "max(x: [..], over=d, keep=False) -> [..]",
        "Largest value along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of "
        "every value.",
        "s = max(x, over=D)",
        "along",
        "reduce",
        "max",
    ),
    Builtin(
        "min",
        (X, OVER_OPT, KEEP),
        "min(x: [..], over=d, keep=False) -> [..]",
        "Smallest value along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of "
        "every value.",
        "s = min(x)",
        "along",
        "reduce",
        "min",
    ),
    Builtin(
        "argmax",
        (X, OVER, KEEP),
        "argmax(x: [..], over=d, keep=False) -> [..] Index[d]",
        "Position of the largest value along dim d: an Index into d (with keep=True, d becomes 1).",
        "i = argmax(x, over=D)",
        "along",
        "argmax",
        "argmax",
    ),
    *(
        Builtin(
            name,
            (X, OVER_OPT, BParam("correction", required=False, keyword_only=True), KEEP),
            f"{name}(x: [..] Float, over=d, correction=1, keep=False) -> [..] NonNeg",
            f"{what} along dim d or dims (d1, d2), or of every value; correction=1 (torch's default) divides the "
            "squares by n-1, correction=0 by n.",
            f"s = {name}(x, over=D)",
            "along",
            "spread",
            name,
        )
        for name, what in (("std", "Standard deviation"), ("var", "Variance"))
    ),
    Builtin(
        "logsumexp",
        (X, OVER, KEEP),
        "logsumexp(x: [..] Float, over=d, keep=False) -> [..] Float",
        "log(sum(exp(x))) along dim d or dims (d1, d2), computed stably (torch's logsumexp).",
        "s = logsumexp(x, over=D)",
        "along",
        "logsumexp",
        "logsumexp",
    ),
    Builtin(
        "topk",
        (X, BParam("k"), OVER, BParam("largest", required=False, keyword_only=True)),
        "topk(x: [.. D ..], k, over=D, largest=True) -> ([.. k ..], [.. k ..] Index[D])",
        "The k largest values along D, largest first (the smallest, smallest first, with largest=False), and their "
        "positions as labels of D; k is an integer literal or a dim, and becomes the new dim.",
        "v, i = topk(x, 2, over=D)",
        "along",
        "topk",
        "topk",
        note="k is at most D's size ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        "sort",
        (X, OVER, BParam("descending", required=False, keyword_only=True)),
        "sort(x: [.. D ..], over=D, descending=False) -> ([.. D ..], [.. D ..] Index[D])",
        "The values along D in ascending order (descending with descending=True) and the positions they came "
        "from, as labels of D.",
        "v, i = sort(x, over=D)",
        "along",
        "sort",
        "sort",
    ),
    Builtin(
        "cross_entropy",
        (
            BParam("logits"),
            BParam("labels"),
            OVER,
            BParam("ignore_index", required=False, keyword_only=True),
            BParam("reduction", required=False, keyword_only=True),
            BParam("label_smoothing", required=False, keyword_only=True),
        ),
        'cross_entropy(logits: [.. C ..] Float, labels: [..] Index[C], over=C, ignore_index=k, reduction="mean", '
        "label_smoothing=0.0) -> [] NonNeg",
        'Mean cross-entropy of the labels under softmax(logits, over=C) (reduction="sum": the sum; "none": '
        "one per label, of the labels' shape); ignore_index=k leaves out the labels equal to k, label_smoothing=e "
        "mixes e of the uniform distribution into the targets.",
        "l = cross_entropy(x @ m.w, y, over=C)",
        "losses",
        "cross_entropy",
        "cross_entropy",
        note="The labels have the logits' shape without C ([E0201](diagnostics.md#e0201)) and index C "
        "([E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        "nll",
        (
            BParam("logp"),
            BParam("labels"),
            OVER,
            BParam("ignore_index", required=False, keyword_only=True),
            BParam("reduction", required=False, keyword_only=True),
        ),
        'nll(logp: [.. C ..] Float, labels: [..] Index[C], over=C, ignore_index=k, reduction="mean") -> [] NonNeg',
        "Mean negative log-likelihood of the labels under log-probabilities logp (as log_softmax gives), along C; "
        "ignore_index= and reduction= as for cross_entropy.",
        "l = nll(log_softmax(x @ m.w, over=C), y, over=C)",
        "losses",
        "cross_entropy",
        "nll",
        note="The labels have logp's shape without C ([E0201](diagnostics.md#e0201)) and index C "
        "([E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        "binary_cross_entropy_with_logits",
        (BParam("z"), BParam("y")),
        "binary_cross_entropy_with_logits(z: [..] Float, y: [..] Float) -> [] NonNeg",
        "Mean binary cross-entropy of targets y (in [0, 1]) under sigmoid(z), computed stably from the logits z.",
        "l = binary_cross_entropy_with_logits(x, sigmoid(x))",
        "losses",
        "same_shape_loss",
        "binary_cross_entropy_with_logits",
        note="z and y have one shape ([E0201](diagnostics.md#e0201)) and element type.",
    ),
    Builtin(
        "kl_div",
        (BParam("logp"), BParam("q")),
        "kl_div(logp: [..] Float, q: [..] Float) -> [] NonNeg",
        "KL(q || p) of probabilities q from log-probabilities logp: the sum of q * (log(q) - logp) over every "
        "value, divided by the first dim's size when there are two dims or more (torch's batchmean).",
        "l = kl_div(log_softmax(x, over=D), softmax(x, over=D))",
        "losses",
        "same_shape_loss",
        "kl_div",
        note="logp and q have one shape ([E0201](diagnostics.md#e0201)) and element type.",
    ),
    Builtin(
        "binary_cross_entropy",
        (BParam("p"), BParam("y"), BParam("reduction", required=False, keyword_only=True)),
        'binary_cross_entropy(p: [..] Prob, y: [..] Float, reduction="mean") -> [] NonNeg',
        "Mean binary cross-entropy of targets y under probabilities p, each log clamped at -100 as torch's "
        "binary_cross_entropy does.",
        "l = binary_cross_entropy(sigmoid(x), sigmoid(x * 2.0))",
        "losses",
        "binary_cross_entropy",
        "binary_cross_entropy",
        note="p is known to be in [0, 1], a Prob as sigmoid gives ([E0304](diagnostics.md#e0304)); y has its shape "
        "([E0201](diagnostics.md#e0201)).",
    ),
    Builtin(
        "smooth_l1",
        (
            BParam("input"),
            BParam("target"),
            BParam("beta", required=False, keyword_only=True),
            BParam("reduction", required=False, keyword_only=True),
        ),
        'smooth_l1(input: [..] Float, target: [..] Float, beta=1.0, reduction="mean") -> [] NonNeg',
        "Mean of 0.5 * d * d / beta where abs(d) < beta and abs(d) - 0.5 * beta elsewhere, d = input - target "
        "(torch's smooth_l1_loss; beta >= 0).",
        "l = smooth_l1(x, x * 2.0)",
        "losses",
        "robust_loss",
        "smooth_l1",
    ),
    Builtin(
        "huber",
        (
            BParam("input"),
            BParam("target"),
            BParam("delta", required=False, keyword_only=True),
            BParam("reduction", required=False, keyword_only=True),
        ),
        'huber(input: [..] Float, target: [..] Float, delta=1.0, reduction="mean") -> [] NonNeg',
        "Mean of 0.5 * d * d where abs(d) <= delta and delta * (abs(d) - 0.5 * delta) elsewhere (torch's "
        "huber_loss; delta > 0): smooth_l1 with beta=delta, times delta.",
        "l = huber(x, x * 2.0, delta=0.5)",
        "losses",
        "robust_loss",
        "huber",
    ),
    Builtin(
        "mse",
        (BParam("pred"), BParam("target")),
        "mse(pred: [..] Float, target: [..] Float) -> [] NonNeg",
        "Mean squared error; both operands have the same shape and element type.",
        "l = mse(x, x * 2.0)",
        "losses",
        "mse",
        "mse",
    ),
    Builtin(
        "dropout",
        (X, BParam("p"), BParam("mode")),
        "dropout(x: [..] Float, p: Float, mode: Mode) -> [..]",
        "Zeroes each value with probability p in Train mode (scaling the rest by 1/(1-p)); identity in Eval.",
        "h = dropout(x, 0.1, mode)",
        "tensor",
        "dropout",
        "dropout",
        note="A literal p must be in [0, 1).",
    ),
    Builtin(
        "dropout2d",
        (X, BParam("p"), BParam("mode")),
        "dropout2d(x: [b C H W] Float, p: Float, mode: Mode) -> [b C H W]",
        "Zeroes each whole channel (an H by W plane) with probability p in Train mode, scaling the rest by "
        "1/(1-p), as torch's dropout2d; identity in Eval.",
        "h = dropout2d(zeros([2 3 4 4]), 0.1, mode)",
        "tensor",
        "dropout2d",
        "dropout2d",
        note="A literal p must be in [0, 1).",
    ),
    Builtin(
        "where",
        (BParam("cond"), BParam("a"), BParam("b")),
        "where(cond: [..] Bool, a: [..], b: [..]) -> [..]",
        "a where cond holds, b elsewhere; the three broadcast, and a and b may be numbers.",
        "h = where(x > 0.0, x, 0.0)",
        "tensor",
        "where",
        "where",
    ),
    Builtin(
        "transpose",
        (X,),
        "transpose(x: [.. a b]) -> [.. b a]",
        "Swaps the last two dims.",
        "t = transpose(x)",
        "tensor",
        "transpose",
        "transpose",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        "item",
        (X,),
        "item(x: [] Float) -> Float / item(x: [] i64) -> Int / item(x: [] Bool) -> Bool",
        "The one value of a [] tensor as a number: a Float of a float tensor, an Int of an integer or Index "
        "tensor, a Bool of a Bool tensor (as `x as Float`, `x as Int`, `x as Bool`).",
        "v = item(sum(x))",
        "tensor",
        "item",
        "item",
    ),
    Builtin(
        "stop_grad",
        (X,),
        "stop_grad(x: [..]) -> [..]",
        "x, with no gradient flowing back through it; params read only here are not differentiated.",
        "h = stop_grad(x @ m.w)",
        "tensor",
        "stop_grad",
        "stop_grad",
    ),
    Builtin(
        "norm",
        (X, OVER_OPT, BParam("p", required=False, keyword_only=True), KEEP),
        "norm(x: Grad[M] or [..] Float, over=d, p=2.0, keep=False) -> [..] NonNeg",
        "The 2-norm of all values together (of every field of a gradient); of a tensor, also along dim d or dims "
        "(d1, d2), and the p-norm with p= (p=inf: the largest absolute value).",
        "n = norm(x)",
        "tensor",
        "norm",
        "norm",
    ),
    Builtin(
        "reshape",
        (X, BParam("shape", ParamKind.SHAPE)),
        "reshape(x: [..], shape) -> shape",
        "The values of x laid out in a new shape, written as a type; the element counts must be equal.",
        "r = reshape(x, [b 2 2])",
        "shape",
        "reshape",
        "reshape",
        note="Counts that are not provably equal are [E0214](diagnostics.md#e0214); those equal when a division "
        "comes out exact ([b T NH (E/NH)] of [b T E]) are checked when it runs.",
    ),
    Builtin(
        "permute",
        (X, BParam("order", ParamKind.AXES)),
        "permute(x: [..], order) -> order",
        "The dims of x reordered by name: permute(x, [b H T D]) of [b T H D]; each dim of x once.",
        "p = permute(x, [D b])",
        "shape",
        "permute",
        "permute",
        note="Each of x's dims once, named unambiguously ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        "concat",
        (BParam("a"), BParam("b"), OVER),
        "concat(a: [.. A ..], b: [.. B ..], over=A) -> [.. (A+B) ..]",
        "a and b joined along one dim; their other dims are the same.",
        "c = concat(x, x, over=D)",
        "shape",
        "concat",
        "concat",
    ),
    Builtin(
        "stack",
        (BParam("a"),),
        "stack(a: [..], b: [..], ...) -> [n ..]",
        "n tensors of one shape as one, with a new leading dim of size n.",
        "s = stack(x, x, x)",
        "shape",
        "stack",
        "stack",
        variadic=True,
    ),
    Builtin(
        "chunk",
        (X, BParam("n"), OVER),
        "chunk(x: [.. D ..], n: Int, over=D) -> ([.. (D/n) ..], ...)",
        "x cut into n equal parts along one dim: a tuple of n tensors; n is a number and must divide D.",
        "h1, h2 = chunk(x, 2, over=D)",
        "shape",
        "chunk",
        "chunk",
    ),
    Builtin(
        "pad",
        (X, BParam("pad"), BParam("value", required=False, keyword_only=True)),
        "pad(x: [..], (left, right, ...), value=0.0) -> [..]",
        "x padded with value: the first pair of sizes pads the last dim, the next the one before it, ... (torch's "
        "F.pad); each size is an integer literal or a dim, so pad(x, (1, 2)) of [b W] is [b (W+3)].",
        "p = pad(x, (1, 2))",
        "shape",
        "pad",
        "pad",
    ),
    Builtin(
        "flip",
        (X, OVER),
        "flip(x: [..], over=d) -> [..]",
        "x with the order of its values reversed along dim d, or dims over=(d1, d2).",
        "f = flip(x, over=D)",
        "shape",
        "flip",
        "flip",
    ),
    Builtin(
        "pixel_shuffle",
        (X, BParam("r")),
        "pixel_shuffle(x: [.. (C*r*r) H W], r) -> [.. C (H*r) (W*r)]",
        "Each r*r channels become an r by r block of pixels (torch's pixel_shuffle); r is an integer literal or a "
        "dim, and r*r divides the channels.",
        "p = pixel_shuffle(zeros([2 8 3 3]), 2)",
        "shape",
        "pixel_shuffle",
        "pixel_shuffle",
        note="([E0214](diagnostics.md#e0214))",
    ),
    Builtin(
        "pixel_unshuffle",
        (X, BParam("r")),
        "pixel_unshuffle(x: [.. C H W], r) -> [.. (C*r*r) (H/r) (W/r)]",
        "The inverse of pixel_shuffle: each r by r block of pixels becomes r*r channels; r divides H and W.",
        "p = pixel_unshuffle(zeros([2 2 4 4]), 2)",
        "shape",
        "pixel_shuffle",
        "pixel_unshuffle",
        note="([E0214](diagnostics.md#e0214))",
    ),
    Builtin(
        "conv2d",
        (
            BParam("x"),
            BParam("w"),
            BParam("bias", required=False),
            BParam("stride", required=False, keyword_only=True),
            BParam("padding", required=False, keyword_only=True),
            BParam("dilation", required=False, keyword_only=True),
            BParam("groups", required=False, keyword_only=True),
        ),
        "conv2d(x: [b Ci H W] Float, w: [Co (Ci/g) KH KW] Float, bias: [Co], stride=s, padding=p, dilation=d, "
        "groups=g) -> [b Co ((H+2*p-d*(KH-1)-1)/s+1) ((W+2*p-d*(KW-1)-1)/s+1)]",
        "2-D convolution (cross-correlation, as torch's conv2d) of x by the kernels w, plus an optional bias per "
        "output channel; stride, zero padding, dilation and groups are integer literals or dims, 1, 0, 1 and 1 "
        "when left out.",
        "h = conv2d(zeros([2 1 5 5]), ones([3 1 3 3]), stride=2, padding=1)",
        "conv",
        "conv2d",
        "conv2d",
        note="x's channels are groups times w's dim 1, groups divide Co, and the kernel fits in the padded input "
        "([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        "conv1d",
        (
            BParam("x"),
            BParam("w"),
            BParam("bias", required=False),
            BParam("stride", required=False, keyword_only=True),
            BParam("padding", required=False, keyword_only=True),
            BParam("dilation", required=False, keyword_only=True),
            BParam("groups", required=False, keyword_only=True),
        ),
        "conv1d(x: [b Ci L] Float, w: [Co (Ci/g) K] Float, bias: [Co], stride=s, padding=p, dilation=d, groups=g) "
        "-> [b Co ((L+2*p-d*(K-1)-1)/s+1)]",
        "1-D convolution (cross-correlation, as torch's conv1d) of x by the kernels w, plus an optional bias; "
        "stride, padding, dilation and groups as for conv2d.",
        "h = conv1d(zeros([2 1 8]), ones([3 1 3]))",
        "conv",
        "conv1d",
        "conv1d",
        note="x's channels are groups times w's dim 1, and groups divide Co ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        "conv_transpose2d",
        (
            BParam("x"),
            BParam("w"),
            BParam("bias", required=False),
            BParam("stride", required=False, keyword_only=True),
            BParam("padding", required=False, keyword_only=True),
            BParam("output_padding", required=False, keyword_only=True),
            BParam("groups", required=False, keyword_only=True),
            BParam("dilation", required=False, keyword_only=True),
        ),
        "conv_transpose2d(x: [b Ci H W] Float, w: [Ci (Co/g) KH KW] Float, bias: [Co], stride=s, padding=p, "
        "output_padding=op, groups=g, dilation=d) -> [b Co ((H-1)*s-2*p+d*(KH-1)+op+1) ((W-1)*s-2*p+d*(KW-1)+op+1)]",
        "Transposed 2-D convolution (torch's conv_transpose2d: the gradient of conv2d with respect to its input), "
        "w laid out as torch stores it, [Ci Co/g KH KW]; output_padding, below the stride (or the dilation), adds "
        "rows and columns at the end.",
        "h = conv_transpose2d(zeros([2 3 4 4]), ones([3 5 3 3]), stride=2, padding=1, output_padding=1)",
        "conv",
        "conv_transpose2d",
        "conv_transpose2d",
        note="x's channels Ci are w's first dim, and groups divide them ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        "max_pool2d",
        (
            BParam("x"),
            BParam("k"),
            BParam("stride", required=False, keyword_only=True),
            BParam("padding", required=False, keyword_only=True),
        ),
        "max_pool2d(x: [b C H W] Float, k: Int, stride=k, padding=p) -> [b C ((H+2*p-k)/s+1) ((W+2*p-k)/s+1)]",
        "The largest value of each k by k window of the last two dims, windows stride apart (k when left out), "
        "the input padded with -inf by padding (0 when left out), as torch's max_pool2d; each is an integer "
        "literal or a dim.",
        "p = max_pool2d(zeros([2 3 4 4]), 2)",
        "conv",
        "pool2d",
        "max_pool2d",
        note="padding is at most k/2 ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        "avg_pool2d",
        (
            BParam("x"),
            BParam("k"),
            BParam("stride", required=False, keyword_only=True),
            BParam("padding", required=False, keyword_only=True),
        ),
        "avg_pool2d(x: [b C H W] Float, k: Int, stride=k, padding=p) -> [b C ((H+2*p-k)/s+1) ((W+2*p-k)/s+1)]",
        "The mean of each k by k window of the last two dims, windows stride apart (k when left out), the input "
        "padded with zeros by padding (0 when left out) that count in the mean, as torch's avg_pool2d; each is "
        "an integer literal or a dim.",
        "p = avg_pool2d(zeros([2 3 5 5]), 2)",
        "conv",
        "pool2d",
        "avg_pool2d",
        note="padding is at most k/2 ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        "batch_norm",
        (
            X,
            BParam("running_mean"),
            BParam("running_var"),
            BParam("weight"),
            BParam("bias"),
            BParam("mode"),
            OVER,
            BParam("momentum", required=False, keyword_only=True),
            BParam("eps", required=False, keyword_only=True),
            BParam("num_batches_tracked", required=False, keyword_only=True),
        ),
        "batch_norm(x: [.. C ..] Float, running_mean: [C], running_var: [C], weight: [C], bias: [C], mode: Mode, "
        "over=C, momentum=0.1, eps=1e-5, num_batches_tracked=n) -> [.. C ..]",
        "Batch normalisation over every dim but C (torch's F.batch_norm): in Train mode with the batch's mean "
        "and biased variance, updating the running statistics in place (momentum, unbiased variance); in Eval "
        "with the running statistics.",
        "h = batch_norm(x, m.rm, m.rv, ones([D]), zeros([D]), mode, over=D)",
        "layers",
        "batch_norm",
        "batch_norm",
        note="The running statistics (and num_batches_tracked, a [] i64 counted up in Train mode) are buffers of "
        "a model ([E0301](diagnostics.md#e0301)). See [Batch normalisation](#batch-normalisation).",
    ),
    Builtin(
        "group_norm",
        (
            X,
            BParam("groups"),
            BParam("weight", required=False, keyword_only=True),
            BParam("bias", required=False, keyword_only=True),
            BParam("eps", required=False, keyword_only=True),
        ),
        "group_norm(x: [b C ..] Float, groups, weight=w, bias=b, eps=1e-5) -> [b C ..]",
        "The channels C in groups of C/groups, each normalised over its channels and the dims after C (torch's "
        "group_norm, biased variance); weight and bias [C] are optional.",
        "h = group_norm(x, 2)",
        "layers",
        "group_norm",
        "group_norm",
        note="groups divides C ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        "scaled_dot_product_attention",
        (
            BParam("q"),
            BParam("k"),
            BParam("v"),
            BParam("mask", required=False, keyword_only=True),
            BParam("is_causal", required=False, keyword_only=True),
            BParam("dropout_p", required=False, keyword_only=True),
            BParam("scale", required=False, keyword_only=True),
            BParam("mode", required=False, keyword_only=True),
        ),
        "scaled_dot_product_attention(q: [.. L E] Float, k: [.. S E] Float, v: [.. S Ev] Float, mask=m, "
        "is_causal=False, dropout_p=0.0, scale=s, mode=Mode) -> [.. L Ev]",
        "softmax(q @ transpose(k) * scale + mask, over=-1) @ v, as torch's F.scaled_dot_product_attention: scale "
        "1/sqrt(E) by default; a Bool mask is True where to attend, a float one is added; is_causal=True attends "
        "to the lower triangle; dropout_p drops weights in Train mode (mode=).",
        "a = scaled_dot_product_attention(x, x, x)",
        "layers",
        "attention",
        "scaled_dot_product_attention",
        note="The mask broadcasts to [.. L S] ([E0214](diagnostics.md#e0214)). See [Attention](#attention).",
    ),
    Builtin(
        "one_hot",
        (BParam("labels"), BParam("over", keyword_only=True)),
        "one_hot(labels: [..] Index[C], over=C) -> [.. C] Float",
        "A float tensor with a 1 at each label's position along a new last dim C, 0 elsewhere.",
        "h = one_hot(y, over=C)",
        "tensor",
        "one_hot",
        "one_hot",
        note="`over=` names the dim the labels index ([E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        "arange",
        (BParam("n"),),
        "arange(n: a dim) -> [n] Index[n]",
        "The positions 0, 1, ..., n-1 of a dim n, as labels of that dim: m.pos[arange(T)] is [T E].",
        "p = arange(C)",
        "create",
        "arange",
        "arange",
    ),
    Builtin(
        "randn",
        (SHAPE, SEED),
        "randn(shape: [..] Float, seed=Int) -> [..] Float",
        "Standard normal values of a plain float type, deterministic for the seed.",
        "r = randn([4 D] f64, seed=1)",
        "create",
        "randn",
        "randn",
        Lowering.SHAPE,
    ),
    Builtin(
        "randint",
        (SHAPE, SEED),
        "randint(shape: [..] Index[C], seed=Int) -> [..] Index[C]",
        "Uniform integers in 0..C-1, deterministic for the seed.",
        "r = randint([4] Index[C], seed=2)",
        "create",
        "randint",
        "randint",
        Lowering.SHAPE_INDEX,
    ),
    Builtin(
        "zeros",
        (SHAPE,),
        "zeros(shape: [..] T) -> [..] T",
        "A tensor of zeros, of any element type.",
        "z = zeros([D] i64)",
        "create",
        "filled",
        "zeros",
        Lowering.SHAPE,
    ),
    Builtin(
        "ones",
        (SHAPE,),
        "ones(shape: [..] T) -> [..] T",
        "A tensor of ones, of any element type.",
        "z = ones([D] Bool)",
        "create",
        "filled",
        "ones",
        Lowering.SHAPE,
    ),
    Builtin(
        "tril",
        (X, BParam("diagonal", required=False, keyword_only=True)),
        "tril(x: [.. a b], diagonal=0) -> [.. a b]",
        "x with the values above the diagonal of its last two dims zeroed (above diagonal k with diagonal=k).",
        "t = tril(x)",
        "create",
        "triangle",
        "tril",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        "triu",
        (X, BParam("diagonal", required=False, keyword_only=True)),
        "triu(x: [.. a b], diagonal=0) -> [.. a b]",
        "x with the values below the diagonal of its last two dims zeroed (below diagonal k with diagonal=k).",
        "t = triu(x, diagonal=1)",
        "create",
        "triangle",
        "triu",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        "eye",
        (BParam("n"),),
        "eye(n: a dim) -> [n n] Float",
        "The identity matrix of a dim n: ones on the diagonal, zeros elsewhere.",
        "i = eye(D)",
        "create",
        "eye",
        "eye",
    ),
    Builtin(
        "full",
        (SHAPE, BParam("value")),
        "full(shape: [..] T, value) -> [..] T",
        "A tensor of one number, of any element type; the number suits the element type.",
        "f = full([D C] NonNeg, 0.5)",
        "create",
        "full",
        "full",
        Lowering.SHAPE,
        note="An Int for integer types, True or False for Bool, a literal in range for NonNeg and Prob, and for "
        "Index[C] a label in range known when the program is checked (a literal, a dim or an Int constant) "
        "([E0302](diagnostics.md#e0302), [E0304](diagnostics.md#e0304), [E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        "rand",
        (SHAPE, SEED),
        "rand(shape: [..] Float, seed=Int) -> [..] Prob",
        "Uniform values in [0, 1), deterministic for the seed; being in [0, 1], they are a Prob.",
        "u = rand([4 D], seed=3)",
        "create",
        "rand",
        "rand",
        Lowering.SHAPE,
    ),
    Builtin(
        "multinomial",
        (BParam("p"), OVER, SEED),
        "multinomial(p: [.. V ..] NonNeg, over=V, seed=Int) -> [..] Index[V]",
        "One label of V drawn for each slice of p along V, with probabilities p (weights >= 0, normalised); "
        "deterministic for the seed.",
        "s = multinomial(softmax(x, over=D), over=D, seed=4)",
        "create",
        "multinomial",
        "multinomial",
        note="p is known to be >= 0, as softmax gives ([E0304](diagnostics.md#e0304)).",
    ),
    Builtin(
        "categorical",
        (BParam("p"), OVER, SEED),
        "categorical(p: [.. V ..] NonNeg, over=V, seed=Int) -> [..] Index[V]",
        "The same draw as multinomial: one label of V for each slice of p along V, from probabilities p "
        "(not logits, unlike JAX's categorical).",
        "s = categorical(softmax(x, over=D), over=D, seed=4)",
        "create",
        "multinomial",
        "multinomial",
    ),
    Builtin(
        "print",
        (BParam("all_ranks", required=False, keyword_only=True),),
        "print(values..., all_ranks=False)",
        "Prints the values on one line, separated by spaces; in a data-parallel run only rank 0 prints, "
        "unless all_ranks=True.",
        'print("loss", x)',
        "other",
        "print",
        "print",
        variadic=True,
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        "rank",
        (),
        "rank() -> Int",
        "This process's rank in a data-parallel run (quiver run --nproc, torchrun): 0 to world_size()-1; "
        "0 when not distributed.",
        "r = rank()",
        "other",
        "process",
        "rank",
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        "world_size",
        (),
        "world_size() -> Int",
        "How many processes train together in a data-parallel run; 1 when not distributed.",
        "n = world_size()",
        "other",
        "process",
        "world_size",
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        "range",
        (BParam("start"), BParam("stop", required=False), BParam("step", required=False)),
        "range(stop: Int) / range(start: Int, stop: Int, step: Int)",
        "The integers start, start+step, ... below stop; only in a for loop.",
        "for i in range(3):\n        print(i)",
        "other",
        "range",
        None,
        note="([E0414](diagnostics.md#e0414))",
    ),
    Builtin(
        "value_and_grad",
        (BParam("f", ParamKind.FN), BParam("m")),
        "value_and_grad(f, m: M, args...) -> ([] Float, Grad[M])",
        "Calls f(m, args...) and returns its value and its gradient with respect to the params of m.",
        "l, g = value_and_grad(loss, m, x, y)",
        "other",
        "value_and_grad",
        "value_and_grad",
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    Builtin(
        "grad",
        (BParam("f", ParamKind.FN), BParam("m")),
        "grad(f, m: M, args...) -> Grad[M]",
        "The gradient of f(m, args...) with respect to the params of m, as value_and_grad gives it, without the value.",
        "g = grad(loss, m, x, y)",
        "other",
        "grad",
        "grad",
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    Builtin(
        "jvp",
        (BParam("f", ParamKind.FN), BParam("m"), BParam("t")),
        "jvp(f, m: M, t: Grad[M], args...) -> (Y, Y)",
        "Forward mode: f(m, args...) and its derivative along the tangent t (a direction in the params of m).",
        "l, dl = jvp(loss, m, zeros(Grad[M]), x, y)",
        "other",
        "jvp",
        "jvp",
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    *(
        Builtin(
            kind,
            (
                BParam("m"),
                *(BParam(n, required=False, keyword_only=True) for n, _, _ in hyper),
                *((BParam("groups", required=False, keyword_only=True),) if kind in T_GROUPED else ()),
            ),
            f"{kind}(m: M, "
            + ", ".join(f"{n}={d}" for n, _, d in hyper)
            + (", groups=Group(...)" if kind in T_GROUPED else "")
            + f") -> {kind}[M]",
            doc,
            f"opt = {kind}(m, lr=0.01)",
            "other",
            "optimizer",
            kind,
            note="See [Optimizers](#optimizers).",
        )
        for kind, doc in (
            ("SGD", "An SGD optimizer for m (momentum, dampening, weight decay, Nesterov), as torch.optim.SGD."),
            ("Adam", "An Adam optimizer for m, as torch.optim.Adam (L2 weight decay)."),
            ("AdamW", "An AdamW optimizer for m (decoupled weight decay), as torch.optim.AdamW."),
            # issue 26: the other torch.optim algorithms, per-field options, clipping, schedules
            ("RMSprop", "An RMSprop optimizer for m (momentum, centered), as torch.optim.RMSprop."),
            ("Adagrad", "An Adagrad optimizer for m, as torch.optim.Adagrad."),
            ("Adadelta", "An Adadelta optimizer for m, as torch.optim.Adadelta."),
            (
                "LBFGS",
                "An L-BFGS optimizer for m, as torch.optim.LBFGS; `opt.step(m, f, args...)` evaluates f as "
                "torch's closure.",
            ),
        )
        for hyper in (T_OPTIMIZERS[kind][0],)
    ),
    Builtin(
        "Group",
        (
            BParam("max_rank", required=False, keyword_only=True),
            BParam("min_rank", required=False, keyword_only=True),
            BParam("names", required=False, keyword_only=True),
            *(BParam(n, required=False, keyword_only=True) for n in T_OVERRIDABLE),
        ),
        "Group(max_rank=Int, min_rank=Int, names=Str, lr=.., weight_decay=.., ...) -> Group",
        "A param group for an optimizer's groups=: the params it selects (by rank, by a glob on their paths) "
        "and the hyper-parameters it sets for them.",
        "opt = AdamW(m, weight_decay=0.0, groups=Group(min_rank=2, weight_decay=0.1))",
        "other",
        "param_group",
        "Group",
        note="See [Per-field options](#per-field-options-param-groups).",
    ),
    Builtin(
        "clip_grad_norm",
        (
            BParam("g"),
            BParam("max_norm"),
            BParam("norm_type", required=False, keyword_only=True),
            BParam("error_if_nonfinite", required=False, keyword_only=True),
        ),
        "clip_grad_norm(g: Grad[M], max_norm: Float, norm_type=2.0, error_if_nonfinite=False) -> (Grad[M], [] Float)",
        "g scaled so that its total norm is at most max_norm, and that norm, as torch.nn.utils.clip_grad_norm_.",
        "g, n = clip_grad_norm(grad(loss, m, x, y), 1.0)",
        "other",
        "clip_grad_norm",
        "clip_grad_norm",
        note="See [Clipping gradients](#clipping-gradients).",
    ),
    *(
        Builtin(
            kind,
            (
                BParam("opt"),
                *(BParam(n, required=d == "required", keyword_only=True) for n, _, d in hyper),
            ),
            f"{kind}(opt, "
            + ", ".join(f"{n}: {w}" if d == "required" else f"{n}={d}" for n, w, d in hyper)
            + f") -> {kind}",
            doc,
            f"sched = {kind}(SGD(m, lr=0.1), {example})",
            "other",
            "schedule",
            kind,
            note="See [Learning-rate schedules](#learning-rate-schedules).",
        )
        for kind, doc, example in (
            ("StepLR", "A schedule: lr times gamma every step_size steps, as torch's StepLR.", "step_size=30"),
            (
                "MultiStepLR",
                "A schedule: lr times gamma at each milestone, as torch's MultiStepLR.",
                "milestones=(30, 80)",
            ),
            ("ExponentialLR", "A schedule: lr times gamma every step, as torch's ExponentialLR.", "gamma=0.9"),
            (
                "CosineAnnealingLR",
                "A schedule: cosine annealing to eta_min over T_max steps, as torch's CosineAnnealingLR.",
                "T_max=100",
            ),
            (
                "LinearLR",
                "A schedule: a factor of lr moving linearly over total_iters steps, as torch's LinearLR.",
                "start_factor=0.1",
            ),
            (
                "OneCycleLR",
                "A schedule: the 1cycle policy for lr and momentum, as torch's OneCycleLR.",
                "max_lr=1.0, total_steps=100",
            ),
            (
                "WarmupCosineLR",
                "A schedule: linear warmup then cosine annealing, as torch's SequentialLR of LinearLR and "
                "CosineAnnealingLR.",
                "warmup_steps=10, total_steps=100",
            ),
        )
        for hyper in (T_SCHEDULES[kind],)
    ),
    Builtin(
        "Train",
        (SEED,),
        "Train(seed=Int) -> Mode",
        "Training mode: dropout is on, with randomness from the seed.",
        "t = Train(seed=3)",
        "other",
        "train",
        "Train",
    ),
    # Checkpoints (checker/body/checkpoint_rules.py): a model's or optimizer's
    # state, or several values by keyword, to one torch file and back.
    Builtin(
        "save",
        (PATH, BParam("value", required=False)),
        "save(path: Str, m) / save(path: Str, model=m, opt=opt, step=Int, ...)",
        "Writes a model's or optimizer's state (a torch state dict), or several models, optimizers and "
        "numbers under their keywords, to one file (torch.save); the path is relative to the `.qv` file.",
        'save("ckpt.pt", m)',
        "data",
        "checkpoint",
        "save_checkpoint",
        note="See [Checkpoints](#checkpoints).",
    ),
    Builtin(
        "load",
        (
            PATH,
            BParam("value", required=False),
            BParam("names", required=False, keyword_only=True),
            BParam("transpose", required=False, keyword_only=True),
            BParam("strict", required=False, keyword_only=True),
        ),
        "load(path: Str, m, names=.., transpose=.., strict=True) / load(path: Str, model=m, opt=opt, step=0, ...)"
        " -> the numbers",
        "Reads what `save` wrote into the models and optimizers given, in place, and returns the numbers of the "
        "number keywords (the given values fix their types).",
        'step = load("ckpt.pt", step=0)',
        "data",
        "checkpoint",
        "load_checkpoint",
        note="See [Checkpoints](#checkpoints).",
    ),
    # Data: readers whose shapes bind dims known only at run time.
    Builtin(
        "load_npy",
        (PATH, SHAPE),
        "load_npy(path: Str, shape: [n ..] T) -> [n ..] T",
        "The array of a `.npy` file, checked against the shape; a new name in the shape is a size read from the "
        "file (a dim known only at run time). The path is relative to the `.qv` file.",
        'd = load_npy("data.npy", [n D])',
        "data",
        "read_file",
        "load_npy",
        Lowering.READER,
    ),
    Builtin(
        "load_npz",
        (PATH, BParam("key"), SHAPE),
        "load_npz(path: Str, key: Str, shape: [n ..] T) -> [n ..] T",
        "The array `key` of a `.npz` file, checked against the shape (new names are sizes read from the file).",
        'd = load_npz("digits.npz", "x", [n D])',
        "data",
        "read_file",
        "load_npz",
        Lowering.READER,
    ),
    Builtin(
        "load_csv",
        (
            PATH,
            SHAPE,
            BParam("header", required=False, keyword_only=True),
            BParam("delimiter", required=False, keyword_only=True),
            BParam("columns", required=False, keyword_only=True),
        ),
        'load_csv(path: Str, shape: [n F] T, header=False, delimiter=",", columns=[..]) -> [n F] T',
        "The numeric columns of a CSV file as rows (`[n F]`, or `[n]` for one column), all of them or those "
        "`columns=` picks (an Int, a header's name, or a list of Ints such as `[0, 3]`); header=True skips the "
        "first line.",
        'd = load_csv("table.csv", [n D], header=True)',
        "data",
        "read_file",
        "load_csv",
        Lowering.READER,
    ),
    Builtin(
        "load_safetensors",
        (PATH, BParam("key"), SHAPE),
        "load_safetensors(path: Str, key: Str, shape: [n ..] T) -> [n ..] T",
        "The tensor `key` of a `.safetensors` file, checked against the shape (new names are sizes read from the "
        "file).",
        'd = load_safetensors("weights.safetensors", "w", [n D])',
        "data",
        "read_file",
        "load_safetensors",
        Lowering.READER,
    ),
    Builtin(
        "load_chars",
        (PATH, SHAPE),
        "load_chars(path: Str, shape: [n] Index[V]) -> ([n] Index[V], Vocab[V])",
        "A UTF-8 text as the ids of its characters, and its vocabulary (its characters sorted; at most V of "
        "them) to `decode` ids back to text.",
        'ids, vocab = load_chars("text.txt", [n] Index[D])',
        "data",
        "load_chars",
        "load_chars",
        Lowering.READER,
    ),
    Builtin(
        "decode",
        (BParam("vocab"), BParam("ids")),
        "decode(vocab: Vocab[V], ids: [n] Index[V]) -> Str",
        "The text of character ids.",
        'ids, vocab = load_chars("text.txt", [n] Index[D])\ns = decode(vocab, ids)',
        "data",
        "decode",
        "decode",
    ),
    Builtin(
        "encode",
        (BParam("vocab"), BParam("text")),
        "encode(vocab: Vocab[V], text: Str) -> [?] Index[V]",
        "The ids of a text's characters (each must be in the vocabulary).",
        'ids, vocab = load_chars("text.txt", [n] Index[D])\np = encode(vocab, "hello")',
        "data",
        "encode",
        "encode",
    ),
    Builtin(
        "batches",
        (
            BParam("size", keyword_only=True),
            BParam("shuffle", required=False, keyword_only=True),
            BParam("drop_last", required=False, keyword_only=True),
        ),
        "batches(x: [n ..], y: [n ..], ..., size=Int, shuffle=Int, drop_last=False) -> iterable of ([batch ..], ...)",
        "The mini-batches of tensors that share a first dim, for a `for` loop: `size` rows each, in order or "
        "shuffled by the seed `shuffle=` (torch.randperm), the last batch short unless drop_last=True.",
        "for xb in batches(x, size=4, shuffle=0):\n    print(xb)",
        "data",
        "batches",
        "batches",
        Lowering.READER,
        variadic=True,
    ),
    Builtin(
        "randperm",
        (BParam("n"), SEED),
        "randperm(n, seed=Int) -> [n] Index[n]",
        "The numbers 0..n-1 in a random order, deterministic for the seed (torch.randperm); n is a dim or an Int.",
        "p = randperm(D, seed=0)",
        "data",
        "randperm",
        "randperm",
    ),
]

BUILTINS: dict[str, Builtin] = {b.name: b for b in _BUILTINS}

# Names that are values rather than functions: name -> "signature — doc".
CONSTANTS = {
    "Eval": "Eval: Mode — Evaluation mode: dropout is off.",
    "inf": "inf: Float — Positive infinity, a Float; -inf is below every number, as a mask's fill: "
    "where(keep, x, -inf).",
    "pi": "pi: Float — The number pi (3.141592653589793), a Float.",
}

# Model "methods": `Mlp.init(seed=0)`.
MODEL_METHODS = {
    "init": Builtin(
        "init",
        (SEED,),
        "M.init(seed=Int) -> M",
        "A new model with its params and buffers initialised, deterministically for the seed.",
        "m2 = M.init(seed=0)",
        "other",
        "init",
        None,
    ),
}

# Initialisers of model fields (`param w: [D H] = normal(0.0, 0.02)`): not
# functions of a body, but highlighted as built-ins.
INITIALIZERS = ("zeros", "ones", "normal", "uniform", "xavier")
