"""Pathological inputs (issue 13): the checker's time and memory on inputs
built to hurt it.

    .venv/bin/python bench/pathological.py [--only NAME ...] [--scale 1.0] [--timeout 120]

Each case is generated here and checked (`quiver.checker.check_text`) in a
subprocess of its own, so that its peak resident memory is its own: the
subprocess reports it (VmHWM in /proc/self/status, or ru_maxrss where there is
no /proc), interpreter and grammar included; the time is the check
alone, measured inside the subprocess (the interpreter's start and the
grammar's loading are left out). The cases:

    stray-paren-2k/4k/8k   a function body with one stray `)` per line
    unclosed-100k          100,000 unclosed `(`
    line-1mb               a 1 MB single-line expression (`1 + 1 + ...`)
    brackets-100k          100,000-deep brackets, closed
    blocks-10k             10,000 nested `if` blocks (one space deeper each: 50 MB)
    items-100k             100,000 small items
    sum-100k               a 100,000-term flat sum (`a + a + ... + a`)
    tokens-250k/1m/2m      a file of one flat sum `x + x + ... + x` of 250,000,
                           1 million and 2 million tokens (1 MB, 4 MB and 8 MB):
                           past 100,000 links a statement is E0015 (issue 37)

Targets: at most 2 s per 100 KB of input and 300 MB peak RSS, on every case.

Measured for issue 37 on the shared 2-core development machine while other
work ran (load about 11), `--only tokens-250k tokens-1m tokens-2m`: 3.6 s and
63 MB, 15.9 s and 144 MB, 30.7 s and 254 MB (0.72 to 0.79 s per 100 KB:
linear; one E0015 each). Before the chain limit, on the same machine: 8.1 s
and 144 MB, 30.0 s and 486 MB (the 2m case: 191 s and 2 GB in the issue).
A case that raises (a traceback), times out or misses a target is marked; the
exit status is 1 when any case fails. `--scale 0.1` makes every case smaller
(for a quick look); the targets are the same.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable

TARGET_S_PER_100KB = 2.0
TARGET_RSS_MB = 300.0


def stray_parens(lines: int) -> str:
    return "fn main():\n" + "".join(f"    x{i} = f(1))\n" for i in range(lines))


def unclosed(n: int) -> str:
    return "fn main():\n    x = " + "(" * n + "1\n    print(x)\n"


def long_line(size: int) -> str:
    return "fn main():\n    x = " + "1 + " * (size // 4) + "1\n    print(x)\n"


def deep_brackets(n: int) -> str:
    return "fn main():\n    x = " + "(" * n + "1" + ")" * n + "\n    print(x)\n"


def deep_blocks(n: int) -> str:
    # One space more per block: n blocks take n * n / 2 characters all the same.
    lines = ["fn main():\n"]
    for i in range(n):
        lines.append(" " * (i + 1) + "if True:\n")
    lines.append(" " * (n + 1) + "print(1)\n")
    return "".join(lines)


def many_items(n: int) -> str:
    return "".join(f"fn f{i}() -> Int:\n    return {i}\n" for i in range(n))


def flat_sum(n: int) -> str:
    return "fn main():\n    a = 1\n    x = " + " + ".join(["a"] * n) + "\n    print(x)\n"


def sum_tokens(tokens: int) -> str:
    # `x` and `+` alternate: n tokens are n // 2 + 1 terms.
    return "fn main():\n    x = 1\n    y = " + " + ".join(["x"] * (tokens // 2 + 1)) + "\n    print(y)\n"


CASES: dict[str, Callable[[float], str]] = {
    "stray-paren-2k": lambda s: stray_parens(int(2000 * s)),
    "stray-paren-4k": lambda s: stray_parens(int(4000 * s)),
    "stray-paren-8k": lambda s: stray_parens(int(8000 * s)),
    "unclosed-100k": lambda s: unclosed(int(100_000 * s)),
    "line-1mb": lambda s: long_line(int(1_000_000 * s)),
    "brackets-100k": lambda s: deep_brackets(int(100_000 * s)),
    "blocks-10k": lambda s: deep_blocks(int(10_000 * s)),
    "items-100k": lambda s: many_items(int(100_000 * s)),
    "sum-100k": lambda s: flat_sum(int(100_000 * s)),
    "tokens-250k": lambda s: sum_tokens(int(250_000 * s)),
    "tokens-1m": lambda s: sum_tokens(int(1_000_000 * s)),
    "tokens-2m": lambda s: sum_tokens(int(2_000_000 * s)),
}


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(name: str, scale: float) -> None:
    """Run one case and print its result as JSON (in the subprocess)."""
    from quiver.checker import check_text
    from quiver.checker.parser import _get_parsers

    _get_parsers()
    src = CASES[name](scale)
    t = time.perf_counter()
    try:
        a = check_text(src)
        outcome = {"codes": sorted({d.code for d in a.diagnostics}), "n": len(a.diagnostics)}
        outcome["internal"] = len(a.internal_errors)
    except BaseException as e:  # reported, not raised: this is what the bench looks for
        outcome = {"error": f"{type(e).__name__}: {str(e)[:80]}"}
    outcome["seconds"] = time.perf_counter() - t
    outcome["bytes"] = len(src.encode())
    outcome["peak_mb"] = _peak_mb()
    print(json.dumps(outcome))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="*", default=None, help="cases to run (default: all)")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args.child, args.scale)
        return 0
    names = args.only or list(CASES)
    print(f"{'case':<16} {'KB':>8} {'seconds':>8} {'s/100KB':>8} {'peak MB':>8}  result")
    failed = False
    for name in names:
        cmd = [sys.executable, __file__, "--child", name, "--scale", str(args.scale)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=os.environ)
        except subprocess.TimeoutExpired:
            print(f"{name:<16} {'':>8} {'>' + str(int(args.timeout)):>8} {'':>8} {'':>8}  TIMEOUT")
            failed = True
            continue
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            print(f"{name:<16} {'':>8} {'':>8} {'':>8} {'':>8}  CRASH {proc.stderr.strip()[-200:]}")
            failed = True
            continue
        r = json.loads(lines[-1])
        kb, peak_mb = r["bytes"] / 1024, r["peak_mb"]
        per = r["seconds"] / (r["bytes"] / 100_000)
        ok = per <= TARGET_S_PER_100KB and peak_mb <= TARGET_RSS_MB and "error" not in r
        ok = ok and not r.get("internal")
        result = r.get("error") or f"{r['n']} diagnostics {' '.join(r['codes'])}".rstrip()
        print(
            f"{name:<16} {kb:>8.0f} {r['seconds']:>8.2f} {per:>8.3f} {peak_mb:>8.0f}  {'ok' if ok else 'FAIL'} {result}"
        )
        failed = failed or not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
