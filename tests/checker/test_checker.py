"""The checker's rules, one scenario each, written as annotated programs
(see tests/annotations.py): every expected diagnostic is drawn under the code,
and anything else the checker says fails the test."""

from __future__ import annotations

import textwrap
from functools import partial

import pytest
from annotations import check_annotated

from quiver.checker import check_text
from quiver.checker import types as T

PRELUDE = """\
dim D = 4
dim H = 8
dim C = 3
dim K = 3

model Mlp:
    param w1: [D H] = normal(0.0, 0.1)
    param b1: [H] = zeros
    param w2: [H C] = xavier
    param b2: [C] = zeros
    buffer steps: [] i64 = 0

"""


check = partial(check_annotated, prelude=PRELUDE, dedent=True)


def type_of(src: str, name: str) -> str:
    """The type the checker gives the last assignment of `name` in `src`."""
    a = check_text(PRELUDE + textwrap.dedent(src))
    assert not a.internal_errors
    for body in a.bodies.values():
        if name in body.locals:
            return str(body.locals[name])
    raise AssertionError(f"no local {name}")


# ------------------------------------------------------------------ shapes


def test_generic_dims_bind_per_call_and_flow_to_the_result() -> None:
    assert (
        type_of(
            """
    fn pair(x: [b D], y: [b H]) -> [b C]:
        return zeros([b C])

    fn main():
        r = pair(randn([5 D], seed=0), randn([5 H], seed=1))
        print(r)
    """,
            "r",
        )
        == "[5 C]"
    )


def test_a_dim_bound_twice_shows_expected_and_found_in_the_callers_dims() -> None:
    # the callee's q and k (bound to s from scores) are never shown beside the caller's s and t;
    # a dim not bound yet (k of pick) is shown as the argument gives it
    check("""
    fn masked(scores: [b q k], mask: [q k] Bool) -> [b q k]:
        return where(mask, scores, full([b q k], -1e9))

    fn pick(lens: [b] i64, m: [b k] Bool) -> [b k] Bool:
        return m

    fn attend(x: [b s t], pad: [t s] Bool, lens: [4] i64, m: [5 7] Bool) -> [b s t]:
        print(pick(lens, m))
    #                    ^ E0205: argument 'm' of pick: expected [4 7] Bool, found [5 7] Bool (4 from argument 'lens', not 5)
        return masked(x, pad)
    #                    ^^^ E0205: argument 'mask' of masked: expected [s t] Bool, found [t s] Bool (s from argument 'scores', not t)
    """)
    src = PRELUDE + "fn f(x: [b s t], pad: [t s] Bool) -> [b s t]:\n    return masked(x, pad)\n"
    src += "fn masked(scores: [b q k], mask: [q k] Bool) -> [b q k]:\n    return scores\n"
    (d,) = check_text(src).diagnostics
    notes = [(r.message, src[r.span.start : r.span.end]) for r in d.related]
    assert notes == [("s comes from this argument", "x"), ("declared here", "mask: [q k] Bool")]


def test_expected_and_found_print_their_dims_in_one_form() -> None:
    # a dim equal on both sides reads the same on both sides (as the expected type
    # writes it); a constant against a computed dim shows its value too
    check("""
    dim W = 28

    model Net:
        param k: [C 1 K K] = xavier

    fn f(x: [b 1 W W], k: [H 1 K K]) -> [b C (W-K+1) (W-K+1)]:
        return conv2d(x, k)
    #          ^^^^^^^^^^^^ E0201: return value: expected [b C (W-K+1)=26 (W-K+1)=26], found [b H (W-K+1)=26 (W-K+1)=26]

    fn g(x: [b W]) -> [b W]:
        return zeros([b (W-2)])
    #          ^^^^^^^^^^^^^^^^ E0201: return value: expected [b W=28], found [b (W-2)=26]

    fn h(x: [b 1 W W]) -> [b C W W]:
        return relu(conv2d(x, Net.init(seed=0).k))
    #          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0201: return value: expected [b C W W], found [b C 26 26] (from conv2d with padding 0; padding=1 keeps W)
    """)


