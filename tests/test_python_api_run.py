"""A program used from Python (issue 39, docs/runtime.md "Using a program from
Python"): `quiver.load` shows the program's own names and the modules it
imports under the names it imports them as (`prog.nn`, `prog.lib`, `prog.Mlp`
of `from lib import Mlp`), and nothing of the compiled code in `dir`; classes
of generic models by dims (`prog.nn.Linear[4, 1]`) and with options
(`prog.GCN.of(3, 16, 4, use_bias=False)`), with their errors; `isinstance`
against a family; the program's fns called on models made in Python, their
gradients against torch, and a model made in Python, trained one step by the
program, saved and loaded."""

from __future__ import annotations

import pytest
import torch

import quiver
from quiver import runtime as rt

LIB = """\
import nn

dim K = 3

model Mlp[I, O, bias: Bool = True]:
    param fc: nn.Linear[I, O, bias=bias]

    fn forward(self, x: [.. I]) -> [.. O]:
        return relu(self.fc(x))

fn apply(l: nn.Linear[i, o], x: [b i]) -> [b o]:
    return l(x)
"""

MAIN = """\
import nn
import lib
from lib import Mlp, apply as run_layer

dim D = 4
dim NC = 2

model GCN[FIN, H, C, use_bias: Bool = True, dropout_p: Float = 0.5]:
    param w1: [FIN H] = normal(0, 0.1)
    param b1: [H] = zeros if use_bias
    param w2: [H C] = normal(0, 0.1)

    fn forward(self, x: [n FIN], mode: Mode) -> [n C]:
        h = x @ self.w1
        if use_bias:
            h = h + self.b1
        return dropout(relu(h), dropout_p, mode) @ self.w2

fn loss(m: nn.Linear[D, 1], x: [b D], y: [b 1]) -> []:
    return mean((m(x) - y) ** 2)

fn step(mut m: nn.Linear[D, 1], x: [b D], y: [b 1]) -> []:
    l, g = value_and_grad(loss, m, x, y)
    m -= 0.1 * g
    return l

fn gcn_loss(m: GCN[D, 8, NC, use_bias=False], x: [n D], y: [n] Index[NC]) -> [] NonNeg:
    return cross_entropy(m(x, Eval), y, over=NC)

fn gcn_step(mut m: GCN[D, 8, NC, use_bias=False], x: [n D], y: [n] Index[NC]) -> [] NonNeg:
    l, g = value_and_grad(gcn_loss, m, x, y)
    m -= 0.5 * g
    return l

fn _private(x: [D]) -> []:
    return sum(x)
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pyapi")
    (folder / "lib.qv").write_text(LIB)
    (folder / "main.qv").write_text(MAIN)
    return quiver.load(str(folder / "main.qv"))


def test_dir_shows_the_programs_names_and_its_imports(prog) -> None:
    assert dir(prog) == ["D", "GCN", "Mlp", "NC", "gcn_loss", "gcn_step", "lib", "loss", "nn", "run_layer", "step"]
    assert [n for n in dir(prog.lib) if n.startswith("_")] == []
    assert dir(prog.lib) == ["K", "Mlp", "apply", "nn"]
    assert "Linear" in dir(prog.nn) and not [n for n in dir(prog.nn) if n.startswith("_")]
    assert prog.D == 4 and prog.lib.K == 3


def test_imported_modules_are_the_same_objects_everywhere(prog) -> None:
    assert prog.Mlp is prog.lib.Mlp  # `from lib import Mlp`
    assert prog.nn is prog.lib.nn  # one module per file and text, one view of it
    assert prog.run_layer is prog.lib.apply  # `apply as run_layer`, bound once
    assert prog.nn.Linear[4, 1] is prog.lib.nn.Linear.of(4, 1, bias=True)
    # loading the imported file itself gives the same object
    assert quiver.load(prog.lib.__quiver_source__) is prog.lib


def test_compiled_internals_are_still_reachable_by_name(prog) -> None:
    # not listed, but tools and tests that look at the compiled code find them
    assert isinstance(prog._src, rt.SourceFile) and prog._sig_loss is not None
    assert prog._private(torch.ones(4)).item() == 4.0


def test_an_unknown_name_says_what_the_program_has(prog) -> None:
    with pytest.raises(AttributeError) as info:
        prog.los  # noqa: B018
    assert str(info.value).endswith("main.qv' has no name 'los'; did you mean 'loss'?")
    with pytest.raises(AttributeError) as info:
        prog.nn.Zzz  # noqa: B018
    assert str(info.value).startswith("Quiver program '") and "has no name 'Zzz'" in str(info.value)
    assert repr(prog).startswith("<Quiver program '") and repr(prog).endswith("main.qv'>")


def test_a_layer_of_nn_made_in_python_and_given_to_the_programs_fn(prog) -> None:
    layer = prog.nn.Linear[4, 1].init(seed=0)
    assert repr(layer).startswith("nn.Linear[4, 1](param weight: [4 1] f32, param bias: [1] f32")
    assert isinstance(layer, prog.nn.Linear) and isinstance(layer, prog.nn.Linear[4, 1])
    assert not isinstance(layer, prog.GCN) and issubclass(prog.nn.Linear[4, 1], prog.nn.Linear)
    x, y = torch.randn(5, 4, generator=torch.Generator().manual_seed(1)), torch.randn(5, 1)
    want = ((x @ layer.weight + layer.bias - y) ** 2).mean()
    assert torch.allclose(prog.loss(layer, x, y), want)
    # a fn generic over the layer's dims, imported from lib under another name
    wide = prog.nn.Linear.of(4, 6, bias=False).init(seed=2)
    assert torch.allclose(prog.run_layer(wide, x), x @ wide.weight)


def test_a_model_with_options_from_python(prog) -> None:
    G = prog.GCN.of(4, 8, 2, use_bias=False)
    assert G is prog.GCN.of(4, 8, 2, use_bias=False, dropout_p=0.5)  # the defaults: one class
    assert G is not prog.GCN[4, 8, 2]
    assert repr(prog.GCN) == "<model GCN[FIN, H, C, use_bias: Bool = True, dropout_p: Float = 0.5]>"
    assert G.__qualname__ == "GCN[4, 8, 2, use_bias=False]"
    m = G.init(seed=0)
    assert repr(m).startswith("GCN[4, 8, 2, use_bias=False](param w1: [4 8] f32, param w2: [8 2] f32)")
    assert isinstance(m, prog.GCN) and isinstance(prog.GCN[4, 8, 2].init(seed=0), prog.GCN)
    # a generic model imported with `from lib import Mlp`, its option passed on to its nn.Linear
    mlp = prog.Mlp.of(4, 3, bias=False).init(seed=0)
    assert [name for name, _ in mlp.state_dict().items()] == ["fc.weight"]
    assert torch.equal(mlp(torch.ones(2, 4)), torch.relu(torch.ones(2, 4) @ mlp.fc.weight))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.GCN.of(4, 8, 2, use_bia=False), "model GCN has no option 'use_bia'; did you mean 'use_bias'?"),
        (lambda p: p.GCN.of(4, 8, 2, zzz=1), "model GCN has no option 'zzz' (it takes by name: use_bias, dropout_p)"),
        (lambda p: p.GCN.of(4, 8, 2, use_bias=0), "model GCN: option use_bias must be True or False, found 0"),
        (lambda p: p.GCN.of(4, 8, 2, dropout_p="x"), "model GCN: option dropout_p must be a number, found 'x'"),
        (lambda p: p.GCN.of(4, 8), "model GCN needs its dim C (FIN, H, C)"),
        (lambda p: p.GCN[4, 8, 2, 1], "model GCN takes 3 dims (FIN, H, C), found 4"),
        (lambda p: p.GCN[4, -8, 2], "model GCN: dim H must be an Int >= 0, found -8"),
        (lambda p: p.GCN[4, 8.0, 2], "model GCN: dim H must be an Int >= 0, found 8.0"),
        (
            lambda p: p.nn.Linear.of(4, 1, dtype=torch.int64),
            "model nn.Linear: option dtype must be a float element type (f32, f64, ...)",
        ),
        (
            lambda p: p.GCN.init(seed=0),
            "model GCN takes dims (FIN, H, C) and options (use_bias, dropout_p): create one with "
            "GCN[FIN, H, C].init(seed=...) or GCN.of(FIN, H, C, use_bias=...).init(seed=...)",
        ),
        (
            lambda p: p.GCN(4, 8, 2),
            "model GCN takes dims (FIN, H, C) and options (use_bias, dropout_p): create one with "
            "GCN[FIN, H, C].init(seed=...) or GCN.of(FIN, H, C, use_bias=...).init(seed=...)",
        ),
        (
            lambda p: p.nn.Dropout.init(seed=0),
            "model nn.Dropout takes options (p, dtype): create one with nn.Dropout.of(p=...).init(seed=...)",
        ),
        (lambda p: p.GCN[4, 8, 2][3], "model GCN[4, 8, 2] has its dims already: create one with .init(seed=...)"),
    ],
)
def test_python_side_errors_name_the_model_and_the_option(prog, make, message) -> None:
    with pytest.raises(rt.ModelError) as info:
        make(prog)
    assert str(info.value) == message


def test_a_model_that_takes_no_dims_says_so(tmp_path) -> None:
    (tmp_path / "plain.qv").write_text("model Net:\n    param w: [3] = zeros\n")
    prog = quiver.load(str(tmp_path / "plain.qv"))
    with pytest.raises(rt.ModelError) as info:
        prog.Net[3]
    assert str(info.value) == "model Net takes no dims: create one with Net.init(seed=...)"
    assert dir(prog) == ["Net"]


def test_a_wrong_instance_is_a_check_error_naming_both(prog) -> None:
    other = prog.nn.Linear[3, 1].init(seed=0)
    with pytest.raises(
        rt.CheckError, match=r"loss\(\): argument 'm' expected model nn\.Linear\[4, 1\], found model nn\.Linear\[3, 1\]"
    ):
        prog.loss(other, torch.randn(2, 4), torch.randn(2, 1))


def test_gradients_of_the_programs_fn_from_python_equal_torchs(prog) -> None:
    layer = prog.nn.Linear[4, 1].init(seed=3)
    x, y = torch.randn(6, 4, generator=torch.Generator().manual_seed(4)), torch.randn(6, 1)
    value, g = rt.value_and_grad(prog.loss, layer, x, y)
    w, b = (t.detach().clone().requires_grad_(True) for t in (layer.weight, layer.bias))
    want = ((x @ w + b - y) ** 2).mean()
    want.backward()
    assert torch.allclose(value, want.detach())
    assert w.grad is not None and b.grad is not None
    assert torch.allclose(g.weight, w.grad) and torch.allclose(g.bias, b.grad)
    assert torch.allclose(rt.grad(prog.loss, layer, x, y).weight, w.grad)


def test_a_model_made_in_python_trained_by_the_program_saved_and_loaded(prog, tmp_path) -> None:
    G = prog.GCN.of(4, 8, 2, use_bias=False)
    m = G.init(seed=5)
    x = torch.randn(7, 4, generator=torch.Generator().manual_seed(6))
    y = torch.tensor([0, 1, 1, 0, 1, 0, 0])
    # the same step in torch
    w1, w2 = (t.detach().clone().requires_grad_(True) for t in (m.w1, m.w2))
    want = torch.nn.functional.cross_entropy(torch.relu(x @ w1) @ w2, y)
    want.backward()
    assert w1.grad is not None and w2.grad is not None
    value = prog.gcn_step(m, x, y)
    assert torch.allclose(value, want.detach())
    assert torch.allclose(m.w1, w1.detach() - 0.5 * w1.grad) and torch.allclose(m.w2, w2.detach() - 0.5 * w2.grad)
    path = tmp_path / "gcn.pt"
    m.save(path)
    again = G.load(path)
    assert type(again) is G and isinstance(again, prog.GCN)
    assert all(torch.equal(a, b) for a, b in zip(again.state_dict().values(), m.state_dict().values(), strict=True))
    assert torch.equal(prog.gcn_loss(again, x, y), prog.gcn_loss(m, x, y))
    # a file of another instance of the family is refused, naming both
    with pytest.raises(rt.ModelError, match=r"cannot load GCN\[4, 8, 2\]: .* holds a GCN\[4, 8, 2, use_bias=False\]"):
        prog.GCN[4, 8, 2].load(path)


def test_a_trained_layer_of_nn_takes_the_programs_step(prog) -> None:
    layer = prog.nn.Linear[4, 1].init(seed=0)
    x, y = torch.randn(5, 4, generator=torch.Generator().manual_seed(1)), torch.randn(5, 1)
    # the same step in torch (nn.Linear keeps its weight [I O], torch's transpose)
    w, b = (t.detach().clone().requires_grad_(True) for t in (layer.weight, layer.bias))
    want = torch.mean((x @ w + b - y) ** 2)
    want.backward()
    assert w.grad is not None and b.grad is not None
    torch.testing.assert_close(prog.step(layer, x, y), want.detach())
    torch.testing.assert_close(layer.weight, w.detach() - 0.1 * w.grad)
    torch.testing.assert_close(layer.bias, b.detach() - 0.1 * b.grad)


def test_a_module_in_a_folder_is_reached_through_its_package(tmp_path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg.qv").write_text("dim A = 2\n")
    (tmp_path / "pkg" / "sub.qv").write_text("dim B = 3\n\nfn f(x: [B]) -> []:\n    return sum(x)\n")
    (tmp_path / "one.qv").write_text("import pkg.sub\n\nfn g(x: [pkg.sub.B]) -> []:\n    return pkg.sub.f(x)\n")
    (tmp_path / "two.qv").write_text(
        "import pkg\nimport pkg.sub\n\nfn g(x: [pkg.sub.B]) -> [pkg.A]:\n    return zeros([pkg.A]) + pkg.sub.f(x)\n"
    )
    one = quiver.load(str(tmp_path / "one.qv"))
    # `import pkg.sub` alone: `pkg` holds only `sub`
    assert dir(one) == ["g", "pkg"] and dir(one.pkg) == ["sub"] and repr(one.pkg) == "<Quiver package 'pkg'>"
    assert one.pkg.sub.f(torch.ones(3)).item() == 3.0 and one.pkg.sub.B == 3
    with pytest.raises(AttributeError) as info:
        one.pkg.zz  # noqa: B018
    assert str(info.value) == "Quiver package 'pkg' has no name 'zz' (its names: sub)"
    # `import pkg` and `import pkg.sub`: `pkg`'s own names and `sub`
    two = quiver.load(str(tmp_path / "two.qv"))
    assert dir(two.pkg) == ["A", "sub"] and two.pkg.A == 2 and two.pkg.sub is one.pkg.sub
    assert torch.equal(two.g(torch.ones(3)), torch.full((2,), 3.0))
