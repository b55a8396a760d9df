#!/usr/bin/env bash
# venv.sh [--exact] VENV PYTHON REQUIREMENTS makes VENV a virtual environment of the
# interpreter PYTHON holding the pinned packages of REQUIREMENTS, then installs the
# Python client (clients/python) into it as a user installs it: from a copy of
# clients/python, so that no build output lands in the tree. The packages are installed
# once: VENV/.requirements.sha256 records the digest of REQUIREMENTS and of PYTHON's
# version, and a venv whose record differs (or that has no python) is made anew. The
# client is installed again on every call (its source may have changed; a second or so).
#
# --exact: REQUIREMENTS lists every package, each with its exact version: pip installs
# them with --no-deps (a dependency the file forgot fails `pip check` instead of coming
# in unpinned) and the venv is checked with `pip check`.
#
# Used by ci/py/test-python.sh (build/py/<version>) and ci/mcp/test-python-host.sh
# (build/mcp/py-venv). Prints what it does on stderr only when it (re)makes the venv.
set -euo pipefail
exact=
if [ "${1:-}" = --exact ]; then exact=1; shift; fi
[ $# -eq 3 ] || { echo "usage: ci/py/venv.sh [--exact] VENV PYTHON REQUIREMENTS" >&2; exit 2; }
venv=$1 py=$2 req=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
pip=(--quiet --disable-pip-version-check --no-input)
stamp=$venv/.requirements.sha256
want=$( { sha256sum < "$req"; "$py" -c 'import sys; print(sys.version)'; echo "exact=$exact"; } | sha256sum | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "venv.sh: a virtual environment of $py in $venv, from $req" >&2
  rm -rf "$venv"
  "$py" -m venv "$venv"
  if [ -n "$exact" ]; then
    "$venv/bin/python" -m pip install "${pip[@]}" --no-deps -r "$req"
    "$venv/bin/python" -m pip check >&2
  else
    "$venv/bin/python" -m pip install "${pip[@]}" -r "$req"
  fi
  echo "$want" > "$stamp"
fi
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
cp -r "$repo/clients/python/." "$src/"
rm -rf "$src/tests" "$src/build" "$src"/src/*.egg-info
"$venv/bin/python" -m pip install "${pip[@]}" --no-build-isolation --no-deps --force-reinstall "$src"
