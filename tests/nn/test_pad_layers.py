"""pad's modes (torch's F.pad: "constant", "reflect", "replicate",
"circular") and the padding layers of nn (ZeroPad2d, ConstantPad2d,
ReflectionPad2d, ReplicationPad2d and their 1d twins) against torch, values and gradients in f32 and f64; the
checker's errors for a mode's misuse (E0951)."""

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
dim H = 4
dim W = 5
dim D = 3

fn reflect1(x: [N C W]{f}) -> [N C (W+3)]{f}:
    return pad(x, (2, 1), mode="reflect")

fn reflect1_unbatched(x: [C W]{f}) -> [C (W+4)]{f}:
    return pad(x, (2, 2), mode="reflect")

fn reflect2(x: [N C H W]{f}) -> [N C (H+3) (W+2)]{f}:
    return pad(x, (1, 1, 3, 0), mode="reflect")

fn replicate2(x: [N C H W]{f}) -> [N C (H+7) (W+1)]{f}:
    return pad(x, (0, 1, 5, 2), mode="replicate")

fn replicate3(x: [N C D H W]{f}) -> [N C (D+2) (H+1) (W+2)]{f}:
    return pad(x, (1, 1, 1, 0, 1, 1), mode="replicate")

fn circular2(x: [N C H W]{f}) -> [N C (H+4) (W+3)]{f}:
    return pad(x, (2, 1, 4, 0), mode="circular")

fn constant2(x: [N C H W]{f}) -> [N C (H+2) (W+2)]{f}:
    return pad(x, (1, 1, 1, 1), mode="constant", value=0.5)

fn zero(x: [N C H W]{f}) -> [N C (H+2) (W+2)]{f}:
    return nn.ZeroPad2d[1{o}].init(seed=0)(x)

fn zero4(x: [N C H W]{f}) -> [N C (H+3) (W+2)]{f}:
    return nn.ZeroPad2d[2, 0, 1, 2{o}].init(seed=0)(x)

fn reflection(x: [N C H W]{f}) -> [N C (H+6) (W+6)]{f}:
    return nn.ReflectionPad2d[3{o}].init(seed=0)(x)

fn reflection4(x: [N C H W]{f}) -> [N C (H+3) (W+5)]{f}:
    return nn.ReflectionPad2d[1, 4, 0, 3{o}].init(seed=0)(x)

fn replication(x: [N C H W]{f}) -> [N C (H+4) (W+4)]{f}:
    return nn.ReplicationPad2d[2{o}].init(seed=0)(x)

fn replication4(x: [N C H W]{f}) -> [N C (H+6) (W+1)]{f}:
    return nn.ReplicationPad2d[0, 1, 6, 0{o}].init(seed=0)(x)

fn constant(x: [N C H W]{f}) -> [N C (H+2) (W+2)]{f}:
    return nn.ConstantPad2d[1, value=2.5{o}].init(seed=0)(x)

fn constant4(x: [N C H W]{f}) -> [N C (H+1) (W+3)]{f}:
    return nn.ConstantPad2d[3, 0, 0, 1, value=0.5{o}].init(seed=0)(x)

fn zero1(x: [N C W]{f}) -> [N C (W+4)]{f}:
    return nn.ZeroPad1d[2{o}].init(seed=0)(x)

fn constant1(x: [N C W]{f}) -> [N C (W+1)]{f}:
    return nn.ConstantPad1d[0, 1, value=3.0{o}].init(seed=0)(x)

fn reflection1(x: [N C W]{f}) -> [N C (W+7)]{f}:
    return nn.ReflectionPad1d[4, 3{o}].init(seed=0)(x)

fn replication1(x: [N C W]{f}) -> [N C (W+12)]{f}:
    return nn.ReplicationPad1d[6{o}].init(seed=0)(x)
