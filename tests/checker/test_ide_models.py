"""The IDE queries on models that take dims and options (issue 23): hover,
completion, signature help, inlay hints and go to definition show an
instance with its dims put in (`Linear[D, H]` has `weight: [D H]` and
`forward(x: [.. D]) -> [.. H]`); the members an instance's options leave out
are not offered. Then the same through `import nn`, in a workspace with the
library Quiver ships. Each test is a program with a `$0` cursor and the exact
answer there."""

from __future__ import annotations

import posixpath

import pytest
from nn_library import LIBRARY, NN_USER_PROGRAM

from quiver.checker import check_text, ide
from quiver.checker.ide import workspace_nav as nav
from quiver.checker.workspace import MemoryHost, Workspace

PROGRAM = """\
dim D = 4
dim H = 8
dim C = 3
dim L = 2

model Linear[I, O, bias: Bool = True]:
    param weight: [I O] = zeros
    param bias: [O] = zeros if bias

    fn forward(self, x: [.. I]) -> [.. O]:
        y = x @ self.weight
        if bias:
            y = y + self.bias
        return y

    fn scale(self, x: [b I], s: Float) -> [b O]:
        return self.forward(x) * s

model Mlp:
    param fc1: Linear[D, H]
    param fc2: Linear[H, C, bias=False]
    param blocks: [L] Linear[H, H]

    fn forward(self, x: [b D]) -> [b C]:
        h = relu(self.fc1(x))
        for blk in self.blocks:
            h = blk(h)
        return self.fc2(h)

fn lin(l: Linear[i, o], x: [n i]) -> [n o]:
    return l(x)

fn loss(fc: Linear[D, H], x: [b D]) -> [] NonNeg:
    return mean(relu(fc(x)))

fn train(mut fc: Linear[D, H], x: [b D]) -> [] NonNeg:
    v, g = value_and_grad(loss, fc, x)
    w = g.weight
    opt = SGD(fc, lr=0.1)
    opt.step(fc, g)
    return v + mean(relu(w))

fn main():
    fc = Linear[D, H].init(seed=0)
    y = fc(ones([2 D]))
    l = Linear[D, H, bias=False].init(seed=1)
    z = l.scale(ones([2 D]), 2.0)
    m = Mlp.init(seed=2)
    print(y, z, train(fc, ones([2 D])), lin(fc, ones([2 D])), m(ones([2 D])))
"""


def cursor(src: str) -> tuple[str, int]:
    assert src.count("$0") == 1, "one $0 cursor"
    i = src.index("$0")
    return src[:i] + src[i + 2 :], i


def mark(needle: str, nth: int = 0, into: int = 0, src: str = PROGRAM) -> str:
    """`src` with the cursor `into` characters into the nth `needle`."""
    i = -1
    for _ in range(nth + 1):
        i = src.index(needle, i + 1)
    return src[: i + into] + "$0" + src[i + into :]


def code(text: str) -> str:
    return f"```quiver\n{text}\n```"


def hover_at(src: str) -> tuple[str, str] | None:
    text, offset = cursor(src)
    a = check_text(text)
    assert not a.diagnostics and not a.internal_errors, a.diagnostics
    h = ide.hover(a, offset)
    return None if h is None else (text[h.span.start : h.span.end], h.markdown)


def test_the_program_checks_clean() -> None:
    a = check_text(PROGRAM)
    assert a.diagnostics == () or list(a.diagnostics) == []
    assert not a.internal_errors


# ====================================================================== hover

LINEAR_DH = code(
    "model Linear[D, H]\n    param weight: [D H]\n    param bias: [H]\n"
    "    fn forward(x: [.. D]) -> [.. H]\n    fn scale(x: [b D], s: Float) -> [b H]"
)
DECLARED = "\n\nDeclared `model Linear[I, O, bias: Bool = True]`."
FORWARD_DH = "\n\nCalling it runs `forward` of `Linear[D, H]`:\n\n" + code("fn forward(x: [.. D]) -> [.. H]")

