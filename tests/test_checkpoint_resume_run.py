"""Exact resume (issue 26): training 10 steps equals training 5, saving with
`save(path, model=m, opt=opt, step=5)`, then loading in a NEW process
(`quiver run`) and training 5 more, bit for bit: every param and every tensor
of the optimizer's state (torch.equal), its lr, steps and hyper-params. The
resumed program starts its loop at the step number read from the checkpoint.

OPTIMIZERS is the list of optimizer kinds checked; a new kind is one more line
(its constructor, with `{m}` for the model)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from quiver.cli import main as quiver_main

OPTIMIZERS = [
    ("SGD", "SGD({m}, lr=0.05, momentum=0.9, weight_decay=0.01)"),
    ("SGD", "SGD({m}, lr=0.05, momentum=0.9, nesterov=True)"),
    ("Adam", "Adam({m}, lr=0.01)"),
    ("Adam", "Adam({m}, lr=0.01, amsgrad=True, weight_decay=0.01)"),
    ("AdamW", "AdamW({m}, lr=0.01, weight_decay=0.1)"),
    ("AdamW", "AdamW({m}, lr=0.01, weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))"),
    ("RMSprop", "RMSprop({m}, lr=0.01, momentum=0.9, centered=True)"),
    ("Adagrad", "Adagrad({m}, lr=0.05, lr_decay=0.01)"),
    ("Adadelta", "Adadelta({m}, lr=1.0, weight_decay=0.01)"),
]

COMMON = """\
dim D = 4
dim H = 8
dim C = 3

model Mlp:
    param w1: [D H] = xavier
    param b1: [H] = zeros
    param w2: [H C] = xavier
    param b2: [C] = zeros
    buffer seen: [] i64 = zeros

