"""The `quiver` command: `quiver run FILE.qv` (and `quiver check`, an alias of qlint)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "check":
        from .qlint import main as qlint_main

        return qlint_main(argv[1:])
    print("usage: quiver check [PATH ...] | quiver run FILE.qv", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
