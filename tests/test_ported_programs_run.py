"""Issue 22 at run time: numbers made exactly in f64 and i64, dims known only
at run time checked where they meet known ones (at the right .qv line, with
the sizes), and the correct programs giving torch's values.

The static halves are in tests/checker/test_ported_programs.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

import quiver
from quiver import runtime as rt
from quiver.cli import main as cli_main


def load(tmp_path: Path, src: str, name: str = "prog.qv"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(src).lstrip("\n"))
    return quiver.load(str(path))


def exact(got: torch.Tensor, want: torch.Tensor) -> bool:
    return got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want)


# ------------------------------------------------------------------ 1. casts and creation from numbers

NUMBERS = """
model B:
    buffer t: [] f64 = 0.8
    buffer steps: [] i64 = 0
fn cast() -> [] f64:
    return 0.8 as [] f64
fn lbfgs() -> [] f64:
    a = 0.8 as [] f64
    return a * 1e9 - 800000000.0
fn filled() -> [] f64:
    return full([] f64, 0.8)
fn literal() -> [2] f64:
    return [0.8, 0.1] as [2] f64
fn names(x: Float, y: Float) -> [2] f64:
    return [x, y] as [2] f64
fn of(x: Float) -> [] f64:
    return x as [] f64
fn big() -> [] i64:
    return 9007199254740993 as [] i64
fn big_float() -> [] i64:
    return 1e18 as [] i64
fn half() -> [] f16:
    return 0.8 as [] f16
fn assign(mut m: B, x: Float, n: Int):
    m.t = x
    m.steps = n
"""


def test_numbers_become_f64_and_i64_tensors_exactly(tmp_path: Path) -> None:
    mod = load(tmp_path, NUMBERS)
    f64 = torch.float64
    assert exact(mod.cast(), torch.tensor(0.8, dtype=f64))
    assert exact(mod.lbfgs(), torch.tensor(0.8, dtype=f64) * 1e9 - 800000000.0)
    assert mod.lbfgs().item() == 0.0  # 11.9209 when 0.8 was rounded through f32
    assert exact(mod.filled(), torch.tensor(0.8, dtype=f64))
    assert exact(mod.literal(), torch.tensor([0.8, 0.1], dtype=f64))
    assert exact(mod.names(0.8, 0.1), torch.tensor([0.8, 0.1], dtype=f64))
    assert exact(mod.of(0.8), torch.tensor(0.8, dtype=f64))
    assert exact(mod.big(), torch.tensor(9007199254740993, dtype=torch.int64))
    assert exact(mod.big_float(), torch.tensor(10**18, dtype=torch.int64))
    assert exact(mod.half(), torch.tensor(0.8, dtype=torch.float16))  # rounded once, from the double


def test_scalar_fields_hold_numbers_exactly(tmp_path: Path) -> None:
    mod = load(tmp_path, NUMBERS)
    m = mod.B.init(seed=0)
    assert exact(m.t, torch.tensor(0.8, dtype=torch.float64))
    mod.assign(m, 0.1, 2**53 + 1)
    assert exact(m.t, torch.tensor(0.1, dtype=torch.float64))
    assert exact(m.steps, torch.tensor(2**53 + 1, dtype=torch.int64))


def test_rt_cast_makes_a_number_in_the_target_dtype() -> None:
    assert exact(rt.cast(0.8, rt.f64), torch.tensor(0.8, dtype=torch.float64))
    assert exact(rt.cast([[0.8], [0.1]], rt.f64), torch.tensor([[0.8], [0.1]], dtype=torch.float64))
    assert exact(rt.cast(2**62 + 1, rt.i64), torch.tensor(2**62 + 1))
    assert exact(rt.cast(-2.7, rt.i64), torch.tensor(-2))  # truncates toward zero, as a tensor's cast does
    assert exact(rt.cast(3, rt.index(5)), torch.tensor(3))
    with pytest.raises(rt.ValueCheckError) as info:
        rt.cast(-1.0, rt.nonneg)
    assert str(info.value) == "cannot cast Float -1.0 to NonNeg: found values below 0 or NaN (min -1)"
    with pytest.raises(rt.ValueCheckError) as info:
        rt.cast([1, 7], rt.index(5))
    assert str(info.value) == "cannot cast the literal [2] to Index[5]: found values outside 0..4 (min 1, max 7)"


def test_the_issue_program_prints_zero(tmp_path: Path, capsys) -> None:
    path = tmp_path / "lbfgs.qv"
    path.write_text("fn main():\n    a = 0.8 as [] f64\n    print(a * 1e9 - 800000000.0)\n")
    assert cli_main(["run", str(path)]) == 0
    assert capsys.readouterr().out == "0.0000\n"


# ------------------------------------------------------------------ 2. dims known only at run time

WIN = """
dim T = 8
dim S = 20
fn win(seq: [S b], n: Int) -> [T b]:
    return seq[n - T:n + 1]
