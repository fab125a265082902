"""Members whose presence depends on the model's dims and options (issue 39):
`param downsample: Down[Ci, Co, stride] if stride != 1 or Ci != Co`, decided
for each instance and proven inside methods by the `if`s around a read; and
one member declared twice under exclusive conditions, its shape depending on
an option (`param W: [I OUT] if concat`, `param W: [I (K*OUT)] if not concat`)."""

from __future__ import annotations

from annotations import check_annotated

from quiver.checker import check_text
from quiver.checker import member_conditions as MC
from quiver.checker.dimexpr import const, var

BLOCK = """\
dim D = 4

model Down[Ci, Co, stride = 1]:
    param w: [Co Ci] = zeros

model Block[Ci, Co, stride = 1, zero: Bool = False]:
    param w: [Ci Co] = zeros
    param downsample: Down[Ci, Co, stride] if stride != 1 or Ci != Co
"""


def test_an_instance_has_the_member_exactly_when_its_condition_holds() -> None:
    check_annotated(
        BLOCK
        + """
fn with_it(b: Block[D, 8], x: [D]) -> [8]:
    return b.downsample.w @ x

fn strided(b: Block[D, D, stride=2], x: [D]) -> [D]:
    return b.downsample.w @ x

fn without(b: Block[D, D], x: [D]) -> [D]:
    return b.downsample.w @ x
#            ^^^^^^^^^^ E0914: Block[D, D, 1] has no field 'downsample': it exists only when stride != 1 or Ci != Co
"""
    )


def test_a_read_in_a_method_is_proven_by_the_if_around_it() -> None:
    check_annotated(
        BLOCK
        + """
    fn forward(self, x: [n Ci]) -> [n Co]:
        y = x @ self.w
        if stride != 1 or Ci != Co:
            y = y + x @ transpose(self.downsample.w)
        if Ci != Co or stride != 1:
            y = y + x @ transpose(self.downsample.w)
        if Ci != Co:
            y = y + x @ transpose(self.downsample.w)
        if stride != 1 and Ci != Co:
            y = y + x @ transpose(self.downsample.w)
        if not (stride == 1 and Ci == Co):
            y = y + x @ transpose(self.downsample.w)
        if stride != 2:
            y = y + x @ transpose(self.downsample.w)
#                                      ^^^^^^^^^^ E0914: Block[Ci, Co, stride] (self, any instance) has no field 'downsample': it exists only when stride != 1 or Ci != Co; read it under `if stride != 1 or Ci != Co:`
        return y

    fn skip(self, x: [n Ci]) -> [n Co]:
        if stride == 1 and Ci == Co:
            return x as [n Co]
        return x @ transpose(self.downsample.w)

    fn skip2(self, x: [n Ci]) -> [n Co]:
        if stride != 1 or Ci != Co:
            return x @ transpose(self.downsample.w)
        return x as [n Co]

    fn unproven(self, x: [n Ci]) -> [n Co]:
        return x as [n Co]
#              ^^^^^^^^^^^ E0308: cannot cast tensor [n Ci] to [n Co]; a cast cannot change the shape
"""
    )


def test_same_name_members_under_exclusive_conditions() -> None:
    check_annotated(
        """\
dim F = 6

model Gat[I, OUT, K, concat: Bool = True]:
    param W: [I OUT] = xavier if concat
    param W: [I (K*OUT)] = xavier if not concat

    fn forward(self, h: [n I]) -> [n OUT]:
        if concat:
            return h @ self.W
        return mean(reshape(h @ self.W, [n K OUT]), over=1)

    fn wrong(self, h: [n I]) -> [n OUT]:
        return h @ self.W
#                       ^ E0914: Gat[I, OUT, K] (self, any instance) has no field 'W': it exists only when concat=True; read it under `if concat:`

fn concatenated(g: Gat[F, 8, 2], h: [n F]) -> [n 8]:
    return h @ g.W

fn averaged(g: Gat[F, 8, 2, concat=False], h: [n F]) -> [n 16]:
    return h @ g.W
"""
    )


def test_overlapping_same_name_members_are_e0933_at_the_second() -> None:
    check_annotated(
        """\
model Gat[C, NH, concat: Bool = True, bias: Bool = True]:
    param b: [(NH*C)] = zeros if concat
    param b: [C] = zeros if bias
#         ^ E0933: Gat declares 'b' twice, and both could exist: concat and bias may hold together
    param w: [C] = zeros if NH > 1
    param w: [C C] = zeros if NH < 3
#         ^ E0933: Gat declares 'w' twice, and both could exist: NH > 1 and NH < 3 may hold together
    param v: [C] = zeros if NH > 1
    param v: [C C] = zeros if NH <= 1
    param u: [C] = zeros
    param u: [C C] = zeros if concat
#         ^ E0106
"""
    )


