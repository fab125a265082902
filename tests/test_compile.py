"""torch.compile on quiver.load-ed code, with run-time checks on, and
`quiver run --compile` (docs/torch-interop.md). Backend aot_eager (quick);
one test through inductor, which this machine's gcc builds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.cli import main as quiver_main

MLP = """\
dim D = 12
dim H = 16
dim C = 3

model Mlp:
    param w1: [D H] = normal(0.0, 0.3)
    param b1: [H] = zeros
    param w2: [H C] = normal(0.0, 0.3)
    param b2: [C] = zeros
    buffer steps: [] i64 = 0

fn forward(m: Mlp, x: [b D], p: Float, mode: Mode) -> [b C]:
    h = relu(x @ m.w1 + m.b1)
    h = dropout(h, p, mode)
    return h @ m.w2 + m.b2

fn loss(m: Mlp, x: [b D], y: [b] Index[C], p: Float, mode: Mode) -> [] NonNeg:
    return cross_entropy(forward(m, x, p, mode), y, over=C)

fn train_step(mut m: Mlp, x: [b D], y: [b] Index[C], lr: Float, p: Float, step: Int) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y, p, Train(seed=step))
    m.w1 = m.w1 - lr * g.w1
    m.b1 = m.b1 - lr * g.b1
    m.w2 = m.w2 - lr * g.w2
    m.b2 = m.b2 - lr * g.b2
    m.steps = m.steps + 1
    return l

fn masks(x: [b D], p: Float, seed: Int) -> ([b D], [b D]):
    mode = Train(seed=seed)
    return dropout(x, p, mode), dropout(x, p, mode)
"""

CNN = """\
import nn

dim K = 3

model Cnn:
    param conv: nn.Conv2d[1, 4, 3]
    param pool: nn.MaxPool2d[2]
    param fc: nn.Linear[36, K]

    fn forward(self, x: [b 1 8 8]) -> [b K]:
        h = self.pool(relu(self.conv(x)))
        return self.fc(reshape(h, [b 36]))

fn loss(m: Cnn, x: [b 1 8 8], y: [b] Index[K]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=K)

