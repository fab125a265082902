"""Checker benchmark (issue 3): full check speed and edits inside a body.

    .venv/bin/python bench/check.py [--lines 5000] [--repeat 30]

Full check of the generated program from scratch (lines per second, median),
then one-character edits inside one function body through the incremental
path (Analyzer.update: parse, declarations, bodies, param reads, diagnostics).
Target: at most 20 ms median per edit, parse included.

Then the same size of program written with models that take dims and their
methods (bench/generate.py --generic), checked from scratch interleaved with
the plain one: the time per line of each (medians) and their ratio. Target
(issue 23): generic models cost at most 1.2x the plain program's time per line.
Last, a program of code generic over models (bench/generate.py --traits:
traits, and functions with type parameters called for two models each), the
same comparison; target (issue 39): at most 1.2x the plain program's time per
line.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import fmt, measure, one_character_edits, size_args, summary
from generate import generate

from quiver.checker import Analyzer
from quiver.checker.parser import _get_parsers


def main() -> None:
    args = size_args(__doc__)
    _get_parsers()
    src = generate(args.lines)
    n_lines = src.count("\n")

    full = summary(measure(lambda: Analyzer().update(src), max(3, args.repeat // 10)))
    print(fmt(f"full check, {n_lines} lines", full))
    print(f"{'':<44} = {n_lines / (full['median_ms'] / 1000):,.0f} lines/s")

    analyzer = Analyzer()
    result = analyzer.update(src)
    assert not result.diagnostics, result.diagnostics[:3]
    versions = one_character_edits(src)
    i = 0
    work = []

    def edit() -> None:
        nonlocal i
        analyzer.update(versions[i % len(versions)])
        work.append(len(analyzer.stats.bodies_checked))
        i += 1

    inc = summary(measure(edit, args.repeat))
    print(fmt("one-character edit in a body, incremental", inc))
    print(f"{'':<44}   bodies re-checked per edit: {sum(work) / len(work):.1f}")
    verdict = "meets" if inc["median_ms"] <= 20 else "MISSES"
    print(f"target: edit <= 20 ms median, parse included: {verdict}")

    generic_src = generate(args.lines, generic=True)
    assert not Analyzer().update(generic_src).diagnostics
    plain_lines, generic_lines = n_lines, generic_src.count("\n")
    plain_t: list[float] = []
    generic_t: list[float] = []
    for _ in range(max(3, args.repeat // 5)):  # interleaved: the machine's load falls on both
        plain_t += measure(lambda: Analyzer().update(src), 1)
        generic_t += measure(lambda: Analyzer().update(generic_src), 1)
    per_plain = summary(plain_t)["median_ms"] / plain_lines * 1000
    per_generic = summary(generic_t)["median_ms"] / generic_lines * 1000
    ratio = per_generic / per_plain
    print(f"full check per line: plain {per_plain:.1f} us ({plain_lines} lines), generic models {per_generic:.1f} us")
    print(f"  ({generic_lines} lines): {ratio:.2f}x; target <= 1.2x: {'meets' if ratio <= 1.2 else 'MISSES'}")

    trait_src = generate(args.lines, traits=True)
    assert not Analyzer().update(trait_src).diagnostics
    trait_lines = trait_src.count("\n")
    plain_t, trait_t = [], []
    for _ in range(max(3, args.repeat // 5)):
        plain_t += measure(lambda: Analyzer().update(src), 1)
        trait_t += measure(lambda: Analyzer().update(trait_src), 1)
    per_plain = summary(plain_t)["median_ms"] / plain_lines * 1000
    per_trait = summary(trait_t)["median_ms"] / trait_lines * 1000
    ratio = per_trait / per_plain
    print(f"full check per line: plain {per_plain:.1f} us, code generic over models {per_trait:.1f} us")
    print(f"  ({trait_lines} lines): {ratio:.2f}x; target <= 1.2x: {'meets' if ratio <= 1.2 else 'MISSES'}")


if __name__ == "__main__":
    main()
