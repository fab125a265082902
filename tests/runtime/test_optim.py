"""rt.SGD, rt.Adam, rt.AdamW: the numbers of torch.optim, state, selection, errors."""

from __future__ import annotations

import inspect

import pytest
import torch

from quiver import runtime as rt


class Net(rt.Model):
    _qv_name = "Net"
    _qv_params = (
        rt.Field("w1", (4, 3), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("b1", (3,), rt.f32, rt.init.normal(0.0, 0.1)),
        rt.Field("count", (2,), rt.i64, rt.init.fill(7)),
        rt.Field("w2", (3, 2), rt.f32, rt.init.normal(0.0, 1.0)),
        rt.Field("v", (2,), rt.f64, rt.init.normal(0.0, 1.0)),
    )
    _qv_buffers = (rt.Field("seen", (), rt.i64, rt.init.fill(0)),)


FLOATING = ("w1", "b1", "w2", "v")


class Other(rt.Model):
    _qv_name = "Other"
    _qv_params = (rt.Field("w", (2,), rt.f32, rt.init.ones),)


def core(w1, b1, w2, v, x):
    h = torch.tanh(x @ w1 + b1)
    return ((h @ w2 - 0.5) ** 2).mean() + (v * v).sum().to(torch.float32) * 0.1 + (v.sum() * h.sum()).float() * 0.01


def net_loss(m, x):
    return core(m.w1, m.b1, m.w2, m.v, x)


def batches(n):
    g = torch.Generator().manual_seed(5)
    return [torch.randn(5, 4, generator=g) for _ in range(n)]


def torch_twin(m):
    """Leaf copies of the floating params of ``m``, in FLOATING order."""
    return [getattr(m, n).detach().clone().requires_grad_(True) for n in FLOATING]


def run_side_by_side(make_rt, make_torch, steps=100, lr_at=None):
    """``steps`` steps of the rt optimizer and of torch.optim on copies of the
    same params with the same gradients; ``lr_at = (step, lr)`` changes the
    learning rate of both before that step.  Returns (m, opt, ps, topt)."""
    m = Net.init(seed=0)
    ps = torch_twin(m)
    opt = make_rt(m)
    topt = make_torch(ps)
    for i, x in enumerate(batches(steps)):
        if lr_at is not None and i == lr_at[0]:
            opt.lr = lr_at[1]
            topt.param_groups[0]["lr"] = lr_at[1]
        _, g = rt.value_and_grad(net_loss, m, x)
        opt.step(m, g)
        loss = core(*ps, x)
        for p, gr in zip(ps, torch.autograd.grad(loss, ps)):
            p.grad = gr
        topt.step()
    return m, opt, ps, topt


def assert_params_equal(m, ps, atol=1e-6):
    for n, p in zip(FLOATING, ps):
        assert torch.allclose(getattr(m, n), p.detach(), atol=atol, rtol=0), n
    assert torch.equal(m.count, torch.full((2,), 7))


def assert_state_equal(grad_state, topt, ps, key, atol=1e-6):
    for n, p in zip(FLOATING, ps):
        assert torch.allclose(grad_state[n], topt.state[p][key], atol=atol, rtol=0), (key, n)


SGD_CASES = {
    "plain": {"lr": 0.05},
    "momentum": {"lr": 0.05, "momentum": 0.9},
    "dampening": {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    "nesterov": {"lr": 0.05, "momentum": 0.9, "nesterov": True},
    "weight_decay": {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1},
}
ADAM_CASES = {
    "plain": {"lr": 0.01},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "amsgrad": {"lr": 0.01, "amsgrad": True, "betas": (0.8, 0.99)},
    "amsgrad_weight_decay": {"lr": 0.01, "amsgrad": True, "weight_decay": 0.05, "eps": 1e-6},
}


# --- the numbers of torch.optim ---------------------------------------------------------


@pytest.mark.parametrize("foreach", [True, False])
@pytest.mark.parametrize("case", list(SGD_CASES))
def test_sgd_equals_torch_optim_over_100_steps(case, foreach):
    kw = SGD_CASES[case]
    m, opt, ps, topt = run_side_by_side(
        lambda m: rt.SGD(m, **kw), lambda ps: torch.optim.SGD(ps, foreach=foreach, **kw)
    )
    assert_params_equal(m, ps)
    if kw.get("momentum"):
        assert_state_equal(opt.momentum_buffer, topt, ps, "momentum_buffer")
    assert opt.steps == 100
    if foreach:  # the same implementation: the same bits
        assert all(torch.equal(getattr(m, n), p.detach()) for n, p in zip(FLOATING, ps))


@pytest.mark.parametrize("foreach", [True, False])
@pytest.mark.parametrize("case", list(ADAM_CASES))
def test_adam_equals_torch_optim_over_100_steps(case, foreach):
    kw = ADAM_CASES[case]
    m, opt, ps, topt = run_side_by_side(
        lambda m: rt.Adam(m, **kw), lambda ps: torch.optim.Adam(ps, foreach=foreach, **kw)
    )
    assert_params_equal(m, ps)
    assert_state_equal(opt.exp_avg, topt, ps, "exp_avg")
    assert_state_equal(opt.exp_avg_sq, topt, ps, "exp_avg_sq", atol=1e-8)
    if kw.get("amsgrad"):
        assert_state_equal(opt.max_exp_avg_sq, topt, ps, "max_exp_avg_sq", atol=1e-8)
    assert opt.steps == 100
    assert opt.param_steps == (100, 100, 0, 100, 100)
    if foreach:
        assert all(torch.equal(getattr(m, n), p.detach()) for n, p in zip(FLOATING, ps))


@pytest.mark.parametrize("kw", [{"lr": 0.01}, {"lr": 0.01, "weight_decay": 0.3}, {"lr": 0.02, "amsgrad": True}])
def test_adamw_equals_torch_optim_over_100_steps(kw):
    m, opt, ps, topt = run_side_by_side(
        lambda m: rt.AdamW(m, **kw), lambda ps: torch.optim.AdamW(ps, foreach=True, **kw)
    )
    assert_params_equal(m, ps)
    assert all(torch.equal(getattr(m, n), p.detach()) for n, p in zip(FLOATING, ps))
    assert_state_equal(opt.exp_avg, topt, ps, "exp_avg")
    assert_state_equal(opt.exp_avg_sq, topt, ps, "exp_avg_sq", atol=1e-8)


def test_adamw_is_not_adam_with_weight_decay():
    kw = {"lr": 0.01, "weight_decay": 0.3}
    a, *_ = run_side_by_side(lambda m: rt.Adam(m, **kw), lambda ps: torch.optim.Adam(ps, **kw), steps=10)
    w, *_ = run_side_by_side(lambda m: rt.AdamW(m, **kw), lambda ps: torch.optim.AdamW(ps, **kw), steps=10)
    assert not torch.allclose(a.w1, w.w1)


@pytest.mark.parametrize(
    "make_rt, make_torch",
    [
        (lambda m: rt.SGD(m, lr=0.05, momentum=0.9), lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9)),
        (lambda m: rt.Adam(m, lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01)),
        (lambda m: rt.AdamW(m, lr=0.01), lambda ps: torch.optim.AdamW(ps, lr=0.01)),
    ],
    ids=["SGD", "Adam", "AdamW"],
)
def test_changing_lr_midway_equals_setting_the_param_group_lr(make_rt, make_torch):
    m, opt, ps, _ = run_side_by_side(make_rt, make_torch, steps=60, lr_at=(30, 0.002))
    assert_params_equal(m, ps)
    assert opt.lr == 0.002
    unchanged, *_ = run_side_by_side(make_rt, make_torch, steps=60)
    assert not torch.allclose(unchanged.w1, m.w1)


def test_defaults_are_torch_optims():
    for ours, theirs in ((rt.SGD, torch.optim.SGD), (rt.Adam, torch.optim.Adam), (rt.AdamW, torch.optim.AdamW)):
        mine = inspect.signature(ours).parameters
        torch_params = inspect.signature(theirs).parameters
        for name, p in mine.items():
            if name in ("m", "groups"):  # groups: the param groups (runtime/_optim_groups.py)
                continue
            assert p.default == torch_params[name].default, (ours.__name__, name)


# --- hyper-params and state ---------------------------------------------------------------


def test_hyper_params_are_readable_and_lr_settable():
    m = Net.init(seed=0)
    sgd = rt.SGD(m, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)
    assert (sgd.lr, sgd.momentum, sgd.dampening, sgd.weight_decay, sgd.nesterov) == (0.1, 0.9, 0.1, 0.01, False)
    adam = rt.Adam(m, lr=1, betas=(0.8, 0.9), eps=1e-6, weight_decay=0, amsgrad=True)
    assert (adam.lr, adam.betas, adam.eps, adam.weight_decay, adam.amsgrad) == (1.0, (0.8, 0.9), 1e-6, 0.0, True)
    assert type(adam.lr) is float and type(adam.weight_decay) is float
    adam.lr = torch.tensor(0.25)
    assert adam.lr == 0.25 and type(adam.lr) is float
    adam.lr = 3
    assert adam.lr == 3.0 and type(adam.lr) is float
    assert rt.AdamW(m).weight_decay == 0.01
    assert adam.model is m


def test_repr_shows_the_kind_the_model_and_the_hyper_params():
    m = Net.init(seed=0)
    assert repr(rt.Adam(m)) == (
        "Adam[Net](lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0, amsgrad=False, steps=0)"
    )
    assert repr(rt.SGD(m, lr=0.1, momentum=0.9)) == (
        "SGD[Net](lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, steps=0)"
    )
    assert repr(rt.AdamW(m)).startswith("AdamW[Net](lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01,")


def test_state_reads_as_gradients_of_the_model_zeros_before_the_first_step():
    m = Net.init(seed=0)
    adam = rt.Adam(m)
    sgd = rt.SGD(m, momentum=0.9)
    for g in (adam.exp_avg, adam.exp_avg_sq, sgd.momentum_buffer):
        assert isinstance(g, rt.Grad) and g._qv_model is Net
        assert tuple(g.keys()) == Net._qv_param_names
        for n, t in g.items():
            assert t.shape == getattr(m, n).shape and t.dtype == getattr(m, n).dtype
            assert not t.any()
    assert adam.steps == 0 and sgd.steps == 0
    # the state is a snapshot: a later step does not change a gradient read before
    before = adam.exp_avg
    adam.step(m, rt.grad(net_loss, m, batches(1)[0]))
    assert not before.w1.any() and adam.exp_avg.w1.any()
    assert adam.steps == 1


def test_a_step_leaves_no_grad_and_runs_outside_autograd():
    m = Net.init(seed=0)
    opt = rt.Adam(m, lr=0.1)
    g = rt.grad(net_loss, m, batches(1)[0])
    opt.step(m, g)
    for p in m._qv_tensors:
        assert p.grad is None and not p.requires_grad and p.grad_fn is None
    with torch.enable_grad():
        opt.step(m, g)
    assert torch.is_grad_enabled()
    assert all(p.grad_fn is None for p in m._qv_tensors)


def test_a_gradient_of_another_instance_of_the_class_is_accepted():
    m, other = Net.init(seed=0), Net.init(seed=1)
    opt = rt.SGD(m, lr=0.5)
    g = rt.grad(net_loss, other, batches(1)[0])
    w1 = m.w1.clone()
    opt.step(m, g)
    assert torch.allclose(m.w1, w1 - 0.5 * g.w1)


def test_integer_params_and_buffers_are_not_stepped():
    m = Net.init(seed=0)
    opt = rt.SGD(m, lr=1.0, weight_decay=0.5)
    opt.step(m, rt.grad(net_loss, m, batches(1)[0]))
    assert torch.equal(m.count, torch.full((2,), 7)) and int(m.seen) == 0


# --- a gradient of a selection of the params --------------------------------------------


def selection(g, names):
    """``g`` restricted to ``names``: a gradient of a selection of the params,
    as value_and_grad(..., wrt=names) gives one."""
    s = rt.Grad(Net, {n: g[n] for n in names}, wrt=names)
    assert s._qv_leaf_index == tuple(Net._qv_param_names.index(n) for n in names)
    return s


@pytest.mark.parametrize(
    "make_rt, make_torch, keys",
    [
        (
            lambda m: rt.SGD(m, lr=0.05, momentum=0.9, dampening=0.2),
            lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.2),
            ("momentum_buffer",),
        ),
        (lambda m: rt.Adam(m, lr=0.01), lambda ps: torch.optim.Adam(ps, lr=0.01), ("exp_avg", "exp_avg_sq")),
        (
            lambda m: rt.AdamW(m, lr=0.01, amsgrad=True),
            lambda ps: torch.optim.AdamW(ps, lr=0.01, amsgrad=True),
            ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"),
        ),
    ],
    ids=["SGD", "Adam", "AdamW"],
)
def test_a_selection_steps_only_its_params_as_torch_with_grad_none(make_rt, make_torch, keys):
    m = Net.init(seed=0)
    ps = torch_twin(m)
    opt, topt = make_rt(m), make_torch(ps)
    # steps alternate: everything, then only w1 and v (the rest has grad None in torch)
    for i, x in enumerate(batches(40)):
        _, g = rt.value_and_grad(net_loss, m, x)
        grads = torch.autograd.grad(core(*ps, x), ps)
        if i % 3 == 1:
            opt.step(m, selection(g, ("w1", "v")))
            for n, p, gr in zip(FLOATING, ps, grads):
                p.grad = gr if n in ("w1", "v") else None
        else:
            opt.step(m, g)
            for p, gr in zip(ps, grads):
                p.grad = gr
        topt.step()
    assert_params_equal(m, ps)
    for key in keys:
        assert_state_equal(getattr(opt, key), topt, ps, key, atol=1e-7)
    if isinstance(opt, rt.Adam):
        counts = dict(zip(Net._qv_param_names, opt.param_steps))
        assert counts == {n: int(topt.state[p]["step"]) for n, p in zip(FLOATING, ps)} | {"count": 0}
        assert counts["w1"] == 40 and counts["b1"] < 40
    assert opt.steps == 40


