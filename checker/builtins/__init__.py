"""The built-in functions: one declarative spec per built-in, beside its rule.

A `Builtin` (spec.py) holds everything the tools know about one built-in: its
parameters (how each argument is read, which are keyword-only or optional),
the signature and one-line doc that hover, completion and signature help
show, an example, the refinement an elementwise rule gives its result, the
facts the engine, lints and compiler read (rest_ok, role, dim_args, ...), and
how a call compiles: the `rt` function it becomes and how its arguments map
to that function. Its typing rule is the function that its family module
decorates with `@builtin(spec, ...)` right below the spec (registry.py).

The family modules imported below are the registry: importing one registers
its built-ins and rules into `BUILTINS` and `RULES`. From that table come:
argument matching, hover, completion and signature help (checker/), the
compiled call (checker/compile_body.py), the built-in tables of
docs/language.md and the TextMate grammar's list of built-ins
(`scripts/gen-builtins` writes both; tests check they are in sync), and the
tests that every spec has a typing rule and a runtime function that `rt`
exports. Adding a built-in: its spec and rule (often an existing one) in its
family module, its run-time function in runtime/_ops.py, its tests.
"""

from __future__ import annotations

from ..types import GROUP_OVERRIDABLE as T_OVERRIDABLE
from ..types import GROUPED_OPTIMIZERS as T_GROUPED
from ..types import OPTIMIZERS as T_OPTIMIZERS
from ..types import SCHEDULES as T_SCHEDULES
from . import (  # noqa: F401  (the families: importing one registers its built-ins)
    conv,
    creation,
    elementwise,
    labels,
    layers,
    losses,
    norms,
    process,
    random,
    reductions,
    shapes,
    tensors,
)
from .registry import BUILTINS
from .spec import PATH, SEED, SHAPE, BParam, Builtin, Lowering, ParamKind, X

__all__ = ["BUILTINS", "CONSTANTS", "GROUPS", "INITIALIZERS", "MODEL_METHODS", "Builtin", "Lowering", "ParamKind"]

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

