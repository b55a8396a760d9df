# Shared by the benchmark scripts of ci/bench: source it after `cd` to the repository
# root, with GO and BENCH_DIR set.

# bench_workdir NAME makes the run's temporary directory ($work, under BENCH_DIR) and
# arranges that on exit every process listed in $pids is killed and $work removed.
pids=()
bench_workdir() {
  mkdir -p "$BENCH_DIR"
  work=$(mktemp -d "$BENCH_DIR/$1.XXXXXX")
  trap bench_cleanup EXIT
}
bench_cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}

# The project's one roles fixture (impl/server/servertest/roles.json) and its tokens.
FIXTURE=impl/server/servertest/roles.json
token_of() { python3 -c 'import json, sys; print(next(t["token"] for t in json.load(open(sys.argv[1]))["tokens"] if t["name"] == sys.argv[2]))' "$FIXTURE" "$1"; }
AGENT=$(token_of agent)
OPERATOR=$(token_of ops)
APPROVER=$(token_of alice)

# bench_setup builds the gate and the load generator into $work and puts the roles
# fixture beside them.
bench_setup() {
  $GO build -o "$work/soundgate" ./cmd/soundgate
  $GO build -o "$work/soundgate-bench" ./cmd/soundgate-bench
  cp "$FIXTURE" "$work/roles.json"
  chmod 600 "$work/roles.json"
}

# await_listening LOG PID [SECONDS]: until the gate logging to LOG says it listens
# (at most SECONDS, default 10: a gate that replays a long log takes longer); fails if
# it died or did not listen in time.
await_listening() {
  local tries=$(( ${3:-10} * 20 ))
  for _ in $(seq 1 "$tries"); do
    grep -q 'msg=listening' "$1" 2>/dev/null && break
    kill -0 "$2" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$2" 2>/dev/null && grep -q 'msg=listening' "$1"
}
