"""Type aliases (`type Gcn = GCN[FIN, H, C, use_bias=False]`, `type Lin[i, o]
= Linear[i, o, bias=False]`) and functions generic over a model's Bool and
Float options (`fn loss(m: Net[E, flash=fl])`), issue 39: where each is
accepted, and every diagnostic of theirs with its exact range and message."""

from __future__ import annotations

from annotations import check_annotated, spanned, spanned_in

from quiver.checker import check_text, ide
from quiver.checker.workspace import MemoryHost, Workspace

GCN = """\
dim FIN = 6
dim H = 4
dim C = 3
dim L = 2

model GCN[I, HID, O, use_bias: Bool = True, dropout_p: Float = 0.5]:
    param w1: [I HID] = normal(0.0, 0.5)
    param w2: [HID O] = normal(0.0, 0.5)
    param b: [O] = zeros if use_bias

type Gcn = GCN[FIN, H, C, use_bias=False, dropout_p=0.5]
type Lin[i, o] = GCN[i, i, o, use_bias=False]
"""


def test_an_alias_is_written_wherever_a_type_is() -> None:
    src = (
        GCN
        + """
type Batch = [8 FIN] f32
type Stack = [L] Gcn
type Again = Gcn

fn forward(m: Gcn, x: Batch) -> [8 C]:
    return x @ m.w1 @ m.w2

fn step(mut m: Again, g: Grad[Gcn], mut opt: Adam[Gcn], l: Lin[3, 2]) -> Grad[Gcn]:
    opt.step(m, g)
    return zeros(Grad[Gcn])

fn first(s: Stack) -> Gcn:
    return s[0]

fn fresh(l: Lin[i, o]) -> Lin[i, o]:
    return GCN[i, i, o, use_bias=False].init(seed=0)

fn main():
    m = Gcn.init(seed=0)
    o = Adam(m, lr=0.01)
    print(forward(m, ones([8 FIN])))
    print(fresh(GCN[2, 2, 5, use_bias=False].init(seed=1)).w2)
    print(step(m, zeros(Grad[Gcn]), o, GCN[3, 3, 2, use_bias=False].init(seed=0)).w1)
"""
    )
    a = check_text(src)
    assert [d.code for d in a.diagnostics] == []


def test_an_alias_is_the_type_it_stands_for() -> None:
    # a message names the type (the alias's expansion), as a hover does
    src = (
        GCN + "\nfn f(m: Gcn) -> [C]:\n    return zeros([C])\n\nfn main():\n    print(f(GCN[FIN, H, C].init(seed=0)))\n"
    )
    assert spanned(src) == [
        (
            "E0904",
            "argument 'm' of f: expected GCN[FIN, H, C, use_bias=False], found model GCN[FIN, H, C]",
            "GCN[FIN, H, C].init(seed=0)",
        )
    ]


def test_a_cycle_is_one_error_at_its_first_alias() -> None:
    check_annotated(
        """\
        type A = B
        #    ^ E0926: type alias A is defined through itself (A -> B -> C -> A)
        type B = [2] C
        type C = Grad[A]

        fn f(a: A, b: B) -> [2]:
            return zeros([2])
        """,
        dedent=True,
    )


def test_an_unknown_name_is_reported_at_the_alias_only() -> None:
    check_annotated(
        """\
        dim D = 4

        type Bad = [D q]
        #             ^ E0109: unknown dim 'q'
        type Worse = Nope
        #            ^^^^ E0102: unknown type 'Nope'

        fn f(a: Bad, b: Worse, c: Grad[Worse], d: [3] Worse) -> Bad:
            return a

        fn main():
            print(Worse)
        """,
        dedent=True,
    )


def test_the_dims_and_options_an_alias_is_given() -> None:
    check_annotated(
        GCN
        + """
type Twice[i, i] = [i]
#             ^ E0925: type alias Twice names its dim i twice

fn f(a: Lin[3], b: Gcn[3], c: Lin[3, 3, use_bias=True], d: Lin[3, Float]) -> [3]:
#       ^^^^^^ E0925: type alias Lin takes 2 dims (i, o), found 1
#                  ^^^^^^ E0925: type alias Gcn takes no dims, found Gcn[...]
#                                       ^^^^^^^^^^^^^ E0925: type alias Lin takes no options (they were chosen where it is declared), found use_bias=
#                                                                 ^^^^^ E0925: type alias Lin takes dims (a name, a number or (dim arithmetic)), found the type Float
    return zeros([3])

fn g(x: [2]) -> [2]:
    y = Lin
#       ^^^ E0110: 'Lin' is a type alias, not a value
    return x
"""
    )