fn train_step(mut m: Cnn, mut opt: AdamW[Cnn], x: [b 1 8 8], y: [b] Index[K]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    opt.step(m, g)
    return l
"""


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compile")
    (folder / "mlp_compile.qv").write_text(MLP)
    (folder / "cnn_compile.qv").write_text(CNN)
    return quiver.load(str(folder / "mlp_compile.qv")), quiver.load(str(folder / "cnn_compile.qv"))


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _data(n=10, d=12, classes=3):
    gen = torch.Generator().manual_seed(3)
    return torch.randn(n, d, generator=gen), torch.randint(0, classes, (n,), generator=gen)


def test_compiled_modules_are_in_sys_modules(progs) -> None:
    mlp, _ = progs
    name = mlp.train_step.__module__
    assert name == "quiver_compiled.mlp_compile"
    assert sys.modules[name].Mlp is mlp.Mlp
    assert sys.modules[name].__dict__["train_step"].__globals__ is sys.modules[name].__dict__


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_an_mlp_train_step_compiles_whole_and_gives_eager_s_numbers(progs, backend: str) -> None:
    mlp, _ = progs
    x, y = _data()
    assert rt.checks.enabled
    eager_m, comp_m = mlp.Mlp.init(seed=0), mlp.Mlp.init(seed=0)
    step = torch.compile(mlp.train_step, fullgraph=True, backend=backend)
    eager = [mlp.train_step(eager_m, x, y, 0.3, 0.0, i).item() for i in range(4)]
    from torch._dynamo.utils import counters

    counters.clear()
    compiled = [step(comp_m, x, y, 0.3, 0.0, i).item() for i in range(4)]
    # compiled in the first two calls (a cache filled, then the step number symbolic), not again
    assert counters["stats"]["unique_graphs"] == 2
    assert compiled == pytest.approx(eager, rel=0, abs=1e-6)
    for name in ("w1", "b1", "w2", "b2"):
        torch.testing.assert_close(getattr(comp_m, name), getattr(eager_m, name), rtol=0, atol=1e-6)
    assert comp_m.steps.item() == 4
    assert eager[-1] < eager[0]


def test_a_cnn_step_with_adamw_compiles_whole_and_gives_eager_s_numbers(progs) -> None:
    _, cnn = progs
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(6, 1, 8, 8, generator=gen), torch.randint(0, 3, (6,), generator=gen)
    eager_m, comp_m = cnn.Cnn.init(seed=0), cnn.Cnn.init(seed=0)
    eager_opt, comp_opt = rt.AdamW(eager_m, lr=0.01), rt.AdamW(comp_m, lr=0.01)
    step = torch.compile(cnn.train_step, fullgraph=True, backend="aot_eager")
    eager = [cnn.train_step(eager_m, eager_opt, x, y).item() for _ in range(3)]
    compiled = [step(comp_m, comp_opt, x, y).item() for _ in range(3)]
    # traced, torch's Adam runs its capturable form (bias corrections as tensors): rounding differs
    assert compiled == pytest.approx(eager, rel=0, abs=1e-5)
    torch.testing.assert_close(comp_m.conv.weight, eager_m.conv.weight, rtol=0, atol=1e-5)
    torch.testing.assert_close(comp_m.fc.bias, eager_m.fc.bias, rtol=0, atol=1e-5)
    assert compiled[0] == eager[0]  # the first loss is before any update


LABEL_ERROR = (
    r"^mlp_compile\.qv:20: train_step\(\): argument 'y' expected \[b\] Index\[3\], "
    r"found values outside 0\.\.2 \(min 3, max 5\)$"
)


def test_value_checks_stay_on_in_the_graph(progs) -> None:
    mlp, _ = progs
    x, y = _data()
    m = mlp.Mlp.init(seed=0)
    graphs = []

    def recording(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    step = torch.compile(mlp.train_step, fullgraph=True, backend=recording)
    step(m, x, y, 0.1, 0.0, 0)
    assert any(n.target is torch._assert_async for g in graphs for n in g.graph.nodes)
    before = m.w1.clone()
    # the check in the graph fails; the call runs again eagerly, whose check
    # gives the values and the .qv line (as the eager call does)
    with pytest.raises(rt.ValueCheckError, match=LABEL_ERROR):
        step(m, x, y + 3, 0.1, 0.0, 1)
    with pytest.raises(rt.ValueCheckError, match=LABEL_ERROR):
        mlp.train_step(m, x, y + 3, 0.1, 0.0, 1)
    assert torch.equal(m.w1, before)


def test_dropout_under_compile_is_one_graph_and_reproducible(progs) -> None:
    mlp, _ = progs
    x = torch.ones(64, 12)
    masks = torch.compile(mlp.masks, fullgraph=True, backend="aot_eager")
    a1, a2 = masks(x, 0.25, 7)
    b1, b2 = masks(x, 0.25, 7)
    c1, _ = masks(x, 0.25, 8)
    assert torch.equal(a1, b1) and torch.equal(a2, b2)  # the seed decides
    assert not torch.equal(a1, a2) and not torch.equal(a1, c1)  # each draw and seed its own mask
    values = torch.cat([a1, a2, c1]).unique().tolist()
    assert values == [0.0, pytest.approx(1 / 0.75, rel=1e-6)]
    kept = (torch.cat([a1, a2, c1]) != 0).float().mean().item()
    assert abs(kept - 0.75) < 0.03  # 2304 draws: 5 standard deviations is 0.045
    # and a train step with dropout on compiles whole
    step = torch.compile(mlp.train_step, fullgraph=True, backend="aot_eager")
    xs, ys = _data()
    m = mlp.Mlp.init(seed=0)
    losses = [step(m, xs, ys, 0.3, 0.5, i).item() for i in range(3)]
    assert losses[-1] < losses[0]


WRT = """\
model Lin:
    param w: [4 2] = normal(0.0, 0.3)
    param b: [2] = normal(0.0, 0.3)

fn loss(m: Lin, x: [b 4]) -> []:
    y = x @ m.w + m.b
    return mean(y * y)

fn loss_aux(m: Lin, x: [b 4]) -> ([], [b 2]):
    y = x @ m.w + m.b
    return mean(y * y), y

fn step_wrt(mut m: Lin, x: [b 4]) -> []:
    l, g = value_and_grad(loss, m, x, wrt=[w])
    m.w = m.w - 0.1 * g.w
    return l

fn step_aux(mut m: Lin, x: [b 4]) -> ([], [b 2]):
    (l, y), g = value_and_grad(loss_aux, m, x)
    m -= 0.1 * g
    return l, y

fn example_loss(m: Lin, x: [4]) -> []:
    y = x @ m.w + m.b
    return mean(y * y)

fn per_example(m: Lin, x: [n 4]) -> [n] Grad[Lin]:
    l, g = value_and_grad(example_loss, m, x, batch=n)
    return g
"""


@pytest.mark.parametrize("fn", ["step_wrt", "step_aux"])
def test_value_and_grad_with_wrt_and_aux_compiles_whole(tmp_path: Path, fn: str) -> None:
    path = tmp_path / "wrt_compile.qv"
    path.write_text(WRT)
    prog = quiver.load(str(path))
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    eager_m, comp_m = prog.Lin.init(seed=0), prog.Lin.init(seed=0)
    step = getattr(prog, fn)
    compiled_step = torch.compile(step, fullgraph=True, backend="aot_eager")
    eager = [step(eager_m, x) for _ in range(3)]
    compiled = [compiled_step(comp_m, x) for _ in range(3)]
    torch.testing.assert_close(compiled, eager, rtol=0, atol=1e-6)
    torch.testing.assert_close(comp_m.w, eager_m.w, rtol=0, atol=1e-6)
    torch.testing.assert_close(comp_m.b, eager_m.b, rtol=0, atol=1e-6)
    if fn == "step_wrt":
        assert torch.equal(comp_m.b, prog.Lin.init(seed=0).b)  # not selected: not updated


def test_per_example_gradients_compile_whole(tmp_path: Path) -> None:
    path = tmp_path / "per_example_compile.qv"
    path.write_text(WRT)
    prog = quiver.load(str(path))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(2))
    m = prog.Lin.init(seed=0)
    g = torch.compile(prog.per_example, fullgraph=True, backend="aot_eager")(m, x)
    eager = prog.per_example(m, x)
    assert g.w.shape == (5, 4, 2)
    torch.testing.assert_close(g.w, eager.w, rtol=0, atol=1e-6)
    torch.testing.assert_close(g.b, eager.b, rtol=0, atol=1e-6)


RUN = """\
dim D = 6
dim C = 3

model Lin:
    param w: [D C] = normal(0.0, 0.3)
    param b: [C] = zeros

fn loss(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w + m.b, y, over=C)

fn train_step(mut m: Lin, x: [b D], y: [b] Index[C], lr: Float) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    m.w = m.w - lr * g.w
    m.b = m.b - lr * g.b
    return l

fn main(steps: Int = 3):
    m = Lin.init(seed=0)
    x = randn([8 D], seed=1)
    y = randint([8] Index[C], seed=2)
    for i in range(steps):
        l = train_step(m, x, y, 0.5)
        print("step", i, "loss", l)
"""


def test_quiver_run_compile(tmp_path: Path, capsys) -> None:
    path = tmp_path / "run_compile.qv"
    path.write_text(RUN)
    assert quiver_main(["run", str(path), "--no-warnings", "--steps", "4"]) == 0
    eager = capsys.readouterr().out
    from torch._dynamo.utils import counters

    counters.clear()
    code = quiver_main(
        ["run", str(path), "--no-warnings", "--compile", "--compile-backend", "aot_eager", "--steps", "4"]
    )
    assert code == 0
    assert capsys.readouterr().out == eager
    assert counters["stats"]["unique_graphs"] >= 1  # train_step went through dynamo
    assert eager.count("\n") == 4


def test_quiver_run_compile_names_the_fn_it_cannot_compile(tmp_path: Path, capsys) -> None:
    path = tmp_path / "run_bad.qv"
    path.write_text(RUN.replace("    return l\n", '    print("inside", l)\n    return l\n'))
    code = quiver_main(
        ["run", str(path), "--no-warnings", "--no-progress", "--compile", "--compile-backend", "aot_eager"]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"{path}:11:1: error: --compile: torch.compile(fullgraph=True, backend='aot_eager') cannot compile fn train_step: "
    )
    assert "(run without --compile)" in err.splitlines()[0]


NEGATIVE = """\
dim D = 4

model Lin:
    param w: [D] = ones

fn loss(m: Lin, x: [D]) -> [] NonNeg:
    return sum(log(x * m.w)) as NonNeg

fn step(mut m: Lin, x: [D]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x)
    m.w = m.w - 0.5 * g.w
    return l

fn main():
    m = Lin.init(seed=0)
    x = ones([D])
    for i in range(3):
        print(step(m, x))
"""


def test_a_value_check_that_fails_in_the_graph_is_reported_as_eager_reports_it(tmp_path: Path, capsys) -> None:
    """The in-graph check has neither the values nor the .qv line: the step
    runs again eagerly, whose check gives both (the second step's loss is
    4 log 0.5 < 0)."""
    path = tmp_path / "negative.qv"
    path.write_text(NEGATIVE)
    # --no-progress: compiling can take long enough on a loaded machine for the
    # progress line to appear in one run and not the other
    assert quiver_main(["run", str(path), "--no-warnings", "--no-progress"]) == 1
    eager = capsys.readouterr()
    assert eager.err.startswith(
        f"{path}:7:5: error: cannot cast [] f32 to NonNeg: found values below 0 or NaN (min -2.7"
    ), eager.err
    code = quiver_main(
        ["run", str(path), "--no-warnings", "--no-progress", "--compile", "--compile-backend", "aot_eager"]
    )
    assert code == 1
    compiled = capsys.readouterr()
    assert (compiled.out, compiled.err) == (eager.out, eager.err)
    assert eager.out == "0.0000\n"


def test_an_in_graph_check_that_eager_passes_names_the_compiled_fn(monkeypatch) -> None:
    from quiver.runtime import _torch_compile
    from quiver.runtime._source import Loc

    def fails_in_graph(*args):
        raise RuntimeError("Quiver value check failed: NonNeg expected, found values below 0 or NaN")

    monkeypatch.setattr(_torch_compile.torch, "compile", lambda fn, **kw: fails_in_graph)
    eager_calls = []
    call = _torch_compile._compiled(lambda *a: eager_calls.append(a), "step", Loc("/p/prog.qv", 9, 1), "inductor")
    with pytest.raises(rt.ValueCheckError) as e:
        call(1, 2)
    assert eager_calls == [(1, 2)]
    assert str(e.value) == (
        "prog.qv:9: Quiver value check failed: NonNeg expected, found values below 0 or NaN "
        "(in fn step, compiled by --compile; the eager run did not fail here)"
    )


def test_workers_of_nproc_compile_too(tmp_path: Path) -> None:
    from quiver.cli import build_parser
    from quiver.launch import worker_args

    args = build_parser().parse_args(["run", "f.qv", "--compile", "--compile-backend", "aot_eager"])
    assert worker_args(args, None)[-3:] == ["--compile", "--compile-backend", "aot_eager"]


def test_only_the_fns_that_take_a_gradient_are_compiled(tmp_path: Path) -> None:
    path = tmp_path / "run_names.qv"
    path.write_text(RUN)
    module = sys.modules[quiver.load(str(path)).__name__]
    before = module.__dict__["_qv_u_loss"], module.__dict__["_qv_u_train_step"]
    names, undo = rt.compile_train_steps(module, "aot_eager")
    assert names == ["train_step"]
    assert module.__dict__["_qv_u_loss"] is before[0] and module.__dict__["_qv_u_train_step"] is not before[1]
    undo()
    assert module.__dict__["_qv_u_train_step"] is before[1]


BATCH_NORM = """\
import nn

dim K = 3

model Net:
    param conv: nn.Conv2d[1, 4, 3]
    param bn2: nn.BatchNorm2d[4]
    param fc: nn.Linear[144, K]
    param bn1: nn.BatchNorm1d[K]

    fn forward(self, x: [b 1 8 8], mode: Mode) -> [b K]:
        h = relu(self.bn2(self.conv(x), mode))
        return self.bn1(self.fc(reshape(h, [b 144])), mode)

fn loss(m: Net, x: [b 1 8 8], y: [b] Index[K], mode: Mode) -> [] NonNeg:
    return cross_entropy(m(x, mode), y, over=K)

# the model runs once outside the gradient too (as DCGAN's generator does)
fn train_step(mut m: Net, x: [b 1 8 8], y: [b] Index[K], step: Int) -> ([] NonNeg, [b K]):
    before = m(x, Train(seed=step))
    l, g = value_and_grad(loss, m, x, y, Train(seed=step))
    m.conv.weight = m.conv.weight - 0.1 * g.conv.weight
    m.conv.bias = m.conv.bias - 0.1 * g.conv.bias
    m.bn2.weight = m.bn2.weight - 0.1 * g.bn2.weight
    m.bn2.bias = m.bn2.bias - 0.1 * g.bn2.bias
    m.fc.weight = m.fc.weight - 0.1 * g.fc.weight
    m.fc.bias = m.fc.bias - 0.1 * g.fc.bias
    m.bn1.weight = m.bn1.weight - 0.1 * g.bn1.weight
    m.bn1.bias = m.bn1.bias - 0.1 * g.bn1.bias
    return l, before
"""


@pytest.fixture(scope="module")
def batch_norm(tmp_path_factory):
    path = tmp_path_factory.mktemp("compile_bn") / "bn_compile.qv"
    path.write_text(BATCH_NORM)
    gen = torch.Generator().manual_seed(5)
    return quiver.load(str(path)), torch.randn(6, 1, 8, 8, generator=gen), torch.randint(0, 3, (6,), generator=gen)


STATS = ("bn2.running_mean", "bn2.running_var", "bn1.running_mean", "bn1.running_var")


def test_a_train_step_with_batch_norm_compiles_and_keeps_eager_s_statistics(batch_norm) -> None:
    """num_batches_tracked is counted inside value_and_grad, which torch.func's
    grad refuses under dynamo (an in-place op on a captured tensor): it is
    counted when the traced gradient returns."""
    prog, x, y = batch_norm
    eager_m, comp_m = prog.Net.init(seed=0), prog.Net.init(seed=0)
    step = torch.compile(prog.train_step, fullgraph=True, backend="aot_eager")
    eager, compiled = [], []
    for i in range(4):
        eager.append(prog.train_step(eager_m, x, y, i)[0].item())
        compiled.append(step(comp_m, x, y, i)[0].item())
        if i == 0:  # from the same params, the same statistics
            for name in STATS:
                assert torch.equal(comp_m.state_dict()[name], eager_m.state_dict()[name]), name
    assert compiled == pytest.approx(eager, rel=0, abs=1e-6)
    want, got = eager_m.state_dict(), comp_m.state_dict()
    for name in ("bn1.num_batches_tracked", "bn2.num_batches_tracked"):
        assert want[name].item() == got[name].item() == 8  # two forward passes a step
    for name, t in want.items():
        torch.testing.assert_close(got[name], t, rtol=0, atol=1e-6)
    assert eager[-1] < eager[0]


def test_dcgan_s_train_step_compiles(tmp_path: Path) -> None:
    """examples/dcgan.qv: batch norm in both models, two Adam optimizers."""
    prog = quiver.load(str(Path(__file__).resolve().parent.parent / "examples" / "dcgan.qv"))

    def models():
        g, d = prog.Generator.init(seed=0), prog.Discriminator.init(seed=1)
        prog.weights_init(g, 10)
        prog.weights_init(d, 20)
        return g, d, rt.Adam(g, lr=0.001, betas=(0.5, 0.999)), rt.Adam(d, lr=0.001, betas=(0.5, 0.999))

    eager_models, comp_models = models(), models()
    step = torch.compile(prog.train_step, fullgraph=True, backend="aot_eager")
    for i in range(2):
        real, z = prog.real_images(i), torch.randn(16, 8, 1, 1, generator=torch.Generator().manual_seed(i))
        eager = prog.train_step(*eager_models, real, z, rt.Train(seed=i))
        compiled = step(*comp_models, real, z, rt.Train(seed=i))
        # Adam's capturable form rounds otherwise (as for the CNN above)
        torch.testing.assert_close(compiled, eager, rtol=0, atol=1e-5)
    for e, c in zip(eager_models[:2], comp_models[:2]):
        for name, t in e.state_dict().items():
            torch.testing.assert_close(c.state_dict()[name], t, rtol=0, atol=1e-5)
            if name.endswith("num_batches_tracked"):
                assert c.state_dict()[name].item() == t.item() > 0


@pytest.fixture
def no_recompiles():
    torch._dynamo.config.error_on_recompile = True
    yield
    torch._dynamo.config.error_on_recompile = False


def _train_module(module, run, x, y, steps: int) -> list[float]:
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = run(x, y)  # module.train(): Train(seed=0), Train(seed=1), ...
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_a_compiled_to_module_trains_with_one_graph(batch_norm, no_recompiles) -> None:
    """The count of train-mode calls (the next Train's seed) is not an int
    attribute of the module, which dynamo would guard on: 12 steps, one graph,
    eager's numbers (batch norm: no randomness)."""
    prog, x, y = batch_norm
    eager_m, comp_m = prog.Net.init(seed=0), prog.Net.init(seed=0)
    eager_module = quiver.to_module(eager_m, forward=prog.loss)
    module = quiver.to_module(comp_m, forward=prog.loss)
    from torch._dynamo.utils import counters

    counters.clear()
    compiled = _train_module(module, torch.compile(module, backend="aot_eager"), x, y, 12)
    assert counters["stats"]["unique_graphs"] == 1
    eager = _train_module(eager_module, eager_module, x, y, 12)
    assert compiled == pytest.approx(eager, rel=0, abs=1e-6)
    want, got = eager_m.state_dict(), comp_m.state_dict()
    for name, t in want.items():
        torch.testing.assert_close(got[name], t, rtol=0, atol=1e-6)
    assert got["bn1.num_batches_tracked"].item() == 12
    assert module._qv_calls == eager_module._qv_calls == 12


def test_a_compiled_to_module_draws_each_step_s_dropout(progs) -> None:
    """With dropout, the n-th call draws the masks of Train(seed=n), as a
    compiled Quiver fn given that mode draws them."""
    from torch._dynamo.testing import CompileCounterWithBackend

    mlp, _ = progs
    x, y = _data()
    m = mlp.Mlp.init(seed=0)
    module = quiver.to_module(m, forward=mlp.loss)
    counter = CompileCounterWithBackend("aot_eager")
    run = torch.compile(module, fullgraph=True, backend=counter)
    loss_of = torch.compile(mlp.loss, fullgraph=True, backend="aot_eager")
    opt = torch.optim.SGD(module.parameters(), lr=0.3)
    for i in range(5):
        with torch.no_grad():
            want = loss_of(m, x, y, 0.5, rt.Train(seed=i)).item()
        opt.zero_grad()
        loss = run(x, y, 0.5)
        assert loss.item() == want, i
        loss.backward()
        opt.step()
    assert module._qv_calls == 5
    assert counter.frame_count == 1


# what inductor's C++ kernels raise for an index out of bounds, which can come
# before Quiver's own check in the graph
KERNEL_ERROR = "kernel, /tmp/torchinductor_u/ab/cabc.main.cpp:143, index out of bounds: 0 <= tmp8 < 3L"


def _like_inductor(gm, example_inputs):
    def run(*args):
        raise RuntimeError(KERNEL_ERROR)

    return run


LOSS_ERROR = (
    r"^mlp_compile\.qv:17: loss\(\): argument 'y' expected \[b\] Index\[3\], "
    r"found values outside 0\.\.2 \(min 3, max 5\)$"
)


def test_a_kernel_s_bounds_check_in_a_compiled_fn_is_reported_as_eager_reports_it(progs) -> None:
    mlp, _ = progs
    x, y = _data()
    m = mlp.Mlp.init(seed=0)
    loss = torch.compile(mlp.loss, fullgraph=True, backend=_like_inductor)
    with pytest.raises(rt.ValueCheckError, match=LOSS_ERROR):
        loss(m, x, y + 3, 0.0, rt.Eval)
    # the eager run passes: not a check of the program, the kernel's own error
    with pytest.raises(RuntimeError, match=r"^kernel, .*index out of bounds"):
        loss(m, x, y, 0.0, rt.Eval)
    module = quiver.to_module(m, forward=mlp.loss)
    run = torch.compile(module, fullgraph=True, backend=_like_inductor)
    with pytest.raises(rt.ValueCheckError, match=LOSS_ERROR):
        run(x, y + 3, 0.0)
    assert module._qv_calls == 1  # the call ran again eagerly as the same call (Train(seed=0))


def test_a_kernel_s_bounds_check_under_quiver_run_compile_is_reported_as_eager_reports_it(monkeypatch) -> None:
    from quiver.runtime import _torch_compile
    from quiver.runtime._source import Loc

    def fails_in_graph(*args):
        raise RuntimeError(KERNEL_ERROR)

    def eager(*args):
        raise rt.ValueCheckError("argument 'y' expected [b] Index[3], found values outside 0..2 (min 3, max 5)")

    monkeypatch.setattr(_torch_compile.torch, "compile", lambda fn, **kw: fails_in_graph)
    call = _torch_compile._compiled(eager, "step", Loc("/p/prog.qv", 9, 1), "inductor")
    with pytest.raises(rt.ValueCheckError, match=r"^argument 'y' expected \[b\] Index\[3\]"):
        call(1, 2)


def test_under_inductor_a_bad_label_is_reported_as_eager_reports_it(progs) -> None:
    """Inductor's kernel checks the label it gathers with before Quiver's
    check: its message names a temporary .cpp file, not the label."""
    mlp, _ = progs
    x, y = _data()
    module = quiver.to_module(mlp.Mlp.init(seed=0), forward=mlp.loss).eval()
    run = torch.compile(module, backend="inductor")
    with torch.no_grad():
        assert run(x, y, 0.0).item() == pytest.approx(module(x, y, 0.0).item(), rel=0, abs=1e-6)
        with pytest.raises(rt.ValueCheckError, match=LOSS_ERROR):
            run(x, y + 3, 0.0)