"""

# name -> (input shape, torch's function of x)
CASES = {
    "reflect1": ((2, 3, 5), lambda x: F.pad(x, (2, 1), mode="reflect")),
    "reflect1_unbatched": ((3, 5), lambda x: F.pad(x, (2, 2), mode="reflect")),
    "reflect2": ((2, 3, 4, 5), lambda x: F.pad(x, (1, 1, 3, 0), mode="reflect")),
    "replicate2": ((2, 3, 4, 5), lambda x: F.pad(x, (0, 1, 5, 2), mode="replicate")),
    "replicate3": ((2, 3, 3, 4, 5), lambda x: F.pad(x, (1, 1, 1, 0, 1, 1), mode="replicate")),
    "circular2": ((2, 3, 4, 5), lambda x: F.pad(x, (2, 1, 4, 0), mode="circular")),
    "constant2": ((2, 3, 4, 5), lambda x: F.pad(x, (1, 1, 1, 1), mode="constant", value=0.5)),
    "zero": ((2, 3, 4, 5), lambda x: torch.nn.ZeroPad2d(1)(x)),
    "zero4": ((2, 3, 4, 5), lambda x: torch.nn.ZeroPad2d((2, 0, 1, 2))(x)),
    "reflection": ((2, 3, 4, 5), lambda x: torch.nn.ReflectionPad2d(3)(x)),
    "reflection4": ((2, 3, 4, 5), lambda x: torch.nn.ReflectionPad2d((1, 4, 0, 3))(x)),
    "replication": ((2, 3, 4, 5), lambda x: torch.nn.ReplicationPad2d(2)(x)),
    "replication4": ((2, 3, 4, 5), lambda x: torch.nn.ReplicationPad2d((0, 1, 6, 0))(x)),
    "constant": ((2, 3, 4, 5), lambda x: torch.nn.ConstantPad2d(1, 2.5)(x)),
    "constant4": ((2, 3, 4, 5), lambda x: torch.nn.ConstantPad2d((3, 0, 0, 1), 0.5)(x)),
    "zero1": ((2, 3, 5), lambda x: torch.nn.ZeroPad1d(2)(x)),
    "constant1": ((2, 3, 5), lambda x: torch.nn.ConstantPad1d((0, 1), 3.0)(x)),
    "reflection1": ((2, 3, 5), lambda x: torch.nn.ReflectionPad1d((4, 3))(x)),
    "replication1": ((2, 3, 5), lambda x: torch.nn.ReplicationPad1d(6)(x)),
}


@pytest.fixture(scope="module", params=[torch.float32, torch.float64], ids=["f32", "f64"])
def env(request, tmp_path_factory):
    dt = request.param
    f, o = ("", "") if dt == torch.float32 else (" f64", ", dtype=f64")
    return load(SOURCE.replace("{f}", f).replace("{o}", o), tmp_path_factory.mktemp("pad")), dt


@pytest.mark.parametrize("name", list(CASES))
def test_pad_modes_and_layers_match_torch(env, name: str) -> None:
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

MISUSE = {
    "too_wide": (
        'fn f(x: [N C H W]) -> [N C H (W+8)]:\n    return pad(x, (4, 4, 0, 0), mode="reflect")\n',
        "4",
        'pad: mode "reflect" pads by 4 a dim of size 4: each size must be below the size of its dim',
    ),
    "circular": (
        'fn f(x: [N C H W]) -> [N C (H+5) W]:\n    return pad(x, (0, 0, 5, 0), mode="circular")\n',
        "5",
        'pad: mode "circular" pads by 5 a dim of size 4: each size must be at most the size of its dim',
    ),
    "value": (
        'fn f(x: [N C H W]) -> [N C H (W+2)]:\n    return pad(x, (1, 1, 0, 0), mode="replicate", value=1.0)\n',
        "value=1.0",
        'pad: mode "replicate" takes its values from x: it takes no value= (only mode "constant" does)',
    ),
    "rank": (
        'fn f(x: [N C H W]) -> [N C H (W+2)]:\n    return pad(x, (1, 1), mode="reflect")\n',
        "(1, 1)",
        'pad: mode "reflect" with 1 pair of sizes pads a tensor of 2 or 3 dims (channels, or a batch and '
        "channels, before the padded ones), found [N C H W]",
    ),
    "bool": (
        'fn f(x: [N C H W] Bool) -> [N C H (W+2)] Bool:\n    return pad(x, (1, 1, 0, 0), mode="reflect")\n',
        "x",
        'pad: mode "reflect" does not pad Bool tensors (torch has no such kernel), found [N C H W] Bool',
    ),
}

HEADER = "import nn\n\ndim N = 2\ndim C = 3\ndim H = 4\ndim W = 4\n\n"


@pytest.mark.parametrize("case", list(MISUSE))
def test_a_modes_misuse_is_one_diagnostic_at_its_place(case: str) -> None:
    body, underlined, message = MISUSE[case]
    analysis = check_example(HEADER + body.replace("import nn", ""), LIBRARY)
    text = analysis.text
    diags = [(d.code, d.message, text[d.span.start : d.span.end]) for d in analysis.diagnostics if d.code != "W0103"]
    assert diags == [("E0951", message, underlined)], diags


def test_an_unknown_mode_is_named_with_the_four() -> None:
    analysis = check_example(HEADER + 'fn f(x: [N C H W]):\n    print(pad(x, (1, 1, 0, 0), mode="wrap"))\n', LIBRARY)
    got = [(d.code, d.message) for d in analysis.diagnostics if d.code != "W0103"]
    want = 'mode of pad: expected "constant", "reflect", "replicate" or "circular" (a string literal), found "wrap"'
    assert got == [("E0301", want)], got


def test_a_padding_layer_gives_its_size_in_its_type() -> None:
    # left 1, right 1, top 2, bottom 0: [N C (H+2) (W+2)], not (H+3)
    good = "fn f(x: [N C H W]) -> [N C (H+2) (W+2)]:\n    return nn.ReflectionPad2d[1, 1, 2, 0].init(seed=0)(x)\n"
    assert [d.code for d in check_example(HEADER + good, LIBRARY).diagnostics] == []
    bad = good.replace("(H+2)", "(H+3)")
    analysis = check_example(HEADER + bad, LIBRARY)
    text = analysis.text
    got = [(d.code, d.message, text[d.span.start : d.span.end]) for d in analysis.diagnostics]
    want = "return value: expected [N C (H+3)=7 (W+2)=6], found [N C 6 (W+2)=6]"
    assert got == [("E0201", want, "nn.ReflectionPad2d[1, 1, 2, 0].init(seed=0)(x)")], got
