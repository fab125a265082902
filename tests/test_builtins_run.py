"""Every built-in, compiled and run, against the same computation in torch."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import quiver
from quiver.checker.builtins import BUILTINS, CONSTANTS
from quiver.runtime import _ops

SRC = """
dim T = 2
dim C = 3

fn relu_(x: [T C]) -> [T C] NonNeg:
    return relu(x)

fn tanh_(x: [T C]) -> [T C]:
    return tanh(x)

fn sigmoid_(x: [T C]) -> [T C] Prob:
    return sigmoid(x)

fn exp_(x: [T C]) -> [T C] NonNeg:
    return exp(x)

fn log_(x: [T C]) -> [T C]:
    return log(abs(x) + 1.0)

fn log1p_(x: [T C]) -> [T C]:
    return log1p(abs(x))

fn softplus_(x: [T C]) -> [T C] NonNeg:
    return softplus(x)

fn sqrt_(x: [T C]) -> [T C] NonNeg:
    return sqrt(abs(x))

fn gelu_(x: [T C]) -> [T C]:
    return gelu(x)

fn silu_(x: [T C]) -> [T C]:
    return silu(x)

fn sin_(x: [T C]) -> [T C]:
    return sin(x)

fn cos_(x: [T C]) -> [T C]:
    return cos(x)

fn clamp_(x: [T C]) -> [T C] Prob:
    return clamp(x, min=0.0, max=1.0)

fn clamp_max(x: [T C]) -> [T C]:
    return clamp(x, max=0.5)

fn maximum_(x: [T C]) -> [T C] NonNeg:
    return maximum(x, 0.0)

fn minimum_(x: [T C]) -> [T C]:
    return minimum(x, x * x)

fn softmax_(x: [T C]) -> [T C] Prob:
    return softmax(x, over=C)

fn log_softmax_(x: [T C]) -> [T C]:
    return log_softmax(x, over=T)

fn layer_norm_(x: [T C]) -> [T C]:
    return layer_norm(x, over=C)

fn rms_norm_(x: [T C]) -> [T C]:
    return rms_norm(x, over=0)

fn sum_(x: [T C]) -> [C]:
    return sum(x, over=T)

fn sum_all(x: [T C]) -> []:
    return sum(x)

fn mean_(x: [T C]) -> [T]:
    return mean(x, over=C)

fn max_(x: [T C]) -> [T]:
    return max(x, over=C)

fn min_(x: [T C]) -> []:
    return min(x)

fn argmax_(x: [T C]) -> [T] Index[C]:
    return argmax(x, over=C)

fn ce(x: [T C], y: [T] Index[C]) -> [] NonNeg:
    return cross_entropy(x, y, over=C)

fn ce_first(x: [C T], y: [T] Index[C]) -> [] NonNeg:
    return cross_entropy(x, y, over=C)

fn nll_(x: [T C], y: [T] Index[C]) -> [] NonNeg:
    return nll(log_softmax(x, over=C), y, over=C)

fn bce(x: [T C], y: [T C]) -> [] NonNeg:
    return binary_cross_entropy_with_logits(x, y)

fn kl(x: [T C], y: [T C]) -> [] NonNeg:
    return kl_div(log_softmax(x, over=C), softmax(y, over=C))

fn mse_(x: [T C], y: [T C]) -> [] NonNeg:
    return mse(x, y)

fn where_(x: [T C]) -> [T C]:
    return where(x > 0.0, x, 0.0)

fn transpose_(x: [T C]) -> [C T]:
    return transpose(x)

fn norm_(x: [T C]) -> [] NonNeg:
    return norm(x)

fn stop_(x: [T C]) -> [T C]:
    return stop_grad(x)

fn pipe(x: [T C]) -> [T]:
    return x |> relu |> sum(over=C)

fn item_float(x: [T C]) -> Float:
    return item(sum(x)) / 2.0

fn item_int(y: [T] Index[C]) -> Int:
    return item(y[1]) + 1

fn item_bool(x: [T C]) -> Bool:
    return item(sum(x) > 1.0)

fn number_to_tensor(n: Float) -> []:
    return n as []

fn dropout_eval(x: [T C]) -> [T C]:
    return dropout(x, 0.5, Eval)

fn dropout_train(x: [T C], s: Int) -> [T C]:
    return dropout(x, 0.5, Train(seed=s))

