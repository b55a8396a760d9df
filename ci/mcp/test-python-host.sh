#!/usr/bin/env bash
# test-python-host.sh runs ci/mcp/test_python_host.py: soundgate mcp-proxy, in front of
# the real @modelcontextprotocol/server-filesystem (ci/mcp/install.sh), driven by the
# Python MCP SDK (the `mcp` package) as the host, with the Python gate client as the
# approver and the operator. The host runs in build/mcp/py-venv, made by ci/py/venv.sh
# --exact from ci/mcp/requirements-py.txt on the newest CPython of this machine
# (ci/py/pythons.sh; mcp needs 3.10 or newer). Prints one summary line at the end.
# Needs SOUNDGATE_BIN (make test-mcp builds it). With CI set, a missing upstream fails
# the tests instead of skipping them, and a skipped test fails this script.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${SOUNDGATE_BIN:?build ./cmd/soundgate and set SOUNDGATE_BIN (make test-mcp does)}"
out=$(pwd)/build/mcp
venv=$out/py-venv
mkdir -p "$out"
read -r ver py <<< "$(ci/py/pythons.sh | tail -n 1)"
case $ver in
  3.[0-9].*) echo "test-python-host: the newest CPython here is $ver ($py); the mcp package needs 3.10 or newer" >&2; exit 1 ;;
esac
t0=$(date +%s.%N)
ci/py/venv.sh --exact "$venv" "$py" ci/mcp/requirements-py.txt
t1=$(date +%s.%N)
mcpver=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')
log=$out/pytest-python-host.log
SOUNDGATE_BIN=$SOUNDGATE_BIN "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs --rootdir ci/mcp \
  ci/mcp/test_python_host.py | tee "$log"
result=$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -n 1 | sed 's/^=* *//; s/ *=*$//')
if [ -n "${CI:-}" ] && grep -qE '[0-9]+ skipped' <<< "$result"; then
  echo "test-python-host: FAILED: tests were skipped under CI ($result)" >&2
  exit 1
fi
printf 'test-mcp: Python mcp %s host (CPython %s): %s; venv ready in %.1fs\n' "$mcpver" "$ver" "$result" \
  "$(awk "BEGIN { print $t1 - $t0 }")"