def test_a_selection_before_the_first_full_step_leaves_the_others_untouched():
    m = Net.init(seed=0)
    before = m.state_dict()
    opt = rt.Adam(m, lr=0.1)
    opt.step(m, selection(rt.grad(net_loss, m, batches(1)[0]), ("b1",)))
    after = m.state_dict()
    assert not torch.equal(before["b1"], after["b1"])
    for n in ("w1", "w2", "v", "count"):
        assert torch.equal(before[n], after[n]), n
    assert not opt.exp_avg.w1.any() and opt.exp_avg.b1.any()
    assert opt.param_steps == (0, 1, 0, 0, 0)


def test_a_selection_skips_integer_params():
    m = Net.init(seed=0)
    opt = rt.SGD(m, lr=0.5, momentum=0.9)
    g = rt.grad(net_loss, m, batches(1)[0])
    before = m.state_dict()
    opt.step(m, selection(g, ("count", "w2")))
    assert torch.equal(m.count, before["count"]) and torch.allclose(m.w2, before["w2"] - 0.5 * g.w2)
    assert torch.equal(opt.momentum_buffer.w2, g.w2) and not opt.momentum_buffer.w1.any()


def test_a_gradient_that_requires_grad_is_used_outside_autograd():
    m = Net.init(seed=0)
    values = {n: torch.full_like(getattr(m, n), 0.5, dtype=getattr(m, n).dtype) for n in Net._qv_param_names}
    values = {n: t.requires_grad_() if t.is_floating_point() else t for n, t in values.items()}
    opt = rt.Adam(m, lr=0.1, weight_decay=0.1)
    with torch.enable_grad():
        opt.step(m, rt.Grad(Net, values))
    assert all(not p.requires_grad and p.grad_fn is None for p in m._qv_tensors)
    assert not opt.exp_avg.w1.requires_grad