fn made() -> ([T C], [T C], [T C], [4] Index[C]):
    return zeros([T C]), ones([T C]), randn([T C], seed=3), randint([4] Index[C], seed=4)
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path: Path = tmp_path_factory.mktemp("builtins") / "b.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


X = torch.tensor([[0.5, -1.0, 2.0], [-0.25, 3.0, 0.0]])


@pytest.mark.parametrize(
    "name, expected",
    [
        ("relu_", F.relu(X)),
        ("tanh_", torch.tanh(X)),
        ("sigmoid_", torch.sigmoid(X)),
        ("exp_", torch.exp(X)),
        ("log_", torch.log(X.abs() + 1)),
        ("log1p_", torch.log1p(X.abs())),
        ("softplus_", F.softplus(X)),
        ("sqrt_", torch.sqrt(X.abs())),
        ("gelu_", F.gelu(X)),
        ("silu_", F.silu(X)),
        ("sin_", torch.sin(X)),
        ("cos_", torch.cos(X)),
        ("clamp_", torch.clamp(X, 0.0, 1.0)),
        ("clamp_max", torch.clamp(X, max=0.5)),
        ("maximum_", torch.maximum(X, torch.zeros(()))),
        ("minimum_", torch.minimum(X, X * X)),
        ("softmax_", torch.softmax(X, 1)),
        ("log_softmax_", torch.log_softmax(X, 0)),
        ("layer_norm_", F.layer_norm(X, (3,))),
        ("rms_norm_", F.rms_norm(X.T, (2,)).T),
        ("sum_", X.sum(0)),
        ("sum_all", X.sum()),
        ("mean_", X.mean(1)),
        ("max_", X.max(1).values),
        ("min_", X.min()),
        ("argmax_", X.argmax(1)),
        ("where_", torch.where(X > 0, X, torch.tensor(0.0))),
        ("transpose_", X.T),
        ("norm_", X.norm()),
        ("stop_", X),
        ("pipe", F.relu(X).sum(1)),
        ("dropout_eval", X),
    ],
)
def test_elementwise_and_reductions(mod, name: str, expected: torch.Tensor) -> None:
    got = getattr(mod, name)(X)
    assert got.dtype == expected.dtype and torch.allclose(got, expected), (got, expected)


def test_cross_entropy_finds_the_class_axis(mod) -> None:
    y = torch.tensor([2, 1])
    assert torch.allclose(mod.ce(X, y), F.cross_entropy(X, y))
    assert torch.allclose(mod.ce_first(X.T.contiguous(), y), F.cross_entropy(X, y))


def test_nll_bce_and_kl_div(mod) -> None:
    y = torch.tensor([2, 1])
    assert torch.allclose(mod.nll_(X, y), F.nll_loss(torch.log_softmax(X, 1), y))
    t = torch.sigmoid(X * 3)
    assert torch.allclose(mod.bce(X, t), F.binary_cross_entropy_with_logits(X, t))
    p, q = torch.log_softmax(X, 1), torch.softmax(X.flip(0), 1)
    assert torch.allclose(mod.kl(X, X.flip(0)), F.kl_div(p, q, reduction="batchmean"))


def test_mse(mod) -> None:
    assert torch.allclose(mod.mse_(X, X * 2), F.mse_loss(X, X * 2))


def test_item_gives_the_number_of_its_element_type(mod) -> None:
    # item(x) is torch's .item(): a Float of a float tensor, an Int of an Index, a Bool of a Bool
    f, i, b = mod.item_float(X), mod.item_int(torch.tensor([2, 1])), mod.item_bool(X)
    assert type(f) is float and f == X.sum().item() / 2.0
    assert type(i) is int and i == torch.tensor([2, 1])[1].item() + 1
    assert type(b) is bool and b == (X.sum() > 1.0).item()


def test_number_to_tensor(mod) -> None:
    t = mod.number_to_tensor(2.5)
    assert isinstance(t, torch.Tensor) and t.dim() == 0 and float(t) == 2.5


def test_dropout_in_train_mode_is_deterministic_for_a_seed(mod) -> None:
    x = torch.ones(2, 3)
    a, b = mod.dropout_train(x, 1), mod.dropout_train(x, 1)
    assert torch.equal(a, b)
    assert set(a.unique().tolist()) <= {0.0, 2.0}
    masks = {tuple(mod.dropout_train(x, s).flatten().tolist()) for s in range(8)}
    assert len(masks) > 1, "different seeds give different masks"


