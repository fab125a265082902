"""einsum and rearrange: the types the checker computes from a pattern of
dim names, and each mistake's one diagnostic (exact code, message and range:
a name inside the pattern string is underlined itself)."""

from __future__ import annotations

import random
from functools import partial

import pytest
from annotations import check_annotated, spanned

from quiver.checker import check_text, ide
from quiver.checker.compiler import compile_program

P = "dim T = 8\ndim D = 30\ndim H = 32\ndim PATCH = 8\n\n"

diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        ("(q: [b n d], k: [b m d]) -> [b n m]", 'einsum("b n d, b m d -> b n m", q, k)'),
        ("(q: [b n d], k: [b m d]) -> [b m n]", 'einsum("b n d, b m d -> b m n", q, k)'),
        ("(q: [b n d] f64, k: [b m d] f64) -> [b n m] f64", 'einsum("b n d, b m d -> b n m", q, k)'),
        ("(q: [b n d] Prob) -> [b d]", 'einsum("b n d -> b d", q)'),
        ("(q: [b n T]) -> [b]", 'einsum("b n d -> b", q)'),
        ("(a: [n], c: [n]) -> []", 'einsum("i, i ->", a, c)'),
        ("(a: [n n]) -> [n]", 'einsum("i i -> i", a)'),
        ("(a: [i], c: [j], e: [k]) -> [i j k]", 'einsum("x, y, z -> x y z", a, c, e)'),
        ("(w: [h n m], v: [b m h d]) -> [b h n d]", 'einsum("head n m, batch m head d -> batch head n d", w, v)'),
        ("(x: [b c h w]) -> [b h w c]", 'rearrange(x, "b c h w -> b h w c")'),
        ("(x: [b c h w]) -> [b (c*h*w)]", 'rearrange(x, "b c h w -> b (c h w)")'),
        ("(x: [b T D]) -> [b 240]", 'rearrange(x, "b t d -> b (t d)")'),
        ("(x: [b H]) -> [b 16 2]", 'rearrange(x, "b (p h) -> b p h", p=16)'),
        ("(x: [b H]) -> [b 2 16]", 'rearrange(x, "b (p h) -> b h p", p=16)'),
        ("(x: [b H]) -> [b 4 8]", 'rearrange(x, "b (p h) -> b p h", p=4, h=8)'),
        ("(x: [b H]) -> [b 4 8]", 'rearrange(x, "b (p h) -> b p h", p=2 * 2)'),
        ("(x: [b H]) -> [b 4 8]", 'rearrange(x, "b (p h) -> b p h", h=PATCH)'),
        ("(x: [b (4*n)]) -> [b 4 n]", 'rearrange(x, "b (p h) -> b p h", p=4)'),
        ("(x: [b n]) -> [b (n/4) 4]", 'rearrange(x, "b (h p) -> b h p", p=4)'),
        ("(x: [b n]) -> [b n]", 'rearrange(x, "b (h p) -> b (h p)", p=3)'),
        ("(x: [b (t*e)]) -> [b t e]", 'rearrange(x, "b (t e) -> b t e", e=e)'),
        (
            "(img: [b 3 H H]) -> [b ((H/PATCH)*(H/PATCH)) (PATCH*PATCH*3)]",
            'rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=PATCH, p2=PATCH)',
        ),
        (
            "(img: [b c h w]) -> [b ((h/8)*(w/8)) (8*8*c)]",
            'rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=8, p2=8)',
        ),
        ("(img: [b 3 H H]) -> [b 16 192]", 'rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=8, p2=8)'),
        ("(x: [b H] Index[T]) -> [H b] Index[T]", 'rearrange(x, "b h -> h b")'),
        ("(x: [b H] Bool) -> [b 2 16] Bool", 'rearrange(x, "b (h p) -> b h p", p=16)'),
        ("(q: [b t n d], k: [b t m d]) -> [b t n m]", 'einsum("... n d, ... m d -> ... n m", q, k)'),
        ("(q: [.. n d], k: [.. m d]) -> [.. n m]", 'einsum("... n d, ... m d -> ... n m", q, k)'),
        ("(q: [.. n d], k: [m d]) -> [.. n m]", 'einsum("... n d, m d -> ... n m", q, k)'),
        ("(q: [b n d]) -> [b n d]", 'einsum("... -> ...", q)'),
        ("(x: [.. H]) -> [.. 4 8]", 'rearrange(x, "... (p h) -> ... p h", p=4)'),
        ("(x: [b t (h*4)]) -> [b t h 4]", 'rearrange(x, "... (p h) -> ... h p", h=h)'),
        ("(x: [.. (2*d)]) -> [.. 2 d]", 'rearrange(x, "... (h p) -> ... p h", p=2)'),
        ("(x: [b c h w]) -> [b c (h*w)]", 'rearrange(x, "... h w -> ... (h w)")'),
    ],
)
def test_types_that_fit(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


EINSUM_ERRORS = """
dim D = 30
dim H = 32

fn bound_twice(q: [b n d], k: [b m e]) -> [b n m]:
    return einsum("b n d, b m d -> b n m", q, k)
#                             ^ E0972: einsum pattern: 'd' is d in [b n d] (tensor 1) and e in [b m e] (tensor 2)

fn unknown_in_result(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum("b n d, b m d -> b n k", q, k)
#                                      ^ E0973: einsum pattern: 'k' of the result is no name of the inputs

fn twice_in_result(q: [b n d], k: [b m d]) -> [b n n]:
    return einsum("b n d, b m d -> b n n", q, k)
#                                      ^ E0973: einsum pattern: 'n' stands twice in the result

fn too_few_names(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum("b n d,  b m  -> b n m", q, k)
#                          ^^^ E0971: einsum pattern: 'b m' names 2 dims for [b m d], which has 3 dims

fn one_input_two_tensors(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum("b n d -> b n m", q, k)
#                 ^^^^^^^^^^^^^^^^ E0971: einsum pattern: 1 input before '->' for 2 tensors

fn no_arrow(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum("b n d, b m d > b n m", q, k)
#                  ^^^^^^^^^^^^^^^^^^^^ E0970: einsum pattern: it has no '->' between the inputs and the result

fn a_group(q: [b n d], k: [b (m*d)]) -> [b n m]:
    return einsum("b n d, b (m d) -> b n m", q, k)
#                           ^^^^^ E0970: einsum pattern: einsum's names are one dim each; a group such as '(h w)' is rearrange's

fn two_arrows(q: [b n d]) -> [b n d]:
    return einsum("b n d -> b n d -> b n d", q)
#                                 ^^ E0970: einsum pattern: a second '->': one arrow goes between the inputs and the result

fn comma_after(q: [b n d]) -> [b n d]:
    return einsum("b n d -> b n, d", q)
#                              ^ E0970: einsum pattern: ',' in the result: einsum and rearrange make one tensor

fn bad_char(q: [b n d]) -> [b d]:
    return einsum("b n d -> b d!", q)
#                              ^ E0970: einsum pattern: '!' cannot stand in a pattern (names, ( ) groups, ',' and '->')

fn ellipsis_inside(q: [b n d]) -> [b d]:
    return einsum("b ... d -> b d", q)
#                    ^^^ E0970: einsum pattern: '...' stands only in front of a side, for the leading dims

fn leads_differ(q: [b t n d], k: [b m d]) -> [b t n m]:
    return einsum("... n d, ... m d -> ... n m", q, k)
#                           ^^^ E0972: einsum pattern: '...' is [b t] in [b t n d] (tensor 1) and [b] in [b m d] (tensor 2)

fn lead_dropped(q: [b n d], k: [b m d]) -> [n m]:
    return einsum("... n d, ... m d -> n m", q, k)
#                                      ^^^ E0973: einsum pattern: the input has '...' and the result does not: the leading dims stay in front

fn lead_made(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum("b n d, b m d -> ... n m", q, k)
#                                  ^^^ E0973: einsum pattern: the result has '...' and the inputs have no '...'

fn rest_unnamed(q: [.. n d]) -> [.. d]:
    return einsum("n d -> d", q)
#                  ^^^ E0971: einsum pattern: 'n d' names the dims of [.. n d] after its '..': write '...' in front for them

fn too_many_after_lead(q: [n d]) -> [n d]:
    return einsum("... b n d -> ... b n d", q)
#                  ^^^^^^^^^ E0971: einsum pattern: '... b n d' names 3 dims after '...' for [n d], which has 2 dims

fn elements(q: [b n d], k: [b m d] f64) -> [b n m]:
    return einsum("b n d, b m d -> b n m", q, k)
#                                             ^ E0302: einsum needs one element type for its tensors: expected [b n d] Float, found [b m d] f64

fn not_a_literal(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum(q, k)
#                 ^ E0301: pattern of einsum: expected a string literal, such as "b n d, b m d -> b n m", found tensor [b n d]

fn ints(q: [b n d] i64) -> [b d] i64:
    return einsum("b n d -> b d", q)
#                                 ^ E0310: einsum of tensor [b n d] i64 needs a float tensor; cast it with `as`
"""

REARRANGE_ERRORS = """
dim D = 30
dim H = 32

fn not_divisible(x: [b D]) -> [b 16 2]:
    return rearrange(x, "b (p h) -> b p h", p=16)
#                          ^^^^^ E0974: rearrange: the group '(p h)' splits D=30 by 16, which does not divide it

fn two_left(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p h) -> b p h")
#                          ^^^^^ E0974: rearrange: the group '(p h)' splits H with no size for 'p', 'h': give all but one as keywords, such as h=...

fn no_such_name(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p h) -> b p h", r=16)
#                                           ^ E0975: rearrange: 'r' is no name of the pattern 'b (p h) -> b p h'

fn dropped(x: [b H]) -> [b 16]:
    return rearrange(x, "b (p h) -> b p", p=16)
#                             ^ E0973: rearrange pattern: 'h' of the input is not in the result: rearrange keeps every value (sum or mean over it first)

fn product(x: [b H]) -> [b 16 3]:
    return rearrange(x, "b (p h) -> b p h", p=16, h=3)
#                          ^^^^^ E0974: rearrange: the group '(p h)' is 48, not H=32

fn number_in_pattern(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p h) -> b p 2h", p=16)
#                                       ^^ E0970: rearrange pattern: '2h' is not a name (an ASCII letter or _, then letters, digits or _; a size is given as a keyword, p=16)

fn nested(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p (h)) -> b p h", p=16)
#                             ^ E0970: rearrange pattern: a group inside a group: a group holds names only

fn twice_in_input(x: [b b]) -> [b]:
    return rearrange(x, "b b -> b")
#                          ^ E0973: rearrange pattern: 'b' stands twice in rearrange's input

fn whole_dim(x: [b H]) -> [H b]:
    return rearrange(x, "b h -> h b", h=4)
#                                       ^ E0974: rearrange: h=4, but 'h' is the dim H of [b H]

fn float_size(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p h) -> b p h", p=16.0)
#                                             ^^^^ E0301: size p of rearrange: expected a positive integer literal, a dim or an Int, found 16.0

fn unclosed(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p h -> b p h", p=16)
#                          ^ E0970: rearrange pattern: '(' is not closed

fn unopened(x: [b H]) -> [b H]:
    return rearrange(x, "b h) -> b h")
#                           ^ E0970: rearrange pattern: ')' closes no '('

fn empty_group(x: [b H]) -> [b H]:
    return rearrange(x, "b h -> b h ()")
#                                   ^^ E0970: rearrange pattern: an empty group '()' holds no name

fn two_tensors(x: [b H]) -> [b H]:
    return rearrange(x, "b h, b h -> b h")
#                           ^ E0970: rearrange pattern: ',' in rearrange's input: rearrange takes one tensor

fn rank(x: [b H]) -> [b H]:
    return rearrange(x, "b c h -> b c h")
#                        ^^^^^ E0971: rearrange pattern: 'b c h' names 3 dims for [b H], which has 2 dims

fn not_the_result(x: [b H]) -> [H b]:
    return rearrange(x, "b h -> b h")
#          ^^^^^^^^^^^^^^^^^^^^^^^^^^ E0201: return value: expected [H b], found [b H]

fn lead_in_result_only(x: [b H]) -> [b H]:
    return rearrange(x, "b h -> ... b h")
#                               ^^^ E0973: rearrange pattern: the result has '...' and the input has no '...'

fn twice_size(x: [b H]) -> [b 16 2]:
    return rearrange(x, "b (p h) -> b p h", p=16, p=16)
#                                                 ^ E0975: rearrange: 'p' is given twice
"""


def test_einsum_mistakes_one_diagnostic_each() -> None:
    check_annotated(EINSUM_ERRORS, dedent=True)


def test_rearrange_mistakes_one_diagnostic_each() -> None:
    check_annotated(REARRANGE_ERRORS, dedent=True)


def _compiled(src: str) -> str:
    return compile_program(check_text(P + src), "/virtual/prog.qv").source


def test_a_split_not_proved_exact_is_a_count_checked_when_it_runs() -> None:
    # (n/4) of a generic n: the input's count must be that of [b (n/4) 4]
    src = 'fn f(x: [b n]) -> [b (n/4) 4]:\n    return rearrange(x, "b (h p) -> b h p", p=4)\n'
    assert "rt.expect_count(x, (b, (((n) // (4))), 4)" in _compiled(src)
    # proved: 32 by 8, (4*n) by 4, and a merge: nothing is checked
    for sig, pattern in [
        ("(x: [b H]) -> [b 4 8]", '"b (h p) -> b h p", p=8'),
        ("(x: [b (4*n)]) -> [b n 4]", '"b (h p) -> b h p", p=4'),
        ("(x: [b c n]) -> [b (c*n)]", '"b c n -> b (c n)"'),
    ]:
        assert "expect_count" not in _compiled(f"fn f{sig}:\n    return rearrange(x, {pattern})\n")


def test_einsum_of_a_dim_known_only_at_run_time_checks_it_there() -> None:
    src = 'fn f(x: [n D], w: [n D], i: Int) -> [n]:\n    y = x[0:i]\n    return einsum("n d, n d -> n", y, w)\n'
    assert diags(src) == []
    assert "rt.expect_dims(y, (n, None)" in _compiled(src)


def test_sizes_compile_as_one_dict() -> None:
    src = 'fn f(x: [b H], k: Int) -> [b 4 8]:\n    return rearrange(x, "b (p h) -> b p h", h=PATCH, p=4)\n'
    assert "rt.rearrange(x, 'b (p h) -> b p h', {'h': PATCH, 'p': 4})" in _compiled(src)
    src = 'fn f(x: [b H]) -> [H b]:\n    return rearrange(pattern="b h -> h b", x=x)\n'
    assert "rt.rearrange(x, 'b h -> h b', {})" in _compiled(src)


def test_a_call_inside_takes_its_own_rules_for_a_rest_of_dims() -> None:
    # einsum and rearrange take [.. d]; concat inside einsum's arguments does not
    src = 'fn f(x: [.. d]) -> [..]:\n    return einsum("... d -> ...", concat(x, x, over=-1))\n'
    assert [code for code, _, _ in diags(src)] == ["E0214", "E0214"]


def test_hover_and_signature_help() -> None:
    src = P + 'fn f(q: [b n d], k: [b m d]) -> [b n m]:\n    return einsum("b n d, b m d -> b n m", q, k)\n'
    a = check_text(src)
    h = ide.hover(a, src.index("einsum") + 1)
    assert h is not None and "einsum(pattern: Str, a: [..], ...) -> [..]" in h.markdown
    help = ide.signature_help(a, src.index("q, k)"))
    assert help is not None and help.active_parameter == 1
    label = help.signatures[0].label
    assert [label[a:b] for a, b in help.signatures[0].parameters] == ["pattern: Str", "a: [..]", "..."]


_PIECES = ["b", "n", "d", " ", " ", ",", "->", "(", ")", "...", "2", "é", "p1", "\\t", "!", "-", ">"]


@pytest.mark.parametrize("fn", ["einsum", "rearrange"])
def test_any_pattern_gives_at_most_one_diagnostic_and_no_crash(fn: str) -> None:
    rng = random.Random(40)
    for _ in range(300):
        pattern = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 12)))
        call = f'einsum("{pattern}", x, x)' if fn == "einsum" else f'rearrange(x, "{pattern}", p1=2)'
        got = diags(f"fn f(x: [b n d]) -> [b n d]:\n    y = {call}\n    return x\n", ignore=("W1001",))
        assert len(got) <= 1, (pattern, got)
