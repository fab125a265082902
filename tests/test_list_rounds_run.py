"""A list appended to once per round of `for i in range(n)` with `n` an
`Int` (issue 40): time_sequence_prediction's `forward(input, future=0)`,
whose second loop runs `future` rounds, ported as written, `outputs +=
[output]` and `concat(outputs, over=1)` of `[b (T+future)]`. An Int parameter
that sizes the fn's types is that dim; any other Int is a size known when
it runs, checked where it meets a known one. Compared with the torch original."""

from __future__ import annotations

import textwrap

import pytest
import torch
from torch import nn

import quiver
from quiver import runtime as rt

SRC = """\
import nn

dim H = 51

model Sequence:
    param lstm1: nn.LSTMCell[1, H]
    param lstm2: nn.LSTMCell[H, H]
    param linear: nn.Linear[H, 1]

    fn forward(self, input: [b T], future: Int = 0) -> [b (T+future)]:
        outputs = []
        h_t = zeros([b H])
        c_t = zeros([b H])
        h_t2 = zeros([b H])
        c_t2 = zeros([b H])
        output = zeros([b 1])
        for t in range(T):
            h_t, c_t = self.lstm1(input[:, t:t + 1], (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return concat(outputs, over=1)

fn make() -> Sequence:
    return Sequence.init(seed=0)

fn predict(s: Sequence, input: [b T], future: Int) -> [b (T+future)]:
    return s(input, future)

# an Int that sizes nothing: the list's length is known when it runs
fn padded(x: [b 1], n: Int) -> [b 4]:
    parts = []
    for i in range(n):
        parts.append(x)
    return concat(parts, over=1)
"""


class _Sequence(nn.Module):
    """pytorch/examples time_sequence_prediction/train.py, as written there."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=input.dtype)
        c_t = torch.zeros(input.size(0), 51, dtype=input.dtype)
        h_t2 = torch.zeros(input.size(0), 51, dtype=input.dtype)
        c_t2 = torch.zeros(input.size(0), 51, dtype=input.dtype)
        output = None
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("rounds") / "seq.qv"
    path.write_text(textwrap.dedent(SRC))
    return quiver.load(str(path))


def _mirror(m) -> _Sequence:
    """The torch twin with the Quiver model's weights (a 2-D weight kept the
    other way round is transposed, whichever layout nn keeps)."""
    ref = _Sequence()
    theirs = ref.state_dict()
    ours = {k: v.detach() for k, v in m.state_dict().items()}
    ref.load_state_dict({k: v if v.shape == theirs[k].shape else v.t() for k, v in ours.items()})
    return ref


@pytest.mark.parametrize("future", [0, 1, 4])
def test_the_future_rounds_as_torchs(prog, future) -> None:
    m = prog.make()
    x = torch.randn(3, 7, generator=torch.Generator().manual_seed(future))
    out = prog.predict(m, x, future)
    assert out.shape == (3, 7 + future)
    torch.testing.assert_close(out, _mirror(m)(x, future).detach(), rtol=1e-5, atol=1e-6)


def test_a_length_from_an_int_is_checked_where_it_meets_a_known_size(prog) -> None:
    x = torch.ones(2, 1)
    assert torch.equal(prog.padded(x, 4), torch.ones(2, 4))
    with pytest.raises(rt.CheckError, match=r"padded\(\): result expected \[b 4\] = \[2 4\], found \[2 3\]"):
        prog.padded(x, 3)
