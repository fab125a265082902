"""Benchmark: one MLP train step in compiled Quiver style vs. plain PyTorch.

    .venv/bin/python bench/runtime.py [--reps N] [--warmup N] [--threads N] [--json PATH]

The step is the one of examples/mlp.qv at batch 256 and 784-512-10: forward
with relu and dropout (p = 0.1, Train(seed=step)), cross-entropy, gradient of
the params, an SGD update of every param and a step counter buffer.

Variants, run interleaved in one process (the order rotates every
repetition, so no variant always runs first or last):

- ``quiver (checks on)`` / ``quiver (checks off)``: ``train_step`` of
  examples/mlp.qv (with ``dim H = 512``) compiled by the real compiler.  Pass
  another module object to :func:`run` (or a compiled ``.py`` file with
  ``--module``) to measure something else: it must define ``Mlp`` and
  ``train_step(m, x, y, lr, step)``.
- ``quiver plain-update (off)``: the same program compiled with
  ``fuse_updates=False``: field updates by plain assignment instead of the
  fused ``rt.field_add``.
- ``torch (module+optim)``: idiomatic PyTorch: an ``nn.Module`` with
  ``nn.Parameter`` fields, ``F.dropout``, ``loss.backward()`` and
  ``torch.optim.SGD``.
- ``torch (autograd.grad)``: the same computation as the Quiver step written
  by hand against torch: ``torch.autograd.grad`` and in-place ``sub_`` under
  ``no_grad``, params that always require grad, dropout from a global RNG.

The figure of merit is the ratio of the Quiver median to the faster torch
median.  Targets: <= 1.05 with checks on, <= 1.01 with checks off.

    .venv/bin/python bench/runtime.py --gpt [--reps N] [--warmup N] [--threads N] [--json PATH]

measures instead one train step of examples/gpt.qv as shipped (a 2-block
character-level GPT: V=64, T=32, E=64, 4 heads, batch 32 windows of the
example's text, examples/data/tiny.txt, AdamW at lr 0.003), compiled by the real compiler, against the
same step written by hand in torch (``F.embedding``, ``F.layer_norm``,
``F.scaled_dot_product_attention`` with the causal mask, ``F.gelu``,
``F.cross_entropy``), both with
``torch.autograd.grad`` and with ``nn.Parameter``s and ``backward()``, each
stepping ``torch.optim.AdamW(foreach=True)``.  Both compute the layer norms as nn.LayerNorm
does, ``layer_norm(x) * weight + bias``; a third variant fuses weight and bias
into ``F.layer_norm`` (what idiomatic torch writes, and Quiver's weightless
``layer_norm`` cannot), and its ratio is printed as well.  Target: <= 1.10.

    .venv/bin/python bench/runtime.py --optim [--reps N] [--warmup N] [--threads N] [--json PATH]

measures instead the optimizers alone: ``opt.step(m, g)`` of ``rt.Adam`` and
of ``rt.SGD`` with momentum 0.9 on a model of the MLP's params (784-512-10),
against ``torch.optim.Adam`` / ``torch.optim.SGD`` with ``foreach=True`` and
the same gradient in ``.grad`` (no backward: the step alone), interleaved as
above; then the same on the tiny model (8-8-10), where the Python around the
step is all that is left.  Target: <= 1.05.

    .venv/bin/python bench/runtime.py --model gpt|cnn [--rounds N] [--threads 1] [--clock cpu] [--max-ratio 1.05]

measures instead one train step of examples/gpt.qv or examples/cnn.qv, loaded
by path, against the same network as a torch.nn.Module trained by torch.optim
with the example's optimizer and settings, sized from and started at the
example's params, the losses of the first steps checked equal before any
timing: see bench/README.md.  Target: <= 1.05.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from quiver import runtime as rt

D, H, C, BATCH, LR = 784, 512, 10, 256, 0.1


def compiled_module(d=D, h=H, fuse_updates=True):
    """examples/mlp.qv with D and H set for the benchmark, through the real
    checker and compiler (the default subject of the benchmark); with
    `fuse_updates=False` its field updates are plain assignments."""
    from quiver.checker import check_text
    from quiver.checker.compiler import compile_program

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "examples", "mlp.qv"), encoding="utf-8") as fh:
        src = fh.read()
    src = src.replace("dim D = 784", f"dim D = {d}").replace("dim H = 128", f"dim H = {h}")
    qv_path = os.path.join(root, "bench", f"mlp_{d}_{h}.qv")
    analysis = check_text(src)
    assert not analysis.diagnostics, analysis.diagnostics
    return rt.load_compiled(compile_program(analysis, qv_path, fuse_updates).source, qv_path)


class TorchMlp(nn.Module):
    def __init__(self, d, h, c, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.w1 = nn.Parameter(torch.randn(d, h, generator=g) * 0.02)
        self.b1 = nn.Parameter(torch.zeros(h))
        self.w2 = nn.Parameter(torch.randn(h, c, generator=g) * 0.02)
        self.b2 = nn.Parameter(torch.zeros(c))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        h = F.relu(x @ self.w1 + self.b1)
        h = F.dropout(h, 0.1, self.training)
        return h @ self.w2 + self.b2


def _data(n_batches, d, c, batch=None):
    batch = BATCH if batch is None else batch
    g = torch.Generator().manual_seed(1234)
    return [(torch.randn(batch, d, generator=g), torch.randint(0, c, (batch,), generator=g)) for _ in range(n_batches)]


def _quiver_step(module, checks_on, data):
    m = module.Mlp.init(seed=0)
    train_step = module.train_step

    def step(i):
        x, y = data[i % len(data)]
        before = rt.checks.enabled
        rt.checks.enabled = checks_on
        try:
            return train_step(m, x, y, LR, i)
        finally:
            rt.checks.enabled = before

    return step


def make_steps(module, plain_module=None, batch=None):
    """{variant name: step(i)} for every variant, sharing the same data."""
    model_cls = module.Mlp
    dims = {f.name: f.shape for f in model_cls._qv_params}
    d, h = dims["w1"]
    c = dims["w2"][1]
    data = _data(8, d, c, batch)

    variants = {
        "quiver (checks on)": _quiver_step(module, True, data),
        "quiver (checks off)": _quiver_step(module, False, data),
    }
    if plain_module is not None:
        variants["quiver plain-update (off)"] = _quiver_step(plain_module, False, data)

    tm = TorchMlp(d, h, c)
    tm.train()
    opt = torch.optim.SGD(tm.parameters(), lr=LR)

    def torch_module(i):
        x, y = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(tm(x), y)
        loss.backward()
        opt.step()
        tm.steps += 1
        return loss.detach()

    g = torch.Generator().manual_seed(0)
    params = [
        (torch.randn(d, h, generator=g) * 0.02).requires_grad_(),
        torch.zeros(h, requires_grad=True),
        (torch.randn(h, c, generator=g) * 0.02).requires_grad_(),
        torch.zeros(c, requires_grad=True),
    ]
    steps = torch.zeros((), dtype=torch.int64)

    def torch_grad(i):
        x, y = data[i % len(data)]
        w1, b1, w2, b2 = params
        hid = F.dropout(F.relu(x @ w1 + b1), 0.1, True)
        loss = F.cross_entropy(hid @ w2 + b2, y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, gr in zip(params, grads):
                p.sub_(gr, alpha=LR)
            steps.add_(1)
        return loss.detach()

    variants["torch (module+optim)"] = torch_module
    variants["torch (autograd.grad)"] = torch_grad
    return variants


def measure(steps, reps, warmup, block=4, clock=time.perf_counter):
    """Interleaved timing; returns {name: [[seconds per step] per round]}.

    Each round runs every variant for ``block`` consecutive steps, in an
    order that rotates from round to round.  The first step of each block is
    run but not recorded, so no variant pays for the caches and allocator
    state that the variant before it left behind.
    """
    names = list(steps)
    for i in range(warmup):
        for name in names:
            steps[name](i)
    rounds = {name: [] for name in names}
    per_block = max(block - 1, 1)
    n_rounds = -(-reps // per_block)
    i = warmup
    for r in range(n_rounds):
        k = r % len(names)
        order = names[k:] + names[:k]
        for name in order:
            fn = steps[name]
            if block > 1:
                fn(i)
                i += 1
            ts = []
            for _ in range(per_block):
                t0 = clock()
                fn(i)
                ts.append(clock() - t0)
                i += 1
            rounds[name].append(ts)
    return rounds


def paired_ratio(rounds, a, b):
    """Median over rounds of (median step of a) / (median step of b) in that
    round: variants timed close together are compared, so slow drifts of the
    machine's load cancel."""
    return statistics.median(statistics.median(x) / statistics.median(y) for x, y in zip(rounds[a], rounds[b]))


