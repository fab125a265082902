"""Checkpoints at run time: `save`/`load` from `.qv` programs run with
`quiver run`. The file is torch's (read in plain Python with
`torch.load(path, weights_only=True)`), a torch `state_dict` loads into a
Quiver model with `names=`/`transpose=`/`strict=False`, and every mismatch is
an error naming the file, the field and the `.qv` line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from quiver.cli import main as quiver_main

HEAD = """\
import nn

dim D = 4
dim H = 8
dim C = 3

model Mlp:
    param w1: [D H] = xavier
    param b1: [H] = zeros
    param w2: [H C] = xavier
    param b2: [C] = zeros

model Wide:
    param w1: [D C] = xavier

model Net:
    param fc1: nn.Linear[D, H]
    param fc2: nn.Linear[H, C]
    buffer extra: [C] = ones

model Out:
    buffer y: [2 C] = zeros

fn keep(mut o: Out, y: [2 C]):
    o.y = y

fn loss(m: Mlp, x: [b D]) -> []:
    return mean(relu(x @ m.w1 + m.b1) @ m.w2 + m.b2)

fn train(mut m: Mlp, mut opt: Adam[Mlp]):
    opt.step(m, grad(loss, m, ones([5 D]) * 0.5))
"""


def run(folder: Path, capsys, body: str) -> tuple[int, str, str]:
    path = folder / "prog.qv"
    path.write_text(HEAD + "\nfn main():\n" + textwrap.indent(textwrap.dedent(body), "    "))
    code = quiver_main(["run", str(path), "--no-warnings"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_saved_model_is_a_torch_state_dict_of_its_fields(tmp_path: Path, capsys) -> None:
    (tmp_path / "out").mkdir()
    code, out, err = run(
        tmp_path,
        capsys,
        """
        m = Mlp.init(seed=0)
        save("out/m.pt", m)
        n = Net.init(seed=0)
        save("out/n.pt", n)
        print(sum(m.w1), sum(n.fc1.weight))
        """,
    )
    assert (code, err) == (0, "")
    m = torch.load(tmp_path / "out" / "m.pt", weights_only=True)
    assert list(m) == ["w1", "b1", "w2", "b2"]
    assert [tuple(t.shape) for t in m.values()] == [(4, 8), (8,), (8, 3), (3,)]
    assert all(t.dtype == torch.float32 for t in m.values())
    n = torch.load(tmp_path / "out" / "n.pt", weights_only=True)
    assert list(n) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "extra"]
    assert f"{float(m['w1'].sum()):.4f} {float(n['fc1.weight'].sum()):.4f}" == out.strip()


def test_a_checkpoint_of_several_values_is_a_dict_by_keyword(tmp_path: Path, capsys) -> None:
    code, out, err = run(
        tmp_path,
        capsys,
        """
        m = Mlp.init(seed=0)
        opt = Adam(m, lr=0.01)
        train(m, opt)
        save("ckpt.pt", model=m, opt=opt, step=1, best=0.5, done=False)
        """,
    )
    assert (code, err) == (0, "")
    d = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert list(d) == ["model", "opt", "step", "best", "done"]
    assert (d["step"], d["best"], d["done"]) == (1, 0.5, False)
    opt = d["opt"]
    assert (opt["kind"], opt["lr"], opt["steps"]) == ("Adam", 0.01, 1)
    assert opt["hyper"] == {"betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0.0, "amsgrad": False}
    assert set(opt["state"]) == {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step_counts"}
    assert opt["state"]["max_exp_avg_sq"] is None
    assert list(opt["state"]["exp_avg"]) == ["w1", "b1", "w2", "b2"]
    # torch.optim.Adam's own state after the same step, from the same init
    code, _, err = run(tmp_path, capsys, 'save("init.pt", Mlp.init(seed=0))')
    assert (code, err) == (0, "")
    w = {k: v.requires_grad_(True) for k, v in torch.load(tmp_path / "init.pt", weights_only=True).items()}
    topt = torch.optim.Adam(list(w.values()), lr=0.01, foreach=True)
    x = torch.full((5, 4), 0.5)
    (torch.relu(x @ w["w1"] + w["b1"]) @ w["w2"] + w["b2"]).mean().backward()
    topt.step()
    theirs = topt.state_dict()["state"]
    for i, k in enumerate(w):
        assert torch.equal(theirs[i]["exp_avg"], opt["state"]["exp_avg"][k])
        assert torch.equal(theirs[i]["exp_avg_sq"], opt["state"]["exp_avg_sq"][k])
        assert float(theirs[i]["step"]) == float(opt["state"]["step_counts"][k]) == 1.0
        assert torch.equal(w[k].detach(), d["model"][k])


def line_of(folder: Path, text: str) -> int:
    """The line of prog.qv that holds ``text``."""
    return next(i for i, s in enumerate((folder / "prog.qv").read_text().splitlines(), 1) if text in s)


def torch_net() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    return net, torch.randn(2, 4)


TORCH_NAMES = '(("0.weight", "fc1.weight"), ("0.bias", "fc1.bias"), ("2.weight", "fc2.weight"), ("2.bias", "fc2.bias"))'


def test_a_torch_state_dict_loads_with_names_and_transpose(tmp_path: Path, capsys) -> None:
    net, x = torch_net()
    torch.save(net.state_dict(), tmp_path / "torch.pt")
    np.save(tmp_path / "x.npy", x.numpy())
    code, out, err = run(
        tmp_path,
        capsys,
        f"""
        n = Net.init(seed=0)
        load("torch.pt", n, names={TORCH_NAMES}, transpose=("fc1.weight", "fc2.weight"), strict=False)
        o = Out.init(seed=0)
        keep(o, n.fc2(relu(n.fc1(load_npy("x.npy", [2 D])))))
        save("y.pt", o)
        print(sum(n.extra))
        """,
    )
    assert (code, err) == (0, "")
    assert out == "3.0000\n"  # strict=False: the field the file lacks keeps its value
    y = torch.load(tmp_path / "y.pt", weights_only=True)["y"]
    with torch.no_grad():
        assert torch.allclose(y, net(x), atol=1e-6)
        n = torch.load(tmp_path / "torch.pt", weights_only=True)
    # and the model holds torch's tensors, transposed
    code, out, err = run(
        tmp_path,
        capsys,
        f"""
        n = Net.init(seed=0)
        load("torch.pt", n, names={TORCH_NAMES}, transpose=("fc1.weight", "fc2.weight"), strict=False)
        save("n.pt", n)
        """,
    )
    mine = torch.load(tmp_path / "n.pt", weights_only=True)
    assert torch.equal(mine["fc1.weight"], n["0.weight"].t()) and torch.equal(mine["fc2.bias"], n["2.bias"])


def test_strict_needs_every_field(tmp_path: Path, capsys) -> None:
    net, _ = torch_net()
    torch.save(net.state_dict(), tmp_path / "torch.pt")
    code, out, err = run(
        tmp_path,
        capsys,
        f"""
        n = Net.init(seed=0)
        load("torch.pt", n, names={TORCH_NAMES}, transpose=("fc1.weight", "fc2.weight"))
        """,
    )
    assert code == 1
    line = line_of(tmp_path, 'load("torch.pt"')
    assert f"prog.qv:{line}:5: error: torch.pt does not fit Net: it lacks extra" in err


def test_without_transpose_the_shapes_say_so(tmp_path: Path, capsys) -> None:
    net, _ = torch_net()
    torch.save(net.state_dict(), tmp_path / "torch.pt")
    code, out, err = run(
        tmp_path,
        capsys,
        f"""
        n = Net.init(seed=0)
        load("torch.pt", n, names={TORCH_NAMES}, strict=False)
        """,
    )
    assert code == 1
    line = line_of(tmp_path, 'load("torch.pt"')
    assert (
        f"prog.qv:{line}:5: error: torch.pt does not fit Net: fc1.weight is [8 4] f32 in the file, but Net.fc1.weight is [4 8] f32"
        in err
    )


SAVED = """
m = Mlp.init(seed=0)
opt = Adam(m, lr=0.01)
save("m.pt", m)
save("all.pt", model=m, opt=opt, step=3)
"""


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('w = Wide.init(seed=0)\nload("m.pt", w)', "m.pt does not fit Wide: it has fields Wide does not: b1, w2, b2"),
        ('load("none.pt", Mlp.init(seed=0))', "none.pt: no such file (looked for {folder}/none.pt)"),
        (
            'm2 = Mlp.init(seed=1)\nload("all.pt", m2)',
            "all.pt holds the entries model, opt, step (saved with keywords): name the one to load, "
            "as in load(path, model=...)",
        ),
        (
            'm2 = Mlp.init(seed=1)\nload("m.pt", model=m2)',
            "m.pt holds one model's fields (w1, b1, w2, b2), saved with save(path, m): load it with load(path, m)",
        ),
        (
            'm2 = Mlp.init(seed=1)\ns = load("all.pt", model=m2, epoch=0)',
            "all.pt has no entry 'epoch' (its entries: model, opt, step)",
        ),
        (
            'm2 = Mlp.init(seed=1)\ns, e = load("all.pt", model=m2, step=0.5, epoch=7, strict=False)\nprint(s, e)',
            None,
        ),
        ('s = load("all.pt", step=False)', "all.pt: entry 'step' is Int 3, expected Bool"),
        (
            'm2 = Mlp.init(seed=1)\no2 = SGD(m2, lr=0.1)\nload("all.pt", opt=o2)',
            "all.pt, entry 'opt' holds Adam state, not the state of SGD[Mlp]",
        ),
        (
            'm2 = Mlp.init(seed=1)\no2 = Adam(m2, lr=0.1, amsgrad=True)\nload("all.pt", opt=o2)',
            "all.pt, entry 'opt': the Adam saved there has amsgrad=False, this Adam[Mlp] amsgrad=True "
            "(create it with the hyper-parameters of the checkpoint)",
        ),
        (
            'w = Wide.init(seed=0)\no2 = Adam(w)\nload("all.pt", opt=o2)',
            "all.pt, entry 'opt': the state exp_avg does not fit Adam[Wide]; it has params Wide does not: b1, w2, b2",
        ),
        ('save("no/such/m.pt", Mlp.init(seed=0))', "cannot save no/such/m.pt: no folder {folder}/no/such"),
    ],
)
def test_a_mismatch_names_the_file_the_field_and_the_line(tmp_path: Path, capsys, body: str, error: str | None) -> None:
    code, out, err = run(tmp_path, capsys, SAVED + body)
    line = len((tmp_path / "prog.qv").read_text().splitlines()) - (1 if error is None else 0)
    if error is None:
        assert (code, err, out) == (0, "", "3.0 7\n")
        return
    assert code == 1
    assert f"prog.qv:{line}:" in err and ": error: " + error.format(folder=tmp_path) in err, err