HOVERS = [
    # the declaration: its header with dims and options, members under their
    # conditions, methods as declared
    (
        mark("model Linear", into=6),
        (
            "Linear",
            code(
                "model Linear[I, O, bias: Bool = True]\n    param weight: [I O]\n    param bias: [O] if bias\n"
                "    fn forward(x: [.. I]) -> [.. O]\n    fn scale(x: [b I], s: Float) -> [b O]"
            ),
        ),
    ),
    # a member whose type is an instance shows that type
    (mark("fc1: Linear"), ("fc1", code("param Mlp.fc1: Linear[D, H]"))),
    (mark("blocks: [L]"), ("blocks", code("param Mlp.blocks: [L] Linear[H, H]"))),
    # the model's name where it is given dims: that instance, its fields and methods with those dims
    (mark("Linear[D, H]\n"), ("Linear", LINEAR_DH + DECLARED)),
    (mark("Linear[D, H].init"), ("Linear", LINEAR_DH + DECLARED)),
    (mark("fc: Linear[D, H]", into=4), ("Linear", LINEAR_DH + DECLARED)),
    (
        mark("Linear[H, C, bias=False]"),
        (
            "Linear",
            code(
                "model Linear[H, C, bias=False]\n    param weight: [H C]\n"
                "    fn forward(x: [.. H]) -> [.. C]\n    fn scale(x: [b H], s: Float) -> [b C]"
            )
            + DECLARED,
        ),
    ),
    (
        mark("[L] Linear", into=4),
        (
            "Linear",
            code(
                "model Linear[H, H]\n    param weight: [H H]\n    param bias: [H]\n"
                "    fn forward(x: [.. H]) -> [.. H]\n    fn scale(x: [b H], s: Float) -> [b H]"
            )
            + DECLARED,
        ),
    ),
    # generic dims of a function, bound from its argument
    (
        mark("Linear[i, o]"),
        (
            "Linear",
            code(
                "model Linear[i, o]\n    param weight: [i o]\n    param bias: [o]\n"
                "    fn forward(x: [.. i]) -> [.. o]\n    fn scale(x: [b i], s: Float) -> [b o]"
            )
            + DECLARED,
        ),
    ),
    # a layer that is called: the forward it runs, with its dims
    (mark("self.fc1(x)", into=6), ("fc1", code("param Mlp.fc1: Linear[D, H]") + FORWARD_DH)),
    (
        mark("self.fc2(h)", into=6),
        (
            "fc2",
            code("param Mlp.fc2: Linear[H, C, bias=False]")
            + "\n\nCalling it runs `forward` of `Linear[H, C, bias=False]`:\n\n"
            + code("fn forward(x: [.. H]) -> [.. C]"),
        ),
    ),
    (mark("fc(ones"), ("fc", code("(local) fc: Linear[D, H]") + FORWARD_DH)),
    (mark("fc(x)"), ("fc", code("(param) fc: Linear[D, H]") + FORWARD_DH)),
    (
        mark("blk(h)"),
        (
            "blk",
            code("(local) blk: Linear[H, H]")
            + "\n\nCalling it runs `forward` of `Linear[H, H]`:\n\n"
            + code("fn forward(x: [.. H]) -> [.. H]"),
        ),
    ),
    (
        mark("l(x)"),
        (
            "l",
            code("(param) l: Linear[i, o]")
            + "\n\nCalling it runs `forward` of `Linear[i, o]`:\n\n"
            + code("fn forward(x: [.. i]) -> [.. o]"),
        ),
    ),
    # not called: the value alone
    (mark("fc = Linear"), ("fc", code("(local) fc: Linear[D, H]"))),
    (mark("for blk", into=4), ("blk", code("(local) blk: Linear[H, H]"))),
    # a method called on an instance: its signature in the instance's dims
    (
        mark("l.scale", into=2),
        (
            "scale",
            code("fn Linear[D, H, bias=False].scale(x: [b D], s: Float) -> [b H]")
            + "\n\nMethod of `Linear[I, O, bias: Bool = True]`, declared"
            " `fn Linear.scale(self, x: [b I], s: Float) -> [b O]`."
            + "\n\n**Param reads** of `self: Linear`: reads weight, bias"
            + "\n- `weight`: `Linear.forward(...)` in `Linear.scale` (line 17) → `self.weight` in `Linear.forward` (line 11)"
            + "\n- `bias`: `Linear.forward(...)` in `Linear.scale` (line 17) → `self.bias` in `Linear.forward` (line 13)",
        ),
    ),
    # inside a method: the declaration's member, under its condition, and the method itself
    (mark("self.bias", into=6), ("bias", code("param Linear.bias: [O] if bias"))),
    (mark("self.weight", into=6), ("weight", code("param Linear.weight: [I O]"))),
    (
        mark("fn forward", into=3),
        (
            "forward",
            code("fn Linear.forward(self, x: [.. I]) -> [.. O]")
            + "\n\n**Param reads** of `self: Linear`: reads weight, bias",
        ),
    ),
    # gradients of an instance: the instance's params with its dims
    (
        mark("v, g", into=3),
        (
            "g",
            code("(local) g: Grad[Linear[D, H]]")
            + "\n\nFields (one per param of `Linear[D, H]`; buffers have no gradient):\n\n"
            + code("weight: [D H]\nbias: [H]"),
        ),
    ),
    (
        mark("g.weight", into=3),
        (
            "weight",
            code("(gradient) Grad[Linear[D, H]].weight: [D H]")
            + "\n\nThe gradient with respect to param `weight` of `Linear[D, H]`.",
        ),
    ),
    # a field read through an instance: its type there, and as declared
    (mark("w = g"), ("w", code("(local) w: [D H]"))),
    # an inferred expression of an instance's forward
    (mark("y = fc"), ("y", code("(local) y: [2 H]"))),
]


