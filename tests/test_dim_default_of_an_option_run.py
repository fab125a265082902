"""A model dim whose default reads a Bool option, as 1 when True and 0 when
False (`num_directions = 1 + bidirectional`, torch's `num_directions = 2 if
bidirectional else 1`): the checker types each instance with the number its
options give, wherever the option stands in the header, the runtime builds
the same instance (from Quiver and from Python), and a default that reads a
Float option is E0912."""

from __future__ import annotations

import textwrap

import torch
from annotations import spanned

import quiver

SRC = """
model Twin[I, H, D = 1 + bidirectional, bias: Bool = True, bidirectional: Bool = False]:
    param w: [D I H] = ones

    fn forward(self, x: [b I]) -> [b (D*H)]:
        return reshape(permute(x @ self.w, [b D H]), [b (D*H)])

fn both(m: Twin[3, 4, bidirectional=True], x: [b 3]) -> [b 8]:
    return m(x)

fn one(m: Twin[3, 4], x: [b 3]) -> [b 4]:
    return m(x)

fn given(m: Twin[3, 4, D=3], x: [b 3]) -> [b 12]:
    return m(x)

fn make_both(seed: Int) -> Twin[3, 4, bidirectional=True]:
    return Twin[3, 4, bidirectional=True].init(seed=seed)

fn make_one(seed: Int) -> Twin[3, 4, bias=False]:
    return Twin[3, 4, bias=False].init(seed=seed)
"""


def test_a_default_that_reads_a_bool_option_checks_and_runs(tmp_path) -> None:
    assert spanned(textwrap.dedent(SRC)) == []
    path = tmp_path / "twin.qv"
    path.write_text(textwrap.dedent(SRC), encoding="utf-8")
    mod = quiver.load(str(path))
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    m = mod.make_both(0)
    assert tuple(m.w.shape) == (2, 3, 4)
    torch.testing.assert_close(mod.both(m, x), x.sum(1, keepdim=True).expand(2, 8))
    assert tuple(mod.make_one(0).w.shape) == (1, 3, 4)
    # from Python: the option given by name computes the dim, as the checker does
    assert mod.Twin.of(3, 4, bidirectional=True) is type(m)
    assert tuple(mod.Twin.of(3, 4).init(seed=0).w.shape) == (1, 3, 4)
    # the dim given outright wins, as any default is only a default
    assert tuple(mod.Twin.of(3, 4, D=3).init(seed=0).w.shape) == (3, 3, 4)


def test_a_model_of_defaults_only_reads_its_options_default(tmp_path) -> None:
    # `Flags.init(...)`, torch's `Flags()`: the options' defaults give the dim
    src = "model Flags[D = 1 + on, on: Bool = True]:\n    param w: [D] = ones\n\nfn make() -> Flags[2]:\n    return Flags.init(seed=0)\n"
    assert spanned(src) == []
    path = tmp_path / "flags.qv"
    path.write_text(src, encoding="utf-8")
    assert tuple(quiver.load(str(path)).make().w.shape) == (2,)


def test_the_instance_type_has_the_options_number() -> None:
    src = textwrap.dedent(SRC) + "\nfn wrong(m: Twin[3, 4, bidirectional=True], x: [b 3]) -> [b 4]:\n    return m(x)\n"
    assert spanned(src) == [("E0201", "return value: expected [b 4], found [b 8]", "m(x)")]


def test_a_default_may_not_read_a_float_option() -> None:
    src = "model Bad[I, D = 1 + eps, eps: Float = 0.5]:\n    param w: [D I] = zeros\n"
    assert spanned(src) == [
        (
            "E0912",
            "the default of dim D must be a whole number, a dim before it, a Bool option (1 when True), or "
            "+ - * // % of those, as in D = 1 or D = K // 2 (found 1 + eps)",
            "1 + eps",
        )
    ]
