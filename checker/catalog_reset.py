"""The diagnostic of a model's `fn reset_parameters`, which `init` runs
(registered in the one catalog, `catalog_code.CODES`: checker/catalog.py
imports this module at its end, so it comes after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0944 = _code(
    "E0944",
    "reset_parameters that init cannot run",
    "model {model}'s reset_parameters is run by init as fn reset_parameters(mut self, seed: Int): {problem}",
    """
    A model's method named `reset_parameters` is torch's: `M.init(seed=...)`
    runs it once the fields are drawn, on every sub-model whose model
    declares one (inner ones first), with a seed drawn from the init's own
    generator, so that it can redraw params with a walk
    (`for name, p in named_params(self, seed=seed)`), as `nn.Transformer`'s
    `_reset_parameters` redraws every matrix with `xavier_uniform_`. It must
    be `fn reset_parameters(mut self, seed: Int)`: `mut self`, since it
    writes the model, one Int parameter, the seed, and no return value.
    """,
    """
    model Lin:
        param w: [4 2] = zeros

        fn reset_parameters(mut self):
            for name, p in named_params(self, seed=0):
                p.init(xavier_uniform())
    """,
    """
    model Lin:
        param w: [4 2] = zeros

        fn reset_parameters(mut self, seed: Int):
            for name, p in named_params(self, seed=seed):
                p.init(xavier_uniform())
    """,
    variants={
        "not_mut": "its self is not mut (it writes the model's params)",
        "params": "it takes {found} after self, not one Int seed",
        "returns": "it returns {found}, not nothing",
    },
)