def test_generic_dims_are_rigid_inside_their_function() -> None:
    check("""
    fn f(x: [b D], y: [n D]) -> [b D]:
        return x + y
    #          ^^^^^ E0202: cannot broadcast [b D] + [n D]: b and n differ
    """)


def test_broadcasting_aligns_trailing_dims() -> None:
    assert (
        type_of(
            """
    fn f(x: [b D], bias: [D], s: [1 D]) -> [b D]:
        y = x + bias + s + 1.0
        return y
    """,
            "y",
        )
        == "[b D]"
    )


def test_named_dims_differ_even_with_the_same_size() -> None:
    check("""
    fn f(x: [b C], y: [b K]) -> [b C]:
        return x + y
    #          ^^^^^ E0202: cannot broadcast [b C] + [b K]: C and K differ
    """)


def test_literal_dims_equal_constants_of_that_size() -> None:
    check("""
    fn f(x: [b 4]) -> [b D]:
        return x
    """)


def test_matmul_batch_and_vector_forms() -> None:
    assert (
        type_of(
            """
    fn f(a: [T b D], w: [D H], v: [H]) -> [T b]:
        r = a @ w @ v
        return r
    """,
            "r",
        )
        == "[T b]"
    )


def test_reductions_remove_the_named_dim() -> None:
    assert (
        type_of(
            """
    fn f(x: [b H C]) -> [b C]:
        r = sum(x, over=H)
        return r
    """,
            "r",
        )
        == "[b C]"
    )


def test_reduction_without_over_gives_a_scalar() -> None:
    assert (
        type_of(
            """
    fn f(x: [b H]) -> []:
        r = mean(x)
        return r
    """,
            "r",
        )
        == "[]"
    )


def test_indexing_drops_the_leading_dim() -> None:
    assert (
        type_of(
            """
    fn f(xs: [T b D]) -> [b D]:
        x = xs[0]
        return x
    """,
            "x",
        )
        == "[b D]"
    )


def test_transpose_swaps_the_last_two_dims() -> None:
    assert (
        type_of(
            """
    fn f(m: Mlp) -> [C H]:
        t = transpose(m.w2)
        return t
    """,
            "t",
        )
        == "[C H]"
    )


# ------------------------------------------------------------------ refinements and dtypes


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("relu(x)", "[b D] NonNeg"),
        ("exp(x)", "[b D] NonNeg"),
        ("sigmoid(x)", "[b D] Prob"),
        ("softmax(x, over=D)", "[b D] Prob"),
        ("log_softmax(x, over=D)", "[b D]"),
        ("tanh(x)", "[b D]"),
        ("abs(x) + relu(x)", "[b D] NonNeg"),
        ("relu(x) * 2.0", "[b D] NonNeg"),
        ("relu(x) - 1.0", "[b D]"),
        ("x * x", "[b D] NonNeg"),
        ("x ** 2", "[b D] NonNeg"),
        ("sigmoid(x) * sigmoid(x)", "[b D] Prob"),
        ("mean(sigmoid(x))", "[] Prob"),
        ("sum(sigmoid(x))", "[] NonNeg"),
        ("argmax(x, over=D)", "[b] Index[D]"),
        ("x as f64", "[b D] f64"),
        ("x as [b D] NonNeg", "[b D] NonNeg"),
        ("mean(x) as Float", "Float"),
        ("stop_grad(relu(x))", "[b D] NonNeg"),
        ("where(x > 0.0, x, 0.0)", "[b D]"),
    ],
)
def test_types_of_expressions(expr: str, expected: str) -> None:
    assert (
        type_of(
            f"""
    fn f(x: [b D]) -> Int:
        r = {expr}
        print(r)
        return 0
    """,
            "r",
        )
        == expected
    )


def test_refinements_are_checked_at_returns_and_arguments() -> None:
    check("""
    fn needs(p: [b] Prob) -> [b] Prob:
        return p

    fn f(x: [b]) -> [b] Prob:
        a = needs(sigmoid(x))
        print(a)
        return needs(x)
    #                ^ E0304: argument 'p' of needs: expected [b] Prob, found [b] Float
    """)


