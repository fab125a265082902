"""einsum and rearrange compiled and run against torch: values and gradients
(f32 and f64) against torch.einsum and a hand-written reshape + permute,
SimpleViT's patch embedding, and the run-time check of a split that the
checker could not prove exact."""

from __future__ import annotations

import textwrap

import pytest
import torch

import quiver
from quiver import runtime as rt

SRC = """
dim C = 3
dim IMG = 32
dim PATCH = 8
dim E = 16

fn attn(q: [b n d], k: [b m d]) -> [b n m]:
    return einsum("b n d, b m d -> b n m", q, k)

fn attn64(q: [b n d] f64, k: [b m d] f64) -> [b n m] f64:
    return einsum("b n d, b m d -> b n m", q, k)

fn mix(w: [h n m], v: [b m h d]) -> [b h n d]:
    return einsum("head n m, batch m head d -> batch head n d", w, v)

fn summed(x: [b n d]) -> [b d]:
    return einsum("b n d -> b d", x)

fn diagonal(x: [n n]) -> [n]:
    return einsum("i i -> i", x)

fn outer(a: [i], c: [j]) -> [i j]:
    return einsum("i, j -> i j", a, c)

fn dot3(a: [n], c: [n], e: [n]) -> []:
    return einsum("n, n, n ->", a, c, e)

fn to_channels_last(x: [b c h w]) -> [b h w c]:
    return rearrange(x, "b c h w -> b h w c")

fn flat(x: [b c h w] f64) -> [b (c*h*w)] f64:
    return rearrange(x, "b c h w -> b (c h w)")

fn heads(x: [b t (4*hd)]) -> [b 4 t hd]:
    return rearrange(x, "b t (nh hd) -> b nh t hd", nh=4)

fn split_n(x: [b w], p: Int) -> [b w]:
    y = rearrange(x, "b (h p) -> b p h", p=p)
    return reshape(y, [b w])

fn fold(x: [b n]) -> [b (n/4) 4]:
    return rearrange(x, "b (h p) -> b h p", p=4)

fn fold_back(x: [b n]) -> [b n]:
    return rearrange(x, "b (h p) -> b (p h)", p=4)

fn patches(img: [b C IMG IMG]) -> [b ((IMG/PATCH)*(IMG/PATCH)) (PATCH*PATCH*C)]:
    return rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=PATCH, p2=PATCH)

fn patches64(img: [b C IMG IMG] f64) -> [b 16 192] f64:
    return rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=PATCH, p2=PATCH)

fn embed(img: [b C IMG IMG], w: [(PATCH*PATCH*C) E]) -> [b 16 E]:
    return rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=PATCH, p2=PATCH) @ w

fn batched(q: [.. n d], k: [.. m d]) -> [.. n m]:
    return einsum("... n d, ... m d -> ... n m", q, k)

fn batched64(q: [.. n d] f64, k: [m d] f64) -> [.. n m] f64:
    return einsum("... n d, m d -> ... n m", q, k)

fn pairs(x: [.. (2*d)]) -> [.. 2 d]:
    return rearrange(x, "... (h p) -> ... p h", p=2)

fn sequence(x: [b c h w]) -> [b (h*w) c]:
    return rearrange(x, "b c h w -> b (h w) c")
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("einsum") / "einsum.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def _r(*shape: int, dtype=torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _same(ours, theirs, *xs: torch.Tensor, exact: bool = True) -> None:
    """The same values, and the same gradients of sum(y * w) for each input."""
    outs = []
    for f in (ours, theirs):
        leaves = [x.clone().requires_grad_() for x in xs]
        y = f(*leaves)
        w = torch.linspace(-1.0, 2.0, y.numel(), dtype=y.dtype).reshape(y.shape)
        grads = torch.autograd.grad((y * w).sum(), leaves)
        outs.append((y.detach(), grads))
    (y, gs), (y_ref, gs_ref) = outs
    assert y.dtype == y_ref.dtype == xs[0].dtype
    assert y.shape == y_ref.shape
    tol = {"rtol": 0, "atol": 0} if exact else {}
    torch.testing.assert_close(y, y_ref, **tol)
    for g, g_ref in zip(gs, gs_ref):
        torch.testing.assert_close(g, g_ref, **tol)


def test_einsum_like_torch_with_gradients(mod) -> None:
    q, k = _r(2, 3, 4), _r(2, 5, 4, seed=1)
    _same(mod.attn, lambda a, c: torch.einsum("bnd,bmd->bnm", a, c), q, k)
    q64, k64 = q.double(), k.double()
    _same(mod.attn64, lambda a, c: torch.einsum("bnd,bmd->bnm", a, c), q64, k64)
    w, v = _r(2, 3, 5, seed=2), _r(4, 5, 2, 6, seed=3)
    _same(mod.mix, lambda a, c: torch.einsum("hnm,bmhd->bhnd", a, c), w, v)
    _same(mod.summed, lambda a: torch.einsum("bnd->bd", a), _r(2, 3, 4))
    _same(mod.diagonal, lambda a: torch.einsum("ii->i", a), _r(4, 4))
    _same(mod.outer, lambda a, c: torch.einsum("i,j->ij", a, c), _r(3), _r(5, seed=1))
    _same(mod.dot3, lambda a, c, e: torch.einsum("n,n,n->", a, c, e), _r(6), _r(6, seed=1), _r(6, seed=2))


def test_rearrange_like_reshape_and_permute_with_gradients(mod) -> None:
    x = _r(2, 3, 4, 5)
    _same(mod.to_channels_last, lambda t: t.permute(0, 2, 3, 1), x)
    _same(mod.flat, lambda t: t.reshape(2, 60), x.double())
    _same(mod.sequence, lambda t: t.reshape(2, 3, 20).permute(0, 2, 1), x)
    y = _r(2, 3, 12)
    _same(mod.heads, lambda t: t.reshape(2, 3, 4, 3).permute(0, 2, 1, 3), y)
    z = _r(3, 12)
    _same(lambda t: mod.split_n(t, 3), lambda t: t.reshape(3, 4, 3).permute(0, 2, 1).reshape(3, 12), z)
    _same(mod.fold, lambda t: t.reshape(3, 3, 4), z)
    _same(mod.fold_back, lambda t: t.reshape(3, 3, 4).permute(0, 2, 1).reshape(3, 12), z)


def test_leading_dims_of_any_rank_like_torch_with_gradients(mod) -> None:
    for lead in [(), (2,), (2, 3)]:
        q, k = _r(*lead, 4, 5), _r(*lead, 6, 5, seed=1)
        _same(mod.batched, lambda a, c: torch.einsum("...nd,...md->...nm", a, c), q, k)
        _same(mod.batched64, lambda a, c: torch.einsum("...nd,md->...nm", a, c), q.double(), _r(6, 5).double())
        x = _r(*lead, 3, 8)
        _same(mod.pairs, lambda t: t.reshape(*t.shape[:-1], 4, 2).transpose(-1, -2), x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_simplevit_patch_embedding_like_torch(mod, dtype) -> None:
    # SimpleViT: Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)") on a [b 3 32 32] image, patches of 8
    img = _r(2, 3, 32, 32, dtype=dtype)

    def theirs(x: torch.Tensor) -> torch.Tensor:
        b, c, hh, ww = x.shape
        h, w = hh // 8, ww // 8
        return x.reshape(b, c, h, 8, w, 8).permute(0, 2, 4, 3, 5, 1).reshape(b, h * w, 8 * 8 * c)

    _same(mod.patches if dtype == torch.float32 else mod.patches64, theirs, img)
    if dtype == torch.float32:
        w = _r(192, 16, seed=5)
        _same(mod.embed, lambda x, m: theirs(x) @ m, img, w, exact=False)


def test_a_split_not_proved_exact_is_checked_when_it_runs(mod) -> None:
    with pytest.raises(
        rt.CheckError,
        match=r"rearrange\(\): argument 'x' expected 24 elements \(\[b \(n/4\) 4\] = \[3 2 4\]\), found \[3 10\]",
    ):
        mod.fold(_r(3, 10))
    with pytest.raises(rt.CheckError, match=r"splits a dim of 10 by 3"):
        mod.split_n(_r(3, 10), 3)


VIT = """
import nn