def test_a_condition_naming_an_unknown_dim_is_e0931() -> None:
    check_annotated(
        """\
model Block[Ci, Co, stride = 1]:
    param w: [Ci Co] = zeros
    param skip: [Ci Co] = zeros if strde != 1
#                                  ^^^^^ E0931: 'strde' is not a dim of Block; did you mean 'stride'?
    param skip: [Co] = zeros if strde == 1
#                               ^^^^^ E0931: 'strde' is not a dim of Block; did you mean 'stride'?
    param other: [Ci] = zeros if Ci * K > 2
#                                     ^ E0931: 'K' is not a dim of Block
"""
    )


def test_a_condition_that_is_not_a_bool_is_e0932() -> None:
    check_annotated(
        """\
model Block[Ci, Co, stride = 1, eps: Float = 1e-5]:
    param w: [Ci Co] = zeros if stride
#                               ^^^^^^ E0932: a member's condition is a Bool of Block's dims and Bool options, found the dim stride, a number: compare it, as in `stride != 1`
    param v: [Ci Co] = zeros if Ci + 1
#                               ^^^^^^ E0932: a member's condition is a Bool of Block's dims and Bool options, found Ci + 1
    param u: [Ci Co] = zeros if Ci == 2.5
#                                     ^^^ E0932: a member's condition is a Bool of Block's dims and Bool options, found 2.5
    param t: [Ci] = zeros if eps
#                            ^^^ E0913
"""
    )


def test_dim_constants_are_decided_where_the_model_is_declared() -> None:
    src = """\
dim D = 4

model M:
    param a: [D] = zeros if D > 2
    param b: [D] = zeros if D > 8

fn f(m: M) -> [D]:
    return m.a + m.b
"""
    assert [(d.code, d.message) for d in check_text(src).diagnostics] == [
        ("E0914", "M has no field 'b': it exists only when 4 > 8; read it under `if 4 > 8:`")
    ]


def test_implication_and_exclusion_rules() -> None:
    stride, ci, co = var("stride"), var("Ci"), var("Co")
    down = MC.Both("or", MC.Cmp("!=", stride, const(1)), MC.Cmp("!=", ci, co))
    assert MC.implies([down], down)
    assert MC.implies([MC.Cmp("!=", ci, co)], down)
    assert MC.implies([MC.Cmp(">", stride, const(1))], MC.Cmp("!=", stride, const(1))) is False  # not complete
    assert MC.implies([MC.Not(down)], MC.Cmp("==", co, ci))
    assert MC.implies([MC.Cmp("==", stride, const(1))], MC.Cmp("==", MC.DX.add(stride, ci), MC.DX.add(ci, const(1))))
    assert not MC.implies([], down)
    assert MC.exclusive(MC.Opt("concat"), MC.Not(MC.Opt("concat")))
    assert MC.exclusive(MC.Cmp(">", stride, const(1)), MC.Cmp("<=", stride, const(1)))
    assert not MC.exclusive(MC.Opt("concat"), MC.Opt("bias"))
    assert MC.text(down) == "stride != 1 or Ci != Co"
    assert MC.python(down, lambda n: "_" + n) == "(((_stride) != (1)) or ((_Ci) != (_Co)))"


def test_a_function_generic_over_dims_reads_the_member_under_the_condition_it_leaves() -> None:
    check_annotated(
        """\
model B[Ci, Co]:
    param w: [Ci] = ones if Ci * 2 > Co

fn g(b: B[i, o], x: [i]) -> [i]:
    if i * 2 > o:
        return b.w
    return b.w
#            ^ E0914: B[i, o] has no field 'w': it exists only when 2*i > o; read it under `if 2*i > o:`
"""
    )


def test_a_gradient_of_an_instance_generic_over_dims_has_the_member_under_its_condition() -> None:
    check_annotated(
        """\
model B[Ci, Co]:
    param w: [Ci] = ones if Ci != Co
    param v: [Co] = ones

fn g(gr: Grad[B[i, o]]) -> [i]:
    if i != o:
        return gr.w
    return gr.w
#             ^ E0914: Grad[B[i, o]] has no field 'w': it exists only when i != o; read it under `if i != o:`
"""
    )


def test_hover_shows_the_declaration_read_or_declared_there() -> None:
    from quiver.checker import ide

    src = """\
model G[I, OUT, concat: Bool = True]:
    param W: [I OUT] = xavier if concat
    param W: [I (2*OUT)] = xavier if not concat

    fn forward(self, h: [n I]) -> [n OUT]:
        if concat:
            return h @ self.W
        return mean(reshape(h @ self.W, [n 2 OUT]), over=1)
"""
    a = check_text(src)
    assert a.diagnostics == []

    def shown(offset: int) -> str:
        h = ide.hover(a, offset)
        assert h is not None
        return h.markdown

    assert shown(src.index("W: [I OUT]")) == "```quiver\nparam G.W: [I OUT] if concat\n```"
    assert shown(src.index("W: [I (2")) == "```quiver\nparam G.W: [I (2*OUT)] if not concat\n```"
    assert shown(src.index("self.W\n") + 5) == "```quiver\nparam G.W: [I OUT] if concat\n```"
    assert shown(src.index("self.W,") + 5) == "```quiver\nparam G.W: [I (2*OUT)] if not concat\n```"