TORCH_BASELINES = ("torch (module+optim)", "torch (autograd.grad)")
CONTROL = "torch (autograd.grad) again"


def overhead(reps=3000, warmup=100, block=4):
    """Per-step overhead in microseconds: the compiled step and the torch variants on
    a tiny model (8-8-10, batch 4), where the arithmetic costs next to nothing
    and what remains is the Python around it."""
    small = compiled_module(d=8, h=8)
    steps = make_steps(small, batch=4)
    rounds = measure(steps, reps, warmup, block)
    med = {name: statistics.median(t for r in rs for t in r) for name, rs in rounds.items()}
    base = med["torch (autograd.grad)"]
    return {name: round((v - base) * 1e6, 1) for name, v in med.items()}


def run(
    module=None,
    reps=300,
    warmup=30,
    threads=None,
    plain=True,
    control=True,
    block=4,
    with_overhead=True,
    out=sys.stdout,
):
    """Run the benchmark on ``module`` (default: examples/mlp.qv at 784-512-10
    through the real compiler); ``plain`` adds the same program compiled with
    plain field assignments (what the step costs without ``rt.field_add``),
    ``control`` a second, identical copy of the autograd.grad baseline whose
    ratio to the first shows the measurement noise."""
    if threads:
        torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    module = compiled_module() if module is None else module
    plain_module = compiled_module(fuse_updates=False) if plain else None
    steps = make_steps(module, plain_module)
    if control:
        steps[CONTROL] = make_steps(module)["torch (autograd.grad)"]
    rounds = measure(steps, reps, warmup, block)
    med = {name: statistics.median(t for r in rs for t in r) for name, rs in rounds.items()}
    base = min(TORCH_BASELINES, key=med.get)
    quiver = [n for n in steps if n.startswith("quiver")]
    ratios = {q: {b: round(paired_ratio(rounds, q, b), 4) for b in TORCH_BASELINES} for q in quiver}
    result = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "reps": reps,
        "warmup": warmup,
        "block": block,
        "batch": BATCH,
        "median_ms": {name: round(v * 1e3, 4) for name, v in med.items()},
        "baseline": base,
        "ratio_checks_on": ratios["quiver (checks on)"][base],
        "ratio_checks_off": ratios["quiver (checks off)"][base],
        "paired_ratios": ratios,
    }
    if control:
        result["control_ratio"] = round(paired_ratio(rounds, CONTROL, "torch (autograd.grad)"), 4)
    print(
        f"torch {result['torch']}, {result['threads']} threads, {reps} timed steps per variant "
        f"in interleaved blocks of {block} (first of each untimed), {warmup} warm-up, batch {BATCH}",
        file=out,
    )
    _print_medians_and_ratios(med, ratios, result if control else None, out)
    print(
        f"result vs {base}: checks on {result['ratio_checks_on']:.4f} (target <= 1.05), "
        f"checks off {result['ratio_checks_off']:.4f} (target <= 1.01)",
        file=out,
    )
    if with_overhead:
        result["overhead_us_vs_autograd_grad"] = over = overhead(block=block)
        print(
            "per-step overhead on a tiny model (8-8-10, batch 4), microseconds more than torch (autograd.grad):",
            file=out,
        )
        for name, v in over.items():
            if name != "torch (autograd.grad)":
                print(f"  {name:29s} {v:+8.1f} us", file=out)
    return result


# ------------------------------------------------------------------ GPT (--gpt)

GPT_LR = 0.003  # AdamW, as examples/gpt.qv trains
GPT_WD = 0.01
GPT_BLOCKS = 2
GPT_HEADS = 4
GPT_FUSED = "torch fused-norm (a.grad)"


