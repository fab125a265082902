"""Convolutions and pools (issue 11): conv2d, max_pool2d, avg_pool2d. The
result's sizes are dim arithmetic: constant inputs give numbers, generic ones
give expressions."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

from quiver.checker import check_text

P = "dim Ci = 3\ndim Co = 8\ndim K = 3\ndim H = 28\n\n"


diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "sig, expr",
    [
        ("(x: [b 1 28 28], w: [8 1 3 3]) -> [b 8 26 26]", "conv2d(x, w)"),
        ("(x: [b Ci H H], w: [Co Ci K K]) -> [b Co 26 26]", "conv2d(x, w)"),
        ("(x: [b Ci H H], w: [Co Ci K K]) -> [b Co H H]", "conv2d(x, w, padding=1)"),
        ("(x: [b Ci H H], w: [Co Ci K K]) -> [b Co 14 14]", "conv2d(x, w, stride=2, padding=1)"),
        ("(x: [b Ci H H], w: [Co Ci 5 3]) -> [b Co 24 26]", "conv2d(x, w)"),
        ("(x: [b Ci h v], w: [Co Ci 3 3]) -> [b Co (h-2) (v-2)]", "conv2d(x, w)"),
        ("(x: [b Ci h v], w: [Co Ci k k]) -> [b Co (h-k+1) (v+1-k)]", "conv2d(x, w)"),
        ("(x: [b Ci h h], w: [Co Ci 3 3]) -> [b Co ((h-1)/2+1) ((h-1)/2+1)]", "conv2d(x, w, stride=2, padding=1)"),
        ("(x: [b Ci H H]) -> [b Ci 14 14]", "max_pool2d(x, 2)"),
        ("(x: [b Ci 27 27]) -> [b Ci 13 13]", "avg_pool2d(x, 2)"),
        ("(x: [b Ci h w]) -> [b Ci ((h-3)/3+1) ((w-3)/3+1)]", "max_pool2d(x, 3)"),
        ("(x: [b Ci h w]) -> [b Ci (h/2) (w/2)]", "avg_pool2d(x, 2)"),
        ("(x: [b Ci h w]) -> [b Ci ((h-2)/2+1) (w/2)]", "avg_pool2d(x, 2)"),
        ("(x: [b Ci h h], w: [Co Ci 3 3]) -> [b Co ((h+2*1-3)/2+1) ((h+1)/2)]", "conv2d(x, w, stride=2, padding=1)"),
        ("(x: [b Ci H H] NonNeg) -> [b Ci 14 14] NonNeg", "max_pool2d(x, 2)"),
        ("(x: [b Ci H H] Prob) -> [b Ci 7 7] Prob", "avg_pool2d(x, 4)"),
        ("(x: [b Ci H H] f64, w: [Co Ci K K] f64) -> [b Co 26 26] f64", "conv2d(x, w)"),
    ],
)
def test_shapes_that_fit(sig: str, expr: str) -> None:
    assert diags(f"fn f{sig}:\n    return {expr}\n") == []


def test_a_conv_result_is_a_plain_float() -> None:
    body = "fn f(x: [b Ci H H] NonNeg, w: [Co Ci K K] NonNeg) -> [b Co 26 26] NonNeg:\n    return conv2d(x, w)\n"
    assert [d[0] for d in diags(body)] == ["E0304"]


def test_a_size_is_printed_as_its_number_or_expression() -> None:
    body = "fn f(x: [b Ci h 28], w: [Co Ci K K]) -> [b Co h 26]:\n    return conv2d(x, w, stride=2)\n"
    [(code, message, _)] = diags(body)
    assert code == "E0201" and "[b Co ((h-1)/2) 13]" in message


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "fn f(x: [b 4 H H], w: [Co Ci K K]) -> [b Co 26 26]:\n    return conv2d(x, w)\n",
            ("E0214", "conv2d: x has 4 channels (dim 1 of [b 4 H H]) and w takes Ci (dim 1 of [Co Ci K K])", "w"),
        ),
        (
            "fn f(x: [b Ci 2 H], w: [Co Ci K K]) -> [b Co 26 26]:\n    return conv2d(x, w)\n",
            ("E0214", "conv2d: the window (K=3) is larger than the input (2)", "w"),
        ),
        (
            "fn f(x: [b Ci 1 H], w: [Co Ci 5 5]) -> [b Co 26 26]:\n    return conv2d(x, w, padding=1)\n",
            ("E0214", "conv2d: the window (5) is larger than the input (1) with padding 1", "w"),
        ),
        (
            "fn f(x: [b H H], w: [Co Ci K K]) -> [b Co 26 26]:\n    return conv2d(x, w)\n",
            ("E0214", "conv2d: x is [b Ci H W], 4 dims; found [b H H]", "x"),
        ),
        (
            "fn f(x: [b Ci H H], w: [Co Ci K]) -> [b Co 26 26]:\n    return conv2d(x, w)\n",
            ("E0214", "conv2d: w is [Co Ci KH KW], 4 dims; found [Co Ci K]", "w"),
        ),
        (
            "fn f(x: [b Ci H]) -> [b Ci 14]:\n    return max_pool2d(x, 2)\n",
            ("E0214", "max_pool2d: x is [b C H W], 4 dims; found [b Ci H]", "x"),
        ),
        (
            "fn f(x: [b Ci 3 3]) -> [b Ci 1 1]:\n    return avg_pool2d(x, 4)\n",
            ("E0214", "avg_pool2d: the window (4) is larger than the input (3)", "4"),
        ),
        (
            "fn f(x: [b Ci H H], w: [Co Ci K K]) -> [b Co 26 26]:\n    return conv2d(x, w, stride=0)\n",
            ("E0301", "stride of conv2d: expected a positive integer literal or a dim, found 0", "0"),
        ),
        (
            "fn f(x: [b Ci H H], w: [Co Ci K K], p: Int) -> [b Co 26 26]:\n    return conv2d(x, w, padding=p)\n",
            ("E0301", "padding of conv2d: expected an integer literal >= 0 or a dim, found p", "p"),
        ),
        (
            "fn f(x: [b Ci H H]) -> [b Ci 14 14]:\n    return max_pool2d(x, -2)\n",
            ("E0301", "k of max_pool2d: expected a positive integer literal or a dim, found -2", "-2"),
        ),
        (
            "fn f(x: [b Ci H H], w: [Co Ci K K] f64) -> [b Co 26 26]:\n    return conv2d(x, w)\n",
            (
                "E0302",
                "conv2d needs one element type: expected [b Ci H H] Float, found [Co Ci K K] f64",
                "conv2d(x, w)",
            ),
        ),
        (
            "fn f(x: [b Ci H H] i64) -> [b Ci 14 14]:\n    return max_pool2d(x, 2)\n",
            ("E0310", "max_pool2d of tensor [b Ci H H] i64 needs a float tensor; cast it with `as`", "x"),
        ),
        (
            "fn f(x: [b Ci H H], w: [Co Ci K K]) -> [b Co 26 26]:\n    return conv2d(x, w, strides=2)\n",
            ("E0402", "conv2d has no parameter 'strides'; did you mean 'stride'?", "strides"),
        ),
    ],
)
def test_shapes_that_do_not_fit(body: str, expected: tuple[str, str, str]) -> None:
    assert diags(body) == [expected]


def test_a_number_added_to_a_division_goes_inside() -> None:
    from quiver.checker import dimexpr as DX

    h = DX.var("h")
    pool = DX.add(DX.div(DX.sub(h, DX.const(2)), DX.const(2)), DX.const(1))
    assert pool == DX.div(h, DX.const(2))
    conv = DX.add(DX.div(DX.sub(h, DX.const(1)), DX.const(2)), DX.const(1))
    assert conv == DX.div(DX.add(h, DX.const(1)), DX.const(2)) and DX.render(conv) == "((h+1)/2)"
    assert DX.add(DX.div(DX.const(7), DX.const(2)), DX.const(1)) == DX.const(4)
    assert DX.value(DX.substitute(pool, {"h": DX.const(9)}) or ()) == 4


# ------------------------------------------------------------------ a wrong padding, at the conv


def _fixed(src: str) -> tuple[str, object]:
    """The one diagnostic of `src`, and `src` with its quick fix applied."""
    (d,) = check_text(src).diagnostics
    assert d.fix is not None
    out = src
    for e in sorted(d.fix.edits, key=lambda e: -e.span.start):
        out = out[: e.span.start] + e.new_text + out[e.span.end :]
    return out, d


@pytest.mark.parametrize(
    "call, padding, fixed",
    [
        ("conv2d(x, w)", "0", "conv2d(x, w, padding=1)"),
        ("conv2d(x, w, padding=2)", "2", "conv2d(x, w, padding=1)"),
        ("conv2d(\n        x,\n        w,\n    )", "0", "conv2d(\n        x,\n        w, padding=1,\n    )"),
    ],
)
def test_a_padding_that_changes_the_size_is_explained_at_the_conv(call: str, padding: str, fixed: str) -> None:
    # one diagnostic, where the sizes meet the declared type; it says which
    # conv made them and the padding that keeps them, points at the conv and fixes it
    src = P + f"fn f(x: [b Ci H H], w: [Co Ci K K]) -> [b Co H H]:\n    y = relu({call})\n    return y\n"
    out, d = _fixed(src)
    size = {"0": 26, "2": 30}[padding]
    assert d.code == "E0201"
    assert d.message == (
        f"return value: expected [b Co H H], found [b Co {size} {size}] "
        f"(from conv2d with padding {padding}; padding=1 keeps H)"
    )
    notes = [(r.message, src[r.span.start : r.span.end]) for r in d.related]
    assert notes[-1] == (f"conv2d gives [b Co {size} {size}] here", call)
    assert d.fix.title == "Use padding=1"
    assert out == src.replace(call, fixed) and check_text(out).diagnostics == []


def test_the_conv_that_changed_the_size_is_found_through_those_that_keep_it() -> None:
    src = P + (
        "fn f(x: [b Ci h v], w: [Co Ci 5 5], k: [Co Co K K]) -> [b Co h v]:\n"
        "    y = conv2d(x, w, padding=1)\n"
        "    return conv2d(relu(y), k, padding=1)\n"
    )
    out, d = _fixed(src)
    assert d.message == (
        "return value: expected [b Co h v], found [b Co (h-2) (v-2)] "
        "(from conv2d with padding 1; padding=2 keeps h and v)"
    )
    assert src[d.related[-1].span.start : d.related[-1].span.end] == "conv2d(x, w, padding=1)"
    assert out == src.replace("conv2d(x, w, padding=1)", "conv2d(x, w, padding=2)")


def test_a_size_no_padding_gives_only_points_at_the_conv() -> None:
    # the stride halves the size: no padding keeps it, so the message says no more
    src = P + "fn f(x: [b Ci H H], w: [Co Ci K K]) -> [b Co H H]:\n    return conv2d(x, w, stride=2, padding=1)\n"
    (d,) = check_text(src).diagnostics
    assert d.message == "return value: expected [b Co H H], found [b Co 14 14]" and d.fix is None
    assert d.related[-1].message == "conv2d gives [b Co 14 14] here"


def test_a_padding_that_gives_a_strided_size() -> None:
    src = P + "fn f(x: [b Ci H H], w: [Co Ci K K]) -> [b Co (H/2) (H/2)]:\n    return conv2d(x, w, stride=2)\n"
    (d,) = check_text(src).diagnostics
    assert d.message == (
        "return value: expected [b Co (H/2)=14 (H/2)=14], found [b Co 13 13] "
        "(from conv2d with padding 0; padding=1 gives (H/2)=14)"
    )


def test_an_argument_of_the_wrong_size_is_explained_too() -> None:
    src = P + (
        "fn head(x: [b Co H H]) -> [b Co H H]:\n    return x\n"
        "fn f(x: [b Ci H H], w: [Co Ci K K]) -> [b Co H H]:\n    return head(conv2d(x, w))\n"
    )
    assert [d.message for d in check_text(src).diagnostics] == [
        "argument 'x' of head: expected [b Co H H], found [b Co 26 26] (from conv2d with padding 0; padding=1 keeps H)"
    ]
