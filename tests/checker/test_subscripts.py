"""Subscripts on any dim (`x[:, i:j]`, `x[i, j]`, `x[..., -1]`, steps,
labels at any position), index assignment (`x[:, :10] = 0.0`,
`m.buf[t] = v`) and `for a, b in e` over an iterable (issue 25): the types
they give and their diagnostics, each with its exact range and message."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

from quiver.checker import ast as A
from quiver.checker import check_text, ide
from quiver.checker import types as T
from quiver.checker.body.core import BodyChecker

PRELUDE = (
    "dim B = 2\ndim T = 8\ndim D = 4\ndim V = 5\ndim BLOCK = 3\n\n"
    "model M:\n    buffer buf: [T D] = zeros\n    param w: [D] NonNeg = ones\n\n"
)


diags = partial(spanned, prelude=PRELUDE)


def hint(expr: str, params: str = "x: [B T D]") -> str:
    """The type inlay hint of `h = expr`."""
    src = PRELUDE + f"fn f({params}):\n    h = {expr}\n    print(h)\n"
    analysis = check_text(src)
    assert [d.code for d in analysis.diagnostics] == [], analysis.diagnostics
    hints = [h.label for h in ide.inlay_hints(analysis)]
    assert len(hints) == 1, hints
    return hints[0][2:]


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("x[:, 1:3]", "[B 2 D]"),
        ("x[:, 0]", "[B D]"),
        ("x[0, 1]", "[D]"),
        ("x[:, 0, -1]", "[B]"),
        ("x[..., -1]", "[B T]"),
        ("x[..., 1:3]", "[B T 2]"),
        ("x[0, ...]", "[T D]"),
        ("x[...]", "[B T D]"),
        ("x[1, ..., 2]", "[T]"),
        ("x[:, -BLOCK:]", "[B 3 D]"),
        ("x[:, :T - 1]", "[B 7 D]"),
        ("x[:, 0::2]", "[B 4 D]"),
        ("x[:, 1::3]", "[B 3 D]"),
        ("x[::2]", "[1 T D]"),
        ("x[:, 1:7:2, ::3]", "[B 3 2]"),
        ("x[:, :]", "[B T D]"),
        ("x[:, ::1]", "[B T D]"),
    ],
)
def test_the_type_of_a_subscript(expr: str, expected: str) -> None:
    assert hint(expr) == expected


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("x[:, 1:]", "[b (t-1) D]"),
        ("x[:, -t:]", "[b t D]"),
        ("x[:, 1:t - 1]", "[b (t-2) D]"),
        ("x[:, ::2]", "[b ((t+1)/2) D]"),
        ("x[..., 0]", "[b t]"),
    ],
)
def test_bounds_of_generic_dims_are_symbolic(expr: str, expected: str) -> None:
    assert hint(expr, "x: [b t D]") == expected


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("x[:, n:n + 2]", "[B ? D]"),
        ("x[:, :, n:]", "[B T ?]"),
        ("x[:, ::n]", "[B ? D]"),
        ("x[n, n]", "[D]"),
    ],
)
def test_run_time_bounds_give_a_dim_known_at_run_time(expr: str, expected: str) -> None:
    assert hint(expr, "x: [B T D], n: Int") == expected


def test_a_run_time_dim_is_checked_where_it_meets_a_known_one() -> None:
    assert diags("fn f(x: [B T D], n: Int) -> [B 2 D]:\n    return x[:, n:n + 2]\n") == []
    assert diags("fn f(x: [B T D], n: Int) -> [B 2]:\n    return x[:, n:n + 2]\n") == [
        ("E0201", "return value: expected [B 2], found [B ? D]", "x[:, n:n + 2]")
    ]


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("logp[arange(B), y]", "[B]"),
        ("x[:, t]", "[B K D]"),
        ("x[:, t, 0]", "[B K]"),  # torch drops the Int first: the labels stay in place
        ("x[0, :, d]", "[T K]"),
        ("x[..., d]", "[B T K]"),
        ("x[:, t, d]", "[B K]"),  # labels next to each other: in place
        ("x[bb, :, d]", "[K T]"),  # apart: in front
        ("x[:, t2]", "[B K 2 D]"),
    ],
)
def test_labels_gather_along_their_dim_at_any_position(expr: str, expected: str) -> None:
    params = (
        "x: [B T D], logp: [B V], y: [B] Index[V], t: [K] Index[T], d: [K] Index[D], "
        "bb: [K] Index[B], t2: [K 2] Index[T]"
    )
    assert hint(expr, params) == expected


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "x[..., ..., 0]",
            ("E0215", "x[..., ..., 0]: '...' may appear only once", "..."),
        ),
        (
            "x[:, bias=False]",
            (
                "E0215",
                "x[:, bias=False]: an option (name=value) is for a model's type, not a tensor's subscripts",
                "bias=False",
            ),
        ),
        (
            "x[:, t, d2]",
            (
                "E0215",
                "x[:, t, d2]: label tensors index together and must broadcast: [K] and [2] do not (K and 2)",
                "d2",
            ),
        ),
        ("x[0, 0, 0, 0]", ("E0210", "indexing x[0, 0, 0, 0] needs 4 dims or more, found [B T D]", "0")),
        ("x[:, :, :, :]", ("E0210", "slicing x[:, :, :, :] needs 4 dims or more, found [B T D]", ":")),
        ("x[:, :, 4]", ("E0217", "index 4 of D: it has 4 entries, 0 to 3 (or -4 to -1)", "4")),
        ("x[:, :, -5]", ("E0217", "index -5 of D: it has 4 entries, 0 to 3 (or -4 to -1)", "-5")),
        ("x[T]", ("E0217", "index 8 of B: it has 2 entries, 0 to 1 (or -2 to -1)", "T")),
        (
            "x[:, ::0]",
            ("E0218", "slice step 0: a step is 1 or more (torch refuses a zero or negative step)", "0"),
        ),
        (
            "x[::-1]",
            ("E0218", "slice step -1: a step is 1 or more (torch refuses a zero or negative step)", "-1"),
        ),
        ("x[:, 2:10]", ("E0213", "slice of T: it reaches past the end of T", "2:10")),
        ("x[:, -10:]", ("E0213", "slice of T: it starts 2 before the start of T", "-10:")),
        ("x[:, 5:5:2]", ("E0213", "slice of T: it keeps 0 of T", "5:5:2")),
        ("x[:, 1.5]", ("E0301", "index: expected Int, found number Float", "1.5")),
        ("x[:, ::2.0]", ("E0301", "slice step: expected Int, found number Float", "2.0")),
        (
            "x[:, t, y]",
            ("E0305", "index into x ([B T D]) by labels of its dim D: expected [B] Index[D], found [B] Index[V]", "y"),
        ),
        ("m[0, 1]", ("E0306", "indexing is not defined for model M", "m[0, 1]")),
    ],
)
def test_subscript_diagnostics(body: str, expected: tuple[str, str, str]) -> None:
    params = "m: M, x: [B T D], y: [B] Index[V], t: [K] Index[T], d2: [2] Index[D]"
    assert diags(f"fn f({params}) -> Int:\n    print({body})\n    return 1\n") == [expected]


# ------------------------------------------------------------------ index assignment


@pytest.mark.parametrize(
    "stmt",
    [
        "x[:, :2] = 0.0",
        "x[0] = v",
        "x[..., 0] = y",
        "x[:, 1] = zeros([1])",
        "x[:, :] = 1",
        "x[0] += v",
        "x[:, 0::2] *= 2.0",
        "x[:, n:n + 2] = zeros([B 2])",
    ],
)
def test_index_assignment_to_a_local(stmt: str) -> None:
    params = "x: [B D], v: [D], y: [B], n: Int"
    assert diags(f"fn f({params}) -> [B D]:\n    {stmt}\n    return x\n") == []


@pytest.mark.parametrize(
    "stmt, expected",
    [
        (
            "x[:, :2] = z",
            ("E0219", "x[:, :2] = ...: the value [B 3] does not broadcast to the indexed part [B 2]", "z"),
        ),
        ("x[0] = z", ("E0219", "x[0] = ...: the value [B 3] does not broadcast to the indexed part [D]", "z")),
        ("x[0] += x", ("E0219", "x[0] += ...: the value [B D] does not broadcast to the indexed part [D]", "x")),
        ("x[0] = True", ("E0302", "x[0] = ...: expected Float, found number Bool", "True")),
        ("x[0] = w", ("E0302", "x[0] = ...: expected Float, found f64", "w")),
        ("x[0] = s", ("E0301", "x[0] = ...: expected a tensor or a number, found string", "s")),
        ("x[4] = 1.0", ("E0217", "index 4 of B: it has 2 entries, 0 to 1 (or -2 to -1)", "4")),
        ("q[0] = 1.0", ("E0101", "unknown name 'q'", "q")),
    ],
)
def test_index_assignment_diagnostics(stmt: str, expected: tuple[str, str, str]) -> None:
    params = "x: [B D], z: [B 3], w: [D] f64, s: Str"
    assert diags(f"fn f({params}) -> [B D]:\n    {stmt}\n    return x\n") == [expected]


def test_a_local_loses_the_refinement_its_new_entries_do_not_keep() -> None:
    body = "fn f(x: [B D]) -> [B D] NonNeg:\n    y = relu(x)\n    y[0] = -1.0\n    return y\n"
    assert diags(body) == [("E0304", "return value: expected [B D] NonNeg, found [B D] Float", "y")]
    ok = "fn f(x: [B D]) -> [B D] NonNeg:\n    y = relu(x)\n    y[0] = 1.0\n    return y\n"
    assert diags(ok) == []


def test_index_assignment_to_a_model_field_needs_mut() -> None:
    assert diags("fn f(mut m: M, v: [D]):\n    m.buf[0] = v\n    m.buf[1:3, ::2] += 1.0\n") == []
    assert diags("fn f(m: M, v: [D]):\n    m.buf[0] = v\n") == [
        ("E0501", "cannot assign m.buf: 'm' is not a mut parameter", "m.buf")
    ]
    # a field keeps its refinement: the value must have it
    assert diags("fn f(mut m: M):\n    m.w[0] = -1.0\n") == [
        ("E0304", "m.w[0] = ...: expected [] NonNeg, found number Float", "-1.0")
    ]
    assert diags("fn f(mut m: M):\n    m.buf[0] = [1.0, 2.0]\n") == [
        ("E0219", "m.buf[0] = ...: the value [2] does not broadcast to the indexed part [D]", "[1.0, 2.0]")
    ]


def test_index_assignment_of_what_is_not_a_tensor() -> None:
    assert diags("fn f(mut m: M):\n    m[0] = 1.0\n") == [("E0306", "indexing is not defined for model M", "m[0]")]
    assert diags("fn f(mut m: M, x: [D]):\n    m = x\n") == [
        ("E0504", "cannot rebind mut parameter 'm'; assign its fields instead", "m")
    ]


# ------------------------------------------------------------------ for a, b in e


@pytest.fixture
def iterable_pairs(monkeypatch):
    """`pairs`, a parameter of a tuple type, read as an iterable of that
    tuple (nothing in the language makes an IterT yet)."""
    value = BodyChecker.value

    def patched(self, e, env):
        t = value(self, e, env)
        if isinstance(e, A.Name) and e.name == "pairs" and not isinstance(t, T.UnknownT):
            t = T.IterT(t)
            self.types[e] = t
        return t

    monkeypatch.setattr(BodyChecker, "value", patched)


def test_for_with_names_unpacks_each_item(iterable_pairs) -> None:
    body = (
        "fn f(pairs: ([B D], [B])) -> [D]:\n"
        "    acc = zeros([D])\n"
        "    for xb, yb in pairs:\n"
        "        acc = acc + sum(xb * reshape(yb, [B 1]), over=B)\n"
        "    return acc\n"
    )
    analysis = check_text(PRELUDE + body)
    assert list(analysis.diagnostics) == []
    labels = [h.label for h in ide.inlay_hints(analysis)]
    assert ": [B D]" in labels and ": [B]" in labels
    one = (
        "fn f(pairs: ([B D], [B])) -> Int:\n    for p in pairs:\n        a, b = p\n        print(a, b)\n    return 1\n"
    )
    assert diags(one) == []


def test_for_with_names_needs_as_many_values(iterable_pairs) -> None:
    body = "fn f(pairs: ([B D], [B])) -> Int:\n    for a, b, c in pairs:\n        print(a)\n    return 1\n"
    assert diags(body) == [("E0410", "cannot unpack tuple ([B D], [B]) into 3 names", "a, b, c")]
    body = "fn f() -> Int:\n    for a, b in range(3):\n        print(a, b)\n    return 1\n"
    assert diags(body) == [("E0410", "cannot unpack number Int into 2 names", "a, b")]
    # one mistake, one diagnostic: not also the names
    body = "fn f(x: [B]) -> Int:\n    for a, b in x:\n        print(a, b)\n    return 1\n"
    assert diags(body) == [
        ("E0414", "a for loop runs over range(...), batches(...) or a stack of models; found tensor [B]", "x")
    ]
