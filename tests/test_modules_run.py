"""Programs of several files at run time: `quiver.load`, `quiver run` and
qlint on files that import others."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import quiver
from quiver.checker.analysis import Analyzer
from quiver.loader import CheckFailed
from tests.checker.test_modules import LAYERS

TRAIN = """\
import layers
from layers import Mlp, forward as fwd

fn step(mut m: Mlp, x: [b 4], y: [b] Index[layers.C]):
    l, g = value_and_grad(layers.loss, m, x, y)
    m -= 0.5 * g

fn main():
    m = Mlp.init(seed=0)
    x = randn([32 4], seed=1)
    y = fwd(Mlp.init(seed=7), x) |> argmax(over=layers.C)
    for i in range(50):
        step(m, x, y)
    print(layers.loss(m, x, y))
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    (tmp_path / "layers.qv").write_text(LAYERS)
    (tmp_path / "train.qv").write_text(TRAIN)
    return tmp_path


def test_a_model_is_one_class_in_every_program(program: Path) -> None:
    train = quiver.load(str(program / "train.qv"))
    layers = quiver.load(str(program / "layers.qv"))
    assert train.Mlp is layers.Mlp  # the module a program imports is the one loaded alone
    m = layers.Mlp.init(seed=0)
    x = torch.randn(5, 4)
    torch.testing.assert_close(train.fwd(m, x), layers.forward(m, x))


def test_training_through_an_imported_module_matches_torch(program: Path) -> None:
    train = quiver.load(str(program / "train.qv"))
    m = train.Mlp.init(seed=0)
    x = torch.randn(32, 4)
    y = torch.randint(0, 3, (32,))
    w1, b1, w2 = (
        m.w1.detach().clone().requires_grad_(),
        m.b1.detach().clone().requires_grad_(),
        m.w2.detach().clone().requires_grad_(),
    )
    train.step(m, x, y)
    loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1 + b1) @ w2, y)
    gw1, gb1, gw2 = torch.autograd.grad(loss, (w1, b1, w2))
    torch.testing.assert_close(m.w1, w1 - 0.5 * gw1)
    torch.testing.assert_close(m.b1, b1 - 0.5 * gb1)
    torch.testing.assert_close(m.w2, w2 - 0.5 * gw2)


def test_each_file_is_checked_once_per_load(program: Path, monkeypatch) -> None:
    seen: list[int] = []
    original = Analyzer.update

    def counting(self, text, *args, **kwargs):
        seen.append(len(text))
        return original(self, text, *args, **kwargs)

    monkeypatch.setattr(Analyzer, "update", counting)
    (program / "eval.qv").write_text(
        "import layers\nimport train\n\nfn main():\n    m = layers.Mlp.init(seed=0)\n"
        "    x = randn([8 4], seed=1)\n    train.step(m, x, argmax(layers.forward(m, x), over=layers.C))\n"
    )
    quiver.load(str(program / "eval.qv"))
    assert sorted(seen) == sorted(len(p.read_text()) for p in program.glob("*.qv"))


def test_errors_of_an_imported_file_are_reported_at_it(program: Path) -> None:
    (program / "layers.qv").write_text(LAYERS.replace("return h @ m.w2", "return h @ m.w1"))
    with pytest.raises(CheckFailed) as info:
        quiver.load(str(program / "train.qv"))
    assert info.value.path.endswith("/layers.qv")
    r = subprocess.run([sys.executable, "-m", "quiver", "run", "train.qv"], cwd=program, capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.splitlines()[0].startswith("layers.qv:11:12: E0203")
    assert r.stderr.splitlines()[-1] == "quiver: layers.qv has 1 error(s); nothing was run"


def test_quiver_run_runs_a_program_of_two_files(program: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "quiver", "run", "train.qv"], cwd=program, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) < 0.6


def test_a_runtime_error_names_the_imported_file_and_line(program: Path) -> None:
    (program / "lib.qv").write_text("fn pick(x: [4], i: Int) -> []:\n    return x[i]\n")
    (program / "main.qv").write_text("import lib\n\nfn main():\n    print(lib.pick(zeros([4]), 9))\n")
    r = subprocess.run([sys.executable, "-m", "quiver", "run", "main.qv"], cwd=program, capture_output=True, text=True)
    assert r.returncode == 1
    assert "lib.qv:2" in r.stderr, r.stderr


