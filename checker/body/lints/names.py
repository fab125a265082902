"""What the lints look for: the built-ins by the facts their specs state
(`role`, `target_param`, `symmetric`: checker/builtins/spec.py), and the
user names and the few lint-specific lists of built-ins that are no fact of
one built-in (which ones a lint follows a value through)."""

from __future__ import annotations

import re

from ...builtins import BUILTINS

# Built-ins that make (log-)probabilities along an `over=` dim, by the
# parameter that the dim must be the classes of.
_SOFTMAXES = {
    name: b.params[0].name
    for name, b in BUILTINS.items()
    if b.role in ("prob", "logprob") and any(p.name == "over" for p in b.params)
}
# Losses whose second argument is a target the prediction is pulled towards.
_TARGET_LOSSES = {name: b.target_param for name, b in BUILTINS.items() if b.target_param is not None}
_SYMMETRIC = frozenset(name for name, b in BUILTINS.items() if b.symmetric)  # swapping their arguments changes nothing
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
    "nll_loss": ("logp", "log-probabilities, as log_softmax gives", None),
    "kl_div": ("logp", "log-probabilities, as log_softmax gives", None),
}
_DIFFERENTIATORS = ("value_and_grad", "grad")
_MAKES_LOGPROB = frozenset(name for name, b in BUILTINS.items() if b.role == "logprob")  # (minus) log-probabilities
_MAKES_PROB = frozenset(name for name, b in BUILTINS.items() if b.role == "prob")
_KEEPS_FLOW = ("sum", "mean", "gather", "take", "reshape", "squeeze", "unsqueeze")
_TRIANGLES = ("tril", "triu")
_MASK_KEEPING = ("reshape", "stop_grad")
