"""log(step, name=value): the metrics form of `log` (issue 26). The checker
accepts Ints, Floats and `[]` tensors under keyword names, keeps `log(x)` the
logarithm, and refuses the misuses with exact codes and ranges; the compiler
lowers the call to rt.log_metrics and wraps main's outermost loops in
rt.progress."""

from __future__ import annotations

import textwrap
from functools import partial

import pytest
from annotations import spanned

from quiver.checker import check_text
from quiver.checker.compiler import compile_program

PRELUDE = "dim D = 4\n\n"


diags = partial(spanned, prelude=PRELUDE, dedent=True, ignore={"W0101"})


def test_ints_floats_and_scalar_tensors_are_metrics() -> None:
    assert (
        diags(
            """
            fn main():
                x = randn([8 D], seed=0)
                for step in range(3):
                    log(step, loss=mean(x), acc=0.5, n=step, idx=argmax(sum(x, over=D), over=0))
            """
        )
        == []
    )


def test_log_of_one_value_is_still_the_logarithm() -> None:
    a = check_text(PRELUDE + "fn f(x: [D]) -> ([D], Float):\n    return log(x), log(2.0)\n")
    assert [d.code for d in a.diagnostics] == []


def test_a_tensor_with_dims_is_e0421_naming_its_shape() -> None:
    assert diags(
        """
        fn main():
            x = randn([8 D], seed=0)
            log(0, loss=mean(x), h=x)
        """
    ) == [("E0421", "metric 'h' of log is tensor [8 D]: a metric is an Int, a Float or a [] tensor", "x")]


@pytest.mark.parametrize(
    "value, found",
    [('"text"', "string"), ("True", "number Bool"), ("(1, 2)", "tuple (Int, Int)")],
)
def test_values_that_are_not_numbers_are_e0421(value: str, found: str) -> None:
    got = diags(f"fn main():\n    log(0, v={value})\n")
    assert [(c, t) for c, _, t in got] == [("E0421", value)]
    assert f"is {found}:" in got[0][1]


def test_values_without_names_are_e0420_on_the_values() -> None:
    assert diags(
        """
        fn main():
            l = mean(randn([4], seed=0))
            log(3, l, 2.0)
        """
    ) == [("E0420", "log(step, l, 2.0) logs nothing: name each value, as in log(step, loss=l)", "l, 2.0")]


def test_a_step_that_is_not_an_int_is_e0301() -> None:
    got = diags("fn main():\n    log(0.5, loss=1.0)\n")
    assert [(c, t) for c, _, t in got] == [("E0301", "0.5")]
    assert "step of log" in got[0][1]


def test_no_step_two_steps_a_name_twice_a_value_after_the_names() -> None:
    assert [(c, t) for c, _, t in diags("fn main():\n    log(loss=1.0)\n")] == [("E0401", "(loss=1.0)")]
    assert [(c, t) for c, _, t in diags("fn main():\n    log(1, 2, loss=1.0)\n")] == [("E0401", "2")]
    assert [(c, t) for c, _, t in diags("fn main():\n    log(1, loss=1.0, loss=2.0)\n")] == [("E0404", "loss=2.0")]
    assert [(c, t) for c, _, t in diags("fn main():\n    log(1, loss=1.0, 2.0)\n")] == [("E0405", "2.0")]


def test_an_error_inside_a_metric_is_reported_once() -> None:
    got = diags("fn main():\n    log(1, loss=nope)\n")
    assert [c for c, _, _ in got] == ["E0101"]


def _compiled(body: str) -> str:
    a = check_text(PRELUDE + textwrap.dedent(body))
    assert [d.code for d in a.diagnostics if d.is_error] == []
    return compile_program(a, "/virtual/prog.qv").source


def test_log_compiles_to_log_metrics_with_a_dict_of_names() -> None:
    src = _compiled(
        """
        fn main():
            x = randn([8 D], seed=0)
            log(7, step=1.0, loss=mean(x))
            y = log(2.0)
        """
    )
    assert "rt.log_metrics(7, {'step': 1.0, 'loss': rt.mean(x, None)}, _src)" in src
    assert "rt.log_of_number(2.0)" in src


def test_mains_outermost_loops_over_range_and_batches_show_progress() -> None:
    src = _compiled(
        """
        fn helper():
            for i in range(3):
                print(i)

        fn main():
            x = randn([8 D], seed=0)
            for epoch in range(3):
                for j in range(2):
                    print(j)
            for xb in batches(x, size=4):
                print(xb)
            k = 0
            while k < 2:
                for i in range(2):
                    print(i)
                k = k + 1
        """
    )
    assert "for epoch in rt.progress(range(3), 'epoch'):" in src
    assert "for xb in rt.progress(rt.batches(x, size=4" in src
    assert src.count("rt.progress(") == 2  # not the nested loops, not helper's, not a loop inside while
