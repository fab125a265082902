"""Distributions, as torch.distributions spells them: `Categorical(logits=l)`,
`Normal(loc, scale)` and `Bernoulli(probs=p)` make a value (`T.DistT`) whose
methods `log_prob(value)`, `entropy()`, `sample(seed=s)` and (of Normal)
`rsample(seed=s)` give tensors of its batch shape, and whose fields are
torch's attributes (`d.probs`, `n.scale`); `kl_divergence(p, q)` of two of
one kind. The constructors are built-ins (their specs and rules below); the
engine types `d.name(...)` of a distribution by `distribution_method` and
`d.name` by `distribution_field`. At run time each is a small class of
runtime/_distributions.py over torch.distributions.
"""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import shapes as S
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..body.features.optimizers import builtin_field
from ..declarations import suggest
from ..results import Ref
from .args import Bound, expect_number, literal_number, tensor_arg
from .registry import builtin
from .spec import BParam, Builtin

# name -> (signature, doc): what hover and the docs say of each method
METHODS: dict[str, tuple[str, str]] = {
    "log_prob": ("d.log_prob(value) -> [..] Float", "The log of the probability (density) of value."),
    "entropy": ("d.entropy() -> [..] Float", "The entropy of each distribution of the batch."),
    "sample": ("d.sample(seed=Int) -> [..]", "One draw of each distribution of the batch; no gradient flows."),
    "rsample": ("d.rsample(seed=Int) -> [..] Float", "A draw through which gradients flow (Normal only)."),
}


