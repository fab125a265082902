"""Parser benchmark (issue 2): full parse speed and one-character edits.

    .venv/bin/python bench/parse.py [--lines 5000] [--repeat 30]

Generates a program (bench/generate.py), parses it from scratch several times
(lines per second, median), then makes one-character edits inside one
function and re-parses through the incremental path: the items before and
after the edit are reused (moved by the edit's length), and only the edited
item is parsed again. Target: the incremental edit at most 10 ms median.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import fmt, measure, one_character_edits, size_args, summary
from generate import generate

from quiver.checker.items import ParseCache, parse_document
from quiver.checker.parser import _get_parsers


def main() -> None:
    args = size_args(__doc__)
    _get_parsers()  # grammar loading is a one-time cost, reported apart
    src = generate(args.lines)
    n_lines = src.count("\n")

    full = summary(measure(lambda: parse_document(src, ParseCache()), max(3, args.repeat // 10)))
    print(fmt(f"full parse, {n_lines} lines", full))
    print(f"{'':<44} = {n_lines / (full['median_ms'] / 1000):,.0f} lines/s")

    cache = ParseCache()
    doc = parse_document(src, cache)
    versions = one_character_edits(src)
    i = 0

    def edit() -> None:
        nonlocal i, doc
        doc = parse_document(versions[i % len(versions)], cache, doc)
        i += 1

    before = cache.parsed
    inc = summary(measure(edit, args.repeat))
    print(fmt("one-character edit, incremental", inc))
    print(f"{'':<44}   items parsed per edit: {(cache.parsed - before) / args.repeat:.1f}")
    verdict = "meets" if inc["median_ms"] <= 10 else "MISSES"
    print(f"target: incremental edit <= 10 ms median: {verdict}")


if __name__ == "__main__":
    main()
