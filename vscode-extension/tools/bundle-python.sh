#!/usr/bin/env bash
# Builds vscode-extension/bundled/ (git-ignored), the language server the .vsix
# carries so that diagnostics work with nothing installed but a Python >= 3.11:
#   bundled/libs/   Quiver's base package (built from this checkout, never PyPI's),
#                   pygls, lsprotocol, lark, cattrs, attrs, typing_extensions;
#   bundled/tool/lsp_server.py   puts libs/ on sys.path and starts quiver-lsp.
# The versions are those of the building Python's environment (the repo's .venv,
# which the tests ran with), else what pyproject.toml allows. Fails when anything
# in libs/ is not pure Python (a compiled module would tie the .vsix to one
# platform and Python version). Part of `npm run package` (vscode:prepublish).
#
#   QUIVER_BUNDLE_PYTHON=/path/to/python   the Python (>= 3.11, with pip) that builds it
set -euo pipefail
EXT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$EXT/.." && pwd)"
OUT="$EXT/bundled"

PY="${QUIVER_BUNDLE_PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY="$(command -v python3)"; fi
fi
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "bundle-python: $PY is older than Python 3.11" >&2; exit 2; }

# The server's dependencies, pinned to the versions next to the building Python's Quiver.
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
"$PY" - > "$constraints" <<'PYEOF'
from importlib import metadata
for name in ("lark", "pygls", "lsprotocol", "cattrs", "attrs", "typing_extensions"):
    try:
        print(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        pass
PYEOF

rm -rf "$OUT"
had_build=0 had_egg=0
[ -e "$ROOT/build" ] && had_build=1
[ -e "$ROOT/quiver_lang.egg-info" ] && had_egg=1
mkdir -p "$OUT/libs" "$OUT/tool"
# Build isolation fetches setuptools from PyPI when the building Python lacks it.
build_flags=()
if "$PY" -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 77)' 2>/dev/null; then
    build_flags+=(--no-build-isolation)
fi
"$PY" -m pip install --quiet --disable-pip-version-check --no-compile --no-warn-script-location \
    --target "$OUT/libs" --constraint "$constraints" "${build_flags[@]}" "$ROOT" \
    2> >(grep -v "^WARNING: Location '.*' is ignored" >&2)

# Nothing the server does not import: console scripts (with the builder's shebang), caches.
rm -rf "$OUT/libs/bin"
find "$OUT/libs" -name __pycache__ -type d -prune -exec rm -rf {} +
# setuptools' build/ and egg-info folders in the checkout (unless they were there before)
[ "$had_build" = 1 ] || rm -rf "$ROOT/build"
[ "$had_egg" = 1 ] || rm -rf "$ROOT/quiver_lang.egg-info"

compiled="$(find "$OUT/libs" \( -name '*.so' -o -name '*.pyd' -o -name '*.dylib' -o -name '*.dll' \) -print)"
if [ -n "$compiled" ]; then
    echo "bundle-python: compiled files in bundled/libs (the bundle must be pure Python):" >&2
    echo "$compiled" >&2
    exit 1
fi
if find "$OUT/libs" -path '*/quiver/runtime' -prune -o -name 'torch' -print | grep -q .; then
    echo "bundle-python: torch ended up in bundled/libs" >&2
    exit 1
fi
cp "$EXT/tools/lsp_server.py" "$OUT/tool/lsp_server.py"
echo "bundled/libs: $(ls "$OUT/libs" | grep -v dist-info | tr '\n' ' ')($(du -sh "$OUT/libs" | cut -f1))" >&2
