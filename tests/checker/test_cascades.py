"""One mistake, one diagnostic (issue 36): a model's dim named like a dim
constant, a generic call whose argument does not fit, and the guard that a
message never calls two types that print the same different."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from annotations import spanned

from quiver.checker import catalog as C
from quiver.checker import check_text
from quiver.checker import dimexpr as DX
from quiver.checker import types as T
from quiver.checker.ast import Span
from quiver.checker.type_pairs import distinct, show_pair

ROOT = Path(__file__).resolve().parents[2]


def local_types(src: str) -> dict[str, str]:
    a = check_text(src)
    return {k: str(v) for b in a.bodies.values() for k, v in b.locals.items()}


# ------------------------------------------------------------------ E0912: a model's dim named like a constant

SHADOWED = """\
dim E = 8
dim NH = 2
dim T = 4

model Attn[C, NH]:
    param wq: [C C] = xavier
    param wo: [C C] = xavier
    param scale: [NH] = ones

    fn heads(self, x: [n C]) -> [NH n (C/NH)]:
        return permute(reshape(x, [n NH (C/NH)]), [NH n (C/NH)])

    fn merge(self, x: [NH n (C/NH)]) -> [n C]:
        return reshape(permute(x, [n NH (C/NH)]), [n C])

    fn forward(self, x: [n C]) -> [n C]:
        q = self.heads(x @ self.wq)
        a = softmax(q @ transpose(q), over=-1)
        return self.merge(a @ q) @ self.wo

    fn mix(self, x: [n NH]) -> [n C]:
        return x @ reshape(self.wq, [NH (C*C/NH)])[:, :C]

    fn weights(self) -> [NH]:
        return self.scale

fn f(m: Attn[E, NH], x: [T E]) -> [T E]:
    w = m.weights() + zeros([NH])
    print(w)
    return m(x)

fn g(m: Attn[E, 4]) -> [4]:
    return m.weights()
"""


def test_a_model_dim_named_like_a_dim_constant_is_one_diagnostic() -> None:
    # the header's E0912 alone: inside the model NH is the model's dim, in its
    # members, its bodies and its methods' signatures alike (the signatures
    # read it as the constant, and 3 errors whose types printed the same followed)
    assert spanned(SHADOWED) == [
        (
            "E0912",
            "the model's dim NH has the name of a dim constant: inside the model it would mean two things",
            "NH",
        )
    ]


# ------------------------------------------------------------------ a generic call whose argument does not fit

FAILED_CALL = """\
dim KV = 2
dim HD = 4

fn repeat_kv(x: [b t kv hd], n_rep: Int) -> [b t (kv*n_rep) hd]:
    return zeros([b t (kv*n_rep) hd])

fn heads(x: [b t kv hd], w: [hd hd]) -> [b kv t hd]:
    return permute(x, [b kv t hd])

fn main():
    x = zeros([2 3 KV HD])
    k = repeat_kv(zeros([3 KV HD]), 2)
    p = softmax(k, over=HD)
    h = heads(x, zeros([5 5]))
    q = sum(h, over=HD) + sum(k, over=HD)
    r = repeat_kv(x, 2.5)
    print(p, q, r + zeros([2 3 4 HD]), permute(r, [KV HD]))
"""


def test_the_result_of_a_failed_generic_call_is_silent_downstream() -> None:
    # before: k was [? ? ? ?] (two E0204 followed), r [2 3 (2*n_rep) HD] with
    # the callee's parameter name in the caller's types (an E0214 followed)
    assert spanned(FAILED_CALL) == [
        (
            "E0201",
            "argument 'x' of repeat_kv: expected [b t kv hd], found [3 KV HD]",
            "zeros([3 KV HD])",
        ),
        (
            "E0205",
            "argument 'w' of heads: expected [HD HD], found [5 5] (HD from argument 'x', not 5)",
            "zeros([5 5])",
        ),
        ("E0301", "argument 'n_rep' of repeat_kv: expected number Int, found number Float", "2.5"),
    ]
    types = local_types(FAILED_CALL)
    # what the arguments before the one that failed bound is kept when it is the whole result
    assert (types["k"], types["h"], types["r"]) == ("?", "[2 KV 3 HD]", "?")


# ------------------------------------------------------------------ the guard


def test_two_types_that_print_the_same_are_told_apart() -> None:
    const = T.TensorT((T.DimVar("n"), T.DimConst("NH", 2)))
    generic = T.TensorT((T.DimVar("n"), T.DimVar("NH")))
    d = C.E0201.at(Span(0, 1), context="return value: ", expected=const, found=generic)
    assert d.message == "return value: expected [n NH] (NH: the dim constant NH = 2), found [n NH] (NH: a generic dim)"
    assert show_pair(const, generic) == (
        "[n NH] (NH: the dim constant NH = 2)",
        "[n NH] (NH: a generic dim)",
    )
    a, b = distinct(T.DimConst("NH", 2), T.DimVar("NH"))
    assert (a, b) == ("NH (the dim constant NH = 2)", "NH (a generic dim)")
    # a dim computed from a constant (evaluated away) and one from a generic dim
    e1 = T.DimExpr("(C/NH)", DX.div(DX.var("C"), DX.const(2)))  # type: ignore[arg-type]
    e2 = T.DimExpr("(C/NH)", DX.div(DX.var("C"), DX.var("NH")))  # type: ignore[arg-type]
    assert distinct(T.TensorT((e1,)), T.TensorT((e2,))) == (
        "[(C/NH)] (NH: a dim constant)",
        "[(C/NH)] (NH: a generic dim)",
    )
    # the same type, or two that print differently, as they print
    assert distinct(const, const) == ("[n NH]", "[n NH]")
    assert distinct(T.DimLit(2), T.DimConst("NH", 2)) == ("2", "NH")


_SAME = [
    re.compile(r"expected (?P<a>.+?), found (?P=a)(?:$|[;:(])"),
    re.compile(r"dims (?P<a>\S+) and (?P=a) differ"),
    re.compile(r"'\w+' is (?P<a>.+) on one path and (?P=a) on another"),
]

PROGRAMS = [
    *(
        (p.name, p.read_text())
        for p in sorted(
            [
                *(ROOT / "tests/checker/diagnostics").glob("*.qv"),
                *(ROOT / "tests/corpus").rglob("*.qv"),
                *(ROOT / "examples").glob("*.qv"),
            ]
        )
    ),
    # the catalog's examples, which stand for most codes' diagnostic fixtures
    *((f"catalog {c.code}", c.example) for c in C.CODES.values() if c.example_language == "quiver"),
]


@pytest.mark.parametrize("src", [SHADOWED, FAILED_CALL], ids=["shadowed", "failed-call"])
def test_no_message_calls_two_types_that_print_the_same_different_in_the_reproducers(src: str) -> None:
    for code, message, _ in spanned(src):
        assert not any(p.search(message) for p in _SAME), (code, message)


def test_no_message_calls_two_types_that_print_the_same_different_anywhere() -> None:
    assert len(PROGRAMS) > 100
    for name, text in PROGRAMS:
        for d in check_text(text).diagnostics:
            assert not any(p.search(d.message) for p in _SAME), (name, d.code, d.message)
