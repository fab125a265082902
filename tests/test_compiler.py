"""The compiler: what it generates, and that it runs as the program says."""

from __future__ import annotations

import ast as pyast
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver import runtime as rt
from quiver.checker import ast as A
from quiver.checker import check_text
from quiver.checker.compiler import CompileError, compile_program
from quiver.loader import compile_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.qv"))


def compiled(src: str, path: str = "/virtual/prog.qv"):
    return compile_program(check_text(textwrap.dedent(src)), path)


def load_text(tmp_path: Path, src: str, name: str = "prog.qv"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(src))
    return quiver.load(str(p))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_compile_to_valid_python_importing_only_the_runtime(path: Path) -> None:
    program = compile_file(str(path))  # with the examples it imports (gpt.qv: gpt_model.qv)
    out = program.compiled
    tree = pyast.parse(out.source)
    imports = [n for n in pyast.walk(tree) if isinstance(n, (pyast.Import, pyast.ImportFrom))]
    assert [(i.module, [a.name for a in i.names]) for i in imports] == [("quiver", ["runtime"])]
    # every statement of every function body maps back to its .qv line and column
    analysis = program.analysis
    mapped = set(out.line_map.values())
    for item in analysis.parsed.items:
        if not isinstance(item, A.FnDecl):
            continue
        base = analysis.slot_of_item[item].start
        for node in A.walk(item):
            if isinstance(node, (A.Assign, A.AugAssign, A.ExprStmt, A.Return, A.For, A.While, A.IfBranch)):
                p = analysis.lines.position(base + node.span.start)
                assert (p.line + 1, p.column + 1) in mapped, (item.name.text, p.line + 1)


def test_programs_with_errors_are_not_compiled() -> None:
    with pytest.raises(CompileError):
        compiled("fn main():\n    print(nope)\n")


def test_names_that_python_reserves_are_renamed() -> None:
    out = compiled("""
    dim max = 3

    fn sum(lambda: [max], class: Int) -> [max]:
        rt = lambda * 2.0
        return rt

    fn main():
        print(sum(ones([max]), 1))
    """)
    assert "def sum_q(lambda_q, class_q):" in out.source
    assert "max_q = 3" in out.source
    ns: dict = {}
    exec(compile(out.source, "<test>", "exec"), ns)
    assert ns["sum_q"](torch.ones(3), 1).tolist() == [2.0, 2.0, 2.0]


def test_over_dims_become_axes(tmp_path: Path) -> None:
    mod = load_text(
        tmp_path,
        """
    dim T = 2
    dim C = 3

    fn f(x: [b T C]) -> [b C]:
        return sum(x, over=T)

    fn g(x: [b T C]) -> [b T] Index[C]:
        return argmax(x, over=C)
    """,
    )
    x = torch.arange(12.0).reshape(2, 2, 3)
    assert torch.equal(mod.f(x), x.sum(1))
    assert torch.equal(mod.g(x), x.argmax(2))


def test_generic_dims_are_read_from_the_arguments(tmp_path: Path) -> None:
    mod = load_text(
        tmp_path,
        """
    dim H = 4

    fn start(x: [b 3]) -> [b H]:
        h = zeros([b H])
        for i in range(b):
            h = h + 1.0
        return h
    """,
    )
    assert torch.equal(mod.start(torch.zeros(5, 3)), torch.full((5, 4), 5.0))


def test_augmented_assignment_never_changes_a_shared_tensor(tmp_path: Path) -> None:
    mod = load_text(
        tmp_path,
        """
    fn f(x: [3]) -> [3]:
        y = x
        y += 1.0
        return x
    """,
    )
    x = torch.zeros(3)
    assert torch.equal(mod.f(x), torch.zeros(3)) and torch.equal(x, torch.zeros(3))


def test_casts(tmp_path: Path) -> None:
    mod = load_text(
        tmp_path,
        """
    fn f(x: [3]) -> ([3] f64, Float, [3] i64):
        return x as f64, mean(x) as Float, x as i64
    """,
    )
    a, b, c = mod.f(torch.tensor([1.5, 2.5, 3.0]))
    assert a.dtype == torch.float64 and isinstance(b, float) and c.tolist() == [1, 2, 3]


def test_field_assignment_updates_the_model_in_place(tmp_path: Path) -> None:
    mod = load_text(
        tmp_path,
        """
    model M:
        param w: [2] = ones
        buffer n: [] i64 = 0

    fn bump(mut m: M):
        m.w = m.w * 2.0
        m.n += 1
    """,
    )
    m = mod.M.init(seed=0)
    w = m.w
    mod.bump(m)
    assert m.w is w and m.w.tolist() == [2.0, 2.0] and int(m.n) == 1


# ------------------------------------------------------------------ gradients of the examples