@pytest.mark.parametrize("src, expected", HOVERS, ids=[f"{i}" for i in range(len(HOVERS))])
def test_hover(src: str, expected) -> None:
    assert hover_at(src) == expected


def test_hover_of_an_optimizer_of_an_instance() -> None:
    found = hover_at(mark("opt = SGD"))
    assert found is not None
    assert found[1].startswith(
        code("(local) opt: SGD[Linear[D, H]]")
        + "\n\n`SGD` optimizer of `Linear[D, H]`; `opt.step(m, g)` updates m and the state:"
    )
    assert "momentum_buffer: Grad[Linear[D, H]]  # state" in found[1]


def test_hover_of_a_gradient_without_an_absent_member() -> None:
    src = PROGRAM.replace(
        "fn main():\n", "fn one(g: Grad[Linear[D, H, bias=False]]) -> [D H]:\n    return g.weight\n\nfn main():\n"
    )
    assert hover_at(mark("g: Grad", src=src)) == (
        "g",
        code("(param) g: Grad[Linear[D, H, bias=False]]")
        + "\n\nFields (one per param of `Linear[D, H, bias=False]`; buffers have no gradient):\n\n"
        + code("weight: [D H]"),
    )
    # the model written inside Grad[...] is that instance
    assert hover_at(mark("Linear[D, H, bias=False]]", src=src))[1].startswith(  # type: ignore[index]
        code(
            "model Linear[D, H, bias=False]\n    param weight: [D H]\n"
            "    fn forward(x: [.. D]) -> [.. H]\n    fn scale(x: [b D], s: Float) -> [b H]"
        )
    )


