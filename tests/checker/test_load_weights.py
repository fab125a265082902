"""`load_weights(m, path, prefix=, rename=, strict=, dtype=)` and
`load_tokenizer(path, V)` in the checker: the clean forms and their types
(a statement; a `Vocab[V]` that `encode`/`decode` take), and each mistake's
one diagnostic with its code, message and range: a model the function may not
change (E0502), not a model or the wrong arguments (E1005), a bad option
(E1006), a renamed field the model lacks (E0107), V not a dim (E1007)."""

from __future__ import annotations

from functools import partial

from annotations import spanned

HEAD = """\
dim D = 4
dim C = 3
dim V = 50

model Lin:
    param w: [D C] = xavier
    param b: [C] = zeros

"""

diags = partial(spanned, prelude=HEAD, dedent=True)


def test_the_forms_check_clean() -> None:
    assert (
        diags(
            """
            fn load_into(mut m: Lin):
                load_weights(m, "m.pt", prefix=("", "enc."), rename=("x", "w"))

            fn main():
                m = Lin.init(seed=0)
                load_weights(m, "m.safetensors", prefix="model.", rename=(("lm_head", "w"), ("bias", "b")), strict=False, dtype=bf16)
                load_into(m)
                tok = load_tokenizer("tokenizer.json", V)
                ids = encode(tok, "hi")
                print(decode(tok, ids))
                t2 = load_tokenizer("tokenizer.json", 7)
                print(decode(t2, encode(t2, "x")))
            """
        )
        == []
    )


def test_the_tokenizer_is_a_vocab_of_its_dim() -> None:
    got = diags(
        """
        fn show(tok: Vocab[V], y: [n] Index[C]) -> Str:
            return decode(tok, y)

        fn main():
            tok = load_tokenizer("t.json", V)
            print(show(tok, encode(load_tokenizer("t.json", C), "a")))
            print(show(load_tokenizer("t.json", C), encode(load_tokenizer("t.json", C), "a")))
        """
    )
    assert [(code, text) for code, _, text in got] == [("E0305", "y"), ("E0301", 'load_tokenizer("t.json", C)')]


def test_the_model_and_the_arguments() -> None:
    assert diags(
        """
        fn bad(m: Lin, x: [D]):
            load_weights(m, "m.pt")
            load_weights(x, "m.pt")
            load_weights(Lin.init(seed=0), 3)
            load_weights(Lin.init(seed=0))
            load_weights(Lin.init(seed=0), "a", "b")
        """
    ) == [
        ("E0502", "'m' is not mut, but load_weights takes 'm' as mut", "m"),
        (
            "E1005",
            "load_weights loads a state_dict into a model: its first argument is the model, found tensor [D]",
            "x",
        ),
        ("E0301", "path of load_weights: expected Str, found number Int", "3"),
        (
            "E1005",
            "load_weights loads a state_dict into a model: it takes the model and the path, as in "
            'load_weights(m, "model.safetensors"), found 1 positional argument',
            "(Lin.init(seed=0))",
        ),
        (
            "E1005",
            "load_weights loads a state_dict into a model: it takes the model and the path, as in "
            'load_weights(m, "model.safetensors"), found 3 positional arguments',
            '"b"',
        ),
    ]


def test_the_options() -> None:
    assert diags(
        """
        fn main():
            m = Lin.init(seed=0)
            load_weights(m, "m.pt", prefix=3)
            load_weights(m, "m.pt", rename=(("a", "wq"),))
            load_weights(m, "m.pt", rename="a")
            load_weights(m, "m.pt", dtype=i64)
            load_weights(m, "m.pt", dtype="f32")
            load_weights(m, "m.pt", strict=1)
            load_weights(m, "m.pt", names=1)
            load_weights(m, "m.pt", strict=True, strict=False)
        """
    ) == [
        ("E1006", 'load_weights: prefix= is a Str or a pair of them ("old.", "new."), found number Int', "3"),
        ("E0107", "model Lin has no field 'wq'; did you mean 'w'?", '"wq"'),
        (
            "E1006",
            'load_weights: rename= is a pair (key, field) or a tuple of them, as in (("lm_head.weight", '
            '"head.weight"),), found string',
            '"a"',
        ),
        ("E1006", "load_weights: dtype= is a float element type (f32, f64, f16, bf16), found i64", "i64"),
        ("E1006", "load_weights: dtype= is a float element type (f32, f64, f16, bf16), found string", '"f32"'),
        ("E0301", "strict of load_weights: expected Bool, found number Int", "1"),
        ("E1006", "load_weights: it has no option 'names' (its options: prefix, rename, strict, dtype)", "names"),
        ("E1006", "load_weights: the option 'strict' is given twice", "strict"),
    ]


def test_load_weights_is_a_statement() -> None:
    assert diags('fn main():\n    y = load_weights(Lin.init(seed=0), "m.pt")\n') == [
        ("E0406", "load_weights(...) gives no value", 'load_weights(Lin.init(seed=0), "m.pt")')
    ]


def test_load_tokenizer_takes_a_dim() -> None:
    assert diags(
        """
        fn main():
            a = load_tokenizer("t.json", 3.5)
            b = load_tokenizer("t.json")
            c = load_tokenizer(1, V)
        """
    ) == [
        (
            "E1007",
            "load_tokenizer(path, V) reads a vocabulary of V tokens: its second argument is a dim, found number Float",
            "3.5",
        ),
        (
            "E1007",
            "load_tokenizer(path, V) reads a vocabulary of V tokens: it takes the path and the dim, found a value",
            '("t.json")',
        ),
        ("E0301", "path of load_tokenizer: expected Str, found number Int", "1"),
    ]