def test_dtypes_never_mix_silently() -> None:
    check("""
    fn f(x: [b D], y: [b D] f64, i: [b] i64) -> Int:
        a = x + y
    #       ^^^^^ E0302: '+' needs one element type on both sides: expected [b D] Float, found [b D] f64
        c = i + 1.5
    #       ^^^^^^^ E0302: '+' of an integer tensor and a Float: expected [b] i64, found Float
        print(a, c)
        return 0
    """)


def test_labels_must_index_the_class_dim() -> None:
    check("""
    fn l1(logits: [b C], y: [b] i64) -> [] NonNeg:
        return cross_entropy(logits, y, over=C)
    #                                ^ E0305: the labels must be Index[C] to index over=C: expected [b] Index[C], found [b] i64

    fn l2(logits: [b C], y: [b] Index[C]) -> [] NonNeg:
        return cross_entropy(logits, y, over=C)

    fn l3(logits: [T b C], y: [T b] Index[C]) -> [] NonNeg:
        return cross_entropy(logits, y, over=C)
    """)


def test_numbers_and_tensors_are_different_types() -> None:
    check("""
    fn f(x: [] NonNeg) -> Float:
        return x
    #          ^ E0301: return value: expected number Float, found tensor [] NonNeg

    fn g(x: [] NonNeg) -> Float:
        return x as Float
    """)


# ------------------------------------------------------------------ flow


def test_a_number_can_grow_into_a_scalar_tensor_in_a_loop() -> None:
    assert (
        type_of(
            """
    fn f(x: [b]) -> []:
        total = 0.0
        for i in range(3):
            total = total + mean(x)
        return total
    """,
            "total",
        )
        == "[]"
    )


def test_variables_assigned_in_one_branch_only() -> None:
    check("""
    fn f(flag: Bool) -> Int:
        if flag:
            y = 1
        elif not flag:
            y = 2
        else:
            y = 3
        if flag:
            z = 1
        return y + z
    #              ^ E0103: 'z' may be used before it is assigned
    """)


def test_branches_that_return_do_not_join() -> None:
    check("""
    fn f(flag: Bool) -> Int:
        if flag:
            return 1
        else:
            y = 2
        return y
    """)


def test_a_loop_variable_is_bound_only_inside_its_loop() -> None:
    # issue 36: two loops of one variable over stacks of two models were
    # E0311, as if the first loop's variable were still bound after it
    src = """\
dim D = 4

model Enc:
    param w: [D D] = zeros

model Dec:
    param v: [D] = zeros

model Net:
    param encoder_layers: [2] Enc
    param decoder_layers: [3] Dec

    fn forward(self, x: [b D], deep: Bool) -> [b D]:
        for layer in self.encoder_layers:
            x = x @ layer.w
        for layer in self.decoder_layers:
            x = x + layer.v
        if deep:
            for layer in self.encoder_layers:
                x = x @ layer.w
        else:
            for layer in self.decoder_layers:
                x = x + layer.v
        for i in range(3):
            x = 2.0 * x
        for i in range(2):
            x = x + self.decoder_layers[i].v
        print(i)
        layer = 1.5
        return x * layer

fn rebinds(m: Net, x: [b D]) -> [b D]:
    layer = 3
    print(layer)
    for layer in m.encoder_layers:
        x = x @ layer.w
    return x
"""
    a = check_text(src)
    assert not a.internal_errors
    got = [(d.code, d.message, src[d.span.start : d.span.end], d.span.start) for d in a.diagnostics]
    at = src.index("print(i)") + len("print(")
    assert got == [
        ("E0103", "'i' may be used before it is assigned", "i", at),
        ("E0311", "'layer' is Enc on one path and Int on another", "layer", src.index("layer in m.")),
    ]
    [related] = a.diagnostics[0].related
    assert related.message == "'i' is bound only inside this loop"


def test_while_loops_and_break() -> None:
    check("""
    fn f(n: Int) -> Int:
        i = 0
        while i < n:
            i = i + 1
            if i > 10:
                break
        return i
    """)


def test_unreachable_code_is_reported_once_per_block() -> None:
    check("""
    fn f() -> Int:
        return 1
        x = 2
    #   ^^^^^ W0102: unreachable code
    """)


