"""Distributions compiled and run against torch.distributions: log_prob,
entropy and kl_divergence values and gradients (f32 and f64), seeded
samples bit-equal to torch's own `sample`/`rsample` after
`torch.manual_seed(seed)` (the same generator calls), reproducible and of
the right distribution; a REINFORCE policy-gradient step and a VAE's
reparameterised sample with its KL term, each compared with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.distributions as D

import quiver
from quiver import runtime as rt

SRC = """
dim K = 4
dim F = 3
dim Z = 2

fn cat_lp(x: [b K], y: [b] Index[K]) -> [b]:
    return Categorical(logits=x).log_prob(y)

fn cat_lp64(x: [b K] f64, y: [b] Index[K]) -> [b] f64:
    return Categorical(logits=x).log_prob(y)

fn cat_probs_lp(x: [b K], y: [b] Index[K]) -> [b]:
    return Categorical(softmax(x, over=K)).log_prob(y)

fn cat_ent(x: [b K]) -> [b] NonNeg:
    return Categorical(logits=x).entropy()

fn cat_ent64(x: [b K] f64) -> [b] f64:
    return Categorical(probs=softmax(x, over=K)).entropy()

fn cat_sample(x: [b K], s: Int) -> [b] Index[K]:
    return Categorical(logits=x).sample(seed=s)

fn cat_kl(x: [b K] f64, y: [b K] f64) -> [b] f64:
    return kl_divergence(Categorical(logits=x), Categorical(logits=y))

fn normal_lp(mu: [b Z], ls: [Z], v: [b Z]) -> [b Z]:
    return Normal(mu, exp(ls)).log_prob(v)

fn normal_lp64(mu: [b Z] f64, ls: [Z] f64, v: [b Z] f64) -> [b Z] f64:
    return Normal(mu, exp(ls)).log_prob(v)

fn normal_ent(ls: [b Z] f64) -> [b Z] f64:
    return Normal(0.0, exp(ls)).entropy()

fn normal_sample(mu: [b Z], ls: [Z], s: Int) -> [b Z]:
    return Normal(mu, exp(ls)).sample(seed=s)

fn normal_rsample(mu: [b Z] f64, ls: [b Z] f64, s: Int) -> [b Z] f64:
    return Normal(mu, exp(ls)).rsample(seed=s)

fn normal_kl(mu: [b Z], ls: [b Z]) -> [b Z] NonNeg:
    return kl_divergence(Normal(mu, exp(ls)), Normal(0.0, 1.0))

fn std_kl64(mu: [b Z] f64, ls: [b Z] f64) -> [b Z] f64:
    return kl_divergence(Normal(mu, exp(ls)), Normal(0.0, 1.0))

fn std_lp64(v: [b Z] f64) -> [b Z] f64:
    return Normal(0, 1).log_prob(v)

fn bern_lp(x: [b Z], v: [b Z]) -> [b Z]:
    return Bernoulli(logits=x).log_prob(v)

fn bern_probs_lp64(x: [b Z] f64, v: [b Z] f64) -> [b Z] f64:
    return Bernoulli(sigmoid(x)).log_prob(v)

fn bern_ent(x: [b Z] f64) -> [b Z] f64:
    return Bernoulli(logits=x).entropy()

fn bern_sample(x: [b Z], s: Int) -> [b Z] Prob:
    return Bernoulli(logits=x).sample(seed=s)

fn bern_kl(x: [b Z], y: [b Z]) -> [b Z] NonNeg:
    return kl_divergence(Bernoulli(logits=x), Bernoulli(probs=sigmoid(y)))

fn fields(x: [b K], mu: [b Z], ls: [Z]) -> ([b K] Prob, [b K], [b Z], [b Z] NonNeg, [b Z] NonNeg):
    d = Categorical(logits=x)
    n = Normal(mu, exp(ls))
    return d.probs, d.logits, n.loc, n.scale, Bernoulli(logits=mu).variance

