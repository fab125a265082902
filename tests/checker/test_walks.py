"""Walks over a model (issue 39): `named_params(m, seed=...)`,
`modules(m, Kind, seed=...)`, `num_params(m)`, `ndim`/`numel`, and
`p.init(...)` of a walked param, in place: the types a walk gives, and one
diagnostic, at its place, for each mistake (E0934-E0936, E0501 for a walk
of a model that is not `mut`)."""

from __future__ import annotations

from functools import partial

from annotations import check_annotated

from quiver.checker import check_text
from quiver.checker import types as T

HEAD = """\
dim D = 4
dim L = 2

model Lin[I, O, bias: Bool = True]:
    param weight: [I O] = kaiming_uniform(a=sqrt(5.0))
    param bias: [O] = zeros if bias

model Block:
    param w: [D D] = zeros
    param b: [D] = zeros

model Net:
    param blocks: [L] Block
    param fc: Lin[D, D]
    param head: Lin[D, 2, bias=False]
    buffer steps: [] i64 = 0
"""

annotated = partial(check_annotated, prelude=HEAD, dedent=True)


def test_walks_check_clean_and_are_typed() -> None:
    src = """
        fn init_weights(mut m: Net, std: Float):
            for name, p in named_params(m, seed=0):
                if name.endswith("w") or name.startswith("fc."):
                    p.init(normal(0.0, std / sqrt(2.0 * L)))
                elif ndim(p) >= 2:
                    p.init(xavier_uniform(gain=2.0))
                else:
                    p.init(0.5)
            for layer in modules(m, Lin, seed=1):
                layer.weight.init(kaiming_normal(mode="fan_out", nonlinearity="relu"))
            for blk in modules(m, Block, seed=2):
                blk.b.init(zeros)
                blk.w.init(orthogonal())

        fn count(m: Net) -> Int:
            n = 0
            for name, p in named_params(m, seed=0):
                n = n + numel(p)
            return num_params(m) + n
        """
    a = annotated(src)
    found = {}
    for node, t in _types(a).items():
        text = getattr(node, "text", getattr(node, "name", None))
        if text in ("p", "layer", "blk", "name"):
            found.setdefault(text, t)
    assert found["name"] == T.STR
    assert found["p"] == T.TensorT((T.REST,), T.F32)  # a param of any rank: [..]
    assert found["layer"] == T.ModelT("Lin", (T.DimUnknown(), T.DimUnknown()), generic=True)
    assert found["blk"] == T.ModelT("Block")


def test_a_walked_param_has_the_float_type_of_the_params_in_a_list_of_sub_models() -> None:
    # the params of a list's elements are the model's params (the walk read
    # only sub-models and stacks, so the list's f64 went unseen: [..] f32)
    a = check_text(
        "model L64:\n    param w: [4 4] f64 = zeros\n\n"
        "model Net64:\n    param layers: (L64, L64)\n\n"
        "fn f(mut m: Net64):\n    for name, p in named_params(m, seed=0):\n        p.init(zeros)\n"
    )
    assert not a.diagnostics
    found = [t for node, t in _types(a).items() if getattr(node, "text", getattr(node, "name", None)) == "p"]
    assert found and all(t == T.TensorT((T.REST,), T.Elem("f64")) for t in found)


def _types(a) -> dict:
    out: dict = {}
    for body in a.bodies.values():
        out.update(body.types)
    return out


def test_walk_of_a_model_that_is_not_mut() -> None:
    annotated(
        """
        fn frozen(m: Net):
            for name, p in named_params(m, seed=0):
                p.init(zeros)
        #       ^^^^^^ E0501: cannot assign p.init: 'm' is not a mut parameter
        """
    )


def test_a_member_under_an_option_in_a_walk_by_kind_points_to_named_params() -> None:
    # a walk by kind gives every instance of the kind: `if bias:` is no way to
    # reach the member there, and the message says what is
    annotated(
        """
        fn biases(mut m: Net):
            for layer in modules(m, Lin, seed=0):
                layer.bias.init(zeros)
        #             ^^^^ E0914: Lin[?, ?] has no field 'bias': it exists only when bias=True; a walk by kind sees every instance, so reach it by name through named_params (`if name.endswith(".bias"):`)
        """
    )


