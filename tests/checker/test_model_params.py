"""Models built from model types (`model Net[B: Block]`, `trait Block[Ci,
Co]`, `Net[Plain]`): the generic network checked once against the trait, each
model given for B checked against the trait's dims and methods where it is
written (E0946, E0947, E0920, E0921), the header's mistakes (E0948), one
diagnostic each; instances' fields, messages, both parsers, the formatter,
hover, and incremental re-checks when the block or the trait changes."""

from __future__ import annotations

import functools
import textwrap

from annotations import spanned

from quiver.checker import Analyzer, check_text, ide
from quiver.checker import ast as A
from quiver.checker import types as T
from quiver.checker.formatter import format_text
from quiver.checker.parser import parse_item

PRELUDE = """\
dim C = 2

trait Block[Ci, Co]:
    fn forward(self, x: [b Ci]) -> [b Co]

model Plain[Ci, Co]:
    param w: [Ci Co] = normal(0.0, 0.1)

    fn forward(self, x: [b Ci]) -> [b Co]:
        return relu(x @ self.w)

model Gated[I, O]:
    param w: [I O] = normal(0.0, 0.1)
    param gate: [I O] = normal(0.0, 0.1)

    fn forward(self, x: [b I]) -> [b O]:
        return (x @ self.w) * sigmoid(x @ self.gate)

model Net[B: Block, H = 8]:
    param l1: B[4, H]
    param l2: B[H, C]

    fn forward(self, x: [b 4]) -> [b C]:
        return self.l2(self.l1(x))

"""

check = functools.partial(spanned, prelude=PRELUDE, dedent=True)


def main(*lines: str) -> str:
    """`fn main():` with these lines, indented as the tests' sources are."""
    return "\n    fn main():\n" + "".join(f"        {line}\n" for line in lines)


def program(src: str) -> str:
    return PRELUDE + textwrap.dedent(src).lstrip("\n")


def test_one_network_over_two_blocks_checks_clean_and_trains() -> None:
    src = """
    fn loss(m: Net[Gated, 16], x: [b 4], y: [b] Index[C]) -> [] NonNeg:
        return cross_entropy(m(x), y, over=C)

    fn step(mut m: Net[Gated, 16], mut opt: SGD[Net[Gated, 16]], x: [b 4], y: [b] Index[C]) -> [] NonNeg:
        l, g = value_and_grad(loss, m, x, y)
        opt.step(m, g)
        return l
    """ + main(
        "a = Net[Plain].init(seed=0)",
        "m = Net[Gated, 16].init(seed=0)",
        "opt = SGD(m, lr=0.1)",
        "print(a(ones([2 4])), step(m, opt, ones([2 4]), zeros([2] Index[C])))",
    )
    assert check(src) == []


def test_an_instance_has_the_blocks_fields_with_the_networks_dims() -> None:
    a = check_text(program(main("m = Net[Gated, 16].init(seed=0)", "print(m.l1.gate, m.l2)")))
    assert a.errors == []
    assert any(h.label.endswith("Net[Gated, 16]") for h in ide.inlay_hints(a))
    net = a.globals.model(T.ModelT("Net", (T.DimLit(16),), (("B", T.ModelArg("Gated")),)))
    assert net is not None
    assert [(f.name, str(f.type)) for f in net.fields] == [("l1", "Gated[4, 16]"), ("l2", "Gated[16, C]")]


def test_the_network_is_checked_once_against_the_trait() -> None:
    # B's forward is the trait's: [b H] into l2, whatever the block
    src = PRELUDE.replace("return self.l2(self.l1(x))", "return self.l2(x)")
    assert spanned(src) == [("E0201", "argument 'x' of Block.forward: expected [b H], found [b 4]", "x")]


def test_a_block_without_the_method_is_one_error_at_the_argument() -> None:
    src = """
    model Bag[Ci, Co]:
        param w: [Ci Co] = 0.0
    """ + main("print(Net[Bag].init(seed=0)(ones([2 4])))")
    assert check(src) == [("E0920", "Bag[Ci, Co] has no method 'forward', which trait Block requires of B", "Bag")]


