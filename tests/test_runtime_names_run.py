"""A model's name at run time is the name the checker gives it in the file
that uses it (docs/runtime.md, "Names of models at run time"): a model of an
imported module carries its module's qualified name (`nn.Conv2d[...]`,
`pkg.lib.Mlp[...]`, also after `from pkg.lib import Mlp`), a program's own
models their bare names; a generic instance lists its dims in order and the
options that differ from their defaults, as the checker's types do."""

from __future__ import annotations

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.loader import CheckFailed

LIB = """\
model Mlp[D, H = 4, bias: Bool = True]:
    param w: [D H] = zeros

model Plain:
    param w: [3] = zeros
"""

MAIN = """\
import nn
import pkg.lib
from pkg.lib import Mlp

model Own[D]:
    param w: [D] = zeros

fn conv(m: nn.Conv2d[4, 8, 1, stride=2, bias=False]) -> Int:
    return 1

fn wide(m: nn.Linear[4, 8, dtype=f64]) -> Int:
    return 1

fn mlp(m: Mlp[2, bias=False]) -> Int:
    return 1

fn plain(m: pkg.lib.Plain) -> Int:
    return 1

fn own(m: Own[3]) -> Int:
    return 1
"""

# The same types, each in a planted mistake: what the checker calls them.
PLANTED = """\
import nn
import pkg.lib
from pkg.lib import Mlp

model Own[D]:
    param w: [D] = zeros

fn conv(m: nn.Conv2d[4, 8, 1, stride=2, bias=False]) -> [] f32:
    return m

fn wide(m: nn.Linear[4, 8, dtype=f64]) -> [] f32:
    return m

fn mlp(m: Mlp[2, bias=False]) -> [] f32:
    return m

fn plain(m: pkg.lib.Plain) -> [] f32:
    return m

fn own(m: Own[3]) -> [] f32:
    return m
"""

# what each fn above is called with and what its argument check then says
EXPECTED = {
    "conv": "nn.Conv2d[4, 8, 1, 2, 0, 1, 1, bias=False]",
    "wide": "nn.Linear[4, 8, dtype=f64]",
    "mlp": "pkg.lib.Mlp[2, 4, bias=False]",
    "plain": "pkg.lib.Plain",
    "own": "Own[3]",
}


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    (root / "pkg").mkdir()
    (root / "pkg" / "lib.qv").write_text(LIB)
    (root / "main.qv").write_text(MAIN)
    (root / "planted.qv").write_text(PLANTED)
    return root, quiver.load(str(root / "main.qv"))


def _checker_names(root) -> list[str]:
    """The types the checker names in the planted `return m`s, in order."""
    with pytest.raises(CheckFailed) as info:
        quiver.load(str(root / "planted.qv"))
    assert [d.code for d in info.value.diagnostics] == ["E0301"] * len(EXPECTED)
    return [d.message.split("found model ", 1)[1] for d in info.value.diagnostics]


def test_the_checker_names_the_types_so(prog) -> None:
    root, _ = prog
    assert _checker_names(root) == list(EXPECTED.values())


@pytest.mark.parametrize("fn", list(EXPECTED))
def test_an_argument_check_names_the_type_as_the_checker_does(prog, fn) -> None:
    _, p = prog
    wrong = p.nn.Linear[3, 1].init(seed=0)
    with pytest.raises(rt.CheckError) as info:
        getattr(p, fn)(wrong)
    line = MAIN.splitlines().index(next(s for s in MAIN.splitlines() if s.startswith(f"fn {fn}("))) + 1
    assert str(info.value) == (
        f"main.qv:{line}: {fn}(): argument 'm' expected model {EXPECTED[fn]}, found model nn.Linear[3, 1]"
    )


def test_instances_made_in_python_carry_the_same_names(prog) -> None:
    _, p = prog
    made = {
        "conv": p.nn.Conv2d.of(4, 8, 1, stride=2, bias=False),
        "wide": p.nn.Linear.of(4, 8, dtype=torch.float64),
        "mlp": p.Mlp.of(2, bias=False),
        "plain": p.pkg.lib.Plain,
        "own": p.Own[3],
    }
    for fn, cls in made.items():
        assert cls._qv_name == EXPECTED[fn]
        m = cls.init(seed=0)
        assert getattr(p, fn)(m) == 1
        assert repr(m).startswith(EXPECTED[fn] + "(param w")
    # the family's repr, and a Python-side mistake, name the module too
    assert repr(p.Mlp) == "<model pkg.lib.Mlp[D, H = 4, bias: Bool = True]>"
    with pytest.raises(rt.ModelError) as info:
        p.nn.Linear.of(4, 1, bias=1)
    assert str(info.value) == "model nn.Linear: option bias must be True or False, found 1"
    # the class's Python name stays what the module defines (its repr, pickling)
    assert made["conv"].__qualname__ == "Conv2d[4, 8, 1, 2, 0, 1, 1, bias=False]"
    assert made["plain"].__qualname__ == "Plain"


def test_a_gradient_and_an_optimizer_name_the_module(prog) -> None:
    _, p = prog
    layer = p.nn.Linear[4, 1].init(seed=0)
    assert repr(rt.zeros_grad(layer)).startswith("Grad[nn.Linear[4, 1]]")
    assert str(rt.Adam(layer, lr=0.1)).startswith("Adam[nn.Linear[4, 1]]")


def test_a_saved_file_names_the_model_without_its_module(prog, tmp_path) -> None:
    # the file reads back whether the module is imported (its models named
    # `pkg.lib.Mlp[...]`) or loaded on its own (`Mlp[...]`), and files written
    # before models carried their module's name still load
    _, p = prog
    for cls, bare in ((p.Mlp.of(2, bias=False), "Mlp[2, 4, bias=False]"), (p.pkg.lib.Plain, "Plain")):
        m = cls.init(seed=1)
        m.save(str(tmp_path / "m.pt"))
        assert torch.load(tmp_path / "m.pt", weights_only=True)["model"] == bare
        assert torch.equal(cls.load(str(tmp_path / "m.pt")).w, m.w)
    with pytest.raises(rt.ModelError) as info:
        p.Mlp[2].load(str(tmp_path / "m.pt"))
    assert str(info.value) == f"cannot load pkg.lib.Mlp[2, 4]: {str(tmp_path / 'm.pt')!r} holds a Plain"
