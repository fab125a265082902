"""The adaptive pools and interpolate (torch's F.adaptive_avg_pool2d,
F.adaptive_max_pool2d, F.interpolate) and the layers of nn made of them
(AdaptiveAvgPool2d, AdaptiveMaxPool2d, Upsample, UpsamplingNearest2d,
UpsamplingBilinear2d) against torch, values and gradients in f32 and f64;
the checker's errors for their misuse (E0952)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from nn_library import LIBRARY
from parity import close, load

from quiver.checker.workspace import check_example

SOURCE = """
import nn

dim N = 2
dim C = 3
dim H = 5
dim W = 7
dim L = 6

fn avg23(x: [N C H W]{f}) -> [N C 2 3]{f}:
    return adaptive_avg_pool2d(x, (2, 3))

fn avg_up(x: [N C H W]{f}) -> [N C 8 9]{f}:
    return adaptive_avg_pool2d(x, (8, 9))

fn avg_unbatched(x: [C H W]{f}) -> [C 3 3]{f}:
    return adaptive_avg_pool2d(x, 3)

fn max4(x: [N C H W]{f}) -> [N C 4 4]{f}:
    return adaptive_max_pool2d(x, 4)

fn max13(x: [N C H W]{f}) -> [N C 1 3]{f}:
    return adaptive_max_pool2d(x, (1, 3))

fn nearest2(x: [N C H W]{f}) -> [N C (H*2) (W*2)]{f}:
    return interpolate(x, scale_factor=2)

fn nearest_size(x: [N C H W]{f}) -> [N C 8 3]{f}:
    return interpolate(x, size=(8, 3))

fn nearest1(x: [N C L]{f}) -> [N C 11]{f}:
    return interpolate(x, size=11, mode="nearest")

fn linear1(x: [N C L]{f}) -> [N C (L*3)]{f}:
    return interpolate(x, scale_factor=3, mode="linear")

fn bilinear(x: [N C H W]{f}) -> [N C 9 4]{f}:
    return interpolate(x, size=(9, 4), mode="bilinear")

fn bilinear_corners(x: [N C H W]{f}) -> [N C (H*2) (W*2)]{f}:
    return interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)

fn l_avg(x: [N C H W]{f}) -> [N C 1 1]{f}:
    return nn.AdaptiveAvgPool2d[1{o}].init(seed=0)(x)

fn l_avg2(x: [N C H W]{f}) -> [N C 3 2]{f}:
    return nn.AdaptiveAvgPool2d[3, 2{o}].init(seed=0)(x)

fn l_max(x: [N C H W]{f}) -> [N C 2 2]{f}:
    return nn.AdaptiveMaxPool2d[2{o}].init(seed=0)(x)

fn l_up(x: [N C H W]{f}) -> [N C (H*2) (W*2)]{f}:
    return nn.Upsample[2{o}].init(seed=0)(x)

fn l_up_bilinear(x: [N C H W]{f}) -> [N C (H*3) (W*3)]{f}:
    return nn.Upsample[3, bilinear=True{o}].init(seed=0)(x)

fn l_up_corners(x: [N C H W]{f}) -> [N C (H*2) (W*2)]{f}:
    return nn.Upsample[2, bilinear=True, align_corners=True{o}].init(seed=0)(x)

fn l_nearest(x: [N C H W]{f}) -> [N C (H*2) (W*2)]{f}:
    return nn.UpsamplingNearest2d[2{o}].init(seed=0)(x)

fn l_bilinear(x: [N C H W]{f}) -> [N C (H*2) (W*2)]{f}:
    return nn.UpsamplingBilinear2d[2{o}].init(seed=0)(x)
