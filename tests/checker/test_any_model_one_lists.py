"""Three small forms of issue 39: a trait without methods (`trait Module:
pass`, `nn.Module`), which every model satisfies, for one function that
walks, counts and saves any network (DCGAN's `weights_init`); a list of one
sub-model, `param layers: (nn.Linear[4, 8],)` (a tuple of one anywhere else
is E0941); and `nn.Sigmoid` giving a `Prob`, as `sigmoid` does, through
`Prob[dtype]` of a model's DType option. Exact codes, ranges and messages."""

from __future__ import annotations

from annotations import actual, parse_annotations, program
from nn_library import LIBRARY

from quiver.checker import ide
from quiver.checker import types as T
from quiver.checker.formatter import format_text
from quiver.checker.workspace import check_example

HEAD = """\
import nn

dim D = 4

trait Module:
    pass

model Gen:
    param main: (nn.ConvTranspose2d[D, 2, 4, 1, 0, bias=False], nn.BatchNorm2d[2], nn.ReLU)

    fn forward(self, z: [b D 1 1], mode: Mode) -> [b 2 4 4]:
        return self.main(z, mode)

model Disc:
    param main: (nn.Conv2d[2, 1, 4, 1, 0, bias=False], nn.Sigmoid)
    param w: [D] = zeros

    fn forward(self, x: [b 2 4 4]) -> [b 1 1 1] Prob:
        return self.main(x)
"""


def check_text(text: str):
    """A program with `import nn` (the library beside it)."""
    return check_example(text, LIBRARY)


def annotated(src: str):
    """Exactly the annotated diagnostics (tests/annotations.py) of HEAD then
    `src`, with nn: their ranges, codes and (where written) messages."""
    source = program(src, prelude=HEAD, dedent=True)
    a = check_text(source)
    assert not a.internal_errors, a.internal_errors[0]
    want = sorted((w.line, w.start, w.end, w.code, w.message) for w in parse_annotations(source))
    got = sorted((g.line, g.start, g.end, g.code, g.message) for g in actual(a))
    assert [g if w[4] is not None else g[:4] + (None,) for w, g in zip(want, got)] == want, got
    assert len(got) == len(want), got
    return a


def test_a_trait_without_methods_takes_any_model_for_walks_counts_and_save() -> None:
    src = """
        fn weights_init[M: Module](mut m: M, seed: Int):
            for conv in modules(m, nn.Conv2d, seed=seed):
                conv.weight.init(normal(0.0, 0.02))
            for conv in modules(m, nn.ConvTranspose2d, seed=seed):
                conv.weight.init(normal(0.0, 0.02))
            for name, p in named_params(m, seed=seed + 1):
                if name.endswith(".weight") and ndim(p) == 1:
                    p.init(normal(1.0, 0.02))

        fn count[M: nn.Module](m: M) -> Int:
            return num_params(m)

        fn copy[M: Module](m: M, mut into: M, path: Str):
            save(path, m)
            load(path, into)

        fn main():
            g = Gen.init(seed=0)
            d = Disc.init(seed=1)
            weights_init(g, 10)
            weights_init(d, 20)
            print(count(g) + count(d))
            copy(d, Disc.init(seed=2), "d.pt")
        """
    annotated(src)


def test_nn_module_is_the_library_s_any_model() -> None:
    src = """
        fn count[M: nn.Module, N: Module](m: M, n: N) -> Int:
            return num_params(m) + num_params(n)

        fn main():
            print(count(Gen.init(seed=0), nn.Linear[3, 2].init(seed=0)))
        """
    annotated(src)


def test_what_any_model_does_not_have() -> None:
    src = """
        fn fields[M: Module](m: M) -> [D]:
            return m.w
        #            ^ E0922: 'w': M stands for any model with trait Module; its traits declare no methods, and its fields are not known

        fn method[M: Module](m: M, x: [b 2 4 4]) -> [b 1 1 1]:
            return m.forward(x)
        #            ^^^^^^^ E0922: 'forward': M stands for any model with trait Module; it has no method 'forward': its traits declare none

        fn called[M: Module](m: M, x: [b 2 4 4]) -> [b 1 1 1]:
            return m(x)
        #          ^ E0922: 'forward': M stands for any model with trait Module; it has no method 'forward': its traits declare none

        trait Enc:
            fn encode(self, x: [b D]) -> [b D]

        fn no_forward[M: Enc](m: M, x: [b D]) -> [b D]:
            return m(x)
        #          ^ E0922: 'forward': M stands for any model with trait Enc; it has no method 'forward', only encode

        fn frozen[M: Module](m: M):
            for name, p in named_params(m, seed=0):
                p.init(zeros)
        #       ^^^^^^ E0501: cannot assign p.init: 'm' is not a mut parameter

        fn by_kind[M: Module](mut m: M):
            for lin in modules(m, nn.Linear, seed=0):
                lin.bias.init(zeros)
        #           ^^^^ E0914

        fn main():
            print(fields(3))
        #                ^ E0904: argument 'm' of fields: expected M, found number Int
        """
    annotated(src)


def test_a_trait_body_of_pass_only() -> None:
    a = check_text("trait Module:\n    pass\n")
    assert [d.code for d in a.diagnostics] == []
    info = a.globals.models["Module"]
    assert info.trait and info.methods == ()
    # `pass` beside a method is a syntax error, as a trait without methods spelled otherwise
    for text in (
        "trait Module:\n    pass\n    fn forward(self) -> Int\n",
        "trait Module:\n    fn forward(self) -> Int\n    pass\n",
        "trait Module:\n",
    ):
        codes = [d.code for d in check_text(text).diagnostics]
        assert codes and all(c.startswith("E00") for c in codes), (text, codes)