def test_a_typo_is_reported_once() -> None:
    check("""
    fn f(x: [b D]) -> [b D]:
        y = relu(xx)
    #            ^^ E0101: unknown name 'xx'; did you mean 'x'?
        z = y + xx
        return z
    """)


# ------------------------------------------------------------------ calls


def test_keyword_arguments_to_functions() -> None:
    check("""
    fn scale(x: [b D], by: Float) -> [b D]:
        return x * by

    fn f(x: [b D]) -> [b D]:
        return scale(by=2.0, x=x)
    """)


def test_pipes_insert_the_left_side_first() -> None:
    assert (
        type_of(
            """
    fn f(x: [b C], y: [b] Index[C]) -> [] NonNeg:
        l = x |> relu |> cross_entropy(y, over=C)
        return l
    """,
            "l",
        )
        == "[] NonNeg"
    )


def test_calling_something_that_is_not_a_function() -> None:
    check("""
    fn f(m: Mlp) -> Int:
        m.w1(1)
    #   ^^^^ E0409: m.w1 cannot be called: it is a param of Mlp, not a function
        return 0
    """)


def test_extern_calls_are_checked_like_functions() -> None:
    check("""
    extern fn load(n: Int) -> [64 D] from "data:load"

    fn f() -> [64 D]:
        x = load(2.5)
    #            ^^^ E0301: argument 'n' of load: expected number Int, found number Float
        return load(3)
    """)


# ------------------------------------------------------------------ models and mutability


def test_params_keep_their_declared_type() -> None:
    check("""
    fn f(mut m: Mlp, x: [b D]):
        m.b1 = relu(m.b1)
        m.w2 = m.w1
    #          ^^^^ E0201: field Mlp.w2: expected [H C], found [D H]
        m.steps = m.steps + 1
    """)


def test_mut_flows_through_calls() -> None:
    check("""
    fn bump(mut m: Mlp):
        m.steps = m.steps + 1

    fn outer(mut m: Mlp):
        bump(m)

    fn main():
        m = Mlp.init(seed=0)
        bump(m)
        outer(m)
    """)


# ------------------------------------------------------------------ gradients


def test_value_and_grad_types() -> None:
    src = """
    fn loss(m: Mlp, x: [b D], y: [b] Index[C], mode: Mode) -> [] NonNeg:
        h = dropout(relu(x @ m.w1 + m.b1), 0.5, mode)
        return cross_entropy(h @ m.w2 + m.b2, y, over=C)

    fn step(m: Mlp, x: [b D], y: [b] Index[C], i: Int) -> Grad[Mlp]:
        l, g = value_and_grad(loss, m, x, y, Train(seed=i))
        print(l)
        return g
    """
    check(src)
    assert type_of(src, "g") == "Grad[Mlp]"
    assert type_of(src, "l") == "[] NonNeg"


def test_value_and_grad_checks_its_arguments_like_a_call() -> None:
    check("""
    fn loss(m: Mlp, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w1 + m.b1) @ m.w2 + m.b2 |> relu)

    fn step(m: Mlp, x: [b H]) -> Grad[Mlp]:
        l, g = value_and_grad(loss, m, x)
    #                                  ^ E0201: argument 'x' of loss: expected [b D], found [b H]
        return g
    """)


def test_value_and_grad_rejects_externs_builtins_and_values() -> None:
    check("""
    extern fn ext(m: Mlp) -> [] from "x:y"

    fn f(m: Mlp) -> Int:
        a, b = value_and_grad(ext, m)
    #                         ^^^ E1105: value_and_grad: f must be the name of a fn; 'ext' is an extern fn
        c, d = value_and_grad(relu, m)
    #                         ^^^^ E1105: value_and_grad: f must be the name of a fn; 'relu' is a built-in
        return 0
    """)


