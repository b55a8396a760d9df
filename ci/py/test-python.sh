#!/usr/bin/env bash
# test-python.sh runs the Python client's tests (clients/python/tests) against the real
# server on the oldest and the newest CPython of this machine (ci/py/pythons.sh). Each
# Python gets a virtual environment under build/py/<version> holding the pinned test
# tools (clients/python/requirements-test.txt) and the client installed as a user
# installs it, from a copy of clients/python (so that no build output lands in the
# tree); the tests then import that installed copy, never the source folder.
# Needs SOUNDGATE_BIN and SCENARIOGATE_BIN (make test-python builds them).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${SOUNDGATE_BIN:?build ./cmd/soundgate and set SOUNDGATE_BIN (make test-python does)}"
: "${SCENARIOGATE_BIN:?build ./internal/scenario/scenariogate and set SCENARIOGATE_BIN (make test-python does)}"
out=$(pwd)/build/py
mkdir -p "$out"
pythons=$(ci/py/pythons.sh)
n=$(echo "$pythons" | wc -l)
if [ "$n" -lt 2 ]; then
  echo "test-python: only one CPython 3.9+ on this machine ($pythons): the tests run on it alone"
fi
req=clients/python/requirements-test.txt
summary=()
while read -r ver py; do
  venv=$out/$ver
  ci/py/venv.sh "$venv" "$py" "$req"
  echo "== test-python: Python $ver ($py)"
  log=$out/pytest-$ver.log
  (cd clients/python && SOUNDGATE_PY_EXPECT_INSTALLED=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests) | tee "$log"
  # the package's types, as a user's type checker reads them from the installed copy (py.typed)
  (cd "$out" && "$venv/bin/python" -m mypy --strict --no-incremental -p soundgate) | tee -a "$log"
  summary+=("Python $ver: $(grep -E ' passed| failed' "$log" | tail -n 1 | sed 's/^=* *//; s/ *=*$//'); mypy --strict: $(tail -n 1 "$log")")
done <<< "$pythons"
for s in "${summary[@]}"; do echo "test-python: $s"; done
