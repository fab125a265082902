"""Device placement on a real accelerator (skipped where torch has no CUDA)."""

from __future__ import annotations

import pytest
import torch

from quiver import runtime as rt

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

FIELDS = (
    rt.Field("w", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),
    rt.Field("b", (2,), rt.f64, rt.init.normal(0.0, 1.0)),
)


class OnCuda(rt.Model):
    _qv_name = "OnCuda"
    _qv_device = "cuda"
    _qv_params = FIELDS
    _qv_buffers = (rt.Field("n", (), rt.i64, rt.init.fill(0)),)


class OnCpu(rt.Model):
    _qv_name = "OnCpu"
    _qv_params = FIELDS


def loss(m, x):
    return rt.sum(x @ m.w) + rt.sum(m.b * m.b).float()


def test_fields_live_on_the_declared_device_with_the_cpu_draw():
    m = OnCuda.init(seed=0)
    assert m.w.device.type == "cuda" and m.b.device.type == "cuda" and m.n.device.type == "cuda"
    ref = OnCpu.init(seed=0)
    assert torch.equal(m.w.cpu(), ref.w) and torch.equal(m.b.cpu(), ref.b)


def test_gradients_are_where_the_params_are():
    m = OnCuda.init(seed=0)
    value, g = rt.value_and_grad(loss, m, torch.ones(4, 3, device="cuda"))
    assert value.device.type == "cuda" and not value.requires_grad
    assert g.w.device.type == "cuda" and g.w.dtype == torch.float32
    assert g.b.device.type == "cuda" and g.b.dtype == torch.float64
    assert torch.allclose(g.w, torch.full((3, 2), 4.0, device="cuda"))
    assert torch.allclose(g.b, 2 * m.b)
    assert not m.w.requires_grad
    assert rt.norm(g).device.type == "cuda"


def test_unused_params_get_zeros_on_the_device():
    m = OnCuda.init(seed=0)
    _, g = rt.value_and_grad(lambda mm, x: rt.sum(x @ mm.w), m, torch.ones(1, 3, device="cuda"))
    assert torch.equal(g.b, torch.zeros(2, dtype=torch.float64, device="cuda"))


def test_dropout_on_the_device_is_deterministic_by_seed():
    x = torch.ones(4096, device="cuda")
    a = rt.dropout(x, 0.5, rt.Train(seed=1))
    b = rt.dropout(x, 0.5, rt.Train(seed=1))
    assert a.device.type == "cuda" and torch.equal(a, b)
    mode = rt.Train(seed=1)
    assert not torch.equal(rt.dropout(x, 0.5, mode), rt.dropout(x, 0.5, mode))


def test_assignment_and_field_add_on_the_device():
    m = OnCuda.init(seed=0)
    w = m.w
    m.w = torch.zeros(3, 2, device="cuda")
    rt.field_add(m, "w", torch.ones(3, 2, device="cuda"), -2.0)
    rt.field_add(m, "n", 1)
    assert m.w is w and torch.equal(m.w, torch.full((3, 2), -2.0, device="cuda"))
    assert int(m.n) == 1


def test_save_and_load(tmp_path):
    m = OnCuda.init(seed=3)
    m.save(tmp_path / "m.pt")
    back = OnCuda.load(tmp_path / "m.pt")
    assert back.w.device.type == "cuda" and torch.equal(back.w, m.w) and torch.equal(back.b, m.b)


class Sub(rt.Model):
    _qv_params = (rt.Field("v", (2, 2), rt.f32, rt.init.normal(0.0, 1.0)),)


class NestedCuda(rt.Model):
    _qv_device = "cuda"
    _qv_params = (rt.Field("w", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)), rt.SubModel("subs", Sub, 2, None))


class NestedCpu(rt.Model):
    _qv_params = NestedCuda._qv_params


def nested_loss(m, x):
    h = x @ m.w
    for s in m.subs:
        h = torch.tanh(h @ s.v)
    return (h**2).sum()


def test_nested_model_per_example_and_jvp_on_the_device():
    # (written without a CUDA machine at hand: CPU results moved over are the reference)
    m, ref = NestedCuda.init(seed=0), NestedCpu.init(seed=0)
    assert all(t.device.type == "cuda" for t in m._qv_tensors)
    assert all(torch.equal(a.cpu(), b) for a, b in zip(m._qv_tensors, ref._qv_tensors))
    x = torch.randn(4, 3)
    _, gs = rt.value_and_grad(nested_loss, m, x.cuda(), batch=(0,))
    _, want = rt.value_and_grad(nested_loss, ref, x, batch=(0,))
    assert all(a.device.type == "cuda" for a in gs._qv_values)
    assert all(torch.allclose(a.cpu(), b, atol=1e-5) for a, b in zip(gs._qv_values, want._qv_values))
    t = rt.randn_grad(NestedCuda, 1)
    assert all(torch.equal(a.cpu(), b) for a, b in zip(t._qv_values, rt.randn_grad(NestedCpu, 1)._qv_values))
    _, dy = rt.jvp(nested_loss, m, t, x.cuda())
    _, want_dy = rt.jvp(nested_loss, ref, rt.randn_grad(NestedCpu, 1), x)
    assert dy.device.type == "cuda" and torch.allclose(dy.cpu(), want_dy, atol=1e-4)
    assert rt.zeros_grad(NestedCuda).subs[1].v.device.type == "cuda"


def _placed_signature():
    src = rt.SourceFile("dev.qv")
    return src, rt.Signature(
        src,
        "loss",
        src.loc(1, 1),
        (rt.ModelArg("m", OnCuda, src.loc(1, 9)), rt.TensorArg("x", ("b", 3), rt.f32, src.loc(1, 20))),
    )