def test_gradient_arithmetic() -> None:
    check("""
    fn loss(m: Mlp, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w1 + m.b1) @ m.w2 + m.b2 |> relu)

    fn f(m: Mlp, x: [b D]) -> Grad[Mlp]:
        l, g = value_and_grad(loss, m, x)
        a = g + g - g * 2.0 - 0.5 * g + g / norm(g) - g * l
        k = -a / 3
        c = 2.0 / g
    #       ^^^^^^^ E1108: number Float / Grad[Mlp] is not defined: gradients support g + g, g - g, -g, and * or / by a number or []
        d = mean(g)
    #            ^ E1108: mean(Grad[Mlp]) is not defined: gradients support g + g, g - g, -g, and * or / by a number or []
        e = g + x
    #       ^^^^^ E1108: Grad[Mlp] + tensor [b D] is not defined: gradients support g + g, g - g, -g, and * or / by a number or []
        print(c, d, e)
        return k
    """)


def test_gradients_of_different_models_do_not_add() -> None:
    check("""
    model Other:
        param w1: [D H] = zeros

    fn f(g: Grad[Mlp], h: Grad[Other]) -> Grad[Mlp]:
        return g + h
    #          ^^^^^ E0904: '+' of gradients: expected Grad[Mlp], found Grad[Other]
    """)


def test_as_grad_is_e0303() -> None:
    check("""
    fn f(x: [D H]) -> Int:
        g = x as Grad[Mlp]
    #            ^^^^^^^^^ E0303: Grad[Mlp]: a value cannot be cast to a gradient type
        print(g)
        return 0
    """)


# ------------------------------------------------------------------ param reads


def test_reads_through_calls_pipes_and_nested_value_and_grad() -> None:
    check("""
    fn hidden(m: Mlp, x: [b D]) -> [b H]:
        return relu(x @ m.w1)

    fn head(h: [b H], m: Mlp) -> [b C]:
        return h @ m.w2

    fn inner(m: Mlp, x: [b D]) -> [] NonNeg:
        return mean(relu(hidden(m, x) |> head(m)))

    fn outer(m: Mlp, x: [b D]) -> [] NonNeg:
        l, g = value_and_grad(inner, m, x)
    #                         ^^^^^ W1101: inner never reads param b1 of Mlp: its gradient is always zero
    #                         ^^^^^ W1101: inner never reads param b2 of Mlp: its gradient is always zero
        return l

    fn train(m: Mlp, x: [b D]) -> Grad[Mlp]:
        l, g = value_and_grad(outer, m, x)
    #                         ^^^^^ W1101: outer never reads param b1 of Mlp: its gradient is always zero
    #                         ^^^^^ W1101: outer never reads param b2 of Mlp: its gradient is always zero
        return g
    """)


def test_an_extern_may_read_every_param() -> None:
    check("""
    extern fn score(m: Mlp, x: [b D]) -> [] NonNeg from "scoring:score"

    fn loss(m: Mlp, x: [b D]) -> [] NonNeg:
        return score(m, x)

    fn f(m: Mlp, x: [b D]) -> Grad[Mlp]:
        l, g = value_and_grad(loss, m, x)
        return g
    """)


def test_params_read_only_under_stop_grad_are_not_differentiated() -> None:
    check("""
    fn loss(m: Mlp, x: [b D]) -> [] NonNeg:
        h = relu(x @ m.w1 + m.b1) @ stop_grad(m.w2)
        return mean(relu(h + m.b2))

    fn f(m: Mlp, x: [b D]) -> Grad[Mlp]:
        l, g = value_and_grad(loss, m, x)
    #                         ^^^^ W1101: loss reads param w2 of Mlp only under stop_grad: its gradient is always zero
        return g
    """)


def test_recursion_is_fine_for_reads() -> None:
    check("""
    fn deep(m: Mlp, x: [b D], n: Int) -> [] NonNeg:
        if n > 0:
            return deep(m, x, n - 1)
        return mean(relu(x @ m.w1 + m.b1) @ m.w2 + m.b2 |> relu)

    fn f(m: Mlp, x: [b D]) -> Grad[Mlp]:
        l, g = value_and_grad(deep, m, x, 3)
        return g
    """)


def test_unknowns_silence_everything_downstream() -> None:
    check("""
    fn f(x: [b D]) -> [b C]:
        y = mystery(x)
    #       ^^^^^^^ E0101: unknown name 'mystery'; did you mean 'mse'?
        z = y @ x + 1
        return z |> relu
    """)


