# Sourced by scripts/main and scripts/test: make sure .venv exists and matches
# pyproject.toml. The install is redone only when pyproject.toml or the
# constraints file changed. The dev extra holds the torch and metrics extras;
# constraints/torch-cpu.txt keeps torch on the CPU wheel of the local cache.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
STAMP=".venv/.quiver-installed"
WANT="$(cat pyproject.toml constraints/torch-cpu.txt | sha256sum | cut -d' ' -f1)"
if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv" >&2
    "$PY" -m venv .venv
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    echo "==> installing quiver-lang and its dev tools into .venv (first run: about a minute)" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints/torch-cpu.txt -e '.[dev]' 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
    echo "$WANT" > "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"
