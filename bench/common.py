"""Helpers shared by the benchmarks: timing with medians and percentiles."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable


def measure(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock seconds of `repeat` calls."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def summary(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {
        "median_ms": statistics.median(s) * 1000,
        "p95_ms": s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))] * 1000,
        "min_ms": s[0] * 1000,
        "n": len(s),
    }


def fmt(name: str, stats: dict[str, float]) -> str:
    return (
        f"{name:<44} median {stats['median_ms']:8.2f} ms   p95 {stats['p95_ms']:8.2f} ms   "
        f"min {stats['min_ms']:8.2f} ms   (n={int(stats['n'])})"
    )


def size_args(doc: str | None) -> argparse.Namespace:
    """--lines and --repeat, the options of the parse and check benchmarks."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=30)
    return ap.parse_args()


def one_character_edits(src: str) -> list[str]:
    """Versions of a generated program that differ from it by one character
    inside one function body (a dropout rate), in the middle of the file."""
    at = src.index("h = dropout(h, 0.1, mode)", len(src) // 2) + len("h = dropout(h, 0.")
    return [src[:at] + str(d) + src[at + 1 :] for d in range(2, 10)]
