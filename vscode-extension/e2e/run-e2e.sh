#!/usr/bin/env bash
# make e2e: build the .vsix and test it in real VS Code (code-server 4.100.3 in
# Debian's Chromium, driven by playwright-core). Installs what is missing: Debian
# packages, the repo's .venv, the extension's node_modules, and the e2e tools into
# vscode-extension/.e2e/tools. Times the install and the run separately.
#
#   QUIVER_E2E_SERVER=stub   use the test-only stub server instead of the real one
set -euo pipefail
EXT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$EXT/.." && pwd)"
E2E="$EXT/.e2e"
TOOLS="$E2E/tools"
mkdir -p "$E2E"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
step() { echo "==> $*" >&2; }

install_start=$(now)

# 1. Debian packages: Chromium for the browser, ripgrep for VS Code's search, and the
#    headers code-server's native modules build against.
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
for p in libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    if [ "$(id -u)" != 0 ]; then
        echo "e2e needs these Debian packages: ${missing[*]} (run as root or install them)" >&2
        exit 2
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. The repo's .venv with the Quiver server (the project's own setup script).
step "repo .venv"
bash -c "source '$ROOT/scripts/_venv.sh'"

# 3. The extension: dependencies, type check, bundle, .vsix.
bash "$EXT/tools/npm-ci-if-changed.sh"
cd "$EXT"
step "npm run package"
npm run -s package >/dev/null

# 4. code-server and playwright-core, pinned by e2e/package-lock.json.
if [ ! -x "$TOOLS/node_modules/.bin/code-server" ] || ! cmp -s e2e/package-lock.json "$TOOLS/package-lock.json"; then
    step "npm ci (code-server 4.100.3, playwright-core) into .e2e/tools"
    rm -rf "$TOOLS"
    mkdir -p "$TOOLS"
    cp e2e/package.json e2e/package-lock.json "$TOOLS/"
    # code-server's ripgrep postinstall downloads a binary, which this network does
    # not allow; a cached archive of Debian's rg satisfies it.
    if [ "$(uname -m)" = x86_64 ]; then
        cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
        mkdir -p "$cache"
        tar -czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
    fi
    # code-server's postinstall refuses to run as root unless npm_config_unsafe_perm is set
    # (newer npm warns that it does not know the option; the script reads it anyway).
    (cd "$TOOLS" && npm_config_unsafe_perm=true npm_config_yes=true npm ci --no-audit --no-fund)
fi
install_s=$(since "$install_start")

# 5. The test itself.
step "e2e in code-server (${QUIVER_E2E_SERVER:-real} server)"
run_start=$(now)
set +e
node e2e/e2e.mjs
rc=$?
set -e
run_s=$(since "$run_start")
printf 'install/check: %s s\nrun: %s s\n' "$install_s" "$run_s" | tee "$E2E/timings.txt"
exit $rc
