"""Formatter benchmark: a generated program of about 20,000 lines.

    .venv/bin/python bench/fmt.py [--lines 20000] [--repeat 5]

Times (median of --repeat runs) `format_text` on the program formatted
(what `quiver fmt --check` sees in CI: no item is parsed, as none changes),
on a copy with every line re-spaced (every item changes: each is parsed, laid
out, parsed again and compared), and on that copy with the parses of its
analysis handed in (the language server on format-on-save: one parse saved).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from common import fmt, measure, size_args, summary
from generate import generate

from quiver.checker import check_text
from quiver.checker.formatter import format_text
from quiver.checker.parser import _get_parsers


def messy(text: str) -> str:
    """Every line with its spacing changed: two-space indents, spaces
    inside brackets, none around `=` and after commas."""
    out = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        indent = (len(line) - len(body)) // 2
        body = re.sub(r" = ", "=", body).replace(", ", ",").replace("(", "( ")
        out.append(" " * indent + body)
    return "\n".join(out)


def main() -> None:
    args = size_args(__doc__)
    if "--lines" not in sys.argv:
        args.lines = 20_000
    if "--repeat" not in sys.argv:
        args.repeat = 5
    _get_parsers()  # grammar loading is a one-time cost
    src = format_text(generate(args.lines)).text
    bad = messy(src)
    assert format_text(bad).text == src, "the re-spaced copy does not format back"
    known = [slot.parse for slot in check_text(bad).parsed.slots]
    n = src.count("\n")
    print(f"{n} lines, {len(src)} characters")
    for name, fn in [
        ("format_text, already formatted", lambda: format_text(src)),
        ("format_text, every line re-spaced", lambda: format_text(bad)),
        ("format_text, re-spaced, analysis's parses", lambda: format_text(bad, known)),
    ]:
        stats = summary(measure(fn, args.repeat))
        print(fmt(name, stats) + f"   {n / stats['median_ms'] * 1000:,.0f} lines/s")


if __name__ == "__main__":
    main()
