"""Traits and functions generic over models (`trait CharModel:`, `fn
loss[M: CharModel](m: M)`): checked once at the definition against the
traits, and at each call against the model given (E0920-E0924), with the
param-read analysis per model, imports, the editor's answers, both parsers
and the formatter, and incremental re-checks when a trait changes."""

from __future__ import annotations

import functools

import pytest
from annotations import spanned, spanned_in

from quiver.checker import Analyzer, check_text, ide
from quiver.checker import ast as A
from quiver.checker.formatter import format_text
from quiver.checker.parser import parse_item
from quiver.checker.workspace import MemoryHost, Workspace

PRELUDE = """\
dim V = 5
dim E = 4

trait CharModel:
    fn forward(self, idx: [b t] Index[V]) -> [b t V]

model Bigram:
    param table: [V V] = normal(0.0, 1.0)

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        return self.table[idx]

model Mlp:
    param wte: [V E] = normal(0.0, 1.0)
    param head: [E V] = normal(0.0, 1.0)

    fn forward(self, idx: [b t] Index[V]) -> [b t V]:
        return self.wte[idx] @ self.head

fn loss[M: CharModel](m: M, x: [b t] Index[V], y: [b t] Index[V]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=V)

fn train_step[M: CharModel](mut m: M, mut opt: AdamW[M], x: [b t] Index[V], y: [b t] Index[V]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l

"""

check = functools.partial(spanned, prelude=PRELUDE, dedent=True)

MAIN_DATA = """
    fn main():
        x = randint([2 3] Index[V], seed=0)
        y = randint([2 3] Index[V], seed=1)
"""


def in_main(*lines: str) -> str:
    return MAIN_DATA + "".join(f"        {line}\n" for line in lines)


def test_one_loss_and_one_train_step_for_two_models_check_clean() -> None:
    src = in_main(
        "a = Bigram.init(seed=0)",
        "b = Mlp.init(seed=0)",
        "opt_a = AdamW(a, lr=0.01)",
        "opt_b = AdamW(b, lr=0.01)",
        "print(train_step(a, opt_a, x, y), train_step(b, opt_b, x, y), loss(a, x, y))",
    )
    assert check(src) == []


def test_a_model_without_the_method_is_one_error_at_the_argument() -> None:
    src = """
    model Bag:
        param w: [V] = 0.0
    """ + in_main("print(loss(Bag.init(seed=0), x, y))")
    assert check(src) == [
        (
            "E0920",
            "Bag has no method 'forward', which trait CharModel requires of M",
            "Bag.init(seed=0)",
        )
    ]


def test_a_method_of_another_signature_names_both_and_the_traits_declaration() -> None:
    src = """
    model Flat:
        param table: [V V] = 0.0

        fn forward(self, idx: [b] Index[V]) -> [b V]:
            return self.table[idx]
    """ + in_main("print(loss(Flat.init(seed=0), x, y))")
    a = check_text(PRELUDE + __import__("textwrap").dedent(src).lstrip("\n"))
    assert spanned_in(a) == [
        (
            "E0921",
            "Flat.forward does not have the signature trait CharModel requires: it is "
            "`fn forward(self, idx: [b] Index[V]) -> [b V]`, the trait's is "
            "`fn forward(self, idx: [b t] Index[V]) -> [b t V]`",
            "Flat.init(seed=0)",
        )
    ]
    (d,) = a.diagnostics
    (rel,) = d.related
    assert rel.message == "CharModel.forward is declared here"
    assert a.text[rel.span.start : rel.span.end] == "forward"


def test_own_generic_dims_and_a_more_general_method_fit() -> None:
    # [n s] for [b t]; a Linear's [.. I] -> [.. O] for [b E] -> [b E]
    src = """
    model Linear[I, O]:
        param w: [I O] = normal(0.0, 1.0)

        fn forward(self, x: [.. I]) -> [.. O]:
            return x @ self.w

    trait Layer:
        fn forward(self, x: [b E]) -> [b E]

    model Other:
        param table: [V V] = 0.0

        fn forward(self, idx: [n s] Index[V]) -> [n s V]:
            return self.table[idx]

    fn twice[L: Layer](l: L, x: [b E]) -> [b E]:
        return l(l(x))

    fn main():
        x = randint([2 3] Index[V], seed=0)
        print(loss(Other.init(seed=0), x, x), twice(Linear[E, E].init(seed=0), randn([2 E], seed=0)))
    """
    assert check(src) == []
    wrong = src.replace("twice(Linear[E, E]", "twice(Linear[E, V]")
    assert [c for c, _, _ in check(wrong)] == ["E0921"]


