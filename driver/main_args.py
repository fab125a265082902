"""The arguments of a program's `main` on the command line of `quiver run`.

    fn main(lr: Float = 3e-4, steps: Int = 100, out: Str = "ckpt.pt", amp: Bool = False)

is run as `quiver run train.qv --lr 1e-3 --steps 10 --amp`. Each parameter
is an option of its name (`--batch_size` also as `--batch-size`); a Bool is
a flag (`--amp`, `--no-amp`); a parameter without a default is a required
option. The arguments after FILE that are not `quiver run`'s own options go
to main, and so does everything after `--`, as it is (`quiver run f.qv --
--nproc 3` gives main's `nproc`). `--name=value` works too, and is the way
to write a negative number (`--shift=-1.5`). `quiver run FILE --help` lists
main's parameters with their types and defaults, and the runner's options.

Only Int, Float, Bool and Str parameters (or optional ones, `top_k: Int |
None = None`, None unless the option is given) can come from a command line
(`main_problem` says which cannot; the checker warns of them, W0403)."""

from __future__ import annotations

import argparse

from quiver.checker.consts import show
from quiver.checker.infos import FnInfo
from quiver.checker.types import NumberT, OptionalT

CLI_KINDS = ("Int", "Float", "Bool", "Str")


class MainArgsError(Exception):
    """A bad value, an unknown option or a missing required one."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise MainArgsError(message)


def _kind(p) -> str | None:
    t = p.type.inner if isinstance(p.type, OptionalT) else p.type  # `top_k: Int | None = None`: --top_k 5
    return t.kind if isinstance(t, NumberT) and t.kind in CLI_KINDS else None


def main_problem(info: FnInfo) -> str | None:
    """Why main's parameters cannot come from a command line (None: they can)."""
    for p in info.params:
        if _kind(p) is None:
            return f"main cannot take '{p.name}: {p.type}' from the command line (only Int, Float, Bool and Str)"
    return None


def _converter(name: str, kind: str):
    def convert(text: str):
        try:
            if kind == "Int":
                return int(text)
            if kind == "Float":
                return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an' if kind == 'Int' else 'a'} {kind} for {name}: {kind}, found '{text}'"
            ) from None
        return text

    convert.__name__ = kind
    return convert


_MISSING = object()


def options(name: str) -> list[str]:
    spelt = ["--" + name]
    if "_" in name:
        spelt.append("--" + name.replace("_", "-"))
    return spelt


def parser(info: FnInfo, prog: str, runner_help: str = "") -> argparse.ArgumentParser:
    """The parser of main's arguments; its help ends with the runner's options."""
    ap = _Parser(
        prog=prog,
        add_help=False,
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=f"Runs {info.signature()}.",
        epilog=runner_help,
    )
    group = ap.add_argument_group("arguments of main")
    for p in info.params:
        kind = _kind(p) or "Str"
        default = _MISSING if p.default is None else None if p.default[0] == "None" else p.default[1]
        shown = "required" if p.default is None else f"default {show(*p.default)}"
        if kind == "Bool":
            group.add_argument(
                *options(p.name),
                dest=p.name,
                action=argparse.BooleanOptionalAction,
                default=default,
                help=f"{p.name}: Bool ({shown})",
            )
        else:
            group.add_argument(
                *options(p.name),
                dest=p.name,
                type=_converter(p.name, kind),
                default=default,
                metavar=kind.upper(),
                help=f"{p.name}: {kind} ({shown})",
            )
    return ap


def parse(info: FnInfo, argv: list[str], prog: str) -> dict[str, object]:
    """main's keyword arguments from `argv`; raises MainArgsError."""
    ap = parser(info, prog)
    if not info.params and argv:
        raise MainArgsError(f"main takes no arguments, found {' '.join(argv)}")
    ns = ap.parse_args(argv)
    values = vars(ns)
    missing = [p for p in info.params if values.get(p.name) is _MISSING]
    if missing:
        what = ", ".join(f"{options(p.name)[0]} ({p.name}: {_kind(p)})" for p in missing)
        raise MainArgsError(f"main needs {what}: {'it has' if len(missing) == 1 else 'they have'} no default")
    return {p.name: values[p.name] for p in info.params}