def test_creation_builtins(mod) -> None:
    z, o, r, i = mod.made()
    assert torch.equal(z, torch.zeros(2, 3)) and torch.equal(o, torch.ones(2, 3))
    assert torch.equal(r, mod.made()[2]), "randn is deterministic for its seed"
    assert i.dtype == torch.int64 and bool((i >= 0).all() and (i < 3).all())


def test_softplus_and_log1p_gradients_match_torch(tmp_path) -> None:
    # The two built-ins added through the spec recipe: values and gradients.
    path = tmp_path / "sp.qv"
    path.write_text(
        textwrap.dedent("""
        dim D = 3

        model P:
            param w: [D] = ones

        fn loss(m: P, x: [D]) -> []:
            return sum(softplus(x * m.w)) + sum(log1p(abs(x * m.w)))
    """)
    )
    mod = quiver.load(str(path))
    m = mod.P.init(seed=0)
    x = torch.tensor([0.5, -2.0, 3.0])
    value, g = quiver.runtime.value_and_grad(mod.loss, m, x)
    w = torch.ones(3, requires_grad=True)
    expected = F.softplus(x * w).sum() + torch.log1p((x * w).abs()).sum()
    (expected_grad,) = torch.autograd.grad(expected, w)
    assert torch.allclose(value, expected.detach()) and torch.allclose(g.w, expected_grad)


@pytest.mark.parametrize("name", sorted(n for n, b in BUILTINS.items() if b.runtime is not None))
def test_each_spec_names_a_runtime_function_that_rt_exports(name: str) -> None:
    for runtime in (BUILTINS[name].runtime, BUILTINS[name].number_runtime):
        if runtime is not None:
            assert runtime in quiver.runtime.__all__ and callable(getattr(quiver.runtime, runtime))


def test_each_op_of_the_runtime_is_a_spec_s_or_a_helper_of_the_compiler() -> None:
    # rt exports every public name of runtime/_ops.py (no list to keep): each
    # is the run-time function of a spec, or one the compiler writes itself.
    used = {r for b in BUILTINS.values() for r in (b.runtime, b.number_runtime, b.grad_runtime) if r is not None}
    compiler_helpers = {"tensor", "cast", "format_value"} | set(CONSTANTS)  # literals, `as`, f-strings; inf, pi
    assert set(_ops.__all__) - used - compiler_helpers == set()
    assert set(_ops.__all__) <= set(quiver.runtime.__all__)
    assert not {"torch", "np", "F", "math", "sys", "builtins", "checks"} & set(_ops.__all__)  # imported, not ops


def test_every_builtin_is_compiled_and_run_against_torch() -> None:
    # The compiled programs of this file, of the other run tests of built-ins
    # (tests/test_*_run.py) and of nn's parity tests (tests/nn/, against
    # torch.nn and torch.nn.functional) call every built-in at least once.
    here = Path(__file__).parent
    runs = [*sorted(here.glob("test_*_run.py")), *sorted((here / "nn").glob("test_*.py"))]
    sources = [SRC] + [p.read_text() for p in runs if p.name != Path(__file__).name]
    called = {name for text in sources for name in re.findall(r"\b([A-Za-z_][A-Za-z_0-9]*)\(", text)}
    # (print, range and value_and_grad run in tests/test_run.py and tests/runtime.)
    assert set(BUILTINS) - {"print", "range", "value_and_grad"} <= called


def test_each_element_type_of_the_checker_is_one_of_the_runtime() -> None:
    # checker/types.py's DTYPES is the one table of element types; the
    # compiler writes rt.<name> for each, which must be that dtype.
    from quiver.checker import types as T

    torch_dtypes = {
        "f16": torch.float16,
        "bf16": torch.bfloat16,
        "f32": torch.float32,
        "f64": torch.float64,
        "i32": torch.int32,
        "i64": torch.int64,
        "bool": torch.bool,
    }
    assert set(T.DTYPES) == set(torch_dtypes)
    for dtype, (_family, rt_name) in T.DTYPES.items():
        assert getattr(quiver.runtime, rt_name).dtype == torch_dtypes[dtype], (dtype, rt_name)
