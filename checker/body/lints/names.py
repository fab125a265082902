"""The name tables of the lints: which built-ins, parameters and user names
each lint looks for. They are kept here as they were (the tables at the top,
then the tuples the lints had written inline) until the built-in specs carry
these facts themselves (a role, a target parameter, being symmetric)."""

from __future__ import annotations

import re

_SOFTMAXES = {"softmax": "x", "log_softmax": "x", "cross_entropy": "logits", "nll": "logp"}
# Losses whose second argument is a target the prediction is pulled towards.
_TARGET_LOSSES = {"mse": "target", "smooth_l1": "target", "huber": "target"}
_SYMMETRIC = frozenset({"mse", "maximum", "minimum"})  # swapping their arguments changes nothing
_EVALUATION = re.compile(r"^(eval|evaluate|test|valid|validate|validation|predict|infer|inference|generate|sample)")
# locals named as log-probabilities (`log_prob`, `logp`, `log_pi`): a method's
# log_softmax is not seen through the call
_LOGPROB_NAME = re.compile(r"(^|_)(log_?probs?|logp|log_pi|log_likelihood)($|_)")
# dim constants that name a batch as generic dims do (`dim B = 64`)
_BATCH_NAMES = frozenset({"B", "N", "BS", "BSZ", "BATCH", "batch", "bsz", "bs"})
# torch's names for masks that are True where attending is NOT allowed
_BLOCKING_PARAMS = frozenset({"attn_mask", "tgt_mask", "memory_mask", "src_mask", "causal"})

# written inline in the lints before: the built-ins each one reads
_PROB_EXPECTS = {  # W0302: the loss, its parameter, what it wants, the call to unwrap
    "cross_entropy": ("logits", "logits (it applies log_softmax itself)", "softmax"),
    "binary_cross_entropy_with_logits": ("z", "logits (it applies sigmoid itself)", "sigmoid"),
    "nll": ("logp", "log-probabilities, as log_softmax gives", None),
    "kl_div": ("logp", "log-probabilities, as log_softmax gives", None),
}
_DIFFERENTIATORS = ("value_and_grad", "grad")
_MAKES_LOGPROB = ("log_softmax", "nll", "cross_entropy")  # (minus) log-probabilities
_MAKES_PROB = ("softmax", "sigmoid")
_KEEPS_FLOW = ("sum", "mean", "gather", "take", "reshape", "squeeze", "unsqueeze")
_TRIANGLES = ("tril", "triu")
_MASK_KEEPING = ("reshape", "stop_grad")
