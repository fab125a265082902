#!/usr/bin/env bash
# Install the extension's node_modules with `npm ci`, unless they were already
# installed from this very package-lock.json (a stamp in node_modules says so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat node_modules/.quiver-lock-sha256 2>/dev/null)" != "$lock_sum" ]; then
    echo "==> npm ci (extension)" >&2
    npm ci --no-audit --no-fund --loglevel=error
    echo "$lock_sum" > node_modules/.quiver-lock-sha256
fi