def test_a_block_of_another_signature_names_both() -> None:
    src = """
    model Wrong[Ci, Co]:
        param w: [Ci Co] = 0.0

        fn forward(self, x: [b Co]) -> [b Co]:
            return x
    """ + main("m = Net[Wrong].init(seed=0)", "print(m(ones([2 4])))")
    a = check_text(program(src))
    assert [(d.code, a.text[d.span.start : d.span.end]) for d in a.diagnostics] == [("E0921", "Wrong")]
    (d,) = a.diagnostics
    assert "it is `fn forward(self, x: [b Co]) -> [b Co]`, the trait's is `fn forward(self, x: [b Ci]) -> [b Co]`" in (
        d.message
    )
    assert d.related[0].message == "Block.forward is declared here"


def test_a_block_of_other_dims_or_of_none_is_one_error() -> None:
    src = """
    model Square[D]:
        param w: [D D] = 0.0

        fn forward(self, x: [b D]) -> [b D]:
            return x @ self.w

    model Flat:
        param w: [4] = 0.0

    type Sq = Net[Square]
    """ + main("print(Net[Flat].init(seed=0), Net[4].init(seed=0), Net.init(seed=0))")
    assert check(src) == [
        ("E0947", "Square cannot stand for B: it takes 1 dim (D), and Block's instances take 2 (Ci, Co)", "Square"),
        (
            "E0946",
            "model Flat takes no dims: a model parameter takes a model that its network instantiates (B)",
            "Flat",
        ),
        ("E0946", "'4' is given for model parameter B of Net, which takes a model", "4"),
        ("E0946", "Net takes a model for each of its model parameters (B) first, and 0 are given", "Net"),
    ]


def test_the_headers_mistakes_are_one_error_each() -> None:
    src = """
    trait Plainly:
        fn forward(self, x: [b 4]) -> [b 4]

    model A1[B: Plainly]:
        param l: B

    model A2[E, B: Block]:
        param l: B[E, E]

    model A3[B: Plain]:
        param l: B[1, 2]

    model A4[B: Blok]:
        param l: B[1, 2]

    model A5[B: Block]:
        param l: B[4]
    """
    assert check(src) == [
        (
            "E0948",
            "trait Plainly takes no dims: a model parameter's trait declares the dims its instances take "
            "(`trait Plainly[Ci, Co]:`)",
            "Plainly",
        ),
        ("E0948", "model parameter B comes before the dims and options of A2", "B: Block"),
        ("E0948", "the bound of model parameter B is a trait, and 'Plain' is a model", "Plain"),
        (
            "E0948",
            "the bound of model parameter B is a trait, and no trait 'Blok' is known; did you mean 'Block'?",
            "Blok",
        ),
        ("E0910", "B takes 2 dims (Ci, Co), found 1", "B[4]"),
    ]


# a network of two stages, each a generic network given B in turn
STAGES = """
    model Stage[B: Block, I, O]:
        param a: B[I, O]
        param b: (B[O, O], B[O, O])

        fn forward(self, x: [n I]) -> [n O]:
            return self.b(self.a(x))

    model Deep[B: Block]:
        param s1: Stage[B, 4, 8]
        param s2: Stage[B, 8, C]

        fn forward(self, x: [n 4]) -> [n C]:
            return self.s2(self.s1(x))
"""


def test_a_generic_network_passes_its_parameter_on() -> None:
    src = STAGES + main("print(Deep[Gated].init(seed=0)(ones([3 4])))")
    assert check(src) == []


