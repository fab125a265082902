"""The checker on the optimizers, param groups, clip_grad_norm and schedules of
issue 26: the types they give, the exact diagnostics of their misuse (code,
range, message), mutability, and what hover shows."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import spanned

from quiver.checker import check_text, ide

HEAD = """\
dim D = 4
dim H = 5
dim C = 3

model Lin:
    param w: [D C] = normal(0.0, 0.1)
    param b: [C] = zeros

model Block:
    param w: [D D] = normal(0.0, 0.1)
    param g: [D] = ones

model Net:
    param blocks: [2] Block
    param head: Lin

fn loss(m: Lin, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(x @ m.w + m.b, y, over=C)

fn loss_aux(m: Lin, x: [b D], y: [b] Index[C]) -> ([] NonNeg, [b C]):
    h = x @ m.w + m.b
    return cross_entropy(h, y, over=C), h

"""


diags = partial(spanned, prelude=HEAD, ignore={"W0101"})


def test_a_clean_program_with_everything() -> None:
    assert (
        diags("""\
fn fit(mut m: Lin, mut opt: AdamW[Lin], mut sched: WarmupCosineLR, x: [b D], y: [b] Index[C]) -> [] Float:
    g, n = clip_grad_norm(grad(loss, m, x, y), 1.0, norm_type=inf)
    opt.step(m, g)
    sched.step(opt)
    print(sched.lr, sched.last_epoch, sched.warmup_steps, opt.weight_decay)
    return n

fn lbfgs(mut m: Lin, mut opt: LBFGS[Lin], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return opt.step(m, loss, x, y)

fn main():
    m = Lin.init(seed=0)
    opt = AdamW(m, weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))
    sched = WarmupCosineLR(opt, warmup_steps=10, total_steps=100)
    x = randn([8 D], seed=1)
    y = randint([8] Index[C], seed=2)
    print(fit(m, opt, sched, x, y))
    o2 = LBFGS(m, max_iter=5, line_search_fn="strong_wolfe")
    print(lbfgs(m, o2, x, y), o2.func_evals, o2.max_eval)
    net = Net.init(seed=0)
    print(SGD(net, groups=(Group(names="blocks.*.g", lr=0.1), Group(min_rank=2, weight_decay=0.01))))
    print(RMSprop(m, centered=True), Adagrad(m, lr_decay=0.1), Adadelta(m, rho=0.95))
    s = OneCycleLR(SGD(m, momentum=0.9), max_lr=0.1, total_steps=10, anneal_strategy="linear")
    print(MultiStepLR(opt, milestones=(3, 6)), StepLR(opt, step_size=3), s.lr)
""")
        == []
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '    print(AdamW(m, groups=Group(names="*.bias", weight_decay=0.0)))\n',
            [
                (
                    "E1201",
                    'Group(names="*.bias") selects no param of Lin: its params: w (rank 2), b (rank 1)',
                    'Group(names="*.bias", weight_decay=0.0)',
                )
            ],
        ),
        (
            '    print(AdamW(m, groups=(Group(max_rank=1, lr=0.1), Group(names="b", lr=0.2))))\n',
            [
                (
                    "E1201",
                    'Group(names="b") selects no param of Lin: an earlier group took b',
                    'Group(names="b", lr=0.2)',
                )
            ],
        ),
        (
            "    print(Adam(m, groups=Group(max_rank=1, momentum=0.9)))\n",
            [
                (
                    "E1202",
                    "Adam has no hyper-parameter momentum for a Group to set (a Group sets lr, betas, eps, weight_decay)",
                    "momentum=0.9",
                )
            ],
        ),
        (
            "    print(Adam(m, groups=Group(lr=0.1)))\n",
            [
                (
                    "E1202",
                    "Group needs the params it selects: max_rank=, min_rank= or names= (a glob on their paths)",
                    "Group(lr=0.1)",
                )
            ],
        ),
        (
            "    k = 1\n    print(Adam(m, groups=Group(max_rank=k)))\n",
            [("E1202", "Group's max_rank must be an Int literal >= 0, such as max_rank=1; found k", "max_rank=k")],
        ),
        (
            "    print(Adam(m, groups=Group(min_rank=2, max_rank=1)))\n",
            [("E1202", "Group selects no rank: min_rank=2 is above max_rank=1", "Group(min_rank=2, max_rank=1)")],
        ),
        (
            "    print(Adam(m, groups=0.1))\n",
            [("E1202", "groups= of Adam takes a Group(...) or a tuple of them; found number Float", "0.1")],
        ),
        (
            "    print(LBFGS(m, groups=Group(max_rank=1)))\n",
            [("E0402", "LBFGS has no parameter 'groups'", "groups")],
        ),
        (
            '    print(LBFGS(m, line_search_fn="wolfe"))\n',
            [
                (
                    "E0301",
                    'line_search_fn of LBFGS: expected "strong_wolfe" (a string literal), found "wolfe"',
                    '"wolfe"',
                )
            ],
        ),
        (
            "    print(OneCycleLR(Adadelta(m), max_lr=1.0, total_steps=10))\n",
            [
                (
                    "E1203",
                    "OneCycleLR cycles the momentum, and Adadelta[Lin] has neither momentum nor betas; "
                    "give cycle_momentum=False",
                    "Adadelta(m)",
                )
            ],
        ),
        (
            "    print(WarmupCosineLR(SGD(m), warmup_steps=10, total_steps=10))\n",
            [
                (
                    "E1203",
                    "WarmupCosineLR needs 0 < warmup_steps < total_steps, found warmup_steps=10, total_steps=10",
                    "warmup_steps=10",
                )
            ],
        ),
        (
            "    print(StepLR(SGD(m), gamma=0.5))\n",
            [("E0403", "StepLR needs the argument step_size=", "(SGD(m), gamma=0.5)")],
        ),
        (
            "    print(StepLR(m, step_size=2))\n",
            [("E0301", "argument 'opt' of StepLR: expected an optimizer, found model Lin", "m")],
        ),
        (
            "    print(MultiStepLR(SGD(m), milestones=(1.5, 2)))\n",
            [
                (
                    "E0301",
                    "milestones of MultiStepLR: expected a tuple of Ints, such as (30, 80), found tuple (Float, Int)",
                    "(1.5, 2)",
                )
            ],
        ),
        (
            "    print(clip_grad_norm(m, 1.0))\n",
            [("E0301", "argument 'g' of clip_grad_norm: expected a Grad[M], found model Lin", "m")],
        ),
        (
            "    print(clip_grad_norm(grad(loss, m, x, y), 1.0, norm_type=0.0))\n",
            [("E0301", "norm_type of clip_grad_norm: expected a number > 0 or inf, found 0", "0.0")],
        ),
    ],
)
def test_misuse_is_reported_precisely(body: str, expected) -> None:
    src = "fn f(m: Lin, x: [b D], y: [b] Index[C]):\n" + body
    assert diags(src) == expected


def test_lbfgs_step_is_checked_as_value_and_grad() -> None:
    got = diags("""\
fn fa(mut m: Lin, mut opt: LBFGS[Lin], x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return opt.step(m, loss_aux, x, y)

fn fb(mut m: Lin, mut opt: LBFGS[Lin], x: [b D]) -> [] NonNeg:
    return opt.step(m, loss, x)

fn fc(mut m: Lin, mut opt: LBFGS[Lin], x: [b D], y: [b] Index[C]):
    opt.step(m, x, y)

fn fd(m: Lin, opt: LBFGS[Lin], x: [b D], y: [b] Index[C]):
    print(opt.step(m, loss, x, y))
""")
    codes = [c for c, _, _ in got]
    assert codes[0] == "E1106" and got[0][2] == "loss_aux"
    assert codes[1] == "E0401"  # loss takes y too
    assert got[2][0] == "E1105" and got[2][2] == "x"
    assert [c for c, _, _ in got[3:]] == ["E0501", "E0501"]  # opt and m must be mut


def test_schedules_need_mut_as_optimizers_do() -> None:
    got = diags("""\
fn fa(opt: SGD[Lin], mut sched: StepLR):
    sched.step(opt)

fn fb(mut opt: SGD[Lin], sched: StepLR):
    sched.step(opt)

fn fc(opt: SGD[Lin]) -> StepLR:
    return StepLR(opt, step_size=3)

fn fd(mut opt: SGD[Lin], mut sched: StepLR):
    sched.gamma = 0.5
    sched.step(opt, opt)
    sched.stpe(opt)
""")
    assert got == [
        ("E0501", "cannot assign opt: 'opt' is not a mut parameter (an optimizer changes only through one)", "opt"),
        (
            "E0501",
            "cannot assign sched.step: 'sched' is not a mut parameter (a schedule changes only through one)",
            "sched.step",
        ),
        ("E0501", "cannot assign opt: 'opt' is not a mut parameter (an optimizer changes only through one)", "opt"),
        ("E1204", "gamma of StepLR cannot be assigned: a schedule changes only by sched.step(opt)", "sched.gamma"),
        ("E0401", "StepLR.step takes 1 positional argument, found 2", "opt"),  # on the extra one
        ("E0107", "schedule StepLR has no field 'stpe'; did you mean 'step'?", "stpe"),
    ]


def _hover(src: str, needle: str) -> str:
    a = check_text(HEAD + src)
    h = ide.hover(a, len(HEAD) + src.index(needle))
    assert h is not None
    return h.markdown


def test_hover_shows_groups_and_schedule_fields() -> None:
    src = """\
fn main():
    m = Lin.init(seed=0)
    opt = AdamW(m, weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))
    sched = OneCycleLR(opt, max_lr=0.01, total_steps=100)
    o2 = LBFGS(m)
    print(opt, sched, o2)
"""
    text = _hover(src, "opt, sched, o2")
    assert "group 1: max_rank=1: weight_decay=0.0" in text and "weight_decay: Float  # default 0.01" in text
    text = _hover(src, "sched, o2")
    assert "`OneCycleLR` learning-rate schedule" in text
    assert "max_lr: Float  # required" in text and "last_epoch: Int  # steps taken" in text
    text = _hover(src, "o2)")
    assert "`opt.step(m, f, args...)`" in text and "func_evals: Int" in text and "line_search_fn: Str" in text