def compiled_gpt(fuse_updates=True):
    """examples/gpt.qv as shipped (with examples/gpt_model.qv, which it
    imports), through the real checker, compiler and loader."""
    import dataclasses

    from quiver.checker.compiler import compile_program
    from quiver.loader import compile_file, execute

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    program = compile_file(os.path.join(root, "examples", "gpt.qv"))
    assert not program.analysis.diagnostics, program.analysis.diagnostics
    if not fuse_updates:
        program = dataclasses.replace(program, compiled=compile_program(program.analysis, program.path, False))
    return execute(program)


def gpt_text(module):
    """The text examples/gpt.qv trains on, examples/data/tiny.txt, read as the
    example reads it (``load_chars``): its character ids, as labels of the
    module's ``V``.  The example's ``batch(text, step)`` takes it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = rt.TensorArg("text", ("n",), rt.index(module.V))
    text, _ = rt.load_chars(os.path.join(root, "examples", "data", "tiny.txt"), spec)
    return text


def gpt_logits(p, tokens, heads=GPT_HEADS, fused_norm=False):
    """The forward pass of examples/gpt.qv written by hand: ``p`` maps the
    model's param names (its nn layers' state_dict keys) to tensors, the 2-D
    weights laid out as the program keeps them, ``[in out]``.  Its layer norms
    are computed as nn.LayerNorm computes them, ``layer_norm(x) * weight +
    bias``, or with ``fused_norm`` by one ``F.layer_norm(x, shape, weight,
    bias)``."""
    batch, steps = tokens.shape
    width = p["tok.weight"].shape[1]
    size = width // heads

    def norm(x, k):
        if fused_norm:
            return F.layer_norm(x, (width,), p[k + ".weight"], p[k + ".bias"])
        return F.layer_norm(x, (width,)) * p[k + ".weight"] + p[k + ".bias"]

    def linear(x, k):
        return x @ p[k + ".weight"] + p[k + ".bias"]

    keep = ~torch.triu(torch.ones(steps, steps, dtype=torch.bool), diagonal=1)
    x = F.embedding(tokens, p["tok.weight"]) + p["pos.weight"][:steps]
    for i in range(GPT_BLOCKS):
        k = f"blocks.{i}."
        h = norm(x, k + "ln_1")
        qkv = (h @ w for w in p[k + "attn.in_proj_weight"].chunk(3, dim=-1))
        q, key, v = (t.view(batch, steps, heads, size).transpose(1, 2) for t in qkv)
        att = F.scaled_dot_product_attention(q, key, v, attn_mask=keep)
        x = x + att.transpose(1, 2).reshape(batch, steps, width) @ p[k + "attn.out_proj.weight"]
        x = x + linear(F.gelu(linear(norm(x, k + "ln_2"), k + "fc")), k + "proj")
    return linear(norm(x, "ln_f"), "head")


def make_gpt_steps(module):
    """{variant name: step(i)} for the GPT: the compiled step with checks on
    and off, and the hand-written torch steps, on the same batches; every
    variant steps AdamW (torch.optim.AdamW, foreach) as the example does."""
    text = gpt_text(module)
    data = [module.batch(text, i) for i in range(8)]
    names = list(module.Gpt.init(seed=0).state_dict())

    def quiver_step(checks_on):
        m = module.Gpt.init(seed=0)
        opt = rt.AdamW(m, lr=GPT_LR, weight_decay=GPT_WD)
        train_step = module.train_step

        def step(i):
            tokens, nxt = data[i % len(data)]
            before = rt.checks.enabled
            rt.checks.enabled = checks_on
            try:
                return train_step(m, opt, tokens, nxt)
            finally:
                rt.checks.enabled = before

        return step

    def torch_grad_step(fused_norm=False):
        state = module.Gpt.init(seed=0).state_dict()
        p = {n: state[n].clone().requires_grad_(True) for n in names}
        params = list(p.values())
        opt = torch.optim.AdamW(params, lr=GPT_LR, weight_decay=GPT_WD, foreach=True)

        def step(i):
            tokens, nxt = data[i % len(data)]
            logits = gpt_logits(p, tokens, fused_norm=fused_norm)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), nxt.reshape(-1))
            grads = torch.autograd.grad(loss, params)
            for w, g in zip(params, grads):
                w.grad = g
            opt.step()
            return loss.detach()

        return step

    def torch_module_step():
        state = module.Gpt.init(seed=0).state_dict()
        p = nn.ParameterDict({n.replace(".", "_"): nn.Parameter(state[n].clone()) for n in names})
        opt = torch.optim.AdamW(p.parameters(), lr=GPT_LR, weight_decay=GPT_WD, foreach=True)

        def step(i):
            tokens, nxt = data[i % len(data)]
            opt.zero_grad(set_to_none=True)
            logits = gpt_logits({n: p[n.replace(".", "_")] for n in names}, tokens)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), nxt.reshape(-1))
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    return {
        "quiver (checks on)": quiver_step(True),
        "quiver (checks off)": quiver_step(False),
        "torch (module+optim)": torch_module_step(),
        "torch (autograd.grad)": torch_grad_step(),
        GPT_FUSED: torch_grad_step(fused_norm=True),
    }


def run_gpt(reps=300, warmup=30, threads=None, control=True, block=4, out=sys.stdout):
    """One train step of examples/gpt.qv, compiled, against the same step
    written by hand in torch; the same report as :func:`run`."""
    if threads:
        torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    module = compiled_gpt()
    steps = make_gpt_steps(module)
    if control:
        steps[CONTROL] = make_gpt_steps(module)["torch (autograd.grad)"]
    rounds = measure(steps, reps, warmup, block)
    med = {name: statistics.median(t for r in rs for t in r) for name, rs in rounds.items()}
    base = min(TORCH_BASELINES, key=med.get)
    quiver = [n for n in steps if n.startswith("quiver")]
    ratios = {q: {b: round(paired_ratio(rounds, q, b), 4) for b in (*TORCH_BASELINES, GPT_FUSED)} for q in quiver}
    batch = tuple(module.batch(gpt_text(module), 0)[0].shape)
    result = {
        "subject": "examples/gpt.qv",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "reps": reps,
        "warmup": warmup,
        "block": block,
        "batch": list(batch),
        "median_ms": {name: round(v * 1e3, 4) for name, v in med.items()},
        "baseline": base,
        "ratio_checks_on": ratios["quiver (checks on)"][base],
        "ratio_checks_off": ratios["quiver (checks off)"][base],
        "paired_ratios": ratios,
        "ratio_checks_on_vs_fused_norm": ratios["quiver (checks on)"][GPT_FUSED],
        "ratio_checks_off_vs_fused_norm": ratios["quiver (checks off)"][GPT_FUSED],
    }
    if control:
        result["control_ratio"] = round(paired_ratio(rounds, CONTROL, "torch (autograd.grad)"), 4)
    print(
        f"examples/gpt.qv train step: torch {result['torch']}, {result['threads']} threads, {reps} timed steps "
        f"per variant in interleaved blocks of {block} (first of each untimed), {warmup} warm-up, "
        f"batch {batch[0]} windows of {batch[1]} characters",
        file=out,
    )
    _print_medians_and_ratios(med, ratios, result if control else None, out)
    print(
        f"result vs {base}: checks on {result['ratio_checks_on']:.4f}, "
        f"checks off {result['ratio_checks_off']:.4f} (target <= 1.10)",
        file=out,
    )
    print(
        f"vs {GPT_FUSED} (layer norms with their gain and bias fused, as torch can and Quiver's "
        f"layer_norm cannot): checks on {result['ratio_checks_on_vs_fused_norm']:.4f}, "
        f"checks off {result['ratio_checks_off_vs_fused_norm']:.4f}",
        file=out,
    )
    return result


# ------------------------------------------------------------- optimizers (--optim)

OPTIM_LR = 1e-3


def _optim_model(d, h, c):
    """A model class with the MLP's params (w1, b1, w2, b2) at d-h-c."""

    class Mlp(rt.Model):
        _qv_name = "Mlp"
        _qv_params = (
            rt.Field("w1", (d, h), rt.f32, rt.init.normal(0.0, 0.02)),
            rt.Field("b1", (h,), rt.f32),
            rt.Field("w2", (h, c), rt.f32, rt.init.normal(0.0, 0.02)),
            rt.Field("b2", (c,), rt.f32),
        )

    return Mlp


