"""Lists of sub-models (`param layers: (Layer[784, 500], Layer[500, 500])`,
torch's nn.ModuleList and nn.Sequential): their declaration (E0938), a `for`
loop checked once per element, a literal index and a computed one (E0940),
a call as a chain (E0939), the param-read analysis per element."""

from __future__ import annotations

from annotations import actual, parse_annotations, program
from nn_library import LIBRARY

from quiver.checker.workspace import check_example

PRELUDE = """\
import nn

model Layer[I, O]:
    param lin: nn.Linear[I, O]

    fn forward(self, x: [b I]) -> [b O]:
        return relu(self.lin(x))

"""


def check_text(text: str):
    """A program with `import nn` (the library beside it)."""
    return check_example(text, LIBRARY)


def check(src: str) -> None:
    """Exactly the annotated diagnostics (tests/annotations.py), with nn."""
    source = program(src, prelude=PRELUDE, dedent=True)
    a = check_text(source)
    assert not a.internal_errors, a.internal_errors[0]
    want = sorted((w.line, w.start, w.end, w.code, w.message) for w in parse_annotations(source))
    got = sorted((g.line, g.start, g.end, g.code, g.message) for g in actual(a))
    assert [g if w[4] is not None else g[:4] + (None,) for w, g in zip(want, got)] == want, got
    assert len(got) == len(want), got


def clean(src: str) -> dict[str, str]:
    a = check_text(PRELUDE + src)
    assert not a.internal_errors
    assert [(d.code, d.message) for d in a.diagnostics] == []
    out = {}
    for b in a.bodies.values():
        out.update({k: str(v) for k, v in b.locals.items()})
    return out


def test_a_loop_checks_each_element_in_order():
    names = clean("""\
model Net:
    param layers: (Layer[784, 500], Layer[500, 10])

    fn forward(self, x: [b 784]) -> [b 10]:
        for layer in self.layers:
            x = layer(x)
        return x
""")
    assert names["x"] == "[b 10]"


def test_an_error_in_the_body_is_reported_once_and_at_the_element():
    check("""\
    model Net:
        param layers: (Layer[4, 8], Layer[6, 2])

        fn forward(self, x: [b 4]) -> [b 2]:
            for layer in self.layers:
                x = layer(x)
        #                 ^ E0201: argument 'x' of Layer.forward: expected [b 6], found [b 8]
                y = undefined_name
        #           ^^^^^^^^^^^^^^ E0101: unknown name 'undefined_name'
                print(y)
            return x
    """)


def test_an_element_that_is_not_a_model():
    check("""\
    model Net:
        param layers: (Layer[4, 8], [8] f32)
    #                               ^^^^^^^ E0938: element 1 of layers is tensor [8], not a model: a list of sub-models holds models only
    """)


def test_a_literal_index_is_that_element_and_a_computed_one_needs_one_type():
    check("""\
    model Net:
        param layers: (Layer[4, 8], Layer[8, 8])
        param same: (Layer[8, 8], Layer[8, 8])

        fn forward(self, x: [b 4], i: Int) -> [b 8]:
            h = self.layers[1](self.layers[0](x))
            h = self.same[i](h)
            return self.layers[i](h)
    #                          ^ E0940: self.layers holds models of different types (Layer[4, 8], Layer[8, 8]): index it with an Int literal (0 to 1)
    """)


def test_a_literal_index_out_of_range():
    a = check_text(
        PRELUDE
        + """\
model Net:
    param layers: (Layer[4, 8], Layer[8, 8])

    fn forward(self, x: [b 4]) -> [b 8]:
        return self.layers[2](x)
"""
    )
    assert [(d.code, d.message) for d in a.diagnostics] == [
        ("E0217", "index 2 of a dim of 2: it has 2 entries, 0 to 1 (or -2 to -1)")
    ]


def test_a_chain_whose_types_do_not_line_up():
    check("""\
    model Net:
        param main: (nn.Linear[4, 8], nn.ReLU, nn.Linear[6, 2])

        fn forward(self, x: [b 4]) -> [b 2]:
            return self.main(x)
    #              ^^^^^^^^^ E0939: self.main: element 2 (nn.Linear[6, 2]) takes [b 6], but element 1 (nn.ReLU) gives [b 8] NonNeg
    """)


