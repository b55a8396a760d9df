#!/usr/bin/env bash
# ci/browser/install.sh: what the approvers' page's browser test needs (docs/approvers.md):
# Debian's chromium (apt-get), and playwright-core, pinned in ci/browser/package-lock.json,
# installed by npm ci into build/browser/npm (never into the tree outside build/, never
# globally; playwright-core downloads no browser of its own). Idempotent: a chromium
# already installed and an install that matches the lock are kept. It refuses loudly
# (exit 1) when either cannot be installed or chromium does not start: the browser test
# is never reported passed without a browser.
set -euo pipefail

say() { echo "ci/browser/install.sh: $*" >&2; }

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
npmdir="$root/build/browser/npm"
chromium="${SOUNDGATE_CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$chromium" ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "FAILED: no $chromium and no apt-get to install Debian's chromium (install it by hand, or set SOUNDGATE_CHROMIUM)"
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      say "FAILED: no $chromium and not root (no sudo) to apt-get install chromium"
      exit 1
    fi
  fi
  say "installing chromium from Debian (apt-get)"
  if ! { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
    say "FAILED: apt-get install chromium failed"
    exit 1
  fi
  if [ ! -x "$chromium" ]; then
    say "FAILED: $chromium is still missing after the install"
    exit 1
  fi
fi
# Debian's wrapper script may say things on stderr before the version: keep the last line.
if ! out="$("$chromium" --headless --no-sandbox --version 2>&1)"; then
  say "FAILED: $chromium does not start: $out"
  exit 1
fi
version="$(tail -n 1 <<<"$out")"

if ! command -v npm >/dev/null 2>&1; then
  say "FAILED: no npm (the test needs Node 20 and npm)"
  exit 1
fi
mkdir -p "$npmdir"
# npm ci again only when the lock changed: it removes and reinstalls node_modules.
if ! cmp -s "$here/package-lock.json" "$npmdir/package-lock.json" || [ ! -f "$npmdir/node_modules/playwright-core/package.json" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$npmdir/"
  if ! (cd "$npmdir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error); then
    rm -f "$npmdir/package-lock.json" # so that the next run tries again
    say "FAILED: npm ci of playwright-core failed"
    exit 1
  fi
fi
pw="$(cd "$npmdir" && node -p 'require("playwright-core/package.json").version')"
say "chromium: $version; playwright-core $pw in build/browser/npm"
