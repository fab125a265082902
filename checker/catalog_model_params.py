"""The diagnostics of models built from model types (`model ResNet[B:
ResBlock, E]`, `ResNet[BasicBlock, 1]`; checker/model_params.py),
registered in the one catalog, `catalog_code.CODES` (checker/catalog.py
imports this module at its end)."""

from __future__ import annotations

from .catalog_code import _code

_BLOCKS = """
    trait Block[Ci, Co]:
        fn forward(self, x: [b Ci]) -> [b Co]

    model Plain[Ci, Co]:
        param w: [Ci Co] = normal(0.0, 0.1)

        fn forward(self, x: [b Ci]) -> [b Co]:
            return relu(x @ self.w)

    model Net[B: Block]:
        param l1: B[4, 8]
        param l2: B[8, 2]

        fn forward(self, x: [b 4]) -> [b 2]:
            return self.l2(self.l1(x))
"""

E0946 = _code(
    "E0946",
    "a model parameter given something else than a model",
    "{problem}",
    """
    A model with model parameters (`model Net[B: Block]`) is given a model
    for each of them, first in its brackets (`Net[Plain]`): the name of a
    model that takes dims (it is instantiated with the dims the network
    writes, `B[4, 8]`), or, inside another generic model, that model's own
    parameter (`Stage[B]`) when its traits include the ones wanted.
    """,
    _BLOCKS
    + """
    fn main():
        m = Net[4].init(seed=0)
        print(m(ones([2 4])))
    """,
    _BLOCKS
    + """
    fn main():
        m = Net[Plain].init(seed=0)
        print(m(ones([2 4])))
    """,
    variants={
        "models_missing": "{model} takes a model for each of its model parameters ({wanted}) first, and {count} are given",
        "not_a_model": "'{given}' is given for model parameter {param} of {model}, which takes a model",
        "bound_not_implied": "model parameter {given} is given for {param}, which needs {traits}: declare {given} with it",
        "no_dims": "model {given} takes no dims: a model parameter takes a model that its network instantiates ({param})",
    },
)

E0947 = _code(
    "E0947",
    "model's dims do not correspond to its trait's",
    "{model} cannot stand for {param}: {problem}",
    """
    A model given for a model parameter is instantiated as the trait writes
    its instances (`B[4, 8]` of `trait Block[Ci, Co]`), so it takes the same
    dims in the same order, and every option the trait declares, with the
    same kind. It may have more options, each with its default.
    """,
    """
    trait Block[Ci, Co]:
        fn forward(self, x: [b Ci]) -> [b Co]

    model Square[D]:
        param w: [D D] = normal(0.0, 0.1)

        fn forward(self, x: [b D]) -> [b D]:
            return x @ self.w

    model Net[B: Block]:
        param l1: B[4, 4]

        fn forward(self, x: [b 4]) -> [b 4]:
            return self.l1(x)

    fn main():
        m = Net[Square].init(seed=0)
        print(m(ones([2 4])))
    """,
    """
    trait Block[Ci, Co]:
        fn forward(self, x: [b Ci]) -> [b Co]

    model Square[Ci, Co]:
        param w: [Ci Co] = normal(0.0, 0.1)

        fn forward(self, x: [b Ci]) -> [b Co]:
            return x @ self.w

    model Net[B: Block]:
        param l1: B[4, 4]

        fn forward(self, x: [b 4]) -> [b 4]:
            return self.l1(x)

    fn main():
        m = Net[Square].init(seed=0)
        print(m(ones([2 4])))
    """,
    variants={
        "dims_count": "it takes {found}, and {trait}'s instances take {wanted} ({dims})",
        "option_missing": "{trait} declares option {option}, and it has none of that name",
        "option_kind": "option {option} is a {found} and {trait} declares it a {wanted}",
    },
)

E0948 = _code(
    "E0948",
    "malformed model parameter",
    "{problem}",
    """
    A model parameter (`B: ResBlock` in `model ResNet[B: ResBlock, E]`) is
    bounded by one trait that takes dims (`trait ResBlock[Ci, Co, stride =
    1]`), so the network can write its instances (`B[C1, C2, stride=2]`), and
    it comes first in the brackets, before the model's dims and options. A
    method body cannot name it: what it is belongs in the fields.
    """,
    """
    trait Block:
        fn forward(self, x: [b 4]) -> [b 4]

    model Net[B: Block]:
        param l1: B

        fn forward(self, x: [b 4]) -> [b 4]:
            return self.l1(x)
    """,
    """
    trait Block[D]:
        fn forward(self, x: [b D]) -> [b D]

    model Net[B: Block]:
        param l1: B[4]

        fn forward(self, x: [b 4]) -> [b 4]:
            return self.l1(x)
    """,
    variants={
        "not_a_trait": "the bound of model parameter {param} is a trait, and '{name}' is {kind}",
        "unknown_trait": "the bound of model parameter {param} is a trait, and no trait '{name}' is known{hint}",
        "trait_takes_nothing": "trait {trait} takes no dims: a model parameter's trait declares the dims its instances take (`trait {trait}[Ci, Co]:`)",
        "not_first": "model parameter {param} comes before the dims and options of {model}",
        "in_trait": "a trait takes dims and options, not model parameters ({param})",
    },
)