def make_optim_steps(d=D, h=H, c=C):
    """{variant name: step(i)}: one optimizer step each, with a fixed gradient
    (the same tensors for Quiver's Grad and torch's ``.grad``)."""
    cls = _optim_model(d, h, c)
    gen = torch.Generator().manual_seed(7)
    grads = [torch.randn(f.shape, generator=gen) * 0.01 for f in cls._qv_params]
    g = rt.Grad(cls, dict(zip(cls._qv_param_names, grads)))

    def quiver(make):
        m = cls.init(seed=0)
        opt = make(m)
        step = opt.step

        def run(i):
            step(m, g)

        return run

    def torch_(make):
        ps = [t.detach().clone().requires_grad_(True) for t in cls.init(seed=0)._qv_tensors]
        for p, gr in zip(ps, grads):
            p.grad = gr
        opt = make(ps)
        step = opt.step

        def run(i):
            step()

        return run

    return {
        "quiver Adam": quiver(lambda m: rt.Adam(m, lr=OPTIM_LR)),
        "torch Adam (foreach)": torch_(lambda ps: torch.optim.Adam(ps, lr=OPTIM_LR, foreach=True)),
        "quiver SGD momentum": quiver(lambda m: rt.SGD(m, lr=OPTIM_LR, momentum=0.9)),
        "torch SGD momentum (foreach)": torch_(lambda ps: torch.optim.SGD(ps, lr=OPTIM_LR, momentum=0.9, foreach=True)),
        "torch Adam (foreach) again": torch_(lambda ps: torch.optim.Adam(ps, lr=OPTIM_LR, foreach=True)),
    }


OPTIM_PAIRS = (
    ("quiver Adam", "torch Adam (foreach)"),
    ("quiver SGD momentum", "torch SGD momentum (foreach)"),
    ("torch Adam (foreach) again", "torch Adam (foreach)"),
)


def run_optim(reps=300, warmup=30, threads=None, block=4, out=sys.stdout):
    """``opt.step(m, g)`` of rt.Adam and rt.SGD (momentum) against torch.optim's
    foreach step, at 784-512-10 and on the tiny 8-8-10 model."""
    if threads:
        torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    result = {"subject": "optimizers", "torch": torch.__version__, "threads": torch.get_num_threads(), "sizes": {}}
    print(
        f"optimizer step alone: torch {result['torch']}, {result['threads']} threads, {reps} timed steps per "
        f"variant in interleaved blocks of {block} (first of each untimed), {warmup} warm-up",
        file=out,
    )
    for label, dims, n in (("784-512-10", (D, H, C), reps), ("8-8-10", (8, 8, C), reps * 4)):
        rounds = measure(make_optim_steps(*dims), n, warmup, block)
        med = {name: statistics.median(t for r in rs for t in r) for name, rs in rounds.items()}
        ratios = {f"{a} / {b}": round(paired_ratio(rounds, a, b), 4) for a, b in OPTIM_PAIRS}
        result["sizes"][label] = {
            "median_us": {name: round(v * 1e6, 2) for name, v in med.items()},
            "paired_ratios": ratios,
        }
        print(f"model {label}:", file=out)
        for name, v in med.items():
            print(f"  {name:29s} median {v * 1e6:9.2f} us", file=out)
        for (a, b), r in zip(OPTIM_PAIRS, ratios.values()):
            note = " (noise control)" if a.endswith("again") else " (target <= 1.05)"
            print(f"  {a} / {b}: {r:.4f}{note}", file=out)
    return result


# ------------------------------------------------ torch.nn twins (--model gpt|cnn)
#
# One train step of examples/gpt.qv or examples/cnn.qv, loaded by path with
# quiver.load (so it measures whatever the example holds when it runs),
# against the same network written as a torch.nn.Module (nn.Embedding,
# nn.LayerNorm, nn.Linear, nn.Conv2d) trained with torch.optim.  The twin
# takes its sizes from the loaded model's params and starts from a copy of
# them; the first steps' losses must agree before anything is timed.

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
TWIN_RTOL = 1e-4
TWIN_CHECK_STEPS = 3


