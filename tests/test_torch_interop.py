"""quiver.to_module: a Quiver model as a torch.nn.Module (docs/torch-interop.md).

Each test compares with what torch or the Quiver runtime computes: a
PyTorch loop over the module against the same training written in Quiver,
names against hand-written torch modules, shared storage both ways."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from interop_mlp import MLP
from interop_mlp import data as mlp_data
from torch import nn

import quiver
from quiver import runtime as rt

NN = """\
import nn

dim D = 8
dim H = 12

model Block:
    param ln: nn.LayerNorm[H]
    param attn: nn.MultiheadAttention[H, 2]
    param fc: nn.Linear[H, H]

model Net:
    param emb: nn.Embedding[10, H]
    param inp: nn.Linear[D, H]
    param blocks: [2] Block
    param out: nn.Linear[H, 1, bias=False]

    fn forward(self, x: [b D]) -> [b 1]:
        return self.out(relu(self.inp(x)))
"""


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    path = tmp_path_factory.mktemp("interop") / "mlp_interop.qv"
    path.write_text(MLP)
    return quiver.load(str(path)), str(path)


def test_an_sgd_loop_in_torch_trains_like_the_quiver_step(mlp) -> None:
    prog, _ = mlp
    x, y = mlp_data()
    ref = prog.Mlp.init(seed=0)
    ref_losses = [prog.sgd_step(ref, x, y, 0.2, i).item() for i in range(5)]

    m = prog.Mlp.init(seed=0)
    module = quiver.to_module(m, forward=prog.loss)  # train mode: Train(seed=0), Train(seed=1), ...
    opt = torch.optim.SGD(module.parameters(), lr=0.2)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = module(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses == pytest.approx(ref_losses, rel=0, abs=1e-6)
    for name in ("w1", "b1", "w2", "b2"):
        torch.testing.assert_close(getattr(m, name), getattr(ref, name), rtol=0, atol=1e-6)
        # the module's parameter is the model's tensor's storage
        assert getattr(module, name).data_ptr() == getattr(m, name).data_ptr()
    assert losses[-1] < losses[0] - 0.1  # it did train (dropout 0.25 on)


def test_an_adamw_loop_in_torch_matches_quiver_s_adamw(mlp) -> None:
    prog, _ = mlp
    x, y = mlp_data()
    ref = prog.Mlp.init(seed=1)
    ref_opt = rt.AdamW(ref, lr=0.01, weight_decay=0.05)
    ref_losses = [prog.adamw_step(ref, ref_opt, x, y, 10 + i).item() for i in range(6)]

    m = prog.Mlp.init(seed=1)
    module = quiver.to_module(m, forward=prog.loss, seed=10)
    opt = torch.optim.AdamW(module.parameters(), lr=0.01, weight_decay=0.05)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = module(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses == pytest.approx(ref_losses, rel=0, abs=1e-6)
    torch.testing.assert_close(m.w1, ref.w1, rtol=0, atol=1e-6)
    torch.testing.assert_close(m.b2, ref.b2, rtol=0, atol=1e-6)


def test_train_and_eval_choose_the_mode(mlp) -> None:
    prog, _ = mlp
    x, _ = mlp_data()
    m = prog.Mlp.init(seed=2)
    module = quiver.to_module(m, forward=prog.forward, seed=5)
    with torch.no_grad():
        first, second = module(x), module(x)  # Train(seed=5), then Train(seed=6)
        torch.testing.assert_close(first, prog.forward(m, x, rt.Train(seed=5)), rtol=0, atol=0)
        torch.testing.assert_close(second, prog.forward(m, x, rt.Train(seed=6)), rtol=0, atol=0)
        assert not torch.equal(first, second)
        module.eval()
        torch.testing.assert_close(module(x), prog.forward(m, x, rt.Eval), rtol=0, atol=0)
        # a mode passed by the caller is used as it is
        torch.testing.assert_close(module(x, rt.Train(seed=9)), prog.forward(m, x, rt.Train(seed=9)), rtol=0, atol=0)


def test_names_match_a_hand_written_torch_module(tmp_path: Path) -> None:
    path = tmp_path / "net_interop.qv"
    path.write_text(NN)
    prog = quiver.load(str(path))
    module = quiver.to_module(prog.Net.init(seed=0))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(12)
            self.attn = nn.MultiheadAttention(12, 2)
            self.fc = nn.Linear(12, 12)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 12)
            self.inp = nn.Linear(8, 12)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.out = nn.Linear(12, 1, bias=False)

    torch_names = [n for n, _ in Net().named_parameters()]
    assert [n for n, _ in module.named_parameters()] == torch_names
    assert list(module.state_dict()) == torch_names
    assert set(module.state_dict()) == set(module.model.state_dict())
    assert isinstance(module.blocks, nn.ModuleList) and len(module.blocks) == 2
    # the model's forward method, through the parameters
    x = torch.randn(4, 8)
    out = module(x)
    torch.testing.assert_close(out, module.model(x), rtol=0, atol=0)
    out.sum().backward()
    assert module.inp.weight.grad is not None and module.emb.weight.grad is None


def test_sharing_goes_both_ways(mlp) -> None:
    prog, _ = mlp
    x, y = mlp_data()
    m = prog.Mlp.init(seed=3)
    module = quiver.to_module(m, forward=prog.loss)
    assert [n for n, _ in module.named_buffers()] == ["steps"]
    prog.sgd_step(m, x, y, 0.5, 0)  # a Quiver step: the module sees it
    assert torch.equal(module.w1.detach(), m.w1) and module.steps.item() == 1
    with torch.no_grad():
        module.b2.add_(1.0)  # a torch update: the model sees it
    assert torch.equal(m.b2, module.b2.detach())
    before = m.w1.clone()
    result = module.load_state_dict({"w1": torch.zeros(12, 16)}, strict=False)
    assert set(result.missing_keys) == {"b1", "b2", "w2", "steps"}
    assert torch.equal(m.w1, torch.zeros(12, 16)) and not torch.equal(before, m.w1)
    state = module.state_dict()
    assert set(state) == {"w1", "b1", "w2", "b2", "steps"} and torch.equal(state["b2"], m.b2)


def test_a_move_keeps_the_model_in_sync_and_dtypes_are_refused(mlp) -> None:
    prog, _ = mlp
    m = prog.Mlp.init(seed=4)
    module = quiver.to_module(m, forward=prog.loss)
    # what .to(device) does, as a copy on this machine's only device
    module._apply(lambda t: t.clone())
    assert m.w1.data_ptr() == module.w1.data_ptr() and m.steps is module.steps
    module.to("cpu")
    with pytest.raises(rt.ModelError, match=r"Mlp\.w1 is declared torch\.float32.*\.double\(\)"):
        module.double()
    assert m.w1.dtype is torch.float32 and module.w1.dtype is torch.float32


def test_deepcopy_is_independent(mlp) -> None:
    prog, _ = mlp
    x, y = mlp_data()
    module = quiver.to_module(prog.Mlp.init(seed=5), forward=prog.loss, seed=3)
    module(x, y).backward()
    twin = copy.deepcopy(module)
    assert twin.model is not module.model and twin.w1.data_ptr() != module.w1.data_ptr()
    torch.testing.assert_close(twin.w1.grad, module.w1.grad, rtol=0, atol=0)
    for (n1, p1), (n2, p2) in zip(module.named_parameters(), twin.named_parameters()):
        assert n1 == n2 and torch.equal(p1, p2)
    with torch.no_grad():
        twin.w1.add_(1.0)
    assert not torch.equal(twin.w1, module.w1)
    assert torch.equal(twin.model.w1, twin.w1.detach())
    # the copy continues the seeds: its next forward draws Train(seed=4), as the original's would
    torch.testing.assert_close(twin(x, y), prog.loss(twin.model, x, y, rt.Train(seed=4)), rtol=0, atol=0)


def test_pickle_round_trip_and_a_clear_error_without_the_program(mlp, tmp_path: Path) -> None:
    prog, path = mlp
    x, y = mlp_data()
    module = quiver.to_module(prog.Mlp.init(seed=6), forward=prog.loss).eval()
    data = pickle.dumps(module)
    back = pickle.loads(data)
    assert not back.training
    assert [n for n, _ in back.named_parameters()] == ["w1", "b1", "w2", "b2"]
    torch.testing.assert_close(back(x, y), module(x, y), rtol=0, atol=0)
    assert torch.equal(back.model.w1, back.w1.detach())
    saved = tmp_path / "module.pkl"
    saved.write_bytes(data)
    code = (
        "import pickle, sys, quiver\n"
        "try:\n    pickle.load(open(sys.argv[1], 'rb'))\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
        "quiver.load(sys.argv[2])\n"
        "print(type(pickle.load(open(sys.argv[1], 'rb'))).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(saved), path], capture_output=True, text=True, timeout=120, check=True
    ).stdout.splitlines()
    assert out[0] == (
        f"ModelError cannot unpickle a module of model Mlp: its program ({path}) is not loaded in this process; "
        f"call quiver.load({path!r}) before unpickling"
    )
    assert out[1] == "QuiverModule"


def test_export_keeps_params_as_parameters(mlp) -> None:
    prog, _ = mlp
    x, y = mlp_data()
    module = quiver.to_module(prog.Mlp.init(seed=7), forward=prog.loss).eval()
    ep = torch.export.export(module, (x, y))
    assert list(ep.graph_signature.parameters) == ["w1", "b1", "w2", "b2"]
    assert list(ep.graph_signature.buffers) == ["steps"]
    assert not ep.constants  # no param became a constant tensor
    # a plain wrapper of the fn: its params are constants of the exported program
    m = module.model

    class Plain(nn.Module):
        def forward(self, x, y):
            return prog.loss(m, x, y, rt.Eval)

    plain = torch.export.export(Plain(), (x, y))
    assert not plain.graph_signature.parameters and len(plain.constants) == 4
    torch.testing.assert_close(ep.module()(x, y), module(x, y).detach(), rtol=0, atol=1e-6)
    # the Index[C] check of y is in the exported graph
    with pytest.raises(
        RuntimeError, match=r"Quiver value check failed: Index\[3\] expected, found values outside 0\.\.2"
    ):
        ep.module()(x, y + 3)


def test_a_non_model_is_refused() -> None:
    with pytest.raises(rt.ModelError, match="quiver.to_module needs a Quiver model, found Linear"):
        quiver.to_module(nn.Linear(2, 2))


def test_torch_compile_of_the_module_gives_eager_s_loss_and_gradients(mlp) -> None:
    prog, _ = mlp
    x, y = mlp_data()
    module = quiver.to_module(prog.Mlp.init(seed=8), forward=prog.loss).eval()
    twin = copy.deepcopy(module)
    torch._dynamo.reset()
    compiled = torch.compile(twin, fullgraph=True, backend="aot_eager")
    eager_loss, compiled_loss = module(x, y), compiled(x, y)
    eager_loss.backward()
    compiled_loss.backward()
    torch.testing.assert_close(compiled_loss, eager_loss, rtol=0, atol=1e-6)
    for (name, p), (_, q) in zip(module.named_parameters(), twin.named_parameters()):
        assert q.grad is not None, name
        torch.testing.assert_close(q.grad, p.grad, rtol=0, atol=1e-6)
    torch._dynamo.reset()