# --- refined element types ---------------------------------------------------------------


class Scaled(rt.Model):
    _qv_name = "Scaled"
    _qv_params = (rt.Field("scale", (2,), rt.nonneg, rt.init.fill(0.05)), rt.Field("w", (2,), rt.f32, rt.init.ones))


def test_a_step_that_breaks_a_refined_param_raises_and_keeps_its_values():
    m = Scaled.init(seed=0)
    opt = rt.SGD(m, lr=1.0)
    g = rt.Grad(Scaled, {"scale": torch.tensor([0.01, 1.0]), "w": torch.ones(2)})
    with pytest.raises(
        rt.OptimError,
        match=r"^SGD\[Scaled\]\.step would leave Scaled\.scale \(\[2\] NonNeg\) with values below 0",
    ):
        opt.step(m, g)
    assert torch.allclose(m.scale, torch.tensor([0.05, 0.05]))
    ok = rt.Grad(Scaled, {"scale": torch.tensor([0.01, 0.01]), "w": torch.ones(2)})
    opt.step(m, ok)
    assert torch.allclose(m.scale, torch.tensor([0.04, 0.04]))


# --- errors ---------------------------------------------------------------------------


def test_step_with_another_model_instance_is_an_error():
    m, other = Net.init(seed=0), Net.init(seed=1)
    opt = rt.Adam(m)
    g = rt.grad(net_loss, m, batches(1)[0])
    with pytest.raises(rt.OptimError, match=r"^Adam\[Net\]\.step: this optimizer was created for another Net instance"):
        opt.step(other, g)
    with pytest.raises(
        rt.OptimError, match=r"^Adam\[Net\]\.step: expected the model Net it was created for, found a model Other$"
    ):
        opt.step(Other.init(seed=0), g)
    with pytest.raises(rt.OptimError, match=r"found Int 3$"):
        opt.step(3, g)


