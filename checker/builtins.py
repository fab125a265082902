"""The built-in functions: their parameters, signatures and one-line docs.

Their typing rules live in checker/body/builtin_rules.py (`BuiltinRules._builtin_*`); this
table is what argument matching, completion, hover and signature help read.
A parameter's `kind` says how its argument is read: most are expressions;
`dim` takes a dim name (`over=C`), `shape` a shape literal (`[64 D]`), `fn` a
function name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BParam:
    name: str
    kind: str = "value"  # value | dim | shape | fn
    required: bool = True
    keyword_only: bool = False


@dataclass(frozen=True)
class Builtin:
    name: str
    params: tuple[BParam, ...]
    signature: str
    doc: str
    variadic: bool = False  # extra positional arguments allowed (print, value_and_grad)


def _b(name, params, signature, doc, variadic=False):
    return Builtin(name, tuple(params), signature, doc, variadic)


X = BParam("x")
OVER = BParam("over", "dim", True, True)
OVER_OPT = BParam("over", "dim", False, True)
SEED = BParam("seed", keyword_only=True)

BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in [
        _b("relu", [X], "relu(x: [..] Float) -> [..] NonNeg", "max(x, 0), elementwise."),
        _b("tanh", [X], "tanh(x: [..] Float) -> [..] Float", "Hyperbolic tangent, elementwise."),
        _b("sigmoid", [X], "sigmoid(x: [..] Float) -> [..] Prob", "1 / (1 + exp(-x)), elementwise."),
        _b("exp", [X], "exp(x: [..] Float) -> [..] NonNeg", "e to the power x, elementwise."),
        _b("log", [X], "log(x: [..] Float) -> [..] Float", "Natural logarithm, elementwise."),
        _b("sqrt", [X], "sqrt(x: [..] Float) -> [..] NonNeg", "Square root, elementwise."),
        _b("abs", [X], "abs(x: [..]) -> [..] NonNeg", "Absolute value, elementwise."),
        _b("softmax", [X, OVER], "softmax(x: [..] Float, over=d) -> [..] Prob",
           "Normalised exponentials along dim d; each slice sums to 1."),
        _b("log_softmax", [X, OVER], "log_softmax(x: [..] Float, over=d) -> [..] Float",
           "log(softmax(x, over=d)), computed stably."),
        _b("sum", [X, OVER_OPT], "sum(x: [..], over=d) -> [..]", "Sum along dim d, or of every value when over= is left out."),
        _b("mean", [X, OVER_OPT], "mean(x: [..] Float, over=d) -> [..]", "Mean along dim d, or of every value."),
        _b("max", [X, OVER_OPT], "max(x: [..], over=d) -> [..]", "Largest value along dim d, or of every value."),
        _b("min", [X, OVER_OPT], "min(x: [..], over=d) -> [..]", "Smallest value along dim d, or of every value."),
        _b("argmax", [X, OVER], "argmax(x: [..], over=d) -> [..] Index[d]",
           "Position of the largest value along dim d: an Index into d."),
        _b("cross_entropy", [BParam("logits"), BParam("labels"), OVER],
           "cross_entropy(logits: [.. C ..] Float, labels: [..] Index[C], over=C) -> [] NonNeg",
           "Mean cross-entropy of the labels under softmax(logits, over=C). The labels must index C."),
        _b("mse", [BParam("pred"), BParam("target")], "mse(pred: [..] Float, target: [..] Float) -> [] NonNeg",
           "Mean squared error; both operands have the same shape."),
        _b("dropout", [X, BParam("p"), BParam("mode")], "dropout(x: [..] Float, p: Float, mode: Mode) -> [..]",
           "Zeroes each value with probability p in Train mode (scaling the rest by 1/(1-p)); identity in Eval."),
        _b("where", [BParam("cond"), BParam("a"), BParam("b")], "where(cond: [..] Bool, a: [..], b: [..]) -> [..]",
           "a where cond holds, b elsewhere (broadcast)."),
        _b("stop_grad", [X], "stop_grad(x: [..]) -> [..]",
           "x, with no gradient flowing back through it; params read only here are not differentiated."),
        _b("norm", [X], "norm(x: Grad[M] or [..] Float) -> [] NonNeg",
           "The 2-norm of all values together (of every field of a gradient)."),
        _b("transpose", [X], "transpose(x: [.. a b]) -> [.. b a]", "Swaps the last two dims."),
        _b("randn", [BParam("shape", "shape"), SEED], "randn(shape: [..] Float, seed=Int) -> [..] Float",
           "Standard normal values, deterministic for the seed."),
        _b("randint", [BParam("shape", "shape"), SEED], "randint(shape: [..] Index[C], seed=Int) -> [..] Index[C]",
           "Uniform integers in 0..C-1, deterministic for the seed."),
        _b("zeros", [BParam("shape", "shape")], "zeros(shape: [..] T) -> [..] T", "A tensor of zeros."),
        _b("ones", [BParam("shape", "shape")], "ones(shape: [..] T) -> [..] T", "A tensor of ones."),
        _b("print", [], "print(values...)", "Prints the values on one line, separated by spaces.", variadic=True),
        _b("range", [BParam("start"), BParam("stop", required=False), BParam("step", required=False)],
           "range(stop: Int) / range(start: Int, stop: Int, step: Int)",
           "The integers start, start+step, ... below stop; only in a for loop."),
        _b("value_and_grad", [BParam("f", "fn"), BParam("m")],
           "value_and_grad(f, m: M, args...) -> ([] Float, Grad[M])",
           "Calls f(m, args...) and returns its value and its gradient with respect to the params of m.",
           variadic=True),
        _b("Train", [SEED], "Train(seed=Int) -> Mode", "Training mode: dropout is on, with randomness from the seed."),
    ]
}

# Names that are values rather than functions.
CONSTANTS = {"Eval": "Eval: Mode — evaluation mode: dropout is off."}

# Model "methods": `Mlp.init(seed=0)`.
MODEL_METHODS = {
    "init": Builtin("init", (SEED,), "M.init(seed=Int) -> M",
                    "A new model with its params and buffers initialised, deterministically for the seed."),
}