class TwinMismatch(AssertionError):
    """The torch.nn twin does not compute what the example computes."""


def example_optimizer(src: str) -> tuple[str, dict]:
    """(torch.optim class name, keyword arguments) of the training in an
    example's ``main``: an optimizer it constructs (``AdamW(m, lr=0.003,
    weight_decay=0.01)``), else plain SGD at the number its ``train_step(...)``
    call passes last (``m -= lr * g``, as cnn.qv trains)."""
    import re

    main = src[src.index("fn main(") :] if "fn main(" in src else src
    made = re.search(r"\b(SGD|Adam|AdamW)\(\s*\w+\s*((?:,[^()]*)?)\)", main)
    if made:
        kwargs = {}
        for part in filter(None, (p.strip() for p in made.group(2).split(","))):
            key, _, value = part.partition("=")
            kwargs[key.strip()] = _literal(value.strip(), part)
        return made.group(1), kwargs
    call = re.search(r"\btrain_step\(([^()]*)\)", main)
    if call:
        last = call.group(1).split(",")[-1].strip()
        return "SGD", {"lr": _literal(last, call.group(0))}
    raise TwinMismatch("found neither an optimizer nor a train_step(..., lr) call in the example's main")


def _literal(text: str, where: str):
    import ast

    try:
        return ast.literal_eval({"true": "True", "false": "False"}.get(text, text))
    except (ValueError, SyntaxError):
        raise TwinMismatch(f"cannot read the optimizer setting {where!r} of the example as a number") from None


def _split_leaf(path: str) -> tuple[str, str]:
    """``blocks.0.ln_a_gain`` -> (``blocks.0.ln_a``, ``weight``); ``fc_bias`` ->
    (``fc``, ``bias``); ``wq`` and ``wq.weight`` -> (``wq``, ``weight``)."""
    for sep in (".", "_"):
        for kind, words in (("bias", ("bias",)), ("weight", ("weight", "gain", "scale", "w"))):
            for word in words:
                if path.endswith(sep + word) and len(path) > len(word) + 1:
                    return path[: -len(word) - 1], kind
    return path, "weight"


# Quiver name (the last part of a layer's path, lower case) -> layer of the
# twin.  THE mapping between the example's params and the twin's: extend
# these tables when the example's field names change.
GPT_TOP_ROLES = {
    "tok": ("tok", "tok_emb", "token", "tokens", "wte", "embed", "embedding", "tok_embedding"),
    "pos": ("pos", "pos_emb", "position", "positions", "wpe", "pos_embedding"),
    "ln_f": ("ln_f", "norm_f", "final_norm", "ln_final", "norm", "ln"),
    "head": ("head", "lm_head", "out", "unembed", "proj_out", "output"),
}
GPT_BLOCK_ROLES = {
    "ln_1": ("ln_a", "ln1", "ln_1", "norm1", "norm_1", "attn_norm", "ln_attn", "norm_a"),
    "q": ("wq", "q", "query", "q_proj"),
    "k": ("wk", "k", "key", "k_proj"),
    "v": ("wv", "v", "value", "v_proj"),
    "qkv": ("wqkv", "qkv", "in_proj", "c_attn"),
    "o": ("wo", "o", "out", "out_proj", "o_proj"),
    "ln_2": ("ln_m", "ln2", "ln_2", "norm2", "norm_2", "mlp_norm", "ln_mlp", "norm_m"),
    "fc": ("fc", "fc1", "linear1", "up", "ff1", "c_fc", "w1"),
    "proj": ("proj", "fc2", "linear2", "down", "ff2", "c_proj", "w2"),
}
_TRANSPOSED = {"q", "k", "v", "qkv", "o", "fc", "proj", "head"}  # Quiver keeps x @ W's [I O]; nn.Linear [O I]


def _role(base: str, roles: dict) -> str | None:
    last = base.rsplit(".", 1)[-1].lower()
    for role, names in roles.items():
        if last in names:
            return role
    return None


def gpt_mapping(state: dict) -> dict:
    """{twin param path: (Quiver path, transpose?)} for a GPT's state_dict,
    with the sizes and layout the twin needs under ``"_layout"``.  Raises
    TwinMismatch, naming what does not fit, when a param has no place."""
    import re

    out, unplaced, blocks = {}, [], set()
    for path in state:
        base, kind = _split_leaf(path)
        found = re.match(r"^(.*?)\.(\d+)\.(.+)$", base)
        if found:
            i, role = int(found.group(2)), _role(found.group(3), GPT_BLOCK_ROLES)
            twin = None if role is None else f"blocks.{i}.{role}.{kind}"
            blocks.add(i)
        else:
            role = _role(base, GPT_TOP_ROLES)
            twin = None if role is None else f"{role}.{kind}"
        if twin is None or twin in out:
            unplaced.append(path)
        else:
            out[twin] = (path, role in _TRANSPOSED and kind == "weight")
    if unplaced:
        raise TwinMismatch(
            f"the GPT twin has no place for the params {unplaced} of the example; "
            "extend GPT_TOP_ROLES / GPT_BLOCK_ROLES in bench/runtime.py"
        )
    if "tok.weight" not in out or "head.weight" not in out or blocks != set(range(len(blocks))):
        raise TwinMismatch(f"the example's params do not look like a GPT to the twin: {list(state)}")
    vocab, width = state[out["tok.weight"][0]].shape
    fused = "blocks.0.qkv.weight" in out
    hidden = state[out["blocks.0.fc.weight"][0]].shape[1]
    out["_layout"] = {
        "vocab": vocab,
        "width": width,
        "context": state[out["pos.weight"][0]].shape[0] if "pos.weight" in out else None,
        "blocks": len(blocks),
        "hidden": hidden,
        "fused_qkv": fused,
        "bias": {r: f"blocks.0.{r}.bias" in out for r in ("q", "k", "v", "qkv", "o", "fc", "proj")},
        "norm_bias": {r: f"{r}.bias" in out or f"blocks.0.{r}.bias" in out for r in ("ln_1", "ln_2", "ln_f")},
        "head_bias": "head.bias" in out,
    }
    return out