fn loss(m: Mlp, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(relu(x @ m.w1 + m.b1) @ m.w2 + m.b2, y, over=C)

fn train(mut m: Mlp, mut opt: {kind}[Mlp], start: Int, stop: Int):
    for i in range(start, stop):
        opt.lr = 0.05 * 0.9 ** i
        x = randn([16 D], seed=i)
        y = randint([16] Index[C], seed=100 + i)
        if i < 2:
            # the first steps move the head only: w1 and b1 have no SGD momentum yet
            l, gh = value_and_grad(loss, m, x, y, wrt=[w2, b2])
            opt.step(m, gh)
        else:
            l, g = value_and_grad(loss, m, x, y)
            opt.step(m, g)
        m.seen = m.seen + 1
"""

FIRST = """
fn main():
    a = Mlp.init(seed=0)
    opt_a = {ctor_a}
    train(a, opt_a, 0, 10)
    save("full.pt", model=a, opt=opt_a, step=10)
    b = Mlp.init(seed=0)
    opt_b = {ctor_b}
    train(b, opt_b, 0, 5)
    save("ckpt.pt", model=b, opt=opt_b, step=5)
"""

RESUME = """
fn main():
    m = Mlp.init(seed=7)
    opt = {ctor}
    start = load("ckpt.pt", model=m, opt=opt, step=0)
    print("resuming at", start)
    train(m, opt, start, 10)
    save("resumed.pt", model=m, opt=opt, step=10)
"""


def assert_same(a, b, where: str = "") -> None:
    """Equal nested dicts: tensors bit for bit (torch.equal, same dtype), the rest =="""
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and torch.equal(a, b), where
    else:
        assert a == b, where


def resume(tmp_path: Path, first: list[str], second: list[str]) -> tuple[str, dict, dict, dict]:
    """Run `first` in this process, then `second` in a new one (`quiver run`);
    the second's stdout and the checkpoints full.pt, resumed.pt and ckpt.pt,
    the full and resumed runs already compared bit for bit."""
    assert quiver_main(["run", *first, "--no-warnings", "--no-progress"]) == 0
    proc = subprocess.run(
        [sys.executable, "-m", "quiver", "run", *second, "--no-warnings", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    full, resumed, half = (torch.load(tmp_path / n, weights_only=True) for n in ("full.pt", "resumed.pt", "ckpt.pt"))
    assert_same(full, resumed)
    return proc.stdout, full, resumed, half


@pytest.mark.parametrize(("kind", "ctor"), OPTIMIZERS, ids=[c for _, c in OPTIMIZERS])
def test_ten_steps_equal_five_saved_loaded_in_a_new_process_and_five_more(tmp_path: Path, kind: str, ctor: str) -> None:
    head = COMMON.format(kind=kind)
    (tmp_path / "first.qv").write_text(head + FIRST.format(ctor_a=ctor.format(m="a"), ctor_b=ctor.format(m="b")))
    (tmp_path / "resume.qv").write_text(head + RESUME.format(ctor=ctor.format(m="m")))
    out, full, _, half = resume(tmp_path, [str(tmp_path / "first.qv")], [str(tmp_path / "resume.qv")])
    assert out == "resuming at 5\n"
    # the check has teeth: the state really is there and differs from the checkpoint's
    assert half["opt"]["steps"] == 5 and full["opt"]["steps"] == 10
    assert int(full["model"]["seen"]) == 10
    state = full["opt"]["state"]
    first = next(iter(state.values()))
    assert set(first) == {"w1", "b1", "w2", "b2"}
    assert not torch.equal(full["model"]["w1"], half["model"]["w1"])


SCHEDULED = """\
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = xavier
    param b: [C] = zeros

fn loss(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w + m.b, y, over=C)

fn train(mut m: Lin, mut opt: Adam[Lin], mut sched: OneCycleLR, start: Int, stop: Int):
    for i in range(start, stop):
        l, g = value_and_grad(loss, m, randn([16 D], seed=i), randint([16] Index[C], seed=100 + i))
        opt.step(m, g)
        sched.step(opt)

fn main(first: Bool = False):
    m = Lin.init(seed=0)
    opt = Adam(m, lr=0.01, groups=Group(max_rank=1, lr=0.001))
    sched = OneCycleLR(opt, max_lr=0.1, total_steps=10)
    if first:
        train(m, opt, sched, 0, 10)
        save("full.pt", model=m, opt=opt, sched=sched)
        m2 = Lin.init(seed=0)
        opt2 = Adam(m2, lr=0.01, groups=Group(max_rank=1, lr=0.001))
        sched2 = OneCycleLR(opt2, max_lr=0.1, total_steps=10)
        train(m2, opt2, sched2, 0, 5)
        save("ckpt.pt", model=m2, opt=opt2, sched=sched2)
    else:
        load("ckpt.pt", model=m, opt=opt, sched=sched)
        print(f"resuming at {sched.last_epoch}, lr {opt.lr:.6f}")
        train(m, opt, sched, sched.last_epoch, 10)
        save("resumed.pt", model=m, opt=opt, sched=sched)
"""


def test_a_schedule_and_param_groups_resume_exactly_in_a_new_process(tmp_path: Path) -> None:
    """OneCycleLR moves lr and beta1 of each group of an Adam with two groups;
    saving the schedule with the optimizer resumes both exactly."""
    prog = tmp_path / "sched.qv"
    prog.write_text(SCHEDULED)
    out, full, _, half = resume(tmp_path, [str(prog), "--first"], [str(prog)])
    assert out.startswith("resuming at 5, lr ")
    assert half["opt"]["groups"] is not None
    assert half["opt"]["lr"] != full["opt"]["lr"]  # the schedule really moved it


LBFGS_PROGRAM = """\
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = xavier
    param b: [C] = zeros

fn loss(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w + m.b, y, over=C)

fn train(mut m: Lin, mut opt: LBFGS[Lin], start: Int, stop: Int):
    for i in range(start, stop):
        l = opt.step(m, loss, randn([16 D], seed=i), randint([16] Index[C], seed=100 + i))

fn main(first: Bool = False):
    m = Lin.init(seed=0)
    opt = LBFGS(m, lr=0.5, max_iter=4, history_size=5, line_search_fn="strong_wolfe")
    if first:
        train(m, opt, 0, 6)
        save("full.pt", model=m, opt=opt)
        m2 = Lin.init(seed=0)
        opt2 = LBFGS(m2, lr=0.5, max_iter=4, history_size=5, line_search_fn="strong_wolfe")
        train(m2, opt2, 0, 3)
        save("ckpt.pt", model=m2, opt=opt2)
    else:
        load("ckpt.pt", model=m, opt=opt)
        train(m, opt, 3, 6)
        save("resumed.pt", model=m, opt=opt)
"""


def test_lbfgs_resumes_exactly_in_a_new_process(tmp_path: Path) -> None:
    """LBFGS's history (directions, steps, the last gradient) travels in the
    checkpoint: 6 steps equal 3, save, load in a new process, 3 more."""
    prog = tmp_path / "lbfgs.qv"
    prog.write_text(LBFGS_PROGRAM)
    _, full, _, half = resume(tmp_path, [str(prog), "--first"], [str(prog)])
    assert not torch.equal(half["model"]["w"], full["model"]["w"])