def test_step_with_a_gradient_of_another_class_is_an_error():
    m = Net.init(seed=0)
    opt = rt.SGD(m)
    with pytest.raises(rt.OptimError, match=r"^SGD\[Net\]\.step: expected a Grad\[Net\], found Grad\[Other\]$"):
        opt.step(m, rt.Grad(Other, {"w": torch.ones(2)}))
    with pytest.raises(rt.OptimError, match=r"expected a Grad\[Net\], found a tensor \[4 3\] f32$"):
        opt.step(m, m.w1)

    class Twin(rt.Model):
        _qv_name = "Net"
        _qv_params = Net._qv_params

    twin = rt.grad(net_loss, Twin.init(seed=0), batches(1)[0])
    with pytest.raises(rt.OptimError, match=r"found Grad\[Net\] of another class of that name$"):
        opt.step(m, twin)


def test_a_gradient_of_the_wrong_shape_or_dtype_is_an_error():
    m = Net.init(seed=0)
    opt = rt.Adam(m)
    values = {n: torch.zeros_like(t) for n, t in m.state_dict().items() if n != "seen"}
    for name, bad, text in (
        ("w1", torch.zeros(3, 4), r"\[3 4\] f32"),
        ("v", torch.zeros(2), r"\[2\] f32"),
    ):
        with pytest.raises(
            rt.OptimError,
            match=rf"^Adam\[Net\]\.step: the gradient's field {name} is a tensor {text}, but Net\.{name} is ",
        ):
            opt.step(m, rt.Grad(Net, values | {name: bad}))
    assert opt.steps == 0 and opt.param_steps == (0, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda m: rt.SGD(m, lr=-0.1), r"^SGD\[Net\]: invalid learning rate -0.1 \(it must be >= 0\)$"),
        (lambda m: rt.SGD(m, momentum=-1), r"^SGD\[Net\]: invalid momentum -1.0"),
        (lambda m: rt.SGD(m, weight_decay=-1e-3), r"^SGD\[Net\]: invalid weight_decay -0.001"),
        (lambda m: rt.SGD(m, nesterov=True), r"^SGD\[Net\]: Nesterov momentum requires a momentum and zero dampening"),
        (
            lambda m: rt.SGD(m, momentum=0.9, dampening=0.1, nesterov=True),
            r"requires a momentum and zero dampening \(momentum=0.9, dampening=0.1\)$",
        ),
        (lambda m: rt.SGD(m, lr="fast"), r"^SGD\[Net\]: learning rate must be a number, found a Python str$"),
        (lambda m: rt.SGD(m, nesterov=1), r"^SGD\[Net\]: nesterov must be True or False, found Int 1$"),
        (lambda m: rt.Adam(m, lr=-1), r"^Adam\[Net\]: invalid learning rate -1.0"),
        (lambda m: rt.Adam(m, lr=float("nan")), r"^Adam\[Net\]: invalid learning rate nan"),
        (lambda m: rt.Adam(m, eps=-1), r"^Adam\[Net\]: invalid epsilon -1.0"),
        (
            lambda m: rt.Adam(m, betas=(1.0, 0.9)),
            r"^Adam\[Net\]: invalid beta parameter at index 0: 1.0 \(it must be >= 0 and < 1\)$",
        ),
        (lambda m: rt.Adam(m, betas=(0.9, -0.1)), r"^Adam\[Net\]: invalid beta parameter at index 1: -0.1"),
        (lambda m: rt.Adam(m, betas=0.9), r"^Adam\[Net\]: betas must be a pair of numbers, found Float 0.9$"),
        (lambda m: rt.AdamW(m, weight_decay=-0.01), r"^AdamW\[Net\]: invalid weight_decay -0.01"),
        (lambda m: rt.AdamW(m, amsgrad=None), r"^AdamW\[Net\]: amsgrad must be True or False, found nothing \(None\)$"),
    ],
)
def test_bad_hyper_params_are_errors(make, message):
    with pytest.raises(rt.OptimError, match=message):
        make(Net.init(seed=0))


