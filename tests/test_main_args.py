"""`quiver run FILE --name value`: main's parameters from the command line
(driver/main_args.py), parameter defaults and constants at run time, and the
output of f-strings, exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from quiver.cli import main as quiver_main
from quiver.launch import worker_args
from quiver.run_protocol import CHECK, RunError

PROG = """\
const LR = 3e-4
const STEPS: Int = 4 * 5

fn scale(x: Float, times: Float = 2.0) -> Float:
    return x * times

fn main(lr: Float = LR, steps: Int = STEPS, out: Str = "ckpt.pt", amp: Bool = False, batch_size: Int = 8):
    print(f"lr {lr:.2e} steps {steps} out {out} amp {amp} batch {batch_size} scaled {scale(1.5):.3f}")
"""


def run(tmp_path: Path, capsys, *args: str, src: str = PROG) -> tuple[int, str, str]:
    p = tmp_path / "train.qv"
    p.write_text(src)
    code = quiver_main(["run", str(p), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_defaults_when_nothing_is_given(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, capsys) == (
        0,
        "lr 3.00e-04 steps 20 out ckpt.pt amp False batch 8 scaled 3.000\n",
        "",
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--lr", "1e-3", "--steps", "10", "--amp", "--out", "x.pt", "--batch-size", "2"),
        ("--lr=1e-3", "--steps=10", "--amp", "--out=x.pt", "--batch_size=2"),
        ("--no-warnings", "--", "--lr", "1e-3", "--steps", "10", "--amp", "--out", "x.pt", "--batch-size", "2"),
        (
            "--lr",
            "1e-3",
            "--timing",
            "--steps",
            "10",
            "--amp",
            "--no-amp",
            "--amp",
            "--out",
            "x.pt",
            "--batch_size",
            "2",
        ),
    ],
)
def test_main_s_arguments_in_every_form(tmp_path: Path, capsys, args: tuple[str, ...]) -> None:
    code, out, _ = run(tmp_path, capsys, *args)
    assert (code, out) == (0, "lr 1.00e-03 steps 10 out x.pt amp True batch 2 scaled 3.000\n")


def test_after_dashes_everything_is_main_s(tmp_path: Path, capsys) -> None:
    src = "fn main(nproc: Int = 1, shift: Float = 0.0):\n    print(nproc, shift)\n"
    assert run(tmp_path, capsys, "--", "--nproc", "3", "--shift=-1.5", src=src)[:2] == (0, "3 -1.5\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--steps", "ten"), "argument --steps: expected an Int for steps: Int, found 'ten'"),
        (("--lr", "fast"), "argument --lr: expected a Float for lr: Float, found 'fast'"),
        (("--epochs", "3"), "unrecognized arguments: --epochs 3"),
        (("--", "extra"), "unrecognized arguments: extra"),
    ],
)
def test_bad_arguments_are_a_clear_error(tmp_path: Path, capsys, args: tuple[str, ...], message: str) -> None:
    code, out, err = run(tmp_path, capsys, *args)
    takes = "--lr, --steps, --out, --amp, --batch_size"
    assert (code, out) == (2, "")
    assert (
        err
        == f"quiver: {tmp_path / 'train.qv'}: {message} (main takes {takes}; see quiver run {tmp_path / 'train.qv'} --help)\n"
    )


def test_a_parameter_without_a_default_is_required(tmp_path: Path, capsys) -> None:
    src = 'fn main(steps: Int, name: Str = "a"):\n    print(steps, name)\n'
    code, _, err = run(tmp_path, capsys, src=src)
    assert code == 2 and "main needs --steps (steps: Int): it has no default" in err
    assert run(tmp_path, capsys, "--steps", "5", src=src)[:2] == (0, "5 a\n")
    code, _, err = run(tmp_path, capsys, "--error-format", "json", src=src)
    record = RunError.parse(err.strip().splitlines()[-1])
    assert code == 2 and record is not None and record.kind == CHECK and (record.line, record.col) == (1, 4)
    assert "main needs --steps" in json.loads(err.strip().splitlines()[-1])["message"]


def test_help_lists_main_s_parameters_and_the_runner_s_options(tmp_path: Path, capsys) -> None:
    code, out, _ = run(tmp_path, capsys, "--help")
    assert code == 0
    assert "arguments of main:" in out
    assert "--lr FLOAT" in out and "lr: Float (default 0.0003)" in out
    assert "--steps INT" in out and "steps: Int (default 20)" in out
    assert 'out: Str (default "ckpt.pt")' in out
    assert "--amp, --no-amp" in out and "amp: Bool (default False)" in out
    assert "--batch_size INT, --batch-size INT" in out
    assert "The options of quiver run itself:" in out
    assert "--nproc N" in out and "--device D" in out  # the runner's own
    assert quiver_main(["run", "--help"]) == 0
    assert "--nproc N" in capsys.readouterr().out


def test_workers_of_nproc_get_the_same_arguments() -> None:
    class Args:
        file = "train.qv"
        no_checks = traceback = timing = False
        device = None
        main_args = ["--lr", "1e-3"]

    assert worker_args(Args(), None)[-3:] == ["--", "--lr", "1e-3"]


FSTRINGS = """\
fn main():
    step = 7
    loss = 0.123456
    x = ones([4 8])
    big = 1234567
    ok = True
    name = "mlp"
    print(f"step {step}: loss {loss:.4f} lr {3e-4:.2e} mean {mean(x):.3f} {x!t} {{braces}}")
    print(f"[{big:,}] [{big:>10d}] [{step:03d}] [{step:x}] [{loss:.1%}] [{ok}] [{ok:>6}] [{name:^7}] [{x!t:>12}]")
    print(f"{sum(x > 0.0):d} {mean(x)} {step / 2} {loss}")
