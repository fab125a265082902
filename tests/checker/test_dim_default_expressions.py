"""A model dim's default computed from the dims before it (issue 40):
`model Conv[Ci, Co, K = 3, P = K // 2]` with `+ - * // %` of literals and
earlier dims. An instance gets the value (`Conv[2, 3]` is `Conv[2, 3, 3,
1]`), a generic dim the expression (`Conv[ci, co, k]` is `Conv[ci, co, k,
(k//2)]`); a default that reads a later dim or is not integer arithmetic is
E0912 on it, one that comes to no size for an instance E0910 there."""

from __future__ import annotations

from annotations import spanned

from quiver.checker import check_text, ide

MODELS = """\
model Conv[Ci, Co, K = 3, P = K // 2]:
    param w: [Co Ci K K]

model Heads[E, H = 4, D = E // H]:
    param w: [E (H*D)]

model Pad[K = 5, P = K // 2 + 1, Q = 2 * P - K, R = K % 3]:
    param b: [P]
"""


def hovers(src: str, *names: str) -> list[str]:
    a = check_text(src)
    assert a.errors == [], a.errors
    out = []
    for name in names:
        h = ide.hover(a, src.index(f"{name} = "))
        assert h is not None, name
        out.append(h.markdown.split("\n")[1])
    return out


def test_instances_get_the_computed_values() -> None:
    src = (
        MODELS
        + """
fn main():
    c = Conv[2, 3].init(seed=0)
    c5 = Conv[2, 3, 5].init(seed=0)
    given = Conv[2, 3, 5, 0].init(seed=0)
    h = Heads[8].init(seed=0)
    named = Heads[8, H = 2].init(seed=0)
    p = Pad.init(seed=0)
    print(c, c5, given, h, named, p)
"""
    )
    assert hovers(src, "c", "c5", "given", "h", "named", "p") == [
        "(local) c: Conv[2, 3, 3, 1]",
        "(local) c5: Conv[2, 3, 5, 2]",
        "(local) given: Conv[2, 3, 5, 0]",
        "(local) h: Heads[8, 4, 2]",
        "(local) named: Heads[8, 2, 4]",
        "(local) p: Pad[5, 3, 1, 2]",
    ]


def test_generic_dims_get_the_expression() -> None:
    src = MODELS + "\nfn f(m: Conv[ci, co, k]) -> Conv[ci, co, k, (k//2)]:\n    return m\n"
    assert spanned(src) == []
    wrong = MODELS + "\nfn f(m: Conv[ci, co, k]) -> Conv[ci, co, k, k]:\n    return m\n"
    found = spanned(wrong)
    assert [(c, t) for c, _, t in found] == [("E0904", "m")]
    assert "Conv[ci, co, k, (k//2)]" in found[0][1]


def test_a_default_that_reads_a_later_dim() -> None:
    found = spanned("model A[K, P = Q // 2, Q = 3]:\n    param b: [K]\n")
    assert found == [
        ("E0912", "the default of dim P reads dim Q, which comes after it: a default reads the dims before it", "Q")
    ]


def test_a_default_that_is_not_integer_arithmetic() -> None:
    for op in ("/", "**"):
        found = spanned(f"model B[K, P = K {op} 2]:\n    param b: [K]\n")
        assert [(c, t) for c, _, t in found] == [("E0912", f"K {op} 2")], op
        assert f"(found K {op} 2)" in found[0][1]


def test_a_default_that_is_no_size_for_an_instance() -> None:
    src = """\
model D[K, S = 4 // K]:
    param b: [S]

model E[K, P = K - 5]:
    param b: [K]

fn f(d: D[0], e: E[2], fine: E[9]) -> Int:
    return 0
"""
    assert spanned(src) == [
        ("E0910", "D gives dim S its default (4//K), which is a division by zero here: not a size", "D[0]"),
        ("E0910", "E gives dim P its default (K-5), which is -3 here: not a size", "E[2]"),
    ]


def test_a_model_of_defaults_only_whose_default_is_no_size() -> None:
    src = "model M[K = 2, P = K - 3]:\n    param b: [K] = zeros\n\nfn main():\n    m = M.init(seed=0)\n    print(m)\n"
    assert spanned(src) == [("E0910", "M gives dim P its default (K-3), which is -1 here: not a size", "M")]
    fine = (
        "model M[K = 2, P = K // 2]:\n    param b: [P] = zeros\n\nfn main():\n    m = M.init(seed=0)\n    print(m.b)\n"
    )
    assert spanned(fine) == []
