"""A model's method whose header does not parse, while it is being typed:
the syntax error is the one diagnostic; calls of the model elsewhere (its
forward, a method that may be the broken one) stay silent rather than say
the model has no such method. Once it parses, an unknown method is named
with the methods the model has. torch's size reads (`x.shape`, `x.size(1)`)
say where a tensor's sizes are."""

from __future__ import annotations

from quiver.checker import check_text

MODEL = """\
model M:
    param w: [3 3] = ones

    fn forward(self, x: [b 3]{close} -> [b 3]:
        return x @ self.w

    fn other(self, x: [b 3]) -> [b 3]:
        return x

fn f(m: M, x: [2 3]) -> [2 3]:
    y = m.other(x)
    return m(y) + m.nothing(y)
"""


def _diags(text: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in check_text(text).diagnostics]


def test_a_broken_method_header_is_the_one_diagnostic() -> None:
    assert _diags(MODEL.format(close="")) == [("E0004", "'(' is never closed; expected ')'")]


def test_once_it_parses_an_unknown_method_is_named_with_the_models_methods() -> None:
    assert _diags(MODEL.format(close=")")) == [
        ("E0409", "m.nothing cannot be called: model M has no method 'nothing' (its methods: forward, other)")
    ]


def test_torchs_size_reads_say_where_sizes_are() -> None:
    text = "fn f(x: [b n]) -> Int:\n    return x.shape[0]\n"
    assert _diags(text) == [
        (
            "E0107",
            "tensor [b n] has no field 'shape'; its sizes are the dims of its type: name them where it is "
            "declared (as in [b n]) and use n, an Int where a number is wanted",
        )
    ]