def test_hover_of_dims_with_defaults_and_float_options() -> None:
    src = """\
dim C = 3

model Conv[Ci, Co, K, stride = 1, eps: Float = 1e-05]:
    param weight: [Co Ci K K] = zeros

fn f(c: Conv[C, 8, 3, stride=2, eps=0.001]) -> [8 C 3 3]:
    return c.weight
"""
    assert hover_at(mark("model Conv", into=6, src=src)) == (
        "Conv",
        code("model Conv[Ci, Co, K, stride = 1, eps: Float = 1e-05]\n    param weight: [Co Ci K K]"),
    )
    assert hover_at(mark("Conv[C, ", src=src)) == (
        "Conv",
        code("model Conv[C, 8, 3, 2, eps=0.001]\n    param weight: [8 C 3 3]")
        + "\n\nDeclared `model Conv[Ci, Co, K, stride = 1, eps: Float = 1e-05]`.",
    )


def test_hover_in_a_method_being_typed() -> None:
    # a broken statement of a method leaves the rest of it answering
    src = PROGRAM.replace("        return self.fc2(h)\n", "        return self.fc2(h)\n        q = self.\n")
    text, offset = cursor(mark("self.fc1(x)", into=6, src=src))
    h = ide.hover(check_text(text), offset)
    assert h is not None and h.markdown == code("param Mlp.fc1: Linear[D, H]") + FORWARD_DH


# ====================================================================== completion


def complete_items(src: str) -> list[tuple[str, str, str]]:
    text, offset = cursor(src)
    return [(c.label, c.kind, c.detail) for c in ide.completions(check_text(text), offset)]


def in_main(line: str) -> str:
    """PROGRAM with `line` (holding $0) added at the end of main."""
    return PROGRAM + f"    {line}\n"


def in_train(line: str) -> str:
    """PROGRAM with `line` (holding $0) added at the end of train."""
    return PROGRAM.replace("    return v + mean(relu(w))\n", f"    {line}\n    return v + mean(relu(w))\n")


def in_mlp_forward(line: str) -> str:
    """PROGRAM with `line` (holding $0) added at the end of Mlp.forward."""
    return PROGRAM.replace("        return self.fc2(h)\n", f"        return self.fc2(h)\n        {line}\n")


LINEAR_METHODS_DH = [
    ("forward", "method", "fn forward(x: [.. D]) -> [.. H]"),
    ("scale", "method", "fn scale(x: [b D], s: Float) -> [b H]"),
]


def test_completion_after_an_instance_lists_its_fields_and_methods() -> None:
    assert complete_items(in_main("q = fc.$0")) == [
        ("weight", "field", "param weight: [D H]"),
        ("bias", "field", "param bias: [H]"),
        *LINEAR_METHODS_DH,
    ]


def test_completion_leaves_out_a_member_the_options_remove() -> None:
    assert complete_items(in_main("q = l.$0")) == [("weight", "field", "param weight: [D H]"), *LINEAR_METHODS_DH]


def test_completion_through_fields_and_stacks_while_typing() -> None:
    assert complete_items(in_mlp_forward("q = self.$0")) == [
        ("fc1", "field", "param fc1: Linear[D, H]"),
        ("fc2", "field", "param fc2: Linear[H, C, bias=False]"),
        ("blocks", "field", "param blocks: [L] Linear[H, H]"),
        ("forward", "method", "fn forward(x: [b D]) -> [b C]"),
    ]
    assert complete_items(in_mlp_forward("q = self.fc2.$0")) == [
        ("weight", "field", "param weight: [H C]"),
        ("forward", "method", "fn forward(x: [.. H]) -> [.. C]"),
        ("scale", "method", "fn scale(x: [b H], s: Float) -> [b C]"),
    ]
    hh = [
        ("weight", "field", "param weight: [H H]"),
        ("bias", "field", "param bias: [H]"),
        ("forward", "method", "fn forward(x: [.. H]) -> [.. H]"),
        ("scale", "method", "fn scale(x: [b H], s: Float) -> [b H]"),
    ]
    assert complete_items(in_mlp_forward("q = self.blocks[0].$0")) == hh
    assert complete_items(in_mlp_forward("q = blk.$0")) == hh
    assert complete_items(in_main("q = m.fc1.$0")) == [
        ("weight", "field", "param weight: [D H]"),
        ("bias", "field", "param bias: [H]"),
        *LINEAR_METHODS_DH,
    ]