def test_qlint_checks_a_folder_once_and_reports_at_each_file(program: Path) -> None:
    (program / "layers.qv").write_text(LAYERS + "\nfn broken() -> Int:\n    return 1.5\n")
    (program / "eval.qv").write_text("from layers import Mlp\n\nfn main():\n    print(Mlp.init(seed=0))\n")
    r = subprocess.run([sys.executable, "-m", "quiver.qlint", "."], cwd=program, capture_output=True, text=True)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines == ["./layers.qv:23:12: E0301 return value: expected number Int, found number Float"]
    assert r.stderr.strip() == "qlint: 3 files checked: 1 error, 0 warnings"
    # a file given alone: its imports are checked, and reported at themselves
    r = subprocess.run([sys.executable, "-m", "quiver.qlint", "eval.qv"], cwd=program, capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout.startswith("layers.qv:")


def test_sub_models_optimizers_and_gradients_of_imported_models(tmp_path: Path) -> None:
    (tmp_path / "blocks.qv").write_text(
        "dim D = 4\n\nmodel Block:\n    param w: [D D] = xavier\n\n"
        "fn block(k: Block, x: [b D]) -> [b D]:\n    return relu(x @ k.w)\n"
    )
    (tmp_path / "net.qv").write_text(
        "import blocks\n\nmodel Net:\n    param layers: [2] blocks.Block\n    param out: [blocks.D] = ones\n\n"
        "fn loss(m: Net, x: [b blocks.D]) -> [] NonNeg:\n"
        "    h = blocks.block(m.layers[0], x)\n    h = blocks.block(m.layers[1], h)\n"
        "    return mean(abs(h @ m.out))\n\n"
        "fn train(mut m: Net, mut opt: Adam[Net], x: [b blocks.D]) -> [] NonNeg:\n"
        "    l, g = value_and_grad(loss, m, x)\n    opt.step(m, g)\n    return l\n\n"
        "fn main():\n    m = Net.init(seed=0)\n    opt = Adam(m, lr=0.01)\n    x = randn([8 blocks.D], seed=1)\n"
        "    first = train(m, opt, x)\n    for i in range(20):\n        train(m, opt, x)\n"
        "    print(first, loss(m, x))\n"
    )
    net = quiver.load(str(tmp_path / "net.qv"))
    m = net.Net.init(seed=0)
    assert list(m.state_dict()) == ["layers.0.w", "layers.1.w", "out"]
    x = torch.randn(8, 4)
    p = {k: v.detach().clone().requires_grad_() for k, v in m.state_dict().items()}
    opt = quiver.runtime.Adam(m, lr=0.01)
    ref = torch.optim.Adam(list(p.values()), lr=0.01)
    for _ in range(3):
        net.train(m, opt, x)
        ref.zero_grad()
        h = torch.relu(torch.relu(x @ p["layers.0.w"]) @ p["layers.1.w"])
        (h @ p["out"]).abs().mean().backward()
        ref.step()
    for k, v in m.state_dict().items():
        torch.testing.assert_close(v, p[k].detach())
    r = subprocess.run([sys.executable, "-m", "quiver", "run", "net.qv"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    first, last = map(float, r.stdout.split())
    assert last < first


ACCUMULATE = """\
import layers
from layers import Mlp, loss

fn accumulate(m: Mlp, xs: [2 b 4], ys: [2 b] Index[layers.C]) -> Grad[layers.Mlp]:
    acc = zeros(Grad[Mlp])
    for i in range(2):
        l, g = value_and_grad(loss, m, xs[i], ys[i])
        acc = acc + g
    return acc

fn step(mut m: layers.Mlp, mut opt: SGD[Mlp], xs: [2 b 4], ys: [2 b] Index[layers.C]):
    acc = zeros(Grad[layers.Mlp]) + accumulate(m, xs, ys)
    opt.step(m, 0.5 * acc)

fn main():
    m = Mlp.init(seed=0)
    opt = SGD(m, lr=0.1)
    xs = randn([2 8 4], seed=1)
    ys = argmax(randn([2 8 layers.C], seed=2), over=layers.C)
    step(m, opt, xs, ys)
    print(loss(m, xs[0], ys[0]))
"""


def test_gradient_accumulation_over_an_imported_model_matches_torch(program: Path) -> None:
    # issue 36: zeros(Grad[Mlp]) with `from layers import Mlp` was another type
    # than the gradient of layers.Mlp (E0904), zeros(Grad[layers.Mlp]) E0301
    (program / "accumulate.qv").write_text(ACCUMULATE)
    prog = quiver.load(str(program / "accumulate.qv"))
    m = prog.Mlp.init(seed=0)
    p = [
        m.w1.detach().clone().requires_grad_(),
        m.b1.detach().clone().requires_grad_(),
        m.w2.detach().clone().requires_grad_(),
    ]
    opt = quiver.runtime.SGD(m, lr=0.1)
    ref = torch.optim.SGD(p, lr=0.1)
    xs = torch.randn(2, 8, 4)
    ys = torch.randint(0, 3, (2, 8))
    prog.step(m, opt, xs, ys)
    ref.zero_grad()
    for i in range(2):  # torch's accumulation: .grad summed over two backward passes
        w1, b1, w2 = p
        torch.nn.functional.cross_entropy(torch.relu(xs[i] @ w1 + b1) @ w2, ys[i]).backward()
    for q in p:
        q.grad = 0.5 * q.grad  # type: ignore[operator]
    ref.step()
    for got, want in zip((m.w1, m.b1, m.w2), p, strict=True):
        torch.testing.assert_close(got, want.detach())
    r = subprocess.run(
        [sys.executable, "-m", "quiver", "run", "accumulate.qv"], cwd=program, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert 0.0 < float(r.stdout) < 5.0


def test_an_extern_fn_of_an_imported_module_resolves_next_to_that_module(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helpers.py").write_text("import torch\n\ndef double(x):\n    return 2 * x\n")
    (lib / "ops.qv").write_text('extern fn double(x: [3]) -> [3] from "helpers:double"\n')
    (tmp_path / "main.qv").write_text("import lib.ops\n\nfn main():\n    print(lib.ops.double(ones([3])))\n")
    r = subprocess.run([sys.executable, "-m", "quiver", "run", "main.qv"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[2.0000, 2.0000, 2.0000]"
