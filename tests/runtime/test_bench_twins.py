"""bench/runtime.py --model gpt|cnn: the torch.nn twins compute what the examples compute.

run_twin checks the first steps' losses of the example against its twin
before it times anything; these tests run it briefly, on the examples as they
are and on a GPT written with nn layers (the layout examples/gpt_model.qv is
moving to), so a twin that no longer fits is reported here.
"""

from __future__ import annotations

import importlib.util
import io
import os
import shutil

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


NN_GPT_MODEL = """import nn

dim V = 23
dim T = 16
dim E = 32
dim NH = 4
dim HD = E / NH
dim F = 4 * E
dim L = 2

model Block:
    param ln_a: nn.LayerNorm[E]
    param wq: nn.Linear[E, E, bias=False]
    param wk: nn.Linear[E, E, bias=False]
    param wv: nn.Linear[E, E, bias=False]
    param wo: nn.Linear[E, E, bias=False]
    param ln_m: nn.LayerNorm[E]
    param fc: nn.Linear[E, F]
    param proj: nn.Linear[F, E]

model Gpt:
    param tok: nn.Embedding[V, E]
    param pos: nn.Embedding[T, E]
    param blocks: [L] Block
    param ln_f: nn.LayerNorm[E]
    param head: nn.Linear[E, V]

fn split_heads(x: [b T E]) -> [b NH T HD]:
    return permute(reshape(x, [b T NH HD]), [b NH T HD])

fn merge_heads(x: [b NH T HD]) -> [b T E]:
    return reshape(permute(x, [b T NH HD]), [b T E])

fn causal() -> [T T] Bool:
    return tril(ones([T T] Bool))

fn attention(k: Block, x: [b T E]) -> [b T E]:
    q = split_heads(k.wq(x))
    key = split_heads(k.wk(x))
    v = split_heads(k.wv(x))
    scores = q @ transpose(key) * (1.0 / sqrt(HD))
    scores = where(causal(), scores, -1e9)
    return k.wo(merge_heads(softmax(scores, over=-1) @ v))

fn block(k: Block, x: [b T E]) -> [b T E]:
    x = x + attention(k, k.ln_a(x))
    return x + k.proj(gelu(k.fc(k.ln_m(x))))

fn logits(m: Gpt, tokens: [b T] Index[V]) -> [b T V]:
    x = m.tok(tokens) + m.pos(arange(T))
    for i in range(L):
        x = block(m.blocks[i], x)
    return m.head(m.ln_f(x))

fn loss(m: Gpt, tokens: [b T] Index[V], next: [b T] Index[V]) -> [] NonNeg:
    return cross_entropy(logits(m, tokens), next, over=V)
"""


def test_a_gpt_with_nn_layers_maps_onto_the_twin(bench, tmp_path):
    shutil.copy(os.path.join(ROOT, "examples", "gpt.qv"), tmp_path / "gpt.qv")
    (tmp_path / "gpt_model.qv").write_text(NN_GPT_MODEL, encoding="utf-8")
    quiver_step, torch_step, desc = bench.twin_steps("gpt", path=str(tmp_path / "gpt.qv"))
    assert "AdamW" in desc
    assert abs(float(quiver_step(3)) - float(torch_step(3))) < 1e-4


def test_a_param_without_a_place_is_named(bench):
    import torch

    state = {"tok": torch.zeros(5, 4), "blocks.0.mixer": torch.zeros(4, 4), "head": torch.zeros(4, 5)}
    with pytest.raises(bench.TwinMismatch, match=r"no place for the params \['blocks.0.mixer'\]"):
        bench.gpt_mapping(state)