def _linear(layer: nn.Linear, x, unfused: bool):
    """``layer(x)``; ``unfused``: as a .qv program writes it, ``x @ w + b``."""
    if not unfused:
        return layer(x)
    y = x @ layer.weight.t()
    return y if layer.bias is None else y + layer.bias


def _norm(layer: nn.LayerNorm, x, unfused: bool):
    """``layer(x)``; ``unfused``: as a .qv program writes it, ``layer_norm(x) * w + b``."""
    if not unfused:
        return layer(x)
    y = F.layer_norm(x, layer.normalized_shape, eps=layer.eps) * layer.weight
    return y if layer.bias is None else y + layer.bias


class TwinBlock(nn.Module):
    def __init__(self, width, heads, hidden, fused, bias, norm_bias, unfused=False):
        super().__init__()
        self.heads = heads
        self.unfused = unfused
        self.ln_1 = nn.LayerNorm(width, bias=norm_bias["ln_1"])
        if fused:
            self.qkv = nn.Linear(width, 3 * width, bias=bias["qkv"])
        else:
            self.q = nn.Linear(width, width, bias=bias["q"])
            self.k = nn.Linear(width, width, bias=bias["k"])
            self.v = nn.Linear(width, width, bias=bias["v"])
        self.o = nn.Linear(width, width, bias=bias["o"])
        self.ln_2 = nn.LayerNorm(width, bias=norm_bias["ln_2"])
        self.fc = nn.Linear(width, hidden, bias=bias["fc"])
        self.proj = nn.Linear(hidden, width, bias=bias["proj"])
        self.fused = fused

    def attention(self, x, mask):
        b, t, e = x.shape
        if self.fused:
            q, k, v = _linear(self.qkv, x, self.unfused).split(e, dim=-1)
        else:
            q, k, v = (_linear(lin, x, self.unfused) for lin in (self.q, self.k, self.v))
        q, k, v = (y.view(b, t, self.heads, e // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / (e // self.heads) ** 0.5)
        att = torch.softmax(scores.masked_fill(mask[:t, :t], float("-inf")), dim=-1) @ v
        return _linear(self.o, att.transpose(1, 2).reshape(b, t, e), self.unfused)

    def forward(self, x, mask):
        u = self.unfused
        x = x + self.attention(_norm(self.ln_1, x, u), mask)
        return x + _linear(self.proj, F.gelu(_linear(self.fc, _norm(self.ln_2, x, u), u)), u)


class TwinGpt(nn.Module):
    """examples/gpt.qv's GPT as torch.nn layers, sized by :func:`gpt_mapping`."""

    def __init__(self, layout, heads, unfused=False):
        super().__init__()
        self.unfused = unfused
        e, t = layout["width"], layout["context"]
        self.tok = nn.Embedding(layout["vocab"], e)
        self.pos = nn.Embedding(t, e)
        self.blocks = nn.ModuleList(
            TwinBlock(e, heads, layout["hidden"], layout["fused_qkv"], layout["bias"], layout["norm_bias"], unfused)
            for _ in range(layout["blocks"])
        )
        self.ln_f = nn.LayerNorm(e, bias=layout["norm_bias"]["ln_f"])
        self.head = nn.Linear(e, layout["vocab"], bias=layout["head_bias"])
        self.register_buffer("mask", ~torch.tril(torch.ones(t, t, dtype=torch.bool)), persistent=False)
        self.register_buffer("positions", torch.arange(t), persistent=False)

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos(self.positions[: tokens.shape[1]])
        for blk in self.blocks:
            x = blk(x, self.mask)
        return _linear(self.head, _norm(self.ln_f, x, self.unfused), self.unfused)


def cnn_mapping(state: dict) -> dict:
    """{twin param path: (Quiver path, how)} for the CNN, by the params' order
    and rank: each 4-D param is a conv's weight, each 2-D one a linear layer's
    ([I O], transposed for nn.Linear), a param named ...b / ...bias the bias
    of the layer before it (Quiver's [C 1 1] flattened to nn.Conv2d's [C])."""
    import re

    out, convs, linears, last, unplaced = {}, [], [], None, []
    for path, t in state.items():
        base, kind = _split_leaf(path)
        is_bias = kind == "bias" or re.fullmatch(r"b\d*", path.rsplit(".", 1)[-1]) is not None
        if not is_bias and t.dim() == 4:
            last = f"convs.{len(convs)}"
            convs.append(tuple(t.shape))
            out[last + ".weight"] = (path, "copy")
        elif not is_bias and t.dim() == 2:
            last = f"linears.{len(linears)}"
            linears.append(tuple(t.shape))
            out[last + ".weight"] = (path, "transpose")
        elif is_bias and last is not None and last + ".bias" not in out:
            out[last + ".bias"] = (path, "flatten")
        else:
            unplaced.append(path)
    if unplaced or not convs or not linears:
        raise TwinMismatch(
            f"the CNN twin (convs, then linear layers) has no place for {unplaced or list(state)}; "
            "see cnn_mapping in bench/runtime.py"
        )
    out["_layout"] = {
        "convs": [(s[1], s[0], s[2], f"{n}.bias" in out) for n, s in zip((f"convs.{i}" for i in range(9)), convs)],
        "linears": [(s[0], s[1], f"linears.{i}.bias" in out) for i, s in enumerate(linears)],
    }
    return out


class TwinCnn(nn.Module):
    """examples/cnn.qv's network: conv -> relu -> max_pool2d(2) per conv,
    flatten, linear layers (relu between them)."""

    def __init__(self, layout):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(ci, co, k, bias=b) for ci, co, k, b in layout["convs"])
        self.linears = nn.ModuleList(nn.Linear(i, o, bias=b) for i, o, b in layout["linears"])

    def forward(self, x):
        for conv in self.convs:
            x = F.max_pool2d(F.relu(conv(x)), 2)
        x = x.flatten(1)
        for i, lin in enumerate(self.linears):
            x = lin(x) if i == 0 else lin(F.relu(x))
        return x


def copy_into_twin(twin: nn.Module, state: dict, mapping: dict) -> None:
    """Overwrite every param of ``twin`` from the Quiver ``state`` per ``mapping``."""
    params = dict(twin.named_parameters())
    missing = sorted(set(params) - set(mapping))
    if missing:
        raise TwinMismatch(f"no param of the example for the twin's {missing}; mapping: {_mapping_text(mapping)}")
    with torch.no_grad():
        for name, p in params.items():
            path, how = mapping[name]
            t = state[path]
            t = t.t() if how is True or how == "transpose" else t.reshape(p.shape) if how == "flatten" else t
            if tuple(t.shape) != tuple(p.shape):
                raise TwinMismatch(
                    f"the example's {path} {tuple(state[path].shape)} does not fit the twin's {name} "
                    f"{tuple(p.shape)}; mapping: {_mapping_text(mapping)}"
                )
            p.copy_(t)


def _mapping_text(mapping: dict) -> str:
    return ", ".join(f"{k} <- {v[0]}" for k, v in mapping.items() if not k.startswith("_"))


def _heads(module, width: int) -> int | None:
    """The number of attention heads the example declares (a dim NH, HEADS...),
    in the module or the modules it imports; None when there is none."""
    # quiver.load gives a Program; the compiled module behind it holds the imported ones
    compiled = getattr(module, "__quiver_module__", module)
    spaces = [module] + [v for k, v in vars(compiled).items() if k.startswith("_qv_mod_")]
    for space in spaces:
        for name in ("NH", "HEADS", "N_HEAD", "N_HEADS", "H"):
            value = getattr(space, name, None)
            if isinstance(value, int) and value > 0 and width % value == 0:
                return value
    return None


def _model_class(module, names):
    for name in names:
        if isinstance(getattr(module, name, None), type):
            return getattr(module, name)
    raise TwinMismatch(f"the example defines none of the models {names}")


def twin_steps(which: str, foreach: bool | None = None, unfused: bool = False, path: str | None = None):
    """(quiver step, torch step, description): one train step each of
    examples/<which>.qv and of its torch.nn twin, from the same params, on the
    same batches (steps take the step number).  The first TWIN_CHECK_STEPS
    steps are run here and their losses compared."""
    import quiver

    path = path or os.path.join(EXAMPLES, f"{which}.qv")
    root = os.path.dirname(EXAMPLES)
    shown = os.path.relpath(path, root) if os.path.abspath(path).startswith(root + os.sep) else path
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    module = quiver.load(path)
    kind, hp = example_optimizer(src)
    cls = _model_class(module, ("Gpt",) if which == "gpt" else ("Cnn",))
    m = cls.init(seed=0)
    state = m.state_dict()
    if which == "gpt":
        text = gpt_text(module)
        data = [module.batch(text, i) for i in range(8)]
        mapping = gpt_mapping(state)
        layout = mapping["_layout"]
        heads = _heads(module, layout["width"])
        twin = TwinGpt(layout, heads or 1, unfused)
        vocab = layout["vocab"]

        def twin_loss(inputs):
            tokens, nxt = inputs
            return F.cross_entropy(twin(tokens).reshape(-1, vocab), nxt.reshape(-1))
    else:
        y = module.labels()
        data = [(module.images(y), y)]
        mapping = cnn_mapping(state)
        twin = TwinCnn(mapping["_layout"])

        def twin_loss(inputs):
            x, labels = inputs
            return F.cross_entropy(twin(x), labels)

    copy_into_twin(twin, state, mapping)
    twin.train()
    takes_opt = list(inspect.signature(module.train_step).parameters)[1:2] == ["opt"]
    if takes_opt:
        q_opt = getattr(rt, kind)(m, **hp)
        train_step = module.train_step

        def quiver_step(i):
            return train_step(m, q_opt, *data[i % len(data)])
    else:
        lr = hp["lr"]
        train_step = module.train_step

        def quiver_step(i):
            return train_step(m, *data[i % len(data)], lr)

    extra = {} if foreach is None else {"foreach": foreach}
    opt = getattr(torch.optim, kind)(twin.parameters(), **hp, **extra)

    def torch_step(i):
        opt.zero_grad(set_to_none=True)
        loss = twin_loss(data[i % len(data)])
        loss.backward()
        opt.step()
        return loss.detach()

    if which == "gpt" and heads is None:
        raise TwinMismatch("the example declares no dim NH (attention heads) that the twin could read")
    for i in range(TWIN_CHECK_STEPS):
        ours, theirs = float(quiver_step(i)), float(torch_step(i))
        if abs(ours - theirs) > TWIN_RTOL * max(1.0, abs(theirs)):
            raise TwinMismatch(
                f"{shown} and its torch.nn twin disagree at step {i}: loss {ours!r} vs {theirs!r} "
                f"(optimizer {kind}{hp}); the twin in bench/runtime.py no longer fits the example: "
                f"mapping {_mapping_text(mapping)}"
            )
    desc = f"{shown}, {kind}({', '.join(f'{k}={v}' for k, v in hp.items())}), batch {tuple(data[0][0].shape)}"
    return quiver_step, torch_step, desc


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
UNFUSED = "torch.nn as .qv (foreach)"


def run_twin(
    which, rounds=30, per_round=5, warmup=20, threads=None, max_ratio=None, clock="wall", path=None, out=sys.stdout
):
    """Time the example's train step against its torch.nn twin, interleaved:
    each round runs ``per_round`` steps of each (A then B, the order swapped
    every round) after one untimed step; medians over all steps and the
    median of the per-round ratios.  ``clock="cpu"`` times the CPU time of
    the process instead of wall time: on a loaded machine it leaves out the
    time other processes take (with one thread it is the step's own work).
    Returns (result, ok)."""
    if threads:
        torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    q_step, t_step, desc = twin_steps(which, path=path)
    _, t_foreach, _ = twin_steps(which, foreach=True, path=path)
    variants = {"quiver": q_step, "torch.nn": t_step, "torch.nn (foreach)": t_foreach}
    if which == "gpt":  # for the report only: how much of the gap is the program's unfused norms and linears
        variants[UNFUSED] = twin_steps(which, foreach=True, unfused=True, path=path)[1]
    samples = measure(variants, rounds * (per_round - 1) if per_round > 1 else rounds, warmup, per_round, CLOCKS[clock])
    med = {name: statistics.median(t for r in rs for t in r) for name, rs in samples.items()}
    base = min(("torch.nn", "torch.nn (foreach)"), key=med.get)
    ratio = paired_ratio(samples, "quiver", base)
    ratios = {b: round(paired_ratio(samples, "quiver", b), 4) for b in variants if b != "quiver"}
    result = {
        "subject": desc,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "rounds": len(samples["quiver"]),
        "clock": clock,
        "median_ms": {n: round(v * 1e3, 4) for n, v in med.items()},
        "baseline": base,
        "ratio": round(ratio, 4),
        "ratios": ratios,
    }
    print(
        f"{desc}: torch {result['torch']}, {result['threads']} threads, {result['rounds']} interleaved rounds "
        f"of {per_round} steps per variant (first untimed), {warmup} warm-up, {clock} clock; losses agree for the first "
        f"{TWIN_CHECK_STEPS} steps",
        file=out,
    )
    for n, v in med.items():
        print(f"  {n:26s} median {v * 1e3:8.3f} ms", file=out)
    print(
        "  quiver / " + ", quiver / ".join(f"{b}: {r:.4f}" for b, r in ratios.items()) + f"  (vs faster: {ratio:.4f})",
        file=out,
    )
    if UNFUSED in ratios:
        print(
            f"  ({UNFUSED}: the twin with its layer norms as layer_norm(x) * w + b and its linears as "
            "x @ w + b, the ops the example's code asks for; not a baseline)",
            file=out,
        )
    ok = max_ratio is None or ratio <= max_ratio
    if max_ratio is not None:
        print(f"  {'OK' if ok else 'FAIL'}: ratio {ratio:.4f} {'<=' if ok else '>'} --max-ratio {max_ratio}", file=out)
    return result, ok


def _load_module_file(path):
    qv_path = os.path.splitext(os.path.abspath(path))[0] + ".qv"
    with open(path, encoding="utf-8") as fh:
        return rt.load_compiled(fh.read(), qv_path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--block", type=int, default=4, help="steps per variant per round (first untimed)")
    ap.add_argument("--module", help="a compiled .py file to measure instead of examples/mlp.qv")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument(
        "--no-control", action="store_true", help="leave out the second copy of the torch baseline (the noise control)"
    )
    ap.add_argument(
        "--no-overhead", action="store_true", help="leave out the per-step overhead measurement on a tiny model"
    )
    ap.add_argument(
        "--no-plain", action="store_true", help="leave out the variant that updates fields by plain assignment"
    )
    ap.add_argument(
        "--gpt", action="store_true", help="measure a train step of examples/gpt.qv instead (see the docstring)"
    )
    ap.add_argument(
        "--optim", action="store_true", help="measure the optimizers' step alone instead (see the docstring)"
    )
    ap.add_argument(
        "--per-example",
        action="store_true",
        help="measure per-example gradients (value_and_grad batch=) against torch.func instead: bench/per_example.py",
    )
    ap.add_argument(
        "--model",
        choices=("gpt", "cnn"),
        help="time a train step of examples/<model>.qv against the same network as a torch.nn.Module "
        "with torch.optim (see bench/README.md)",
    )
    ap.add_argument("--rounds", type=int, default=30, help="with --model: interleaved rounds")
    ap.add_argument(
        "--per-round", type=int, default=5, help="with --model: steps per variant per round (first untimed)"
    )
    ap.add_argument(
        "--max-ratio", type=float, default=None, help="with --model: exit 1 when quiver / torch.nn exceeds this"
    )
    ap.add_argument(
        "--clock",
        choices=tuple(CLOCKS),
        default="wall",
        help="with --model: time wall-clock (default) or the process's CPU time (steadier on a loaded machine)",
    )
    ap.add_argument(
        "--example", metavar="PATH", help="with --model: this .qv file instead of examples/<model>.qv (same layout)"
    )
    ap.add_argument(
        "--data",
        action="store_true",
        help="measure the run-time checks in an epoch over batches read from a file instead: bench/data_loop.py",
    )
    args = ap.parse_args(argv)
    if args.data:
        import data_loop  # bench/data_loop.py, next to this file

        data_loop.main(["--rounds", str(args.rounds)] + (["--threads", str(args.threads)] if args.threads else []))
        return 0
    if args.model:
        result, ok = run_twin(
            args.model,
            rounds=args.rounds,
            per_round=args.per_round,
            warmup=args.warmup if args.warmup != 30 else 20,
            threads=args.threads,
            max_ratio=args.max_ratio,
            clock=args.clock,
            path=args.example,
        )
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(result, fh, indent=2)
        return 0 if ok else 1
    if args.per_example:
        import per_example  # bench/per_example.py, next to this file

        per_example.main(["--reps", str(args.reps)] + (["--threads", str(args.threads)] if args.threads else []))
        return 0
    if args.optim:
        result = run_optim(reps=args.reps, warmup=args.warmup, threads=args.threads, block=args.block)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(result, fh, indent=2)
        return 0
    if args.gpt:
        result = run_gpt(
            reps=args.reps, warmup=args.warmup, threads=args.threads, control=not args.no_control, block=args.block
        )
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(result, fh, indent=2)
        return 0
    module = _load_module_file(args.module) if args.module else None
    result = run(
        module,
        reps=args.reps,
        warmup=args.warmup,
        threads=args.threads,
        plain=not args.no_plain,
        control=not args.no_control,
        block=args.block,
        with_overhead=not args.no_overhead,
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    return 0


def _print_medians_and_ratios(med: dict, ratios: dict, result: dict | None, out) -> None:
    """The median of each variant and the paired ratios; the noise control's ratio when it ran."""
    for name, v in med.items():
        print(f"  {name:29s} median {v * 1e3:8.3f} ms", file=out)
    print("paired ratios (median over rounds):", file=out)
    for q, rs in ratios.items():
        print(f"  {q:29s} " + ", ".join(f"vs {b}: {r:.4f}" for b, r in rs.items()), file=out)
    if result is not None:
        print(f"  {CONTROL:29s} vs torch (autograd.grad): {result['control_ratio']:.4f} (noise)", file=out)


if __name__ == "__main__":
    sys.exit(main())
