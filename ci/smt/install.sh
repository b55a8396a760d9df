#!/usr/bin/env bash
# ci/smt/install.sh: the two SMT solvers of make verify-tla-smt (docs/verify/smt.md),
# z3 and cvc5, from Debian's packages. Idempotent: a solver already on PATH is kept.
# It refuses loudly (exit 1) when a solver cannot be installed: the obligations are
# never reported proved by one solver alone, nor by none.
set -euo pipefail

say() { echo "ci/smt/install.sh: $*" >&2; }

missing=()
for s in z3 cvc5; do
  command -v "$s" >/dev/null 2>&1 || missing+=("$s")
done

if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "FAILED: ${missing[*]} not on PATH and no apt-get to install them (install z3 and cvc5 by hand)"
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      say "FAILED: ${missing[*]} not on PATH and not root (no sudo) to apt-get install them"
      exit 1
    fi
  fi
  say "installing ${missing[*]} from Debian (apt-get)"
  if ! { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    say "FAILED: apt-get install ${missing[*]} failed"
    exit 1
  fi
fi

for s in z3 cvc5; do
  if ! command -v "$s" >/dev/null 2>&1; then
    say "FAILED: $s is still not on PATH after the install"
    exit 1
  fi
done
say "z3: $(z3 --version | head -n 1)"
say "cvc5: $(cvc5 --version | head -n 1)"
