"""The diagnostics of traits and of functions generic over models
(`trait CharModel:`, `fn loss[M: CharModel](m: M)`; checker/traits.py),
registered in the one catalog, `catalog_code.CODES` (checker/catalog.py
imports this module at its end)."""

from __future__ import annotations

from .catalog_code import _code

E0920 = _code(
    "E0920",
    "model lacks a method its trait requires",
    "{model} has no method '{method}', which trait {trait} requires of {param}",
    """
    A function generic over models (`fn loss[M: CharModel](m: M, ...)`)
    takes any model that has every method its bound's traits declare. The
    model given here lacks one of them: add the method to the model (with
    the trait's signature), or pass a model that has it.
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    model Bag:
        param w: [V] = 0.0

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)

    fn main():
        m = Bag.init(seed=0)
        idx = randint([2 3] Index[V], seed=0)
        print(logits(m, idx))
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    model Bag:
        param table: [V V] = 0.0

        fn forward(self, idx: [b t] Index[V]) -> [b t V]:
            return self.table[idx]

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)

    fn main():
        m = Bag.init(seed=0)
        idx = randint([2 3] Index[V], seed=0)
        print(logits(m, idx))
    """,
)

E0921 = _code(
    "E0921",
    "method differs from its trait's signature",
    "{model}.{method} does not have the signature trait {trait} requires: it is `{found}`, the trait's is `{wanted}`",
    """
    A model given for a type parameter (`M` of `fn loss[M: CharModel]`) has
    each method of the traits that bound it with a signature that fits the
    trait's: the same number of parameters, each taking what the trait's
    takes (`mut` as the trait writes it), and a result the trait's result
    accepts. The generic dims of a method are its own (`[b t]` and `[n s]`
    are the same signature).
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    model Bag:
        param table: [V V] = 0.0

        fn forward(self, idx: [b] Index[V]) -> [b V]:
            return self.table[idx]

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)

    fn main():
        m = Bag.init(seed=0)
        idx = randint([2 3] Index[V], seed=0)
        print(logits(m, idx))
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    model Bag:
        param table: [V V] = 0.0

        fn forward(self, idx: [n s] Index[V]) -> [n s V]:
            return self.table[idx]

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)

    fn main():
        m = Bag.init(seed=0)
        idx = randint([2 3] Index[V], seed=0)
        print(logits(m, idx))
    """,
)

E0922 = _code(
    "E0922",
    "a type parameter's model has only its traits' methods",
    "'{name}': {param} stands for any model with trait {traits}; {known}",
    """
    Inside a function generic over models (`fn f[M: CharModel](m: M)`), `m`
    is any model the caller gives: its fields (and the fields of its
    gradient `Grad[M]`) differ from one model to the next, so the function
    may use only the methods its bound's traits declare. Add a method that
    returns what is needed to the trait (and to the models), or write the
    function for one model.
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    fn table[M: CharModel](m: M) -> [V V]:
        return m.table
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)
    """,
    variants={
        "methods": "only its methods ({methods}) are known of it, not its fields",
        "no_method": "it has no method '{method}', only {methods}",
        "none_known": "its traits declare no methods, and its fields are not known",
        "no_method_none": "it has no method '{method}': its traits declare none",
        "grad": "the fields of its gradient are not known",
    },
)

E0923 = _code(
    "E0923",
    "invalid trait or type parameter",
    "{problem}",
    """
    A trait (`trait CharModel:`) lists method signatures, each with `self`
    first and without a body. A function generic over models names its type
    parameters in brackets after its name, each bounded by one trait or more
    joined with `+` (`fn f[M: CharModel, N: Encoder + Decoder](m: M, n: N)`);
    the names after `:` are traits, declared in the file or imported
    (`lib.CharModel`).
    """,
    """
    dim V = 8

    model Bag:
        param table: [V V] = 0.0

    fn logits[M: Bag](m: M) -> [V V]:
        return m.table
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)
    """,
    variants={
        "not_a_trait": "the bound of type parameter {param} is a trait, and '{name}' is {kind}",
        "unknown_trait": "the bound of type parameter {param} is a trait, and no trait '{name}' is known{hint}",
        "minus": "the traits that bound a type parameter are joined with '+'",
        "param_twice": "type parameter {param} is declared twice",
        "param_shadows": "type parameter {param} has the name of a global {kind}; choose another name",
        "method_twice": "trait {trait} declares method {method} twice",
        "type_param_args": "type parameter {param} is a whole model type and takes nothing in brackets",
        "in_method": "a model's method cannot be generic over models; write a top-level fn",
        "not_in_params": "type parameter {param} is the model of a parameter (`m: {param}`), and no parameter of {fn} is one",
    },
)

E0924 = _code(
    "E0924",
    "a trait used as a value or a type",
    "'{name}' is a trait: {problem}",
    """
    A trait names what a model must have (its methods); it is no model
    itself. It bounds a type parameter of a generic function
    (`fn f[M: CharModel](m: M)`): a parameter's type is that type
    parameter, and a value is a model made with `Model.init(...)`.
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    fn logits(m: CharModel, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)
    """,
    """
    dim V = 8

    trait CharModel:
        fn forward(self, idx: [b t] Index[V]) -> [b t V]

    fn logits[M: CharModel](m: M, idx: [b t] Index[V]) -> [b t V]:
        return m(idx)
    """,
    variants={
        "as_type": "it bounds a type parameter (`fn f[M: {name}](m: M)`), and is not a type itself",
        "as_value": "it is not a value; a model is made with `Model.init(seed=...)`",
    },
)
