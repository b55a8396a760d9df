#!/usr/bin/env bash
# pythons.sh prints the oldest and the newest CPython 3.9+ on this machine, one
# "VERSION PATH" per line (one line when only one is found), looking at pyenv's
# versions, python3.N on PATH and /usr/bin. It exits 1 when it finds none.
set -euo pipefail
cands=()
root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
for p in "$root"/versions/*/bin/python3; do [ -x "$p" ] && cands+=("$p"); done
for n in 9 10 11 12 13 14 15; do
  for p in "$(command -v "python3.$n" 2>/dev/null || true)" "/usr/bin/python3.$n" "/usr/local/bin/python3.$n"; do
    [ -n "$p" ] && [ -x "$p" ] && cands+=("$p")
  done
done
p=$(command -v python3 2>/dev/null || true); [ -n "$p" ] && cands+=("$p")
found=$(for p in "${cands[@]}"; do
  # a pyenv shim or a broken interpreter prints nothing and is skipped
  # asked twice: one .ci/run saw pyenv's 3.13 give no answer once, then answer again
  for try in 1 2; do
    v=$(cd / && "$p" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3]) if sys.implementation.name == "cpython" and sys.version_info >= (3, 9) else None' 2>/dev/null || true)
    [ -n "$v" ] && break
  done
  [ -n "$v" ] && [ "$v" != None ] && echo "$v $(readlink -f "$p")"
done | sort -u -t' ' -k2,2 | sort -t. -k1,1n -k2,2n -k3,3n | awk '!seen[$1]++')
[ -n "$found" ] || { echo "pythons.sh: no CPython 3.9 or newer found" >&2; exit 1; }
echo "$found" | head -n 1
[ "$(echo "$found" | wc -l)" -gt 1 ] && echo "$found" | tail -n 1
exit 0
