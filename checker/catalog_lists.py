"""The diagnostics of lists of sub-models (`param layers: (Layer[784, 500],
Layer[500, 500])`, torch's nn.ModuleList and nn.Sequential; registered in the
one catalog, `catalog_code.CODES`: checker/catalog.py imports this module at
its end, so they come after its own codes)."""

from __future__ import annotations

from .catalog_code import _code

E0938 = _code(
    "E0938",
    "list element is not a model",
    "element {index} of {member} is {found}, not a model: a list of sub-models holds models only",
    """
    A param whose type is a tuple of model types (`param layers:
    (Layer[784, 500], Layer[500, 500])`) is a list of sub-models, as torch's
    nn.ModuleList: each element is a model, initialised by its own fields.
    A tensor is declared as a param of its own; a list has at least one element.
    """,
    """
    model Net:
        param layers: (Net, [4] f32)
    """,
    """
    model Layer:
        param w: [4 4] f32

    model Net:
        param layers: (Layer, Layer)
    """,
)

E0939 = _code(
    "E0939",
    "chain of sub-models does not line up",
    "{member}: {problem}",
    """
    Calling a list of sub-models (`self.main(x)`, as torch's nn.Sequential)
    runs each element's `forward` on what the one before it gave: the first
    takes the call's argument (and a `Mode`, where its `forward` takes one),
    every other element takes the output of the one before. Each element
    needs a `forward` of one tensor argument, optionally followed by a
    `mode: Mode`, and each output must fit the next element's input.
    """,
    """
    model Linear[I, O]:
        param weight: [I O]

        fn forward(self, x: [b I]) -> [b O]:
            return x @ self.weight

    model Net:
        param main: (Linear[4, 8], Linear[6, 2])

        fn forward(self, x: [b 4]) -> [b 2]:
            return self.main(x)
    """,
    """
    model Linear[I, O]:
        param weight: [I O]

        fn forward(self, x: [b I]) -> [b O]:
            return x @ self.weight

    model Net:
        param main: (Linear[4, 8], Linear[8, 2])

        fn forward(self, x: [b 4]) -> [b 2]:
            return self.main(x)
    """,
    variants={
        "mismatch": "element {index} ({layer}) takes {expected}, but element {before} ({previous}) gives {found}",
        "first": "element 0 ({layer}) takes {expected}, found {found}",
        "no_forward": "element {index} ({layer}) has no forward of one tensor argument (and a Mode), so it cannot be chained",
        "call_args": "a list of models is called with its input and, for layers that take one, a Mode: "
        "{member}(x) or {member}(x, mode)",
        "needs_mode": "element {index} ({layer}) takes a Mode: call {member}(x, mode)",
    },
)

E0940 = _code(
    "E0940",
    "index into a list of different sub-models",
    "{member} holds models of different types ({types}): index it with an Int literal (0 to {last})",
    """
    The elements of a list of sub-models may be of different types
    (`(Layer[784, 500], Layer[500, 500])`): `self.layers[1]` is the second,
    of its own type, and a `for` loop checks its body once per element. An
    index computed when the program runs cannot say which type it reads, so
    it is allowed only when every element has the same type.
    """,
    """
    model Linear[I, O]:
        param weight: [I O]

        fn forward(self, x: [b I]) -> [b O]:
            return x @ self.weight

    model Net:
        param layers: (Linear[4, 8], Linear[8, 8])

        fn last(self, x: [b 8], i: Int) -> [b 8]:
            return self.layers[i](x)
    """,
    """
    model Linear[I, O]:
        param weight: [I O]

        fn forward(self, x: [b I]) -> [b O]:
            return x @ self.weight

    model Net:
        param layers: (Linear[4, 8], Linear[8, 8])

        fn last(self, x: [b 8]) -> [b 8]:
            return self.layers[1](x)
    """,
)