# ------------------------------------------------------- a list of one


def test_a_list_of_one_sub_model_is_a_member_type() -> None:
    src = """
        model Net:
            param layers: (nn.Linear[D, 8],)

            fn forward(self, x: [b D]) -> [b 8]:
                return self.layers(x)

            fn first(self, x: [b D]) -> [b 8]:
                return self.layers[0](x)

            fn looped(self, x: [b D]) -> [b 8]:
                h = zeros([b 8])
                for layer in self.layers:
                    h = h + layer(x)
                return h

        fn weight(m: Net) -> [D 8]:
            return m.layers[0].weight
        """
    a = annotated(src)
    net = a.globals.models["Net"]
    (field,) = net.fields
    assert isinstance(field.type, T.TupleT) and len(field.type.items) == 1
    assert str(field.type) == "(nn.Linear[D, 8],)"


def test_a_tuple_of_one_elsewhere_is_e0941() -> None:
    src = """
        type One = (nn.Linear[D, 8],)
        #          ^^^^^^^^^^^^^^^^^^ E0941: (nn.Linear[D, 8],) is a tuple of one element: only a member's type may be one (a list of one sub-model); write nn.Linear[D, 8]

        fn one(x: [D]) -> ([D],):
        #                 ^^^^^^ E0941: ([D],) is a tuple of one element: only a member's type may be one (a list of one sub-model); write [D]
            return x

        model Net:
            param w: ([D],)
        #             ^^^ E0938: element 0 of w is tensor [D], not a model: a list of sub-models holds models only
            param v: ((Gen,),)
        #             ^^^^^^ E0941
        """
    annotated(src)


# ------------------------------------------------------- nn.Sigmoid


def test_nn_sigmoid_gives_a_prob_of_its_dtype() -> None:
    src = """
        fn p(x: [b D]) -> [b D] Prob:
            return nn.Sigmoid.init(seed=0)(x)

        fn loss(x: [b], y: [b]) -> [] NonNeg:
            return binary_cross_entropy(nn.Sigmoid.init(seed=0)(x), y)

        fn p64(x: [b D] f64) -> [b D] f64:
            return nn.Sigmoid[dtype=f64].init(seed=0)(x)

        fn in_a_chain(d: Disc, x: [b 2 4 4]) -> [b] Prob:
            return reshape(d(x), [b])

        fn not_f32(x: [b D] f64) -> [b D] Prob:
            return nn.Sigmoid[dtype=f64].init(seed=0)(x)
        #          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0302: return value: expected [b D] Prob, found [b D] f64 (Prob is a refinement of f32; declare an f64 value as [b D] f64)
        """
    annotated(src)


def test_a_refinement_of_a_dtype_option() -> None:
    src = """
        model Act[dtype: DType = f32]:
            fn forward(self, x: [..] dtype) -> [..] Prob[dtype]:
                return sigmoid(x)

        model Plain[dtype: DType = f32]:
            fn forward(self, x: [..] dtype) -> [..] NonNeg[dtype]:
                return x
        #              ^ E0304

        fn f(x: [b D]) -> [b D] Prob[f64]:
        #                       ^^^^^^^^^ E0309: element type Prob[...]: Prob takes no argument but a DType option of its model, as in [..] Prob[dtype] in model M[dtype: DType = f32]
            return sigmoid(x)

        fn g(x: [b D] f64) -> [b D] f64:
            return Act[dtype=f64].init(seed=0)(x)
        """
    annotated(src)


def test_any_model_satisfies_a_trait_with_methods_bound_and_imports() -> None:
    src = """
        trait Fwd:
            fn forward(self, z: [b D 1 1], mode: Mode) -> [b 2 4 4]

        fn init_all[M: nn.Module](mut m: M):
            for name, p in named_params(m, seed=0):
                p.init(normal(0.0, 0.02))

        fn setup[M: Fwd](mut m: M) -> Int:
            init_all(m)
            return num_params(m)

        fn main():
            print(setup(Gen.init(seed=0)))
        """
    annotated(src)
    text = "from nn import Module\nimport nn\n\nfn f[M: Module](m: M) -> Int:\n    return num_params(m)\n\n" + (
        "fn main():\n    print(f(nn.Linear[2, 3].init(seed=0)))\n"
    )
    assert [d.code for d in check_text(text).diagnostics] == []


def test_the_formatter_prints_both_forms_back() -> None:
    for messy, tidy in (
        ("trait  Module :\n  pass\n", "trait Module:\n    pass\n"),
        ("model N:\n    param layers: ( nn.Linear[4,8] , )\n", "model N:\n    param layers: (nn.Linear[4, 8],)\n"),
        ("fn f(x: ( [4] , )) -> ([4],):\n    return x\n", "fn f(x: ([4],)) -> ([4],):\n    return x\n"),
    ):
        out = format_text(messy)
        assert out.text == tidy and not out.refused
        assert format_text(tidy).text == tidy


def test_hover_of_any_model() -> None:
    src = HEAD + "\nfn count[M: nn.Module](m: M) -> Int:\n    return num_params(m)\n"
    h = ide.hover(check_text(src), src.index("(m: M)") + 1)
    assert h is not None and "`M: nn.Module`: any model (its traits declare no methods)." in h.markdown