def _probs_or_logits(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> tuple[str, T.TensorT] | None:
    """Which of probs= and logits= a Categorical or Bernoulli is given, and its
    tensor type; None when not exactly one (E0980) or its type is reported."""
    given = [n for n in ("probs", "logits") if n in bound]
    if len(given) != 1:
        for n in given:
            c.value(bound[n].node, env)
        span = bound["logits"].span if given else node.span
        reason = C.E0980.say("both") if given else C.E0980.say("neither")
        c.diags.append(C.E0980.at(span, fn=b.name, reason=reason))
        return None
    name = given[0]
    t = tensor_arg(c, bound[name], env, b.name, name)
    return (name, t) if t is not None else None


@builtin(
    Builtin(
        name="Categorical",
        params=(BParam(name="probs", required=False), BParam(name="logits", required=False, keyword_only=True)),
        signature="Categorical(probs: [.. K] NonNeg) -> Categorical of [.. K] / Categorical(logits=[.. K] Float) -> Categorical of [.. K]",
        doc="A categorical distribution over the K classes of the last dim (torch.distributions.Categorical): "
        "probs= (weights >= 0, normalised) or logits= (unnormalised log-probabilities). sample gives [..] Index[K], "
        "log_prob takes [..] Index[K] labels.",
        example="d = Categorical(logits=x)",
        group="distributions",
        runtime="Categorical",
        note="probs= or logits=, exactly one ([E0980](diagnostics.md#e0980)).",
    ),
)
def _categorical(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    given = _probs_or_logits(c, node, b, bound, env)
    if given is None:
        return T.UNKNOWN
    name, t = given
    if t.rank == 0:
        c.diags.append(
            C.E0301.at(
                bound[name].node.span,
                context=f"{name} of Categorical: ",
                expected="a tensor of one dim or more (its last dim is the classes)",
                found=T.describe(t),
            )
        )
        return T.UNKNOWN
    if name == "probs" and not t.elem.nonneg:
        c.diags.append(
            C.E0304.at(
                bound[name].node.span,
                context="probs of Categorical: ",
                expected="weights known to be >= 0 (NonNeg or Prob, as softmax gives; or give logits=)",
                found=str(t),
            )
        )
        return T.UNKNOWN
    return T.DistT("Categorical", t.dims[:-1], t.elem.plain(), t.dims[-1])


@builtin(
    Builtin(
        name="Bernoulli",
        params=(BParam(name="probs", required=False), BParam(name="logits", required=False, keyword_only=True)),
        signature="Bernoulli(probs: [..] Prob) -> Bernoulli of [..] / Bernoulli(logits=[..] Float) -> Bernoulli of [..]",
        doc="A Bernoulli distribution of each element (torch.distributions.Bernoulli): probs= (a Prob, as sigmoid "
        "gives) or logits= (log-odds). sample gives 0.0 or 1.0 of its float type, log_prob takes such values.",
        example="d = Bernoulli(logits=x)",
        group="distributions",
        runtime="Bernoulli",
        note="probs= or logits=, exactly one ([E0980](diagnostics.md#e0980)).",
    ),
)
def _bernoulli(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    given = _probs_or_logits(c, node, b, bound, env)
    if given is None:
        return T.UNKNOWN
    name, t = given
    if name == "probs" and t.elem.refine != "prob":
        c.diags.append(
            C.E0304.at(
                bound[name].node.span,
                context="probs of Bernoulli: ",
                expected="a Prob, in [0, 1] (as sigmoid gives; or give logits=)",
                found=str(t),
            )
        )
        return T.UNKNOWN
    return T.DistT("Bernoulli", t.dims, t.elem.plain())


def _loc_or_scale(c: RuleContext, a: CallArg, env: Env, name: str) -> T.TensorT | T.NumberT | None:
    """loc or scale of Normal: a float tensor, or a number (broadcast as a
    tensor of no dims); None after a diagnostic or when unknown."""
    t = c.value(a.node, env)
    if isinstance(t, T.NumberT) and t.kind in ("Int", "Float"):
        value = literal_number(a.node)
        if name == "scale" and value is not None and value <= 0:
            c.diags.append(
                C.E0304.at(a.node.span, context="scale of Normal: ", expected="a number > 0", found=str(value))
            )
            return None
        return t
    if isinstance(t, T.NumberT):
        c.diags.append(
            C.E0301.at(
                a.node.span, context=f"{name} of Normal: ", expected="a float tensor or a number", found=T.describe(t)
            )
        )
        return None
    tt = tensor_arg(c, a, env, "Normal", name, typed=t)
    if tt is not None and name == "scale" and not tt.elem.nonneg:
        c.diags.append(
            C.E0304.at(
                a.node.span,
                context="scale of Normal: ",
                expected="a scale known to be >= 0 (NonNeg, as exp or softplus gives)",
                found=str(tt),
            )
        )
        return None
    return tt


@builtin(
    Builtin(
        name="Normal",
        params=(BParam(name="loc"), BParam(name="scale")),
        signature="Normal(loc: [..] Float, scale: [..] NonNeg) -> Normal of [..]",
        doc="A normal distribution of each element (torch.distributions.Normal): mean loc, standard deviation scale; "
        "loc and scale broadcast (either may be a number). rsample draws loc + eps * scale, through which gradients "
        "flow (a VAE's reparameterisation).",
        example="d = Normal(x, exp(x))",
        group="distributions",
        runtime="Normal",
        note="scale is known to be >= 0 ([E0304](diagnostics.md#e0304)), as exp and softplus give.",
    ),
)
def _normal(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    loc = _loc_or_scale(c, bound["loc"], env, "loc")
    scale = _loc_or_scale(c, bound["scale"], env, "scale")
    if loc is None or scale is None:
        return T.UNKNOWN
    if isinstance(loc, T.NumberT) and isinstance(scale, T.NumberT):
        return T.DistT("Normal", (), T.F32, weak=True)
    if isinstance(loc, T.NumberT) or isinstance(scale, T.NumberT):
        tensor = scale if isinstance(loc, T.NumberT) else loc
        assert isinstance(tensor, T.TensorT)
        return T.DistT("Normal", tensor.dims, tensor.elem.plain())
    if scale.elem.dtype != loc.elem.dtype:
        c.diags.append(
            C.E0302.at(
                bound["scale"].node.span,
                context="scale of Normal (as loc): ",
                expected=loc.elem.dtype,
                found=scale.show_elem(),
            )
        )
        return T.UNKNOWN
    dims = S.broadcast(loc.dims, scale.dims)
    if isinstance(dims, S.DimClash):
        c.diags.append(C.E0202.at(node.span, op="and", left=loc, right=scale, a=dims.left, b=dims.right))
        return T.UNKNOWN
    return T.DistT("Normal", dims, loc.elem.plain())


@builtin(
    Builtin(
        name="kl_divergence",
        params=(BParam(name="p"), BParam(name="q")),
        signature="kl_divergence(p: a distribution, q: one of its kind) -> [..] NonNeg",
        doc="KL(p || q) of each pair of the two distributions' batches (broadcast), as "
        "torch.distributions.kl_divergence: two Normals, two Categoricals over the same classes or two Bernoullis.",
        example="k = kl_divergence(Normal(x, 1.0), Normal(0.0, 1.0))",
        group="distributions",
        runtime="kl_divergence",
        note="Of two kinds: [E0982](diagnostics.md#e0982).",
    ),
)
def _kl_divergence(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    p = _dist_arg(c, bound["p"], env, "p")
    q = _dist_arg(c, bound["q"], env, "q")
    if p is None or q is None:
        return T.UNKNOWN
    if p.kind != q.kind:
        reason = C.E0982.say("kinds", p_kind=p.kind, q_kind=q.kind)
        c.diags.append(C.E0982.at(node.span, p=str(p), q=str(q), reason=reason))
        return T.UNKNOWN
    if p.classes is not None and q.classes is not None and not T.dims_equal(p.classes, q.classes):
        reason = C.E0982.say("classes", a=p.classes, b=q.classes)
        c.diags.append(C.E0982.at(node.span, p=str(p), q=str(q), reason=reason))
        return T.UNKNOWN
    if p.elem.dtype != q.elem.dtype and not (p.weak or q.weak):
        c.diags.append(
            C.E0302.at(
                bound["q"].node.span, context="q of kl_divergence (as p): ", expected=p.elem.dtype, found=q.elem.dtype
            )
        )
        return T.UNKNOWN
    dims = S.broadcast(p.dims, q.dims)
    if isinstance(dims, S.DimClash):
        c.diags.append(C.E0202.at(node.span, op="and", left=p, right=q, a=dims.left, b=dims.right))
        return T.UNKNOWN
    return T.TensorT(dims, T.Elem((q if p.weak else p).elem.dtype, "nonneg"))


def _dist_arg(c: RuleContext, a: CallArg, env: Env, name: str) -> T.DistT | None:
    t = c.value(a.node, env)
    if isinstance(t, T.DistT):
        return t
    if not isinstance(t, T.UnknownT):
        c.diags.append(
            C.E0301.at(
                a.node.span,
                context=f"argument '{name}' of kl_divergence: ",
                expected="a distribution (Normal, Categorical, Bernoulli)",
                found=T.describe(t),
            )
        )
    return None


# The fields, as torch's attributes: name -> (refinement, with the classes dim, what)
FIELDS: dict[str, dict[str, tuple[str | None, bool, str]]] = {
    "Categorical": {
        "probs": ("prob", True, "the probabilities, normalised along the classes"),
        "logits": (None, True, "the log-probabilities, normalised (log_softmax of the logits)"),
    },
    "Bernoulli": {
        "probs": ("prob", False, "the probability of 1"),
        "logits": (None, False, "the log-odds of 1"),
        "mean": ("prob", False, "the probability of 1"),
        "variance": ("nonneg", False, "probs * (1 - probs)"),
    },
    "Normal": {
        "loc": (None, False, "the mean, broadcast to the batch shape"),
        "scale": ("nonneg", False, "the standard deviation, broadcast to the batch shape"),
        "mean": (None, False, "loc"),
        "stddev": ("nonneg", False, "scale"),
        "variance": ("nonneg", False, "scale * scale"),
    },
}


def distribution_fields(t: T.DistT) -> list[tuple[str, T.Type, str]]:
    """(name, type, what) of each field of a distribution."""
    out: list[tuple[str, T.Type, str]] = []
    for name, (refine, classes, what) in FIELDS[t.kind].items():
        dims = t.dims + ((t.classes,) if classes and t.classes is not None else ())
        out.append((name, T.TensorT(dims, T.Elem(t.elem.dtype, refine)), what))
    return out


def distribution_field(c: RuleContext, e: A.Field, obj: T.DistT) -> T.Type:
    """`d.probs`, `d.loc`, ...: its type, or E0107 with the nearest name."""
    return builtin_field(c, e, obj.kind, distribution_fields(obj), f"distribution {obj}")


# The methods: d.log_prob(value), d.entropy(), d.sample(seed=s), d.rsample(seed=s).


def distribution_method(
    c: RuleContext, node: A.Node, recv: T.DistT, func: A.Field, args: list[CallArg], env: Env, paren: A.Span
) -> T.Type:
    """`d.name(...)` of a distribution `d`: its result, or a diagnostic."""
    name = func.name.text
    if name not in METHODS:
        hint = suggest(name, list(METHODS))
        c.diags.append(C.E0107.at(func.name.span, name=name, owner=f"distribution {recv}", hint=hint))
        c._eval_args(args, env)
        return T.UNKNOWN
    c.refs[func.name] = Ref("builtin", f"{recv.kind}.{name}", recv.kind)
    if name == "rsample" and recv.kind != "Normal":
        reason = C.E0981.say("discrete", kind=recv.kind)
        c.diags.append(C.E0981.at(func.name.span, kind=recv.kind, reason=reason))
        c._eval_args(args, env)
        return T.UNKNOWN
    params = {
        "log_prob": [("value", True, False)],
        "entropy": [],
        "sample": [("seed", True, True)],
        "rsample": [("seed", True, True)],
    }[name]
    matched = c.bind_args(f"{recv.kind}.{name}", params, args, paren)
    if matched is None:
        c._eval_args(args, env)
        return T.UNKNOWN
    bound, _ = matched
    plain = recv.elem.plain()
    if name == "entropy":  # a discrete distribution's entropy is >= 0; a density's need not be
        return T.TensorT(recv.dims, plain if recv.kind == "Normal" else T.Elem(plain.dtype, "nonneg"))
    if name in ("sample", "rsample"):
        expect_number(c, bound["seed"], env, "Int", "seed")
        if recv.classes is not None:
            return T.TensorT(recv.dims, T.index_of(recv.classes))
        return T.TensorT(recv.dims, plain if recv.kind == "Normal" else T.Elem(plain.dtype, "prob"))
    return _log_prob(c, node, recv, bound["value"], env)


def _log_prob(c: RuleContext, node: A.Node, recv: T.DistT, a: CallArg, env: Env) -> T.Type:
    """d.log_prob(value): of the value's shape broadcast with the batch's."""
    fn = f"{recv.kind}.log_prob"
    t = c.value(a.node, env)
    plain = recv.elem.plain()
    if isinstance(t, T.UnknownT):
        return T.UNKNOWN
    if recv.classes is not None:  # Categorical: labels of its classes
        want = T.TensorT(recv.dims, T.index_of(recv.classes))
        if not isinstance(t, T.TensorT):
            c.diags.append(C.E0301.at(a.node.span, context=f"value of {fn}: ", expected=str(want), found=T.describe(t)))
            return T.UNKNOWN
        if t.elem.index is None or not T.dims_equal(t.elem.index, recv.classes):
            detail = (
                f"the labels index {t.elem.index}, but the Categorical's classes are {recv.classes}"
                if t.elem.index is not None
                else f"the labels must be Index[{recv.classes}], the Categorical's classes"
            )
            c.diags.append(C.E0305.at(a.node.span, context=f"{detail}: ", expected=str(want), found=str(t)))
            return T.UNKNOWN
    elif isinstance(t, T.NumberT) and t.kind in ("Int", "Float") and recv.kind == "Normal":
        t = T.TensorT((), plain)
    else:
        t = tensor_arg(c, a, env, fn, "value", typed=t)
        if t is None:
            return T.UNKNOWN
        if recv.weak:  # Normal(0.0, 1.0).log_prob(x): of x's float type
            plain = t.elem.plain()
        elif t.elem.dtype != plain.dtype:
            c.diags.append(
                C.E0302.at(a.node.span, context=f"value of {fn}: ", expected=plain.dtype, found=t.show_elem())
            )
            return T.UNKNOWN
    dims = S.broadcast(t.dims, recv.dims)
    if isinstance(dims, S.DimClash):
        batch = T.TensorT(recv.dims, t.elem)
        c.diags.append(C.E0202.at(a.node.span, op="and", left=t, right=batch, a=dims.left, b=dims.right))
        return T.UNKNOWN
    return T.TensorT(dims, plain)