dim C = 3
dim IMG = 32
dim PATCH = 8
dim PD = PATCH * PATCH * C
dim E = 24

model PatchEmbedding:
    param norm1: nn.LayerNorm[PD]
    param proj: nn.Linear[PD, E]
    param norm2: nn.LayerNorm[E]

    fn forward(self, img: [b C IMG IMG]) -> [b 16 E]:
        x = rearrange(img, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=PATCH, p2=PATCH)
        return self.norm2(self.proj(self.norm1(x)))

fn make(seed: Int) -> PatchEmbedding:
    return PatchEmbedding.init(seed=seed)

fn embed(m: PatchEmbedding, img: [b C IMG IMG]) -> [b 16 E]:
    return m(img)
"""


def test_simplevit_to_patch_embedding_like_torch(tmp_path) -> None:
    # SimpleViT's to_patch_embedding: Rearrange, LayerNorm(patch_dim), Linear(patch_dim, dim), LayerNorm(dim)
    path = tmp_path / "vit.qv"
    path.write_text(textwrap.dedent(VIT))
    vit = quiver.load(str(path))
    m = vit.make(0)
    ref = torch.nn.Sequential(torch.nn.LayerNorm(192), torch.nn.Linear(192, 24), torch.nn.LayerNorm(24))
    with torch.no_grad():
        ref[0].weight.copy_(m.norm1.weight)
        ref[0].bias.copy_(m.norm1.bias)
        ref[1].weight.copy_(m.proj.weight.T)  # Quiver keeps [I O], torch [O I]
        ref[1].bias.copy_(m.proj.bias)
        ref[2].weight.copy_(m.norm2.weight)
        ref[2].bias.copy_(m.norm2.bias)

    def theirs(x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        return ref(x.reshape(b, 3, 4, 8, 4, 8).permute(0, 2, 4, 3, 5, 1).reshape(b, 16, 192))

    _same(lambda x: vit.embed(m, x), theirs, _r(2, 3, 32, 32), exact=False)