def test_two_models_for_one_type_parameter_is_an_error_at_the_second() -> None:
    src = in_main(
        "a = Bigram.init(seed=0)",
        "b = Mlp.init(seed=0)",
        "opt = AdamW(a, lr=0.01)",
        "print(train_step(b, opt, x, y))",
    )
    assert check(src) == [
        ("E0904", "argument 'opt' of train_step: expected AdamW[Mlp], found optimizer AdamW[Bigram]", "opt")
    ]


def test_a_field_of_a_type_parameter_and_of_its_gradient() -> None:
    src = """
    fn table[M: CharModel](m: M) -> [V V]:
        return m.table

    fn g_table[M: CharModel](m: M, g: Grad[M]) -> [V V]:
        return g.table

    fn other[M: CharModel](m: M, x: [b t] Index[V]) -> [b t V]:
        return m.logits(x)
    """
    assert check(src) == [
        (
            "E0922",
            "'table': M stands for any model with trait CharModel; "
            "only its methods (forward) are known of it, not its fields",
            "table",
        ),
        (
            "E0922",
            "'table': Grad[M] stands for any model with trait CharModel; the fields of its gradient are not known",
            "table",
        ),
        (
            "E0922",
            "'logits': M stands for any model with trait CharModel; it has no method 'logits', only forward",
            "logits",
        ),
    ]


def test_wrong_bounds_and_a_trait_as_a_type_or_a_value() -> None:
    src = """
    fn f1[M: Bigram](m: M) -> [V V]:
        return zeros([V V])

    fn f2[M: CharModl](m: M) -> [V V]:
        return zeros([V V])

    fn f3(m: CharModel) -> [V V]:
        return zeros([V V])

    fn f4[M: CharModel](x: [V]) -> [V]:
        return x

    fn main():
        t = CharModel
    """
    assert check(src) == [
        ("E0923", "the bound of type parameter M is a trait, and 'Bigram' is a model", "Bigram"),
        (
            "E0923",
            "the bound of type parameter M is a trait, and no trait 'CharModl' is known; did you mean 'CharModel'?",
            "CharModl",
        ),
        (
            "E0924",
            "'CharModel' is a trait: it bounds a type parameter (`fn f[M: CharModel](m: M)`), and is not a type itself",
            "CharModel",
        ),
        (
            "E0923",
            "type parameter M is the model of a parameter (`m: M`), and no parameter of f4 is one",
            "M",
        ),
        (
            "E0924",
            "'CharModel' is a trait: it is not a value; a model is made with `Model.init(seed=...)`",
            "CharModel",
        ),
    ]


def test_generic_functions_call_each_other_and_bounds_imply_bounds() -> None:
    src = """
    trait Sized:
        fn size(self) -> []

    model Both:
        param table: [V V] = 0.0

        fn forward(self, idx: [b t] Index[V]) -> [b t V]:
            return self.table[idx]

        fn size(self) -> []:
            return sum(self.table)

    fn outer[N: CharModel](m: N, x: [b t] Index[V]) -> [] NonNeg:
        return loss(m, x, x)

    fn both[M: CharModel + Sized](m: M, x: [b t] Index[V]) -> []:
        return outer(m, x) * m.size()

    fn only_sized[S: Sized](m: S, x: [b t] Index[V]) -> [] NonNeg:
        return loss(m, x, x)

    fn accumulate[M: CharModel](m: M, x: [b t] Index[V]) -> Grad[M]:
        acc = zeros(Grad[M])
        for i in range(2):
            l, g = value_and_grad(outer, m, x)
            acc = acc + g
        return acc

    fn main():
        x = randint([2 3] Index[V], seed=0)
        print(both(Both.init(seed=0), x), accumulate(Bigram.init(seed=0), x))
    """
    assert check(src) == [
        ("E0920", "S has no method 'forward', which trait CharModel requires of M", "m"),
    ]