"""


def test_f_strings_print_exactly_as_python_formats(tmp_path: Path, capsys) -> None:
    code, out, err = run(tmp_path, capsys, src=FSTRINGS)
    assert code == 0, err
    assert out.splitlines() == [
        "step 7: loss 0.1235 lr 3.00e-04 mean 1.000 [4 8] Float {braces}",
        "[1,234,567] [   1234567] [007] [7] [12.3%] [True] [  True] [  mlp  ] [ [4 8] Float]",
        "32 1.0000 3.5 0.123456",
    ]


def test_a_type_shown_by_an_f_string_is_the_quiver_type(tmp_path: Path, capsys) -> None:
    # !t: the sizes at run time, the element type as the program writes it (not the dtype),
    # a gradient's model, a tuple's items
    np.save(tmp_path / "labels.npy", np.arange(5) % 3)
    src = """\
dim C = 3

model Lin:
    param w: [4 C]

fn loss(m: Lin, x: [n 4]) -> []:
    return sum(x @ m.w)

fn main():
    y = load_npy("labels.npy", [m] Index[C])
    x = ones([2 4])
    print(f"{y!t} {softmax(x, over=1)!t} {relu(x)!t} {x as [2 4] f64!t} {x > 0.0!t} {arange(3)!t} {x!t}")
    l, g = value_and_grad(loss, Lin.init(seed=0), x)
    print(f"{g!t} | {(y, 1)!t} | {l!t}")
"""
    code, out, err = run(tmp_path, capsys, src=src)
    assert code == 0, err
    assert out.splitlines() == [
        "[5] Index[C] [2 4] Prob [2 4] NonNeg [2 4] f64 [2 4] Bool [3] Index[3] [2 4] Float",
        "Grad[Lin] | ([5] Index[C], Int) | [] Float",
    ]


def test_constants_across_modules(tmp_path: Path, capsys) -> None:
    (tmp_path / "hparams.qv").write_text(
        'const LR = 3e-4\nconst STEPS: Int = 10\nconst TAG = "base"\nconst _HIDDEN = 1\n\n'
        "fn lr_at(step: Int, warmup: Int = STEPS) -> Float:\n    return LR * step / warmup\n"
    )
    src = (
        "import hparams\nfrom hparams import LR, STEPS as N\n\nconst TWICE = LR * 2\n\n"
        "fn main(lr: Float = TWICE, steps: Int = N + hparams.STEPS):\n"
        '    print(f"{lr:.1e} {steps} {hparams.TAG} {hparams.lr_at(5):.2e} {TWICE / LR}")\n'
    )
    code, out, err = run(tmp_path, capsys, src=src)
    assert (code, out) == (0, "6.0e-04 20 base 1.50e-04 2.0\n"), err
    from quiver.checker import check_text  # a private constant stays private

    bad = "from hparams import _HIDDEN\n"
    (tmp_path / "b.qv").write_text(bad)
    assert quiver_main(["check", str(tmp_path / "b.qv")]) == 1
    assert "E0116" in capsys.readouterr().out
    assert check_text("const A = 1\n").globals.names.const_values == {"A": ("Int", 1)}


def test_the_docs_f_string_example_prints_what_the_docs_say(tmp_path: Path, capsys) -> None:
    src = (
        "fn main():\n    step = 7\n    x = ones([4 8])\n"
        '    print(f"step {step:03d}: mean {mean(x):.3f} of {x!t} {{done}}")\n'
    )
    assert run(tmp_path, capsys, src=src)[:2] == (0, "step 007: mean 1.000 of [4 8] Float {done}\n")
    assert "prints `step 007: mean 1.000 of [4 8] Float {done}`" in (
        Path(__file__).parents[1] / "docs" / "language.md"
    ).read_text(encoding="utf-8")


def test_the_editor_s_runner_arguments_reach_main(tmp_path: Path, capsys) -> None:
    from quiver.run_protocol import runner_args

    p = tmp_path / "train.qv"
    p.write_text(PROG)
    assert quiver_main(runner_args(p, program_args=["--steps", "3", "--amp"])) == 0
    assert capsys.readouterr().out.startswith("lr 3.00e-04 steps 3 out ckpt.pt amp True ")


def test_defaults_of_methods_and_calls_by_name_run(tmp_path: Path, capsys) -> None:
    src = (
        "dim D = 2\n\nmodel Scale:\n    param w: [D] = ones\n\n"
        "    fn forward(self, x: [b D], times: Float = 2.0, shift: Float = 0.0) -> [b D]:\n"
        "        return x * self.w * times + shift\n\n"
        "fn main():\n    m = Scale.init(seed=0)\n    x = ones([1 D])\n"
        '    print(f"{sum(m(x)):.1f} {sum(m(x, 3.0)):.1f} {sum(m(x, shift=1.0)):.1f} {sum(m.forward(x, times=0.5)):.1f}")\n'
    )
    assert run(tmp_path, capsys, src=src)[:2] == (0, "4.0 6.0 6.0 1.0\n")


OPTIONAL = """\
fn main(top_k: Int | None = None, temperature: Float | None = None):
    if top_k is None:
        print("top_k None")
    else:
        print(f"top_k {top_k}")
    if temperature is not None:
        print(f"temperature {temperature:.1f}")
"""


def test_an_optional_parameter_is_none_unless_given(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, capsys, src=OPTIONAL) == (0, "top_k None\n", "")
    assert run(tmp_path, capsys, "--top-k", "5", "--temperature", "0.8", src=OPTIONAL) == (
        0,
        "top_k 5\ntemperature 0.8\n",
        "",
    )
