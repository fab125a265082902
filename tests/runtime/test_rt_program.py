"""The hand-written compiled mlp.qv end to end, the layering rule, the benchmark."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

from quiver import runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_main_trains_and_prints(mlp, capsys):
    mlp.main()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines] == [["step", str(i), "loss"] for i in range(0, 100, 10)]
    losses = [float(line.split()[3]) for line in lines]
    assert losses[0] > 2.0 and losses[-1] < 0.1
    assert all(len(line.split()[3].split(".")[1]) == 4 for line in lines)


def test_one_train_step_equals_the_same_step_in_plain_torch(mlp):
    m = mlp.Mlp.init(seed=0)
    x = rt.randn((16, 784), seed=1)
    y = rt.randint((16,), 10, seed=2)
    ps = [getattr(m, n).detach().clone().requires_grad_(True) for n in ("w1", "b1", "w2", "b2")]
    tensors = [m.w1, m.b1, m.w2, m.b2]
    loss = mlp.train_step(m, x, y, 0.1, 3)
    # the same step by hand, with the dropout mask of Train(seed=3)
    h = torch.relu(x @ ps[0] + ps[1])
    keep = torch.empty_like(h).bernoulli_(0.9, generator=torch.Generator().manual_seed(3)).div_(0.9)
    ref = F.cross_entropy((h * keep) @ ps[2] + ps[3], y)
    grads = torch.autograd.grad(ref, ps)
    assert torch.allclose(loss, ref.detach())
    for name, p, g, t in zip(("w1", "b1", "w2", "b2"), ps, grads, tensors):
        assert getattr(m, name) is t  # updated in place
        assert torch.allclose(t, p.detach() - 0.1 * g, atol=1e-7), name
    assert int(m.steps) == 1 and m.steps.dtype == torch.int64


def test_in_a_fresh_process():
    # one interpreter start for two facts: importing the runtime pulls in
    # neither the checker nor pygls, and QUIVER_CHECKS=0 is read at import
    code = (
        "import sys; from quiver import runtime as rt; "
        "bad = [n for n in sys.modules if n.startswith(('quiver.checker', 'pygls', 'lsprotocol'))]; "
        "print(bad, rt.checks.enabled)"
    )
    env = dict(os.environ, QUIVER_CHECKS="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[] False"


def test_runtime_sources_do_not_mention_the_checker():
    runtime_dir = os.path.join(ROOT, "runtime")
    for name in os.listdir(runtime_dir):
        if name.endswith(".py"):
            with open(os.path.join(runtime_dir, name), encoding="utf-8") as fh:
                text = fh.read()
            assert "quiver.checker" not in text and "pygls" not in text, name


def test_the_benchmark_runs(capsys):
    # bench/runtime.py, loaded under a name that cannot meet the runtime/ folder
    spec = importlib.util.spec_from_file_location("quiver_bench_runtime", os.path.join(ROOT, "bench", "runtime.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.run(reps=2, warmup=1, block=2, with_overhead=False, out=sys.stdout)
    out = capsys.readouterr().out
    assert "quiver (checks on)" in out and "torch (autograd.grad)" in out
    assert set(result["median_ms"]) == {
        "quiver (checks on)",
        "quiver (checks off)",
        "quiver plain-update (off)",
        "torch (module+optim)",
        "torch (autograd.grad)",
        "torch (autograd.grad) again",
    }
    assert result["ratio_checks_on"] > 0 and result["ratio_checks_off"] > 0
    assert rt.checks.enabled


def test_the_gpt_benchmark_compares_equal_computations():
    # every variant of bench/runtime.py --gpt trains the same model the same
    # way (AdamW): their losses agree, so the timings compare like with like
    spec = importlib.util.spec_from_file_location("quiver_bench_runtime2", os.path.join(ROOT, "bench", "runtime.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    steps = bench.make_gpt_steps(bench.compiled_gpt())
    for i in range(3):
        losses = {name: float(step(i)) for name, step in steps.items()}
        ref = losses["torch (autograd.grad)"]
        assert all(abs(v - ref) < 1e-4 for v in losses.values()), (i, losses)