def test_param_reads_of_a_generic_function_are_the_models_methods() -> None:
    src = """
    model Two:
        param used: [V V] = 0.5
        param unused: [V V] = 0.5

        fn forward(self, idx: [b t] Index[V]) -> [b t V]:
            return self.used[idx]

    fn outer[N: CharModel](m: N, x: [b t] Index[V], y: [b t] Index[V]) -> [] NonNeg:
        return loss(m, x, y)

    fn main():
        x = randint([2 3] Index[V], seed=0)
        l, g = value_and_grad(outer, Two.init(seed=0), x, x)
        k, h = value_and_grad(loss, Bigram.init(seed=0), x, x)
        print(l, g, k, h)
    """
    assert check(src) == [
        ("W1101", "outer never reads param unused of Two: its gradient is always zero", "outer"),
    ]


def test_a_trait_and_generic_functions_through_an_import() -> None:
    lib = """\
dim V = 5

trait CharModel:
    fn forward(self, idx: [b] Index[V]) -> [b V]

fn loss[M: CharModel](m: M, x: [b] Index[V], y: [b] Index[V]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=V)
"""
    main = """\
import lib
from lib import CharModel

model Bag:
    param t: [lib.V lib.V] = 0.5

    fn forward(self, idx: [b] Index[lib.V]) -> [b lib.V]:
        return self.t[idx]

model Bad:
    param t: [lib.V] = 0.5

fn mine[M: lib.CharModel](m: M, x: [b] Index[lib.V]) -> [] NonNeg:
    return lib.loss(m, x, x)

fn mine2[M: CharModel](m: M, x: [b] Index[lib.V]) -> [] NonNeg:
    return mine(m, x)

fn main():
    m = Bag.init(seed=0)
    x = randint([3] Index[lib.V], seed=0)
    l, g = value_and_grad(lib.loss, m, x, x)
    print(l, g, mine2(m, x), lib.loss(Bad.init(seed=0), x, x))
"""
    ws = Workspace(MemoryHost({"/p/lib.qv": lib, "/p/main.qv": main}), ["/p"])
    assert spanned_in(ws.analyze("/p/lib.qv")) == []  # type: ignore[arg-type]
    assert spanned_in(ws.analyze("/p/main.qv")) == [  # type: ignore[arg-type]
        ("E0920", "Bad has no method 'forward', which trait lib.CharModel requires of M", "Bad.init(seed=0)")
    ]


def test_editing_a_trait_rechecks_its_users() -> None:
    analyzer = Analyzer()
    user = "\nfn main():\n    x = randint([2 3] Index[V], seed=0)\n    print(loss(Bigram.init(seed=0), x, x))\n"
    a = analyzer.update(PRELUDE + user)
    assert a.diagnostics == []
    edited = PRELUDE.replace(
        "fn forward(self, idx: [b t] Index[V]) -> [b t V]\n",
        "fn forward(self, idx: [b t] Index[V]) -> [b t V]\n    fn size(self) -> []\n",
        1,
    )
    a = analyzer.update(edited + user)
    assert [(d.code, a.text[d.span.start : d.span.end]) for d in a.diagnostics] == [("E0920", "Bigram.init(seed=0)")]
    assert a.diagnostics == check_text(edited + user).diagnostics
    a = analyzer.update(PRELUDE + user)
    assert a.diagnostics == []


def test_hover_and_completion_in_a_generic_function() -> None:
    src = PRELUDE + (
        "fn main():\n"
        "    x = randint([2 3] Index[V], seed=0)\n"
        "    b = Mlp.init(seed=0)\n"
        "    opt = AdamW(b, lr=0.01)\n"
        "    print(train_step(b, opt, x, x))\n"
    )
    a = check_text(src)
    assert a.diagnostics == []
    h = ide.hover(a, src.index("m(x)"))
    assert h is not None and "(param) m: M" in h.markdown
    assert "`M: CharModel`: any model with the methods of its traits (forward)." in h.markdown
    h = ide.hover(a, src.index("train_step(b"))
    assert h is not None and "Here `M = Mlp`." in h.markdown
    h = ide.hover(a, src.index("CharModel"))
    assert h is not None and h.markdown.startswith("```quiver\ntrait CharModel")
    typed = src.replace("    return cross_entropy(m(x)", "    z = m.\n    return cross_entropy(m(x)")
    at = typed.index("z = m.") + len("z = m.")
    assert [(c.label, c.detail) for c in ide.completions(check_text(typed), at)] == [
        ("forward", "fn forward(self, idx: [b t] Index[V]) -> [b t V]")
    ]


