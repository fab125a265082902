"""bench/runtime.py --model gpt|cnn: the torch.nn twins compute what the examples compute.

run_twin checks the first steps' losses of the example against its twin
before it times anything; these tests run it briefly on the examples as they
are (the GPT of nn layers, the CNN), so a twin that no longer fits is
reported here.
"""

from __future__ import annotations

import importlib.util
import io
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def bench():
    # loaded under a name that cannot meet the runtime/ folder
    spec = importlib.util.spec_from_file_location("quiver_bench_twins", os.path.join(ROOT, "bench", "runtime.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("which", ["cnn", "gpt"])
def test_the_twin_benchmark_runs_on_the_example(bench, which):
    out = io.StringIO()
    result, ok = bench.run_twin(which, rounds=2, per_round=2, warmup=1, max_ratio=1e9, out=out)
    assert ok and result["ratio"] > 0
    assert f"examples/{which}.qv" in out.getvalue() and "losses agree" in out.getvalue()


def test_the_optimizer_is_read_from_the_example(bench):
    with open(os.path.join(ROOT, "examples", "gpt.qv"), encoding="utf-8") as fh:
        kind, hp = bench.example_optimizer(fh.read())
    assert kind == "AdamW" and set(hp) >= {"lr"}
    assert bench.example_optimizer("fn main():\n    l = train_step(m, x, y, 0.25)\n") == ("SGD", {"lr": 0.25})
    assert bench.example_optimizer("fn main():\n    opt = SGD(m, lr=0.1, momentum=0.9)\n") == (
        "SGD",
        {"lr": 0.1, "momentum": 0.9},
    )


def test_a_param_without_a_place_is_named(bench):
    import torch

    state = {"tok": torch.zeros(5, 4), "blocks.0.mixer": torch.zeros(4, 4), "head": torch.zeros(4, 5)}
    with pytest.raises(bench.TwinMismatch, match=r"no place for the params \['blocks.0.mixer'\]"):
        bench.gpt_mapping(state)
