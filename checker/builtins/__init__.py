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

from ..initializers import INITIALIZERS as INITIALIZERS  # of model fields: highlighted as built-ins
from .registry import BUILTINS
from .spec import EPS, KEEP, OVER, OVER_OPT, SEED, SHAPE, BParam, Builtin, Lowering, ParamKind, X

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
        name=name,
        params=(X,),
        signature=f"{name}(x: {arg}) -> [..] {result}",
        doc=doc,
        example=f"h = {name}(x)",
        group="elementwise",
        rule="elementwise",
        runtime=runtime or name,
        refine=refine,
        ints=ints,
    )


def _math(name: str, result: str, doc: str, refine: str | None = None) -> Builtin:
    """An elementwise function that also takes a plain number (sqrt(32.0) is a Float)."""
    b = _elementwise(name, result, doc, refine)
    number = f"{name}(x: Float) -> Float"
    rule = "elementwise_or_number"
    return Builtin(
        name=name,
        params=b.params,
        signature=f"{b.signature} / {number}",
        doc=doc,
        example=b.example,
        group=b.group,
        rule=rule,
        runtime=name,
        refine=refine,
        number_runtime=f"{name}_of_number",
    )


_BUILTINS = [
    _elementwise("relu", "NonNeg", "max(x, 0), elementwise.", "nonneg"),
    _elementwise("tanh", "Float", "Hyperbolic tangent, elementwise."),
    _elementwise("sigmoid", "Prob", "1 / (1 + exp(-x)), elementwise.", "prob"),
    _math("exp", "NonNeg", "e to the power x, elementwise; of a number, a number.", "nonneg"),
    _elementwise("log1p", "Float", "log(1 + x), elementwise; accurate for x near 0."),
    _elementwise("softplus", "NonNeg", "log(1 + exp(x)), elementwise: a smooth relu.", "nonneg"),
    _math("sqrt", "NonNeg", "Square root, elementwise; of a number, a number: sqrt(32.0) is a Float.", "nonneg"),
    _elementwise("gelu", "Float", "x * Phi(x) (Phi the standard normal CDF), elementwise: the exact GELU."),
    _elementwise("silu", "Float", "x * sigmoid(x), elementwise (also called swish)."),
    Builtin(
        name="leaky_relu",
        params=(X, BParam(name="negative_slope", required=False)),
        signature="leaky_relu(x: [..] Float, negative_slope=0.01) -> [..] Float",
        doc="x where x >= 0, negative_slope * x elsewhere, elementwise (torch's leaky_relu).",
        example="h = leaky_relu(x, 0.2)",
        group="elementwise",
        rule="activation",
        runtime="leaky_relu",
        note="Not NonNeg: negative for negative x ([E0304](diagnostics.md#e0304)).",
    ),
    Builtin(
        name="elu",
        params=(X, BParam(name="alpha", required=False)),
        signature="elu(x: [..] Float, alpha=1.0) -> [..] Float",
        doc="x where x > 0, alpha * (exp(x) - 1) elsewhere, elementwise (torch's elu).",
        example="h = elu(x)",
        group="elementwise",
        rule="activation",
        runtime="elu",
    ),
    _math("sin", "Float", "Sine (radians), elementwise; of a number, a number."),
    _math("cos", "Float", "Cosine (radians), elementwise; of a number, a number."),
    _elementwise(
        "abs", "NonNeg", "Absolute value, elementwise; on integer tensors, an integer tensor.", "nonneg", ints=True
    ),
    Builtin(
        name="clamp",
        params=(
            X,
            BParam(name="min", required=False, keyword_only=True),
            BParam(name="max", required=False, keyword_only=True),
        ),
        signature="clamp(x: [..], min=a, max=b) -> [..]",
        doc="x limited to [a, b], elementwise; min= or max= may be left out, not both.",
        example="h = clamp(x, min=0.0, max=1.0)",
        group="elementwise",
        rule="clamp",
        runtime="clamp",
        note="A literal min >= 0 gives NonNeg, and with a literal max <= 1 Prob; a literal min above a literal max "
        "is an error ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        name="maximum",
        params=(BParam(name="a"), BParam(name="b")),
        signature="maximum(a: [..], b: [..]) -> [..]",
        doc="The larger of a and b, elementwise; they broadcast as in a + b, and one may be a number.",
        example="h = maximum(x, 0.5 * x)",
        group="elementwise",
        rule="maximum",
        runtime="maximum",
    ),
    Builtin(
        name="minimum",
        params=(BParam(name="a"), BParam(name="b")),
        signature="minimum(a: [..], b: [..]) -> [..]",
        doc="The smaller of a and b, elementwise; they broadcast as in a + b, and one may be a number.",
        example="h = minimum(x, 1.0)",
        group="elementwise",
        rule="maximum",
        runtime="minimum",
    ),
    Builtin(
        name="softmax",
        params=(X, OVER),
        signature="softmax(x: [..] Float, over=d) -> [..] Prob",
        doc="Normalised exponentials along dim d; each slice sums to 1.",
        example="p = softmax(x, over=D)",
        group="along",
        rule="softmax",
        runtime="softmax",
        refine="prob",
    ),
    Builtin(
        name="log_softmax",
        params=(X, OVER),
        signature="log_softmax(x: [..] Float, over=d) -> [..] Float",
        doc="log(softmax(x, over=d)), computed stably.",
        example="lp = log_softmax(x, over=D)",
        group="along",
        rule="softmax",
        runtime="log_softmax",
    ),
    Builtin(
        name="linear",
        params=(X, BParam(name="weight"), BParam(name="bias", required=False)),
        signature="linear(x: [.. I] Float, weight: [I O], bias: [O]) -> [.. O]",
        doc="x @ weight + bias in one kernel (torch's F.linear with the weight kept as x @ weight reads it, as "
        "nn.Linear keeps it); bias is optional.",
        example="h = linear(x, ones([D 3]), zeros([3]))",
        group="layers",
        rule="linear",
        runtime="linear",
        note="The inner dims differ: [E0203](diagnostics.md#e0203).",
    ),
    Builtin(
        name="layer_norm",
        params=(
            X,
            OVER,
            EPS,
            BParam(name="weight", required=False, keyword_only=True),
            BParam(name="bias", required=False, keyword_only=True),
        ),
        signature="layer_norm(x: [..] Float, over=d, eps=1e-5, weight=w, bias=b) -> [..] Float",
        doc="(x - mean) / sqrt(variance + eps) along dim d (biased variance, as torch's layer_norm, eps 1e-5 unless "
        "given), then * weight + bias, both [d] and optional (applied in the same kernel, as torch's).",
        example="h = layer_norm(x, over=D)",
        group="along",
        rule="normalize",
        runtime="layer_norm",
    ),
    Builtin(
        name="rms_norm",
        params=(X, OVER, EPS),
        signature="rms_norm(x: [..] Float, over=d, eps=e) -> [..] Float",
        doc="x / sqrt(mean(x * x) + eps) along dim d, eps the element type's machine epsilon unless given (as torch's "
        "rms_norm with eps=None); no weights.",
        example="h = rms_norm(x, over=-1)",
        group="along",
        rule="normalize",
        runtime="rms_norm",
    ),
    Builtin(
        name="sum",
        params=(X, OVER_OPT, KEEP),
        signature="sum(x: [..], over=d, keep=False) -> [..]",
        doc="Sum along dim d, or dims over=(d1, d2) (the result loses them; with keep=True each becomes 1), or of every "
        "value when over= is left out.",
        example="s = sum(x, over=D)",
        group="along",
        rule="reduce",
        runtime="sum",
    ),
    Builtin(
        name="mean",
        params=(X, OVER_OPT, KEEP),
        signature="mean(x: [..] Float, over=d, keep=False) -> [..]",
        doc="Mean along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of every value.",
        example="s = mean(x)",
        group="along",
        rule="reduce",
        runtime="mean",
    ),
    Builtin(
        name="max",
        params=(X, OVER_OPT, KEEP),
        signature="max(x: [..], over=d, keep=False) -> [..]",
        doc="Largest value along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of "
        "every value.",
        example="s = max(x, over=D)",
        group="along",
        rule="reduce",
        runtime="max",
    ),
    Builtin(
        name="min",
        params=(X, OVER_OPT, KEEP),
        signature="min(x: [..], over=d, keep=False) -> [..]",
        doc="Smallest value along dim d or dims (d1, d2) (the result loses them; with keep=True each becomes 1), or of "
        "every value.",
        example="s = min(x)",
        group="along",
        rule="reduce",
        runtime="min",
    ),
    Builtin(
        name="argmax",
        params=(X, OVER, KEEP),
        signature="argmax(x: [..], over=d, keep=False) -> [..] Index[d]",
        doc="Position of the largest value along dim d: an Index into d (with keep=True, d becomes 1).",
        example="i = argmax(x, over=D)",
        group="along",
        rule="argmax",
        runtime="argmax",
    ),
    *(
        Builtin(
            name=name,
            params=(X, OVER_OPT, BParam(name="correction", required=False, keyword_only=True), KEEP),
            signature=f"{name}(x: [..] Float, over=d, correction=1, keep=False) -> [..] NonNeg",
            doc=f"{what} along dim d or dims (d1, d2), or of every value; correction=1 (torch's default) divides the "
            "squares by n-1, correction=0 by n.",
            example=f"s = {name}(x, over=D)",
            group="along",
            rule="spread",
            runtime=name,
        )
        for name, what in (("std", "Standard deviation"), ("var", "Variance"))
    ),
    Builtin(
        name="logsumexp",
        params=(X, OVER, KEEP),
        signature="logsumexp(x: [..] Float, over=d, keep=False) -> [..] Float",
        doc="log(sum(exp(x))) along dim d or dims (d1, d2), computed stably (torch's logsumexp).",
        example="s = logsumexp(x, over=D)",
        group="along",
        rule="logsumexp",
        runtime="logsumexp",
    ),
    Builtin(
        name="topk",
        params=(X, BParam(name="k"), OVER, BParam(name="largest", required=False, keyword_only=True)),
        signature="topk(x: [.. D ..], k, over=D, largest=True) -> ([.. k ..], [.. k ..] Index[D])",
        doc="The k largest values along D, largest first (the smallest, smallest first, with largest=False), and their "
        "positions as labels of D; k is an integer literal or a dim, and becomes the new dim.",
        example="v, i = topk(x, 2, over=D)",
        group="along",
        rule="topk",
        runtime="topk",
        note="k is at most D's size ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        name="sort",
        params=(X, OVER, BParam(name="descending", required=False, keyword_only=True)),
        signature="sort(x: [.. D ..], over=D, descending=False) -> ([.. D ..], [.. D ..] Index[D])",
        doc="The values along D in ascending order (descending with descending=True) and the positions they came "
        "from, as labels of D.",
        example="v, i = sort(x, over=D)",
        group="along",
        rule="sort",
        runtime="sort",
    ),
    Builtin(
        name="cross_entropy",
        params=(
            BParam(name="logits"),
            BParam(name="labels"),
            OVER,
            BParam(name="ignore_index", required=False, keyword_only=True),
            BParam(name="reduction", required=False, keyword_only=True),
            BParam(name="label_smoothing", required=False, keyword_only=True),
        ),
        signature='cross_entropy(logits: [.. C ..] Float, labels: [..] Index[C], over=C, ignore_index=k, reduction="mean", '
        "label_smoothing=0.0) -> [] NonNeg",
        doc='Mean cross-entropy of the labels under softmax(logits, over=C) (reduction="sum": the sum; "none": '
        "one per label, of the labels' shape); ignore_index=k leaves out the labels equal to k, label_smoothing=e "
        "mixes e of the uniform distribution into the targets.",
        example="l = cross_entropy(x @ m.w, y, over=C)",
        group="losses",
        rule="cross_entropy",
        runtime="cross_entropy",
        note="The labels have the logits' shape without C ([E0201](diagnostics.md#e0201)) and index C "
        "([E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        name="nll",
        params=(
            BParam(name="logp"),
            BParam(name="labels"),
            OVER,
            BParam(name="ignore_index", required=False, keyword_only=True),
            BParam(name="reduction", required=False, keyword_only=True),
        ),
        signature='nll(logp: [.. C ..] Float, labels: [..] Index[C], over=C, ignore_index=k, reduction="mean") -> [] NonNeg',
        doc="Mean negative log-likelihood of the labels under log-probabilities logp (as log_softmax gives), along C; "
        "ignore_index= and reduction= as for cross_entropy.",
        example="l = nll(log_softmax(x @ m.w, over=C), y, over=C)",
        group="losses",
        rule="cross_entropy",
        runtime="nll",
        note="The labels have logp's shape without C ([E0201](diagnostics.md#e0201)) and index C "
        "([E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        name="binary_cross_entropy_with_logits",
        params=(BParam(name="z"), BParam(name="y")),
        signature="binary_cross_entropy_with_logits(z: [..] Float, y: [..] Float) -> [] NonNeg",
        doc="Mean binary cross-entropy of targets y (in [0, 1]) under sigmoid(z), computed stably from the logits z.",
        example="l = binary_cross_entropy_with_logits(x, sigmoid(x))",
        group="losses",
        rule="same_shape_loss",
        runtime="binary_cross_entropy_with_logits",
        note="z and y have one shape ([E0201](diagnostics.md#e0201)) and element type.",
    ),
    Builtin(
        name="kl_div",
        params=(BParam(name="logp"), BParam(name="q")),
        signature="kl_div(logp: [..] Float, q: [..] Float) -> [] NonNeg",
        doc="KL(q || p) of probabilities q from log-probabilities logp: the sum of q * (log(q) - logp) over every "
        "value, divided by the first dim's size when there are two dims or more (torch's batchmean).",
        example="l = kl_div(log_softmax(x, over=D), softmax(x, over=D))",
        group="losses",
        rule="same_shape_loss",
        runtime="kl_div",
        note="logp and q have one shape ([E0201](diagnostics.md#e0201)) and element type.",
    ),
    Builtin(
        name="binary_cross_entropy",
        params=(BParam(name="p"), BParam(name="y"), BParam(name="reduction", required=False, keyword_only=True)),
        signature='binary_cross_entropy(p: [..] Prob, y: [..] Float, reduction="mean") -> [] NonNeg',
        doc="Mean binary cross-entropy of targets y under probabilities p, each log clamped at -100 as torch's "
        "binary_cross_entropy does.",
        example="l = binary_cross_entropy(sigmoid(x), sigmoid(x * 2.0))",
        group="losses",
        rule="binary_cross_entropy",
        runtime="binary_cross_entropy",
        note="p is known to be in [0, 1], a Prob as sigmoid gives ([E0304](diagnostics.md#e0304)); y has its shape "
        "([E0201](diagnostics.md#e0201)).",
    ),
    Builtin(
        name="smooth_l1",
        params=(
            BParam(name="input"),
            BParam(name="target"),
            BParam(name="beta", required=False, keyword_only=True),
            BParam(name="reduction", required=False, keyword_only=True),
        ),
        signature='smooth_l1(input: [..] Float, target: [..] Float, beta=1.0, reduction="mean") -> [] NonNeg',
        doc="Mean of 0.5 * d * d / beta where abs(d) < beta and abs(d) - 0.5 * beta elsewhere, d = input - target "
        "(torch's smooth_l1_loss; beta >= 0).",
        example="l = smooth_l1(x, x * 2.0)",
        group="losses",
        rule="robust_loss",
        runtime="smooth_l1",
    ),
    Builtin(
        name="huber",
        params=(
            BParam(name="input"),
            BParam(name="target"),
            BParam(name="delta", required=False, keyword_only=True),
            BParam(name="reduction", required=False, keyword_only=True),
        ),
        signature='huber(input: [..] Float, target: [..] Float, delta=1.0, reduction="mean") -> [] NonNeg',
        doc="Mean of 0.5 * d * d where abs(d) <= delta and delta * (abs(d) - 0.5 * delta) elsewhere (torch's "
        "huber_loss; delta > 0): smooth_l1 with beta=delta, times delta.",
        example="l = huber(x, x * 2.0, delta=0.5)",
        group="losses",
        rule="robust_loss",
        runtime="huber",
    ),
    Builtin(
        name="mse",
        params=(BParam(name="pred"), BParam(name="target")),
        signature="mse(pred: [..] Float, target: [..] Float) -> [] NonNeg",
        doc="Mean squared error; both operands have the same shape and element type.",
        example="l = mse(x, x * 2.0)",
        group="losses",
        rule="mse",
        runtime="mse",
    ),
    Builtin(
        name="dropout",
        params=(X, BParam(name="p"), BParam(name="mode")),
        signature="dropout(x: [..] Float, p: Float, mode: Mode) -> [..]",
        doc="Zeroes each value with probability p in Train mode (scaling the rest by 1/(1-p)); identity in Eval.",
        example="h = dropout(x, 0.1, mode)",
        group="tensor",
        rule="dropout",
        runtime="dropout",
        note="A literal p must be in [0, 1).",
    ),
    Builtin(
        name="dropout2d",
        params=(X, BParam(name="p"), BParam(name="mode")),
        signature="dropout2d(x: [b C H W] Float, p: Float, mode: Mode) -> [b C H W]",
        doc="Zeroes each whole channel (an H by W plane) with probability p in Train mode, scaling the rest by "
        "1/(1-p), as torch's dropout2d; identity in Eval.",
        example="h = dropout2d(zeros([2 3 4 4]), 0.1, mode)",
        group="tensor",
        rule="dropout2d",
        runtime="dropout2d",
        note="A literal p must be in [0, 1).",
    ),
    Builtin(
        name="where",
        params=(BParam(name="cond"), BParam(name="a"), BParam(name="b")),
        signature="where(cond: [..] Bool, a: [..], b: [..]) -> [..]",
        doc="a where cond holds, b elsewhere; the three broadcast, and a and b may be numbers.",
        example="h = where(x > 0.0, x, 0.0)",
        group="tensor",
        rule="where",
        runtime="where",
    ),
    Builtin(
        name="transpose",
        params=(X,),
        signature="transpose(x: [.. a b]) -> [.. b a]",
        doc="Swaps the last two dims.",
        example="t = transpose(x)",
        group="tensor",
        rule="transpose",
        runtime="transpose",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        name="item",
        params=(X,),
        signature="item(x: [] Float) -> Float / item(x: [] i64) -> Int / item(x: [] Bool) -> Bool",
        doc="The one value of a [] tensor as a number: a Float of a float tensor, an Int of an integer or Index "
        "tensor, a Bool of a Bool tensor (as `x as Float`, `x as Int`, `x as Bool`).",
        example="v = item(sum(x))",
        group="tensor",
        rule="item",
        runtime="item",
    ),
    Builtin(
        name="stop_grad",
        params=(X,),
        signature="stop_grad(x: [..]) -> [..]",
        doc="x, with no gradient flowing back through it; params read only here are not differentiated.",
        example="h = stop_grad(x @ m.w)",
        group="tensor",
        rule="stop_grad",
        runtime="stop_grad",
    ),
    Builtin(
        name="norm",
        params=(X, OVER_OPT, BParam(name="p", required=False, keyword_only=True), KEEP),
        signature="norm(x: Grad[M] or [..] Float, over=d, p=2.0, keep=False) -> [..] NonNeg",
        doc="The 2-norm of all values together (of every field of a gradient); of a tensor, also along dim d or dims "
        "(d1, d2), and the p-norm with p= (p=inf: the largest absolute value).",
        example="n = norm(x)",
        group="tensor",
        rule="norm",
        runtime="norm",
    ),
    Builtin(
        name="reshape",
        params=(X, BParam(name="shape", kind=ParamKind.SHAPE)),
        signature="reshape(x: [..], shape) -> shape",
        doc="The values of x laid out in a new shape, written as a type; the element counts must be equal.",
        example="r = reshape(x, [b 2 2])",
        group="shape",
        rule="reshape",
        runtime="reshape",
        note="Counts that are not provably equal are [E0214](diagnostics.md#e0214); those equal when a division "
        "comes out exact ([b T NH (E/NH)] of [b T E]) are checked when it runs.",
    ),
    Builtin(
        name="permute",
        params=(X, BParam(name="order", kind=ParamKind.AXES)),
        signature="permute(x: [..], order) -> order",
        doc="The dims of x reordered by name: permute(x, [b H T D]) of [b T H D]; each dim of x once.",
        example="p = permute(x, [D b])",
        group="shape",
        rule="permute",
        runtime="permute",
        note="Each of x's dims once, named unambiguously ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        name="concat",
        params=(BParam(name="a"), BParam(name="b"), OVER),
        signature="concat(a: [.. A ..], b: [.. B ..], over=A) -> [.. (A+B) ..]",
        doc="a and b joined along one dim; their other dims are the same.",
        example="c = concat(x, x, over=D)",
        group="shape",
        rule="concat",
        runtime="concat",
    ),
    Builtin(
        name="stack",
        params=(BParam(name="a"),),
        signature="stack(a: [..], b: [..], ...) -> [n ..]",
        doc="n tensors of one shape as one, with a new leading dim of size n.",
        example="s = stack(x, x, x)",
        group="shape",
        rule="stack",
        runtime="stack",
        variadic=True,
    ),
    Builtin(
        name="chunk",
        params=(X, BParam(name="n"), OVER),
        signature="chunk(x: [.. D ..], n: Int, over=D) -> ([.. (D/n) ..], ...)",
        doc="x cut into n equal parts along one dim: a tuple of n tensors; n is a number and must divide D.",
        example="h1, h2 = chunk(x, 2, over=D)",
        group="shape",
        rule="chunk",
        runtime="chunk",
    ),
    Builtin(
        name="pad",
        params=(X, BParam(name="pad"), BParam(name="value", required=False, keyword_only=True)),
        signature="pad(x: [..], (left, right, ...), value=0.0) -> [..]",
        doc="x padded with value: the first pair of sizes pads the last dim, the next the one before it, ... (torch's "
        "F.pad); each size is an integer literal or a dim, so pad(x, (1, 2)) of [b W] is [b (W+3)].",
        example="p = pad(x, (1, 2))",
        group="shape",
        rule="pad",
        runtime="pad",
    ),
    Builtin(
        name="flip",
        params=(X, OVER),
        signature="flip(x: [..], over=d) -> [..]",
        doc="x with the order of its values reversed along dim d, or dims over=(d1, d2).",
        example="f = flip(x, over=D)",
        group="shape",
        rule="flip",
        runtime="flip",
    ),
    Builtin(
        name="pixel_shuffle",
        params=(X, BParam(name="r")),
        signature="pixel_shuffle(x: [.. (C*r*r) H W], r) -> [.. C (H*r) (W*r)]",
        doc="Each r*r channels become an r by r block of pixels (torch's pixel_shuffle); r is an integer literal or a "
        "dim, and r*r divides the channels.",
        example="p = pixel_shuffle(zeros([2 8 3 3]), 2)",
        group="shape",
        rule="pixel_shuffle",
        runtime="pixel_shuffle",
        note="([E0214](diagnostics.md#e0214))",
    ),
    Builtin(
        name="pixel_unshuffle",
        params=(X, BParam(name="r")),
        signature="pixel_unshuffle(x: [.. C H W], r) -> [.. (C*r*r) (H/r) (W/r)]",
        doc="The inverse of pixel_shuffle: each r by r block of pixels becomes r*r channels; r divides H and W.",
        example="p = pixel_unshuffle(zeros([2 2 4 4]), 2)",
        group="shape",
        rule="pixel_shuffle",
        runtime="pixel_unshuffle",
        note="([E0214](diagnostics.md#e0214))",
    ),
    Builtin(
        name="conv2d",
        params=(
            BParam(name="x"),
            BParam(name="w"),
            BParam(name="bias", required=False),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
            BParam(name="dilation", required=False, keyword_only=True),
            BParam(name="groups", required=False, keyword_only=True),
        ),
        signature="conv2d(x: [b Ci H W] Float, w: [Co (Ci/g) KH KW] Float, bias: [Co], stride=s, padding=p, dilation=d, "
        "groups=g) -> [b Co ((H+2*p-d*(KH-1)-1)/s+1) ((W+2*p-d*(KW-1)-1)/s+1)]",
        doc="2-D convolution (cross-correlation, as torch's conv2d) of x by the kernels w, plus an optional bias per "
        "output channel; stride, zero padding, dilation and groups are integer literals or dims, 1, 0, 1 and 1 "
        "when left out.",
        example="h = conv2d(zeros([2 1 5 5]), ones([3 1 3 3]), stride=2, padding=1)",
        group="conv",
        rule="conv2d",
        runtime="conv2d",
        note="x's channels are groups times w's dim 1, groups divide Co, and the kernel fits in the padded input "
        "([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        name="conv1d",
        params=(
            BParam(name="x"),
            BParam(name="w"),
            BParam(name="bias", required=False),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
            BParam(name="dilation", required=False, keyword_only=True),
            BParam(name="groups", required=False, keyword_only=True),
        ),
        signature="conv1d(x: [b Ci L] Float, w: [Co (Ci/g) K] Float, bias: [Co], stride=s, padding=p, dilation=d, groups=g) "
        "-> [b Co ((L+2*p-d*(K-1)-1)/s+1)]",
        doc="1-D convolution (cross-correlation, as torch's conv1d) of x by the kernels w, plus an optional bias; "
        "stride, padding, dilation and groups as for conv2d.",
        example="h = conv1d(zeros([2 1 8]), ones([3 1 3]))",
        group="conv",
        rule="conv1d",
        runtime="conv1d",
        note="x's channels are groups times w's dim 1, and groups divide Co ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        name="conv_transpose2d",
        params=(
            BParam(name="x"),
            BParam(name="w"),
            BParam(name="bias", required=False),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
            BParam(name="output_padding", required=False, keyword_only=True),
            BParam(name="groups", required=False, keyword_only=True),
            BParam(name="dilation", required=False, keyword_only=True),
        ),
        signature="conv_transpose2d(x: [b Ci H W] Float, w: [Ci (Co/g) KH KW] Float, bias: [Co], stride=s, padding=p, "
        "output_padding=op, groups=g, dilation=d) -> [b Co ((H-1)*s-2*p+d*(KH-1)+op+1) ((W-1)*s-2*p+d*(KW-1)+op+1)]",
        doc="Transposed 2-D convolution (torch's conv_transpose2d: the gradient of conv2d with respect to its input), "
        "w laid out as torch stores it, [Ci Co/g KH KW]; output_padding, below the stride (or the dilation), adds "
        "rows and columns at the end.",
        example="h = conv_transpose2d(zeros([2 3 4 4]), ones([3 5 3 3]), stride=2, padding=1, output_padding=1)",
        group="conv",
        rule="conv_transpose2d",
        runtime="conv_transpose2d",
        note="x's channels Ci are w's first dim, and groups divide them ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        name="max_pool2d",
        params=(
            BParam(name="x"),
            BParam(name="k"),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
        ),
        signature="max_pool2d(x: [b C H W] Float, k: Int, stride=k, padding=p) -> [b C ((H+2*p-k)/s+1) ((W+2*p-k)/s+1)]",
        doc="The largest value of each k by k window of the last two dims, windows stride apart (k when left out), "
        "the input padded with -inf by padding (0 when left out), as torch's max_pool2d; each is an integer "
        "literal or a dim.",
        example="p = max_pool2d(zeros([2 3 4 4]), 2)",
        group="conv",
        rule="pool2d",
        runtime="max_pool2d",
        note="padding is at most k/2 ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        name="avg_pool2d",
        params=(
            BParam(name="x"),
            BParam(name="k"),
            BParam(name="stride", required=False, keyword_only=True),
            BParam(name="padding", required=False, keyword_only=True),
        ),
        signature="avg_pool2d(x: [b C H W] Float, k: Int, stride=k, padding=p) -> [b C ((H+2*p-k)/s+1) ((W+2*p-k)/s+1)]",
        doc="The mean of each k by k window of the last two dims, windows stride apart (k when left out), the input "
        "padded with zeros by padding (0 when left out) that count in the mean, as torch's avg_pool2d; each is "
        "an integer literal or a dim.",
        example="p = avg_pool2d(zeros([2 3 5 5]), 2)",
        group="conv",
        rule="pool2d",
        runtime="avg_pool2d",
        note="padding is at most k/2 ([E0301](diagnostics.md#e0301)).",
    ),
    Builtin(
        name="batch_norm",
        params=(
            X,
            BParam(name="running_mean"),
            BParam(name="running_var"),
            BParam(name="weight"),
            BParam(name="bias"),
            BParam(name="mode"),
            OVER,
            BParam(name="momentum", required=False, keyword_only=True),
            BParam(name="eps", required=False, keyword_only=True),
            BParam(name="num_batches_tracked", required=False, keyword_only=True),
        ),
        signature="batch_norm(x: [.. C ..] Float, running_mean: [C], running_var: [C], weight: [C], bias: [C], mode: Mode, "
        "over=C, momentum=0.1, eps=1e-5, num_batches_tracked=n) -> [.. C ..]",
        doc="Batch normalisation over every dim but C (torch's F.batch_norm): in Train mode with the batch's mean "
        "and biased variance, updating the running statistics in place (momentum, unbiased variance); in Eval "
        "with the running statistics.",
        example="h = batch_norm(x, m.rm, m.rv, ones([D]), zeros([D]), mode, over=D)",
        group="layers",
        rule="batch_norm",
        runtime="batch_norm",
        note="The running statistics (and num_batches_tracked, a [] i64 counted up in Train mode) are buffers of "
        "a model ([E0301](diagnostics.md#e0301)). See [Batch normalisation](#batch-normalisation).",
    ),
    Builtin(
        name="group_norm",
        params=(
            X,
            BParam(name="groups"),
            BParam(name="weight", required=False, keyword_only=True),
            BParam(name="bias", required=False, keyword_only=True),
            BParam(name="eps", required=False, keyword_only=True),
        ),
        signature="group_norm(x: [b C ..] Float, groups, weight=w, bias=b, eps=1e-5) -> [b C ..]",
        doc="The channels C in groups of C/groups, each normalised over its channels and the dims after C (torch's "
        "group_norm, biased variance); weight and bias [C] are optional.",
        example="h = group_norm(x, 2)",
        group="layers",
        rule="group_norm",
        runtime="group_norm",
        note="groups divides C ([E0214](diagnostics.md#e0214)).",
    ),
    Builtin(
        name="scaled_dot_product_attention",
        params=(
            BParam(name="q"),
            BParam(name="k"),
            BParam(name="v"),
            BParam(name="mask", required=False, keyword_only=True),
            BParam(name="is_causal", required=False, keyword_only=True),
            BParam(name="dropout_p", required=False, keyword_only=True),
            BParam(name="scale", required=False, keyword_only=True),
            BParam(name="mode", required=False, keyword_only=True),
        ),
        signature="scaled_dot_product_attention(q: [.. L E] Float, k: [.. S E] Float, v: [.. S Ev] Float, mask=m, "
        "is_causal=False, dropout_p=0.0, scale=s, mode=Mode) -> [.. L Ev]",
        doc="softmax(q @ transpose(k) * scale + mask, over=-1) @ v, as torch's F.scaled_dot_product_attention: scale "
        "1/sqrt(E) by default; a Bool mask is True where to attend, a float one is added; is_causal=True attends "
        "to the lower triangle; dropout_p drops weights in Train mode (mode=).",
        example="a = scaled_dot_product_attention(x, x, x)",
        group="layers",
        rule="attention",
        runtime="scaled_dot_product_attention",
        note="The mask broadcasts to [.. L S] ([E0214](diagnostics.md#e0214)). See [Attention](#attention).",
    ),
    Builtin(
        name="one_hot",
        params=(BParam(name="labels"), BParam(name="over", keyword_only=True)),
        signature="one_hot(labels: [..] Index[C], over=C) -> [.. C] Float",
        doc="A float tensor with a 1 at each label's position along a new last dim C, 0 elsewhere.",
        example="h = one_hot(y, over=C)",
        group="tensor",
        rule="one_hot",
        runtime="one_hot",
        note="`over=` names the dim the labels index ([E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        name="arange",
        params=(BParam(name="n"),),
        signature="arange(n: a dim) -> [n] Index[n]",
        doc="The positions 0, 1, ..., n-1 of a dim n, as labels of that dim: m.pos[arange(T)] is [T E].",
        example="p = arange(C)",
        group="create",
        rule="arange",
        runtime="arange",
    ),
    Builtin(
        name="randn",
        params=(SHAPE, SEED),
        signature="randn(shape: [..] Float, seed=Int) -> [..] Float",
        doc="Standard normal values of a plain float type, deterministic for the seed.",
        example="r = randn([4 D] f64, seed=1)",
        group="create",
        rule="randn",
        runtime="randn",
        lowering=Lowering.SHAPE,
    ),
    Builtin(
        name="randint",
        params=(SHAPE, SEED),
        signature="randint(shape: [..] Index[C], seed=Int) -> [..] Index[C]",
        doc="Uniform integers in 0..C-1, deterministic for the seed.",
        example="r = randint([4] Index[C], seed=2)",
        group="create",
        rule="randint",
        runtime="randint",
        lowering=Lowering.SHAPE_INDEX,
    ),
    Builtin(
        name="zeros",
        params=(SHAPE,),
        signature="zeros(shape: [..] T) -> [..] T",
        doc="A tensor of zeros, of any element type.",
        example="z = zeros([D] i64)",
        group="create",
        rule="filled",
        runtime="zeros",
        lowering=Lowering.SHAPE,
    ),
    Builtin(
        name="ones",
        params=(SHAPE,),
        signature="ones(shape: [..] T) -> [..] T",
        doc="A tensor of ones, of any element type.",
        example="z = ones([D] Bool)",
        group="create",
        rule="filled",
        runtime="ones",
        lowering=Lowering.SHAPE,
    ),
    Builtin(
        name="tril",
        params=(X, BParam(name="diagonal", required=False, keyword_only=True)),
        signature="tril(x: [.. a b], diagonal=0) -> [.. a b]",
        doc="x with the values above the diagonal of its last two dims zeroed (above diagonal k with diagonal=k).",
        example="t = tril(x)",
        group="create",
        rule="triangle",
        runtime="tril",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        name="triu",
        params=(X, BParam(name="diagonal", required=False, keyword_only=True)),
        signature="triu(x: [.. a b], diagonal=0) -> [.. a b]",
        doc="x with the values below the diagonal of its last two dims zeroed (below diagonal k with diagonal=k).",
        example="t = triu(x, diagonal=1)",
        group="create",
        rule="triangle",
        runtime="triu",
        note="([E0210](diagnostics.md#e0210))",
    ),
    Builtin(
        name="eye",
        params=(BParam(name="n"),),
        signature="eye(n: a dim) -> [n n] Float",
        doc="The identity matrix of a dim n: ones on the diagonal, zeros elsewhere.",
        example="i = eye(D)",
        group="create",
        rule="eye",
        runtime="eye",
    ),
    Builtin(
        name="full",
        params=(SHAPE, BParam(name="value")),
        signature="full(shape: [..] T, value) -> [..] T",
        doc="A tensor of one number, of any element type; the number suits the element type.",
        example="f = full([D C] NonNeg, 0.5)",
        group="create",
        rule="full",
        runtime="full",
        lowering=Lowering.SHAPE,
        note="An Int for integer types, True or False for Bool, a literal in range for NonNeg and Prob, and for "
        "Index[C] a label in range known when the program is checked (a literal, a dim or an Int constant) "
        "([E0302](diagnostics.md#e0302), [E0304](diagnostics.md#e0304), [E0305](diagnostics.md#e0305)).",
    ),
    Builtin(
        name="rand",
        params=(SHAPE, SEED),
        signature="rand(shape: [..] Float, seed=Int) -> [..] Prob",
        doc="Uniform values in [0, 1), deterministic for the seed; being in [0, 1], they are a Prob.",
        example="u = rand([4 D], seed=3)",
        group="create",
        rule="rand",
        runtime="rand",
        lowering=Lowering.SHAPE,
    ),
    Builtin(
        name="multinomial",
        params=(BParam(name="p"), OVER, SEED),
        signature="multinomial(p: [.. V ..] NonNeg, over=V, seed=Int) -> [..] Index[V]",
        doc="One label of V drawn for each slice of p along V, with probabilities p (weights >= 0, normalised); "
        "deterministic for the seed.",
        example="s = multinomial(softmax(x, over=D), over=D, seed=4)",
        group="create",
        rule="multinomial",
        runtime="multinomial",
        note="p is known to be >= 0, as softmax gives ([E0304](diagnostics.md#e0304)).",
    ),
    Builtin(
        name="categorical",
        params=(BParam(name="p"), OVER, SEED),
        signature="categorical(p: [.. V ..] NonNeg, over=V, seed=Int) -> [..] Index[V]",
        doc="The same draw as multinomial: one label of V for each slice of p along V, from probabilities p "
        "(not logits, unlike JAX's categorical).",
        example="s = categorical(softmax(x, over=D), over=D, seed=4)",
        group="create",
        rule="multinomial",
        runtime="multinomial",
    ),
    Builtin(
        name="print",
        params=(BParam(name="all_ranks", required=False, keyword_only=True),),
        signature="print(values..., all_ranks=False)",
        doc="Prints the values on one line, separated by spaces; in a data-parallel run only rank 0 prints, "
        "unless all_ranks=True.",
        example='print("loss", x)',
        group="other",
        rule="print",
        runtime="print",
        variadic=True,
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        name="rank",
        params=(),
        signature="rank() -> Int",
        doc="This process's rank in a data-parallel run (quiver run --nproc, torchrun): 0 to world_size()-1; "
        "0 when not distributed.",
        example="r = rank()",
        group="other",
        rule="process",
        runtime="rank",
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        name="world_size",
        params=(),
        signature="world_size() -> Int",
        doc="How many processes train together in a data-parallel run; 1 when not distributed.",
        example="n = world_size()",
        group="other",
        rule="process",
        runtime="world_size",
        note="See [Distributed training](runtime.md#distributed-training).",
    ),
    Builtin(
        name="range",
        params=(BParam(name="start"), BParam(name="stop", required=False), BParam(name="step", required=False)),
        signature="range(stop: Int) / range(start: Int, stop: Int, step: Int)",
        doc="The integers start, start+step, ... below stop; only in a for loop.",
        example="for i in range(3):\n        print(i)",
        group="other",
        rule="range",
        runtime=None,
        note="([E0414](diagnostics.md#e0414))",
    ),
    Builtin(
        name="Train",
        params=(SEED,),
        signature="Train(seed=Int) -> Mode",
        doc="Training mode: dropout is on, with randomness from the seed.",
        example="t = Train(seed=3)",
        group="other",
        rule="train",
        runtime="Train",
    ),
]

for _b in _BUILTINS:
    BUILTINS.setdefault(_b.name, _b)

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
        name="init",
        params=(SEED,),
        signature="M.init(seed=Int) -> M",
        doc="A new model with its params and buffers initialised, deterministically for the seed.",
        example="m2 = M.init(seed=0)",
        group="other",
        rule="init",
        runtime=None,
    ),
}


# The families whose modules declare each spec beside its typing rule:
# importing one registers its built-ins (this import list is the registry).
from . import checkpoint, data, gradients, metrics, optim, schedules  # noqa: E402, F401