def _hand_grads(loss_fn, params):
    leaves = [p.detach().clone().requires_grad_(True) for p in params]
    value = loss_fn(*leaves)
    return value, torch.autograd.grad(value, leaves, allow_unused=True, materialize_grads=True)


def _assert_same(g, names, hand) -> None:
    for name, h in zip(names, hand):
        assert torch.allclose(getattr(g, name), h, atol=1e-6, rtol=1e-5), name


def test_mlp_gradients_match_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "mlp.qv"))
    m = mod.Mlp.init(seed=0)
    x, y = torch.randn(16, 784, generator=torch.Generator().manual_seed(1)), torch.randint(0, 10, (16,))
    value, g = rt.value_and_grad(mod.loss, m, x, y, rt.Eval)
    names = ["w1", "b1", "w2", "b2"]
    hand_value, hand = _hand_grads(
        lambda w1, b1, w2, b2: F.cross_entropy(F.relu(x @ w1 + b1) @ w2 + b2, y), [getattr(m, n) for n in names]
    )
    assert torch.allclose(value, hand_value)
    _assert_same(g, names, hand)


def test_rnn_gradients_match_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "rnn.qv"))
    m = mod.Rnn.init(seed=0)
    xs = torch.randn(12, 5, 8, generator=torch.Generator().manual_seed(3))
    y = torch.randint(0, 4, (5,), generator=torch.Generator().manual_seed(4))
    names = ["wx", "wh", "bh", "wo", "bo"]

    def hand(wx, wh, bh, wo, bo):
        h = torch.zeros(5, 32)
        for t in range(12):
            h = torch.tanh(xs[t] @ wx + h @ wh + bh)
        return F.cross_entropy(h @ wo + bo, y)

    value, g = rt.value_and_grad(mod.loss, m, xs, y)
    hand_value, grads = _hand_grads(hand, [getattr(m, n) for n in names])
    assert torch.allclose(value, hand_value)
    _assert_same(g, names, grads)


def test_regression_gradients_match_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "regression.qv"))
    m = mod.Linear.init(seed=0)
    m.w = torch.tensor([[0.3], [-0.2], [0.1]])
    x = torch.randn(32, 3, generator=torch.Generator().manual_seed(5))
    y = torch.randn(32, 1, generator=torch.Generator().manual_seed(6))
    value, g = rt.value_and_grad(mod.loss, m, x, y)
    hand_value, grads = _hand_grads(lambda w, b: F.mse_loss(x @ w + b, y), [m.w, m.b])
    assert torch.allclose(value, hand_value)
    _assert_same(g, ["w", "b"], grads)


def test_autoencoder_gradients_match_hand_written_torch() -> None:
    mod = quiver.load(str(ROOT / "examples" / "autoencoder.qv"))
    m = mod.Autoencoder.init(seed=0)
    x = torch.sigmoid(torch.randn(8, 64, generator=torch.Generator().manual_seed(7)))
    names = ["enc", "b_enc", "b_dec"]

    def hand(enc, b_enc, b_dec):
        z = F.relu(x @ enc + b_enc)
        return F.mse_loss(torch.sigmoid(z @ enc.T + b_dec), x)

    value, g = rt.value_and_grad(mod.loss, m, x, rt.Eval)
    hand_value, grads = _hand_grads(hand, [getattr(m, n) for n in names])
    assert torch.allclose(value, hand_value)
    _assert_same(g, names, grads)


def test_gradcheck_through_compiled_code(tmp_path: Path) -> None:
    mod = load_text(
        tmp_path,
        """
    model Tiny:
        param w: [3 2] f64 = normal(0.0, 0.5)
        param b: [2] f64 = zeros

    fn loss(m: Tiny, x: [n 3] f64) -> [] f64:
        return sum(tanh(x @ m.w + m.b) ** 2)
    """,
    )
    m = mod.Tiny.init(seed=0)
    x = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    _, g = rt.value_and_grad(mod.loss, m, x)

    def as_function(w, b):
        return (torch.tanh(x @ w + b) ** 2).sum()

    assert torch.autograd.gradcheck(
        as_function, (m.w.detach().clone().requires_grad_(), m.b.detach().clone().requires_grad_())
    )
    _, grads = _hand_grads(as_function, [m.w, m.b])
    _assert_same(g, ["w", "b"], grads)


def test_training_reduces_the_loss() -> None:
    mod = quiver.load(str(ROOT / "examples" / "mlp.qv"))
    m = mod.Mlp.init(seed=0)
    x = rt.randn((64, 784), seed=1)
    y = rt.randint((64,), 10, seed=2)
    first = float(mod.train_step(m, x, y, 0.1, 0))
    for i in range(1, 30):
        last = float(mod.train_step(m, x, y, 0.1, i))
    assert last < first / 2
    assert int(m.steps) == 30
