"""save / load in the checker: the two forms (one value positionally, several
by keyword), what can be saved (T.is_savable, numbers by keyword), load's
result type (the numbers of its number keywords), its options, the
mutability of what it loads into (E0502, as for a `mut` parameter), and the
help of E0409 / E0905 for `m.save(...)`, `m.load(...)`, `Net.load(...)`."""

from __future__ import annotations

import textwrap
from functools import partial

from annotations import check_annotated

from quiver.checker import check_text
from quiver.checker import types as T

HEAD = """\
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = xavier
    param b: [C] = zeros

"""


annotated = partial(check_annotated, prelude=HEAD, dedent=True)


def test_the_forms_check_clean_and_load_returns_its_numbers() -> None:
    annotated(
        """
        fn resume(mut m: Lin, mut opt: Adam[Lin]) -> Int:
            save("m.pt", m)
            save("opt.pt", opt)
            save("all.pt", model=m, opt=opt, step=3, best=0.5, done=False)
            load("m.pt", m)
            load("opt.pt", opt)
            load("all.pt", model=m, opt=opt)
            step = load("all.pt", model=m, step=0)
            s, best, done = load("all.pt", step=0, best=1.0, done=True, strict=False)
            if done:
                return s + step
            return step

        fn main():
            m = Lin.init(seed=0)
            opt = SGD(m, lr=0.1, momentum=0.9)
            load("m.pt", m, names=(("0.weight", "w"), ("0.bias", "b")), transpose="w", strict=False)
            load("m.pt", m, names=("0.weight", "w"), transpose=("w",))
            start = load("all.pt", model=m, opt=opt, step=0)
            for i in range(start, 10):
                print(i)
        """
    )


def test_the_result_types() -> None:
    src = HEAD + textwrap.dedent(
        """
        fn two() -> (Int, Float):
            return load("x.pt", a=1, b=2.0)

        fn one() -> Bool:
            return load("x.pt", done=False)

        fn bad() -> Int:
            return load("x.pt", b=2.0)
        """
    )
    assert [(d.code, d.message) for d in check_text(src).diagnostics] == [
        ("E0301", "return value: expected number Int, found number Float")
    ]


def test_savable_is_one_predicate() -> None:
    assert T.is_savable(T.ModelT("Lin")) and T.is_savable(T.OptimT("Adam", "Lin"))
    assert not T.is_savable(T.INT) and not T.is_savable(T.TensorT((T.DimLit(3),)))


def test_wrong_kinds_and_forms() -> None:
    annotated(
        """
        fn f(mut m: Lin):
            save("a.pt", 3)
        #                ^ E0301: the value of save: expected a model or an optimizer (a number goes by keyword: save(path, step=...)), found number Int
            save("a.pt", x=randn([D], seed=0))
        #                  ^^^^^^^^^^^^^^^^^^ E0301: 'x' of save: expected a model, an optimizer or a number (Int, Float, Bool), found tensor [D]
            save(3, m)
        #        ^ E0301: path of save: expected Str, found number Int
            save("a.pt")
        #       ^^^^^^^^ E0916: save: give what to save: one model or optimizer, as in save(path, m), or several by keyword, as in save(path, model=m, opt=opt, step=step)
            save("a.pt", m, step=1)
        #                ^ E0916: save: give one value positionally or every value by keyword, not both (as in save(path, model=m, opt=opt))
            save("a.pt", strict=True)
        #                ^^^^^^ E0916: save: strict= is an option of load, not a name to save under (choose another keyword)
            load("a.pt", model=m, names=("a", "w"))
        #                         ^^^^^ E0916: load: names= maps a file's tensors to a model's fields: it needs one model given positionally, as in load(path, m, names=...)
            load("a.pt", m, names=("a", 3))
        #                         ^^^^^^^^ E0301: names of load: expected a pair (key in the file, field) or a tuple of pairs, as in (("0.weight", "fc1.weight"),), found tuple (Str, Int)
            load("a.pt", m, strict=1)
        #                          ^ E0301: strict of load: expected Bool, found number Int
            save(model=m)
        #       ^^^^^^^^^ E0401: save takes a path first, as in save(path, m), found no positional argument
            load("a.pt", model=m, model=m)
        #                         ^^^^^^^ E0404: argument 'model' of load is given more than once
        """
    )


def test_loading_needs_a_model_the_function_may_change() -> None:
    annotated(
        """
        fn f(m: Lin, opt: Adam[Lin]):
            save("a.pt", model=m, opt=opt)
            load("a.pt", m)
        #                ^ E0502: 'm' is not mut, but load takes 'm' as mut
            load("a.pt", opt=opt)
        #                    ^^^ E0502: 'opt' is not mut, but load takes 'opt' as mut
        """
    )
    d = next(x for x in check_text(HEAD + 'fn f(m: Lin):\n    load("a.pt", m)\n').diagnostics if x.code == "E0502")
    assert d.fix is not None and d.fix.edits[0].new_text == "mut "


def test_m_save_and_m_load_name_the_real_form_with_a_fix() -> None:
    annotated(
        """
        fn main():
            m = Lin.init(seed=0)
            m.save("m.pt")
        #   ^^^^^^ E0409: m.save cannot be called: models have no methods; write save("m.pt", m)
            m.load(p(), 1)
        #   ^^^^^^ E0409: m.load cannot be called: models have no methods; write load(path, m)
            n = Lin.load("m.pt")
        #           ^^^^ E0905: model Lin has no method 'load'; create one, then load into it: m = Lin.init(seed=0), then load(path, m)

        fn p() -> Str:
            return "m.pt"
        """
    )
    src = HEAD + 'fn main():\n    m = Lin.init(seed=0)\n    m.save("m.pt")\n'
    d = check_text(src).diagnostics[0]
    assert d.fix is not None
    (edit,) = d.fix.edits
    assert src[: edit.span.start] + edit.new_text + src[edit.span.end :] == src.replace(
        'm.save("m.pt")', 'save("m.pt", m)'
    )
    assert [x.code for x in check_text(src.replace('m.save("m.pt")', 'save("m.pt", m)')).diagnostics] == []


def test_the_fields_named_in_names_and_transpose_exist() -> None:
    check_annotated(
        """\
dim D = 4
dim C = 3

model Layer:
    param weight: [D C] = xavier
    param bias: [C] = zeros

model Net:
    param fc1: Layer
    param blocks: [2] Layer

fn main():
    n = Net.init(seed=0)
    load("t.pt", n, names=(("0.weight", "fc1.weight"), ("1.weight", "blocks.1.weight")), transpose="blocks.0.weight")
    load("t.pt", n, names=("0.weight", "fc1.wieght"), transpose=("fc1.weight", "fc1.bias"))
#                                      ^^^^^^^^^^^^ E0107: model Net has no field 'fc1.wieght'; did you mean 'fc1.weight'?
#                                                                              ^^^^^^^^^^ E0301: transpose of load: expected a 2-D field, found fc1.bias, which is tensor [C]
"""
    )
    src = (
        HEAD
        + 'model Net:\n    param fc1: Lin\nfn main():\n    n = Net.init(seed=0)\n    load("t.pt", n, transpose="fc1.ww")\n'
    )
    (d,) = check_text(src).diagnostics
    assert d.fix is not None and d.fix.edits[0].new_text == '"fc1.w"'