def test_param_read_api_gives_chains() -> None:
    src = PRELUDE + textwrap.dedent("""
    fn hidden(m: Mlp, x: [b D]) -> [b H]:
        return relu(x @ m.w1)

    fn loss(m: Mlp, x: [b D]) -> [] NonNeg:
        return mean(hidden(m, x) @ m.w2 |> relu)
    """)
    a = check_text(src)
    from quiver.checker.reads import param_reads

    (reads,) = param_reads(a.reads, a.fn("loss"), a.globals)
    assert [name for name, _ in reads.read] == ["w1", "w2"]
    assert reads.unread == ("b1", "b2")
    assert reads.describe() == "reads w1, w2 — never b1, b2"
    chain = dict(reads.read)["w1"]
    assert [(s.fn, s.text) for s in chain] == [("loss", "hidden(...)"), ("hidden", "m.w1")]


def test_every_example_checks_clean() -> None:
    from pathlib import Path

    from nn_library import LIBRARY

    from quiver.checker.workspace import MemoryHost, Workspace

    # one workspace over the folder: gpt.qv imports gpt_model.qv, and the examples import nn
    paths = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.qv"))
    files = {f"/examples/{p.name}": p.read_text() for p in paths}
    host = MemoryHost({**files, **{f"/library/{name}": text for name, text in LIBRARY.items()}})
    host.libraries = ("/library",)
    ws = Workspace(host, ["/examples"])
    for path in paths:
        a = ws.analyze(f"/examples/{path.name}")
        assert a is not None and a.diagnostics == [], (path.name, [(d.code, d.message) for d in a.diagnostics])


def test_type_printing() -> None:
    assert str(T.TensorT((T.DimVar("b"), T.DimConst("D", 4)), T.NONNEG)) == "[b D] NonNeg"
    assert str(T.TensorT((), T.index_of(T.DimConst("C", 3)))) == "[] Index[C]"
    assert str(T.TensorT((T.DimLit(2),), T.Elem("f64"))) == "[2] f64"


def test_did_you_mean_diagnostics_carry_the_rename() -> None:
    src = PRELUDE + "fn f(m: Mlp, x: [b D]) -> [b H]:\n    return x @ m.w11\n"
    (d,) = check_text(src).diagnostics
    assert d.code == "E0107" and d.message.endswith("did you mean 'w1'?")
    assert d.fix is not None and d.fix.title == "Change to 'w1'"
    (edit,) = d.fix.edits
    assert src[edit.span.start : edit.span.end] == "w11" and edit.new_text == "w1"


def test_no_close_name_means_no_fix() -> None:
    (d,) = check_text("fn f() -> Int:\n    return zzzzzz\n").diagnostics
    assert d.code == "E0101" and d.fix is None


def test_errors_in_a_differentiated_function_silence_its_read_warnings() -> None:
    # The mistake (m.w1 for m.w2) is reported once; that w2 is then unread is
    # its consequence, not a second finding.
    check("""
    fn forward(m: Mlp, x: [b D]) -> [b C]:
        h = relu(x @ m.w1 + m.b1)
        return h @ m.w1 + m.b2
    #          ^^^^^^^^ E0203: matmul [b H] NonNeg @ [D H]: inner dims H and D differ

    fn loss(m: Mlp, x: [b D]) -> [] NonNeg:
        return mean(relu(forward(m, x)))

    fn f(m: Mlp, x: [b D]) -> Grad[Mlp]:
        l, g = value_and_grad(loss, m, x)
        return g
    """)


def test_per_example_gradients_of_a_fn_whose_return_type_is_reported_give_that_one_error() -> None:
    # `-> NonNeg` (E0309) left the loss's type unknown, and value_and_grad(...,
    # batch=n) asserted it was a tensor: an internal error (found by the
    # incremental fuzz on examples/dpsgd.qv)
    src = (
        "dim D = 4\n\nmodel Lin:\n    param w: [D] = zeros\n\n"
        "fn row_loss(m: Lin, x: [D]) -> NonNeg:\n    return sum(x * m.w)\n\n"
        "fn per_example(m: Lin, xs: [n D]) -> [n]:\n"
        "    l, g = value_and_grad(row_loss, m, xs, batch=n)\n    return l\n"
    )
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == ["E0309"]
    assert not a.internal_errors
