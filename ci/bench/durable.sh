#!/usr/bin/env bash
# Durable-mode benchmark, side by side with the reference a user would otherwise pick
# for an effect ledger: Redis `SET NX` with `appendonly yes` and `appendfsync always`
# (every write fsynced before the reply), both on loopback, both writing to BENCH_DIR.
#
#   bash ci/bench/durable.sh            # ROUNDS=3 rounds, medians reported
#   ROUNDS=5 SECONDS_PER_RUN=10 BENCH_DIR=/work/tmp bash ci/bench/durable.sh
#
# Per round and per concurrency (1, 16, 64, 256 clients, and pipelined: PIPE_CLIENTS
# connections x PIPE_DEPTH in flight), it runs soundgate-bench (admit new keys) and
# `redis-benchmark SET key:__rand_int__ v NX` one after the other, then prints the
# medians over the rounds, the ratio soundgate/redis, one client's p50 next to the
# disk's fdatasync p50 (BenchmarkFdatasync: append; BenchmarkFdatasyncReserved: into
# reserved space, as the log writes), and p99 at 16 clients. The
# machine is shared and noisy: compare ratios within one run, not figures across runs.
# redis-server comes from Debian (installed with apt-get if missing) and listens on
# 127.0.0.1 only. The last line is the summary.
#
# BASE_BIN=PATH also measures that soundgate binary (built from another revision:
#   git worktree add /tmp/base REV && (cd /tmp/base && go build -o /tmp/soundgate-base ./cmd/soundgate))
# in the same rounds, just before this tree's gate, and prints this/base per concurrency.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
CLIENTS=${CLIENTS:-"1 16 64 256"}
PIPE_CLIENTS=${PIPE_CLIENTS:-8}
PIPE_DEPTH=${PIPE_DEPTH:-32}
BENCH_DIR=${BENCH_DIR:-$PWD/build/bench}
GO=${GO:-go}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
SG_PORT=${SG_PORT:-$(free_port)}
REDIS_PORT=${REDIS_PORT:-$(free_port)}

say() { echo "durable-bench: $*"; }
die() { echo "durable bench: FAILED: $*" >&2; exit 1; }

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
  say "installing redis-server from Debian (apt-get)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }; then
    die "cannot install redis-server: the reference cannot be measured"
  fi
fi
command -v redis-benchmark >/dev/null || die "redis-benchmark missing after install"

. ci/bench/lib.sh
bench_workdir durable
bench_setup
BASE_BIN=${BASE_BIN:-}
[ -z "$BASE_BIN" ] || [ -x "$BASE_BIN" ] || die "BASE_BIN=$BASE_BIN is not an executable"

wait_port() { # host port
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  return 1
}

# The references: the disk's raw fdatasync latency, for a 64-byte append (the file
# grows: the fdatasync also writes its size) and for a 64-byte write into space
# reserved with fallocate (what the log does: docs/wal.md, reserved space).
say "measuring fdatasync on $BENCH_DIR"
fsync_out=$(SOUNDGATE_WAL_BENCH_DIR="$work" $GO test -run '^$' -bench '^BenchmarkFdatasync(Reserved)?$' -benchtime 300x ./impl/wal)
p50_of() { awk -v name="$1" '$1 ~ "^"name"(-[0-9]+)?$" { for (i = 1; i <= NF; i++) if ($(i+1) == "p50-µs") print $i }' <<<"$fsync_out"; }
fsync_p50=$(p50_of BenchmarkFdatasync)
fsync_res_p50=$(p50_of BenchmarkFdatasyncReserved)
[ -n "$fsync_p50" ] && [ -n "$fsync_res_p50" ] || { echo "$fsync_out" >&2; die "BenchmarkFdatasync(Reserved) printed no p50"; }
say "fdatasync p50 ${fsync_p50}µs (append), ${fsync_res_p50}µs (into reserved space)"

start_gate() { # [BINARY]
  rm -rf "$work/data"
  "${1:-$work/soundgate}" serve --roles "$work/roles.json" --data "$work/data" --listen "127.0.0.1:$SG_PORT" \
    >"$work/gate.log" 2>&1 &
  gate_pid=$!; pids+=("$gate_pid")
  await_listening "$work/gate.log" "$gate_pid" || { cat "$work/gate.log"; die "the gate did not start on 127.0.0.1:$SG_PORT"; }
}
stop_gate() { kill "$gate_pid" 2>/dev/null || true; wait "$gate_pid" 2>/dev/null || true; }
start_redis() {
  rm -rf "$work/redis"; mkdir -p "$work/redis"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --protected-mode yes --dir "$work/redis" \
    --appendonly yes --appendfsync always --save "" --daemonize no >"$work/redis.log" 2>&1 &
  redis_pid=$!; pids+=("$redis_pid")
  wait_port 127.0.0.1 "$REDIS_PORT" && kill -0 "$redis_pid" 2>/dev/null ||
    { cat "$work/redis.log"; die "redis-server did not start on 127.0.0.1:$REDIS_PORT"; }
}
stop_redis() { kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; }