def test_cpu_data_for_a_cuda_model_is_an_argument_error():
    src, sig = _placed_signature()
    m = OnCuda.init(seed=0)
    sig.check(m, torch.ones(4, 3, device="cuda"))
    with pytest.raises(rt.CheckError) as info:
        sig.check(m, torch.ones(4, 3))
    assert info.value.detail == (
        "loss(): argument 'x' expected [b 3] f32 on cuda (the device of argument 'm', model OnCuda), "
        "found [4 3] f32 on cpu"
    )
    assert info.value.loc == src.loc(1, 20)


def test_tensors_without_a_model_must_share_a_device():
    src = rt.SourceFile("dev.qv")
    sig = rt.Signature(
        src,
        "add",
        src.loc(1, 1),
        (rt.TensorArg("a", (3,), rt.f32, src.loc(1, 8)), rt.TensorArg("b", (3,), rt.f32, src.loc(1, 19))),
    )
    sig.check(torch.zeros(3, device="cuda"), torch.zeros(3, device="cuda"))
    with pytest.raises(rt.CheckError) as info:
        sig.check(torch.zeros(3, device="cuda"), torch.zeros(3))
    assert info.value.detail == (
        "add(): argument 'b' expected [3] f32 on cuda:0 (the device of argument 'a'), found [3] f32 on cpu"
    )


# ------------------------------------------------------------------ created tensors, --device, --nproc on CUDA

CUDA_PROGRAM = """
dim D = 4

model Net on cuda:
    param w: [D] = normal(0.0, 1.0)

fn loss(m: Net, x: [b D]) -> []:
    return mean(x @ m.w) + sum(zeros([D]) * m.w) + sum(ones([D]) * 0.0)

fn main():
    m = Net.init(seed=0)
    x = randn([8 D], seed=1)
    l, g = value_and_grad(loss, m, x)
    print(l, g.w)
"""


def test_a_program_on_cuda_creates_its_tensors_on_cuda(tmp_path):
    import quiver
    from quiver.runtime import _device

    p = tmp_path / "prog.qv"
    p.write_text(CUDA_PROGRAM)
    try:
        mod = quiver.load(str(p))
        assert rt.current_device().type == "cuda"
        assert rt.zeros((2,)).device.type == "cuda" and rt.randn((2,), seed=1).device.type == "cuda"
        mod.main()  # the argument checks would refuse a CPU tensor next to the CUDA model
    finally:
        _device.place(None)


def _run(*args, cwd):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    return subprocess.run(
        [sys.executable, "-m", "quiver", "run", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_device_cuda_places_a_cpu_program_on_cuda(tmp_path):
    p = tmp_path / "prog.qv"
    p.write_text(CUDA_PROGRAM.replace("model Net on cuda:", "model Net:"))
    on_cpu = _run(str(p), cwd=tmp_path)
    on_cuda = _run("--device", "cuda", str(p), cwd=tmp_path)
    assert on_cpu.returncode == 0 and on_cuda.returncode == 0, on_cuda.stderr
    assert on_cuda.stdout.split()[0] == on_cpu.stdout.split()[0]  # the same loss to 4 decimals


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="NCCL needs a GPU per rank")
def test_two_workers_on_two_gpus_average_with_nccl(tmp_path):
    from pathlib import Path

    prog = Path(__file__).resolve().parents[1] / "distributed" / "mlp_dp.qv"
    text = prog.read_text().replace("model Mlp:", "model Mlp on cuda:")
    p = tmp_path / "mlp_dp.qv"
    p.write_text(text)
    (tmp_path / "dist_io.py").write_text(prog.with_name("dist_io.py").read_text())
    one = _run(str(p), cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    (tmp_path / "mlp_dp.rank0.pt").rename(tmp_path / "one.pt")
    two = _run("--nproc", "2", str(p), cwd=tmp_path)
    assert two.returncode == 0, two.stderr
    a = torch.load(tmp_path / "one.pt", weights_only=True)["fields"]
    for r in (0, 1):
        b = torch.load(tmp_path / f"mlp_dp.rank{r}.pt", weights_only=True)["fields"]
        assert max((a[k].double() - b[k].double()).abs().max().item() for k in a) <= 1e-5


def test_data_readers_make_their_tensors_on_the_current_device(tmp_path):
    import numpy as np

    np.save(tmp_path / "y.npy", np.array([3, 1, 2]))
    before = rt.current_device()
    rt.set_device("cuda")
    try:
        y = rt.load_npy(str(tmp_path / "y.npy"), rt.TensorArg("y", ("n",), rt.index(4)))
        p = rt.randperm(5, 1)
    finally:
        rt.set_device(before)
    assert y.device.type == "cuda" and y.tolist() == [3, 1, 2]
    assert p.device.type == "cuda" and torch.equal(
        p.cpu(), torch.randperm(5, generator=torch.Generator().manual_seed(1))
    )


def test_batches_stay_on_the_inputs_device_in_the_cpus_order():
    x = torch.arange(20, dtype=torch.float32).reshape(10, 2)
    y = torch.arange(10)
    on_cuda = [(xb.cpu(), yb) for xb, yb in rt.batches(x.cuda(), y, size=3, shuffle=4)]
    on_cpu = list(rt.batches(x, y, size=3, shuffle=4))
    assert all(torch.equal(a, c) and torch.equal(b, d) for (a, b), (c, d) in zip(on_cuda, on_cpu))
    (xb, yb), *_ = rt.batches(x.cuda(), y, size=3, shuffle=4)
    assert xb.device.type == "cuda" and yb.device.type == "cpu"