"""

IMG, SEQ = (2, 3, 5, 7), (2, 3, 6)
CASES = {
    "avg23": (IMG, lambda x: F.adaptive_avg_pool2d(x, (2, 3))),
    "avg_up": (IMG, lambda x: F.adaptive_avg_pool2d(x, (8, 9))),
    "avg_unbatched": ((3, 5, 7), lambda x: F.adaptive_avg_pool2d(x, 3)),
    "max4": (IMG, lambda x: F.adaptive_max_pool2d(x, 4)),
    "max13": (IMG, lambda x: F.adaptive_max_pool2d(x, (1, 3))),
    "nearest2": (IMG, lambda x: F.interpolate(x, scale_factor=2)),
    "nearest_size": (IMG, lambda x: F.interpolate(x, size=(8, 3))),
    "nearest1": (SEQ, lambda x: F.interpolate(x, size=11, mode="nearest")),
    "linear1": (SEQ, lambda x: F.interpolate(x, scale_factor=3, mode="linear")),
    "bilinear": (IMG, lambda x: F.interpolate(x, size=(9, 4), mode="bilinear")),
    "bilinear_corners": (IMG, lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)),
    "l_avg": (IMG, lambda x: torch.nn.AdaptiveAvgPool2d(1)(x)),
    "l_avg2": (IMG, lambda x: torch.nn.AdaptiveAvgPool2d((3, 2))(x)),
    "l_max": (IMG, lambda x: torch.nn.AdaptiveMaxPool2d(2)(x)),
    "l_up": (IMG, lambda x: torch.nn.Upsample(scale_factor=2)(x)),
    "l_up_bilinear": (IMG, lambda x: torch.nn.Upsample(scale_factor=3, mode="bilinear")(x)),
    "l_up_corners": (IMG, lambda x: torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(x)),
    "l_nearest": (IMG, lambda x: torch.nn.UpsamplingNearest2d(scale_factor=2)(x)),
    "l_bilinear": (IMG, lambda x: torch.nn.UpsamplingBilinear2d(scale_factor=2)(x)),
}


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SOURCE.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("resample")), dt


@pytest.mark.parametrize("name", list(CASES))
def test_resampling_matches_torch(env, name: str) -> None:
    mod, dt = env
    shape, ref = CASES[name]
    gen = torch.Generator().manual_seed(len(name))
    x = torch.randn(shape, generator=gen, dtype=dt)
    xq = x.clone().requires_grad_(True)
    xt = x.clone().requires_grad_(True)
    got, want = getattr(mod, name)(xq), ref(xt)
    close(got, want, "forward")
    w = torch.randn(want.shape, generator=gen, dtype=dt)
    (got * w).sum().backward()
    (want * w).sum().backward()
    assert xq.grad is not None and xt.grad is not None
    close(xq.grad, xt.grad, "grad of x")


# --- the checker ----------------------------------------------------------------------

HEADER = "import nn\n\ndim N = 2\ndim C = 3\ndim H = 8\ndim W = 8\n\n"

MISUSE = {
    "corners": (
        "fn f(x: [N C H W]) -> [N C 16 16]:\n    return interpolate(x, scale_factor=2, align_corners=True)\n",
        "E0952",
        "align_corners=True",
        'interpolate: align_corners= is for the modes that interpolate ("linear", "bilinear"), not "nearest"',
    ),
    "both": (
        "fn f(x: [N C H W]) -> [N C 16 16]:\n    return interpolate(x, size=16, scale_factor=2)\n",
        "E0952",
        "scale_factor=2",
        "interpolate: give size= or scale_factor=, not both",
    ),
    "neither": (
        "fn f(x: [N C H W]) -> [N C H W]:\n    return interpolate(x)\n",
        "E0952",
        "interpolate(x)",
        "interpolate: give the new size, size= or scale_factor=",
    ),
    "sizes": (
        "fn f(x: [N C H W]) -> [N C 16 16]:\n    return interpolate(x, size=(16, 16, 16))\n",
        "E0952",
        "(16, 16, 16)",
        "interpolate: size has 3 sizes, where 1 or 2 fit",
    ),
    "pool_sizes": (
        "fn f(x: [N C H W]) -> [N C 1 1]:\n    return adaptive_avg_pool2d(x, (1, 1, 1))\n",
        "E0952",
        "(1, 1, 1)",
        "adaptive_avg_pool2d: output_size has 3 sizes, where 1 or 2 fit",
    ),
    "bilinear_rank": (
        'fn f(x: [N C H]) -> [N C 16]:\n    return interpolate(x, scale_factor=2, mode="bilinear")\n',
        "E0210",
        "x",
        'interpolate needs [b C H W] for mode "bilinear", found [N C H]',
    ),
    "pool_rank": (
        "fn f(x: [N H]) -> [N 1 1]:\n    return adaptive_max_pool2d(x, 1)\n",
        "E0210",
        "x",
        "adaptive_max_pool2d needs 3 or 4 dims ([C H W] or [b C H W]), found [N H]",
    ),
    "layer_size": (
        "fn f(x: [N C H W]) -> [N C 2 2]:\n    return nn.AdaptiveAvgPool2d[1].init(seed=0)(x)\n",
        "E0201",
        "nn.AdaptiveAvgPool2d[1].init(seed=0)(x)",
        "return value: expected [N C 2 2], found [N C 1 1]",
    ),
    "upsample_size": (
        "fn f(x: [N C H W]) -> [N C 16 24]:\n    return nn.Upsample[2].init(seed=0)(x)\n",
        "E0201",
        "nn.Upsample[2].init(seed=0)(x)",
        "return value: expected [N C 16 24], found [N C 16 (W*2)=16]",
    ),
}


@pytest.mark.parametrize("case", list(MISUSE))
def test_a_misuse_is_one_diagnostic_at_its_place(case: str) -> None:
    body, code, underlined, message = MISUSE[case]
    analysis = check_example(HEADER + body, LIBRARY)
    text = analysis.text
    diags = [(d.code, d.message, text[d.span.start : d.span.end]) for d in analysis.diagnostics if d.code != "W0103"]
    assert diags == [(code, message, underlined)], diags