def test_completion_on_self_in_the_models_own_method() -> None:
    # every instance at once: the member under its condition is offered with it
    src = PROGRAM.replace("        return y\n", "        return y\n        q = self.$0\n")
    assert complete_items(src) == [
        ("weight", "field", "param weight: [I O]"),
        ("bias", "field", "param bias: [O] if bias"),
        ("forward", "method", "fn forward(x: [.. I]) -> [.. O]"),
        ("scale", "method", "fn scale(x: [b I], s: Float) -> [b O]"),
    ]


def test_completion_of_a_gradient_and_an_optimizer_of_an_instance() -> None:
    assert complete_items(in_train("q = g.$0")) == [
        ("weight", "field", "weight: [D H]"),
        ("bias", "field", "bias: [H]"),
    ]
    step = complete_items(in_train("opt.$0"))[0]
    assert step == ("step", "method", "opt.step(m: Linear[D, H], g: Grad[Linear[D, H]])")


def test_completion_after_a_model_with_its_dims_is_init() -> None:
    assert complete_items(in_main("q = Linear[D, H].$0")) == [("init", "method", "Linear.init(seed=Int) -> Linear")]


# ====================================================================== signature help


def signature(src: str) -> tuple[list[str], list[str], int | None, str]:
    """(labels, parameter texts of the chosen one, the active parameter, its documentation)."""
    text, offset = cursor(src)
    h = ide.signature_help(check_text(text), offset)
    assert h is not None
    sig = h.signatures[h.active_signature]
    return (
        [s.label for s in h.signatures],
        [sig.label[a:b] for a, b in sig.parameters],
        h.active_parameter,
        sig.documentation,
    )


def test_signature_help_of_a_layer_call_has_the_instances_dims() -> None:
    assert signature(in_mlp_forward("q = self.fc1($0")) == (
        ["Linear[D, H].forward(x: [.. D]) -> [.. H]"],
        ["x: [.. D]"],
        0,
        "Calling `self.fc1` (`Linear[D, H]`) runs its `forward`.",
    )
    assert signature(in_mlp_forward("q = self.blocks[1]($0"))[0] == ["Linear[H, H].forward(x: [.. H]) -> [.. H]"]
    assert signature(in_main("q = fc($0"))[0] == ["Linear[D, H].forward(x: [.. D]) -> [.. H]"]


def test_signature_help_of_a_method_call() -> None:
    assert signature(in_main("q = l.scale(ones([2 D]), $0")) == (
        ["Linear[D, H, bias=False].scale(x: [b D], s: Float) -> [b H]"],
        ["x: [b D]", "s: Float"],
        1,
        "Method `scale` of `Linear[D, H, bias=False]`.",
    )


def test_signature_help_of_init_and_of_value_and_grad_on_an_instance() -> None:
    labels, params, active, _ = signature(in_main("q = Linear[D, H].init($0"))
    assert (labels, params, active) == (["Linear[D, H].init(seed=Int) -> Linear[D, H]"], ["seed=Int"], 0)
    labels, params, active, _ = signature(in_train("q = value_and_grad(loss, fc, $0"))
    assert labels == ["value_and_grad(loss, fc: Linear[D, H], x: [b D]) -> ([] NonNeg, Grad[Linear[D, H]])"]
    assert active == 2


def test_signature_help_of_a_function_taking_an_instance() -> None:
    assert signature(in_main("q = lin($0"))[:3] == (
        ["lin(l: Linear[i, o], x: [n i]) -> [n o]"],
        ["l: Linear[i, o]", "x: [n i]"],
        0,
    )


# ====================================================================== inlay hints and definition


