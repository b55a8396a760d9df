# Shared by the benchmark scripts of ci/bench (source it after `cd` to the repository
# root and after setting GO and work, the run's temporary directory).

AGENT=bench-agent-token-0123456789
OPERATOR=bench-operator-token-0123456789
APPROVER=bench-approver-token-0123456789

# bench_setup builds the gate and the load generator into $work and writes the
# roles file the gate serves with.
bench_setup() {
  $GO build -o "$work/soundgate" ./cmd/soundgate
  $GO build -o "$work/soundgate-bench" ./cmd/soundgate-bench
  cat >"$work/roles.json" <<JSON
{"tokens": [
  {"name": "bench", "token": "$AGENT", "role": "agent", "runs": ["*"]},
  {"name": "ops", "token": "$OPERATOR", "role": "operator"},
  {"name": "approver", "token": "$APPROVER", "role": "approver"}
]}
JSON
  chmod 600 "$work/roles.json"
}

# await_listening LOG PID: until the gate logging to LOG says it listens; fails if it died.
await_listening() {
  for _ in $(seq 1 200); do grep -q 'msg=listening' "$1" 2>/dev/null && break; sleep 0.05; done
  kill -0 "$2" 2>/dev/null && grep -q 'msg=listening' "$1"
}