# The built-ins not yet moved into a family module.
_BUILTINS = [
    # log(x): the logarithm; log(step, loss=l, ...): metrics (checker/body/metrics_rules.py)
    Builtin(
        name="log",
        params=(X,),
        signature="log(x: [..] Float) -> [..] Float / log(x: Float) -> Float / log(step: Int, name=value, ...)",
        doc="Natural logarithm, elementwise; of a number, a number. With names, `log(step, loss=l)` records "
        "metrics: see [Logging metrics](#logging-metrics).",
        example="h = log(x)",
        group="elementwise",
        rule="log",
        runtime="log",
        number_runtime="log_of_number",
        rest_ok=True,
    ),
    Builtin(
        name="value_and_grad",
        params=(BParam(name="f", kind=ParamKind.FN), BParam(name="m")),
        signature="value_and_grad(f, m: M, args...) -> ([] Float, Grad[M])",
        doc="Calls f(m, args...) and returns its value and its gradient with respect to the params of m.",
        example="l, g = value_and_grad(loss, m, x, y)",
        group="other",
        rule="value_and_grad",
        runtime="value_and_grad",
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    Builtin(
        name="grad",
        params=(BParam(name="f", kind=ParamKind.FN), BParam(name="m")),
        signature="grad(f, m: M, args...) -> Grad[M]",
        doc="The gradient of f(m, args...) with respect to the params of m, as value_and_grad gives it, without the value.",
        example="g = grad(loss, m, x, y)",
        group="other",
        rule="grad",
        runtime="grad",
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    Builtin(
        name="jvp",
        params=(BParam(name="f", kind=ParamKind.FN), BParam(name="m"), BParam(name="t")),
        signature="jvp(f, m: M, t: Grad[M], args...) -> (Y, Y)",
        doc="Forward mode: f(m, args...) and its derivative along the tangent t (a direction in the params of m).",
        example="l, dl = jvp(loss, m, zeros(Grad[M]), x, y)",
        group="other",
        rule="jvp",
        runtime="jvp",
        variadic=True,
        note="See [Gradients](#gradients).",
    ),
    *(
        Builtin(
            name=kind,
            params=(
                BParam(name="m"),
                *(BParam(name=n, required=False, keyword_only=True) for n, _, _ in hyper),
                *((BParam(name="groups", required=False, keyword_only=True),) if kind in T_GROUPED else ()),
            ),
            signature=f"{kind}(m: M, "
            + ", ".join(f"{n}={d}" for n, _, d in hyper)
            + (", groups=Group(...)" if kind in T_GROUPED else "")
            + f") -> {kind}[M]",
            doc=doc,
            example=f"opt = {kind}(m, lr=0.01)",
            group="other",
            rule="optimizer",
            runtime=kind,
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
        name="Group",
        params=(
            BParam(name="max_rank", required=False, keyword_only=True),
            BParam(name="min_rank", required=False, keyword_only=True),
            BParam(name="names", required=False, keyword_only=True),
            *(BParam(name=n, required=False, keyword_only=True) for n in T_OVERRIDABLE),
        ),
        signature="Group(max_rank=Int, min_rank=Int, names=Str, lr=.., weight_decay=.., ...) -> Group",
        doc="A param group for an optimizer's groups=: the params it selects (by rank, by a glob on their paths) "
        "and the hyper-parameters it sets for them.",
        example="opt = AdamW(m, weight_decay=0.0, groups=Group(min_rank=2, weight_decay=0.1))",
        group="other",
        rule="param_group",
        runtime="Group",
        note="See [Per-field options](#per-field-options-param-groups).",
    ),
    Builtin(
        name="clip_grad_norm",
        params=(
            BParam(name="g"),
            BParam(name="max_norm"),
            BParam(name="norm_type", required=False, keyword_only=True),
            BParam(name="error_if_nonfinite", required=False, keyword_only=True),
        ),
        signature="clip_grad_norm(g: Grad[M], max_norm: Float, norm_type=2.0, error_if_nonfinite=False) -> (Grad[M], [] Float)",
        doc="g scaled so that its total norm is at most max_norm, and that norm, as torch.nn.utils.clip_grad_norm_.",
        example="g, n = clip_grad_norm(grad(loss, m, x, y), 1.0)",
        group="other",
        rule="clip_grad_norm",
        runtime="clip_grad_norm",
        note="See [Clipping gradients](#clipping-gradients).",
    ),
    *(
        Builtin(
            name=kind,
            params=(
                BParam(name="opt"),
                *(BParam(name=n, required=d == "required", keyword_only=True) for n, _, d in hyper),
            ),
            signature=f"{kind}(opt, "
            + ", ".join(f"{n}: {w}" if d == "required" else f"{n}={d}" for n, w, d in hyper)
            + f") -> {kind}",
            doc=doc,
            example=f"sched = {kind}(SGD(m, lr=0.1), {example})",
            group="other",
            rule="schedule",
            runtime=kind,
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
    # Checkpoints (checker/body/checkpoint_rules.py): a model's or optimizer's
    # state, or several values by keyword, to one torch file and back.
    Builtin(
        name="save",
        params=(PATH, BParam(name="value", required=False)),
        signature="save(path: Str, m) / save(path: Str, model=m, opt=opt, step=Int, ...)",
        doc="Writes a model's or optimizer's state (a torch state dict), or several models, optimizers and "
        "numbers under their keywords, to one file (torch.save); the path is relative to the `.qv` file.",
        example='save("ckpt.pt", m)',
        group="data",
        rule="checkpoint",
        runtime="save_checkpoint",
        note="See [Checkpoints](#checkpoints).",
    ),
    Builtin(
        name="load",
        params=(
            PATH,
            BParam(name="value", required=False),
            BParam(name="names", required=False, keyword_only=True),
            BParam(name="transpose", required=False, keyword_only=True),
            BParam(name="strict", required=False, keyword_only=True),
        ),
        signature="load(path: Str, m, names=.., transpose=.., strict=True) / load(path: Str, model=m, opt=opt, step=0, ...)"
        " -> the numbers",
        doc="Reads what `save` wrote into the models and optimizers given, in place, and returns the numbers of the "
        "number keywords (the given values fix their types).",
        example='step = load("ckpt.pt", step=0)',
        group="data",
        rule="checkpoint",
        runtime="load_checkpoint",
        note="See [Checkpoints](#checkpoints).",
    ),
    # Data: readers whose shapes bind dims known only at run time.
    Builtin(
        name="load_npy",
        params=(PATH, SHAPE),
        signature="load_npy(path: Str, shape: [n ..] T) -> [n ..] T",
        doc="The array of a `.npy` file, checked against the shape; a new name in the shape is a size read from the "
        "file (a dim known only at run time). The path is relative to the `.qv` file.",
        example='d = load_npy("data.npy", [n D])',
        group="data",
        rule="read_file",
        runtime="load_npy",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_npz",
        params=(PATH, BParam(name="key"), SHAPE),
        signature="load_npz(path: Str, key: Str, shape: [n ..] T) -> [n ..] T",
        doc="The array `key` of a `.npz` file, checked against the shape (new names are sizes read from the file).",
        example='d = load_npz("digits.npz", "x", [n D])',
        group="data",
        rule="read_file",
        runtime="load_npz",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_csv",
        params=(
            PATH,
            SHAPE,
            BParam(name="header", required=False, keyword_only=True),
            BParam(name="delimiter", required=False, keyword_only=True),
            BParam(name="columns", required=False, keyword_only=True),
        ),
        signature='load_csv(path: Str, shape: [n F] T, header=False, delimiter=",", columns=[..]) -> [n F] T',
        doc="The numeric columns of a CSV file as rows (`[n F]`, or `[n]` for one column), all of them or those "
        "`columns=` picks (an Int, a header's name, or a list of Ints such as `[0, 3]`); header=True skips the "
        "first line.",
        example='d = load_csv("table.csv", [n D], header=True)',
        group="data",
        rule="read_file",
        runtime="load_csv",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_safetensors",
        params=(PATH, BParam(name="key"), SHAPE),
        signature="load_safetensors(path: Str, key: Str, shape: [n ..] T) -> [n ..] T",
        doc="The tensor `key` of a `.safetensors` file, checked against the shape (new names are sizes read from the "
        "file).",
        example='d = load_safetensors("weights.safetensors", "w", [n D])',
        group="data",
        rule="read_file",
        runtime="load_safetensors",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_chars",
        params=(PATH, SHAPE),
        signature="load_chars(path: Str, shape: [n] Index[V]) -> ([n] Index[V], Vocab[V])",
        doc="A UTF-8 text as the ids of its characters, and its vocabulary (its characters sorted; at most V of "
        "them) to `decode` ids back to text.",
        example='ids, vocab = load_chars("text.txt", [n] Index[D])',
        group="data",
        rule="load_chars",
        runtime="load_chars",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="decode",
        params=(BParam(name="vocab"), BParam(name="ids")),
        signature="decode(vocab: Vocab[V], ids: [n] Index[V]) -> Str",
        doc="The text of character ids.",
        example='ids, vocab = load_chars("text.txt", [n] Index[D])\ns = decode(vocab, ids)',
        group="data",
        rule="decode",
        runtime="decode",
    ),
    Builtin(
        name="encode",
        params=(BParam(name="vocab"), BParam(name="text")),
        signature="encode(vocab: Vocab[V], text: Str) -> [?] Index[V]",
        doc="The ids of a text's characters (each must be in the vocabulary).",
        example='ids, vocab = load_chars("text.txt", [n] Index[D])\np = encode(vocab, "hello")',
        group="data",
        rule="encode",
        runtime="encode",
    ),
    Builtin(
        name="batches",
        params=(
            BParam(name="size", keyword_only=True),
            BParam(name="shuffle", required=False, keyword_only=True),
            BParam(name="drop_last", required=False, keyword_only=True),
        ),
        signature="batches(x: [n ..], y: [n ..], ..., size=Int, shuffle=Int, drop_last=False) -> iterable of ([batch ..], ...)",
        doc="The mini-batches of tensors that share a first dim, for a `for` loop: `size` rows each, in order or "
        "shuffled by the seed `shuffle=` (torch.randperm), the last batch short unless drop_last=True.",
        example="for xb in batches(x, size=4, shuffle=0):\n    print(xb)",
        group="data",
        rule="batches",
        runtime="batches",
        lowering=Lowering.READER,
        variadic=True,
    ),
    Builtin(
        name="randperm",
        params=(BParam(name="n"), SEED),
        signature="randperm(n, seed=Int) -> [n] Index[n]",
        doc="The numbers 0..n-1 in a random order, deterministic for the seed (torch.randperm); n is a dim or an Int.",
        example="p = randperm(D, seed=0)",
        group="data",
        rule="randperm",
        runtime="randperm",
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

# Initialisers of model fields (`param w: [D H] = normal(0.0, 0.02)`): not
# functions of a body, but highlighted as built-ins.
INITIALIZERS = ("zeros", "ones", "normal", "uniform", "xavier")