def test_inlay_hints_show_instances() -> None:
    a = check_text(PROGRAM)
    hints = {PROGRAM[PROGRAM.rfind("\n", 0, h.offset) + 1 : h.offset].strip(): h.label for h in ide.inlay_hints(a)}
    assert hints["fc"] == ": Linear[D, H]"
    assert hints["l"] == ": Linear[D, H, bias=False]"
    assert hints["for blk"] == ": Linear[H, H]"
    assert hints["y"] == ": [2 H]"
    assert hints["z"] == ": [2 H]"
    assert hints["v, g"] == ": Grad[Linear[D, H]]"
    assert hints["opt"] == ": SGD[Linear[D, H]]"


def spans_text(text: str, spans) -> list[str]:
    return [f"{text[s.start : s.end]}@{text[: s.start].count(chr(10)) + 1}" for s in spans]


@pytest.mark.parametrize(
    "src, expected",
    [
        (mark("l.scale", into=2), ["scale@16"]),  # a method called: the method
        (mark("self.forward(x)", into=6), ["forward@10"]),
        (mark("Linear[D, H].init"), ["Linear@6"]),
        (mark("self.fc1(x)", into=6), ["fc1@20"]),  # the layer called: its member
        (mark("fc(ones"), ["fc@44"]),
    ],
)
def test_definition(src: str, expected: list[str]) -> None:
    text, offset = cursor(src)
    targets = ide.definition(check_text(text), offset)
    assert spans_text(text, [t.focus for t in targets]) == expected


def test_references_of_a_model_include_its_stacks_and_instances() -> None:
    text, offset = cursor(mark("model Linear", into=6))
    found = spans_text(text, ide.references(check_text(text), offset))
    assert found == [f"Linear@{n}" for n in (6, 20, 21, 22, 30, 33, 36, 44, 46)]


def test_definition_of_a_method_spans_the_method() -> None:
    text, offset = cursor(mark("l.scale", into=2))
    (t,) = ide.definition(check_text(text), offset)
    assert text[t.span.start : t.span.end] == (
        "fn scale(self, x: [b I], s: Float) -> [b O]:\n        return self.forward(x) * s"
    )


# ====================================================================== options and a model's own dims

OPTION = (
    code("(option) Linear.bias: Bool = True")
    + "\n\nAn option of `Linear[I, O, bias: Bool = True]`, given by name, as in `Linear[..., bias=False]`;"
    " part of the instance's type. The members under it: bias."
)


@pytest.mark.parametrize("src", [mark("bias: Bool"), mark("zeros if bias", into=9), mark("if bias:", into=3)])
def test_an_option_in_the_header_a_condition_and_a_method(src: str) -> None:
    assert hover_at(src) == ("bias", OPTION)
    text, offset = cursor(src)
    a = check_text(text)
    assert spans_text(text, [t.focus for t in ide.definition(a, offset)]) == ["bias@6"]
    assert spans_text(text, ide.references(a, offset)) == ["bias@6", "bias@8", "bias@12"]
    (token,) = [t for t in ide.semantic_tokens(a) if t.span.start <= offset <= t.span.end]
    assert (token.type, "readonly" in token.modifiers) == ("parameter", True)


def test_a_float_option() -> None:
    src = "model Norm[E, eps: Float = 1e-05]:\n    param g: [E] = ones\n\n    fn forward(self, x: [E]) -> [E]:\n        return x * self.g + eps\n"
    assert hover_at(mark("+ eps", into=3, src=src)) == (
        "eps",
        code("(option) Norm.eps: Float = 1e-05")
        + "\n\nAn option of `Norm[E, eps: Float = 1e-05]`, given by name, as in `Norm[..., eps=1e-05]`;"
        " part of the instance's type.",
    )


def test_a_models_own_dim_goes_to_its_header() -> None:
    text, offset = cursor(mark("[I O] = zeros", into=1))
    a = check_text(text)
    assert spans_text(text, [t.focus for t in ide.definition(a, offset)]) == ["I@6"]
    assert spans_text(text, ide.references(a, offset)) == ["I@6", "I@7"]


# ====================================================================== through `import nn`

USER = NN_USER_PROGRAM

LIB = "/lib"