fn main():
    print(win(randn([S 2], seed=0), 12))
"""


def test_the_issue_program_fails_at_the_return(tmp_path: Path, capsys) -> None:
    path = tmp_path / "win.qv"
    path.write_text(WIN.lstrip("\n"))
    assert cli_main(["run", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"{path}:4:12: error: win(): result expected [T b] = [8 2], found [9 2]"


def test_the_issue_program_without_checks_runs_as_torch_does(tmp_path: Path, capsys) -> None:
    path = tmp_path / "win.qv"
    path.write_text(WIN.lstrip("\n"))
    mod = quiver.load(str(path))
    seq = torch.randn(20, 2)
    with rt.checks(False):
        assert torch.equal(mod.win(seq, 12), seq[4:13])  # nine rows: unchecked, as asked


PATHS = """
dim T = 8
dim S = 20
dim D = 2
model M:
    param w: [T D]
fn take(x: [T D]) -> [T D]:
    return x * 2.0
fn pair(x: [n D], y: [n D]) -> [n D]:
    return x + y
fn ret(seq: [S b], k: Int) -> [T b]:
    return seq[k:k + 8]
fn arg(seq: [S D], k: Int) -> [T D]:
    return take(seq[k:k + 8])
fn generic(seq: [S D], k: Int) -> [S D]:
    return pair(seq[k:k + 20], seq)
fn resh(seq: [S D], k: Int) -> [T 2 1]:
    return reshape(seq[k:k + 8], [T 2 1])
fn perm(seq: [S b], k: Int) -> [b T]:
    return permute(seq[k:k + 8], [b T])
fn cast(seq: [S D], k: Int) -> [T D]:
    w = seq[k:k + 8] as [T D]
    return w
fn over(seq: [S D], k: Int) -> [T]:
    return softmax(seq[k:k + 8], over=T)[0:8] |> sum(over=D)
fn field(mut m: M, seq: [S D], k: Int):
    m.w = seq[k:k + 8]
fn joined(seq: [S D], k: Int) -> [T D]:
    h = zeros([T D])
    if k > 0:
        h = seq[k:k + 8]
    return h
fn piped(seq: [S D], k: Int) -> [T D]:
    return seq[k:k + 8] |> take
fn loss(seq: [S D], k: Int) -> [] NonNeg:
    return mse(seq[k:k + 8], ones([T D]))