def test_both_parsers_read_the_new_items_alike_and_the_formatter_keeps_them() -> None:
    texts = [
        "trait T:\n    fn a(self) -> []\n    fn b(mut self, x: [n] f64) -> [n] f64\n",
        "fn f[M: A + lib.B, N: C](m: M, n: N, lr: Float = 1.0) -> []:\n    return 0.0\n",
    ]
    for text in texts:
        fast, slow = parse_item(text, fast=True), parse_item(text, fast=False)
        assert not slow.diagnostics
        assert A.dump(fast.item) == A.dump(slow.item)
        assert format_text(text).text == text
    messy = "fn f[M:A+B ,N : C](m: M):\n    pass\n\ntrait  T :\n    fn a( self )->[ ]\n"
    assert format_text(messy).text == "fn f[M: A + B, N: C](m: M):\n    pass\n\ntrait T:\n    fn a(self) -> []\n"
    # `-` between bounds parses (lark) and is one error
    assert check("fn f[M: CharModel - CharModel](m: M, x: [V]) -> [V]:\n    return x\n") == [
        ("E0923", "the traits that bound a type parameter are joined with '+'", "-")
    ]


def test_signature_help_of_a_method_of_a_type_parameter() -> None:
    src = PRELUDE.replace(
        "    return cross_entropy(m(x), y, over=V)", "    return cross_entropy(m.forward(x), y, over=V)"
    )
    at = src.index("m.forward(x") + len("m.forward(")
    sh = ide.signature_help(check_text(src), at)
    assert sh is not None and [s.label for s in sh.signatures] == ["M.forward(idx: [b t] Index[V]) -> [b t V]"]


def test_a_selection_of_a_type_parameters_gradient_is_an_error() -> None:
    src = """
    fn f[M: CharModel](m: M, g: Grad[M, wrt=[table]], x: [V]) -> [V]:
        return x
    """
    assert check(src) == [
        (
            "E0922",
            "'table': Grad[M] stands for any model with trait CharModel; the fields of its gradient are not known",
            "table",
        )
    ]


@pytest.mark.parametrize(
    ("src", "codes"),
    [
        ("trait T:\n    fn a(self, x: [3]) -> [3]\n    fn a(self) -> []\n", ["E0923"]),
        ("dim M = 3\ntrait T:\n    fn a(self)\nfn f[M: T](m: M):\n    pass\n", ["E0923"]),
        ("trait T:\n    fn a(self)\nfn f[M: T](m: M[3]):\n    pass\n", ["E0923"]),
        (
            "trait T:\n    fn a(self)\nmodel Q:\n    param w: [3] = 0.0\n\n    fn f[M: T](self, m: M):\n        pass\n",
            ["E0923"],
        ),
        ("trait T:\n    fn a(self):\n        pass\n", ["E0003"]),
        ("trait T:\n    param w: [3]\n", ["E0003"]),
        (
            "trait T:\n    fn a(self)\nmodel Q:\n    param w: [3] = 0.0\n\n    fn a(mut self):\n        pass\n"
            "fn f[M: T](m: M):\n    m.a()\nfn main():\n    f(Q.init(seed=0))\n",
            ["E0921"],
        ),
    ],
)
def test_malformed_traits_and_type_parameters_are_one_error_each(src: str, codes: list[str]) -> None:
    a = check_text(src)
    assert not a.internal_errors
    assert [d.code for d in a.diagnostics] == codes


def test_incremental_a_type_parameter_follows_the_global_it_shadowed() -> None:
    # `N` shadowed a constant; renamed, the constant is gone and the bound is
    # what is wrong: the signature depended on the name `N` (found by the fuzz)
    before = "const N = 0\n\nfn f[N: Fwd](m: N) -> Int:\n    return 0\n"
    after = before.replace("const N", "const given")
    analyzer = Analyzer()
    for text in (before, after, before):
        got = [(d.code, d.message) for d in analyzer.update(text).diagnostics]
        assert got == [(d.code, d.message) for d in check_text(text).diagnostics], text
    assert [d.message for d in check_text(after).diagnostics] == [
        "the bound of type parameter N is a trait, and no trait 'Fwd' is known"
    ]