def nn_workspace(text: str = USER) -> tuple[Workspace, MemoryHost]:
    host = MemoryHost({"/p/main.qv": text, **{posixpath.join(LIB, n): t for n, t in LIBRARY.items()}})
    host.libraries = (LIB,)
    return Workspace(host, ["/p"]), host


def user_analysis(text: str):
    ws, _ = nn_workspace(text)
    a = ws.analyze("/p/main.qv")
    assert a is not None and not a.internal_errors
    return a


NN_FORWARD = "\n\nCalling it runs `forward` of `nn.Linear[D, H]`:\n\n" + code("fn forward(x: [.. D]) -> [.. H]")


def test_hover_through_nn() -> None:
    a = user_analysis(USER)
    assert list(a.diagnostics) == []

    def at(src: str) -> tuple[str, str]:
        text, offset = cursor(src)
        h = ide.hover(a, offset)
        assert h is not None
        return text[h.span.start : h.span.end], h.markdown

    assert at(mark("fc1: nn", src=USER)) == ("fc1", code("param Mlp.fc1: nn.Linear[D, H]"))
    assert at(mark("self.fc1(x)", into=6, src=USER)) == ("fc1", code("param Mlp.fc1: nn.Linear[D, H]") + NN_FORWARD)
    name, text = at(mark("nn.Linear[D, H]\n", into=4, src=USER))
    assert name == "nn.Linear"
    assert text.startswith(
        code(
            "model nn.Linear[D, H]\n    param weight: [D H]\n    param bias: [H]\n    fn forward(x: [.. D]) -> [.. H]"
        ).rpartition("\n```")[0]
    )
    assert text.endswith("\n\nDeclared `model nn.Linear[I, O, bias: Bool = True, dtype: DType = f32]`.")
    name, text = at(mark("fc.forward", into=4, src=USER))
    assert name == "forward"
    assert text.startswith(
        code("fn nn.Linear[D, H].forward(x: [.. D]) -> [.. H]")
        + "\n\nMethod of `nn.Linear[I, O, bias: Bool = True, dtype: DType = f32]`, declared"
        " `fn nn.Linear.forward(self, x: [.. I] dtype) -> [.. O] dtype`."
    )


def test_completion_and_signature_help_through_nn() -> None:
    src = USER + "    q = fc.$0\n"
    text, offset = cursor(src)
    items = [(c.label, c.detail) for c in ide.completions(user_analysis(text), offset)]
    assert items[:3] == [
        ("weight", "param weight: [D H]"),
        ("bias", "param bias: [H]"),
        ("forward", "fn forward(x: [.. D]) -> [.. H]"),
    ]
    src = USER.replace("        return self.fc2(", "        q = self.fc2($0\n        return self.fc2(")
    text, offset = cursor(src)
    h = ide.signature_help(user_analysis(text), offset)
    assert h is not None and [s.label for s in h.signatures] == [
        "nn.Linear[H, C, bias=False].forward(x: [.. H]) -> [.. C]"
    ]


def test_definition_through_nn_opens_the_library() -> None:
    ws, host = nn_workspace()
    lib = posixpath.join(LIB, "nn.qv")
    source = LIBRARY["nn.qv"]
    model_at = source.index("model Linear[") + len("model ")
    forward_at = source.index("fn forward", model_at) + len("fn ")
    for needle, into, want in [
        ("nn.Linear[D, H]\n", 4, model_at),
        ("nn.Linear[D, H].init", 5, model_at),
        ("fc.forward", 4, forward_at),
    ]:
        (t,) = nav.definition(ws, "/p/main.qv", USER.index(needle) + into)
        assert (t.path, t.target.focus.start) == (lib, want), needle
        assert source[t.target.focus.start : t.target.focus.end] in ("Linear", "forward")


def test_a_method_is_not_renamed() -> None:
    ws, _ = nn_workspace()
    with pytest.raises(nav.RenameError, match="cannot rename the method 'forward' of Linear"):
        nav.rename(ws, "/p/main.qv", USER.index("fc.forward") + 4, "fwd", ["/p/main.qv"])