"""

# (fn, a correct k, what torch computes from seq and k, a wrong k, qv line, message)
CASES = [
    ("ret", 3, lambda s, k: s[k : k + 8], 13, 11, "ret(): result expected [T b] = [8 2], found [7 2]"),
    ("arg", 3, lambda s, k: s[k : k + 8] * 2.0, 13, 13, "take(): argument 'x' expected [T D] = [8 2], found [7 2]"),
    ("generic", 0, lambda s, k: s + s, 3, 15, "pair(): argument 'x' expected [S D] = [20 2], found [17 2]"),
    (
        "resh",
        3,
        lambda s, k: s[k : k + 8].reshape(8, 2, 1),
        13,
        17,
        "reshape(): argument 'x' expected 16 elements ([T 2 1] = [8 2 1]), found [7 2]",
    ),
    (
        "perm",
        3,
        lambda s, k: s[k : k + 8].permute(1, 0),
        13,
        19,
        "permute(): argument 'x' expected [T b] = [8 2], found [7 2]",
    ),
    ("cast", 3, lambda s, k: s[k : k + 8], 13, 21, "cast: value expected [T D] = [8 2], found [7 2]"),
    (
        "over",
        3,
        lambda s, k: torch.softmax(s[k : k + 8], 0).sum(1),
        13,
        24,
        "softmax(over=T): argument 'x' expected [T D] = [8 2], found [7 2]",
    ),
    ("joined", 3, lambda s, k: s[k : k + 8], 13, 31, "joined(): result expected [T D] = [8 2], found [7 2]"),
    ("piped", 3, lambda s, k: s[k : k + 8] * 2.0, 13, 33, "take(): argument 'x' expected [T D] = [8 2], found [7 2]"),
    (
        "loss",
        3,
        lambda s, k: torch.nn.functional.mse_loss(s[k : k + 8], torch.ones(8, 2)),
        19,  # one row: torch would broadcast it against [8 2]
        35,
        "mse(): argument 'pred' expected [T D] = [8 2], found [1 2]",
    ),
]


@pytest.mark.parametrize(("fn", "good", "torch_fn", "bad", "line", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_run_time_dim_is_checked_where_it_meets_a_known_one(
    tmp_path: Path, fn: str, good: int, torch_fn, bad: int, line: int, message: str
) -> None:
    mod = load(tmp_path, PATHS, "paths.qv")
    seq = torch.randn(20, 2, generator=torch.Generator().manual_seed(0))
    f = getattr(mod, fn)
    assert torch.allclose(f(seq, good), torch_fn(seq, good), rtol=0, atol=0)
    with pytest.raises(rt.CheckError) as info:
        f(seq, bad)
    assert info.value.detail == message
    assert info.value.loc.line == line
    assert str(info.value) == f"paths.qv:{line}: {message}"


def test_a_field_takes_a_run_time_dim_checked_at_the_assignment(tmp_path: Path) -> None:
    mod = load(tmp_path, PATHS, "paths.qv")
    seq = torch.randn(20, 2)
    m = mod.M.init(seed=0)
    mod.field(m, seq, 2)
    assert torch.equal(m.w, seq[2:10])
    with pytest.raises(rt.CheckError) as info:
        mod.field(m, seq, 15)
    assert str(info.value) == "paths.qv:26: field M.w: value expected [T D] = [8 2], found [5 2]"


def test_the_checks_follow_the_checks_switch(tmp_path: Path) -> None:
    mod = load(tmp_path, PATHS, "paths.qv")
    seq = torch.randn(20, 2)
    with rt.checks(False):
        assert torch.equal(mod.ret(seq, 13), seq[13:21])  # seven rows, unchecked
        assert torch.equal(mod.cast(seq, 13), seq[13:])


def test_rt_expect_dims_and_count() -> None:
    src = rt.SourceFile("/x/w.qv")
    t = torch.zeros(9, 2)
    assert rt.expect_dims(t, (9, None), src, 4, 12, "f(): result", "[T b]") is t
    with pytest.raises(rt.CheckError) as info:
        rt.expect_dims(t, (8, None), src, 4, 12, "f(): result", "[T b]")
    assert str(info.value) == "w.qv:4: f(): result expected [T b] = [8 2], found [9 2]"
    assert (info.value.loc.line, info.value.loc.col) == (4, 12)
    assert rt.expect_count(t, (3, 6), src, 1, 1, "reshape(): argument 'x'", "[3 6]") is t
    with pytest.raises(rt.CheckError, match=r"expected 16 elements \(\[T 2\] = \[8 2\]\), found \[9 2\]$"):
        rt.expect_count(t, (8, 2), src, 1, 1, "reshape(): argument 'x'", "[T 2]")
    with rt.checks(False):
        assert rt.expect_dims(t, (8, None), src, 4, 12, "f(): result", "[T b]") is t


# ------------------------------------------------------------------ 3. literals of names, 5. dim arguments


def test_a_literal_of_names_is_the_tensor_of_its_numbers(tmp_path: Path) -> None:
    mod = load(
        tmp_path,
        """
        fn obs(x: Float, y: Float) -> [2]:
            return [x, y]
        fn ints(a: Int, b: Int) -> [3] i64:
            return [a, b, a]
        fn mixed(a: Int, y: Float) -> [2]:
            return [a, y]
        """,
    )
    assert exact(mod.obs(0.5, -2.0), torch.tensor([0.5, -2.0]))
    assert exact(mod.ints(3, 2**40), torch.tensor([3, 2**40, 3]))
    assert exact(mod.mixed(3, 0.25), torch.tensor([3.0, 0.25]))


def test_dim_arithmetic_as_a_dim_argument(tmp_path: Path) -> None:
    mod = load(
        tmp_path,
        """
        dim P = 4
        dim G = 3
        fn ident() -> [(P*G-10) (P*G-10)]:
            return eye((P*G-10))
        fn hot(x: [b 2]) -> [(b/2) (b/2)]:
            return one_hot(arange((b/2)), over=(b/2))
        fn pos(e: [(P+G) 3]) -> [(P+G) 3]:
            return e[arange((P+G))]
        """,
    )
    assert exact(mod.ident(), torch.eye(2))
    assert exact(mod.hot(torch.zeros(5, 2)), torch.nn.functional.one_hot(torch.arange(2), 2).float())
    e = torch.randn(7, 3)
    assert exact(mod.pos(e), e[torch.arange(7)])
