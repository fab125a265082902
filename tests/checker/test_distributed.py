"""The built-ins of data-parallel runs: rank(), world_size(), print(..., all_ranks=)."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

from quiver.checker import check_text
from quiver.checker.compiler import compile_program

P = "dim B = 64\n\n"


diags = partial(spanned, prelude=P)


@pytest.mark.parametrize(
    "body",
    [
        "fn f() -> Int:\n    return rank()\n",
        "fn f() -> Int:\n    return world_size() - 1\n",
        "fn f(x: [B 3]) -> [3]:\n    n = (B / world_size()) as Int\n    return sum(x[rank() * n : rank() * n + n], over=0)\n",
        'fn f(x: [3]):\n    print("x", x, all_ranks=True)\n',
        "fn f(x: [3]):\n    print(x, all_ranks=rank() == 0)\n",
        "fn f():\n    print(all_ranks=False)\n",
    ],
)
def test_uses_that_check(body: str) -> None:
    assert diags(body) == []


@pytest.mark.parametrize(
    "body, expected",
    [
        ("fn f() -> Float:\n    return rank(1)\n", ("E0401", "rank takes 0 positional arguments, found 1", "1")),
        (
            "fn f() -> [3]:\n    return world_size()\n",
            ("E0301", "return value: expected tensor [3], found number Int", "world_size()"),
        ),
        ("fn f():\n    print(1, all_ranks=1)\n", ("E0301", "all_ranks: expected Bool, found number Int", "1")),
        (
            "fn f():\n    print(1, all_rank=True)\n",
            ("E0402", "print has no parameter 'all_rank'; did you mean 'all_ranks'?", "all_rank"),
        ),
        (
            "fn f():\n    print(all_ranks=True, 1)\n",
            ("E0405", "a positional argument cannot follow a keyword argument", "1"),
        ),
    ],
)
def test_uses_that_do_not_check(body: str, expected: tuple[str, str, str]) -> None:
    assert diags(body) == [expected]


def test_compiled_calls() -> None:
    analysis = check_text(
        P + 'fn main():\n    r = rank()\n    print("x", r, world_size(), all_ranks=True)\n    print(r)\n'
    )
    assert analysis.errors == []
    source = compile_program(analysis, "/tmp/p.qv").source
    assert "r = rt.rank()" in source
    assert "rt.print('x', r, rt.world_size(), all_ranks=True)" in source
    assert "rt.print(r)\n" in source