# REINFORCE: a linear policy over K actions, one step of plain gradient descent
model Policy:
    param w: [F K] = normal(0.0, 0.5)
    param b: [K] = zeros

fn pg_loss(m: Policy, obs: [n F], actions: [n] Index[K], returns: [n]) -> []:
    d = Categorical(logits=obs @ m.w + m.b)
    return -mean(d.log_prob(actions) * returns)

fn act(m: Policy, obs: [n F], s: Int) -> [n] Index[K]:
    return Categorical(logits=obs @ m.w + m.b).sample(seed=s)

fn pg_step(mut m: Policy, obs: [n F], actions: [n] Index[K], returns: [n], lr: Float) -> []:
    l, g = value_and_grad(pg_loss, m, obs, actions, returns)
    m.w = m.w - lr * g.w
    m.b = m.b - lr * g.b
    return l

fn pg_one(m: Policy, obs: [F], action: [] Index[K], ret: []) -> []:
    d = Categorical(logits=obs @ m.w + m.b)
    return -(d.log_prob(action) * ret) - 0.01 * d.entropy()

fn pg_per_example(m: Policy, obs: [n F], actions: [n] Index[K], returns: [n]) -> ([n], [n] NonNeg):
    l, g = value_and_grad(pg_one, m, obs, actions, returns, batch=n)
    return l, norm(g)

# A VAE's latent: an encoder's mean and log-variance, a reparameterised draw, the KL to N(0, 1)
model Vae:
    param enc: [F (2*Z)] = normal(0.0, 0.5)
    param dec: [Z F] = normal(0.0, 0.5)

fn vae_loss(m: Vae, x: [n F], s: Int) -> []:
    h = x @ m.enc
    mu = h[:, :Z]
    lv = h[:, Z:]
    q = Normal(mu, exp(0.5 * lv))
    z = q.rsample(seed=s)
    recon = sum((z @ m.dec - x) * (z @ m.dec - x))
    return recon + sum(kl_divergence(q, Normal(0.0, 1.0)))
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("dists") / "dists.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def _r(*shape, dtype=torch.float32, seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _same(ours, theirs, xs: list[torch.Tensor], *rest) -> None:
    """Equal values, and equal gradients of sum(f * w) for the float inputs `xs`."""
    a = [x.clone().requires_grad_() for x in xs]
    b = [x.clone().requires_grad_() for x in xs]
    y, y_ref = ours(*a, *rest), theirs(*b, *rest)
    assert y.dtype == y_ref.dtype == xs[0].dtype and y.shape == y_ref.shape
    torch.testing.assert_close(y, y_ref, rtol=0, atol=0)
    w = torch.linspace(-1.0, 2.0, y.numel(), dtype=y.dtype).reshape(y.shape)
    g = torch.autograd.grad((y * w).sum(), a)
    g_ref = torch.autograd.grad((y_ref * w).sum(), b)
    for got, want in zip(g, g_ref, strict=True):
        torch.testing.assert_close(got, want)