# sg_run CLIENTS DEPTH -> "admissions/s p50 p99" (latencies in ms)
sg_run() {
  local out
  out=$("$work/soundgate-bench" --addr "127.0.0.1:$SG_PORT" --token "$AGENT" --operator-token "$OPERATOR" \
    --approver-token "$APPROVER" --clients "$1" --pipeline "$2" --duration "${SECONDS_PER_RUN}s" -q) ||
    { echo "$out" >&2; die "soundgate-bench failed"; }
  local rate p50 p99
  rate=$(echo "$out" | sed -n 's/^admissions: .* = \([0-9.]*\) admissions\/s.*/\1/p')
  p50=$(echo "$out" | awk '/^latency new/ { for (i = 1; i <= NF; i++) if ($i ~ /^p50=/) print substr($i, 5) }')
  p99=$(echo "$out" | awk '/^latency new/ { for (i = 1; i <= NF; i++) if ($i ~ /^p99=/) print substr($i, 5) }')
  [ -n "$rate" ] && [ -n "$p50" ] || { echo "$out" >&2; die "cannot read soundgate-bench output"; }
  echo "$rate $(to_ms "$p50") $(to_ms "$p99")"
}
to_ms() { # a Go duration -> milliseconds
  awk -v d="$1" 'BEGIN {
    if (d ~ /µs$/) { sub(/µs$/, "", d); printf "%.3f", d / 1000 }
    else if (d ~ /ms$/) { sub(/ms$/, "", d); printf "%.3f", d }
    else if (d ~ /ns$/) { sub(/ns$/, "", d); printf "%.3f", d / 1e6 }
    else if (d ~ /s$/) { sub(/s$/, "", d); printf "%.3f", d * 1000 }
    else print "nan" }'
}
# redis_run CLIENTS DEPTH EXPECTED_RATE -> "requests/s"; about SECONDS_PER_RUN of
# requests, sized from the rate soundgate just reached.
redis_run() {
  local n out rate
  n=$(awk -v r="$3" -v s="$SECONDS_PER_RUN" 'BEGIN { n = int(r * s); if (n < 3000) n = 3000; print n }')
  out=$(redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -q -c "$1" -P "$2" -n "$n" -r 1000000000 \
    SET 'key:__rand_int__' v NX 2>&1) || { echo "$out" >&2; die "redis-benchmark failed"; }
  rate=$(echo "$out" | tr '\r' '\n' | sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -n 1)
  [ -n "$rate" ] || { echo "$out" >&2; die "cannot read redis-benchmark output"; }
  echo "$rate"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A SG BASE REDIS P50 P99
configs=""
for c in $CLIENTS; do configs="$configs $c:1"; done
configs="$configs $PIPE_CLIENTS:$PIPE_DEPTH"
for round in $(seq 1 "$ROUNDS"); do
  for cfg in $configs; do
    c=${cfg%%:*}; d=${cfg##*:}
    base=""
    if [ -n "$BASE_BIN" ]; then
      start_gate "$BASE_BIN"
      read -r base _ _ <<<"$(sg_run "$c" "$d")" || exit 1
      stop_gate
      BASE[$cfg]="${BASE[$cfg]:-} $base"
    fi
    start_gate
    sg=$(sg_run "$c" "$d") || exit 1
    read -r rate p50 p99 <<<"$sg"
    stop_gate
    start_redis
    rrate=$(redis_run "$c" "$d" "$rate") || exit 1
    stop_redis
    SG[$cfg]="${SG[$cfg]:-} $rate"; REDIS[$cfg]="${REDIS[$cfg]:-} $rrate"
    P50[$cfg]="${P50[$cfg]:-} $p50"; P99[$cfg]="${P99[$cfg]:-} $p99"
    printf 'durable-bench: round %d, %3d clients x pipeline %-3d soundgate %8.0f adm/s (p50 %s ms, p99 %s ms)  redis SET NX %8.0f req/s%s\n' \
      "$round" "$c" "$d" "$rate" "$p50" "$p99" "$rrate" "${base:+  base $base adm/s}"
  done
done

echo
printf '%-22s %14s %14s %8s %10s %10s%s\n' "clients x pipeline" "soundgate/s" "redis/s" "ratio" "p50 ms" "p99 ms" \
  "${BASE_BIN:+        base/s   this/base}"
summary=""
for cfg in $configs; do
  c=${cfg%%:*}; d=${cfg##*:}
  s=$(tr ' ' '\n' <<<"${SG[$cfg]}" | grep . | median)
  r=$(tr ' ' '\n' <<<"${REDIS[$cfg]}" | grep . | median)
  p50=$(tr ' ' '\n' <<<"${P50[$cfg]}" | grep . | median)
  p99=$(tr ' ' '\n' <<<"${P99[$cfg]}" | grep . | median)
  ratio=$(awk -v s="$s" -v r="$r" 'BEGIN { printf "%.2f", s / r }')
  vs_base=""
  if [ -n "$BASE_BIN" ]; then
    b=$(tr ' ' '\n' <<<"${BASE[$cfg]}" | grep . | median)
    vs_base=$(awk -v s="$s" -v b="$b" 'BEGIN { printf " %14.0f %11.2f", b, s / b }')
  fi
  printf '%-22s %14.0f %14.0f %8s %10s %10s%s\n' "$c x $d" "$s" "$r" "$ratio" "$p50" "$p99" "$vs_base"
  summary="$summary ${c}x${d}: $(printf '%.0f' "$s") vs $(printf '%.0f' "$r") (x$ratio)${BASE_BIN:+, base $(printf '%.0f' "$b")};"
  [ "$cfg" = "1:1" ] && one_p50=$p50
  [ "$cfg" = "16:1" ] && p99_16=$p99
done
fsync_ms=$(awk -v u="$fsync_p50" 'BEGIN { printf "%.3f", u / 1000 }')
fsync_res_ms=$(awk -v u="$fsync_res_p50" 'BEGIN { printf "%.3f", u / 1000 }')
echo
echo "durable bench (medians of $ROUNDS rounds, ${SECONDS_PER_RUN}s runs, soundgate admissions/s vs redis SET NX appendfsync always req/s):$summary 1-client p50 ${one_p50:-n/a} ms vs fdatasync p50 $fsync_ms ms (append) / $fsync_res_ms ms (reserved space); p99 at 16 clients ${p99_16:-n/a} ms"