def test_lr_set_to_a_bad_value_and_other_attributes_are_errors():
    opt = rt.Adam(Net.init(seed=0))
    with pytest.raises(rt.OptimError, match=r"^Adam\[Net\]: invalid learning rate -0.5 \(it must be >= 0\)$"):
        opt.lr = -0.5
    assert opt.lr == 0.001
    with pytest.raises(
        rt.OptimError, match=r"^cannot set 'betas' of Adam\[Net\]: only lr can be changed after creation$"
    ):
        opt.betas = (0.5, 0.5)  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(rt.OptimError, match=r"^Adam\[Net\] has no max_exp_avg_sq: it was created with amsgrad=False$"):
        opt.max_exp_avg_sq  # noqa: B018


def test_an_optimizer_needs_a_model_instance():
    with pytest.raises(rt.OptimError, match=r"^rt\.Adam\(m, \.\.\.\) needs a model instance, found a Python type$"):
        rt.Adam(Net)
    with pytest.raises(rt.OptimError, match=r"^rt\.SGD\(m, \.\.\.\) needs a model instance, found a tensor \[2\] f32$"):
        rt.SGD(torch.zeros(2))


# --- the argument spec --------------------------------------------------------------------


def test_optim_arg_checks_the_kind_and_the_model_class():
    sig = rt.Signature(None, "train", None, [rt.OptimArg("opt", rt.Adam, Net)])
    m = Net.init(seed=0)
    sig.check(rt.Adam(m))
    assert repr(sig) == "Signature(train: opt: Adam[Net])"
    for value, found in (
        (rt.SGD(m), r"SGD\[Net\]"),
        (rt.AdamW(m), r"AdamW\[Net\]"),
        (rt.Adam(Other.init(seed=0)), r"Adam\[Other\]"),
        (m, r"model Net"),
        (None, r"nothing \(None\)"),
    ):
        with pytest.raises(rt.CheckError, match=rf"^train\(\): argument 'opt' expected Adam\[Net\], found {found}$"):
            sig.check(value)

    class Twin(rt.Model):
        _qv_name = "Net"
        _qv_params = Net._qv_params

    with pytest.raises(rt.CheckError, match=r"found Adam\[Net\] of another class of that name"):
        sig.check(rt.Adam(Twin.init(seed=0)))
    with pytest.raises(TypeError, match="OptimArg kind must be rt.SGD, rt.Adam or rt.AdamW"):
        rt.OptimArg("opt", torch.optim.Adam, Net)


