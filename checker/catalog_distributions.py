"""The diagnostics of distributions (`Categorical`, `Normal`, `Bernoulli`,
`kl_divergence`: checker/builtins/distributions.py), registered in the one
catalog, `catalog_code.CODES`: checker/catalog.py imports this module at its
end, so they come after its own codes."""

from __future__ import annotations

from .catalog_code import _code

E0980 = _code(
    "E0980",
    "a distribution takes probs= or logits=, exactly one",
    "{fn}: {reason}",
    """
    `Categorical` and `Bernoulli` are given their probabilities in one of two
    ways, as torch's: `probs=` (weights >= 0 for Categorical, normalised
    along the last dim; a Prob for Bernoulli) or `logits=` (any float:
    unnormalised log-probabilities for Categorical, log-odds for Bernoulli).
    Giving both, or neither, is this error (torch raises "Either `probs` or
    `logits` must be specified, but not both").
    """,
    """
    fn f(x: [b K] f32) -> [b] Index[K]:
        return Categorical(probs=softmax(x, over=K), logits=x).sample(seed=0)
    """,
    """
    fn f(x: [b K] f32) -> [b] Index[K]:
        return Categorical(logits=x).sample(seed=0)
    """,
    variants={
        "both": "give probs= or logits=, not both",
        "neither": "give its probabilities as probs= or logits= (by name, as torch)",
    },
)

E0981 = _code(
    "E0981",
    "no reparameterised sample",
    "{kind}.rsample: {reason}",
    """
    `rsample` draws a sample through which gradients flow to the
    distribution's parameters (the reparameterisation trick of VAEs:
    `loc + eps * scale`). Only a continuous distribution has one: of
    `Normal`, `rsample` is it. A draw of `Categorical` or `Bernoulli` is a
    label or a 0/1 value, which no gradient goes through; take `sample`
    and weight `log_prob` by the reward instead (REINFORCE), as torch
    raises NotImplementedError for these.
    """,
    """
    fn f(x: [b K] f32) -> [b] Index[K]:
        return Categorical(logits=x).rsample(seed=0)
    """,
    """
    fn f(x: [b K] f32) -> [b] Index[K]:
        return Categorical(logits=x).sample(seed=0)
    """,
    variants={
        "discrete": "a {kind} is discrete: no gradient flows through its draws; use sample(seed=...) "
        "and log_prob (REINFORCE)",
    },
)

E0982 = _code(
    "E0982",
    "kl_divergence of two kinds of distribution",
    "kl_divergence({p}, {q}): {reason}",
    """
    `kl_divergence(p, q)` is KL(p || q) element by element of the two
    distributions' batch shapes (broadcast), as torch.distributions'
    kl_divergence. It is defined here for two distributions of one kind:
    two Normals, two Categoricals over the same classes, two Bernoullis.
    """,
    """
    fn f(x: [b] f32) -> [b] f32:
        return kl_divergence(Normal(x, 1.0), Bernoulli(logits=x))
    """,
    """
    fn f(x: [b] f32) -> [b] f32:
        return kl_divergence(Normal(x, 1.0), Normal(0.0, 1.0))
    """,
    variants={
        "kinds": "of a {p_kind} and a {q_kind}: both must be of one kind (Normal, Categorical or Bernoulli)",
        "classes": "the two Categoricals' classes differ, {a} and {b}",
    },
)