def test_init_of_what_no_walk_gives() -> None:
    annotated(
        """
        fn through_field(mut m: Net):
            m.blocks[0].w.init(zeros)
        #   ^^^^^^^^^^^^^^^^^^ E0935: m.blocks[0].w.init(...) initialises a param of a walk in place, and m.blocks[0].w is a field read through the model, not a param a walk gives
            x = zeros([D])
            x.init(zeros)
        #   ^^^^^^ E0935: x.init(...) initialises a param of a walk in place, and x is a value of this function, not a param a walk gives
        """
    )


def test_initializers_that_do_not_fit() -> None:
    annotated(
        """
        fn bad_inits(mut m: Net, std: Float):
            for blk in modules(m, Block, seed=0):
                blk.b.init(xavier)
        #                  ^^^^^^ E0936: blk.b.init(...): xavier needs at least 2 dims, found [D]
                blk.w.init(gaussian(0.0, 1.0))
        #                  ^^^^^^^^ E0936: blk.w.init(...): gaussian is not an initializer
                blk.w.init(normal(0.0))
        #                  ^^^^^^^^^^^ E0936: blk.w.init(...): normal takes 2 numbers, as in normal(0.0, 0.02)
                blk.w.init(normal(0.0, std), zeros)
        #       ^^^^^^^^^^ E0936: blk.w.init(...): init takes one initializer, as in p.init(normal(0.0, 0.02))
                blk.w.init(uniform(0.0, "x"))
        #                               ^^^ E0301: uniform's high: expected Float, found string
            for layer in modules(m, Lin, seed=0):
                layer.weight.init(kaiming_normal(mode="fan_av"))
        #                                             ^^^^^^^^ E0936: layer.weight.init(...): kaiming_normal's mode is one of "fan_in", "fan_out"
                layer.weight.init(orthogonal(scale=2.0))
        #                                    ^^^^^^^^^ E0936: layer.weight.init(...): orthogonal takes no argument scale=
                layer.weight.init(orthogonal(1.0, 2.0))
        #                                         ^^^ E0936: layer.weight.init(...): orthogonal takes 1 argument at most
            for layer in modules(m, Nope, seed=0):
        #                           ^^^^ E0101: unknown name 'Nope'
                layer.weight.init(orthogonal(gain=1.0))
        """
    )


def test_walks_of_what_is_not_a_model() -> None:
    annotated(
        """
        fn not_models(x: [D]) -> Int:
            for blk in modules(x, D, seed=0):
        #                      ^ E0934: modules walks a model: its first argument must be a model, found tensor [D]
        #                         ^ E0934: modules walks a model: its second argument is a model's name (the kind of sub-model to visit), found Int
                pass
            return num_params(x)
        #                     ^ E0934: num_params walks a model: its first argument must be a model, found tensor [D]

        fn not_a_kind(mut m: Net):
            for blk in modules(m, Block[2], seed=0):
        #                         ^^^^^^^^ E0910: Block takes no dims, found Block[...]
                pass
        """
    )


def test_ties_check_clean() -> None:
    annotated(
        """
        model Tied:
            param wte: [4 D] = normal(0.0, 0.02)
            param head: [4 D] = tied(wte)
            param enc: Lin[D, D]
            param dec: Lin[D, D] = tied(enc)
            param again: Lin[D, D] = tied(dec)
        """
    )


def test_ties_that_do_not_hold() -> None:
    annotated(
        """
        model Bad[on: Bool = True]:
            param wte: [4 D] = normal(0.0, 0.02)
            param a: [D 4] = tied(wte)
        #                    ^^^^^^^^^ E0937: cannot tie a: a is [D 4], and wte is [4 D]
            param b: [4 D] = tied(wtf)
        #                         ^^^ E0937: cannot tie b: wtf is not a param declared before it in this model; did you mean 'wte'?
            param c: [4 D] = tied(wte.weight)
        #                    ^^^^^^^^^^^^^^^^ E0937: cannot tie c: tied(...) takes the name of one param of this model, as in tied(wte)
            buffer s: [4 D] = zeros
            param d: [4 D] = tied(s)
        #                         ^ E0937: cannot tie d: a tie makes one param of two; s is a buffer
            param g: [4 D] = zeros if on
            param h: [4 D] = tied(g)
        #                    ^^^^^^^ E0937: cannot tie h: a tied param and its source exist always, and g exists only under an option
            param enc: Lin[D, D]
            param dec: Lin[D, L] = tied(enc)
        #                          ^^^^^^^^^ E0937: cannot tie dec: dec is Lin[D, L], and enc is Lin[D, D]
        """
    )
