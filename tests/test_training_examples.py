"""examples/finetune.qv, dpsgd.qv and maml.qv compute what the same training
written by hand in PyTorch computes (issue 12): a frozen encoder with the head
stepped by torch.optim.Adam, DP-SGD from torch.func per-example gradients, and
second-order MAML through torch.autograd.grad(create_graph=True)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.func import grad, vmap

import quiver
from quiver import runtime as rt

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    return quiver.load(str(ROOT / "examples" / f"{name}.qv"))


def _close(ours, ref, what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    torch.testing.assert_close(ours.detach(), ref.detach(), rtol=rtol, atol=atol, msg=lambda s: f"{what}: {s}")


# ------------------------------------------------------------------ fine-tuning


def _classifier_logits(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = torch.relu(x @ p["enc.w1"] + p["enc.b1"])
    h = torch.relu(h @ p["enc.w2"] + p["enc.b2"])
    return h @ p["head"] + p["head_bias"]


def test_finetune_trains_the_head_only_and_equals_torch_adam() -> None:
    mod = _load("finetune")
    m = mod.Classifier.init(seed=0)
    names = ["enc.w1", "enc.b1", "enc.w2", "enc.b2", "head", "head_bias"]
    p = {n: m.state_dict()[n].clone().requires_grad_(True) for n in names}
    assert torch.equal(p["enc.w1"], m.enc.w1)
    # pretraining: every param, Adam against torch.optim.Adam
    opt = rt.Adam(m, lr=0.01)
    ref = torch.optim.Adam(list(p.values()), lr=0.01)
    gen = torch.Generator().manual_seed(0)
    for step in range(10):
        x = torch.randn(32, 16, generator=gen)
        y = mod.teacher(x, 1000)
        ours = mod.pretrain_step(m, opt, x, y)
        ref.zero_grad()
        hand = F.cross_entropy(_classifier_logits(p, x), y)
        hand.backward()
        ref.step()
        _close(ours, hand, f"pretrain loss {step}")
    for n in names:
        _close(m.state_dict()[n], p[n], n)
    # fine-tuning: wrt=[head, head_bias]; torch.optim.Adam over the head alone
    encoder = {n: m.state_dict()[n].clone() for n in names[:4]}
    tune = rt.Adam(m, lr=0.01)
    head = [p["head"], p["head_bias"]]
    ref = torch.optim.Adam(head, lr=0.01)
    for step in range(10):
        x = torch.randn(32, 16, generator=gen)
        y = mod.teacher(x, 2000)
        ours = mod.finetune_step(m, tune, x, y)
        ref.zero_grad()
        hand = F.cross_entropy(_classifier_logits({**p, **{n: encoder[n] for n in names[:4]}}, x), y)
        hand.backward()
        ref.step()
        _close(ours, hand, f"fine-tune loss {step}")
    for n in names[:4]:
        assert torch.equal(m.state_dict()[n], encoder[n]), f"{n} changed while frozen"
    _close(m.head, p["head"], "head")
    _close(m.head_bias, p["head_bias"], "head_bias")
    assert not m.enc.w1.requires_grad and not m.head.requires_grad


def test_the_finetune_gradient_has_only_the_selected_fields() -> None:
    mod = _load("finetune")
    m = mod.Classifier.init(seed=1)
    x = torch.randn(8, 16)
    _, g = rt.value_and_grad(mod.loss, m, x, mod.teacher(x, 3), wrt=("head", "head_bias"))
    assert list(g.keys()) == ["head", "head_bias"]
    with pytest.raises(AttributeError, match="not selected"):
        _ = g.enc


# ------------------------------------------------------------------ DP-SGD


def _mlp_logits(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def test_dp_sgd_equals_torch_func_per_example_clipping() -> None:
    mod = _load("dpsgd")
    m = mod.Mlp.init(seed=0)
    names = ["w1", "b1", "w2", "b2"]
    p = {n: getattr(m, n).detach().clone() for n in names}
    lr, clip, sigma = 0.5, 1.0, 1.1

    def example_loss(params, x, y):
        return F.cross_entropy(_mlp_logits(params, x[None]), y[None])

    for step in range(5):
        x = torch.randn(64, 20, generator=torch.Generator().manual_seed(step))
        y = mod.labels(x)
        ours = mod.dp_step(m, x, y, lr, clip, sigma, 500 + step)
        per = vmap(grad(example_loss), in_dims=(None, 0, 0))(p, x, y)
        norms = torch.sqrt(sum((per[n].reshape(64, -1) ** 2).sum(1) for n in names))
        scale = torch.clamp(clip / (norms + 1e-6), max=1.0)
        gen = torch.Generator().manual_seed(500 + step)  # randn(Grad[Mlp], seed=s): leaves in order
        noise = {n: torch.randn(p[n].shape, generator=gen) for n in names}
        with torch.no_grad():
            for n in names:
                g = (scale.reshape(-1, *[1] * (per[n].dim() - 1)) * per[n]).mean(0) + noise[n] * (sigma * clip / 64)
                p[n] = p[n] - lr * g
        assert ours.dim() == 0
        for n in names:
            _close(getattr(m, n), p[n], f"step {step}: {n}", rtol=1e-5, atol=1e-6)


def test_per_example_losses_and_norms_match_torch_func() -> None:
    mod = _load("dpsgd")
    m = mod.Mlp.init(seed=3)
    x = torch.randn(16, 20)
    y = mod.labels(x)
    ls, gs = rt.value_and_grad(mod.example_loss, m, x, y, batch=(0, 0))
    p = {n: getattr(m, n).detach() for n in ["w1", "b1", "w2", "b2"]}

    def example_loss(params, xi, yi):
        return F.cross_entropy(_mlp_logits(params, xi[None]), yi[None])

    ref = vmap(grad(example_loss), in_dims=(None, 0, 0))(p, x, y)
    for n in p:
        _close(getattr(gs, n), ref[n], n)
    ref_norms = torch.sqrt(sum((ref[n].reshape(16, -1) ** 2).sum(1) for n in p))
    _close(rt.norm(gs), ref_norms, "per-example norms")
    _close(ls, torch.stack([example_loss(p, x[i], y[i]) for i in range(16)]), "per-example losses")


# ------------------------------------------------------------------ MAML


def _sine_predict(p: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    w1, b1, w2, b2, w3, b3 = p
    h = torch.relu(x @ w1 + b1)
    h = torch.relu(h @ w2 + b2)
    return h @ w3 + b3


def _adapted_loss(p, xs, ys, xq, yq, alpha):
    inner = F.mse_loss(_sine_predict(p, xs), ys)
    g = torch.autograd.grad(inner, p, create_graph=True)
    return F.mse_loss(_sine_predict([a - alpha * b for a, b in zip(p, g)], xq), yq)


def test_the_maml_meta_gradient_is_second_order_and_equals_torch() -> None:
    mod = _load("maml")
    m = mod.Net.init(seed=0)
    names = ["w1", "b1", "w2", "b2", "w3", "b3"]
    p = [getattr(m, n).detach().clone().requires_grad_(True) for n in names]
    xs, ys, xq, yq = mod.task(7)
    value, meta = rt.value_and_grad(mod.adapted_loss, m, xs, ys, xq, yq, 0.01)
    hand = _adapted_loss(p, xs, ys, xq, yq, 0.01)
    ref = torch.autograd.grad(hand, p)
    _close(value, hand, "meta-loss")
    for n, r in zip(names, ref):
        _close(getattr(meta, n), r, f"meta-gradient {n}")
    # the second-order term matters: first-order MAML (inner gradient detached) differs
    inner = F.mse_loss(_sine_predict(p, xs), ys)
    g = [t.detach() for t in torch.autograd.grad(inner, p)]
    first = torch.autograd.grad(F.mse_loss(_sine_predict([a - 0.01 * b for a, b in zip(p, g)], xq), yq), p)
    assert max((a - b).abs().max().item() for a, b in zip(ref, first)) > 1e-6


def test_maml_meta_steps_equal_torch_adam() -> None:
    mod = _load("maml")
    m = mod.Net.init(seed=0)
    names = ["w1", "b1", "w2", "b2", "w3", "b3"]
    p = [getattr(m, n).detach().clone().requires_grad_(True) for n in names]
    opt = rt.Adam(m, lr=0.001)
    ref = torch.optim.Adam(p, lr=0.001)
    for step in range(3):
        ours = mod.meta_step(m, opt, step)
        ref.zero_grad()
        losses = []
        for t in range(5):
            xs, ys, xq, yq = mod.task(1000 * step + 10 * t)
            losses.append(_adapted_loss(p, xs, ys, xq, yq, 0.01))
        total = torch.stack(losses).mean()
        total.backward()
        ref.step()
        _close(ours, total, f"meta-loss {step}")
    for n, r in zip(names, p):
        _close(getattr(m, n), r, n)