def test_describe_shows_an_optimizer_as_kind_and_model():
    from quiver.runtime._specs import describe

    assert describe(rt.SGD(Net.init(seed=0))) == "SGD[Net]"
    sig = rt.Signature(None, "f", None, [rt.ModelArg("m", Net)])
    with pytest.raises(rt.CheckError, match=r"expected model Net, found AdamW\[Net\]$"):
        sig.check(rt.AdamW(Net.init(seed=0)))


def test_the_optimizer_benchmark_runs(capsys):
    import importlib.util
    import os
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location(
        "quiver_bench_runtime_optim", os.path.join(root, "bench", "runtime.py")
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.run_optim(reps=2, warmup=1, block=2, out=sys.stdout)
    out = capsys.readouterr().out
    assert "quiver Adam / torch Adam (foreach)" in out
    assert set(result["sizes"]) == {"784-512-10", "8-8-10"}
    for size in result["sizes"].values():
        assert all(r > 0 for r in size["paired_ratios"].values())


def test_a_whole_gradient_steps_with_the_lists_built_at_creation(monkeypatch):
    # the fast path: no per-step list building for a gradient of every param
    m = Net.init(seed=0)
    opt = rt.Adam(m, lr=0.1)
    g = rt.grad(net_loss, m, batches(1)[0])

    def rebuilt(*args, **kwargs):
        raise AssertionError("the state lists were rebuilt for a whole gradient")

    monkeypatch.setattr(rt.Adam, "_qv_lists", rebuilt)
    opt.step(m, g)
    opt.step(m, g)
    assert opt.steps == 2