def test_an_alias_is_imported_as_any_other_name() -> None:
    main = """\
import lib
from lib import Gcn as G, Lin

fn f(m: lib.Gcn, g: Grad[G], l: Lin[2, 3]) -> [lib.C]:
    return zeros([lib.C])

fn main():
    m = lib.Gcn.init(seed=0)
    print(f(G.init(seed=1), zeros(Grad[lib.Gcn]), lib.GCN[2, 2, 3, use_bias=False].init(seed=0)))
    print(f(m, zeros(Grad[lib.GCN[lib.FIN, lib.H, lib.C]]), Lin.init(seed=0)))
"""
    ws = Workspace(MemoryHost({"/p/main.qv": main, "/p/lib.qv": GCN}), ["/p"])
    a = ws.analyze("/p/main.qv")
    assert a is not None
    assert spanned_in(a) == [
        (
            "E0904",
            "argument 'g' of f: expected Grad[lib.GCN[lib.FIN, lib.H, lib.C, use_bias=False]], "
            "found Grad[lib.GCN[lib.FIN, lib.H, lib.C]]",
            "zeros(Grad[lib.GCN[lib.FIN, lib.H, lib.C]])",
        ),
        ("E0110", "'Lin' is a type alias, not a value", "Lin"),
    ]


def test_hover_on_an_alias_shows_what_it_stands_for() -> None:
    src = GCN + "\nfn f(m: Gcn, l: Lin[2, 3]) -> [C]:\n    return zeros([C])\n"
    a = check_text(src)
    shown = {}
    for probe in ("Gcn =", "m: Gcn", "l: Lin"):
        at = src.index(probe) + (3 if probe[1] == ":" else 0)
        h = ide.hover(a, at)
        assert h is not None
        shown[probe] = h.markdown
    assert "type Gcn = GCN[FIN, H, C, use_bias=False]" in shown["Gcn ="]
    assert shown["m: Gcn"] == shown["Gcn ="]
    assert "type Lin[i, o] = GCN[i, i, o, use_bias=False]" in shown["l: Lin"]


# ------------------------------------------------------------------ functions generic over options

NET = """\
dim E = 4

model Net[I, flash: Bool = False, eps: Float = 1e-5]:
    param w: [I] = zeros
    param s: [I] = ones if not flash
"""


def test_a_fn_binds_an_option_and_narrows_on_it() -> None:
    src = (
        NET
        + """
fn f(m: Net[E, flash=fl, eps=e]) -> [E]:
    if not fl:
        return m.w * m.s * e
    return m.w

fn g(mut m: Net[E, flash=fl], g: Grad[Net[E, flash=fl]], mut opt: AdamW[Net[E, flash=fl]]) -> Net[E, flash=fl]:
    opt.step(m, g)
    return Net[E, flash=fl].init(seed=0)

fn main():
    a = Net[E].init(seed=0)
    b = Net[E, flash=True, eps=0.1].init(seed=0)
    print(f(a) + f(b))
    d = Net[E, flash=True].init(seed=1)
    c = g(d, zeros(Grad[Net[E, flash=True]]), AdamW(d, lr=0.1))
    print(c.w)
"""
    )
    assert spanned(src) == []


def test_the_errors_of_a_fn_generic_over_options() -> None:
    check_annotated(
        NET
        + """
fn both(a: Net[E, flash=fl], b: Net[E, flash=fl]) -> [E]:
    return a.w + b.w

fn read(a: Net[E, flash=fl]) -> [E]:
    return a.s
#            ^ E0914: Net[E, flash=fl] has no field 's': it exists only when fl=False; read it under `if not fl:`

fn grad_only(g: Grad[Net[E, flash=fl]]) -> [E]:
#                           ^^^^^^^^ E0927: option value 'fl' is bound by no parameter of the fn's model type
    return g.w

fn main():
    x = Net[E].init(seed=0)
    y = Net[E, flash=True].init(seed=0)
    print(both(x, y))
#                 ^ E0904: argument 'b' of both: expected Net[E], found model Net[E, flash=True]
"""
    )


def test_an_option_value_is_neither_a_dim_nor_an_option_of_another_kind() -> None:
    check_annotated(
        NET
        + """
fn f(m: Net[E, flash=fl], x: [fl]) -> [E]:
#                             ^^ E0211: 'fl' is an option's value, not a dim
    return m.w

fn g(m: Net[E, flash=fl, eps=fl]) -> [E]:
#                        ^^^^^^ E0911: Net takes a number for its option eps, found 'fl', which this fn binds to a Bool option
    return m.w
"""
    )


def test_an_alias_is_a_model_member_and_a_stack_of_them() -> None:
    src = (
        GCN
        + """
model Pair:
    param a: Gcn
    param more: [L] Gcn
    param c: Lin[C, 2]

    fn forward(self, x: [8 FIN]) -> [8 C]:
        h = x @ self.a.w1 @ self.a.w2
        for g in self.more:
            h = h + x @ g.w1 @ g.w2
        return h
"""
    )
    assert spanned(src) == []


def test_hover_on_an_option_value_of_a_fn() -> None:
    src = NET + "\nfn f(m: Net[E, flash=fl]) -> Bool:\n    return not fl\n"
    h = ide.hover(check_text(src), src.rindex("not fl") + 4)
    assert h is not None
    assert "(option value) fl: Bool" in h.markdown
    assert "Bound at each call of `f`" in h.markdown


def test_hover_on_the_model_an_alias_names() -> None:
    src = GCN + "\nfn f(m: Gcn) -> [C]:\n    return zeros([C])\n"
    a = check_text(src)
    for probe in ("GCN[FIN, H, C, use", "GCN[i, i, o"):
        h = ide.hover(a, src.index(probe) + 1)
        assert h is not None and "GCN" in h.markdown