LABELS = torch.tensor([0, 3, 1, 2, 3])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_categorical_log_prob_and_entropy_like_torch(mod, dtype) -> None:
    x = _r(5, 4, dtype=dtype)
    if dtype == torch.float32:
        _same(mod.cat_lp, lambda t, y: D.Categorical(logits=t).log_prob(y), [x], LABELS)
        _same(mod.cat_probs_lp, lambda t, y: D.Categorical(t.softmax(-1)).log_prob(y), [x], LABELS)
        _same(mod.cat_ent, lambda t: D.Categorical(logits=t).entropy(), [x])
    else:
        _same(mod.cat_lp64, lambda t, y: D.Categorical(logits=t).log_prob(y), [x], LABELS)
        _same(mod.cat_ent64, lambda t: D.Categorical(probs=t.softmax(-1)).entropy(), [x])
        _same(
            mod.cat_kl,
            lambda p, q: D.kl_divergence(D.Categorical(logits=p), D.Categorical(logits=q)),
            [x, _r(5, 4, dtype=dtype, seed=1)],
        )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_normal_log_prob_entropy_and_kl_like_torch(mod, dtype) -> None:
    mu, ls, v = _r(5, 2, dtype=dtype), _r(2, dtype=dtype, seed=1), _r(5, 2, dtype=dtype, seed=2)
    ref = lambda m, s, x: D.Normal(m, s.exp()).log_prob(x)
    _same(mod.normal_lp if dtype == torch.float32 else mod.normal_lp64, ref, [mu, ls, v])
    if dtype == torch.float64:
        _same(mod.normal_ent, lambda s: D.Normal(0.0, s.exp()).entropy(), [_r(5, 2, dtype=dtype, seed=3)])
        std = lambda m, s: D.kl_divergence(D.Normal(m, s.exp()), D.Normal(0.0, 1.0))
        _same(mod.std_kl64, std, [mu, _r(5, 2, dtype=dtype, seed=3)])
        _same(mod.std_lp64, lambda x: D.Normal(0, 1).log_prob(x), [v])
    else:
        std = lambda m, s: D.kl_divergence(D.Normal(m, s.exp()), D.Normal(0.0, 1.0))
        _same(mod.normal_kl, std, [mu, _r(5, 2, seed=3)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bernoulli_log_prob_entropy_and_kl_like_torch(mod, dtype) -> None:
    x = _r(5, 2, dtype=dtype)
    v = (torch.arange(10).reshape(5, 2) % 3 == 0).to(dtype)
    if dtype == torch.float32:
        _same(mod.bern_lp, lambda t, y: D.Bernoulli(logits=t).log_prob(y), [x], v)
        kl = lambda p, q: D.kl_divergence(D.Bernoulli(logits=p), D.Bernoulli(probs=q.sigmoid()))
        _same(mod.bern_kl, kl, [x, _r(5, 2, seed=1)])
    else:
        _same(mod.bern_probs_lp64, lambda t, y: D.Bernoulli(t.sigmoid()).log_prob(y), [x], v)
        _same(mod.bern_ent, lambda t: D.Bernoulli(logits=t).entropy(), [x])


def test_fields_are_torchs(mod) -> None:
    x, mu, ls = _r(5, 4), _r(5, 2, seed=1), _r(2, seed=2)
    got = mod.fields(x, mu, ls)
    d, n = D.Categorical(logits=x), D.Normal(mu, ls.exp())
    want = (d.probs, d.logits, n.loc, n.scale, D.Bernoulli(logits=mu).variance)
    for a, b in zip(got, want, strict=True):
        assert torch.equal(a, b)


def test_samples_are_torchs_for_the_same_seed(mod) -> None:
    x = _r(64, 4)
    for s in (0, 7):
        torch.manual_seed(s)
        assert torch.equal(mod.cat_sample(x, s), D.Categorical(logits=x).sample())
        mu, ls = _r(64, 2, seed=1), _r(2, seed=2)
        torch.manual_seed(s)
        assert torch.equal(mod.normal_sample(mu, ls, s), D.Normal(mu, ls.exp()).sample())
        mu64, ls64 = mu.double(), _r(64, 2, dtype=torch.float64, seed=3)
        torch.manual_seed(s)
        assert torch.equal(mod.normal_rsample(mu64, ls64, s), D.Normal(mu64, ls64.exp()).rsample())
        torch.manual_seed(s)
        assert torch.equal(mod.bern_sample(x[:, :2], s), D.Bernoulli(logits=x[:, :2]).sample())
    # reproducible, and another seed another draw
    assert torch.equal(mod.cat_sample(x, 3), mod.cat_sample(x, 3))
    assert not torch.equal(mod.cat_sample(x, 3), mod.cat_sample(x, 4))
    assert mod.cat_sample(x, 3).dtype == torch.int64


def test_samples_follow_their_distribution(mod) -> None:
    # 20000 draws of one Categorical, one Normal, one Bernoulli: frequencies, mean and spread
    logits = torch.tensor([0.0, 1.0, -1.0, 0.5])
    drawn = mod.cat_sample(logits.expand(20000, 4).contiguous(), 11)
    freq = torch.bincount(drawn, minlength=4).double() / 20000
    torch.testing.assert_close(freq, logits.softmax(-1).double(), atol=0.015, rtol=0)
    z = mod.normal_sample(torch.full((10000, 2), 1.5), torch.tensor([0.0, -1.0]), 5)
    torch.testing.assert_close(z.mean(0), torch.tensor([1.5, 1.5]), atol=0.05, rtol=0)
    torch.testing.assert_close(z.std(0), torch.tensor([1.0, torch.e**-1]), atol=0.03, rtol=0)
    b = mod.bern_sample(torch.full((10000, 2), 0.8), 6)
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    torch.testing.assert_close(b.mean(0), torch.full((2,), torch.tensor(0.8).sigmoid().item()), atol=0.02, rtol=0)


def test_rsample_carries_gradients_to_loc_and_scale(mod) -> None:
    mu, ls = _r(3, 2, dtype=torch.float64), _r(3, 2, dtype=torch.float64, seed=1)

    def ref(m, s, seed):
        torch.manual_seed(seed)
        return D.Normal(m, s.exp()).rsample()

    _same(mod.normal_rsample, ref, [mu, ls], 9)


def test_reinforce_step_like_torch(mod) -> None:
    m = mod.Policy.init(seed=0)
    w, b = m.w.detach().clone().requires_grad_(), m.b.detach().clone().requires_grad_()
    obs = _r(8, 3, seed=4)
    actions = mod.act(m, obs, 1)
    torch.manual_seed(1)
    assert torch.equal(actions, D.Categorical(logits=obs @ w + b).sample())
    returns = torch.linspace(-1.0, 2.0, 8)
    loss = mod.pg_step(m, obs, actions, returns, 0.1)
    ref = -(D.Categorical(logits=obs @ w + b).log_prob(actions) * returns).mean()
    opt = torch.optim.SGD([w, b], lr=0.1)
    ref.backward()
    opt.step()
    torch.testing.assert_close(loss, ref.detach())
    torch.testing.assert_close(m.w, w.detach())
    torch.testing.assert_close(m.b, b.detach())


def test_vae_reparameterised_loss_and_gradients_like_torch(mod) -> None:
    m = mod.Vae.init(seed=0)
    x = _r(6, 3, seed=5)
    value, g = rt.value_and_grad(mod.vae_loss, m, x, 2)
    enc, dec = m.enc.detach().clone().requires_grad_(), m.dec.detach().clone().requires_grad_()
    h = x @ enc
    q = D.Normal(h[:, :2], (0.5 * h[:, 2:]).exp())
    torch.manual_seed(2)
    z = q.rsample()
    ref = ((z @ dec - x) ** 2).sum() + D.kl_divergence(q, D.Normal(0.0, 1.0)).sum()
    ge, gd = torch.autograd.grad(ref, [enc, dec])
    torch.testing.assert_close(value, ref.detach())
    torch.testing.assert_close(g.enc, ge)
    torch.testing.assert_close(g.dec, gd)


def test_per_example_gradients_of_log_prob_like_a_loop_in_torch(mod) -> None:
    m = mod.Policy.init(seed=1)
    obs, actions, returns = _r(5, 3, seed=6), torch.tensor([0, 3, 1, 1, 2]), torch.linspace(-1.0, 1.0, 5)
    losses, norms = mod.pg_per_example(m, obs, actions, returns)
    for i in range(5):
        w, b = m.w.detach().clone().requires_grad_(), m.b.detach().clone().requires_grad_()
        d = D.Categorical(logits=obs[i] @ w + b)
        ref = -(d.log_prob(actions[i]) * returns[i]) - 0.01 * d.entropy()
        gw, gb = torch.autograd.grad(ref, [w, b])
        torch.testing.assert_close(losses[i], ref.detach())
        torch.testing.assert_close(norms[i], torch.cat([gw.flatten(), gb]).norm())