def test_both_parsers_and_the_formatter_keep_the_headers() -> None:
    text = "trait Block[Ci, Co, stride = 1]:\n    fn forward(self, x: [b Ci]) -> [b Co]\n"
    fast = parse_item(text)
    assert isinstance(fast.item, A.TraitDecl)
    assert [p.name.text for p in fast.item.params] == ["Ci", "Co", "stride"]
    from quiver.checker.parser import _get_parsers  # the lark parser, the fast one's reference

    lark_item = _lark_trait(text, _get_parsers)
    assert [p.name.text for p in lark_item.params] == ["Ci", "Co", "stride"]
    assert format_text(PRELUDE).text == PRELUDE.rstrip("\n") + "\n"


def _lark_trait(text: str, get_parsers) -> A.TraitDecl:
    from quiver.checker import parser as P

    saved = P.fast_parse
    try:
        P.fast_parse = lambda _text: None  # type: ignore[assignment]
        item = parse_item(text).item
    finally:
        P.fast_parse = saved
    assert isinstance(item, A.TraitDecl)
    return item


def test_hover_shows_the_instance_and_the_blocks_fields() -> None:
    src = program(main("m = Net[Gated, 16].init(seed=0)", "print(m)"))
    a = check_text(src)
    h = ide.hover(a, src.index("m = Net"))
    assert h is not None and "Net[Gated, 16]" in h.markdown
    h = ide.hover(a, src.index("l1: B") + 1)
    assert h is not None and "B[4, H]" in h.markdown


def test_editing_the_block_rechecks_where_it_is_given() -> None:
    az = Analyzer()
    src = program(main("print(Net[Gated].init(seed=0)(ones([2 4])))"))
    assert az.update(src).errors == []
    broken = src.replace("fn forward(self, x: [b I]) -> [b O]:", "fn apply(self, x: [b I]) -> [b O]:")
    assert [d.code for d in az.update(broken).errors] == [d.code for d in check_text(broken).errors] == ["E0920"]
    assert az.update(src).errors == []
    # the trait changed: every model given for it is checked again
    renamed = src.replace("trait Block[Ci, Co]:\n    fn forward", "trait Block[Ci, Co]:\n    fn apply")
    assert [d.code for d in az.update(renamed).errors] == [d.code for d in check_text(renamed).errors]


def test_every_editor_query_at_every_offset_answers() -> None:
    src = program(
        STAGES
        + """
    fn loss(m: Deep[Gated], x: [n 4], y: [n] Index[C]) -> [] NonNeg:
        return cross_entropy(m(x), y, over=C)
    """
        + main("m = Deep[Gated].init(seed=0)", "l, g = value_and_grad(loss, m, ones([2 4]), zeros([2] Index[C]))")
    )
    a = check_text(src)
    assert a.errors == []
    for offset in range(len(src) + 1):
        ide.hover(a, offset)
        ide.definition(a, offset)
        ide.references(a, offset)
        ide.highlights(a, offset)
        ide.completions(a, offset)
        ide.signature_help(a, offset)
    ide.document_symbols(a)
    ide.inlay_hints(a)
    ide.semantic_tokens(a)
    # a read through the block's method is the block's: every param is read
    assert [lens.title for lens in ide.code_lenses(a) if lens.title.startswith("loss reads")] == [
        "loss reads 12 of 12 params of Deep"
    ]


