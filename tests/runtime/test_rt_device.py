"""Where created tensors and models go (runtime/_device.py), decided on the CPU.

Creation is tested on torch's `meta` device (real tensor objects on a device
that is not the CPU); the placement of models declared on `cuda` is tested by
the devices the runtime chooses, and by running such a program with
`--device cpu`. tests/runtime/test_rt_cuda.py does it on a real GPU.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.cli import main as quiver_main
from quiver.runtime import _device

META = torch.device("meta")
CUDA_PROGRAM = """
dim D = 4

model Net on cuda:
    param w: [D] = normal(0.0, 1.0)

fn main():
    m = Net.init(seed=0)
    x = randn([2 D], seed=1)
    print(sum(x @ m.w), zeros([2]), arange(D))
"""


@pytest.fixture(autouse=True)
def _reset_device():
    yield
    _device.place(None)


def write(tmp_path: Path, text: str, name: str = "prog.qv") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_creation_functions_make_tensors_on_the_current_device():
    assert rt.current_device() == torch.device("cpu")
    rt.set_device("meta")
    made = {
        "randn": rt.randn((2, 3), seed=1),
        "rand": rt.rand((2,), seed=1),
        "randint": rt.randint((2,), rt.index(5), seed=1),
        "zeros": rt.zeros((2,)),
        "ones": rt.ones((2,), rt.i64),
        "full": rt.full((2,), rt.f32, value=1.5),
        "eye": rt.eye(3),
        "arange": rt.arange(4),
        "tensor": rt.tensor([1.0, 2.0]),
        "cast": rt.cast(3, rt.f32),
    }
    for name, t in made.items():
        assert t.device == META, name
    assert made["randn"].dtype == torch.float32 and made["randint"].dtype == torch.int64
    rt.set_device("cpu")
    assert rt.zeros((2,)).device.type == "cpu"


def test_seeded_draws_are_made_on_the_cpu_and_moved(monkeypatch):
    """The same values on every device: the draw is the CPU's, moved after."""
    seen = []
    original = torch.Tensor.to

    def spy(self, *args, **kwargs):
        seen.append((self.device.type, kwargs.get("device")))
        return original(self, *args, **kwargs)

    rt.set_device("meta")
    monkeypatch.setattr(torch.Tensor, "to", spy)
    rt.randn((2,), seed=3)
    assert seen == [("cpu", META)]
    monkeypatch.undo()
    rt.set_device("cpu")
    assert torch.equal(rt.randn((2,), seed=3), torch.randn(2, generator=torch.Generator().manual_seed(3)))


def test_a_program_declared_on_cuda_makes_cuda_current(tmp_path: Path):
    mod = quiver.load(str(write(tmp_path, CUDA_PROGRAM)))
    assert mod.Net._qv_torch_device == torch.device("cuda")
    assert rt.current_device() == torch.device("cuda")
    cpu = quiver.load(str(write(tmp_path, "fn main():\n    print(1)\n", "plain.qv")))
    assert cpu is not None and rt.current_device() == torch.device("cpu")


def test_models_on_several_devices_leave_creation_on_the_cpu(tmp_path: Path):
    mixed = """
    model A on cuda:
        param w: [2] = zeros

    model B:
        param w: [2] = zeros

    fn main():
        print(1)
    """
    quiver.load(str(write(tmp_path, mixed)))
    assert rt.current_device() == torch.device("cpu")


def test_a_placed_device_overrides_every_declaration(tmp_path: Path):
    _device.place("meta")
    mod = quiver.load(str(write(tmp_path, CUDA_PROGRAM)))
    assert mod.Net._qv_torch_device == META and rt.current_device() == META
    m = mod.Net.init(seed=0)
    assert m.w.device == META
    assert "Net on meta(" in repr(m)
    _device.place(None)
    assert rt.current_device() == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the failure is that CUDA is missing")
def test_a_cuda_program_runs_on_the_cpu_with_device_cpu(tmp_path: Path, capsys):
    p = write(tmp_path, CUDA_PROGRAM)
    assert quiver_main(["run", str(p)]) == 1
    err = capsys.readouterr().err
    assert "prog.qv:8:" in err and "model Net is declared on cuda, but that device is not available here" in err
    assert quiver_main(["run", "--device", "cpu", str(p)]) == 0
    out = capsys.readouterr().out
    assert out.endswith("[0.0000, 0.0000] [0, 1, 2, 3]\n")
    assert quiver_main(["run", "--device", "cuda", str(write(tmp_path, "fn main():\n    print(1)\n", "p.qv"))]) == 2
    assert "quiver: --device cuda: that device is not available here" in capsys.readouterr().err


def test_a_model_class_made_after_placing_lives_on_the_placed_device():
    _device.place("cpu")

    class OnCuda(rt.Model):
        _qv_name = "OnCuda"
        _qv_device = "cuda"
        _qv_params = (rt.Field("w", (2,), rt.f32),)

    assert OnCuda._qv_torch_device == torch.device("cpu")
    assert OnCuda.init(seed=0).w.device.type == "cpu"