def test_a_chain_given_the_wrong_input():
    check("""\
    model Net:
        param main: (nn.Linear[4, 8], nn.ReLU)

        fn forward(self, x: [b 5]) -> [b 8]:
            return self.main(x)
    #                        ^ E0939: self.main: element 0 (nn.Linear[4, 8]) takes [b 4], found [b 5]
    """)


def test_a_chain_with_a_layer_that_needs_a_mode():
    check("""\
    model Net:
        param main: (nn.Linear[4, 8], nn.Dropout, nn.Linear[8, 2])

        fn forward(self, x: [b 4]) -> [b 2]:
            return self.main(x)
    #              ^^^^^^^^^ E0939: self.main: element 1 (nn.Dropout) takes a Mode: call self.main(x, mode)

        fn run(self, x: [b 4], mode: Mode) -> [b 2]:
            return self.main(x, mode)
    """)


def test_a_chain_of_a_layer_without_a_one_argument_forward():
    check("""\
    model Net:
        param main: (nn.Linear[4, 8], nn.GRUCell[8, 8])

        fn forward(self, x: [b 4]) -> [b 8]:
            return self.main(x)
    #              ^^^^^^^^^ E0939: self.main: element 1 (nn.GRUCell[8, 8]) has no forward of one tensor argument (and a Mode), so it cannot be chained
    """)


def test_the_chain_result_type():
    names = clean("""\
model Net:
    param main: (nn.Linear[4, 8], nn.ReLU, nn.Linear[8, 2], nn.Tanh)

    fn forward(self, x: [b 4]) -> [b 2]:
        y = self.main(x)
        return y
""")
    assert names["y"] == "[b 2]"


def test_a_loop_over_different_models_and_a_mut_list():
    clean("""\
model Net:
    param main: (nn.Linear[4, 4], nn.Tanh, nn.Linear[4, 4])

    fn forward(self, x: [b 4]) -> [b 4]:
        for layer in self.main:
            x = layer(x)
        return x

fn loss(l: nn.Linear[4, 4], x: [b 4]) -> [] Float:
    return sum(l(x))

fn step(mut net: Net, x: [b 4]):
    for k in range(2):
        l, g = value_and_grad(loss, net.main[0], x)
        net.main[0].weight = net.main[0].weight - 0.1 * g.weight
""")


def test_the_param_read_analysis_counts_each_element():
    a = check_text(
        PRELUDE
        + """\
model Net:
    param layers: (Layer[4, 8], Layer[8, 2])

fn first_only(net: Net, x: [b 4]) -> [] Float:
    return sum(net.layers[0](x))

fn both(net: Net, x: [b 4]) -> [] Float:
    h = x
    for layer in net.layers:
        h = layer(h)
    return sum(h)

fn main():
    net = Net.init(seed=0)
    x = zeros([2 4])
    l, g = value_and_grad(first_only, net, x)
    l2, g2 = value_and_grad(both, net, x)
    print(l, l2, g, g2)
"""
    )
    assert not a.internal_errors
    codes = [(d.code, d.message) for d in a.diagnostics]
    assert sorted(codes) == [
        ("W1101", "first_only never reads param layers.1.lin.bias of Net: its gradient is always zero"),
        ("W1101", "first_only never reads param layers.1.lin.weight of Net: its gradient is always zero"),
    ]


def test_a_chain_called_with_other_arguments():
    check("""\
    model Net:
        param main: (nn.Linear[4, 8], nn.Dropout)

        fn forward(self, x: [b 4], mode: Mode) -> [b 8]:
            y = self.main(x, mode=mode)
            print(y)
            return self.main(x, mode, 3)
    #              ^^^^^^^^^ E0939: self.main: a list of models is called with its input and, for layers that take one, a Mode: self.main(x) or self.main(x, mode)

        fn other(self, x: [b 4]) -> [b 8]:
            return self.main(x, scale=2.0)
    #              ^^^^^^^^^ E0939
    """)


def test_a_mode_that_is_not_a_mode():
    check("""\
    model Net:
        param main: (nn.Linear[4, 8], nn.Dropout)

        fn forward(self, x: [b 4]) -> [b 8]:
            return self.main(x, 1.0)
    #                           ^^^ E0301: self.main: expected Mode, found number Float
    """)