def test_param_reads_follow_each_block_of_an_instance() -> None:
    """W1101 per instance, as for any model: what `self.l1(x)` reads is what
    the block given for B reads, under l1's path (and through a generic
    network inside another, `Stage[B, ...]`)."""
    src = """
    model Lazy[I, O]:
        param w: [I O] = normal(0.0, 0.1)
        param unused: [O] = zeros

        fn forward(self, x: [b I]) -> [b O]:
            return x @ self.w

    model Stage[B: Block, I, O]:
        param a: B[I, O]
        param b: (B[O, O], B[O, O])

        fn forward(self, x: [n I]) -> [n O]:
            return self.b(self.a(x))

    model Deep[B: Block]:
        param s1: Stage[B, 4, 8]
        param head: [8 C] = zeros

        fn forward(self, x: [n 4]) -> [n C]:
            return self.s1(x) @ self.head

    fn loss(m: Deep[Lazy], x: [n 4], y: [n] Index[C]) -> [] NonNeg:
        return cross_entropy(m(x), y, over=C)

    fn loss2(m: Net[Lazy], x: [n 4], y: [n] Index[C]) -> [] NonNeg:
        return cross_entropy(m(x), y, over=C)
    """ + main(
        "m = Deep[Lazy].init(seed=0)",
        "n = Net[Lazy].init(seed=0)",
        "l, g = value_and_grad(loss, m, ones([2 4]), zeros([2] Index[C]))",
        "l2, g2 = value_and_grad(loss2, n, ones([2 4]), zeros([2] Index[C]))",
    )
    got = [(code, message.split(" of ")[0]) for code, message, _ in check(src)]
    assert got == [
        ("W1101", "loss never reads param s1.a.unused"),
        ("W1101", "loss never reads param s1.b.0.unused"),
        ("W1101", "loss never reads param s1.b.1.unused"),
        ("W1101", "loss2 never reads param l1.unused"),
        ("W1101", "loss2 never reads param l2.unused"),
    ]
    a = check_text(program(src))
    titles = [lens.title for lens in ide.code_lenses(a)]
    assert "reads 4 of 7 params of Deep — never s1.a.unused, s1.b.0.unused, s1.b.1.unused" in titles
    assert "reads 1 of 1 param of Deep — and what its s1.a.forward, s1.b.0.forward, s1.b.1.forward read" in titles


def test_a_network_trait_and_blocks_of_another_module() -> None:
    """`lib.Net[B]` with the trait and the network in lib, a block of either
    module, and a network of this module passing its parameter on to lib's."""
    from annotations import spanned_in

    from quiver.checker.workspace import MemoryHost, Workspace

    lib = PRELUDE
    main_src = textwrap.dedent(
        """\
        import lib
        from lib import Net

        model Square[D]:
            param w: [D D] = normal(0.0, 0.1)

            fn forward(self, x: [b D]) -> [b D]:
                return x @ self.w

        model Mine[B: lib.Block]:
            param inner: lib.Net[B, 16]
            param l: B[lib.C, lib.C]

            fn forward(self, x: [b 4]) -> [b lib.C]:
                return self.l(self.inner(x))

        type N1 = lib.Net[lib.Plain]

        fn main():
            x = ones([3 4])
            print(N1.init(seed=0)(x), Net[lib.Gated, 4].init(seed=0)(x), Mine[lib.Plain].init(seed=0)(x))
            print(Net[Square].init(seed=0))
        """
    )
    ws = Workspace(MemoryHost({"/p/lib.qv": lib, "/p/main.qv": main_src}), ["/p"])
    assert spanned_in(ws.analyze("/p/lib.qv")) == []  # type: ignore[arg-type]
    assert spanned_in(ws.analyze("/p/main.qv")) == [  # type: ignore[arg-type]
        (
            "E0947",
            "Square cannot stand for B: it takes 1 dim (D), and lib.Block's instances take 2 (Ci, Co)",
            "Square",
        )
    ]


def test_signature_help_and_completion_show_the_instances_dims() -> None:
    src = program(PRELUDE_CALL).replace("return self.l2(self.l1(x))", "return self.l2(self.l1.forward(x))")
    a = check_text(src)
    assert a.errors == []
    at = src.index("self.l1.forward(") + len("self.l1.forward(")
    sh = ide.signature_help(a, at)
    assert sh is not None and sh.signatures[0].label == "B[4, H].forward(x: [b 4]) -> [b H]"
    labels = [c.label for c in ide.completions(a, src.index("self.l1.forward") + len("self.l1."))]
    assert labels == ["forward"]


# Net's forward calling its first block's method by name
PRELUDE_CALL = main("print(Net[Gated].init(seed=0)(ones([2 4])))")
