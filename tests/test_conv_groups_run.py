"""dilation= and groups= of conv2d, conv1d and conv_transpose2d compiled and
run against torch's F.conv2d, F.conv1d and F.conv_transpose2d: values, the
sizes the checker computed, and the gradients of the input and the kernels,
in f32 and f64; given as literals and as a layer's own dims."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

import quiver

SRC = """
fn depthwise(x: [b 6 h v]{f}, k: [6 1 3 3]{f}) -> [b 6 h v]{f}:
    return conv2d(x, k, padding=1, groups=6)

fn dilated(x: [b 4 h v]{f}, k: [6 2 3 3]{f}, c: [6]{f}) -> [b 6 ((h+2*1-2*(3-1)-1)/2+1) ((v-3)/2+1)]{f}:
    return conv2d(x, k, c, stride=2, padding=1, dilation=2, groups=2)

fn seq(x: [b 4 l]{f}, k: [6 2 3]{f}) -> [b 6 (l-6)]{f}:
    return conv1d(x, k, dilation=3, groups=2)

fn up(x: [b 4 h v]{f}, k: [4 3 3 3]{f}, c: [6]{f}) -> [b 6 ((h-1)*2-2+2*2+1+1) (2*v+2)]{f}:
    return conv_transpose2d(x, k, c, stride=2, padding=1, output_padding=1, groups=2, dilation=2)

model Layer[I, O, K, dilation = 1, groups = 1]:
    param weight: [O (I/groups) K K]{f} = normal(0.0, 1.0)

    fn forward(self, x: [b I h v]{f}) -> [b O (h-dilation*(K-1)) (v-dilation*(K-1))]{f}:
        return conv2d(x, self.weight, dilation=dilation, groups=groups)

fn make(seed: Int) -> Layer[8, 4, 3, dilation=2, groups=4]:
    return Layer[8, 4, 3, dilation=2, groups=4].init(seed=seed)

fn apply(m: Layer[8, 4, 3, dilation=2, groups=4], x: [b 8 9 10]{f}) -> [b 4 5 6]{f}:
    return m(x)
"""


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    path = tmp_path_factory.mktemp("conv_groups") / "groups.qv"
    path.write_text(textwrap.dedent(SRC).replace("{f}", "" if dt == torch.float32 else " f64"), encoding="utf-8")
    return quiver.load(str(path)), dt


def _against(fn, ref, *args) -> None:
    """fn(*args) equals ref(*args), and so do the gradients of every argument."""
    tol = {"rtol": 1e-5, "atol": 1e-6} if args[0].dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-13}
    mine = [a.clone().requires_grad_(True) for a in args]
    theirs = [a.clone().requires_grad_(True) for a in args]
    got, want = fn(*mine), ref(*theirs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, **tol)
    w = torch.randn(want.shape, generator=torch.Generator().manual_seed(7), dtype=want.dtype)
    (got * w).sum().backward()
    (want * w).sum().backward()
    for a, b in zip(mine, theirs):
        assert a.grad is not None and b.grad is not None
        torch.testing.assert_close(a.grad, b.grad, **tol)


def test_grouped_and_dilated_convolutions_like_torch(env) -> None:
    mod, dt = env
    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=dt)

    _against(mod.depthwise, lambda x, k: F.conv2d(x, k, padding=1, groups=6), r(2, 6, 5, 7), r(6, 1, 3, 3))
    _against(
        mod.dilated,
        lambda x, k, c: F.conv2d(x, k, c, stride=2, padding=1, dilation=2, groups=2),
        r(2, 4, 9, 8),
        r(6, 2, 3, 3),
        r(6),
    )
    assert mod.dilated(r(2, 4, 9, 8), r(6, 2, 3, 3), r(6)).shape == (2, 6, 4, 3)
    _against(mod.seq, lambda x, k: F.conv1d(x, k, dilation=3, groups=2), r(3, 4, 11), r(6, 2, 3))
    _against(
        mod.up,
        lambda x, k, c: F.conv_transpose2d(x, k, c, stride=2, padding=1, output_padding=1, groups=2, dilation=2),
        r(2, 4, 3, 5),
        r(4, 3, 3, 3),
        r(6),
    )
    assert mod.up(r(2, 4, 3, 5), r(4, 3, 3, 3), r(6)).shape == (2, 6, 8, 12)


def test_a_layers_own_groups_and_dilation(env) -> None:
    mod, dt = env
    m = mod.make(0)
    assert m.weight.shape == (4, 2, 3, 3) and m.weight.dtype == dt
    x = torch.randn(2, 8, 9, 10, generator=torch.Generator().manual_seed(1), dtype=dt)
    _against(lambda x: mod.apply(m, x), lambda x: F.conv2d(x, m.weight, dilation=2, groups=4), x)


def test_the_checkers_dilated_sizes_are_torchs() -> None:
    # for numbers, for a generic h, and for a layer's dims (then substituted)
    from quiver.checker import dimexpr as DX
    from quiver.checker import types as T
    from quiver.checker.builtins.conv import _out_size, _transposed_size

    names = ("h", "k", "s", "p", "d")
    for size in range(1, 10):
        for k in range(1, 4):
            for s in range(1, 3):
                for p in range(0, 3):
                    for d in range(1, 4):
                        env = dict(zip(names, (DX.const(v) for v in (size, k, s, p, d))))
                        lits = T.DimLit(k), T.DimLit(s), T.DimLit(p), T.DimLit(d)
                        fixed = _out_size(T.DimLit(size), *lits)
                        layer = _out_size(*(T.DimVar(n) for n in names))
                        assert layer is not None and (poly := T.dim_poly(layer)) is not None
                        at_layer = DX.value(DX.substitute(poly, env) or ())
                        if size + 2 * p < d * (k - 1) + 1:
                            assert fixed is None, (size, k, s, p, d)
                        else:
                            x, w = torch.zeros(1, 1, size), torch.zeros(1, 1, k)
                            want = F.conv1d(x, w, stride=s, padding=p, dilation=d).shape[-1]
                            assert fixed == T.DimLit(want) and at_layer == want, (size, k, s, p, d)
                        for op in range(0, max(s, d)):
                            got = _transposed_size(
                                T.DimLit(size), T.DimLit(k), T.DimLit(s), T.DimLit(p), T.DimLit(op), T.DimLit(d)
                            )
                            want = (size - 1) * s - 2 * p + d * (k - 1) + op + 1
                            if want < 1:
                                assert got is None
                                continue
                            x, w = torch.zeros(1, 1, size, size), torch.zeros(1, 1, k, k)
                            out = F.conv_transpose2d(x, w, stride=s, padding=p, output_padding=op, dilation=d)
                            assert got == T.DimLit(out.shape[-1]), (size, k, s, p, op, d)
